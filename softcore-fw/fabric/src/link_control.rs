//! Hot reset and retraining of the manager's own switch's ports, on a
//! management request, through the data plane's link control
//! ([`weft_regs::tables::DataPlane::request_link`], the port block's LINK register).
//!
//! **Retrain** (Retrain Link, PCIe Base 6.0 §7.5.3.7): the link goes
//! through Recovery (§4.2.6.4) with its Data Link Layer up; nothing below
//! the port loses configuration and no binding changes, so the manager
//! only asks for it and logs it.
//!
//! **Hot reset** (§4.2.5.11, §4.2.7): every function below an endpoint
//! port takes a Conventional Reset (§6.6.1): BARs, Command, SR-IOV's VF
//! Enable and NumVFs return to their defaults. The manager brings the port
//! back at once, waiting as it does: host requests in flight to the port
//! are completed with an error first (the reset functions will never
//! answer them), then it waits the 100 ms of §6.6.1 before its first
//! configuration request, retries Request Retry Status up to 1 s after
//! the reset ([`crate::readiness`]), and writes back what the fabric owns,
//! with enumeration's own values and programming: each function's BARs at
//! their fabric addresses, Memory Space and Bus Master Enable
//! ([`crate::enumerate`]), and on an SR-IOV PF NumVFs, the VF BARs, VF
//! Enable and VF MSE, waiting again 100 ms before the VFs are accessed
//! (§9.3.3.3.1), each VF's Bus Master Enable. Fabric IDs need no
//! rewriting: a function captures its bus and device number from the
//! next Type 0 write it receives (§2.2.6.2), which the restoring is.
//! Bindings are kept: the data plane's tables are in fabric terms, which
//! the restored BARs match again, so the bound host's BAR windows lead
//! where they did. What the host programmed in the function itself
//! (Command's other bits, Device Control, MSI, its driver's device
//! registers) is the reset's to clear and the host's to program again, so
//! the host is told as a switch downstream port tells it that its link
//! partner was reset (a hot reset below a downstream port takes its link
//! down, §6.6.1): the virtual downstream port of every slot with a
//! function below the port bound latches Data Link Layer State Changed,
//! Link Active set again, and sends the slot's hot-plug MSI where the host
//! enabled it (§6.7.3.4, §7.5.3.11). A host's hot-plug driver then takes
//! the device away and adds it again (Linux's pciehp does so on a link
//! change under a present device), which programs it afresh.
//!
//! The wait blocks the caller (at least 100 ms, 200 ms with VFs): the
//! protocol's background operations serve unbinds only, and the manager
//! answers no host meanwhile, as during enumeration.
//!
//! Refused, with nothing sent: a host port
//! ([`LinkControlError::HostPort`]: it is the switch's upstream side of
//! that host's link, where Retrain Link and hot reset do not apply,
//! §7.5.3.7), a hot reset of a fabric port ([`LinkControlError::FabricPort`]:
//! it would reset the neighbouring switch's management function, which the
//! manager discovered once and does not discover again), and a hot reset of
//! a port with a conventional switch or bridge below
//! ([`LinkControlError::BridgeBelow`]: its bus numbers and windows are not
//! written back). A port with nothing found on it is retrained or reset
//! with nothing to restore.

use weft_pcie::config::bar::{assign_bar, DecodedBar};
use weft_pcie::config::header::type0;
use weft_pcie::config::sriov::{self, control};
use weft_pcie::config::walk::find_extended_capability;
use weft_pcie::config::{ext_cap_id, ConfigWrite};
use weft_pcie::Bdf;
use weft_regs::tables::{LinkRequest, PortIndex, TableWriteError};

use crate::enumerate::{enable_decode, read, EnumerationError};
use crate::events::Event;
use crate::hw::{Fabric, FabricConfig, FunctionAccess, HostInterface, HostSendError, Timer};
use crate::inventory::{Binding, Function, FunctionKind, PortKind, SwitchIndex};
use crate::limits::MAX_FUNCTIONS;
use crate::management::{Hardware, NOT_READY_RETRY_MS};
use crate::manager::FabricManager;
use crate::port_control::PortControlError;
use crate::readiness::{read_when_ready, READINESS_TIMEOUT_NS, RESET_TO_FIRST_REQUEST_NS};

