//! A port's egress: TLPs from the switching core to the link, translated back into a host's terms on a host port.
//!
//! On a host port (`CONTROL.ENABLE` with role host) every TLP passes
//! [`HostEgress`] (weft-model's `Switch::egress`): its first beat is held
//! one cycle while the stage answers, then it goes out with the rewritten
//! header, or is taken and discarded with a pulse on `dropped` (and
//! `drop_reason`). An INTx message goes out only if the port's
//! [`VirtualWires`] say it changes the pin's collapsed state (§2.2.8.1);
//! one that does not is discarded without a drop, as the model sends
//! nothing for it. Endpoint and fabric ports send every TLP as it is, with
//! no added latency. A port that passes no traffic (ENABLE clear, or role
//! disabled) takes every TLP routed to it and discards it, with a pulse on
//! `dropped` for PortDisabled as its first beat is taken, whatever its
//! link does: weft-model's egress drops it so. A TLP whose host
//! translation cleared TD loses its digest DW on the way to the link
//! ([`crate::port::DigestStrip`]).
//!
//! **Credit given back.** The switching core reports a TLP's credit for
//! this link as it commits the TLP here (`SwitchCore::egress_consume`),
//! before the host stage has seen it. A TLP the stage then discards (a
//! drop, or an INTx message that changes no wire) never reaches the link,
//! so its partner never counts it and never returns its credit (PCIe Base
//! 6.0 §2.6.1.2: a receiver counts only the TLPs it receives): as its first
//! beat is taken, `refund` pulses its class bit with its data DWs on
//! `refund_dws`, for the link's credit counter to take them back. A port
//! that passes no traffic gives nothing back: the top reports no credit
//! for a TLP committed to it.
//!
//! A TLP the ingress voided after its first beats left (`nullify` on its
//! last beat, [`crate::stream`]) goes out void, for the link to nullify.
//! Every TLP's last beat taken by the link pulses `sent` with its class
//! and bytes on the wire as it left, unless the TLP is void (its receiver
//! discards it, so it was never sent), and every cycle the link has a
//! beat offered and does not take it raises `stall`: the inputs of the
//! port's [`crate::counters::PortCounters`].
//!
//! The Unsupported Request completions the port's ingress owes for the
//! requests it refused leave on this link too: the ingress pushes them
//! (`respond`, while `response_room`) into an [`ErrorCompletionQueue`]
//! between the translated stream and the link, which sends them between
//! TLPs when the link partner has completion credit
//! (`completion_credit`), reports the credit taken on `response_consume`
//! in a cycle the switching core reports none for this egress
//! (`core_consumes`), and whatever the port's ENABLE says: weft-model
//! sends the answer as it refuses the request. They count as sent like
//! any TLP leaving here, as the model counts them. So does the answer to
//! a request for the management BAR that came in on this port
//! (`executed`, queued when `executed_queued` says, after the ingress's and the
//! timeouts' answers; [`crate::top::ManagementBar`]), which may carry one
//! data DW and reports it on `response_consume_dws`.
//!
//! Last before the link, the TLP the management CPU injects for this port
//! (`injected`) joins between TLPs ([`InjectMerge`]), as it is (no egress
//! translation, whatever ENABLE and the role say: weft-model's
//! `Switch::inject`), once the link partner has credit for its class
//! (`posted_credit`, `non_posted_credit`, `completion_credit`) and neither
//! the switching core nor an error completion reports credits in that
//! cycle; it reports its own on `inject_consume` and `inject_consume_dws`,
//! and counts as sent.
//!
//! **Outstanding requests.** The port's [`OutstandingTable`] records the
//! host's non-posted requests as its ingress sends them on (`tag_request`
//! …, under the tag it offers on `fabric_tag` while `tag_available`), and
//! looks each completion for the host up as the stage takes its first
//! beat: one that answers a request in flight goes to the host with the
//! host's requester ID and tag, and the last one of its request frees the
//! tag as its last beat passes, unless it leaves void (then the request
//! stays in flight, to time out, as weft-model never saw that
//! completion); any other is dropped as UnexpectedCompletion (weft-model's
//! `Switch::egress`). The table's answer, one cycle later, is kept while
//! the link keeps the completion waiting. The Completer Abort completions
//! of requests that time out (`now` and `timeout`, in the same ticks,
//! PCIe Base 6.0 §2.8) and the Unsupported Request completions of those
//! abandoned (`abandon`, for the requests routed out of `abandon_port`)
//! join the error completions the ingress owes, the ingress's first when
//! both come in one cycle.

