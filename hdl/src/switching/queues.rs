//! One ingress's virtual output queues: which buffered TLP may go to which egress next, and in what order.

use rust_hdl::prelude::*;

use super::class_queues::ClassQueues;
use super::gather::Gather;
use super::{LENGTH_BITS, PORT_BITS, SLOTS, SLOT_BITS};

/// Bits of a per-egress count of posted requests, wide enough that the
/// at most `SLOTS` outstanding never wrap past half its range.
const SEQUENCE_BITS: usize = SLOT_BITS + 2;

/// TLPs waiting for one egress that make its queue long enough to be
/// served first every other time (`backlogged`). With 256-byte writes to
/// uniformly random egresses of the reference core (`switching-bench`),
/// 4 moved 0.954 beats per cycle per port, against 0.946 with plain iSLIP.
pub const BACKLOG_TLPS: usize = 4;

/// The virtual output queues of one ingress port, and its ordering rules.
///
/// Each TLP gets a buffer slot when its first beat is taken and joins the
/// queue of its (egress, class); posted, non-posted and completion queues
/// are apart, so posted requests pass blocked non-posted requests and
/// completions (PCIe Base 6.0 §2.4.1, A3/A4/A5: they must be able to, or
/// the fabric can deadlock). Within a class a queue is FIFO, which keeps
/// every "No" of the ordering table among posted requests (A2a) and among
/// completions of one transaction (D5b).
///
/// **Non-posted requests and completions behind posted ones** (B2a, C2a,
/// D2a). Per egress the queues count the posted requests that entered
/// (`posted_in`) and that started to leave (`posted_out`). A non-posted
/// request or completion records `posted_in` on arrival as its barrier and
/// may not start before `posted_out` has reached it. A completion with
/// Relaxed Ordering set skips the barrier (D2b). ID-Based Ordering is not
/// used to pass: keeping its order is always legal.
///
/// **Deadlock freedom in the shared buffer.** A posted request is taken
/// while any slot is free, a completion while two are, a non-posted request
/// while three are: non-posted requests can never take the last slots that
/// posted requests and completions need to pass them. `space` tells the
/// link layer which classes it can take (its credits to advertise).
///
/// **Backlog.** Per egress the queues count the TLPs waiting for it (all
/// classes), and `backlogged` tells the matcher which egresses have at
/// least [`BACKLOG_TLPS`] of them: it serves such long queues first every
/// other time (see [`super::IslipMatcher`]).
///
/// **Requests.** While the buffer's read side is idle, the ingress asks for
/// every egress that has a TLP at a queue head which ordering allows and
/// for whose class the egress holds credit. Matched with an egress, it
/// picks among that egress's eligible classes round-robin, pops the head
/// and starts the buffer reading it.
#[derive(LogicBlock)]
pub struct VirtualOutputQueues<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// A TLP's first beat is offered.
    pub offer: Signal<In, Bit>,
    /// Its class: [`super::CLASS_POSTED`], [`super::CLASS_NON_POSTED`] or [`super::CLASS_COMPLETION`].
    pub offer_class: Signal<In, Bits<2>>,
    /// Its egress port.
    pub offer_egress: Signal<In, Bits<PORT_BITS>>,
    /// Its Relaxed Ordering attribute (Attr\[1\]).
    pub offer_relaxed: Signal<In, Bit>,
    /// Its Fmt\[1\]: the TLP carries data (§2.2.1).
    pub offer_has_data: Signal<In, Bit>,
    /// Its Length field, DW0\[9:0\] (0 means 1024 DW), for the egress's data credits.
    pub offer_length_field: Signal<In, Bits<10>>,
    /// The offered TLP is taken (into slot `alloc_slot`).
    pub accept: Signal<Out, Bit>,
    /// The slot the next TLP goes into.
    pub alloc_slot: Signal<Out, Bits<SLOT_BITS>>,
    /// Bit per class (posted, non-posted, completion): a TLP of the class would be taken now.
    pub space: Signal<Out, Bits<3>>,
    /// The buffer freed slot `freed_slot`.
    pub freed: Signal<In, Bit>,
    /// The slot freed.
    pub freed_slot: Signal<In, Bits<SLOT_BITS>>,
    /// Bit `e`: egress `e`'s link partner has credit for a posted TLP.
    pub credit_posted: Signal<In, Bits<N>>,
    /// Bit `e`: egress `e`'s link partner has credit for a non-posted TLP.
    pub credit_non_posted: Signal<In, Bits<N>>,
    /// Bit `e`: egress `e`'s link partner has credit for a completion.
    pub credit_completion: Signal<In, Bits<N>>,
    /// The buffer can start reading a new TLP.
    pub idle: Signal<In, Bit>,
    /// Bit `e`: this ingress asks for egress `e`.
    pub request: Signal<Out, Bits<N>>,
    /// Bit `e`: at least [`BACKLOG_TLPS`] TLPs wait here for egress `e`.
    pub backlogged: Signal<Out, Bits<N>>,
    /// This ingress is matched in this cycle.
    pub grant: Signal<In, Bit>,
    /// The egress it is matched with.
    pub grant_egress: Signal<In, Bits<PORT_BITS>>,
    /// A TLP starts towards the granted egress.
    pub start: Signal<Out, Bit>,
    /// Its slot.
    pub start_slot: Signal<Out, Bits<SLOT_BITS>>,
    /// Its egress, as an index.
    pub start_egress: Signal<Out, Bits<PORT_BITS>>,
    /// Its class, one-hot: posted, non-posted, completion.
    pub start_class: Signal<Out, Bits<3>>,
    /// Its data payload in DW (zero without data), for the egress's data credits.
    pub start_dws: Signal<Out, Bits<LENGTH_BITS>>,
    posted: ClassQueues<N>,
    non_posted: ClassQueues<N>,
    completions: ClassQueues<N>,
    requests: Gather<N>,
    backlogs: Gather<N>,
    waiting: [DFF<Bits<{ SLOT_BITS + 1 }>>; N],
    backlog_tlps: Constant<Bits<{ SLOT_BITS + 1 }>>,
    class_pointer: DFF<Bits<2>>,
    class_chosen: Signal<Local, Bits<2>>,
    one_class: Constant<Bits<3>>,
    one_slot: Constant<Bits<SLOTS>>,
    taken_mask: Signal<Local, Bits<SLOTS>>,
    released_mask: Signal<Local, Bits<SLOTS>>,
    space_posted: Signal<Local, Bit>,
    space_non_posted: Signal<Local, Bit>,
    space_completion: Signal<Local, Bit>,
    at_posted: Signal<Local, Bit>,
    at_non_posted: Signal<Local, Bit>,
    at_completion: Signal<Local, Bit>,
    limit_posted: Constant<Bits<{ SLOT_BITS + 1 }>>,
    limit_completion: Constant<Bits<{ SLOT_BITS + 1 }>>,
    limit_non_posted: Constant<Bits<{ SLOT_BITS + 1 }>>,
    half_sequence: Constant<Bits<SEQUENCE_BITS>>,
    used: DFF<Bits<SLOTS>>,
    used_count: DFF<Bits<{ SLOT_BITS + 1 }>>,
    barriers: [DFF<Bits<SEQUENCE_BITS>>; SLOTS],
    ordered: DFF<Bits<SLOTS>>,
    lengths: [DFF<Bits<LENGTH_BITS>>; SLOTS],
    posted_in: [DFF<Bits<SEQUENCE_BITS>>; N],
    posted_out: [DFF<Bits<SEQUENCE_BITS>>; N],
    free: Signal<Local, Bits<SLOTS>>,
    alloc: Signal<Local, Bits<SLOTS>>,
    enqueue: Signal<Local, Bit>,
    offer_length: Signal<Local, Bits<LENGTH_BITS>>,
    non_posted_barrier: [Signal<Local, Bits<SEQUENCE_BITS>>; N],
    completion_barrier: [Signal<Local, Bits<SEQUENCE_BITS>>; N],
    non_posted_gap: [Signal<Local, Bits<SEQUENCE_BITS>>; N],
    completion_gap: [Signal<Local, Bits<SEQUENCE_BITS>>; N],
    non_posted_ordered: [Signal<Local, Bit>; N],
    completion_ordered: [Signal<Local, Bit>; N],
    eligible_posted: [Signal<Local, Bit>; N],
    eligible_non_posted: [Signal<Local, Bit>; N],
    eligible_completion: [Signal<Local, Bit>; N],
}

