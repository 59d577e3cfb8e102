//! Several weft-model switches wired into one fabric: a TLP leaving a
//! fabric port enters the neighbour's ingress, one leaving an endpoint or
//! host port reaches the fake device or is recorded for the host.
//!
//! The management CPU's configuration requests travel in-band like any
//! TLP: a Type 0 request is answered by the function on the link it is sent
//! out on; a Type 1 request is routed by bus number, and the port it leaves
//! the fabric by (any port that is not a fabric port) hands it on as Type 0
//! for the first bus of its range and as Type 1 for the others, to a
//! conventional switch below (§7.3.3). A weft switch port answers a Type 0
//! request with its management function, which carries the identity VSEC.
//!
//! Those rules are weft-model's (`weft_model::fabric::carry`), which the
//! simulator walks too; this module keeps only the fake links: which port
//! is cabled to which, and the fake devices and hosts on the others.
//!
//! Each switch is weft-model's CSR window over its data plane, so its
//! management function's BAR (which discovery assigns through the
//! function's configuration space) decodes as the register map says. The
//! manager writes its own switch's tables directly and every other
//! switch's in-band ([`weft_fabric::inband`]): memory requests to the
//! switch's management BAR, carried from the manager's switch through the
//! fabric like any TLP ([`MeshMemory`]).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use weft_fabric::hw::{
    ConfigFault, ConfigPath, ConfigRequests, DataPlane, Fabric, FabricMemory, HostConfigRequest,
    RemoteSwitch, TableWriteError,
};
use weft_fabric::inband::InbandPlanes;
use weft_fabric::manager::FabricManager;
use weft_fabric::pcie::config::vsec::{management_function, PortRole as VsecRole, WeftIdentity};
use weft_fabric::pcie::tlp::{
    AddressType, Attributes, Body, Completion, CompletionStatus, ConfigRequest, ConfigType,
    Direction, Header, MemoryOp, MemoryRequest, Tag, TrafficClass,
};
use weft_fabric::pcie::Bdf;
use weft_model::fabric::{self, Cabling, Hop};
use weft_model::{CsrWindow, Forwarding, Packet, PortIndex, PortRole, Switch};
use weft_regs::tables::{DataPlaneAccess, LinkRequest};

use super::conventional::ConventionalSwitch;
use super::{config_request, Clock, FakeDevice, FakeHost, ROOT_PORT};

/// The switches, shared by the configuration path and the table handles.
pub type Switches = Rc<RefCell<Vec<CsrWindow>>>;

/// The links between switches, both ways: `(switch, port)` to `(switch, port)`.
type Links = Rc<RefCell<BTreeMap<(usize, u8), (usize, u8)>>>;

/// What is on the far side of a switch port's link.
pub enum Partner {
    /// A port of another switch (index, port).
    Switch(usize, u8),
    /// A fake device.
    Device(FakeDevice),
    /// A conventional PCIe switch with devices below it.
    Conventional(Box<ConventionalSwitch>),
    /// A host's root port: TLPs reaching it are recorded.
    Host,
    /// A device that has hung: it takes every request in and completes
    /// none, so the manager's requests to it time out.
    Hung,
}

/// The wired fabric and what reached the edge of it.
pub struct Network {
    pub switches: Switches,
    pub ids: Vec<u64>,
    pub partners: BTreeMap<(usize, u8), Partner>,
    /// TLPs that left the fabric to a device or a host: (switch, port, TLP).
    pub arrivals: Vec<(usize, u8, Packet)>,
    /// TLPs delivered to a switch's CPU that were not the manager's completions.
    pub to_cpu: Vec<(usize, Packet)>,
    pub clock: Clock,
    next_tag: u16,
    /// How each resettable device is built at reset ([`Mesh::attach_resettable`]).
    pub rebuild: BTreeMap<(usize, u8), fn() -> FakeDevice>,
    /// The hot resets and retrainings the switches' links carried out.
    pub link_events: Vec<LinkEvent>,
    /// Per link partner, the configuration requests it completed.
    pub completed: BTreeMap<(usize, u8), usize>,
    /// Per link partner that hangs partway ([`Mesh::hang_after`]), how
    /// many configuration requests it completes before it hangs.
    pub hang_after: BTreeMap<(usize, u8), usize>,
}

