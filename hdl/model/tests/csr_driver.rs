//! The CSR driver against the model: the same table writes applied to a
//! switch directly (`DataPlane for Switch`) and through `CsrDataPlane`, the
//! register map and the CSR window model leave the same tables, forward
//! the same TLPs the same way and fail with the same errors.

use proptest::prelude::*;
use weft_model::csr_window::{decode, CsrWindow};
use weft_model::*;
use weft_pcie::tlp::*;
use weft_pcie::Bdf;
use weft_regs::capacity;
use weft_regs::csr::{self, window};
use weft_regs::driver::{CsrBus, CsrDataPlane};
use weft_regs::tables::{DataPlane, TableWriteError};

/// Ports of the switches under test: fewer than the register map holds,
/// so that ports the map has but the switch lacks are written too.
const PORTS: usize = 6;

/// One call of the [`DataPlane`] interface, or one TLP offered to both switches.
#[derive(Clone, Debug)]
enum Op {
    Role(PortIndex, PortRole),
    Window(PortIndex, usize, Window),
    PeerWindow(PortIndex, usize, Window, Option<HostIndex>),
    FunctionOwner(PortIndex, usize, Option<FunctionOwner>),
    IdMapping(PortIndex, usize, Option<IdMapping>),
    CompleterId(PortIndex, Bdf),
    Redirect(PortIndex, bool),
    ReturnToIngress(PortIndex, bool),
    Swizzle(PortIndex, u8),
    AddressRoute(usize, Option<AddressRoute>),
    BusRoute(u8, Option<Destination>),
    Abandon(PortIndex),
    AbandonHost(PortIndex, PortIndex),
    ReadCounter(PortIndex, u32),
    ClearCounters(PortIndex),
    Link(PortIndex, LinkRequest),
    Tlp(PortIndex, Vec<u8>),
}

impl Op {
    /// Applies the call; a counter read gives its value.
    fn apply(&self, plane: &mut dyn DataPlane) -> Result<Option<u64>, TableWriteError> {
        match self.clone() {
            Op::ReadCounter(port, entry) => return plane.read_counter(port, entry).map(Some),
            Op::ClearCounters(port) => plane.clear_counters(port),
            Op::Role(port, role) => plane.set_port_role(port, role),
            Op::Window(port, index, w) => plane.set_window(port, index, w),
            Op::PeerWindow(port, index, w, owner) => plane.set_peer_window(port, index, w, owner),
            Op::FunctionOwner(port, index, entry) => plane.set_function_owner(port, index, entry),
            Op::IdMapping(port, index, mapping) => plane.set_id_mapping(port, index, mapping),
            Op::CompleterId(port, id) => plane.set_completer_id(port, id),
            Op::Redirect(port, redirect) => plane.set_p2p_request_redirect(port, redirect),
            Op::ReturnToIngress(port, enable) => plane.set_return_to_ingress(port, enable),
            Op::Swizzle(port, swizzle) => plane.set_intx_swizzle(port, swizzle),
            Op::AddressRoute(index, route) => plane.set_address_route(index, route),
            Op::BusRoute(bus, to) => plane.set_bus_route(bus, to),
            Op::Abandon(port) => plane.abandon_requests_to(port),
            Op::AbandonHost(host, port) => plane.abandon_host_requests_to(host, port),
            Op::Link(port, request) => plane.request_link(port, request),
            Op::Tlp(..) => Ok(()),
        }
        .map(|()| None)
    }
}

/// Ports the map has and ports it does not (8 and 9).
fn port() -> impl Strategy<Value = PortIndex> {
    prop_oneof![8 => 0..PORTS as u8, 1 => PORTS as u8..10].prop_map(PortIndex)
}

/// Mostly a few hosts, sometimes one beyond the apertures.
fn host() -> impl Strategy<Value = HostIndex> {
    prop_oneof![8 => 0u16..3, 1 => 2046u16..2050].prop_map(HostIndex)
}

/// A few buses, so that IDs and bus routes meet.
fn bdf() -> impl Strategy<Value = Bdf> {
    (0u8..4, 0u8..2, 0u8..2).prop_map(|(b, d, f)| Bdf::new(b, d, f))
}

/// Addresses from a small pool, so that windows, routes and TLPs overlap.
fn address() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(0x1000),
        Just(0x9000_0000),
        Just(0x40_0000_0000),
        Just(0x8000_0000_0000_0000),
        Just(0x8010_0000_0000_1000),
        any::<u64>().prop_map(|a| a & !3),
        any::<u64>(),
    ]
}