impl<const N: usize> Default for VirtualOutputQueues<N> {
    fn default() -> Self {
        let limit = |free_needed: usize| Constant::new((SLOTS + 1 - free_needed).to_bits());
        VirtualOutputQueues {
            clock: Default::default(),
            offer: Default::default(),
            offer_class: Default::default(),
            offer_egress: Default::default(),
            offer_relaxed: Default::default(),
            offer_has_data: Default::default(),
            offer_length_field: Default::default(),
            accept: Default::default(),
            alloc_slot: Default::default(),
            space: Default::default(),
            freed: Default::default(),
            freed_slot: Default::default(),
            credit_posted: Default::default(),
            credit_non_posted: Default::default(),
            credit_completion: Default::default(),
            idle: Default::default(),
            request: Default::default(),
            backlogged: Default::default(),
            grant: Default::default(),
            grant_egress: Default::default(),
            start: Default::default(),
            start_slot: Default::default(),
            start_egress: Default::default(),
            start_class: Default::default(),
            start_dws: Default::default(),
            posted: Default::default(),
            non_posted: Default::default(),
            completions: Default::default(),
            requests: Default::default(),
            backlogs: Default::default(),
            waiting: std::array::from_fn(|_| Default::default()),
            backlog_tlps: Constant::new(BACKLOG_TLPS.to_bits()),
            class_pointer: Default::default(),
            class_chosen: Default::default(),
            one_class: Constant::new(1u64.into()),
            one_slot: Constant::new(1u64.into()),
            taken_mask: Default::default(),
            released_mask: Default::default(),
            space_posted: Default::default(),
            space_non_posted: Default::default(),
            space_completion: Default::default(),
            at_posted: Default::default(),
            at_non_posted: Default::default(),
            at_completion: Default::default(),
            limit_posted: limit(1),
            limit_completion: limit(2),
            limit_non_posted: limit(3),
            half_sequence: Constant::new((1usize << (SEQUENCE_BITS - 1)).to_bits()),
            used: Default::default(),
            used_count: Default::default(),
            barriers: std::array::from_fn(|_| Default::default()),
            ordered: Default::default(),
            lengths: std::array::from_fn(|_| Default::default()),
            posted_in: std::array::from_fn(|_| Default::default()),
            posted_out: std::array::from_fn(|_| Default::default()),
            free: Default::default(),
            alloc: Default::default(),
            enqueue: Default::default(),
            offer_length: Default::default(),
            non_posted_barrier: std::array::from_fn(|_| Default::default()),
            completion_barrier: std::array::from_fn(|_| Default::default()),
            non_posted_gap: std::array::from_fn(|_| Default::default()),
            completion_gap: std::array::from_fn(|_| Default::default()),
            non_posted_ordered: std::array::from_fn(|_| Default::default()),
            completion_ordered: std::array::from_fn(|_| Default::default()),
            eligible_posted: std::array::from_fn(|_| Default::default()),
            eligible_non_posted: std::array::from_fn(|_| Default::default()),
            eligible_completion: std::array::from_fn(|_| Default::default()),
        }
    }
}

