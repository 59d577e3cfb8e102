//! A conventional PCIe switch: an upstream port and downstream ports, each a
//! Type 1 function built with weft-pcie, with the devices on the
//! downstream ports' links inside it.
//!
//! It routes as PCIe Base 6.0 §7.3.3 and §7.5.1.3 say, by what software
//! wrote into its bridges:
//!
//! - **Configuration requests** from its upstream link: Type 0 is the
//!   upstream port's own (device 0); Type 1 for the upstream port's
//!   secondary bus reaches the downstream port with that device number;
//!   Type 1 for a bus in a downstream port's secondary..=subordinate range
//!   leaves that port as Type 0 when the bus is its secondary bus (device 0
//!   only unless the port's ARI Forwarding Enable is set, §6.13) and as
//!   Type 1 otherwise; any other bus is an Unsupported Request.
//! - **Memory requests** go down through the port whose memory or
//!   prefetchable window holds the address, while the bridges' Memory Space
//!   Enable is set (§7.5.1.1.3); an address no window holds is an
//!   Unsupported Request (reads) or dropped (writes).
//! - **Completions** go down to the port whose bus range holds the
//!   Requester ID's bus.
//! - **From a device below**, requests and completions for a sibling's
//!   window or bus go across to it, unless the ingress port's ACS P2P
//!   Request (Completion) Redirect sends them upstream (§6.12.3); the rest
//!   go upstream while the bridges' Bus Master Enable is set (§7.5.1.1.3).
//!
//! The switch itself is a [`Device`], so a simulated link carries TLPs to
//! it and takes what it (and everything below it) sends back.

use std::time::Duration;

use weft_pcie::config::acs::{feature, Acs, AcsCap};
use weft_pcie::config::function::{memory_window, prefetchable_window, BusNumbers};
use weft_pcie::config::header::{command, common};
use weft_pcie::config::list::CapabilityListError;
use weft_pcie::config::pcie_cap::{device_capabilities_2, PcieCap, PcieCapability, PortType};
use weft_pcie::config::{CapabilityList, ConfigSpace, FunctionIdentity, Type1Function};
use weft_pcie::tlp::{Body, CompletionStatus, ConfigType, Direction, MemoryOp};
use weft_pcie::Bdf;

use crate::device::{BusCapture, Claim, ConfigError, Device};
use crate::packet::{completion_for, Packet, RequestInfo};

/// How many times TLPs may cross between the devices below within one
/// call before the switch stops carrying them (a peer-to-peer loop).
const MAX_CROSSINGS: usize = 64;

/// One downstream port: its bridge and the device on its link.
struct DownstreamPort {
    space: ConfigSpace,
    acs: Option<AcsCap>,
    device: Option<Box<dyn Device>>,
}

/// A conventional PCIe switch with its devices (see the module docs).
pub struct ConventionalSwitch {
    identity: FunctionIdentity,
    upstream: ConfigSpace,
    upstream_bus: BusCapture,
    ports: Vec<DownstreamPort>,
}

/// Where a TLP goes next inside the switch.
enum Route {
    /// Down the link of downstream port `.0`.
    Down(usize),
    /// Out of the upstream port.
    Up,
    /// Nowhere: dropped (a posted request nobody takes) or answered UR.
    Nowhere,
}

/// A switch port's configuration space: `header` with the PCI Express
/// capability of `port_type` (a downstream port supports ARI forwarding)
/// and, for a downstream port, the ACS capability a switch downstream port
/// implements (§6.12.1.1); returns the ACS capability's offset too.
fn port_space(
    identity: FunctionIdentity,
    port_type: PortType,
) -> Result<(ConfigSpace, Option<AcsCap>), CapabilityListError> {
    let mut space = ConfigSpace::new();
    // A switch port has no BARs, so laying out its header cannot fail.
    let _ = Type1Function::switch_port(identity).install(&mut space);
    let mut list = CapabilityList::new(&mut space)?;
    let mut pcie = PcieCapability::new(port_type);
    let downstream = port_type == PortType::SwitchDownstream;
    if downstream {
        pcie.device_capabilities_2 = device_capabilities_2::ARI_FORWARDING_SUPPORTED;
    }
    list.push(&pcie)?;
    let acs = if downstream {
        let offset = list.push_extended(&Acs {
            features: feature::DOWNSTREAM_PORT_REQUIRED,
            egress_vector_bits: 0,
        })?;
        Some(AcsCap::at(offset))
    } else {
        None
    };
    Ok((space, acs))
}

