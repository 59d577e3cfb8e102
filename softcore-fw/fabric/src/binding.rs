//! Binding functions to host slots, unbinding them, and the tables that
//! follow from the bindings.
//!
//! For a host, the tables are: its port's windows (one per BAR the host
//! assigned to a bound function, with Memory Space enabled: host address →
//! fabric BAR address) and ID map (fabric ID → the ID the host enumerated
//! it at, below the slot's secondary bus); and, on each endpoint port where
//! it has a function, the owner, the peer windows (the host's windows of
//! functions on other ports, and on the same port where it returns peer
//! traffic), ACS P2P Request Redirect and the INTx swizzle of the slot.
//!
//! An endpoint port whose every function is bound to one host has that
//! host as its port owner, as a GPU has. Otherwise (SR-IOV virtual
//! functions of one drive bound to different hosts, or only some functions
//! of a device bound) the port has no owner: each bound function gets a
//! function owner entry with its own host and its slot's ACS and INTx
//! controls, and every unbound function below the port reaches nothing.
//! Every peer window on an endpoint port is tagged with the host it serves,
//! so a function sees its own host's peer windows only.
//!
//! Functions of one port may go to different hosts only where the device
//! cannot carry one host's traffic to the other's function behind the
//! switch's back, and where one host cannot take the other's function
//! away ([`SharingRefused`]). Below a conventional switch
//! ([`crate::conventional`]) each endpoint function is bound on its own;
//! devices below different downstream ports may go to different hosts
//! when those ports redirect peer traffic up to the weft port (ACS), where
//! the function owners and host-tagged peer windows isolate it. Where
//! every such downstream port redirects, the weft port sends peer traffic
//! from below it back down after translation
//! ([`crate::inventory::Inventory::returns_peers_to`]), so each host's
//! peer windows on that port include its functions below the same port,
//! and devices bound to one host do peer-to-peer there as anywhere; a
//! device bound to another host stays out of reach, its windows being
//! another owner's.
//!
//! Bind programs all of that before the slot shows presence; unbind takes
//! it away before the slot shows absence. Each endpoint port is rewritten
//! as a whole, revoking before granting, so no TLP ever reaches an owner
//! that is not the function's.
//!
//! A host's port may be on any switch, whose data plane gets the host's
//! windows and ID map; a bound function may be on any switch, whose data
//! plane gets that function's port entries. Remote switches' tables are
//! written in-band ([`crate::hw::Fabric`]). The host's windows translate
//! to fabric addresses, and its endpoints' DMA to its aperture, both of
//! which every switch routes ([`crate::routes`]), so nothing else changes
//! on the switches between.

use heapless::Vec;
use weft_pcie::config::header::command;
use weft_pcie::Bdf;
use weft_regs::capacity::{BOUND_FUNCTIONS_PER_HOST, FUNCTION_OWNERS_PER_PORT, WINDOWS_PER_PORT};

use crate::events::Event;
use crate::generation::{self, Generation, Stale};
use crate::hw::{DataPlane, Fabric, HostInterface, HostSendError, TableWriteError};
use crate::inventory::{Binding, Function, FunctionKind, PortKind, SwitchIndex};
use crate::limits::MAX_HOST_PORTS;
use crate::manager::FabricManager;
use crate::operations::{OperationError, OperationId};
use crate::virtualize::host_bar_address;
use crate::vswitch::{BoundFunction, PendingUnbind};
use weft_regs::tables::{
    FunctionOwner, HostIndex, IdMapping, Owner, Permissions, PortIndex, PortRole, Window,
};

