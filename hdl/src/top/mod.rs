//! The whole switch's data plane: every port's ingress pipeline, the switching core, every port's egress and the management CPU's mailbox and injector, under one CSR bus.
//!
//! This is weft-model's `Switch` in RTL (DESIGN.md, "Data plane"): per
//! port, ingress parse → classify → translate by the port's role → route
//! lookup ([`PortIngress`]), the virtual output queues, iSLIP and the
//! crossbar ([`SwitchCore`]), and egress translation on host ports
//! ([`PortEgress`]). Every register comes from `weft_regs::csr`: the
//! identity block ([`Identity`]), each port's own registers
//! ([`PortRegisters`]) and tables (windows and function owners in the
//! ingress stages, the ID map in the ingress and the egress), and the
//! switch-wide route tables, of which each port's ingress keeps its own
//! copy so that every port looks up a route in the same cycle. All copies
//! of a register take every write and answer its reads alike; the bus
//! takes one answer.
//!
//! What leaves for the management CPU, what is copied to it and what is
//! dropped (with the reason, weft-model's `DropReason::ALL` index) shows
//! as one-cycle pulses per port, with the header as it goes to the CPU.
//!
//! **The CPU's side** (DESIGN.md, "Configuration requests", "Management
//! path"). Every TLP weft-model's `Switch` delivers to `Destination::Cpu`
//! (a host's configuration requests and messages, what a route sends to
//! the CPU, such as the completions of the CPU's own requests, and the
//! copies of error messages) is queued whole, with its ingress port, in
//! the one [`Mailbox`] the CPU reads over the CSR bus: the ports take
//! turns ([`MailboxFeed`]: round robin, each port's TLPs in order), and a
//! port's TLP waits on its link while another's is queued, so nothing is
//! lost before the mailbox; a full mailbox loses a TLP with STATUS.LOST as
//! weft-model's `CsrWindow::queue_for_cpu` does. The one exception: a TLP
//! the model delivers twice (an error message routed to the CPU and also
//! copied there) that is longer than one beat is queued once, its second
//! delivery counted in STATUS.LOST. The TLP the CPU writes into the
//! [`Inject`]or and sends leaves on the egress of SEND.PORT as it is (no
//! egress translation: weft-model's `Switch::inject`), gathered into beats
//! ([`InjectBeats`]) and let in between that port's TLPs once its link
//! partner has credit for its class, its credits reported on
//! `egress_consume` and itself counted as sent
//! ([`crate::port::InjectMerge`]). `irq` is the mailbox's and the
//! injector's level interrupt.
//!
//! A write of a port's LINK register leaves as
//! a one-cycle pulse on its `link_hot_reset` or `link_retrain`, for the
//! link's hard IP adapter.
//!
//! Each port's counters ([`PortCounters`], cleared through
//! [`CounterControl`]) count what weft-model's `Switch` counts for it: TLPs
//! and bytes received as they arrive (all but malformed ones) and sent as
//! they leave on the link, drops by reason where the model counts them
//! (at the ingress, or at the egress for egress translation and a disabled
//! egress port), and the cycles the egress offers a beat its link does
//! not take (which the transaction-level model leaves 0).
//!
//! A non-posted request a port's ingress refuses is answered as the model's
//! `Switch::refuse` answers it: the ingress builds the Unsupported Request
//! completion ([`crate::isolation::ErrorCompletion`]) and its own egress
//! queues it and sends it back on the same link between TLPs
//! ([`crate::port::ErrorCompletionQueue`]), with its completion credit
//! reported on `egress_consume` like the core's TLPs, and counts it as
//! sent.
//!
//! **The management BAR** (weft-model's `CsrWindow::forward`). A memory
//! request for the switch's management BAR (global MANAGEMENT_BAR_LOW and
//! HIGH, [`Identity`]) arriving on a fabric or disabled port whose
//! management function decodes it is an access to this CSR window: the
//! ingress hands it to the one [`ManagementBar`], which takes the ports'
//! requests in turn, performs each on the CSR bus in a cycle the soft core
//! leaves it, and queues the completion (a CplD of the register read, or
//! Completer Abort or Unsupported Request) at the same port's egress, after
//! the answers the ingress and the timeouts owe, with its credit (one data
//! DW for a CplD) on `egress_consume`. This is how the fabric manager on
//! another switch writes this one's tables.
//!
//! **Outstanding requests** (DESIGN.md: no host ever waits forever). Each
//! port's egress keeps the port's outstanding-request table
//! ([`crate::tables::OutstandingTable`]): its ingress sends a host's
//! non-posted request on under a fabric tag from it, and its egress gives
//! the completion the host's requester ID and tag back
//! ([`crate::port::PortEgress`]). A request whose completion does not come
//! within the completion timeout (`weft_regs::csr::global::COMPLETION_TIMEOUT`,
//! in microseconds of the clock [`SwitchTop::with_clock_mhz`] names) is
//! completed with Completer Abort.
//! A write of port p's ABANDON completes, with Unsupported Request, the
//! requests routed out of port p of every host port whose HOST_PORTS bit
//! is set (weft-model's `abandon_requests_to`): each host port keeps the
//! ports it is asked to abandon and sweeps its table for one at a time,
//! taking no new request until it has swept them all, so no request sent
//! after the write is taken for one before it.
//!
//! Not attached yet: dropping a TLP whose beats disagree with its
//! header's Length where that shows only after its first beat (the
//! ingress drops one whose Length needs more than a switching slot, and
//! one whose first beat belies its Length; a longer mismatch would need a
//! way to abort a TLP already cut through to its egress).

