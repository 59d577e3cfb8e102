//! The management CPU's injected TLP, joining a port's egress stream between TLPs.
//!
//! weft-model's `Switch::inject` sends the TLP the CPU wrote out of the
//! port it names, as it is: no egress translation, whatever the port's
//! role, counted as sent there. [`InjectMerge`] sits on the port's egress
//! stream last before the link, after the port's own error completions
//! ([`crate::port::ErrorCompletionQueue`]), and lets the injected TLP in
//! between the stream's TLPs, never inside one. **Order at the link:** at
//! a TLP boundary the injected TLP goes first, unless a TLP's first beat
//! is already offered to the link (an offered beat is never taken back).
//! It is committed only when the link partner has credit for its class
//! (posted, non-posted or completion, from its header: PCIe Base 6.0
//! §2.6.1) and no other TLP reports its credits to the link layer in that
//! cycle (`other_consume`): then `consume` pulses its class's bit for one
//! cycle with its data length in `consume_dws`, as the switching core
//! reports its TLPs, and from the next cycle the injected TLP's beats go
//! to the link as they come, the port's own stream waiting until its last
//! beat has left.
//!
//! The CPU speaks each port's own domain (a completion for a host's
//! configuration request, its own configuration requests to an
//! endpoint), so its TLPs form flows of their own, which no ordering rule
//! of §2.4.1 ties to the switching core's.

use rust_hdl::prelude::*;

use super::boundary::TlpBoundary;

use crate::header_decode::HeaderDecoder;
use crate::stream::{TlpSink, TlpSource};
use crate::switching::{CLASS_NON_POSTED, CLASS_POSTED, LENGTH_BITS};

/// Merges an injected TLP into a `W`-bit egress stream between its TLPs.
#[derive(LogicBlock)]
pub struct InjectMerge<const W: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The port's own TLPs, on their way to the link.
    pub upstream: TlpSink<W>,
    /// The injected TLP for this port's link.
    pub injected: TlpSink<W>,
    /// The link: the port's TLPs and the injected ones between them.
    pub downstream: TlpSource<W>,
    /// The link partner has credit for a posted TLP.
    pub credit_posted: Signal<In, Bit>,
    /// The link partner has credit for a non-posted TLP.
    pub credit_non_posted: Signal<In, Bit>,
    /// The link partner has credit for a completion.
    pub credit_completion: Signal<In, Bit>,
    /// Another TLP's credits are reported to the link layer in this cycle.
    pub other_consume: Signal<In, Bit>,
    /// A one-cycle pulse on the class bit of the injected TLP as it is committed.
    pub consume: Signal<Out, Bits<3>>,
    /// Its data length in DW.
    pub consume_dws: Signal<Out, Bits<LENGTH_BITS>>,
    header: HeaderDecoder,
    boundary: TlpBoundary,
    sending: DFF<Bit>,
    posted: Constant<Bits<2>>,
    non_posted: Constant<Bits<2>>,
    credit: Signal<Local, Bit>,
    commit: Signal<Local, Bit>,
}

impl<const W: usize> Default for InjectMerge<W> {
    fn default() -> Self {
        InjectMerge {
            clock: Default::default(),
            upstream: Default::default(),
            injected: Default::default(),
            downstream: Default::default(),
            credit_posted: Default::default(),
            credit_non_posted: Default::default(),
            credit_completion: Default::default(),
            other_consume: Default::default(),
            consume: Default::default(),
            consume_dws: Default::default(),
            header: Default::default(),
            boundary: Default::default(),
            sending: Default::default(),
            posted: Constant::new(CLASS_POSTED.to_bits()),
            non_posted: Constant::new(CLASS_NON_POSTED.to_bits()),
            credit: Default::default(),
            commit: Default::default(),
        }
    }
}

impl<const W: usize> Logic for InjectMerge<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, sending);
        self.header.dw0.next = self.injected.dw0.val();
        self.header.dw1.next = self.injected.dw1.val();
        self.header.dw2.next = self.injected.dw2.val();
        self.header.dw3.next = self.injected.dw3.val();
        self.credit.next = self.credit_completion.val();
        if self.header.flow_class.val() == self.posted.val() {
            self.credit.next = self.credit_posted.val();
        }
        if self.header.flow_class.val() == self.non_posted.val() {
            self.credit.next = self.credit_non_posted.val();
        }

        // At a TLP boundary, nothing offered yet: commit the injected TLP.
        self.commit.next = self.injected.valid.val()
            & self.injected.sop.val()
            & !self.sending.q.val()
            & self.boundary.free.val()
            & self.credit.val()
            & !self.other_consume.val();
        self.consume.next = bits::<3>(0);
        self.consume_dws.next = bits::<LENGTH_BITS>(0);
        if self.commit.val() {
            self.consume.next = bits::<3>(1) << self.header.flow_class.val();
            if self.header.has_data.val() {
                self.consume_dws.next = self.header.length_dw.val();
            }
        }

        // The port's TLPs pass while no injected TLP is committed or leaving.
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
        self.injected.ready.next = false;
        if self.sending.q.val() {
            self.downstream.valid.next = self.injected.valid.val();
            self.downstream.sop.next = self.injected.sop.val();
            self.downstream.eop.next = self.injected.eop.val();
            self.downstream.empty.next = self.injected.empty.val();
            self.downstream.nullify.next = self.injected.nullify.val();
            self.downstream.dw0.next = self.injected.dw0.val();
            self.downstream.dw1.next = self.injected.dw1.val();
            self.downstream.dw2.next = self.injected.dw2.val();
            self.downstream.dw3.next = self.injected.dw3.val();
            self.downstream.payload.next = self.injected.payload.val();
            self.injected.ready.next = self.downstream.ready.val();
        }

        // Where the port's own stream stands: inside a TLP, or its first beat offered.
        self.boundary.clock.next = self.clock.val();
        self.boundary.upstream_valid.next = self.upstream.valid.val();
        self.boundary.upstream_ready.next = self.upstream.ready.val();
        self.boundary.upstream_sop.next = self.upstream.sop.val();
        self.boundary.upstream_eop.next = self.upstream.eop.val();
        self.boundary.downstream_valid.next = self.downstream.valid.val();
        self.boundary.downstream_ready.next = self.downstream.ready.val();
        self.boundary.sending.next = self.sending.q.val();

        if self.commit.val() {
            self.sending.d.next = true;
        }
        if self.sending.q.val()
            & self.injected.valid.val()
            & self.injected.ready.val()
            & self.injected.eop.val()
        {
            self.sending.d.next = false;
        }
    }
}
