//! A port's ingress pipeline: parse, translate by the port's role, route, and hand the TLP to the switching core.
//!
//! This is weft-model's `Switch::ingress` up to the egress port: a TLP's
//! first beat is decoded, translated by the stage of the port's role
//! (`CONTROL.ROLE` of `weft_regs::csr::port`), and its result routed:
//!
//! - **host**: [`HostIngress`] decides memory requests (window
//!   translation), configuration requests and messages (to the CPU) and I/O
//!   (unsupported); a completion from the host (to an endpoint's read of
//!   host memory) gets its requester's fabric ID from the port's ID map
//!   (`host_to_fabric`; unknown: UnknownFunction) and the proxy ID as its
//!   completer, TD cleared (§2.7.1);
//! - **endpoint**: [`EndpointIngress`], with the port's owner and bus range;
//! - **fabric**: nothing is rewritten; I/O is Unsupported, messages routed
//!   neither by ID nor by address go to the CPU (§2.2.8, Table 2-20);
//! - disabled (ENABLE clear, or role 0): PortDisabled.
//!
//! The rewritten header is routed by address ([`AddressRouteTable`]:
//! memory requests, messages routed by address) or by ID
//! ([`BusRouteTable`], the bus in DW2\[31:24\]: completions' requester,
//! configuration requests' and ID-routed messages' target). A route to the
//! CPU sends the TLP there; no route and a port the switch lacks drop it.
//! So does the ingress port itself (RoutesToIngress: a port sends nothing
//! back where it came from), unless the port returns peer traffic
//! (`return_to_ingress`, weft-model's `Switch::returns_to_ingress`): an
//! endpoint port facing a conventional switch whose downstream ports
//! redirect peer requests and completions upstream (ACS P2P Request and
//! Completion Redirect, PCIe Base 6.0 §6.12.1.1, §7.7.11) sends a request
//! back out of it, and a completion only between two functions of one
//! owner host ([`EndpointIngress`]'s `completion_within_owner`), as a root
//! port returns redirected peer traffic. A disabled egress port takes a
//! TLP and drops it there ([`crate::port::PortEgress`]), where weft-model
//! counts that drop.
//!
//! **Stream.** The ingress is a pipeline of two beat registers
//! ([`TlpPipelineRegister`]), so that it takes a beat from the link every
//! cycle: `held` holds the beat the translation stage (one cycle) answers,
//! `deciding` the beat the route table (one cycle more) answers, with the
//! translation stage's answer for it beside it. Each stage is presented
//! the header of the beat its register is about to hold (the one before
//! it as it loads, its own while it holds), so its answer is always its
//! own beat's, whoever stalls; the route table thus looks up the next
//! TLP's header while the last one's beats still leave. At the end of the
//! pipeline a forwarded TLP streams to the core beat for beat (the first
//! beat with the rewritten header, `core_egress` and `core_class`), and
//! one for the CPU or dropped is taken and discarded, with a one-cycle
//! pulse on `to_cpu` or `dropped` (and `drop_reason`) as its first beat is
//! taken; an error message forwarded to its owner also pulses
//! `copy_to_cpu` (the fabric manager's event log). The header on
//! `core.dw0..dw3` during that pulse is the TLP's as it goes there, and
//! the `beat_*` outputs show the beat as it arrived. A forwarded TLP whose
//! translation cleared TD loses its digest DW on the way
//! ([`crate::port::DigestStrip`]). A TLP that must wait (below) waits at
//! the end of the pipeline, with the beat after it in `held` and the rest
//! on the link (`link.ready` low).
//!
//! **Header rules.** A header that breaks a receiver rule of PCIe Base 6.0
//! §2.2 ([`HeaderRules`]: reserved encodings, byte enables, 4 KiB
//! crossings, AtomicOp operands, I/O and Configuration restrictions,
//! reserved Completion Status, TC0-only messages) is Malformed and dropped
//! at its first beat, whatever the port's role, as weft-model drops any
//! header `weft_pcie` rejects.
//!
//! **Length.** A TLP whose payload and digest need more than one switching
//! slot ([`SLOT_BEATS`] beats) is Malformed, as a payload over
//! Max_Payload_Size is (PCIe Base 6.0 §2.2.2), and dropped by its header's
//! Length, whatever the port's role: weft-model's `Switch::set_slot_dw`.
//! So is a TLP whose first beat belies its Length (§2.2.2), as the model
//! finds any TLP whose bytes disagree with its Length: one whose payload
//! and digest fit a beat must end in its first beat with exactly those
//! DWs, and a longer one must not. When both lengths are over a beat the
//! mismatch shows only in a later beat, after the TLP's first beats were
//! cut through to the core. It leaves void (`nullify` on its last beat,
//! [`crate::stream`]), as a cut-through switch nullifies a TLP found bad
//! after it started to leave (PCIe Base 6.0 §3.6), with the DWs and beats
//! its Length needs, as hard IPs' transmit interfaces expect: a TLP that goes
//! on past its Length's last beat ends there, the rest of its beats on the
//! link discarded, and one that ends beats short is filled out with empty
//! beats. So a TLP never overruns its switching slot. A void TLP for the
//! CPU says so with its beats (`beat_void`), and the mailbox drops it. A
//! TLP whose link voids it (`nullify`) is treated as one whose beats
//! belie its Length. Only a digest DW that fills a beat alone, stripped
//! after translation ([`DigestStrip`]), leaves a mismatch in that beat
//! unvoided: the beat before it has left as the TLP's last.
//!
//! **Answers.** A dropped non-posted request is answered where weft-model's
//! `Switch::refuse` answers it ([`ErrorCompletion`]: not when malformed or
//! at a disabled port, but a configuration request at a disabled port not
//! yet `settled`, with Request Retry Status, §2.3.1, §6.6.1): as its first
//! beat is taken, `respond` pulses with the completion's header on
//! `response_dw0..2`
//! (the request's requester ID, tag, traffic class and attributes, the
//! port's `completer_id`, Byte Count and Lower Address of the whole
//! request, PCIe Base 6.0 §2.2.9, §2.3.1, §2.3.1.1), for the port's
//! egress to send back on this link. Such a request is taken only while
//! `response_room` says the egress can queue its answer; until then it
//! waits, so no answer is lost.
//!
//! **The management BAR.** A memory request that hits the switch's
//! management BAR (`management_high`, `management_base`: the 1 MiB CSR
//! window's fabric address) on a fabric or disabled port whose management
//! function decodes it (`management_enable`) is neither routed nor
//! dropped: it is an access to the switch's own registers (weft-model's
//! `CsrWindow::forward`). Its first beat waits at the end of the pipeline,
//! offered on `execute` with its header as it arrived (`beat_dw0..3`) and
//! its first payload DW (`execute_data`), until [`crate::top::ManagementBar`]
//! takes it (`execute_take`); a longer write's later beats are discarded.
//! It counts as received. Only a header the model cannot parse is not
//! executed: a Malformed one, or one whose first beat belies its Length; a
//! write longer than a switching slot is still the window's to refuse.
//!
//! **Fabric tags.** A host's non-posted memory request (read, locked read,
//! AtomicOp) that its window translates and a route sends on, out of a
//! port or to the CPU, travels under the fabric tag the port's
//! outstanding-request table offers (`fabric_tag`, T9 and T8 in DW0 bits
//! 23 and 19 and Tag\[7:0\] in DW1\[15:8\], PCIe Base 6.0 §2.2.6.2): as its
//! first beat is taken, `tag_request` pulses with where it goes
//! (`tag_request_cpu`, `tag_request_port`), for the table to record it
//! with the host's header as it arrived (`beat_dw0..3`). While the table
//! has no tag to offer (`tag_available` low) the request waits, as
//! weft-model's `Switch::ingress` pushes back. A request refused after
//! its route is known (a port the switch lacks, or its own) takes no tag.
//!
//! **To the CPU.** A TLP for the CPU, or forwarded and copied to it,
//! leaves the ingress only as fast as the management path takes it: each of
//! its beats is offered on `cpu_offer` (the first with the header as the
//! CPU gets it on `core`) and taken only with `cpu_take`, once the
//! mailbox holds the beat's DWs ([`crate::top::MailboxFeed`]). Until then it
//! waits, so a TLP for the CPU is never lost while another port's is
//! queued.
//!
//! **Counting.** As its last beat is taken, every TLP but a malformed one
//! (only a drop, as weft-model counts it) pulses `received` with its class
//! and bytes on the wire as it arrived, whatever becomes of it, and a TLP
//! dropped pulses `dropped`: the inputs of the port's
//! [`crate::counters::PortCounters`]. Counting at the last beat is what
//! lets a TLP whose later beat belies its Length count as the model
//! counts it, a Malformed drop alone. Everything else a TLP does (`to_cpu`,
//! `respond`, `tag_request`) happens as its first beat is taken.

