//! Endpoint ingress: an endpoint's TLP header into fabric terms, or to the CPU, or dropped.
//!
//! DESIGN.md, "Domains and translation": an endpoint's DMA address that
//! hits one of its owner host's windows of a peer becomes the peer's
//! fabric address, so peer-to-peer stays inside the fabric; any other
//! address goes into the owner host's aperture
//! (`HOST_APERTURE_BASE | host << HOST_APERTURE_SHIFT | address`). The
//! requester ID stays: endpoints already carry their fabric IDs. This is
//! weft-model's `Switch::endpoint_ingress`. A requester's owner host, and
//! its slot's ACS and INTx controls, are its entry's in the port's function
//! owner table (`weft_regs::csr::function_owner`) if it has one, else the
//! port's (`OWNER` and `CONTROL` of `weft_regs::csr::port`); only the peer
//! windows serving that owner take part. The checks, in the model's order:
//!
//! 1. a header of no type is Malformed (§2.3.1); a disabled port drops everything;
//! 2. completions pass unchanged, to be routed by ID to whoever asked
//!    (and the stage says whether the completer and the requester have
//!    one owner host, for a port that returns peer traffic to its ingress);
//! 3. a requester ID whose bus is not below the port is spoofed (ACS
//!    Source Validation, PCIe Base 6.0 §6.12.1.1);
//! 4. a function bound to no host may only report to the fabric manager:
//!    its messages go to the CPU, its requests are dropped as Unbound;
//! 5. a memory request overlapping a peer window (unless the owner set ACS
//!    P2P Request Redirect, §7.7.11.3) must lie inside it and be permitted;
//!    otherwise it must fit the owner's aperture;
//! 6. I/O and configuration requests from an endpoint are Unsupported;
//! 7. INTx (swizzled by the slot's device number, §2.2.8.1), error and PME
//!    messages become ID-routed messages to the owner's proxy ID; errors
//!    are copied to the CPU for the event log; other messages go to the CPU.
//!
//! A rewritten header loses TD (§2.2.1, §2.7.1), and a memory request is
//! re-encoded as 3 or 4 DW by its new address (§2.2.4.1), as in
//! [`crate::translate::HostIngress`]. Routing the result is the next stage's.
//!
//! Latency: one clock cycle, the window table's; the answer holds while
//! the same header is presented.

use rust_hdl::prelude::*;
use weft_regs::aperture::{HOST_ADDRESS_LIMIT, HOST_APERTURE_BASE, HOST_APERTURE_SHIFT};
use weft_regs::capacity;

use crate::csr::CsrTarget;
use crate::header_decode::HeaderDecoder;
use crate::tables::window::LENGTH_BITS;
use crate::tables::{FunctionOwnerTable, WindowTable};
use crate::translate::host_ingress::{drop_reason_code, IngressDestination, DROP_REASON_BITS};

pub use crate::tables::window::HOST_BITS;

/// Bits of the slot's device number that swizzle INTx: the pin moves by
/// the device number modulo 4 (§2.2.8.1), so `CONTROL.INTX_SWIZZLE[1:0]`.
pub const SWIZZLE_BITS: usize = 2;

// The aperture address is built as `base_high | host << shift | address[51:32]`.
const _: () = assert!(HOST_APERTURE_SHIFT > 32 && HOST_APERTURE_SHIFT + HOST_BITS as u32 <= 63);
const _: () = assert!(HOST_ADDRESS_LIMIT == 1 << HOST_APERTURE_SHIFT);
const _: () = assert!(HOST_APERTURE_BASE as u32 == 0);

