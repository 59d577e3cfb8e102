//! The RTL lookup tables agree with weft-model's lookups.
//!
//! Each property programs a table with random contents through its CSR
//! target, at the addresses of `weft_regs::csr`, as the firmware does;
//! reads every register back; then compares random lookups against the
//! model's functions on the same contents. Values are drawn around the
//! edges where 64-bit arithmetic done in 32-bit halves can go wrong: zero,
//! the top of the address space, and the 2^32 boundary.

mod common;

use common::probe;
use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::csr::{self, CsrTarget};
use weft_hdl::driver::on_big_stack;
use weft_hdl::driver::CycleDriver;
use weft_hdl::tables::{AddressRouteTable, BusRouteTable, FunctionOwnerTable, IdMap, WindowTable};
use weft_model::isolation::DropReason;
use weft_model::switch::{fabric_to_host, host_to_fabric, translate_through_windows};
use weft_model::{
    AddressRoute, Destination, FunctionOwner, HostIndex, IdMapping, Owner, Permissions, PortIndex,
    PortRole, PortTables, RouteTables, Window,
};
use weft_pcie::tlp::MemoryOp;
use weft_pcie::Bdf;
use weft_regs::capacity;
use weft_regs::csr::{address_route, bus_route, destination, function_owner, id_map, window};
use weft_regs::Register;

/// Cases per property: each programs a whole table over the bus, so they are not cheap in debug builds.
const CASES: u32 = 24;
/// Lookups per programmed table.
const LOOKUPS: usize = 48;

/// A 64-bit value near one of the edges, or anywhere.
fn edge_value() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => 0u64..0x4000,
        2 => (0u64..0x4000).prop_map(|x| u64::MAX - x),
        2 => (0u64..0x4000).prop_map(|x| (1u64 << 32) - 0x2000 + x),
        2 => prop::sample::select(&[0, 1, u64::MAX, u64::MAX - 1, 1 << 32, (1 << 32) - 1][..]),
        1 => any::<u64>(),
    ]
}

/// A size: empty, small, a power of two, or any.
fn size() -> impl Strategy<Value = u64> {
    prop_oneof![
        1 => Just(0u64),
        3 => 1u64..0x3000,
        1 => (0u32..64).prop_map(|shift| 1u64 << shift),
        2 => edge_value(),
    ]
}

/// A range's base or size as the range registers hold it: whole DWs
/// (bits 1:0 reserved, as memory request addresses are, PCIe Base 6.0 §2.2.4.1).
fn dw(value: u64) -> u64 {
    value & !3
}

/// A request length in bytes: zero (read as 1), a few DWs, or a whole maximum payload.
fn length() -> impl Strategy<Value = u64> {
    prop_oneof![3 => 0u64..64, 1 => 0u64..=4096, 1 => Just(4096u64)]
}

/// Writes a register of a table entry through the block's CSR target.
fn program<B: Block>(
    driver: &mut CycleDriver<B>,
    target: fn(&mut B) -> &mut CsrTarget,
    register: &Register,
    instance: u32,
    entry: usize,
    value: u32,
) {
    csr::write(
        driver,
        target,
        register.address(instance, entry as u32),
        value,
    )
    .expect("the table settles");
}

/// Reads a register back and checks it holds what was written to its defined fields.
fn check_read_back<B: Block>(
    driver: &mut CycleDriver<B>,
    target: fn(&mut B) -> &mut CsrTarget,
    register: &Register,
    instance: u32,
    entry: usize,
    written: u32,
) -> Result<(), TestCaseError> {
    let read = csr::read(driver, target, register.address(instance, entry as u32))
        .expect("the table settles");
    prop_assert_eq!(
        read,
        Some(written & register.mask()),
        "{} of entry {}",
        register.name,
        entry
    );
    Ok(())
}

fn low(value: u64) -> u32 {
    value as u32
}

fn high(value: u64) -> u32 {
    (value >> 32) as u32
}

/// One programmed window entry.
#[derive(Clone, Debug)]
struct WindowEntry {
    valid: bool,
    window: Window,
    /// Bits the firmware might set beyond the defined fields; they must read back as 0.
    junk: u32,
}

