//! The tables the fabric manager programs into a switch, as the data plane reads them.

use weft_pcie::Bdf;
use weft_regs::capacity;
pub use weft_regs::tables::{
    AddressRoute, Destination, FunctionOwner, HostIndex, IdMapping, Owner, Permissions, PortIndex,
    PortRole, Window,
};

/// Everything programmed for one port.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PortTables {
    /// The port's role.
    pub role: PortRole,
    /// The fabric manager has settled the role: until then a disabled port
    /// answers Configuration Requests with Request Retry Status (§2.3.1,
    /// §6.6.1) instead of dropping them unanswered.
    pub settled: bool,
    /// Address windows (see [`Window`]), up to [`capacity::WINDOWS_PER_PORT`].
    pub windows: Vec<Window>,
    /// Endpoint ports: the owner host each of `windows` serves, by position
    /// (`window_owners[i]` tags `windows[i]`); `None`, or no tag at all
    /// past the end, means the port's own owner. Host ports ignore it.
    pub window_owners: Vec<Option<HostIndex>>,
    /// Endpoint ports: functions bound on their own, looked up by requester
    /// ID before the port's owner, up to [`capacity::FUNCTION_OWNERS_PER_PORT`];
    /// the first match wins.
    pub function_owners: Vec<FunctionOwner>,
    /// Host ports: the functions bound to this host, up to [`capacity::BOUND_FUNCTIONS_PER_HOST`].
    pub id_map: Vec<IdMapping>,
    /// The completer ID of completions this port synthesizes, in the domain
    /// of the port's link partner (for a host port, its virtual upstream port's ID).
    pub completer_id: Bdf,
    /// Endpoint ports: ACS P2P Request Redirect, set by the owner host on the
    /// virtual downstream port (§7.7.11.3). Peer requests then go up to the
    /// host instead of across the fabric.
    pub p2p_request_redirect: bool,
    /// Endpoint ports: a request or completion from below that routes back
    /// to this port is sent back out of it, as a root port returns peer
    /// traffic a conventional switch's downstream ports redirected up
    /// (ACS P2P Request and Completion Redirect, §6.12.1.1, §7.7.11);
    /// while clear it is dropped as [`crate::DropReason::RoutesToIngress`].
    pub return_to_ingress: bool,
    /// Endpoint ports: the virtual device number of the slot, which swizzles
    /// INTx as a switch's downstream port does (§2.2.8.1, Table 2-21).
    pub intx_swizzle: u8,
}

/// What an endpoint port's ingress applies to one requester: its owner
/// and its owner's slot's controls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ownership {
    /// The owner host; `None` for a function bound to no host.
    pub owner: Option<Owner>,
    /// ACS P2P Request Redirect of the owner's slot (§7.7.11.3).
    pub p2p_request_redirect: bool,
    /// The slot's device number, which swizzles INTx (§2.2.8.1).
    pub intx_swizzle: u8,
}

impl PortTables {
    /// The owner of the function `requester` below this endpoint port: its
    /// function owner entry if it has one, else the port's owner.
    pub fn ownership(&self, requester: Bdf) -> Ownership {
        if let Some(entry) = self
            .function_owners
            .iter()
            .find(|entry| entry.function == requester)
        {
            return Ownership {
                owner: Some(entry.owner),
                p2p_request_redirect: entry.p2p_request_redirect,
                intx_swizzle: entry.intx_swizzle,
            };
        }
        let owner = match self.role {
            PortRole::Endpoint { owner, .. } => owner,
            _ => None,
        };
        Ownership {
            owner,
            p2p_request_redirect: self.p2p_request_redirect,
            intx_swizzle: self.intx_swizzle,
        }
    }

    /// The windows of this endpoint port that serve `host`'s functions, in entry order.
    pub fn windows_of(&self, host: HostIndex) -> Vec<Window> {
        let port_owner = match self.role {
            PortRole::Endpoint { owner, .. } => owner.map(|o| o.host),
            _ => None,
        };
        self.windows
            .iter()
            .enumerate()
            .filter(|(index, _)| {
                let tag = self.window_owners.get(*index).copied().flatten();
                tag.or(port_owner) == Some(host)
            })
            .map(|(_, window)| *window)
            .collect()
    }
}

