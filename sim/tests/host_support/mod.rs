//! A direct-wire test fabric for the host model: the host's root port link
//! goes to a minimal PCIe switch (one upstream port, downstream ports with
//! hot-plug slots, built with weft-pcie's builders) with weft-devices
//! models behind its downstream ports. Every TLP costs its wire bytes at
//! Gen3 x16 speed on one shared clock, so copies take measurable time.
//!
//! Routing follows what the host programmed (PCIe Base 6.0 §7.5.1.3):
//! Type 0 configuration requests on the link reach the upstream port; Type
//! 1 requests for its secondary bus reach downstream port `device`; for a
//! port's secondary bus they become Type 0 requests to its device 0
//! (§7.3.3); memory requests follow the bridges' windows and the BAR that
//! claims them, peer to peer included; completions route by Requester ID.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::time::Duration;

use weft_devices::gpu::{Gpu, GpuConfig};
use weft_devices::interrupt::msi_write;
use weft_devices::nvme::{Nvme, NvmeConfig};
use weft_devices::packet::{self as device_packet, RequestInfo};
use weft_devices::Device;
use weft_model::Packet;
use weft_pcie::config::function::{memory_window, prefetchable_window, BusNumbers};
use weft_pcie::config::msi::{Msi, MsiCap};
use weft_pcie::config::pcie_cap::{
    link_capabilities, link_speed, slot_capabilities, slot_control, slot_status, Link, LinkState,
    PcieCap, PcieCapability, PortType, Slot, SLOT_CONTROL,
};
use weft_pcie::config::{CapabilityList, ConfigSpace, FunctionIdentity, Type1Function};
use weft_pcie::tlp::{Body, CompletionStatus, ConfigType, Direction, FlowControlClass};
use weft_pcie::Bdf;
use weft_sim::host::Fabric;

/// Picoseconds per wire byte: Gen3 x16, 15.75 GB/s after 128b/130b.
const PS_PER_BYTE: u128 = 63;
/// Per-TLP framing, sequence number and LCRC bytes (REFERENCE.md).
const FRAMING: u128 = 8;

/// A device model behind a port.
pub enum Model {
    /// A GPU.
    Gpu(Box<Gpu>),
    /// An NVMe drive.
    Nvme(Box<Nvme>),
}

impl Model {
    fn device(&mut self) -> &mut dyn Device {
        match self {
            Model::Gpu(gpu) => gpu.as_mut(),
            Model::Nvme(nvme) => nvme.as_mut(),
        }
    }

    fn device_ref(&self) -> &dyn Device {
        match self {
            Model::Gpu(gpu) => gpu.as_ref(),
            Model::Nvme(nvme) => nvme.as_ref(),
        }
    }

    /// A default GPU.
    pub fn gpu() -> Model {
        Model::Gpu(Box::new(Gpu::new(GpuConfig::default()).expect("valid GPU")))
    }

    /// A GPU still booting for `boot_time` after `now`.
    pub fn booting_gpu(boot_time: Duration) -> Model {
        let config = GpuConfig {
            boot_time,
            ..GpuConfig::default()
        };
        Model::Gpu(Box::new(Gpu::new(config).expect("valid GPU")))
    }

    /// A default NVMe drive with 4 VFs.
    pub fn nvme() -> Model {
        Model::Nvme(Box::new(
            Nvme::new(NvmeConfig::default()).expect("valid NVMe"),
        ))
    }
}

/// A downstream port with its slot.
pub struct Port {
    space: ConfigSpace,
    pcie: PcieCap,
    msi: MsiCap,
    interrupt_pending: bool,
    /// What is plugged in.
    pub model: Option<Model>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    Host,
    Device(usize),
}

/// The direct-wire fabric.
pub struct Wire {
    ps: u128,
    upstream: ConfigSpace,
    /// The downstream ports, device 0.. on the upstream port's secondary bus.
    pub ports: Vec<Port>,
    queue: VecDeque<(Node, Packet)>,
    to_host: Vec<Packet>,
    /// TLPs delivered.
    pub delivered: u64,
    /// Peer-to-peer TLPs turned around in the switch.
    pub peer_to_peer: u64,
    /// Attention Button presses to make: (when, port), earliest first.
    presses: VecDeque<(Duration, usize)>,
}

const IDENTITY_UP: FunctionIdentity = FunctionIdentity {
    vendor_id: 0x1d1d,
    device_id: 0x0001,
    revision_id: 1,
    class_code: 0x06_04_00,
};
const IDENTITY_DOWN: FunctionIdentity = FunctionIdentity {
    vendor_id: 0x1d1d,
    device_id: 0x0002,
    revision_id: 1,
    class_code: 0x06_04_00,
};