/// A hot reset or retrain a switch's link carried out, seen by the link partner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkEvent {
    /// The switch and port.
    pub at: (usize, u8),
    pub request: LinkRequest,
    /// When the first configuration request reached the link partner
    /// after it, in clock nanoseconds.
    pub first_config_ns: Option<u64>,
}

/// How long a reset device keeps answering Request Retry Status after the
/// manager's first request reaches it: it is still booting (§6.6.1).
pub const BOOT_AFTER_RESET_NS: u64 = 30_000_000;

/// One switch's tables as a `DataPlane`.
pub struct SharedPlane {
    switches: Switches,
    index: usize,
}

/// The manager's own switch's data plane, and every other switch's in-band.
pub struct Planes {
    local: SharedPlane,
    remotes: InbandPlanes<MeshMemory>,
}

/// The management CPU's memory requests, carried through the switches
/// from the manager's switch (switch 0) as the injector sends them.
#[derive(Clone)]
pub struct MeshMemory {
    switches: Switches,
    links: Links,
    next_tag: Rc<Cell<u8>>,
}

/// Network and planes, lent out separately to the manager.
pub struct Mesh {
    pub net: Network,
    pub planes: Planes,
    links: Links,
}

/// The most hops one TLP and what follows from it may take (a routing loop).
const MAX_HOPS: usize = 4096;

/// The manager's own requester ID (bus 0, `FabricSettings::default`).
pub const MANAGER: Bdf = Bdf::new(0, 0, 0);

impl Mesh {
    /// `ports` ports on every switch, with these IDs; switch 0 runs the manager.
    pub fn new(ids: &[u64], ports: usize, clock: Clock) -> Self {
        let switches: Switches = Rc::new(RefCell::new(
            ids.iter()
                .map(|_| CsrWindow::new(Switch::new(ports)))
                .collect(),
        ));
        let links = Links::default();
        let memory = MeshMemory {
            switches: switches.clone(),
            links: links.clone(),
            next_tag: Rc::new(Cell::new(0)),
        };
        Mesh {
            net: Network {
                switches: switches.clone(),
                ids: ids.to_vec(),
                partners: BTreeMap::new(),
                arrivals: Vec::new(),
                to_cpu: Vec::new(),
                clock,
                next_tag: 0,
                rebuild: BTreeMap::new(),
                link_events: Vec::new(),
                completed: BTreeMap::new(),
                hang_after: BTreeMap::new(),
            },
            planes: Planes {
                local: SharedPlane { switches, index: 0 },
                remotes: InbandPlanes::new(memory),
            },
            links,
        }
    }

    /// Cables port `a.1` of switch `a.0` to port `b.1` of switch `b.0`.
    pub fn link(&mut self, a: (usize, u8), b: (usize, u8)) {
        self.net.partners.insert(a, Partner::Switch(b.0, b.1));
        self.net.partners.insert(b, Partner::Switch(a.0, a.1));
        self.links.borrow_mut().insert(a, b);
        self.links.borrow_mut().insert(b, a);
    }

    pub fn attach(&mut self, at: (usize, u8), device: FakeDevice) {
        self.net.partners.insert(at, Partner::Device(device));
    }

    /// Attaches the device `build` makes, and makes it again (its
    /// configuration space at its defaults) when the port's link is hot reset.
    pub fn attach_resettable(&mut self, at: (usize, u8), build: fn() -> FakeDevice) {
        self.attach(at, build());
        self.net.rebuild.insert(at, build);
    }

