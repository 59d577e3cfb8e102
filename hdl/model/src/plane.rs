//! The model as the fabric manager sees hardware: table entries written one
//! by one through [`DataPlane`], as the firmware writes the RTL's CSRs.
//!
//! Entries are kept at their indices, as the hardware tables hold them; the
//! lookup tables of [`Switch`] are rebuilt from the valid entries in index
//! order after each write, so first-match lookups see what the RTL sees.

use weft_pcie::Bdf;
use weft_regs::capacity;
use weft_regs::csr::global;
use weft_regs::tables::{
    checked_completion_timeout, checked_counter_entry, checked_intx_swizzle, AddressRoute,
    DataPlane, Destination, FunctionOwner, HostIndex, IdMapping, LinkRequest, PortIndex, PortRole,
    TableWriteError, Window,
};

use crate::switch::Switch;
use crate::tables::RouteTables;

/// The entries written so far, at their indices.
#[derive(Clone, Debug)]
pub(crate) struct Entries {
    windows: Vec<[Window; capacity::WINDOWS_PER_PORT]>,
    window_owners: Vec<[Option<HostIndex>; capacity::WINDOWS_PER_PORT]>,
    function_owners: Vec<[Option<FunctionOwner>; capacity::FUNCTION_OWNERS_PER_PORT]>,
    id_maps: Vec<[Option<IdMapping>; capacity::BOUND_FUNCTIONS_PER_HOST]>,
    addresses: [Option<AddressRoute>; capacity::ADDRESS_ROUTES],
}

impl Entries {
    pub(crate) fn new(ports: usize) -> Self {
        Entries {
            windows: vec![[Window::UNUSED; capacity::WINDOWS_PER_PORT]; ports],
            window_owners: vec![[None; capacity::WINDOWS_PER_PORT]; ports],
            function_owners: vec![[None; capacity::FUNCTION_OWNERS_PER_PORT]; ports],
            id_maps: vec![[None; capacity::BOUND_FUNCTIONS_PER_HOST]; ports],
            addresses: [None; capacity::ADDRESS_ROUTES],
        }
    }
}

fn entry<'a, T>(
    table: &'static str,
    entries: &'a mut [T],
    index: usize,
) -> Result<&'a mut T, TableWriteError> {
    entries
        .get_mut(index)
        .ok_or(TableWriteError::NoSuchEntry { table, index })
}

impl Switch {
    fn port_index(&self, port: PortIndex) -> Result<usize, TableWriteError> {
        let index = usize::from(port.0);
        if index < self.ports() {
            Ok(index)
        } else {
            Err(TableWriteError::NoSuchPort(port))
        }
    }

    fn edit_port(
        &mut self,
        port: PortIndex,
        edit: impl FnOnce(&mut crate::tables::PortTables),
    ) -> Result<(), TableWriteError> {
        let index = self.port_index(port)?;
        let mut tables = self.port_tables(port).cloned().unwrap_or_default();
        edit(&mut tables);
        let used = || {
            self.entries.windows[index]
                .iter()
                .zip(&self.entries.window_owners[index])
                .filter(|(w, _)| w.size != 0)
        };
        tables.windows = used().map(|(w, _)| *w).collect();
        tables.window_owners = used().map(|(_, owner)| *owner).collect();
        tables.function_owners = self.entries.function_owners[index]
            .iter()
            .flatten()
            .copied()
            .collect();
        tables.id_map = self.entries.id_maps[index]
            .iter()
            .flatten()
            .copied()
            .collect();
        self.set_port(port, tables)
            .expect("entries are bounded by the hardware capacities");
        Ok(())
    }

    fn edit_routes(&mut self, edit: impl FnOnce(&mut RouteTables)) {
        let mut routes = self.routes().clone();
        edit(&mut routes);
        routes.addresses = self.entries.addresses.iter().flatten().copied().collect();
        self.set_routes(routes)
            .expect("entries are bounded by the hardware capacities");
    }
}

impl DataPlane for Switch {
    fn ports(&self) -> usize {
        Switch::ports(self)
    }

    fn set_port_role(&mut self, port: PortIndex, role: PortRole) -> Result<(), TableWriteError> {
        self.port_index(port)?;
        let role = role.checked()?;
        self.edit_port(port, |tables| tables.role = role)
    }

    fn set_port_settled(&mut self, port: PortIndex, settled: bool) -> Result<(), TableWriteError> {
        self.edit_port(port, |tables| tables.settled = settled)
    }

    fn set_window(
        &mut self,
        port: PortIndex,
        index: usize,
        window: Window,
    ) -> Result<(), TableWriteError> {
        self.set_peer_window(port, index, window, None)
    }