/// How an endpoint leaves its host: the three hot-remove models of PCIe
/// Base 6.0 §6.7 (and the three modes of CXL's Unbind vPPB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnbindMode {
    /// The host gives the device up first: the unbind waits until the
    /// host's hot-plug driver powers the slot off on its own (an operator
    /// on the host asked it to, Power Controller Control = Off, §6.7.1.8),
    /// then takes effect. Requests already in flight complete normally.
    Graceful,
    /// Managed hot-remove: the manager presses the slot's Attention Button
    /// (§6.7.1.5), the host's driver releases the device and powers the
    /// slot off, and the unbind then takes effect as a graceful one does.
    Managed,
    /// Surprise hot-remove: the unbind takes effect now, the host sees the
    /// slot empty, and every host request still in flight to the
    /// function's port is completed with an error by the data plane, never
    /// left hanging. It also overrides a graceful or managed unbind still
    /// waiting for its host.
    Surprise,
}

/// Where an unbind stands when [`FabricManager::unbind`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unbinding {
    /// The function is unbound; the binding state is at this generation.
    Unbound(Generation),
    /// The unbind waits for the host to power the slot off; poll it with
    /// [`FabricManager::operation`].
    Waiting(OperationId),
}

/// Why a bind or unbind was refused or failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindError {
    /// The fabric is not enumerated yet.
    NotReady,
    /// The caller's precondition named a generation of the binding state
    /// that is no longer current: someone else changed it since it was read.
    StaleGeneration {
        /// The generation the caller expected.
        expected: Generation,
        /// The current generation.
        current: Generation,
    },
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
    /// the port cannot be shared between them.
    PortOwnedByOtherHost {
        /// The switch.
        switch: SwitchIndex,
        /// The port.
        port: PortIndex,
        /// The other host.
        owner: HostIndex,
        /// The function that keeps the port from being shared: the one
        /// being bound, or one bound to `owner`.
        function: Bdf,
        /// Why it does.
        reason: SharingRefused,
    },
    /// The endpoint is not bound.
    NotBound(Bdf),
    /// A graceful or managed unbind of the slot already waits for its
    /// host; only a surprise unbind overrides it.
    UnbindInProgress {
        /// The host.
        host: HostIndex,
        /// The slot.
        slot: u8,
        /// The unbind under way.
        op: OperationId,
    },
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
    /// A port of the manager's switch that the function's traffic would
    /// cross is disabled ([`crate::port_control`]): its own port, or a
    /// fabric port for a function of another switch.
    PortDisabled(PortIndex),
}

/// Why functions of one endpoint port cannot be bound to different hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharingRefused {
    /// The function is an SR-IOV PF with VFs enabled: its host could take
    /// the other host's VFs away, by a Function Level Reset of the PF (PCIe
    /// Base 6.0 §9.2.2.3) or by clearing VF Enable (§9.3.3.3.1). Bind the
    /// PF to the VFs' host, or leave it in the free pool.
    PhysicalFunctionWithVfs,
    /// The function has an ACS capability, so it may carry peer-to-peer
    /// requests to the other functions of its device internally (§6.12.1.2
    /// requires ACS P2P Request Redirect of exactly those functions), which
    /// would never reach the switch's tables; the manager does not set
    /// P2P Request Redirect in endpoints. A function without ACS does no
    /// peer-to-peer inside its device.
    PeerToPeerInsideDevice,
    /// The function sits below a conventional switch whose downstream port
    /// `downstream_port` does not redirect peer traffic upstream (no ACS
    /// capability, or no P2P Request and Completion Redirect in it, PCIe
    /// Base 6.0 §6.12.1.1): that switch would route requests between its
    /// devices itself, by fabric address, past the weft port's tables.
    /// Bind the devices below that switch to one host.
    PeerRouteBelowPort {
        /// The conventional switch's downstream port.
        downstream_port: Bdf,
    },
}

