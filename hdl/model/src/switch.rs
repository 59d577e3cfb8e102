//! One weft switch: TLPs in at a port, translated, checked, routed and out.
//!
//! The model handles one TLP at a time and completely, so it keeps the
//! order of every flow by construction; queueing, credits and timing belong
//! to the RTL and the link models. What it fixes is the function: which
//! TLP leaves which port, with which fields, and what is dropped and why.

use std::collections::BTreeSet;

use weft_pcie::tlp::{
    Body, CompletionStatus, FlowControlClass, Header, IntxPin, MemoryOp, MemoryRequest,
    MessageCode, MessageRouting,
};
use weft_pcie::Bdf;
use weft_regs::aperture::{HOST_ADDRESS_LIMIT, HOST_APERTURE_BASE, HOST_APERTURE_SHIFT};
use weft_regs::capacity;
use weft_regs::tables::LinkRequest;

use crate::counters::PortCounters;
use crate::isolation::{error_completion, refusal_status, DropReason};
use crate::outstanding::{Outstanding, OutstandingTable};
use crate::packet::Packet;
use crate::plane::Entries;
use crate::tables::{
    check_capacity, Destination, HostIndex, IdMapping, PortIndex, PortRole, PortTables,
    RouteTables, TableError, Window,
};

/// How long a host's non-posted request may wait before the switch completes it
/// with Completer Abort: 50 ms, the upper end of the spec's default completion
/// timeout range (PCIe Base 6.0 §2.8, 50 µs to 50 ms), as
/// `weft_regs::csr::global::COMPLETION_TIMEOUT` selects at reset.
pub const DEFAULT_COMPLETION_TIMEOUT_NS: u64 =
    weft_regs::csr::global::DEFAULT_COMPLETION_TIMEOUT_US as u64 * 1_000;

/// A TLP leaving the switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Where it goes: out of a port, or to the management CPU's mailbox.
    pub to: Destination,
    /// The port it came in on (for TLPs the switch synthesizes: the port that caused them).
    pub from: PortIndex,
    /// The TLP, in the terms of the domain it is delivered into.
    pub packet: Packet,
}

/// What became of one TLP offered at a port.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Forwarding {
    /// Every TLP that left because of it: the TLP itself (possibly to several
    /// places), and any completion synthesized for it.
    pub deliveries: Vec<Delivery>,
    /// Why it, or a copy of it, was dropped, if it was.
    pub dropped: Option<DropReason>,
}

/// Why the switch could not take a TLP at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IngressError {
    /// The port does not exist.
    NoSuchPort(PortIndex),
    /// The port cannot take this TLP now (its outstanding-request table is
    /// full); the link partner must hold it and offer it again, as flow
    /// control would make it (§2.6.1).
    Backpressure(PortIndex),
}

impl std::fmt::Display for IngressError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IngressError::NoSuchPort(port) => write!(f, "port {} does not exist", port.0),
            IngressError::Backpressure(port) => {
                write!(
                    f,
                    "port {} has every outstanding-request tag in use; offer the TLP again later",
                    port.0
                )
            }
        }
    }
}

impl std::error::Error for IngressError {}

/// Where an ingress stage sends a TLP, or why it drops it.
type Stage = Result<Vec<(Destination, Packet)>, DropReason>;

/// A switch: its tables, its per-host state and its counters.
#[derive(Clone, Debug)]
pub struct Switch {
    ports: Vec<PortTables>,
    routes: RouteTables,
    outstanding: Vec<OutstandingTable>,
    /// Per host port and INTx pin: the fabric functions asserting it (§2.2.8.1 virtual wires).
    intx: Vec<[BTreeSet<Bdf>; 4]>,
    counters: Vec<PortCounters>,
    now_ns: u64,
    completion_timeout_ns: u64,
    slot_dw: Option<usize>,
    /// Table entries as written one by one through [`weft_regs::tables::DataPlane`].
    pub(crate) entries: Entries,
    /// Completions the switch synthesized outside any ingress (abandoned requests),
    /// waiting for [`Switch::take_synthesized`].
    pub(crate) synthesized: Vec<Delivery>,
    /// Link requests written through [`weft_regs::tables::DataPlane::request_link`],
    /// in order, waiting for [`Switch::take_link_requests`].
    pub(crate) link_requests: Vec<(PortIndex, LinkRequest)>,
}

