//! The hot-plug driver, after Linux's pciehp: it arms every hot-plug
//! capable downstream port's slot interrupt, and on the slot's MSI reads
//! Slot Status, clears the events it saw, and adds or removes what sits
//! below the port (PCIe Base 6.0 §6.7.3, §7.5.3.10-11).
//!
//! A device appearing is scanned with the bus numbers and windows the port
//! got at enumeration (see [`super::resources`] for the reservation), after
//! the 100 ms a device may take to answer once its link is up (§6.6.1).
//! A device disappearing is removed from the tree with its vectors; its
//! drivers are told by the host. A link that went down and up under a
//! present device (Data Link Layer State Changed, its link partner hot
//! reset) takes the device away and adds it again, as pciehp does.
//!
//! A slot with an Attention Button (§6.7.1.5) is armed for Attention
//! Button Pressed too. A press on an occupied, powered slot asks the host
//! to release the device, which [`super::Host::service_interrupts`] does as
//! pciehp does: the Power Indicator blinks for [`ABORT_WINDOW`], within
//! which a second press cancels; then the drivers are quiesced, the
//! devices removed, and the slot powered off ([`release`]). An operator
//! powering the slot off (Linux's `/sys/bus/pci/slots/N/power`) does the
//! same without the blink and window. After power-off pciehp waits
//! [`POWER_OFF_WAIT`] and ignores the link and presence changes the
//! power-off caused. A slot it powered off is powered on again when a
//! device appears in it.
//!
//! Every Slot Control write is a hot-plug command (§6.7.3.2): unless the
//! slot has No Command Completed Support, the driver waits for Command
//! Completed, polling as pciehp does without its interrupt, and clears it.
//! Arming does not wait (pciehp writes it without waiting too): its
//! completion stays latched until the next slot interrupt clears it with
//! the events.

use std::time::Duration;

use weft_pcie::config::pcie_cap::{self, slot_capabilities, slot_control, slot_status, Indicator};
use weft_pcie::Bdf;

use super::access::Cpu;
use super::error::HostError;
use super::interrupts::Vector;
use super::resources::assign_below;
use super::scan::Scan;
use super::setup::{configure, release_interrupts};
use super::tree::{DeviceTree, Function, SlotInfo};
use super::HostConfig;

/// Wait after the link comes up before the first configuration request
/// to the new device (§6.6.1).
pub const LINK_UP_DELAY: Duration = Duration::from_millis(100);

/// How long pciehp blinks the Power Indicator after an Attention Button
/// press before it acts, the window in which a second press cancels
/// (Linux `pciehp_ctrl.c`; §6.7.1.5).
pub const ABORT_WINDOW: Duration = Duration::from_secs(5);

/// How long pciehp waits after turning a slot's power off before it
/// relies on the power being gone (Linux `remove_board`).
pub const POWER_OFF_WAIT: Duration = Duration::from_secs(1);

/// How long a hot-plug command may take before the driver gives up
/// (pciehp: 1 s, "Timeout on hotplug command").
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(1);

/// How often the driver polls Command Completed (pciehp: 10 ms).
const COMMAND_POLL: Duration = Duration::from_millis(10);

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
    /// Attention Button Pressed on an occupied, powered slot: the system
    /// asks the host to release what is in it.
    pub release_requested: bool,
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
    let button = slot_of(tree, port).is_some_and(|s| s.has(slot_capabilities::ATTENTION_BUTTON));
    let control = control
        | slot_control::HOT_PLUG_INTERRUPT_ENABLE
        | slot_control::PRESENCE_DETECT_CHANGED_ENABLE
        | slot_control::DLL_STATE_CHANGED_ENABLE
        | if button {
            slot_control::ATTENTION_BUTTON_PRESSED_ENABLE
        } else {
            0
        };
    cpu.config_write_u16(port, pcie + pcie_cap::SLOT_CONTROL, control)?;
    Ok(())
}

/// The slot behind `port`, as enumeration read it.
fn slot_of(tree: &DeviceTree, port: Bdf) -> Option<SlotInfo> {
    tree.get(port)?.bridge.as_ref()?.slot
}

