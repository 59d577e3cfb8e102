//! One weft switch with its hosts, endpoints and fabric manager, in simulated time.
//!
//! Every node — a host's root port, an endpoint, the switch — exchanges
//! wire TLPs over [`link`](crate::link) models, one per direction of every
//! port, so bandwidth, latency and ordering come from the links. The switch
//! is weft-model's transaction-level switch, adding a fixed traversal
//! latency; the management CPU runs the fabric manager natively, answers
//! host configuration requests from the switch's mailbox and reaches
//! endpoint configuration space directly (in hardware it injects
//! configuration TLPs; the model leaves that path out and says so).
//!
//! A host's software runs synchronously: while one host's CPU waits for an
//! answer, [`World`] advances every other node event by event
//! ([`HostLink`] is the host's view of everything past its root port).

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::time::Duration;

use weft_devices::{ConfigError, Device};
use weft_fabric::hw::{
    ConfigFault, FabricConfig, HostConfigRequest, HostInterface, HostSendError, Timer,
};
use weft_fabric::manager::FabricManager;
use weft_model::{Destination, Packet, PortIndex, Switch};
use weft_pcie::config::msi::MsiMessage;
use weft_pcie::tlp::{
    AddressType, Attributes, Body, Completion, Header, MemoryOp, MemoryRequest, Tag, TrafficClass,
};
use weft_pcie::Bdf;

use crate::host::{Fabric, Host};
use crate::link::{Credits, LinkConfig, LinkDirection, Picoseconds};

/// Port-to-port latency of the switch beyond its links: about the middle of
/// the published range for commercial Gen4 switches (85–140 ns including
/// PHY, shared/REFERENCE.md); the RTL measures 2 cycles of core latency.
pub const SWITCH_LATENCY: Duration = Duration::from_nanos(110);

/// How long the management CPU takes to answer a configuration request
/// from its mailbox: a few hundred instructions on the soft core.
pub const FIRMWARE_LATENCY: Duration = Duration::from_micros(2);

/// What sits behind a port.
enum Node {
    Host(Box<Host>),
    Device(Box<dyn Device>),
}

/// A direction on a port's link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Way {
    /// From the node to the switch.
    Up,
    /// From the switch to the node.
    Down,
}

/// Something that happens at a time.
#[derive(Debug)]
enum Event {
    /// A TLP arrives at the switch's ingress of `port`.
    AtSwitch(u8, Packet),
    /// A TLP arrives at the node behind `port`.
    AtNode(u8, Packet),
}

/// The whole system of one switch.
pub struct World {
    now: Duration,
    switch: Switch,
    manager: FabricManager,
    nodes: BTreeMap<u8, Node>,
    links: BTreeMap<(u8, Way), LinkDirection>,
    queue: BinaryHeap<Reverse<(Duration, u64)>>,
    pending: BTreeMap<u64, Event>,
    sequence: u64,
    mailbox: VecDeque<HostConfigRequest>,
    /// Messages the switch sent to the management CPU (errors for its event log).
    messages: Vec<Packet>,
}

fn to_ps(time: Duration) -> Picoseconds {
    time.as_nanos() as Picoseconds * 1000
}

fn from_ps(ps: Picoseconds) -> Duration {
    Duration::from_nanos(ps / 1000)
}

impl World {
    /// A switch with `ports` ports, driven by `manager`.
    pub fn new(ports: usize, manager: FabricManager) -> Self {
        World {
            now: Duration::ZERO,
            switch: Switch::new(ports),
            manager,
            nodes: BTreeMap::new(),
            links: BTreeMap::new(),
            queue: BinaryHeap::new(),
            pending: BTreeMap::new(),
            sequence: 0,
            mailbox: VecDeque::new(),
            messages: Vec::new(),
        }
    }

    /// Connects a host's root port to `port` over `link`.
    pub fn attach_host(&mut self, port: u8, host: Host, link: LinkConfig) {
        self.attach(port, Node::Host(Box::new(host)), link);
    }