mod identity;
mod inject_beats;
mod mailbox_feed;
mod management_bar;

pub use identity::Identity;
pub use inject_beats::InjectBeats;
pub use mailbox_feed::MailboxFeed;
pub use management_bar::ManagementBar;

use rust_hdl::prelude::*;

use crate::counters::{CounterControl, PortCounters};
use crate::csr::CsrTarget;
use crate::management::{Inject, Mailbox};
use crate::port::{PortEgress, PortIngress, PortRegisters};
use crate::stream::{TlpSink, TlpSource};
use crate::switching::gather::Gather;
use crate::switching::{SwitchCore, CLASS_COMPLETION, LENGTH_BITS};
use crate::tables::address_route::PORT_BITS as ROUTE_PORT_BITS;
use crate::tables::outstanding::TIME_BITS;
use crate::translate::host_ingress::DROP_REASON_BITS;

/// The switch's data plane: `N` ports of `W`-bit payload.
///
/// Egress credits are as [`SwitchCore`] takes them: the link layer's
/// counters say which egress may start a TLP of each class, and learn
/// from `egress_consume` what each TLP took. A port that passes no traffic
/// (ENABLE clear, or role disabled) needs no credit and consumes none: its
/// egress discards what is routed to it (PortDisabled). An error completion
/// a port sends back on its link waits for completion credit and reports
/// its one completion header (no data) on `egress_consume`, in a cycle the
/// core reports nothing for that egress; so does a TLP the CPU injects,
/// with its own class and length, in a cycle neither reports anything.
/// A TLP a host port's egress discards after the core reported its credit
/// (a drop, an INTx message that changes no wire) gives it back on
/// `egress_refund` ([`PortEgress`]'s **Credit given back**).
#[derive(LogicBlock)]
pub struct SwitchTop<const W: usize, const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The soft core's CSR bus.
    pub csr: CsrTarget,
    /// TLPs arriving from each port's link.
    pub ingress: [TlpSink<W>; N],
    /// TLPs leaving on each port's link.
    pub egress: [TlpSource<W>; N],
    /// Bit `j`: egress `j`'s link partner has credit for a posted TLP.
    pub egress_credit_posted: Signal<In, Bits<N>>,
    /// Bit `j`: egress `j`'s link partner has credit for a non-posted TLP.
    pub egress_credit_non_posted: Signal<In, Bits<N>>,
    /// Bit `j`: egress `j`'s link partner has credit for a completion.
    pub egress_credit_completion: Signal<In, Bits<N>>,
    /// Per egress: a one-cycle pulse on the class bit of a TLP committed to it.
    pub egress_consume: [Signal<Out, Bits<3>>; N],
    /// Per egress: the data length in DW of the TLP committed.
    pub egress_consume_dws: [Signal<Out, Bits<LENGTH_BITS>>; N],
    /// Per egress: a one-cycle pulse on the class bit of a TLP committed
    /// to it (on `egress_consume`) that its host stage then discarded, so
    /// the link never carries it: the credit counter takes its credit back.
    pub egress_refund: [Signal<Out, Bits<3>>; N],
    /// Per egress: the data length in DW of the TLP discarded.
    pub egress_refund_dws: [Signal<Out, Bits<LENGTH_BITS>>; N],
    /// Per port: a TLP arriving there goes to the management CPU.
    pub to_cpu: [Signal<Out, Bit>; N],
    /// Per port: a TLP arriving there is forwarded and also copied to the CPU.
    pub copy_to_cpu: [Signal<Out, Bit>; N],
    /// Per port, with `to_cpu` or `copy_to_cpu`: header DW0 as the CPU gets it.
    pub cpu_dw0: [Signal<Out, Bits<32>>; N],
    /// Header DW1 as the CPU gets it.
    pub cpu_dw1: [Signal<Out, Bits<32>>; N],
    /// Header DW2 as the CPU gets it.
    pub cpu_dw2: [Signal<Out, Bits<32>>; N],
    /// Header DW3 as the CPU gets it.
    pub cpu_dw3: [Signal<Out, Bits<32>>; N],
    /// Per port: a TLP arriving there is dropped.
    pub ingress_dropped: [Signal<Out, Bit>; N],
    /// Why.
    pub ingress_drop_reason: [Signal<Out, Bits<DROP_REASON_BITS>>; N],
    /// Per port: a TLP about to leave there is dropped by its egress translation.
    pub egress_dropped: [Signal<Out, Bit>; N],
    /// Why.
    pub egress_drop_reason: [Signal<Out, Bits<DROP_REASON_BITS>>; N],
    /// Per port: a one-cycle pulse asking the link's hard IP adapter for a
    /// hot reset (LINK.HOT_RESET of `weft_regs::csr::port`, PCIe Base 6.0
    /// §4.2.5.11): the adapter holds its hot reset request for the LTSSM's
    /// timeout itself.
    pub link_hot_reset: [Signal<Out, Bit>; N],
    /// Per port: a one-cycle pulse asking the link's hard IP adapter to
    /// retrain the link (LINK.RETRAIN, Retrain Link of §7.5.3.7).
    pub link_retrain: [Signal<Out, Bit>; N],
    /// The data plane's interrupt to the management CPU, level-sensitive:
    /// the mailbox's or the injector's `INT_PENDING.RAISED` (weft-model's
    /// `CsrWindow::interrupt`).
    pub irq: Signal<Out, Bit>,
    identity: Identity<N>,
    registers: [PortRegisters; N],
    ports_in: [PortIngress<W, N>; N],
    ports_out: [PortEgress<W>; N],
    core: SwitchCore<W, N>,
    enabled: Gather<N>,
    counters: [PortCounters; N],
    counter_control: CounterControl,
    cpu_mailbox: Mailbox,
    mailbox_feed: MailboxFeed<W, N>,
    inject: Inject,
    inject_beats: InjectBeats<W>,
    management_bar: ManagementBar<N>,
    executing: Gather<N>,
    executed_taken: Gather<N>,
    bus_address: Signal<Local, Bits<32>>,
    bus_write: Signal<Local, Bit>,
    bus_write_data: Signal<Local, Bits<32>>,
    bus_read: Signal<Local, Bit>,
    bus_read_valid: Signal<Local, Bit>,
    bus_read_data: Signal<Local, Bits<32>>,
    completion_consumed: Constant<Bits<3>>,
    last_cycle_of_microsecond: Constant<Bits<16>>,
    microsecond_cycle: DFF<Bits<16>>,
    now: DFF<Bits<TIME_BITS>>,
    abandon_pending: [DFF<Bits<32>>; N],
    abandon_wanted: [Signal<Local, Bits<32>>; N],
    abandon_choice: [Signal<Local, Bits<ROUTE_PORT_BITS>>; N],
    port_bit: [Constant<Bits<32>>; N],
    port_number: [Constant<Bits<ROUTE_PORT_BITS>>; N],
}

