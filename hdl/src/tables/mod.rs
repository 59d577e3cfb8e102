//! The data plane's lookup tables, each programmed and read back over the CSR bus.
//!
//! Every table answers its own range of `weft_regs::csr` and has the
//! semantics of the matching weft-model function, which the differential
//! tests in `hdl/tests/tables_match_model.rs` hold it to:
//!
//! - [`WindowTable`]: a port's address windows (`translate_through_windows`);
//! - [`AddressRouteTable`]: fabric address ranges to destinations (`RouteTables::by_address`);
//! - [`BusRouteTable`]: bus numbers to destinations (`RouteTables::by_id`);
//! - [`IdMap`]: a host port's fabric and host IDs (`host_to_fabric`, `fabric_to_host`);
//! - [`FunctionOwnerTable`]: an endpoint port's functions bound one by one (`PortTables::ownership`).
//! - [`OutstandingTable`]: a host port's requests in flight (`OutstandingTable`, as `Switch` uses it),
//!   held to the model by `hdl/tests/outstanding_matches_model.rs`.

pub mod address_route;
pub mod bus_route;
pub mod front;
pub mod function_owner;
pub mod id_map;
pub mod outstanding;
pub mod range;
pub mod window;

pub use address_route::AddressRouteTable;
pub use bus_route::BusRouteTable;
pub use function_owner::FunctionOwnerTable;
pub use id_map::IdMap;
pub use outstanding::OutstandingTable;
pub use window::WindowTable;
