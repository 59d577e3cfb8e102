//! The data plane's CSR window as the soft core sees it, over a model
//! [`Switch`]: the reference that drivers writing `weft_regs::csr` are
//! tested against.
//!
//! Every access is decoded by the register map of `weft_regs::csr` and
//! nothing else. Writes honour each register's access type (RO ignored,
//! RW stored, RW1C clearing, WO acting); a write to a table register
//! re-derives that one entry from the stored registers and applies it to
//! the switch through its [`DataPlane`] implementation at once, as the RTL
//! takes a table register into effect a cycle after the write. So a
//! half-written entry is visible to lookups exactly as it would be in the
//! RTL, and a driver that writes in the wrong order shows it.
//!
//! Reads answer the identity registers, the stored RW registers, the
//! counters (capturing the high half on a read of the low one), the
//! mailbox's head TLP and the injector's status. The mailbox holds the
//! TLPs the switch routes to the CPU ([`CsrWindow::ingress`]); TLPs sent
//! through the injector are collected for the test ([`CsrWindow::take_injected`]).
//!
//! The window's interrupt line ([`CsrWindow::interrupt`]) is the level OR
//! of the mailbox's and the injector's, as their `INT_ENABLE` and
//! `INT_PENDING` registers document it.

use std::collections::{BTreeMap, VecDeque};

use weft_pcie::tlp::Body;
use weft_pcie::Bdf;
use weft_regs::capacity;
use weft_regs::csr::{
    self, address_route, bus_route, counter, counter_control, destination, function_owner, global,
    id_map, inject, inject_data, mailbox, mailbox_data, port, window,
};
use weft_regs::driver::CsrBus;
use weft_regs::tables::{
    AddressRoute, DataPlane, Destination, FunctionOwner, HostIndex, IdMapping, Owner, Permissions,
    PortIndex, PortRole, Window,
};
use weft_regs::{Access, Field, Register, RegisterBlock};

use crate::packet::Packet;
use crate::switch::{Delivery, Forwarding, IngressError, InjectError, Switch};

/// TLPs the mailbox queues for the CPU before it loses one.
pub const MAILBOX_DEPTH: usize = capacity::MAILBOX_TLPS;
/// TLPs the injector holds for their egress before READY clears.
pub const INJECT_DEPTH: usize = 4;

pub use weft_regs::csr::{decode, Decoded};

/// The data plane's CSR window over a model switch.
#[derive(Clone, Debug)]
pub struct CsrWindow {
    switch: Switch,
    /// The RW registers written so far, by address; unwritten ones read 0 (their reset value).
    stored: BTreeMap<u32, u32>,
    /// Bits 63:32 of each counter, as captured by the last read of its low half.
    captured_high: BTreeMap<u32, u32>,
    mailbox: VecDeque<(PortIndex, Vec<u32>)>,
    mailbox_lost: bool,
    inject_data: [u32; inject::TLP_DWORDS as usize],
    inject_errors: u32,
    injected: Vec<Delivery>,
    stray: Vec<u32>,
}

impl CsrWindow {
    /// The CSR window of `switch`, every register at its reset value.
    ///
    /// # Panics
    ///
    /// If the switch has more ports than the register map has instances.
    pub fn new(switch: Switch) -> Self {
        assert!(
            switch.ports() <= capacity::PORTS,
            "the register map holds {} ports",
            capacity::PORTS
        );
        CsrWindow {
            switch,
            stored: BTreeMap::new(),
            captured_high: BTreeMap::new(),
            mailbox: VecDeque::new(),
            mailbox_lost: false,
            inject_data: [0; inject::TLP_DWORDS as usize],
            inject_errors: 0,
            injected: Vec::new(),
            stray: Vec::new(),
        }
    }

    /// The switch behind the window.
    pub fn switch(&self) -> &Switch {
        &self.switch
    }

    /// The switch behind the window, to offer it TLPs or advance its time.
    pub fn switch_mut(&mut self) -> &mut Switch {
        &mut self.switch
    }

    /// Addresses accessed that decode to no register of a port the switch
    /// has, in access order: a driver using the map's constants makes none.
    pub fn stray_accesses(&self) -> &[u32] {
        &self.stray
    }

    /// The data plane's interrupt line: the mailbox's or the injector's
    /// `INT_PENDING.RAISED`, level-sensitive.
    pub fn interrupt(&self) -> bool {
        self.mailbox_raised() || self.inject_raised()
    }

    /// `mailbox` INT_PENDING.RAISED: enabled, and a TLP waits.
    fn mailbox_raised(&self) -> bool {
        self.field(mailbox::INT_ENABLE, mailbox::ON_PENDING, 0, 0) == 1 && !self.mailbox.is_empty()
    }

    /// `inject` INT_PENDING.RAISED: enabled, and STATUS says a TLP was dropped.
    fn inject_raised(&self) -> bool {
        self.field(inject::INT_ENABLE, inject::ON_DROPPED, 0, 0) == 1 && self.inject_errors != 0
    }