/// Why a port's link could not be retrained or reset, or its functions
/// not brought back after a hot reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkControlError {
    /// The fabric is not enumerated yet.
    NotReady,
    /// The manager's switch has no such port.
    NoSuchPort(PortIndex),
    /// The port is a host's link, the switch's upstream side of it.
    HostPort {
        /// The port.
        port: PortIndex,
        /// The host on it.
        host: weft_regs::tables::HostIndex,
    },
    /// A hot reset of a link to another weft switch.
    FabricPort(PortIndex),
    /// A hot reset of a port with a conventional switch or bridge below.
    BridgeBelow {
        /// The port.
        port: PortIndex,
        /// The first bridge found below it.
        bridge: Bdf,
    },
    /// The data plane refused the request.
    Table(TableWriteError),
    /// The hot-plug MSI telling a bound host could not be sent.
    HostSend(HostSendError),
    /// A function below the port did not come back after the hot reset:
    /// it answered Unsupported Request, kept answering Request Retry
    /// Status, or a configuration write failed.
    Restore(EnumerationError),
}

impl From<TableWriteError> for LinkControlError {
    fn from(error: TableWriteError) -> Self {
        LinkControlError::Table(error)
    }
}

impl From<EnumerationError> for LinkControlError {
    fn from(error: EnumerationError) -> Self {
        LinkControlError::Restore(error)
    }
}

impl FabricManager {
    /// What sits behind `port` of the manager's own switch, once the
    /// fabric is enumerated.
    fn link_port<F: Fabric + ?Sized>(
        &self,
        port: PortIndex,
        fabric: &mut F,
    ) -> Result<PortKind, LinkControlError> {
        self.local_port(port, fabric).map_err(|error| match error {
            PortControlError::NoSuchPort(port) => LinkControlError::NoSuchPort(port),
            // The only other refusal of local_port.
            _ => LinkControlError::NotReady,
        })
    }

    /// Retrains the link of `port` of the manager's own switch (§7.5.3.7)
    /// and logs it; refused on a host port.
    pub fn retrain_port<F: Fabric + ?Sized>(
        &mut self,
        port: PortIndex,
        fabric: &mut F,
    ) -> Result<(), LinkControlError> {
        if let PortKind::Host { host, .. } = self.link_port(port, fabric)? {
            return Err(LinkControlError::HostPort { port, host });
        }
        fabric.local().request_link(port, LinkRequest::Retrain)?;
        self.events.record(Event::LinkControlled {
            port,
            request: LinkRequest::Retrain,
        });
        Ok(())
    }

    /// Sends a hot reset out of endpoint port `port` of the manager's own
    /// switch, logs it, and brings every function below it back as the
    /// module says, waiting on `timer`; the bindings stay, and their hosts
    /// see their slots' links go down and up.
    pub fn hot_reset_port<C, T, F, H>(
        &mut self,
        port: PortIndex,
        config: &mut C,
        timer: &mut T,
        fabric: &mut F,
        hosts: &mut H,
    ) -> Result<(), LinkControlError>
    where
        C: FabricConfig + ?Sized,
        T: Timer + ?Sized,
        F: Fabric + ?Sized,
        H: HostInterface + ?Sized,
    {
        match self.link_port(port, fabric)? {
            PortKind::Host { host, .. } => return Err(LinkControlError::HostPort { port, host }),
            PortKind::Fabric { .. } => return Err(LinkControlError::FabricPort(port)),
            PortKind::Endpoint { .. } | PortKind::Empty => {}
        }
        if let Some(bridge) = self
            .inventory
            .bridges
            .iter()
            .find(|b| b.switch == SwitchIndex::LOCAL && b.port == port)
        {
            return Err(LinkControlError::BridgeBelow {
                port,
                bridge: bridge.id,
            });
        }
        let plane = fabric.local();
        plane.request_link(port, LinkRequest::HotReset)?;
        // The reset functions will never complete what is in flight to them.
        plane.abandon_requests_to(port)?;
        let reset_at_ns = timer.now_ns();
        self.events.record(Event::LinkControlled {
            port,
            request: LinkRequest::HotReset,
        });
        // §6.6.1: no Configuration Request within 100 ms of the reset.
        timer.wait_until_ns(reset_at_ns.saturating_add(RESET_TO_FIRST_REQUEST_NS));
        let deadline = reset_at_ns.saturating_add(READINESS_TIMEOUT_NS);
        let below = |f: &Function| f.switch == SwitchIndex::LOCAL && f.port == port;
        let mut lowest = true;
        for index in 0..self.inventory.functions.len() {
            let function = &self.inventory.functions[index];
            if !below(function) || function.kind != FunctionKind::Physical {
                continue;
            }
            restore_function(self, index, lowest, config, timer, deadline)?;
            lowest = false;
        }
        self.tell_hosts_the_link_bounced(port, hosts)
    }

