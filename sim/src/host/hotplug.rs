//! The hot-plug driver, after Linux's pciehp: it arms every hot-plug
//! capable downstream port's slot interrupt, and on the slot's MSI reads
//! Slot Status, clears the events it saw, and adds or removes what sits
//! below the port (PCIe Base 6.0 §6.7.3, §7.5.3.10-11).
//!
//! A device appearing is scanned with the bus numbers and windows the port
//! got at enumeration (see [`super::resources`] for the reservation), after
//! the 100 ms a device may take to answer once its link is up (§6.6.1).
//! A device disappearing is removed from the tree with its vectors; its
//! drivers are told by the host.

use std::time::Duration;

use weft_pcie::config::pcie_cap::{self, slot_control, slot_status};
use weft_pcie::Bdf;

use super::access::Cpu;
use super::error::HostError;
use super::resources::assign_below;
use super::scan::Scan;
use super::setup::{configure, release_interrupts};
use super::tree::{DeviceTree, Function};
use super::HostConfig;

/// Wait after the link comes up before the first configuration request
/// to the new device (§6.6.1).
pub const LINK_UP_DELAY: Duration = Duration::from_millis(100);

/// What one slot interrupt did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotEvent {
    /// The downstream port.
    pub port: Bdf,
    /// Slot Status as read (events and state).
    pub status: u16,
    /// Presence Detect State.
    pub present: bool,
    /// Functions added.
    pub added: Vec<Bdf>,
    /// Functions removed.
    pub removed: Vec<Function>,
}

/// The ports whose slots are hot-plug capable and have MSI set up.
pub fn hot_plug_ports(tree: &DeviceTree) -> Vec<Bdf> {
    tree.iter()
        .filter(|f| {
            f.bridge
                .as_ref()
                .and_then(|b| b.slot)
                .is_some_and(|slot| slot.hot_plug)
        })
        .map(|f| f.bdf)
        .collect()
}

/// Arms `port`'s slot: clears stale events, then sets Hot-Plug Interrupt
/// Enable, Presence Detect Changed Enable and Data Link Layer State
/// Changed Enable in Slot Control (§7.5.3.10).
pub fn arm(cpu: &mut Cpu<'_>, tree: &DeviceTree, port: Bdf) -> Result<(), HostError> {
    let Some(pcie) = tree.get(port).and_then(|f| f.capabilities.pcie) else {
        return Ok(());
    };
    cpu.config_write_u16(port, pcie + pcie_cap::SLOT_STATUS, slot_status::EVENTS)?;
    let control = cpu.config_read_u16(port, pcie + pcie_cap::SLOT_CONTROL)?;
    let control = control
        | slot_control::HOT_PLUG_INTERRUPT_ENABLE
        | slot_control::PRESENCE_DETECT_CHANGED_ENABLE
        | slot_control::DLL_STATE_CHANGED_ENABLE;
    cpu.config_write_u16(port, pcie + pcie_cap::SLOT_CONTROL, control)?;
    Ok(())
}

/// Handles `port`'s slot interrupt.
pub fn handle(
    cpu: &mut Cpu<'_>,
    tree: &mut DeviceTree,
    config: &HostConfig,
    port: Bdf,
) -> Result<SlotEvent, HostError> {
    let function = tree
        .get(port)
        .ok_or(HostError::NoSuchFunction { bdf: port })?;
    let pcie = function
        .capabilities
        .pcie
        .ok_or(HostError::NoSuchFunction { bdf: port })?;
    let (secondary, subordinate) = function
        .bridge
        .as_ref()
        .map_or((0, 0), |b| (b.secondary, b.subordinate));
    let status = cpu.config_read_u16(port, pcie + pcie_cap::SLOT_STATUS)?;
    // RW1C: write back exactly the events seen, so one arriving meanwhile
    // stays latched and raises a new interrupt (§6.7.3.4).
    let events = status & slot_status::EVENTS;
    if events != 0 {
        cpu.config_write_u16(port, pcie + pcie_cap::SLOT_STATUS, events)?;
    }
    let present = status & slot_status::PRESENCE_DETECT_STATE != 0;
    let populated = !tree.children(Some(port)).is_empty();
    let mut event = SlotEvent {
        port,
        status,
        present,
        added: Vec::new(),
        removed: Vec::new(),
    };
    if !present && populated {
        for child in tree.children(Some(port)) {
            event.removed.extend(tree.remove_subtree(child));
        }
        for gone in &event.removed {
            release_interrupts(cpu, &gone.interrupts);
        }
    } else if present && !populated && secondary != 0 {
        cpu.sleep(LINK_UP_DELAY);
        Scan::new(cpu, tree, config).scan_bus(secondary, Some(port), subordinate)?;
        assign_below(cpu, tree, config, port)?;
        let added = tree.descendants(port);
        configure(cpu, tree, config, &added)?;
        event.added = added;
    }
    Ok(event)
}
