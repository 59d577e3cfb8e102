//! The management BAR: memory requests from the fabric executed as accesses
//! to the switch's own CSR window.
//!
//! The fabric manager reaches a switch it is not the CPU of through the
//! management function each port presents on its link: BAR0/BAR1 of that
//! function is the CSR window (`weft_regs::csr::global::MANAGEMENT_BAR_LOW`),
//! and a memory request hitting it on a fabric or disabled port whose
//! management function decodes it is a register access
//! ([`crate::port::PortIngress`] offers it on `execute`). This block takes
//! one such request at a time from the ports (round robin), performs it on
//! the CSR bus, and queues the completion at the egress of the port it came
//! in on, as weft-model's `CsrWindow::forward` executes it:
//!
//! - a Memory Write of one whole DW (Length 1, First DW BE 1111b, Last DW
//!   BE 0000b), not poisoned, writes the DW at the window's offset; any
//!   other write writes nothing, and a posted request has no completion to
//!   refuse it with (PCIe Base 6.0 §2.3.1);
//! - a Memory Read of one whole DW reads the register there and is
//!   answered with a CplD of its value (§2.2.9, §2.3.1.1), or, where no
//!   register answers the read (`crate::csr`: no `read_valid`), with
//!   Completer Abort (§2.3.1: the completer's programming model forbids it);
//! - a zero-length read (Length 1, no byte enabled, §2.2.5) reads nothing
//!   and is answered with a CplD of one DW of zeros;
//! - any other read is answered with Completer Abort;
//! - a Memory Read Lock or an AtomicOp, which the window does not support,
//!   with Unsupported Request (§2.3.1, §6.5.7, §6.15.2).
//!
//! Completions carry the port's completer ID and the request's requester
//! ID, tag, traffic class, attributes, Byte Count and Lower Address
//! ([`ErrorCompletion`]); a CplD's Length is 1.
//!
//! **The bus.** The soft core is the CSR bus's master; this block uses
//! the bus only in a cycle in which the core neither reads nor writes
//! (`cpu_busy` low), so the core's accesses are never delayed, and marks
//! the cycle after its own read (`answering_own_read`) so that the answer
//! goes to it and not to the core. The core's bridge accesses the bus at
//! most once every few cycles (its clock is slower), so a request waits a
//! cycle at most behind it.

use rust_hdl::prelude::*;
use weft_regs::csr::CSR_BASE;

use crate::csr::CsrBus;
use crate::isolation::{ErrorCompletion, STATUS_BITS};
use crate::tables::address_route::PORT_BITS as ROUTE_PORT_BITS;
use crate::tables::id_map::ID_BITS;
use crate::translate::host_ingress::{drop_reason_code, DROP_REASON_BITS};