    /// TLPs sent through the injector since the last call, in order.
    pub fn take_injected(&mut self) -> Vec<Delivery> {
        std::mem::take(&mut self.injected)
    }

    /// Carries the configuration requests sent through the injector across
    /// their links: `function` is the function on the link of the port a
    /// request left by, and returns its completion (`None`: nothing
    /// answers), which the port hands to the CPU's mailbox as the
    /// completion of its own link's function, whatever the port's role
    /// (as the simulator's manager access does, `weft-sim`'s
    /// `manager_config`). Everything else sent stays for
    /// [`CsrWindow::take_injected`]. Returns how many requests crossed.
    pub fn answer_injected_config(
        &mut self,
        mut function: impl FnMut(PortIndex, &Packet) -> Option<Packet>,
    ) -> usize {
        let (config, others): (Vec<_>, Vec<_>) = std::mem::take(&mut self.injected)
            .into_iter()
            .partition(|delivery| matches!(delivery.packet.header.body, Body::Config(_)));
        self.injected = others;
        for delivery in &config {
            if let Some(reply) = function(delivery.from, &delivery.packet) {
                let bytes = reply
                    .to_bytes()
                    .expect("a function's completion is a well-formed TLP");
                self.queue_for_cpu(delivery.from, &bytes);
            }
        }
        config.len()
    }

    /// Offers a TLP at `port`'s ingress; what the switch routes to the
    /// CPU is queued in the mailbox, everything else is returned.
    pub fn ingress(&mut self, port: PortIndex, bytes: &[u8]) -> Result<Forwarding, IngressError> {
        let mut forwarding = self.switch.ingress(port, bytes)?;
        let (to_cpu, others): (Vec<_>, Vec<_>) = forwarding
            .deliveries
            .into_iter()
            .partition(|delivery| delivery.to == Destination::Cpu);
        forwarding.deliveries = others;
        for delivery in to_cpu {
            let bytes = delivery
                .packet
                .to_bytes()
                .expect("the switch delivers well-formed TLPs");
            self.queue_for_cpu(delivery.from, &bytes);
        }
        Ok(forwarding)
    }

    /// Queues `bytes` in the mailbox as arriving on `from`; a TLP that does
    /// not fit the queue or `mailbox_data` is lost (STATUS.LOST).
    pub fn queue_for_cpu(&mut self, from: PortIndex, bytes: &[u8]) {
        let dwords = bytes.len().div_ceil(4);
        if self.mailbox.len() >= MAILBOX_DEPTH || dwords > mailbox::TLP_DWORDS as usize {
            self.mailbox_lost = true;
            return;
        }
        let words = bytes
            .chunks(4)
            .map(|chunk| {
                let mut dw = [0; 4];
                dw[..chunk.len()].copy_from_slice(chunk);
                u32::from_be_bytes(dw)
            })
            .collect();
        self.mailbox.push_back((from, words));
    }

    /// The decoded register at `address`, if it belongs to a port the switch has.
    fn register_at(&self, address: u32) -> Option<Decoded> {
        let decoded = decode(address)?;
        let per_port = decoded.block.layout.instances > 1;
        (!per_port || (decoded.instance as usize) < self.switch.ports()).then_some(decoded)
    }

    fn stored(&self, register: Register, instance: u32, entry: u32) -> u32 {
        self.stored
            .get(&register.address(instance, entry))
            .copied()
            .unwrap_or(0)
    }

    /// Reads `register` of `(instance, entry)` as stored, then `field` of it.
    fn field(&self, register: Register, field: Field, instance: u32, entry: u32) -> u32 {
        field.decode(self.stored(register, instance, entry))
    }

    fn read_register(&mut self, at: Decoded) -> u32 {
        let Decoded {
            block,
            register,
            instance,
            entry,
        } = at;
        match register.access {
            Access::WriteOnly => 0,
            Access::ReadWrite => self.stored(register, instance, entry),
            Access::ReadOnly | Access::WriteOneToClear => {
                self.read_status(block, register, instance, entry)
            }
        }
    }