impl From<Stale> for BindError {
    fn from(stale: Stale) -> Self {
        BindError::StaleGeneration {
            expected: stale.expected,
            current: stale.current,
        }
    }
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

/// Everything an endpoint port is programmed with, worked out from the
/// bindings of the functions below it before anything is written.
struct PortPlan {
    /// The port owner: the host every function below it is bound to.
    owner: Option<Owner>,
    /// The port owner's slot's ACS P2P Request Redirect.
    p2p_request_redirect: bool,
    /// The port owner's slot's device number.
    intx_swizzle: u8,
    /// Without a port owner: one entry per bound function.
    function_owners: Vec<FunctionOwner, FUNCTION_OWNERS_PER_PORT>,
    /// The peer windows of every host with a function below the port, each
    /// tagged with its host.
    windows: Vec<(Window, HostIndex), WINDOWS_PER_PORT>,
}

/// Why a function stops its device from being shared, if it does.
fn sharing_refused(function: &Function) -> Option<SharingRefused> {
    if matches!(function.kind, FunctionKind::Physical)
        && function.sriov.is_some_and(|setup| setup.num_vfs > 0)
    {
        return Some(SharingRefused::PhysicalFunctionWithVfs);
    }
    function.acs.map(|_| SharingRefused::PeerToPeerInsideDevice)
}

impl FabricManager {
    /// Binds the function with fabric ID `endpoint` (a PF or a VF) to `host`'s `slot`.
    ///
    /// A function may go to another host than its siblings below the same
    /// port (see [`SharingRefused`] for when it may not). The ID map, owner
    /// and peer windows are programmed first; then the slot shows Presence
    /// Detect State and Data Link Layer Link Active, and latches Presence
    /// Detect Changed and DLL State Changed; the MSI the host programmed on
    /// the slot's port is sent if it enabled those events. The host's BAR
    /// windows follow once it assigns the BARs.
    ///
    /// Returns the binding state's new generation: every bind that changes
    /// the state advances it, also one whose table writes or MSI then fail
    /// (the binding stands, and is logged, all the same).
    pub fn bind<F, H>(
        &mut self,
        endpoint: Bdf,
        host: HostIndex,
        slot: u8,
        fabric: &mut F,
        host_if: &mut H,
    ) -> Result<Generation, BindError>
    where
        F: Fabric + ?Sized,
        H: HostInterface + ?Sized,
    {
        self.bind_if(endpoint, host, slot, None, fabric, host_if)
    }

    /// [`FabricManager::bind`] on the precondition that the binding state
    /// is still at generation `if_generation` (none: no precondition);
    /// [`BindError::StaleGeneration`] otherwise, with nothing changed.
    pub fn bind_if<F, H>(
        &mut self,
        endpoint: Bdf,
        host: HostIndex,
        slot: u8,
        if_generation: Option<Generation>,
        fabric: &mut F,
        host_if: &mut H,
    ) -> Result<Generation, BindError>
    where
        F: Fabric + ?Sized,
        H: HostInterface + ?Sized,
    {
        if !self.ready {
            return Err(BindError::NotReady);
        }
        generation::check(if_generation, self.generation)?;
        let before = self.binding_of(endpoint);
        let result = self.bind_function(endpoint, host, slot, fabric);
        if self.binding_of(endpoint) != before {
            self.generation = self.generation.next();
            self.events.record(Event::Bound {
                function: endpoint,
                binding: Binding { host, slot },
                generation: self.generation,
            });
        }
        result?;
        self.announce_binding(Binding { host, slot }, true, host_if)?;
        Ok(self.generation)
    }

    /// Where the function with fabric ID `endpoint` is bound, if it exists and is.
    pub fn binding_of(&self, endpoint: Bdf) -> Option<Binding> {
        self.inventory.function(endpoint).and_then(|f| f.binding)
    }

    /// Binds without precondition, generation, log or presence: the state
    /// change and the tables that follow it.
    pub(crate) fn bind_function<F>(
        &mut self,
        endpoint: Bdf,
        host: HostIndex,
        slot: u8,
        fabric: &mut F,
    ) -> Result<(), BindError>
    where
        F: Fabric + ?Sized,
    {
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
        self.check_port_enabled(function.switch, function.port)
            .map_err(BindError::PortDisabled)?;
        self.check_sharing(function, host)?;
        let (switch, port) = (function.switch, function.port);
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
        // Refuse, with nothing written, a binding the port's tables cannot hold.
        if let Err(error) = self.plan_port(switch, port) {
            self.inventory.functions[index].binding = None;
            self.switches[si].downstream[usize::from(slot)].bound = None;
            return Err(error);
        }
        self.program_host(si, fabric)
    }

