//! The hardware of the fabric manager's tests: the data plane is weft-model's
//! `Switch` behind the `DataPlane` trait, endpoints are tiny function models
//! built from weft-pcie's configuration-space builders, and hosts send real
//! configuration TLPs through the switch to the manager's mailbox.
#![allow(dead_code)]

use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;

use weft_fabric::hw::{
    ConfigFault, ConfigPath, ConfigRequests, HostConfigRequest, HostInterface, HostSendError, Timer,
};
use weft_fabric::manager::FabricManager;
use weft_fabric::pcie::config::ari::Ari;
use weft_fabric::pcie::config::msi::MsiMessage;
use weft_fabric::pcie::config::sriov::{control, SrIov, SriovCap, REQUIRED_PAGE_SIZES};
use weft_fabric::pcie::config::{
    Bar, CapabilityList, ConfigSpace, FunctionIdentity, Type0Function,
};
use weft_fabric::pcie::tlp::{
    AddressType, Attributes, Body, Completion, ConfigRequest, ConfigType, Header, MemoryOp,
    MemoryRequest, Tag, TrafficClass,
};
use weft_fabric::pcie::Bdf;
use weft_model::{Destination, Forwarding, IdMapping, Packet, PortIndex, PortRole, Switch, Window};

pub mod conventional;
pub mod mesh;
pub mod reference;

// ---------------------------------------------------------------- time

/// A clock shared by the timer and the endpoint models (for their readiness).
#[derive(Clone, Default)]
pub struct Clock(pub Rc<Cell<u64>>);

impl Timer for Clock {
    fn now_ns(&mut self) -> u64 {
        self.0.get()
    }

    fn wait_until_ns(&mut self, deadline_ns: u64) {
        self.0.set(self.0.get().max(deadline_ns));
    }
}

// ---------------------------------------------------------------- data plane

/// The data plane: weft-model's switch, which implements `DataPlane` itself,
/// with the views the tests check.
pub struct ModelPlane {
    pub switch: Switch,
}

impl ModelPlane {
    pub fn new(ports: usize) -> Self {
        ModelPlane {
            switch: Switch::new(ports),
        }
    }

    fn tables(&self, port: u8) -> &weft_model::PortTables {
        self.switch
            .port_tables(PortIndex(port))
            .expect("the port exists")
    }

    /// The role last written for a port.
    pub fn role(&self, port: u8) -> PortRole {
        self.tables(port).role
    }

    /// The windows of a port in use.
    pub fn windows(&self, port: u8) -> Vec<Window> {
        self.tables(port).windows.clone()
    }

    /// The ID map of a port.
    pub fn id_map(&self, port: u8) -> Vec<IdMapping> {
        self.tables(port).id_map.clone()
    }

    /// Offers a TLP at a port's ingress.
    pub fn send(&mut self, port: u8, header: Header, payload: &[u8]) -> Forwarding {
        let bytes = Packet::new(header, payload.to_vec())
            .to_bytes()
            .expect("a well-formed TLP");
        self.switch
            .ingress(PortIndex(port), &bytes)
            .expect("the port exists and has room")
    }
}

// ---------------------------------------------------------------- endpoints

/// One function of a fake device.
pub struct FakeFunction {
    /// Function number (8-bit under ARI).
    pub number: u8,
    pub space: ConfigSpace,
    /// SR-IOV capability and the VFs' spaces (TotalVFs of them).
    pub sriov: Option<(SriovCap, Vec<ConfigSpace>)>,
}

/// A device below a port: functions that capture their bus number from
/// Type 0 writes (§2.2.6.2) and answer Request Retry Status until ready.
pub struct FakeDevice {
    pub functions: Vec<FakeFunction>,
    pub bus: Option<u8>,
    pub ready_at_ns: u64,
    pub ari: bool,
    /// Whether the device has hung: it takes every request in and
    /// completes none, so each waits its whole wait and times out.
    pub hung: bool,
}

enum Addressed {
    Pf(usize),
    Vf(usize, usize),
}

