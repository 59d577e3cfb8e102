//! Binding functions to host slots, unbinding them, and the tables that
//! follow from the bindings.
//!
//! For a host, the tables are: its port's windows (one per BAR the host
//! assigned to a bound function, with Memory Space enabled: host address →
//! fabric BAR address) and ID map (fabric ID → the ID the host enumerated
//! it at, below the slot's secondary bus); and, on each endpoint port it
//! owns, the owner and the peer windows (the host's windows of functions on
//! other ports), ACS P2P Request Redirect and the INTx swizzle of the slot.
//!
//! Bind programs all of that before the slot shows presence; unbind takes
//! it away before the slot shows absence, and hands the endpoint port back
//! to the free pool only once no function of that host remains on it, so
//! no TLP ever reaches an owner that is not the function's.
//!
//! The data plane keeps one owner per endpoint port, so functions below one
//! port (a PF and its VFs) may be bound to one host only at a time.
//!
//! A host's port is on the manager's switch; a bound function may be on
//! any switch, whose data plane gets that function's port entries. The
//! host's windows translate to fabric addresses, which every switch routes
//! ([`crate::routes`]), so nothing else changes on the switches between.

use heapless::Vec;
use weft_pcie::config::header::command;
use weft_pcie::Bdf;
use weft_regs::capacity::{BOUND_FUNCTIONS_PER_HOST, WINDOWS_PER_PORT};

use crate::hw::{DataPlane, Fabric, HostInterface, HostSendError, TableWriteError};
use crate::inventory::{Binding, PortKind, SwitchIndex};
use crate::manager::FabricManager;
use crate::virtualize::host_bar_address;
use crate::vswitch::BoundFunction;
use weft_regs::tables::{HostIndex, IdMapping, Owner, Permissions, PortIndex, PortRole, Window};

/// How an endpoint leaves its host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnbindMode {
    /// The endpoint stays where it is, so requests already in flight to it
    /// complete normally (completions route by ID); the host only loses
    /// access and sees the slot empty.
    Graceful,
    /// The endpoint is gone: every host request still in flight to its
    /// port is completed with an error by the data plane, never left hanging.
    Surprise,
}

/// Why a bind or unbind was refused or failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindError {
    /// The fabric is not enumerated yet.
    NotReady,
    /// No function with this fabric ID.
    NoSuchEndpoint(Bdf),
    /// No virtual switch for this host.
    NoSuchHost(HostIndex),
    /// The host's virtual switch has no such slot.
    NoSuchSlot {
        /// The host.
        host: HostIndex,
        /// The slot asked for.
        slot: u8,
    },
    /// Something is bound to the slot already.
    SlotOccupied {
        /// The host.
        host: HostIndex,
        /// The slot.
        slot: u8,
        /// The function bound there.
        occupant: Bdf,
    },
    /// The endpoint is bound already.
    EndpointBusy {
        /// Where it is bound.
        owner: Binding,
    },
    /// Another function below the same port is bound to another host, and
    /// the data plane has one owner per endpoint port.
    PortOwnedByOtherHost {
        /// The switch.
        switch: SwitchIndex,
        /// The port.
        port: PortIndex,
        /// The host owning it.
        owner: HostIndex,
    },
    /// The endpoint is not bound.
    NotBound(Bdf),
    /// More entries than a data plane table holds.
    TableFull {
        /// Which table.
        table: &'static str,
        /// Its capacity.
        capacity: usize,
    },
    /// A table write failed.
    Table(TableWriteError),
    /// The hot-plug MSI could not be sent.
    Host(HostSendError),
    /// The fabric gives no data plane handle for the switch the function is on.
    UnreachableSwitch {
        /// Its switch ID.
        switch_id: u64,
    },
}

impl From<TableWriteError> for BindError {
    fn from(error: TableWriteError) -> Self {
        BindError::Table(error)
    }
}

impl From<HostSendError> for BindError {
    fn from(error: HostSendError) -> Self {
        BindError::Host(error)
    }
}

/// A host's windows, each with the switch and port of the function it leads to.
type HostWindows = Vec<(SwitchIndex, PortIndex, Window), WINDOWS_PER_PORT>;