/// Where `port`'s PCI Express capability is.
fn pcie_of(tree: &DeviceTree, port: Bdf) -> Result<u16, HostError> {
    tree.get(port)
        .and_then(|f| f.capabilities.pcie)
        .ok_or(HostError::NoSuchFunction { bdf: port })
}

/// Issues a hot-plug command: writes Slot Control with `change` applied
/// to what it reads, and waits for Command Completed unless the slot
/// reports none (§6.7.3.2, §7.5.3.9), clearing it (RW1C).
fn command(
    cpu: &mut Cpu<'_>,
    tree: &DeviceTree,
    port: Bdf,
    change: impl FnOnce(u16) -> u16,
) -> Result<(), HostError> {
    let pcie = pcie_of(tree, port)?;
    let control = cpu.config_read_u16(port, pcie + pcie_cap::SLOT_CONTROL)?;
    cpu.config_write_u16(port, pcie + pcie_cap::SLOT_CONTROL, change(control))?;
    let completes =
        slot_of(tree, port).is_some_and(|s| !s.has(slot_capabilities::NO_COMMAND_COMPLETED));
    if !completes {
        return Ok(());
    }
    let deadline = cpu.now() + COMMAND_TIMEOUT;
    loop {
        let status = cpu.config_read_u16(port, pcie + pcie_cap::SLOT_STATUS)?;
        if status & slot_status::COMMAND_COMPLETED != 0 {
            cpu.config_write_u16(
                port,
                pcie + pcie_cap::SLOT_STATUS,
                slot_status::COMMAND_COMPLETED,
            )?;
            return Ok(());
        }
        if cpu.now() >= deadline {
            return Err(HostError::HotPlugCommandTimeout { port });
        }
        cpu.sleep(COMMAND_POLL);
    }
}

/// Sets the Power Indicator, if the slot has one.
fn power_indicator(
    cpu: &mut Cpu<'_>,
    tree: &DeviceTree,
    port: Bdf,
    state: Indicator,
) -> Result<(), HostError> {
    if slot_of(tree, port).is_some_and(|s| s.has(slot_capabilities::POWER_INDICATOR)) {
        command(cpu, tree, port, |control| state.set_power(control))?;
    }
    Ok(())
}

/// After an Attention Button press: blinks the Power Indicator for
/// [`ABORT_WINDOW`]; returns false, with the indicator on again, if a
/// second press came in that window (pciehp: "Button press: canceling").
pub fn await_abort_window(
    cpu: &mut Cpu<'_>,
    tree: &DeviceTree,
    port: Bdf,
) -> Result<bool, HostError> {
    power_indicator(cpu, tree, port, Indicator::Blink)?;
    cpu.sleep(ABORT_WINDOW);
    let pcie = pcie_of(tree, port)?;
    let status = cpu.config_read_u16(port, pcie + pcie_cap::SLOT_STATUS)?;
    if status & slot_status::ATTENTION_BUTTON_PRESSED == 0 {
        return Ok(true);
    }
    cpu.config_write_u16(
        port,
        pcie + pcie_cap::SLOT_STATUS,
        slot_status::ATTENTION_BUTTON_PRESSED,
    )?;
    power_indicator(cpu, tree, port, Indicator::On)?;
    Ok(false)
}

