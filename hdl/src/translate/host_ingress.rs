//! Host ingress: a host's TLP header into fabric terms, or to the CPU, or dropped.
//!
//! DESIGN.md, "Domains and translation": a memory request from a host must
//! lie wholly inside one of the host port's windows, and the window must
//! permit it; its address becomes the window's fabric address and its
//! requester ID the port's proxy fabric ID. Configuration requests and
//! messages go to the management CPU's mailbox; I/O requests are dropped
//! as unsupported. This is weft-model's `Switch::host_ingress` for those
//! TLPs. Completions from the host are left to the ID translation that
//! follows (they carry no address to translate), and pass through marked
//! as such.
//!
//! The rewritten header is re-encoded as the spec demands of the new
//! address (PCIe Base 6.0 §2.2.4.1): a fabric address at or above 4 GiB
//! needs the 4 DW header (Fmt\[0\] set, address\[63:32\] in DW2 and
//! address\[31:2\] in DW3), one below it the 3 DW header (address\[31:2\]
//! in DW2), whichever form the host used. TD is cleared (§2.2.1): the
//! ECRC covered the fields just rewritten (§2.7.1), and weft does not
//! regenerate it, so the payload path must drop the digest DW.
//!
//! Not done here: a non-posted request also needs a fabric tag from the
//! port's outstanding-request table (weft-model's `OutstandingTable`); the
//! tag leaves this stage as the host sent it, and the stage that allocates
//! fabric tags rewrites it. Routing the fabric address is the next stage's.
//!
//! Latency: one clock cycle, the window table's. The header presented
//! (with `valid`) before a clock edge is answered after it; the answer
//! holds as long as the same header is presented, so a stalled stream
//! holds its inputs and the answer with them.

use rust_hdl::prelude::*;
use weft_regs::csr::counter;

use crate::csr::CsrTarget;
use crate::header_decode::HeaderDecoder;
use crate::tables::window::{HOST_BITS, LENGTH_BITS};
use crate::tables::WindowTable;

/// Bits of a drop reason code.
pub const DROP_REASON_BITS: usize = 4;

/// Where the host ingress stage sends a TLP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IngressDestination {
    /// On into the fabric, translated: to routing.
    Forward,
    /// To the management CPU's mailbox, unchanged.
    Cpu,
    /// Dropped, for the reason in `drop_reason`.
    Drop,
    /// A completion: on, unchanged, to the ID translation stage.
    Completion,
}

impl IngressDestination {
    /// Every destination, in code order.
    pub const ALL: [IngressDestination; 4] = [
        IngressDestination::Forward,
        IngressDestination::Cpu,
        IngressDestination::Drop,
        IngressDestination::Completion,
    ];

    /// The value of [`HostIngress::destination`] for this destination.
    pub const fn code(self) -> u32 {
        match self {
            IngressDestination::Forward => 0,
            IngressDestination::Cpu => 1,
            IngressDestination::Drop => 2,
            IngressDestination::Completion => 3,
        }
    }

    /// The destination with code `code`, if there is one.
    pub fn from_code(code: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.code() == code)
    }
}

/// The code of the drop counter named `name` (`DROP_…` in
/// `weft_regs::csr::counter`): its position among the drop counters,
/// which is weft-model's `DropReason::ALL` order.
///
/// # Panics
///
/// If the register map has no such counter (a bug in weft).
pub fn drop_reason_code(name: &str) -> u32 {
    let entry = counter::NAMES
        .iter()
        .position(|entry| entry.name == name)
        .expect("the register map names every drop counter") as u32;
    assert!(entry >= counter::FIRST_DROP, "{name} is not a drop counter");
    entry - counter::FIRST_DROP
}

