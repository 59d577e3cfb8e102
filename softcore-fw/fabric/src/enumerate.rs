//! Discovery and enumeration of the fabric: every weft switch and what
//! sits behind its ports.
//!
//! The manager is the root of the fabric's hierarchy (DESIGN.md, "Domains
//! and translation"). Bus 0 is its own; each host gets one proxy bus, in
//! configuration order, right after it. Then the switches are walked
//! breadth first from the manager's own, each one's ports in index order:
//! every port is probed and gets the next free bus for the device below it,
//! plus any further buses its SR-IOV VFs need. A port whose function 0
//! carries weft's identity VSEC leads to another weft switch: both ends of
//! the link are recorded (the structure names the far port), and a switch
//! not seen before is queued to be walked in turn. Switches are told apart
//! by their switch IDs, so a loop in the switch graph leads back to a
//! switch already known and ends there; a port already recorded as the far
//! end of a link is not probed again. A device that takes a configuration
//! request of the manager and never completes it — a hung device, the
//! request timed out or completed by the switch with Completer Abort
//! (PCIe Base 6.0 §2.8) — or that still answers Request Retry Status when
//! its readiness deadline has passed (§6.6.1: software may treat it as
//! broken), whether its port's first read or any later
//! request while the device is probed and set up (BAR sizing, capability
//! walks, SR-IOV, a conventional switch below), is recorded as not
//! responding ([`FabricSwitch::not_responding`]): what the walk gave the
//! port is released ([`Enumerator::release`]), the port is left empty,
//! and the walk goes on. The management function of a weft switch is no
//! device: a request to it that times out stops enumeration, as any
//! failure of the fabric's own switches does.
//!
//! A switch found for the first time gets its management BAR (a BAR of
//! the management function it was found by, over its CSR window), routed
//! to it along the discovery tree before anything else is written there:
//! its tables are written in-band through it ([`crate::inband`]). Every
//! link probed to a weft switch enables the management function at its
//! far end, so the switch takes its BAR's requests on the links they come
//! in by: the last hop of a shortest path from the manager's switch
//! leaves a switch nearer it, which is walked first and probes the link.
//!
//! Functions below the manager's own switch are reached on their link; the
//! others by requests routed through the fabric by bus number
//! ([`ConfigPath::Routed`]). Before a port of a remote switch is probed,
//! the bus it is given is routed there on every switch along the discovery
//! tree, and the port is opened as an endpoint port with that bus, so the
//! request can leave by it and the completion come back; a new switch
//! first routes the manager's bus back up the link it was found by.
//! [`crate::routes`] later replaces all of that with the fabric's routes.
//!
//! Per function: BARs are sized and placed (see [`crate::address`]), ACS
//! and SR-IOV are found, Memory Space and Bus Master are enabled. Functions
//! of a device are found through the ARI Next Function Number chain when
//! function 0 has ARI (§6.13, §7.8.7), otherwise at functions 0..=7 when
//! function 0 is multi-function (§7.5.1.1.9). Only device 0 exists below a
//! port (§7.3.1). A Type 1 function — a conventional PCIe switch or a
//! bridge — is programmed and enumerated through ([`crate::conventional`]):
//! its buses join the port's range, depth first, and the functions below
//! it are endpoints like any other. Requests for a bus of a port's range
//! after its first travel as Type 1 ([`ConfigPath::Below`]).

use weft_pcie::config::ari::{self, AriCap};
use weft_pcie::config::bar::{
    assign_bar, size_header_bars, BarAssignError, BarDecodeError, DecodedBar,
};
use weft_pcie::config::header::{command, common, header_type};
use weft_pcie::config::sriov::SriovError;
use weft_pcie::config::vsec::{read_weft_identity, VsecError, WeftIdentity};
use weft_pcie::config::walk::find_extended_capability;
use weft_pcie::config::{ext_cap_id, ConfigRead, ConfigWrite, WalkError};
use weft_pcie::Bdf;
use weft_regs::capacity;

use crate::address::{AddressAllocator, AddressError, Pool};
use crate::hw::{ConfigFault, ConfigPath, Fabric, FabricConfig, FunctionAccess, Timer};
use crate::inventory::{
    FabricSwitch, Function, FunctionKind, Inventory, PlacedBar, PortKind, SwitchIndex,
};
use crate::limits::{MAX_ARI_FUNCTIONS, MAX_FUNCTIONS, MAX_HOST_PORTS, MAX_SWITCHES};
use crate::readiness::{
    read_when_ready, ReadinessError, READINESS_TIMEOUT_NS, RESET_TO_FIRST_REQUEST_NS,
};
use crate::settings::{FabricSettings, HostPort};
use weft_regs::tables::{AddressRoute, Destination, PortIndex, PortRole, TableWriteError};