    /// The value of a register the data plane itself drives.
    fn read_status(
        &mut self,
        block: &RegisterBlock,
        register: Register,
        instance: u32,
        entry: u32,
    ) -> u32 {
        let port_count = self.switch.ports() as u32;
        match register {
            r if r == global::ID => global::MAGIC.encode(global::ID_VALUE),
            r if r == global::VERSION => {
                global::MAJOR.encode(global::VERSION_MAJOR)
                    | global::MINOR.encode(global::VERSION_MINOR)
            }
            r if r == global::PORTS => global::PORT_COUNT.encode(port_count),
            r if r == global::PORT_TABLES => {
                global::WINDOWS.encode(window::LAYOUT.entries)
                    | global::ID_MAP_ENTRIES.encode(id_map::LAYOUT.entries)
            }
            r if r == global::ROUTE_TABLES => {
                global::ADDRESS_ROUTES.encode(address_route::LAYOUT.entries)
                    | global::BUS_ROUTES.encode(bus_route::LAYOUT.entries)
            }
            r if r == global::OWNER_TABLES => {
                global::FUNCTION_OWNERS.encode(function_owner::LAYOUT.entries)
            }
            r if r == counter::VALUE_LOW => {
                let value = self
                    .switch
                    .read_counter(PortIndex(instance as u8), entry)
                    .expect("decoded counters exist");
                self.captured_high.insert(
                    counter::VALUE_HIGH.address(instance, entry),
                    (value >> 32) as u32,
                );
                value as u32
            }
            r if r == counter::VALUE_HIGH => self
                .captured_high
                .get(&register.address(instance, entry))
                .copied()
                .unwrap_or(0),
            r if r == mailbox::STATUS => {
                let lost = mailbox::LOST.encode(u32::from(self.mailbox_lost));
                match self.mailbox.front() {
                    Some((from, words)) => {
                        lost | mailbox::PENDING.encode(1)
                            | mailbox::DWORDS.encode(words.len() as u32)
                            | mailbox::PORT.encode(u32::from(from.0))
                    }
                    None => lost,
                }
            }
            r if r == mailbox_data::DATA => self
                .mailbox
                .front()
                .and_then(|(_, words)| words.get(entry as usize))
                .copied()
                .unwrap_or(0),
            r if r == mailbox::INT_PENDING => {
                mailbox::RAISED.encode(u32::from(self.mailbox_raised()))
            }
            r if r == inject::INT_PENDING => inject::RAISED.encode(u32::from(self.inject_raised())),
            r if r == inject::STATUS => {
                inject::READY.encode(u32::from(self.injected.len() < INJECT_DEPTH))
                    | self.inject_errors
            }
            r => unreachable!("{}.{} is not a status register", block.name, r.name),
        }
    }

    fn write_register(&mut self, at: Decoded, value: u32) {
        let Decoded {
            block,
            register,
            instance,
            entry,
        } = at;
        match register.access {
            Access::ReadOnly => {}
            Access::ReadWrite => {
                self.stored
                    .insert(register.address(instance, entry), value & register.mask());
                self.apply(block, instance, entry);
            }
            Access::WriteOneToClear => match register {
                r if r == mailbox::STATUS => {
                    if mailbox::LOST.decode(value) == 1 {
                        self.mailbox_lost = false;
                    }
                }
                r if r == inject::STATUS => {
                    self.inject_errors &=
                        !(value & (inject::MALFORMED.mask() | inject::NO_SUCH_PORT.mask()))
                }
                r => unreachable!("{}.{} is not RW1C", block.name, r.name),
            },
            Access::WriteOnly => self.act(block, register, instance, entry, value),
        }
    }

    /// Applies the table entry `(instance, entry)` of `block` to the
    /// switch, as its stored registers now hold it.
    fn apply(&mut self, block: &RegisterBlock, instance: u32, entry: u32) {
        let port = PortIndex(instance as u8);
        let index = entry as usize;
        let done = match block.name {
            name if name == port::BLOCK.name => self.apply_port(instance),
            name if name == window::BLOCK.name => {
                let (window, owner) = self.window_entry(instance, entry);
                self.switch.set_peer_window(port, index, window, owner)
            }
            name if name == function_owner::BLOCK.name => {
                let owner = self.function_owner_entry(instance, entry);
                self.switch.set_function_owner(port, index, owner)
            }
            name if name == id_map::BLOCK.name => {
                let mapping = (self.field(id_map::CONTROL, id_map::VALID, instance, entry) == 1)
                    .then(|| IdMapping {
                        fabric: Bdf(self.field(id_map::FABRIC_ID, csr::ID, instance, entry) as u16),
                        host: Bdf(self.field(id_map::HOST_ID, csr::ID, instance, entry) as u16),
                    });
                self.switch.set_id_mapping(port, index, mapping)
            }
            name if name == address_route::BLOCK.name => {
                let to = destination_of(self.stored(address_route::DESTINATION, 0, entry));
                let route = to.map(|to| AddressRoute {
                    base: self.wide(address_route::BASE_LOW, address_route::BASE_HIGH, 0, entry),
                    size: self.wide(address_route::SIZE_LOW, address_route::SIZE_HIGH, 0, entry),
                    to,
                });
                self.switch.set_address_route(index, route)
            }
            name if name == bus_route::BLOCK.name => {
                let to = destination_of(self.stored(bus_route::DESTINATION, 0, entry));
                self.switch.set_bus_route(entry as u8, to)
            }
            // The interrupt enables act as they are read (`CsrWindow::interrupt`).
            name if name == mailbox::BLOCK.name || name == inject::BLOCK.name => Ok(()),
            other => unreachable!("{other} has no RW table registers"),
        };
        done.expect("decoded entries exist and fields hold only values the tables take");
    }

