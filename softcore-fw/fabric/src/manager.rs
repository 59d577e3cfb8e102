//! The fabric manager: enumeration, the virtual switches, and the state
//! that binds them, driven through the hardware traits.

use heapless::Vec;
use weft_pcie::Bdf;

use crate::binding::BindError;
use crate::enumerate::{enumerate, EnumerationError};
use crate::events::{Event, EventLog};
use crate::generation::Generation;
use crate::hw::{DataPlane, Fabric, FabricConfig, Timer};
use crate::inventory::{Function, Inventory, PortKind, SwitchIndex};
use crate::limits::{MAX_HOST_PORTS, MAX_SLOTS_PER_HOST};
use crate::operations::{OperationId, OperationState, Operations};
use crate::paths::shortest_paths;
use crate::reset::ResetArming;
use crate::routes::{program_fabric, RouteError};
use crate::settings::FabricSettings;
use crate::sriov::PendingVfs;
use crate::vswitch::{PortLayouts, VirtualSwitch, VirtualSwitchError};
use weft_regs::tables::{HostIndex, PortIndex};

/// Why the fabric could not be brought up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartError {
    /// A virtual switch could not be built.
    VirtualSwitch(VirtualSwitchError),
    /// Enumeration failed.
    Enumeration(EnumerationError),
    /// The switch-wide tables could not be written.
    Routes(RouteError),
}

/// The fabric manager: the root of the fabric, running on one of its switches.
///
/// It answers host configuration requests with Request Retry Status until
/// [`FabricManager::start`] has enumerated the fabric and programmed the
/// tables (DESIGN.md, "Configuration requests").
#[derive(Clone, Debug)]
pub struct FabricManager {
    pub(crate) settings: FabricSettings,
    pub(crate) inventory: Inventory,
    pub(crate) layouts: PortLayouts,
    pub(crate) switches: Vec<VirtualSwitch, MAX_HOST_PORTS>,
    pub(crate) ready: bool,
    pub(crate) generation: Generation,
    pub(crate) events: EventLog,
    /// The ports of the manager's own switch disabled by management
    /// request, one bit per port ([`crate::port_control`]).
    pub(crate) disabled_ports: u32,
    /// Background operations' IDs and finished outcomes, unbinds' and
    /// NumVFs changes' alike ([`crate::operations`]).
    pub(crate) operations: Operations,
    /// The NumVFs change waiting for its VFs, if one is ([`crate::sriov`]).
    pub(crate) pending_vfs: Option<PendingVfs>,
    /// The armed reset ([`crate::reset`]).
    pub(crate) reset: ResetArming,
}

const _: () = assert!(
    weft_regs::capacity::PORTS <= 32,
    "one bit per port in a u32"
);

/// The manager at its full capacities must leave most of the soft core's
/// data RAM (`weft_regs::DATA_RAM_SIZE`, 256 KiB) to the stack and the
/// network buffers; checked for every target it is built for.
const _: () = assert!(core::mem::size_of::<FabricManager>() <= 48 * 1024);

impl FabricManager {
    /// A manager with no host ports, not configured or started: a
    /// constant, so the firmware can hold the manager in a static built at
    /// link time and [`FabricManager::configure`] it in place — the soft
    /// core's stack, part of its 256 KiB data RAM, has no room for a
    /// manager built on it and then moved.
    pub const EMPTY: FabricManager = FabricManager {
        settings: FabricSettings::DEFAULT,
        inventory: Inventory::EMPTY,
        layouts: PortLayouts::EMPTY,
        switches: Vec::new(),
        ready: false,
        generation: Generation(0),
        events: EventLog::new(),
        disabled_ports: 0,
        operations: Operations::new(),
        pending_vfs: None,
        reset: ResetArming::NEW,
    };

    /// A manager with one virtual switch per configured host port, not yet started.
    pub fn new(settings: FabricSettings) -> Result<Self, StartError> {
        let mut manager = FabricManager::EMPTY;
        manager.configure(settings)?;
        Ok(manager)
    }