impl FabricManager {
    /// Binds the function with fabric ID `endpoint` (a PF or a VF) to `host`'s `slot`.
    ///
    /// The ID map, owner and peer windows are programmed first; then the
    /// slot shows Presence Detect State and Data Link Layer Link Active, and
    /// latches Presence Detect Changed and DLL State Changed; the MSI the
    /// host programmed on the slot's port is sent if it enabled those events.
    /// The host's BAR windows follow once it assigns the BARs.
    pub fn bind<F, H>(
        &mut self,
        endpoint: Bdf,
        host: HostIndex,
        slot: u8,
        fabric: &mut F,
        host_if: &mut H,
    ) -> Result<(), BindError>
    where
        F: Fabric + ?Sized,
        H: HostInterface + ?Sized,
    {
        if !self.ready {
            return Err(BindError::NotReady);
        }
        let index = self
            .inventory
            .index_of(endpoint)
            .ok_or(BindError::NoSuchEndpoint(endpoint))?;
        let si = self.switch_index(host).ok_or(BindError::NoSuchHost(host))?;
        let vdsp = self.switches[si]
            .downstream
            .get(usize::from(slot))
            .ok_or(BindError::NoSuchSlot { host, slot })?;
        if let Some(occupant) = vdsp.bound {
            return Err(BindError::SlotOccupied {
                host,
                slot,
                occupant: occupant.function,
            });
        }
        let function = &self.inventory.functions[index];
        if let Some(owner) = function.binding {
            return Err(BindError::EndpointBusy { owner });
        }
        if let Some(owner) = self.port_owner(function.switch, function.port) {
            if owner != host {
                return Err(BindError::PortOwnedByOtherHost {
                    switch: function.switch,
                    port: function.port,
                    owner,
                });
            }
        }
        let mut shadow_bars = [0u32; 6];
        for bar in &function.bars {
            if let Some(register) = shadow_bars.get_mut(usize::from((bar.register() - 0x10) / 4)) {
                *register = bar.bar().kind.type_bits();
            }
        }
        self.inventory.functions[index].binding = Some(Binding { host, slot });
        self.switches[si].downstream[usize::from(slot)].bound = Some(BoundFunction {
            function: endpoint,
            shadow_bars,
            shadow_command: 0,
        });
        self.program_host(si, fabric)?;
        self.announce(si, slot, true, host_if)
    }

    /// Unbinds the function with fabric ID `endpoint` from its slot.
    ///
    /// The host's windows and ID map lose it first; its port returns to
    /// the free pool if nothing else of that host is bound there; in
    /// [`UnbindMode::Surprise`] the data plane completes what the host has
    /// in flight to the port; then the slot shows absence and the host gets
    /// its hot-plug MSI.
    ///
    /// The data plane tracks a host's requests by the port they left its
    /// switch by; for a function on another switch that is a fabric port
    /// shared with other functions, so a surprise unbind leaves the host's
    /// requests in flight to it to the data plane's completion timeout,
    /// which still completes each of them (DESIGN.md, "Outstanding requests").
    pub fn unbind<F, H>(
        &mut self,
        endpoint: Bdf,
        mode: UnbindMode,
        fabric: &mut F,
        host_if: &mut H,
    ) -> Result<(), BindError>
    where
        F: Fabric + ?Sized,
        H: HostInterface + ?Sized,
    {
        let index = self
            .inventory
            .index_of(endpoint)
            .ok_or(BindError::NoSuchEndpoint(endpoint))?;
        let binding = self.inventory.functions[index]
            .binding
            .ok_or(BindError::NotBound(endpoint))?;
        let si = self
            .switch_index(binding.host)
            .ok_or(BindError::NoSuchHost(binding.host))?;
        let (switch, port) = (
            self.inventory.functions[index].switch,
            self.inventory.functions[index].port,
        );
        self.inventory.functions[index].binding = None;
        if let Some(vdsp) = self.switches[si]
            .downstream
            .get_mut(usize::from(binding.slot))
        {
            vdsp.bound = None;
        }
        self.program_host(si, fabric)?;
        if self.port_owner(switch, port).is_none() {
            self.release_port(switch, port, fabric)?;
        }
        if mode == UnbindMode::Surprise && switch == SwitchIndex::LOCAL {
            fabric.local().abandon_requests_to(port)?;
        }
        self.announce(si, binding.slot, false, host_if)
    }

    /// Shows presence (or absence) in the slot and sends the hot-plug MSI if due.
    fn announce<H: HostInterface + ?Sized>(
        &mut self,
        si: usize,
        slot: u8,
        present: bool,
        host_if: &mut H,
    ) -> Result<(), BindError> {
        let switch = &mut self.switches[si];
        let requester = switch.downstream_id(slot);
        let port = switch.port;
        let Some(vdsp) = switch.downstream.get_mut(usize::from(slot)) else {
            return Ok(());
        };
        if let Some(message) = vdsp.set_presence(present) {
            host_if.send_msi(port, requester, message)?;
        }
        Ok(())
    }

    /// The host owning an endpoint port: the host of any function bound below it.
    pub(crate) fn port_owner(&self, switch: SwitchIndex, port: PortIndex) -> Option<HostIndex> {
        self.inventory
            .functions
            .iter()
            .filter(|f| f.switch == switch && f.port == port)
            .find_map(|f| f.binding.map(|b| b.host))
    }