    /// Applies every port register: role, ACS redirect, return to ingress, INTx swizzle, completer ID.
    fn apply_port(&mut self, p: u32) -> Result<(), weft_regs::tables::TableWriteError> {
        let port = PortIndex(p as u8);
        let control = self.stored(port::CONTROL, p, 0);
        let role = if port::ENABLE.decode(control) == 0 {
            PortRole::Disabled
        } else {
            match port::ROLE.decode(control) {
                port::ROLE_HOST => PortRole::Host {
                    host: HostIndex(self.field(port::HOST, port::HOST_INDEX, p, 0) as u16),
                    proxy_id: Bdf(self.field(port::HOST, port::HOST_PROXY_ID, p, 0) as u16),
                },
                port::ROLE_ENDPOINT => PortRole::Endpoint {
                    owner: (self.field(port::OWNER, port::OWNER_BOUND, p, 0) == 1).then(|| Owner {
                        host: HostIndex(
                            self.field(port::OWNER, port::OWNER_HOST_INDEX, p, 0) as u16
                        ),
                        proxy_id: Bdf(self.field(port::OWNER, port::OWNER_PROXY_ID, p, 0) as u16),
                    }),
                    buses: (
                        self.field(port::BUSES, port::BUSES_FIRST, p, 0) as u8,
                        self.field(port::BUSES, port::BUSES_LAST, p, 0) as u8,
                    ),
                },
                port::ROLE_FABRIC => PortRole::Fabric,
                _ => PortRole::Disabled,
            }
        };
        self.switch.set_port_role(port, role)?;
        self.switch
            .set_p2p_request_redirect(port, port::P2P_REQUEST_REDIRECT.decode(control) == 1)?;
        self.switch
            .set_return_to_ingress(port, port::RETURN_TO_INGRESS.decode(control) == 1)?;
        self.switch
            .set_intx_swizzle(port, port::INTX_SWIZZLE.decode(control) as u8)?;
        let completer = Bdf(self.field(port::COMPLETER_ID, csr::ID, p, 0) as u16);
        self.switch.set_completer_id(port, completer)
    }

    /// The 64-bit value of a LOW/HIGH register pair.
    fn wide(&self, low: Register, high: Register, instance: u32, entry: u32) -> u64 {
        u64::from(self.stored(high, instance, entry)) << 32
            | u64::from(self.stored(low, instance, entry))
    }

    /// Window `entry` of port `p` and its owner tag, as stored.
    fn window_entry(&self, p: u32, entry: u32) -> (Window, Option<HostIndex>) {
        let control = self.stored(window::CONTROL, p, entry);
        let size = self.wide(window::SIZE_LOW, window::SIZE_HIGH, p, entry);
        if window::VALID.decode(control) == 0 || size == 0 {
            return (Window::UNUSED, None);
        }
        let tag = self.stored(window::OWNER, p, entry);
        let owner = (window::OWNER_TAGGED.decode(tag) == 1)
            .then(|| HostIndex(window::OWNER_HOST_INDEX.decode(tag) as u16));
        let window = Window {
            base: self.wide(window::BASE_LOW, window::BASE_HIGH, p, entry),
            size,
            fabric_base: self.wide(window::FABRIC_BASE_LOW, window::FABRIC_BASE_HIGH, p, entry),
            permissions: Permissions {
                read: window::READ.decode(control) == 1,
                write: window::WRITE.decode(control) == 1,
            },
        };
        (window, owner)
    }

    /// Function owner `entry` of port `p`, as stored.
    fn function_owner_entry(&self, p: u32, entry: u32) -> Option<FunctionOwner> {
        let control = self.stored(function_owner::CONTROL, p, entry);
        if function_owner::VALID.decode(control) == 0 {
            return None;
        }
        let owner = self.stored(function_owner::OWNER, p, entry);
        Some(FunctionOwner {
            function: Bdf(self.field(function_owner::FUNCTION, csr::ID, p, entry) as u16),
            owner: Owner {
                host: HostIndex(function_owner::HOST_INDEX.decode(owner) as u16),
                proxy_id: Bdf(function_owner::PROXY_ID.decode(owner) as u16),
            },
            p2p_request_redirect: function_owner::P2P_REQUEST_REDIRECT.decode(control) == 1,
            intx_swizzle: function_owner::INTX_SWIZZLE.decode(control) as u8,
        })
    }