    pub fn attach_conventional(&mut self, at: (usize, u8), switch: ConventionalSwitch) {
        self.net
            .partners
            .insert(at, Partner::Conventional(Box::new(switch)));
    }

    pub fn attach_host(&mut self, at: (usize, u8)) {
        self.net.partners.insert(at, Partner::Host);
    }

    /// Attaches a device that has hung: it completes no request.
    pub fn attach_hung(&mut self, at: (usize, u8)) {
        self.net.partners.insert(at, Partner::Hung);
    }

    /// Makes what is attached at `at` hang after it has completed
    /// `requests` configuration requests (reads and writes, to any of its
    /// functions or below it): from then on it completes none.
    pub fn hang_after(&mut self, at: (usize, u8), requests: usize) {
        self.net.hang_after.insert(at, requests);
    }

    /// A configuration request from the host on `at` (switch, port),
    /// carried through the fabric to the manager's mailbox and answered
    /// by the manager; returns the data, or all ones for a read that did
    /// not complete successfully, as the host's root complex makes it (§2.3.2).
    #[allow(clippy::too_many_arguments)]
    pub fn host_config(
        &mut self,
        manager: &mut FabricManager,
        host: &mut FakeHost,
        at: (usize, u8),
        config_type: ConfigType,
        target: Bdf,
        offset: u16,
        write: Option<u32>,
    ) -> u32 {
        let packet = config_request(
            ROOT_PORT,
            7,
            config_type,
            target,
            offset,
            write.map(|w| (w, 0xf)),
        );
        let Body::Config(request) = packet.header.body else {
            unreachable!("built as a configuration request");
        };
        let to_manager = self.net.send(at.0, at.1, packet);
        // The host's switch's CPU takes it: the manager's own, or the
        // mailbox of another switch, which the manager reads in-band.
        let arrived = if at.0 == 0 {
            to_manager.len()
        } else {
            let mailbox = self.net.to_cpu.len();
            self.net.to_cpu.retain(|(switch, _)| *switch != at.0);
            mailbox - self.net.to_cpu.len()
        };
        assert_eq!(arrived, 1, "the request reaches the mailbox");
        host.inbox.push_back(HostConfigRequest {
            switch: self.net.ids[at.0],
            port: PortIndex(at.1),
            request,
            data: write.unwrap_or(0),
        });
        manager
            .service(&mut self.net, &mut self.planes, host)
            .expect("answered");
        let (to, completion, data) = host.completions.pop().expect("a completion");
        assert_eq!(to, (self.net.ids[at.0], PortIndex(at.1)));
        if completion.status == CompletionStatus::Successful {
            data.unwrap_or(0)
        } else {
            u32::MAX
        }
    }

    /// A switch's model, to look at.
    pub fn switch(&self, index: usize) -> std::cell::Ref<'_, Switch> {
        std::cell::Ref::map(self.net.switches.borrow(), |s| s[index].switch())
    }
}

fn completion(request: &ConfigRequest, status: CompletionStatus, data: Option<u32>) -> Packet {
    let data = data.filter(|_| status == CompletionStatus::Successful);
    let header = Header {
        digest_present: false,
        poisoned: false,
        body: Body::Completion(Completion {
            locked: false,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            completer: request.target,
            status,
            byte_count_modified: false,
            byte_count: 4,
            requester: request.requester,
            tag: request.tag,
            lower_address: 0,
            data_dw: data.map(|_| 1),
        }),
    };
    Packet::new(
        header,
        data.map(|d| d.to_le_bytes().to_vec()).unwrap_or_default(),
    )
}

fn status_of(result: &Result<Option<u32>, ConfigFault>) -> CompletionStatus {
    match result {
        Ok(_) => CompletionStatus::Successful,
        Err(ConfigFault::RequestRetry) => CompletionStatus::RequestRetry,
        Err(ConfigFault::CompleterAbort) => CompletionStatus::CompleterAbort,
        Err(_) => CompletionStatus::UnsupportedRequest,
    }
}