fn size() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(0x1000),
        Just(0x100_0000),
        Just(1 << 52),
        any::<u64>().prop_map(|s| s & !3),
        any::<u64>(),
    ]
}

fn window_value() -> impl Strategy<Value = Window> {
    (address(), size(), address(), any::<bool>(), any::<bool>()).prop_map(
        |(base, size, fabric_base, read, write)| Window {
            base,
            size,
            fabric_base,
            permissions: Permissions { read, write },
        },
    )
}

fn owner() -> impl Strategy<Value = Owner> {
    (host(), bdf()).prop_map(|(host, proxy_id)| Owner { host, proxy_id })
}

fn destination() -> impl Strategy<Value = Destination> {
    prop_oneof![
        1 => Just(Destination::Cpu),
        4 => (0u8..PORTS as u8).prop_map(|p| Destination::Port(PortIndex(p))),
    ]
}

fn role() -> impl Strategy<Value = PortRole> {
    prop_oneof![
        Just(PortRole::Disabled),
        (host(), bdf()).prop_map(|(host, proxy_id)| PortRole::Host { host, proxy_id }),
        (proptest::option::of(owner()), 0u8..4, 0u8..4).prop_map(|(owner, first, last)| {
            PortRole::Endpoint {
                owner,
                buses: (first, last),
            }
        }),
        Just(PortRole::Fabric),
    ]
}

/// Indices up to two past a table's end.
fn index(entries: usize) -> impl Strategy<Value = usize> {
    prop_oneof![8 => 0..entries.min(4), 1 => 0..entries + 2]
}

/// A TLP from a small pool of requesters and addresses.
fn tlp() -> impl Strategy<Value = Vec<u8>> {
    let memory = (any::<bool>(), bdf(), 0u16..8, address(), 1u16..3).prop_map(
        |(write, requester, tag, address, length_dw)| {
            let op = if write {
                MemoryOp::Write
            } else {
                MemoryOp::Read
            };
            let header = Header {
                digest_present: false,
                poisoned: false,
                body: Body::Memory(MemoryRequest {
                    op,
                    traffic_class: TrafficClass::default(),
                    attributes: Attributes::default(),
                    address_type: AddressType::default(),
                    requester,
                    tag: Tag::new(tag).expect("tag fits 10 bits"),
                    address: address & !0xff,
                    length_dw,
                    first_be: 0xf,
                    last_be: if length_dw == 1 { 0 } else { 0xf },
                    processing_hint: None,
                }),
            };
            let payload = if write {
                vec![0xa5; usize::from(length_dw) * 4]
            } else {
                Vec::new()
            };
            (header, payload)
        },
    );
    let completion = (bdf(), bdf(), 0u16..8).prop_map(|(completer, requester, tag)| {
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Completion(Completion {
                locked: false,
                traffic_class: TrafficClass::default(),
                attributes: Attributes::default(),
                completer,
                status: CompletionStatus::Successful,
                byte_count_modified: false,
                byte_count: 4,
                requester,
                tag: Tag::new(tag).expect("tag fits 10 bits"),
                lower_address: 0,
                data_dw: Some(1),
            }),
        };
        (header, vec![1, 2, 3, 4])
    });
    let intx = (bdf(), 0u8..4).prop_map(|(requester, pin)| {
        let pin = IntxPin::from_index(pin);
        let message = Message::new(
            requester,
            MessageCode::AssertIntx(pin),
            MessageRouting::Local,
        );
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Message(message),
        };
        (header, Vec::new())
    });
    prop_oneof![4 => memory, 1 => completion, 1 => intx].prop_map(|(header, payload)| {
        Packet::new(header, payload)
            .to_bytes()
            .expect("a well-formed TLP")
    })
}