/// Whether `space`'s Command register has all of `bits` set.
fn enabled(space: &ConfigSpace, bits: u16) -> bool {
    space.read_u16(common::COMMAND) & bits == bits
}

/// Whether a bridge's windows hold `address`.
fn windows_hold(space: &ConfigSpace, address: u64) -> bool {
    [memory_window(space), prefetchable_window(space)]
        .into_iter()
        .flatten()
        .any(|window| window.contains(address))
}

/// A completion for `packet` from `completer` with `status` and `data`.
fn complete(
    packet: &Packet,
    completer: Bdf,
    status: CompletionStatus,
    data: Option<u32>,
) -> Packet {
    completion_for(
        &RequestInfo::of(&packet.header),
        completer,
        status,
        4,
        0,
        data.map(|value| value.to_le_bytes().to_vec()),
    )
}

/// Whether a TLP is a non-posted request, which needs a completion.
fn non_posted(packet: &Packet) -> bool {
    match &packet.header.body {
        Body::Memory(request) => request.op != MemoryOp::Write,
        Body::Config(_) | Body::Io(_) => true,
        Body::Completion(_) | Body::Message(_) => false,
    }
}

impl ConventionalSwitch {
    /// A switch whose ports report `identity` (a bridge class), with one
    /// downstream port per entry of `devices` and that device on its link.
    pub fn new(
        identity: FunctionIdentity,
        devices: Vec<Option<Box<dyn Device>>>,
    ) -> Result<Self, CapabilityListError> {
        let (upstream, _) = port_space(identity, PortType::SwitchUpstream)?;
        let ports = devices
            .into_iter()
            .map(|device| {
                let (space, acs) = port_space(identity, PortType::SwitchDownstream)?;
                Ok(DownstreamPort { space, acs, device })
            })
            .collect::<Result<_, CapabilityListError>>()?;
        Ok(ConventionalSwitch {
            identity,
            upstream,
            upstream_bus: BusCapture::default(),
            ports,
        })
    }

    /// How many downstream ports it has.
    pub fn downstream_ports(&self) -> usize {
        self.ports.len()
    }

    /// The device on downstream port `port`'s link, to look at.
    pub fn device(&self, port: usize) -> Option<&dyn Device> {
        self.ports.get(port)?.device.as_deref()
    }

    /// The upstream port's routing ID as last captured.
    fn upstream_id(&self) -> Bdf {
        self.upstream_bus.base(Bdf::new(0, 0, 0))
    }

    /// The downstream port whose bus range holds `bus`.
    fn port_for_bus(&self, bus: u8) -> Option<usize> {
        self.ports
            .iter()
            .position(|port| BusNumbers::read(&port.space).forwards(bus))
    }

    /// The downstream port whose windows hold `address`, while the bridges
    /// decode memory.
    fn port_for_address(&self, address: u64) -> Option<usize> {
        if !enabled(&self.upstream, command::MEMORY_SPACE) {
            return None;
        }
        self.ports.iter().position(|port| {
            enabled(&port.space, command::MEMORY_SPACE) && windows_hold(&port.space, address)
        })
    }

    /// Reads or writes a bridge's space; `write` is `(value, byte enables)`.
    fn access(space: &mut ConfigSpace, offset: u16, write: Option<(u32, u8)>) -> Option<u32> {
        match write {
            Some((value, byte_enables)) => {
                space.write(offset & !3, value, byte_enables);
                None
            }
            None => Some(space.read(offset & !3)),
        }
    }