/// Executes the management BAR's requests from `N` ports against the CSR window.
#[derive(LogicBlock)]
pub struct ManagementBar<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Bit `i`: port `i`'s ingress offers a request for the management BAR.
    pub offer: Signal<In, Bits<N>>,
    /// Per port: the offered request's header DW0, as it arrived.
    pub offer_dw0: [Signal<In, Bits<32>>; N],
    /// Its header DW1.
    pub offer_dw1: [Signal<In, Bits<32>>; N],
    /// Its header DW2.
    pub offer_dw2: [Signal<In, Bits<32>>; N],
    /// Its header DW3.
    pub offer_dw3: [Signal<In, Bits<32>>; N],
    /// Its first payload DW, in wire order.
    pub offer_data: [Signal<In, Bits<32>>; N],
    /// Bit `i`: port `i`'s request is taken in this cycle.
    pub take: Signal<Out, Bits<N>>,
    /// Per port: COMPLETER_ID, the completer of its answers.
    pub completer_id: [Signal<In, Bits<ID_BITS>>; N],
    /// The soft core reads or writes the CSR bus in this cycle.
    pub cpu_busy: Signal<In, Bit>,
    /// This block's accesses to the CSR bus, in cycles the core leaves it.
    pub bus: CsrBus,
    /// The bus's answer in this cycle is to this block's read of the last.
    pub answering_own_read: Signal<Out, Bit>,
    /// Bit `i`: a completion for port `i`'s egress waits on `answer_dw0..2`.
    pub answer: Signal<Out, Bits<N>>,
    /// The completion's header DW0.
    pub answer_dw0: Signal<Out, Bits<32>>,
    /// Its header DW1.
    pub answer_dw1: Signal<Out, Bits<32>>,
    /// Its header DW2.
    pub answer_dw2: Signal<Out, Bits<32>>,
    /// Its data DW, in wire order, if DW0's Fmt says it has one.
    pub answer_data: Signal<Out, Bits<32>>,
    /// Bit `i`: port `i`'s egress queues the completion in this cycle.
    pub answer_taken: Signal<In, Bits<N>>,
    completion: ErrorCompletion,
    busy: DFF<Bit>,
    reading: DFF<Bit>,
    answering: DFF<Bit>,
    port: DFF<Bits<ROUTE_PORT_BITS>>,
    last_port: DFF<Bits<ROUTE_PORT_BITS>>,
    dw0: DFF<Bits<32>>,
    dw1: DFF<Bits<32>>,
    dw2: DFF<Bits<32>>,
    dw3: DFF<Bits<32>>,
    data: DFF<Bits<32>>,
    status: DFF<Bits<STATUS_BITS>>,
    value: DFF<Bits<32>>,
    with_data: DFF<Bit>,
    own_read: DFF<Bit>,
    port_number: [Constant<Bits<ROUTE_PORT_BITS>>; N],
    first_port: Constant<Bits<N>>,
    window_base: Constant<Bits<32>>,
    window_offset: Constant<Bits<32>>,
    unsupported: Constant<Bits<DROP_REASON_BITS>>,
    successful: Constant<Bits<STATUS_BITS>>,
    unsupported_request: Constant<Bits<STATUS_BITS>>,
    completer_abort: Constant<Bits<STATUS_BITS>>,
    cpld_bits: Constant<Bits<32>>,
    choice: Signal<Local, Bits<ROUTE_PORT_BITS>>,
    offered: Signal<Local, Bit>,
    length: Signal<Local, Bits<10>>,
    first_be: Signal<Local, Bits<4>>,
    last_be: Signal<Local, Bits<4>>,
    write: Signal<Local, Bit>,
    read: Signal<Local, Bit>,
    whole_dw: Signal<Local, Bit>,
    zero_length: Signal<Local, Bit>,
    to_register: Signal<Local, Bit>,
    address: Signal<Local, Bits<32>>,
    deciding: Signal<Local, Bit>,
    on_bus: Signal<Local, Bit>,
}

impl<const N: usize> Default for ManagementBar<N> {
    fn default() -> Self {
        use crate::isolation::{
            STATUS_COMPLETER_ABORT, STATUS_SUCCESSFUL, STATUS_UNSUPPORTED_REQUEST,
        };
        ManagementBar {
            clock: Default::default(),
            offer: Default::default(),
            offer_dw0: std::array::from_fn(|_| Default::default()),
            offer_dw1: std::array::from_fn(|_| Default::default()),
            offer_dw2: std::array::from_fn(|_| Default::default()),
            offer_dw3: std::array::from_fn(|_| Default::default()),
            offer_data: std::array::from_fn(|_| Default::default()),
            take: Default::default(),
            completer_id: std::array::from_fn(|_| Default::default()),
            cpu_busy: Default::default(),
            bus: Default::default(),
            answering_own_read: Default::default(),
            answer: Default::default(),
            answer_dw0: Default::default(),
            answer_dw1: Default::default(),
            answer_dw2: Default::default(),
            answer_data: Default::default(),
            answer_taken: Default::default(),
            completion: Default::default(),
            busy: Default::default(),
            reading: Default::default(),
            answering: Default::default(),
            port: Default::default(),
            last_port: Default::default(),
            dw0: Default::default(),
            dw1: Default::default(),
            dw2: Default::default(),
            dw3: Default::default(),
            data: Default::default(),
            status: Default::default(),
            value: Default::default(),
            with_data: Default::default(),
            own_read: Default::default(),
            port_number: std::array::from_fn(|p| Constant::new(p.to_bits())),
            first_port: Constant::new(1u32.to_bits()),
            window_base: Constant::new(CSR_BASE.to_bits()),
            // The offset within the window: address bits 19:2 (a whole DW).
            window_offset: Constant::new((weft_regs::csr::CSR_SIZE - 4).to_bits()),
            unsupported: Constant::new(drop_reason_code("DROP_UNSUPPORTED").to_bits()),
            successful: Constant::new(STATUS_SUCCESSFUL.to_bits()),
            unsupported_request: Constant::new(STATUS_UNSUPPORTED_REQUEST.to_bits()),
            completer_abort: Constant::new(STATUS_COMPLETER_ABORT.to_bits()),
            // Table 2-3: CplD is Fmt 010b (DW0 bit 30); Length 1 (§2.2.9).
            cpld_bits: Constant::new((1u32 << 30 | 1).to_bits()),
            choice: Default::default(),
            offered: Default::default(),
            length: Default::default(),
            first_be: Default::default(),
            last_be: Default::default(),
            write: Default::default(),
            read: Default::default(),
            whole_dw: Default::default(),
            zero_length: Default::default(),
            to_register: Default::default(),
            address: Default::default(),
            deciding: Default::default(),
            on_bus: Default::default(),
        }
    }
}