impl FakeDevice {
    pub fn new(functions: Vec<FakeFunction>) -> Self {
        let ari = false;
        FakeDevice {
            functions,
            bus: None,
            ready_at_ns: 0,
            ari,
            hung: false,
        }
    }

    fn find(&self, target: Bdf) -> Option<Addressed> {
        let bus = self.bus.unwrap_or(target.bus());
        for (i, f) in self.functions.iter().enumerate() {
            let id = Bdf::new_ari(bus, f.number);
            let matches = if self.ari {
                target == id
            } else {
                target.bus() == bus && target.device() == 0 && target.function() == f.number
            };
            if matches {
                return Some(Addressed::Pf(i));
            }
            if let Some((cap, vfs)) = &f.sriov {
                let active = cap.active_vfs(&f.space);
                for vf in 1..=active {
                    if cap.vf_routing_id(&f.space, id, vf) == Ok(target) {
                        return Some(Addressed::Vf(i, usize::from(vf - 1)));
                    }
                }
                let _ = vfs;
            }
        }
        None
    }
}

/// How long a request waits for its completion unless the manager says
/// otherwise (`FabricConfig::limit_completion_wait`): the firmware
/// mailbox's wait, 50 ms.
pub const OWN_WAIT_NS: u64 = 50_000_000;

/// Every port's device, reached through `FabricConfig`.
pub struct FakeFabric {
    pub devices: Vec<Option<FakeDevice>>,
    pub clock: Clock,
    /// The wait the manager set for its next requests, if any.
    pub wait_ns: Option<u64>,
    /// The waits of the requests that timed out, in order.
    pub timed_out: Vec<u64>,
}

impl FakeFabric {
    pub fn new(ports: usize, clock: Clock) -> Self {
        FakeFabric {
            devices: (0..ports).map(|_| None).collect(),
            clock,
            wait_ns: None,
            timed_out: Vec::new(),
        }
    }

    /// The configuration space of the PF numbered `number` below `port`.
    pub fn function(&self, port: u8, number: u8) -> &ConfigSpace {
        &self.devices[usize::from(port)]
            .as_ref()
            .expect("a device")
            .functions
            .iter()
            .find(|f| f.number == number)
            .expect("the function")
            .space
    }

    fn device(&mut self, port: PortIndex) -> Result<&mut FakeDevice, ConfigFault> {
        self.devices
            .get_mut(usize::from(port.0))
            .ok_or(ConfigFault::NoSuchPort(port))?
            .as_mut()
            .ok_or(ConfigFault::UnsupportedRequest)
    }
}

impl FakeDevice {
    /// Whether the device takes a request of `config_type` for `target`:
    /// every Type 0 request on its link, and Type 1 requests for the
    /// further buses its VFs sit on (PCIe Base 6.0 §9.3.3.9), which the
    /// port above forwards as Type 1 (§7.3.3).
    pub fn takes(&self, config_type: ConfigType, target: Bdf) -> bool {
        config_type == ConfigType::Type0 || self.bus.is_some_and(|bus| target.bus() != bus)
    }

    /// A configuration read as the device answers it at time `now`.
    pub fn config_read(&mut self, now: u64, target: Bdf, offset: u16) -> Result<u32, ConfigFault> {
        if now < self.ready_at_ns {
            return Err(ConfigFault::RequestRetry);
        }
        match self.find(target).ok_or(ConfigFault::UnsupportedRequest)? {
            Addressed::Pf(i) => Ok(self.functions[i].space.read(offset)),
            Addressed::Vf(i, v) => {
                Ok(self.functions[i].sriov.as_ref().expect("has VFs").1[v].read(offset))
            }
        }
    }