    /// A configuration request from the upstream link.
    fn config(&mut self, now: Duration, packet: &Packet) -> Vec<Packet> {
        let Body::Config(request) = packet.header.body else {
            return Vec::new();
        };
        let target = request.target;
        let offset = request.byte_offset();
        let write = (request.direction == Direction::Write).then(|| {
            let mut lanes = [0u8; 4];
            let n = packet.payload.len().min(4);
            lanes[..n].copy_from_slice(&packet.payload[..n]);
            (u32::from_le_bytes(lanes), request.first_be)
        });
        let unsupported = vec![complete(
            packet,
            target,
            CompletionStatus::UnsupportedRequest,
            None,
        )];
        if request.config_type == ConfigType::Type0 {
            if target.device() != 0 || target.function() != 0 {
                return unsupported;
            }
            if write.is_some() {
                self.upstream_bus.capture(target);
            }
            let data = Self::access(&mut self.upstream, offset, write);
            return vec![complete(packet, target, CompletionStatus::Successful, data)];
        }
        let internal = BusNumbers::read(&self.upstream);
        if !internal.forwards(target.bus()) {
            return unsupported;
        }
        if target.bus() == internal.secondary {
            return match self.ports.get_mut(usize::from(target.device())) {
                Some(port) if target.function() == 0 => {
                    let data = Self::access(&mut port.space, offset, write);
                    vec![complete(packet, target, CompletionStatus::Successful, data)]
                }
                _ => unsupported,
            };
        }
        let Some(index) = self.port_for_bus(target.bus()) else {
            return unsupported;
        };
        let port = &mut self.ports[index];
        let mut onward = packet.clone();
        if BusNumbers::read(&port.space).secondary == target.bus() {
            let ari = PcieCap::find(&port.space)
                .ok()
                .flatten()
                .is_some_and(|pcie| pcie.ari_forwarding_enabled(&port.space));
            if target.device() != 0 && !ari {
                return unsupported;
            }
            if let Body::Config(request) = &mut onward.header.body {
                request.config_type = ConfigType::Type0;
            }
        }
        let Some(device) = port.device.as_mut() else {
            return unsupported;
        };
        let replies = device.handle(now, &onward);
        self.carry_up(now, index, replies)
    }

    /// Where a TLP coming from downstream port `from`'s link goes.
    fn route_up(&self, from: usize, packet: &Packet) -> Route {
        let redirect = |bit: u16| {
            self.ports[from]
                .acs
                .is_some_and(|acs| acs.enabled(&self.ports[from].space) & bit != 0)
        };
        let sibling = match &packet.header.body {
            Body::Memory(request) => self
                .port_for_address(request.address)
                .filter(|_| !redirect(feature::P2P_REQUEST_REDIRECT)),
            Body::Completion(completion) => self
                .port_for_bus(completion.requester.bus())
                .filter(|_| !redirect(feature::P2P_COMPLETION_REDIRECT)),
            _ => None,
        };
        match sibling {
            Some(to) if to != from => Route::Down(to),
            // A request for its own port's range: nothing routes it back down.
            Some(_) => Route::Nowhere,
            None => {
                let master = enabled(&self.ports[from].space, command::BUS_MASTER)
                    && enabled(&self.upstream, command::BUS_MASTER);
                let completion = matches!(packet.header.body, Body::Completion(_));
                if completion || master {
                    Route::Up
                } else {
                    Route::Nowhere
                }
            }
        }
    }

    /// Carries TLPs that came from downstream port `from`'s link: those for
    /// a sibling are handed to it (and what it answers carried on), the
    /// rest are returned to go upstream.
    fn carry_up(&mut self, now: Duration, from: usize, packets: Vec<Packet>) -> Vec<Packet> {
        let mut up = Vec::new();
        let mut moving: Vec<(usize, Packet)> = packets.into_iter().map(|p| (from, p)).collect();
        for _ in 0..MAX_CROSSINGS {
            if moving.is_empty() {
                break;
            }
            let mut next = Vec::new();
            for (from, packet) in moving {
                match self.route_up(from, &packet) {
                    Route::Up => up.push(packet),
                    Route::Down(to) => {
                        if let Some(device) = self.ports[to].device.as_mut() {
                            let replies = device.handle(now, &packet);
                            next.extend(replies.into_iter().map(|reply| (to, reply)));
                        }
                    }
                    Route::Nowhere if non_posted(&packet) => {
                        let reply = complete(
                            &packet,
                            self.upstream_id(),
                            CompletionStatus::UnsupportedRequest,
                            None,
                        );
                        next.push((from, reply));
                    }
                    Route::Nowhere => {}
                }
            }
            moving = next;
        }
        up
    }
}

