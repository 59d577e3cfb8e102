//! The fabric manager's configuration requests, sent as TLPs through the
//! simulated fabric (`weft_fabric::hw::FabricConfig`).
//!
//! - **On a link** ([`FabricConfig::read`](weft_fabric::hw::FabricConfig::read)): a Type 0 request leaves a port
//!   of the manager's switch; the function on that link — an endpoint, or
//!   the management function of a neighbouring weft switch's port
//!   ([`WeftSwitch::answer_config`]) — completes it, and the port hands the
//!   completion to the CPU.
//! - **Below** ([`FabricConfig::read_below`](weft_fabric::hw::FabricConfig::read_below)): a Type 1 request leaves a
//!   port of the manager's switch as it is, for a bus past the link's; the
//!   conventional switch (or SR-IOV device) on the link takes it, and the
//!   port hands the completion to the CPU.
//! - **Routed** ([`FabricConfig::read_routed`](weft_fabric::hw::FabricConfig::read_routed)): a Type 1 request leaves
//!   a fabric port of the manager's switch and enters the neighbour's
//!   ingress, whose bus routes forward it; it crosses fabric links while
//!   it leaves fabric ports, and the first other port it leaves by delivers
//!   it on its link as Type 0 if the target bus is the first of the port's
//!   bus range (the link's), as a downstream port does for its secondary
//!   bus, and as Type 1 for the buses after it, to a conventional switch
//!   below (PCIe Base 6.0 §7.3.1, §7.3.3). The completion enters that
//!   port's ingress and is routed by the manager's bus back to the
//!   manager's switch's CPU.
//!
//! - **Memory** ([`FabricMemory`]): a one-DW memory request to another
//!   switch's management BAR leaves the port the manager's switch reaches
//!   that switch by and is routed by address like any TLP; the switch
//!   whose BAR it hits executes it against its CSR window
//!   ([`WeftSwitch::forward`]), and a read's completion comes back as a
//!   configuration request's does. That is how the manager writes every
//!   other switch's tables ([`crate::planes`]). Posted writes do not hold
//!   the manager up; a read waits for its completion.
//!
//! A request the function on the link never completes (a hung device,
//! `World::hang_device`) gets no completion: the manager waits its own
//! completion timeout, as the firmware's mailbox does
//! ([`MANAGER_COMPLETION_TIMEOUT`]), and the request fails with
//! [`ConfigFault::Timeout`] (PCIe Base 6.0 §2.8). A host's request the
//! manager forwards to a bound function waits the switch's completion
//! timeout instead (`weft_fabric::virtualize::FORWARDED_TIMEOUT_NS`, set
//! through `limit_completion_wait`), as it does in the firmware.
//!
//! Every hop goes through the switch models (routes, counters) and takes
//! its time on the link models, but a request and its completion are
//! carried through at once while the manager waits, rather than as events
//! interleaved with the rest of the simulation: the management CPU's
//! requests are few and small, and nothing else waits on them.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use weft_devices::packet::{completion_for, RequestInfo};
use weft_fabric::hw::{ConfigFault, ConfigPath, ConfigRequests, FabricMemory};
use weft_model::fabric::{self, Cabling, Hop};
use weft_model::{Forwarding, Packet, PortIndex, PortRole};
use weft_pcie::tlp::{
    AddressType, Attributes, Body, CompletionStatus, ConfigRequest, ConfigType, Header, MemoryOp,
    MemoryRequest, Tag, TrafficClass,
};
use weft_pcie::Bdf;

use crate::link_control::carry_link_requests;
use crate::switch::{WeftSwitch, SWITCH_LATENCY};
use crate::wiring::{End, Node, Place, Way, Wiring};

/// How long the manager waits for the completion of one of its own
/// requests before it fails with [`ConfigFault::Timeout`]: the firmware's
/// wait (`weft_drivers::mailbox::COMPLETION_TIMEOUT_NS`, 50 ms, the top of
/// the default range of PCIe Base 6.0 §2.8, §7.5.3.16).
pub const MANAGER_COMPLETION_TIMEOUT: Duration =
    Duration::from_nanos(weft_drivers::mailbox::COMPLETION_TIMEOUT_NS);

/// The most switch traversals one request and its completion may take
/// before the manager gives up on it (a routing loop, or a lost TLP).
const MAX_HOPS: usize = 64;