    /// Connects an endpoint to `port` over `link`.
    pub fn attach_device(&mut self, port: u8, device: Box<dyn Device>, link: LinkConfig) {
        self.attach(port, Node::Device(device), link);
    }

    fn attach(&mut self, port: u8, node: Node, link: LinkConfig) {
        self.nodes.insert(port, node);
        for way in [Way::Up, Way::Down] {
            self.links
                .insert((port, way), LinkDirection::new(link, Credits::INFINITE));
        }
    }

    /// Simulated time now.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// The switch, for its counters and tables.
    pub fn switch(&self) -> &Switch {
        &self.switch
    }

    /// The fabric manager.
    pub fn manager(&self) -> &FabricManager {
        &self.manager
    }

    /// Messages the management CPU received (error reports, PME).
    pub fn messages(&self) -> &[Packet] {
        &self.messages
    }

    /// Starts the fabric manager: enumeration and table programming.
    pub fn start_manager(&mut self) -> Result<(), weft_fabric::manager::StartError> {
        let now_ns = self.now.as_nanos() as u64;
        let World {
            manager,
            switch,
            nodes,
            now,
            ..
        } = self;
        let clock = Cell::new(*now);
        let mut config = EndpointConfig { nodes, now: &clock };
        let mut timer = WorldTimer { now: &clock };
        let started = manager.start(&mut config, &mut timer, switch, now_ns);
        *now = clock.get();
        started
    }

    /// Runs `action` on the fabric manager with the switch and the host
    /// mailbox (bind, unbind), then sends what it produced.
    pub fn with_manager<R>(
        &mut self,
        action: impl FnOnce(&mut FabricManager, &mut Switch, &mut dyn HostInterface) -> R,
    ) -> R {
        let mut outbox = Outbox {
            queue: VecDeque::new(),
            out: Vec::new(),
        };
        let result = action(&mut self.manager, &mut self.switch, &mut outbox);
        self.send_from_cpu(outbox.out);
        self.flush_synthesized();
        result
    }

