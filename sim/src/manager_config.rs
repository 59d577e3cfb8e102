//! The fabric manager's configuration requests, sent as TLPs through the
//! simulated fabric (`weft_fabric::hw::FabricConfig`).
//!
//! - **On a link** ([`FabricConfig::read`]): a Type 0 request leaves a port
//!   of the manager's switch; the function on that link — an endpoint, or
//!   the management function of a neighbouring weft switch's port
//!   ([`WeftSwitch::answer_config`]) — completes it, and the port hands the
//!   completion to the CPU.
//! - **Below** ([`FabricConfig::read_below`]): a Type 1 request leaves a
//!   port of the manager's switch as it is, for a bus past the link's; the
//!   conventional switch (or SR-IOV device) on the link takes it, and the
//!   port hands the completion to the CPU.
//! - **Routed** ([`FabricConfig::read_routed`]): a Type 1 request leaves
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
//! Every hop goes through the switch models (routes, counters) and takes
//! its time on the link models, but a request and its completion are
//! carried through at once while the manager waits, rather than as events
//! interleaved with the rest of the simulation: the management CPU's
//! requests are few and small, and nothing else waits on them.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::time::Duration;

use weft_devices::packet::{completion_for, RequestInfo};
use weft_fabric::hw::{ConfigFault, FabricConfig};
use weft_model::{Destination, Packet, PortIndex, PortRole};
use weft_pcie::tlp::{Body, CompletionStatus, ConfigRequest, ConfigType, Direction, Header, Tag};
use weft_pcie::Bdf;

use crate::switch::{WeftSwitch, SWITCH_LATENCY};
use crate::wiring::{End, Node, Place, Way, Wiring};

/// The most switch traversals one request and its completion may take
/// before the manager gives up on it (a routing loop, or a lost TLP).
const MAX_HOPS: usize = 64;

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
}

/// How a request of the manager's CPU leaves its switch.
#[derive(Clone, Copy)]
enum Path {
    /// Type 0 onto the port's link ([`weft_fabric::hw::ConfigPath::Link`]).
    Link,
    /// Type 1 onto the port's link ([`weft_fabric::hw::ConfigPath::Below`]).
    Below,
    /// Type 1 into the fabric, routed by bus ([`weft_fabric::hw::ConfigPath::Routed`]).
    Routed,
}

/// A step of a TLP through the fabric.
enum Hop {
    /// Leaves switch port `.0` onto its link.
    Out(Place, Packet),
    /// Enters the ingress of switch port `.0`.
    In(Place, Packet),
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

    /// The request `packet` as the non-fabric port `place` delivers it on
    /// its link: Type 1 stays Type 1 only for a bus of the port's range
    /// past its first; the bridge whose secondary bus is the target's turns
    /// it into Type 0 (PCIe Base 6.0 §7.3.1).
    fn egress(&self, place: Place, mut packet: Packet) -> Packet {
        let first_bus = match self.role(place) {
            Some(PortRole::Endpoint { buses, .. }) => Some(buses.0),
            _ => None,
        };
        if let Body::Config(request) = &mut packet.header.body {
            if first_bus.is_none_or(|first| request.target.bus() == first) {
                request.config_type = ConfigType::Type0;
            }
        }
        packet
    }