    /// A configuration write as the device takes it at time `now`.
    pub fn config_write(
        &mut self,
        now: u64,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigFault> {
        if now < self.ready_at_ns {
            return Err(ConfigFault::RequestRetry);
        }
        let addressed = self.find(target).ok_or(ConfigFault::UnsupportedRequest)?;
        if self.bus.is_none() {
            self.bus = Some(target.bus());
        }
        match addressed {
            Addressed::Pf(i) => {
                let f = &mut self.functions[i];
                match &f.sriov {
                    Some((cap, _)) => cap.device_write(&mut f.space, offset, value, byte_enables),
                    None => f.space.write(offset, value, byte_enables),
                }
            }
            Addressed::Vf(i, v) => self.functions[i].sriov.as_mut().expect("has VFs").1[v].write(
                offset,
                value,
                byte_enables,
            ),
        }
        Ok(())
    }
}

impl ConfigRequests for FakeFabric {
    /// Type 0 on a port's link reaches its device; Type 1 below it only
    /// what the device takes as Type 1 (its VFs past the first bus). No
    /// fabric port: nothing is routed.
    fn config_request(
        &mut self,
        path: ConfigPath,
        target: Bdf,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> Result<u32, ConfigFault> {
        let now = self.clock.0.get();
        let (port, config_type) = match path {
            ConfigPath::Link(port) => (port, ConfigType::Type0),
            ConfigPath::Below(port) => (port, ConfigType::Type1),
            ConfigPath::Routed(via) => return Err(ConfigFault::NoSuchPort(via)),
        };
        let wait = self.wait_ns.unwrap_or(OWN_WAIT_NS);
        let device = self.device(port)?;
        if device.hung {
            self.clock.0.set(now + wait);
            self.timed_out.push(wait);
            return Err(ConfigFault::Timeout);
        }
        if config_type == ConfigType::Type1 && !device.takes(config_type, target) {
            return Err(ConfigFault::UnsupportedRequest);
        }
        match write {
            Some((value, byte_enables)) => device
                .config_write(now, target, offset, value, byte_enables)
                .map(|()| 0),
            None => device.config_read(now, target, offset),
        }
    }

    fn limit_completion_wait(&mut self, timeout_ns: Option<u64>) {
        self.wait_ns = timeout_ns;
    }
}

pub fn identity(vendor_id: u16, device_id: u16, class_code: u32) -> FunctionIdentity {
    FunctionIdentity {
        vendor_id,
        device_id,
        revision_id: 1,
        class_code,
    }
}

/// A function with the given BARs and nothing else.
pub fn plain_function(
    number: u8,
    id: FunctionIdentity,
    bars: [Option<Bar>; 6],
    multi: bool,
) -> FakeFunction {
    let mut f = Type0Function::new(id);
    f.bars = bars;
    f.multi_function = multi;
    FakeFunction {
        number,
        space: f.build().expect("valid BARs"),
        sriov: None,
    }
}

/// A function with an ARI capability pointing at `next`.
pub fn ari_function(
    number: u8,
    next: u8,
    id: FunctionIdentity,
    bars: [Option<Bar>; 6],
) -> FakeFunction {
    let mut f = plain_function(number, id, bars, false);
    let mut list = CapabilityList::new(&mut f.space).expect("fresh");
    list.push_extended(&Ari {
        next_function: next,
        function_groups: 0,
    })
    .expect("fits");
    f
}

/// An SR-IOV PF with an ARI capability (last function).
pub fn sriov_pf(id: FunctionIdentity, bars: [Option<Bar>; 6], sriov: SrIov) -> FakeFunction {
    let mut f = plain_function(0, id, bars, false);
    sriov.validate().expect("valid SR-IOV");
    let mut list = CapabilityList::new(&mut f.space).expect("fresh");
    list.push_extended(&Ari {
        next_function: 0,
        function_groups: 0,
    })
    .expect("fits");
    let offset = list.push_extended(&sriov).expect("fits");
    let vf = Type0Function::new(identity(0xffff, 0xffff, id.class_code));
    let vfs = (0..sriov.total_vfs)
        .map(|_| vf.build().expect("no BARs"))
        .collect();
    f.sriov = Some((SriovCap::at(offset), vfs));
    f
}

/// Whether VF Enable is set on a fake PF.
pub fn vf_enabled(space: &ConfigSpace, cap: SriovCap) -> bool {
    space.read_u16(cap.offset + weft_fabric::pcie::config::sriov::CONTROL) & control::VF_ENABLE != 0
}

// ---------------------------------------------------------------- hosts

/// The mailboxes and the host-facing egress, recorded; each host port
/// named by (switch ID, port).
#[derive(Default)]
pub struct FakeHost {
    pub inbox: VecDeque<HostConfigRequest>,
    pub completions: Vec<((u64, PortIndex), Completion, Option<u32>)>,
    pub msis: Vec<((u64, PortIndex), Bdf, MsiMessage)>,
    /// Whether the egress queue to the hosts is full, refusing MSIs.
    pub queue_full: bool,
}

impl HostInterface for FakeHost {
    fn receive(&mut self) -> Option<HostConfigRequest> {
        self.inbox.pop_front()
    }