    /// A host's view of the fabric while its software runs: the host is
    /// taken out of the world for the call and put back after.
    pub fn with_host<R>(
        &mut self,
        port: u8,
        action: impl FnOnce(&mut Host, &mut HostLink<'_>) -> R,
    ) -> R {
        let Some(Node::Host(mut host)) = self.nodes.remove(&port) else {
            panic!("port {port} has no host");
        };
        let result = {
            let mut link = HostLink { world: self, port };
            action(&mut host, &mut link)
        };
        self.nodes.insert(port, Node::Host(host));
        result
    }

    /// Lets the system run until `deadline` with no host software waiting.
    pub fn run_until(&mut self, deadline: Duration) {
        while let Some(at) = self.next_event_time() {
            if at > deadline {
                break;
            }
            self.step(None);
        }
        self.now = self.now.max(deadline);
    }

    fn next_event_time(&self) -> Option<Duration> {
        self.queue.peek().map(|Reverse((at, _))| *at)
    }

    fn schedule(&mut self, at: Duration, event: Event) {
        self.sequence += 1;
        self.queue.push(Reverse((at, self.sequence)));
        self.pending.insert(self.sequence, event);
    }

    /// Puts `packet` on a port's link at `at`; it arrives when the link says.
    fn transmit(&mut self, port: u8, way: Way, packet: Packet, at: Duration) {
        let Some(link) = self.links.get_mut(&(port, way)) else {
            return;
        };
        let arrival = match link.send(to_ps(at), packet.clone()) {
            Ok(arrival) => from_ps(arrival),
            // Infinite credits: a link never refuses.
            Err(_) => at,
        };
        // The link keeps its own copy in flight only to pace the wire.
        link.deliver(u64::MAX);
        let event = match way {
            Way::Up => Event::AtSwitch(port, packet),
            Way::Down => Event::AtNode(port, packet),
        };
        self.schedule(arrival, event);
    }

    /// Handles the next event. A TLP arriving at `waiting_host` is returned
    /// instead of handled: that host's software is waiting for it.
    fn step(&mut self, waiting_host: Option<u8>) -> Option<Packet> {
        let Reverse((at, sequence)) = self.queue.pop()?;
        let event = self
            .pending
            .remove(&sequence)
            .expect("every queued event is pending");
        self.now = self.now.max(at);
        match event {
            Event::AtSwitch(port, packet) => self.at_switch(port, packet),
            Event::AtNode(port, packet) if Some(port) == waiting_host => return Some(packet),
            Event::AtNode(port, packet) => self.at_node(port, packet),
        }
        self.poll_nodes();
        None
    }

    fn at_switch(&mut self, port: u8, packet: Packet) {
        let bytes = packet.to_bytes().expect("nodes send well-formed TLPs");
        let forwarding = match self.switch.ingress(PortIndex(port), &bytes) {
            Ok(forwarding) => forwarding,
            Err(_) => {
                // Backpressure: the link partner offers it again shortly.
                let retry = self.now + Duration::from_micros(1);
                self.schedule(retry, Event::AtSwitch(port, packet));
                return;
            }
        };
        let leave = self.now + SWITCH_LATENCY;
        for delivery in forwarding.deliveries {
            match delivery.to {
                Destination::Port(out) => self.transmit(out.0, Way::Down, delivery.packet, leave),
                Destination::Cpu => self.deliver_to_cpu(delivery.from, delivery.packet),
            }
        }
    }

    fn deliver_to_cpu(&mut self, from: PortIndex, packet: Packet) {
        match packet.header.body {
            Body::Config(request) => {
                let data = u32::from_le_bytes(
                    packet
                        .payload
                        .get(..4)
                        .and_then(|b| b.try_into().ok())
                        .unwrap_or([0; 4]),
                );
                self.mailbox.push_back(HostConfigRequest {
                    port: from,
                    request,
                    data,
                });
                self.service_mailbox();
            }
            _ => self.messages.push(packet),
        }
    }

    fn service_mailbox(&mut self) {
        let World {
            manager,
            switch,
            nodes,
            now,
            mailbox,
            ..
        } = self;
        let clock = Cell::new(*now);
        let mut config = EndpointConfig { nodes, now: &clock };
        let mut outbox = Outbox {
            queue: std::mem::take(mailbox),
            out: Vec::new(),
        };
        // A request the manager cannot answer is its bug; the host then times out, as it would.
        let _ = manager.service(&mut config, switch, &mut outbox);
        self.send_from_cpu(outbox.out);
    }

    fn send_from_cpu(&mut self, out: Vec<(u8, Packet)>) {
        let at = self.now + FIRMWARE_LATENCY;
        for (port, packet) in out {
            self.transmit(port, Way::Down, packet, at);
        }
    }

    /// Completions the switch synthesized for abandoned requests go out of their host ports.
    fn flush_synthesized(&mut self) {
        let leave = self.now + SWITCH_LATENCY;
        for delivery in self.switch.take_synthesized() {
            if let Destination::Port(out) = delivery.to {
                self.transmit(out.0, Way::Down, delivery.packet, leave);
            }
        }
    }

    fn at_node(&mut self, port: u8, packet: Packet) {
        let now = self.now;
        let answers = match self.nodes.get_mut(&port) {
            Some(Node::Device(device)) => device.handle(now, &packet),
            Some(Node::Host(host)) => host.handle(now, packet),
            None => Vec::new(),
        };
        for answer in answers {
            self.transmit(port, Way::Up, answer, now);
        }
    }

    /// Lets every node send what it has to send now (DMA engines, interrupts).
    fn poll_nodes(&mut self) {
        let now = self.now;
        let mut sent = Vec::new();
        for (&port, node) in self.nodes.iter_mut() {
            loop {
                let batch = match node {
                    Node::Device(device) => device.poll(now),
                    Node::Host(host) => host.poll(now),
                };
                if batch.is_empty() {
                    break;
                }
                sent.extend(batch.into_iter().map(|packet| (port, packet)));
            }
        }
        for (port, packet) in sent {
            self.transmit(port, Way::Up, packet, now);
        }
    }
}

/// A host's view of everything past its root port.
pub struct HostLink<'a> {
    world: &'a mut World,
    port: u8,
}