fn window_entry() -> impl Strategy<Value = WindowEntry> {
    (
        prop::bool::weighted(0.8),
        edge_value(),
        size(),
        edge_value(),
        // The bits of the base the fabric base keeps: whole pages, whole
        // 16-byte operands or none, so windows both keep requests
        // well-formed and do not (weft-model's `Window::keeps_requests_well_formed`).
        prop_oneof![3 => Just(0xfffu64), 1 => Just(0xf), 1 => Just(0)],
        any::<(bool, bool)>(),
        any::<u32>(),
    )
        .prop_map(
            |(valid, base, size, fabric_base, kept, (read, write), junk)| WindowEntry {
                valid,
                window: Window {
                    base: dw(base),
                    size: dw(size),
                    fabric_base: dw((fabric_base & !kept) | (base & kept)),
                    permissions: Permissions { read, write },
                },
                junk,
            },
        )
}

const WINDOW_PORT: u32 = 5;
type Windows = WindowTable<{ capacity::WINDOWS_PER_PORT }>;

fn window_csr(table: &mut Windows) -> &mut CsrTarget {
    &mut table.csr
}

/// The operations a window's permissions decide between, with the permission each needs.
const OPS: [MemoryOp; 4] = [
    MemoryOp::Read,
    MemoryOp::Write,
    MemoryOp::ReadLocked,
    MemoryOp::FetchAdd,
];

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn window_table_translates_as_the_model(
        entries in prop::collection::vec(window_entry(), capacity::WINDOWS_PER_PORT),
        lookups in prop::collection::vec((probe(edge_value()), length(), 0..OPS.len()), LOOKUPS),
    ) {
        on_big_stack(move || -> Result<(), TestCaseError> {
            let mut driver = CycleDriver::new(Windows::new(WINDOW_PORT), |b| &mut b.clock)
                .expect("the window table is well formed");
            let registers = |entry: &WindowEntry| {
                let w = &entry.window;
                let control = (entry.junk & !window::CONTROL.mask())
                    | window::VALID.encode(entry.valid.into())
                    | window::READ.encode(w.permissions.read.into())
                    | window::WRITE.encode(w.permissions.write.into());
                [
                    (window::BASE_LOW, low(w.base)),
                    (window::BASE_HIGH, high(w.base)),
                    (window::SIZE_LOW, low(w.size)),
                    (window::SIZE_HIGH, high(w.size)),
                    (window::FABRIC_BASE_LOW, low(w.fabric_base)),
                    (window::FABRIC_BASE_HIGH, high(w.fabric_base)),
                    (window::CONTROL, control),
                ]
            };
            for (index, entry) in entries.iter().enumerate() {
                for (register, value) in registers(entry) {
                    program(&mut driver, window_csr, &register, WINDOW_PORT, index, value);
                }
            }
            for (index, entry) in entries.iter().enumerate() {
                for (register, value) in registers(entry) {
                    check_read_back(&mut driver, window_csr, &register, WINDOW_PORT, index, value)?;
                }
            }
            // The model's table: the valid entries, in entry order.
            let valid: Vec<usize> = (0..entries.len()).filter(|&i| entries[i].valid).collect();
            let model: Vec<Window> = valid.iter().map(|&i| entries[i].window).collect();
            let ranges: Vec<(u64, u64)> =
                entries.iter().map(|e| (e.window.base, e.window.size)).collect();
            for (probe, length, op) in lookups {
                let address = probe.address(&ranges);
                let op = OPS[op];
                let table = driver.block();
                table.address_high.next = high(address).to_bits();
                table.address_low.next = low(address).to_bits();
                table.length.next = length.to_bits();
                // The answer follows one clock edge later.
                driver.tick().expect("the lookup settles");
                let table = driver.block();
                let needed_read = op != MemoryOp::Write;
                let needed_write = !matches!(op, MemoryOp::Read | MemoryOp::ReadLocked);
                let rtl = if !table.hit.val() || !table.contained.val() {
                    Err(DropReason::NoWindow)
                } else if (needed_read && !table.permit_read.val())
                    || (needed_write && !table.permit_write.val())
                {
                    Err(DropReason::Forbidden)
                } else {
                    Ok(table.fabric_high.val().to_u64() << 32 | table.fabric_low.val().to_u64())
                };
                let expected = translate_through_windows(&model, address, length, op);
                prop_assert_eq!(rtl, expected, "{:?} of {} bytes at {:#x}", op, length, address);
                let first = model.iter().position(|w| w.overlaps(address, length));
                prop_assert_eq!(table.hit.val(), first.is_some());
                if let Some(position) = first {
                    prop_assert_eq!(table.index.val().to_u64() as usize, valid[position]);
                }
            }
            Ok(())
        })?;
    }
}