    /// The completion of the function on `place`'s link to the request
    /// `packet`, and when the completion is back at `place`.
    fn answer(&mut self, place: Place, packet: &Packet, at: Duration) -> (Packet, Duration) {
        let Some((arrived, end)) = self.wiring.carry(place, Way::Down, packet, at) else {
            return (unsupported(packet), at);
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
                let reply = match self.wiring.nodes.get_mut(&place) {
                    Some(Node::Device(device)) => device
                        .handle(arrived, packet)
                        .into_iter()
                        .next()
                        .unwrap_or_else(|| unsupported(packet)),
                    // A host's root port is no function of the fabric.
                    _ => unsupported(packet),
                };
                let back = self.wiring.carry(place, Way::Up, &reply, arrived);
                (reply, back)
            }
        };
        (reply, back.map_or(arrived, |(time, _)| time))
    }

    /// Carries a Type 1 request out of `via` and through the fabric until
    /// its completion reaches the manager's CPU; returns it and the time.
    fn route(&mut self, via: u8, packet: Packet, tag: Tag) -> Option<(Packet, Duration)> {
        let mut time = self.now.get();
        let mut hops = VecDeque::from([Hop::Out(Place::new(0, via), packet)]);
        for _ in 0..MAX_HOPS {
            match hops.pop_front()? {
                Hop::Out(place, packet) => {
                    let config_type = match packet.header.body {
                        Body::Config(request) => Some(request.config_type),
                        _ => None,
                    };
                    let cabled = self.wiring.cabled_to(place).is_some();
                    // Completions cross fabric links; a Type 1 request does
                    // while it leaves fabric ports.
                    let onward = cabled
                        && match config_type {
                            None => true,
                            Some(ConfigType::Type1) => self.role(place) == Some(PortRole::Fabric),
                            Some(ConfigType::Type0) => false,
                        };
                    if onward {
                        let (arrived, end) = self.wiring.carry(place, Way::Down, &packet, time)?;
                        let End::Switch(far) = end else {
                            return None;
                        };
                        time = arrived;
                        hops.push_back(Hop::In(far, packet));
                    } else if config_type.is_some() {
                        let packet = self.egress(place, packet);
                        let (reply, back) = self.answer(place, &packet, time);
                        time = back;
                        hops.push_back(Hop::In(place, reply));
                    } else {
                        // A completion leaving the fabric for a node: not the manager's.
                        return None;
                    }
                }
                Hop::In(place, packet) => {
                    let bytes = packet.to_bytes().ok()?;
                    let forwarding = self
                        .switches
                        .get(place.switch)?
                        .borrow_mut()
                        .model_mut()
                        .ingress(PortIndex(place.port), &bytes)
                        .ok()?;
                    time += SWITCH_LATENCY;
                    for delivery in forwarding.deliveries {
                        match delivery.to {
                            Destination::Cpu if place.switch == 0 => {
                                if is_completion_of(&delivery.packet, self.requester, tag) {
                                    return Some((delivery.packet, time));
                                }
                            }
                            Destination::Cpu => {}
                            Destination::Port(out) => hops.push_back(Hop::Out(
                                Place::new(place.switch, out.0),
                                delivery.packet,
                            )),
                        }
                    }
                }
            }
        }
        None
    }

    fn request(
        &mut self,
        path: Path,
        port: PortIndex,
        target: Bdf,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> Result<u32, ConfigFault> {
        *self.next_tag = self.next_tag.wrapping_add(1);
        let config_type = match path {
            Path::Link => ConfigType::Type0,
            Path::Below | Path::Routed => ConfigType::Type1,
        };
        let tag = Tag::from_8bit(*self.next_tag);
        let request = ConfigRequest {
            direction: if write.is_some() {
                Direction::Write
            } else {
                Direction::Read
            },
            config_type,
            requester: self.requester,
            tag,
            target,
            register_number: 0,
            extended_register_number: 0,
            first_be: write.map_or(0xf, |(_, byte_enables)| byte_enables & 0xf),
        }
        .with_byte_offset(offset & !3);
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
        let reply = match path {
            // The port hands the completion of its own link's function to the CPU.
            Path::Link | Path::Below => {
                Some(self.answer(Place::new(0, port.0), &packet, self.now.get()))
            }
            Path::Routed => self.route(port.0, packet, tag),
        };
        let (reply, time) = reply.ok_or(ConfigFault::Timeout)?;
        self.now.set(self.now.get().max(time));
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

impl FabricConfig for ManagerConfig<'_> {
    fn read(&mut self, port: PortIndex, target: Bdf, offset: u16) -> Result<u32, ConfigFault> {
        self.request(Path::Link, port, target, offset, None)
    }

    fn write(
        &mut self,
        port: PortIndex,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigFault> {
        self.request(
            Path::Link,
            port,
            target,
            offset,
            Some((value, byte_enables)),
        )
        .map(|_| ())
    }

    fn read_below(
        &mut self,
        port: PortIndex,
        target: Bdf,
        offset: u16,
    ) -> Result<u32, ConfigFault> {
        self.request(Path::Below, port, target, offset, None)
    }

    fn write_below(
        &mut self,
        port: PortIndex,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigFault> {
        self.request(
            Path::Below,
            port,
            target,
            offset,
            Some((value, byte_enables)),
        )
        .map(|_| ())
    }

    fn read_routed(
        &mut self,
        via: PortIndex,
        target: Bdf,
        offset: u16,
    ) -> Result<u32, ConfigFault> {
        self.request(Path::Routed, via, target, offset, None)
    }

    fn write_routed(
        &mut self,
        via: PortIndex,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigFault> {
        self.request(
            Path::Routed,
            via,
            target,
            offset,
            Some((value, byte_enables)),
        )
        .map(|_| ())
    }
}