use rust_hdl::prelude::*;
use weft_regs::capacity;
use weft_regs::csr::port;

use crate::csr::CsrTarget;
use crate::header_decode::{HeaderDecoder, WIRE_BYTES_BITS};
use crate::port::digest::DigestStrip;
use crate::port::error_completions::ErrorCompletionQueue;
use crate::port::injected::InjectMerge;
use crate::port::registers::ROLE_BITS;
use crate::stream::{TlpSink, TlpSource};
use crate::switching::LENGTH_BITS;
use crate::tables::address_route::PORT_BITS as ROUTE_PORT_BITS;
use crate::tables::id_map::ID_BITS;
use crate::tables::outstanding::{TAG_BITS, TIME_BITS};
use crate::tables::OutstandingTable;
use crate::translate::endpoint_ingress::HOST_BITS;
use crate::translate::host_ingress::{drop_reason_code, DROP_REASON_BITS};
use crate::translate::{EgressDestination, HostEgress, VirtualWires};

/// The egress of one port with `W`-bit payload.
#[derive(LogicBlock)]
pub struct PortEgress<const W: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Programming and read-back of the port's ID map.
    pub csr: CsrTarget,
    /// TLPs from the switching core.
    pub core: TlpSink<W>,
    /// TLPs to the link.
    pub link: TlpSource<W>,
    /// The TLP whose first beat is taken from the core is dropped, for `drop_reason`.
    pub dropped: Signal<Out, Bit>,
    /// Why: the index of the reason in weft-model's `DropReason::ALL`.
    pub drop_reason: Signal<Out, Bits<DROP_REASON_BITS>>,
    /// A TLP's last beat leaves on the link, and the TLP is not void (`nullify`).
    pub sent: Signal<Out, Bit>,
    /// Its class (`crate::switching::CLASS_POSTED` …).
    pub sent_class: Signal<Out, Bits<2>>,
    /// Its bytes on the wire.
    pub sent_bytes: Signal<Out, Bits<WIRE_BYTES_BITS>>,
    /// The link has a beat offered and does not take it.
    pub stall: Signal<Out, Bit>,
    /// A one-cycle pulse on the class bit of a TLP from the core that the
    /// host stage discards: its credit, reported by the core, goes back.
    pub refund: Signal<Out, Bits<3>>,
    /// With `refund`: its data length in DW.
    pub refund_dws: Signal<Out, Bits<LENGTH_BITS>>,
    /// CONTROL.ENABLE of this port.
    pub enable: Signal<In, Bit>,
    /// CONTROL.ROLE of this port.
    pub role: Signal<In, Bits<ROLE_BITS>>,
    /// HOST.INDEX of this port.
    pub host_index: Signal<In, Bits<HOST_BITS>>,
    /// HOST.PROXY_ID of this port.
    pub proxy_id: Signal<In, Bits<ID_BITS>>,
    /// COMPLETER_ID of this port.
    pub completer_id: Signal<In, Bits<ID_BITS>>,
    /// The port's ingress refused a request: queue this error completion for the link.
    pub respond: Signal<In, Bit>,
    /// Its header DW0.
    pub response_dw0: Signal<In, Bits<32>>,
    /// Its header DW1.
    pub response_dw1: Signal<In, Bits<32>>,
    /// Its header DW2.
    pub response_dw2: Signal<In, Bits<32>>,
    /// An error completion would be queued now; without room the ingress waits.
    pub response_room: Signal<Out, Bit>,
    /// The link partner has credit for a completion.
    pub completion_credit: Signal<In, Bit>,
    /// The switching core reports a TLP's credits for this egress in this cycle.
    pub core_consumes: Signal<In, Bit>,
    /// A one-cycle pulse: an error completion is committed to the link, one completion header credit.
    pub response_consume: Signal<Out, Bit>,
    /// With `response_consume`: its data DWs (1 for the management BAR's CplD, else 0).
    pub response_consume_dws: Signal<Out, Bits<LENGTH_BITS>>,
    /// The management BAR answers a request that came in on this port: queue this completion.
    pub executed: Signal<In, Bit>,
    /// Its header DW0.
    pub executed_dw0: Signal<In, Bits<32>>,
    /// Its header DW1.
    pub executed_dw1: Signal<In, Bits<32>>,
    /// Its header DW2.
    pub executed_dw2: Signal<In, Bits<32>>,
    /// Its data DW, if DW0 says it has one.
    pub executed_data: Signal<In, Bits<32>>,
    /// `executed` is queued in this cycle: the ingress and the timeouts have no answer to queue first.
    pub executed_queued: Signal<Out, Bit>,
    /// The TLP the management CPU injects for this link.
    pub injected: TlpSink<W>,
    /// The link partner has credit for a posted TLP.
    pub posted_credit: Signal<In, Bit>,
    /// The link partner has credit for a non-posted TLP.
    pub non_posted_credit: Signal<In, Bit>,
    /// A one-cycle pulse on the class bit of the injected TLP committed to the link.
    pub inject_consume: Signal<Out, Bits<3>>,
    /// Its data length in DW.
    pub inject_consume_dws: Signal<Out, Bits<LENGTH_BITS>>,
    /// The outstanding-request table has a fabric tag for a host's request.
    pub tag_available: Signal<Out, Bit>,
    /// The tag it has.
    pub fabric_tag: Signal<Out, Bits<TAG_BITS>>,
    /// The ingress sends a host's non-posted request on under `fabric_tag`: record it.
    pub tag_request: Signal<In, Bit>,
    /// Its header DW0 as the host sent it.
    pub tag_request_dw0: Signal<In, Bits<32>>,
    /// Its header DW1 as the host sent it.
    pub tag_request_dw1: Signal<In, Bits<32>>,
    /// Its header DW2 as the host sent it.
    pub tag_request_dw2: Signal<In, Bits<32>>,
    /// Its header DW3 as the host sent it.
    pub tag_request_dw3: Signal<In, Bits<32>>,
    /// It went to the management CPU.
    pub tag_request_cpu: Signal<In, Bit>,
    /// The port it was routed out of, unless it went to the CPU.
    pub tag_request_port: Signal<In, Bits<ROUTE_PORT_BITS>>,
    /// Complete, with Unsupported Request, every request in flight routed out of `abandon_port`.
    pub abandon: Signal<In, Bit>,
    /// The port whose endpoint is gone.
    pub abandon_port: Signal<In, Bits<ROUTE_PORT_BITS>>,
    /// An abandon sweep runs: no tag is offered meanwhile.
    pub abandoning: Signal<Out, Bit>,
    /// The free-running time counter.
    pub now: Signal<In, Bits<TIME_BITS>>,
    /// The completion timeout, in ticks of `now` (at least 1, below 2^31).
    pub timeout: Signal<In, Bits<TIME_BITS>>,
    stage: HostEgress<{ capacity::BOUND_FUNCTIONS_PER_HOST }>,
    wires: VirtualWires<{ capacity::BOUND_FUNCTIONS_PER_HOST }>,
    leaving: HeaderDecoder,
    strip: DigestStrip<W>,
    responses: ErrorCompletionQueue<W>,
    merge: InjectMerge<W>,
    outstanding: OutstandingTable,
    waited: DFF<Bit>,
    found: DFF<Bit>,
    found_requester: DFF<Bits<ID_BITS>>,
    found_tag: DFF<Bits<TAG_BITS>>,
    forwarding: DFF<Bit>,
    discarding: DFF<Bit>,
    sending_class: DFF<Bits<2>>,
    sending_bytes: DFF<Bits<WIRE_BYTES_BITS>>,
    role_host: Constant<Bits<ROLE_BITS>>,
    to_drop: Constant<Bits<2>>,
    to_virtual_wire: Constant<Bits<2>>,
    port_disabled: Constant<Bits<DROP_REASON_BITS>>,
    host: Signal<Local, Bit>,
    closed: Signal<Local, Bit>,
    first: Signal<Local, Bit>,
    forward: Signal<Local, Bit>,
    taken: Signal<Local, Bit>,
}

