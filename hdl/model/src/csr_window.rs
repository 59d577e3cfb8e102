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
//! through the injector are collected for the test ([`CsrWindow::take_injected`]);
//! the hot resets and retrainings asked through each port's LINK register
//! wait in the switch for the links ([`Switch::take_link_requests`]).
//!
//! The window's interrupt line ([`CsrWindow::interrupt`]) is the level OR
//! of the mailbox's and the injector's, as their `INT_ENABLE` and
//! `INT_PENDING` registers document it.

use std::collections::{BTreeMap, VecDeque};

use weft_pcie::config::header::{bar, command, common, type0};
use weft_pcie::config::ConfigSpace;
use weft_pcie::tlp::{Body, CompletionStatus, Header, MemoryOp, MemoryRequest};
use weft_pcie::Bdf;
use weft_regs::capacity;
use weft_regs::csr::{
    self, address_route, bus_route, counter, counter_control, destination, function_owner, global,
    id_map, inject, inject_data, mailbox, mailbox_data, port, window,
};
use weft_regs::driver::CsrBus;
use weft_regs::tables::{
    AddressRoute, DataPlane, Destination, FunctionOwner, HostIndex, IdMapping, LinkRequest, Owner,
    Permissions, PortIndex, PortRole, Window,
};
use weft_regs::{Access, Field, Register, RegisterBlock};

use crate::isolation::error_completion;
use crate::packet::Packet;
use crate::switch::{Delivery, Forwarding, IngressError, InjectError, Switch};