/// The endpoint ingress translation of one endpoint port with `N` peer windows.
#[derive(LogicBlock)]
pub struct EndpointIngress<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Programming and read-back of the port's peer windows (`weft_regs::csr::window`)
    /// and function owners (`weft_regs::csr::function_owner`).
    pub csr: CsrTarget,
    /// A TLP header is presented (the stream's valid on its sop beat).
    pub valid: Signal<In, Bit>,
    /// Header DW0 as received.
    pub dw0: Signal<In, Bits<32>>,
    /// Header DW1 as received.
    pub dw1: Signal<In, Bits<32>>,
    /// Header DW2 as received.
    pub dw2: Signal<In, Bits<32>>,
    /// Header DW3 as received (ignored for a 3 DW header).
    pub dw3: Signal<In, Bits<32>>,
    /// The port passes traffic: `CONTROL.ENABLE` with role endpoint.
    pub enabled: Signal<In, Bit>,
    /// The endpoint is bound to a host: `OWNER.BOUND`.
    pub bound: Signal<In, Bit>,
    /// The owner host's index, selecting its aperture: `OWNER.HOST_INDEX`.
    pub owner_host: Signal<In, Bits<HOST_BITS>>,
    /// The owner host's proxy fabric ID: `OWNER.PROXY_ID`.
    pub owner_proxy_id: Signal<In, Bits<16>>,
    /// First fabric bus number below the port: `BUSES.FIRST`.
    pub bus_first: Signal<In, Bits<8>>,
    /// Last fabric bus number below the port: `BUSES.LAST`.
    pub bus_last: Signal<In, Bits<8>>,
    /// ACS P2P Request Redirect of the owner's slot: `CONTROL.P2P_REQUEST_REDIRECT`.
    pub p2p_request_redirect: Signal<In, Bit>,
    /// The slot's device number modulo 4: `CONTROL.INTX_SWIZZLE[1:0]`.
    pub intx_swizzle: Signal<In, Bits<SWIZZLE_BITS>>,
    /// The header presented before the last clock edge is answered.
    pub answer_valid: Signal<Out, Bit>,
    /// Where it goes: an [`IngressDestination`] code (never to the CPU
    /// for a completion, which passes as Completion).
    pub destination: Signal<Out, Bits<2>>,
    /// A forwarded error message also goes to the CPU's mailbox, as the
    /// header here says (the fabric manager's event log).
    pub copy_to_cpu: Signal<Out, Bit>,
    /// Why it is dropped, while `destination` is Drop: the index of the
    /// reason in weft-model's `DropReason::ALL`, as the drop counters use.
    pub drop_reason: Signal<Out, Bits<DROP_REASON_BITS>>,
    /// For a completion: its completer's and its requester's owners (each
    /// its function owner entry's, else the port's) are one host.
    pub completion_within_owner: Signal<Out, Bit>,
    /// Header DW0 to send on.
    pub header_dw0: Signal<Out, Bits<32>>,
    /// Header DW1 to send on.
    pub header_dw1: Signal<Out, Bits<32>>,
    /// Header DW2 to send on.
    pub header_dw2: Signal<Out, Bits<32>>,
    /// Header DW3 to send on (zero after a 3 DW memory request).
    pub header_dw3: Signal<Out, Bits<32>>,
    decoder: HeaderDecoder,
    windows: WindowTable<N>,
    functions: FunctionOwnerTable<{ capacity::FUNCTION_OWNERS_PER_PORT }>,
    valid_reg: DFF<Bit>,
    dw0_reg: DFF<Bits<32>>,
    dw1_reg: DFF<Bits<32>>,
    dw2_reg: DFF<Bits<32>>,
    dw3_reg: DFF<Bits<32>>,
    destination_reg: DFF<Bits<2>>,
    reason_reg: DFF<Bits<DROP_REASON_BITS>>,
    copy_reg: DFF<Bit>,
    memory_reg: DFF<Bit>,
    peer_allowed_reg: DFF<Bit>,
    aperture_fits_reg: DFF<Bit>,
    aperture_high_reg: DFF<Bits<32>>,
    low_dw_reg: DFF<Bits<32>>,
    hint_reg: DFF<Bits<2>>,
    needs_read_reg: DFF<Bit>,
    needs_write_reg: DFF<Bit>,
    within_owner_reg: DFF<Bit>,
    to_forward: Constant<Bits<2>>,
    to_cpu: Constant<Bits<2>>,
    to_drop: Constant<Bits<2>>,
    to_completion: Constant<Bits<2>>,
    malformed: Constant<Bits<DROP_REASON_BITS>>,
    port_disabled: Constant<Bits<DROP_REASON_BITS>>,
    unbound: Constant<Bits<DROP_REASON_BITS>>,
    spoofed: Constant<Bits<DROP_REASON_BITS>>,
    no_window: Constant<Bits<DROP_REASON_BITS>>,
    forbidden: Constant<Bits<DROP_REASON_BITS>>,
    outside_aperture: Constant<Bits<DROP_REASON_BITS>>,
    unsupported: Constant<Bits<DROP_REASON_BITS>>,
    dw0_kept: Constant<Bits<32>>,
    four_dw_bit: Constant<Bits<32>>,
    message_dw0_kept: Constant<Bits<32>>,
    pin_kept: Constant<Bits<32>>,
    by_id_routing: Constant<Bits<32>>,
    aperture_base_high: Constant<Bits<32>>,
    host_shift: Constant<Bits<32>>,
    address_limit_high: Constant<Bits<32>>,
    length_bytes: Signal<Local, Bits<LENGTH_BITS>>,
    atomic: Signal<Local, Bit>,
    owned: Signal<Local, Bit>,
    owner: Signal<Local, Bits<HOST_BITS>>,
    other_owned: Signal<Local, Bit>,
    other_owner: Signal<Local, Bits<HOST_BITS>>,
    proxy: Signal<Local, Bits<16>>,
    redirect: Signal<Local, Bit>,
    swizzle: Signal<Local, Bits<SWIZZLE_BITS>>,
    requester_bus: Signal<Local, Bits<8>>,
    code: Signal<Local, Bits<8>>,
    intx: Signal<Local, Bit>,
    swizzled_pin: Signal<Local, Bits<2>>,
    error_message: Signal<Local, Bit>,
    end_low: Signal<Local, Bits<32>>,
    four_dw: Signal<Local, Bit>,
    fabric_low_dw: Signal<Local, Bits<32>>,
}

