//! The switch-wide tables that follow from discovery alone, on every
//! switch of the fabric: port roles, completer IDs, whether an endpoint
//! port returns peer traffic from below it
//! ([`crate::inventory::Inventory::returns_peers_to`]), and the bus and
//! address routing tables.
//!
//! Every destination sits behind one port of one switch: the manager's
//! bus at the manager's CPU, each host's proxy bus and aperture at its
//! host port, each endpoint port's bus range and BAR ranges (one per pool,
//! since a port's BARs are placed contiguously in each pool) at that port,
//! each remote switch's management BAR at that switch.
//! Each switch routes a destination of its own out of the port it is
//! behind, and one of another switch out of the first hop of the shortest
//! path there ([`crate::paths`]); neighbouring address ranges that leave
//! by the same way share one route ([`coalesce`]). Every other bus has no
//! route (a TLP for it is dropped and, if non-posted, answered UR).
//!
//! What depends on bindings (owners, windows, ID maps) is [`crate::binding`]'s.

use weft_regs::aperture::{HOST_ADDRESS_LIMIT, HOST_APERTURE_BASE, HOST_APERTURE_SHIFT, MAX_HOSTS};
use weft_regs::{capacity, csr};

use crate::hw::{DataPlane, Fabric, TableWriteError};
use crate::inventory::{Inventory, PortKind, SwitchIndex};
use crate::limits::{MAX_HOST_PORTS, MAX_SWITCHES};
use crate::paths::NextHops;
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
    /// The fabric gives no data plane handle for a discovered switch.
    UnreachableSwitch {
        /// Its switch ID.
        switch_id: u64,
    },
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

/// A destination of the routing tables: where it is in the fabric.
fn route_to(
    paths: &NextHops,
    from: SwitchIndex,
    at: SwitchIndex,
    local: Destination,
) -> Option<Destination> {
    if from == at {
        Some(local)
    } else {
        paths.next_hop(from, at).map(Destination::Port)
    }
}

/// The completion timeout every switch is given, in microseconds: 10 ms,
/// the top of Range A (PCIe Base 6.0 §7.5.3.15, Completion Timeout Ranges
/// Supported). A host's request the fabric loses (its function unbound by
/// surprise beyond a shared fabric port) is then completed with Completer
/// Abort well before a host waiting the top of the default range (50 ms,
/// Completion Timeout Value 0000b, §7.5.3.16) gives up on it, where the
/// switch's own default, 50 ms too, would race the host.
pub const COMPLETION_TIMEOUT_US: u32 = 10_000;

/// Address routes a switch may need before [`coalesce`]: both pools of
/// every port of every switch, and every host's aperture.
const RAW_ADDRESS_ROUTES: usize = MAX_SWITCHES * capacity::PORTS * 2 + MAX_HOST_PORTS;

/// Sorts `routes` by base and merges each run of neighbours that leave by
/// the same way into one route spanning them, as a PCIe switch's bridge
/// windows aggregate what lies below a port; returns the merged routes at
/// the front of `routes`.
///
/// Routes never overlap (every BAR and aperture has its own space), so
/// after sorting no other route lies between two neighbours: a merged
/// route takes in only unassigned fabric addresses besides its parts, and
/// a TLP for those is dropped (and answered UR) by the switch it reaches,
/// as it would have been here. A remote switch's ports all leave by the
/// first hop toward it, so a fabric of sixteen switches needs about one
/// route per pool per direction beside the local ports'.
fn coalesce(routes: &mut [AddressRoute]) -> &[AddressRoute] {
    routes.sort_unstable_by_key(|route| route.base);
    let mut merged: usize = 0;
    for index in 0..routes.len() {
        let route = routes[index];
        match merged.checked_sub(1).map(|last| &mut routes[last]) {
            Some(last) if last.to == route.to => {
                last.size = route.base + route.size - last.base;
            }
            _ => {
                routes[merged] = route;
                merged += 1;
            }
        }
    }
    &routes[..merged]
}

/// Writes port roles (endpoints unowned, every port settled), completer
/// IDs, return to ingress and both routing tables of every switch in
/// `inventory`, along `inventory.paths`.
#[inline(never)]
pub fn program_fabric<F: Fabric + ?Sized>(
    inventory: &Inventory,
    settings: &FabricSettings,
    fabric: &mut F,
) -> Result<(), RouteError> {
    for index in 0..inventory.switches.len() {
        let switch = SwitchIndex(index as u8);
        let plane = inventory
            .plane(&mut *fabric, switch)
            .map_err(|switch_id| RouteError::UnreachableSwitch { switch_id })?;
        program_switch(inventory, settings, switch, plane)?;
    }
    Ok(())
}