impl Switch {
    /// A switch with `ports` disabled ports and empty tables.
    pub fn new(ports: usize) -> Self {
        Switch {
            ports: vec![PortTables::default(); ports],
            routes: RouteTables::default(),
            outstanding: vec![OutstandingTable::default(); ports],
            intx: vec![Default::default(); ports],
            counters: vec![PortCounters::default(); ports],
            now_ns: 0,
            completion_timeout_ns: DEFAULT_COMPLETION_TIMEOUT_NS,
            slot_dw: None,
            entries: Entries::new(ports),
            synthesized: Vec::new(),
            link_requests: Vec::new(),
        }
    }

    /// The hot resets and retrainings asked of the ports' links since the
    /// last call, in order: the switch forwards no TLP differently for
    /// them, the links (the simulator's link models, the board's LTSSMs)
    /// carry them out.
    pub fn take_link_requests(&mut self) -> Vec<(PortIndex, LinkRequest)> {
        std::mem::take(&mut self.link_requests)
    }

    /// Completions synthesized since the last call for requests abandoned
    /// through [`weft_regs::tables::DataPlane::abandon_requests_to`].
    pub fn take_synthesized(&mut self) -> Vec<Delivery> {
        std::mem::take(&mut self.synthesized)
    }

    /// How many ports the switch has.
    pub fn ports(&self) -> usize {
        self.ports.len()
    }

    /// The routing tables as the switch reads them.
    pub fn routes(&self) -> &RouteTables {
        &self.routes
    }

    /// A port's tables as the switch reads them.
    pub fn port_tables(&self, port: PortIndex) -> Option<&PortTables> {
        self.ports.get(usize::from(port.0))
    }

    /// Programs one port's tables, checking them against the hardware capacities.
    pub fn set_port(&mut self, port: PortIndex, tables: PortTables) -> Result<(), TableError> {
        check_capacity("window", tables.windows.len(), capacity::WINDOWS_PER_PORT)?;
        check_capacity(
            "window owner",
            tables.window_owners.len(),
            capacity::WINDOWS_PER_PORT,
        )?;
        check_capacity(
            "ID map",
            tables.id_map.len(),
            capacity::BOUND_FUNCTIONS_PER_HOST,
        )?;
        check_capacity(
            "function owner",
            tables.function_owners.len(),
            capacity::FUNCTION_OWNERS_PER_PORT,
        )?;
        *self
            .ports
            .get_mut(usize::from(port.0))
            .ok_or(TableError::NoSuchPort(port))? = tables;
        Ok(())
    }

    /// Programs the switch-wide routing tables.
    pub fn set_routes(&mut self, routes: RouteTables) -> Result<(), TableError> {
        check_capacity(
            "address route",
            routes.addresses.len(),
            capacity::ADDRESS_ROUTES,
        )?;
        self.routes = routes;
        Ok(())
    }

    /// Sets how many DWs of payload, its digest included, the switch
    /// buffers per TLP (one switching slot): a TLP carrying more is
    /// Malformed, as one over Max_Payload_Size is (PCIe Base 6.0 §2.2.2),
    /// which the slot bounds. Unset, any TLP fits: the translation stages
    /// alone, which buffer nothing, are held to such a switch.
    pub fn set_slot_dw(&mut self, dw: usize) {
        self.slot_dw = Some(dw);
    }

    /// Sets how long a host's request may wait for its completion.
    pub fn set_completion_timeout(&mut self, timeout_ns: u64) {
        self.completion_timeout_ns = timeout_ns;
    }

    /// How long a host's request may wait for its completion, in nanoseconds.
    pub fn completion_timeout(&self) -> u64 {
        self.completion_timeout_ns
    }