    /// Takes `settings`, in place: lays out the virtual ports and builds
    /// one virtual switch per host port, each with its slots empty; the
    /// fabric is to be started (again) after. Settings the virtual
    /// switches cannot be built from (too many slots) are refused with
    /// nothing changed.
    pub fn configure(&mut self, settings: FabricSettings) -> Result<(), StartError> {
        let layouts = PortLayouts::new(settings.upstream_identity, settings.downstream_identity)
            .map_err(StartError::VirtualSwitch)?;
        if let Some(host) = settings
            .hosts
            .iter()
            .find(|h| usize::from(h.slots) > MAX_SLOTS_PER_HOST)
        {
            return Err(StartError::VirtualSwitch(
                VirtualSwitchError::TooManySlots {
                    slots: host.slots,
                    capacity: MAX_SLOTS_PER_HOST,
                },
            ));
        }
        self.ready = false;
        self.settings = settings;
        self.layouts = layouts;
        self.switches.clear();
        for index in 0..self.settings.hosts.len() {
            let host = self.settings.hosts[index];
            let switch = VirtualSwitch::new(
                host.switch,
                host.port,
                host.host,
                host.slots,
                self.settings.upstream_identity,
                self.settings.downstream_identity,
                &self.layouts,
            )
            .map_err(StartError::VirtualSwitch)?;
            // settings.hosts has the same capacity as switches.
            let _ = self.switches.push(switch);
        }
        Ok(())
    }

    /// Discovers and enumerates the fabric (links out of reset at
    /// `reset_at_ns`), computes the paths between its switches, programs
    /// every switch's tables, and starts answering hosts.
    pub fn start<C, T, F>(
        &mut self,
        config: &mut C,
        timer: &mut T,
        fabric: &mut F,
        reset_at_ns: u64,
    ) -> Result<(), StartError>
    where
        C: FabricConfig + ?Sized,
        T: Timer + ?Sized,
        F: Fabric + ?Sized,
    {
        self.ready = false;
        // Host ports stay closed until `program_fabric` gives every port its
        // role and settles it. Until then the data plane itself answers a
        // host's configuration requests with Request Retry Status (§2.3.1,
        // §6.6.1), at once and however long enumeration takes; the firmware
        // serves the mailbox only once the start is over. A start that
        // fails leaves them so.
        let mut inventory = Inventory::default();
        enumerate(
            config,
            timer,
            fabric,
            &self.settings,
            reset_at_ns,
            &mut inventory,
        )
        .map_err(StartError::Enumeration)?;
        inventory.paths = shortest_paths(&inventory.switches);
        // Routed configuration requests follow the routes programmed below.
        for index in 1..inventory.switches.len() {
            let to = SwitchIndex(index as u8);
            inventory.switches[index].via = inventory.paths.next_hop(SwitchIndex::LOCAL, to);
        }
        for switch in self.switches.iter_mut() {
            let Some(at) = inventory.switch_index(switch.switch_id) else {
                continue;
            };
            if let PortKind::Host { proxy_id, .. } = inventory.port_on(at, switch.port) {
                switch.proxy_id = proxy_id;
            }
        }
        program_fabric(&inventory, &self.settings, fabric).map_err(StartError::Routes)?;
        // Every port is in its role again.
        self.disabled_ports = 0;
        self.set_time(timer.now_ns());
        self.log_inventory_changes(&inventory);
        self.inventory = inventory;
        self.ready = true;
        Ok(())
    }

    /// Whether the fabric is enumerated and hosts get answers.
    pub fn is_ready(&self) -> bool {
        self.ready
    }

    /// What enumeration found.
    pub fn inventory(&self) -> &Inventory {
        &self.inventory
    }

    /// The settings the manager runs with.
    pub fn settings(&self) -> &FabricSettings {
        &self.settings
    }

    /// The virtual switch of `host`.
    pub fn virtual_switch(&self, host: HostIndex) -> Option<&VirtualSwitch> {
        self.switches.iter().find(|s| s.host == host)
    }

    /// The virtual switch presented on host port `port` of switch `switch_id`.
    pub fn virtual_switch_on(&self, switch_id: u64, port: PortIndex) -> Option<&VirtualSwitch> {
        self.switches
            .iter()
            .find(|s| (s.switch_id, s.port) == (switch_id, port))
    }

    /// The fabric ID of the function bound to `host`'s `slot`, if any.
    pub fn bound_at(&self, host: HostIndex, slot: u8) -> Option<Bdf> {
        self.virtual_switch(host)?
            .downstream
            .get(usize::from(slot))?
            .bound
            .map(|b| b.function)
    }