/// Why enumeration stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnumerationError {
    /// The switch has more ports than the data plane's tables describe.
    TooManyPorts {
        /// Ports the switch reports.
        ports: usize,
        /// Ports `weft_regs::capacity::PORTS` allows.
        capacity: usize,
    },
    /// A configured host port does not exist.
    NoSuchPort(PortIndex),
    /// Two host entries name the same port.
    HostPortTwice(PortIndex),
    /// A configured host port is on a switch that discovery did not find.
    HostSwitchNotFound {
        /// The switch ID configured for it.
        switch_id: u64,
    },
    /// A configured host port does not exist on its (remote) switch.
    NoSuchHostPort {
        /// The switch.
        switch_id: u64,
        /// The port.
        port: PortIndex,
    },
    /// The address plan is invalid.
    Plan(AddressError),
    /// A function never became ready, or failed otherwise while probed.
    Readiness(ReadinessError),
    /// A configuration access failed.
    Config {
        /// The function.
        id: Bdf,
        /// What its completion said.
        fault: ConfigFault,
    },
    /// Sizing a function's BARs failed.
    BarSizing {
        /// The function.
        id: Bdf,
        /// The error.
        error: BarDecodeError<ConfigFault>,
    },
    /// Writing a BAR's address failed.
    BarAssignment {
        /// The function.
        id: Bdf,
        /// The error.
        error: BarAssignError<ConfigFault>,
    },
    /// A capability list is malformed or unreadable.
    CapabilityWalk {
        /// The function.
        id: Bdf,
        /// The error.
        error: WalkError<ConfigFault>,
    },
    /// A weft identity structure is malformed.
    Identity {
        /// The function.
        id: Bdf,
        /// The error.
        error: VsecError<ConfigFault>,
    },
    /// No room for a BAR.
    Address {
        /// The function.
        id: Bdf,
        /// The error.
        error: AddressError,
    },
    /// The SR-IOV capability cannot be set up as found.
    Sriov {
        /// The PF.
        id: Bdf,
        /// The error.
        error: SriovError,
    },
    /// More functions than the inventory holds.
    TooManyFunctions {
        /// [`MAX_FUNCTIONS`].
        capacity: usize,
    },
    /// More conventional switch ports and bridges than the inventory holds.
    TooManyBridges {
        /// [`MAX_BRIDGES`](crate::limits::MAX_BRIDGES).
        capacity: usize,
    },
    /// The port needs a bus number and all 256 are used.
    BusNumbersExhausted {
        /// The port.
        port: PortIndex,
    },
    /// More weft switches than the inventory holds.
    TooManySwitches {
        /// [`MAX_SWITCHES`].
        capacity: usize,
    },
    /// A switch was found whose data plane the fabric gives no handle for.
    UnreachableSwitch {
        /// Its switch ID.
        switch_id: u64,
    },
    /// A table write on the way to a remote switch failed.
    Table(TableWriteError),
}

impl EnumerationError {
    /// Whether this is a configuration request to a function that its
    /// device took and never completed: the manager's completion timeout
    /// passed, or the switch completed it with Completer Abort after its
    /// own (PCIe Base 6.0 §2.8) — the device has hung; or one it kept
    /// answering with Request Retry Status past its readiness deadline, so
    /// it never became ready (§6.6.1 lets software treat it as broken).
    /// Either way the device, not the fabric, has failed. Table writes and
    /// every other failure are not.
    pub fn device_timed_out(&self) -> bool {
        let fault = match *self {
            EnumerationError::Readiness(ReadinessError::NotReady { .. }) => return true,
            EnumerationError::Readiness(ReadinessError::Fault { fault, .. })
            | EnumerationError::Config { fault, .. }
            | EnumerationError::BarSizing {
                error: BarDecodeError::Access(fault),
                ..
            }
            | EnumerationError::BarAssignment {
                error: BarAssignError::Access(fault),
                ..
            }
            | EnumerationError::CapabilityWalk {
                error: WalkError::Access(fault),
                ..
            }
            | EnumerationError::Identity {
                error: VsecError::Walk(WalkError::Access(fault)),
                ..
            } => fault,
            _ => return false,
        };
        fault.unanswered()
    }
}

impl From<TableWriteError> for EnumerationError {
    fn from(error: TableWriteError) -> Self {
        EnumerationError::Table(error)
    }
}

/// A port of a switch of the fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct At {
    pub(crate) switch: SwitchIndex,
    pub(crate) port: PortIndex,
}

/// What answered at a port's function 0.
enum Probed {
    /// A device, enumerated.
    Device,
    /// The management function of a weft switch, with its identity.
    Switch(WeftIdentity),
    /// Nothing (Unsupported Request).
    Nothing,
}

/// What the walk had given out before a port was probed, so what the
/// port's device was given can be released ([`Enumerator::release`]).
#[derive(Clone, Copy)]
struct Assigned {
    /// The allocator: a bump allocator, so its state before the port is
    /// the address space the port had not yet taken.
    allocator: AddressAllocator,
    /// How many functions the inventory held.
    functions: usize,
    /// How many bridges the inventory held.
    bridges: usize,
    /// The port's address ranges.
    port_ranges: [Option<(u64, u64)>; 2],
    /// What the inventory said sits behind the port.
    port: PortKind,
    /// The walk's place: the last bus given out, the bridge above, whether
    /// the bridges above forward 64-bit prefetchable windows, and what the
    /// innermost bridge's windows must cover so far.
    last_bus: u8,
    bridge: Option<Bdf>,
    prefetchable_64: bool,
    span: [Option<(u64, u64)>; 2],
}