    /// When the next host request in flight times out, in nanoseconds of
    /// model time: the oldest one's issue time plus the completion timeout,
    /// the earliest time [`Switch::advance_to`] completes it (PCIe Base 6.0
    /// §2.8). `None` while no request is in flight. A simulation wakes the
    /// switch then, so the Completer Abort leaves on time even when no TLP
    /// arrives to move the switch's time on.
    pub fn next_timeout_ns(&self) -> Option<u64> {
        self.outstanding
            .iter()
            .filter_map(OutstandingTable::oldest_issued_ns)
            .min()
            .map(|issued| issued.saturating_add(self.completion_timeout_ns))
    }

    /// Advances model time, completing every host request that has waited
    /// past the completion timeout with Completer Abort. Requests forwarded
    /// after it are stamped with this time.
    pub fn advance_to(&mut self, now_ns: u64) -> Vec<Delivery> {
        self.now_ns = self.now_ns.max(now_ns);
        let (now, timeout) = (self.now_ns, self.completion_timeout_ns);
        // Nothing due: no table is visited (a simulator calls this at
        // every TLP it offers).
        if self.next_timeout_ns().is_none_or(|due| due > now) {
            return Vec::new();
        }
        self.complete_outstanding(CompletionStatus::CompleterAbort, |_, entry| {
            now.saturating_sub(entry.issued_ns) >= timeout
        })
    }

    /// Completes, with Unsupported Request, every host request routed out of
    /// `port`: its endpoint is gone (surprise removal, unbind) and will never answer.
    pub fn abandon_requests_to(&mut self, port: PortIndex) -> Vec<Delivery> {
        self.complete_outstanding(CompletionStatus::UnsupportedRequest, |_, entry| {
            entry.target == Destination::Port(port)
        })
    }

    /// Completes, with Unsupported Request, the requests of the host on
    /// `host_port` routed out of `port`, and no other host's: one function
    /// of a port shared by several hosts is gone.
    ///
    /// Requests are tracked by the port they left by, not by the function
    /// they address, so the same host's requests to its other functions
    /// below `port` are completed too.
    pub fn abandon_host_requests_to(
        &mut self,
        host_port: PortIndex,
        port: PortIndex,
    ) -> Vec<Delivery> {
        self.complete_outstanding(CompletionStatus::UnsupportedRequest, |index, entry| {
            index == usize::from(host_port.0) && entry.target == Destination::Port(port)
        })
    }

    /// A port's counters.
    pub fn counters(&self, port: PortIndex) -> Option<&PortCounters> {
        self.counters.get(usize::from(port.0))
    }

    /// Sets every counter of `port` to zero, as `weft_regs::csr::counter_control` does.
    pub fn clear_counters(&mut self, port: PortIndex) {
        if let Some(counters) = self.counters.get_mut(usize::from(port.0)) {
            *counters = PortCounters::default();
        }
    }

    /// Host requests in flight through `port`.
    pub fn outstanding(&self, port: PortIndex) -> usize {
        self.outstanding
            .get(usize::from(port.0))
            .map_or(0, OutstandingTable::in_flight)
    }

    /// Sends a TLP from the management CPU straight out of `port`, as it is:
    /// the CPU speaks each port's own domain (completions to a host's
    /// configuration requests, MSI writes, its own configuration requests).
    pub fn inject(&mut self, port: PortIndex, bytes: &[u8]) -> Result<Delivery, InjectError> {
        let index = usize::from(port.0);
        if index >= self.ports.len() {
            return Err(InjectError::NoSuchPort(port));
        }
        let packet = Packet::parse(bytes).map_err(InjectError::Malformed)?;
        self.counters[index]
            .egress
            .count(packet.header.flow_control_class(), packet.wire_len());
        Ok(Delivery {
            to: Destination::Port(port),
            from: port,
            packet,
        })
    }

    /// Counts a TLP the port's management function takes at `port`'s
    /// ingress (`crate::csr_window::CsrWindow::forward`), as it arrives:
    /// before it is executed, so a read of the port's own counters counts
    /// the read itself, as a switch counting TLPs on receipt does.
    pub(crate) fn count_management_request(&mut self, port: PortIndex, request: &Packet) {
        self.counters[usize::from(port.0)]
            .ingress
            .count(request.header.flow_control_class(), request.wire_len());
    }