/// TLPs the mailbox queues for the CPU before it loses one.
pub const MAILBOX_DEPTH: usize = capacity::MAILBOX_TLPS;
/// TLPs the injector holds for their egress before READY clears. The RTL
/// injector holds one (READY clears on SEND until it has left); firmware
/// that sends only while READY is set behaves alike on both.
pub const INJECT_DEPTH: usize = 4;
/// The management function's BAR1: the high half of its 64-bit BAR0 (§7.5.1.2.1).
const MANAGEMENT_BAR_HIGH_REGISTER: u16 = type0::BAR0 + 4;

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
    refused_writes: Vec<Header>,
    /// Every register write since the last [`CsrWindow::take_written`],
    /// while [`CsrWindow::record_writes`] asked for them.
    written: Option<Vec<(u32, u32)>>,
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
            refused_writes: Vec::new(),
            written: None,
        }
    }

    /// Keeps every register write from now on, whichever path made it (the
    /// CPU's CSR bus, an in-band request to the management BAR, the
    /// management function's configuration space), for
    /// [`CsrWindow::take_written`]: what another data plane that must hold
    /// the same tables has to be written.
    pub fn record_writes(&mut self) {
        self.written.get_or_insert_with(Vec::new);
    }

    /// The register writes, as (address, value), made since the last call,
    /// in order; none unless [`CsrWindow::record_writes`] was called.
    pub fn take_written(&mut self) -> Vec<(u32, u32)> {
        self.written
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
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
        let mut forwarding = self.forward(port, bytes)?;
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

    /// Offers a TLP at `port`'s ingress as its link delivers it: a memory
    /// request for the switch's management BAR is executed against this
    /// window ([`CsrWindow::management_bar`]), anything else goes through
    /// the switch. What is for the CPU is returned with the rest, not
    /// queued: a caller that carries the CPU's TLPs itself (a fabric of
    /// several switches) takes them from here.
    pub fn forward(&mut self, port: PortIndex, bytes: &[u8]) -> Result<Forwarding, IngressError> {
        if let Some(forwarding) = self.management_request(port, bytes) {
            return Ok(forwarding);
        }
        self.switch.ingress(port, bytes)
    }

    /// The fabric address of the switch's management BAR, while the
    /// management function of some port decodes it
    /// (`global::MANAGEMENT_BAR_LOW`.ENABLE).
    pub fn management_bar(&self) -> Option<u64> {
        let low = self.stored(global::MANAGEMENT_BAR_LOW, 0, 0);
        (global::MANAGEMENT_ENABLE.decode(low) != 0).then(|| self.management_base())
    }

    /// The fabric address of the management BAR, while `port`'s management
    /// function decodes it (ENABLE bit `port`).
    fn management_bar_on(&self, port: PortIndex) -> Option<u64> {
        let enables =
            global::MANAGEMENT_ENABLE.decode(self.stored(global::MANAGEMENT_BAR_LOW, 0, 0));
        (enables >> port.0 & 1 == 1).then(|| self.management_base())
    }

    /// The management BAR's address, as BAR0 and BAR1 hold it.
    fn management_base(&self) -> u64 {
        let low = self.stored(global::MANAGEMENT_BAR_LOW, 0, 0);
        u64::from(self.stored(global::MANAGEMENT_BAR_HIGH, 0, 0)) << 32
            | u64::from(low & global::MANAGEMENT_BASE.mask())
    }

    /// Posted writes to the management BAR that were not executed (a
    /// partial or multi-DW write, poisoned data), in arrival order: a
    /// posted request has no completion to refuse it with (PCIe Base 6.0
    /// §2.3.1), so they are kept here rather than lost unseen.
    pub fn refused_management_writes(&self) -> &[Header] {
        &self.refused_writes
    }

    /// Executes `bytes` against this window if it is a memory request
    /// arriving on a fabric or disabled port whose management function
    /// decodes the management BAR, for that BAR; `None` for anything else,
    /// which the switch routes.
    ///
    /// Only fabric and disabled ports reach the window, and only those
    /// whose management function the fabric manager enabled: its requests
    /// arrive on fabric links, or on the link it is still discovering,
    /// whose far port it has not opened yet; hosts and endpoints never
    /// reach a switch's tables (DESIGN.md, "Isolation is enforced in
    /// hardware"), nor does whatever is on a link the manager did not
    /// discover the switch by. The window is a register file of 32-bit
    /// registers accessed as whole words, so:
    ///
    /// - a Memory Read of one DW with all byte enables set, at an offset
    ///   holding a register, is a register read, answered out of `port`
    ///   with a Successful Completion carrying the register's value
    ///   (§2.2.9, §2.3.1.1); a zero-length read (one DW, no byte enables,
    ///   §2.2.5) is answered with one DW of zeros and reads nothing;
    /// - any other read (more or less than one whole DW, or at an offset
    ///   of no register) violates the completer's programming model and is
    ///   answered with Completer Abort (§2.3.1);
    /// - a Memory Read Lock or an AtomicOp is a request type the window
    ///   does not support: Unsupported Request (§2.3.1, §6.5.7, §6.15.2);
    /// - a Memory Write of one whole DW is a register write, at an offset
    ///   of no register a stray access; any other write, and one with
    ///   poisoned data (§2.7.2.2), writes nothing and is kept in
    ///   [`CsrWindow::refused_management_writes`].
    ///
    /// Completions carry the port's completer ID (`port::COMPLETER_ID`),
    /// as those the switch synthesizes at the port do. They leave by the
    /// port the request came in on, not by the routing tables: the
    /// management function answers on its own link, as it does
    /// configuration requests, so the manager reaches a switch whose
    /// routes it has not written yet.
    fn management_request(&mut self, port: PortIndex, bytes: &[u8]) -> Option<Forwarding> {
        let (packet, request, address) = self.management_target(port, bytes)?;
        self.switch.count_management_request(port, &packet);
        let whole_dw = request.length_dw == 1 && request.first_be == 0xf && request.last_be == 0;
        let status = match request.op {
            MemoryOp::Write => {
                if whole_dw && !packet.header.poisoned && packet.payload.len() >= 4 {
                    let value =
                        u32::from_le_bytes(packet.payload[..4].try_into().expect("four bytes"));
                    self.write32(address, value);
                } else {
                    self.refused_writes.push(packet.header);
                }
                None
            }
            MemoryOp::Read if request.length_dw == 1 && request.first_be == 0 => {
                Some((CompletionStatus::Successful, 0))
            }
            MemoryOp::Read => match self.register_at(address) {
                Some(at) if whole_dw => {
                    Some((CompletionStatus::Successful, self.read_register(at)))
                }
                _ => Some((CompletionStatus::CompleterAbort, 0)),
            },
            MemoryOp::ReadLocked
            | MemoryOp::FetchAdd
            | MemoryOp::Swap
            | MemoryOp::CompareAndSwap => Some((CompletionStatus::UnsupportedRequest, 0)),
        };
        let completer = self.switch.port_tables(port)?.completer_id;
        let reply = status.and_then(|(status, value)| {
            let mut reply = error_completion(&packet.header, completer, status)?;
            if status == CompletionStatus::Successful {
                if let Body::Completion(completion) = &mut reply.header.body {
                    completion.data_dw = Some(1);
                }
                reply.payload = value.to_le_bytes().to_vec();
            }
            Some(reply)
        });
        if let Some(reply) = &reply {
            self.switch.count_management_reply(port, reply);
        }
        Some(Forwarding {
            deliveries: reply
                .into_iter()
                .map(|packet| Delivery {
                    to: Destination::Port(port),
                    from: port,
                    packet,
                })
                .collect(),
            dropped: None,
        })
    }

    /// Whether [`CsrWindow::forward`] executes `bytes` arriving on `port`
    /// against this window (a memory request for the management BAR, see
    /// `management_request`) rather than routing it through the switch.
    pub fn executes(&self, port: PortIndex, bytes: &[u8]) -> bool {
        self.management_target(port, bytes).is_some()
    }

    /// `bytes` as a memory request on `port` for the management BAR, with
    /// the CSR address it reaches, if it is one the window executes.
    fn management_target(
        &self,
        port: PortIndex,
        bytes: &[u8],
    ) -> Option<(Packet, MemoryRequest, u32)> {
        let role = self.switch.port_tables(port)?.role;
        if !matches!(role, PortRole::Fabric | PortRole::Disabled) {
            return None;
        }
        let base = self.management_bar_on(port)?;
        let packet = Packet::parse(bytes).ok()?;
        let Body::Memory(request) = packet.header.body else {
            return None;
        };
        let offset = request.address.checked_sub(base)?;
        if offset >= u64::from(csr::CSR_SIZE) {
            return None;
        }
        Some((packet, request, csr::CSR_BASE + offset as u32))
    }

    /// Answers a configuration request for the management function on
    /// `port`'s link, whose configuration space (header and identity VSEC,
    /// `weft_pcie::config::vsec::management_function`) is `space`: the DW
    /// at `offset` read, or written with `write` = `(value, byte enables)`
    /// (returning 0).
    ///
    /// The management BAR and its decode are the data plane's
    /// `global::MANAGEMENT_BAR_LOW`/`HIGH`, one BAR per switch, whichever
    /// port's function is written: BAR0 is the low half of a 64-bit
    /// non-prefetchable memory BAR of `csr::CSR_SIZE` bytes (address bits
    /// below its size read 0, so sizing by writing all ones reads the size
    /// back, §7.5.1.2.1), BAR1 the high half; Command's Memory Space
    /// Enable (§7.5.1.1.3) is ENABLE bit `port`. Every other register is
    /// `space`'s.
    pub fn management_config(
        &mut self,
        port: PortIndex,
        space: &mut ConfigSpace,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> u32 {
        let offset = offset & !3;
        let bar_low = self.stored(global::MANAGEMENT_BAR_LOW, 0, 0);
        let current = match offset {
            type0::BAR0 => (bar_low & global::MANAGEMENT_BASE.mask()) | bar::MEMORY_TYPE_64,
            MANAGEMENT_BAR_HIGH_REGISTER => self.stored(global::MANAGEMENT_BAR_HIGH, 0, 0),
            common::COMMAND => {
                let decode = u32::from(command::MEMORY_SPACE);
                let enabled = self.management_bar_on(port).is_some();
                space.read(offset) & !decode | if enabled { decode } else { 0 }
            }
            _ => space.read(offset),
        };
        let Some((value, byte_enables)) = write else {
            return current;
        };
        let lanes = (0..4)
            .filter(|lane| byte_enables >> lane & 1 == 1)
            .fold(0u32, |mask, lane| mask | 0xff << (8 * lane));
        let merged = current & !lanes | value & lanes;
        let low = |base: u32, enable: u32| {
            global::MANAGEMENT_BASE.encode(global::MANAGEMENT_BASE.decode(base))
                | global::MANAGEMENT_ENABLE.encode(enable)
        };
        let enables = global::MANAGEMENT_ENABLE.decode(bar_low);
        match offset {
            type0::BAR0 => self.write32(
                global::MANAGEMENT_BAR_LOW.address(0, 0),
                low(merged, enables),
            ),
            MANAGEMENT_BAR_HIGH_REGISTER => {
                self.write32(global::MANAGEMENT_BAR_HIGH.address(0, 0), merged)
            }
            common::COMMAND => {
                space.write(offset, value, byte_enables);
                let bit = 1 << port.0;
                let enables = if merged & u32::from(command::MEMORY_SPACE) != 0 {
                    enables | bit
                } else {
                    enables & !bit
                };
                self.write32(
                    global::MANAGEMENT_BAR_LOW.address(0, 0),
                    low(bar_low, enables),
                );
            }
            _ => space.write(offset, value, byte_enables),
        }
        0
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
            // The management BAR is decoded from the stored registers as
            // requests arrive (`CsrWindow::management_bar`); the completion
            // timeout is the switch's.
            name if name == global::BLOCK.name => {
                let microseconds = self.field(
                    global::COMPLETION_TIMEOUT,
                    global::TIMEOUT_MICROSECONDS,
                    0,
                    0,
                );
                DataPlane::set_completion_timeout_us(&mut self.switch, microseconds)
            }
            other => unreachable!("{other} has no RW table registers"),
        };
        done.expect("decoded entries exist and fields hold only values the tables take");
    }

    /// Applies every port register: role, settled, ACS redirect, return to ingress, INTx swizzle, completer ID.
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
            .set_port_settled(port, port::SETTLED.decode(control) == 1)?;
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

    /// Window `entry` of port `p` and its owner tag, as stored; unused if
    /// invalid, empty, or one the hardware would not use.
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
        // The hardware holds such an entry but never uses it, as the
        // drivers refuse to write it (`Window::checked`).
        if !window.keeps_requests_well_formed() {
            return (Window::UNUSED, None);
        }
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
            r if r == port::LINK => {
                let port = PortIndex(instance as u8);
                // A hot reset and a retrain written together: the hot
                // reset trains the link again anyway, so it is the one.
                let request = if port::LINK_HOT_RESET.decode(value) == 1 {
                    Some(LinkRequest::HotReset)
                } else if port::LINK_RETRAIN.decode(value) == 1 {
                    Some(LinkRequest::Retrain)
                } else {
                    None
                };
                if let Some(request) = request {
                    DataPlane::request_link(&mut self.switch, port, request)
                        .expect("the port exists");
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
        if let Some(written) = &mut self.written {
            written.push((address, value));
        }
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
    fn a_window_the_hardware_would_not_use_is_held_and_matches_nothing() {
        // Moved by 8 bytes, the 4 KiB window would misalign 16-byte
        // AtomicOps (§2.2.7.1): the registers hold it, the lookup skips it.
        let mut csr = window();
        let registers = [
            (window::BASE_LOW, 0x9000_0000),
            (window::SIZE_LOW, 0x1000),
            (window::FABRIC_BASE_LOW, 0x4000_0008),
            (window::CONTROL, 0b111),
        ];
        for (register, value) in registers {
            csr.write32(register.address(1, 3), value);
        }
        for (register, value) in registers {
            assert_eq!(
                csr.read32(register.address(1, 3)),
                value,
                "{}",
                register.name
            );
        }
        let tables = csr
            .switch()
            .port_tables(PortIndex(1))
            .expect("port 1 exists");
        assert!(!tables.windows.iter().any(|w| w.overlaps(0x9000_0000, 4)));
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
    fn link_writes_ask_the_port_for_one_hot_reset_or_retrain_each() {
        let mut csr = window();
        let link = |p| port::LINK.address(p, 0);
        csr.write32(link(1), port::LINK_RETRAIN.mask());
        csr.write32(link(2), port::LINK_HOT_RESET.mask());
        // Both at once: the hot reset retrains the link anyway (§4.2.5.11).
        csr.write32(
            link(3),
            port::LINK_HOT_RESET.mask() | port::LINK_RETRAIN.mask(),
        );
        csr.write32(link(1), 0);
        assert_eq!(
            csr.switch_mut().take_link_requests(),
            [
                (PortIndex(1), LinkRequest::Retrain),
                (PortIndex(2), LinkRequest::HotReset),
                (PortIndex(3), LinkRequest::HotReset),
            ]
        );
        assert!(
            csr.switch_mut().take_link_requests().is_empty(),
            "each acts once"
        );
        assert_eq!(csr.read32(link(2)), 0, "self-clearing");
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

    /// The management function of a switch port, as the fabric manager's
    /// configuration requests reach it.
    struct ManagementFunction<'a> {
        csr: &'a mut CsrWindow,
        port: PortIndex,
        space: ConfigSpace,
    }

    impl weft_pcie::config::ConfigRead for ManagementFunction<'_> {
        type Error = core::convert::Infallible;

        fn read_dword(&mut self, offset: u16) -> Result<u32, Self::Error> {
            Ok(self
                .csr
                .management_config(self.port, &mut self.space, offset, None))
        }
    }

    impl weft_pcie::config::ConfigWrite for ManagementFunction<'_> {
        fn write_dword(
            &mut self,
            offset: u16,
            value: u32,
            byte_enables: u8,
        ) -> Result<(), Self::Error> {
            let write = Some((value, byte_enables));
            self.csr
                .management_config(self.port, &mut self.space, offset, write);
            Ok(())
        }
    }

    /// The management function of port `port` of `csr`'s switch.
    fn management_function(csr: &mut CsrWindow, port: u8) -> ManagementFunction<'_> {
        use weft_pcie::config::vsec::{self, PortRole as VsecRole, WeftIdentity};
        let identity = WeftIdentity {
            switch_id: 0x5eed,
            port_count: 4,
            port_index: port,
            port_role: VsecRole::Fabric,
        };
        ManagementFunction {
            csr,
            port: PortIndex(port),
            space: vsec::management_function(0x1d1d, &identity).expect("fits"),
        }
    }

    /// Where the tests place the management BAR: a 1 MiB-aligned fabric address above 4 GiB.
    const BAR: u64 = 0x2_0030_0000;

    /// A switch whose port 1 is a fabric port, port 2 an endpoint port and
    /// port 3 a host port, with its management BAR assigned at [`BAR`]
    /// through port 1's management function, as the fabric manager does,
    /// and decoding on port 1.
    fn managed_window() -> CsrWindow {
        use weft_pcie::config::bar::{assign_bar, size_header_bars};
        use weft_pcie::config::ConfigWrite;
        let mut csr = window();
        csr.write32(
            port::CONTROL.address(1, 0),
            port::ENABLE.encode(1) | port::ROLE.encode(port::ROLE_FABRIC),
        );
        csr.write32(
            port::CONTROL.address(2, 0),
            port::ENABLE.encode(1) | port::ROLE.encode(port::ROLE_ENDPOINT),
        );
        csr.write32(
            port::CONTROL.address(3, 0),
            port::ENABLE.encode(1) | port::ROLE.encode(port::ROLE_HOST),
        );
        csr.write32(port::COMPLETER_ID.address(1, 0), 0x0400);
        let mut function = management_function(&mut csr, 1);
        let bars = size_header_bars(&mut function).expect("sized");
        let bar0 = bars[0].expect("BAR0 is the management BAR");
        assert_eq!(bar0.bar.size, u64::from(csr::CSR_SIZE));
        assert_eq!(
            bar0.bar.kind,
            weft_pcie::config::BarKind::Memory64 {
                prefetchable: false
            }
        );
        assert!(bars[1..].iter().all(Option::is_none), "one 64-bit BAR");
        assign_bar(&mut function, &bar0, BAR).expect("assigned");
        function
            .write_dword(common::COMMAND, u32::from(command::MEMORY_SPACE), 0b0011)
            .expect("written");
        csr
    }

    /// A memory request of `op` from the manager (bus 0) with tag 9.
    fn memory_tlp(
        op: MemoryOp,
        address: u64,
        length_dw: u16,
        first_be: u8,
        payload: &[u8],
    ) -> Vec<u8> {
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Memory(MemoryRequest {
                op,
                traffic_class: TrafficClass::default(),
                attributes: Attributes::default(),
                address_type: AddressType::default(),
                requester: Bdf::new(0, 0, 0),
                tag: Tag::new(9).expect("tag fits"),
                address,
                length_dw,
                first_be,
                last_be: if length_dw > 1 { 0xf } else { 0 },
                processing_hint: None,
            }),
        };
        Packet::new(header, payload.to_vec())
            .to_bytes()
            .expect("well-formed")
    }

    /// The one completion `forwarding` sends, which must leave by `port`: its status and data.
    fn completion_out_of(
        forwarding: &Forwarding,
        port: u8,
    ) -> (weft_pcie::tlp::Completion, Vec<u8>) {
        assert_eq!(forwarding.deliveries.len(), 1, "{forwarding:?}");
        let delivery = &forwarding.deliveries[0];
        assert_eq!(delivery.to, Destination::Port(PortIndex(port)));
        match delivery.packet.header.body {
            Body::Completion(completion) => (completion, delivery.packet.payload.clone()),
            ref other => panic!("not a completion: {other:?}"),
        }
    }

    /// The management BAR's address of CSR register address `address`.
    fn in_bar(address: u32) -> u64 {
        BAR + u64::from(address - csr::CSR_BASE)
    }

    #[test]
    fn the_management_function_sizes_as_one_64_bit_bar_of_the_window_and_decodes_when_enabled() {
        assert_eq!(window().management_bar(), None, "not decoding at reset");
        let mut csr = managed_window();
        assert_eq!(csr.management_bar(), Some(BAR));
        // The register the data plane decodes is the one the CPU sees.
        let low = csr.read32(global::MANAGEMENT_BAR_LOW.address(0, 0));
        assert_eq!(low, BAR as u32 | 1 << 1, "port 1's Memory Space Enable");
        assert_eq!(
            csr.read32(global::MANAGEMENT_BAR_HIGH.address(0, 0)),
            (BAR >> 32) as u32
        );
        use weft_pcie::config::{ConfigRead, ConfigWrite};
        // Another port's function shows the switch's one BAR, not decoding.
        let mut other = management_function(&mut csr, 0);
        let bar0 = other.read_dword(type0::BAR0).expect("read");
        assert_eq!(bar0, BAR as u32 | 0b100);
        assert_eq!(other.read_dword(common::COMMAND).expect("read") & 2, 0);
        // Memory Space Enable off: the BAR stays, but nothing decodes (§7.5.1.1.3).
        let mut function = management_function(&mut csr, 1);
        function
            .write_dword(common::COMMAND, 0, 0b0011)
            .expect("written");
        assert_eq!(function.read_dword(common::COMMAND).expect("read") & 2, 0);
        assert_eq!(
            function.read_dword(type0::BAR0).expect("read"),
            BAR as u32 | 0b100
        );
        assert_eq!(csr.management_bar(), None);
    }

    #[test]
    fn a_whole_dw_read_in_the_management_bar_on_a_fabric_port_reads_the_register() {
        let mut csr = managed_window();
        let read = memory_tlp(
            MemoryOp::Read,
            in_bar(global::ID.address(0, 0)),
            1,
            0xf,
            &[],
        );
        let forwarding = csr.ingress(PortIndex(1), &read).expect("port exists");
        let (completion, data) = completion_out_of(&forwarding, 1);
        assert_eq!(
            completion.status,
            weft_pcie::tlp::CompletionStatus::Successful
        );
        assert_eq!(
            (completion.requester, completion.tag),
            (Bdf::new(0, 0, 0), Tag::new(9).expect("fits"))
        );
        assert_eq!(completion.completer, Bdf(0x0400), "the port's completer ID");
        assert_eq!(
            (
                completion.byte_count,
                completion.lower_address,
                completion.data_dw
            ),
            (4, 0, Some(1))
        );
        // Memory is little-endian: byte 0 of the payload is bits 7:0 of "WEFT".
        assert_eq!(data, 0x5745_4654u32.to_le_bytes());
        assert!(csr.mailbox.is_empty(), "nothing for the CPU");
        assert_eq!(
            csr.switch()
                .counters(PortIndex(1))
                .expect("port")
                .ingress
                .non_posted,
            1
        );
        assert_eq!(
            csr.switch()
                .counters(PortIndex(1))
                .expect("port")
                .egress
                .completions,
            1
        );
    }

    #[test]
    fn a_whole_dw_write_in_the_management_bar_writes_the_table_register() {
        let mut csr = managed_window();
        let buses = port::BUSES.address(2, 0);
        let write = memory_tlp(
            MemoryOp::Write,
            in_bar(buses),
            1,
            0xf,
            &0x0908u32.to_le_bytes(),
        );
        let forwarding = csr.ingress(PortIndex(1), &write).expect("port exists");
        assert_eq!(forwarding, Forwarding::default(), "posted: nothing answers");
        assert_eq!(csr.read32(buses), 0x0908);
        // A disabled port (a link being discovered) reaches it too, once the
        // manager enabled that port's management function.
        let value = 0x0a0au32.to_le_bytes();
        let write = memory_tlp(MemoryOp::Write, in_bar(buses), 1, 0xf, &value);
        let forwarding = csr.ingress(PortIndex(0), &write).expect("port exists");
        assert_eq!(
            forwarding.dropped,
            Some(DropReason::PortDisabled),
            "not taken"
        );
        assert_eq!(csr.read32(buses), 0x0908);
        use weft_pcie::config::ConfigWrite;
        let decode = u32::from(command::MEMORY_SPACE);
        management_function(&mut csr, 0)
            .write_dword(common::COMMAND, decode, 0b0011)
            .expect("written");
        csr.ingress(PortIndex(0), &write).expect("port exists");
        assert_eq!(csr.read32(buses), 0x0a0a);
    }

    #[test]
    fn hosts_and_endpoints_never_reach_the_management_bar() {
        let mut csr = managed_window();
        // Even with their ports' management functions decoding it.
        let every_port = global::MANAGEMENT_ENABLE.mask();
        csr.write32(
            global::MANAGEMENT_BAR_LOW.address(0, 0),
            BAR as u32 | every_port,
        );
        let buses = port::BUSES.address(2, 0);
        for port in [2, 3] {
            let write = memory_tlp(MemoryOp::Write, in_bar(buses), 1, 0xf, &[1, 1, 0, 0]);
            let forwarding = csr.ingress(PortIndex(port), &write).expect("port exists");
            assert!(
                forwarding.dropped.is_some(),
                "routed like any request, and refused: {forwarding:?}"
            );
            let read = memory_tlp(
                MemoryOp::Read,
                in_bar(global::ID.address(0, 0)),
                1,
                0xf,
                &[],
            );
            let forwarding = csr.ingress(PortIndex(port), &read).expect("port exists");
            assert!(forwarding.dropped.is_some());
        }
        assert_eq!(csr.read32(buses), 0);
    }

    #[test]
    fn requests_outside_the_bar_or_while_it_is_off_are_routed() {
        let mut csr = managed_window();
        let id = global::ID.address(0, 0);
        for address in [BAR - 4, BAR + u64::from(csr::CSR_SIZE)] {
            let read = memory_tlp(MemoryOp::Read, address, 1, 0xf, &[]);
            let forwarding = csr.ingress(PortIndex(1), &read).expect("port exists");
            assert_eq!(forwarding.dropped, Some(DropReason::NoRoute));
        }
        // Port 2's function decodes it, port 1's no more.
        csr.write32(
            global::MANAGEMENT_BAR_LOW.address(0, 0),
            BAR as u32 | 1 << 2,
        );
        let read = memory_tlp(MemoryOp::Read, in_bar(id), 1, 0xf, &[]);
        let forwarding = csr.ingress(PortIndex(1), &read).expect("port exists");
        assert_eq!(forwarding.dropped, Some(DropReason::NoRoute));
    }

    #[test]
    fn reads_the_window_cannot_complete_get_completer_abort_and_unsupported_types_ur() {
        use weft_pcie::tlp::CompletionStatus::{CompleterAbort, Successful, UnsupportedRequest};
        let mut csr = managed_window();
        let id = in_bar(global::ID.address(0, 0));
        // No register at the offset: past the last block, and a port the switch lacks.
        let hole = in_bar(csr::CSR_BASE + csr::CSR_SIZE - 4);
        let missing_port = in_bar(port::CONTROL.address(7, 0));
        let cases = [
            (MemoryOp::Read, id, 1, 0x3, CompleterAbort),
            (MemoryOp::Read, id, 2, 0xf, CompleterAbort),
            (MemoryOp::Read, hole, 1, 0xf, CompleterAbort),
            (MemoryOp::Read, missing_port, 1, 0xf, CompleterAbort),
            (MemoryOp::ReadLocked, id, 1, 0xf, UnsupportedRequest),
            // An AtomicOp's byte enables are 0 (§2.2.7.1).
            (MemoryOp::FetchAdd, id, 1, 0, UnsupportedRequest),
        ];
        for (op, address, length, first_be, status) in cases {
            let payload = if op == MemoryOp::FetchAdd {
                vec![0; 4]
            } else {
                Vec::new()
            };
            let tlp = memory_tlp(op, address, length, first_be, &payload);
            let forwarding = csr.ingress(PortIndex(1), &tlp).expect("port exists");
            let (completion, data) = completion_out_of(&forwarding, 1);
            assert_eq!(completion.status, status, "{op:?} at {address:#x}");
            assert_eq!(completion.data_dw, None);
            assert!(data.is_empty());
        }
        // A zero-length read (§2.2.5) completes with one DW and reads nothing.
        let flush = memory_tlp(
            MemoryOp::Read,
            in_bar(mailbox::STATUS.address(0, 0)),
            1,
            0,
            &[],
        );
        let (completion, data) =
            completion_out_of(&csr.ingress(PortIndex(1), &flush).expect("port"), 1);
        assert_eq!((completion.status, data), (Successful, vec![0; 4]));
    }

    #[test]
    fn partial_and_poisoned_writes_write_nothing_and_are_kept() {
        let mut csr = managed_window();
        let buses = port::BUSES.address(2, 0);
        let partial = memory_tlp(MemoryOp::Write, in_bar(buses), 1, 0x1, &[5, 0, 0, 0]);
        let long = memory_tlp(MemoryOp::Write, in_bar(buses), 2, 0xf, &[5; 8]);
        let mut poisoned = Packet::parse(&memory_tlp(
            MemoryOp::Write,
            in_bar(buses),
            1,
            0xf,
            &[5, 0, 0, 0],
        ))
        .expect("parses");
        poisoned.header.poisoned = true;
        let poisoned = poisoned.to_bytes().expect("well-formed");
        for tlp in [&partial, &long, &poisoned] {
            let forwarding = csr.ingress(PortIndex(1), tlp).expect("port exists");
            assert!(forwarding.deliveries.is_empty());
        }
        assert_eq!(csr.read32(buses), 0);
        assert_eq!(csr.refused_management_writes().len(), 3);
        // A whole-DW write at no register is a stray access, as on the CSR bus.
        let hole = csr::CSR_BASE + csr::CSR_SIZE - 4;
        csr.ingress(
            PortIndex(1),
            &memory_tlp(MemoryOp::Write, in_bar(hole), 1, 0xf, &[1; 4]),
        )
        .expect("port");
        assert_eq!(csr.stray_accesses(), [hole]);
    }
}