impl Assigned {
    /// What `e` had given out, and where its walk was, before the port
    /// `at` (or a device below it) was probed.
    fn of<C, T, F>(e: &Enumerator<'_, C, T, F>, at: At) -> Self
    where
        C: FabricConfig + ?Sized,
        T: Timer + ?Sized,
        F: Fabric + ?Sized,
    {
        let switch = &e.inventory.switches[usize::from(at.switch.0)];
        Assigned {
            allocator: e.allocator,
            functions: e.inventory.functions.len(),
            bridges: e.inventory.bridges.len(),
            port_ranges: switch.port_ranges[usize::from(at.port.0)],
            port: switch.ports[usize::from(at.port.0)],
            last_bus: e.last_bus,
            bridge: e.bridge,
            prefetchable_64: e.prefetchable_64,
            span: e.span,
        }
    }
}

/// Enumeration in progress: the hardware, the allocator and what was found so far.
pub(crate) struct Enumerator<'a, C, T, F>
where
    C: FabricConfig + ?Sized,
    T: Timer + ?Sized,
    F: Fabric + ?Sized,
{
    pub(crate) config: &'a mut C,
    pub(crate) timer: &'a mut T,
    pub(crate) fabric: &'a mut F,
    pub(crate) settings: &'a FabricSettings,
    /// Per switch, its parent on the discovery tree and the parent's port towards it.
    parents: [Option<At>; MAX_SWITCHES],
    pub(crate) allocator: AddressAllocator,
    pub(crate) inventory: &'a mut Inventory,
    /// When the fabric's ports left Conventional Reset, in timer nanoseconds.
    pub(crate) reset_at_ns: u64,
    /// The highest bus given out below the port being probed.
    pub(crate) last_bus: u8,
    /// The conventional switch port or bridge the functions being
    /// enumerated sit directly below; `None` on the weft port's link.
    pub(crate) bridge: Option<Bdf>,
    /// Whether every bridge above forwards a 64-bit prefetchable window,
    /// so 64-bit prefetchable BARs may go in [`Pool::Prefetchable64`].
    pub(crate) prefetchable_64: bool,
    /// The fabric address ranges `(base, end)` placed since the innermost
    /// bridge's scan began, per pool (below 4 GiB, then 64-bit
    /// prefetchable): what its windows must cover.
    pub(crate) span: [Option<(u64, u64)>; 2],
    /// Every host port with its proxy fabric ID.
    proxies: HostProxies,
}

/// Every host port with its proxy fabric ID ([`host_proxies`]).
pub type HostProxies = heapless::Vec<(HostPort, Bdf), MAX_HOST_PORTS>;

/// Discovers and enumerates the fabric reachable from the manager's
/// switch, whose links left Conventional Reset at `reset_at_ns` (timer
/// time), into `inventory` (emptied first).
///
/// The inventory is filled in place rather than returned: it is most of
/// the manager's state, and every copy of it on the soft core's stack
/// comes out of the same 256 KiB data RAM.
#[inline(never)]
pub fn enumerate<C, T, F>(
    config: &mut C,
    timer: &mut T,
    fabric: &mut F,
    settings: &FabricSettings,
    reset_at_ns: u64,
    inventory: &mut Inventory,
) -> Result<(), EnumerationError>
where
    C: FabricConfig + ?Sized,
    T: Timer + ?Sized,
    F: Fabric + ?Sized,
{
    let ports = fabric.local().ports();
    if ports > capacity::PORTS {
        return Err(EnumerationError::TooManyPorts {
            ports,
            capacity: capacity::PORTS,
        });
    }
    let allocator = AddressAllocator::new(settings.address_plan).map_err(EnumerationError::Plan)?;
    inventory.clear();
    inventory
        .switches
        .push(FabricSwitch::new(settings.switch_id, ports as u8))
        .map_err(|_| EnumerationError::TooManySwitches {
            capacity: MAX_SWITCHES,
        })?;
    let mut e = Enumerator {
        config,
        timer,
        fabric,
        settings,
        parents: [None; MAX_SWITCHES],
        allocator,
        inventory,
        reset_at_ns,
        last_bus: 0,
        bridge: None,
        prefetchable_64: true,
        span: [None; 2],
        proxies: host_proxies(settings, ports)?,
    };
    let mut next_bus = u16::from(settings.manager_id.bus()) + 1;
    for (host, proxy_id) in e.proxies.clone() {
        if host.switch == settings.switch_id {
            e.inventory.switches[0].ports[usize::from(host.port.0)] = PortKind::Host {
                host: host.host,
                proxy_id,
            };
        }
        next_bus = u16::from(proxy_id.bus()) + 1;
    }
    // Completions of the manager's own requests come back to its CPU.
    e.fabric
        .local()
        .set_bus_route(settings.manager_id.bus(), Some(Destination::Cpu))?;
    // §6.6.1: no Configuration Request within 100 ms of the reset.
    e.timer
        .wait_until_ns(reset_at_ns.saturating_add(RESET_TO_FIRST_REQUEST_NS));
    let mut switch = 0;
    while switch < e.inventory.switches.len() {
        let count = usize::from(e.inventory.switches[switch].port_count).min(capacity::PORTS);
        for index in 0..count {
            let at = At {
                switch: SwitchIndex(switch as u8),
                port: PortIndex(index as u8),
            };
            if e.inventory.switches[switch].ports[index] != PortKind::Empty {
                // A host port, or the far end of a link found from the other side.
                continue;
            }
            let bus = u8::try_from(next_bus)
                .map_err(|_| EnumerationError::BusNumbersExhausted { port: at.port })?;
            if let Some(last) = e.probe_port(at, bus)? {
                next_bus = u16::from(last) + 1;
            }
        }
        switch += 1;
    }
    if let Some((host, _)) = e
        .proxies
        .iter()
        .find(|(host, _)| e.inventory.switch_index(host.switch).is_none())
    {
        return Err(EnumerationError::HostSwitchNotFound {
            switch_id: host.switch,
        });
    }
    Ok(())
}

/// Each host port with its proxy fabric ID: the buses right after the
/// manager's, in configuration order. Known before any device is probed,
/// so host ports are recorded before enumeration probes the ports around
/// them: those of the manager's switch (`ports` ports) at once, those of
/// another switch as soon as discovery reaches it.
pub fn host_proxies(
    settings: &FabricSettings,
    ports: usize,
) -> Result<HostProxies, EnumerationError> {
    let mut proxies = heapless::Vec::new();
    let first_bus = u16::from(settings.manager_id.bus()) + 1;
    for (i, host) in settings.hosts.iter().enumerate() {
        if host.switch == settings.switch_id && usize::from(host.port.0) >= ports {
            return Err(EnumerationError::NoSuchPort(host.port));
        }
        if settings.hosts[..i]
            .iter()
            .any(|h| (h.switch, h.port) == (host.switch, host.port))
        {
            return Err(EnumerationError::HostPortTwice(host.port));
        }
        let bus = u8::try_from(first_bus + i as u16)
            .map_err(|_| EnumerationError::BusNumbersExhausted { port: host.port })?;
        // settings.hosts has the same capacity.
        let _ = proxies.push((*host, Bdf::new(bus, 0, 0)));
    }
    Ok(proxies)
}

impl<C, T, F> Enumerator<'_, C, T, F>
where
    C: FabricConfig + ?Sized,
    T: Timer + ?Sized,
    F: Fabric + ?Sized,
{
    pub(crate) fn deadline(&self) -> u64 {
        self.reset_at_ns.saturating_add(READINESS_TIMEOUT_NS)
    }

    /// How configuration requests reach functions on `bus` below `at`.
    pub(crate) fn path(&self, at: At, bus: u8) -> ConfigPath {
        self.inventory.config_path(at.switch, at.port, bus)
    }

    /// Gives `bus` to the port being probed (and every bus before it):
    /// records the port's range and, on a remote switch, routes the bus
    /// there and opens the port for it, so requests reach it.
    pub(crate) fn claim_bus(&mut self, at: At, bus: u8) -> Result<(), EnumerationError> {
        if bus <= self.last_bus {
            return Ok(());
        }
        self.last_bus = bus;
        let kind =
            &mut self.inventory.switches[usize::from(at.switch.0)].ports[usize::from(at.port.0)];
        let first = match *kind {
            PortKind::Endpoint { buses } => buses.0,
            _ => bus,
        };
        *kind = PortKind::Endpoint {
            buses: (first, bus),
        };
        if at.switch != SwitchIndex::LOCAL {
            self.route_bus(at, bus)?;
            self.plane(at.switch)?.set_port_role(
                at.port,
                PortRole::Endpoint {
                    owner: None,
                    buses: (first, bus),
                },
            )?;
        }
        Ok(())
    }

    /// The data plane of `switch`.
    fn plane(
        &mut self,
        switch: SwitchIndex,
    ) -> Result<&mut dyn weft_regs::tables::DataPlane, EnumerationError> {
        self.inventory
            .plane(&mut *self.fabric, switch)
            .map_err(|switch_id| EnumerationError::UnreachableSwitch { switch_id })
    }

    /// Routes `bus` to `at` on every switch from the manager's to `at`'s,
    /// along the discovery tree, so requests for it reach `at`'s link.
    pub(crate) fn route_bus(&mut self, at: At, bus: u8) -> Result<(), EnumerationError> {
        if at.switch == SwitchIndex::LOCAL {
            return Ok(());
        }
        let mut hop = at;
        for _ in 0..MAX_SWITCHES {
            self.plane(hop.switch)?
                .set_bus_route(bus, Some(Destination::Port(hop.port)))?;
            match self.parents[usize::from(hop.switch.0)] {
                Some(parent) => hop = parent,
                None => break,
            }
        }
        Ok(())
    }

    /// Records the link from `at` to the weft switch port `far` found
    /// there, whose management function `function` answered at `path`; a
    /// switch not seen before joins the inventory, to be walked, with its
    /// management BAR placed, so its tables are reached in-band
    /// ([`crate::inband`]) from the first write on.
    fn link(
        &mut self,
        at: At,
        far: WeftIdentity,
        path: ConfigPath,
        function: Bdf,
    ) -> Result<(), EnumerationError> {
        let far_port = PortIndex(far.port_index);
        if usize::from(far.port_index) >= capacity::PORTS {
            return Err(EnumerationError::TooManyPorts {
                ports: usize::from(far.port_count),
                capacity: capacity::PORTS,
            });
        }
        let here_id = self.inventory.switches[usize::from(at.switch.0)].id;
        let other = match self.inventory.switch_index(far.switch_id) {
            Some(known) => {
                // Requests to the switch's BAR may come in by this link
                // too, as the fabric's routes go: its function decodes it.
                if self.inventory.switches[usize::from(known.0)]
                    .management_bar
                    .is_some()
                {
                    self.enable_memory_space(path, function)?;
                }
                self.plane(at.switch)?
                    .set_port_role(at.port, PortRole::Fabric)?;
                known
            }
            None => {
                let index = SwitchIndex(self.inventory.switches.len() as u8);
                let mut switch = FabricSwitch::new(far.switch_id, far.port_count);
                switch.via = Some(if at.switch == SwitchIndex::LOCAL {
                    at.port
                } else {
                    self.inventory.switches[usize::from(at.switch.0)]
                        .via
                        .unwrap_or(at.port)
                });
                self.inventory.switches.push(switch).map_err(|_| {
                    EnumerationError::TooManySwitches {
                        capacity: MAX_SWITCHES,
                    }
                })?;
                self.parents[usize::from(index.0)] = Some(at);
                // The BAR is placed while the near port still delivers
                // configuration requests to the function on its link; then
                // the port carries the fabric's TLPs, in-band ones first.
                let bar = self.place_management_bar(path, function)?;
                self.plane(at.switch)?
                    .set_port_role(at.port, PortRole::Fabric)?;
                if let Some(bar) = bar {
                    self.route_management_bar(index, bar)?;
                    self.inventory.switches[usize::from(index.0)].management_bar = Some(bar.0);
                }
                // Completions to the manager go back the way the switch was found.
                let manager_bus = self.settings.manager_id.bus();
                self.plane(index)?
                    .set_bus_route(manager_bus, Some(Destination::Port(far_port)))?;
                self.record_host_ports(index)?;
                index
            }
        };
        self.inventory.switches[usize::from(at.switch.0)].ports[usize::from(at.port.0)] =
            PortKind::Fabric {
                switch_id: far.switch_id,
                port: far_port,
            };
        self.inventory.switches[usize::from(other.0)].ports[usize::from(far_port.0)] =
            PortKind::Fabric {
                switch_id: here_id,
                port: at.port,
            };
        self.plane(other)?
            .set_port_role(far_port, PortRole::Fabric)?;
        Ok(())
    }

    /// Sizes and places the BAR of a newly found switch's management
    /// function `id` (reached at `path`) like any BAR, at the top of its
    /// pool (endpoints fill it from the bottom), and sets its Memory
    /// Space Enable, so the switch executes memory requests in it that
    /// arrive on this link against its CSR window: the BAR's address and
    /// size, or `None` if the function has no memory BAR (a switch whose
    /// tables the fabric must reach otherwise).
    fn place_management_bar(
        &mut self,
        path: ConfigPath,
        id: Bdf,
    ) -> Result<Option<(u64, u64)>, EnumerationError> {
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: id,
        };
        let decoded = size_header_bars(&mut access)
            .map_err(|error| EnumerationError::BarSizing { id, error })?;
        let Some((bar, pool)) = decoded
            .iter()
            .flatten()
            .find_map(|bar| Some((bar, Pool::for_kind(bar.bar.kind)?)))
        else {
            return Ok(None);
        };
        let size = bar.bar.size;
        let base = self
            .allocator
            .allocate_from_top(pool, size)
            .map_err(|error| EnumerationError::Address { id, error })?;
        assign_bar(&mut access, bar, base)
            .map_err(|error| EnumerationError::BarAssignment { id, error })?;
        self.enable_memory_space(path, id)?;
        Ok(Some((base, size)))
    }