    /// Counts the completion `port`'s management function sends back out of the port.
    pub(crate) fn count_management_reply(&mut self, port: PortIndex, reply: &Packet) {
        self.counters[usize::from(port.0)]
            .egress
            .count(reply.header.flow_control_class(), reply.wire_len());
    }

    /// Offers one TLP, in wire order, at `port`'s ingress.
    pub fn ingress(&mut self, port: PortIndex, bytes: &[u8]) -> Result<Forwarding, IngressError> {
        let index = usize::from(port.0);
        let tables = self
            .ports
            .get(index)
            .ok_or(IngressError::NoSuchPort(port))?
            .clone();
        let mut forwarding = Forwarding::default();
        let packet = match Packet::parse(bytes) {
            Ok(packet)
                if self.slot_dw.is_none_or(|slot| {
                    packet.payload.len() / 4 + usize::from(packet.digest.is_some()) <= slot
                }) =>
            {
                packet
            }
            _ => {
                self.counters[index].drop(DropReason::Malformed);
                forwarding.dropped = Some(DropReason::Malformed);
                return Ok(forwarding);
            }
        };
        let original = packet.header;
        let stage = match tables.role {
            PortRole::Disabled => Err(DropReason::PortDisabled),
            PortRole::Host { proxy_id, .. } => {
                self.host_ingress(port, &tables, proxy_id, packet)?
            }
            PortRole::Endpoint { buses, .. } => self.endpoint_ingress(&tables, buses, packet),
            PortRole::Fabric => self.fabric_ingress(packet),
        };
        self.counters[index]
            .ingress
            .count(original.flow_control_class(), bytes.len());
        match stage {
            Ok(targets) => {
                for (to, packet) in targets {
                    self.deliver(port, to, packet, &original, &mut forwarding);
                }
            }
            Err(reason) => self.refuse(port, &tables, &original, reason, &mut forwarding),
        }
        Ok(forwarding)
    }

    /// Drops a TLP at its ingress and answers it there if it is a non-posted
    /// request, as [`refusal_status`] says.
    fn refuse(
        &mut self,
        port: PortIndex,
        tables: &PortTables,
        original: &Header,
        reason: DropReason,
        out: &mut Forwarding,
    ) {
        self.counters[usize::from(port.0)].drop(reason);
        out.dropped = Some(reason);
        let Some(status) = refusal_status(original, reason, tables.settled) else {
            return;
        };
        if let Some(reply) = error_completion(original, tables.completer_id, status) {
            self.counters[usize::from(port.0)]
                .egress
                .count(FlowControlClass::Completion, reply.wire_len());
            out.deliveries.push(Delivery {
                to: Destination::Port(port),
                from: port,
                packet: reply,
            });
        }
    }

    fn deliver(
        &mut self,
        from: PortIndex,
        to: Destination,
        packet: Packet,
        original: &Header,
        out: &mut Forwarding,
    ) {
        let Destination::Port(egress) = to else {
            out.deliveries.push(Delivery { to, from, packet });
            return;
        };
        if egress == from && !self.returns_to_ingress(from, &packet) {
            self.forget_request(from, &packet);
            let tables = self.ports[usize::from(from.0)].clone();
            self.refuse(from, &tables, original, DropReason::RoutesToIngress, out);
            return;
        }
        let Some(egress_tables) = self.ports.get(usize::from(egress.0)).cloned() else {
            self.forget_request(from, &packet);
            let tables = self.ports[usize::from(from.0)].clone();
            self.refuse(from, &tables, original, DropReason::NoRoute, out);
            return;
        };
        match self.egress(egress, &egress_tables, packet) {
            Ok(packets) => {
                for packet in packets {
                    self.counters[usize::from(egress.0)]
                        .egress
                        .count(packet.header.flow_control_class(), packet.wire_len());
                    out.deliveries.push(Delivery { to, from, packet });
                }
            }
            Err(reason) => {
                self.counters[usize::from(egress.0)].drop(reason);
                out.dropped = Some(reason);
            }
        }
    }