use rust_hdl::prelude::*;
use weft_regs::capacity;
use weft_regs::csr::port;

use crate::csr::CsrTarget;
use crate::header_decode::{HeaderDecoder, WIRE_BYTES_BITS};
use crate::header_rules::HeaderRules;
use crate::isolation::{
    ErrorCompletion, STATUS_BITS, STATUS_REQUEST_RETRY, STATUS_UNSUPPORTED_REQUEST,
};
use crate::port::digest::DigestStrip;
use crate::port::registers::ROLE_BITS;
use crate::stream::{TlpPipelineRegister, TlpSink, TlpSource, EMPTY_BITS};
use crate::switching::{PORT_BITS, SLOT_BEATS};
use crate::tables::address_route::PORT_BITS as ROUTE_PORT_BITS;
use crate::tables::id_map::ID_BITS;
use crate::tables::outstanding::TAG_BITS;
use crate::tables::{AddressRouteTable, BusRouteTable, IdMap};
use crate::translate::endpoint_ingress::{HOST_BITS, SWIZZLE_BITS};
use crate::translate::host_ingress::{drop_reason_code, DROP_REASON_BITS};
use crate::translate::{EndpointIngress, HostIngress, IngressDestination};

/// Beats a port's ingress holds between its link and its decision: a beat
/// each for the translation stage and the route tables (see **Stream**).
pub const PIPELINE_BEATS: usize = 2;

