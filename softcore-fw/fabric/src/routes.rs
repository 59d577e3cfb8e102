//! The switch-wide tables that follow from enumeration alone: port roles,
//! completer IDs, and the bus and address routing tables.
//!
//! - Bus routes: the manager's bus to the CPU, each host's proxy bus to its
//!   port, each endpoint port's bus range to that port; every other bus
//!   has no route (a TLP for it is dropped and, if non-posted, answered UR).
//! - Address routes: each endpoint port's BAR ranges (one per pool, since
//!   a port's BARs are placed contiguously in each pool) to that port, then
//!   each host's aperture to its port.
//!
//! What depends on bindings (owners, windows, ID maps) is [`crate::binding`]'s.

use weft_regs::aperture::{HOST_ADDRESS_LIMIT, HOST_APERTURE_BASE, HOST_APERTURE_SHIFT, MAX_HOSTS};
use weft_regs::capacity;

use crate::hw::{DataPlane, TableWriteError};
use crate::inventory::{Inventory, PortKind};
use crate::settings::FabricSettings;
use weft_regs::tables::{AddressRoute, Destination, HostIndex, PortIndex, PortRole};

/// Why the switch-wide tables could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteError {
    /// A table write failed.
    Table(TableWriteError),
    /// More address routes than the table holds.
    TooManyAddressRoutes {
        /// `weft_regs::capacity::ADDRESS_ROUTES`.
        capacity: usize,
    },
    /// A host index with no aperture (`weft_regs::aperture::MAX_HOSTS`).
    HostIndexTooLarge(HostIndex),
}

impl From<TableWriteError> for RouteError {
    fn from(error: TableWriteError) -> Self {
        RouteError::Table(error)
    }
}

/// The fabric address of host `host`'s address 0.
pub const fn aperture_base(host: HostIndex) -> u64 {
    HOST_APERTURE_BASE | (host.0 as u64) << HOST_APERTURE_SHIFT
}

/// Writes port roles (endpoints unowned), completer IDs and both routing tables.
pub fn program_fabric<D: DataPlane + ?Sized>(
    inventory: &Inventory,
    settings: &FabricSettings,
    tables: &mut D,
) -> Result<(), RouteError> {
    let ports = tables.ports().min(capacity::PORTS);
    let mut buses: [Option<Destination>; capacity::BUS_ROUTES] = [None; capacity::BUS_ROUTES];
    buses[usize::from(settings.manager_id.bus())] = Some(Destination::Cpu);
    let mut routes: heapless::Vec<AddressRoute, { capacity::ADDRESS_ROUTES }> =
        heapless::Vec::new();
    let full = RouteError::TooManyAddressRoutes {
        capacity: capacity::ADDRESS_ROUTES,
    };
    for index in 0..ports {
        let port = PortIndex(index as u8);
        let role = match inventory.ports[index] {
            PortKind::Empty => PortRole::Disabled,
            PortKind::Host { host, proxy_id } => {
                buses[usize::from(proxy_id.bus())] = Some(Destination::Port(port));
                PortRole::Host { host, proxy_id }
            }
            PortKind::Endpoint { buses: range } => {
                for bus in range.0..=range.1 {
                    buses[usize::from(bus)] = Some(Destination::Port(port));
                }
                for (base, end) in inventory.port_ranges[index].iter().flatten() {
                    routes
                        .push(AddressRoute {
                            base: *base,
                            size: end - base,
                            to: Destination::Port(port),
                        })
                        .map_err(|_| full)?;
                }
                tables.set_completer_id(port, settings.manager_id)?;
                PortRole::Endpoint {
                    owner: None,
                    buses: range,
                }
            }
            PortKind::Fabric { .. } => PortRole::Fabric,
        };
        tables.set_port_role(port, role)?;
    }
    for index in 0..ports {
        if let PortKind::Host { host, .. } = inventory.ports[index] {
            if usize::from(host.0) >= MAX_HOSTS {
                return Err(RouteError::HostIndexTooLarge(host));
            }
            routes
                .push(AddressRoute {
                    base: aperture_base(host),
                    size: HOST_ADDRESS_LIMIT,
                    to: Destination::Port(PortIndex(index as u8)),
                })
                .map_err(|_| full)?;
        }
    }
    for (bus, to) in buses.iter().enumerate() {
        tables.set_bus_route(bus as u8, *to)?;
    }
    for index in 0..capacity::ADDRESS_ROUTES {
        tables.set_address_route(index, routes.get(index).copied())?;
    }
    Ok(())
}
