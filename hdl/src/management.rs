//! The management CPU's path into the data plane: its mailbox and its TLP injection.
//!
//! DESIGN.md, "Configuration requests": configuration requests from hosts
//! go to the firmware through a mailbox queue, and the firmware answers
//! them, and sends its own TLPs, out of any port. In weft-model these are
//! the deliveries to `Destination::Cpu` and `Switch::inject`; the register
//! interface is `weft_regs::csr::mailbox` and `weft_regs::csr::inject`.
//!
//! Both move a TLP as its header DWs and at most one payload DW: the
//! TLPs the firmware reads and writes (configuration requests and their
//! completions, MSI writes, messages) carry no more.

use rust_hdl::prelude::*;
use weft_regs::capacity;
use weft_regs::csr::{inject, mailbox};

use crate::csr::{CsrTarget, WORD_BITS};
use crate::header_decode::HeaderDecoder;
use crate::tables::front::TableCsr;

/// Bits of a port index on the management path (`SOURCE.PORT`, `SEND.PORT`).
pub const PORT_BITS: usize = 8;

/// Bits of an entry index or count in the mailbox.
const INDEX_BITS: usize = 8;

fn word(register: &weft_regs::Register) -> Constant<Bits<WORD_BITS>> {
    Constant::new(register.word().to_bits())
}

/// The mailbox: a FIFO of `N` TLPs for the management CPU, read over the CSR bus.
///
/// A TLP is pushed with `push` while `ready`; a push while full is not
/// taken, so the ingress holds the TLP back. The CPU reads the head's
/// registers and writes `POP.DONE`; the next entry is readable from the
/// second cycle after the write (the CSR read answers a cycle later).
#[derive(LogicBlock)]
pub struct Mailbox<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The CPU's reads and pops (`weft_regs::csr::mailbox`).
    pub csr: CsrTarget,
    /// A TLP for the CPU is offered.
    pub push: Signal<In, Bit>,
    /// The port it arrived on.
    pub push_port: Signal<In, Bits<PORT_BITS>>,
    /// It carries more than one payload DW; only the first is kept.
    pub push_truncated: Signal<In, Bit>,
    /// Its first payload DW (zero without payload).
    pub push_data: Signal<In, Bits<32>>,
    /// Its header DW0.
    pub push_dw0: Signal<In, Bits<32>>,
    /// Its header DW1.
    pub push_dw1: Signal<In, Bits<32>>,
    /// Its header DW2.
    pub push_dw2: Signal<In, Bits<32>>,
    /// Its header DW3.
    pub push_dw3: Signal<In, Bits<32>>,
    /// The mailbox takes the TLP offered at this clock edge: it is not full.
    pub ready: Signal<Out, Bit>,
    /// A TLP waits for the CPU (an interrupt line).
    pub waiting: Signal<Out, Bit>,
    front: TableCsr,
    sources: [DFF<Bits<9>>; N],
    data: [DFF<Bits<32>>; N],
    dw0: [DFF<Bits<32>>; N],
    dw1: [DFF<Bits<32>>; N],
    dw2: [DFF<Bits<32>>; N],
    dw3: [DFF<Bits<32>>; N],
    head: DFF<Bits<INDEX_BITS>>,
    tail: DFF<Bits<INDEX_BITS>>,
    count: DFF<Bits<INDEX_BITS>>,
    capacity: Constant<Bits<INDEX_BITS>>,
    last: Constant<Bits<INDEX_BITS>>,
    word_status: Constant<Bits<WORD_BITS>>,
    word_pop: Constant<Bits<WORD_BITS>>,
    word_source: Constant<Bits<WORD_BITS>>,
    word_data: Constant<Bits<WORD_BITS>>,
    word_dw0: Constant<Bits<WORD_BITS>>,
    word_dw1: Constant<Bits<WORD_BITS>>,
    word_dw2: Constant<Bits<WORD_BITS>>,
    word_dw3: Constant<Bits<WORD_BITS>>,
    pushing: Signal<Local, Bit>,
    popping: Signal<Local, Bit>,
    head_source: Signal<Local, Bits<9>>,
    head_data: Signal<Local, Bits<32>>,
    head_dw0: Signal<Local, Bits<32>>,
    head_dw1: Signal<Local, Bits<32>>,
    head_dw2: Signal<Local, Bits<32>>,
    head_dw3: Signal<Local, Bits<32>>,
}