impl<const W: usize> PortEgress<W> {
    /// The egress of port `port`, its ID map answering that port's ID map registers.
    ///
    /// # Panics
    ///
    /// As [`HostEgress::new`].
    pub fn new(port: u32) -> Self {
        let destination = |d: EgressDestination| Constant::new(d.code().to_bits());
        PortEgress {
            clock: Default::default(),
            csr: Default::default(),
            core: Default::default(),
            link: Default::default(),
            dropped: Default::default(),
            drop_reason: Default::default(),
            sent: Default::default(),
            sent_class: Default::default(),
            sent_bytes: Default::default(),
            stall: Default::default(),
            refund: Default::default(),
            refund_dws: Default::default(),
            enable: Default::default(),
            role: Default::default(),
            host_index: Default::default(),
            proxy_id: Default::default(),
            completer_id: Default::default(),
            respond: Default::default(),
            response_dw0: Default::default(),
            response_dw1: Default::default(),
            response_dw2: Default::default(),
            response_room: Default::default(),
            completion_credit: Default::default(),
            core_consumes: Default::default(),
            response_consume: Default::default(),
            response_consume_dws: Default::default(),
            executed: Default::default(),
            executed_dw0: Default::default(),
            executed_dw1: Default::default(),
            executed_dw2: Default::default(),
            executed_data: Default::default(),
            executed_queued: Default::default(),
            injected: Default::default(),
            posted_credit: Default::default(),
            non_posted_credit: Default::default(),
            inject_consume: Default::default(),
            inject_consume_dws: Default::default(),
            tag_available: Default::default(),
            fabric_tag: Default::default(),
            tag_request: Default::default(),
            tag_request_dw0: Default::default(),
            tag_request_dw1: Default::default(),
            tag_request_dw2: Default::default(),
            tag_request_dw3: Default::default(),
            tag_request_cpu: Default::default(),
            tag_request_port: Default::default(),
            abandon: Default::default(),
            abandon_port: Default::default(),
            abandoning: Default::default(),
            now: Default::default(),
            timeout: Default::default(),
            stage: HostEgress::new(port),
            wires: Default::default(),
            leaving: Default::default(),
            strip: Default::default(),
            responses: Default::default(),
            merge: Default::default(),
            outstanding: Default::default(),
            waited: Default::default(),
            found: Default::default(),
            found_requester: Default::default(),
            found_tag: Default::default(),
            forwarding: Default::default(),
            discarding: Default::default(),
            sending_class: Default::default(),
            sending_bytes: Default::default(),
            role_host: Constant::new(port::ROLE_HOST.to_bits()),
            to_drop: destination(EgressDestination::Drop),
            to_virtual_wire: destination(EgressDestination::VirtualWire),
            port_disabled: Constant::new(drop_reason_code("DROP_PORT_DISABLED").to_bits()),
            host: Default::default(),
            closed: Default::default(),
            first: Default::default(),
            forward: Default::default(),
            taken: Default::default(),
        }
    }
}