/// A one-DW memory read from host 0's root port.
fn host_read(tag: u16, address: u64) -> Vec<u8> {
    let header = Header {
        digest_present: false,
        poisoned: false,
        body: Body::Memory(MemoryRequest {
            op: MemoryOp::Read,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            address_type: AddressType::default(),
            requester: Bdf::new(0, 0, 0),
            tag: Tag::new(tag).expect("tag fits 10 bits"),
            address,
            length_dw: 1,
            first_be: 0xf,
            last_be: 0,
            processing_hint: None,
        }),
    };
    Packet::new(header, Vec::new())
        .to_bytes()
        .expect("a well-formed TLP")
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (port(), role()).prop_map(|(p, r)| Op::Role(p, r)),
        (port(), index(capacity::WINDOWS_PER_PORT), window_value())
            .prop_map(|(p, i, w)| Op::Window(p, i, w)),
        (
            port(),
            index(capacity::WINDOWS_PER_PORT),
            window_value(),
            proptest::option::of(host())
        )
            .prop_map(|(p, i, w, o)| Op::PeerWindow(p, i, w, o)),
        (
            port(),
            index(capacity::FUNCTION_OWNERS_PER_PORT),
            proptest::option::of((bdf(), owner(), any::<bool>(), 0u8..40).prop_map(
                |(function, owner, p2p_request_redirect, intx_swizzle)| FunctionOwner {
                    function,
                    owner,
                    p2p_request_redirect,
                    intx_swizzle,
                }
            ))
        )
            .prop_map(|(p, i, e)| Op::FunctionOwner(p, i, e)),
        (
            port(),
            index(capacity::BOUND_FUNCTIONS_PER_HOST),
            proptest::option::of(
                (bdf(), bdf()).prop_map(|(fabric, host)| IdMapping { fabric, host })
            )
        )
            .prop_map(|(p, i, m)| Op::IdMapping(p, i, m)),
        (port(), bdf()).prop_map(|(p, id)| Op::CompleterId(p, id)),
        (port(), any::<bool>()).prop_map(|(p, r)| Op::Redirect(p, r)),
        (port(), any::<bool>()).prop_map(|(p, r)| Op::ReturnToIngress(p, r)),
        (port(), 0u8..40).prop_map(|(p, s)| Op::Swizzle(p, s)),
        (
            index(capacity::ADDRESS_ROUTES),
            proptest::option::of(
                (address(), size(), destination()).prop_map(|(base, size, to)| AddressRoute {
                    base,
                    size,
                    to
                })
            )
        )
            .prop_map(|(i, r)| Op::AddressRoute(i, r)),
        (0u8..6, proptest::option::of(destination())).prop_map(|(b, d)| Op::BusRoute(b, d)),
        port().prop_map(Op::Abandon),
        (port(), port()).prop_map(|(h, p)| Op::AbandonHost(h, p)),
        // Every counter and one past them, read as the TLPs go by.
        (port(), 0..csr::counter::NAMES.len() as u32 + 1)
            .prop_map(|(p, entry)| Op::ReadCounter(p, entry)),
        (port(), 0..csr::counter::NAMES.len() as u32 + 1)
            .prop_map(|(p, entry)| Op::ReadCounter(p, entry)),
        port().prop_map(Op::ClearCounters),
        (
            port(),
            prop_oneof![Just(LinkRequest::HotReset), Just(LinkRequest::Retrain)]
        )
            .prop_map(|(p, r)| Op::Link(p, r)),
        // The baseline host's reads, and their abandonment.
        (0u16..8, 0u64..4).prop_map(|(tag, offset)| Op::Tlp(
            PortIndex(0),
            host_read(tag, 0x9000_0000 + offset * 0x100)
        )),
        Just(Op::Abandon(PortIndex(1))),
        Just(Op::AbandonHost(PortIndex(0), PortIndex(1))),
        // TLPs as often as three kinds of write together.
        (0u8..PORTS as u8, tlp()).prop_map(|(p, t)| Op::Tlp(PortIndex(p), t)),
        (0u8..PORTS as u8, tlp()).prop_map(|(p, t)| Op::Tlp(PortIndex(p), t)),
        (0u8..PORTS as u8, tlp()).prop_map(|(p, t)| Op::Tlp(PortIndex(p), t)),
    ]
}