/// The ingress pipeline of one port with `W`-bit payload, in a switch of `N` ports.
#[derive(LogicBlock)]
pub struct PortIngress<const W: usize, const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Programming and read-back of the port's windows, function owners and
    /// ID map, and of this port's copy of the switch's route tables.
    pub csr: CsrTarget,
    /// TLPs from the link.
    pub link: TlpSink<W>,
    /// TLPs to the switching core, their headers rewritten.
    pub core: TlpSource<W>,
    /// With the first beat on `core`: the egress port.
    pub core_egress: Signal<Out, Bits<PORT_BITS>>,
    /// With the first beat on `core`: the class (`crate::switching::CLASS_POSTED` …).
    pub core_class: Signal<Out, Bits<2>>,
    /// The TLP whose first beat is taken goes to the management CPU, with the header on `core`.
    pub to_cpu: Signal<Out, Bit>,
    /// The TLP whose first beat is taken is also copied to the CPU, as its header on `core` says.
    pub copy_to_cpu: Signal<Out, Bit>,
    /// A beat of a TLP for the CPU (or copied to it) waits on the link for
    /// `cpu_take`; with its first beat, the header as the CPU gets it is on `core`.
    pub cpu_offer: Signal<Out, Bit>,
    /// With the first beat's `cpu_offer`: the TLP goes to the CPU twice
    /// (routed there, and copied as an error message, as weft-model delivers it).
    pub cpu_twice: Signal<Out, Bit>,
    /// The management path holds every DW of the beat offered: the link may take it.
    pub cpu_take: Signal<In, Bit>,
    /// The beat at the end of the pipeline (whose first beat the other
    /// outputs decide on) leaves it this cycle: to the core, the CPU or nowhere.
    pub beat_taken: Signal<Out, Bit>,
    /// That beat's `eop`, as it arrived on the link.
    pub beat_eop: Signal<Out, Bit>,
    /// That beat is a later one of a TLP whose beats so far belie its Length
    /// (see **Length**): the TLP is void, and the management path drops it.
    pub beat_void: Signal<Out, Bit>,
    /// That beat's `empty`, as it arrived.
    pub beat_empty: Signal<Out, Bits<EMPTY_BITS>>,
    /// That beat's payload, as it arrived.
    pub beat_payload: Signal<Out, Bits<W>>,
    /// That beat's header DW0, as it arrived (a first beat's: the host's, for `tag_request`).
    pub beat_dw0: Signal<Out, Bits<32>>,
    /// That beat's header DW1, as it arrived.
    pub beat_dw1: Signal<Out, Bits<32>>,
    /// That beat's header DW2, as it arrived.
    pub beat_dw2: Signal<Out, Bits<32>>,
    /// That beat's header DW3, as it arrived.
    pub beat_dw3: Signal<Out, Bits<32>>,
    /// The TLP whose last beat is taken is dropped, for `drop_reason`
    /// (one whose later beat belied its Length, void where it went, too).
    pub dropped: Signal<Out, Bit>,
    /// Why: the index of the reason in weft-model's `DropReason::ALL`.
    pub drop_reason: Signal<Out, Bits<DROP_REASON_BITS>>,
    /// The TLP whose last beat is taken is counted as received (it is not malformed).
    pub received: Signal<Out, Bit>,
    /// Its class as it arrived (`crate::switching::CLASS_POSTED` …).
    pub received_class: Signal<Out, Bits<2>>,
    /// Its bytes on the wire as it arrived.
    pub received_bytes: Signal<Out, Bits<WIRE_BYTES_BITS>>,
    /// The request whose first beat is taken is dropped and answered with the completion below.
    pub respond: Signal<Out, Bit>,
    /// The Unsupported Request completion's header DW0.
    pub response_dw0: Signal<Out, Bits<32>>,
    /// Its header DW1.
    pub response_dw1: Signal<Out, Bits<32>>,
    /// Its header DW2.
    pub response_dw2: Signal<Out, Bits<32>>,
    /// The egress can queue an answer now; a request to answer waits until it can.
    pub response_room: Signal<In, Bit>,
    /// The port's outstanding-request table has a tag for a host's non-posted request.
    pub tag_available: Signal<In, Bit>,
    /// The tag it has.
    pub fabric_tag: Signal<In, Bits<TAG_BITS>>,
    /// A host's non-posted request whose first beat is taken leaves under `fabric_tag`: record it.
    pub tag_request: Signal<Out, Bit>,
    /// With `tag_request`: the request went to the management CPU.
    pub tag_request_cpu: Signal<Out, Bit>,
    /// With `tag_request`: the port it was routed out of, unless `tag_request_cpu`.
    pub tag_request_port: Signal<Out, Bits<ROUTE_PORT_BITS>>,
    /// COMPLETER_ID of this port: the completer of its answers.
    pub completer_id: Signal<In, Bits<ID_BITS>>,
    /// CONTROL.ENABLE of this port.
    pub enable: Signal<In, Bit>,
    /// CONTROL.ROLE of this port.
    pub role: Signal<In, Bits<ROLE_BITS>>,
    /// CONTROL.SETTLED of this port.
    pub settled: Signal<In, Bit>,
    /// CONTROL.P2P_REQUEST_REDIRECT of this port.
    pub p2p_request_redirect: Signal<In, Bit>,
    /// CONTROL.RETURN_TO_INGRESS of this port.
    pub return_to_ingress: Signal<In, Bit>,
    /// CONTROL.INTX_SWIZZLE\[1:0\] of this port.
    pub intx_swizzle: Signal<In, Bits<SWIZZLE_BITS>>,
    /// HOST.PROXY_ID of this port.
    pub proxy_id: Signal<In, Bits<ID_BITS>>,
    /// OWNER.BOUND of this port.
    pub owner_bound: Signal<In, Bit>,
    /// OWNER.HOST_INDEX of this port.
    pub owner_host: Signal<In, Bits<HOST_BITS>>,
    /// OWNER.PROXY_ID of this port.
    pub owner_proxy_id: Signal<In, Bits<ID_BITS>>,
    /// BUSES.FIRST of this port.
    pub bus_first: Signal<In, Bits<8>>,
    /// BUSES.LAST of this port.
    pub bus_last: Signal<In, Bits<8>>,
    /// This port's management function decodes the management BAR (its bit of MANAGEMENT_BAR_LOW.ENABLE).
    pub management_enable: Signal<In, Bit>,
    /// MANAGEMENT_BAR_LOW.BASE: the management BAR's address bits 31:20.
    pub management_base: Signal<In, Bits<12>>,
    /// MANAGEMENT_BAR_HIGH: the management BAR's address bits 63:32.
    pub management_high: Signal<In, Bits<32>>,
    /// A request for the management BAR waits at the end of the pipeline, its header on `beat_dw0..3`.
    pub execute: Signal<Out, Bit>,
    /// With `execute`: its first payload DW (a write's data).
    pub execute_data: Signal<Out, Bits<32>>,
    /// The management BAR takes the request offered on `execute`.
    pub execute_take: Signal<In, Bit>,
    original: HeaderDecoder,
    rules: HeaderRules,
    routed: HeaderDecoder,
    host: HostIngress<{ capacity::WINDOWS_PER_PORT }>,
    endpoint: EndpointIngress<{ capacity::WINDOWS_PER_PORT }>,
    id_map: IdMap<{ capacity::BOUND_FUNCTIONS_PER_HOST }>,
    addresses: AddressRouteTable<{ capacity::ADDRESS_ROUTES }>,
    buses: BusRouteTable,
    strip: DigestStrip<W>,
    answer: ErrorCompletion,
    held: TlpPipelineRegister<W>,
    deciding: TlpPipelineRegister<W>,
    translated_dw0: DFF<Bits<32>>,
    translated_dw1: DFF<Bits<32>>,
    translated_dw2: DFF<Bits<32>>,
    translated_dw3: DFF<Bits<32>>,
    translated_destination: DFF<Bits<2>>,
    translated_reason: DFF<Bits<DROP_REASON_BITS>>,
    translated_copy: DFF<Bit>,
    translated_needs_tag: DFF<Bit>,
    translated_returns: DFF<Bit>,
    translated_by_id: DFF<Bit>,
    translated_class: DFF<Bits<2>>,
    translated_manage: DFF<Bit>,
    arrived_class: DFF<Bits<2>>,
    arrived_bytes: DFF<Bits<WIRE_BYTES_BITS>>,
    arrived_dws: DFF<Bits<12>>,
    dws_left: DFF<Bits<12>>,
    belied: DFF<Bit>,
    padding: DFF<Bit>,
    counted_dropped: DFF<Bit>,
    counted_reason: DFF<Bits<DROP_REASON_BITS>>,
    counted_class: DFF<Bits<2>>,
    counted_bytes: DFF<Bits<WIRE_BYTES_BITS>>,
    forwarding: DFF<Bit>,
    discarding: DFF<Bit>,
    copying: DFF<Bit>,
    this_port: Constant<Bits<ROUTE_PORT_BITS>>,
    port_count: Constant<Bits<ROUTE_PORT_BITS>>,
    role_host: Constant<Bits<ROLE_BITS>>,
    role_endpoint: Constant<Bits<ROLE_BITS>>,
    to_forward: Constant<Bits<2>>,
    to_cpu_code: Constant<Bits<2>>,
    to_drop: Constant<Bits<2>>,
    to_completion: Constant<Bits<2>>,
    malformed: Constant<Bits<DROP_REASON_BITS>>,
    port_disabled: Constant<Bits<DROP_REASON_BITS>>,
    unsupported: Constant<Bits<DROP_REASON_BITS>>,
    no_route: Constant<Bits<DROP_REASON_BITS>>,
    routes_to_ingress: Constant<Bits<DROP_REASON_BITS>>,
    unknown_function: Constant<Bits<DROP_REASON_BITS>>,
    digest_clear: Constant<Bits<32>>,
    slot_dws: Constant<Bits<12>>,
    beat_dws: Constant<Bits<12>>,
    first_dw_shift: Constant<Bits<16>>,
    tag_high_clear: Constant<Bits<32>>,
    tag_low_clear: Constant<Bits<32>>,
    unsupported_request: Constant<Bits<STATUS_BITS>>,
    request_retry: Constant<Bits<STATUS_BITS>>,
    presented_first: Signal<Local, Bit>,
    presented_dw0: Signal<Local, Bits<32>>,
    presented_dw1: Signal<Local, Bits<32>>,
    presented_dw2: Signal<Local, Bits<32>>,
    presented_dw3: Signal<Local, Bits<32>>,
    first: Signal<Local, Bit>,
    stage_destination: Signal<Local, Bits<2>>,
    stage_reason: Signal<Local, Bits<DROP_REASON_BITS>>,
    stage_copy: Signal<Local, Bit>,
    by_id: Signal<Local, Bit>,
    route_miss: Signal<Local, Bit>,
    route_cpu: Signal<Local, Bit>,
    route_port: Signal<Local, Bits<ROUTE_PORT_BITS>>,
    returns: Signal<Local, Bit>,
    forward: Signal<Local, Bit>,
    cpu: Signal<Local, Bit>,
    reason: Signal<Local, Bits<DROP_REASON_BITS>>,
    taken: Signal<Local, Bit>,
    cpu_hold: Signal<Local, Bit>,
    needs_tag: Signal<Local, Bit>,
    expected_dws: Signal<Local, Bits<12>>,
    one_beat: Signal<Local, Bit>,
    later: Signal<Local, Bit>,
    bad_beat: Signal<Local, Bit>,
    voided: Signal<Local, Bit>,
    ends: Signal<Local, Bit>,
    short: Signal<Local, Bit>,
    void_empty: Signal<Local, Bits<EMPTY_BITS>>,
    tag_wait: Signal<Local, Bit>,
    header_dw0: Signal<Local, Bits<32>>,
    header_dw1: Signal<Local, Bits<32>>,
    header_dw2: Signal<Local, Bits<32>>,
    header_dw3: Signal<Local, Bits<32>>,
    routing_bus: Signal<Local, Bits<8>>,
    leaving_dw0: Signal<Local, Bits<32>>,
    leaving_dw1: Signal<Local, Bits<32>>,
    copy: Signal<Local, Bit>,
    manage: Signal<Local, Bit>,
    unparsable: Signal<Local, Bit>,
    execute_here: Signal<Local, Bit>,
}