impl Network {
    fn role(&self, switch: usize, port: u8) -> PortRole {
        self.switches.borrow()[switch]
            .switch()
            .port_tables(PortIndex(port))
            .expect("the port exists")
            .role
    }

    /// Carries out the link requests the switches' data planes took: a
    /// hot reset rebuilds a resettable device, still booting; a retrain
    /// changes nothing a configuration request sees.
    fn carry_link_requests(&mut self) {
        let now = self.clock.0.get();
        let taken: Vec<_> = (0..self.ids.len())
            .flat_map(|s| {
                let requests = self.switches.borrow_mut()[s]
                    .switch_mut()
                    .take_link_requests();
                requests
                    .into_iter()
                    .map(move |(port, request)| (s, port.0, request))
            })
            .collect();
        for (switch, port, request) in taken {
            if request == LinkRequest::HotReset {
                if let Some(build) = self.rebuild.get(&(switch, port)) {
                    let mut device = build();
                    device.ready_at_ns = now + BOOT_AFTER_RESET_NS;
                    self.partners
                        .insert((switch, port), Partner::Device(device));
                }
            }
            self.link_events.push(LinkEvent {
                at: (switch, port),
                request,
                first_config_ns: None,
            });
        }
    }

    /// The answer of the function on the link of `(switch, port)` to a
    /// configuration request; `None` from a hung device.
    fn answer(
        &mut self,
        switch: usize,
        port: u8,
        request: &ConfigRequest,
        data: u32,
    ) -> Option<Packet> {
        self.carry_link_requests();
        let now = self.clock.0.get();
        for event in self
            .link_events
            .iter_mut()
            .filter(|e| e.at == (switch, port))
        {
            event.first_config_ns.get_or_insert(now);
        }
        let completed = self.completed.get(&(switch, port)).copied().unwrap_or(0);
        if self
            .hang_after
            .get(&(switch, port))
            .is_some_and(|last| completed >= *last)
        {
            return None;
        }
        let offset = request.byte_offset();
        let write = (request.direction == Direction::Write).then_some((data, request.first_be));
        let result = match self.partners.get_mut(&(switch, port)) {
            Some(Partner::Device(device)) if !device.takes(request.config_type, request.target) => {
                Err(ConfigFault::UnsupportedRequest)
            }
            Some(Partner::Conventional(below)) => {
                match below.config(now, request.config_type, request.target, offset, write) {
                    // Forwarded to a device that hung: no completion.
                    Err(ConfigFault::Timeout) => return None,
                    result => result,
                }
            }
            Some(Partner::Device(device)) => match request.direction {
                Direction::Read => device.config_read(now, request.target, offset).map(Some),
                Direction::Write => device
                    .config_write(now, request.target, offset, data, request.first_be)
                    .map(|_| None),
            },
            Some(Partner::Switch(far, far_port)) => {
                let mut switches = self.switches.borrow_mut();
                let window = &mut switches[*far];
                let identity = WeftIdentity {
                    switch_id: self.ids[*far],
                    port_count: window.switch().ports() as u8,
                    port_index: *far_port,
                    port_role: VsecRole::Fabric,
                };
                // The header and identity are read-only but for Command and
                // the BAR, which the switch's register holds.
                let mut space = management_function(0x1d1d, &identity).expect("fits");
                let value =
                    window.management_config(PortIndex(*far_port), &mut space, offset, write);
                Ok((request.direction == Direction::Read).then_some(value))
            }
            Some(Partner::Hung) => return None,
            _ => Err(ConfigFault::UnsupportedRequest),
        };
        *self.completed.entry((switch, port)).or_default() += 1;
        Some(completion(
            request,
            status_of(&result),
            result.ok().flatten(),
        ))
    }

    /// Offers a TLP at a port's ingress and carries it (and what follows
    /// from it) through the fabric.
    pub fn send(&mut self, switch: usize, port: u8, packet: Packet) -> Vec<Packet> {
        fabric::carry(self, Hop::In((switch, port), packet), MAX_HOPS)
    }

