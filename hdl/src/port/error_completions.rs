//! The completions a port owes for requests its ingress refused or the switch executed, queued until its egress link can send them.
//!
//! A non-posted request the ingress drops is answered on the link it came
//! from (weft-model's `Switch::refuse`, [`crate::isolation`]): the
//! ingress pushes the completion's header (3 DW, no data) here as it takes
//! the request's first beat, and pushes only while there is `room`, so no
//! answer is ever lost: with the queue full the ingress holds the request
//! on its link instead. A read of the management BAR is answered here too
//! ([`crate::top::ManagementBar`]): its completion may carry one data DW
//! (`push_data`, a CplD by its Fmt, PCIe Base 6.0 Table 2-3), which leaves
//! as the beat's first payload DW.
//!
//! The queue sits on the egress stream just before the link and sends its
//! completions between the port's other TLPs, never inside one, in the
//! order they were pushed. **Order at the link:** at a TLP boundary a
//! queued completion goes first, unless a TLP's first beat is already
//! offered to the link (an offered beat is never taken back). A completion
//! is committed only when the link partner has completion credit
//! (`credit`, §2.6.1) and no other TLP reports its credits to the link
//! layer in that cycle (`other_consume`): then `consume` pulses for one
//! cycle, one completion header credit and as many data DWs as it carries
//! (`consume_dws`: 0 or 1), as the switching core reports its TLPs, and the
//! completion is offered from the next cycle until the link takes it.
//!
//! Passing the switching core's TLPs breaks no ordering rule (PCIe Base
//! 6.0 §2.4.1 orders TLPs of one path): none of them came in on this port,
//! which drops what routes back to it (RoutesToIngress), so the answers are
//! a flow of their own, and keep their order within it.

use rust_hdl::prelude::*;

use super::boundary::TlpBoundary;

use crate::stream::{TlpSink, TlpSource, EMPTY_BITS};
use crate::switching::LENGTH_BITS;

/// Error completions a port can hold before its ingress must wait.
pub const DEPTH: usize = 4;
const POINTER_BITS: usize = 2;
const COUNT_BITS: usize = 3;
const _: () = assert!(DEPTH == 1 << POINTER_BITS && DEPTH < 1 << COUNT_BITS);

/// Queues error completions and sends them between the TLPs of a `W`-bit egress stream.
#[derive(LogicBlock)]
pub struct ErrorCompletionQueue<const W: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// A completion to queue (only while `room`).
    pub push: Signal<In, Bit>,
    /// Its header DW0.
    pub push_dw0: Signal<In, Bits<32>>,
    /// Its header DW1.
    pub push_dw1: Signal<In, Bits<32>>,
    /// Its header DW2.
    pub push_dw2: Signal<In, Bits<32>>,
    /// Its data DW, if its Fmt says it has one (DW0 bit 30).
    pub push_data: Signal<In, Bits<32>>,
    /// A completion pushed now would be queued.
    pub room: Signal<Out, Bit>,
    /// The port's other TLPs, on their way to the link.
    pub upstream: TlpSink<W>,
    /// The link: the TLPs and the queued completions between them.
    pub downstream: TlpSource<W>,
    /// The link partner has credit for a completion.
    pub credit: Signal<In, Bit>,
    /// Another TLP's credits are reported to the link layer in this cycle.
    pub other_consume: Signal<In, Bit>,
    /// A one-cycle pulse: a queued completion is committed to the link and takes its credit.
    pub consume: Signal<Out, Bit>,
    /// With `consume`: the data DWs of the completion committed.
    pub consume_dws: Signal<Out, Bits<LENGTH_BITS>>,
    dw0: [DFF<Bits<32>>; DEPTH],
    dw1: [DFF<Bits<32>>; DEPTH],
    dw2: [DFF<Bits<32>>; DEPTH],
    data: [DFF<Bits<32>>; DEPTH],
    head: DFF<Bits<POINTER_BITS>>,
    count: DFF<Bits<COUNT_BITS>>,
    boundary: TlpBoundary,
    sending: DFF<Bit>,
    full: Constant<Bits<COUNT_BITS>>,
    all_empty: Constant<Bits<EMPTY_BITS>>,
    data_empty: Constant<Bits<EMPTY_BITS>>,
    data_shift: Constant<Bits<16>>,
    head_has_data: Signal<Local, Bit>,
    head_data: Signal<Local, Bits<32>>,
    tail: Signal<Local, Bits<POINTER_BITS>>,
    commit: Signal<Local, Bit>,
    popped: Signal<Local, Bit>,
}

impl<const W: usize> Default for ErrorCompletionQueue<W> {
    fn default() -> Self {
        ErrorCompletionQueue {
            clock: Default::default(),
            push: Default::default(),
            push_dw0: Default::default(),
            push_dw1: Default::default(),
            push_dw2: Default::default(),
            push_data: Default::default(),
            room: Default::default(),
            upstream: Default::default(),
            downstream: Default::default(),
            credit: Default::default(),
            other_consume: Default::default(),
            consume: Default::default(),
            consume_dws: Default::default(),
            dw0: Default::default(),
            dw1: Default::default(),
            dw2: Default::default(),
            data: Default::default(),
            head: Default::default(),
            count: Default::default(),
            boundary: Default::default(),
            sending: Default::default(),
            full: Constant::new(DEPTH.to_bits()),
            // A header-only TLP: one beat, every payload DW empty (crate::stream).
            all_empty: Constant::new((W / 32).to_bits()),
            // A completion with one data DW: the first payload DW, in the
            // bus's most significant bits, the rest empty.
            data_empty: Constant::new((W / 32 - 1).to_bits()),
            data_shift: Constant::new((W - 32).to_bits()),
            head_has_data: Default::default(),
            head_data: Default::default(),
            tail: Default::default(),
            commit: Default::default(),
            popped: Default::default(),
        }
    }
}