impl<const N: usize> Default for Mailbox<N> {
    /// # Panics
    ///
    /// If `N` is zero or does not fit the COUNT field.
    fn default() -> Self {
        assert!(N >= 1 && N < 1 << INDEX_BITS, "mailbox depth out of range");
        Mailbox {
            clock: Default::default(),
            csr: Default::default(),
            push: Default::default(),
            push_port: Default::default(),
            push_truncated: Default::default(),
            push_data: Default::default(),
            push_dw0: Default::default(),
            push_dw1: Default::default(),
            push_dw2: Default::default(),
            push_dw3: Default::default(),
            ready: Default::default(),
            waiting: Default::default(),
            front: TableCsr::new(&mailbox::LAYOUT, 0, 1),
            sources: std::array::from_fn(|_| Default::default()),
            data: std::array::from_fn(|_| Default::default()),
            dw0: std::array::from_fn(|_| Default::default()),
            dw1: std::array::from_fn(|_| Default::default()),
            dw2: std::array::from_fn(|_| Default::default()),
            dw3: std::array::from_fn(|_| Default::default()),
            head: Default::default(),
            tail: Default::default(),
            count: Default::default(),
            capacity: Constant::new(N.to_bits()),
            last: Constant::new((N - 1).to_bits()),
            word_status: word(&mailbox::STATUS),
            word_pop: word(&mailbox::POP),
            word_source: word(&mailbox::SOURCE),
            word_data: word(&mailbox::DATA),
            word_dw0: word(&mailbox::HEADER[0]),
            word_dw1: word(&mailbox::HEADER[1]),
            word_dw2: word(&mailbox::HEADER[2]),
            word_dw3: word(&mailbox::HEADER[3]),
            pushing: Default::default(),
            popping: Default::default(),
            head_source: Default::default(),
            head_data: Default::default(),
            head_dw0: Default::default(),
            head_dw1: Default::default(),
            head_dw2: Default::default(),
            head_dw3: Default::default(),
        }
    }
}

impl<const N: usize> Logic for Mailbox<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, head, tail, count);
        self.front.clock.next = self.clock.val();
        CsrTarget::link(&mut self.csr, &mut self.front.csr);

        self.ready.next = self.count.q.val() < self.capacity.val();
        self.waiting.next = self.count.q.val().any();
        self.pushing.next = self.push.val() && (self.count.q.val() < self.capacity.val());
        // POP.DONE is bit 0.
        self.popping.next = self.front.writing.val()
            && (self.front.word.val() == self.word_pop.val())
            && self.front.data.val().get_bit(0)
            && self.count.q.val().any();

        self.head_source.next = bits::<9>(0);
        self.head_data.next = bits::<32>(0);
        self.head_dw0.next = bits::<32>(0);
        self.head_dw1.next = bits::<32>(0);
        self.head_dw2.next = bits::<32>(0);
        self.head_dw3.next = bits::<32>(0);
        for i in 0..N {
            self.sources[i].clock.next = self.clock.val();
            self.data[i].clock.next = self.clock.val();
            self.dw0[i].clock.next = self.clock.val();
            self.dw1[i].clock.next = self.clock.val();
            self.dw2[i].clock.next = self.clock.val();
            self.dw3[i].clock.next = self.clock.val();
            self.sources[i].d.next = self.sources[i].q.val();
            self.data[i].d.next = self.data[i].q.val();
            self.dw0[i].d.next = self.dw0[i].q.val();
            self.dw1[i].d.next = self.dw1[i].q.val();
            self.dw2[i].d.next = self.dw2[i].q.val();
            self.dw3[i].d.next = self.dw3[i].q.val();
            if self.pushing.val() && (self.tail.q.val().index() == i) {
                // SOURCE: PORT in 7:0, TRUNCATED in 8.
                self.sources[i].d.next = (bit_cast::<9, 1>(self.push_truncated.val().into()) << 8)
                    | bit_cast::<9, PORT_BITS>(self.push_port.val());
                self.data[i].d.next = self.push_data.val();
                self.dw0[i].d.next = self.push_dw0.val();
                self.dw1[i].d.next = self.push_dw1.val();
                self.dw2[i].d.next = self.push_dw2.val();
                self.dw3[i].d.next = self.push_dw3.val();
            }
            if self.head.q.val().index() == i {
                self.head_source.next = self.sources[i].q.val();
                self.head_data.next = self.data[i].q.val();
                self.head_dw0.next = self.dw0[i].q.val();
                self.head_dw1.next = self.dw1[i].q.val();
                self.head_dw2.next = self.dw2[i].q.val();
                self.head_dw3.next = self.dw3[i].q.val();
            }
        }
        if self.pushing.val() {
            self.tail.d.next = self.tail.q.val() + 1;
            if self.tail.q.val() == self.last.val() {
                self.tail.d.next = bits::<INDEX_BITS>(0);
            }
        }
        if self.popping.val() {
            self.head.d.next = self.head.q.val() + 1;
            if self.head.q.val() == self.last.val() {
                self.head.d.next = bits::<INDEX_BITS>(0);
            }
        }
        if self.pushing.val() && !self.popping.val() {
            self.count.d.next = self.count.q.val() + 1;
        }
        if self.popping.val() && !self.pushing.val() {
            self.count.d.next = self.count.q.val() - 1;
        }

        // STATUS: NOT_EMPTY in 0, COUNT in 15:8.
        self.front.read_value.next = bits::<32>(0);
        if self.front.word.val() == self.word_status.val() {
            self.front.read_value.next = (bit_cast::<32, INDEX_BITS>(self.count.q.val()) << 8)
                | bit_cast::<32, 1>(self.count.q.val().any().into());
        }
        if self.front.word.val() == self.word_source.val() {
            self.front.read_value.next = bit_cast::<32, 9>(self.head_source.val());
        }
        if self.front.word.val() == self.word_data.val() {
            self.front.read_value.next = self.head_data.val();
        }
        if self.front.word.val() == self.word_dw0.val() {
            self.front.read_value.next = self.head_dw0.val();
        }
        if self.front.word.val() == self.word_dw1.val() {
            self.front.read_value.next = self.head_dw1.val();
        }
        if self.front.word.val() == self.word_dw2.val() {
            self.front.read_value.next = self.head_dw2.val();
        }
        if self.front.word.val() == self.word_dw3.val() {
            self.front.read_value.next = self.head_dw3.val();
        }
    }
}