/// The switch-wide routing tables: fabric terms in, destination out.
///
/// Routing is by table, not by topology: the fabric manager computes loop-free
/// paths and writes every switch's tables, so any graph of switches works.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteTables {
    /// Address ranges, up to [`capacity::ADDRESS_ROUTES`]; the first match wins.
    pub addresses: Vec<AddressRoute>,
    /// Destination of each fabric bus number ([`capacity::BUS_ROUTES`] entries).
    pub buses: [Option<Destination>; capacity::BUS_ROUTES],
}

impl Default for RouteTables {
    fn default() -> Self {
        RouteTables {
            addresses: Vec::new(),
            buses: [None; capacity::BUS_ROUTES],
        }
    }
}

impl RouteTables {
    /// Where an address-routed TLP for `address` goes.
    pub fn by_address(&self, address: u64) -> Option<Destination> {
        self.addresses
            .iter()
            .find(|route| {
                address
                    .checked_sub(route.base)
                    .is_some_and(|offset| offset < route.size)
            })
            .map(|route| route.to)
    }

    /// Where an ID-routed TLP for `id` goes.
    pub fn by_id(&self, id: Bdf) -> Option<Destination> {
        self.buses[usize::from(id.bus())]
    }
}

/// Why a table could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableError {
    /// The port does not exist.
    NoSuchPort(PortIndex),
    /// More entries than the hardware table holds.
    TooManyEntries {
        /// Which table.
        table: &'static str,
        /// Entries given.
        given: usize,
        /// Entries the table holds.
        capacity: usize,
    },
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableError::NoSuchPort(port) => write!(f, "port {} does not exist", port.0),
            TableError::TooManyEntries {
                table,
                given,
                capacity,
            } => {
                write!(
                    f,
                    "{given} entries for the {table} table, which holds {capacity}"
                )
            }
        }
    }
}

impl std::error::Error for TableError {}

/// Checks a table's entry count against its hardware capacity.
pub(crate) fn check_capacity(
    table: &'static str,
    given: usize,
    capacity: usize,
) -> Result<(), TableError> {
    if given > capacity {
        return Err(TableError::TooManyEntries {
            table,
            given,
            capacity,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_translates_only_requests_wholly_inside() {
        let w = Window {
            base: 0x9000_0000,
            size: 0x1000,
            fabric_base: 0x40_0000_0000,
            permissions: Permissions::READ_WRITE,
        };
        assert_eq!(w.translate(0x9000_0000, 4), Some(0x40_0000_0000));
        assert_eq!(w.translate(0x9000_0ffc, 4), Some(0x40_0000_0ffc));
        assert_eq!(w.translate(0x9000_0ffc, 8), None, "runs past the end");
        assert_eq!(w.translate(0x8fff_fffc, 4), None, "starts before the base");
        assert!(w.overlaps(0x9000_0ffc, 8));
        assert!(!w.overlaps(0x9000_1000, 4));
    }

    #[test]
    fn bus_routes_use_the_bus_number_only() {
        let mut tables = RouteTables::default();
        tables.buses[3] = Some(Destination::Port(PortIndex(5)));
        assert_eq!(
            tables.by_id(Bdf::new(3, 7, 2)),
            Some(Destination::Port(PortIndex(5)))
        );
        assert_eq!(tables.by_id(Bdf::new(4, 0, 0)), None);
    }

    #[test]
    fn first_matching_address_route_wins() {
        let tables = RouteTables {
            addresses: vec![
                AddressRoute {
                    base: 0x1000,
                    size: 0x1000,
                    to: Destination::Port(PortIndex(1)),
                },
                AddressRoute {
                    base: 0x0,
                    size: 0x10_0000,
                    to: Destination::Port(PortIndex(2)),
                },
            ],
            ..RouteTables::default()
        };
        assert_eq!(
            tables.by_address(0x1800),
            Some(Destination::Port(PortIndex(1)))
        );
        assert_eq!(
            tables.by_address(0x2000),
            Some(Destination::Port(PortIndex(2)))
        );
        assert_eq!(tables.by_address(0x10_0000), None);
    }
}
