//! One ingress's TLP buffer: slots in block RAM, written as beats arrive and read out cut-through.

use rust_hdl::prelude::*;

use super::{BEAT_BITS, BUFFER_ADDRESS_BITS, PORT_BITS, SLOT_BITS};
use crate::stream::EMPTY_BITS;

/// Stores each TLP in one slot (payload beats in one RAM, header in
/// another) and streams a slot out on request, one beat per cycle.
///
/// The read side is a two-stage pipeline: the address stage picks the next
/// beat and presents its address to the RAMs; the output stage is the
/// RAMs' registered data. A beat may be read once it has been written,
/// while later beats of its TLP are still arriving (cut-through). The
/// output stage holds its beat while `out_ready` is low by presenting the
/// same address again; the slot is handed back (`freed`) once its last
/// beat has left, so it is never rewritten while being read.
#[derive(LogicBlock)]
pub struct SlotBuffer<const W: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// A beat is written in this cycle.
    pub write: Signal<In, Bit>,
    /// The beat is its TLP's first: it starts slot `write_slot`.
    pub write_sop: Signal<In, Bit>,
    /// The beat is its TLP's last.
    pub write_eop: Signal<In, Bit>,
    /// Empty DWs of a last beat.
    pub write_empty: Signal<In, Bits<EMPTY_BITS>>,
    /// A last beat voids its TLP (`crate::stream`'s `nullify`).
    pub write_nullify: Signal<In, Bit>,
    /// The slot a first beat starts.
    pub write_slot: Signal<In, Bits<SLOT_BITS>>,
    /// Header DW0 of a first beat.
    pub write_dw0: Signal<In, Bits<32>>,
    /// Header DW1 of a first beat.
    pub write_dw1: Signal<In, Bits<32>>,
    /// Header DW2 of a first beat.
    pub write_dw2: Signal<In, Bits<32>>,
    /// Header DW3 of a first beat.
    pub write_dw3: Signal<In, Bits<32>>,
    /// The beat's payload.
    pub write_payload: Signal<In, Bits<W>>,
    /// Begin reading slot `start_slot` for egress `start_egress` (only while `idle`).
    pub start: Signal<In, Bit>,
    /// The slot to read.
    pub start_slot: Signal<In, Bits<SLOT_BITS>>,
    /// The egress port its beats are for.
    pub start_egress: Signal<In, Bits<PORT_BITS>>,
    /// The address stage takes no more beats of its TLP: a new one may start.
    pub idle: Signal<Out, Bit>,
    /// The address stage still has beats to read for egress `busy_egress`.
    pub busy: Signal<Out, Bit>,
    /// The egress of the TLP the address stage reads.
    pub busy_egress: Signal<Out, Bits<PORT_BITS>>,
    /// A beat is offered.
    pub out_valid: Signal<Out, Bit>,
    /// The beat offered is taken.
    pub out_ready: Signal<In, Bit>,
    /// The beat is its TLP's first.
    pub out_sop: Signal<Out, Bit>,
    /// The beat is its TLP's last.
    pub out_eop: Signal<Out, Bit>,
    /// Empty DWs of a last beat.
    pub out_empty: Signal<Out, Bits<EMPTY_BITS>>,
    /// The last beat voids its TLP.
    pub out_nullify: Signal<Out, Bit>,
    /// Header DW0 (meaningful on a first beat).
    pub out_dw0: Signal<Out, Bits<32>>,
    /// Header DW1.
    pub out_dw1: Signal<Out, Bits<32>>,
    /// Header DW2.
    pub out_dw2: Signal<Out, Bits<32>>,
    /// Header DW3.
    pub out_dw3: Signal<Out, Bits<32>>,
    /// Payload.
    pub out_payload: Signal<Out, Bits<W>>,
    /// The egress port the beat is for.
    pub out_egress: Signal<Out, Bits<PORT_BITS>>,
    /// The last beat of slot `freed_slot` left in this cycle: the slot is free.
    pub freed: Signal<Out, Bit>,
    /// The slot freed.
    pub freed_slot: Signal<Out, Bits<SLOT_BITS>>,
    payload: RAM<Bits<W>, BUFFER_ADDRESS_BITS>,
    /// Per beat: nullify in bit 6, eop in bit 5, empty DWs below.
    beat_info: RAM<Bits<7>, BUFFER_ADDRESS_BITS>,
    header0: RAM<Bits<32>, SLOT_BITS>,
    header1: RAM<Bits<32>, SLOT_BITS>,
    header2: RAM<Bits<32>, SLOT_BITS>,
    header3: RAM<Bits<32>, SLOT_BITS>,
    beat_shift: Constant<Bits<8>>,
    // Write side: the slot being filled and how many of its beats are in.
    filling: DFF<Bit>,
    fill_slot: DFF<Bits<SLOT_BITS>>,
    fill_beats: DFF<Bits<{ BEAT_BITS + 1 }>>,
    write_here_slot: Signal<Local, Bits<SLOT_BITS>>,
    write_here_beat: Signal<Local, Bits<BEAT_BITS>>,
    // Address stage.
    reading: DFF<Bit>,
    read_slot: DFF<Bits<SLOT_BITS>>,
    read_beat: DFF<Bits<BEAT_BITS>>,
    read_egress: DFF<Bits<PORT_BITS>>,
    read_any: DFF<Bit>,
    read_address: DFF<Bits<BUFFER_ADDRESS_BITS>>,
    // Output stage (its data is the RAMs' output).
    shown: DFF<Bit>,
    shown_sop: DFF<Bit>,
    shown_slot: DFF<Bits<SLOT_BITS>>,
    shown_egress: DFF<Bits<PORT_BITS>>,
    available: Signal<Local, Bit>,
    finishing: Signal<Local, Bit>,
    advance: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    issue_slot: Signal<Local, Bits<SLOT_BITS>>,
    issue_beat: Signal<Local, Bits<BEAT_BITS>>,
    issue_egress: Signal<Local, Bits<PORT_BITS>>,
    can_issue: Signal<Local, Bit>,
    issue_address: Signal<Local, Bits<BUFFER_ADDRESS_BITS>>,
}

