//! The management CPU's path into the data plane: its mailbox and its TLP injection.
//!
//! DESIGN.md, "Configuration requests": configuration requests from hosts
//! go to the firmware through a mailbox queue, and the firmware answers
//! them, and sends its own TLPs, out of any port. In weft-model these are
//! the deliveries to `Destination::Cpu` and `Switch::inject`, and their
//! register interface is weft-model's `CsrWindow` over
//! `weft_regs::csr::{mailbox, mailbox_data, inject, inject_data}`.
//!
//! Both move whole TLPs in wire order (PCIe Base 6.0 §2.2.1), one DW per
//! clock cycle, up to `mailbox::TLP_DWORDS` and `inject::TLP_DWORDS` DWs,
//! each held in a block RAM.

use rust_hdl::prelude::*;
use weft_regs::capacity;
use weft_regs::csr::{inject, inject_data, mailbox, mailbox_data};

use crate::csr::{CsrDecoder, CsrTarget, WORD_BITS};
use crate::header_decode::{HeaderDecoder, WIRE_BYTES_BITS};

/// Bits of a port index on the management path (`STATUS.PORT`, `SEND.PORT`).
pub const PORT_BITS: usize = 8;

/// Bits of a DW index within one held TLP.
const DW_BITS: usize = 6;
const _: () = assert!(1 << DW_BITS == mailbox::TLP_DWORDS);
const _: () = assert!(1 << DW_BITS == inject::TLP_DWORDS);
const _: () = assert!(mailbox_data::LAYOUT.entries == mailbox::TLP_DWORDS);
const _: () = assert!(inject_data::LAYOUT.entries == inject::TLP_DWORDS);

/// Bits of a slot index in the mailbox.
const SLOT_BITS: usize = capacity::MAILBOX_TLPS.trailing_zeros() as usize;
const _: () = assert!(capacity::MAILBOX_TLPS == 1 << SLOT_BITS);

/// Bits of a mailbox RAM address: slot, then DW.
const MAILBOX_ADDRESS_BITS: usize = SLOT_BITS + DW_BITS;

/// Bits of a length or count on the management path (`DWORDS` fields, queue count).
const COUNT_BITS: usize = 8;

fn word(register: &weft_regs::Register) -> Constant<Bits<WORD_BITS>> {
    Constant::new(register.word().to_bits())
}

fn lsb(field: &weft_regs::Field) -> Constant<Bits<32>> {
    Constant::new(field.lsb.to_bits())
}