    /// A write to a write-only register: it acts rather than stores.
    fn act(
        &mut self,
        block: &RegisterBlock,
        register: Register,
        instance: u32,
        entry: u32,
        value: u32,
    ) {
        match register {
            r if r == counter_control::CLEAR => {
                let ports = counter_control::CLEAR_PORTS.decode(value);
                for p in 0..self.switch.ports() {
                    if ports >> p & 1 == 1 {
                        DataPlane::clear_counters(&mut self.switch, PortIndex(p as u8))
                            .expect("the port exists");
                    }
                }
            }
            r if r == port::ABANDON => {
                let hosts = port::ABANDON_HOST_PORTS.decode(value);
                for host in 0..self.switch.ports() {
                    if hosts >> host & 1 == 1 {
                        DataPlane::abandon_host_requests_to(
                            &mut self.switch,
                            PortIndex(host as u8),
                            PortIndex(instance as u8),
                        )
                        .expect("both ports exist");
                    }
                }
            }
            r if r == mailbox::POP => {
                if mailbox::DONE.decode(value) == 1 {
                    self.mailbox.pop_front();
                }
            }
            r if r == inject_data::DATA => {
                // The TLPs queued are read from `inject_data` as they leave.
                if self.injected.len() < INJECT_DEPTH {
                    self.inject_data[entry as usize] = value;
                }
            }
            r if r == inject::SEND => self.send(value),
            r => unreachable!("{}.{} is not write-only", block.name, r.name),
        }
    }

    /// SEND: the first DWORDS DWs of `inject_data` out of PORT, if READY.
    fn send(&mut self, value: u32) {
        if self.injected.len() >= INJECT_DEPTH {
            return;
        }
        let port = PortIndex(inject::PORT.decode(value) as u8);
        let dwords = inject::DWORDS.decode(value) as usize;
        let Some(words) = self.inject_data.get(..dwords) else {
            self.inject_errors |= inject::MALFORMED.mask();
            return;
        };
        let bytes: Vec<u8> = words.iter().flat_map(|dw| dw.to_be_bytes()).collect();
        match self.switch.inject(port, &bytes) {
            Ok(delivery) => self.injected.push(delivery),
            Err(InjectError::NoSuchPort(_)) => self.inject_errors |= inject::NO_SUCH_PORT.mask(),
            Err(InjectError::Malformed(_)) => self.inject_errors |= inject::MALFORMED.mask(),
        }
    }
}

/// A routing table entry's destination, if VALID.
fn destination_of(bits: u32) -> Option<Destination> {
    (destination::VALID.decode(bits) == 1).then(|| {
        if destination::CPU.decode(bits) == 1 {
            Destination::Cpu
        } else {
            Destination::Port(PortIndex(destination::PORT.decode(bits) as u8))
        }
    })
}

impl CsrBus for CsrWindow {
    fn read32(&mut self, address: u32) -> u32 {
        match self.register_at(address) {
            Some(at) => self.read_register(at),
            None => {
                self.stray.push(address);
                0
            }
        }
    }

    fn write32(&mut self, address: u32, value: u32) {
        match self.register_at(address) {
            Some(at) => self.write_register(at, value),
            None => self.stray.push(address),
        }
    }
}

#[cfg(test)]
mod tests {
    use weft_pcie::tlp::{
        AddressType, Attributes, Body, Header, MemoryOp, MemoryRequest, Tag, TrafficClass,
    };

    use super::*;
    use crate::isolation::DropReason;
    use crate::packet::Packet;