fn port_space(
    identity: FunctionIdentity,
    port_type: PortType,
    slot: Option<Slot>,
) -> (ConfigSpace, PcieCap, MsiCap) {
    let mut space = Type1Function::switch_port(identity)
        .build()
        .expect("header without BARs");
    let mut pcie = PcieCapability::new(port_type);
    // 512-byte payloads, above the endpoints' 256.
    pcie.max_payload_supported = 2;
    pcie.link = Some(Link {
        capabilities: link_capabilities::DLL_LINK_ACTIVE_REPORTING,
        ..Link::trained(link_speed::GT_8, 16, 0)
    });
    pcie.slot = slot;
    let mut list = CapabilityList::new(&mut space).expect("fresh header");
    let pcie_offset = list.push(&pcie).expect("fits");
    let msi_offset = list
        .push(&Msi {
            multiple_message_capable: 0,
            address_64: true,
            per_vector_masking: false,
        })
        .expect("fits");
    (space, PcieCap::at(pcie_offset), MsiCap::at(msi_offset))
}

impl Wire {
    /// A switch with `ports` empty hot-plug downstream ports (physical
    /// slots 1..).
    pub fn new(ports: usize) -> Self {
        Self::with_slots(ports, Slot::hot_plug)
    }

    /// A switch whose `ports` empty downstream ports have slots of the
    /// standard usage model ([`Slot::attention_button`]): Attention
    /// Button, Power Controller, indicators, Command Completed.
    pub fn with_attention_buttons(ports: usize) -> Self {
        Self::with_slots(ports, Slot::attention_button)
    }

    fn with_slots(ports: usize, slot: fn(u16) -> Slot) -> Self {
        let (upstream, _, _) = port_space(IDENTITY_UP, PortType::SwitchUpstream, None);
        let ports = (0..ports)
            .map(|index| {
                let (space, pcie, msi) = port_space(
                    IDENTITY_DOWN,
                    PortType::SwitchDownstream,
                    Some(slot(index as u16 + 1)),
                );
                Port {
                    space,
                    pcie,
                    msi,
                    interrupt_pending: false,
                    model: None,
                }
            })
            .collect();
        Wire {
            ps: 0,
            upstream,
            ports,
            queue: VecDeque::new(),
            to_host: Vec::new(),
            delivered: 0,
            peer_to_peer: 0,
            presses: VecDeque::new(),
        }
    }

    /// Puts `model` in slot `index`: presence and link up, Presence Detect
    /// Changed and DLL State Changed latched, and the port's MSI sent if
    /// the host armed the slot (§6.7.3).
    pub fn plug(&mut self, index: usize, model: Model) {
        self.ports[index].model = Some(model);
        self.set_presence(index, true);
    }

    /// Presses slot `index`'s Attention Button (§6.7.1.5) when simulated
    /// time reaches `at`: Attention Button Pressed latches.
    pub fn press_attention_button_at(&mut self, index: usize, at: Duration) {
        self.presses.push_back((at, index));
        self.presses.make_contiguous().sort();
    }

    /// Surprise-removes what is in slot `index`.
    pub fn unplug(&mut self, index: usize) -> Option<Model> {
        let model = self.ports[index].model.take();
        self.set_presence(index, false);
        model
    }

    fn set_presence(&mut self, index: usize, present: bool) {
        let port = &mut self.ports[index];
        let state = if present {
            slot_status::PRESENCE_DETECT_STATE
        } else {
            0
        };
        port.pcie.set_slot_state(&mut port.space, state);
        port.pcie
            .raise_slot_events(&mut port.space, slot_status::PRESENCE_DETECT_CHANGED);
        self.update_link(index);
        self.check_interrupt(index);
    }

    /// The link is up while an adapter is present and the slot powered
    /// (Power Controller Control 0, §7.5.3.10); DLL State Changed latches
    /// when it changes.
    fn update_link(&mut self, index: usize) {
        let port = &mut self.ports[index];
        let powered = port.pcie.slot_control(&port.space) & slot_control::POWER_CONTROLLER_OFF == 0;
        let up = port.model.is_some() && powered;
        if port.pcie.link_state(&port.space).dll_link_active == up {
            return;
        }
        port.pcie.set_link_state(
            &mut port.space,
            LinkState {
                speed: link_speed::GT_8,
                width: if up { 16 } else { 0 },
                dll_link_active: up,
                training: false,
            },
        );
        port.pcie
            .raise_slot_events(&mut port.space, slot_status::DLL_STATE_CHANGED);
    }