    fn request(
        &mut self,
        path: ConfigPath,
        target: Bdf,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> Result<u32, ConfigFault> {
        self.next_tag = (self.next_tag + 1) % 256;
        let (config_type, port) = match path {
            ConfigPath::Link(port) => (ConfigType::Type0, port),
            ConfigPath::Below(port) | ConfigPath::Routed(port) => (ConfigType::Type1, port),
        };
        let packet = config_request(MANAGER, self.next_tag, config_type, target, offset, write);
        let Body::Config(request) = packet.header.body else {
            unreachable!("built as a configuration request");
        };
        let replies = match path {
            // The CPU's own request on a link: its completion comes straight back.
            ConfigPath::Link(_) | ConfigPath::Below(_) => {
                let data = write.map_or(0, |w| w.0);
                self.answer(0, port.0, &request, data).into_iter().collect()
            }
            ConfigPath::Routed(_) => fabric::carry(self, Hop::Out((0, port.0), packet), MAX_HOPS),
        };
        let reply = replies
            .into_iter()
            .find_map(|p| match p.header.body {
                Body::Completion(c) if c.tag == request.tag => Some((c, p.payload)),
                _ => None,
            })
            .ok_or(ConfigFault::Timeout)?;
        match reply.0.status {
            CompletionStatus::Successful => Ok(reply
                .1
                .get(..4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            CompletionStatus::RequestRetry => Err(ConfigFault::RequestRetry),
            CompletionStatus::CompleterAbort => Err(ConfigFault::CompleterAbort),
            _ => Err(ConfigFault::UnsupportedRequest),
        }
    }
}

impl Cabling for Network {
    fn ingress(&mut self, (switch, port): (usize, u8), packet: &Packet) -> Option<Forwarding> {
        let bytes = packet.to_bytes().expect("well-formed");
        let out = self.switches.borrow_mut()[switch]
            .forward(PortIndex(port), &bytes)
            .expect("the port takes it");
        Some(out)
    }

    fn role(&self, (switch, port): (usize, u8)) -> Option<PortRole> {
        Some(Network::role(self, switch, port))
    }

    fn cross(&mut self, place: (usize, u8), _packet: &Packet) -> Option<(usize, u8)> {
        match self.partners.get(&place) {
            Some(Partner::Switch(far, far_port)) => Some((*far, *far_port)),
            _ => None,
        }
    }

    fn answer(&mut self, (switch, port): (usize, u8), packet: &Packet) -> Option<Packet> {
        let Body::Config(request) = packet.header.body else {
            unreachable!("only configuration requests are answered on a link");
        };
        let data = packet
            .payload
            .get(..4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        Network::answer(self, switch, port, &request, data)
    }

    fn leave(&mut self, (switch, port): (usize, u8), packet: Packet) {
        self.arrivals.push((switch, port, packet));
    }

    fn to_cpu(&mut self, switch: usize, packet: Packet) {
        self.to_cpu.push((switch, packet));
    }
}

impl ConfigRequests for Network {
    fn config_request(
        &mut self,
        path: ConfigPath,
        target: Bdf,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> Result<u32, ConfigFault> {
        self.request(path, target, offset, write)
    }

    /// A hung device's request times out at once here: the mesh keeps no
    /// time for the wait.
    fn limit_completion_wait(&mut self, _timeout_ns: Option<u64>) {}
}

impl Fabric for Planes {
    fn local(&mut self) -> &mut dyn DataPlane {
        &mut self.local
    }

    fn remote(&mut self, switch: RemoteSwitch) -> Option<&mut dyn DataPlane> {
        self.remotes
            .plane(switch)
            .map(|plane| plane as &mut dyn DataPlane)
    }
}

impl MeshMemory {
    /// Sends `request` out of `via` of the manager's switch and carries it
    /// and what follows from it: the completion that came back to the CPU
    /// with its data DW, if one did.
    fn send(&mut self, via: PortIndex, request: Packet) -> Option<(Completion, u32)> {
        let tag = request.header.tag();
        let back = fabric::carry(self, Hop::Out((0, via.0), request), MAX_HOPS);
        back.into_iter()
            .find_map(|packet| match packet.header.body {
                Body::Completion(completion)
                    if completion.tag == tag && completion.requester == MANAGER =>
                {
                    let data = packet
                        .payload
                        .get(..4)
                        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                    Some((completion, data))
                }
                _ => None,
            })
    }

    /// A one-DW memory request of the manager's at `address`.
    fn request(&self, op: MemoryOp, address: u64, write: Option<u32>) -> Packet {
        let tag = self.next_tag.get().wrapping_add(1);
        self.next_tag.set(tag);
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Memory(MemoryRequest {
                op,
                traffic_class: TrafficClass::default(),
                attributes: Attributes::default(),
                address_type: AddressType::default(),
                requester: MANAGER,
                tag: Tag::from_8bit(tag),
                address,
                length_dw: 1,
                first_be: 0xf,
                last_be: 0,
                processing_hint: None,
            }),
        };
        let payload = write
            .map(|value| value.to_le_bytes().to_vec())
            .unwrap_or_default();
        Packet::new(header, payload)
    }
}

impl FabricMemory for MeshMemory {
    fn read_memory(&mut self, via: PortIndex, address: u64) -> Result<u32, ConfigFault> {
        let request = self.request(MemoryOp::Read, address, None);
        let (completion, data) = self.send(via, request).ok_or(ConfigFault::Timeout)?;
        match completion.status {
            CompletionStatus::Successful => Ok(data),
            CompletionStatus::RequestRetry => Err(ConfigFault::RequestRetry),
            CompletionStatus::CompleterAbort => Err(ConfigFault::CompleterAbort),
            CompletionStatus::UnsupportedRequest => Err(ConfigFault::UnsupportedRequest),
        }
    }

    fn write_memory(
        &mut self,
        via: PortIndex,
        address: u64,
        value: u32,
    ) -> Result<(), ConfigFault> {
        let request = self.request(MemoryOp::Write, address, Some(value));
        self.send(via, request);
        Ok(())
    }
}

/// Only the links between switches: a memory request for a switch's
/// management BAR crosses those alone, and one that leaves the fabric
/// elsewhere is lost (its read times out).
impl Cabling for MeshMemory {
    fn ingress(&mut self, (switch, port): (usize, u8), packet: &Packet) -> Option<Forwarding> {
        let bytes = packet.to_bytes().expect("well-formed");
        self.switches.borrow_mut()[switch]
            .forward(PortIndex(port), &bytes)
            .ok()
    }

    fn role(&self, (switch, port): (usize, u8)) -> Option<PortRole> {
        Some(
            self.switches.borrow()[switch]
                .switch()
                .port_tables(PortIndex(port))?
                .role,
        )
    }

    fn cross(&mut self, place: (usize, u8), _packet: &Packet) -> Option<(usize, u8)> {
        self.links.borrow().get(&place).copied()
    }

    fn answer(&mut self, _place: (usize, u8), _packet: &Packet) -> Option<Packet> {
        unreachable!("the manager's memory requests cause no configuration request");
    }

    fn leave(&mut self, _place: (usize, u8), _packet: Packet) {}

    fn to_cpu(&mut self, _switch: usize, _packet: Packet) {}
}

/// Each access borrows the mesh's switch.
impl DataPlaneAccess for SharedPlane {
    fn port_count(&self) -> usize {
        self.switches.borrow()[self.index].switch().ports()
    }

    fn access<R>(
        &mut self,
        access: impl FnOnce(&mut dyn DataPlane) -> Result<R, TableWriteError>,
    ) -> Result<R, TableWriteError> {
        access(self.switches.borrow_mut()[self.index].switch_mut())
    }
}