impl<const N: usize> EndpointIngress<N> {
    /// The endpoint ingress of port `port`, its window table answering that port's window registers.
    ///
    /// # Panics
    ///
    /// As [`WindowTable::new`].
    pub fn new(port: u32) -> Self {
        let destination = |d: IngressDestination| Constant::new(d.code().to_bits());
        let reason = |name: &str| Constant::new(drop_reason_code(name).to_bits());
        // §2.2.1: Fmt[0] (DW0 bit 29) selects the 4 DW header; TD is DW0
        // bit 15; a message's routing r[2:0] is Type[2:0], DW0 bits 26:24.
        let four_dw_bit = 1u32 << 29;
        let digest_bit = 1u32 << 15;
        let routing_bits = 0b111u32 << 24;
        EndpointIngress {
            clock: Default::default(),
            csr: Default::default(),
            valid: Default::default(),
            dw0: Default::default(),
            dw1: Default::default(),
            dw2: Default::default(),
            dw3: Default::default(),
            enabled: Default::default(),
            bound: Default::default(),
            owner_host: Default::default(),
            owner_proxy_id: Default::default(),
            bus_first: Default::default(),
            bus_last: Default::default(),
            p2p_request_redirect: Default::default(),
            intx_swizzle: Default::default(),
            answer_valid: Default::default(),
            destination: Default::default(),
            copy_to_cpu: Default::default(),
            completion_within_owner: Default::default(),
            drop_reason: Default::default(),
            header_dw0: Default::default(),
            header_dw1: Default::default(),
            header_dw2: Default::default(),
            header_dw3: Default::default(),
            decoder: Default::default(),
            windows: WindowTable::new(port),
            functions: FunctionOwnerTable::new(port),
            valid_reg: Default::default(),
            dw0_reg: Default::default(),
            dw1_reg: Default::default(),
            dw2_reg: Default::default(),
            dw3_reg: Default::default(),
            destination_reg: Default::default(),
            reason_reg: Default::default(),
            copy_reg: Default::default(),
            memory_reg: Default::default(),
            peer_allowed_reg: Default::default(),
            aperture_fits_reg: Default::default(),
            aperture_high_reg: Default::default(),
            low_dw_reg: Default::default(),
            hint_reg: Default::default(),
            needs_read_reg: Default::default(),
            needs_write_reg: Default::default(),
            within_owner_reg: Default::default(),
            to_forward: destination(IngressDestination::Forward),
            to_cpu: destination(IngressDestination::Cpu),
            to_drop: destination(IngressDestination::Drop),
            to_completion: destination(IngressDestination::Completion),
            malformed: reason("DROP_MALFORMED"),
            port_disabled: reason("DROP_PORT_DISABLED"),
            unbound: reason("DROP_UNBOUND"),
            spoofed: reason("DROP_SPOOFED_REQUESTER"),
            no_window: reason("DROP_NO_WINDOW"),
            forbidden: reason("DROP_FORBIDDEN"),
            outside_aperture: reason("DROP_OUTSIDE_APERTURE"),
            unsupported: reason("DROP_UNSUPPORTED"),
            dw0_kept: Constant::new((!(four_dw_bit | digest_bit)).to_bits()),
            four_dw_bit: Constant::new(four_dw_bit.to_bits()),
            message_dw0_kept: Constant::new((!(routing_bits | digest_bit)).to_bits()),
            pin_kept: Constant::new((!0b11u32).to_bits()),
            // Table 2-20: r[2:0] = 010b, routed by ID.
            by_id_routing: Constant::new((0b010u32 << 24).to_bits()),
            aperture_base_high: Constant::new(((HOST_APERTURE_BASE >> 32) as u32).to_bits()),
            host_shift: Constant::new((HOST_APERTURE_SHIFT - 32).to_bits()),
            address_limit_high: Constant::new(((HOST_ADDRESS_LIMIT >> 32) as u32).to_bits()),
            length_bytes: Default::default(),
            atomic: Default::default(),
            owned: Default::default(),
            owner: Default::default(),
            other_owned: Default::default(),
            other_owner: Default::default(),
            proxy: Default::default(),
            redirect: Default::default(),
            swizzle: Default::default(),
            requester_bus: Default::default(),
            code: Default::default(),
            intx: Default::default(),
            swizzled_pin: Default::default(),
            error_message: Default::default(),
            end_low: Default::default(),
            four_dw: Default::default(),
            fabric_low_dw: Default::default(),
        }
    }
}

