//! Discovery and enumeration of one switch's ports.
//!
//! The manager is the root of the fabric's hierarchy (DESIGN.md, "Domains
//! and translation"). Bus 0 is its own; each host gets one proxy bus, in
//! configuration order, right after it; then every other port, in port
//! order, is probed and gets the next free bus for the device below it,
//! plus any further buses its SR-IOV VFs need. A port whose function 0
//! carries weft's identity VSEC leads to another weft switch: it is
//! recorded, and enumeration does not continue through it (routing over
//! several switches is not done here yet).
//!
//! Per function: BARs are sized and placed (see [`crate::address`]), ACS
//! and SR-IOV are found, Memory Space and Bus Master are enabled. Functions
//! of a device are found through the ARI Next Function Number chain when
//! function 0 has ARI (§6.13, §7.8.7), otherwise at functions 0..=7 when
//! function 0 is multi-function (§7.5.1.1.9). Only device 0 exists below a
//! port (§7.3.1).

use weft_pcie::config::ari::{self, AriCap};
use weft_pcie::config::bar::{
    assign_bar, size_header_bars, BarAssignError, BarDecodeError, DecodedBar,
};
use weft_pcie::config::header::{command, common, header_type};
use weft_pcie::config::sriov::SriovError;
use weft_pcie::config::vsec::{read_weft_identity, VsecError};
use weft_pcie::config::walk::find_extended_capability;
use weft_pcie::config::{ext_cap_id, ConfigRead, ConfigWrite, WalkError};
use weft_pcie::Bdf;
use weft_regs::capacity;

use crate::address::{AddressAllocator, AddressError, Pool};
use crate::hw::{ConfigFault, FabricConfig, FunctionAccess, Timer};
use crate::inventory::{
    Function, FunctionKind, Inventory, PlacedBar, PortKind, SkipReason, Skipped,
};
use crate::limits::{MAX_ARI_FUNCTIONS, MAX_FUNCTIONS, MAX_HOST_PORTS, MAX_SKIPPED};
use crate::readiness::{
    read_when_ready, ReadinessError, READINESS_TIMEOUT_NS, RESET_TO_FIRST_REQUEST_NS,
};
use crate::settings::FabricSettings;
use weft_regs::tables::{HostIndex, PortIndex};

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
    /// More skipped devices than the inventory records.
    TooManySkipped {
        /// [`MAX_SKIPPED`].
        capacity: usize,
    },
    /// The port needs a bus number and all 256 are used.
    BusNumbersExhausted {
        /// The port.
        port: PortIndex,
    },
}

/// Enumeration in progress: the hardware, the allocator and what was found so far.
pub(crate) struct Enumerator<'a, C: FabricConfig + ?Sized, T: Timer + ?Sized> {
    pub(crate) config: &'a mut C,
    pub(crate) timer: &'a mut T,
    pub(crate) settings: &'a FabricSettings,
    pub(crate) allocator: AddressAllocator,
    pub(crate) inventory: Inventory,
    /// When the fabric's ports left Conventional Reset, in timer nanoseconds.
    pub(crate) reset_at_ns: u64,
}

/// Enumerates every port of a switch with `ports` ports whose links left
/// Conventional Reset at `reset_at_ns` (timer time).
pub fn enumerate<C: FabricConfig + ?Sized, T: Timer + ?Sized>(
    config: &mut C,
    timer: &mut T,
    settings: &FabricSettings,
    ports: usize,
    reset_at_ns: u64,
) -> Result<Inventory, EnumerationError> {
    if ports > capacity::PORTS {
        return Err(EnumerationError::TooManyPorts {
            ports,
            capacity: capacity::PORTS,
        });
    }
    let allocator = AddressAllocator::new(settings.address_plan).map_err(EnumerationError::Plan)?;
    let mut e = Enumerator {
        config,
        timer,
        settings,
        allocator,
        inventory: Inventory::default(),
        reset_at_ns,
    };
    let mut next_bus = u16::from(settings.manager_id.bus()) + 1;
    for (port, host, proxy_id) in host_proxies(settings, ports)? {
        e.inventory.ports[usize::from(port.0)] = PortKind::Host { host, proxy_id };
        next_bus = u16::from(proxy_id.bus()) + 1;
    }
    // §6.6.1: no Configuration Request within 100 ms of the reset.
    e.timer
        .wait_until_ns(reset_at_ns.saturating_add(RESET_TO_FIRST_REQUEST_NS));
    for index in 0..ports {
        let port = PortIndex(u8::try_from(index).unwrap_or(u8::MAX));
        if settings.host_port(port).is_some() {
            continue;
        }
        let bus =
            u8::try_from(next_bus).map_err(|_| EnumerationError::BusNumbersExhausted { port })?;
        if let Some(last) = e.probe_port(port, bus)? {
            next_bus = u16::from(last) + 1;
        }
    }
    Ok(e.inventory)
}