    fn set_peer_window(
        &mut self,
        port: PortIndex,
        index: usize,
        window: Window,
        owner: Option<HostIndex>,
    ) -> Result<(), TableWriteError> {
        let p = self.port_index(port)?;
        entry("window", &mut self.entries.windows[p], index)?;
        if let Some(host) = owner {
            host.checked()?;
        }
        let window = window.checked()?;
        *entry("window", &mut self.entries.windows[p], index)? = window;
        *entry("window", &mut self.entries.window_owners[p], index)? = owner;
        self.edit_port(port, |_| ())
    }

    fn set_function_owner(
        &mut self,
        port: PortIndex,
        index: usize,
        owner: Option<FunctionOwner>,
    ) -> Result<(), TableWriteError> {
        let p = self.port_index(port)?;
        entry(
            "function owner",
            &mut self.entries.function_owners[p],
            index,
        )?;
        let owner = owner.map(FunctionOwner::checked).transpose()?;
        *entry(
            "function owner",
            &mut self.entries.function_owners[p],
            index,
        )? = owner;
        self.edit_port(port, |_| ())
    }

    fn set_id_mapping(
        &mut self,
        port: PortIndex,
        index: usize,
        mapping: Option<IdMapping>,
    ) -> Result<(), TableWriteError> {
        let p = self.port_index(port)?;
        *entry("ID map", &mut self.entries.id_maps[p], index)? = mapping;
        self.edit_port(port, |_| ())
    }

    fn set_completer_id(&mut self, port: PortIndex, id: Bdf) -> Result<(), TableWriteError> {
        self.edit_port(port, |tables| tables.completer_id = id)
    }

    fn set_p2p_request_redirect(
        &mut self,
        port: PortIndex,
        redirect: bool,
    ) -> Result<(), TableWriteError> {
        self.edit_port(port, |tables| tables.p2p_request_redirect = redirect)
    }

    fn set_return_to_ingress(
        &mut self,
        port: PortIndex,
        enable: bool,
    ) -> Result<(), TableWriteError> {
        self.edit_port(port, |tables| tables.return_to_ingress = enable)
    }

    fn set_intx_swizzle(&mut self, port: PortIndex, swizzle: u8) -> Result<(), TableWriteError> {
        self.port_index(port)?;
        let swizzle = checked_intx_swizzle(swizzle)?;
        self.edit_port(port, |tables| tables.intx_swizzle = swizzle)
    }

    fn set_address_route(
        &mut self,
        index: usize,
        route: Option<AddressRoute>,
    ) -> Result<(), TableWriteError> {
        let slot = entry("address route", &mut self.entries.addresses, index)?;
        *slot = route.map(AddressRoute::checked).transpose()?;
        self.edit_routes(|_| ());
        Ok(())
    }

    fn set_bus_route(&mut self, bus: u8, to: Option<Destination>) -> Result<(), TableWriteError> {
        self.edit_routes(|routes| routes.buses[usize::from(bus)] = to);
        Ok(())
    }

    fn abandon_requests_to(&mut self, port: PortIndex) -> Result<(), TableWriteError> {
        self.port_index(port)?;
        let completions = Switch::abandon_requests_to(self, port);
        self.synthesized.extend(completions);
        Ok(())
    }

    fn abandon_host_requests_to(
        &mut self,
        host_port: PortIndex,
        port: PortIndex,
    ) -> Result<(), TableWriteError> {
        self.port_index(host_port)?;
        self.port_index(port)?;
        let completions = Switch::abandon_host_requests_to(self, host_port, port);
        self.synthesized.extend(completions);
        Ok(())
    }

    /// Queues the request for [`Switch::take_link_requests`].
    fn request_link(
        &mut self,
        port: PortIndex,
        request: LinkRequest,
    ) -> Result<(), TableWriteError> {
        self.port_index(port)?;
        self.link_requests.push((port, request));
        Ok(())
    }

    /// The count of [`Switch::counters`] that `entry` names; the
    /// transaction-level switch never waits for a link partner, so its
    /// `STALL_CYCLES` reads 0.
    fn read_counter(&mut self, port: PortIndex, entry: u32) -> Result<u64, TableWriteError> {
        self.port_index(port)?;
        let entry = checked_counter_entry(entry)?;
        let counters = self.counters(port).expect("the port exists");
        Ok(counters
            .entry(entry)
            .expect("checked_counter_entry admits only the register map's entries"))
    }

    fn clear_counters(&mut self, port: PortIndex) -> Result<(), TableWriteError> {
        self.port_index(port)?;
        Switch::clear_counters(self, port);
        Ok(())
    }

    fn set_completion_timeout_us(&mut self, microseconds: u32) -> Result<(), TableWriteError> {
        let microseconds = match checked_completion_timeout(microseconds)? {
            0 => global::DEFAULT_COMPLETION_TIMEOUT_US,
            us => us,
        };
        self.set_completion_timeout(u64::from(microseconds) * 1_000);
        Ok(())
    }
}
