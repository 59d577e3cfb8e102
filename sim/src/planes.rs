//! The fabric manager's handle on every switch's tables
//! (`weft_fabric::hw::Fabric`).
//!
//! The manager writes its own switch's tables through the soft core's CSR
//! bus, here on the switch's CSR window, and every other switch's
//! in-band, as the firmware does (`weft_fabric::inband`): each register
//! access is a memory request to the switch's management BAR, carried
//! through the switch and link models by the manager's configuration
//! access ([`crate::manager_config`]) and executed against the switch's
//! CSR window where it arrives.
//!
//! The manager's own switch's tables are written as the firmware writes
//! them: register by register through the switch's CSR window (weft-regs'
//! `CsrDataPlane` over weft-model's `CsrWindow`), which applies each entry
//! to the switch.
//!
//! Both share the switches through [`RefCell`]s, lent for the length of
//! one call into the manager (`lend`).

use std::cell::RefCell;

use weft_fabric::hw::{DataPlane, Fabric, RemoteSwitch, TableWriteError};
use weft_fabric::inband::InbandPlanes;
use weft_regs::driver::CsrDataPlane;
use weft_regs::tables::DataPlaneAccess;

use crate::manager_config::SharedConfig;
use crate::switch::WeftSwitch;

/// Runs `action` with `switches` shared, and puts them back after.
pub(crate) fn lend<R>(
    switches: &mut Vec<WeftSwitch>,
    action: impl FnOnce(&[RefCell<WeftSwitch>]) -> R,
) -> R {
    let shared: Vec<RefCell<WeftSwitch>> = std::mem::take(switches)
        .into_iter()
        .map(RefCell::new)
        .collect();
    let result = action(&shared);
    *switches = shared.into_iter().map(RefCell::into_inner).collect();
    result
}

/// One switch's tables as a [`DataPlane`], written on its model.
pub struct SwitchPlane<'a> {
    switch: &'a RefCell<WeftSwitch>,
}

/// The manager's own switch's data plane, and every other switch's in-band.
pub struct Planes<'c, 'a> {
    local: SwitchPlane<'a>,
    remotes: InbandPlanes<SharedConfig<'c, 'a>>,
}

impl<'c, 'a> Planes<'c, 'a> {
    /// The data planes of `switches`, whose first is the manager's; the
    /// others reached by memory requests sent through `config`.
    pub(crate) fn new(switches: &'a [RefCell<WeftSwitch>], config: SharedConfig<'c, 'a>) -> Self {
        Planes {
            // A world always has its manager's switch.
            local: SwitchPlane {
                switch: &switches[0],
            },
            remotes: InbandPlanes::new(config),
        }
    }

    /// The manager's own switch, for the board's diagnostic CSR access.
    pub fn manager_switch(&self) -> &'a RefCell<WeftSwitch> {
        self.local.switch
    }
}

impl Fabric for Planes<'_, '_> {
    fn local(&mut self) -> &mut dyn DataPlane {
        &mut self.local
    }

    fn remote(&mut self, switch: RemoteSwitch) -> Option<&mut dyn DataPlane> {
        self.remotes
            .plane(switch)
            .map(|plane| plane as &mut dyn DataPlane)
    }
}

/// Each access borrows the switch and writes through its CSR window.
impl DataPlaneAccess for SwitchPlane<'_> {
    fn port_count(&self) -> usize {
        self.switch.borrow().model().ports()
    }

    fn access<R>(
        &mut self,
        access: impl FnOnce(&mut dyn DataPlane) -> Result<R, TableWriteError>,
    ) -> Result<R, TableWriteError> {
        let mut switch = self.switch.borrow_mut();
        let mut plane = CsrDataPlane::new(switch.csr_window())
            .expect("weft-model's CSR window is a weft data plane of this register map");
        access(&mut plane)
    }
}