/// The mailbox: a queue of `capacity::MAILBOX_TLPS` whole TLPs for the management CPU.
///
/// A TLP arrives one DW per cycle on `push`, `push_first` marking DW 0
/// (with its source port) and `push_last` the last; the mailbox takes
/// every DW offered (it never holds ingress back). A TLP that starts
/// while the queue is full, or runs past `mailbox::TLP_DWORDS`, is lost
/// and STATUS.LOST set, as weft-model's `CsrWindow::queue_for_cpu` does;
/// so is one its feeder could not deliver (`lose`).
/// The CPU reads STATUS and `mailbox_data` of the head and writes
/// `POP.DONE`; the next TLP is readable from the second cycle after the write.
/// `irq` is the register map's level interrupt: high while
/// `INT_ENABLE.PENDING` is set and a TLP waits, low from the cycle after
/// the write that empties the queue or clears the enable.
#[derive(LogicBlock)]
pub struct Mailbox {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The CPU's reads, pops and LOST clears (`mailbox` and `mailbox_data`).
    pub csr: CsrTarget,
    /// A DW of a TLP for the CPU is offered at this clock edge.
    pub push: Signal<In, Bit>,
    /// It is the TLP's DW 0.
    pub push_first: Signal<In, Bit>,
    /// It is the TLP's last DW.
    pub push_last: Signal<In, Bit>,
    /// With `push_last`: the TLP is void (its beats belied its Length):
    /// dropped, not queued, and not lost either (the ingress counts it Malformed).
    pub push_void: Signal<In, Bit>,
    /// The DW, in wire order (byte 0 in bits 31:24).
    pub push_dw: Signal<In, Bits<32>>,
    /// The port the TLP arrived on (sampled with `push_first`).
    pub push_port: Signal<In, Bits<PORT_BITS>>,
    /// A TLP for the CPU was lost before it reached the mailbox: STATUS.LOST is set.
    pub lose: Signal<In, Bit>,
    /// The mailbox's interrupt (`INT_PENDING.RAISED`): enabled, and a TLP waits.
    pub irq: Signal<Out, Bit>,
    status_decoder: CsrDecoder,
    data_decoder: CsrDecoder,
    store: RAM<Bits<32>, MAILBOX_ADDRESS_BITS>,
    lengths: [DFF<Bits<COUNT_BITS>>; capacity::MAILBOX_TLPS],
    ports: [DFF<Bits<PORT_BITS>>; capacity::MAILBOX_TLPS],
    head: DFF<Bits<SLOT_BITS>>,
    tail: DFF<Bits<SLOT_BITS>>,
    count: DFF<Bits<COUNT_BITS>>,
    filling: DFF<Bit>,
    fill_length: DFF<Bits<COUNT_BITS>>,
    fill_port: DFF<Bits<PORT_BITS>>,
    too_long: DFF<Bit>,
    lost: DFF<Bit>,
    int_enable: DFF<Bit>,
    status_answer: DFF<Bits<32>>,
    status_valid: DFF<Bit>,
    data_valid: DFF<Bit>,
    data_past: DFF<Bit>,
    depth: Constant<Bits<COUNT_BITS>>,
    dw_shift: Constant<Bits<MAILBOX_ADDRESS_BITS>>,
    tlp_dwords: Constant<Bits<COUNT_BITS>>,
    word_status: Constant<Bits<WORD_BITS>>,
    word_pop: Constant<Bits<WORD_BITS>>,
    word_int_enable: Constant<Bits<WORD_BITS>>,
    word_int_pending: Constant<Bits<WORD_BITS>>,
    on_pending_lsb: Constant<Bits<32>>,
    raised_lsb: Constant<Bits<32>>,
    pending_lsb: Constant<Bits<32>>,
    lost_lsb: Constant<Bits<32>>,
    dwords_lsb: Constant<Bits<32>>,
    port_lsb: Constant<Bits<32>>,
    done_bit: Constant<Bits<8>>,
    index: Signal<Local, Bits<COUNT_BITS>>,
    fits: Signal<Local, Bit>,
    room: Signal<Local, Bit>,
    overflowed: Signal<Local, Bit>,
    committing: Signal<Local, Bit>,
    popping: Signal<Local, Bit>,
    head_length: Signal<Local, Bits<COUNT_BITS>>,
    head_port: Signal<Local, Bits<PORT_BITS>>,
    status_value: Signal<Local, Bits<32>>,
}

impl Default for Mailbox {
    fn default() -> Self {
        Mailbox {
            clock: Default::default(),
            csr: Default::default(),
            push: Default::default(),
            push_first: Default::default(),
            push_last: Default::default(),
            push_void: Default::default(),
            push_dw: Default::default(),
            push_port: Default::default(),
            lose: Default::default(),
            irq: Default::default(),
            status_decoder: CsrDecoder::new(&mailbox::LAYOUT, 0),
            data_decoder: CsrDecoder::new(&mailbox_data::LAYOUT, 0),
            store: RAM::from(std::iter::repeat_n(
                Bits::default(),
                1 << MAILBOX_ADDRESS_BITS,
            )),
            lengths: std::array::from_fn(|_| Default::default()),
            ports: std::array::from_fn(|_| Default::default()),
            head: Default::default(),
            tail: Default::default(),
            count: Default::default(),
            filling: Default::default(),
            fill_length: Default::default(),
            fill_port: Default::default(),
            too_long: Default::default(),
            lost: Default::default(),
            int_enable: Default::default(),
            status_answer: Default::default(),
            status_valid: Default::default(),
            data_valid: Default::default(),
            data_past: Default::default(),
            depth: Constant::new(capacity::MAILBOX_TLPS.to_bits()),
            dw_shift: Constant::new(DW_BITS.to_bits()),
            tlp_dwords: Constant::new(mailbox::TLP_DWORDS.to_bits()),
            word_status: word(&mailbox::STATUS),
            word_pop: word(&mailbox::POP),
            word_int_enable: word(&mailbox::INT_ENABLE),
            word_int_pending: word(&mailbox::INT_PENDING),
            on_pending_lsb: lsb(&mailbox::ON_PENDING),
            raised_lsb: lsb(&mailbox::RAISED),
            pending_lsb: lsb(&mailbox::PENDING),
            lost_lsb: lsb(&mailbox::LOST),
            dwords_lsb: lsb(&mailbox::DWORDS),
            port_lsb: lsb(&mailbox::PORT),
            done_bit: Constant::new(mailbox::DONE.lsb.to_bits()),
            index: Default::default(),
            fits: Default::default(),
            room: Default::default(),
            overflowed: Default::default(),
            committing: Default::default(),
            popping: Default::default(),
            head_length: Default::default(),
            head_port: Default::default(),
            status_value: Default::default(),
        }
    }
}