/// A destination as the model has it, or no route, with junk in the register's reserved bits.
fn destination() -> impl Strategy<Value = (Option<Destination>, u32)> {
    (
        prop_oneof![
            1 => Just(None),
            1 => Just(Some(Destination::Cpu)),
            4 => any::<u8>().prop_map(|port| Some(Destination::Port(PortIndex(port)))),
        ],
        any::<u32>(),
    )
}

/// The destination register's value for `to`, with `junk` in the bits no field defines.
fn destination_register(to: Option<Destination>, junk: u32) -> u32 {
    let reserved = junk & !address_route::DESTINATION.mask();
    reserved
        | match to {
            None => 0,
            Some(Destination::Cpu) => {
                destination::VALID.encode(1)
                    | destination::CPU.encode(1)
                    | (junk & destination::PORT.mask())
            }
            Some(Destination::Port(port)) => {
                destination::VALID.encode(1) | destination::PORT.encode(port.0.into())
            }
        }
}

/// The destination the RTL answered.
fn answered(miss: bool, cpu: bool, port: u64) -> Option<Destination> {
    match (miss, cpu) {
        (true, _) => None,
        (false, true) => Some(Destination::Cpu),
        (false, false) => Some(Destination::Port(PortIndex(port as u8))),
    }
}

type AddressRoutes = AddressRouteTable<{ capacity::ADDRESS_ROUTES }>;

fn address_route_csr(table: &mut AddressRoutes) -> &mut CsrTarget {
    &mut table.csr
}

type Ids = IdMap<{ capacity::BOUND_FUNCTIONS_PER_HOST }>;
const ID_MAP_PORT: u32 = 2;

fn id_map_csr(table: &mut Ids) -> &mut CsrTarget {
    &mut table.csr
}

type Owners = FunctionOwnerTable<{ capacity::FUNCTION_OWNERS_PER_PORT }>;
const OWNER_PORT: u32 = 5;

fn function_owner_csr(table: &mut Owners) -> &mut CsrTarget {
    &mut table.csr
}

fn bus_route_csr(table: &mut BusRouteTable) -> &mut CsrTarget {
    &mut table.csr
}

