//! The hardware of the fabric manager's tests: the data plane is weft-model's
//! `Switch` behind the `DataPlane` trait, endpoints are tiny function models
//! built from weft-pcie's configuration-space builders, and hosts send real
//! configuration TLPs through the switch to the manager's mailbox.
#![allow(dead_code)]

use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;

use weft_fabric::hw::{
    ConfigFault, DataPlane, FabricConfig, HostConfigRequest, HostInterface, HostSendError,
    TableWriteError, Timer,
};
use weft_fabric::manager::FabricManager;
use weft_fabric::pcie::config::ari::Ari;
use weft_fabric::pcie::config::msi::MsiMessage;
use weft_fabric::pcie::config::sriov::{control, SrIov, SriovCap, REQUIRED_PAGE_SIZES};
use weft_fabric::pcie::config::{
    Bar, CapabilityList, ConfigSpace, FunctionIdentity, Type0Function,
};
use weft_fabric::pcie::tlp::{
    AddressType, Attributes, Body, Completion, ConfigRequest, ConfigType, Direction, Header,
    MemoryOp, MemoryRequest, Tag, TrafficClass,
};
use weft_fabric::pcie::Bdf;
use weft_fabric::tables as ft;
use weft_model::{
    AddressRoute, Delivery, Destination, Forwarding, HostIndex, IdMapping, Owner, Packet,
    Permissions, PortIndex, PortRole, PortTables, RouteTables, Switch, Window,
};
use weft_regs::capacity;

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

/// `DataPlane` over the transaction-level switch: entries are kept per
/// table and the whole port or route table is handed to the model on every write.
pub struct ModelPlane {
    pub switch: Switch,
    ports: Vec<PortTables>,
    windows: Vec<[ft::Window; capacity::WINDOWS_PER_PORT]>,
    id_maps: Vec<[Option<ft::IdMapping>; capacity::BOUND_FUNCTIONS_PER_HOST]>,
    routes: [Option<ft::AddressRoute>; capacity::ADDRESS_ROUTES],
    buses: [Option<ft::Destination>; capacity::BUS_ROUTES],
    /// Completions the switch synthesized for abandoned requests.
    pub abandoned: Vec<Delivery>,
}

fn destination(d: ft::Destination) -> Destination {
    match d {
        ft::Destination::Cpu => Destination::Cpu,
        ft::Destination::Port(p) => Destination::Port(PortIndex(p.0)),
    }
}

fn role(r: ft::PortRole) -> PortRole {
    match r {
        ft::PortRole::Disabled => PortRole::Disabled,
        ft::PortRole::Host { host, proxy_id } => PortRole::Host {
            host: HostIndex(host.0),
            proxy_id,
        },
        ft::PortRole::Endpoint { owner, buses } => PortRole::Endpoint {
            owner: owner.map(|o| Owner {
                host: HostIndex(o.host.0),
                proxy_id: o.proxy_id,
            }),
            buses,
        },
        ft::PortRole::Fabric => PortRole::Fabric,
    }
}

impl ModelPlane {
    pub fn new(ports: usize) -> Self {
        ModelPlane {
            switch: Switch::new(ports),
            ports: vec![PortTables::default(); ports],
            windows: vec![[ft::Window::UNUSED; capacity::WINDOWS_PER_PORT]; ports],
            id_maps: vec![[None; capacity::BOUND_FUNCTIONS_PER_HOST]; ports],
            routes: [None; capacity::ADDRESS_ROUTES],
            buses: [None; capacity::BUS_ROUTES],
            abandoned: Vec::new(),
        }
    }

    fn port(&mut self, port: ft::PortIndex) -> Result<usize, TableWriteError> {
        let index = usize::from(port.0);
        if index < self.ports.len() {
            Ok(index)
        } else {
            Err(TableWriteError::NoSuchPort(port))
        }
    }

    fn push_port(&mut self, index: usize) {
        let mut tables = self.ports[index].clone();
        tables.windows = self.windows[index]
            .iter()
            .filter(|w| w.size != 0)
            .map(|w| Window {
                base: w.base,
                size: w.size,
                fabric_base: w.fabric_base,
                permissions: Permissions {
                    read: w.permissions.read,
                    write: w.permissions.write,
                },
            })
            .collect();
        tables.id_map = self.id_maps[index]
            .iter()
            .flatten()
            .map(|m| IdMapping {
                fabric: m.fabric,
                host: m.host,
            })
            .collect();
        self.switch
            .set_port(PortIndex(index as u8), tables)
            .expect("entries are within the table capacities");
    }