/// The clock of [`SwitchTop::default`], in MHz: the reference
/// configuration's 250 MHz, at which 512 bits per cycle carry Gen3 x16 or
/// Gen4 x8 (DESIGN.md).
pub const CLOCK_MHZ: u32 = 250;

impl<const W: usize, const N: usize> Default for SwitchTop<W, N> {
    fn default() -> Self {
        Self::with_clock_mhz(CLOCK_MHZ)
    }
}

impl<const W: usize, const N: usize> SwitchTop<W, N> {
    /// A data plane clocked at `mhz` MHz, which times its completion
    /// timeout (PCIe Base 6.0 §2.8) in microseconds of that clock.
    ///
    /// # Panics
    ///
    /// If `mhz` is 0 or above 65,536.
    pub fn with_clock_mhz(mhz: u32) -> Self {
        assert!(mhz > 0 && mhz <= 1 << 16, "a data plane clock of {mhz} MHz");
        SwitchTop {
            clock: Default::default(),
            csr: Default::default(),
            ingress: std::array::from_fn(|_| Default::default()),
            egress: std::array::from_fn(|_| Default::default()),
            egress_credit_posted: Default::default(),
            egress_credit_non_posted: Default::default(),
            egress_credit_completion: Default::default(),
            egress_consume: std::array::from_fn(|_| Default::default()),
            egress_consume_dws: std::array::from_fn(|_| Default::default()),
            egress_refund: std::array::from_fn(|_| Default::default()),
            egress_refund_dws: std::array::from_fn(|_| Default::default()),
            to_cpu: std::array::from_fn(|_| Default::default()),
            copy_to_cpu: std::array::from_fn(|_| Default::default()),
            cpu_dw0: std::array::from_fn(|_| Default::default()),
            cpu_dw1: std::array::from_fn(|_| Default::default()),
            cpu_dw2: std::array::from_fn(|_| Default::default()),
            cpu_dw3: std::array::from_fn(|_| Default::default()),
            ingress_dropped: std::array::from_fn(|_| Default::default()),
            ingress_drop_reason: std::array::from_fn(|_| Default::default()),
            egress_dropped: std::array::from_fn(|_| Default::default()),
            egress_drop_reason: std::array::from_fn(|_| Default::default()),
            link_hot_reset: std::array::from_fn(|_| Default::default()),
            link_retrain: std::array::from_fn(|_| Default::default()),
            irq: Default::default(),
            identity: Default::default(),
            registers: std::array::from_fn(|i| PortRegisters::new(i as u32)),
            ports_in: std::array::from_fn(|i| PortIngress::new(i as u32)),
            ports_out: std::array::from_fn(|i| PortEgress::new(i as u32)),
            core: Default::default(),
            enabled: Default::default(),
            counters: std::array::from_fn(|i| PortCounters::new(i as u32)),
            counter_control: Default::default(),
            cpu_mailbox: Default::default(),
            mailbox_feed: Default::default(),
            inject: Inject::new(N),
            inject_beats: Default::default(),
            management_bar: Default::default(),
            executing: Default::default(),
            executed_taken: Default::default(),
            bus_address: Default::default(),
            bus_write: Default::default(),
            bus_write_data: Default::default(),
            bus_read: Default::default(),
            bus_read_valid: Default::default(),
            bus_read_data: Default::default(),
            completion_consumed: Constant::new((1u64 << CLASS_COMPLETION).to_bits()),
            last_cycle_of_microsecond: Constant::new((mhz - 1).to_bits()),
            microsecond_cycle: Default::default(),
            now: Default::default(),
            abandon_pending: std::array::from_fn(|_| Default::default()),
            abandon_wanted: std::array::from_fn(|_| Default::default()),
            abandon_choice: std::array::from_fn(|_| Default::default()),
            port_bit: std::array::from_fn(|p| Constant::new((1u32 << p).to_bits())),
            port_number: std::array::from_fn(|p| Constant::new(p.to_bits())),
        }
    }
}