/// An ID from a small pool, so that entries repeat and lookups hit, or any ID.
fn id() -> impl Strategy<Value = u16> {
    prop_oneof![3 => 0u16..12, 1 => any::<u16>()]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES / 2, ..ProptestConfig::default() })]

    #[test]
    fn address_route_table_routes_as_the_model(
        entries in prop::collection::vec(
            (edge_value().prop_map(dw), size().prop_map(dw), destination()),
            capacity::ADDRESS_ROUTES,
        ),
        probes in prop::collection::vec(probe(edge_value()), LOOKUPS),
    ) {
        on_big_stack(move || -> Result<(), TestCaseError> {
            let mut driver = CycleDriver::new(AddressRoutes::new(), |b| &mut b.clock)
                .expect("the address route table is well formed");
            let registers = |&(base, size, (to, junk)): &(u64, u64, (Option<Destination>, u32))| {
                [
                    (address_route::BASE_LOW, low(base)),
                    (address_route::BASE_HIGH, high(base)),
                    (address_route::SIZE_LOW, low(size)),
                    (address_route::SIZE_HIGH, high(size)),
                    (address_route::DESTINATION, destination_register(to, junk)),
                ]
            };
            for (index, entry) in entries.iter().enumerate() {
                for (register, value) in registers(entry) {
                    program(&mut driver, address_route_csr, &register, 0, index, value);
                }
            }
            for (index, entry) in entries.iter().enumerate() {
                for (register, value) in registers(entry) {
                    check_read_back(&mut driver, address_route_csr, &register, 0, index, value)?;
                }
            }
            let model = RouteTables {
                addresses: entries
                    .iter()
                    .filter_map(|&(base, size, (to, _))| to.map(|to| AddressRoute { base, size, to }))
                    .collect(),
                ..RouteTables::default()
            };
            let ranges: Vec<(u64, u64)> = entries.iter().map(|&(base, size, _)| (base, size)).collect();
            for probe in probes {
                let address = probe.address(&ranges);
                let table = driver.block();
                table.address_high.next = high(address).to_bits();
                table.address_low.next = low(address).to_bits();
                driver.tick().expect("the lookup settles");
                let table = driver.block();
                let rtl = answered(table.miss.val(), table.cpu.val(), table.port.val().to_u64());
                prop_assert_eq!(rtl, model.by_address(address), "address {:#x}", address);
            }
            Ok(())
        })?;
    }

    #[test]
    fn id_map_translates_as_the_model(
        entries in prop::collection::vec(
            (prop::bool::weighted(0.8), id(), id(), any::<u32>()),
            capacity::BOUND_FUNCTIONS_PER_HOST,
        ),
        queries in prop::collection::vec((id(), id()), LOOKUPS),
    ) {
        let mut driver = CycleDriver::new(Ids::new(ID_MAP_PORT), |b| &mut b.clock)
            .expect("the ID map is well formed");
        let registers = |&(valid, fabric, host, junk): &(bool, u16, u16, u32)| {
            [
                (id_map::FABRIC_ID, u32::from(fabric) | (junk & !id_map::FABRIC_ID.mask())),
                (id_map::HOST_ID, u32::from(host) | (junk & !id_map::HOST_ID.mask())),
                (id_map::CONTROL, id_map::VALID.encode(valid.into()) | (junk & !id_map::CONTROL.mask())),
            ]
        };
        for (index, entry) in entries.iter().enumerate() {
            for (register, value) in registers(entry) {
                program(&mut driver, id_map_csr, &register, ID_MAP_PORT, index, value);
            }
        }
        for (index, entry) in entries.iter().enumerate() {
            for (register, value) in registers(entry) {
                check_read_back(&mut driver, id_map_csr, &register, ID_MAP_PORT, index, value)?;
            }
        }
        let model: Vec<IdMapping> = entries
            .iter()
            .filter(|entry| entry.0)
            .map(|&(_, fabric, host, _)| IdMapping { fabric: Bdf(fabric), host: Bdf(host) })
            .collect();
        for (fabric, host) in queries {
            let table = driver.block();
            table.fabric_query.next = fabric.to_bits();
            table.host_query.next = host.to_bits();
            driver.settle().expect("the lookup settles");
            let table = driver.block();
            let host_answer = table.host_found.val().then(|| Bdf(table.host.val().to_u64() as u16));
            let fabric_answer =
                table.fabric_found.val().then(|| Bdf(table.fabric.val().to_u64() as u16));
            prop_assert_eq!(host_answer, fabric_to_host(&model, Bdf(fabric)));
            prop_assert_eq!(fabric_answer, host_to_fabric(&model, Bdf(host)));
        }
    }

    #[test]
    fn function_owner_table_finds_owners_as_the_model(
        entries in prop::collection::vec(
            (prop::bool::weighted(0.8), id(), any::<(u16, u16)>(), any::<(bool, u8)>(), any::<u32>()),
            capacity::FUNCTION_OWNERS_PER_PORT,
        ),
        queries in prop::collection::vec(id(), LOOKUPS),
    ) {
        let mut driver = CycleDriver::new(Owners::new(OWNER_PORT), |b| &mut b.clock)
            .expect("the function owner table is well formed");
        let registers = |&(valid, function, (host, proxy), (redirect, swizzle), junk): &(bool, u16, (u16, u16), (bool, u8), u32)| {
            let [host_index, proxy_id] = [0, 1].map(|i| function_owner::OWNER.fields[i]);
            let [valid_bit, redirect_bit, swizzle_field] =
                [0, 1, 2].map(|i| function_owner::CONTROL.fields[i]);
            [
                (function_owner::FUNCTION, u32::from(function) | (junk & !function_owner::FUNCTION.mask())),
                (
                    function_owner::OWNER,
                    host_index.encode(host.into()) | proxy_id.encode(proxy.into())
                        | (junk & !function_owner::OWNER.mask()),
                ),
                (
                    function_owner::CONTROL,
                    valid_bit.encode(valid.into())
                        | redirect_bit.encode(redirect.into())
                        | swizzle_field.encode(swizzle.into())
                        | (junk & !function_owner::CONTROL.mask()),
                ),
            ]
        };
        for (index, entry) in entries.iter().enumerate() {
            for (register, value) in registers(entry) {
                program(&mut driver, function_owner_csr, &register, OWNER_PORT, index, value);
            }
        }
        for (index, entry) in entries.iter().enumerate() {
            for (register, value) in registers(entry) {
                check_read_back(&mut driver, function_owner_csr, &register, OWNER_PORT, index, value)?;
            }
        }
        // A port owned by no one: a function's owner is its entry's, or none.
        let host_bits = function_owner::OWNER.fields[0].mask();
        let swizzle_bits = function_owner::CONTROL.fields[2].mask() >> function_owner::CONTROL.fields[2].lsb;
        let model = PortTables {
            role: PortRole::Endpoint { owner: None, buses: (0, 255) },
            function_owners: entries
                .iter()
                .filter(|entry| entry.0)
                .map(|&(_, function, (host, proxy), (redirect, swizzle), _)| FunctionOwner {
                    function: Bdf(function),
                    owner: Owner { host: HostIndex(host & host_bits as u16), proxy_id: Bdf(proxy) },
                    p2p_request_redirect: redirect,
                    intx_swizzle: swizzle & swizzle_bits as u8,
                })
                .collect(),
            ..PortTables::default()
        };
        // The second lookup answers another query in the same cycle.
        for (&requester, &other) in queries.iter().zip(queries.iter().rev()) {
            driver.block().requester.next = requester.to_bits();
            driver.block().other.next = other.to_bits();
            driver.settle().expect("the lookup settles");
            let table = driver.block();
            let other_owner = table.other_found.val().then(|| table.other_host.val().to_u32() as u16);
            prop_assert_eq!(
                other_owner,
                model.ownership(Bdf(other)).owner.map(|owner| owner.host.0),
                "other {:#06x}", other
            );
            let ownership = model.ownership(Bdf(requester));
            let rtl = table.found.val().then(|| Owner {
                host: HostIndex(table.host.val().to_u32() as u16),
                proxy_id: Bdf(table.proxy_id.val().to_u32() as u16),
            });
            prop_assert_eq!(rtl, ownership.owner, "requester {:#06x}", requester);
            if rtl.is_some() {
                prop_assert_eq!(table.p2p_request_redirect.val(), ownership.p2p_request_redirect);
                // The stage needs the device number modulo 4 only (§2.2.8.1).
                prop_assert_eq!(table.intx_swizzle.val().to_u32() as u8, ownership.intx_swizzle % 4);
            }
        }
    }

    #[test]
    fn bus_route_table_routes_as_the_model(
        entries in prop::collection::vec(destination(), capacity::BUS_ROUTES),
        devices in prop::collection::vec(any::<(u8, u8)>(), capacity::BUS_ROUTES),
    ) {
        let mut driver = CycleDriver::new(BusRouteTable::new(), |b| &mut b.clock)
            .expect("the bus route table is well formed");
        let mut model = RouteTables::default();
        for (bus, &(to, junk)) in entries.iter().enumerate() {
            let value = destination_register(to, junk);
            program(&mut driver, bus_route_csr, &bus_route::DESTINATION, 0, bus, value);
            model.buses[bus] = to;
        }
        for (bus, &(to, junk)) in entries.iter().enumerate() {
            let value = destination_register(to, junk);
            check_read_back(&mut driver, bus_route_csr, &bus_route::DESTINATION, 0, bus, value)?;
        }
        // Every bus number, with any device and function: only the bus decides.
        for (bus, &(device, function)) in devices.iter().enumerate() {
            let id = Bdf::new(bus as u8, device % 32, function % 8);
            driver.block().bus.next = bus.to_bits();
            driver.tick().expect("the lookup settles");
            let table = driver.block();
            let rtl = answered(table.miss.val(), table.cpu.val(), table.port.val().to_u64());
            prop_assert_eq!(rtl, model.by_id(id), "bus {}", bus);
        }
    }
}