    /// Shows every host with a function below `port` bound that its
    /// slot's link went down and up (Data Link Layer State Changed), with
    /// the hot-plug MSI where the host enabled it, once per slot.
    fn tell_hosts_the_link_bounced<H: HostInterface + ?Sized>(
        &mut self,
        port: PortIndex,
        hosts: &mut H,
    ) -> Result<(), LinkControlError> {
        let mut told: heapless::Vec<Binding, MAX_FUNCTIONS> = heapless::Vec::new();
        for index in 0..self.inventory.functions.len() {
            let function = &self.inventory.functions[index];
            let Some(binding) = function.binding else {
                continue;
            };
            if function.switch != SwitchIndex::LOCAL
                || function.port != port
                || told.contains(&binding)
            {
                continue;
            }
            // One entry per function at most: `told` has their capacity.
            let _ = told.push(binding);
            let Some(si) = self.switch_index(binding.host) else {
                continue;
            };
            let switch = &mut self.switches[si];
            let requester = switch.downstream_id(binding.slot);
            let (switch_id, host_port, host) = (switch.switch_id, switch.port, switch.host);
            let Some(vdsp) = switch.downstream.get_mut(usize::from(binding.slot)) else {
                continue;
            };
            if let Some(message) = vdsp.link_bounced() {
                hosts
                    .send_msi(switch_id, host_port, requester, message)
                    .map_err(LinkControlError::HostSend)?;
                self.events.record(Event::HotPlugSent {
                    host,
                    slot: binding.slot,
                    present: true,
                });
            }
        }
        Ok(())
    }
}