impl Logic for Mailbox {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            head,
            tail,
            count,
            filling,
            fill_length,
            fill_port,
            too_long,
            lost,
            int_enable,
            status_answer,
            status_valid,
            data_valid,
            data_past
        );
        self.status_decoder.address.next = self.csr.address.val();
        self.data_decoder.address.next = self.csr.address.val();
        self.store.read_clock.next = self.clock.val();
        self.store.write_clock.next = self.clock.val();

        // The TLP arriving: DW `index` goes to the tail slot while there is
        // room (decided at DW 0) and it fits.
        self.index.next = self.fill_length.q.val();
        self.room.next = self.filling.q.val();
        self.overflowed.next = self.too_long.q.val();
        if self.push_first.val() {
            self.index.next = bits::<COUNT_BITS>(0);
            self.room.next = self.count.q.val() < self.depth.val();
            self.overflowed.next = false;
        }
        self.fits.next = self.index.val() < self.tlp_dwords.val();
        self.store.write_address.next =
            (bit_cast::<MAILBOX_ADDRESS_BITS, SLOT_BITS>(self.tail.q.val()) << self.dw_shift.val())
                | bit_cast::<MAILBOX_ADDRESS_BITS, DW_BITS>(
                    self.index.val().get_bits::<DW_BITS>(0),
                );
        self.store.write_data.next = self.push_dw.val();
        self.store.write_enable.next = self.push.val() && self.room.val() && self.fits.val();
        self.committing.next = self.push.val()
            && self.push_last.val()
            && !self.push_void.val()
            && self.room.val()
            && self.fits.val()
            && !self.overflowed.val();
        if self.push.val() {
            self.filling.d.next = self.room.val() && !self.push_last.val();
            self.too_long.d.next = self.overflowed.val() || !self.fits.val();
            self.fill_length.d.next = self.index.val();
            if self.fits.val() {
                self.fill_length.d.next = self.index.val() + 1;
            }
            if self.push_first.val() {
                self.fill_port.d.next = self.push_port.val();
            }
        }

        // POP.DONE and STATUS.LOST (write 1 to clear; a loss in the same cycle wins).
        self.popping.next = self.csr.write.val()
            && self.status_decoder.selected.val()
            && (self.status_decoder.word.val() == self.word_pop.val())
            && self
                .csr
                .write_data
                .val()
                .get_bit(self.done_bit.val().index())
            && self.count.q.val().any();
        if self.csr.write.val()
            && self.status_decoder.selected.val()
            && (self.status_decoder.word.val() == self.word_status.val())
            && self
                .csr
                .write_data
                .val()
                .get_bit(self.lost_lsb.val().index())
        {
            self.lost.d.next = false;
        }
        if (self.push.val()
            && self.push_last.val()
            && !self.push_void.val()
            && !self.committing.val())
            || self.lose.val()
        {
            self.lost.d.next = true;
        }

        self.head_length.next = bits::<COUNT_BITS>(0);
        self.head_port.next = bits::<PORT_BITS>(0);
        for i in 0..capacity::MAILBOX_TLPS {
            self.lengths[i].clock.next = self.clock.val();
            self.ports[i].clock.next = self.clock.val();
            self.lengths[i].d.next = self.lengths[i].q.val();
            self.ports[i].d.next = self.ports[i].q.val();
            if self.committing.val() && (self.tail.q.val().index() == i) {
                self.lengths[i].d.next = self.index.val() + 1;
                self.ports[i].d.next = self.fill_port.q.val();
                if self.push_first.val() {
                    self.ports[i].d.next = self.push_port.val();
                }
            }
            if self.head.q.val().index() == i {
                self.head_length.next = self.lengths[i].q.val();
                self.head_port.next = self.ports[i].q.val();
            }
        }
        if self.committing.val() {
            self.tail.d.next = self.tail.q.val() + 1;
        }
        if self.popping.val() {
            self.head.d.next = self.head.q.val() + 1;
        }
        if self.committing.val() && !self.popping.val() {
            self.count.d.next = self.count.q.val() + 1;
        }
        if self.popping.val() && !self.committing.val() {
            self.count.d.next = self.count.q.val() - 1;
        }
        // INT_ENABLE, and the level interrupt it gates.
        if self.csr.write.val()
            && self.status_decoder.selected.val()
            && (self.status_decoder.word.val() == self.word_int_enable.val())
        {
            self.int_enable.d.next = self
                .csr
                .write_data
                .val()
                .get_bit(self.on_pending_lsb.val().index());
        }
        self.irq.next = self.int_enable.q.val() && self.count.q.val().any();

        // Reads: STATUS describes the head; `mailbox_data` entry N is its DW N, 0 past DWORDS.
        self.status_value.next = bit_cast::<32, 1>(self.lost.q.val().into()) << self.lost_lsb.val();
        if self.count.q.val().any() {
            self.status_value.next = self.status_value.val()
                | (bits::<32>(1) << self.pending_lsb.val())
                | (bit_cast::<32, COUNT_BITS>(self.head_length.val()) << self.dwords_lsb.val())
                | (bit_cast::<32, PORT_BITS>(self.head_port.val()) << self.port_lsb.val());
        }
        self.status_valid.d.next = self.csr.read.val()
            && self.status_decoder.selected.val()
            && ((self.status_decoder.word.val() == self.word_status.val())
                || (self.status_decoder.word.val() == self.word_pop.val())
                || (self.status_decoder.word.val() == self.word_int_enable.val())
                || (self.status_decoder.word.val() == self.word_int_pending.val()));
        self.status_answer.d.next = bits::<32>(0);
        if self.status_decoder.word.val() == self.word_status.val() {
            self.status_answer.d.next = self.status_value.val();
        }
        if self.status_decoder.word.val() == self.word_int_enable.val() {
            self.status_answer.d.next =
                bit_cast::<32, 1>(self.int_enable.q.val().into()) << self.on_pending_lsb.val();
        }
        if self.status_decoder.word.val() == self.word_int_pending.val() {
            self.status_answer.d.next =
                bit_cast::<32, 1>(self.irq.val().into()) << self.raised_lsb.val();
        }
        self.store.read_address.next =
            (bit_cast::<MAILBOX_ADDRESS_BITS, SLOT_BITS>(self.head.q.val()) << self.dw_shift.val())
                | bit_cast::<MAILBOX_ADDRESS_BITS, DW_BITS>(
                    self.data_decoder.entry.val().get_bits::<DW_BITS>(0),
                );
        self.data_valid.d.next = self.csr.read.val() && self.data_decoder.selected.val();
        self.data_past.d.next = bit_cast::<COUNT_BITS, 8>(self.data_decoder.entry.val())
            >= self.head_length.val()
            || !self.count.q.val().any();
        self.csr.read_valid.next = self.status_valid.q.val() || self.data_valid.q.val();
        self.csr.read_data.next = bits::<32>(0);
        if self.status_valid.q.val() {
            self.csr.read_data.next = self.status_answer.q.val();
        }
        if self.data_valid.q.val() && !self.data_past.q.val() {
            self.csr.read_data.next = self.store.read_data.val();
        }
    }
}