/// A routed request's walk through the simulated fabric, and its time.
struct Walk<'w, 'a> {
    config: &'w mut ManagerConfig<'a>,
    time: Duration,
}

impl Cabling for Walk<'_, '_> {
    fn ingress(&mut self, place: (usize, u8), packet: &Packet) -> Option<Forwarding> {
        let bytes = packet.to_bytes().ok()?;
        let forwarding = self
            .config
            .switches
            .get(place.0)?
            .borrow_mut()
            .forward(PortIndex(place.1), &bytes)
            .ok()?;
        self.config
            .wiring
            .note_forwarding(Place::new(place.0, place.1), self.time, &forwarding);
        self.time += SWITCH_LATENCY;
        Some(forwarding)
    }

    fn role(&self, place: (usize, u8)) -> Option<PortRole> {
        self.config.role(Place::new(place.0, place.1))
    }

    fn cross(&mut self, place: (usize, u8), packet: &Packet) -> Option<(usize, u8)> {
        let place = Place::new(place.0, place.1);
        self.config.wiring.cabled_to(place)?;
        let (arrived, end) = self
            .config
            .wiring
            .carry(place, Way::Down, packet, self.time)?;
        let End::Switch(far) = end else {
            return None;
        };
        self.time = arrived;
        Some((far.switch, far.port))
    }

    fn answer(&mut self, place: (usize, u8), packet: &Packet) -> Option<Packet> {
        let place = Place::new(place.0, place.1);
        let (reply, back) = self.config.answer(place, packet, self.time)?;
        self.time = back;
        Some(reply)
    }

    /// A completion leaving the fabric for a node is not the manager's.
    fn leave(&mut self, _place: (usize, u8), _packet: Packet) {}

    /// Another switch's CPU has no part in the manager's requests.
    fn to_cpu(&mut self, _switch: usize, _packet: Packet) {}
}

/// The manager's configuration access for the length of one call into it.
pub(crate) struct ManagerConfig<'a> {
    /// Every switch; the first is the manager's.
    pub(crate) switches: &'a [RefCell<WeftSwitch>],
    /// The nodes and links.
    pub(crate) wiring: &'a mut Wiring,
    /// The manager's clock: each request's round trip moves it on.
    pub(crate) now: &'a Cell<Duration>,
    /// The manager's fabric ID, the requester of its requests.
    pub(crate) requester: Bdf,
    /// The tag of the next request.
    pub(crate) next_tag: &'a mut u8,
    /// How long a configuration request waits for its completion, if not
    /// [`MANAGER_COMPLETION_TIMEOUT`].
    pub(crate) config_wait: Option<Duration>,
}

fn fault(status: CompletionStatus) -> ConfigFault {
    match status {
        CompletionStatus::RequestRetry => ConfigFault::RequestRetry,
        CompletionStatus::CompleterAbort => ConfigFault::CompleterAbort,
        _ => ConfigFault::UnsupportedRequest,
    }
}

