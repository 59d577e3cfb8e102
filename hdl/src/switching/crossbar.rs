//! The crossbar: carries each ingress's beats to the egress it was matched with, holding it until the TLP's last beat.

use rust_hdl::prelude::*;

use super::PORT_BITS;
use crate::stream::{TlpSink, TlpSource};

/// Connects ingress read streams to egress ports, packet by packet.
///
/// Per egress it keeps the ingress whose beats it carries (`owner`) and at
/// most one more matched behind it (`next_owner`): a new match may be made
/// as soon as the current TLP's last beat has been read from its buffer,
/// so the next TLP's first beat waits in its ingress's output stage and
/// follows the last beat without a gap. An egress is free for matching
/// while it holds no TLP, or one whose beats have all been read.
#[derive(LogicBlock)]
pub struct Crossbar<const W: usize, const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Per ingress: its buffer's read stream.
    pub sources: [TlpSink<W>; N],
    /// Per ingress: the egress its offered beat is for.
    pub source_egress: [Signal<In, Bits<PORT_BITS>>; N],
    /// Per ingress: its buffer still has beats to read for egress `source_busy_egress`.
    pub source_busy: [Signal<In, Bit>; N],
    /// Per ingress: the egress of the TLP its buffer is reading.
    pub source_busy_egress: [Signal<In, Bits<PORT_BITS>>; N],
    /// Per ingress: it was matched in this cycle.
    pub matched: [Signal<In, Bit>; N],
    /// Per ingress: the egress it was matched with.
    pub matched_egress: [Signal<In, Bits<PORT_BITS>>; N],
    /// The egress ports.
    pub egress: [TlpSource<W>; N],
    /// Per egress: it may be matched.
    pub egress_free: [Signal<Out, Bit>; N],
    owner: [DFF<Bits<PORT_BITS>>; N],
    next_owner: [DFF<Bits<PORT_BITS>>; N],
    pending: [DFF<Bits<2>>; N],
    reading_for: [Signal<Local, Bit>; N],
    arrived: [Signal<Local, Bit>; N],
    arriving_from: [Signal<Local, Bits<PORT_BITS>>; N],
    done: [Signal<Local, Bit>; N],
}

impl<const W: usize, const N: usize> Default for Crossbar<W, N> {
    fn default() -> Self {
        Crossbar {
            clock: Default::default(),
            sources: std::array::from_fn(|_| Default::default()),
            source_egress: std::array::from_fn(|_| Default::default()),
            source_busy: std::array::from_fn(|_| Default::default()),
            source_busy_egress: std::array::from_fn(|_| Default::default()),
            matched: std::array::from_fn(|_| Default::default()),
            matched_egress: std::array::from_fn(|_| Default::default()),
            egress: std::array::from_fn(|_| Default::default()),
            egress_free: std::array::from_fn(|_| Default::default()),
            owner: std::array::from_fn(|_| Default::default()),
            next_owner: std::array::from_fn(|_| Default::default()),
            pending: std::array::from_fn(|_| Default::default()),
            reading_for: std::array::from_fn(|_| Default::default()),
            arrived: std::array::from_fn(|_| Default::default()),
            arriving_from: std::array::from_fn(|_| Default::default()),
            done: std::array::from_fn(|_| Default::default()),
        }
    }
}

impl<const W: usize, const N: usize> Logic for Crossbar<W, N> {
    #[hdl_gen]
    fn update(&mut self) {
        // Per egress: is some buffer still reading for it, and who was matched with it now.
        for j in 0..N {
            self.reading_for[j].next = false;
            self.arrived[j].next = false;
            self.arriving_from[j].next = 0.into();
            for i in 0..N {
                if self.source_busy[i].val() & (self.source_busy_egress[i].val().index() == j) {
                    self.reading_for[j].next = true;
                }
                if self.matched[i].val() & (self.matched_egress[i].val().index() == j) {
                    self.arrived[j].next = true;
                    self.arriving_from[j].next = i.to_bits();
                }
            }
        }
        for i in 0..N {
            self.sources[i].ready.next = false;
        }
        for j in 0..N {
            self.owner[j].clock.next = self.clock.val();
            self.next_owner[j].clock.next = self.clock.val();
            self.pending[j].clock.next = self.clock.val();
            self.owner[j].d.next = self.owner[j].q.val();
            self.next_owner[j].d.next = self.next_owner[j].q.val();
            self.pending[j].d.next = self.pending[j].q.val();
            self.egress_free[j].next = (self.pending[j].q.val() == 0)
                | ((self.pending[j].q.val() == 1) & !self.reading_for[j].val());

            // The owner's beats for this egress go out; nobody else's.
            self.egress[j].valid.next = false;
            self.egress[j].sop.next = false;
            self.egress[j].eop.next = false;
            self.egress[j].empty.next = 0.into();
            self.egress[j].nullify.next = false;
            self.egress[j].dw0.next = 0.into();
            self.egress[j].dw1.next = 0.into();
            self.egress[j].dw2.next = 0.into();
            self.egress[j].dw3.next = 0.into();
            self.egress[j].payload.next = 0.into();
            self.done[j].next = false;
            for i in 0..N {
                if self.owner[j].q.val().index() == i {
                    self.egress[j].valid.next = self.sources[i].valid.val()
                        & (self.source_egress[i].val().index() == j)
                        & (self.pending[j].q.val() != 0);
                    self.egress[j].sop.next = self.sources[i].sop.val();
                    self.egress[j].eop.next = self.sources[i].eop.val();
                    self.egress[j].empty.next = self.sources[i].empty.val();
                    self.egress[j].nullify.next = self.sources[i].nullify.val();
                    self.egress[j].dw0.next = self.sources[i].dw0.val();
                    self.egress[j].dw1.next = self.sources[i].dw1.val();
                    self.egress[j].dw2.next = self.sources[i].dw2.val();
                    self.egress[j].dw3.next = self.sources[i].dw3.val();
                    self.egress[j].payload.next = self.sources[i].payload.val();
                    if self.sources[i].valid.val()
                        & (self.source_egress[i].val().index() == j)
                        & (self.pending[j].q.val() != 0)
                    {
                        self.sources[i].ready.next = self.egress[j].ready.val();
                        self.done[j].next = self.egress[j].ready.val() & self.sources[i].eop.val();
                    }
                }
            }

            // Hand-over: a match becomes the owner if the egress is empty
            // after this cycle, else waits as next owner.
            if self.arrived[j].val() {
                if (self.pending[j].q.val() == 0)
                    | ((self.pending[j].q.val() == 1) & self.done[j].val())
                {
                    self.owner[j].d.next = self.arriving_from[j].val();
                } else {
                    self.next_owner[j].d.next = self.arriving_from[j].val();
                }
                if !self.done[j].val() {
                    self.pending[j].d.next = self.pending[j].q.val() + 1;
                }
            } else if self.done[j].val() {
                self.pending[j].d.next = self.pending[j].q.val() - 1;
                if self.pending[j].q.val() == 2 {
                    self.owner[j].d.next = self.next_owner[j].q.val();
                }
            }
        }
    }
}
