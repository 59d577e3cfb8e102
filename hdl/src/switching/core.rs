//! The switching core: N ingress ports' virtual output queues, an iSLIP matcher and a crossbar to N egress ports.

use rust_hdl::prelude::*;

use super::{Crossbar, IslipMatcher, SlotBuffer, VirtualOutputQueues, LENGTH_BITS, PORT_BITS};
use crate::stream::{TlpSink, TlpSource};

/// The switching core of the data plane, `N` ports of `W`-bit payload.
///
/// **Ingress.** Each port takes a TLP stream whose first beat comes with
/// the egress port (`ingress_egress`) and the flow-control class
/// (`ingress_class`, [`super::CLASS_POSTED`] and so on) that routing
/// decided; Relaxed Ordering is read from the header (DW0 bit 13, Attr\[1\],
/// PCIe Base 6.0 §2.2.6.4). A first beat is taken only while its class has
/// room (`ingress_space`, see [`VirtualOutputQueues`]); the link layer
/// advertises credits from that. TLPs may be at most
/// [`super::SLOT_BEATS`] beats long; the ingress parser drops longer ones.
///
/// **Egress credits.** Bit `j` of `egress_credit_posted` (and of the
/// non-posted and completion vectors) says egress `j`'s link partner holds
/// a header credit and data credits for the largest TLP of that class
/// (§2.6.1); an external counter per egress and class keeps it. When the core commits a TLP to the egress, `egress_consume`
/// pulses the class's bit for one cycle with the TLP's data length in DW
/// on `egress_consume_dws`, so the counter takes one header credit and
/// ⌈length / 4⌉ data credits; it must update `egress_credit` by the next
/// cycle. A TLP of a class without credit never starts.
///
/// **Latency.** A first beat taken in cycle t leaves the egress at t + 2
/// when the egress is free; beats follow one per cycle as they arrive.
#[derive(LogicBlock)]
pub struct SwitchCore<const W: usize, const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The ingress streams.
    pub ingress: [TlpSink<W>; N],
    /// Per ingress, on a first beat: the egress port index.
    pub ingress_egress: [Signal<In, Bits<PORT_BITS>>; N],
    /// Per ingress, on a first beat: the class code.
    pub ingress_class: [Signal<In, Bits<2>>; N],
    /// Per ingress: bit per class (posted, non-posted, completion), a TLP of it would be taken now.
    pub ingress_space: [Signal<Out, Bits<3>>; N],
    /// The egress streams.
    pub egress: [TlpSource<W>; N],
    /// Bit `j`: egress `j`'s link partner has credit for a posted TLP.
    pub egress_credit_posted: Signal<In, Bits<N>>,
    /// Bit `j`: egress `j`'s link partner has credit for a non-posted TLP.
    pub egress_credit_non_posted: Signal<In, Bits<N>>,
    /// Bit `j`: egress `j`'s link partner has credit for a completion.
    pub egress_credit_completion: Signal<In, Bits<N>>,
    /// Per egress: a one-cycle pulse on the class bit of a TLP committed to it.
    pub egress_consume: [Signal<Out, Bits<3>>; N],
    /// Per egress: the data length in DW of the TLP committed.
    pub egress_consume_dws: [Signal<Out, Bits<LENGTH_BITS>>; N],
    queues: [VirtualOutputQueues<N>; N],
    buffers: [SlotBuffer<W>; N],
    matcher: IslipMatcher<N>,
    crossbar: Crossbar<W, N>,
}

impl<const W: usize, const N: usize> Default for SwitchCore<W, N> {
    fn default() -> Self {
        SwitchCore {
            clock: Default::default(),
            ingress: std::array::from_fn(|_| Default::default()),
            ingress_egress: std::array::from_fn(|_| Default::default()),
            ingress_class: std::array::from_fn(|_| Default::default()),
            ingress_space: std::array::from_fn(|_| Default::default()),
            egress: std::array::from_fn(|_| Default::default()),
            egress_credit_posted: Default::default(),
            egress_credit_non_posted: Default::default(),
            egress_credit_completion: Default::default(),
            egress_consume: std::array::from_fn(|_| Default::default()),
            egress_consume_dws: std::array::from_fn(|_| Default::default()),
            queues: std::array::from_fn(|_| Default::default()),
            buffers: std::array::from_fn(|_| Default::default()),
            matcher: Default::default(),
            crossbar: Default::default(),
        }
    }
}