/// A working fabric to start from, so that random TLPs are forwarded and
/// host reads stay outstanding: host 0 on port 0 with a window onto the
/// endpoint on port 1 (bus 1), routes both ways.
fn baseline() -> Vec<Op> {
    let proxy = Bdf::new(3, 1, 0);
    let owner = Owner {
        host: HostIndex(0),
        proxy_id: proxy,
    };
    vec![
        Op::Role(
            PortIndex(0),
            PortRole::Host {
                host: HostIndex(0),
                proxy_id: proxy,
            },
        ),
        Op::Window(
            PortIndex(0),
            0,
            Window {
                base: 0x9000_0000,
                size: 0x100_0000,
                fabric_base: 0x40_0000_0000,
                permissions: Permissions::READ_WRITE,
            },
        ),
        Op::IdMapping(
            PortIndex(0),
            0,
            Some(IdMapping {
                fabric: Bdf::new(1, 0, 0),
                host: Bdf::new(2, 0, 0),
            }),
        ),
        Op::CompleterId(PortIndex(0), Bdf::new(2, 1, 0)),
        Op::Role(
            PortIndex(1),
            PortRole::Endpoint {
                owner: Some(owner),
                buses: (1, 1),
            },
        ),
        Op::AddressRoute(
            0,
            Some(AddressRoute {
                base: 0x40_0000_0000,
                size: 0x100_0000,
                to: Destination::Port(PortIndex(1)),
            }),
        ),
        Op::AddressRoute(
            1,
            Some(AddressRoute {
                base: weft_regs::aperture::HOST_APERTURE_BASE,
                size: weft_regs::aperture::HOST_ADDRESS_LIMIT,
                to: Destination::Port(PortIndex(0)),
            }),
        ),
        Op::BusRoute(1, Some(Destination::Port(PortIndex(1)))),
        Op::BusRoute(3, Some(Destination::Port(PortIndex(0)))),
    ]
}

/// A bus that records every write and forwards it to the window.
struct Recording<'a> {
    window: &'a mut CsrWindow,
    writes: Vec<(u32, u32)>,
}

impl CsrBus for Recording<'_> {
    fn read32(&mut self, address: u32) -> u32 {
        self.window.read32(address)
    }

    fn write32(&mut self, address: u32, value: u32) {
        self.writes.push((address, value));
        self.window.write32(address, value);
    }
}

fn assert_same_tables(direct: &Switch, through: &Switch) {
    for p in 0..PORTS as u8 {
        assert_eq!(
            direct.port_tables(PortIndex(p)),
            through.port_tables(PortIndex(p)),
            "port {p}"
        );
        assert_eq!(
            direct.counters(PortIndex(p)),
            through.counters(PortIndex(p)),
            "counters of port {p}"
        );
    }
    assert_eq!(direct.routes(), through.routes());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_csr_driver_programs_what_direct_writes_program(random in proptest::collection::vec(op(), 1..60)) {
        let ops: Vec<Op> = baseline().into_iter().chain(random).collect();
        let mut direct = Switch::new(PORTS);
        let mut window = CsrWindow::new(Switch::new(PORTS));
        for op in &ops {
            let mut bus = Recording { window: &mut window, writes: Vec::new() };
            let mut driver = CsrDataPlane::new(&mut bus).expect("the window model is a weft data plane");
            let identity_reads_only = driver.bus().writes.is_empty();
            prop_assert!(identity_reads_only);
            let through = op.apply(&mut driver);
            let expected = op.apply(&mut direct);
            prop_assert_eq!(through, expected, "{:?}", op);
            if expected.is_err() {
                prop_assert!(bus.writes.is_empty(), "a refused write touched the bus: {:?}", op);
            }
            if let Op::Tlp(port, bytes) = op {
                let a = direct.ingress(*port, bytes);
                let b = window.switch_mut().ingress(*port, bytes);
                prop_assert_eq!(a, b, "{:?}", op);
            }
            prop_assert_eq!(direct.take_synthesized(), window.switch_mut().take_synthesized());
            prop_assert_eq!(direct.take_link_requests(), window.switch_mut().take_link_requests());
            assert_same_tables(&direct, window.switch());
        }
        prop_assert!(window.stray_accesses().is_empty(), "{:x?}", window.stray_accesses());
    }
}