impl<const W: usize, const N: usize> Logic for SwitchTop<W, N> {
    #[hdl_gen]
    fn update(&mut self) {
        self.identity.clock.next = self.clock.val();
        // The CSR bus: the soft core's, and in a cycle it leaves idle the
        // management BAR's (`ManagementBar`), whose read's answer is its own.
        self.management_bar.clock.next = self.clock.val();
        self.management_bar.cpu_busy.next = self.csr.read.val() | self.csr.write.val();
        self.bus_address.next = self.csr.address.val();
        self.bus_write.next = self.csr.write.val();
        self.bus_write_data.next = self.csr.write_data.val();
        self.bus_read.next = self.csr.read.val();
        if self.management_bar.bus.write.val() | self.management_bar.bus.read.val() {
            self.bus_address.next = self.management_bar.bus.address.val();
            self.bus_write.next = self.management_bar.bus.write.val();
            self.bus_write_data.next = self.management_bar.bus.write_data.val();
            self.bus_read.next = self.management_bar.bus.read.val();
        }
        // Time in microseconds, for the outstanding-request tables.
        self.microsecond_cycle.clock.next = self.clock.val();
        self.now.clock.next = self.clock.val();
        self.microsecond_cycle.d.next = self.microsecond_cycle.q.val() + 1;
        self.now.d.next = self.now.q.val();
        if self.microsecond_cycle.q.val() == self.last_cycle_of_microsecond.val() {
            self.microsecond_cycle.d.next = bits::<16>(0);
            self.now.d.next = self.now.q.val() + 1;
        }
        self.core.clock.next = self.clock.val();
        self.identity.csr.address.next = self.bus_address.val();
        self.identity.csr.write.next = self.bus_write.val();
        self.identity.csr.write_data.next = self.bus_write_data.val();
        self.identity.csr.read.next = self.bus_read.val();
        self.counter_control.clock.next = self.clock.val();
        self.counter_control.csr.address.next = self.bus_address.val();
        self.counter_control.csr.write.next = self.bus_write.val();
        self.counter_control.csr.write_data.next = self.bus_write_data.val();
        self.counter_control.csr.read.next = self.bus_read.val();
        self.bus_read_valid.next = self.identity.csr.read_valid.val();
        self.bus_read_data.next = self.identity.csr.read_data.val();
        if self.counter_control.csr.read_valid.val() {
            self.bus_read_valid.next = true;
            self.bus_read_data.next = self.counter_control.csr.read_data.val();
        }

        // What the ports send to the CPU, one TLP at a time into the mailbox.
        self.cpu_mailbox.clock.next = self.clock.val();
        self.mailbox_feed.clock.next = self.clock.val();
        self.cpu_mailbox.csr.address.next = self.bus_address.val();
        self.cpu_mailbox.csr.write.next = self.bus_write.val();
        self.cpu_mailbox.csr.write_data.next = self.bus_write_data.val();
        self.cpu_mailbox.csr.read.next = self.bus_read.val();
        if self.cpu_mailbox.csr.read_valid.val() {
            self.bus_read_valid.next = true;
            self.bus_read_data.next = self.cpu_mailbox.csr.read_data.val();
        }
        self.cpu_mailbox.push.next = self.mailbox_feed.push.val();
        self.cpu_mailbox.push_first.next = self.mailbox_feed.push_first.val();
        self.cpu_mailbox.push_last.next = self.mailbox_feed.push_last.val();
        self.cpu_mailbox.push_void.next = self.mailbox_feed.push_void.val();
        self.cpu_mailbox.push_dw.next = self.mailbox_feed.push_dw.val();
        self.cpu_mailbox.push_port.next = self.mailbox_feed.push_port.val();
        self.cpu_mailbox.lose.next = self.mailbox_feed.lose.val();

        // The CPU's injected TLP, gathered into beats for the egress it names.
        self.inject.clock.next = self.clock.val();
        self.inject_beats.clock.next = self.clock.val();
        self.inject.csr.address.next = self.bus_address.val();
        self.inject.csr.write.next = self.bus_write.val();
        self.inject.csr.write_data.next = self.bus_write_data.val();
        self.inject.csr.read.next = self.bus_read.val();
        if self.inject.csr.read_valid.val() {
            self.bus_read_valid.next = true;
            self.bus_read_data.next = self.inject.csr.read_data.val();
        }
        self.inject_beats.valid.next = self.inject.valid.val();
        self.inject_beats.dw.next = self.inject.dw.val();
        self.inject_beats.last.next = self.inject.last.val();
        self.inject_beats.port_in.next = self.inject.port.val();
        self.inject.ready.next = self.inject_beats.ready.val();
        self.inject_beats.beats.ready.next = false;
        self.irq.next = self.cpu_mailbox.irq.val() | self.inject.irq.val();
        self.management_bar.offer.next = self.executing.vector.val();
        self.management_bar.answer_taken.next = self.executed_taken.vector.val();
        // A port that passes no traffic discards what is routed to it, credits or not.
        self.core.egress_credit_posted.next =
            self.egress_credit_posted.val() | !self.enabled.vector.val();
        self.core.egress_credit_non_posted.next =
            self.egress_credit_non_posted.val() | !self.enabled.vector.val();
        self.core.egress_credit_completion.next =
            self.egress_credit_completion.val() | !self.enabled.vector.val();
        for i in 0..N {
            self.registers[i].clock.next = self.clock.val();
            self.ports_in[i].clock.next = self.clock.val();
            self.ports_out[i].clock.next = self.clock.val();
            self.counters[i].clock.next = self.clock.val();

            // The CSR bus to every block of the port; copies of a register answer alike.
            self.registers[i].csr.address.next = self.bus_address.val();
            self.registers[i].csr.write.next = self.bus_write.val();
            self.registers[i].csr.write_data.next = self.bus_write_data.val();
            self.registers[i].csr.read.next = self.bus_read.val();
            self.ports_in[i].csr.address.next = self.bus_address.val();
            self.ports_in[i].csr.write.next = self.bus_write.val();
            self.ports_in[i].csr.write_data.next = self.bus_write_data.val();
            self.ports_in[i].csr.read.next = self.bus_read.val();
            self.ports_out[i].csr.address.next = self.bus_address.val();
            self.ports_out[i].csr.write.next = self.bus_write.val();
            self.ports_out[i].csr.write_data.next = self.bus_write_data.val();
            self.ports_out[i].csr.read.next = self.bus_read.val();
            self.counters[i].csr.address.next = self.bus_address.val();
            self.counters[i].csr.write.next = self.bus_write.val();
            self.counters[i].csr.write_data.next = self.bus_write_data.val();
            self.counters[i].csr.read.next = self.bus_read.val();
            if self.registers[i].csr.read_valid.val() {
                self.bus_read_valid.next = true;
                self.bus_read_data.next = self.registers[i].csr.read_data.val();
            }
            if self.ports_in[i].csr.read_valid.val() {
                self.bus_read_valid.next = true;
                self.bus_read_data.next = self.ports_in[i].csr.read_data.val();
            }
            if self.ports_out[i].csr.read_valid.val() {
                self.bus_read_valid.next = true;
                self.bus_read_data.next = self.ports_out[i].csr.read_data.val();
            }
            if self.counters[i].csr.read_valid.val() {
                self.bus_read_valid.next = true;
                self.bus_read_data.next = self.counters[i].csr.read_data.val();
            }

            // The port's registers to its stages.
            self.enabled.bits[i].next =
                self.registers[i].enable.val() & self.registers[i].role.val().any();
            self.ports_in[i].enable.next = self.registers[i].enable.val();
            self.ports_in[i].role.next = self.registers[i].role.val();
            self.ports_in[i].settled.next = self.registers[i].settled.val();
            self.ports_in[i].p2p_request_redirect.next =
                self.registers[i].p2p_request_redirect.val();
            self.ports_in[i].return_to_ingress.next = self.registers[i].return_to_ingress.val();
            self.ports_in[i].intx_swizzle.next = self.registers[i].intx_swizzle.val();
            self.ports_in[i].proxy_id.next = self.registers[i].proxy_id.val();
            self.ports_in[i].owner_bound.next = self.registers[i].owner_bound.val();
            self.ports_in[i].owner_host.next = self.registers[i].owner_host.val();
            self.ports_in[i].owner_proxy_id.next = self.registers[i].owner_proxy_id.val();
            self.ports_in[i].bus_first.next = self.registers[i].bus_first.val();
            self.ports_in[i].bus_last.next = self.registers[i].bus_last.val();
            self.ports_out[i].enable.next = self.registers[i].enable.val();
            self.ports_out[i].role.next = self.registers[i].role.val();
            self.ports_out[i].host_index.next = self.registers[i].host_index.val();
            self.ports_out[i].proxy_id.next = self.registers[i].proxy_id.val();
            self.ports_out[i].completer_id.next = self.registers[i].completer_id.val();
            self.ports_in[i].completer_id.next = self.registers[i].completer_id.val();
            self.link_hot_reset[i].next = self.registers[i].link_hot_reset.val();
            self.link_retrain[i].next = self.registers[i].link_retrain.val();

            // Link → ingress pipeline → core.
            self.ports_in[i].link.valid.next = self.ingress[i].valid.val();
            self.ports_in[i].link.sop.next = self.ingress[i].sop.val();
            self.ports_in[i].link.eop.next = self.ingress[i].eop.val();
            self.ports_in[i].link.empty.next = self.ingress[i].empty.val();
            self.ports_in[i].link.nullify.next = self.ingress[i].nullify.val();
            self.ports_in[i].link.dw0.next = self.ingress[i].dw0.val();
            self.ports_in[i].link.dw1.next = self.ingress[i].dw1.val();
            self.ports_in[i].link.dw2.next = self.ingress[i].dw2.val();
            self.ports_in[i].link.dw3.next = self.ingress[i].dw3.val();
            self.ports_in[i].link.payload.next = self.ingress[i].payload.val();
            self.ingress[i].ready.next = self.ports_in[i].link.ready.val();
            self.core.ingress[i].valid.next = self.ports_in[i].core.valid.val();
            self.core.ingress[i].sop.next = self.ports_in[i].core.sop.val();
            self.core.ingress[i].eop.next = self.ports_in[i].core.eop.val();
            self.core.ingress[i].empty.next = self.ports_in[i].core.empty.val();
            self.core.ingress[i].nullify.next = self.ports_in[i].core.nullify.val();
            self.core.ingress[i].dw0.next = self.ports_in[i].core.dw0.val();
            self.core.ingress[i].dw1.next = self.ports_in[i].core.dw1.val();
            self.core.ingress[i].dw2.next = self.ports_in[i].core.dw2.val();
            self.core.ingress[i].dw3.next = self.ports_in[i].core.dw3.val();
            self.core.ingress[i].payload.next = self.ports_in[i].core.payload.val();
            self.ports_in[i].core.ready.next = self.core.ingress[i].ready.val();
            self.core.ingress_egress[i].next = self.ports_in[i].core_egress.val();
            self.core.ingress_class[i].next = self.ports_in[i].core_class.val();
            self.to_cpu[i].next = self.ports_in[i].to_cpu.val();
            self.copy_to_cpu[i].next = self.ports_in[i].copy_to_cpu.val();
            self.cpu_dw0[i].next = self.ports_in[i].core.dw0.val();
            self.cpu_dw1[i].next = self.ports_in[i].core.dw1.val();
            self.cpu_dw2[i].next = self.ports_in[i].core.dw2.val();
            self.cpu_dw3[i].next = self.ports_in[i].core.dw3.val();
            self.mailbox_feed.offer[i].next = self.ports_in[i].cpu_offer.val();
            self.mailbox_feed.twice[i].next = self.ports_in[i].cpu_twice.val();
            self.mailbox_feed.dw0[i].next = self.ports_in[i].core.dw0.val();
            self.mailbox_feed.dw1[i].next = self.ports_in[i].core.dw1.val();
            self.mailbox_feed.dw2[i].next = self.ports_in[i].core.dw2.val();
            self.mailbox_feed.dw3[i].next = self.ports_in[i].core.dw3.val();
            self.mailbox_feed.eop[i].next = self.ports_in[i].beat_eop.val();
            self.mailbox_feed.belied[i].next = self.ports_in[i].beat_void.val();
            self.mailbox_feed.empty[i].next = self.ports_in[i].beat_empty.val();
            self.mailbox_feed.payload[i].next = self.ports_in[i].beat_payload.val();
            self.mailbox_feed.taken[i].next = self.ports_in[i].beat_taken.val();
            self.ports_in[i].cpu_take.next = self.mailbox_feed.take[i].val();
            self.ingress_dropped[i].next = self.ports_in[i].dropped.val();
            self.ingress_drop_reason[i].next = self.ports_in[i].drop_reason.val();

            // Core → egress translation → link.
            self.ports_out[i].core.valid.next = self.core.egress[i].valid.val();
            self.ports_out[i].core.sop.next = self.core.egress[i].sop.val();
            self.ports_out[i].core.eop.next = self.core.egress[i].eop.val();
            self.ports_out[i].core.empty.next = self.core.egress[i].empty.val();
            self.ports_out[i].core.nullify.next = self.core.egress[i].nullify.val();
            self.ports_out[i].core.dw0.next = self.core.egress[i].dw0.val();
            self.ports_out[i].core.dw1.next = self.core.egress[i].dw1.val();
            self.ports_out[i].core.dw2.next = self.core.egress[i].dw2.val();
            self.ports_out[i].core.dw3.next = self.core.egress[i].dw3.val();
            self.ports_out[i].core.payload.next = self.core.egress[i].payload.val();
            self.core.egress[i].ready.next = self.ports_out[i].core.ready.val();
            self.egress[i].valid.next = self.ports_out[i].link.valid.val();
            self.egress[i].sop.next = self.ports_out[i].link.sop.val();
            self.egress[i].eop.next = self.ports_out[i].link.eop.val();
            self.egress[i].empty.next = self.ports_out[i].link.empty.val();
            self.egress[i].nullify.next = self.ports_out[i].link.nullify.val();
            self.egress[i].dw0.next = self.ports_out[i].link.dw0.val();
            self.egress[i].dw1.next = self.ports_out[i].link.dw1.val();
            self.egress[i].dw2.next = self.ports_out[i].link.dw2.val();
            self.egress[i].dw3.next = self.ports_out[i].link.dw3.val();
            self.egress[i].payload.next = self.ports_out[i].link.payload.val();
            self.ports_out[i].link.ready.next = self.egress[i].ready.val();
            self.egress_consume[i].next = self.core.egress_consume[i].val();
            if !(self.registers[i].enable.val() & self.registers[i].role.val().any()) {
                self.egress_consume[i].next = bits::<3>(0);
            }
            self.egress_consume_dws[i].next = self.core.egress_consume_dws[i].val();
            self.egress_refund[i].next = self.ports_out[i].refund.val();
            self.egress_refund_dws[i].next = self.ports_out[i].refund_dws.val();

            // The ingress's answers back out of the same port, with their credit.
            self.ports_out[i].respond.next = self.ports_in[i].respond.val();
            self.ports_out[i].response_dw0.next = self.ports_in[i].response_dw0.val();
            self.ports_out[i].response_dw1.next = self.ports_in[i].response_dw1.val();
            self.ports_out[i].response_dw2.next = self.ports_in[i].response_dw2.val();
            self.ports_in[i].response_room.next = self.ports_out[i].response_room.val();
            self.ports_out[i].completion_credit.next =
                self.egress_credit_completion.val().get_bit(i);
            self.ports_out[i].core_consumes.next =
                self.core.egress_consume[i].val().any() & self.enabled.vector.val().get_bit(i);
            if self.ports_out[i].response_consume.val() {
                self.egress_consume[i].next = self.completion_consumed.val();
                self.egress_consume_dws[i].next = self.ports_out[i].response_consume_dws.val();
            }

            // Requests for the management BAR, executed against the CSR
            // window and answered back out of the same port.
            self.ports_in[i].management_enable.next =
                self.identity.management_enable.val().get_bit(i);
            self.ports_in[i].management_base.next = self.identity.management_base.val();
            self.ports_in[i].management_high.next = self.identity.management_high.val();
            self.executing.bits[i].next = self.ports_in[i].execute.val();
            self.management_bar.offer_dw0[i].next = self.ports_in[i].beat_dw0.val();
            self.management_bar.offer_dw1[i].next = self.ports_in[i].beat_dw1.val();
            self.management_bar.offer_dw2[i].next = self.ports_in[i].beat_dw2.val();
            self.management_bar.offer_dw3[i].next = self.ports_in[i].beat_dw3.val();
            self.management_bar.offer_data[i].next = self.ports_in[i].execute_data.val();
            self.ports_in[i].execute_take.next = self.management_bar.take.val().get_bit(i);
            self.management_bar.completer_id[i].next = self.registers[i].completer_id.val();
            self.ports_out[i].executed.next = self.management_bar.answer.val().get_bit(i);
            self.ports_out[i].executed_dw0.next = self.management_bar.answer_dw0.val();
            self.ports_out[i].executed_dw1.next = self.management_bar.answer_dw1.val();
            self.ports_out[i].executed_dw2.next = self.management_bar.answer_dw2.val();
            self.ports_out[i].executed_data.next = self.management_bar.answer_data.val();
            self.executed_taken.bits[i].next = self.ports_out[i].executed_queued.val();

            // The CPU's injected TLP to the egress it names, with its credit.
            self.ports_out[i].injected.valid.next =
                self.inject_beats.beats.valid.val() & (self.inject_beats.port.val().index() == i);
            self.ports_out[i].injected.sop.next = self.inject_beats.beats.sop.val();
            self.ports_out[i].injected.eop.next = self.inject_beats.beats.eop.val();
            self.ports_out[i].injected.empty.next = self.inject_beats.beats.empty.val();
            self.ports_out[i].injected.nullify.next = self.inject_beats.beats.nullify.val();
            self.ports_out[i].injected.dw0.next = self.inject_beats.beats.dw0.val();
            self.ports_out[i].injected.dw1.next = self.inject_beats.beats.dw1.val();
            self.ports_out[i].injected.dw2.next = self.inject_beats.beats.dw2.val();
            self.ports_out[i].injected.dw3.next = self.inject_beats.beats.dw3.val();
            self.ports_out[i].injected.payload.next = self.inject_beats.beats.payload.val();
            if self.inject_beats.port.val().index() == i {
                self.inject_beats.beats.ready.next = self.ports_out[i].injected.ready.val();
            }
            self.ports_out[i].posted_credit.next = self.egress_credit_posted.val().get_bit(i);
            self.ports_out[i].non_posted_credit.next =
                self.egress_credit_non_posted.val().get_bit(i);
            if self.ports_out[i].inject_consume.val().any() {
                self.egress_consume[i].next = self.ports_out[i].inject_consume.val();
                self.egress_consume_dws[i].next = self.ports_out[i].inject_consume_dws.val();
            }
            // The port's outstanding requests: tags for what its ingress
            // sends on, timeouts, and the ports it is asked to abandon,
            // one sweep at a time (the highest port first).
            self.ports_out[i].tag_request.next = self.ports_in[i].tag_request.val();
            self.ports_out[i].tag_request_dw0.next = self.ports_in[i].beat_dw0.val();
            self.ports_out[i].tag_request_dw1.next = self.ports_in[i].beat_dw1.val();
            self.ports_out[i].tag_request_dw2.next = self.ports_in[i].beat_dw2.val();
            self.ports_out[i].tag_request_dw3.next = self.ports_in[i].beat_dw3.val();
            self.ports_out[i].tag_request_cpu.next = self.ports_in[i].tag_request_cpu.val();
            self.ports_out[i].tag_request_port.next = self.ports_in[i].tag_request_port.val();
            self.ports_in[i].fabric_tag.next = self.ports_out[i].fabric_tag.val();
            self.ports_out[i].now.next = self.now.q.val();
            self.ports_out[i].timeout.next = self.identity.completion_timeout_us.val();
            self.abandon_pending[i].clock.next = self.clock.val();
            self.abandon_wanted[i].next = self.abandon_pending[i].q.val();
            self.abandon_choice[i].next = self.port_number[0].val();
            for p in 0..N {
                if self.registers[p].abandon.val()
                    & self.registers[p].abandon_host_ports.val().get_bit(i)
                {
                    self.abandon_wanted[i].next =
                        self.abandon_wanted[i].val() | self.port_bit[p].val();
                }
                if self.abandon_pending[i].q.val().get_bit(p) {
                    self.abandon_choice[i].next = self.port_number[p].val();
                }
            }
            self.ports_in[i].tag_available.next =
                self.ports_out[i].tag_available.val() & !self.abandon_wanted[i].val().any();
            self.ports_out[i].abandon.next =
                self.abandon_pending[i].q.val().any() & !self.ports_out[i].abandoning.val();
            self.ports_out[i].abandon_port.next = self.abandon_choice[i].val();
            self.abandon_pending[i].d.next = self.abandon_wanted[i].val();
            if self.ports_out[i].abandon.val() {
                self.abandon_pending[i].d.next =
                    self.abandon_wanted[i].val() & !(bits::<32>(1) << self.abandon_choice[i].val());
            }

            self.egress_dropped[i].next = self.ports_out[i].dropped.val();
            self.egress_drop_reason[i].next = self.ports_out[i].drop_reason.val();

            // The port's events to its counters.
            self.counters[i].clear.next = self.counter_control.clear.val().get_bit(i);
            self.counters[i].received.next = self.ports_in[i].received.val();
            self.counters[i].received_class.next = self.ports_in[i].received_class.val();
            self.counters[i].received_bytes.next = self.ports_in[i].received_bytes.val();
            self.counters[i].ingress_drop.next = self.ports_in[i].dropped.val();
            self.counters[i].ingress_drop_reason.next = self.ports_in[i].drop_reason.val();
            self.counters[i].sent.next = self.ports_out[i].sent.val();
            self.counters[i].sent_class.next = self.ports_out[i].sent_class.val();
            self.counters[i].sent_bytes.next = self.ports_out[i].sent_bytes.val();
            self.counters[i].egress_drop.next = self.ports_out[i].dropped.val();
            self.counters[i].egress_drop_reason.next = self.ports_out[i].drop_reason.val();
            self.counters[i].stall.next = self.ports_out[i].stall.val();
        }
        // The bus's answers, once every target's are in (a local signal
        // reads what was last assigned to it): the management BAR gets
        // them all, the core all but those to the BAR's reads.
        self.management_bar.bus.read_valid.next = self.bus_read_valid.val();
        self.management_bar.bus.read_data.next = self.bus_read_data.val();
        self.csr.read_valid.next =
            self.bus_read_valid.val() & !self.management_bar.answering_own_read.val();
        self.csr.read_data.next = self.bus_read_data.val();
        if self.management_bar.answering_own_read.val() {
            self.csr.read_data.next = bits::<32>(0);
        }
    }
}
