//! Taking the manager's own switch's ports out of service and back, on a
//! management request.
//!
//! A port is disabled through the data plane's port ENABLE: its role is
//! written as [`PortRole::Disabled`] (`weft_regs::csr::port`'s CONTROL
//! with ENABLE clear), so every TLP arriving on it is dropped and counted
//! as `DROP_PORT_DISABLED`. Enabling it writes back the role its kind in
//! the inventory gives it, as [`crate::routes::program_fabric`] does. The
//! link itself stays up: Link Disable belongs to the board's LTSSM, which
//! the manager's traits do not reach (hot reset and retraining do go to
//! it, through the data plane's LINK register: [`crate::link_control`]).
//!
//! Only what leaves the fabric intact is done:
//! - a host port is never disabled ([`PortControlError::HostPort`]): its
//!   host would lose every function bound to it;
//! - an endpoint port is disabled only while nothing below it is bound
//!   ([`PortControlError::Bound`]; unbind first);
//! - a fabric port is disabled only while no function of another switch
//!   is bound, since bindings across the fabric may run over that link;
//! - while a port is disabled, no function below it (for a fabric port:
//!   of another switch) can be bound ([`FabricManager::check_port_enabled`]).
//!
//! An empty port is always disabled in the data plane; enabling or
//! disabling it only records the request. [`FabricManager::start`] enables
//! every port again, as it programs every role.

use weft_regs::capacity;
use weft_regs::tables::{PortIndex, PortRole};

use crate::events::Event;
use crate::hw::{Fabric, TableWriteError};
use crate::inventory::{Binding, PortKind, SwitchIndex};
use crate::manager::FabricManager;

/// Why a port could not be enabled or disabled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortControlError {
    /// The fabric is not enumerated yet, so the port's kind is unknown.
    NotReady,
    /// The manager's switch has no such port.
    NoSuchPort(PortIndex),
    /// The port is a host's link; disabling it would cut the host off.
    HostPort {
        /// The port.
        port: PortIndex,
        /// The host on it.
        host: weft_regs::tables::HostIndex,
    },
    /// A function whose traffic crosses the port is bound: unbind it first.
    Bound {
        /// The function.
        function: weft_pcie::Bdf,
        /// Where it is bound.
        binding: Binding,
    },
    /// The data plane refused the role write.
    Table(TableWriteError),
}

impl From<TableWriteError> for PortControlError {
    fn from(error: TableWriteError) -> Self {
        PortControlError::Table(error)
    }
}

impl FabricManager {
    /// Whether `port` of the manager's own switch was disabled by
    /// [`FabricManager::disable_port`] and not enabled since.
    pub fn is_port_disabled(&self, port: PortIndex) -> bool {
        usize::from(port.0) < capacity::PORTS && self.disabled_ports & (1 << port.0) != 0
    }

    /// Disables `port` of the manager's own switch, if nothing bound
    /// depends on it (see the module's rules), and logs it. Disabling a
    /// disabled port changes nothing and logs nothing.
    pub fn disable_port<F: Fabric + ?Sized>(
        &mut self,
        port: PortIndex,
        fabric: &mut F,
    ) -> Result<(), PortControlError> {
        let kind = self.local_port(port, fabric)?;
        if self.is_port_disabled(port) {
            return Ok(());
        }
        match kind {
            PortKind::Host { host, .. } => return Err(PortControlError::HostPort { port, host }),
            PortKind::Endpoint { .. } => {
                self.refuse_if_bound(|f| f.switch == SwitchIndex::LOCAL && f.port == port)?
            }
            PortKind::Fabric { .. } => self.refuse_if_bound(|f| f.switch != SwitchIndex::LOCAL)?,
            PortKind::Empty => {}
        }
        fabric.local().set_port_role(port, PortRole::Disabled)?;
        self.disabled_ports |= 1 << port.0;
        self.events.record(Event::PortControlled {
            port,
            enabled: false,
        });
        Ok(())
    }

    /// Enables `port` of the manager's own switch again in the role its
    /// kind gives it, and logs it. Enabling a port that is not disabled
    /// changes nothing and logs nothing.
    pub fn enable_port<F: Fabric + ?Sized>(
        &mut self,
        port: PortIndex,
        fabric: &mut F,
    ) -> Result<(), PortControlError> {
        let kind = self.local_port(port, fabric)?;
        if !self.is_port_disabled(port) {
            return Ok(());
        }
        let role = match kind {
            // Nothing below a disabled port is bound (disable_port and
            // check_port_enabled see to it), so it has no owner.
            PortKind::Endpoint { buses } => PortRole::Endpoint { owner: None, buses },
            PortKind::Fabric { .. } => PortRole::Fabric,
            PortKind::Host { host, proxy_id } => PortRole::Host { host, proxy_id },
            PortKind::Empty => PortRole::Disabled,
        };
        fabric.local().set_port_role(port, role)?;
        self.disabled_ports &= !(1 << port.0);
        self.events.record(Event::PortControlled {
            port,
            enabled: true,
        });
        Ok(())
    }

    /// `Err(port)` if binding a function below `port` of `switch` would
    /// run over a port of the manager's switch that is disabled: that port
    /// itself, or for a function of another switch any fabric port.
    pub fn check_port_enabled(
        &self,
        switch: SwitchIndex,
        port: PortIndex,
    ) -> Result<(), PortIndex> {
        if switch == SwitchIndex::LOCAL {
            return if self.is_port_disabled(port) {
                Err(port)
            } else {
                Ok(())
            };
        }
        let local = &self.inventory.switches[usize::from(SwitchIndex::LOCAL.0)];
        (0..local.port_count)
            .map(PortIndex)
            .find(|p| {
                matches!(local.port(*p), PortKind::Fabric { .. }) && self.is_port_disabled(*p)
            })
            .map_or(Ok(()), Err)
    }

    /// The kind of `port` of the manager's own switch, if the fabric is
    /// enumerated and the switch has the port.
    pub(crate) fn local_port<F: Fabric + ?Sized>(
        &self,
        port: PortIndex,
        fabric: &mut F,
    ) -> Result<PortKind, PortControlError> {
        if !self.ready {
            return Err(PortControlError::NotReady);
        }
        let local = &self.inventory.switches[usize::from(SwitchIndex::LOCAL.0)];
        if usize::from(port.0) >= fabric.local().ports().min(usize::from(local.port_count)) {
            return Err(PortControlError::NoSuchPort(port));
        }
        Ok(local.port(port))
    }

    /// [`PortControlError::Bound`] naming the first bound function that `depends` selects.
    fn refuse_if_bound(
        &self,
        depends: impl Fn(&crate::inventory::Function) -> bool,
    ) -> Result<(), PortControlError> {
        match self
            .inventory
            .functions
            .iter()
            .filter(|f| depends(f))
            .find_map(|f| f.binding.map(|binding| (f.id, binding)))
        {
            Some((function, binding)) => Err(PortControlError::Bound { function, binding }),
            None => Ok(()),
        }
    }
}