    /// A one-DW memory write of `data` to `address`: 4 header DWs and 1 data DW.
    fn write_tlp(address: u64, data: [u8; 4]) -> Vec<u8> {
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Memory(MemoryRequest {
                op: MemoryOp::Write,
                traffic_class: TrafficClass::default(),
                attributes: Attributes::default(),
                address_type: AddressType::default(),
                requester: Bdf::new(1, 0, 0),
                tag: Tag::new(0).expect("tag fits"),
                address,
                length_dw: 1,
                first_be: 0xf,
                last_be: 0,
                processing_hint: None,
            }),
        };
        Packet::new(header, data.to_vec())
            .to_bytes()
            .expect("well-formed")
    }

    fn window() -> CsrWindow {
        CsrWindow::new(Switch::new(4))
    }

    #[test]
    fn identity_registers_describe_the_switch() {
        let mut csr = window();
        assert_eq!(csr.read32(global::ID.address(0, 0)), 0x5745_4654);
        assert_eq!(csr.read32(global::PORTS.address(0, 0)), 4);
        let tables = csr.read32(global::PORT_TABLES.address(0, 0));
        assert_eq!(global::WINDOWS.decode(tables), 16);
        assert_eq!(global::ID_MAP_ENTRIES.decode(tables), 32);
    }

    #[test]
    fn read_only_registers_ignore_writes() {
        let mut csr = window();
        csr.write32(global::PORTS.address(0, 0), 0xff);
        assert_eq!(csr.read32(global::PORTS.address(0, 0)), 4);
    }

    #[test]
    fn read_write_registers_read_back_their_defined_bits_only() {
        let mut csr = window();
        csr.write32(window::CONTROL.address(2, 5), u32::MAX);
        assert_eq!(csr.read32(window::CONTROL.address(2, 5)), 0b111);
        csr.write32(port::BUSES.address(1, 0), u32::MAX);
        assert_eq!(csr.read32(port::BUSES.address(1, 0)), 0xffff);
    }

    #[test]
    fn write_only_registers_read_zero() {
        let mut csr = window();
        csr.write32(port::ABANDON.address(1, 0), 1);
        assert_eq!(csr.read32(port::ABANDON.address(1, 0)), 0);
        csr.write32(inject_data::DATA.address(0, 0), 0x1234_5678);
        assert_eq!(csr.read32(inject_data::DATA.address(0, 0)), 0);
    }

    #[test]
    fn ports_the_switch_lacks_are_stray() {
        let mut csr = window();
        csr.write32(port::CONTROL.address(5, 0), 1);
        assert_eq!(csr.read32(port::CONTROL.address(5, 0)), 0);
        let stray = port::CONTROL.address(5, 0);
        assert_eq!(csr.stray_accesses(), [stray, stray]);
    }

    #[test]
    fn counters_read_low_then_captured_high_and_clear() {
        let mut csr = window();
        // A disabled port drops and counts what arrives (the drop counters).
        let tlp = write_tlp(0x1_0000_1000, [1, 2, 3, 4]);
        for _ in 0..3 {
            csr.ingress(PortIndex(2), &tlp).expect("port exists");
        }
        let drop_entry = counter::FIRST_DROP + 1;
        assert_eq!(DropReason::ALL[1], DropReason::PortDisabled);
        assert_eq!(csr.read32(counter::VALUE_LOW.address(2, drop_entry)), 3);
        assert_eq!(csr.read32(counter::VALUE_HIGH.address(2, drop_entry)), 0);
        csr.write32(counter_control::CLEAR.address(0, 0), 1 << 3);
        assert_eq!(csr.read32(counter::VALUE_LOW.address(2, drop_entry)), 3);
        csr.write32(counter_control::CLEAR.address(0, 0), 1 << 2);
        assert_eq!(csr.read32(counter::VALUE_LOW.address(2, drop_entry)), 0);
    }

    #[test]
    fn the_mailbox_shows_its_head_in_wire_order_and_pops() {
        let mut csr = window();
        let first = write_tlp(0x1_0000_1000, [0xde, 0xad, 0xbe, 0xef]);
        csr.queue_for_cpu(PortIndex(3), &first);
        csr.queue_for_cpu(PortIndex(1), &write_tlp(0x1_0000_2000, [0; 4]));
        let status = csr.read32(mailbox::STATUS.address(0, 0));
        assert_eq!(mailbox::PENDING.decode(status), 1);
        assert_eq!(mailbox::PORT.decode(status), 3);
        // 4 header DWs (64-bit address, §2.2.4.1) and one data DW.
        assert_eq!(mailbox::DWORDS.decode(status), 5);
        let dw0 = u32::from_be_bytes(first[..4].try_into().expect("4 bytes"));
        assert_eq!(csr.read32(mailbox_data::DATA.address(0, 0)), dw0);
        assert_eq!(csr.read32(mailbox_data::DATA.address(0, 4)), 0xdead_beef);
        assert_eq!(csr.read32(mailbox_data::DATA.address(0, 5)), 0);
        csr.write32(mailbox::POP.address(0, 0), 1);
        let status = csr.read32(mailbox::STATUS.address(0, 0));
        assert_eq!(mailbox::PORT.decode(status), 1);
        csr.write32(mailbox::POP.address(0, 0), 1);
        assert_eq!(csr.read32(mailbox::STATUS.address(0, 0)), 0);
    }

    #[test]
    fn a_full_mailbox_loses_and_says_so_until_cleared() {
        let mut csr = window();
        let tlp = write_tlp(0x1_0000_1000, [0; 4]);
        for _ in 0..=MAILBOX_DEPTH {
            csr.queue_for_cpu(PortIndex(0), &tlp);
        }
        let lost =
            |csr: &mut CsrWindow| mailbox::LOST.decode(csr.read32(mailbox::STATUS.address(0, 0)));
        assert_eq!(lost(&mut csr), 1);
        csr.write32(mailbox::STATUS.address(0, 0), 0);
        assert_eq!(lost(&mut csr), 1, "writing 0 leaves an RW1C bit");
        csr.write32(mailbox::STATUS.address(0, 0), mailbox::LOST.mask());
        assert_eq!(lost(&mut csr), 0);
        let status = csr.read32(mailbox::STATUS.address(0, 0));
        assert_eq!(
            mailbox::PENDING.decode(status),
            1,
            "clearing LOST pops nothing"
        );
    }

    /// `INT_PENDING.RAISED` of the block whose `INT_PENDING` is `register`.
    fn raised(csr: &mut CsrWindow, register: Register) -> bool {
        csr.read32(register.address(0, 0)) & 1 == 1
    }

    #[test]
    fn the_mailbox_interrupt_is_level_while_enabled_and_a_tlp_waits() {
        let mut csr = window();
        let tlp = write_tlp(0x1_0000_1000, [0; 4]);
        assert!(!csr.interrupt(), "nothing at reset");
        csr.queue_for_cpu(PortIndex(0), &tlp);
        assert!(
            !csr.interrupt(),
            "a TLP waits, but INT_ENABLE is 0 at reset"
        );
        assert!(!raised(&mut csr, mailbox::INT_PENDING));
        let enable = mailbox::INT_ENABLE.address(0, 0);
        csr.write32(enable, mailbox::ON_PENDING.mask());
        assert_eq!(csr.read32(enable), 1);
        assert!(
            csr.interrupt(),
            "enabling raises it for the TLP already waiting"
        );
        assert!(raised(&mut csr, mailbox::INT_PENDING));
        csr.queue_for_cpu(PortIndex(1), &tlp);
        csr.write32(mailbox::POP.address(0, 0), 1);
        assert!(csr.interrupt(), "one TLP still waits");
        let status = csr.read32(mailbox::STATUS.address(0, 0));
        csr.write32(mailbox::STATUS.address(0, 0), status);
        assert!(csr.interrupt(), "writing STATUS acknowledges nothing");
        csr.write32(mailbox::POP.address(0, 0), 1);
        assert!(!csr.interrupt(), "popped until empty");
        assert!(!raised(&mut csr, mailbox::INT_PENDING));
        csr.queue_for_cpu(PortIndex(2), &tlp);
        assert!(csr.interrupt(), "the next TLP raises it again");
        csr.write32(enable, 0);
        assert!(
            !csr.interrupt(),
            "disabling lowers it with the TLP still waiting"
        );
        assert_eq!(
            mailbox::PENDING.decode(csr.read32(mailbox::STATUS.address(0, 0))),
            1
        );
    }

    #[test]
    fn a_lost_tlp_alone_raises_no_mailbox_interrupt() {
        let mut csr = window();
        csr.write32(mailbox::INT_ENABLE.address(0, 0), u32::MAX);
        assert_eq!(
            csr.read32(mailbox::INT_ENABLE.address(0, 0)),
            mailbox::ON_PENDING.mask(),
            "reserved bits read 0"
        );
        let too_long = vec![0; 4 * (mailbox::TLP_DWORDS as usize + 1)];
        csr.queue_for_cpu(PortIndex(0), &too_long);
        assert_eq!(
            mailbox::LOST.decode(csr.read32(mailbox::STATUS.address(0, 0))),
            1
        );
        assert!(!csr.interrupt());
    }

    #[test]
    fn the_inject_interrupt_is_level_while_enabled_and_a_drop_is_flagged() {
        let mut csr = window();
        let tlp = write_tlp(0x1_0000_1000, [0; 4]);
        inject(&mut csr, 1, &tlp);
        assert!(!csr.interrupt(), "a TLP sent is no event");
        inject(&mut csr, 9, &tlp);
        assert!(!csr.interrupt(), "dropped, but INT_ENABLE is 0 at reset");
        csr.write32(inject::INT_ENABLE.address(0, 0), inject::ON_DROPPED.mask());
        assert!(
            csr.interrupt(),
            "enabling raises it for the drop already flagged"
        );
        assert!(raised(&mut csr, inject::INT_PENDING));
        assert!(!raised(&mut csr, mailbox::INT_PENDING));
        // A malformed SEND as well: DWORDS 3 for a 5 DW TLP.
        let send = inject::PORT.encode(1) | inject::DWORDS.encode(3);
        csr.write32(inject::SEND.address(0, 0), send);
        csr.write32(inject::STATUS.address(0, 0), inject::NO_SUCH_PORT.mask());
        assert!(csr.interrupt(), "MALFORMED is still set");
        csr.write32(inject::STATUS.address(0, 0), inject::MALFORMED.mask());
        assert!(!csr.interrupt(), "acknowledged: both drop bits cleared");
        assert!(!raised(&mut csr, inject::INT_PENDING));
    }

    #[test]
    fn the_interrupt_line_is_the_or_of_both_blocks() {
        let mut csr = window();
        csr.write32(mailbox::INT_ENABLE.address(0, 0), 1);
        csr.write32(inject::INT_ENABLE.address(0, 0), 1);
        csr.queue_for_cpu(PortIndex(0), &write_tlp(0x1_0000_1000, [0; 4]));
        inject(&mut csr, 9, &write_tlp(0x1_0000_1000, [0; 4]));
        csr.write32(mailbox::POP.address(0, 0), 1);
        assert!(csr.interrupt(), "the injector's drop is still flagged");
        csr.write32(inject::STATUS.address(0, 0), u32::MAX);
        assert!(!csr.interrupt());
    }

    /// Writes `tlp` to the injector and sends it out of `port`.
    fn inject(csr: &mut CsrWindow, port: u32, tlp: &[u8]) {
        for (n, dw) in tlp.chunks(4).enumerate() {
            let dw = u32::from_be_bytes(dw.try_into().expect("whole DWs"));
            csr.write32(inject_data::DATA.address(0, n as u32), dw);
        }
        let send = inject::PORT.encode(port) | inject::DWORDS.encode(tlp.len() as u32 / 4);
        csr.write32(inject::SEND.address(0, 0), send);
    }

    #[test]
    fn injected_configuration_requests_are_answered_into_the_mailbox() {
        let mut csr = window();
        let request = weft_pcie::tlp::ConfigRequest {
            direction: weft_pcie::tlp::Direction::Read,
            config_type: weft_pcie::tlp::ConfigType::Type0,
            requester: Bdf::new(0, 0, 0),
            tag: Tag::new(3).expect("tag fits"),
            target: Bdf::new(2, 0, 0),
            register_number: 0,
            extended_register_number: 0,
            first_be: 0xf,
        };
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Config(request),
        };
        let config = Packet::new(header, Vec::new())
            .to_bytes()
            .expect("well-formed");
        inject(&mut csr, 1, &config);
        let write = write_tlp(0x1_0000_1000, [1, 2, 3, 4]);
        inject(&mut csr, 2, &write);
        let mut asked = Vec::new();
        let crossed = csr.answer_injected_config(|port, packet| {
            asked.push((port, packet.header));
            crate::isolation::error_completion(
                &packet.header,
                Bdf::new(2, 0, 0),
                weft_pcie::tlp::CompletionStatus::UnsupportedRequest,
            )
        });
        assert_eq!(crossed, 1);
        assert_eq!(asked, [(PortIndex(1), header)]);
        // The completion waits for the CPU, from the port the request left by.
        let status = csr.read32(mailbox::STATUS.address(0, 0));
        assert_eq!(mailbox::PENDING.decode(status), 1);
        assert_eq!(mailbox::PORT.decode(status), 1);
        assert_eq!(mailbox::DWORDS.decode(status), 3, "a Cpl is 3 header DWs");
        // The memory write stays for the test.
        let sent = csr.take_injected();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].to, Destination::Port(PortIndex(2)));
    }

    #[test]
    fn the_injector_sends_well_formed_tlps_and_flags_the_rest() {
        let mut csr = window();
        let tlp = write_tlp(0x1_0000_1000, [9, 8, 7, 6]);
        for (n, dw) in tlp.chunks(4).enumerate() {
            let dw = u32::from_be_bytes(dw.try_into().expect("whole DWs"));
            csr.write32(inject_data::DATA.address(0, n as u32), dw);
        }
        let send =
            |port: u32, dwords: u32| inject::PORT.encode(port) | inject::DWORDS.encode(dwords);
        csr.write32(inject::SEND.address(0, 0), send(2, 5));
        let sent = csr.take_injected();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].to, Destination::Port(PortIndex(2)));
        assert_eq!(sent[0].packet.to_bytes().expect("well-formed"), tlp);

        csr.write32(inject::SEND.address(0, 0), send(9, 5));
        csr.write32(inject::SEND.address(0, 0), send(2, 3));
        assert!(csr.take_injected().is_empty());
        let status = csr.read32(inject::STATUS.address(0, 0));
        assert_eq!(inject::NO_SUCH_PORT.decode(status), 1);
        assert_eq!(inject::MALFORMED.decode(status), 1);
        csr.write32(inject::STATUS.address(0, 0), inject::NO_SUCH_PORT.mask());
        let status = csr.read32(inject::STATUS.address(0, 0));
        assert_eq!(inject::NO_SUCH_PORT.decode(status), 0);
        assert_eq!(inject::MALFORMED.decode(status), 1);

        for _ in 0..INJECT_DEPTH {
            assert_eq!(
                inject::READY.decode(csr.read32(inject::STATUS.address(0, 0))),
                1
            );
            csr.write32(inject::SEND.address(0, 0), send(1, 5));
        }
        assert_eq!(
            inject::READY.decode(csr.read32(inject::STATUS.address(0, 0))),
            0
        );
        csr.write32(inject::SEND.address(0, 0), send(1, 5));
        assert_eq!(
            csr.take_injected().len(),
            INJECT_DEPTH,
            "SEND while not READY is ignored"
        );
        // So is a write to `inject_data` while not READY: it is the TLPs' source.
        for _ in 0..INJECT_DEPTH {
            csr.write32(inject::SEND.address(0, 0), send(1, 5));
        }
        csr.write32(inject_data::DATA.address(0, 0), 0);
        csr.take_injected();
        csr.write32(inject::SEND.address(0, 0), send(1, 5));
        let sent = csr.take_injected();
        assert_eq!(sent[0].packet.to_bytes().expect("well-formed"), tlp);
    }
}