    /// Unbinds the function with fabric ID `endpoint` from its slot, in `mode`.
    ///
    /// A graceful or managed unbind of a slot the host has powered on waits
    /// for the host: the slot shows [`Unbinding::Waiting`] with an
    /// operation, a managed one after pressing the slot's Attention Button
    /// and sending the host the MSI it programmed for it; the unbind takes
    /// effect when the host writes Power Controller Control = Off
    /// ([`FabricManager::handle_config`]). One of a slot the host powered
    /// off already, and a surprise unbind, take effect now. A host that
    /// never answers leaves the operation running, for a surprise unbind to
    /// override ([`BindError::UnbindInProgress`] refuses another graceful
    /// or managed one); the overridden operation then ends successfully,
    /// the event log recording the surprise unbind.
    ///
    /// When the unbind takes effect, the host's windows and ID map lose the
    /// function first; its port is rewritten without it (back to the free
    /// pool if nothing else is bound there); in [`UnbindMode::Surprise`]
    /// the data plane completes what this host has in flight to the port,
    /// and nothing of the other hosts sharing it; then the slot shows
    /// absence and the host gets its hot-plug MSI.
    ///
    /// The data plane tracks a host's requests by the port they left its
    /// switch by, not by the function they address: a surprise unbind also
    /// completes, with an error, the same host's requests in flight to its
    /// other functions below the port. For a function on another switch
    /// than the host's, that port is a fabric port shared with other functions, so a
    /// surprise unbind leaves the host's requests in flight to it to the
    /// data plane's completion timeout, which still completes each of them
    /// (DESIGN.md, "Outstanding requests").
    ///
    /// Every change of the binding state advances the generation: the
    /// start of a waiting unbind (the slot shows it) and the unbind.
    pub fn unbind<F, H>(
        &mut self,
        endpoint: Bdf,
        mode: UnbindMode,
        fabric: &mut F,
        host_if: &mut H,
    ) -> Result<Unbinding, BindError>
    where
        F: Fabric + ?Sized,
        H: HostInterface + ?Sized,
    {
        self.unbind_if(endpoint, mode, None, fabric, host_if)
    }

    /// [`FabricManager::unbind`] on the precondition that the binding state
    /// is still at generation `if_generation` (none: no precondition);
    /// [`BindError::StaleGeneration`] otherwise, with nothing changed.
    pub fn unbind_if<F, H>(
        &mut self,
        endpoint: Bdf,
        mode: UnbindMode,
        if_generation: Option<Generation>,
        fabric: &mut F,
        host_if: &mut H,
    ) -> Result<Unbinding, BindError>
    where
        F: Fabric + ?Sized,
        H: HostInterface + ?Sized,
    {
        generation::check(if_generation, self.generation)?;
        let binding = self
            .inventory
            .function(endpoint)
            .ok_or(BindError::NoSuchEndpoint(endpoint))?
            .binding
            .ok_or(BindError::NotBound(endpoint))?;
        let si = self
            .switch_index(binding.host)
            .ok_or(BindError::NoSuchHost(binding.host))?;
        let vdsp = self.switches[si]
            .downstream
            .get_mut(usize::from(binding.slot))
            .ok_or(BindError::NoSuchSlot {
                host: binding.host,
                slot: binding.slot,
            })?;
        if let Some(pending) = vdsp.unbinding {
            if mode != UnbindMode::Surprise {
                return Err(BindError::UnbindInProgress {
                    host: binding.host,
                    slot: binding.slot,
                    op: pending.op,
                });
            }
        }
        if mode == UnbindMode::Surprise || !vdsp.powered() {
            return self
                .unbind_now(endpoint, mode, fabric, host_if)
                .map(Unbinding::Unbound);
        }
        if mode == UnbindMode::Managed {
            if let Some(message) = vdsp.press_attention_button() {
                let switch = &self.switches[si];
                let requester = switch.downstream_id(binding.slot);
                let sent = host_if.send_msi(switch.switch_id, switch.port, requester, message);
                if let Err(error) = sent {
                    // Nothing changed: the host never heard the button.
                    self.switches[si].downstream[usize::from(binding.slot)]
                        .withdraw_attention_button();
                    return Err(error.into());
                }
            }
        }
        let op = self.operations.start();
        self.switches[si].downstream[usize::from(binding.slot)].unbinding =
            Some(PendingUnbind { op, mode });
        self.generation = self.generation.next();
        Ok(Unbinding::Waiting(op))
    }

