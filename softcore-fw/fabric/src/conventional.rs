//! Enumerating through conventional PCIe switches and bridges below an
//! endpoint port (PCIe Base 6.0 §7.5.1.3).
//!
//! A Type 1 function below an endpoint port is programmed as system
//! software programs any bridge, depth first in the fabric's bus space:
//!
//! - **Bus numbers** (§7.5.1.3.2-4): Primary is the bus it sits on,
//!   Secondary the next free bus, Subordinate 0xFF while the buses below are
//!   scanned (so Type 1 requests for any of them pass it) and then the
//!   last bus given out below it. An upstream port's secondary bus is the
//!   switch's internal bus, scanned at every device number for its
//!   downstream ports; a downstream port's secondary bus is a link with
//!   device 0 only (§7.3.1); any other bridge's secondary bus is scanned
//!   at every device number. Every bus goes to the weft port's bus range,
//!   which the switch's bus routes send to that port.
//! - **Memory windows** (§7.5.1.3.8-10): both pool cursors are aligned to
//!   1 MiB, the windows' granularity, before the buses below are
//!   enumerated and again after, so no BAR outside the bridge lands in
//!   its windows. Each window runs from the lowest BAR below (rounded down
//!   to 1 MiB) to the end of the highest (rounded up to 1 MiB): the memory
//!   window over the below-4 GiB pool, the prefetchable window over the
//!   64-bit prefetchable pool; a window with nothing below it is closed
//!   (base above limit). A bridge whose prefetchable window is not 64-bit
//!   (§7.5.1.3.9: the decode field of Prefetchable Memory Base) cannot
//!   forward the 64-bit pool, so 64-bit prefetchable BARs below it go in
//!   the below-4 GiB pool and its memory window. The bridge's own BARs sit
//!   on its primary side, in its parent's windows. The I/O window is
//!   closed: the fabric carries no I/O.
//! - **ARI** (§6.13): a downstream port with an ARI device below it gets
//!   ARI Forwarding Enable where it supports it, so the device's function
//!   numbers above 7 (and its VFs) reach it; where it does not, the
//!   device is enumerated as an ordinary one.
//! - **Command** (§7.5.1.1.3): Memory Space Enable (forward memory
//!   requests downstream) and Bus Master Enable (forward them upstream).
//! - **ACS** (§6.12.1.1): on a downstream port with the ACS capability,
//!   Source Validation, P2P Request Redirect, P2P Completion Redirect and
//!   Upstream Forwarding, each where implemented. Peer requests between
//!   the switch's downstream ports then go up to the weft port, whose
//!   tables translate and isolate them, instead of being decoded inside
//!   the conventional switch against fabric addresses.
//!
//! What this means for binding: the conventional switch's own ports stay
//! with the fabric (they are [`Bridge`]s, never bound, never seen by a
//! host); every endpoint function below it is an inventory function with
//! its own fabric ID and BARs, bound on its own like a function directly
//! below the port. Functions below different downstream ports may go to
//! different hosts only if every downstream port between them and the
//! weft port redirects peer traffic upstream
//! ([`crate::binding::SharingRefused::PeerRouteBelowPort`]).
//!
//! What it costs, measured against a transparent PCIe switch:
//! - Peer traffic between two devices below one weft port goes up to the
//!   weft port (redirected) and back down, translated and checked there,
//!   instead of turning inside the conventional switch. Where every
//!   downstream port with a device below redirects both requests and
//!   completions, the weft port stands where a root port stands for that
//!   traffic (§6.12.1.1, §7.7.11) and returns it out of the port it came in
//!   on ([`crate::inventory::Inventory::returns_peers_to`], the port block's
//!   RETURN_TO_INGRESS): devices bound to one host do peer-to-peer through
//!   its peer windows, each byte crossing the conventional switch's
//!   upstream link twice, and a device bound to another host is not
//!   reached (its address is not in the requester's owner's windows,
//!   and a completion between two owners is dropped). Below a
//!   downstream port without ACS the conventional switch decodes peer
//!   addresses itself, in fabric terms, where the devices use their host's
//!   addresses: such devices are refused to different hosts, their port
//!   returns nothing, and for one host their peer-to-peer is not
//!   translated.
//! - Legacy INTx from below a conventional switch arrives collapsed into
//!   its upstream port's virtual wires (§2.2.8.1), with no trace of the
//!   device that raised it, so it cannot follow each device to its host:
//!   devices there must use MSI or MSI-X (§6.1.4), which are memory writes
//!   and route like any other.

use weft_pcie::config::acs::{self, feature};
use weft_pcie::config::bar::size_header_bars;
use weft_pcie::config::header::{command, common, type1, window};
use weft_pcie::config::pcie_cap::{
    capabilities, device_capabilities_2, device_control_2, PortType, CAPABILITIES,
    DEVICE_CAPABILITIES_2, DEVICE_CONTROL_2,
};
use weft_pcie::config::walk::{find_capability, find_extended_capability};
use weft_pcie::config::{cap_id, ext_cap_id, ConfigWrite};
use weft_pcie::Bdf;