/// Writes the tables of one switch.
fn program_switch(
    inventory: &Inventory,
    settings: &FabricSettings,
    switch: SwitchIndex,
    tables: &mut dyn DataPlane,
) -> Result<(), RouteError> {
    let paths = &inventory.paths;
    let mut buses: [Option<Destination>; capacity::BUS_ROUTES] = [None; capacity::BUS_ROUTES];
    buses[usize::from(settings.manager_id.bus())] =
        route_to(paths, switch, SwitchIndex::LOCAL, Destination::Cpu);
    let mut routes: heapless::Vec<AddressRoute, RAW_ADDRESS_ROUTES> = heapless::Vec::new();
    let full = RouteError::TooManyAddressRoutes {
        capacity: capacity::ADDRESS_ROUTES,
    };
    // Endpoint BAR ranges first, then host apertures, switch by switch.
    let mut apertures: heapless::Vec<AddressRoute, MAX_HOST_PORTS> = heapless::Vec::new();
    for (at_index, at_switch) in inventory.switches.iter().enumerate() {
        let at = SwitchIndex(at_index as u8);
        let ports = usize::from(at_switch.port_count).min(capacity::PORTS);
        for index in 0..ports {
            let port = PortIndex(index as u8);
            let Some(to) = route_to(paths, switch, at, Destination::Port(port)) else {
                continue;
            };
            match at_switch.ports[index] {
                PortKind::Empty | PortKind::Fabric { .. } => {}
                PortKind::Host { host, proxy_id } => {
                    buses[usize::from(proxy_id.bus())] = Some(to);
                    if usize::from(host.0) >= MAX_HOSTS {
                        return Err(RouteError::HostIndexTooLarge(host));
                    }
                    apertures
                        .push(AddressRoute {
                            base: aperture_base(host),
                            size: HOST_ADDRESS_LIMIT,
                            to,
                        })
                        .map_err(|_| full)?;
                }
                PortKind::Endpoint { buses: range } => {
                    for bus in range.0..=range.1 {
                        buses[usize::from(bus)] = Some(to);
                    }
                    for (base, end) in at_switch.port_ranges[index].iter().flatten() {
                        routes
                            .push(AddressRoute {
                                base: *base,
                                size: end - base,
                                to,
                            })
                            .map_err(|_| full)?;
                    }
                }
            }
        }
    }
    // Every other switch's management BAR, towards it: its tables are
    // written in-band through it ([`crate::inband`]). A switch's own is
    // taken at its ingress, before any route.
    for (at_index, at_switch) in inventory.switches.iter().enumerate() {
        let at = SwitchIndex(at_index as u8);
        let (Some(base), Some(to)) = (
            at_switch.management_bar,
            paths.next_hop(switch, at).map(Destination::Port),
        ) else {
            continue;
        };
        routes
            .push(AddressRoute {
                base,
                size: u64::from(csr::CSR_SIZE),
                to,
            })
            .map_err(|_| full)?;
    }
    for aperture in apertures {
        routes.push(aperture).map_err(|_| full)?;
    }
    let routes = coalesce(&mut routes);
    if routes.len() > capacity::ADDRESS_ROUTES {
        return Err(full);
    }
    tables.set_completion_timeout_us(COMPLETION_TIMEOUT_US)?;
    let own = &inventory.switches[usize::from(switch.0)];
    let ports = tables
        .ports()
        .min(usize::from(own.port_count))
        .min(capacity::PORTS);
    for index in 0..ports {
        let port = PortIndex(index as u8);
        let role = match own.ports[index] {
            PortKind::Empty => PortRole::Disabled,
            PortKind::Host { host, proxy_id } => PortRole::Host { host, proxy_id },
            PortKind::Endpoint { buses: range } => {
                tables.set_completer_id(port, settings.manager_id)?;
                PortRole::Endpoint {
                    owner: None,
                    buses: range,
                }
            }
            PortKind::Fabric { .. } => PortRole::Fabric,
        };
        tables.set_port_role(port, role)?;
        // Its role decided, a disabled port stops asking hosts to retry (§6.6.1).
        tables.set_port_settled(port, true)?;
        let returns =
            matches!(role, PortRole::Endpoint { .. }) && inventory.returns_peers_to(switch, port);
        tables.set_return_to_ingress(port, returns)?;
    }
    for (bus, to) in buses.iter().enumerate() {
        tables.set_bus_route(bus as u8, *to)?;
    }
    for index in 0..capacity::ADDRESS_ROUTES {
        tables.set_address_route(index, routes.get(index).copied())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(base: u64, size: u64, port: u8) -> AddressRoute {
        AddressRoute {
            base,
            size,
            to: Destination::Port(PortIndex(port)),
        }
    }

    #[test]
    fn neighbours_leaving_the_same_way_merge_across_unassigned_space() {
        let mut routes = [
            route(0x3000, 0x1000, 1),
            route(0x1000, 0x1000, 1),
            route(0x8000, 0x1000, 1),
        ];
        assert_eq!(coalesce(&mut routes), [route(0x1000, 0x8000, 1)]);
    }

    #[test]
    fn a_route_leaving_another_way_keeps_its_neighbours_apart() {
        let mut routes = [
            route(0x1000, 0x1000, 1),
            route(0x4000, 0x1000, 1),
            route(0x2000, 0x1000, 2),
            route(0x9000, 0x1000, 1),
            route(0xa000, 0x1000, 1),
        ];
        assert_eq!(
            coalesce(&mut routes),
            [
                route(0x1000, 0x1000, 1),
                route(0x2000, 0x1000, 2),
                route(0x4000, 0x7000, 1),
            ]
        );
    }

    #[test]
    fn the_cpu_and_a_port_are_different_ways() {
        let cpu = AddressRoute {
            base: 0x2000,
            size: 0x1000,
            to: Destination::Cpu,
        };
        let mut routes = [route(0x1000, 0x1000, 0), cpu];
        assert_eq!(coalesce(&mut routes), [route(0x1000, 0x1000, 0), cpu]);
    }
}