/// A range that is not whole DWs is refused by both, before anything is written:
/// the registers hold address bits 63:2 only (PCIe Base 6.0 §2.2.4.1). So is
/// a window the hardware would hold but never use, as it could deform the
/// requests it translates (§2.2.7.1).
#[test]
fn ranges_the_hardware_would_not_use_as_given_are_refused() {
    let aligned = Window {
        base: 0x9000_0000,
        size: 0x1000,
        fabric_base: 0x40_0000_0000,
        permissions: Permissions::READ_WRITE,
    };
    let route = AddressRoute {
        base: 0x40_0000_0000,
        size: 0x1000,
        to: Destination::Port(PortIndex(1)),
    };
    let not_dw = |what, value| TableWriteError::NotDwAligned { what, value };
    // §2.2.7.1: moved by 8 bytes, a 4 KiB window would misalign 16-byte AtomicOps.
    let deforming = Window {
        fabric_base: aligned.fabric_base + 8,
        ..aligned
    };
    let refused = [
        (
            Op::Window(
                PortIndex(0),
                0,
                Window {
                    base: 0x9000_0002,
                    ..aligned
                },
            ),
            not_dw("window base", 0x9000_0002),
        ),
        (
            Op::Window(
                PortIndex(0),
                0,
                Window {
                    size: 0xfff,
                    ..aligned
                },
            ),
            not_dw("window size", 0xfff),
        ),
        (
            Op::Window(
                PortIndex(0),
                0,
                Window {
                    fabric_base: 0x40_0000_0001,
                    ..aligned
                },
            ),
            not_dw("window fabric base", 0x40_0000_0001),
        ),
        (
            Op::AddressRoute(
                0,
                Some(AddressRoute {
                    base: 0x40_0000_0003,
                    ..route
                }),
            ),
            not_dw("address route base", 0x40_0000_0003),
        ),
        (
            Op::AddressRoute(
                0,
                Some(AddressRoute {
                    size: 0x1001,
                    ..route
                }),
            ),
            not_dw("address route size", 0x1001),
        ),
        (
            Op::Window(PortIndex(0), 0, deforming),
            TableWriteError::DeformsRequests {
                base: deforming.base,
                size: deforming.size,
                fabric_base: deforming.fabric_base,
            },
        ),
    ];
    for (op, refusal) in refused {
        let mut direct = Switch::new(PORTS);
        let mut window = CsrWindow::new(Switch::new(PORTS));
        let mut bus = Recording {
            window: &mut window,
            writes: Vec::new(),
        };
        let mut driver =
            CsrDataPlane::new(&mut bus).expect("the window model is a weft data plane");
        let expected = Err(refusal);
        assert_eq!(op.apply(&mut driver), expected, "{op:?}");
        assert_eq!(op.apply(&mut direct), expected, "{op:?}");
        assert!(bus.writes.is_empty(), "{op:?} touched the bus");
    }
}

/// Every register of every block decodes back to itself, and nothing between them does.
#[test]
fn every_register_address_decodes_to_its_register() {
    for block in csr::BLOCKS {
        let layout = block.layout;
        for instance in 0..layout.instances {
            for entry in 0..layout.entries {
                for register in block.registers {
                    let decoded = decode(register.address(instance, entry))
                        .unwrap_or_else(|| panic!("{}.{}", block.name, register.name));
                    assert_eq!(
                        (decoded.register, decoded.instance, decoded.entry),
                        (*register, instance, entry)
                    );
                }
            }
        }
    }
    // The gap after the port block's last register of port 0, and past the window.
    assert_eq!(decode(csr::port::LINK.address(0, 0) + 4), None);
    assert_eq!(decode(csr::CSR_BASE + csr::CSR_SIZE), None);
}

/// What lookups read: every port's tables and the routes.
fn tables(switch: &Switch) -> (Vec<PortTables>, RouteTables) {
    let ports = (0..PORTS as u8)
        .map(|p| {
            switch
                .port_tables(PortIndex(p))
                .cloned()
                .expect("port exists")
        })
        .collect();
    (ports, switch.routes().clone())
}

/// Applies `op` through the driver, returning the bus writes it made.
fn drive(window: &mut CsrWindow, op: &Op) -> Vec<(u32, u32)> {
    let mut bus = Recording {
        window,
        writes: Vec::new(),
    };
    op.apply(&mut CsrDataPlane::new(&mut bus).expect("a weft data plane"))
        .expect("a valid write");
    bus.writes
}

/// Rewrites a live entry from `old` to `new` through the driver, replaying
/// its writes one by one: after each, lookups see the old entry, the new
/// one, or the entry as `cleared` leaves it, never a mixture.
fn assert_rewritten_whole(old: Op, new: Op, cleared: Op) -> Vec<(u32, u32)> {
    let mut before = CsrWindow::new(Switch::new(PORTS));
    for op in baseline().iter().chain([&old]) {
        drive(&mut before, op);
    }
    let mut after = before.clone();
    let writes = drive(&mut after, &new);
    let mut without = before.switch().clone();
    cleared.apply(&mut without).expect("a valid write");
    let allowed = [
        tables(before.switch()),
        tables(after.switch()),
        tables(&without),
    ];
    let mut replay = before.clone();
    for (address, value) in &writes {
        replay.write32(*address, *value);
        assert!(
            allowed.contains(&tables(replay.switch())),
            "{new:?}: after writing {value:#x} to {address:#x} lookups see neither entry whole"
        );
    }
    assert_eq!(tables(replay.switch()), allowed[1]);
    writes
}