    /// The binding state's generation: advanced by every bind and unbind.
    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// The event log.
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// Where background operation `op` stands: running while its slot
    /// waits for the host (an unbind) or its VFs wait to be ready (a
    /// NumVFs change), then how it ended, as long as the manager
    /// remembers ([`crate::limits::FINISHED_OPERATIONS`]); `None` for an
    /// operation it never started or has forgotten.
    pub fn operation(&self, op: OperationId) -> Option<OperationState> {
        let unbinding = self
            .switches
            .iter()
            .flat_map(|switch| switch.downstream.iter())
            .any(|vdsp| vdsp.unbinding.is_some_and(|pending| pending.op == op));
        if unbinding || self.num_vfs_operation() == Some(op) {
            return Some(OperationState::Running);
        }
        self.operations.outcome(op).map(OperationState::Finished)
    }

    /// The NumVFs change waiting for its VFs, if one is: the only
    /// operation that moves on with time rather than with a host's
    /// request, so its caller polls it ([`FabricManager::poll_num_vfs`]).
    pub fn num_vfs_operation(&self) -> Option<OperationId> {
        self.pending_vfs.as_ref().map(PendingVfs::operation)
    }

    /// Logs the functions `new` has that the current inventory has not,
    /// and the other way round, and the ports `new` finds not responding
    /// that the current inventory did not (a switch is the same one if its
    /// switch ID is), and likewise the devices on conventional switches'
    /// downstream ports (the same downstream port if its fabric ID, switch
    /// and port are). A function is the same one if its fabric ID, vendor
    /// and device ID are.
    fn log_inventory_changes(&mut self, new: &Inventory) {
        let same = |a: &Function, b: &Function| {
            (a.id, a.vendor_id, a.device_id) == (b.id, b.vendor_id, b.device_id)
        };
        for old in &self.inventory.functions {
            if !new.functions.iter().any(|f| same(f, old)) {
                self.events.record(Event::DeviceRemoved {
                    function: old.id,
                    switch: old.switch,
                    port: old.port,
                });
            }
        }
        for added in &new.functions {
            if !self.inventory.functions.iter().any(|f| same(f, added)) {
                self.events.record(Event::DeviceAdded {
                    function: added.id,
                    switch: added.switch,
                    port: added.port,
                });
            }
        }
        for (index, switch) in new.switches.iter().enumerate() {
            let before = self.inventory.switches.iter().find(|s| s.id == switch.id);
            for port in (0..switch.port_count).map(PortIndex) {
                if switch.not_responding(port) && !before.is_some_and(|s| s.not_responding(port)) {
                    self.events.record(Event::NotResponding {
                        switch: SwitchIndex(index as u8),
                        port,
                    });
                }
            }
        }
        for bridge in new.bridges.iter().filter(|b| b.device_not_responding) {
            let device = Bdf::new(bridge.buses.0, 0, 0);
            let known = self.inventory.bridges.iter().any(|old| {
                old.device_not_responding
                    && (old.id, old.switch, old.port) == (bridge.id, bridge.switch, bridge.port)
            });
            if !known {
                self.events.record(Event::DeviceNotResponding {
                    device,
                    switch: bridge.switch,
                    port: bridge.port,
                });
            }
        }
    }

    pub(crate) fn switch_index(&self, host: HostIndex) -> Option<usize> {
        self.switches.iter().position(|s| s.host == host)
    }

    /// The fabric switch virtual switch `si`'s host port is on.
    pub(crate) fn host_switch(&self, si: usize) -> Result<SwitchIndex, BindError> {
        let switch_id = self.switches[si].switch_id;
        self.inventory
            .switch_index(switch_id)
            .ok_or(BindError::UnreachableSwitch { switch_id })
    }

    /// The data plane of the switch virtual switch `si`'s host port is on.
    pub(crate) fn host_plane<'f, F: Fabric + ?Sized>(
        &self,
        si: usize,
        fabric: &'f mut F,
    ) -> Result<&'f mut dyn DataPlane, BindError> {
        let at = self.host_switch(si)?;
        self.inventory
            .plane(fabric, at)
            .map_err(|switch_id| BindError::UnreachableSwitch { switch_id })
    }
}