    /// Whether `port` sends `packet`, which came in on it and routes back
    /// to it, out of it again rather than drop it.
    ///
    /// Only an endpoint port with [`PortTables::return_to_ingress`] does: it
    /// faces a conventional switch whose downstream ports redirect peer
    /// traffic upstream (ACS P2P Request and Completion Redirect, PCIe Base
    /// 6.0 §6.12.1.1, §7.7.11), and returns that traffic downstream as a
    /// root port would. A request got here through a peer window of its
    /// requester's owner, so isolation is already checked. A completion
    /// goes back only between two functions of one owner: any other could
    /// answer no request the peer windows let through.
    fn returns_to_ingress(&self, port: PortIndex, packet: &Packet) -> bool {
        let tables = &self.ports[usize::from(port.0)];
        if !matches!(tables.role, PortRole::Endpoint { .. }) || !tables.return_to_ingress {
            return false;
        }
        match &packet.header.body {
            Body::Completion(completion) => {
                let owner = |id| tables.ownership(id).owner.map(|owner| owner.host);
                let requester = owner(completion.requester);
                requester.is_some() && requester == owner(completion.completer)
            }
            _ => true,
        }
    }

    /// A host request that was given a fabric tag but is not sent after all.
    fn forget_request(&mut self, from: PortIndex, packet: &Packet) {
        if let (PortRole::Host { proxy_id, .. }, Body::Memory(m)) =
            (self.ports[usize::from(from.0)].role, &packet.header.body)
        {
            if m.op != MemoryOp::Write && m.requester == proxy_id {
                self.outstanding[usize::from(from.0)].cancel(m.tag);
            }
        }
    }

    /// Host ingress: host IDs and addresses become fabric ones (DESIGN.md, "Domains and translation").
    fn host_ingress(
        &mut self,
        port: PortIndex,
        tables: &PortTables,
        proxy_id: Bdf,
        mut packet: Packet,
    ) -> Result<Stage, IngressError> {
        let header = packet.header;
        let stage = match &mut packet.header.body {
            // The virtual switch is the firmware's: configuration requests and
            // messages from the host go to its mailbox (DESIGN.md, "Configuration requests").
            Body::Config(_) | Body::Message(_) => Ok(vec![(Destination::Cpu, packet)]),
            Body::Io(_) => Err(DropReason::Unsupported),
            // The host completing an endpoint's read of host memory.
            Body::Completion(completion) => {
                match host_to_fabric(&tables.id_map, completion.requester) {
                    None => Err(DropReason::UnknownFunction),
                    Some(requester) => {
                        completion.requester = requester;
                        completion.completer = proxy_id;
                        packet.invalidate_digest();
                        self.routes
                            .by_id(requester)
                            .map(|to| vec![(to, packet)])
                            .ok_or(DropReason::NoRoute)
                    }
                }
            }
            Body::Memory(request) => {
                let len = bytes_touched(request);
                let routed =
                    translate_through_windows(&tables.windows, request.address, len, request.op)
                        .and_then(|fabric| {
                            Ok((
                                fabric,
                                self.routes.by_address(fabric).ok_or(DropReason::NoRoute)?,
                            ))
                        });
                match routed {
                    Err(reason) => Err(reason),
                    Ok((fabric, to)) => {
                        if request.op != MemoryOp::Write {
                            let entry = Outstanding {
                                request: header,
                                requester: request.requester,
                                tag: request.tag,
                                target: to,
                                issued_ns: self.now_ns,
                            };
                            request.tag = self.outstanding[usize::from(port.0)]
                                .allocate(entry)
                                .ok_or(IngressError::Backpressure(port))?;
                        }
                        request.requester = proxy_id;
                        request.address = fabric;
                        packet.invalidate_digest();
                        Ok(vec![(to, packet)])
                    }
                }
            }
        };
        Ok(stage)
    }