const OLD_WINDOW: Window = Window {
    base: 0x9000_0000,
    size: 0x1000,
    fabric_base: 0x40_0000_0000,
    permissions: Permissions::READ_WRITE,
};
const NEW_WINDOW: Window = Window {
    base: 0xa000_0000,
    size: 0x2000,
    fabric_base: 0x41_0000_0000,
    permissions: Permissions {
        read: true,
        write: false,
    },
};

/// The owner tag is written while the entry is invalid: at no write does
/// the switch hold the new window with the old tag or the reverse.
#[test]
fn a_window_is_never_valid_with_a_stale_owner_tag() {
    let port = PortIndex(1);
    let writes = assert_rewritten_whole(
        Op::PeerWindow(port, 3, OLD_WINDOW, Some(HostIndex(1))),
        Op::PeerWindow(port, 3, NEW_WINDOW, Some(HostIndex(2))),
        Op::PeerWindow(port, 3, Window::UNUSED, None),
    );
    assert_eq!(
        writes.first(),
        Some(&(window::CONTROL.address(1, 3), 0)),
        "the entry is invalidated first"
    );
    assert_eq!(
        writes.last().map(|w| w.0),
        Some(window::CONTROL.address(1, 3)),
        "and validated last"
    );
}

#[test]
fn a_function_owner_entry_is_never_seen_half_written() {
    let entry = |host: u16, function: Bdf, swizzle: u8| FunctionOwner {
        function,
        owner: Owner {
            host: HostIndex(host),
            proxy_id: Bdf::new(0xf0 + host as u8, 0, 0),
        },
        p2p_request_redirect: host == 1,
        intx_swizzle: swizzle,
    };
    let port = PortIndex(1);
    assert_rewritten_whole(
        Op::FunctionOwner(port, 2, Some(entry(0, Bdf::new(1, 0, 1), 3))),
        Op::FunctionOwner(port, 2, Some(entry(1, Bdf::new(1, 0, 2), 4))),
        Op::FunctionOwner(port, 2, None),
    );
}

#[test]
fn an_id_mapping_is_never_seen_half_written() {
    let map = |fabric: u8, host: u8| IdMapping {
        fabric: Bdf::new(1, 0, fabric),
        host: Bdf::new(2, host, 0),
    };
    assert_rewritten_whole(
        Op::IdMapping(PortIndex(0), 0, Some(map(0, 0))),
        Op::IdMapping(PortIndex(0), 0, Some(map(1, 3))),
        Op::IdMapping(PortIndex(0), 0, None),
    );
}

#[test]
fn an_address_route_is_never_seen_half_written() {
    let route = |base: u64, port: u8| AddressRoute {
        base,
        size: 0x1_0000_0000,
        to: Destination::Port(PortIndex(port)),
    };
    assert_rewritten_whole(
        Op::AddressRoute(5, Some(route(0x1_0000_0000, 1))),
        Op::AddressRoute(5, Some(route(0x2_0000_0000, 2))),
        Op::AddressRoute(5, None),
    );
}

/// A port changes role through disabled, never with one role's identity
/// under another (a host port's proxy as an endpoint's owner, say).
#[test]
fn a_port_changes_role_only_through_disabled() {
    let port = PortIndex(2);
    assert_rewritten_whole(
        Op::Role(
            port,
            PortRole::Host {
                host: HostIndex(1),
                proxy_id: Bdf::new(0xf1, 0, 0),
            },
        ),
        Op::Role(
            port,
            PortRole::Endpoint {
                owner: Some(Owner {
                    host: HostIndex(2),
                    proxy_id: Bdf::new(0xf2, 0, 0),
                }),
                buses: (2, 3),
            },
        ),
        Op::Role(port, PortRole::Disabled),
    );
    let endpoint = |host: u16, bus: u8| PortRole::Endpoint {
        owner: Some(Owner {
            host: HostIndex(host),
            proxy_id: Bdf::new(0xf0 + host as u8, 0, 0),
        }),
        buses: (bus, bus),
    };
    assert_rewritten_whole(
        Op::Role(port, endpoint(1, 2)),
        Op::Role(port, endpoint(2, 3)),
        Op::Role(port, PortRole::Disabled),
    );
}