    /// Sets Memory Space Enable in the Command register of function `id`
    /// (reached at `path`), keeping its other bits (§7.5.1.1.3): a weft
    /// switch's management function then executes memory requests in the
    /// switch's management BAR that arrive on its link.
    fn enable_memory_space(&mut self, path: ConfigPath, id: Bdf) -> Result<(), EnumerationError> {
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: id,
        };
        let current = read(&mut access, common::COMMAND)? as u16;
        // Only the Command bytes: Status is RW1C (§7.5.1.1.4).
        access
            .write_dword(
                common::COMMAND,
                u32::from(current | command::MEMORY_SPACE),
                0b0011,
            )
            .map_err(|fault| EnumerationError::Config { id, fault })
    }

    /// Routes the management BAR `(base, size)` of the newly found switch
    /// `index` to it on every switch from the manager's along the
    /// discovery tree, in address route entry `index` (unused until
    /// [`crate::routes`] writes the fabric's routes, which route every
    /// management BAR too).
    fn route_management_bar(
        &mut self,
        index: SwitchIndex,
        (base, size): (u64, u64),
    ) -> Result<(), EnumerationError> {
        let mut hop = self.parents[usize::from(index.0)];
        while let Some(at) = hop {
            let route = AddressRoute {
                base,
                size,
                to: Destination::Port(at.port),
            };
            self.plane(at.switch)?
                .set_address_route(usize::from(index.0), Some(route))?;
            hop = self.parents[usize::from(at.switch.0)];
        }
        Ok(())
    }

    /// Records the host ports of the newly found switch `index`. They open
    /// with the fabric's tables ([`crate::routes::program_fabric`]); until
    /// then the switch's data plane asks their hosts to retry.
    fn record_host_ports(&mut self, index: SwitchIndex) -> Result<(), EnumerationError> {
        let switch = &self.inventory.switches[usize::from(index.0)];
        let (switch_id, port_count) = (switch.id, switch.port_count);
        for (host, proxy_id) in self.proxies.clone() {
            if host.switch != switch_id {
                continue;
            }
            if host.port.0 >= port_count || usize::from(host.port.0) >= capacity::PORTS {
                return Err(EnumerationError::NoSuchHostPort {
                    switch_id,
                    port: host.port,
                });
            }
            self.inventory.switches[usize::from(index.0)].ports[usize::from(host.port.0)] =
                PortKind::Host {
                    host: host.host,
                    proxy_id,
                };
        }
        Ok(())
    }

    /// Probes the device below `at` at `bus`; returns the last bus it uses, if any.
    ///
    /// A device that stops completing the manager's configuration requests
    /// while it is probed ([`EnumerationError::device_timed_out`]) leaves
    /// its port empty, recorded as not responding, with what it was given
    /// released ([`Enumerator::release`]); its buses are given to the next
    /// port.
    fn probe_port(&mut self, at: At, bus: u8) -> Result<Option<u8>, EnumerationError> {
        let first = Bdf::new(bus, 0, 0);
        let before = Assigned::of(self, at);
        self.inventory.switches[usize::from(at.switch.0)].ports[usize::from(at.port.0)] =
            PortKind::Endpoint { buses: (bus, bus) };
        self.last_bus = bus;
        self.bridge = None;
        self.prefetchable_64 = true;
        self.span = [None; 2];
        if at.switch != SwitchIndex::LOCAL {
            self.route_bus(at, bus)?;
            self.plane(at.switch)?.set_port_role(
                at.port,
                PortRole::Endpoint {
                    owner: None,
                    buses: (bus, bus),
                },
            )?;
        }
        let path = self.path(at, bus);
        let probed = match self.identify(path, first) {
            Ok(Some(None)) => self.enumerate_device(at, bus, 0).map(|()| Probed::Device),
            Ok(Some(Some(identity))) => Ok(Probed::Switch(identity)),
            Ok(None) => Ok(Probed::Nothing),
            Err(error) => Err(error),
        };
        match probed {
            Ok(Probed::Device) => Ok(Some(self.last_bus)),
            Ok(Probed::Switch(identity)) => {
                self.set_port(at, PortKind::Empty);
                self.link(at, identity, path, first)?;
                Ok(None)
            }
            Ok(Probed::Nothing) => {
                self.set_port(at, PortKind::Empty);
                Ok(None)
            }
            Err(error) if error.device_timed_out() => {
                self.release(at, before)?;
                self.inventory.switches[usize::from(at.switch.0)].not_responding |= 1 << at.port.0;
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    /// What answers at function 0 of a port's device, `first` (reached at
    /// `path`): `None` if nothing does (Unsupported Request), otherwise
    /// the weft identity of a weft switch's management function, `None`
    /// for any other device.
    fn identify(
        &mut self,
        path: ConfigPath,
        first: Bdf,
    ) -> Result<Option<Option<WeftIdentity>>, EnumerationError> {
        let found = read_when_ready(self.config, self.timer, path, first, 0, self.deadline())
            .map_err(EnumerationError::Readiness)?;
        if found.is_none() {
            return Ok(None);
        }
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: first,
        };
        read_weft_identity(&mut access)
            .map(Some)
            .map_err(|error| EnumerationError::Identity { id: first, error })
    }

    /// Records `kind` as what sits behind `at`.
    fn set_port(&mut self, at: At, kind: PortKind) {
        self.inventory.switches[usize::from(at.switch.0)].ports[usize::from(at.port.0)] = kind;
    }

    /// Releases what the walk gave the port `at` since `before`, whose
    /// device stopped answering while it was probed: its functions and
    /// bridges leave the inventory, the fabric address space its BARs and
    /// bridge windows took goes back to the allocator, the port is empty
    /// and disabled (the role [`crate::routes`] gives an empty port), and
    /// its buses are free, since [`Enumerator::probe_port`] does not
    /// count them used.
    ///
    /// Released rather than kept out of use: the device may still hold
    /// the bus numbers and BAR addresses it was given (it captured its
    /// bus number from a Type 0 write, §2.2.6.2, and kept its BARs), but
    /// nothing in the fabric reaches it by them. Switches route by their
    /// tables, not by what a device decodes (DESIGN.md, "Domains and
    /// translation"): once no bus or address route leads to the port
    /// ([`crate::routes`] writes every route again from the inventory),
    /// a request for a reused bus or address goes to its new owner's
    /// port, and the disabled port drops whatever the device sends. The
    /// device is given fresh ones if it is enumerated again. The whole
    /// port is released, devices below a conventional switch on it
    /// included: a port's buses and each pool's BARs are one contiguous
    /// range per port, the unit the data plane routes by. (A device on a
    /// conventional switch's downstream port that hangs is released alone,
    /// behind that port: [`Enumerator::enumerate_linked_device`].)
    fn release(&mut self, at: At, before: Assigned) -> Result<(), EnumerationError> {
        self.roll_back(at, before);
        self.set_port(at, PortKind::Empty);
        self.plane(at.switch)?
            .set_port_role(at.port, PortRole::Disabled)?;
        Ok(())
    }

    /// Gives back what the walk gave out below the port `at` since
    /// `before`, and returns the walk to where it was then.
    fn roll_back(&mut self, at: At, before: Assigned) {
        self.allocator = before.allocator;
        self.inventory.functions.truncate(before.functions);
        self.inventory.bridges.truncate(before.bridges);
        let switch = &mut self.inventory.switches[usize::from(at.switch.0)];
        switch.port_ranges[usize::from(at.port.0)] = before.port_ranges;
        switch.ports[usize::from(at.port.0)] = before.port;
        self.last_bus = before.last_bus;
        self.bridge = before.bridge;
        self.prefetchable_64 = before.prefetchable_64;
        self.span = before.span;
    }

    /// Enumerates the device on the link of a conventional switch's
    /// downstream port below `at`, `bus` being the link's, if one answers
    /// by `deadline` (timer nanoseconds). A device that stops completing
    /// the manager's configuration requests while it is probed
    /// ([`EnumerationError::device_timed_out`]) is released alone
    /// ([`Enumerator::roll_back`]), and the caller records it on its
    /// downstream port (`Bridge::device_not_responding`): the downstream
    /// port's windows then cover nothing and its bus range is its link's
    /// bus alone, so nothing reaches the device by what it was given, and
    /// its siblings and the weft port stay in use. Returns whether it was
    /// released.
    ///
    /// Only a downstream port's device is released so: it is alone on its
    /// link, behind a port that still answers. A device on a shared bus
    /// (below a PCI bridge) keeps decoding the addresses it was given
    /// beside its siblings, and a conventional switch port that hangs
    /// stops forwarding for everything below it; those hangs release the
    /// whole weft port ([`Enumerator::probe_port`]).
    pub(crate) fn enumerate_linked_device(
        &mut self,
        at: At,
        bus: u8,
        deadline: u64,
    ) -> Result<bool, EnumerationError> {
        let before = Assigned::of(self, at);
        match self.enumerate_if_present(at, bus, 0, deadline) {
            Ok(()) => Ok(false),
            Err(error) if error.device_timed_out() => {
                self.roll_back(at, before);
                Ok(true)
            }
            Err(error) => Err(error),
        }
    }

    /// Enumerates device `device` on `bus` below `at`
    /// ([`Enumerator::enumerate_device`]) if its function 0 answers by
    /// `deadline` (timer nanoseconds); nothing if it answers Unsupported
    /// Request.
    pub(crate) fn enumerate_if_present(
        &mut self,
        at: At,
        bus: u8,
        device: u8,
        deadline: u64,
    ) -> Result<(), EnumerationError> {
        let path = self.path(at, bus);
        let first = Bdf::new(bus, device, 0);
        if read_when_ready(self.config, self.timer, path, first, 0, deadline)
            .map_err(EnumerationError::Readiness)?
            .is_some()
        {
            self.enumerate_device(at, bus, device)?;
        }
        Ok(())
    }

    /// Enumerates the functions of device `device` on `bus` below `at`,
    /// whose function 0 answered: through the ARI Next Function Number
    /// chain when function 0 has ARI (device 0 only, and below a
    /// conventional switch only where its downstream port forwards ARI
    /// function numbers, §6.13), otherwise functions 0..=7 when function 0
    /// is multi-function (§7.5.1.1.9).
    pub(crate) fn enumerate_device(
        &mut self,
        at: At,
        bus: u8,
        device: u8,
    ) -> Result<(), EnumerationError> {
        let first = Bdf::new(bus, device, 0);
        let deadline = self.deadline();
        let path = self.path(at, bus);
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: first,
        };
        let ari = find_extended_capability(&mut access, ext_cap_id::ARI)
            .map_err(|error| EnumerationError::CapabilityWalk { id: first, error })?;
        let header = read(&mut access, common::HEADER_TYPE)? as u8;
        if ari.is_some() && device == 0 && self.forward_ari(at)? {
            // §7.8.7.2: follow Next Function Number from function 0 until it
            // is 0; a chain that revisits a function is cut there.
            let mut seen = [false; MAX_ARI_FUNCTIONS];
            let mut function = 0u8;
            loop {
                seen[usize::from(function)] = true;
                let id = Bdf::new_ari(bus, function);
                self.enumerate_function(at, id, function == 0)?;
                let mut access = FunctionAccess {
                    config: &mut *self.config,
                    path,
                    target: id,
                };
                let next = ari_next_function(&mut access, id)?;
                if next == 0 || seen[usize::from(next)] {
                    break;
                }
                let next_id = Bdf::new_ari(bus, next);
                if read_when_ready(self.config, self.timer, path, next_id, 0, deadline)
                    .map_err(EnumerationError::Readiness)?
                    .is_none()
                {
                    break;
                }
                function = next;
            }
        } else {
            let multi = header & header_type::MULTI_FUNCTION != 0;
            let functions = if multi { 8 } else { 1 };
            for function in 0..functions {
                let id = Bdf::new(bus, device, function);
                if function != 0
                    && read_when_ready(self.config, self.timer, path, id, 0, deadline)
                        .map_err(EnumerationError::Readiness)?
                        .is_none()
                {
                    continue;
                }
                self.enumerate_function(at, id, false)?;
            }
        }
        Ok(())
    }

    /// Enumerates one (physical) function and its VFs, or, for a Type 1
    /// function, the conventional switch port or bridge and everything
    /// below it ([`crate::conventional`]).
    fn enumerate_function(
        &mut self,
        at: At,
        id: Bdf,
        lowest_ari_pf: bool,
    ) -> Result<(), EnumerationError> {
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path: self.inventory.config_path(at.switch, at.port, id.bus()),
            target: id,
        };
        let ids = read(&mut access, common::VENDOR_ID)?;
        let class_code = read(&mut access, common::REVISION_ID)? >> 8;
        let header = read(&mut access, common::HEADER_TYPE)? as u8;
        if header & header_type::LAYOUT_MASK == header_type::TYPE1 {
            return self.enumerate_bridge(at, id);
        }
        let decoded = size_header_bars(&mut access)
            .map_err(|error| EnumerationError::BarSizing { id, error })?;
        let acs = find_extended_capability(&mut access, ext_cap_id::ACS)
            .map_err(|error| EnumerationError::CapabilityWalk { id, error })?;
        let sriov = find_extended_capability(&mut access, ext_cap_id::SRIOV)
            .map_err(|error| EnumerationError::CapabilityWalk { id, error })?;
        let mut bars = heapless::Vec::new();
        for bar in decoded.iter().flatten() {
            let placed = self.place_bar(at, id, bar, bar.register, bar.bar.size, 1)?;
            // At most six BARs were decoded, so the list has room.
            let _ = bars.push(placed);
        }
        self.enable_decode(at, id, &bars)?;
        let function = Function {
            id,
            switch: at.switch,
            port: at.port,
            kind: FunctionKind::Physical,
            vendor_id: ids as u16,
            device_id: (ids >> 16) as u16,
            class_code,
            bars,
            sriov: None,
            acs,
            bridge: self.bridge,
            binding: None,
        };
        let index = self.inventory.functions.len();
        self.inventory.functions.push(function).map_err(|_| {
            EnumerationError::TooManyFunctions {
                capacity: MAX_FUNCTIONS,
            }
        })?;
        match sriov {
            Some(offset) => self.enable_sriov(at, index, offset, lowest_ari_pf),
            None => Ok(()),
        }
    }

    /// Places a BAR region of `count` copies of `size` bytes and writes its
    /// address into `decoded`'s register(s) through the function `id`.
    ///
    /// The region is aligned to `size`: a BAR's natural alignment, and for
    /// VF BARs each VF's (§9.3.3.14).
    pub(crate) fn place_bar(
        &mut self,
        at: At,
        id: Bdf,
        decoded: &DecodedBar,
        host_register: u16,
        size: u64,
        count: u16,
    ) -> Result<PlacedBar, EnumerationError> {
        let pool = match Pool::for_kind(decoded.bar.kind) {
            None => return Ok(PlacedBar::new(host_register, decoded.bar, None)),
            // A bridge above forwards no 64-bit prefetchable window: the
            // BAR goes in its (32-bit) memory window, which may hold any
            // memory BAR (§7.5.1.3.8).
            Some(Pool::Prefetchable64) if !self.prefetchable_64 => Pool::Below4GiB,
            Some(pool) => pool,
        };
        let region = size.saturating_mul(u64::from(count));
        let base = self
            .allocator
            .allocate(pool, region, size)
            .map_err(|error| EnumerationError::Address { id, error })?;
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path: self.inventory.config_path(at.switch, at.port, id.bus()),
            target: id,
        };
        assign_bar(&mut access, decoded, base)
            .map_err(|error| EnumerationError::BarAssignment { id, error })?;
        self.cover(at, pool, (base, base + region));
        Ok(PlacedBar::new(host_register, decoded.bar, Some(base)))
    }

    /// Records that `range` of `pool` is used below `at`: the port's
    /// address routes and the windows of the bridges above must cover it.
    pub(crate) fn cover(&mut self, at: At, pool: Pool, range: (u64, u64)) {
        let slot = match pool {
            Pool::Below4GiB => 0,
            Pool::Prefetchable64 => 1,
        };
        let union = |old: Option<(u64, u64)>| {
            Some(match old {
                None => range,
                Some((first, last)) => (first.min(range.0), last.max(range.1)),
            })
        };
        let port = &mut self.inventory.switches[usize::from(at.switch.0)].port_ranges
            [usize::from(at.port.0)][slot];
        *port = union(*port);
        self.span[slot] = union(self.span[slot]);
    }

    /// Sets Memory Space Enable (when the function has a memory BAR) and Bus
    /// Master Enable in the Command register (§7.5.1.1.3), keeping its other bits.
    fn enable_decode(
        &mut self,
        at: At,
        id: Bdf,
        bars: &[PlacedBar],
    ) -> Result<(), EnumerationError> {
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path: self.inventory.config_path(at.switch, at.port, id.bus()),
            target: id,
        };
        enable_decode(&mut access, bars)
    }
}