impl<const W: usize> Logic for ErrorCompletionQueue<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, head, count, sending);
        for k in 0..DEPTH {
            self.dw0[k].clock.next = self.clock.val();
            self.dw1[k].clock.next = self.clock.val();
            self.dw2[k].clock.next = self.clock.val();
            self.data[k].clock.next = self.clock.val();
            self.dw0[k].d.next = self.dw0[k].q.val();
            self.dw1[k].d.next = self.dw1[k].q.val();
            self.dw2[k].d.next = self.dw2[k].q.val();
            self.data[k].d.next = self.data[k].q.val();
        }
        // The oldest completion: Fmt bit 1 (DW0 bit 30) says it carries data.
        self.head_has_data.next = false;
        self.head_data.next = bits::<32>(0);
        for k in 0..DEPTH {
            if self.head.q.val().index() == k {
                self.head_has_data.next = self.dw0[k].q.val().get_bit(30);
                self.head_data.next = self.data[k].q.val();
            }
        }
        self.tail.next = self.head.q.val() + self.count.q.val().get_bits::<POINTER_BITS>(0);
        self.room.next = self.count.q.val() != self.full.val();

        // At a TLP boundary, nothing offered yet: commit the oldest completion.
        self.commit.next = (self.count.q.val() != 0)
            & !self.sending.q.val()
            & self.boundary.free.val()
            & self.credit.val()
            & !self.other_consume.val();
        self.consume.next = self.commit.val();
        self.consume_dws.next = bits::<LENGTH_BITS>(0);
        if self.commit.val() & self.head_has_data.val() {
            self.consume_dws.next = bits::<LENGTH_BITS>(1);
        }

        // The port's TLPs pass while no completion is committed or offered.
        self.downstream.valid.next =
            self.upstream.valid.val() & !self.sending.q.val() & !self.commit.val();
        self.downstream.sop.next = self.upstream.sop.val();
        self.downstream.eop.next = self.upstream.eop.val();
        self.downstream.empty.next = self.upstream.empty.val();
        self.downstream.nullify.next = self.upstream.nullify.val();
        self.downstream.dw0.next = self.upstream.dw0.val();
        self.downstream.dw1.next = self.upstream.dw1.val();
        self.downstream.dw2.next = self.upstream.dw2.val();
        self.downstream.dw3.next = self.upstream.dw3.val();
        self.downstream.payload.next = self.upstream.payload.val();
        self.upstream.ready.next =
            self.downstream.ready.val() & !self.sending.q.val() & !self.commit.val();
        if self.sending.q.val() {
            self.downstream.valid.next = true;
            self.downstream.sop.next = true;
            self.downstream.eop.next = true;
            self.downstream.empty.next = self.all_empty.val();
            self.downstream.nullify.next = false;
            self.downstream.dw3.next = bits::<32>(0);
            self.downstream.payload.next = 0.into();
            if self.head_has_data.val() {
                self.downstream.empty.next = self.data_empty.val();
                self.downstream.payload.next =
                    bit_cast::<W, 32>(self.head_data.val()) << self.data_shift.val();
            }
            for k in 0..DEPTH {
                if self.head.q.val().index() == k {
                    self.downstream.dw0.next = self.dw0[k].q.val();
                    self.downstream.dw1.next = self.dw1[k].q.val();
                    self.downstream.dw2.next = self.dw2[k].q.val();
                }
            }
        }
        self.popped.next = self.sending.q.val() & self.downstream.ready.val();

        // Where the port's own stream stands: inside a TLP, or its first beat offered.
        self.boundary.clock.next = self.clock.val();
        self.boundary.upstream_valid.next = self.upstream.valid.val();
        self.boundary.upstream_ready.next = self.upstream.ready.val();
        self.boundary.upstream_sop.next = self.upstream.sop.val();
        self.boundary.upstream_eop.next = self.upstream.eop.val();
        self.boundary.downstream_valid.next = self.downstream.valid.val();
        self.boundary.downstream_ready.next = self.downstream.ready.val();
        self.boundary.sending.next = self.sending.q.val();

        // The queue.
        if self.push.val() {
            for k in 0..DEPTH {
                if self.tail.val().index() == k {
                    self.dw0[k].d.next = self.push_dw0.val();
                    self.dw1[k].d.next = self.push_dw1.val();
                    self.dw2[k].d.next = self.push_dw2.val();
                    self.data[k].d.next = self.push_data.val();
                }
            }
        }
        if self.commit.val() {
            self.sending.d.next = true;
        }
        if self.popped.val() {
            self.sending.d.next = false;
            self.head.d.next = self.head.q.val() + 1;
        }
        if self.push.val() & !self.popped.val() {
            self.count.d.next = self.count.q.val() + 1;
        }
        if !self.push.val() & self.popped.val() {
            self.count.d.next = self.count.q.val() - 1;
        }
    }
}