/// `PortDisabled` as `PORT_DISABLED`: a drop reason's name in the register map.
fn screaming(reason: DropReason) -> String {
    let mut name = String::new();
    for (i, c) in format!("{reason:?}").chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

/// The count the register map's counter `name` stands for, from the
/// model's own counters (by name, not by entry number).
fn count_named(counters: &PortCounters, name: &str) -> u64 {
    match name {
        "TLPS_IN_POSTED" => counters.ingress.posted,
        "TLPS_IN_NON_POSTED" => counters.ingress.non_posted,
        "TLPS_IN_COMPLETION" => counters.ingress.completions,
        "BYTES_IN" => counters.ingress.bytes,
        "TLPS_OUT_POSTED" => counters.egress.posted,
        "TLPS_OUT_NON_POSTED" => counters.egress.non_posted,
        "TLPS_OUT_COMPLETION" => counters.egress.completions,
        "BYTES_OUT" => counters.egress.bytes,
        // The transaction-level switch never waits for a link partner.
        "STALL_CYCLES" => 0,
        drop => {
            let reason = DropReason::ALL
                .into_iter()
                .find(|r| format!("DROP_{}", screaming(*r)) == drop)
                .unwrap_or_else(|| panic!("{drop} names no drop reason"));
            counters.drops_for(reason)
        }
    }
}

/// The driver reads each counter the register map names, as the model
/// counts it: after a host read crosses the switch (non-posted in at the
/// host port and out at the endpoint's, with its bytes) and TLPs are
/// dropped at a disabled port, and as zero after the port is cleared,
/// while the other port keeps its counts.
#[test]
fn counters_read_through_the_window_are_the_ones_the_map_names() {
    let mut window = CsrWindow::new(Switch::new(PORTS));
    for op in baseline() {
        drive(&mut window, &op);
    }
    let read = host_read(1, 0x9000_0000);
    window
        .switch_mut()
        .ingress(PortIndex(0), &read)
        .expect("the baseline forwards the host's read");
    for _ in 0..3 {
        // Port 2 is disabled: the read is dropped and counted there.
        let _ = window.switch_mut().ingress(PortIndex(2), &read);
    }
    let read_all = |window: &mut CsrWindow, port: u8| -> Vec<u64> {
        let mut driver = CsrDataPlane::new(&mut *window).expect("a weft data plane");
        (0..csr::counter::NAMES.len() as u32)
            .map(|entry| {
                driver
                    .read_counter(PortIndex(port), entry)
                    .expect("a counter")
            })
            .collect()
    };
    for port in [0u8, 1, 2] {
        let counters = window
            .switch()
            .counters(PortIndex(port))
            .expect("the port exists")
            .clone();
        let expected: Vec<u64> = csr::counter::NAMES
            .iter()
            .map(|entry| count_named(&counters, entry.name))
            .collect();
        assert_eq!(read_all(&mut window, port), expected, "port {port}");
    }
    let named = |values: &[u64], name: &str| {
        let entry = csr::counter::NAMES.iter().position(|e| e.name == name);
        values[entry.expect("a counter of the map")]
    };
    let host = read_all(&mut window, 0);
    assert_eq!(named(&host, "TLPS_IN_NON_POSTED"), 1);
    assert_eq!(named(&host, "BYTES_IN"), read.len() as u64);
    let endpoint = read_all(&mut window, 1);
    assert_eq!(named(&endpoint, "TLPS_OUT_NON_POSTED"), 1);
    assert_eq!(named(&read_all(&mut window, 2), "DROP_PORT_DISABLED"), 3);

    CsrDataPlane::new(&mut window)
        .expect("a weft data plane")
        .clear_counters(PortIndex(0))
        .expect("port 0 exists");
    assert!(read_all(&mut window, 0).iter().all(|v| *v == 0));
    assert_eq!(
        read_all(&mut window, 1),
        endpoint,
        "clearing port 0 kept port 1's"
    );
    assert_eq!(
        CsrDataPlane::new(&mut window)
            .expect("a weft data plane")
            .read_counter(PortIndex(0), csr::counter::NAMES.len() as u32),
        Err(TableWriteError::NoSuchEntry {
            table: "counter",
            index: csr::counter::NAMES.len(),
        })
    );
}