/// TLP injection: the CPU fills `inject_data` and sends its first DWORDS DWs out of a port.
///
/// A SEND while a TLP still leaves (STATUS.READY clear) is ignored, and so
/// are `inject_data` writes then, so the TLP leaving does not change under
/// the egress. A SEND is dropped with STATUS.MALFORMED when DWORDS is more
/// than `inject::TLP_DWORDS` or is not the length DW 0 announces (Fmt,
/// Length and TD, PCIe Base 6.0 §2.2.1, §2.2.2, §2.2.3), or DW 0 has no
/// TLP type or is a prefix (Table 2-3); with STATUS.NO_SUCH_PORT for a
/// port the data plane does not have; in the order weft-model's
/// `CsrWindow` checks them. It leaves one DW per cycle on `valid`/`ready`.
/// `irq` is the register map's level interrupt: high while
/// `INT_ENABLE.DROPPED` is set and so is STATUS.MALFORMED or
/// STATUS.NO_SUCH_PORT, low from the cycle after the write that clears them
/// or the enable.
#[derive(LogicBlock)]
pub struct Inject {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The CPU's writes and status reads (`inject` and `inject_data`).
    pub csr: CsrTarget,
    /// A DW of the TLP waits for the egress of `port`.
    pub valid: Signal<Out, Bit>,
    /// The egress takes it at this clock edge.
    pub ready: Signal<In, Bit>,
    /// The egress port.
    pub port: Signal<Out, Bits<PORT_BITS>>,
    /// The DW, in wire order.
    pub dw: Signal<Out, Bits<32>>,
    /// It is the TLP's last DW.
    pub last: Signal<Out, Bit>,
    /// The injector's interrupt (`INT_PENDING.RAISED`): enabled, and a drop is flagged.
    pub irq: Signal<Out, Bit>,
    status_decoder: CsrDecoder,
    data_decoder: CsrDecoder,
    decoder: HeaderDecoder,
    store: RAM<Bits<32>, DW_BITS>,
    first_dw: DFF<Bits<32>>,
    busy: DFF<Bit>,
    position: DFF<Bits<COUNT_BITS>>,
    final_position: DFF<Bits<COUNT_BITS>>,
    port_reg: DFF<Bits<PORT_BITS>>,
    malformed: DFF<Bit>,
    no_such_port: DFF<Bit>,
    int_enable: DFF<Bit>,
    read_answer: DFF<Bits<32>>,
    read_valid: DFF<Bit>,
    ports: Constant<Bits<PORT_BITS>>,
    tlp_dwords: Constant<Bits<COUNT_BITS>>,
    word_status: Constant<Bits<WORD_BITS>>,
    word_send: Constant<Bits<WORD_BITS>>,
    word_int_enable: Constant<Bits<WORD_BITS>>,
    word_int_pending: Constant<Bits<WORD_BITS>>,
    on_dropped_lsb: Constant<Bits<32>>,
    raised_lsb: Constant<Bits<32>>,
    ready_lsb: Constant<Bits<32>>,
    malformed_lsb: Constant<Bits<32>>,
    no_such_port_lsb: Constant<Bits<32>>,
    port_lsb: Constant<Bits<32>>,
    dwords_lsb: Constant<Bits<32>>,
    fetch: Signal<Local, Bits<COUNT_BITS>>,
    sending: Signal<Local, Bit>,
    send_port: Signal<Local, Bits<PORT_BITS>>,
    send_dwords: Signal<Local, Bits<COUNT_BITS>>,
    announced: Signal<Local, Bits<16>>,
}