/// The reference mailbox's depth.
pub type ReferenceMailbox = Mailbox<{ capacity::MAILBOX_TLPS }>;

/// TLP injection: the CPU writes a TLP over the CSR bus and sends it out of a port's egress.
///
/// `SEND` is refused (STATUS.REFUSED) while the last TLP still waits for
/// its egress, for a port that does not exist, and for a DW0 of no TLP
/// type (PCIe Base 6.0 §2.3.1); weft-model's `Switch::inject` refuses the
/// last two as `NoSuchPort` and `Malformed`. Header and data writes are
/// ignored while BUSY, so the TLP leaving does not change under the egress.
#[derive(LogicBlock)]
pub struct Inject {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The CPU's writes and status reads (`weft_regs::csr::inject`).
    pub csr: CsrTarget,
    /// A TLP waits for the egress of `port`.
    pub valid: Signal<Out, Bit>,
    /// The egress takes it at this clock edge.
    pub ready: Signal<In, Bit>,
    /// The egress port.
    pub port: Signal<Out, Bits<PORT_BITS>>,
    /// Header DW0.
    pub dw0: Signal<Out, Bits<32>>,
    /// Header DW1.
    pub dw1: Signal<Out, Bits<32>>,
    /// Header DW2.
    pub dw2: Signal<Out, Bits<32>>,
    /// Header DW3.
    pub dw3: Signal<Out, Bits<32>>,
    /// The payload DW, if Fmt says the TLP has data.
    pub data: Signal<Out, Bits<32>>,
    front: TableCsr,
    decoder: HeaderDecoder,
    header0: DFF<Bits<32>>,
    header1: DFF<Bits<32>>,
    header2: DFF<Bits<32>>,
    header3: DFF<Bits<32>>,
    payload: DFF<Bits<32>>,
    port_reg: DFF<Bits<PORT_BITS>>,
    busy: DFF<Bit>,
    refused: DFF<Bit>,
    ports: Constant<Bits<PORT_BITS>>,
    word_status: Constant<Bits<WORD_BITS>>,
    word_send: Constant<Bits<WORD_BITS>>,
    word_data: Constant<Bits<WORD_BITS>>,
    word_dw0: Constant<Bits<WORD_BITS>>,
    word_dw1: Constant<Bits<WORD_BITS>>,
    word_dw2: Constant<Bits<WORD_BITS>>,
    word_dw3: Constant<Bits<WORD_BITS>>,
    writing: Signal<Local, Bit>,
}