    /// Unbinds now, with generation, log and absence; a waiting unbind of
    /// the slot ends with it.
    fn unbind_now<F, H>(
        &mut self,
        endpoint: Bdf,
        mode: UnbindMode,
        fabric: &mut F,
        host_if: &mut H,
    ) -> Result<Generation, BindError>
    where
        F: Fabric + ?Sized,
        H: HostInterface + ?Sized,
    {
        let before = self.binding_of(endpoint);
        let pending = before.and_then(|binding| {
            let si = self.switch_index(binding.host)?;
            let vdsp = self.switches[si]
                .downstream
                .get_mut(usize::from(binding.slot))?;
            vdsp.unbinding.take()
        });
        let result = self.unbind_function(endpoint, mode, fabric);
        if let (Some(binding), None) = (before, self.binding_of(endpoint)) {
            self.generation = self.generation.next();
            self.events.record(Event::Unbound {
                function: endpoint,
                binding,
                mode,
                generation: self.generation,
            });
        }
        let result = result.and_then(|binding| self.announce_binding(binding, false, host_if));
        if let Some(pending) = pending {
            self.operations
                .finish(pending.op, result.map_err(OperationError::Unbind));
        }
        result.map(|()| self.generation)
    }

    /// The host of virtual switch `si` powered slot `slot` off: a graceful
    /// or managed unbind waiting for that takes effect now.
    pub(crate) fn slot_powered_off<F, H>(
        &mut self,
        si: usize,
        slot: u8,
        fabric: &mut F,
        host_if: &mut H,
    ) -> Result<(), BindError>
    where
        F: Fabric + ?Sized,
        H: HostInterface + ?Sized,
    {
        let Some(vdsp) = self.switches[si].downstream.get(usize::from(slot)) else {
            return Ok(());
        };
        let (Some(pending), Some(bound)) = (vdsp.unbinding, vdsp.bound) else {
            return Ok(());
        };
        self.unbind_now(bound.function, pending.mode, fabric, host_if)
            .map(|_| ())
    }

    /// Unbinds without precondition, generation, log or absence: the state
    /// change and the tables that follow it; returns where it was bound.
    fn unbind_function<F>(
        &mut self,
        endpoint: Bdf,
        mode: UnbindMode,
        fabric: &mut F,
    ) -> Result<Binding, BindError>
    where
        F: Fabric + ?Sized,
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
        if let PortKind::Endpoint { buses } = self.inventory.port_on(switch, port) {
            self.program_endpoint_port(switch, port, buses, fabric)?;
        }
        if mode == UnbindMode::Surprise && Ok(switch) == self.host_switch(si) {
            let host_port = self.switches[si].port;
            self.host_plane(si, fabric)?
                .abandon_host_requests_to(host_port, port)?;
        }
        Ok(binding)
    }

    /// Shows presence (or absence) in the slot of `binding`.
    pub(crate) fn announce_binding<H: HostInterface + ?Sized>(
        &mut self,
        binding: Binding,
        present: bool,
        host_if: &mut H,
    ) -> Result<(), BindError> {
        let si = self
            .switch_index(binding.host)
            .ok_or(BindError::NoSuchHost(binding.host))?;
        self.announce(si, binding.slot, present, host_if)
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
        let (switch_id, port) = (switch.switch_id, switch.port);
        let host = switch.host;
        let Some(vdsp) = switch.downstream.get_mut(usize::from(slot)) else {
            return Ok(());
        };
        if let Some(message) = vdsp.set_presence(present) {
            host_if.send_msi(switch_id, port, requester, message)?;
            self.events.record(Event::HotPlugSent {
                host,
                slot,
                present,
            });
        }
        Ok(())
    }