    /// A Slot Control write is a command (§6.7.3.2): power follows Power
    /// Controller Control, and Command Completed latches unless the slot
    /// has No Command Completed Support.
    fn slot_command(&mut self, index: usize) {
        self.update_link(index);
        let port = &mut self.ports[index];
        let caps = port.pcie.slot_capabilities(&port.space);
        if caps & slot_capabilities::NO_COMMAND_COMPLETED == 0 {
            port.pcie
                .raise_slot_events(&mut port.space, slot_status::COMMAND_COMPLETED);
        }
    }

    /// Sends the port's MSI when its hot-plug interrupt condition rises
    /// (§6.7.3.4).
    fn check_interrupt(&mut self, index: usize) {
        let secondary = BusNumbers::read(&self.upstream).secondary;
        let port = &mut self.ports[index];
        let pending = port.pcie.hot_plug_interrupt_pending(&port.space);
        let rising = pending && !port.interrupt_pending;
        port.interrupt_pending = pending;
        if !rising {
            return;
        }
        if let Some(message) = port.msi.message(&port.space, 0) {
            let requester = Bdf::new(secondary, index as u8, 0);
            self.to_host.push(msi_write(requester, message));
        }
    }

    /// The model in slot `index`.
    pub fn model(&self, index: usize) -> Option<&Model> {
        self.ports[index].model.as_ref()
    }

    /// The GPU in slot `index`.
    pub fn gpu(&self, index: usize) -> &Gpu {
        match self.model(index) {
            Some(Model::Gpu(gpu)) => gpu,
            _ => panic!("no GPU in slot {index}"),
        }
    }

    /// The NVMe drive in slot `index`.
    pub fn nvme(&self, index: usize) -> &Nvme {
        match self.model(index) {
            Some(Model::Nvme(nvme)) => nvme,
            _ => panic!("no NVMe drive in slot {index}"),
        }
    }

    /// The configuration space of downstream port `index`.
    pub fn port_space(&self, index: usize) -> &ConfigSpace {
        &self.ports[index].space
    }

    /// The upstream port's configuration space.
    pub fn upstream_space(&self) -> &ConfigSpace {
        &self.upstream
    }

    fn now_duration(&self) -> Duration {
        Duration::from_nanos((self.ps / 1000) as u64)
    }

    fn charge(&mut self, packet: &Packet) {
        self.ps += (packet.wire_len() as u128 + FRAMING) * PS_PER_BYTE;
        self.delivered += 1;
    }

    /// The port whose windows hold `address` and whose device claims it.
    fn claimer(&self, address: u64) -> Option<usize> {
        let up = memory_window(&self.upstream).is_some_and(|w| w.contains(address))
            || prefetchable_window(&self.upstream).is_some_and(|w| w.contains(address));
        if !up {
            return None;
        }
        self.ports.iter().position(|port| {
            let inside = memory_window(&port.space).is_some_and(|w| w.contains(address))
                || prefetchable_window(&port.space).is_some_and(|w| w.contains(address));
            inside
                && port
                    .model
                    .as_ref()
                    .is_some_and(|m| m.device_ref().claim(address).is_some())
        })
    }

    fn unsupported(packet: &Packet, completer: Bdf) -> Option<Packet> {
        if packet.header.flow_control_class() != FlowControlClass::NonPosted {
            return None;
        }
        let info = RequestInfo::of(&packet.header);
        Some(device_packet::completion_for(
            &info,
            completer,
            CompletionStatus::UnsupportedRequest,
            4,
            0,
            None,
        ))
    }