/// Each host port with its host and proxy fabric ID: the buses right after
/// the manager's, in configuration order. Known before any device is
/// probed, so host ports can be opened (and answered with Request Retry
/// Status) while enumeration runs.
pub fn host_proxies(
    settings: &FabricSettings,
    ports: usize,
) -> Result<heapless::Vec<(PortIndex, HostIndex, Bdf), MAX_HOST_PORTS>, EnumerationError> {
    let mut proxies = heapless::Vec::new();
    let first_bus = u16::from(settings.manager_id.bus()) + 1;
    for (i, host) in settings.hosts.iter().enumerate() {
        if usize::from(host.port.0) >= ports {
            return Err(EnumerationError::NoSuchPort(host.port));
        }
        if settings.hosts[..i].iter().any(|h| h.port == host.port) {
            return Err(EnumerationError::HostPortTwice(host.port));
        }
        let bus = u8::try_from(first_bus + i as u16)
            .map_err(|_| EnumerationError::BusNumbersExhausted { port: host.port })?;
        // settings.hosts has the same capacity.
        let _ = proxies.push((host.port, host.host, Bdf::new(bus, 0, 0)));
    }
    Ok(proxies)
}

impl<C: FabricConfig + ?Sized, T: Timer + ?Sized> Enumerator<'_, C, T> {
    fn deadline(&self) -> u64 {
        self.reset_at_ns.saturating_add(READINESS_TIMEOUT_NS)
    }

    /// Probes the device below `port` at `bus`; returns the last bus it uses, if any.
    fn probe_port(&mut self, port: PortIndex, bus: u8) -> Result<Option<u8>, EnumerationError> {
        let first = Bdf::new(bus, 0, 0);
        let deadline = self.deadline();
        if read_when_ready(self.config, self.timer, port, first, 0, deadline)
            .map_err(EnumerationError::Readiness)?
            .is_none()
        {
            return Ok(None);
        }
        let mut access = FunctionAccess {
            config: &mut *self.config,
            port,
            target: first,
        };
        if let Some(identity) = read_weft_identity(&mut access)
            .map_err(|error| EnumerationError::Identity { id: first, error })?
        {
            self.inventory.ports[usize::from(port.0)] = PortKind::Fabric {
                switch_id: identity.switch_id,
            };
            return Ok(None);
        }
        let ari = find_extended_capability(&mut access, ext_cap_id::ARI)
            .map_err(|error| EnumerationError::CapabilityWalk { id: first, error })?;
        let header = read(&mut access, common::HEADER_TYPE)? as u8;
        let mut last_bus = bus;
        if ari.is_some() {
            // §7.8.7.2: follow Next Function Number from function 0 until it
            // is 0; a chain that revisits a function is cut there.
            let mut seen = [false; MAX_ARI_FUNCTIONS];
            let mut function = 0u8;
            loop {
                seen[usize::from(function)] = true;
                let id = Bdf::new_ari(bus, function);
                last_bus = last_bus.max(self.enumerate_function(port, id, function == 0)?);
                let mut access = FunctionAccess {
                    config: &mut *self.config,
                    port,
                    target: id,
                };
                let next = ari_next_function(&mut access, id)?;
                if next == 0 || seen[usize::from(next)] {
                    break;
                }
                let next_id = Bdf::new_ari(bus, next);
                if read_when_ready(self.config, self.timer, port, next_id, 0, deadline)
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
                let id = Bdf::new(bus, 0, function);
                if function != 0
                    && read_when_ready(self.config, self.timer, port, id, 0, deadline)
                        .map_err(EnumerationError::Readiness)?
                        .is_none()
                {
                    continue;
                }
                last_bus = last_bus.max(self.enumerate_function(port, id, false)?);
            }
        }
        self.inventory.ports[usize::from(port.0)] = PortKind::Endpoint {
            buses: (bus, last_bus),
        };
        Ok(Some(last_bus))
    }

    /// Enumerates one (physical) function and its VFs; returns the last bus they use.
    fn enumerate_function(
        &mut self,
        port: PortIndex,
        id: Bdf,
        lowest_ari_pf: bool,
    ) -> Result<u8, EnumerationError> {
        let mut access = FunctionAccess {
            config: &mut *self.config,
            port,
            target: id,
        };
        let ids = read(&mut access, common::VENDOR_ID)?;
        let class_code = read(&mut access, common::REVISION_ID)? >> 8;
        let header = read(&mut access, common::HEADER_TYPE)? as u8;
        if header & header_type::LAYOUT_MASK == header_type::TYPE1 {
            self.inventory
                .skipped
                .push(Skipped {
                    port,
                    id,
                    reason: SkipReason::Bridge,
                })
                .map_err(|_| EnumerationError::TooManySkipped {
                    capacity: MAX_SKIPPED,
                })?;
            return Ok(id.bus());
        }
        let decoded = size_header_bars(&mut access)
            .map_err(|error| EnumerationError::BarSizing { id, error })?;
        let acs = find_extended_capability(&mut access, ext_cap_id::ACS)
            .map_err(|error| EnumerationError::CapabilityWalk { id, error })?;
        let sriov = find_extended_capability(&mut access, ext_cap_id::SRIOV)
            .map_err(|error| EnumerationError::CapabilityWalk { id, error })?;
        let mut bars = heapless::Vec::new();
        for bar in decoded.iter().flatten() {
            let placed = self.place_bar(port, id, bar, bar.register, bar.bar.size, 1)?;
            // At most six BARs were decoded, so the list has room.
            let _ = bars.push(placed);
        }
        self.enable_decode(port, id, &bars)?;
        let function = Function {
            id,
            port,
            kind: FunctionKind::Physical,
            vendor_id: ids as u16,
            device_id: (ids >> 16) as u16,
            class_code,
            bars,
            sriov: None,
            acs,
            binding: None,
        };
        let index = self.inventory.functions.len();
        self.inventory.functions.push(function).map_err(|_| {
            EnumerationError::TooManyFunctions {
                capacity: MAX_FUNCTIONS,
            }
        })?;
        match sriov {
            Some(offset) => self.enable_sriov(port, index, offset, lowest_ari_pf),
            None => Ok(id.bus()),
        }
    }

    /// Places a BAR region of `count` copies of `size` bytes and writes its
    /// address into `decoded`'s register(s) through the function `id`.
    ///
    /// The region is aligned to `size`: a BAR's natural alignment, and for
    /// VF BARs each VF's (§9.3.3.14).
    pub(crate) fn place_bar(
        &mut self,
        port: PortIndex,
        id: Bdf,
        decoded: &DecodedBar,
        host_register: u16,
        size: u64,
        count: u16,
    ) -> Result<PlacedBar, EnumerationError> {
        let Some(pool) = Pool::for_kind(decoded.bar.kind) else {
            return Ok(PlacedBar {
                register: host_register,
                bar: decoded.bar,
                fabric_address: None,
            });
        };
        let region = size.saturating_mul(u64::from(count));
        let base = self
            .allocator
            .allocate(pool, region, size)
            .map_err(|error| EnumerationError::Address { id, error })?;
        let mut access = FunctionAccess {
            config: &mut *self.config,
            port,
            target: id,
        };
        assign_bar(&mut access, decoded, base)
            .map_err(|error| EnumerationError::BarAssignment { id, error })?;
        let slot = match pool {
            Pool::Below4GiB => 0,
            Pool::Prefetchable64 => 1,
        };
        let range = &mut self.inventory.port_ranges[usize::from(port.0)][slot];
        let end = base + region;
        *range = Some(match *range {
            None => (base, end),
            Some((first, last)) => (first.min(base), last.max(end)),
        });
        Ok(PlacedBar {
            register: host_register,
            bar: decoded.bar,
            fabric_address: Some(base),
        })
    }

    /// Sets Memory Space Enable (when the function has a memory BAR) and Bus
    /// Master Enable in the Command register (§7.5.1.1.3), keeping its other bits.
    fn enable_decode(
        &mut self,
        port: PortIndex,
        id: Bdf,
        bars: &[PlacedBar],
    ) -> Result<(), EnumerationError> {
        let mut access = FunctionAccess {
            config: &mut *self.config,
            port,
            target: id,
        };
        let current = read(&mut access, common::COMMAND)? as u16;
        let memory = bars.iter().any(|b| b.fabric_address.is_some());
        let enable = command::BUS_MASTER | if memory { command::MEMORY_SPACE } else { 0 };
        // Only the Command bytes: Status is RW1C (§7.5.1.1.4).
        access
            .write_dword(common::COMMAND, u32::from(current | enable), 0b0011)
            .map_err(|fault| EnumerationError::Config { id, fault })
    }
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