    /// The data plane of `switch`.
    fn plane<'f, F: Fabric + ?Sized>(
        &self,
        fabric: &'f mut F,
        switch: SwitchIndex,
    ) -> Result<&'f mut dyn DataPlane, BindError> {
        self.inventory
            .plane(fabric, switch)
            .map_err(|switch_id| BindError::UnreachableSwitch { switch_id })
    }

    /// Returns an endpoint port to the free pool: no owner, no peer windows.
    fn release_port<F: Fabric + ?Sized>(
        &self,
        switch: SwitchIndex,
        port: PortIndex,
        fabric: &mut F,
    ) -> Result<(), BindError> {
        let tables = self.plane(fabric, switch)?;
        if let PortKind::Endpoint { buses } = self.inventory.port_on(switch, port) {
            tables.set_port_role(port, PortRole::Endpoint { owner: None, buses })?;
        }
        for index in 0..WINDOWS_PER_PORT {
            tables.set_window(port, index, Window::UNUSED)?;
        }
        tables.set_p2p_request_redirect(port, false)?;
        tables.set_intx_swizzle(port, 0)?;
        Ok(())
    }

    /// Writes every table that depends on host `si`'s bindings.
    pub(crate) fn program_host<F: Fabric + ?Sized>(
        &self,
        si: usize,
        fabric: &mut F,
    ) -> Result<(), BindError> {
        let switch = &self.switches[si];
        let mut windows = HostWindows::new();
        let mut ids: Vec<IdMapping, BOUND_FUNCTIONS_PER_HOST> = Vec::new();
        for vdsp in &switch.downstream {
            let Some(bound) = vdsp.bound else { continue };
            let Some(function) = self.inventory.function(bound.function) else {
                continue;
            };
            let secondary = vdsp.secondary_bus();
            if secondary != 0 {
                ids.push(IdMapping {
                    fabric: function.id,
                    host: Bdf::new(secondary, 0, 0),
                })
                .map_err(|_| BindError::TableFull {
                    table: "ID map",
                    capacity: BOUND_FUNCTIONS_PER_HOST,
                })?;
            }
            if bound.shadow_command & command::MEMORY_SPACE == 0 {
                continue;
            }
            for bar in &function.bars {
                let Some(fabric_base) = bar.fabric_address() else {
                    continue;
                };
                let base = host_bar_address(&bound.shadow_bars, bar);
                if base == 0 {
                    continue;
                }
                windows
                    .push((
                        function.switch,
                        function.port,
                        Window {
                            base,
                            size: bar.size(),
                            fabric_base,
                            permissions: Permissions::READ_WRITE,
                        },
                    ))
                    .map_err(|_| BindError::TableFull {
                        table: "window",
                        capacity: WINDOWS_PER_PORT,
                    })?;
            }
        }
        let tables = fabric.local();
        for index in 0..WINDOWS_PER_PORT {
            let window = windows.get(index).map_or(Window::UNUSED, |w| w.2);
            tables.set_window(switch.port, index, window)?;
        }
        for index in 0..BOUND_FUNCTIONS_PER_HOST {
            tables.set_id_mapping(switch.port, index, ids.get(index).copied())?;
        }
        for (s, fabric_switch) in self.inventory.switches.iter().enumerate() {
            let at = SwitchIndex(s as u8);
            for (index, kind) in fabric_switch.ports.iter().enumerate() {
                let port = PortIndex(index as u8);
                if let PortKind::Endpoint { buses } = kind {
                    if self.port_owner(at, port) == Some(switch.host) {
                        let tables = self.plane(fabric, at)?;
                        self.program_owned_port(si, at, port, *buses, &windows, tables)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes an endpoint port owned by host `si`: owner, peer windows, ACS redirect, swizzle.
    fn program_owned_port(
        &self,
        si: usize,
        at: SwitchIndex,
        port: PortIndex,
        buses: (u8, u8),
        windows: &HostWindows,
        tables: &mut dyn DataPlane,
    ) -> Result<(), BindError> {
        let switch = &self.switches[si];
        tables.set_port_role(
            port,
            PortRole::Endpoint {
                owner: Some(Owner {
                    host: switch.host,
                    proxy_id: switch.proxy_id,
                }),
                buses,
            },
        )?;
        let mut peers = windows
            .iter()
            .filter(|(s, p, _)| (*s, *p) != (at, port))
            .map(|w| w.2);
        for index in 0..WINDOWS_PER_PORT {
            tables.set_window(port, index, peers.next().unwrap_or(Window::UNUSED))?;
        }
        // The slot of the port's (first) bound function decides the swizzle
        // and the ACS controls.
        let slot = switch.downstream.iter().position(|vdsp| {
            vdsp.bound
                .and_then(|b| self.inventory.function(b.function))
                .is_some_and(|f| (f.switch, f.port) == (at, port))
        });
        if let Some(slot) = slot {
            let vdsp = &switch.downstream[slot];
            tables.set_p2p_request_redirect(port, vdsp.p2p_request_redirect())?;
            // §2.2.8.1: a downstream port swizzles by its device number.
            tables.set_intx_swizzle(port, slot as u8)?;
        }
        Ok(())
    }
}