impl<const W: usize> Logic for PortEgress<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            waited,
            forwarding,
            discarding,
            found,
            found_requester,
            found_tag,
            sending_class,
            sending_bytes
        );
        self.stage.clock.next = self.clock.val();
        self.wires.clock.next = self.clock.val();
        CsrTarget::link(&mut self.csr, &mut self.stage.csr);

        self.host.next = self.enable.val() & (self.role.val() == self.role_host.val());
        self.closed.next = !self.enable.val() | (self.role.val() == 0);
        self.first.next = self.core.valid.val()
            & self.core.sop.val()
            & !self.forwarding.q.val()
            & !self.discarding.q.val();
        self.stage.valid.next = self.first.val();
        self.stage.dw0.next = self.core.dw0.val();
        self.stage.dw1.next = self.core.dw1.val();
        self.stage.dw2.next = self.core.dw2.val();
        self.stage.dw3.next = self.core.dw3.val();
        self.stage.enabled.next = self.host.val();
        self.stage.host_index.next = self.host_index.val();
        self.stage.proxy_id.next = self.proxy_id.val();
        self.stage.completer_id.next = self.completer_id.val();

        // The outstanding-request table: tags for the ingress, a lookup
        // of each completion as the stage first sees it, its answer kept
        // while the completion waits for the link.
        self.outstanding.clock.next = self.clock.val();
        self.outstanding.request.next = self.tag_request.val();
        self.outstanding.request_dw0.next = self.tag_request_dw0.val();
        self.outstanding.request_dw1.next = self.tag_request_dw1.val();
        self.outstanding.request_dw2.next = self.tag_request_dw2.val();
        self.outstanding.request_dw3.next = self.tag_request_dw3.val();
        self.outstanding.request_cpu.next = self.tag_request_cpu.val();
        self.outstanding.request_port.next = self.tag_request_port.val();
        self.tag_available.next = self.outstanding.available.val();
        self.fabric_tag.next = self.outstanding.fabric_tag.val();
        // The stage's query is for a first beat on an enabled host port.
        self.outstanding.completion.next = self.stage.completion_query.val() & !self.waited.q.val();
        self.outstanding.completion_dw0.next = self.core.dw0.val();
        self.outstanding.completion_dw1.next = self.core.dw1.val();
        self.outstanding.completion_dw2.next = self.core.dw2.val();
        self.outstanding.proxy_id.next = self.proxy_id.val();
        self.outstanding.abandon.next = self.abandon.val();
        self.outstanding.abandon_port.next = self.abandon_port.val();
        self.abandoning.next = self.outstanding.abandoning.val();
        self.outstanding.now.next = self.now.val();
        self.outstanding.timeout.next = self.timeout.val();
        self.outstanding.completer_id.next = self.completer_id.val();
        self.stage.tag_found.next = self.found.q.val();
        self.stage.tag_requester.next = self.found_requester.q.val();
        self.stage.tag_host_tag.next = self.found_tag.q.val();
        if self.outstanding.looked_up.val() {
            self.stage.tag_found.next = self.outstanding.matched.val();
            self.stage.tag_requester.next = self.outstanding.host_requester.val();
            self.stage.tag_host_tag.next = self.outstanding.host_tag.val();
            self.found.d.next = self.outstanding.matched.val();
            self.found_requester.d.next = self.outstanding.host_requester.val();
            self.found_tag.d.next = self.outstanding.host_tag.val();
        }
        // §2.2.8: requester ID in DW1[31:16], Message Code[2:0] in DW1[2:0].
        self.wires.requester.next = self.core.dw1.val().get_bits::<ID_BITS>(16);
        self.wires.code.next = self.core.dw1.val().get_bits::<3>(0);

        // Pass-through unless a host port's stage says otherwise.
        self.strip.upstream.sop.next = self.core.sop.val();
        self.strip.upstream.eop.next = self.core.eop.val();
        self.strip.upstream.empty.next = self.core.empty.val();
        self.strip.upstream.nullify.next = self.core.nullify.val();
        self.strip.upstream.payload.next = self.core.payload.val();
        self.strip.upstream.dw0.next = self.core.dw0.val();
        self.strip.upstream.dw1.next = self.core.dw1.val();
        self.strip.upstream.dw2.next = self.core.dw2.val();
        self.strip.upstream.dw3.next = self.core.dw3.val();
        self.strip.upstream.valid.next = self.core.valid.val() & !self.discarding.q.val();
        self.core.ready.next = self.strip.upstream.ready.val() | self.discarding.q.val();
        self.refund.next = bits::<3>(0);
        self.refund_dws.next = bits::<LENGTH_BITS>(0);
        self.forward.next = true;
        self.dropped.next = false;
        self.drop_reason.next = self.stage.drop_reason.val();
        self.wires.valid.next = false;
        self.taken.next = false;
        self.waited.d.next = false;
        if self.host.val() & self.first.val() {
            self.strip.upstream.dw0.next = self.stage.header_dw0.val();
            self.strip.upstream.dw1.next = self.stage.header_dw1.val();
            self.strip.upstream.dw2.next = self.stage.header_dw2.val();
            self.strip.upstream.dw3.next = self.stage.header_dw3.val();
            if self.stage.destination.val() == self.to_drop.val() {
                self.forward.next = false;
            }
            if self.stage.destination.val() == self.to_virtual_wire.val() {
                self.forward.next = self.wires.send.val();
            }
            self.strip.upstream.valid.next = self.waited.q.val() & self.forward.val();
            self.core.ready.next =
                self.waited.q.val() & (self.strip.upstream.ready.val() | !self.forward.val());
            self.taken.next = self.waited.q.val() & self.core.ready.val();
            self.wires.valid.next =
                self.taken.val() & (self.stage.destination.val() == self.to_virtual_wire.val());
            self.dropped.next =
                self.taken.val() & (self.stage.destination.val() == self.to_drop.val());
            self.waited.d.next = !self.taken.val();
            if self.taken.val() & !self.forward.val() {
                self.refund.next = bits::<3>(1) << self.stage.flow_class.val();
                if self.stage.has_data.val() {
                    self.refund_dws.next = self.stage.length_dw.val();
                }
            }
            if self.taken.val() & !self.core.eop.val() {
                self.forwarding.d.next = self.forward.val();
                self.discarding.d.next = !self.forward.val();
            }
        }
        if self.closed.val() & self.first.val() {
            self.strip.upstream.valid.next = false;
            self.core.ready.next = true;
            self.taken.next = true;
            self.dropped.next = true;
            self.drop_reason.next = self.port_disabled.val();
            if !self.core.eop.val() {
                self.discarding.d.next = true;
            }
        }

        // The outstanding table frees a finished request's entry as its
        // completion's last beat passes, unless that beat leaves it void.
        self.outstanding.completion_end.next =
            self.core.valid.val() & self.core.ready.val() & self.core.eop.val();
        self.outstanding.completion_void.next = self.core.nullify.val();

        // The digest DW leaves with TD (§2.7.1): the host stage's header clears it.
        self.strip.clock.next = self.clock.val();
        self.strip.drop_digest.next = self.host.val()
            & self.core.dw0.val().get_bit(15)
            & !self.stage.header_dw0.val().get_bit(15);
        self.responses.upstream.valid.next = self.strip.downstream.valid.val();
        self.responses.upstream.sop.next = self.strip.downstream.sop.val();
        self.responses.upstream.eop.next = self.strip.downstream.eop.val();
        self.responses.upstream.empty.next = self.strip.downstream.empty.val();
        self.responses.upstream.nullify.next = self.strip.downstream.nullify.val();
        self.responses.upstream.dw0.next = self.strip.downstream.dw0.val();
        self.responses.upstream.dw1.next = self.strip.downstream.dw1.val();
        self.responses.upstream.dw2.next = self.strip.downstream.dw2.val();
        self.responses.upstream.dw3.next = self.strip.downstream.dw3.val();
        self.responses.upstream.payload.next = self.strip.downstream.payload.val();
        self.strip.downstream.ready.next = self.responses.upstream.ready.val();

        // The ingress's error completions, between TLPs.
        self.responses.clock.next = self.clock.val();
        // The ingress's answer first, then a timeout's, then the management BAR's.
        self.executed_queued.next = self.executed.val()
            & self.responses.room.val()
            & !self.respond.val()
            & !self.outstanding.error_valid.val();
        self.responses.push.next = self.respond.val()
            | (self.outstanding.error_valid.val() & self.responses.room.val())
            | self.executed_queued.val();
        self.responses.push_dw0.next = self.executed_dw0.val();
        self.responses.push_dw1.next = self.executed_dw1.val();
        self.responses.push_dw2.next = self.executed_dw2.val();
        self.responses.push_data.next = self.executed_data.val();
        if self.outstanding.error_valid.val() {
            self.responses.push_dw0.next = self.outstanding.error_dw0.val();
            self.responses.push_dw1.next = self.outstanding.error_dw1.val();
            self.responses.push_dw2.next = self.outstanding.error_dw2.val();
        }
        if self.respond.val() {
            self.responses.push_dw0.next = self.response_dw0.val();
            self.responses.push_dw1.next = self.response_dw1.val();
            self.responses.push_dw2.next = self.response_dw2.val();
        }
        self.outstanding.error_ready.next = self.responses.room.val() & !self.respond.val();
        self.response_room.next = self.responses.room.val();
        self.responses.credit.next = self.completion_credit.val();
        self.responses.other_consume.next = self.core_consumes.val();
        self.response_consume.next = self.responses.consume.val();
        self.response_consume_dws.next = self.responses.consume_dws.val();
        self.merge.upstream.valid.next = self.responses.downstream.valid.val();
        self.merge.upstream.sop.next = self.responses.downstream.sop.val();
        self.merge.upstream.eop.next = self.responses.downstream.eop.val();
        self.merge.upstream.empty.next = self.responses.downstream.empty.val();
        self.merge.upstream.nullify.next = self.responses.downstream.nullify.val();
        self.merge.upstream.dw0.next = self.responses.downstream.dw0.val();
        self.merge.upstream.dw1.next = self.responses.downstream.dw1.val();
        self.merge.upstream.dw2.next = self.responses.downstream.dw2.val();
        self.merge.upstream.dw3.next = self.responses.downstream.dw3.val();
        self.merge.upstream.payload.next = self.responses.downstream.payload.val();
        self.responses.downstream.ready.next = self.merge.upstream.ready.val();

        // The CPU's injected TLP, between TLPs.
        self.merge.clock.next = self.clock.val();
        self.merge.injected.valid.next = self.injected.valid.val();
        self.merge.injected.sop.next = self.injected.sop.val();
        self.merge.injected.eop.next = self.injected.eop.val();
        self.merge.injected.empty.next = self.injected.empty.val();
        self.merge.injected.nullify.next = self.injected.nullify.val();
        self.merge.injected.dw0.next = self.injected.dw0.val();
        self.merge.injected.dw1.next = self.injected.dw1.val();
        self.merge.injected.dw2.next = self.injected.dw2.val();
        self.merge.injected.dw3.next = self.injected.dw3.val();
        self.merge.injected.payload.next = self.injected.payload.val();
        self.injected.ready.next = self.merge.injected.ready.val();
        self.merge.credit_posted.next = self.posted_credit.val();
        self.merge.credit_non_posted.next = self.non_posted_credit.val();
        self.merge.credit_completion.next = self.completion_credit.val();
        self.merge.other_consume.next = self.core_consumes.val() | self.responses.consume.val();
        self.inject_consume.next = self.merge.consume.val();
        self.inject_consume_dws.next = self.merge.consume_dws.val();
        self.link.valid.next = self.merge.downstream.valid.val();
        self.link.sop.next = self.merge.downstream.sop.val();
        self.link.eop.next = self.merge.downstream.eop.val();
        self.link.empty.next = self.merge.downstream.empty.val();
        self.link.nullify.next = self.merge.downstream.nullify.val();
        self.link.dw0.next = self.merge.downstream.dw0.val();
        self.link.dw1.next = self.merge.downstream.dw1.val();
        self.link.dw2.next = self.merge.downstream.dw2.val();
        self.link.dw3.next = self.merge.downstream.dw3.val();
        self.link.payload.next = self.merge.downstream.payload.val();
        self.merge.downstream.ready.next = self.link.ready.val();

        // What the link takes, for the counters.
        self.leaving.dw0.next = self.link.dw0.val();
        self.leaving.dw1.next = self.link.dw1.val();
        self.leaving.dw2.next = self.link.dw2.val();
        self.leaving.dw3.next = self.link.dw3.val();
        // A TLP counts as it ends, when it is known not to be void.
        self.sent.next = self.link.valid.val()
            & self.link.ready.val()
            & self.link.eop.val()
            & !self.link.nullify.val();
        self.sent_class.next = self.sending_class.q.val();
        self.sent_bytes.next = self.sending_bytes.q.val();
        if self.link.sop.val() {
            self.sent_class.next = self.leaving.flow_class.val();
            self.sent_bytes.next = self.leaving.wire_bytes.val();
        }
        if self.link.valid.val() & self.link.ready.val() & self.link.sop.val() {
            self.sending_class.d.next = self.leaving.flow_class.val();
            self.sending_bytes.d.next = self.leaving.wire_bytes.val();
        }
        self.stall.next = self.link.valid.val() & !self.link.ready.val();

        if (self.forwarding.q.val() | self.discarding.q.val())
            & self.core.valid.val()
            & self.core.ready.val()
            & self.core.eop.val()
        {
            self.forwarding.d.next = false;
            self.discarding.d.next = false;
        }
    }
}