impl ManagerConfig<'_> {
    fn role(&self, place: Place) -> Option<PortRole> {
        let switch = self.switches.get(place.switch)?.borrow();
        switch
            .model()
            .port_tables(PortIndex(place.port))
            .map(|tables| tables.role)
    }

    /// The completion of the function on `place`'s link to the request
    /// `packet`, and when the completion is back at `place`; `None` from a
    /// hung endpoint, which takes the request in and sends nothing, or
    /// from a device that sends nothing back (one below it has hung).
    fn answer(
        &mut self,
        place: Place,
        packet: &Packet,
        at: Duration,
    ) -> Option<(Packet, Duration)> {
        let Some((arrived, end)) = self.wiring.carry(place, Way::Down, packet, at) else {
            return Some((unsupported(packet), at));
        };
        let (reply, back) = match end {
            End::Switch(far) => {
                let reply = match self.switches.get(far.switch) {
                    Some(switch) => switch.borrow_mut().answer_config(far.port, packet),
                    None => unsupported(packet),
                };
                let back = self.wiring.carry(far, Way::Down, &reply, arrived);
                (reply, back)
            }
            End::Node(_) => {
                self.wiring.take_config_request(place, packet);
                let reply = match self.wiring.nodes.get_mut(&place) {
                    // Nothing back: a device below that has hung.
                    Some(Node::Device(device)) => {
                        device.handle(arrived, packet).into_iter().next()?
                    }
                    Some(Node::Hung) => return None,
                    // A host's root port is no function of the fabric.
                    _ => unsupported(packet),
                };
                let back = self.wiring.carry(place, Way::Up, &reply, arrived);
                (reply, back)
            }
        };
        Some((reply, back.map_or(arrived, |(time, _)| time)))
    }

    /// Carries a Type 1 request out of `via` and through the fabric until
    /// its completion reaches the manager's CPU; returns it and the time.
    fn route(
        &mut self,
        via: u8,
        packet: Packet,
        requester: Bdf,
        tag: Tag,
    ) -> Option<(Packet, Duration)> {
        let time = self.now.get();
        let mut walk = Walk { config: self, time };
        let replies = fabric::carry(&mut walk, Hop::Out((0, via), packet), MAX_HOPS);
        let time = walk.time;
        replies
            .into_iter()
            .find(|reply| is_completion_of(reply, requester, tag))
            .map(|reply| (reply, time))
    }

    /// Carries the configuration request `packet`, sent by the management
    /// CPU out of `port` of its switch now, to its function and its
    /// completion back to the CPU; returns the completion and when it is
    /// back, or `None` if none comes back. A Type 0 request, and a Type 1
    /// request out of a port that is not a fabric port, is for the link's
    /// function or what is below it ([`ConfigPath::Link`],
    /// [`ConfigPath::Below`]): the port hands its completion to the CPU. A
    /// Type 1 request out of a fabric port is routed ([`ConfigPath::Routed`]).
    pub(crate) fn carry(&mut self, port: PortIndex, packet: Packet) -> Option<(Packet, Duration)> {
        let Body::Config(request) = packet.header.body else {
            return None;
        };
        let place = Place::new(0, port.0);
        let routed =
            request.config_type == ConfigType::Type1 && self.role(place) == Some(PortRole::Fabric);
        if routed {
            self.route(port.0, packet, request.requester, request.tag)
        } else {
            self.answer(place, &packet, self.now.get())
        }
    }

    /// The fault of a request no completion came back for: the manager
    /// waited `wait` for it (§2.8).
    fn timed_out(&mut self, wait: Duration) -> ConfigFault {
        self.now.set(self.now.get() + wait);
        ConfigFault::Timeout
    }

    fn request(
        &mut self,
        path: ConfigPath,
        target: Bdf,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> Result<u32, ConfigFault> {
        // A hot reset the manager just asked for reaches the device first.
        carry_link_requests(self.switches, self.wiring, self.now.get());
        *self.next_tag = self.next_tag.wrapping_add(1);
        let (config_type, port) = match path {
            ConfigPath::Link(port) => (ConfigType::Type0, port),
            ConfigPath::Below(port) | ConfigPath::Routed(port) => (ConfigType::Type1, port),
        };
        let tag = Tag::from_8bit(*self.next_tag);
        let request = ConfigRequest::new(
            config_type,
            self.requester,
            tag,
            target,
            offset,
            write.map(|(_, byte_enables)| byte_enables),
        );
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Config(request),
        };
        let payload = write
            .map(|(value, _)| value.to_le_bytes().to_vec())
            .unwrap_or_default();
        let packet = Packet::new(header, payload);
        let bytes = packet.to_bytes().map_err(|_| ConfigFault::CompleterAbort)?;
        let Some(local) = self.switches.first() else {
            return Err(ConfigFault::NoSuchPort(port));
        };
        // The CPU's request leaves the port as it is (and is counted there).
        local
            .borrow_mut()
            .model_mut()
            .inject(port, &bytes)
            .map_err(|_| ConfigFault::NoSuchPort(port))?;
        let Some((reply, time)) = self.carry(port, packet) else {
            let wait = self.config_wait.unwrap_or(MANAGER_COMPLETION_TIMEOUT);
            return Err(self.timed_out(wait));
        };
        self.now.set(self.now.get().max(time));
        data_of(&reply)
    }
}