/// Brings the physical function at inventory index `index` back after a
/// Conventional Reset, with its VFs; `lowest` when it is the port's first
/// PF, the one ARI Capable Hierarchy is set in (§9.3.3.3.5).
fn restore_function<C, T>(
    manager: &FabricManager,
    index: usize,
    lowest: bool,
    config: &mut C,
    timer: &mut T,
    deadline_ns: u64,
) -> Result<(), EnumerationError>
where
    C: FabricConfig + ?Sized,
    T: Timer + ?Sized,
{
    let inventory = &manager.inventory;
    let function = &inventory.functions[index];
    let id = function.id;
    let path = inventory.path_to(function);
    answer_after_reset(config, timer, path, id, deadline_ns)?;
    let mut access = FunctionAccess {
        config: &mut *config,
        path,
        target: id,
    };
    for bar in &function.bars {
        let Some(address) = bar.fabric_address() else {
            continue;
        };
        let decoded = DecodedBar {
            register: bar.register(),
            bar: bar.bar(),
            address: 0,
        };
        assign_bar(&mut access, &decoded, address)
            .map_err(|error| EnumerationError::BarAssignment { id, error })?;
    }
    enable_decode(&mut access, &function.bars)?;
    let Some(setup) = function.sriov.filter(|s| s.num_vfs > 0) else {
        return Ok(());
    };
    // The order of enumeration's SR-IOV setup (crate::sriov): ARI Capable
    // Hierarchy and NumVFs with VF Enable clear, the VF BARs, then VF
    // Enable and VF MSE.
    let ari = find_extended_capability(&mut access, ext_cap_id::ARI)
        .map_err(|error| EnumerationError::CapabilityWalk { id, error })?;
    let mut control_bits = read(&mut access, setup.offset + sriov::CONTROL)? as u16;
    control_bits &= !(control::VF_ENABLE | control::VF_MEMORY_SPACE_ENABLE);
    if lowest && ari.is_some() && function.bridge.is_none() {
        control_bits |= control::ARI_CAPABLE_HIERARCHY;
    }
    let write16 = |access: &mut FunctionAccess<'_, C>, at: u16, value: u16| {
        access
            .write_dword(at, u32::from(value), 0b0011)
            .map_err(|fault| EnumerationError::Config { id, fault })
    };
    write16(&mut access, setup.offset + sriov::CONTROL, control_bits)?;
    write16(&mut access, setup.offset + sriov::NUM_VFS, setup.num_vfs)?;
    let vfs = || {
        inventory
            .functions
            .iter()
            .filter(move |f| matches!(f.kind, FunctionKind::Virtual { pf, .. } if pf == id))
    };
    // VF 1's BARs are the starts of the VF BAR regions (crate::sriov).
    if let Some(first) = vfs().find(|f| matches!(f.kind, FunctionKind::Virtual { vf: 1, .. })) {
        for bar in &first.bars {
            let Some(address) = bar.fabric_address() else {
                continue;
            };
            let decoded = DecodedBar {
                register: setup.offset + sriov::VF_BAR0 + (bar.register() - type0::BAR0),
                bar: bar.bar(),
                address: 0,
            };
            assign_bar(&mut access, &decoded, address)
                .map_err(|error| EnumerationError::BarAssignment { id, error })?;
        }
    }
    control_bits |= control::VF_ENABLE | control::VF_MEMORY_SPACE_ENABLE;
    write16(&mut access, setup.offset + sriov::CONTROL, control_bits)?;
    // §9.3.3.3.1: wait 100 ms after VF Enable before accessing the VFs.
    let enabled_at = timer.now_ns();
    timer.wait_until_ns(enabled_at.saturating_add(RESET_TO_FIRST_REQUEST_NS));
    let vf_deadline = enabled_at.saturating_add(READINESS_TIMEOUT_NS);
    for vf in vfs() {
        let path = inventory.path_to(vf);
        answer_after_reset(config, timer, path, vf.id, vf_deadline)?;
        let mut access = FunctionAccess {
            config: &mut *config,
            path,
            target: vf.id,
        };
        // A VF's Memory Space Enable is its PF's VF MSE (§9.3.4.1.3).
        enable_decode(&mut access, &[])?;
    }
    Ok(())
}

/// Waits for function `id` to answer after a reset, as enumeration does
/// ([`read_when_ready`]); a function that answers Unsupported Request is gone.
fn answer_after_reset<C, T>(
    config: &mut C,
    timer: &mut T,
    path: crate::hw::ConfigPath,
    id: Bdf,
    deadline_ns: u64,
) -> Result<(), EnumerationError>
where
    C: FabricConfig + ?Sized,
    T: Timer + ?Sized,
{
    match read_when_ready(config, timer, path, id, 0, deadline_ns) {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(EnumerationError::Config {
            id,
            fault: crate::hw::ConfigFault::UnsupportedRequest,
        }),
        Err(error) => Err(EnumerationError::Readiness(error)),
    }
}

/// The management protocol's action for `request`.
pub fn wire_action(request: LinkRequest) -> weft_proto::PortAction {
    match request {
        LinkRequest::HotReset => weft_proto::PortAction::HotReset,
        LinkRequest::Retrain => weft_proto::PortAction::Retrain,
    }
}