    fn push_routes(&mut self) {
        let mut routes = RouteTables::default();
        routes.addresses = self
            .routes
            .iter()
            .flatten()
            .map(|r| AddressRoute {
                base: r.base,
                size: r.size,
                to: destination(r.to),
            })
            .collect();
        for (bus, to) in self.buses.iter().enumerate() {
            routes.buses[bus] = to.map(destination);
        }
        self.switch
            .set_routes(routes)
            .expect("entries are within the table capacities");
    }

    /// The role last written for a port, as the model holds it.
    pub fn role(&self, port: u8) -> PortRole {
        self.ports[usize::from(port)].role
    }

    /// The windows of a port, as the model holds them.
    pub fn windows(&self, port: u8) -> Vec<ft::Window> {
        self.windows[usize::from(port)]
            .iter()
            .copied()
            .filter(|w| w.size != 0)
            .collect()
    }

    /// The ID map of a port.
    pub fn id_map(&self, port: u8) -> Vec<ft::IdMapping> {
        self.id_maps[usize::from(port)]
            .iter()
            .flatten()
            .copied()
            .collect()
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

impl DataPlane for ModelPlane {
    fn ports(&self) -> usize {
        self.ports.len()
    }

    fn set_port_role(
        &mut self,
        port: ft::PortIndex,
        r: ft::PortRole,
    ) -> Result<(), TableWriteError> {
        let i = self.port(port)?;
        self.ports[i].role = role(r);
        self.push_port(i);
        Ok(())
    }

    fn set_window(
        &mut self,
        port: ft::PortIndex,
        index: usize,
        window: ft::Window,
    ) -> Result<(), TableWriteError> {
        let i = self.port(port)?;
        *self.windows[i]
            .get_mut(index)
            .ok_or(TableWriteError::NoSuchEntry {
                table: "window",
                index,
            })? = window;
        self.push_port(i);
        Ok(())
    }

    fn set_id_mapping(
        &mut self,
        port: ft::PortIndex,
        index: usize,
        mapping: Option<ft::IdMapping>,
    ) -> Result<(), TableWriteError> {
        let i = self.port(port)?;
        *self.id_maps[i]
            .get_mut(index)
            .ok_or(TableWriteError::NoSuchEntry {
                table: "ID map",
                index,
            })? = mapping;
        self.push_port(i);
        Ok(())
    }

    fn set_completer_id(&mut self, port: ft::PortIndex, id: Bdf) -> Result<(), TableWriteError> {
        let i = self.port(port)?;
        self.ports[i].completer_id = id;
        self.push_port(i);
        Ok(())
    }

    fn set_p2p_request_redirect(
        &mut self,
        port: ft::PortIndex,
        redirect: bool,
    ) -> Result<(), TableWriteError> {
        let i = self.port(port)?;
        self.ports[i].p2p_request_redirect = redirect;
        self.push_port(i);
        Ok(())
    }

    fn set_intx_swizzle(
        &mut self,
        port: ft::PortIndex,
        swizzle: u8,
    ) -> Result<(), TableWriteError> {
        let i = self.port(port)?;
        self.ports[i].intx_swizzle = swizzle;
        self.push_port(i);
        Ok(())
    }

    fn set_address_route(
        &mut self,
        index: usize,
        route: Option<ft::AddressRoute>,
    ) -> Result<(), TableWriteError> {
        *self
            .routes
            .get_mut(index)
            .ok_or(TableWriteError::NoSuchEntry {
                table: "address route",
                index,
            })? = route;
        self.push_routes();
        Ok(())
    }

    fn set_bus_route(
        &mut self,
        bus: u8,
        to: Option<ft::Destination>,
    ) -> Result<(), TableWriteError> {
        self.buses[usize::from(bus)] = to;
        self.push_routes();
        Ok(())
    }

    fn abandon_requests_to(&mut self, port: ft::PortIndex) -> Result<(), TableWriteError> {
        self.port(port)?;
        let out = self.switch.abandon_requests_to(PortIndex(port.0));
        self.abandoned.extend(out);
        Ok(())
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

/// Every port's device, reached through `FabricConfig`.
pub struct FakeFabric {
    pub devices: Vec<Option<FakeDevice>>,
    pub clock: Clock,
}

impl FakeFabric {
    pub fn new(ports: usize, clock: Clock) -> Self {
        FakeFabric {
            devices: (0..ports).map(|_| None).collect(),
            clock,
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

    fn device(&mut self, port: ft::PortIndex) -> Result<&mut FakeDevice, ConfigFault> {
        let now = self.clock.0.get();
        let device = self
            .devices
            .get_mut(usize::from(port.0))
            .ok_or(ConfigFault::NoSuchPort(port))?
            .as_mut()
            .ok_or(ConfigFault::UnsupportedRequest)?;
        if now < device.ready_at_ns {
            return Err(ConfigFault::RequestRetry);
        }
        Ok(device)
    }
}

impl FabricConfig for FakeFabric {
    fn read(&mut self, port: ft::PortIndex, target: Bdf, offset: u16) -> Result<u32, ConfigFault> {
        let device = self.device(port)?;
        match device.find(target).ok_or(ConfigFault::UnsupportedRequest)? {
            Addressed::Pf(i) => Ok(device.functions[i].space.read(offset)),
            Addressed::Vf(i, v) => {
                Ok(device.functions[i].sriov.as_ref().expect("has VFs").1[v].read(offset))
            }
        }
    }

    fn write(
        &mut self,
        port: ft::PortIndex,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigFault> {
        let device = self.device(port)?;
        let addressed = device.find(target).ok_or(ConfigFault::UnsupportedRequest)?;
        if device.bus.is_none() {
            device.bus = Some(target.bus());
        }
        match addressed {
            Addressed::Pf(i) => {
                let f = &mut device.functions[i];
                match &f.sriov {
                    Some((cap, _)) => cap.device_write(&mut f.space, offset, value, byte_enables),
                    None => f.space.write(offset, value, byte_enables),
                }
            }
            Addressed::Vf(i, v) => device.functions[i].sriov.as_mut().expect("has VFs").1[v].write(
                offset,
                value,
                byte_enables,
            ),
        }
        Ok(())
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

/// The mailbox and the host-facing egress, recorded.
#[derive(Default)]
pub struct FakeHost {
    pub inbox: VecDeque<HostConfigRequest>,
    pub completions: Vec<(ft::PortIndex, Completion, Option<u32>)>,
    pub msis: Vec<(ft::PortIndex, Bdf, MsiMessage)>,
}

impl HostInterface for FakeHost {
    fn receive(&mut self) -> Option<HostConfigRequest> {
        self.inbox.pop_front()
    }

    fn complete(
        &mut self,
        port: ft::PortIndex,
        completion: Completion,
        data: Option<u32>,
    ) -> Result<(), HostSendError> {
        self.completions.push((port, completion, data));
        Ok(())
    }

    fn send_msi(
        &mut self,
        port: ft::PortIndex,
        requester: Bdf,
        message: MsiMessage,
    ) -> Result<(), HostSendError> {
        self.msis.push((port, requester, message));
        Ok(())
    }
}

/// The whole rig: switch model, endpoints, clock, mailbox, manager.
pub struct Rig {
    pub plane: ModelPlane,
    pub fabric: FakeFabric,
    pub clock: Clock,
    pub host: FakeHost,
    pub manager: Box<FabricManager>,
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
        let request = ConfigRequest {
            direction: if write.is_some() {
                Direction::Write
            } else {
                Direction::Read
            },
            config_type,
            requester: ROOT_PORT,
            tag: Tag::new(7).expect("fits"),
            target,
            register_number: 0,
            extended_register_number: 0,
            first_be: write.map_or(0xf, |w| w.1),
        }
        .with_byte_offset(offset);
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Config(request),
        };
        let payload = write
            .map(|w| w.0.to_le_bytes().to_vec())
            .unwrap_or_default();
        let out = self.plane.send(port, header, &payload);
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
        self.host.inbox.push_back(HostConfigRequest {
            port: ft::PortIndex(port),
            request,
            data,
        });
        let handled = self
            .manager
            .service(&mut self.fabric, &mut self.plane, &mut self.host)
            .expect("tables written");
        assert_eq!(handled, 1);
        let (to, completion, data) = self.host.completions.pop().expect("a completion");
        assert_eq!(to, ft::PortIndex(port));
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

/// Runs a test body on a thread with room for the manager: its virtual
/// ports hold a 12 KiB configuration space each, and unoptimized builds
/// move the manager through several stack frames.
pub fn on_big_stack(body: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(body)
        .expect("a test thread")
        .join()
        .expect("the test body passes");
}