impl<const W: usize, const N: usize> PortIngress<W, N> {
    /// The ingress of port `port`.
    ///
    /// # Panics
    ///
    /// If the port is not one of the switch's, or the switch has more ports than the register map.
    pub fn new(port: u32) -> Self {
        assert!(N <= capacity::PORTS && (port as usize) < N);
        let destination = |d: IngressDestination| Constant::new(d.code().to_bits());
        let reason = |name: &str| Constant::new(drop_reason_code(name).to_bits());
        let role = |code: u32| Constant::new(code.to_bits());
        // §2.2.1: TD is DW0 bit 15.
        let digest_bit = 1u32 << 15;
        PortIngress {
            clock: Default::default(),
            csr: Default::default(),
            link: Default::default(),
            core: Default::default(),
            core_egress: Default::default(),
            core_class: Default::default(),
            to_cpu: Default::default(),
            copy_to_cpu: Default::default(),
            cpu_offer: Default::default(),
            cpu_twice: Default::default(),
            cpu_take: Default::default(),
            beat_taken: Default::default(),
            beat_eop: Default::default(),
            beat_void: Default::default(),
            beat_empty: Default::default(),
            beat_payload: Default::default(),
            beat_dw0: Default::default(),
            beat_dw1: Default::default(),
            beat_dw2: Default::default(),
            beat_dw3: Default::default(),
            dropped: Default::default(),
            drop_reason: Default::default(),
            received: Default::default(),
            received_class: Default::default(),
            received_bytes: Default::default(),
            respond: Default::default(),
            response_dw0: Default::default(),
            response_dw1: Default::default(),
            response_dw2: Default::default(),
            response_room: Default::default(),
            tag_available: Default::default(),
            fabric_tag: Default::default(),
            tag_request: Default::default(),
            tag_request_cpu: Default::default(),
            tag_request_port: Default::default(),
            completer_id: Default::default(),
            enable: Default::default(),
            role: Default::default(),
            settled: Default::default(),
            p2p_request_redirect: Default::default(),
            return_to_ingress: Default::default(),
            intx_swizzle: Default::default(),
            proxy_id: Default::default(),
            owner_bound: Default::default(),
            owner_host: Default::default(),
            owner_proxy_id: Default::default(),
            bus_first: Default::default(),
            bus_last: Default::default(),
            management_enable: Default::default(),
            management_base: Default::default(),
            management_high: Default::default(),
            execute: Default::default(),
            execute_data: Default::default(),
            execute_take: Default::default(),
            original: Default::default(),
            rules: Default::default(),
            routed: Default::default(),
            host: HostIngress::new(port),
            endpoint: EndpointIngress::new(port),
            id_map: IdMap::new(port),
            addresses: AddressRouteTable::new(),
            buses: BusRouteTable::new(),
            strip: Default::default(),
            answer: Default::default(),
            held: Default::default(),
            deciding: Default::default(),
            translated_dw0: Default::default(),
            translated_dw1: Default::default(),
            translated_dw2: Default::default(),
            translated_dw3: Default::default(),
            translated_destination: Default::default(),
            translated_reason: Default::default(),
            translated_copy: Default::default(),
            translated_needs_tag: Default::default(),
            translated_returns: Default::default(),
            translated_by_id: Default::default(),
            translated_class: Default::default(),
            translated_manage: Default::default(),
            arrived_class: Default::default(),
            arrived_bytes: Default::default(),
            arrived_dws: Default::default(),
            dws_left: Default::default(),
            belied: Default::default(),
            padding: Default::default(),
            counted_dropped: Default::default(),
            counted_reason: Default::default(),
            counted_class: Default::default(),
            counted_bytes: Default::default(),
            forwarding: Default::default(),
            discarding: Default::default(),
            copying: Default::default(),
            this_port: Constant::new(port.to_bits()),
            port_count: Constant::new(N.to_bits()),
            role_host: role(port::ROLE_HOST),
            role_endpoint: role(port::ROLE_ENDPOINT),
            to_forward: destination(IngressDestination::Forward),
            to_cpu_code: destination(IngressDestination::Cpu),
            to_drop: destination(IngressDestination::Drop),
            to_completion: destination(IngressDestination::Completion),
            malformed: reason("DROP_MALFORMED"),
            port_disabled: reason("DROP_PORT_DISABLED"),
            unsupported: reason("DROP_UNSUPPORTED"),
            no_route: reason("DROP_NO_ROUTE"),
            routes_to_ingress: reason("DROP_ROUTES_TO_INGRESS"),
            unknown_function: reason("DROP_UNKNOWN_FUNCTION"),
            digest_clear: Constant::new((!digest_bit).to_bits()),
            // §2.2.6.2: T9 and T8 are DW0 bits 23 and 19, Tag[7:0] DW1[15:8].
            slot_dws: Constant::new((SLOT_BEATS * W / 32).to_bits()),
            beat_dws: Constant::new((W / 32).to_bits()),
            // The first payload DW is the bus's most significant (crate::stream).
            first_dw_shift: Constant::new((W - 32).to_bits()),
            tag_high_clear: Constant::new((!(1u32 << 23 | 1u32 << 19)).to_bits()),
            tag_low_clear: Constant::new((!(0xffu32 << 8)).to_bits()),
            unsupported_request: Constant::new(STATUS_UNSUPPORTED_REQUEST.to_bits()),
            request_retry: Constant::new(STATUS_REQUEST_RETRY.to_bits()),
            presented_first: Default::default(),
            presented_dw0: Default::default(),
            presented_dw1: Default::default(),
            presented_dw2: Default::default(),
            presented_dw3: Default::default(),
            first: Default::default(),
            stage_destination: Default::default(),
            stage_reason: Default::default(),
            stage_copy: Default::default(),
            by_id: Default::default(),
            route_miss: Default::default(),
            route_cpu: Default::default(),
            route_port: Default::default(),
            returns: Default::default(),
            forward: Default::default(),
            cpu: Default::default(),
            reason: Default::default(),
            taken: Default::default(),
            cpu_hold: Default::default(),
            needs_tag: Default::default(),
            expected_dws: Default::default(),
            one_beat: Default::default(),
            later: Default::default(),
            bad_beat: Default::default(),
            voided: Default::default(),
            ends: Default::default(),
            short: Default::default(),
            void_empty: Default::default(),
            tag_wait: Default::default(),
            header_dw0: Default::default(),
            header_dw1: Default::default(),
            header_dw2: Default::default(),
            header_dw3: Default::default(),
            routing_bus: Default::default(),
            leaving_dw0: Default::default(),
            leaving_dw1: Default::default(),
            copy: Default::default(),
            manage: Default::default(),
            unparsable: Default::default(),
            execute_here: Default::default(),
        }
    }
}