impl<const N: usize> Logic for ManagementBar<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, busy, reading, answering, port, last_port, dw0, dw1, dw2, dw3, data,
            status, value, with_data, own_read
        );

        // Round robin: the highest offering port below the last one served,
        // else the highest offering port.
        self.choice.next = self.port_number[0].val();
        for k in 0..N {
            if self.offer.val().get_bit(k) {
                self.choice.next = self.port_number[k].val();
            }
        }
        for k in 0..N {
            if self.offer.val().get_bit(k) & (self.port_number[k].val() < self.last_port.q.val()) {
                self.choice.next = self.port_number[k].val();
            }
        }
        self.offered.next = self.offer.val().any();
        self.take.next = 0.into();
        if !self.busy.q.val() & self.offered.val() {
            self.take.next = self.first_port.val() << self.choice.val();
            self.busy.d.next = true;
            self.port.d.next = self.choice.val();
            self.last_port.d.next = self.choice.val();
            for k in 0..N {
                if self.choice.val().index() == k {
                    self.dw0.d.next = self.offer_dw0[k].val();
                    self.dw1.d.next = self.offer_dw1[k].val();
                    self.dw2.d.next = self.offer_dw2[k].val();
                    self.dw3.d.next = self.offer_dw3[k].val();
                    self.data.d.next = self.offer_data[k].val();
                }
            }
        }

        // The request taken (Table 2-3: MRd is Type 0_0000b without data,
        // MWr with; §2.2.5: byte enables; §2.2.4.1: the address DW).
        self.length.next = self.dw0.q.val().get_bits::<10>(0);
        self.first_be.next = self.dw1.q.val().get_bits::<4>(0);
        self.last_be.next = self.dw1.q.val().get_bits::<4>(4);
        self.write.next = (self.dw0.q.val().get_bits::<5>(24) == 0) & self.dw0.q.val().get_bit(30);
        self.read.next = (self.dw0.q.val().get_bits::<5>(24) == 0) & !self.dw0.q.val().get_bit(30);
        self.whole_dw.next =
            (self.length.val() == 1) & (self.first_be.val() == 15) & (self.last_be.val() == 0);
        self.zero_length.next = (self.length.val() == 1) & (self.first_be.val() == 0);
        // §2.7.2.2: a write with poisoned data (EP, DW0 bit 14) writes nothing.
        self.to_register.next = self.whole_dw.val()
            & (self.read.val() | (self.write.val() & !self.dw0.q.val().get_bit(14)));
        self.address.next = self.window_base.val() | (self.dw2.q.val() & self.window_offset.val());
        if self.dw0.q.val().get_bit(29) {
            self.address.next =
                self.window_base.val() | (self.dw3.q.val() & self.window_offset.val());
        }
        self.deciding.next = self.busy.q.val() & !self.reading.q.val() & !self.answering.q.val();

        // The access, in a cycle the core leaves the bus.
        self.on_bus.next = self.deciding.val() & self.to_register.val() & !self.cpu_busy.val();
        self.bus.address.next = self.address.val();
        self.bus.write.next = self.on_bus.val() & self.write.val();
        // §2.2.7: payload byte 0 is the lowest-addressed byte, a little-endian
        // register's bits 7:0; the stream carries DWs in wire (byte) order.
        self.bus.write_data.next = (bit_cast::<32, 8>(self.data.q.val().get_bits::<8>(0)) << 24)
            | (bit_cast::<32, 8>(self.data.q.val().get_bits::<8>(8)) << 16)
            | (bit_cast::<32, 8>(self.data.q.val().get_bits::<8>(16)) << 8)
            | bit_cast::<32, 8>(self.data.q.val().get_bits::<8>(24));
        self.bus.read.next = self.on_bus.val() & self.read.val();
        self.own_read.d.next = self.on_bus.val() & self.read.val();
        self.answering_own_read.next = self.own_read.q.val();
        if self.on_bus.val() {
            self.reading.d.next = self.read.val();
            self.busy.d.next = self.read.val();
        }
        if self.reading.q.val() {
            self.reading.d.next = false;
            self.answering.d.next = true;
            self.with_data.d.next = self.bus.read_valid.val();
            self.value.d.next = (bit_cast::<32, 8>(self.bus.read_data.val().get_bits::<8>(0))
                << 24)
                | (bit_cast::<32, 8>(self.bus.read_data.val().get_bits::<8>(8)) << 16)
                | (bit_cast::<32, 8>(self.bus.read_data.val().get_bits::<8>(16)) << 8)
                | bit_cast::<32, 8>(self.bus.read_data.val().get_bits::<8>(24));
            self.status.d.next = self.completer_abort.val();
            if self.bus.read_valid.val() {
                self.status.d.next = self.successful.val();
            }
        }
        // What needs no access: a refused write ends here, a non-posted
        // request is answered (`ErrorCompletion` says which are).
        if self.deciding.val() & !self.to_register.val() {
            self.busy.d.next = self.completion.respond.val();
            self.answering.d.next = self.completion.respond.val();
            self.value.d.next = bits::<32>(0);
            self.with_data.d.next = self.read.val() & self.zero_length.val();
            self.status.d.next = self.unsupported_request.val();
            if self.read.val() {
                self.status.d.next = self.completer_abort.val();
                if self.zero_length.val() {
                    self.status.d.next = self.successful.val();
                }
            }
        }

        // The completion, to the egress of the port the request came in on.
        self.completion.dropped.next = true;
        self.completion.drop_reason.next = self.unsupported.val();
        self.completion.unsettled.next = false;
        self.completion.dw0.next = self.dw0.q.val();
        self.completion.dw1.next = self.dw1.q.val();
        self.completion.dw2.next = self.dw2.q.val();
        self.completion.dw3.next = self.dw3.q.val();
        self.completion.status.next = self.status.q.val();
        self.completion.completer_id.next = self.completer_id[0].val();
        for k in 0..N {
            if self.port.q.val().index() == k {
                self.completion.completer_id.next = self.completer_id[k].val();
            }
        }
        self.answer_dw0.next = self.completion.completion_dw0.val();
        if self.with_data.q.val() {
            self.answer_dw0.next = self.completion.completion_dw0.val() | self.cpld_bits.val();
        }
        self.answer_dw1.next = self.completion.completion_dw1.val();
        self.answer_dw2.next = self.completion.completion_dw2.val();
        self.answer_data.next = self.value.q.val();
        self.answer.next = 0.into();
        if self.answering.q.val() {
            self.answer.next = self.first_port.val() << self.port.q.val();
        }
        if self.answering.q.val() & (self.answer_taken.val() & self.answer.val()).any() {
            self.answering.d.next = false;
            self.busy.d.next = false;
        }
    }
}