impl<const N: usize> Logic for VirtualOutputQueues<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, used, used_count, ordered, class_pointer);
        self.posted.clock.next = self.clock.val();
        self.non_posted.clock.next = self.clock.val();
        self.completions.clock.next = self.clock.val();
        for s in 0..SLOTS {
            self.barriers[s].clock.next = self.clock.val();
            self.barriers[s].d.next = self.barriers[s].q.val();
            self.lengths[s].clock.next = self.clock.val();
            self.lengths[s].d.next = self.lengths[s].q.val();
        }
        for e in 0..N {
            self.waiting[e].clock.next = self.clock.val();
            self.waiting[e].d.next = self.waiting[e].q.val();
            self.posted_in[e].clock.next = self.clock.val();
            self.posted_in[e].d.next = self.posted_in[e].q.val();
            self.posted_out[e].clock.next = self.clock.val();
            self.posted_out[e].d.next = self.posted_out[e].q.val();
        }

        // Taking a TLP: the lowest free slot, if the class may have it.
        self.free.next = !self.used.q.val();
        // x & -x keeps the lowest set bit.
        self.alloc.next = self.free.val() & (!self.free.val() + 1);
        self.alloc_slot.next = 0.into();
        for s in 0..SLOTS {
            if self.alloc.val().get_bit(s) {
                self.alloc_slot.next = s.to_bits();
            }
        }
        self.space_posted.next = self.used_count.q.val() < self.limit_posted.val();
        self.space_non_posted.next = self.used_count.q.val() < self.limit_non_posted.val();
        self.space_completion.next = self.used_count.q.val() < self.limit_completion.val();
        self.space.next = (bit_cast::<3, 1>(self.space_completion.val().into()) << 2)
            | (bit_cast::<3, 1>(self.space_non_posted.val().into()) << 1)
            | bit_cast::<3, 1>(self.space_posted.val().into());
        self.accept.next = false;
        if self.offer_class.val() == 0 {
            self.accept.next = self.space_posted.val();
        }
        if self.offer_class.val() == 1 {
            self.accept.next = self.space_non_posted.val();
        }
        if self.offer_class.val() == 2 {
            self.accept.next = self.space_completion.val();
        }
        self.enqueue.next = self.offer.val() & self.accept.val();
        // Data length (§2.2.1): Length when Fmt[1] says there is data, 0 encoding 1024.
        self.offer_length.next = 0.into();
        if self.offer_has_data.val() {
            self.offer_length.next = bit_cast::<LENGTH_BITS, 10>(self.offer_length_field.val());
            if self.offer_length_field.val() == 0 {
                self.offer_length.next = bits::<LENGTH_BITS>(1024);
            }
        }

        self.posted.push.next = self.enqueue.val() & (self.offer_class.val() == 0);
        self.non_posted.push.next = self.enqueue.val() & (self.offer_class.val() == 1);
        self.completions.push.next = self.enqueue.val() & (self.offer_class.val() == 2);
        self.posted.push_egress.next = self.offer_egress.val();
        self.non_posted.push_egress.next = self.offer_egress.val();
        self.completions.push_egress.next = self.offer_egress.val();
        self.posted.push_slot.next = self.alloc_slot.val();
        self.non_posted.push_slot.next = self.alloc_slot.val();
        self.completions.push_slot.next = self.alloc_slot.val();
        for s in 0..SLOTS {
            if self.enqueue.val() & self.alloc.val().get_bit(s) {
                self.lengths[s].d.next = self.offer_length.val();
                // The barrier: posted requests towards this egress that entered before.
                for e in 0..N {
                    if self.offer_egress.val().index() == e {
                        self.barriers[s].d.next = self.posted_in[e].q.val();
                    }
                }
            }
        }
        // D2b: a completion with Relaxed Ordering may pass posted requests.
        if self.enqueue.val() {
            // Negated by XOR, not `!`: Verilog widens `~x` to the width of
            // `ordered` before inverting it, which would set the bits above.
            self.ordered.d.next = self.ordered.q.val().replace_bit(
                self.alloc_slot.val().index(),
                ((self.offer_class.val() == 2) & self.offer_relaxed.val()) ^ true,
            );
        }
        for e in 0..N {
            if self.posted.push.val() & (self.offer_egress.val().index() == e) {
                self.posted_in[e].d.next = self.posted_in[e].q.val() + 1;
            }
        }
        self.taken_mask.next = 0.into();
        if self.enqueue.val() {
            self.taken_mask.next = self.alloc.val();
        }
        self.released_mask.next = 0.into();
        if self.freed.val() {
            self.released_mask.next = self.one_slot.val() << self.freed_slot.val();
        }
        self.used.d.next = (self.used.q.val() | self.taken_mask.val()) & !self.released_mask.val();
        if self.enqueue.val() & !self.freed.val() {
            self.used_count.d.next = self.used_count.q.val() + 1;
        }
        if !self.enqueue.val() & self.freed.val() {
            self.used_count.d.next = self.used_count.q.val() - 1;
        }

        // Ordering: the heads of the non-posted and completion queues wait
        // until every posted request that entered before them has started.
        for e in 0..N {
            self.non_posted_barrier[e].next = 0.into();
            self.completion_barrier[e].next = 0.into();
            self.non_posted_ordered[e].next = false;
            self.completion_ordered[e].next = false;
            for s in 0..SLOTS {
                if self.non_posted.head[e].val().index() == s {
                    self.non_posted_barrier[e].next = self.barriers[s].q.val();
                    self.non_posted_ordered[e].next = self.ordered.q.val().get_bit(s);
                }
                if self.completions.head[e].val().index() == s {
                    self.completion_barrier[e].next = self.barriers[s].q.val();
                    self.completion_ordered[e].next = self.ordered.q.val().get_bit(s);
                }
            }
            // Posted requests still ahead, modulo the counter's range.
            self.non_posted_gap[e].next =
                self.non_posted_barrier[e].val() - self.posted_out[e].q.val();
            self.completion_gap[e].next =
                self.completion_barrier[e].val() - self.posted_out[e].q.val();
            self.eligible_posted[e].next =
                self.posted.occupied.val().get_bit(e) & self.credit_posted.val().get_bit(e);
            self.eligible_non_posted[e].next = self.non_posted.occupied.val().get_bit(e)
                & self.credit_non_posted.val().get_bit(e)
                & !(self.non_posted_ordered[e].val()
                    & (self.non_posted_gap[e].val() != 0)
                    & (self.non_posted_gap[e].val() < self.half_sequence.val()));
            self.eligible_completion[e].next = self.completions.occupied.val().get_bit(e)
                & self.credit_completion.val().get_bit(e)
                & !(self.completion_ordered[e].val()
                    & (self.completion_gap[e].val() != 0)
                    & (self.completion_gap[e].val() < self.half_sequence.val()));
            self.requests.bits[e].next = self.idle.val()
                & (self.eligible_posted[e].val()
                    | self.eligible_non_posted[e].val()
                    | self.eligible_completion[e].val());
        }
        self.request.next = self.requests.vector.val();

        // Backlog: TLPs in per egress, counted as they join a queue and as they start.
        for e in 0..N {
            if (self.enqueue.val() & (self.offer_egress.val().index() == e))
                & !(self.grant.val() & (self.grant_egress.val().index() == e))
            {
                self.waiting[e].d.next = self.waiting[e].q.val() + 1;
            }
            if !(self.enqueue.val() & (self.offer_egress.val().index() == e))
                & (self.grant.val() & (self.grant_egress.val().index() == e))
            {
                self.waiting[e].d.next = self.waiting[e].q.val() - 1;
            }
            self.backlogs.bits[e].next = self.waiting[e].q.val() >= self.backlog_tlps.val();
        }
        self.backlogged.next = self.backlogs.vector.val();

        // Matched: pick a class among those eligible at the egress,
        // round-robin downward (after class c, the highest below c first).
        self.at_posted.next = false;
        self.at_non_posted.next = false;
        self.at_completion.next = false;
        for e in 0..N {
            if self.grant_egress.val().index() == e {
                self.at_posted.next = self.eligible_posted[e].val();
                self.at_non_posted.next = self.eligible_non_posted[e].val();
                self.at_completion.next = self.eligible_completion[e].val();
            }
        }
        self.class_chosen.next = 0.into();
        if self.at_non_posted.val() {
            self.class_chosen.next = 1.into();
        }
        if self.at_completion.val() {
            self.class_chosen.next = 2.into();
        }
        if self.at_non_posted.val() & (self.class_pointer.q.val() > 1) {
            self.class_chosen.next = 1.into();
        }
        if self.at_posted.val() & (self.class_pointer.q.val() > 0) {
            self.class_chosen.next = 0.into();
        }
        self.start.next = self.grant.val();
        self.start_egress.next = self.grant_egress.val();
        self.start_class.next = 0.into();
        if self.grant.val() {
            self.start_class.next = self.one_class.val() << self.class_chosen.val();
            self.class_pointer.d.next = self.class_chosen.val();
        }
        self.posted.pop.next = self.grant.val() & (self.class_chosen.val() == 0);
        self.non_posted.pop.next = self.grant.val() & (self.class_chosen.val() == 1);
        self.completions.pop.next = self.grant.val() & (self.class_chosen.val() == 2);
        self.posted.pop_egress.next = self.grant_egress.val();
        self.non_posted.pop_egress.next = self.grant_egress.val();
        self.completions.pop_egress.next = self.grant_egress.val();
        self.start_slot.next = 0.into();
        for e in 0..N {
            if self.grant_egress.val().index() == e {
                if self.class_chosen.val() == 0 {
                    self.start_slot.next = self.posted.head[e].val();
                    if self.grant.val() {
                        self.posted_out[e].d.next = self.posted_out[e].q.val() + 1;
                    }
                }
                if self.class_chosen.val() == 1 {
                    self.start_slot.next = self.non_posted.head[e].val();
                }
                if self.class_chosen.val() == 2 {
                    self.start_slot.next = self.completions.head[e].val();
                }
            }
        }
        self.start_dws.next = 0.into();
        for s in 0..SLOTS {
            if self.start_slot.val().index() == s {
                self.start_dws.next = self.lengths[s].q.val();
            }
        }
    }
}