use crate::address::Pool;
use crate::enumerate::{read, At, EnumerationError, Enumerator};
use crate::hw::{Fabric, FabricConfig, FunctionAccess, Timer};
use crate::inventory::{Bridge, BridgeKind};
use crate::limits::MAX_BRIDGES;

/// The granularity of a bridge's memory windows (§7.5.1.3.8).
const GRANULE: u64 = window::MEMORY_GRANULARITY;

/// The ACS controls the manager enables on a conventional switch's
/// downstream port, where implemented (§6.12.1.1).
pub const ACS_ISOLATION: u16 = feature::SOURCE_VALIDATION
    | feature::P2P_REQUEST_REDIRECT
    | feature::P2P_COMPLETION_REDIRECT
    | feature::UPSTREAM_FORWARDING;

/// A window's `(base, end)` range widened to whole granules, as `(base, limit)`.
const fn granular(range: (u64, u64)) -> (u64, u64) {
    let base = range.0 & !(GRANULE - 1);
    let end = (range.1 + GRANULE - 1) & !(GRANULE - 1);
    (base, end - 1)
}

impl<C, T, F> Enumerator<'_, C, T, F>
where
    C: FabricConfig + ?Sized,
    T: Timer + ?Sized,
    F: Fabric + ?Sized,
{
    /// Programs the bridge `id` below `at` and enumerates everything below it.
    pub(crate) fn enumerate_bridge(&mut self, at: At, id: Bdf) -> Result<(), EnumerationError> {
        let path = self.path(at, id.bus());
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: id,
        };
        let walk = |error| EnumerationError::CapabilityWalk { id, error };
        let kind = match find_capability(&mut access, cap_id::PCI_EXPRESS).map_err(walk)? {
            Some(offset) => {
                let caps = read(&mut access, offset + CAPABILITIES)? as u16;
                let port_type =
                    (caps & capabilities::PORT_TYPE_MASK) >> capabilities::PORT_TYPE_SHIFT;
                match PortType::from_bits(port_type as u8) {
                    Some(PortType::SwitchUpstream) => BridgeKind::SwitchUpstream,
                    Some(PortType::SwitchDownstream) => BridgeKind::SwitchDownstream,
                    _ => BridgeKind::Other,
                }
            }
            None => BridgeKind::Other,
        };
        let acs = match kind {
            BridgeKind::SwitchDownstream => {
                find_extended_capability(&mut access, ext_cap_id::ACS).map_err(walk)?
            }
            _ => None,
        };
        let decode = read(&mut access, type1::PREFETCHABLE_BASE)? as u16;
        // The bridge's own BARs are on its primary side.
        let decoded = size_header_bars(&mut access)
            .map_err(|error| EnumerationError::BarSizing { id, error })?;
        for bar in decoded.iter().flatten() {
            self.place_bar(at, id, bar, bar.register, bar.bar.size, 1)?;
        }

        let secondary = self
            .last_bus
            .checked_add(1)
            .ok_or(EnumerationError::BusNumbersExhausted { port: at.port })?;
        self.claim_bus(at, secondary)?;
        let index = self.inventory.bridges.len();
        self.inventory
            .bridges
            .push(Bridge {
                id,
                switch: at.switch,
                port: at.port,
                kind,
                parent: self.bridge,
                buses: (secondary, secondary),
                memory: None,
                prefetchable: None,
                acs_enabled: 0,
                device_not_responding: false,
            })
            .map_err(|_| EnumerationError::TooManyBridges {
                capacity: MAX_BRIDGES,
            })?;
        // §7.5.1.3.2-4; the Secondary Latency Timer byte is left alone.
        let buses = u32::from(id.bus()) | u32::from(secondary) << 8 | 0xff << 16;
        self.write(at, id, type1::PRIMARY_BUS, buses, 0b0111)?;

        let outer = (self.span, self.prefetchable_64, self.bridge);
        self.span = [None; 2];
        self.prefetchable_64 &=
            decode & window::MEMORY_CAPABILITY_MASK == window::PREFETCHABLE_DECODE_64;
        self.bridge = Some(id);
        self.align_pools()?;
        let deadline = self.deadline();
        let device_not_responding = match kind {
            // A link: device 0 alone.
            BridgeKind::SwitchDownstream => {
                self.enumerate_linked_device(at, secondary, deadline)?
            }
            // A bus: every device number.
            BridgeKind::SwitchUpstream | BridgeKind::Other => {
                for device in 0..32 {
                    self.enumerate_if_present(at, secondary, device, deadline)?;
                }
                false
            }
        };
        self.align_pools()?;
        let subordinate = self.last_bus;
        let memory = self.span[0].map(granular);
        let prefetchable = self.span[1].map(granular);
        (self.span, self.prefetchable_64, self.bridge) = outer;
        for (pool, window) in [
            (Pool::Below4GiB, memory),
            (Pool::Prefetchable64, prefetchable),
        ] {
            if let Some((base, limit)) = window {
                self.cover(at, pool, (base, limit + 1));
            }
        }

        self.write(
            at,
            id,
            type1::SUBORDINATE_BUS,
            u32::from(subordinate) << 16,
            0b0100,
        )?;
        // Closed windows have their base above their limit.
        let (base, limit) = memory.unwrap_or((u64::MAX, 0));
        let registers = (base >> 16) as u32 & 0xfff0 | ((limit >> 16) as u32 & 0xfff0) << 16;
        self.write(at, id, type1::MEMORY_BASE, registers, 0b1111)?;
        let (base, limit) = prefetchable.unwrap_or((u64::MAX, 0));
        let registers = (base >> 16) as u32 & 0xfff0 | ((limit >> 16) as u32 & 0xfff0) << 16;
        self.write(at, id, type1::PREFETCHABLE_BASE, registers, 0b1111)?;
        self.write(
            at,
            id,
            type1::PREFETCHABLE_BASE_UPPER,
            (base >> 32) as u32,
            0b1111,
        )?;
        self.write(
            at,
            id,
            type1::PREFETCHABLE_LIMIT_UPPER,
            (limit >> 32) as u32,
            0b1111,
        )?;
        // I/O Base 0xF0 above I/O Limit 0x00: closed (§7.5.1.3.6).
        self.write(at, id, type1::IO_BASE, 0x00f0, 0b0011)?;

        let acs_enabled = match acs {
            Some(offset) => {
                let mut access = FunctionAccess {
                    config: &mut *self.config,
                    path,
                    target: id,
                };
                let supported = read(&mut access, offset + acs::CAPABILITY)? as u16 & 0x7f;
                let enable = supported & ACS_ISOLATION;
                self.write(
                    at,
                    id,
                    offset + acs::CONTROL,
                    u32::from(enable) << 16,
                    0b1100,
                )?;
                enable
            }
            None => 0,
        };
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: id,
        };
        let current = read(&mut access, common::COMMAND)? as u16;
        let enable = command::MEMORY_SPACE | command::BUS_MASTER;
        self.write(at, id, common::COMMAND, u32::from(current | enable), 0b0011)?;

        let bridge = &mut self.inventory.bridges[index];
        bridge.buses = (secondary, subordinate);
        bridge.memory = memory;
        bridge.prefetchable = prefetchable;
        bridge.acs_enabled = acs_enabled;
        bridge.device_not_responding = device_not_responding;
        Ok(())
    }

    /// Whether function numbers of an ARI device below `at` reach it: on
    /// the weft port's own link they do; below a conventional switch's
    /// downstream port only with its ARI Forwarding Enable, set here where
    /// it is supported (§6.13, §7.5.3.16); otherwise the device is
    /// enumerated as an ordinary one, at functions 0..=7.
    pub(crate) fn forward_ari(&mut self, at: At) -> Result<bool, EnumerationError> {
        let Some(id) = self.bridge else {
            return Ok(true);
        };
        if self.inventory.bridge(id).map(|b| b.kind) != Some(BridgeKind::SwitchDownstream) {
            return Ok(false);
        }
        let path = self.path(at, id.bus());
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: id,
        };
        let Some(pcie) = find_capability(&mut access, cap_id::PCI_EXPRESS)
            .map_err(|error| EnumerationError::CapabilityWalk { id, error })?
        else {
            return Ok(false);
        };
        let supported = read(&mut access, pcie + DEVICE_CAPABILITIES_2)?
            & device_capabilities_2::ARI_FORWARDING_SUPPORTED
            != 0;
        if supported {
            let control = read(&mut access, pcie + DEVICE_CONTROL_2)? as u16
                | device_control_2::ARI_FORWARDING_ENABLE;
            self.write(at, id, pcie + DEVICE_CONTROL_2, u32::from(control), 0b0011)?;
        }
        Ok(supported)
    }

    /// Moves both pools' cursors to the next window granule.
    fn align_pools(&mut self) -> Result<(), EnumerationError> {
        for pool in [Pool::Below4GiB, Pool::Prefetchable64] {
            self.allocator.allocate(pool, 0, GRANULE).map_err(|error| {
                EnumerationError::Address {
                    id: self.bridge.unwrap_or_default(),
                    error,
                }
            })?;
        }
        Ok(())
    }

    /// Writes the bytes `byte_enables` selects of the DW at `offset` of `id` below `at`.
    fn write(
        &mut self,
        at: At,
        id: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), EnumerationError> {
        let path = self.path(at, id.bus());
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: id,
        };
        access
            .write_dword(offset & !3, value, byte_enables)
            .map_err(|fault| EnumerationError::Config { id, fault })
    }
}