/// The host ingress translation of one host port with `N` windows.
#[derive(LogicBlock)]
pub struct HostIngress<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Programming and read-back of the port's windows (`weft_regs::csr::window`).
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
    /// The port's proxy fabric ID: PROXY_ID of `weft_regs::csr::port::HOST`,
    /// held by the port's register block.
    pub proxy_id: Signal<In, Bits<16>>,
    /// The header presented before the last clock edge is answered.
    pub answer_valid: Signal<Out, Bit>,
    /// Where it goes: an [`IngressDestination`] code.
    pub destination: Signal<Out, Bits<2>>,
    /// Why it is dropped, while `destination` is Drop: the index of the
    /// reason in weft-model's `DropReason::ALL`, as the drop counters use.
    pub drop_reason: Signal<Out, Bits<DROP_REASON_BITS>>,
    /// Header DW0 to send on: Fmt\[0\] set for the fabric address, TD clear.
    pub header_dw0: Signal<Out, Bits<32>>,
    /// Header DW1 to send on: the proxy ID as requester.
    pub header_dw1: Signal<Out, Bits<32>>,
    /// Header DW2 to send on.
    pub header_dw2: Signal<Out, Bits<32>>,
    /// Header DW3 to send on (zero for a 3 DW header).
    pub header_dw3: Signal<Out, Bits<32>>,
    decoder: HeaderDecoder,
    windows: WindowTable<N>,
    valid_reg: DFF<Bit>,
    dw0_reg: DFF<Bits<32>>,
    dw1_reg: DFF<Bits<32>>,
    dw2_reg: DFF<Bits<32>>,
    dw3_reg: DFF<Bits<32>>,
    hint_reg: DFF<Bits<2>>,
    proxy_reg: DFF<Bits<16>>,
    memory_reg: DFF<Bit>,
    needs_read_reg: DFF<Bit>,
    needs_write_reg: DFF<Bit>,
    other_destination_reg: DFF<Bits<2>>,
    other_reason_reg: DFF<Bits<DROP_REASON_BITS>>,
    to_forward: Constant<Bits<2>>,
    to_cpu: Constant<Bits<2>>,
    to_drop: Constant<Bits<2>>,
    to_completion: Constant<Bits<2>>,
    malformed: Constant<Bits<DROP_REASON_BITS>>,
    no_window: Constant<Bits<DROP_REASON_BITS>>,
    forbidden: Constant<Bits<DROP_REASON_BITS>>,
    unsupported: Constant<Bits<DROP_REASON_BITS>>,
    dw0_kept: Constant<Bits<32>>,
    four_dw_bit: Constant<Bits<32>>,
    length_bytes: Signal<Local, Bits<LENGTH_BITS>>,
    atomic: Signal<Local, Bit>,
    four_dw: Signal<Local, Bit>,
    fabric_low_dw: Signal<Local, Bits<32>>,
}

impl<const N: usize> HostIngress<N> {
    /// The host ingress of port `port`, its window table answering that port's window registers.
    ///
    /// # Panics
    ///
    /// As [`WindowTable::new`].
    pub fn new(port: u32) -> Self {
        let destination = |d: IngressDestination| Constant::new(d.code().to_bits());
        let reason = |name: &str| Constant::new(drop_reason_code(name).to_bits());
        // §2.2.1: Fmt[0] (DW0 bit 29) selects the 4 DW header; TD is DW0 bit 15.
        let four_dw_bit = 1u32 << 29;
        let digest_bit = 1u32 << 15;
        HostIngress {
            clock: Default::default(),
            csr: Default::default(),
            valid: Default::default(),
            dw0: Default::default(),
            dw1: Default::default(),
            dw2: Default::default(),
            dw3: Default::default(),
            proxy_id: Default::default(),
            answer_valid: Default::default(),
            destination: Default::default(),
            drop_reason: Default::default(),
            header_dw0: Default::default(),
            header_dw1: Default::default(),
            header_dw2: Default::default(),
            header_dw3: Default::default(),
            decoder: Default::default(),
            windows: WindowTable::new(port),
            valid_reg: Default::default(),
            dw0_reg: Default::default(),
            dw1_reg: Default::default(),
            dw2_reg: Default::default(),
            dw3_reg: Default::default(),
            hint_reg: Default::default(),
            proxy_reg: Default::default(),
            memory_reg: Default::default(),
            needs_read_reg: Default::default(),
            needs_write_reg: Default::default(),
            other_destination_reg: Default::default(),
            other_reason_reg: Default::default(),
            to_forward: destination(IngressDestination::Forward),
            to_cpu: destination(IngressDestination::Cpu),
            to_drop: destination(IngressDestination::Drop),
            to_completion: destination(IngressDestination::Completion),
            malformed: reason("DROP_MALFORMED"),
            no_window: reason("DROP_NO_WINDOW"),
            forbidden: reason("DROP_FORBIDDEN"),
            unsupported: reason("DROP_UNSUPPORTED"),
            dw0_kept: Constant::new((!(four_dw_bit | digest_bit)).to_bits()),
            four_dw_bit: Constant::new(four_dw_bit.to_bits()),
            length_bytes: Default::default(),
            atomic: Default::default(),
            four_dw: Default::default(),
            fabric_low_dw: Default::default(),
        }
    }
}