impl<const W: usize> Default for SlotBuffer<W> {
    fn default() -> Self {
        SlotBuffer {
            clock: Default::default(),
            write: Default::default(),
            write_sop: Default::default(),
            write_eop: Default::default(),
            write_empty: Default::default(),
            write_nullify: Default::default(),
            write_slot: Default::default(),
            write_dw0: Default::default(),
            write_dw1: Default::default(),
            write_dw2: Default::default(),
            write_dw3: Default::default(),
            write_payload: Default::default(),
            start: Default::default(),
            start_slot: Default::default(),
            start_egress: Default::default(),
            idle: Default::default(),
            busy: Default::default(),
            busy_egress: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_sop: Default::default(),
            out_eop: Default::default(),
            out_empty: Default::default(),
            out_nullify: Default::default(),
            out_dw0: Default::default(),
            out_dw1: Default::default(),
            out_dw2: Default::default(),
            out_dw3: Default::default(),
            out_payload: Default::default(),
            out_egress: Default::default(),
            freed: Default::default(),
            freed_slot: Default::default(),
            payload: Default::default(),
            beat_info: Default::default(),
            header0: Default::default(),
            header1: Default::default(),
            header2: Default::default(),
            header3: Default::default(),
            beat_shift: Constant::new(BEAT_BITS.to_bits()),
            filling: Default::default(),
            fill_slot: Default::default(),
            fill_beats: Default::default(),
            write_here_slot: Default::default(),
            write_here_beat: Default::default(),
            reading: Default::default(),
            read_slot: Default::default(),
            read_beat: Default::default(),
            read_egress: Default::default(),
            read_any: Default::default(),
            read_address: Default::default(),
            shown: Default::default(),
            shown_sop: Default::default(),
            shown_slot: Default::default(),
            shown_egress: Default::default(),
            available: Default::default(),
            finishing: Default::default(),
            advance: Default::default(),
            issue: Default::default(),
            issue_slot: Default::default(),
            issue_beat: Default::default(),
            issue_egress: Default::default(),
            can_issue: Default::default(),
            issue_address: Default::default(),
        }
    }
}