impl Default for Inject {
    /// The injector of a data plane with every port the register map has.
    fn default() -> Self {
        Inject::new(capacity::PORTS)
    }
}

impl Inject {
    /// The injector of a data plane of `ports` ports: SEND.PORT past them is NO_SUCH_PORT.
    ///
    /// # Panics
    ///
    /// If `ports` is more than the register map has.
    pub fn new(ports: usize) -> Self {
        assert!(
            ports <= capacity::PORTS,
            "the register map holds {} ports",
            capacity::PORTS
        );
        Inject {
            clock: Default::default(),
            csr: Default::default(),
            valid: Default::default(),
            ready: Default::default(),
            port: Default::default(),
            dw: Default::default(),
            last: Default::default(),
            irq: Default::default(),
            status_decoder: CsrDecoder::new(&inject::LAYOUT, 0),
            data_decoder: CsrDecoder::new(&inject_data::LAYOUT, 0),
            decoder: Default::default(),
            store: RAM::from(std::iter::repeat_n(Bits::default(), 1 << DW_BITS)),
            first_dw: Default::default(),
            busy: Default::default(),
            position: Default::default(),
            final_position: Default::default(),
            port_reg: Default::default(),
            malformed: Default::default(),
            no_such_port: Default::default(),
            int_enable: Default::default(),
            read_answer: Default::default(),
            read_valid: Default::default(),
            ports: Constant::new(ports.to_bits()),
            tlp_dwords: Constant::new(inject::TLP_DWORDS.to_bits()),
            word_status: word(&inject::STATUS),
            word_send: word(&inject::SEND),
            word_int_enable: word(&inject::INT_ENABLE),
            word_int_pending: word(&inject::INT_PENDING),
            on_dropped_lsb: lsb(&inject::ON_DROPPED),
            raised_lsb: lsb(&inject::RAISED),
            ready_lsb: lsb(&inject::READY),
            malformed_lsb: lsb(&inject::MALFORMED),
            no_such_port_lsb: lsb(&inject::NO_SUCH_PORT),
            port_lsb: lsb(&inject::PORT),
            dwords_lsb: lsb(&inject::DWORDS),
            fetch: Default::default(),
            sending: Default::default(),
            send_port: Default::default(),
            send_dwords: Default::default(),
            announced: Default::default(),
        }
    }
}