    fn complete(
        &mut self,
        switch: u64,
        port: PortIndex,
        completion: Completion,
        data: Option<u32>,
    ) -> Result<(), HostSendError> {
        self.completions.push(((switch, port), completion, data));
        Ok(())
    }

    fn send_msi(
        &mut self,
        switch: u64,
        port: PortIndex,
        requester: Bdf,
        message: MsiMessage,
    ) -> Result<(), HostSendError> {
        if self.queue_full {
            return Err(HostSendError::QueueFull(port));
        }
        self.msis.push(((switch, port), requester, message));
        Ok(())
    }
}

/// The whole rig: switch model, endpoints, clock, mailbox, manager.
pub struct Rig {
    pub plane: ModelPlane,
    pub fabric: FakeFabric,
    pub clock: Clock,
    pub host: FakeHost,
    pub manager: FabricManager,
}

/// The host's root port: requester of its configuration requests.
pub const ROOT_PORT: Bdf = Bdf::new(0, 0, 0);

impl Rig {
    /// A configuration request from the host on `port`, through the switch
    /// to the mailbox and answered by the manager; returns the completion
    /// and data. A read that completes with anything but success reads as
    /// all ones, as the host's root complex makes it (§2.3.2).
    pub fn config(
        &mut self,
        port: u8,
        config_type: ConfigType,
        target: Bdf,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> (Completion, u32) {
        let request = config_request(ROOT_PORT, 7, config_type, target, offset, write);
        let out = self.plane.send(port, request.header, &request.payload);
        assert_eq!(out.deliveries.len(), 1, "{out:#?}");
        assert_eq!(out.deliveries[0].to, Destination::Cpu);
        let packet = &out.deliveries[0].packet;
        let Body::Config(request) = packet.header.body else {
            panic!("a configuration request reaches the mailbox");
        };
        let data = packet
            .payload
            .get(..4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let switch = self.manager.settings().switch_id;
        self.host.inbox.push_back(HostConfigRequest {
            switch,
            port: PortIndex(port),
            request,
            data,
        });
        let handled = self
            .manager
            .service(&mut self.fabric, &mut self.plane.switch, &mut self.host)
            .expect("tables written");
        assert_eq!(handled, 1);
        let (to, completion, data) = self.host.completions.pop().expect("a completion");
        assert_eq!(to, (switch, PortIndex(port)));
        assert_eq!(completion.requester, ROOT_PORT);
        (completion, data.unwrap_or(u32::MAX))
    }

    pub fn read(&mut self, port: u8, config_type: ConfigType, target: Bdf, offset: u16) -> u32 {
        self.config(port, config_type, target, offset, None).1
    }

    pub fn write(
        &mut self,
        port: u8,
        config_type: ConfigType,
        target: Bdf,
        offset: u16,
        value: u32,
    ) {
        self.config(port, config_type, target, offset, Some((value, 0xf)));
    }

    pub fn write16(
        &mut self,
        port: u8,
        config_type: ConfigType,
        target: Bdf,
        offset: u16,
        value: u16,
    ) {
        let shift = (offset & 2) * 8;
        let be = if offset & 2 == 0 { 0b0011 } else { 0b1100 };
        self.config(
            port,
            config_type,
            target,
            offset & !3,
            Some((u32::from(value) << shift, be)),
        );
    }
}

impl Rig {
    /// Where virtual downstream port `downstream` (device = slot, on the
    /// upstream port's secondary bus) of the host on `port` has its PCI
    /// Express capability.
    pub fn slot_pcie(&self, port: u8, downstream: Bdf) -> u16 {
        let switch = self.manager.settings().switch_id;
        self.manager
            .virtual_switch_on(switch, PortIndex(port))
            .expect("a host port")
            .downstream[usize::from(downstream.device())]
        .caps
        .pcie
        .offset
    }

    /// The host reads Slot Control and Slot Status (§7.5.3.10-11) of
    /// `downstream`: (control, status).
    pub fn slot_registers(&mut self, port: u8, downstream: Bdf) -> (u16, u16) {
        let pcie = self.slot_pcie(port, downstream);
        let dword = self.read(
            port,
            ConfigType::Type1,
            downstream,
            pcie + weft_fabric::pcie::config::pcie_cap::SLOT_CONTROL,
        );
        (dword as u16, (dword >> 16) as u16)
    }

    /// The host's hot-plug driver writes Slot Control of `downstream`
    /// (a hot-plug command, §6.7.3.2), leaving Slot Status alone.
    pub fn write_slot_control(&mut self, port: u8, downstream: Bdf, control: u16) {
        let pcie = self.slot_pcie(port, downstream);
        self.write16(
            port,
            ConfigType::Type1,
            downstream,
            pcie + weft_fabric::pcie::config::pcie_cap::SLOT_CONTROL,
            control,
        );
    }

    /// The host's hot-plug driver powers `downstream`'s slot off: Power
    /// Controller Control = Off, the rest of Slot Control as it reads it.
    pub fn power_off_slot(&mut self, port: u8, downstream: Bdf) {
        let (control, _) = self.slot_registers(port, downstream);
        let off = weft_fabric::pcie::config::pcie_cap::slot_control::POWER_CONTROLLER_OFF;
        self.write_slot_control(port, downstream, control | off);
    }
}

/// A configuration request from `requester` with tag `tag` to `offset` of
/// `target`, a write of `(data, first_be)` if `write` is some.
pub fn config_request(
    requester: Bdf,
    tag: u16,
    config_type: ConfigType,
    target: Bdf,
    offset: u16,
    write: Option<(u32, u8)>,
) -> Packet {
    let request = ConfigRequest::new(
        config_type,
        requester,
        Tag::new(tag).expect("fits"),
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
        .map(|w| w.0.to_le_bytes().to_vec())
        .unwrap_or_default();
    Packet::new(header, payload)
}

/// A memory request header from a host or endpoint.
pub fn memory(op: MemoryOp, requester: Bdf, tag: u16, address: u64, length_dw: u16) -> Header {
    Header {
        digest_present: false,
        poisoned: false,
        body: Body::Memory(MemoryRequest {
            op,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            address_type: AddressType::default(),
            requester,
            tag: Tag::new(tag).expect("fits"),
            address,
            length_dw,
            first_be: 0xf,
            last_be: if length_dw == 1 { 0 } else { 0xf },
            processing_hint: None,
        }),
    }
}

/// The memory request inside a packet.
pub fn as_memory(packet: &Packet) -> MemoryRequest {
    match packet.header.body {
        Body::Memory(m) => m,
        other => panic!("expected a memory request, got {other:?}"),
    }
}

pub const SRIOV_REQUIRED_PAGES: u32 = REQUIRED_PAGE_SIZES;

/// Device ID of the fake NVMe drive's VFs.
pub const NVME_VF_DEVICE: u16 = 0xa825;

/// The fake NVMe drive's SR-IOV capability: `vfs` VFs at First VF Offset
/// 0x80 and VF Stride 0x40, each with one 64-bit 16 KiB VF BAR.
pub fn nvme_sriov(vfs: u16) -> SrIov {
    SrIov {
        capabilities: 0,
        initial_vfs: vfs,
        total_vfs: vfs,
        function_dependency_link: 0,
        first_vf_offset: 0x80,
        vf_stride: 0x40,
        vf_device_id: NVME_VF_DEVICE,
        supported_page_sizes: SRIOV_REQUIRED_PAGES,
        vf_bars: [
            Some(Bar::memory64(16 << 10, false)),
            None,
            None,
            None,
            None,
            None,
        ],
        migration_state_array: 0,
    }
}