impl Fabric for HostLink<'_> {
    fn now(&self) -> Duration {
        self.world.now
    }

    fn send(&mut self, packet: Packet) {
        let now = self.world.now;
        self.world.transmit(self.port, Way::Up, packet, now);
    }

    fn run(&mut self, deadline: Duration) -> Vec<Packet> {
        self.world.poll_nodes();
        let mut arrived = Vec::new();
        while let Some(at) = self.world.next_event_time() {
            if at > deadline || (!arrived.is_empty() && at > self.world.now) {
                break;
            }
            if let Some(packet) = self.world.step(Some(self.port)) {
                arrived.push(packet);
            }
        }
        if arrived.is_empty() {
            self.world.now = self.world.now.max(deadline);
        }
        arrived
    }
}

/// The manager's configuration access to endpoints.
struct EndpointConfig<'a> {
    nodes: &'a mut BTreeMap<u8, Node>,
    now: &'a Cell<Duration>,
}

fn fault(error: ConfigError) -> ConfigFault {
    match error {
        ConfigError::UnsupportedRequest { .. } => ConfigFault::UnsupportedRequest,
        ConfigError::Retry { .. } => ConfigFault::RequestRetry,
    }
}

impl FabricConfig for EndpointConfig<'_> {
    fn read(&mut self, port: PortIndex, target: Bdf, offset: u16) -> Result<u32, ConfigFault> {
        match self.nodes.get_mut(&port.0) {
            Some(Node::Device(device)) => device
                .config_read(self.now.get(), target, offset)
                .map_err(fault),
            // Host ports and empty ports have no endpoint below them.
            _ => Err(ConfigFault::UnsupportedRequest),
        }
    }

    fn write(
        &mut self,
        port: PortIndex,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigFault> {
        match self.nodes.get_mut(&port.0) {
            Some(Node::Device(device)) => device
                .config_write(self.now.get(), target, offset, value, byte_enables)
                .map_err(fault),
            _ => Err(ConfigFault::UnsupportedRequest),
        }
    }
}

/// The manager's clock: waiting moves simulated time on (nothing else runs
/// meanwhile, as nothing does while the fabric manager enumerates).
struct WorldTimer<'a> {
    now: &'a Cell<Duration>,
}

impl Timer for WorldTimer<'_> {
    fn now_ns(&mut self) -> u64 {
        self.now.get().as_nanos() as u64
    }

    fn wait_until_ns(&mut self, deadline_ns: u64) {
        self.now
            .set(self.now.get().max(Duration::from_nanos(deadline_ns)));
    }
}

/// The mailbox in, and the TLPs the management CPU sends out of host ports.
struct Outbox {
    queue: VecDeque<HostConfigRequest>,
    out: Vec<(u8, Packet)>,
}

impl HostInterface for Outbox {
    fn receive(&mut self) -> Option<HostConfigRequest> {
        self.queue.pop_front()
    }

    fn complete(
        &mut self,
        port: PortIndex,
        completion: Completion,
        data: Option<u32>,
    ) -> Result<(), HostSendError> {
        let payload = data.map(|dw| dw.to_le_bytes().to_vec()).unwrap_or_default();
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Completion(completion),
        };
        self.out.push((port.0, Packet::new(header, payload)));
        Ok(())
    }

    fn send_msi(
        &mut self,
        port: PortIndex,
        requester: Bdf,
        message: MsiMessage,
    ) -> Result<(), HostSendError> {
        // §6.1.4: an MSI is a one-DW memory write of the data to the address.
        let request = MemoryRequest {
            op: MemoryOp::Write,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            address_type: AddressType::default(),
            requester,
            tag: Tag::default(),
            address: message.address,
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
        self.out.push((
            port.0,
            Packet::new(header, u32::from(message.data).to_le_bytes().to_vec()),
        ));
        Ok(())
    }
}