    /// Endpoint ingress: DMA becomes fabric addresses; the requester ID is already the fabric's.
    ///
    /// The requester's owner, and its owner's slot's ACS and INTx controls,
    /// are its function owner entry's if it has one, else the port's, so
    /// functions of one port bound to different hosts each reach their own
    /// host only (DESIGN.md, "Isolation is enforced in hardware").
    fn endpoint_ingress(
        &mut self,
        tables: &PortTables,
        buses: (u8, u8),
        mut packet: Packet,
    ) -> Stage {
        if let Body::Completion(completion) = &packet.header.body {
            // Completions route by ID to whoever asked: a host's proxy, a peer, or the CPU.
            return self
                .routes
                .by_id(completion.requester)
                .map(|to| vec![(to, packet)])
                .ok_or(DropReason::NoRoute);
        }
        let requester = packet.header.requester();
        if !(buses.0..=buses.1).contains(&requester.bus()) {
            return Err(DropReason::SpoofedRequester);
        }
        let ownership = tables.ownership(requester);
        let Some(owner) = ownership.owner else {
            // A free endpoint still reports to the fabric manager.
            return match packet.header.body {
                Body::Message(_) => Ok(vec![(Destination::Cpu, packet)]),
                _ => Err(DropReason::Unbound),
            };
        };
        match &mut packet.header.body {
            Body::Memory(request) => {
                let len = bytes_touched(request);
                // Only the owner's peer windows exist for this requester.
                let windows = tables.windows_of(owner.host);
                let peer = !ownership.p2p_request_redirect
                    && windows.iter().any(|w| w.overlaps(request.address, len));
                let fabric = if peer {
                    translate_through_windows(&windows, request.address, len, request.op)?
                } else {
                    aperture_address(owner.host, request.address, len)
                        .ok_or(DropReason::OutsideAperture)?
                };
                request.address = fabric;
                packet.invalidate_digest();
                let to = self.routes.by_address(fabric).ok_or(DropReason::NoRoute)?;
                Ok(vec![(to, packet)])
            }
            // Endpoints issue no I/O or configuration requests into the fabric
            // (completions were routed above and do not reach here).
            Body::Io(_) | Body::Config(_) | Body::Completion(_) => Err(DropReason::Unsupported),
            Body::Message(message) => {
                let to_owner = match message.code {
                    MessageCode::AssertIntx(pin) | MessageCode::DeassertIntx(pin) => {
                        // §2.2.8.1: a downstream port maps its device's INTx to
                        // (pin + device number) mod 4 on the way up.
                        let swizzled =
                            IntxPin::from_index((pin.index() + ownership.intx_swizzle) % 4);
                        message.code = match message.code {
                            MessageCode::AssertIntx(_) => MessageCode::AssertIntx(swizzled),
                            _ => MessageCode::DeassertIntx(swizzled),
                        };
                        true
                    }
                    MessageCode::ErrCor
                    | MessageCode::ErrNonFatal
                    | MessageCode::ErrFatal
                    | MessageCode::PmPme => true,
                    _ => false,
                };
                if !to_owner {
                    return Ok(vec![(Destination::Cpu, packet)]);
                }
                // Messages for the owner travel the fabric routed by ID to its
                // proxy, since "to the root" means nothing there; the host's
                // egress turns them back.
                let is_error = matches!(
                    message.code,
                    MessageCode::ErrCor | MessageCode::ErrNonFatal | MessageCode::ErrFatal
                );
                message.routing = MessageRouting::ById;
                *message = message.with_target(owner.proxy_id);
                // The routing and target just rewritten are under the ECRC (§2.7.1).
                packet.invalidate_digest();
                let to = self
                    .routes
                    .by_id(owner.proxy_id)
                    .ok_or(DropReason::NoRoute)?;
                let mut targets = vec![(to, packet.clone())];
                if is_error {
                    // Errors also go to the fabric manager's event log.
                    targets.push((Destination::Cpu, packet));
                }
                Ok(targets)
            }
        }
    }

