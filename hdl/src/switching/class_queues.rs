//! The queues of one flow-control class at one ingress: one FIFO of slots per egress, as linked lists.

use rust_hdl::prelude::*;

use super::{SLOTS, SLOT_BITS};

/// One FIFO of buffer slots per egress port, for one class.
///
/// The queues are linked lists threaded through one link register per
/// slot: a slot is in at most one queue, so `SLOTS` links serve the `N`
/// queues. Every output comes from a register, so the owner may decide
/// what to push and pop from them in the same cycle.
#[derive(LogicBlock)]
pub struct ClassQueues<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Append slot `push_slot` to the queue of egress `push_egress`.
    pub push: Signal<In, Bit>,
    /// The queue appended to, by egress index.
    pub push_egress: Signal<In, Bits<{ super::PORT_BITS }>>,
    /// The slot appended.
    pub push_slot: Signal<In, Bits<SLOT_BITS>>,
    /// Remove the head of the queue of egress `pop_egress`.
    pub pop: Signal<In, Bit>,
    /// The queue popped, by egress index.
    pub pop_egress: Signal<In, Bits<{ super::PORT_BITS }>>,
    /// Per egress: the oldest slot queued.
    pub head: [Signal<Out, Bits<SLOT_BITS>>; N],
    /// Bit `e`: the queue of egress `e` holds a slot.
    pub occupied: Signal<Out, Bits<N>>,
    links: [DFF<Bits<SLOT_BITS>>; SLOTS],
    link: Signal<Local, Bit>,
    link_slot: Signal<Local, Bits<SLOT_BITS>>,
    heads: [DFF<Bits<SLOT_BITS>>; N],
    tails: [DFF<Bits<SLOT_BITS>>; N],
    filled: DFF<Bits<N>>,
    one: Constant<Bits<N>>,
    pop_head: Signal<Local, Bits<SLOT_BITS>>,
    pop_tail: Signal<Local, Bits<SLOT_BITS>>,
    pop_mask: Signal<Local, Bits<N>>,
    push_mask: Signal<Local, Bits<N>>,
}

impl<const N: usize> Default for ClassQueues<N> {
    fn default() -> Self {
        ClassQueues {
            clock: Default::default(),
            push: Default::default(),
            push_egress: Default::default(),
            push_slot: Default::default(),
            pop: Default::default(),
            pop_egress: Default::default(),
            head: std::array::from_fn(|_| Default::default()),
            occupied: Default::default(),
            links: std::array::from_fn(|_| Default::default()),
            link: Default::default(),
            link_slot: Default::default(),
            heads: std::array::from_fn(|_| Default::default()),
            tails: std::array::from_fn(|_| Default::default()),
            filled: Default::default(),
            one: Constant::new(1u64.into()),
            pop_head: Default::default(),
            pop_tail: Default::default(),
            pop_mask: Default::default(),
            push_mask: Default::default(),
        }
    }
}

impl<const N: usize> Logic for ClassQueues<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, filled);
        self.occupied.next = self.filled.q.val();
        self.link.next = false;
        self.link_slot.next = 0.into();
        // The popped queue's head and tail: equal when it holds one slot.
        self.pop_head.next = 0.into();
        self.pop_tail.next = 0.into();
        for e in 0..N {
            if self.pop_egress.val().index() == e {
                self.pop_head.next = self.heads[e].q.val();
                self.pop_tail.next = self.tails[e].q.val();
            }
        }
        self.pop_mask.next = 0.into();
        if self.pop.val() & (self.pop_head.val() == self.pop_tail.val()) {
            self.pop_mask.next = self.one.val() << self.pop_egress.val();
        }
        self.push_mask.next = 0.into();
        if self.push.val() {
            self.push_mask.next = self.one.val() << self.push_egress.val();
        }
        self.filled.d.next = (self.filled.q.val() & !self.pop_mask.val()) | self.push_mask.val();
        for e in 0..N {
            self.heads[e].clock.next = self.clock.val();
            self.tails[e].clock.next = self.clock.val();
            self.heads[e].d.next = self.heads[e].q.val();
            self.tails[e].d.next = self.tails[e].q.val();
            self.head[e].next = self.heads[e].q.val();
            // Removing a slot that is not the only one makes its link the head.
            if self.pop.val()
                & (self.pop_egress.val().index() == e)
                & (self.heads[e].q.val() != self.tails[e].q.val())
            {
                for s in 0..SLOTS {
                    if self.heads[e].q.val().index() == s {
                        self.heads[e].d.next = self.links[s].q.val();
                    }
                }
            }
            if self.push.val() & (self.push_egress.val().index() == e) {
                self.tails[e].d.next = self.push_slot.val();
                if !self.filled.q.val().get_bit(e) | self.pop_mask.val().get_bit(e) {
                    self.heads[e].d.next = self.push_slot.val();
                } else {
                    self.link.next = true;
                    self.link_slot.next = self.tails[e].q.val();
                }
            }
        }
        // Appending to a non-empty queue links its old tail to the new slot.
        for s in 0..SLOTS {
            self.links[s].clock.next = self.clock.val();
            self.links[s].d.next = self.links[s].q.val();
            if self.link.val() & (self.link_slot.val().index() == s) {
                self.links[s].d.next = self.push_slot.val();
            }
        }
    }
}