impl Logic for Inject {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            first_dw,
            busy,
            position,
            final_position,
            port_reg,
            malformed,
            no_such_port,
            int_enable,
            read_answer,
            read_valid
        );
        self.status_decoder.address.next = self.csr.address.val();
        self.data_decoder.address.next = self.csr.address.val();
        self.store.read_clock.next = self.clock.val();
        self.store.write_clock.next = self.clock.val();

        // `inject_data` writes, while no TLP leaves. DW 0 is kept aside for SEND's checks.
        self.store.write_address.next = self.data_decoder.entry.val().get_bits::<DW_BITS>(0);
        self.store.write_data.next = self.csr.write_data.val();
        self.store.write_enable.next =
            self.csr.write.val() && self.data_decoder.selected.val() && !self.busy.q.val();
        if self.csr.write.val()
            && self.data_decoder.selected.val()
            && !self.busy.q.val()
            && !self.data_decoder.entry.val().any()
        {
            self.first_dw.d.next = self.csr.write_data.val();
        }

        // The length DW 0 announces: header, payload (Length 0 is 1024 DWs),
        // digest, as the decoder counts the wire bytes.
        self.decoder.dw0.next = self.first_dw.q.val();
        self.decoder.dw1.next = bits::<32>(0);
        self.decoder.dw2.next = bits::<32>(0);
        self.decoder.dw3.next = bits::<32>(0);
        self.announced.next = bit_cast::<16, WIRE_BYTES_BITS>(self.decoder.wire_bytes.val()) >> 2;

        // SEND.
        self.send_port.next = self
            .csr
            .write_data
            .val()
            .get_bits::<PORT_BITS>(self.port_lsb.val().index());
        self.send_dwords.next = self
            .csr
            .write_data
            .val()
            .get_bits::<COUNT_BITS>(self.dwords_lsb.val().index());
        self.sending.next = false;
        if self.csr.write.val()
            && self.status_decoder.selected.val()
            && (self.status_decoder.word.val() == self.word_send.val())
            && !self.busy.q.val()
        {
            if self.send_dwords.val() > self.tlp_dwords.val() {
                self.malformed.d.next = true;
            } else if self.send_port.val() >= self.ports.val() {
                self.no_such_port.d.next = true;
            } else if self.decoder.reserved.val()
                || self.decoder.prefix.val()
                || (bit_cast::<16, COUNT_BITS>(self.send_dwords.val()) != self.announced.val())
            {
                self.malformed.d.next = true;
            } else {
                self.sending.next = true;
            }
        }
        // STATUS: write 1 to clear MALFORMED and NO_SUCH_PORT.
        if self.csr.write.val()
            && self.status_decoder.selected.val()
            && (self.status_decoder.word.val() == self.word_status.val())
        {
            if self
                .csr
                .write_data
                .val()
                .get_bit(self.malformed_lsb.val().index())
            {
                self.malformed.d.next = false;
            }
            if self
                .csr
                .write_data
                .val()
                .get_bit(self.no_such_port_lsb.val().index())
            {
                self.no_such_port.d.next = false;
            }
        }

        // INT_ENABLE, and the level interrupt it gates.
        if self.csr.write.val()
            && self.status_decoder.selected.val()
            && (self.status_decoder.word.val() == self.word_int_enable.val())
        {
            self.int_enable.d.next = self
                .csr
                .write_data
                .val()
                .get_bit(self.on_dropped_lsb.val().index());
        }
        self.irq.next =
            self.int_enable.q.val() && (self.malformed.q.val() || self.no_such_port.q.val());

        // The TLP leaving: DW `position` is on `dw`; the RAM reads the next one as it goes.
        self.valid.next = self.busy.q.val();
        self.port.next = self.port_reg.q.val();
        self.dw.next = self.store.read_data.val();
        self.last.next = self.position.q.val() == self.final_position.q.val();
        self.fetch.next = self.position.q.val();
        if self.busy.q.val() && self.ready.val() {
            if self.last.val() {
                self.busy.d.next = false;
            } else {
                self.fetch.next = self.position.q.val() + 1;
            }
        }
        if self.sending.val() {
            self.busy.d.next = true;
            self.fetch.next = bits::<COUNT_BITS>(0);
            self.final_position.d.next = self.send_dwords.val() - 1;
            self.port_reg.d.next = self.send_port.val();
        }
        self.position.d.next = self.fetch.val();
        self.store.read_address.next = self.fetch.val().get_bits::<DW_BITS>(0);

        // Reads: STATUS, and 0 for the write-only SEND and `inject_data`.
        self.read_valid.d.next = self.csr.read.val()
            && (self.data_decoder.selected.val()
                || (self.status_decoder.selected.val()
                    && ((self.status_decoder.word.val() == self.word_status.val())
                        || (self.status_decoder.word.val() == self.word_send.val())
                        || (self.status_decoder.word.val() == self.word_int_enable.val())
                        || (self.status_decoder.word.val() == self.word_int_pending.val()))));
        self.read_answer.d.next = bits::<32>(0);
        if self.status_decoder.selected.val()
            && (self.status_decoder.word.val() == self.word_status.val())
        {
            // READY is BUSY inverted by XOR, not `!`: Verilog widens `~busy`
            // to 32 bits before inverting it, which would set every bit.
            self.read_answer.d.next = ((bit_cast::<32, 1>(self.busy.q.val().into())
                ^ bits::<32>(1))
                << self.ready_lsb.val())
                | (bit_cast::<32, 1>(self.malformed.q.val().into()) << self.malformed_lsb.val())
                | (bit_cast::<32, 1>(self.no_such_port.q.val().into())
                    << self.no_such_port_lsb.val());
        }
        if self.status_decoder.selected.val()
            && (self.status_decoder.word.val() == self.word_int_enable.val())
        {
            self.read_answer.d.next =
                bit_cast::<32, 1>(self.int_enable.q.val().into()) << self.on_dropped_lsb.val();
        }
        if self.status_decoder.selected.val()
            && (self.status_decoder.word.val() == self.word_int_pending.val())
        {
            self.read_answer.d.next =
                bit_cast::<32, 1>(self.irq.val().into()) << self.raised_lsb.val();
        }
        self.csr.read_valid.next = self.read_valid.q.val();
        self.csr.read_data.next = bits::<32>(0);
        if self.read_valid.q.val() {
            self.csr.read_data.next = self.read_answer.q.val();
        }
    }
}