impl<const W: usize> Logic for SlotBuffer<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            filling,
            fill_slot,
            fill_beats,
            reading,
            read_slot,
            read_beat,
            read_egress,
            read_any,
            read_address,
            shown,
            shown_sop,
            shown_slot,
            shown_egress
        );
        self.payload.read_clock.next = self.clock.val();
        self.payload.write_clock.next = self.clock.val();
        self.beat_info.read_clock.next = self.clock.val();
        self.beat_info.write_clock.next = self.clock.val();
        self.header0.read_clock.next = self.clock.val();
        self.header0.write_clock.next = self.clock.val();
        self.header1.read_clock.next = self.clock.val();
        self.header1.write_clock.next = self.clock.val();
        self.header2.read_clock.next = self.clock.val();
        self.header2.write_clock.next = self.clock.val();
        self.header3.read_clock.next = self.clock.val();
        self.header3.write_clock.next = self.clock.val();

        // Write side: a first beat opens its slot at beat 0; later beats follow.
        self.write_here_slot.next = self.fill_slot.q.val();
        self.write_here_beat.next =
            bit_cast::<BEAT_BITS, { BEAT_BITS + 1 }>(self.fill_beats.q.val());
        if self.write_sop.val() {
            self.write_here_slot.next = self.write_slot.val();
            self.write_here_beat.next = 0.into();
        }
        self.payload.write_enable.next = self.write.val();
        self.payload.write_address.next =
            (bit_cast::<BUFFER_ADDRESS_BITS, SLOT_BITS>(self.write_here_slot.val())
                << self.beat_shift.val())
                | bit_cast::<BUFFER_ADDRESS_BITS, BEAT_BITS>(self.write_here_beat.val());
        self.payload.write_data.next = self.write_payload.val();
        self.beat_info.write_enable.next = self.write.val();
        self.beat_info.write_address.next = self.payload.write_address.val();
        self.beat_info.write_data.next = (bit_cast::<7, 1>(self.write_nullify.val().into()) << 6)
            | (bit_cast::<7, 1>(self.write_eop.val().into()) << 5)
            | bit_cast::<7, EMPTY_BITS>(self.write_empty.val());
        self.header0.write_enable.next = self.write.val() & self.write_sop.val();
        self.header0.write_address.next = self.write_here_slot.val();
        self.header0.write_data.next = self.write_dw0.val();
        self.header1.write_enable.next = self.write.val() & self.write_sop.val();
        self.header1.write_address.next = self.write_here_slot.val();
        self.header1.write_data.next = self.write_dw1.val();
        self.header2.write_enable.next = self.write.val() & self.write_sop.val();
        self.header2.write_address.next = self.write_here_slot.val();
        self.header2.write_data.next = self.write_dw2.val();
        self.header3.write_enable.next = self.write.val() & self.write_sop.val();
        self.header3.write_address.next = self.write_here_slot.val();
        self.header3.write_data.next = self.write_dw3.val();
        if self.write.val() {
            self.filling.d.next = !self.write_eop.val();
            self.fill_slot.d.next = self.write_here_slot.val();
            self.fill_beats.d.next =
                bit_cast::<{ BEAT_BITS + 1 }, BEAT_BITS>(self.write_here_beat.val()) + 1;
        }

        // Output stage: the RAMs show the beat addressed at the last edge.
        self.out_valid.next = self.shown.q.val();
        self.out_sop.next = self.shown_sop.q.val();
        self.out_eop.next = self.beat_info.read_data.val().get_bit(5);
        self.out_empty.next = self.beat_info.read_data.val().get_bits::<EMPTY_BITS>(0);
        self.out_nullify.next = self.beat_info.read_data.val().get_bit(6);
        self.out_dw0.next = self.header0.read_data.val();
        self.out_dw1.next = self.header1.read_data.val();
        self.out_dw2.next = self.header2.read_data.val();
        self.out_dw3.next = self.header3.read_data.val();
        self.out_payload.next = self.payload.read_data.val();
        self.out_egress.next = self.shown_egress.q.val();
        self.advance.next = !self.shown.q.val() | self.out_ready.val();
        self.freed.next =
            self.shown.q.val() & self.out_ready.val() & self.beat_info.read_data.val().get_bit(5);
        self.freed_slot.next = self.shown_slot.q.val();

        // Address stage. The beat it would read next is in the RAM unless
        // it belongs to the slot still being filled and has not arrived.
        self.available.next = !(self.filling.q.val()
            & (self.fill_slot.q.val() == self.read_slot.q.val()))
            | (bit_cast::<{ BEAT_BITS + 1 }, BEAT_BITS>(self.read_beat.q.val())
                < self.fill_beats.q.val());
        // The output stage shows the last beat of the TLP being read: nothing more to read.
        self.finishing.next = self.reading.q.val()
            & self.read_any.q.val()
            & self.shown.q.val()
            & self.beat_info.read_data.val().get_bit(5);
        self.idle.next = !self.reading.q.val() | self.finishing.val();
        self.busy.next = self.reading.q.val() & !self.finishing.val();
        self.busy_egress.next = self.read_egress.q.val();

        self.issue_slot.next = self.read_slot.q.val();
        self.issue_beat.next = self.read_beat.q.val();
        self.issue_egress.next = self.read_egress.q.val();
        self.can_issue.next = self.reading.q.val() & !self.finishing.val() & self.available.val();
        if self.start.val() {
            self.issue_slot.next = self.start_slot.val();
            self.issue_beat.next = 0.into();
            self.issue_egress.next = self.start_egress.val();
            self.can_issue.next = true;
            self.reading.d.next = true;
            self.read_slot.d.next = self.start_slot.val();
            self.read_beat.d.next = 0.into();
            self.read_egress.d.next = self.start_egress.val();
            self.read_any.d.next = false;
        } else if self.advance.val() & self.finishing.val() {
            self.reading.d.next = false;
        }
        self.issue.next = self.advance.val() & self.can_issue.val();
        self.issue_address.next =
            (bit_cast::<BUFFER_ADDRESS_BITS, SLOT_BITS>(self.issue_slot.val())
                << self.beat_shift.val())
                | bit_cast::<BUFFER_ADDRESS_BITS, BEAT_BITS>(self.issue_beat.val());

        // Present the issued beat's address, or the shown beat's again to hold it.
        self.payload.read_address.next = self.read_address.q.val();
        self.beat_info.read_address.next = self.read_address.q.val();
        self.header0.read_address.next = self.shown_slot.q.val();
        self.header1.read_address.next = self.shown_slot.q.val();
        self.header2.read_address.next = self.shown_slot.q.val();
        self.header3.read_address.next = self.shown_slot.q.val();
        if self.issue.val() {
            self.read_address.d.next = self.issue_address.val();
            self.payload.read_address.next = self.issue_address.val();
            self.beat_info.read_address.next = self.issue_address.val();
            self.header0.read_address.next = self.issue_slot.val();
            self.header1.read_address.next = self.issue_slot.val();
            self.header2.read_address.next = self.issue_slot.val();
            self.header3.read_address.next = self.issue_slot.val();
            self.read_beat.d.next = self.issue_beat.val() + 1;
            self.read_any.d.next = true;
        }
        if self.advance.val() {
            self.shown.d.next = self.issue.val();
            self.shown_sop.d.next = self.issue_beat.val() == 0;
            self.shown_slot.d.next = self.issue_slot.val();
            self.shown_egress.d.next = self.issue_egress.val();
        }
    }
}
