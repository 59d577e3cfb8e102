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
use weft_pcie::Bdf;
use weft_regs::driver::CsrDataPlane;
use weft_regs::tables::{
    AddressRoute, Destination, FunctionOwner, HostIndex, IdMapping, LinkRequest, PortIndex,
    PortRole, Window,
};

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

impl SwitchPlane<'_> {
    fn with<R>(&self, write: impl FnOnce(&mut dyn DataPlane) -> R) -> R {
        let mut switch = self.switch.borrow_mut();
        let mut plane = CsrDataPlane::new(switch.csr_window())
            .expect("weft-model's CSR window is a weft data plane of this register map");
        write(&mut plane)
    }
}

impl DataPlane for SwitchPlane<'_> {
    fn ports(&self) -> usize {
        self.switch.borrow().model().ports()
    }

    fn set_port_role(&mut self, port: PortIndex, role: PortRole) -> Result<(), TableWriteError> {
        self.with(|plane| plane.set_port_role(port, role))
    }

    fn set_window(
        &mut self,
        port: PortIndex,
        index: usize,
        window: Window,
    ) -> Result<(), TableWriteError> {
        self.with(|plane| plane.set_window(port, index, window))
    }

    fn set_peer_window(
        &mut self,
        port: PortIndex,
        index: usize,
        window: Window,
        owner: Option<HostIndex>,
    ) -> Result<(), TableWriteError> {
        self.with(|plane| plane.set_peer_window(port, index, window, owner))
    }

    fn set_function_owner(
        &mut self,
        port: PortIndex,
        index: usize,
        entry: Option<FunctionOwner>,
    ) -> Result<(), TableWriteError> {
        self.with(|plane| plane.set_function_owner(port, index, entry))
    }

    fn set_id_mapping(
        &mut self,
        port: PortIndex,
        index: usize,
        mapping: Option<IdMapping>,
    ) -> Result<(), TableWriteError> {
        self.with(|plane| plane.set_id_mapping(port, index, mapping))
    }

    fn set_completer_id(&mut self, port: PortIndex, id: Bdf) -> Result<(), TableWriteError> {
        self.with(|plane| plane.set_completer_id(port, id))
    }

    fn set_p2p_request_redirect(
        &mut self,
        port: PortIndex,
        redirect: bool,
    ) -> Result<(), TableWriteError> {
        self.with(|plane| plane.set_p2p_request_redirect(port, redirect))
    }

    fn set_return_to_ingress(
        &mut self,
        port: PortIndex,
        enable: bool,
    ) -> Result<(), TableWriteError> {
        self.with(|plane| plane.set_return_to_ingress(port, enable))
    }

    fn set_intx_swizzle(&mut self, port: PortIndex, swizzle: u8) -> Result<(), TableWriteError> {
        self.with(|plane| plane.set_intx_swizzle(port, swizzle))
    }

    fn set_address_route(
        &mut self,
        index: usize,
        route: Option<AddressRoute>,
    ) -> Result<(), TableWriteError> {
        self.with(|plane| plane.set_address_route(index, route))
    }

    fn set_bus_route(&mut self, bus: u8, to: Option<Destination>) -> Result<(), TableWriteError> {
        self.with(|plane| plane.set_bus_route(bus, to))
    }

    fn abandon_requests_to(&mut self, port: PortIndex) -> Result<(), TableWriteError> {
        self.with(|plane| plane.abandon_requests_to(port))
    }

    fn abandon_host_requests_to(
        &mut self,
        host_port: PortIndex,
        port: PortIndex,
    ) -> Result<(), TableWriteError> {
        self.with(|plane| plane.abandon_host_requests_to(host_port, port))
    }

    fn request_link(
        &mut self,
        port: PortIndex,
        request: LinkRequest,
    ) -> Result<(), TableWriteError> {
        self.with(|plane| plane.request_link(port, request))
    }

    fn read_counter(&mut self, port: PortIndex, entry: u32) -> Result<u64, TableWriteError> {
        self.with(|plane| plane.read_counter(port, entry))
    }

    fn clear_counters(&mut self, port: PortIndex) -> Result<(), TableWriteError> {
        self.with(|plane| plane.clear_counters(port))
    }
}