impl<const W: usize, const N: usize> Logic for PortIngress<W, N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            translated_dw0,
            translated_dw1,
            translated_dw2,
            translated_dw3,
            translated_destination,
            translated_reason,
            translated_copy,
            translated_needs_tag,
            translated_returns,
            translated_by_id,
            translated_class,
            translated_manage,
            arrived_class,
            arrived_bytes,
            arrived_dws,
            dws_left,
            belied,
            padding,
            counted_dropped,
            counted_reason,
            counted_class,
            counted_bytes,
            forwarding,
            discarding,
            copying
        );
        self.host.clock.next = self.clock.val();
        self.endpoint.clock.next = self.clock.val();
        self.id_map.clock.next = self.clock.val();
        self.addresses.clock.next = self.clock.val();
        self.buses.clock.next = self.clock.val();
        self.held.clock.next = self.clock.val();
        self.deciding.clock.next = self.clock.val();

        // The CSR bus reaches every table; their answers combine by OR (crate::csr).
        self.host.csr.address.next = self.csr.address.val();
        self.host.csr.write.next = self.csr.write.val();
        self.host.csr.write_data.next = self.csr.write_data.val();
        self.host.csr.read.next = self.csr.read.val();
        self.endpoint.csr.address.next = self.csr.address.val();
        self.endpoint.csr.write.next = self.csr.write.val();
        self.endpoint.csr.write_data.next = self.csr.write_data.val();
        self.endpoint.csr.read.next = self.csr.read.val();
        self.id_map.csr.address.next = self.csr.address.val();
        self.id_map.csr.write.next = self.csr.write.val();
        self.id_map.csr.write_data.next = self.csr.write_data.val();
        self.id_map.csr.read.next = self.csr.read.val();
        self.addresses.csr.address.next = self.csr.address.val();
        self.addresses.csr.write.next = self.csr.write.val();
        self.addresses.csr.write_data.next = self.csr.write_data.val();
        self.addresses.csr.read.next = self.csr.read.val();
        self.buses.csr.address.next = self.csr.address.val();
        self.buses.csr.write.next = self.csr.write.val();
        self.buses.csr.write_data.next = self.csr.write_data.val();
        self.buses.csr.read.next = self.csr.read.val();
        self.csr.read_valid.next = self.host.csr.read_valid.val()
            | self.endpoint.csr.read_valid.val()
            | self.id_map.csr.read_valid.val()
            | self.addresses.csr.read_valid.val()
            | self.buses.csr.read_valid.val();
        self.csr.read_data.next = self.host.csr.read_data.val()
            | self.endpoint.csr.read_data.val()
            | self.id_map.csr.read_data.val()
            | self.addresses.csr.read_data.val()
            | self.buses.csr.read_data.val();

        // The pipeline: `held` is the beat the translation stages answer,
        // `deciding` the beat the route tables answer, with the
        // translation's answer beside it in the `translated_*` registers.
        self.held.upstream.valid.next = self.link.valid.val();
        self.held.upstream.sop.next = self.link.sop.val();
        self.held.upstream.eop.next = self.link.eop.val();
        self.held.upstream.empty.next = self.link.empty.val();
        self.held.upstream.nullify.next = self.link.nullify.val();
        self.held.upstream.dw0.next = self.link.dw0.val();
        self.held.upstream.dw1.next = self.link.dw1.val();
        self.held.upstream.dw2.next = self.link.dw2.val();
        self.held.upstream.dw3.next = self.link.dw3.val();
        self.held.upstream.payload.next = self.link.payload.val();
        self.link.ready.next = self.held.upstream.ready.val();
        self.deciding.upstream.valid.next = self.held.downstream.valid.val();
        self.deciding.upstream.sop.next = self.held.downstream.sop.val();
        self.deciding.upstream.eop.next = self.held.downstream.eop.val();
        self.deciding.upstream.empty.next = self.held.downstream.empty.val();
        self.deciding.upstream.nullify.next = self.held.downstream.nullify.val();
        self.deciding.upstream.dw0.next = self.held.downstream.dw0.val();
        self.deciding.upstream.dw1.next = self.held.downstream.dw1.val();
        self.deciding.upstream.dw2.next = self.held.downstream.dw2.val();
        self.deciding.upstream.dw3.next = self.held.downstream.dw3.val();
        self.deciding.upstream.payload.next = self.held.downstream.payload.val();
        self.held.downstream.ready.next = self.deciding.upstream.ready.val();

        // The translation stages answer after a clock edge the header
        // presented before it: the link's as `held` takes it, else the one
        // `held` keeps, so their answer is always `held`'s.
        self.presented_first.next =
            self.held.downstream.valid.val() & self.held.downstream.sop.val();
        self.presented_dw0.next = self.held.downstream.dw0.val();
        self.presented_dw1.next = self.held.downstream.dw1.val();
        self.presented_dw2.next = self.held.downstream.dw2.val();
        self.presented_dw3.next = self.held.downstream.dw3.val();
        if self.held.upstream.ready.val() {
            self.presented_first.next = self.link.valid.val() & self.link.sop.val();
            self.presented_dw0.next = self.link.dw0.val();
            self.presented_dw1.next = self.link.dw1.val();
            self.presented_dw2.next = self.link.dw2.val();
            self.presented_dw3.next = self.link.dw3.val();
        }
        self.original.dw0.next = self.held.downstream.dw0.val();
        self.original.dw1.next = self.held.downstream.dw1.val();
        self.original.dw2.next = self.held.downstream.dw2.val();
        self.original.dw3.next = self.held.downstream.dw3.val();
        self.rules.tlp_type.next = self.original.tlp_type.val();
        self.rules.traffic_class.next = self.original.traffic_class.val();
        self.rules.attributes_low.next = self.original.attributes.val().get_bits::<2>(0);
        self.rules.processing_hints.next = self.original.hints.val().get_bit(0);
        self.rules.has_data.next = self.original.has_data.val();
        self.rules.byte_enables.next = self.original.byte_enables.val();
        self.rules.completion_status.next = self.held.downstream.dw1.val().get_bits::<3>(13);
        self.rules.memory.next = self.original.memory.val();
        self.rules.io.next = self.original.io.val();
        self.rules.configuration.next = self.original.configuration.val();
        self.rules.completion.next = self.original.completion.val();
        self.rules.message.next = self.original.message.val();
        self.rules.reserved.next = self.original.reserved.val();
        self.rules.four_dw.next = self.original.four_dw.val();
        self.rules.length_dw.next = self.original.length_dw.val();
        self.rules.address_high.next = self.original.address_high.val();
        self.rules.page_offset.next = self.original.address_low.val().get_bits::<12>(0);
        self.host.valid.next = self.presented_first.val();
        self.host.dw0.next = self.presented_dw0.val();
        self.host.dw1.next = self.presented_dw1.val();
        self.host.dw2.next = self.presented_dw2.val();
        self.host.dw3.next = self.presented_dw3.val();
        self.host.proxy_id.next = self.proxy_id.val();
        self.endpoint.valid.next = self.presented_first.val();
        self.endpoint.dw0.next = self.presented_dw0.val();
        self.endpoint.dw1.next = self.presented_dw1.val();
        self.endpoint.dw2.next = self.presented_dw2.val();
        self.endpoint.dw3.next = self.presented_dw3.val();
        self.endpoint.enabled.next =
            self.enable.val() & (self.role.val() == self.role_endpoint.val());
        self.endpoint.bound.next = self.owner_bound.val();
        self.endpoint.owner_host.next = self.owner_host.val();
        self.endpoint.owner_proxy_id.next = self.owner_proxy_id.val();
        self.endpoint.bus_first.next = self.bus_first.val();
        self.endpoint.bus_last.next = self.bus_last.val();
        self.endpoint.p2p_request_redirect.next = self.p2p_request_redirect.val();
        self.endpoint.intx_swizzle.next = self.intx_swizzle.val();
        // A host's completion names its requester by the host's ID (§2.2.9, DW2[31:16]).
        self.id_map.host_query.next = self.host.header_dw2.val().get_bits::<ID_BITS>(16);
        self.id_map.fabric_query.next = bits::<ID_BITS>(0);

        // Fabric (and disabled) ports: the header as received, decided by its type.
        self.header_dw0.next = self.held.downstream.dw0.val();
        self.header_dw1.next = self.held.downstream.dw1.val();
        self.header_dw2.next = self.held.downstream.dw2.val();
        self.header_dw3.next = self.held.downstream.dw3.val();
        self.stage_copy.next = false;
        self.stage_reason.next = bits::<DROP_REASON_BITS>(0);
        self.stage_destination.next = self.to_forward.val();
        if self.original.io.val() {
            self.stage_destination.next = self.to_drop.val();
            self.stage_reason.next = self.unsupported.val();
        }
        // §2.2.8: routed by address (001b) or by ID (010b); any other routing ends at the CPU.
        if self.original.message.val()
            & (self.original.message_routing.val() != 1)
            & (self.original.message_routing.val() != 2)
        {
            self.stage_destination.next = self.to_cpu_code.val();
        }
        if !self.enable.val() | (self.role.val() == 0) {
            self.stage_destination.next = self.to_drop.val();
            self.stage_reason.next = self.port_disabled.val();
        }
        self.needs_tag.next = false;
        if self.enable.val() & (self.role.val() == self.role_host.val()) {
            self.header_dw0.next = self.host.header_dw0.val();
            self.header_dw1.next = self.host.header_dw1.val();
            // A non-posted memory request leaves under a fabric tag (§2.2.6.2).
            self.needs_tag.next = (self.host.destination.val() == self.to_forward.val())
                & self.original.memory.val()
                & self.original.non_posted.val();
            self.header_dw2.next = self.host.header_dw2.val();
            self.header_dw3.next = self.host.header_dw3.val();
            self.stage_destination.next = self.host.destination.val();
            self.stage_reason.next = self.host.drop_reason.val();
            if self.host.destination.val() == self.to_completion.val() {
                self.header_dw0.next = self.host.header_dw0.val() & self.digest_clear.val();
                self.header_dw1.next = (bit_cast::<32, ID_BITS>(self.proxy_id.val()) << 16)
                    | bit_cast::<32, 16>(self.host.header_dw1.val().get_bits::<16>(0));
                self.header_dw2.next = (bit_cast::<32, ID_BITS>(self.id_map.fabric.val()) << 16)
                    | bit_cast::<32, 16>(self.host.header_dw2.val().get_bits::<16>(0));
                if !self.id_map.fabric_found.val() {
                    self.stage_destination.next = self.to_drop.val();
                    self.stage_reason.next = self.unknown_function.val();
                }
            }
        }
        if self.enable.val() & (self.role.val() == self.role_endpoint.val()) {
            self.stage_copy.next = self.endpoint.copy_to_cpu.val();
            self.header_dw0.next = self.endpoint.header_dw0.val();
            self.header_dw1.next = self.endpoint.header_dw1.val();
            self.header_dw2.next = self.endpoint.header_dw2.val();
            self.header_dw3.next = self.endpoint.header_dw3.val();
            self.stage_destination.next = self.endpoint.destination.val();
            self.stage_reason.next = self.endpoint.drop_reason.val();
        }
        // The DWs after the header: Length's data (§2.2.2) and the digest
        // (§2.2.3), the decoder's wire length less the header's 3 or 4 DWs.
        self.expected_dws.next =
            bit_cast::<12, WIRE_BYTES_BITS>(self.original.wire_bytes.val() >> 2)
                - bits::<12>(3)
                - bit_cast::<12, 1>(self.original.four_dw.val().into());
        // A header that breaks a receiver rule of §2.2 ([`HeaderRules`]) is
        // Malformed, whatever the port's role. §2.2.2: so is a payload over
        // Max_Payload_Size, which one switching slot bounds, and a TLP
        // whose first beat belies its Length (§2.2.2: the data must be
        // what Length says): one that fits a beat must end there with
        // exactly its DWs, a longer one must not end there.
        self.one_beat.next = self.expected_dws.val() <= self.beat_dws.val();
        self.unparsable.next = self.rules.malformed.val()
            | (self.held.downstream.eop.val() != self.one_beat.val())
            | (self.held.downstream.eop.val() & self.held.downstream.nullify.val())
            | (self.held.downstream.eop.val()
                & ((bit_cast::<12, EMPTY_BITS>(self.held.downstream.empty.val())
                    + self.expected_dws.val())
                    != self.beat_dws.val()));
        // A memory request for the management BAR, at a fabric or disabled
        // port whose management function decodes it (its Memory Space
        // Enable, PCIe Base 6.0 §7.5.1.1.3), is the window's to execute,
        // whatever its length.
        self.manage.next = self.original.memory.val()
            & self.management_enable.val()
            & (self.original.address_high.val() == self.management_high.val())
            & (self.original.address_low.val().get_bits::<12>(20) == self.management_base.val())
            & !(self.enable.val()
                & ((self.role.val() == self.role_host.val())
                    | (self.role.val() == self.role_endpoint.val())));
        if self.unparsable.val()
            | ((self.expected_dws.val() > self.slot_dws.val()) & !self.manage.val())
        {
            self.stage_destination.next = self.to_drop.val();
            self.stage_reason.next = self.malformed.val();
            self.stage_copy.next = false;
        }

        // An endpoint port that returns peer traffic sends a request back
        // out of it, and a completion between functions of one owner.
        self.returns.next = self.enable.val()
            & (self.role.val() == self.role_endpoint.val())
            & self.return_to_ingress.val()
            & (!self.original.completion.val() | self.endpoint.completion_within_owner.val());

        // The route tables answer after a clock edge the header presented
        // before it: `held`'s as `deciding` takes it, else `deciding`'s, so
        // their answer is always `deciding`'s. Route the header as it will
        // leave: by ID for completions, configuration requests and
        // ID-routed messages (the bus in DW2[31:24], §2.2.6.2, §2.2.8),
        // else by address.
        self.routed.dw0.next = self.translated_dw0.q.val();
        self.routed.dw1.next = self.translated_dw1.q.val();
        self.routed.dw2.next = self.translated_dw2.q.val();
        self.routed.dw3.next = self.translated_dw3.q.val();
        self.routing_bus.next = self.translated_dw2.q.val().get_bits::<8>(24);
        if self.deciding.upstream.ready.val() {
            self.routed.dw0.next = self.header_dw0.val();
            self.routed.dw1.next = self.header_dw1.val();
            self.routed.dw2.next = self.header_dw2.val();
            self.routed.dw3.next = self.header_dw3.val();
            self.routing_bus.next = self.header_dw2.val().get_bits::<8>(24);
        }
        self.by_id.next = self.routed.completion.val()
            | self.routed.configuration.val()
            | (self.routed.message.val() & (self.routed.message_routing.val() == 2));
        self.addresses.address_high.next = self.routed.address_high.val();
        self.addresses.address_low.next = self.routed.address_low.val();
        self.buses.bus.next = self.routing_bus.val();
        if self.deciding.upstream.ready.val() {
            self.translated_dw0.d.next = self.header_dw0.val();
            self.translated_dw1.d.next = self.header_dw1.val();
            self.translated_dw2.d.next = self.header_dw2.val();
            self.translated_dw3.d.next = self.header_dw3.val();
            self.translated_destination.d.next = self.stage_destination.val();
            self.translated_reason.d.next = self.stage_reason.val();
            self.translated_copy.d.next = self.stage_copy.val();
            self.translated_needs_tag.d.next = self.needs_tag.val();
            self.translated_returns.d.next = self.returns.val();
            self.translated_by_id.d.next = self.by_id.val();
            self.translated_class.d.next = self.routed.flow_class.val();
            self.arrived_class.d.next = self.original.flow_class.val();
            self.arrived_bytes.d.next = self.original.wire_bytes.val();
            self.arrived_dws.d.next = self.expected_dws.val();
            self.translated_manage.d.next = self.manage.val() & !self.unparsable.val();
        }

        // The decision on `deciding`'s first beat.
        self.first.next = self.deciding.downstream.valid.val()
            & self.deciding.downstream.sop.val()
            & !self.forwarding.q.val()
            & !self.discarding.q.val()
            & !self.padding.q.val();
        self.route_miss.next = self.addresses.miss.val();
        self.route_cpu.next = self.addresses.cpu.val();
        self.route_port.next = self.addresses.port.val();
        if self.translated_by_id.q.val() {
            self.route_miss.next = self.buses.miss.val();
            self.route_cpu.next = self.buses.cpu.val();
            self.route_port.next = self.buses.port.val();
        }
        self.forward.next = false;
        self.cpu.next = false;
        self.copy.next = self.translated_copy.q.val();
        self.reason.next = self.translated_reason.q.val();
        self.execute_here.next = self.translated_manage.q.val();
        if self.execute_here.val() {
            self.copy.next = false;
        } else if self.translated_destination.q.val() == self.to_cpu_code.val() {
            self.cpu.next = true;
        } else if self.translated_destination.q.val() != self.to_drop.val() {
            if self.route_miss.val() {
                self.reason.next = self.no_route.val();
                self.copy.next = false;
            } else if self.route_cpu.val() {
                self.cpu.next = true;
            } else if self.route_port.val() >= self.port_count.val() {
                self.reason.next = self.no_route.val();
            } else if (self.route_port.val() == self.this_port.val())
                & !self.translated_returns.q.val()
            {
                self.reason.next = self.routes_to_ingress.val();
            } else {
                self.forward.next = true;
            }
        }

        // A host's non-posted request leaves under the fabric tag offered as it leaves (§2.2.6.2).
        self.leaving_dw0.next = self.translated_dw0.q.val();
        self.leaving_dw1.next = self.translated_dw1.q.val();
        if self.translated_needs_tag.q.val() {
            self.leaving_dw0.next = (self.translated_dw0.q.val() & self.tag_high_clear.val())
                | (bit_cast::<32, 1>(self.fabric_tag.val().get_bits::<1>(9)) << 23)
                | (bit_cast::<32, 1>(self.fabric_tag.val().get_bits::<1>(8)) << 19);
            self.leaving_dw1.next = (self.translated_dw1.q.val() & self.tag_low_clear.val())
                | (bit_cast::<32, 8>(self.fabric_tag.val().get_bits::<8>(0)) << 8);
        }

        // §2.2.2: a later beat belies the Length when the TLP goes on past
        // the beat its DWs end in, or ends with another count of them (or
        // its link voids it). A forwarded TLP leaves void (`nullify`), its
        // first beats gone, in as many beats as its Length needs, which
        // hard IPs' transmit interfaces expect: one that goes on past its
        // Length ends at the core in that beat, the rest discarded; one
        // that ends beats short is filled out (`padding`).
        self.later.next = (self.forwarding.q.val() | self.discarding.q.val())
            & self.deciding.downstream.valid.val();
        self.bad_beat.next = self.dws_left.q.val() <= self.beat_dws.val();
        if self.deciding.downstream.eop.val() {
            self.bad_beat.next =
                ((bit_cast::<12, EMPTY_BITS>(self.deciding.downstream.empty.val())
                    + self.dws_left.q.val())
                    != self.beat_dws.val())
                    | self.deciding.downstream.nullify.val();
        }
        self.voided.next = self.belied.q.val() | (self.later.val() & self.bad_beat.val());
        self.short.next = self.later.val()
            & self.forwarding.q.val()
            & self.deciding.downstream.eop.val()
            & (self.dws_left.q.val() > self.beat_dws.val());
        self.ends.next = (self.deciding.downstream.eop.val() & !self.short.val())
            | (self.later.val()
                & self.forwarding.q.val()
                & !self.deciding.downstream.eop.val()
                & self.bad_beat.val());

        // A void TLP's last beat is as long as its Length makes it.
        self.void_empty.next =
            bit_cast::<EMPTY_BITS, 12>(self.beat_dws.val() - self.dws_left.q.val());

        // The stream: a forwarded TLP to the core, any other taken and discarded.
        self.strip.upstream.sop.next = self.deciding.downstream.sop.val();
        self.strip.upstream.eop.next = self.ends.val();
        self.strip.upstream.nullify.next = self.later.val() & self.voided.val() & self.ends.val();
        self.strip.upstream.empty.next = self.deciding.downstream.empty.val();
        if self.later.val() & self.voided.val() & self.ends.val() {
            self.strip.upstream.empty.next = self.void_empty.val();
        }
        self.strip.upstream.payload.next = self.deciding.downstream.payload.val();
        self.strip.upstream.dw0.next = self.leaving_dw0.val();
        self.strip.upstream.dw1.next = self.leaving_dw1.val();
        self.strip.upstream.dw2.next = self.translated_dw2.q.val();
        self.strip.upstream.dw3.next = self.translated_dw3.q.val();
        self.core_egress.next = self.route_port.val().get_bits::<PORT_BITS>(0);
        self.core_class.next = self.translated_class.q.val();
        // A request sent on needs a tag, and waits for one; one the route refuses takes none.
        self.tag_wait.next = self.first.val()
            & self.translated_needs_tag.q.val()
            & (self.forward.val() | self.cpu.val())
            & !self.tag_available.val();
        // A beat of a TLP for the CPU moves only once the management path holds it.
        self.cpu_offer.next = self.copying.q.val() & self.deciding.downstream.valid.val();
        self.cpu_twice.next = false;
        if self.first.val() & (self.cpu.val() | self.copy.val()) & !self.tag_wait.val() {
            self.cpu_offer.next = true;
            self.cpu_twice.next = self.cpu.val() & self.copy.val();
        }
        self.cpu_hold.next = self.cpu_offer.val() & !self.cpu_take.val();
        self.strip.upstream.valid.next = ((self.deciding.downstream.valid.val()
            & self.forwarding.q.val())
            | (self.first.val() & self.forward.val()))
            & !self.cpu_hold.val()
            & !self.tag_wait.val();
        // Filling out a TLP that ended beats short: beats of nothing to its
        // Length's last, which carries its last DWs and voids it.
        if self.padding.q.val() {
            self.strip.upstream.valid.next = true;
            self.strip.upstream.sop.next = false;
            self.strip.upstream.eop.next = self.dws_left.q.val() <= self.beat_dws.val();
            self.strip.upstream.nullify.next = self.dws_left.q.val() <= self.beat_dws.val();
            self.strip.upstream.empty.next = self.void_empty.val();
            self.strip.upstream.payload.next = 0.into();
        }
        // The answer to a request dropped here, from its header as received.
        self.answer.dropped.next =
            self.first.val() & !self.forward.val() & !self.cpu.val() & !self.execute_here.val();
        self.answer.drop_reason.next = self.reason.val();
        self.answer.dw0.next = self.deciding.downstream.dw0.val();
        self.answer.dw1.next = self.deciding.downstream.dw1.val();
        self.answer.dw2.next = self.deciding.downstream.dw2.val();
        self.answer.dw3.next = self.deciding.downstream.dw3.val();
        self.answer.completer_id.next = self.completer_id.val();
        self.answer.unsettled.next = !self.settled.val();
        self.answer.status.next = self.unsupported_request.val();
        if self.reason.val() == self.port_disabled.val() {
            self.answer.status.next = self.request_retry.val();
        }
        self.response_dw0.next = self.answer.completion_dw0.val();
        self.response_dw1.next = self.answer.completion_dw1.val();
        self.response_dw2.next = self.answer.completion_dw2.val();
        self.deciding.downstream.ready.next = self.discarding.q.val();
        if self.forwarding.q.val() {
            self.deciding.downstream.ready.next = self.strip.upstream.ready.val();
        }
        if self.first.val() {
            self.deciding.downstream.ready.next = (self.forward.val()
                & self.strip.upstream.ready.val())
                | (!self.forward.val() & (!self.answer.respond.val() | self.response_room.val()));
            if self.execute_here.val() {
                self.deciding.downstream.ready.next = self.execute_take.val();
            }
        }
        // A request for the management BAR, with its data DW.
        self.execute.next = self.first.val() & self.execute_here.val();
        self.execute_data.next =
            bit_cast::<32, W>(self.deciding.downstream.payload.val() >> self.first_dw_shift.val());
        if self.cpu_hold.val() | self.tag_wait.val() | self.padding.q.val() {
            self.deciding.downstream.ready.next = false;
        }
        // The digest DW leaves with TD (§2.7.1): a rewritten header clears it.
        self.strip.clock.next = self.clock.val();
        self.strip.drop_digest.next = self.deciding.downstream.dw0.val().get_bit(15)
            & !self.translated_dw0.q.val().get_bit(15);
        self.core.valid.next = self.strip.downstream.valid.val();
        self.core.sop.next = self.strip.downstream.sop.val();
        self.core.eop.next = self.strip.downstream.eop.val();
        self.core.empty.next = self.strip.downstream.empty.val();
        self.core.nullify.next = self.strip.downstream.nullify.val();
        self.core.dw0.next = self.strip.downstream.dw0.val();
        self.core.dw1.next = self.strip.downstream.dw1.val();
        self.core.dw2.next = self.strip.downstream.dw2.val();
        self.core.dw3.next = self.strip.downstream.dw3.val();
        self.core.payload.next = self.strip.downstream.payload.val();
        self.strip.downstream.ready.next = self.core.ready.val();
        self.beat_taken.next =
            self.deciding.downstream.valid.val() & self.deciding.downstream.ready.val();
        self.beat_eop.next = self.deciding.downstream.eop.val();
        self.beat_void.next = self.later.val() & self.voided.val();
        self.beat_empty.next = self.deciding.downstream.empty.val();
        self.beat_payload.next = self.deciding.downstream.payload.val();
        self.beat_dw0.next = self.deciding.downstream.dw0.val();
        self.beat_dw1.next = self.deciding.downstream.dw1.val();
        self.beat_dw2.next = self.deciding.downstream.dw2.val();
        self.beat_dw3.next = self.deciding.downstream.dw3.val();
        self.taken.next = self.first.val() & self.deciding.downstream.ready.val();
        self.to_cpu.next = self.taken.val() & self.cpu.val();
        self.respond.next = self.taken.val() & self.answer.respond.val();
        self.copy_to_cpu.next = self.taken.val() & self.copy.val();
        self.dropped.next = self.taken.val()
            & self.deciding.downstream.eop.val()
            & !self.cpu.val()
            & !self.forward.val()
            & !self.execute_here.val();
        self.tag_request.next = self.taken.val()
            & self.translated_needs_tag.q.val()
            & (self.forward.val() | self.cpu.val());
        self.tag_request_cpu.next = self.cpu.val();
        self.tag_request_port.next = self.route_port.val();
        self.drop_reason.next = self.reason.val();
        self.received.next = self.taken.val()
            & self.deciding.downstream.eop.val()
            & !(self.dropped.val() & (self.reason.val() == self.malformed.val()));
        self.received_class.next = self.arrived_class.q.val();
        self.received_bytes.next = self.arrived_bytes.q.val();
        // A longer TLP counts as its last beat is taken: as the first beat
        // said, unless a later one belied its Length, which makes it Malformed.
        if self.taken.val() & !self.deciding.downstream.eop.val() {
            self.counted_dropped.d.next =
                !self.cpu.val() & !self.forward.val() & !self.execute_here.val();
            self.counted_reason.d.next = self.reason.val();
            self.counted_class.d.next = self.arrived_class.q.val();
            self.counted_bytes.d.next = self.arrived_bytes.q.val();
            self.dws_left.d.next = self.arrived_dws.q.val() - self.beat_dws.val();
            self.belied.d.next = false;
        }
        if self.later.val() & self.deciding.downstream.ready.val() {
            self.dws_left.d.next = self.dws_left.q.val() - self.beat_dws.val();
            self.belied.d.next = self.voided.val();
            if self.deciding.downstream.eop.val() {
                self.received.next = !(self.counted_dropped.q.val()
                    & (self.counted_reason.q.val() == self.malformed.val()))
                    & !self.voided.val();
                self.dropped.next = self.counted_dropped.q.val() | self.voided.val();
                self.drop_reason.next = self.counted_reason.q.val();
                if self.voided.val() {
                    self.drop_reason.next = self.malformed.val();
                }
                self.received_class.next = self.counted_class.q.val();
                self.received_bytes.next = self.counted_bytes.q.val();
            }
        }

        if self.taken.val() & !self.deciding.downstream.eop.val() {
            self.forwarding.d.next = self.forward.val();
            self.discarding.d.next = !self.forward.val();
            self.copying.d.next = self.cpu.val() | self.copy.val();
        }
        if self.later.val() & self.deciding.downstream.ready.val() & self.ends.val() {
            self.forwarding.d.next = false;
            self.discarding.d.next = !self.deciding.downstream.eop.val();
        }
        if self.short.val() & self.deciding.downstream.ready.val() {
            self.forwarding.d.next = false;
            self.padding.d.next = true;
        }
        if self.padding.q.val() & self.strip.upstream.ready.val() {
            self.dws_left.d.next = self.dws_left.q.val() - self.beat_dws.val();
            self.padding.d.next = self.dws_left.q.val() > self.beat_dws.val();
        }
        if self.later.val()
            & self.deciding.downstream.ready.val()
            & self.deciding.downstream.eop.val()
        {
            self.copying.d.next = false;
        }
    }
}