    /// Refuses to bind `function` to `host` where another host has a
    /// function below the same port and the two cannot share it: functions
    /// of one device by [`sharing_refused`], devices below a conventional
    /// switch unless every downstream port above them redirects peer
    /// traffic to the weft port ([`Inventory::peer_route_below`]).
    ///
    /// [`Inventory::peer_route_below`]: crate::inventory::Inventory::peer_route_below
    fn check_sharing(&self, function: &Function, host: HostIndex) -> Result<(), BindError> {
        let others = self
            .functions_on(function.switch, function.port)
            .filter_map(|f| f.binding.filter(|b| b.host != host).map(|b| (f, b.host)));
        for (other, owner) in others {
            let same_device = function.bridge == other.bridge;
            for candidate in [function, other] {
                let refused = if same_device {
                    sharing_refused(candidate)
                } else {
                    self.inventory
                        .peer_route_below(candidate)
                        .map(|downstream_port| SharingRefused::PeerRouteBelowPort {
                            downstream_port,
                        })
                };
                if let Some(reason) = refused {
                    return Err(BindError::PortOwnedByOtherHost {
                        switch: function.switch,
                        port: function.port,
                        owner,
                        function: candidate.id,
                        reason,
                    });
                }
            }
        }
        Ok(())
    }

    /// The functions below `port` of `switch`.
    fn functions_on(
        &self,
        switch: SwitchIndex,
        port: PortIndex,
    ) -> impl Iterator<Item = &Function> + '_ {
        self.inventory
            .functions
            .iter()
            .filter(move |f| f.switch == switch && f.port == port)
    }

    /// Whether host `host` has a function bound below `port` of `switch`.
    fn has_function_on(&self, host: HostIndex, switch: SwitchIndex, port: PortIndex) -> bool {
        self.functions_on(switch, port)
            .any(|f| f.binding.is_some_and(|b| b.host == host))
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

    /// Writes every table that depends on host `si`'s bindings.
    pub(crate) fn program_host<F: Fabric + ?Sized>(
        &self,
        si: usize,
        fabric: &mut F,
    ) -> Result<(), BindError> {
        let switch = &self.switches[si];
        let windows = self.host_windows(si)?;
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
        }
        let tables = self.host_plane(si, fabric)?;
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
                    if self.has_function_on(switch.host, at, port) {
                        self.program_endpoint_port(at, port, *buses, fabric)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Host `si`'s windows: one per BAR it assigned to a bound function with Memory Space enabled.
    fn host_windows(&self, si: usize) -> Result<HostWindows, BindError> {
        let mut windows = HostWindows::new();
        for vdsp in &self.switches[si].downstream {
            let Some(bound) = vdsp.bound else { continue };
            let Some(function) = self.inventory.function(bound.function) else {
                continue;
            };
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
        Ok(windows)
    }

    /// Works out an endpoint port's tables from the bindings below it.
    fn plan_port(&self, at: SwitchIndex, port: PortIndex) -> Result<PortPlan, BindError> {
        let mut plan = PortPlan {
            owner: None,
            p2p_request_redirect: false,
            intx_swizzle: 0,
            function_owners: Vec::new(),
            windows: Vec::new(),
        };
        // The hosts with a function below the port, and whether every function is bound to one.
        let mut hosts: Vec<usize, MAX_HOST_PORTS> = Vec::new();
        let mut every_function_bound = true;
        for function in self.functions_on(at, port) {
            let Some(binding) = function.binding else {
                every_function_bound = false;
                continue;
            };
            let si = self
                .switch_index(binding.host)
                .ok_or(BindError::NoSuchHost(binding.host))?;
            if !hosts.contains(&si) {
                // One entry per virtual switch, and there are no more of them.
                let _ = hosts.push(si);
            }
        }
        let owner_of = |si: usize| Owner {
            host: self.switches[si].host,
            proxy_id: self.switches[si].proxy_id,
        };
        match hosts.as_slice() {
            [] => return Ok(plan),
            &[si] if every_function_bound => {
                // §2.2.8.1: a downstream port swizzles by its device number;
                // the lowest slot holding a function of the port decides,
                // as it does its ACS controls.
                let switch = &self.switches[si];
                let slot = switch.downstream.iter().position(|vdsp| {
                    vdsp.bound
                        .and_then(|b| self.inventory.function(b.function))
                        .is_some_and(|f| (f.switch, f.port) == (at, port))
                });
                plan.owner = Some(owner_of(si));
                if let Some(slot) = slot {
                    plan.p2p_request_redirect = switch.downstream[slot].p2p_request_redirect();
                    plan.intx_swizzle = slot as u8;
                }
            }
            _ => {
                for function in self.functions_on(at, port) {
                    let Some(binding) = function.binding else {
                        continue;
                    };
                    let si = self
                        .switch_index(binding.host)
                        .ok_or(BindError::NoSuchHost(binding.host))?;
                    let vdsp = self.switches[si].downstream.get(usize::from(binding.slot));
                    plan.function_owners
                        .push(FunctionOwner {
                            function: function.id,
                            owner: owner_of(si),
                            p2p_request_redirect: vdsp
                                .is_some_and(|vdsp| vdsp.p2p_request_redirect()),
                            intx_swizzle: binding.slot,
                        })
                        .map_err(|_| BindError::TableFull {
                            table: "function owner",
                            capacity: FUNCTION_OWNERS_PER_PORT,
                        })?;
                }
            }
        }
        // Peers below the same port are reached through it only where it
        // returns their traffic to them.
        let returns = self.inventory.returns_peers_to(at, port);
        for &si in &hosts {
            let host = self.switches[si].host;
            for (s, p, window) in self.host_windows(si)? {
                if (s, p) == (at, port) && !returns {
                    continue;
                }
                plan.windows
                    .push((window, host))
                    .map_err(|_| BindError::TableFull {
                        table: "peer window",
                        capacity: WINDOWS_PER_PORT,
                    })?;
            }
        }
        Ok(plan)
    }

    /// Writes an endpoint port's owner, function owners, peer windows, ACS
    /// redirect and swizzle from the bindings below it.
    ///
    /// Access is revoked before it is granted: a port owner is written
    /// before the function owner entries only when it is one every
    /// function below the port is bound to, and cleared after them
    /// otherwise; windows come last, each written with its host's tag in
    /// one entry, so at every step each function reaches its own host only.
    fn program_endpoint_port<F: Fabric + ?Sized>(
        &self,
        at: SwitchIndex,
        port: PortIndex,
        buses: (u8, u8),
        fabric: &mut F,
    ) -> Result<(), BindError> {
        let plan = self.plan_port(at, port)?;
        let tables = self.plane(fabric, at)?;
        let role = PortRole::Endpoint {
            owner: plan.owner,
            buses,
        };
        if plan.owner.is_some() {
            tables.set_port_role(port, role)?;
        }
        for index in 0..FUNCTION_OWNERS_PER_PORT {
            tables.set_function_owner(port, index, plan.function_owners.get(index).copied())?;
        }
        if plan.owner.is_none() {
            tables.set_port_role(port, role)?;
        }
        for index in 0..WINDOWS_PER_PORT {
            let (window, owner) = plan
                .windows
                .get(index)
                .map_or((Window::UNUSED, None), |(w, host)| (*w, Some(*host)));
            tables.set_peer_window(port, index, window, owner)?;
        }
        tables.set_p2p_request_redirect(port, plan.p2p_request_redirect)?;
        tables.set_intx_swizzle(port, plan.intx_swizzle)?;
        Ok(())
    }
}