impl ManagerConfig<'_> {
    /// Sends a one-DW memory request at `address` out of `via` of the
    /// manager's switch, a read or with `write` a write, and carries it
    /// through the fabric: the data DW of a read's completion (0 for a write).
    fn memory(
        &mut self,
        via: PortIndex,
        address: u64,
        write: Option<u32>,
    ) -> Result<u32, ConfigFault> {
        *self.next_tag = self.next_tag.wrapping_add(1);
        let tag = Tag::from_8bit(*self.next_tag);
        let request = MemoryRequest {
            op: if write.is_some() {
                MemoryOp::Write
            } else {
                MemoryOp::Read
            },
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            address_type: AddressType::default(),
            requester: self.requester,
            tag,
            address: address & !3,
            length_dw: 1,
            first_be: 0xf,
            last_be: 0,
            processing_hint: None,
        };
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Memory(request),
        };
        let payload = write.map_or(Vec::new(), |value| value.to_le_bytes().to_vec());
        let packet = Packet::new(header, payload);
        let bytes = packet.to_bytes().map_err(|_| ConfigFault::CompleterAbort)?;
        let Some(local) = self.switches.first() else {
            return Err(ConfigFault::NoSuchPort(via));
        };
        local
            .borrow_mut()
            .model_mut()
            .inject(via, &bytes)
            .map_err(|_| ConfigFault::NoSuchPort(via))?;
        let (requester, time) = (self.requester, self.now.get());
        let mut walk = Walk { config: self, time };
        let replies = fabric::carry(&mut walk, Hop::Out((0, via.0), packet), MAX_HOPS);
        let time = walk.time;
        if write.is_some() {
            return Ok(0);
        }
        let Some(reply) = replies
            .into_iter()
            .find(|reply| is_completion_of(reply, requester, tag))
        else {
            return Err(self.timed_out(MANAGER_COMPLETION_TIMEOUT));
        };
        self.now.set(self.now.get().max(time));
        data_of(&reply)
    }
}

/// The data DW of a successful completion, or the fault its status means.
fn data_of(reply: &Packet) -> Result<u32, ConfigFault> {
    let Body::Completion(completion) = reply.header.body else {
        return Err(ConfigFault::Timeout);
    };
    if completion.status != CompletionStatus::Successful {
        return Err(fault(completion.status));
    }
    let mut lanes = [0u8; 4];
    let n = reply.payload.len().min(4);
    lanes[..n].copy_from_slice(&reply.payload[..n]);
    Ok(u32::from_le_bytes(lanes))
}

/// One [`ManagerConfig`] as the manager's configuration access and its
/// memory requests at once: the fabric manager takes the first, its
/// in-band fabric ([`crate::planes::Planes`]) the second, and every call
/// borrows it for its own length.
pub(crate) struct SharedConfig<'c, 'a>(pub(crate) &'c RefCell<ManagerConfig<'a>>);

impl Clone for SharedConfig<'_, '_> {
    fn clone(&self) -> Self {
        SharedConfig(self.0)
    }
}

impl ConfigRequests for SharedConfig<'_, '_> {
    fn config_request(
        &mut self,
        path: ConfigPath,
        target: Bdf,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> Result<u32, ConfigFault> {
        self.0.borrow_mut().request(path, target, offset, write)
    }

    /// Configuration requests wait `timeout_ns`, or
    /// [`MANAGER_COMPLETION_TIMEOUT`] again; memory requests always wait
    /// [`MANAGER_COMPLETION_TIMEOUT`], as the firmware's mailbox does.
    fn limit_completion_wait(&mut self, timeout_ns: Option<u64>) {
        self.0.borrow_mut().config_wait = timeout_ns.map(Duration::from_nanos);
    }
}

impl FabricMemory for SharedConfig<'_, '_> {
    fn read_memory(&mut self, via: PortIndex, address: u64) -> Result<u32, ConfigFault> {
        self.0.borrow_mut().memory(via, address, None)
    }

    fn write_memory(
        &mut self,
        via: PortIndex,
        address: u64,
        value: u32,
    ) -> Result<(), ConfigFault> {
        self.0
            .borrow_mut()
            .memory(via, address, Some(value))
            .map(|_| ())
    }
}

/// Whether `packet` completes the manager's request with `tag`.
fn is_completion_of(packet: &Packet, requester: Bdf, tag: Tag) -> bool {
    matches!(packet.header.body, Body::Completion(c) if c.requester == requester && c.tag == tag)
}

/// An Unsupported Request completion for a configuration request.
fn unsupported(packet: &Packet) -> Packet {
    let completer = match packet.header.body {
        Body::Config(request) => request.target,
        _ => Bdf::default(),
    };
    completion_for(
        &RequestInfo::of(&packet.header),
        completer,
        CompletionStatus::UnsupportedRequest,
        4,
        0,
        None,
    )
}