impl<const N: usize> Logic for EndpointIngress<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            valid_reg,
            dw0_reg,
            dw1_reg,
            dw2_reg,
            dw3_reg,
            destination_reg,
            reason_reg,
            copy_reg,
            memory_reg,
            peer_allowed_reg,
            aperture_fits_reg,
            aperture_high_reg,
            low_dw_reg,
            hint_reg,
            needs_read_reg,
            needs_write_reg,
            within_owner_reg
        );
        self.windows.clock.next = self.clock.val();
        self.functions.clock.next = self.clock.val();
        // Two register blocks on one bus: each answers its own addresses, the answers OR.
        self.windows.csr.address.next = self.csr.address.val();
        self.windows.csr.write.next = self.csr.write.val();
        self.windows.csr.write_data.next = self.csr.write_data.val();
        self.windows.csr.read.next = self.csr.read.val();
        self.functions.csr.address.next = self.csr.address.val();
        self.functions.csr.write.next = self.csr.write.val();
        self.functions.csr.write_data.next = self.csr.write_data.val();
        self.functions.csr.read.next = self.csr.read.val();
        self.csr.read_data.next =
            self.windows.csr.read_data.val() | self.functions.csr.read_data.val();
        self.csr.read_valid.next =
            self.windows.csr.read_valid.val() || self.functions.csr.read_valid.val();

        // Cycle 1: decode, start the window lookup, decide all but a memory request's window.
        self.decoder.dw0.next = self.dw0.val();
        self.decoder.dw1.next = self.dw1.val();
        self.decoder.dw2.next = self.dw2.val();
        self.decoder.dw3.next = self.dw3.val();
        // AtomicOps FetchAdd, Swap, CAS: Type 0_1100b..0_1110b (§2.2.1, Table 2-3).
        self.atomic.next =
            (self.decoder.tlp_type.val() >= 12) && (self.decoder.tlp_type.val() <= 14);
        // The bytes the request touches: its Length, except for CAS, whose
        // payload holds two operands for one location (§2.2.7.1, Table 2-15).
        self.length_bytes.next = bit_cast::<LENGTH_BITS, 11>(self.decoder.length_dw.val()) << 2;
        if self.decoder.tlp_type.val() == 14 {
            self.length_bytes.next = bit_cast::<LENGTH_BITS, 11>(self.decoder.length_dw.val()) << 1;
        }
        // The requester's owner: its function owner entry's, else the port's
        // (weft-model's `PortTables::ownership`), with its slot's controls.
        self.functions.requester.next = self.decoder.dw1_id.val();
        self.owned.next = self.bound.val();
        self.owner.next = self.owner_host.val();
        self.proxy.next = self.owner_proxy_id.val();
        self.redirect.next = self.p2p_request_redirect.val();
        self.swizzle.next = self.intx_swizzle.val();
        if self.functions.found.val() {
            self.owned.next = true;
            self.owner.next = self.functions.host.val();
            self.proxy.next = self.functions.proxy_id.val();
            self.redirect.next = self.functions.p2p_request_redirect.val();
            self.swizzle.next = self.functions.intx_swizzle.val();
        }
        // A completion's requester (DW2[31:16], §2.2.9) has an owner too:
        // its completer's (DW1[31:16]) must be the same host for the
        // completion to go back out of this port.
        self.functions.other.next = self.dw2.val().get_bits::<16>(16);
        self.other_owned.next = self.bound.val();
        self.other_owner.next = self.owner_host.val();
        if self.functions.other_found.val() {
            self.other_owned.next = true;
            self.other_owner.next = self.functions.other_host.val();
        }
        self.within_owner_reg.d.next = self.owned.val()
            && self.other_owned.val()
            && (self.owner.val() == self.other_owner.val());
        // Only the owner's peer windows exist for this requester.
        self.windows.owner_filter.next = true;
        self.windows.owner_host.next = self.owner.val();
        self.windows.port_owned.next = self.bound.val();
        self.windows.port_owner_host.next = self.owner_host.val();
        self.windows.address_high.next = self.decoder.address_high.val();
        self.windows.address_low.next = self.decoder.address_low.val();
        self.windows.length.next = self.length_bytes.val();

        // The aperture takes host addresses below HOST_ADDRESS_LIMIT only:
        // address + length <= limit. The length is at most 4 KiB, so with
        // address[63:32] below the limit's, only a carry out of address[31:0]
        // into its last value can cross it, and then lands exactly on it
        // only if the low half ends at zero.
        self.end_low.next =
            self.decoder.address_low.val() + bit_cast::<32, LENGTH_BITS>(self.length_bytes.val());
        self.aperture_fits_reg.d.next = (self.decoder.address_high.val()
            < self.address_limit_high.val() - 1)
            || ((self.decoder.address_high.val() == self.address_limit_high.val() - 1)
                && ((self.end_low.val() >= self.decoder.address_low.val())
                    || !self.end_low.val().any()));
        self.aperture_high_reg.d.next = self.aperture_base_high.val()
            | (bit_cast::<32, HOST_BITS>(self.owner.val()) << self.host_shift.val())
            | self.decoder.address_high.val();
        self.low_dw_reg.d.next = self.decoder.address_low.val();
        self.hint_reg.d.next = self.decoder.processing_hint.val();
        self.peer_allowed_reg.d.next = !self.redirect.val();
        // Reads need read permission, writes write permission, AtomicOps
        // both: they read the target and write it back (§6.15).
        self.needs_read_reg.d.next = !self.decoder.has_data.val() || self.atomic.val();
        self.needs_write_reg.d.next = self.decoder.has_data.val();

        // §2.2.6.2: the requester ID is DW1[31:16], its bus number the top byte.
        self.requester_bus.next = self.dw1.val().get_bits::<8>(24);
        // §2.2.8: the Message Code is DW1[7:0]. Assert_INTx 0010_0xxxb and
        // Deassert_INTx 0010_01xxb (§2.2.8.1), ERR_COR 0011_0000b,
        // ERR_NONFATAL 0011_0001b, ERR_FATAL 0011_0011b (§2.2.8.3), PM_PME 0001_1000b (§2.2.8.2).
        self.code.next = self.dw1.val().get_bits::<8>(0);
        self.intx.next = self.code.val().get_bits::<5>(3) == 0b00100;
        self.swizzled_pin.next = self.code.val().get_bits::<2>(0) + self.swizzle.val();
        self.error_message.next =
            (self.code.val() == 0x30) || (self.code.val() == 0x31) || (self.code.val() == 0x33);

        self.valid_reg.d.next = self.valid.val();
        self.dw0_reg.d.next = self.dw0.val();
        self.dw1_reg.d.next = self.dw1.val();
        self.dw2_reg.d.next = self.dw2.val();
        self.dw3_reg.d.next = self.dw3.val();
        self.destination_reg.d.next = self.to_drop.val();
        self.reason_reg.d.next = self.malformed.val();
        self.copy_reg.d.next = false;
        self.memory_reg.d.next = false;
        if self.decoder.reserved.val() || self.decoder.prefix.val() {
            // A header of no type (reserved, or a prefix) is Malformed (§2.3.1).
            self.reason_reg.d.next = self.malformed.val();
        } else if !self.enabled.val() {
            self.reason_reg.d.next = self.port_disabled.val();
        } else if self.decoder.completion.val() {
            self.destination_reg.d.next = self.to_completion.val();
        } else if (self.requester_bus.val() < self.bus_first.val())
            || (self.requester_bus.val() > self.bus_last.val())
        {
            self.reason_reg.d.next = self.spoofed.val();
        } else if !self.owned.val() {
            self.reason_reg.d.next = self.unbound.val();
            if self.decoder.message.val() {
                self.destination_reg.d.next = self.to_cpu.val();
            }
        } else if self.decoder.memory.val() {
            self.destination_reg.d.next = self.to_forward.val();
            self.memory_reg.d.next = true;
            self.dw0_reg.d.next = self.dw0.val() & self.dw0_kept.val();
        } else if self.decoder.message.val() {
            self.destination_reg.d.next = self.to_cpu.val();
            if self.intx.val() || self.error_message.val() || (self.code.val() == 0x18) {
                // To the owner's proxy, routed by ID (target in DW2[31:16], §2.2.4.2).
                self.destination_reg.d.next = self.to_forward.val();
                self.copy_reg.d.next = self.error_message.val();
                self.dw0_reg.d.next =
                    (self.dw0.val() & self.message_dw0_kept.val()) | self.by_id_routing.val();
                self.dw2_reg.d.next = (bit_cast::<32, 16>(self.proxy.val()) << 16)
                    | bit_cast::<32, 16>(self.dw2.val().get_bits::<16>(0));
                if self.intx.val() {
                    // §2.2.8.1, Table 2-21: the pin becomes (pin + device number) mod 4.
                    self.dw1_reg.d.next = (self.dw1.val() & self.pin_kept.val())
                        | bit_cast::<32, 2>(self.swizzled_pin.val());
                }
            }
        } else {
            // I/O and configuration requests.
            self.reason_reg.d.next = self.unsupported.val();
        }

        // Cycle 2: the window table's answer decides a memory request.
        self.answer_valid.next = self.valid_reg.q.val();
        self.destination.next = self.destination_reg.q.val();
        self.drop_reason.next = self.reason_reg.q.val();
        self.copy_to_cpu.next = self.copy_reg.q.val();
        self.completion_within_owner.next = self.within_owner_reg.q.val();
        self.header_dw0.next = self.dw0_reg.q.val();
        self.header_dw1.next = self.dw1_reg.q.val();
        self.header_dw2.next = self.dw2_reg.q.val();
        self.header_dw3.next = self.dw3_reg.q.val();
        // §2.2.4.1: the 4 DW header exactly for addresses at or above 4 GiB;
        // address[1:0] carries PH, not address bits.
        self.four_dw.next = true;
        self.fabric_low_dw.next =
            self.low_dw_reg.q.val() | bit_cast::<32, 2>(self.hint_reg.q.val());
        if self.memory_reg.q.val() {
            self.header_dw2.next = self.aperture_high_reg.q.val();
            if self.peer_allowed_reg.q.val() && self.windows.hit.val() {
                self.four_dw.next = self.windows.fabric_high.val().any();
                self.fabric_low_dw.next =
                    (bit_cast::<32, 30>(self.windows.fabric_low.val().get_bits::<30>(2)) << 2)
                        | bit_cast::<32, 2>(self.hint_reg.q.val());
                self.header_dw2.next = self.windows.fabric_high.val();
                if !self.windows.contained.val() {
                    self.destination.next = self.to_drop.val();
                    self.drop_reason.next = self.no_window.val();
                } else if (self.needs_read_reg.q.val() && !self.windows.permit_read.val())
                    || (self.needs_write_reg.q.val() && !self.windows.permit_write.val())
                {
                    self.destination.next = self.to_drop.val();
                    self.drop_reason.next = self.forbidden.val();
                }
            } else if !self.aperture_fits_reg.q.val() {
                self.destination.next = self.to_drop.val();
                self.drop_reason.next = self.outside_aperture.val();
            }
            self.header_dw3.next = self.fabric_low_dw.val();
            if !self.four_dw.val() {
                self.header_dw2.next = self.fabric_low_dw.val();
                self.header_dw3.next = bits::<32>(0);
            }
            if self.four_dw.val() {
                self.header_dw0.next = self.dw0_reg.q.val() | self.four_dw_bit.val();
            }
        }
    }
}