impl Default for Inject {
    fn default() -> Self {
        Inject {
            clock: Default::default(),
            csr: Default::default(),
            valid: Default::default(),
            ready: Default::default(),
            port: Default::default(),
            dw0: Default::default(),
            dw1: Default::default(),
            dw2: Default::default(),
            dw3: Default::default(),
            data: Default::default(),
            front: TableCsr::new(&inject::LAYOUT, 0, 1),
            decoder: Default::default(),
            header0: Default::default(),
            header1: Default::default(),
            header2: Default::default(),
            header3: Default::default(),
            payload: Default::default(),
            port_reg: Default::default(),
            busy: Default::default(),
            refused: Default::default(),
            ports: Constant::new(capacity::PORTS.to_bits()),
            word_status: word(&inject::STATUS),
            word_send: word(&inject::SEND),
            word_data: word(&inject::DATA),
            word_dw0: word(&inject::HEADER[0]),
            word_dw1: word(&inject::HEADER[1]),
            word_dw2: word(&inject::HEADER[2]),
            word_dw3: word(&inject::HEADER[3]),
            writing: Default::default(),
        }
    }
}

impl Logic for Inject {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, header0, header1, header2, header3, payload, port_reg, busy, refused
        );
        self.front.clock.next = self.clock.val();
        CsrTarget::link(&mut self.csr, &mut self.front.csr);
        self.decoder.dw0.next = self.header0.q.val();
        self.decoder.dw1.next = self.header1.q.val();
        self.decoder.dw2.next = self.header2.q.val();
        self.decoder.dw3.next = self.header3.q.val();

        self.valid.next = self.busy.q.val();
        self.port.next = self.port_reg.q.val();
        self.dw0.next = self.header0.q.val();
        self.dw1.next = self.header1.q.val();
        self.dw2.next = self.header2.q.val();
        self.dw3.next = self.header3.q.val();
        self.data.next = self.payload.q.val();
        if self.busy.q.val() && self.ready.val() {
            self.busy.d.next = false;
        }

        self.writing.next = self.front.writing.val() && !self.busy.q.val();
        if self.writing.val() && (self.front.word.val() == self.word_dw0.val()) {
            self.header0.d.next = self.front.data.val();
        }
        if self.writing.val() && (self.front.word.val() == self.word_dw1.val()) {
            self.header1.d.next = self.front.data.val();
        }
        if self.writing.val() && (self.front.word.val() == self.word_dw2.val()) {
            self.header2.d.next = self.front.data.val();
        }
        if self.writing.val() && (self.front.word.val() == self.word_dw3.val()) {
            self.header3.d.next = self.front.data.val();
        }
        if self.writing.val() && (self.front.word.val() == self.word_data.val()) {
            self.payload.d.next = self.front.data.val();
        }
        if self.front.writing.val() && (self.front.word.val() == self.word_send.val()) {
            self.refused.d.next = true;
            if !self.busy.q.val()
                && (self.front.data.val().get_bits::<PORT_BITS>(0) < self.ports.val())
                && !self.decoder.reserved.val()
                && !self.decoder.prefix.val()
            {
                self.refused.d.next = false;
                self.busy.d.next = true;
                self.port_reg.d.next = self.front.data.val().get_bits::<PORT_BITS>(0);
            }
        }

        // STATUS: BUSY in 0, REFUSED in 1.
        self.front.read_value.next = bits::<32>(0);
        if self.front.word.val() == self.word_status.val() {
            self.front.read_value.next = (bit_cast::<32, 1>(self.refused.q.val().into()) << 1)
                | bit_cast::<32, 1>(self.busy.q.val().into());
        }
        if self.front.word.val() == self.word_data.val() {
            self.front.read_value.next = self.payload.q.val();
        }
        if self.front.word.val() == self.word_dw0.val() {
            self.front.read_value.next = self.header0.q.val();
        }
        if self.front.word.val() == self.word_dw1.val() {
            self.front.read_value.next = self.header1.q.val();
        }
        if self.front.word.val() == self.word_dw2.val() {
            self.front.read_value.next = self.header2.q.val();
        }
        if self.front.word.val() == self.word_dw3.val() {
            self.front.read_value.next = self.header3.q.val();
        }
    }
}