impl<const W: usize, const N: usize> Logic for SwitchCore<W, N> {
    #[hdl_gen]
    fn update(&mut self) {
        self.matcher.clock.next = self.clock.val();
        self.crossbar.clock.next = self.clock.val();
        for i in 0..N {
            self.queues[i].clock.next = self.clock.val();
            self.buffers[i].clock.next = self.clock.val();

            // Ingress: the queues take first beats; every taken beat is written.
            self.queues[i].offer.next = self.ingress[i].valid.val() & self.ingress[i].sop.val();
            self.queues[i].offer_class.next = self.ingress_class[i].val();
            self.queues[i].offer_egress.next = self.ingress_egress[i].val();
            self.queues[i].offer_relaxed.next = self.ingress[i].dw0.val().get_bit(13);
            self.queues[i].offer_has_data.next = self.ingress[i].dw0.val().get_bit(30);
            self.queues[i].offer_length_field.next = self.ingress[i].dw0.val().get_bits::<10>(0);
            self.ingress[i].ready.next = !self.ingress[i].sop.val() | self.queues[i].accept.val();
            self.ingress_space[i].next = self.queues[i].space.val();
            self.buffers[i].write.next = self.ingress[i].valid.val()
                & (!self.ingress[i].sop.val() | self.queues[i].accept.val());
            self.buffers[i].write_sop.next = self.ingress[i].sop.val();
            self.buffers[i].write_eop.next = self.ingress[i].eop.val();
            self.buffers[i].write_empty.next = self.ingress[i].empty.val();
            self.buffers[i].write_nullify.next = self.ingress[i].nullify.val();
            self.buffers[i].write_slot.next = self.queues[i].alloc_slot.val();
            self.buffers[i].write_dw0.next = self.ingress[i].dw0.val();
            self.buffers[i].write_dw1.next = self.ingress[i].dw1.val();
            self.buffers[i].write_dw2.next = self.ingress[i].dw2.val();
            self.buffers[i].write_dw3.next = self.ingress[i].dw3.val();
            self.buffers[i].write_payload.next = self.ingress[i].payload.val();
            self.queues[i].freed.next = self.buffers[i].freed.val();
            self.queues[i].freed_slot.next = self.buffers[i].freed_slot.val();

            // Requests and matches.
            self.queues[i].credit_posted.next = self.egress_credit_posted.val();
            self.queues[i].credit_non_posted.next = self.egress_credit_non_posted.val();
            self.queues[i].credit_completion.next = self.egress_credit_completion.val();
            self.queues[i].idle.next = self.buffers[i].idle.val();
            self.matcher.request[i].next = self.queues[i].request.val();
            self.matcher.backlogged[i].next = self.queues[i].backlogged.val();
            self.queues[i].grant.next = self.matcher.matched[i].val();
            self.queues[i].grant_egress.next = self.matcher.matched_egress[i].val();
            self.crossbar.matched[i].next = self.matcher.matched[i].val();
            self.crossbar.matched_egress[i].next = self.matcher.matched_egress[i].val();
            self.buffers[i].start.next = self.queues[i].start.val();
            self.buffers[i].start_slot.next = self.queues[i].start_slot.val();
            self.buffers[i].start_egress.next = self.queues[i].start_egress.val();

            // Read streams into the crossbar.
            self.crossbar.sources[i].valid.next = self.buffers[i].out_valid.val();
            self.crossbar.sources[i].sop.next = self.buffers[i].out_sop.val();
            self.crossbar.sources[i].eop.next = self.buffers[i].out_eop.val();
            self.crossbar.sources[i].empty.next = self.buffers[i].out_empty.val();
            self.crossbar.sources[i].nullify.next = self.buffers[i].out_nullify.val();
            self.crossbar.sources[i].dw0.next = self.buffers[i].out_dw0.val();
            self.crossbar.sources[i].dw1.next = self.buffers[i].out_dw1.val();
            self.crossbar.sources[i].dw2.next = self.buffers[i].out_dw2.val();
            self.crossbar.sources[i].dw3.next = self.buffers[i].out_dw3.val();
            self.crossbar.sources[i].payload.next = self.buffers[i].out_payload.val();
            self.crossbar.source_egress[i].next = self.buffers[i].out_egress.val();
            self.buffers[i].out_ready.next = self.crossbar.sources[i].ready.val();
            self.crossbar.source_busy[i].next = self.buffers[i].busy.val();
            self.crossbar.source_busy_egress[i].next = self.buffers[i].busy_egress.val();
        }

        for j in 0..N {
            self.egress[j].valid.next = self.crossbar.egress[j].valid.val();
            self.egress[j].sop.next = self.crossbar.egress[j].sop.val();
            self.egress[j].eop.next = self.crossbar.egress[j].eop.val();
            self.egress[j].empty.next = self.crossbar.egress[j].empty.val();
            self.egress[j].nullify.next = self.crossbar.egress[j].nullify.val();
            self.egress[j].dw0.next = self.crossbar.egress[j].dw0.val();
            self.egress[j].dw1.next = self.crossbar.egress[j].dw1.val();
            self.egress[j].dw2.next = self.crossbar.egress[j].dw2.val();
            self.egress[j].dw3.next = self.crossbar.egress[j].dw3.val();
            self.egress[j].payload.next = self.crossbar.egress[j].payload.val();
            self.crossbar.egress[j].ready.next = self.egress[j].ready.val();
            self.matcher.egress_free[j].next = self.crossbar.egress_free[j].val();
            // Credits: the class and length of a TLP committed to this egress now.
            self.egress_consume[j].next = 0.into();
            self.egress_consume_dws[j].next = 0.into();
            for i in 0..N {
                if self.matcher.matched[i].val()
                    & (self.matcher.matched_egress[i].val().index() == j)
                {
                    self.egress_consume[j].next = self.queues[i].start_class.val();
                    self.egress_consume_dws[j].next = self.queues[i].start_dws.val();
                }
            }
        }
    }
}