impl LinkControlError {
    /// The management protocol's error for this one, on `port`; the
    /// refusals the protocol has no closer word for are
    /// [`weft_proto::Error::Unsupported`] ("not here").
    pub fn to_wire(self, port: weft_proto::PortIndex, retry_after_ms: u32) -> weft_proto::Error {
        use weft_proto::Error;
        match self {
            LinkControlError::NotReady => Error::Busy { retry_after_ms },
            LinkControlError::NoSuchPort(_) => Error::NoSuchPort { port },
            LinkControlError::HostPort { host, .. } => Error::HostPort {
                port,
                host: weft_proto::HostIndex(u8::try_from(host.0).unwrap_or(u8::MAX)),
            },
            LinkControlError::HostSend(_) => Error::Busy { retry_after_ms },
            LinkControlError::FabricPort(_)
            | LinkControlError::BridgeBelow { .. }
            | LinkControlError::Table(_) => Error::Unsupported,
            LinkControlError::Restore(error) => restore_error(error),
        }
    }
}

/// The function that did not come back, and how its configuration
/// request completed; a failure that is not a completion (none expected
/// once enumeration placed the same values) is [`weft_proto::Error::Unsupported`].
fn restore_error(error: EnumerationError) -> weft_proto::Error {
    use crate::hw::ConfigFault;
    use crate::readiness::ReadinessError;
    use weft_pcie::config::bar::BarAssignError;
    use weft_pcie::config::WalkError;
    use weft_proto::CompletionStatus;
    let (id, fault) = match error {
        EnumerationError::Config { id, fault }
        | EnumerationError::BarAssignment {
            id,
            error: BarAssignError::Access(fault),
        }
        | EnumerationError::CapabilityWalk {
            id,
            error: WalkError::Access(fault),
        }
        | EnumerationError::Readiness(ReadinessError::Fault { id, fault, .. }) => (id, fault),
        EnumerationError::Readiness(ReadinessError::NotReady { id, .. }) => {
            (id, ConfigFault::RequestRetry)
        }
        _ => return weft_proto::Error::Unsupported,
    };
    let status = match fault {
        ConfigFault::UnsupportedRequest | ConfigFault::NoSuchPort(_) => {
            CompletionStatus::UnsupportedRequest
        }
        ConfigFault::RequestRetry => CompletionStatus::RetryStatus,
        ConfigFault::CompleterAbort => CompletionStatus::CompleterAbort,
        ConfigFault::Timeout => CompletionStatus::Timeout,
    };
    weft_proto::Error::ConfigAccessFailed {
        fabric_id: weft_proto::FabricId::from(id),
        status,
    }
}

/// Answers `PortControl` with `HotReset` or `Retrain` on `port`:
/// [`weft_proto::Error::Unsupported`] for a hot reset on a board that
/// gives no timer ([`Hardware::timer`]) and for an action that is not a
/// link's.
pub fn answer<C, F, H, L, B>(
    manager: &mut FabricManager,
    port: weft_proto::PortIndex,
    action: weft_proto::PortAction,
    hardware: Hardware<'_, C, F, H, L, B>,
) -> Result<(), weft_proto::Error>
where
    C: FabricConfig + ?Sized,
    F: Fabric + ?Sized,
    H: HostInterface + ?Sized,
    L: ?Sized,
    B: ?Sized,
{
    use weft_proto::PortAction;
    let local = PortIndex(port.0);
    let done = match (action, hardware.timer) {
        (PortAction::Retrain, _) => manager.retrain_port(local, hardware.fabric),
        (PortAction::HotReset, Some(timer)) => manager.hot_reset_port(
            local,
            hardware.config,
            timer,
            hardware.fabric,
            hardware.hosts,
        ),
        (PortAction::HotReset, None) | (PortAction::Enable | PortAction::Disable, _) => {
            return Err(weft_proto::Error::Unsupported)
        }
    };
    done.map_err(|error| error.to_wire(port, NOT_READY_RETRY_MS))
}