/// Releases what is below `port` and powers the slot off, once its drivers
/// have been quiesced: removes it from the tree with its vectors, turns
/// Power Controller Control off, waits [`POWER_OFF_WAIT`], ignores the
/// link and presence changes that caused (clearing them and the interrupt
/// they raised on `port_vector`), and turns the Power Indicator off
/// (pciehp's `remove_board`). Returns what was removed.
pub fn release(
    cpu: &mut Cpu<'_>,
    tree: &mut DeviceTree,
    port: Bdf,
    port_vector: Option<Vector>,
) -> Result<Vec<Function>, HostError> {
    let slot = slot_of(tree, port).ok_or(HostError::NoPowerController { port })?;
    if !slot.has(slot_capabilities::POWER_CONTROLLER) {
        return Err(HostError::NoPowerController { port });
    }
    let mut removed = Vec::new();
    for child in tree.children(Some(port)) {
        removed.extend(tree.remove_subtree(child));
    }
    for gone in &removed {
        release_interrupts(cpu, &gone.interrupts);
    }
    command(cpu, tree, port, |control| {
        control | slot_control::POWER_CONTROLLER_OFF
    })?;
    set_powered_off(tree, port, true);
    cpu.sleep(POWER_OFF_WAIT);
    let pcie = pcie_of(tree, port)?;
    let ignored = slot_status::DLL_STATE_CHANGED | slot_status::PRESENCE_DETECT_CHANGED;
    let status = cpu.config_read_u16(port, pcie + pcie_cap::SLOT_STATUS)?;
    if status & ignored != 0 {
        cpu.config_write_u16(port, pcie + pcie_cap::SLOT_STATUS, status & ignored)?;
    }
    if let Some(vector) = port_vector {
        cpu.root_mut().interrupts_mut().take(vector);
    }
    power_indicator(cpu, tree, port, Indicator::Off)?;
    Ok(removed)
}

/// Whether the driver turned `port`'s slot off.
fn is_powered_off(tree: &DeviceTree, port: Bdf) -> bool {
    slot_of(tree, port).is_some_and(|slot| slot.powered_off)
}

/// Records whether the driver turned `port`'s slot off.
fn set_powered_off(tree: &mut DeviceTree, port: Bdf, off: bool) {
    if let Some(slot) = tree
        .get_mut(port)
        .and_then(|f| f.bridge.as_mut())
        .and_then(|b| b.slot.as_mut())
    {
        slot.powered_off = off;
    }
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
    let powered_off = is_powered_off(tree, port);
    let mut event = SlotEvent {
        port,
        status,
        present,
        added: Vec::new(),
        removed: Vec::new(),
        release_requested: false,
    };
    // The link went down and up under a present device (its Data Link
    // Layer State Changed while the slot stayed powered): pciehp takes the
    // device away and adds it again, as after a hot reset it did not see
    // coming (Linux `pciehp_handle_presence_or_link_change`).
    let link_bounced =
        events & slot_status::DLL_STATE_CHANGED != 0 && present && populated && !powered_off;
    if events & slot_status::ATTENTION_BUTTON_PRESSED != 0 && present && populated && !powered_off {
        event.release_requested = true;
    } else if (!present || link_bounced) && populated {
        for child in tree.children(Some(port)) {
            event.removed.extend(tree.remove_subtree(child));
        }
        for gone in &event.removed {
            release_interrupts(cpu, &gone.interrupts);
        }
    }
    let populated = !tree.children(Some(port)).is_empty();
    if event.release_requested || !present || populated || secondary == 0 {
        return Ok(event);
    }
    if powered_off {
        // The slot was powered off when its device was released; a
        // new one is powered on first (pciehp's `board_added`).
        command(cpu, tree, port, |control| {
            control & !slot_control::POWER_CONTROLLER_OFF
        })?;
        set_powered_off(tree, port, false);
        power_indicator(cpu, tree, port, Indicator::On)?;
    }
    cpu.sleep(LINK_UP_DELAY);
    // The link and presence changes up to here are this one's, the slot's
    // power-on's among them: pciehp ignores them (`pciehp_check_link_status`),
    // or a link coming up would later read as the link bouncing.
    let seen = slot_status::DLL_STATE_CHANGED | slot_status::PRESENCE_DETECT_CHANGED;
    let status = cpu.config_read_u16(port, pcie + pcie_cap::SLOT_STATUS)?;
    if status & seen != 0 {
        cpu.config_write_u16(port, pcie + pcie_cap::SLOT_STATUS, status & seen)?;
    }
    Scan::new(cpu, tree, config).scan_bus(secondary, Some(port), subordinate)?;
    assign_below(cpu, tree, config, port)?;
    let added = tree.descendants(port);
    configure(cpu, tree, config, &added)?;
    event.added = added;
    Ok(event)
}