    /// Fabric ingress: the TLP is in fabric terms already; the tables route it.
    fn fabric_ingress(&mut self, packet: Packet) -> Stage {
        let to = match &packet.header.body {
            Body::Memory(request) => self.routes.by_address(request.address),
            Body::Completion(completion) => self.routes.by_id(completion.requester),
            Body::Config(config) => self.routes.by_id(config.target),
            Body::Io(_) => return Err(DropReason::Unsupported),
            Body::Message(message) => match message.routing {
                MessageRouting::ById => message.target().and_then(|id| self.routes.by_id(id)),
                MessageRouting::ByAddress => {
                    message.address().and_then(|a| self.routes.by_address(a))
                }
                _ => Some(Destination::Cpu),
            },
        };
        to.map(|to| vec![(to, packet)]).ok_or(DropReason::NoRoute)
    }

    /// Egress: only a host port translates, undoing what the fabric did.
    fn egress(
        &mut self,
        port: PortIndex,
        tables: &PortTables,
        mut packet: Packet,
    ) -> Result<Vec<Packet>, DropReason> {
        let (host, proxy_id) = match tables.role {
            PortRole::Disabled => return Err(DropReason::PortDisabled),
            PortRole::Endpoint { .. } | PortRole::Fabric => return Ok(vec![packet]),
            PortRole::Host { host, proxy_id } => (host, proxy_id),
        };
        packet.invalidate_digest();
        match &mut packet.header.body {
            // An endpoint's DMA into host memory (or a peer request redirected up).
            Body::Memory(request) => {
                let offset = request.address.wrapping_sub(aperture_base(host));
                if offset >= HOST_ADDRESS_LIMIT {
                    return Err(DropReason::OutsideAperture);
                }
                request.address = offset;
                request.requester = fabric_to_host(&tables.id_map, request.requester)
                    .ok_or(DropReason::UnknownFunction)?;
                Ok(vec![packet])
            }
            // The answer to one of this host's requests.
            Body::Completion(completion) => {
                let index = usize::from(port.0);
                let entry = match self.outstanding[index].get(completion.tag) {
                    Some(entry) if completion.requester == proxy_id => *entry,
                    _ => return Err(DropReason::UnexpectedCompletion),
                };
                let fabric_tag = completion.tag;
                let last = completion_is_last(
                    completion.byte_count,
                    completion.lower_address,
                    completion.data_dw,
                );
                completion.requester = entry.requester;
                completion.tag = entry.tag;
                completion.completer = fabric_to_host(&tables.id_map, completion.completer)
                    .unwrap_or(tables.completer_id);
                if last {
                    self.outstanding[index].release(fabric_tag);
                }
                Ok(vec![packet])
            }
            Body::Message(message) if message.target() == Some(proxy_id) => match message.code {
                MessageCode::AssertIntx(pin) | MessageCode::DeassertIntx(pin) => {
                    let asserting = &mut self.intx[usize::from(port.0)][usize::from(pin.index())];
                    let was_asserted = !asserting.is_empty();
                    if matches!(message.code, MessageCode::AssertIntx(_)) {
                        asserting.insert(message.requester);
                    } else {
                        asserting.remove(&message.requester);
                    }
                    // §2.2.8.1: the upstream port sends a transition of the
                    // collapsed virtual wire only, as its own message.
                    let still_asserted = !asserting.is_empty();
                    if was_asserted == still_asserted {
                        return Ok(Vec::new());
                    }
                    message.routing = MessageRouting::Local;
                    message.bytes_8_to_15 = [0; 8];
                    message.requester = tables.completer_id;
                    Ok(vec![packet])
                }
                _ => {
                    message.routing = MessageRouting::ToRootComplex;
                    message.bytes_8_to_15 = [0; 8];
                    message.requester = fabric_to_host(&tables.id_map, message.requester)
                        .ok_or(DropReason::UnknownFunction)?;
                    Ok(vec![packet])
                }
            },
            Body::Message(_) | Body::Config(_) | Body::Io(_) => Err(DropReason::Unsupported),
        }
    }