impl<const N: usize> Logic for HostIngress<N> {
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
            hint_reg,
            proxy_reg,
            memory_reg,
            needs_read_reg,
            needs_write_reg,
            other_destination_reg,
            other_reason_reg
        );
        self.windows.clock.next = self.clock.val();
        CsrTarget::link(&mut self.csr, &mut self.windows.csr);

        // Cycle 1: decode, start the window lookup, and keep what the answer needs.
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
        self.windows.address_high.next = self.decoder.address_high.val();
        self.windows.address_low.next = self.decoder.address_low.val();
        self.windows.length.next = self.length_bytes.val();
        // Every window of a host port serves its host.
        self.windows.owner_filter.next = false;
        self.windows.owner_host.next = bits::<HOST_BITS>(0);
        self.windows.port_owned.next = false;
        self.windows.port_owner_host.next = bits::<HOST_BITS>(0);

        self.valid_reg.d.next = self.valid.val();
        self.dw0_reg.d.next = self.dw0.val();
        self.dw1_reg.d.next = self.dw1.val();
        self.dw2_reg.d.next = self.dw2.val();
        self.dw3_reg.d.next = self.dw3.val();
        self.hint_reg.d.next = self.decoder.processing_hint.val();
        self.proxy_reg.d.next = self.proxy_id.val();
        self.memory_reg.d.next = self.decoder.memory.val();
        // Reads need read permission, writes write permission, AtomicOps
        // both: they read the target and write it back (§6.15).
        self.needs_read_reg.d.next = !self.decoder.has_data.val() || self.atomic.val();
        self.needs_write_reg.d.next = self.decoder.has_data.val();
        // Everything but memory requests is decided by its type alone. A
        // header of no type (reserved, or a prefix) is Malformed (§2.3.1).
        self.other_destination_reg.d.next = self.to_drop.val();
        self.other_reason_reg.d.next = self.malformed.val();
        if self.decoder.completion.val() {
            self.other_destination_reg.d.next = self.to_completion.val();
        }
        if self.decoder.io.val() {
            self.other_reason_reg.d.next = self.unsupported.val();
        }
        if self.decoder.configuration.val() || self.decoder.message.val() {
            self.other_destination_reg.d.next = self.to_cpu.val();
        }

        // Cycle 2: the window's answer decides a memory request.
        self.answer_valid.next = self.valid_reg.q.val();
        self.destination.next = self.other_destination_reg.q.val();
        self.drop_reason.next = self.other_reason_reg.q.val();
        self.header_dw0.next = self.dw0_reg.q.val();
        self.header_dw1.next = self.dw1_reg.q.val();
        self.header_dw2.next = self.dw2_reg.q.val();
        self.header_dw3.next = self.dw3_reg.q.val();
        // §2.2.4.1: the 4 DW header exactly for addresses at or above 4 GiB;
        // address[1:0] is not carried (PH sits there).
        self.four_dw.next = self.windows.fabric_high.val().any();
        self.fabric_low_dw.next =
            (bit_cast::<32, 30>(self.windows.fabric_low.val().get_bits::<30>(2)) << 2)
                | bit_cast::<32, 2>(self.hint_reg.q.val());
        if self.memory_reg.q.val() {
            self.destination.next = self.to_forward.val();
            self.drop_reason.next = bits::<DROP_REASON_BITS>(0);
            if !(self.windows.hit.val() && self.windows.contained.val()) {
                self.destination.next = self.to_drop.val();
                self.drop_reason.next = self.no_window.val();
            } else if (self.needs_read_reg.q.val() && !self.windows.permit_read.val())
                || (self.needs_write_reg.q.val() && !self.windows.permit_write.val())
            {
                self.destination.next = self.to_drop.val();
                self.drop_reason.next = self.forbidden.val();
            }
            self.header_dw0.next = self.dw0_reg.q.val() & self.dw0_kept.val();
            // §2.2.6.2: the requester ID is DW1[31:16]; tag and byte enables stay.
            self.header_dw1.next = (bit_cast::<32, 16>(self.proxy_reg.q.val()) << 16)
                | bit_cast::<32, 16>(self.dw1_reg.q.val().get_bits::<16>(0));
            self.header_dw2.next = self.fabric_low_dw.val();
            self.header_dw3.next = bits::<32>(0);
            if self.four_dw.val() {
                self.header_dw0.next =
                    (self.dw0_reg.q.val() & self.dw0_kept.val()) | self.four_dw_bit.val();
                self.header_dw2.next = self.windows.fabric_high.val();
                self.header_dw3.next = self.fabric_low_dw.val();
            }
        }
    }
}