/// Sets Memory Space Enable (when the function has a placed memory BAR
/// among `bars`) and Bus Master Enable in the Command register of the
/// function `access` reaches (§7.5.1.1.3), keeping its other bits.
pub(crate) fn enable_decode<C: FabricConfig + ?Sized>(
    access: &mut FunctionAccess<'_, C>,
    bars: &[PlacedBar],
) -> Result<(), EnumerationError> {
    let id = access.target;
    let current = read(access, common::COMMAND)? as u16;
    let memory = bars.iter().any(|b| b.fabric_address().is_some());
    let enable = command::BUS_MASTER | if memory { command::MEMORY_SPACE } else { 0 };
    // Only the Command bytes: Status is RW1C (§7.5.1.1.4).
    access
        .write_dword(common::COMMAND, u32::from(current | enable), 0b0011)
        .map_err(|fault| EnumerationError::Config { id, fault })
}

/// The Next Function Number of an ARI function (§7.8.7.2).
fn ari_next_function<C: FabricConfig + ?Sized>(
    access: &mut FunctionAccess<'_, C>,
    id: Bdf,
) -> Result<u8, EnumerationError> {
    let Some(offset) = find_extended_capability(&mut *access, ext_cap_id::ARI)
        .map_err(|error| EnumerationError::CapabilityWalk { id, error })?
    else {
        return Ok(0);
    };
    let cap = AriCap::at(offset);
    let capability = read(access, cap.offset + ari::CAPABILITY)? as u16;
    Ok((capability >> ari::capability::NEXT_FUNCTION_SHIFT) as u8)
}

/// Reads the DW holding `offset`, shifted so `offset`'s byte is bits 7:0.
pub(crate) fn read<C: FabricConfig + ?Sized>(
    access: &mut FunctionAccess<'_, C>,
    offset: u16,
) -> Result<u32, EnumerationError> {
    let id = access.target;
    access
        .read_dword(offset)
        .map(|dword| dword >> ((u32::from(offset) & 3) * 8))
        .map_err(|fault| EnumerationError::Config { id, fault })
}