    fn complete_outstanding(
        &mut self,
        status: CompletionStatus,
        select: impl Fn(usize, &Outstanding) -> bool,
    ) -> Vec<Delivery> {
        let mut deliveries = Vec::new();
        for index in 0..self.ports.len() {
            let completer = self.ports[index].completer_id;
            let port = PortIndex(u8::try_from(index).expect("port indices fit u8"));
            for (_, entry) in self.outstanding[index].release_where(|entry| select(index, entry)) {
                if let Some(packet) = error_completion(&entry.request, completer, status) {
                    self.counters[index]
                        .egress
                        .count(FlowControlClass::Completion, packet.wire_len());
                    deliveries.push(Delivery {
                        to: Destination::Port(port),
                        from: port,
                        packet,
                    });
                }
            }
        }
        deliveries
    }
}

/// Why the CPU's TLP could not be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InjectError {
    /// The port does not exist.
    NoSuchPort(PortIndex),
    /// The bytes are not a well-formed TLP.
    Malformed(weft_pcie::tlp::TlpError),
}

impl std::fmt::Display for InjectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InjectError::NoSuchPort(port) => write!(f, "port {} does not exist", port.0),
            InjectError::Malformed(err) => write!(f, "the TLP to inject is malformed: {err}"),
        }
    }
}

impl std::error::Error for InjectError {}

/// The fabric address of a host's address 0.
pub fn aperture_base(host: HostIndex) -> u64 {
    HOST_APERTURE_BASE | (u64::from(host.0) << HOST_APERTURE_SHIFT)
}

/// The fabric address of `len` bytes at host address `address`, if they fit the aperture.
pub fn aperture_address(host: HostIndex, address: u64, len: u64) -> Option<u64> {
    let end = address.checked_add(len.max(1))?;
    (end <= HOST_ADDRESS_LIMIT && usize::from(host.0) < weft_regs::aperture::MAX_HOSTS)
        .then(|| aperture_base(host) | address)
}

/// Translates a request through the first window it touches, checking it lies inside and is permitted.
pub fn translate_through_windows(
    windows: &[Window],
    address: u64,
    len: u64,
    op: MemoryOp,
) -> Result<u64, DropReason> {
    let window = windows
        .iter()
        .find(|w| w.overlaps(address, len))
        .ok_or(DropReason::NoWindow)?;
    let fabric = window.translate(address, len).ok_or(DropReason::NoWindow)?;
    let permitted = match op {
        MemoryOp::Write => window.permissions.write,
        MemoryOp::Read | MemoryOp::ReadLocked => window.permissions.read,
        // An AtomicOp reads the target and writes it back (§6.15).
        MemoryOp::FetchAdd | MemoryOp::Swap | MemoryOp::CompareAndSwap => {
            window.permissions.read && window.permissions.write
        }
    };
    if !permitted {
        return Err(DropReason::Forbidden);
    }
    Ok(fabric)
}

/// Bytes of memory a request reads or writes: its Length, except for CAS,
/// whose payload holds two operands for one location (§2.2.7.1, Table 2-15).
fn bytes_touched(request: &MemoryRequest) -> u64 {
    u64::from(
        request
            .atomic_operand_bytes()
            .unwrap_or(request.length_dw.saturating_mul(4)),
    )
}

/// The fabric ID of the function a host knows as `host`: the first mapping with that host ID.
pub fn host_to_fabric(map: &[IdMapping], host: Bdf) -> Option<Bdf> {
    map.iter().find(|m| m.host == host).map(|m| m.fabric)
}

/// The host ID of the function with fabric ID `fabric`: the first mapping with that fabric ID.
pub fn fabric_to_host(map: &[IdMapping], fabric: Bdf) -> Option<Bdf> {
    map.iter().find(|m| m.fabric == fabric).map(|m| m.host)
}

/// Whether a completion finishes its request: one without data always does
/// (it carries a status other than SC, or completes a write-like request);
/// one with data does when its bytes cover the Byte Count still remaining
/// (§2.3.1.1: Byte Count counts this completion's bytes and all after it,
/// and the first DW's data starts at Lower Address\[1:0\]).
fn completion_is_last(byte_count: u16, lower_address: u8, data_dw: Option<u16>) -> bool {
    match data_dw {
        None => true,
        Some(dw) => u32::from(byte_count) <= u32::from(dw) * 4 - u32::from(lower_address & 0b11),
    }
}