    fn route(&mut self, from: Node, mut packet: Packet) {
        self.charge(&packet);
        let now = self.now_duration();
        let back = |wire: &mut Wire, response: Option<Packet>| {
            if let Some(response) = response {
                wire.queue.push_back((Node::Device(usize::MAX), response));
            }
        };
        match &mut packet.header.body {
            Body::Config(request) => {
                let target = request.target;
                let buses = BusNumbers::read(&self.upstream);
                if request.config_type == ConfigType::Type0 {
                    // The upstream port: device 0 only (§7.3.1).
                    if target.device() != 0 || target.function() != 0 {
                        let ur = Self::unsupported(&packet, target);
                        back(self, ur);
                        return;
                    }
                    let response = config_on(&mut self.upstream, &packet);
                    back(self, Some(response));
                    return;
                }
                if target.bus() == buses.secondary {
                    let index = usize::from(target.device());
                    if target.function() != 0 || index >= self.ports.len() {
                        let ur = Self::unsupported(&packet, target);
                        back(self, ur);
                        return;
                    }
                    let write = request.direction == Direction::Write;
                    let slot_control = self.ports[index].pcie.offset + SLOT_CONTROL;
                    let command = write
                        && request.byte_offset() & !3 == slot_control & !3
                        && request.first_be & 0b0011 != 0;
                    let response = config_on(&mut self.ports[index].space, &packet);
                    if command {
                        self.slot_command(index);
                    }
                    if write {
                        self.check_interrupt(index);
                    }
                    back(self, Some(response));
                    return;
                }
                let port = self
                    .ports
                    .iter()
                    .position(|p| BusNumbers::read(&p.space).forwards(target.bus()));
                let Some(index) = port else {
                    let ur = Self::unsupported(&packet, target);
                    back(self, ur);
                    return;
                };
                let secondary = BusNumbers::read(&self.ports[index].space).secondary;
                if target.bus() == secondary {
                    if target.device() != 0 {
                        let ur = Self::unsupported(&packet, target);
                        back(self, ur);
                        return;
                    }
                    request.config_type = ConfigType::Type0;
                }
                match self.ports[index].model.as_mut() {
                    Some(model) => {
                        for response in model.device().handle(now, &packet) {
                            self.queue.push_back((Node::Device(index), response));
                        }
                    }
                    None => {
                        let ur = Self::unsupported(&packet, target);
                        back(self, ur);
                    }
                }
            }
            Body::Memory(request) => {
                let address = request.address;
                match self.claimer(address) {
                    Some(index) => {
                        if from != Node::Host {
                            self.peer_to_peer += 1;
                        }
                        if let Some(model) = self.ports[index].model.as_mut() {
                            for response in model.device().handle(now, &packet) {
                                self.queue.push_back((Node::Device(index), response));
                            }
                        }
                    }
                    None if from == Node::Host => {
                        let ur = Self::unsupported(&packet, Bdf(0));
                        back(self, ur);
                    }
                    None => self.to_host.push(packet),
                }
            }
            Body::Completion(completion) => {
                let requester = completion.requester;
                if requester.bus() == 0 {
                    self.to_host.push(packet);
                    return;
                }
                let owner = self.ports.iter().position(|p| {
                    p.model
                        .as_ref()
                        .is_some_and(|m| m.device_ref().owns(requester))
                });
                if let Some(index) = owner {
                    if let Some(model) = self.ports[index].model.as_mut() {
                        for response in model.device().handle(now, &packet) {
                            self.queue.push_back((Node::Device(index), response));
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Answers a configuration request on a switch port's own space.
fn config_on(space: &mut ConfigSpace, packet: &Packet) -> Packet {
    let info = RequestInfo::of(&packet.header);
    let Body::Config(request) = &packet.header.body else {
        unreachable!("only configuration requests come here");
    };
    let offset = request.byte_offset();
    let data = match request.direction {
        Direction::Read => Some(space.read(offset).to_le_bytes().to_vec()),
        Direction::Write => {
            let mut lanes = [0u8; 4];
            let n = packet.payload.len().min(4);
            lanes[..n].copy_from_slice(&packet.payload[..n]);
            space.write(offset, u32::from_le_bytes(lanes), request.first_be);
            None
        }
    };
    device_packet::completion_for(
        &info,
        request.target,
        CompletionStatus::Successful,
        4,
        0,
        data,
    )
}

impl Fabric for Wire {
    fn now(&self) -> Duration {
        self.now_duration()
    }

    fn send(&mut self, packet: Packet) {
        self.queue.push_back((Node::Host, packet));
    }

    fn run(&mut self, deadline: Duration) -> Vec<Packet> {
        loop {
            while let Some((from, packet)) = self.queue.pop_front() {
                self.route(from, packet);
            }
            if !self.to_host.is_empty() {
                return std::mem::take(&mut self.to_host);
            }
            let now = self.now_duration();
            let mut any = false;
            for index in 0..self.ports.len() {
                if let Some(model) = self.ports[index].model.as_mut() {
                    for packet in model.device().poll(now) {
                        any = true;
                        self.queue.push_back((Node::Device(index), packet));
                    }
                }
            }
            if !any {
                if let Some(&(at, index)) = self.presses.front() {
                    if at <= deadline {
                        self.presses.pop_front();
                        self.ps = self.ps.max(at.as_nanos() * 1000);
                        let port = &mut self.ports[index];
                        port.pcie.raise_slot_events(
                            &mut port.space,
                            slot_status::ATTENTION_BUTTON_PRESSED,
                        );
                        self.check_interrupt(index);
                        continue;
                    }
                }
                let deadline_ps = deadline.as_nanos() * 1000;
                self.ps = self.ps.max(deadline_ps);
                return Vec::new();
            }
        }
    }
}