impl Device for ConventionalSwitch {
    /// A Type 0 read on the upstream link: the upstream port's own space.
    fn config_read(
        &mut self,
        _now: Duration,
        target: Bdf,
        offset: u16,
    ) -> Result<u32, ConfigError> {
        if target.device() != 0 || target.function() != 0 {
            return Err(ConfigError::UnsupportedRequest { target });
        }
        Ok(self.upstream.read(offset & !3))
    }

    /// A Type 0 write on the upstream link, which captures the bus (§2.2.6.2).
    fn config_write(
        &mut self,
        _now: Duration,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigError> {
        if target.device() != 0 || target.function() != 0 {
            return Err(ConfigError::UnsupportedRequest { target });
        }
        self.upstream_bus.capture(target);
        self.upstream.write(offset & !3, value, byte_enables);
        Ok(())
    }

    fn claim(&self, address: u64) -> Option<Claim> {
        let port = self.port_for_address(address)?;
        self.ports[port].device.as_ref()?.claim(address)
    }

    fn memory_read(&mut self, now: Duration, address: u64, out: &mut [u8]) {
        if let Some(port) = self.port_for_address(address) {
            if let Some(device) = self.ports[port].device.as_mut() {
                device.memory_read(now, address, out);
            }
        }
    }

    fn memory_write(&mut self, now: Duration, address: u64, data: &[u8]) {
        if let Some(port) = self.port_for_address(address) {
            if let Some(device) = self.ports[port].device.as_mut() {
                device.memory_write(now, address, data);
            }
        }
    }

    fn receive_completion(&mut self, now: Duration, completion: &Packet) {
        let Body::Completion(header) = &completion.header.body else {
            return;
        };
        if let Some(port) = self.port_for_bus(header.requester.bus()) {
            if let Some(device) = self.ports[port].device.as_mut() {
                device.receive_completion(now, completion);
            }
        }
    }

    fn poll(&mut self, now: Duration) -> Vec<Packet> {
        let mut up = Vec::new();
        for index in 0..self.ports.len() {
            let sent = match self.ports[index].device.as_mut() {
                Some(device) => device.poll(now),
                None => continue,
            };
            let onward = self.carry_up(now, index, sent);
            up.extend(onward);
        }
        up
    }

    /// The upstream port, and every function on a bus below it.
    fn owns(&self, id: Bdf) -> bool {
        id == self.upstream_id() || BusNumbers::read(&self.upstream).forwards(id.bus())
    }

    /// Resets the bridges to their power-on state and every device below
    /// (a Conventional Reset propagates down the hierarchy, §6.6.1).
    fn reset(&mut self, now: Duration) {
        if let Ok((space, _)) = port_space(self.identity, PortType::SwitchUpstream) {
            self.upstream = space;
        }
        self.upstream_bus.clear();
        for port in &mut self.ports {
            if let Ok((space, acs)) = port_space(self.identity, PortType::SwitchDownstream) {
                port.space = space;
                port.acs = acs;
            }
            if let Some(device) = port.device.as_mut() {
                device.reset(now);
            }
        }
    }

    /// Routes every TLP from the upstream link (see the module docs).
    fn handle(&mut self, now: Duration, packet: &Packet) -> Vec<Packet> {
        match &packet.header.body {
            Body::Config(_) => self.config(now, packet),
            Body::Memory(request) => match self.port_for_address(request.address) {
                Some(index) => {
                    let replies = match self.ports[index].device.as_mut() {
                        Some(device) => device.handle(now, packet),
                        None => Vec::new(),
                    };
                    self.carry_up(now, index, replies)
                }
                None if non_posted(packet) => vec![complete(
                    packet,
                    self.upstream_id(),
                    CompletionStatus::UnsupportedRequest,
                    None,
                )],
                None => Vec::new(),
            },
            Body::Completion(completion) => match self.port_for_bus(completion.requester.bus()) {
                Some(index) => {
                    let replies = match self.ports[index].device.as_mut() {
                        Some(device) => device.handle(now, packet),
                        None => Vec::new(),
                    };
                    self.carry_up(now, index, replies)
                }
                None => Vec::new(),
            },
            Body::Io(_) => vec![complete(
                packet,
                self.upstream_id(),
                CompletionStatus::UnsupportedRequest,
                None,
            )],
            Body::Message(_) => Vec::new(),
        }
    }

    fn completer_for_unclaimed(&self) -> Bdf {
        self.upstream_id()
    }
}
