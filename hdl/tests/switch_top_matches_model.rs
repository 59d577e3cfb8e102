//! The whole switch's RTL (`SwitchTop`) delivers what weft-model's `Switch` delivers.
//!
//! Each case draws a switch: every port's role (disabled, host, endpoint,
//! fabric) and identities, its windows (with owner tags), function owners
//! and ID map, and the switch's address and bus routes, with destinations
//! that include the CPU, ports the switch lacks and the ingress itself.
//! The firmware's own driver (`weft_regs::driver::CsrDataPlane`) programs
//! the RTL over its CSR bus and a `CsrWindow` over the model with the same
//! calls. Then TLPs of every kind arrive on every port at once, addressed
//! near the windows' and routes' edges and from IDs the tables know, while
//! the egress links stall at random. Every TLP leaving an egress must be one
//! the model delivers there, byte for byte, in the order of its flow
//! (ingress, egress and class, unless Relaxed Ordering lets it pass), and
//! so must the Unsupported Request completion the model sends back for
//! each non-posted request a port refuses (Request Retry Status for a
//! configuration request at a disabled port not yet settled): it leaves on that port's own
//! link, a completion flow of its own from that ingress, so the answers
//! keep their order among themselves (the cases together must answer some
//! request, so the comparison cannot pass without any);
//! every TLP the model delivers must leave; the CPU must get the headers
//! the model gives it, per ingress port in order; and drops must agree in
//! number for every reason. The CPU must find in the mailbox, emptied over
//! the CSR bus as the firmware does, the TLPs for it that the model's
//! `CsrWindow` queues, each port's whole and in order (the ports take
//! turns, so when the mailbox fills it keeps other ones than the model,
//! but as many, and says LOST as the model does; the cases together must
//! queue some). One TLP the CPU injects
//! before the traffic starts must leave on the port it names, as it is,
//! between that port's other TLPs, as weft-model's `Switch::inject` sends
//! it. At the end every port's counters, read over
//! the CSR bus through the firmware's driver, must be the model's
//! `counters(port)`, but for the stall cycles, which the model leaves 0
//! and the test counts on the links (an egress offering a beat its link
//! does not take); then clearing some ports' counters zeroes those and
//! leaves the others.
//!
//! Beside it, directed tests of the management CPU's path, expected from
//! DESIGN.md and the spec (and held to the model too): a host's
//! configuration request reaches the mailbox whole with its port; TLPs for
//! the CPU arriving on every port at once are all queued, ports taking
//! turns; a full mailbox loses only the excess and says LOST; an injected
//! configuration request leaves on its port with its non-posted credit and
//! its completion comes back into the mailbox; an injected TLP waits for
//! credit of its class; an error message the CPU gets twice is queued
//! twice, or once with STATUS.LOST when longer than a beat.
//!
//! Host ports' non-posted requests leave under the fabric tags of the
//! port's outstanding-request table, as the model gives them; directed
//! tests, expected from DESIGN.md and the spec and held to the model, take
//! a host's reads through the top and back (split completions, the host's
//! requester ID and tag restored, a tag freed by the last completion), let
//! one time out (Completer Abort) and abandon another (Unsupported
//! Request, with a request offered during the sweep waiting for it).
//!
//! A TLP whose payload and digest need more than a switching slot is
//! Malformed in both (the model told the slot's size), and so is one
//! whose beats belie its Length (a directed test): dropped at its first
//! beat when that beat shows it, and when only a later beat does, sent on
//! void (`nullify`) as a cut-through switch must, counted as the model
//! counts it.
//!
//! Endpoint ports return peer traffic routed back to them or drop it, as
//! their RETURN_TO_INGRESS says (the cases together must return some).
//!
//! Completions that could answer a
//! host's request in flight are left out of the random traffic (see
//! `offered`).

mod common;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::endpoint::few_hosts;
use common::tlp::{
    attributes, class_code, header_bytes, packet, reason_code, request, wire_header, Request,
};
use common::top::TopBus;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use rust_hdl::prelude::*;
use weft_hdl::driver::on_big_stack;
use weft_hdl::driver::CycleDriver;
use weft_hdl::switching::{CLASS_COMPLETION, CLASS_NON_POSTED, CLASS_POSTED, SLOT_BEATS};
use weft_hdl::top::SwitchTop;
use weft_hdl::top_harness::TopHarness;
use weft_model::csr_window::CsrWindow;
use weft_model::switch::aperture_base;
use weft_model::{
    AddressRoute, Destination, DropReason, FunctionOwner, HostIndex, IdMapping, Owner, Packet,
    PortIndex, PortRole, Switch, Window,
};
use weft_pcie::tlp::{Body, Completion, CompletionStatus, Header, MemoryOp, Tag, TrafficClass};
use weft_pcie::Bdf;
use weft_regs::aperture::HOST_ADDRESS_LIMIT;
use weft_regs::csr::{counter, inject, mailbox};
use weft_regs::driver::CsrBus;
use weft_regs::driver::CsrDataPlane;
use weft_regs::tables::DataPlane;

/// Payload bits: a quarter of the reference's 512, for debug-build speed.
const W: usize = 128;
/// Ports: half the reference's 8, for debug-build speed.
const PORTS: usize = 4;
/// Payload DWs per beat.
const DWS_PER_BEAT: usize = W / 32;
/// The DWs of payload and digest a switching slot holds.
const SLOT_DW: usize = SLOT_BEATS * DWS_PER_BEAT;
/// New cases run, beside the saved regressions (about 19 s each in a
/// debug build: the whole top is the test suite's slowest block).
const CASES: u32 = 2;
/// Rounds of CASES cases at most, run until the cases have exercised every
/// path the test counts (`Covered`).
const MAX_ROUNDS: usize = 6;
/// TLPs offered per case.
const TLPS: usize = 64;
/// Window, function owner and ID map entries programmed per port.
const WINDOWS: usize = 4;
const FUNCTIONS: usize = 2;
const IDS: usize = 8;
/// Address route entries programmed.
const ROUTES: usize = 8;
/// Bus numbers the tables and the TLPs' IDs use: 0..BUSES.
const BUSES: u8 = 9;

type Top = SwitchTop<W, PORTS>;

/// A fabric ID among the few the tables know: a bus below `BUSES`, device 0 or 1, function 0.
fn known_id() -> impl Strategy<Value = u16> {
    (0..BUSES, 0u16..2).prop_map(|(bus, dev)| u16::from(bus) << 8 | dev << 3)
}

/// A routing destination: a port (one the switch lacks sometimes) or the CPU.
fn destination() -> impl Strategy<Value = Destination> {
    prop_oneof![
        12 => (0..PORTS as u8).prop_map(|p| Destination::Port(PortIndex(p))),
        1 => Just(Destination::Port(PortIndex(PORTS as u8))),
        1 => Just(Destination::Cpu),
    ]
}

/// Fabric address regions that routes cover and windows translate into:
/// the first hosts' apertures, and a few regions of the fabric's BARs.
fn region(k: usize) -> (u64, u64) {
    match k % 6 {
        k @ 0..=2 => (aperture_base(HostIndex(k as u16)), HOST_ADDRESS_LIMIT),
        k => ((k as u64 - 2) << 40, 1 << 40),
    }
}

/// An address route: part of a region, or an odd range; maybe invalid.
fn address_route() -> impl Strategy<Value = Option<AddressRoute>> {
    prop::option::weighted(
        0.95,
        (0usize..6, 0u64..4, destination()).prop_map(|(k, part, to)| {
            let (base, size) = region(k);
            // The whole region, or one of its quarters.
            let (base, size) = match part {
                0 | 1 => (base, size),
                q => (base + q * (size / 4), size / 4),
            };
            AddressRoute { base, size, to }
        }),
    )
}

/// A window whose fabric base lies in one of the regions, more often
/// open to reads and writes than not, so that hosts' requests pass too.
fn window() -> impl Strategy<Value = ((bool, Window), Option<u16>)> {
    (
        common::tlp::window_entry(),
        0usize..6,
        prop::option::weighted(0.4, few_hosts()),
        prop::bool::weighted(0.6),
    )
        .prop_map(|((valid, w), k, owner, open)| {
            let (base, size) = region(k);
            // The base's offset in its 4 KiB page is kept (see `window_entry`).
            let offset = (w.fabric_base & (size - 1) & !0xfff) | (w.base & 0xfff);
            let window = Window {
                fabric_base: base + offset,
                permissions: if open {
                    weft_model::Permissions::READ_WRITE
                } else {
                    w.permissions
                },
                ..w
            };
            ((valid, window), owner)
        })
}

/// One port's role.
#[derive(Clone, Debug)]
enum Role {
    Disabled,
    Host {
        host: u16,
        proxy: u16,
    },
    Endpoint {
        owner: Option<(u16, u16)>,
        buses: (u8, u8),
        redirect: bool,
        swizzle: u8,
        returns: bool,
    },
    Fabric,
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![
        1 => Just(Role::Disabled),
        3 => (0u16..3, known_id()).prop_map(|(host, proxy)| Role::Host { host, proxy }),
        4 => (
            prop::option::weighted(0.85, (0u16..3, known_id())),
            (0..BUSES, 0..BUSES),
            prop::bool::weighted(0.2),
            0u8..32,
            any::<bool>(),
        )
            .prop_map(|(owner, (a, b), redirect, swizzle, returns)| Role::Endpoint {
                owner,
                buses: (a.min(b), a.max(b)),
                redirect,
                swizzle,
                returns,
            }),
        2 => Just(Role::Fabric),
    ]
}

/// One port's registers and tables.
#[derive(Clone, Debug)]
struct PortSetup {
    role: Role,
    /// CONTROL.SETTLED: until set, a disabled port asks for configuration requests to be retried.
    settled: bool,
    completer: u16,
    windows: Vec<((bool, Window), Option<u16>)>,
    functions: Vec<Option<FunctionOwner>>,
    ids: Vec<Option<IdMapping>>,
}

impl PortSetup {
    /// A port of `role`, settled, with completer ID 0A:00.0 and empty tables.
    fn bare(role: Role) -> Self {
        PortSetup {
            role,
            settled: true,
            completer: 0x0a00,
            windows: Vec::new(),
            functions: Vec::new(),
            ids: Vec::new(),
        }
    }
}

fn port_setup() -> impl Strategy<Value = PortSetup> {
    let function = prop::option::weighted(
        0.7,
        (known_id(), 0u16..3, known_id(), any::<bool>(), 0u8..32).prop_map(
            |(function, host, proxy, redirect, swizzle)| FunctionOwner {
                function: Bdf(function),
                owner: Owner {
                    host: HostIndex(host),
                    proxy_id: Bdf(proxy),
                },
                p2p_request_redirect: redirect,
                intx_swizzle: swizzle,
            },
        ),
    );
    let id = prop::option::weighted(
        0.8,
        (known_id(), known_id()).prop_map(|(fabric, host)| IdMapping {
            fabric: Bdf(fabric),
            host: Bdf(host),
        }),
    );
    (
        (role(), any::<bool>()),
        known_id(),
        prop::collection::vec(window(), WINDOWS),
        prop::collection::vec(function, FUNCTIONS),
        prop::collection::vec(id, IDS),
    )
        .prop_map(
            |((role, settled), completer, windows, functions, ids)| PortSetup {
                role,
                settled,
                completer,
                windows,
                functions,
                ids,
            },
        )
}

/// The whole switch's tables.
#[derive(Clone, Debug)]
struct Setup {
    ports: Vec<PortSetup>,
    routes: Vec<Option<AddressRoute>>,
    buses: Vec<Option<Destination>>,
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        prop::collection::vec(port_setup(), PORTS),
        prop::collection::vec((address_route(), prop::bool::weighted(0.7)), ROUTES),
        prop::collection::vec(prop::option::weighted(0.95, destination()), BUSES as usize),
        prop::bool::weighted(0.8),
    )
        .prop_map(|(mut ports, routes, buses, aim)| {
            // Most routes into a host's aperture lead to that host's port, if
            // there is one, so that host egress has traffic to translate.
            let routes = routes
                .into_iter()
                .map(|(route, aimed)| {
                    route.map(|mut route| {
                        let host_port = ports.iter().position(|p| {
                            matches!(p.role, Role::Host { host, .. }
                                if route.base & !(HOST_ADDRESS_LIMIT - 1) == aperture_base(HostIndex(host)))
                        });
                        if let (true, Some(port)) = (aimed, host_port) {
                            route.to = Destination::Port(PortIndex(port as u8));
                        }
                        route
                    })
                })
                .collect();
            let mut routes: Vec<Option<AddressRoute>> = routes;
            // With `aim`, the first route leads what the first host port's
            // first valid window translates into (its whole region) to
            // the first endpoint or fabric port, so hosts' requests leave.
            let host_window = ports.iter().find_map(|p| {
                matches!(p.role, Role::Host { .. })
                    .then(|| p.windows.iter().find(|((valid, _), _)| *valid))
                    .flatten()
            });
            let out = ports
                .iter()
                .position(|p| matches!(p.role, Role::Endpoint { .. } | Role::Fabric));
            // The region a window translates into, routed whole to `port`.
            let route_to = |window: &Window, port: usize| {
                let (base, size) = (0..6)
                    .map(region)
                    .find(|(base, size)| (base..&(base + size)).contains(&&window.fabric_base))
                    .expect("windows translate into the regions");
                Some(AddressRoute {
                    base,
                    size,
                    to: Destination::Port(PortIndex(port as u8)),
                })
            };
            if let (true, Some(((_, window), _)), Some(out)) = (aim, host_window, out) {
                routes[0] = route_to(window, out);
            }
            // With `aim` too, the last endpoint port with a valid window
            // returns peer traffic, that window is open to reads and writes,
            // and the second route leads what it translates into back to the
            // port, so that RETURN_TO_INGRESS has traffic to return (the
            // first route wins where both match).
            let returning = ports.iter().rposition(|p| {
                matches!(p.role, Role::Endpoint { .. })
                    && p.windows.iter().any(|((valid, _), _)| *valid)
            });
            if let (true, Some(port)) = (aim, returning) {
                let returning = &mut ports[port];
                if let Role::Endpoint { returns, .. } = &mut returning.role {
                    *returns = true;
                }
                let ((_, window), _) = returning
                    .windows
                    .iter_mut()
                    .find(|((valid, _), _)| *valid)
                    .expect("chosen for its valid window");
                window.permissions = weft_model::Permissions::READ_WRITE;
                routes[1] = route_to(window, port);
            }
            Setup {
                ports,
                routes,
                buses,
            }
        })
}

/// Programs `setup` through the firmware's driver, as the fabric manager would.
fn program(plane: &mut impl DataPlane, setup: &Setup) {
    for (p, port) in setup.ports.iter().enumerate() {
        let index = PortIndex(p as u8);
        for (e, ((valid, window), owner)) in port.windows.iter().enumerate() {
            let window = if *valid { *window } else { Window::UNUSED };
            plane
                .set_peer_window(index, e, window, owner.map(HostIndex))
                .expect("drawn windows are legal");
        }
        for (e, function) in port.functions.iter().enumerate() {
            plane
                .set_function_owner(index, e, *function)
                .expect("drawn owners are legal");
        }
        for (e, id) in port.ids.iter().enumerate() {
            plane.set_id_mapping(index, e, *id).expect("legal");
        }
        plane
            .set_completer_id(index, Bdf(port.completer))
            .expect("legal");
        let role = match port.role {
            Role::Disabled => PortRole::Disabled,
            Role::Host { host, proxy } => PortRole::Host {
                host: HostIndex(host),
                proxy_id: Bdf(proxy),
            },
            Role::Endpoint {
                owner,
                buses,
                redirect,
                swizzle,
                returns,
            } => {
                plane
                    .set_p2p_request_redirect(index, redirect)
                    .expect("legal");
                plane.set_return_to_ingress(index, returns).expect("legal");
                plane.set_intx_swizzle(index, swizzle).expect("legal");
                PortRole::Endpoint {
                    owner: owner.map(|(host, proxy)| Owner {
                        host: HostIndex(host),
                        proxy_id: Bdf(proxy),
                    }),
                    buses,
                }
            }
            Role::Fabric => PortRole::Fabric,
        };
        plane
            .set_port_role(index, role)
            .expect("drawn roles are legal");
        plane.set_port_settled(index, port.settled).expect("legal");
    }
    for (e, route) in setup.routes.iter().enumerate() {
        plane.set_address_route(e, *route).expect("legal");
    }
    for (bus, to) in setup.buses.iter().enumerate() {
        plane.set_bus_route(bus as u8, *to).expect("legal");
    }
}

/// One TLP offered: its port, what it is, its fields, an ID the tables know
/// (as requester, or a completion's requester) and whether to use it, and
/// whether it is a completion (with a known completer).
type Offer = (
    usize,
    Request,
    common::tlp::Common,
    (bool, u16),
    Option<u16>,
);

fn offer() -> impl Strategy<Value = Offer> {
    (
        0..PORTS,
        request(),
        common::tlp::common(),
        (prop::bool::weighted(0.85), known_id()),
        prop::option::weighted(0.15, known_id()),
    )
}

/// The TLP `offer` stands for on a switch set up as `setup`, or `None` if it
/// is one the RTL top is not held to (see the module's doc) or illegal.
fn offered(
    setup: &Setup,
    (port, request, common, (known, id), completer): &Offer,
) -> Option<Packet> {
    let tables = &setup.ports[*port];
    let mut common = common.clone();
    if *known {
        common.requester = *id;
        // An endpoint's functions sit on its buses.
        if let (
            Role::Endpoint {
                buses: (first, last),
                ..
            },
            None,
        ) = (&tables.role, completer)
        {
            let bus = first + (id >> 8) as u8 % (last - first + 1);
            common.requester = u16::from(bus) << 8 | (id & 0xff);
        }
    }
    let packet = match completer {
        Some(completer) => {
            let completion = Completion {
                locked: false,
                traffic_class: TrafficClass::from_bits(common.traffic_class),
                attributes: attributes(common.attributes),
                completer: Bdf(*completer),
                status: CompletionStatus::Successful,
                byte_count_modified: false,
                byte_count: 4,
                requester: Bdf(common.requester),
                tag: Tag::new(common.tag).expect("drawn within 10 bits"),
                lower_address: 0,
                data_dw: Some(1),
            };
            let header = Header {
                digest_present: false,
                poisoned: false,
                body: Body::Completion(completion),
            };
            let mut packet = Packet::new(header, vec![0xa5; 4]);
            packet.digest = common.digest;
            packet
        }
        None => {
            // Addresses near the edges of what this port's TLPs are looked up in.
            let ranges: Vec<(bool, Window)> = match tables.role {
                Role::Fabric | Role::Disabled => setup
                    .routes
                    .iter()
                    .flatten()
                    .map(|r| {
                        (
                            true,
                            Window {
                                base: r.base,
                                size: r.size,
                                ..Window::UNUSED
                            },
                        )
                    })
                    .collect(),
                _ => tables.windows.iter().map(|(w, _)| *w).collect(),
            };
            let ranges = if ranges.is_empty() {
                vec![(true, Window::UNUSED)]
            } else {
                ranges
            };
            packet(request, &common, &ranges)?
        }
    };
    // A completion that could answer a host's request in flight races
    // that request through the RTL (it may reach the host port's egress
    // before the request has its tag), which the model, taking one TLP at
    // a time, does not: every case allocates tags from 0, fewer than TLPS.
    if let Body::Completion(c) = &packet.header.body {
        let answers_a_host = setup
            .ports
            .iter()
            .any(|p| matches!(p.role, Role::Host { proxy, .. } if proxy == c.requester.0));
        if answers_a_host && usize::from(c.tag.get()) < TLPS {
            return None;
        }
    }
    Some(packet)
}

/// A TLP as a sequence of beats: header DWs, payload DWs.
fn dws(packet: &Packet) -> ([u32; 4], Vec<u32>) {
    let bytes = packet.to_bytes().expect("legal");
    let header_len = if bytes[0] & 0x20 != 0 { 16 } else { 12 };
    let mut header = [0u32; 4];
    for (k, chunk) in bytes[..header_len].chunks(4).enumerate() {
        header[k] = u32::from_be_bytes(chunk.try_into().expect("4 bytes"));
    }
    let payload = bytes[header_len..]
        .chunks(4)
        .map(|c| u32::from_be_bytes(c.try_into().expect("whole DWs")))
        .collect();
    (header, payload)
}

/// A TLP out of an egress, as wire bytes.
fn wire(header: [u32; 4], payload: &[u32]) -> Vec<u8> {
    let mut bytes = header_bytes(header);
    bytes.extend(payload.iter().flat_map(|dw| dw.to_be_bytes()));
    bytes
}

/// What the run produced.
#[derive(Default)]
struct Observed {
    /// Per egress, TLPs in the order they left.
    egress: Vec<Vec<Vec<u8>>>,
    /// Per ingress, headers that went to the CPU, in order.
    cpu: Vec<Vec<Vec<u8>>>,
    /// Drops per reason code.
    drops: [u64; DropReason::ALL.len()],
    /// Per egress, cycles it offered a beat its link did not take.
    stalls: Vec<u64>,
    /// Per egress, the credits reported consumed less those given back,
    /// as [`credits_of`] orders them.
    credits: Vec<[i64; 6]>,
}

/// A TLP's credits (§2.6.1): one header credit of its class and a data
/// credit per 4 DW of payload, as (posted, non-posted, completion) headers
/// then the same classes' data.
fn credits_of(class: usize, dws: u64) -> [i64; 6] {
    let mut credits = [0; 6];
    credits[class] = 1;
    credits[3 + class] = dws.div_ceil(4) as i64;
    credits
}

/// What the TLPs that left each egress cost in credits, from their headers
/// (weft-pcie's flow control class and payload length).
fn credits_of_what_left(egress: &[Vec<Vec<u8>>]) -> Vec<[i64; 6]> {
    egress
        .iter()
        .map(|tlps| {
            let mut sum = [0; 6];
            for tlp in tlps {
                let header = Header::decode(tlp).expect("what leaves has a header");
                let class = 1 << class_code(header.flow_control_class());
                account(&mut sum, class, u64::from(header.payload_len_dw()), 1);
            }
            sum
        })
        .collect()
}

/// Adds `sign` times the credits of the TLP a pulse of `classes` (a bit
/// per class) and `dws` reports to `credits`.
fn account(credits: &mut [i64; 6], classes: u64, dws: u64, sign: i64) {
    for class in 0..3 {
        if classes >> class & 1 == 1 {
            let cost = credits_of(class, dws);
            credits
                .iter_mut()
                .zip(cost)
                .for_each(|(s, c)| *s += sign * c);
        }
    }
}

/// Offers `tlps` (per ingress port, in order) to the RTL with the egress
/// links taking beats as `ready` says, until everything has left (nothing moves for 64 cycles).
fn run(rtl: &mut CycleDriver<Top>, tlps: Vec<VecDeque<Packet>>, seed: u64) -> Observed {
    run_until_idle_for(rtl, tlps, seed, 64)
}

/// [`run`], stopping once all is offered and nothing has moved for `quiet` cycles.
fn run_until_idle_for(
    rtl: &mut CycleDriver<Top>,
    tlps: Vec<VecDeque<Packet>>,
    seed: u64,
    quiet: u64,
) -> Observed {
    let mut observed = Observed {
        egress: vec![Vec::new(); PORTS],
        cpu: vec![Vec::new(); PORTS],
        stalls: vec![0; PORTS],
        credits: vec![[0; 6]; PORTS],
        ..Observed::default()
    };
    let mut sending: Vec<VecDeque<([u32; 4], Vec<u32>)>> = tlps
        .into_iter()
        .map(|q| q.iter().map(dws).collect())
        .collect();
    let mut beat = [0usize; PORTS];
    let mut receiving: Vec<Option<([u32; 4], Vec<u32>)>> = vec![None; PORTS];
    let mut idle = 0;
    let all = (1u64 << PORTS) - 1;
    for cycle in 0u64.. {
        assert!(cycle < 200_000, "the switch did not drain");
        let top = rtl.block();
        top.egress_credit_posted.next = all.into();
        top.egress_credit_non_posted.next = all.into();
        top.egress_credit_completion.next = all.into();
        for i in 0..PORTS {
            let noise = (cycle ^ seed)
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .rotate_left(i as u32 * 7 + 5);
            top.egress[i].ready.next = !noise.is_multiple_of(4);
            let port = &mut top.ingress[i];
            port.valid.next = false;
            if let Some((header, payload)) = sending[i].front() {
                let beats = payload.len().div_ceil(DWS_PER_BEAT).max(1);
                let chunk: Vec<u32> = payload
                    .iter()
                    .copied()
                    .skip(beat[i] * DWS_PER_BEAT)
                    .take(DWS_PER_BEAT)
                    .collect();
                let mut bus = Bits::<W>::default();
                for (k, dw) in chunk.iter().enumerate() {
                    bus.set_bits::<32>(W - 32 * (k + 1), u64::from(*dw).into());
                }
                port.valid.next = true;
                port.sop.next = beat[i] == 0;
                port.eop.next = beat[i] + 1 == beats;
                port.empty.next = if beat[i] + 1 == beats {
                    ((DWS_PER_BEAT - chunk.len()) as u64).into()
                } else {
                    0u64.into()
                };
                port.payload.next = bus;
                // DW3 of a 3 DW header: whatever follows on the stream.
                let fourth = if header[0] & 1 << 29 != 0 {
                    header[3]
                } else {
                    0x5a5a_5a5a
                };
                port.dw0.next = header[0].to_bits();
                port.dw1.next = header[1].to_bits();
                port.dw2.next = header[2].to_bits();
                port.dw3.next = fourth.to_bits();
            }
        }
        rtl.settle().expect("the switch settles");
        let top = rtl.block();
        let mut moved = false;
        for i in 0..PORTS {
            if top.ingress[i].valid.val() && top.ingress[i].ready.val() {
                moved = true;
                let (_, payload) = sending[i].front().expect("offered");
                let beats = payload.len().div_ceil(DWS_PER_BEAT).max(1);
                beat[i] += 1;
                if beat[i] == beats {
                    beat[i] = 0;
                    sending[i].pop_front();
                }
            }
            let cpu_header = || {
                [
                    top.cpu_dw0[i].val().to_u32(),
                    top.cpu_dw1[i].val().to_u32(),
                    top.cpu_dw2[i].val().to_u32(),
                    top.cpu_dw3[i].val().to_u32(),
                ]
            };
            for pulse in [top.to_cpu[i].val(), top.copy_to_cpu[i].val()] {
                if pulse {
                    observed.cpu[i].push(header_bytes(cpu_header()));
                }
            }
            if top.ingress_dropped[i].val() {
                observed.drops[top.ingress_drop_reason[i].val().to_u32() as usize] += 1;
            }
            if top.egress_dropped[i].val() {
                observed.drops[top.egress_drop_reason[i].val().to_u32() as usize] += 1;
            }
            account(
                &mut observed.credits[i],
                top.egress_consume[i].val().to_u64(),
                top.egress_consume_dws[i].val().to_u64(),
                1,
            );
            account(
                &mut observed.credits[i],
                top.egress_refund[i].val().to_u64(),
                top.egress_refund_dws[i].val().to_u64(),
                -1,
            );
            let port = &top.egress[i];
            if port.valid.val() && !port.ready.val() {
                observed.stalls[i] += 1;
            }
            if port.valid.val() && port.ready.val() {
                moved = true;
                let header = [
                    port.dw0.val().to_u32(),
                    port.dw1.val().to_u32(),
                    port.dw2.val().to_u32(),
                    port.dw3.val().to_u32(),
                ];
                assert_eq!(
                    port.sop.val(),
                    receiving[i].is_none(),
                    "framing at egress {i}"
                );
                let open = receiving[i].get_or_insert_with(|| (header, Vec::new()));
                let used = if port.eop.val() {
                    DWS_PER_BEAT - (port.empty.val().to_u64() as usize).min(DWS_PER_BEAT)
                } else {
                    DWS_PER_BEAT
                };
                let bus = port.payload.val();
                open.1
                    .extend((0..used).map(|k| bus.get_bits::<32>(W - 32 * (k + 1)).to_u32()));
                if port.eop.val() {
                    let (header, payload) = receiving[i].take().expect("opened");
                    observed.egress[i].push(wire(header, &payload));
                }
            }
        }
        rtl.tick().expect("the switch settles");
        idle = if moved { 0 } else { idle + 1 };
        if idle > quiet && sending.iter().all(VecDeque::is_empty) {
            break;
        }
    }
    // §2.6.1: every TLP on a link took its credit, and no other TLP keeps
    // any (the link partner returns credit only for what it received).
    assert_eq!(
        observed.credits,
        credits_of_what_left(&observed.egress),
        "credit reported (consumed less given back) against what left, per egress"
    );
    observed
}

/// Where a TLP out of an egress comes from: the TLPs of one flow keep
/// their order (§2.4.1) only if they share it.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Source {
    /// Routed from this ingress port.
    Port(usize),
    /// The port's answer to a request it refused: an egress queue of its own.
    Answer,
    /// The CPU's injector.
    Injected,
}

/// One TLP the model delivers out of a port.
struct Expected {
    from: Source,
    bytes: Vec<u8>,
    class: weft_pcie::tlp::FlowControlClass,
    relaxed: bool,
}

/// Takes `got` out of the TLPs expected at one egress, checking it passes
/// no earlier TLP of its flow that it may not pass.
fn take(expected: &mut Vec<Expected>, got: &[u8]) -> Result<(), String> {
    let at = expected
        .iter()
        .position(|e| e.bytes == got)
        .ok_or_else(|| format!("unexpected TLP {got:02x?}"))?;
    let this = &expected[at];
    if let Some(passed) = expected[..at]
        .iter()
        .find(|e| e.from == this.from && e.class == this.class && !(this.relaxed || e.relaxed))
    {
        return Err(format!(
            "{got:02x?} passed {:02x?} of the same flow",
            passed.bytes
        ));
    }
    expected.remove(at);
    Ok(())
}

/// What one case exercised, so that the cases together can be checked to
/// have exercised each of them.
#[derive(Default)]
struct Covered {
    /// Requests the model refused and answered.
    answered: usize,
    /// TLPs the CPU found in the mailbox.
    mailboxed: usize,
    /// Hosts' non-posted requests sent on out of a port under a fabric tag.
    tagged: usize,
    /// TLPs longer than a switching slot.
    too_long: usize,
    /// TLPs an endpoint port sent back out of it (RETURN_TO_INGRESS).
    returned: usize,
}

/// One case: `setup` programmed into the RTL and the model, `offers`
/// offered to both.
fn delivers_as_the_model(
    setup: Setup,
    offers: Vec<Offer>,
    seed: u64,
    cleared: u32,
) -> Result<Covered, TestCaseError> {
    on_big_stack(move || -> Result<Covered, TestCaseError> {
        let driver = CycleDriver::new(Top::default(), |b| &mut b.clock).expect("well formed");
        let mut rtl = CsrDataPlane::new(TopBus(driver)).expect("the RTL identifies as weft");
        let mut window = model_switch();
        let mut model = CsrDataPlane::new(&mut window).expect("the model identifies as weft");
        program(&mut rtl, &setup);
        program(&mut model, &setup);

        // The CPU injects one of the case's TLPs out of some port first: it
        // waits in the injector until that egress can take it.
        let mut expected: Vec<Vec<Expected>> = (0..PORTS).map(|_| Vec::new()).collect();
        let injected = (0..offers.len())
            .filter_map(|k| offered(&setup, &offers[(k + seed as usize) % offers.len()]))
            .map(|packet| packet.to_bytes().expect("legal"))
            .find(|bytes| bytes.len() <= 4 * inject::TLP_DWORDS as usize);
        if let Some(bytes) = &injected {
            let port = (seed >> 8) as usize % PORTS;
            common::top::inject(rtl.bus(), port as u32, bytes);
            common::top::inject(&mut window, port as u32, bytes);
            for delivery in window.take_injected() {
                let out = delivery.packet.to_bytes().expect("legal");
                prop_assert_eq!(&out, bytes, "the model injects the TLP as it is");
                prop_assert_eq!(delivery.to, Destination::Port(PortIndex(port as u8)));
                expected[port].push(Expected {
                    from: Source::Injected,
                    class: delivery.packet.header.flow_control_class(),
                    relaxed: out[2] & 0x20 != 0,
                    bytes: out,
                });
            }
        }
        let mut rtl = rtl.into_bus().0;
        rtl.run(2).expect("settles");

        let mut tlps = vec![VecDeque::new(); PORTS];
        let mut cpu: Vec<Vec<Vec<u8>>> = vec![Vec::new(); PORTS];
        // Per ingress, the DWs of each TLP for the CPU that fits the mailbox.
        let mut for_cpu: Vec<Vec<Vec<u32>>> = vec![Vec::new(); PORTS];
        let mut answered = 0;
        let mut tagged = 0;
        let mut too_long = 0;
        let mut returned = 0;
        for offer in &offers {
            let Some(packet) = offered(&setup, offer) else {
                continue;
            };
            if packet.payload.len() / 4 + usize::from(packet.digest.is_some()) > SLOT_DW {
                too_long += 1;
            }
            let port = offer.0;
            let bytes = packet.to_bytes().expect("legal");
            let forwarding = window
                .switch_mut()
                .ingress(PortIndex(port as u8), &bytes)
                .expect("the port exists");
            for delivery in forwarding.deliveries {
                let out = delivery
                    .packet
                    .to_bytes()
                    .expect("the model delivers legal TLPs");
                match delivery.to {
                    Destination::Cpu => {
                        cpu[delivery.from.0 as usize].push(wire_header(&out));
                        window.queue_for_cpu(delivery.from, &out);
                        if out.len() <= 4 * mailbox::TLP_DWORDS as usize {
                            for_cpu[delivery.from.0 as usize].push(wire_dws(&delivery.packet));
                        }
                    }
                    Destination::Port(p) => {
                        // Back out of the ingress: the answer to a refused
                        // request, or peer traffic the port returns.
                        let answer = usize::from(p.0) == port && forwarding.dropped.is_some();
                        if answer {
                            answered += 1;
                        } else if usize::from(p.0) == port {
                            returned += 1;
                        } else if matches!(
                            (&setup.ports[port].role, &delivery.packet.header.body),
                            (Role::Host { .. }, Body::Memory(m)) if m.op != MemoryOp::Write
                        ) {
                            tagged += 1;
                        }
                        expected[usize::from(p.0)].push(Expected {
                            from: if answer {
                                Source::Answer
                            } else {
                                Source::Port(port)
                            },
                            class: delivery.packet.header.flow_control_class(),
                            relaxed: out[2] & 0x20 != 0,
                            bytes: out,
                        })
                    }
                }
            }
            tlps[port].push_back(packet);
        }
        // `offered` leaves out what the top cannot take yet; a case left
        // with a quarter of its TLPs or fewer would test too little.
        let offered_count: usize = tlps.iter().map(VecDeque::len).sum();
        prop_assert!(
            offered_count > TLPS / 4,
            "only {} TLPs offered",
            offered_count
        );

        let observed = run(&mut rtl, tlps, seed);
        for (j, out) in observed.egress.iter().enumerate() {
            for got in out {
                take(&mut expected[j], got)
                    .map_err(|e| TestCaseError::fail(format!("egress {j}: {e}")))?;
            }
            let missing: Vec<_> = expected[j].iter().map(|e| &e.bytes).collect();
            prop_assert!(
                missing.is_empty(),
                "egress {}: never left: {:02x?}",
                j,
                missing
            );
        }
        prop_assert_eq!(&observed.cpu, &cpu, "headers to the CPU");

        // The mailbox, emptied over the CSR bus as the firmware does: the
        // model's holds the first TLPs for the CPU in offer order, the RTL's
        // in the order the ports took turns, so both lose the same number
        // when it fills, and each port's TLPs in the RTL's are the first of
        // those it sent, whole; with nothing lost, they are the model's.
        let mut bus = TopBus(rtl);
        let got = common::top::empty_mailbox(&mut bus);
        let rtl = bus.0;
        let want = common::top::empty_mailbox(&mut window);
        prop_assert_eq!(got.lost, want.lost, "STATUS.LOST");
        prop_assert_eq!(got.tlps.len(), want.tlps.len(), "TLPs in the mailbox");
        for (p, sent) in for_cpu.iter().enumerate() {
            let queued = got.arrived_on(p as u32);
            prop_assert!(
                sent.starts_with(&queued),
                "port {}'s TLPs in the mailbox {:08x?}, sent {:08x?}",
                p,
                queued,
                sent
            );
            if !want.lost {
                prop_assert_eq!(&queued, &want.arrived_on(p as u32));
            }
        }

        let switch = window.switch();
        let mut drops = [0u64; DropReason::ALL.len()];
        for p in 0..PORTS {
            let counters = switch.counters(PortIndex(p as u8)).expect("exists");
            for reason in DropReason::ALL {
                drops[reason_code(reason) as usize] += counters.drops_for(reason);
            }
        }
        prop_assert_eq!(observed.drops, drops, "drops per reason");

        // Every port's counters over the CSR bus, as the model counts.
        let mut rtl = CsrDataPlane::new(TopBus(rtl)).expect("the RTL identifies as weft");
        let entries = counter::NAMES.len() as u32;
        let mut counts = Vec::new();
        for p in 0..PORTS {
            let index = PortIndex(p as u8);
            let model = switch.counters(index).expect("exists");
            let mut want: Vec<u64> = (0..entries)
                .map(|e| model.entry(e).expect("an entry"))
                .collect();
            want[counter::STALL_CYCLES as usize] = observed.stalls[p];
            let got: Vec<u64> = (0..entries)
                .map(|e| rtl.read_counter(index, e).expect("a counter"))
                .collect();
            prop_assert_eq!(&got, &want, "port {}'s counters", p);
            counts.push(got);
        }
        // Clearing some ports' counters zeroes those alone.
        for p in 0..PORTS {
            if cleared >> p & 1 == 1 {
                rtl.clear_counters(PortIndex(p as u8))
                    .expect("the port exists");
            }
        }
        for (p, before) in counts.iter().enumerate() {
            let got: Vec<u64> = (0..entries)
                .map(|e| rtl.read_counter(PortIndex(p as u8), e).expect("a counter"))
                .collect();
            let want = if cleared >> p & 1 == 1 {
                vec![0; before.len()]
            } else {
                before.clone()
            };
            prop_assert_eq!(
                got,
                want,
                "port {}'s counters after clearing ports {:#b}",
                p,
                cleared
            );
        }
        Ok(Covered {
            answered,
            mailboxed: got.tlps.len(),
            tagged,
            too_long,
            returned,
        })
    })
}

#[test]
fn switch_top_delivers_as_the_model() {
    let mut runner = TestRunner::new(ProptestConfig {
        cases: CASES,
        source_file: Some(file!()),
        ..ProptestConfig::default()
    });
    let answered = AtomicUsize::new(0);
    let mailboxed = AtomicUsize::new(0);
    let tagged = AtomicUsize::new(0);
    let too_long = AtomicUsize::new(0);
    let returned = AtomicUsize::new(0);
    let cases = (
        setup(),
        prop::collection::vec(offer(), TLPS),
        any::<u64>(),
        0u32..1 << PORTS,
    );
    // Rounds of CASES cases until the cases together have exercised every
    // path below, so a draw that misses one is followed by more cases, not
    // a failure; every case run must agree with the model.
    for _ in 0..MAX_ROUNDS {
        let result = runner.run(&cases, |(setup, offers, seed, cleared)| {
            let covered = delivers_as_the_model(setup, offers, seed, cleared)?;
            answered.fetch_add(covered.answered, Ordering::Relaxed);
            mailboxed.fetch_add(covered.mailboxed, Ordering::Relaxed);
            tagged.fetch_add(covered.tagged, Ordering::Relaxed);
            too_long.fetch_add(covered.too_long, Ordering::Relaxed);
            returned.fetch_add(covered.returned, Ordering::Relaxed);
            Ok(())
        });
        if let Err(failure) = result {
            panic!("{failure}");
        }
        if [&answered, &mailboxed, &tagged, &too_long, &returned]
            .iter()
            .all(|count| count.load(Ordering::Relaxed) > 0)
        {
            break;
        }
    }
    assert!(
        answered.load(Ordering::Relaxed) > 0,
        "no case refused a non-posted request: the answers went untested"
    );
    assert!(
        mailboxed.load(Ordering::Relaxed) > 0,
        "no case sent a TLP to the CPU: the mailbox went untested"
    );
    assert!(
        tagged.load(Ordering::Relaxed) > 0,
        "no host sent a non-posted request on: the fabric tags went untested"
    );
    assert!(
        too_long.load(Ordering::Relaxed) > 0,
        "no TLP was longer than a slot: the Malformed drop went untested"
    );
    assert!(
        returned.load(Ordering::Relaxed) > 0,
        "no endpoint port returned peer traffic: RETURN_TO_INGRESS went untested"
    );
}

/// A switch of ports in `roles` with no windows, owners or ID maps and
/// the bus routes `buses`, programmed through the firmware's driver: the
/// RTL, and a `CsrWindow` over the model.
fn switch_of(
    roles: [Role; PORTS],
    buses: Vec<Option<Destination>>,
) -> (CycleDriver<Top>, CsrWindow) {
    let setup = Setup {
        ports: roles
            .into_iter()
            .enumerate()
            .map(|(p, role)| PortSetup {
                completer: 0x0a00 | p as u16,
                ..PortSetup::bare(role)
            })
            .collect(),
        routes: Vec::new(),
        buses,
    };
    programmed(Top::default(), &setup)
}

/// The model of this top: `PORTS` ports, slots of `SLOT_DW`.
fn model_switch() -> CsrWindow {
    let mut switch = Switch::new(PORTS);
    switch.set_slot_dw(SLOT_DW);
    CsrWindow::new(switch)
}

/// `top` and a `CsrWindow` over the model, both programmed with `setup`
/// through the firmware's driver.
fn programmed(top: Top, setup: &Setup) -> (CycleDriver<Top>, CsrWindow) {
    let driver = CycleDriver::new(top, |b| &mut b.clock).expect("well formed");
    let mut rtl = CsrDataPlane::new(TopBus(driver)).expect("the RTL identifies as weft");
    let mut window = model_switch();
    let mut model = CsrDataPlane::new(&mut window).expect("the model identifies as weft");
    program(&mut rtl, setup);
    program(&mut model, setup);
    (rtl.into_bus().0, window)
}

/// A host port facing host `host`.
fn host(host: u16) -> Role {
    Role::Host {
        host,
        proxy: 0x0100 | host << 3,
    }
}

/// A configuration request from requester `requester` with tag `tag`,
/// a write of `data` if there is some, with a digest if `digest`.
fn config_request(requester: u16, tag: u16, data: Option<u32>, digest: Option<u32>) -> Packet {
    let direction = if data.is_some() {
        weft_pcie::tlp::Direction::Write
    } else {
        weft_pcie::tlp::Direction::Read
    };
    let common = common::tlp::Common {
        requester,
        tag,
        traffic_class: 0,
        attributes: 0,
        digest,
        beyond_header: 0,
    };
    let mut packet = common::tlp::packet(
        &Request::Config(direction, weft_pcie::tlp::ConfigType::Type0),
        &common,
        &[],
    )
    .expect("a legal configuration request");
    if let Some(data) = data {
        packet.payload = data.to_be_bytes().to_vec();
    }
    packet
}

/// A TLP's wire DWs, as the mailbox holds it (PCIe Base 6.0 §2.2.1).
fn wire_dws(packet: &Packet) -> Vec<u32> {
    packet
        .to_bytes()
        .expect("legal")
        .chunks(4)
        .map(|c| u32::from_be_bytes(c.try_into().expect("whole DWs")))
        .collect()
}

#[test]
fn a_host_configuration_request_reaches_the_mailbox_whole() {
    on_big_stack(|| {
        // DESIGN.md, "Configuration requests": a host's configuration
        // requests go to the firmware through the mailbox, as the host sent
        // them, with the port they came in on; the mailbox's level
        // interrupt is up while one waits.
        let (mut rtl, mut window) = switch_of(
            [Role::Fabric, Role::Disabled, host(0), Role::Disabled],
            Vec::new(),
        );
        let request = config_request(0x0300, 0x2a5, Some(0x1234_5678), Some(0xdead_beef));
        let enable = weft_regs::csr::mailbox::INT_ENABLE.address(0, 0);
        let on = weft_regs::csr::mailbox::ON_PENDING.encode(1);
        let mut bus = TopBus(rtl);
        bus.write32(enable, on);
        window.write32(enable, on);
        rtl = bus.0;
        assert!(!rtl.block().irq.val(), "nothing waits yet");
        let tlps = vec![
            VecDeque::new(),
            VecDeque::new(),
            VecDeque::from([request.clone()]),
            VecDeque::new(),
        ];
        let observed = run(&mut rtl, tlps, 1);
        assert!(observed.egress.iter().all(Vec::is_empty), "nothing leaves");
        assert!(rtl.block().irq.val(), "a TLP waits for the CPU");
        window
            .ingress(PortIndex(2), &request.to_bytes().expect("legal"))
            .expect("the port exists");
        let mut bus = TopBus(rtl);
        let got = common::top::empty_mailbox(&mut bus);
        let want = common::top::Mailboxed {
            lost: false,
            tlps: vec![(2, wire_dws(&request))],
        };
        assert_model_mailbox_agrees(got, want, &mut window);
        bus.0.run(2).expect("settles");
        assert!(!bus.0.block().irq.val(), "the mailbox is empty");
    });
}

#[test]
fn tlps_for_the_cpu_on_several_ports_at_once_are_all_queued_in_turn() {
    on_big_stack(|| {
        // Every port's host sends two configuration requests at once: all
        // eight reach the mailbox whole, each port's in order, the ports
        // taking turns in ascending order (the top's MailboxFeed).
        let (mut rtl, mut window) = switch_of([host(0), host(1), host(2), host(3)], Vec::new());
        let mut tlps = vec![VecDeque::new(); PORTS];
        for (p, queue) in tlps.iter_mut().enumerate() {
            for k in 0..2u16 {
                let data = (k == 0).then_some(0x1000_0000 * (p as u32 + 1));
                queue.push_back(config_request(0x0300 | p as u16, k, data, None));
            }
        }
        let mut want = Vec::new();
        for k in 0..2 {
            for (p, queue) in tlps.iter().enumerate() {
                want.push((p as u32, wire_dws(&queue[k])));
                window
                    .ingress(PortIndex(p as u8), &queue[k].to_bytes().expect("legal"))
                    .expect("the port exists");
            }
        }
        run(&mut rtl, tlps, 2);
        let got = common::top::empty_mailbox(&mut TopBus(rtl));
        let want = common::top::Mailboxed {
            lost: false,
            tlps: want,
        };
        assert_model_mailbox_agrees(got, want, &mut window);
    });
}

#[test]
fn a_full_mailbox_sets_lost_and_loses_only_the_excess() {
    on_big_stack(|| {
        // With no TLP popped, the mailbox holds `capacity::MAILBOX_TLPS`
        // TLPs: the first ones, whole; the later ones are lost and
        // STATUS.LOST says so (weft-model's `CsrWindow::queue_for_cpu`).
        let depth = weft_regs::capacity::MAILBOX_TLPS;
        let (mut rtl, mut window) = switch_of(
            [Role::Disabled, host(1), Role::Disabled, Role::Disabled],
            Vec::new(),
        );
        let sent: VecDeque<Packet> = (0..depth as u16 + 3)
            .map(|k| config_request(0x0300, k, Some(u32::from(k) << 8 | 0x5a), None))
            .collect();
        for packet in &sent {
            window
                .ingress(PortIndex(1), &packet.to_bytes().expect("legal"))
                .expect("the port exists");
        }
        let mut tlps = vec![VecDeque::new(); PORTS];
        tlps[1] = sent.clone();
        run(&mut rtl, tlps, 3);
        let got = common::top::empty_mailbox(&mut TopBus(rtl));
        let want = common::top::Mailboxed {
            lost: true,
            tlps: sent.iter().take(depth).map(|p| (1, wire_dws(p))).collect(),
        };
        assert_model_mailbox_agrees(got, want, &mut window);
    });
}

/// What the egress links saw while the switch ran with no TLP arriving.
#[derive(Debug, Default, PartialEq, Eq)]
struct Watched {
    /// TLPs that left, as (egress port, wire bytes), in order.
    left: Vec<(usize, Vec<u8>)>,
    /// Credits reported, as (egress port, `egress_consume`, `egress_consume_dws`).
    consumed: Vec<(usize, u64, u64)>,
}

/// Runs the switch for `cycles` with every egress link ready, the link
/// partners' credits as `credits` (posted, non-posted, completion: a bit
/// per port), and no TLP arriving.
fn watch(rtl: &mut CycleDriver<Top>, cycles: u64, credits: [u64; 3]) -> Watched {
    let mut watched = Watched::default();
    let mut receiving: Vec<Option<([u32; 4], Vec<u32>)>> = vec![None; PORTS];
    for _ in 0..cycles {
        let top = rtl.block();
        top.egress_credit_posted.next = credits[0].into();
        top.egress_credit_non_posted.next = credits[1].into();
        top.egress_credit_completion.next = credits[2].into();
        for i in 0..PORTS {
            top.egress[i].ready.next = true;
            top.ingress[i].valid.next = false;
        }
        rtl.settle().expect("the switch settles");
        let top = rtl.block();
        for (i, open) in receiving.iter_mut().enumerate() {
            let consume = top.egress_consume[i].val().to_u64();
            if consume != 0 {
                let dws = top.egress_consume_dws[i].val().to_u64();
                watched.consumed.push((i, consume, dws));
            }
            let port = &top.egress[i];
            if !port.valid.val() {
                continue;
            }
            let header = [
                port.dw0.val().to_u32(),
                port.dw1.val().to_u32(),
                port.dw2.val().to_u32(),
                port.dw3.val().to_u32(),
            ];
            let leaving = open.get_or_insert_with(|| (header, Vec::new()));
            let used = if port.eop.val() {
                DWS_PER_BEAT - (port.empty.val().to_u64() as usize).min(DWS_PER_BEAT)
            } else {
                DWS_PER_BEAT
            };
            let bus = port.payload.val();
            leaving
                .1
                .extend((0..used).map(|k| bus.get_bits::<32>(W - 32 * (k + 1)).to_u32()));
            if port.eop.val() {
                let (header, payload) = open.take().expect("opened");
                watched.left.push((i, wire(header, &payload)));
            }
        }
        rtl.tick().expect("the switch settles");
    }
    watched
}

/// Every credit at every link partner.
const ALL_CREDITS: [u64; 3] = [(1 << PORTS) - 1; 3];

#[test]
fn an_injected_configuration_request_leaves_on_its_port_and_is_answered_into_the_mailbox() {
    on_big_stack(|| {
        // The CPU's configuration request to the function on port 1's link
        // leaves there as it was written (weft-model's `Switch::inject`),
        // taking one non-posted header credit and no data credit (PCIe
        // Base 6.0 §2.6.1), and counts as sent. The function's completion
        // comes back on that link, is routed by its requester ID (§2.2.9)
        // on bus 0, whose route is the CPU's, and lands in the mailbox.
        let (mut rtl, mut window) = switch_of(
            [Role::Disabled, Role::Fabric, Role::Disabled, Role::Disabled],
            vec![Some(Destination::Cpu)],
        );
        let manager = 0x0008;
        let request = config_request(manager, 0x17, None, None);
        let bytes = request.to_bytes().expect("legal");
        let mut bus = TopBus(rtl);
        common::top::inject(&mut bus, 1, &bytes);
        common::top::inject(&mut window, 1, &bytes);
        rtl = bus.0;
        let watched = watch(&mut rtl, 40, ALL_CREDITS);
        let sent: Vec<_> = window
            .take_injected()
            .into_iter()
            .map(|d| {
                let Destination::Port(p) = d.to else {
                    panic!("the model injects out of a port")
                };
                (usize::from(p.0), d.packet.to_bytes().expect("legal"))
            })
            .collect();
        assert_eq!(
            sent,
            vec![(1, bytes.clone())],
            "the model sends it as it is"
        );
        assert_eq!(
            watched,
            Watched {
                left: sent,
                consumed: vec![(1, 1 << CLASS_NON_POSTED, 0)],
            }
        );

        let completion = Packet::new(
            Header {
                digest_present: false,
                poisoned: false,
                body: Body::Completion(Completion {
                    locked: false,
                    traffic_class: TrafficClass::from_bits(0),
                    attributes: attributes(0),
                    completer: Bdf(0x0300),
                    status: CompletionStatus::Successful,
                    byte_count_modified: false,
                    byte_count: 4,
                    requester: Bdf(manager),
                    tag: Tag::new(0x17).expect("10 bits"),
                    lower_address: 0,
                    data_dw: Some(1),
                }),
            },
            vec![0x12, 0x34, 0x56, 0x78],
        );
        window
            .ingress(PortIndex(1), &completion.to_bytes().expect("legal"))
            .expect("the port exists");
        let tlps = vec![
            VecDeque::new(),
            VecDeque::from([completion.clone()]),
            VecDeque::new(),
            VecDeque::new(),
        ];
        run(&mut rtl, tlps, 4);
        let mut plane = CsrDataPlane::new(TopBus(rtl)).expect("the RTL identifies as weft");
        let model = window
            .switch()
            .counters(PortIndex(1))
            .expect("exists")
            .clone();
        for e in 0..counter::NAMES.len() as u32 {
            if e != counter::STALL_CYCLES {
                let got = plane.read_counter(PortIndex(1), e).expect("a counter");
                assert_eq!(got, model.entry(e).expect("an entry"), "counter {e}");
            }
        }
        let got = common::top::empty_mailbox(plane.bus());
        let want = common::top::Mailboxed {
            lost: false,
            tlps: vec![(1, wire_dws(&completion))],
        };
        assert_model_mailbox_agrees(got, want, &mut window);
    });
}

#[test]
fn an_injected_tlp_waits_for_credit_of_its_class() {
    on_big_stack(|| {
        // A posted write of 6 DWs (two beats on this bus) for port 2's link
        // waits while its link partner has no posted credit, though it has
        // every other, and leaves once it has: one posted header credit and
        // 6 DWs of data reported as it is committed (§2.6.1).
        let (mut rtl, _window) = switch_of(
            [Role::Disabled, Role::Disabled, Role::Fabric, Role::Disabled],
            Vec::new(),
        );
        let common = common::tlp::Common {
            requester: 0x0008,
            tag: 0,
            traffic_class: 0,
            attributes: 0,
            digest: None,
            beyond_header: 0,
        };
        let write = common::tlp::packet(
            &Request::Memory {
                op: MemoryOp::Write,
                probe: common::Probe::Anywhere(0x12_3456_7000),
                length_dw: 6,
                hint: None,
            },
            &common,
            &[],
        )
        .expect("a legal write");
        let write = Packet {
            payload: (0u8..24).collect(),
            ..write
        };
        let bytes = write.to_bytes().expect("legal");
        let mut bus = TopBus(rtl);
        common::top::inject(&mut bus, 2, &bytes);
        rtl = bus.0;
        let no_posted = [ALL_CREDITS[0] & !(1 << 2), ALL_CREDITS[1], ALL_CREDITS[2]];
        assert_eq!(
            watch(&mut rtl, 40, no_posted),
            Watched::default(),
            "it waits"
        );
        assert_eq!(
            watch(&mut rtl, 40, ALL_CREDITS),
            Watched {
                left: vec![(2, bytes)],
                consumed: vec![(2, 1 << CLASS_POSTED, 6)],
            }
        );
    });
}

/// The RTL's mailbox held `want` (`got`, read over its CSR bus), and so does the model's.
fn assert_model_mailbox_agrees(
    got: common::top::Mailboxed,
    want: common::top::Mailboxed,
    window: &mut impl CsrBus,
) {
    assert_eq!(got, want);
    assert_eq!(common::top::empty_mailbox(window), want, "the model agrees");
}

/// Host 0's proxy fabric ID in [`host_and_endpoint`].
const PROXY: u16 = 0x0100;
/// The GPU's fabric ID, on the endpoint port's bus 2, and the ID host 0 knows it by.
const GPU_FABRIC: u16 = 0x0200;
const GPU_HOST: u16 = 0x1300;
/// Host 0's root port, the requester of its reads.
const ROOT_PORT: u16 = 0x0000;
/// The GPU's BAR in host 0's addresses and in the fabric's.
const BAR_HOST: u64 = 0x9000_0000;
const BAR_FABRIC: u64 = 0x40_0000_0000;
const BAR_SIZE: u64 = 1 << 20;

/// `top` as a switch with host 0 on port 0, whose window reaches a GPU on
/// endpoint port 1 bound to it (bus 2), the other ports disabled; and the
/// model, programmed alike.
fn host_and_endpoint(top: Top) -> (CycleDriver<Top>, CsrWindow) {
    programmed(top, &host_and_endpoint_setup())
}

/// The tables of [`host_and_endpoint`].
fn host_and_endpoint_setup() -> Setup {
    let port = |role, windows, ids| PortSetup {
        windows,
        ids,
        ..PortSetup::bare(role)
    };
    let window = Window {
        base: BAR_HOST,
        size: BAR_SIZE,
        fabric_base: BAR_FABRIC,
        permissions: weft_model::Permissions::READ_WRITE,
    };
    let mut buses = vec![None; BUSES as usize];
    buses[1] = Some(Destination::Port(PortIndex(0)));
    buses[2] = Some(Destination::Port(PortIndex(1)));
    Setup {
        ports: vec![
            port(
                Role::Host {
                    host: 0,
                    proxy: PROXY,
                },
                vec![((true, window), None)],
                vec![Some(IdMapping {
                    fabric: Bdf(GPU_FABRIC),
                    host: Bdf(GPU_HOST),
                })],
            ),
            port(
                Role::Endpoint {
                    owner: Some((0, PROXY)),
                    buses: (2, 2),
                    redirect: false,
                    swizzle: 0,
                    returns: false,
                },
                Vec::new(),
                Vec::new(),
            ),
            port(Role::Disabled, Vec::new(), Vec::new()),
            port(Role::Disabled, Vec::new(), Vec::new()),
        ],
        routes: vec![Some(AddressRoute {
            base: BAR_FABRIC,
            size: BAR_SIZE,
            to: Destination::Port(PortIndex(1)),
        })],
        buses,
    }
}

/// A memory read of `length_dw` DWs at `address` by host 0's root port with tag `tag`.
fn host_read(tag: u16, address: u64, length_dw: u16) -> Packet {
    memory_request(MemoryOp::Read, ROOT_PORT, tag, address, length_dw)
}

/// A memory request `op` of `length_dw` DWs at `address` by `requester` with
/// tag `tag`, its payload (if it has one) all 0xc3.
fn memory_request(op: MemoryOp, requester: u16, tag: u16, address: u64, length_dw: u16) -> Packet {
    let header = Header {
        digest_present: false,
        poisoned: false,
        body: Body::Memory(weft_pcie::tlp::MemoryRequest {
            op,
            traffic_class: TrafficClass::default(),
            attributes: attributes(0),
            address_type: weft_pcie::tlp::AddressType::default(),
            requester: Bdf(requester),
            tag: Tag::new(tag).expect("10 bits"),
            address,
            length_dw,
            first_be: 0xf,
            last_be: if length_dw == 1 { 0 } else { 0xf },
            processing_hint: None,
        }),
    };
    let payload = if op == MemoryOp::Write {
        vec![0xc3; 4 * usize::from(length_dw)]
    } else {
        Vec::new()
    };
    Packet::new(header, payload)
}

/// The GPU's successful completion to the proxy under `tag`, `data` DWs of
/// the `byte_count` bytes still to come.
fn gpu_completion(tag: Tag, byte_count: u16, data: u16) -> Packet {
    completion(GPU_FABRIC, PROXY, tag, byte_count, data)
}

/// A successful completion from `completer` to `requester` under `tag`,
/// `data` DWs of the `byte_count` bytes still to come.
fn completion(completer: u16, requester: u16, tag: Tag, byte_count: u16, data: u16) -> Packet {
    let header = Header {
        digest_present: false,
        poisoned: false,
        body: Body::Completion(Completion {
            locked: false,
            traffic_class: TrafficClass::default(),
            attributes: attributes(0),
            completer: Bdf(completer),
            status: CompletionStatus::Successful,
            byte_count_modified: false,
            byte_count,
            requester: Bdf(requester),
            tag,
            lower_address: 0,
            data_dw: Some(data),
        }),
    };
    Packet::new(header, vec![0x5a; 4 * usize::from(data)])
}

/// A TLP out of an egress port: (port, wire bytes).
type Sent = (usize, Vec<u8>);

/// Offers `tlps` on `port` of the RTL (until they have all left the
/// switch) and of the model; what left the RTL's egresses, and what the
/// model delivered out of ports, as (egress port, wire bytes) in order.
fn exchange(
    rtl: &mut CycleDriver<Top>,
    window: &mut CsrWindow,
    port: usize,
    tlps: &[Packet],
    seed: u64,
) -> (Vec<Sent>, Vec<Sent>) {
    let mut queues = vec![VecDeque::new(); PORTS];
    queues[port] = tlps.iter().cloned().collect();
    let observed = run(rtl, queues, seed);
    let got = observed
        .egress
        .into_iter()
        .enumerate()
        .flat_map(|(p, out)| out.into_iter().map(move |bytes| (p, bytes)))
        .collect();
    let mut want = Vec::new();
    for packet in tlps {
        let forwarding = window
            .switch_mut()
            .ingress(PortIndex(port as u8), &packet.to_bytes().expect("legal"))
            .expect("the port takes it");
        want.extend(
            forwarding
                .deliveries
                .into_iter()
                .filter(|d| d.to != Destination::Cpu)
                .map(out_of_a_port),
        );
    }
    (got, want)
}

/// A delivery of the model's out of a port, as (egress port, wire bytes).
fn out_of_a_port(delivery: weft_model::Delivery) -> Sent {
    let Destination::Port(p) = delivery.to else {
        panic!("the model answers the host, not the CPU");
    };
    (usize::from(p.0), delivery.packet.to_bytes().expect("legal"))
}

/// The completion `bytes` as the host sees it: requester ID, tag, completer ID, status.
fn completion_ids(bytes: &[u8]) -> (u16, u16, u16, CompletionStatus) {
    let packet = Packet::parse(bytes).expect("a legal TLP");
    let Body::Completion(c) = packet.header.body else {
        panic!("not a completion: {bytes:02x?}");
    };
    (c.requester.0, c.tag.get(), c.completer.0, c.status)
}

/// The memory request `bytes` as it travels the fabric: requester ID, tag, address.
fn request_ids(bytes: &[u8]) -> (u16, u16, u64) {
    let packet = Packet::parse(bytes).expect("a legal TLP");
    let Body::Memory(m) = packet.header.body else {
        panic!("not a memory request: {bytes:02x?}");
    };
    (m.requester.0, m.tag.get(), m.address)
}

#[test]
fn a_host_read_leaves_under_a_fabric_tag_and_its_completions_return_under_the_host_tag() {
    on_big_stack(|| {
        // DESIGN.md, "Domains and translation": a host's request enters the
        // fabric under the host's proxy ID with a tag the switch allocates
        // (PCIe Base 6.0 §2.2.6.2, 10-bit tags, here with T9 and T8 set);
        // its completions go back to the host with the host's requester ID
        // and tag and the ID the host knows the completer by (§2.2.9), and
        // the last one (§2.3.1.1: its data covers the Byte Count left)
        // frees the tag, after which a completion under it is unexpected.
        let (mut rtl, mut window) = host_and_endpoint(Top::default());
        let reads = [
            host_read(0x3a5, BAR_HOST + 0x40, 2),
            host_read(0x011, BAR_HOST + 0x80, 1),
        ];
        let (got, want) = exchange(&mut rtl, &mut window, 0, &reads, 11);
        assert_eq!(got, want, "the reads as the model sends them");
        let sent: Vec<_> = got
            .iter()
            .map(|(p, bytes)| (*p, request_ids(bytes)))
            .collect();
        assert_eq!(
            sent,
            [
                (1, (PROXY, 0, BAR_FABRIC + 0x40)),
                (1, (PROXY, 1, BAR_FABRIC + 0x80)),
            ],
            "under the proxy ID, with the first two tags"
        );

        // The first read answered in two completions, the second in one.
        let tag = |t| Tag::new(t).expect("10 bits");
        let completions = [
            gpu_completion(tag(0), 8, 1),
            gpu_completion(tag(1), 4, 1),
            gpu_completion(tag(0), 4, 1),
        ];
        let (got, want) = exchange(&mut rtl, &mut window, 1, &completions, 12);
        assert_eq!(got, want, "the completions as the model sends them");
        let answered: Vec<_> = got
            .iter()
            .map(|(p, bytes)| (*p, completion_ids(bytes)))
            .collect();
        let ok = CompletionStatus::Successful;
        assert_eq!(
            answered,
            [
                (0, (ROOT_PORT, 0x3a5, GPU_HOST, ok)),
                (0, (ROOT_PORT, 0x011, GPU_HOST, ok)),
                (0, (ROOT_PORT, 0x3a5, GPU_HOST, ok)),
            ],
            "to the host's requester ID and tags, from the ID it knows the GPU by"
        );

        // Both tags are free: a late completion under one is dropped, and
        // the next read takes the next tag in turn.
        let (got, want) = exchange(
            &mut rtl,
            &mut window,
            1,
            &[gpu_completion(tag(0), 4, 1)],
            13,
        );
        assert_eq!(
            (got.len(), want.len()),
            (0, 0),
            "an unexpected completion is dropped"
        );
        let (got, _) = exchange(&mut rtl, &mut window, 0, &[host_read(0x7, BAR_HOST, 1)], 14);
        assert_eq!(request_ids(&got[0].1).1, 2, "tags go round");
    });
}

#[test]
fn a_host_read_never_answered_is_completed_with_completer_abort_after_the_timeout() {
    on_big_stack(|| {
        // DESIGN.md: no host ever waits forever. A read the GPU never
        // answers is completed to the host, as the host sent it, with
        // Completer Abort (PCIe Base 6.0 §2.8, §2.3.1) once the timeout
        // has passed, by the sweep that visits every entry in turn.
        // At 1 MHz a microsecond is a cycle: COMPLETION_TIMEOUT of 200 µs
        // is 200 cycles, written through the firmware's driver.
        const TIMEOUT: u32 = 200;
        let (rtl, mut window) = host_and_endpoint(Top::with_clock_mhz(1));
        let mut rtl = CsrDataPlane::new(TopBus(rtl)).expect("the RTL identifies as weft");
        rtl.set_completion_timeout_us(TIMEOUT).expect("in range");
        CsrDataPlane::new(&mut window)
            .expect("the model identifies as weft")
            .set_completion_timeout_us(TIMEOUT)
            .expect("in range");
        let mut rtl = rtl.into_bus().0;
        let read = host_read(0x2c4, BAR_HOST + 0x100, 4);
        let (got, want) = exchange(&mut rtl, &mut window, 0, std::slice::from_ref(&read), 21);
        assert_eq!(got, want, "the read leaves as the model sends it");
        let early = watch(&mut rtl, u64::from(TIMEOUT) / 2, ALL_CREDITS);
        assert!(
            early.left.is_empty(),
            "nothing is answered before the timeout"
        );
        let sweep = weft_regs::capacity::OUTSTANDING_PER_HOST as u64;
        let late = watch(&mut rtl, u64::from(TIMEOUT) + sweep + 16, ALL_CREDITS);
        // The model, its read sent at time 0, times it out at 200 µs, not before.
        let timeout_ns = u64::from(TIMEOUT) * 1_000;
        assert!(window.switch_mut().advance_to(timeout_ns - 1).is_empty());
        let expected: Vec<_> = window
            .switch_mut()
            .advance_to(timeout_ns)
            .into_iter()
            .map(out_of_a_port)
            .collect();
        assert_eq!(late.left, expected, "the answer the model gives");
        assert_eq!(
            completion_ids(&late.left[0].1),
            (ROOT_PORT, 0x2c4, 0x0a00, CompletionStatus::CompleterAbort),
            "to the host's requester and tag, from the port's completer ID"
        );
        assert_eq!(
            late.consumed,
            [(0, 1 << CLASS_COMPLETION, 0)],
            "with one completion credit"
        );
    });
}

#[test]
fn a_void_completion_leaves_its_read_to_be_completed_with_completer_abort() {
    on_big_stack(|| {
        // A GPU's completion whose later beat belies its Length is
        // Malformed (PCIe Base 6.0 §2.2.2). Its first beats have left for
        // the host, so it leaves void and the host discards it; the read it
        // would have finished stays outstanding, as weft-model, which drops
        // the completion at its ingress, keeps it, and the host still gets
        // Completer Abort at the timeout (§2.8), not its own timeout.
        const TIMEOUT: u32 = 200;
        let setup = host_and_endpoint_setup();
        let mut top =
            TopHarness::<W, PORTS>::with_top(Top::with_clock_mhz(1)).expect("well formed");
        let mut window = model_switch();
        for plane in [&mut top as &mut dyn CsrBus, &mut window] {
            let mut plane = CsrDataPlane::new(plane).expect("weft");
            program(&mut plane, &setup);
            plane.set_completion_timeout_us(TIMEOUT).expect("in range");
        }
        let read = host_read(0x2c4, BAR_HOST + 0x100, 16)
            .to_bytes()
            .expect("legal");
        let (dropped, got) = meets_the_models_fate(&mut top, &mut window, "the read", &read);
        assert_eq!(dropped, None, "the read is forwarded");
        let (_, fabric_tag, _) = request_ids(&got[0].1);
        // 64 bytes by its Length, 32 on the wire: its second beat (of four
        // DWs at 128 bits) ends it two beats short.
        let whole = gpu_completion(Tag::new(fabric_tag).expect("a tag"), 64, 16);
        let whole = whole.to_bytes().expect("legal");
        let short = &whole[..12 + 4 * 8];
        let carried = top.carry(1, short).expect("carried");
        let model = window
            .switch_mut()
            .ingress(PortIndex(1), short)
            .expect("a port");
        assert_eq!(model.dropped, Some(DropReason::Malformed), "the model");
        assert!(model.deliveries.is_empty(), "the model sends nothing");
        assert_eq!(carried.drops, [(1, reason_code(DropReason::Malformed))]);
        assert!(carried.egress.is_empty(), "nothing reaches the host whole");
        let void: Vec<_> = carried
            .nullified
            .iter()
            .map(|(p, b, _)| (*p, b.len()))
            .collect();
        assert_eq!(
            void,
            [(0, 12 + 4 * 16)],
            "it leaves void, as long as its Length"
        );
        let sweep = weft_regs::capacity::OUTSTANDING_PER_HOST as u64;
        let late = top.idle(u64::from(TIMEOUT) + sweep).expect("idles");
        let expected: Vec<_> = window
            .switch_mut()
            .advance_to(u64::from(TIMEOUT) * 1_000)
            .into_iter()
            .map(out_of_a_port)
            .collect();
        let got: Vec<_> = late.egress.into_iter().map(|(p, b, _)| (p, b)).collect();
        assert_eq!(got, expected, "the answer the model gives");
        assert_eq!(
            completion_ids(&got[0].1),
            (ROOT_PORT, 0x2c4, 0x0a00, CompletionStatus::CompleterAbort),
            "to the host's requester and tag"
        );
        counters_agree(&mut top, &window);
    });
}

#[test]
fn abandoning_a_port_completes_the_host_reads_routed_out_of_it_with_unsupported_request() {
    on_big_stack(|| {
        // A write of the endpoint port's ABANDON with host 0's port in
        // HOST_PORTS (the GPU is gone) completes host 0's read routed there
        // with Unsupported Request, as weft-model's `abandon_requests_to`
        // does; a read the host sends while the table sweeps waits and
        // leaves under the next tag once the sweep is over.
        let (mut rtl, mut window) = host_and_endpoint(Top::default());
        let read = host_read(0x155, BAR_HOST + 0x200, 1);
        let (got, want) = exchange(&mut rtl, &mut window, 0, std::slice::from_ref(&read), 31);
        assert_eq!(got, want, "the read leaves as the model sends it");
        let abandon = weft_regs::csr::port::ABANDON.address(1, 0);
        let host_port_0 = weft_regs::csr::port::ABANDON_HOST_PORTS.encode(1);
        let mut bus = TopBus(rtl);
        bus.write32(abandon, host_port_0);
        window.write32(abandon, host_port_0);
        let expected: Vec<_> = window
            .switch_mut()
            .take_synthesized()
            .into_iter()
            .map(out_of_a_port)
            .collect();
        rtl = bus.0;
        let next = host_read(0x156, BAR_HOST + 0x300, 1);
        let mut queues = vec![VecDeque::new(); PORTS];
        queues[0] = VecDeque::from([next.clone()]);
        // The read waits in the ingress pipeline while the table sweeps.
        let sweep = weft_regs::capacity::OUTSTANDING_PER_HOST as u64;
        let observed = run_until_idle_for(&mut rtl, queues, 32, sweep + 64);
        assert_eq!(
            observed.egress[0],
            expected.iter().map(|(_, b)| b.clone()).collect::<Vec<_>>(),
            "the answer the model gives, to the host"
        );
        assert_eq!(
            completion_ids(&expected[0].1),
            (
                ROOT_PORT,
                0x155,
                0x0a00,
                CompletionStatus::UnsupportedRequest
            ),
        );
        let sent: Vec<_> = observed.egress[1].iter().map(|b| request_ids(b)).collect();
        assert_eq!(
            sent,
            [(PROXY, 1, BAR_FABRIC + 0x300)],
            "the next read, after the sweep"
        );
    });
}

#[test]
fn a_disabled_port_asks_for_configuration_requests_again_until_it_is_settled() {
    on_big_stack(|| {
        // PCIe Base 6.0 §2.3.1, §6.6.1: before the fabric manager settles
        // the ports, a host's configuration request on a port still
        // disabled is answered with Request Retry Status (no data, Byte
        // Count 4) from the port's completer ID, as the model answers it; a
        // memory read there is only dropped (RRS is for configuration
        // requests alone). Once the port is settled, the request is dropped
        // unanswered.
        let mut setup = Setup {
            ports: (0..PORTS)
                .map(|p| PortSetup {
                    completer: 0x0a00 | p as u16,
                    settled: p != 0,
                    ..PortSetup::bare(Role::Disabled)
                })
                .collect(),
            routes: Vec::new(),
            buses: Vec::new(),
        };
        let (mut rtl, mut window) = programmed(Top::default(), &setup);
        let read = config_request(ROOT_PORT, 0x2a5, None, None);
        let write = config_request(ROOT_PORT, 0x013, Some(0x0003_0201), None);
        let memory = host_read(0x155, 0x1000, 1);
        let tlps = [read.clone(), memory.clone(), write.clone()];
        let (got, want) = exchange(&mut rtl, &mut window, 0, &tlps, 41);
        assert_eq!(got, want, "the answers the model gives");
        let answers: Vec<_> = got
            .iter()
            .map(|(p, bytes)| (*p, completion_ids(bytes)))
            .collect();
        let retry = |tag| (0, (ROOT_PORT, tag, 0x0a00, CompletionStatus::RequestRetry));
        assert_eq!(answers, [retry(0x2a5), retry(0x013)]);
        for (_, bytes) in &got {
            let Body::Completion(c) = Packet::parse(bytes).expect("legal").header.body else {
                unreachable!("checked above");
            };
            assert_eq!((c.byte_count, c.lower_address, c.data_dw), (4, 0, None));
        }
        // The fabric manager settles port 0: the same requests are dropped.
        setup.ports[0].settled = true;
        let (mut rtl, mut window) = programmed(Top::default(), &setup);
        let (got, want) = exchange(&mut rtl, &mut window, 0, &tlps, 42);
        assert_eq!((got, want), (Vec::new(), Vec::new()), "nothing answered");
    });
}

#[test]
fn an_endpoint_port_returning_peer_traffic_sends_it_back_out_of_itself() {
    on_big_stack(|| {
        // DESIGN.md and docs/registers.md, RETURN_TO_INGRESS: an endpoint
        // port facing a conventional switch whose downstream ports redirect
        // peer traffic upstream (ACS P2P Request and Completion Redirect,
        // PCIe Base 6.0 §6.12.1.1) sends a peer request routed back to it
        // out of it again, and a completion only between two functions of
        // one owner host; a port without it drops both (RoutesToIngress),
        // answering a read with Unsupported Request.
        //
        // Port 0 (buses 2..=3, host 0's, 02:00.1 bound to host 1 on its
        // own) returns; port 2 (bus 4, host 0's) does not. Each has a peer
        // window at 0x9000_0000 onto a fabric region routed back to itself.
        let window = |fabric_base| Window {
            base: 0x9000_0000,
            size: 0x1000,
            fabric_base,
            permissions: weft_model::Permissions::READ_WRITE,
        };
        let endpoint = |buses, returns, fabric_base, functions| PortSetup {
            windows: vec![((true, window(fabric_base)), None)],
            functions,
            ..PortSetup::bare(Role::Endpoint {
                owner: Some((0, 0x0100)),
                buses,
                redirect: false,
                swizzle: 0,
                returns,
            })
        };
        let vf = FunctionOwner {
            function: Bdf(0x0201),
            owner: Owner {
                host: HostIndex(1),
                proxy_id: Bdf(0x0108),
            },
            p2p_request_redirect: false,
            intx_swizzle: 0,
        };
        let mut buses = vec![None; BUSES as usize];
        buses[2] = Some(Destination::Port(PortIndex(0)));
        buses[3] = Some(Destination::Port(PortIndex(0)));
        buses[4] = Some(Destination::Port(PortIndex(2)));
        let route = |base, port| {
            Some(AddressRoute {
                base,
                size: 0x1000,
                to: Destination::Port(PortIndex(port)),
            })
        };
        let setup = Setup {
            ports: vec![
                endpoint((2, 3), true, 0x40_0000_0000, vec![Some(vf)]),
                PortSetup::bare(Role::Disabled),
                endpoint((4, 4), false, 0x50_0000_0000, Vec::new()),
                PortSetup::bare(Role::Disabled),
            ],
            routes: vec![route(0x40_0000_0000, 0), route(0x50_0000_0000, 2)],
            buses,
        };
        let (mut rtl, mut window) = programmed(Top::default(), &setup);
        let tag = |t| Tag::new(t).expect("10 bits");
        let returning = [
            // 02:00.0 writes and reads its peer 03:00.0's BAR through the window.
            memory_request(MemoryOp::Write, 0x0200, 1, 0x9000_0010, 1),
            memory_request(MemoryOp::Read, 0x0200, 2, 0x9000_0020, 1),
            // 03:00.0 answers 02:00.0 (both host 0's): it goes back.
            completion(0x0300, 0x0200, tag(2), 4, 1),
            // The VF (host 1's) answers 02:00.0 (host 0's): dropped.
            completion(0x0201, 0x0200, tag(3), 4, 1),
        ];
        let (got, want) = exchange(&mut rtl, &mut window, 0, &returning, 21);
        assert_eq!(got, want, "as the model returns them");
        let ports: Vec<_> = got.iter().map(|(p, _)| *p).collect();
        assert_eq!(ports, [0, 0, 0], "three back out of port 0");
        assert_eq!(request_ids(&got[0].1), (0x0200, 1, 0x40_0000_0010));
        assert_eq!(request_ids(&got[1].1), (0x0200, 2, 0x40_0000_0020));
        assert_eq!(
            completion_ids(&got[2].1),
            (0x0200, 2, 0x0300, CompletionStatus::Successful)
        );

        let refused = [
            memory_request(MemoryOp::Write, 0x0400, 4, 0x9000_0010, 1),
            memory_request(MemoryOp::Read, 0x0400, 5, 0x9000_0020, 1),
        ];
        let (got, want) = exchange(&mut rtl, &mut window, 2, &refused, 22);
        assert_eq!(got, want, "as the model refuses them");
        assert_eq!(got.len(), 1, "only the read is answered");
        assert_eq!(
            (got[0].0, completion_ids(&got[0].1)),
            (2, (0x0400, 5, 0x0a00, CompletionStatus::UnsupportedRequest))
        );
        let drops = |p| {
            window
                .switch()
                .counters(PortIndex(p))
                .expect("exists")
                .drops_for(DropReason::RoutesToIngress)
        };
        assert_eq!((drops(0), drops(2)), (1, 2), "RoutesToIngress per port");
        let mut rtl = CsrDataPlane::new(TopBus(rtl)).expect("the RTL identifies as weft");
        let entry = counter::FIRST_DROP + reason_code(DropReason::RoutesToIngress);
        let read = |rtl: &mut CsrDataPlane<TopBus<W, PORTS>>, p| {
            rtl.read_counter(PortIndex(p), entry).expect("a counter")
        };
        assert_eq!(
            (read(&mut rtl, 0), read(&mut rtl, 2)),
            (1, 2),
            "in the RTL too"
        );
    });
}

#[test]
fn an_error_message_routed_to_the_cpu_is_queued_twice_unless_longer_than_a_beat() {
    on_big_stack(|| {
        // An endpoint's error message goes to its owner's proxy and is
        // copied to the CPU's event log (DESIGN.md); when the proxy's bus
        // routes to the CPU too, the model queues it twice. The RTL queues
        // both copies of a message that fits its first beat (every message
        // without data), and one copy of a longer one, whose second
        // delivery is lost with STATUS.LOST (`top::MailboxFeed`).
        let (mut rtl, mut window) = host_and_endpoint(Top::default());
        let mut bus = TopBus(rtl);
        let proxy_to_cpu = CsrDataPlane::new(&mut bus)
            .expect("the RTL identifies as weft")
            .set_bus_route(1, Some(Destination::Cpu));
        proxy_to_cpu.expect("bus 1 exists");
        CsrDataPlane::new(&mut window)
            .expect("the model identifies as weft")
            .set_bus_route(1, Some(Destination::Cpu))
            .expect("bus 1 exists");
        rtl = bus.0;
        // ERR_NONFATAL (code 0x31, §2.2.8.3) from the GPU (02:00.0), routed
        // locally (r = 100b): Msg (DW0 byte 0x34) and MsgD of 8 DWs (0x74,
        // two beats of payload at 128 bits).
        let message = |dw0: u32, payload: usize| {
            let mut bytes: Vec<u8> = [dw0, 0x0200_0031, 0, 0]
                .iter()
                .flat_map(|dw| dw.to_be_bytes())
                .collect();
            bytes.extend((0..4 * payload).map(|k| k as u8));
            Packet::parse(&bytes).expect("a legal message")
        };
        let sent = [message(0x3400_0000, 0), message(0x7400_0008, 8)];
        let mut tlps = vec![VecDeque::new(); PORTS];
        tlps[1] = sent.iter().cloned().collect();
        run(&mut rtl, tlps, 31);
        for packet in &sent {
            window
                .ingress(PortIndex(1), &packet.to_bytes().expect("legal"))
                .expect("the port exists");
        }
        let want = common::top::empty_mailbox(&mut window);
        assert!(!want.lost, "the model keeps all four");
        assert_eq!(want.tlps.len(), 4);
        // As the CPU gets it: routed by ID (r = 010b) to the proxy, 01:00.0 (§2.2.8).
        assert_eq!(
            want.tlps[0],
            (1, vec![0x3200_0000, 0x0200_0031, 0x0100_0000, 0])
        );
        let got = common::top::empty_mailbox(&mut TopBus(rtl));
        assert_eq!(
            got,
            common::top::Mailboxed {
                lost: true,
                tlps: want.tlps[..3].to_vec(),
            },
            "both copies of the short one, one of the long one"
        );
    });
}

/// What becomes of a TLP whose beats may belie its Length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LengthFate {
    /// Its first beat shows the mismatch: dropped there, nothing leaves.
    DroppedAtFirstBeat,
    /// Only a later beat shows it: its first beats left, so it leaves void,
    /// with the DWs its Length says, as these many bytes.
    LeavesVoid(usize),
    /// Its beats carry what its Length says.
    Forwarded,
}

/// The RTL top and the model, every port a fabric port, with region 0
/// routed out of port 1 and region 1 to the CPU; and the two regions' bases.
fn region_0_out_of_port_1() -> (TopHarness<W, PORTS>, CsrWindow, [u64; 2]) {
    let route = |r: usize, to| {
        let (base, size) = region(r);
        Some(AddressRoute { base, size, to })
    };
    let setup = Setup {
        ports: vec![PortSetup::bare(Role::Fabric); PORTS],
        routes: vec![
            route(0, Destination::Port(PortIndex(1))),
            route(1, Destination::Cpu),
        ],
        buses: vec![None; BUSES as usize],
    };
    let mut top = TopHarness::<W, PORTS>::new().expect("well formed");
    program(&mut CsrDataPlane::new(&mut top).expect("weft"), &setup);
    let mut window = model_switch();
    program(&mut CsrDataPlane::new(&mut window).expect("weft"), &setup);
    (top, window, [region(0).0, region(1).0])
}

/// A memory write (or read) with a 4 DW header (§2.2.1: MWr 0x60, MRd
/// 0x20) at `base`, `length` in its Length field, followed by `dws` DWs.
/// Its byte enables are well formed for its Length: a one-DW request has
/// Last DW BE 0000b (§2.2.5).
fn tlp_of_length(base: u64, write: bool, length: u32, dws: u32) -> Vec<u8> {
    let fmt = if write { 0x6000_0000 } else { 0x2000_0000 };
    let byte_enables = if length == 1 { 0x0f } else { 0xff };
    [
        fmt | length,
        0x0100_0000 | byte_enables,
        (base >> 32) as u32,
        base as u32,
    ]
    .into_iter()
    .chain((0..dws).map(|k| 0xc0de_0000 | k))
    .flat_map(u32::to_be_bytes)
    .collect()
}

/// Offers `bytes` at port 0 of [`region_0_out_of_port_1`]'s RTL and model
/// and checks that it meets `fate` in the RTL, as the model has it.
fn carry_to_its_fate(
    top: &mut TopHarness<W, PORTS>,
    window: &mut CsrWindow,
    what: &str,
    bytes: Vec<u8>,
    fate: LengthFate,
) {
    let carried = top.carry(0, &bytes).expect("carried");
    let model = window
        .switch_mut()
        .ingress(PortIndex(0), &bytes)
        .expect("the port exists");
    if fate == LengthFate::Forwarded {
        assert!(carried.nullified.is_empty(), "{what}");
        assert!(carried.drops.is_empty(), "{what}");
        let sent: Vec<_> = model.deliveries.into_iter().map(out_of_a_port).collect();
        let got: Vec<_> = carried.egress.into_iter().map(|(p, b, _)| (p, b)).collect();
        assert_eq!(got, sent, "{what}: as the model forwards it");
        assert_eq!(got, [(1, bytes)], "{what}: unchanged, out of port 1");
        return;
    }
    let malformed = reason_code(DropReason::Malformed);
    assert_eq!(carried.drops, [(0, malformed)], "{what}");
    assert!(carried.egress.is_empty(), "{what}: nothing leaves whole");
    assert_eq!(
        model.dropped,
        Some(DropReason::Malformed),
        "{what}: the model"
    );
    let void: Vec<_> = carried
        .nullified
        .iter()
        .map(|(p, b, _)| (*p, b.len()))
        .collect();
    if let LengthFate::LeavesVoid(length) = fate {
        assert_eq!(void, [(1, length)], "{what}: its first beats leave void");
    } else {
        assert!(void.is_empty(), "{what}: nothing of it leaves");
    }
}

/// Every counter of ports 0 and 1 reads the same from the RTL as from the model.
fn counters_agree(top: &mut TopHarness<W, PORTS>, window: &CsrWindow) {
    let mut rtl = CsrDataPlane::new(top).expect("weft");
    for p in 0..2u8 {
        let index = PortIndex(p);
        let model = window.switch().counters(index).expect("exists");
        for entry in 0..counter::NAMES.len() as u32 {
            assert_eq!(
                rtl.read_counter(index, entry).expect("a counter"),
                model.entry(entry).expect("an entry"),
                "port {p} {}",
                counter::NAMES[entry as usize].name
            );
        }
    }
}

#[test]
fn a_tlp_whose_beats_belie_its_length_is_malformed() {
    on_big_stack(|| {
        // PCIe Base 6.0 §2.2.2: a TLP's data is what its Length says; one
        // that disagrees is Malformed, dropped and counted, never forwarded.
        // The RTL sees it at the first beat (4 DWs of payload at 128 bits)
        // when either length fits that beat. When both are longer, its
        // first beats are cut through before the mismatch shows: the TLP
        // leaves void (nullified, so its receiver discards it; PCIe Base
        // 6.0 §3.6) and counts as the model's Malformed drop, not as sent.
        // Fabric port 0 routes region 0 out of port 1, and well-formed
        // writes still go through after each.
        let (mut top, mut window, [base, _]) = region_0_out_of_port_1();
        let tlp = |write, length, dws| tlp_of_length(base, write, length, dws);
        use LengthFate::*;
        let cases = [
            (
                "one DW more than Length, in the one beat",
                tlp(true, 2, 3),
                DroppedAtFirstBeat,
            ),
            (
                "a second beat past a one-beat Length",
                tlp(true, 2, 6),
                DroppedAtFirstBeat,
            ),
            (
                "a first beat that ends a two-beat Length",
                tlp(true, 8, 3),
                DroppedAtFirstBeat,
            ),
            (
                "a read with a data DW",
                tlp(false, 1, 1),
                DroppedAtFirstBeat,
            ),
            ("as Length says", tlp(true, 8, 8), Forwarded),
            (
                "a second beat that ends a three-beat Length",
                tlp(true, 12, 8),
                // Filled out to its Length's three beats.
                LeavesVoid(16 + 4 * 12),
            ),
            ("three beats as Length says", tlp(true, 12, 12), Forwarded),
            (
                "a third beat past a two-beat Length",
                tlp(true, 8, 12),
                // Ended at its Length's second beat, the third discarded.
                LeavesVoid(16 + 4 * 8),
            ),
            ("four beats as Length says", tlp(true, 16, 16), Forwarded),
            // A void TLP's last beat is as long as its Length makes it.
            (
                "a last beat one DW short",
                tlp(true, 8, 7),
                LeavesVoid(16 + 4 * 8),
            ),
            (
                "a last beat one DW long",
                tlp(true, 7, 8),
                LeavesVoid(16 + 4 * 7),
            ),
            ("seven DWs as Length says", tlp(true, 7, 7), Forwarded),
        ];
        for (what, bytes, fate) in cases {
            carry_to_its_fate(&mut top, &mut window, what, bytes, fate);
        }
        // The counters agree: eight Malformed drops, four writes in and out.
        counters_agree(&mut top, &window);
    });
}

/// A TLP of header `dws` (3 or 4 DWs, as its Fmt says) and, if its Fmt
/// says data, the DWs its Length says.
fn tlp_of_header(dws: [u32; 4]) -> Vec<u8> {
    let header_dws = if dws[0] & (1 << 29) != 0 { 4 } else { 3 };
    let length = match dws[0] & 0x3ff {
        0 => 1024,
        length => length,
    };
    let data = if dws[0] & (1 << 30) != 0 { length } else { 0 };
    dws[..header_dws]
        .iter()
        .copied()
        .chain((0..data).map(|k| 0xda7a_0000 | k))
        .flat_map(u32::to_be_bytes)
        .collect()
}

/// Offers `bytes` at port 0 of an RTL top and of the model programmed
/// alike; the RTL must drop what the model drops, for its reason, and send
/// what it sends, nothing void. Returns the model's drop reason and what
/// left.
fn meets_the_models_fate(
    top: &mut TopHarness<W, PORTS>,
    window: &mut CsrWindow,
    what: &str,
    bytes: &[u8],
) -> (Option<DropReason>, Vec<Sent>) {
    let carried = top.carry(0, bytes).expect("carried");
    let model = window
        .switch_mut()
        .ingress(PortIndex(0), bytes)
        .expect("the port exists");
    let dropped: Vec<_> = model
        .dropped
        .map(|r| (0, reason_code(r)))
        .into_iter()
        .collect();
    assert_eq!(carried.drops, dropped, "{what}: drops as the model");
    let sent: Vec<_> = model.deliveries.into_iter().map(out_of_a_port).collect();
    let got: Vec<_> = carried.egress.into_iter().map(|(p, b, _)| (p, b)).collect();
    assert_eq!(got, sent, "{what}: sends as the model");
    assert!(carried.nullified.is_empty(), "{what}: nothing leaves void");
    (model.dropped, got)
}

#[test]
fn a_header_that_breaks_a_rule_of_section_2_2_is_malformed() {
    on_big_stack(|| {
        // Each rule a receiver checks in a header (PCIe Base 6.0 §2.2),
        // broken at fabric port 0, against the same TLP with the rule kept.
        // The broken one is Malformed: dropped and counted, never forwarded
        // or answered. The kept one meets whatever fate the model gives it
        // (region 0 is routed out of port 1; no bus is routed).
        let (mut top, mut window, [base, _]) = region_0_out_of_port_1();
        let high = (base >> 32) as u32;
        let low = base as u32;
        // 4 DW memory requests (§2.2.1): MRd 0x20, MWr 0x60, FetchAdd 0x6c,
        // CAS 0x6e, DMWr 0x7b; requester 01:00.0, tag 0x05, DW1 byte 3
        // the byte enables (Last DW BE in bits 7:4).
        let request = |byte0: u32, length: u32, byte_enables: u32, offset: u32| {
            [
                byte0 << 24 | length,
                0x0100_0500 | byte_enables,
                high,
                low + offset,
            ]
        };
        // CfgRd0 (0x04) to 02:00.0, register 0x10; IORd (0x02) at 0xcf8; CplD (0x4a)
        // from 02:00.0 to 01:00.0 with the status given; MsgD routed by
        // address (0x71) to region 0 with the code given.
        let config = |dw0: u32| [dw0, 0x0100_050f, 0x0200_0010, 0];
        let io = |dw0: u32| [dw0, 0x0100_050f, 0x0000_0cf8, 0];
        let completion = |status: u32| [0x4a00_0001, 0x0200_0004 | status << 13, 0x0100_0500, 0];
        let message = |tc: u32, code: u32| [0x7100_0001 | tc << 20, 0x0100_0000 | code, high, low];
        // TH (DW0 bit 16): the request carries processing hints.
        let with_hints = |mut dws: [u32; 4]| {
            dws[0] |= 1 << 16;
            dws
        };
        let cases = [
            // §2.2.5.1: a 1 DW request has Last DW BE 0000b.
            (
                "1 DW write, Last DW BE 0001b",
                request(0x60, 1, 0x1f, 0),
                request(0x60, 1, 0x0f, 0),
            ),
            // A longer one has contiguous enabled bytes...
            (
                "3 DW write, First DW BE 0110b",
                request(0x60, 3, 0xf6, 0),
                request(0x60, 3, 0xfc, 0),
            ),
            // ...unless it is 2 DWs at a QW-aligned address.
            (
                "2 DW read, gaps, not QW aligned",
                request(0x20, 2, 0xa5, 4),
                request(0x20, 2, 0xa5, 0),
            ),
            (
                "2 DW read, Last DW BE 0000b",
                request(0x20, 2, 0x0f, 0),
                request(0x20, 2, 0x1f, 0),
            ),
            // TH on a read puts a Steering Tag where the byte enables were;
            // on a write they are still byte enables (§2.2.7.1).
            (
                "TH write, Steering Tag as byte enables",
                with_hints(request(0x60, 4, 0x5a, 0)),
                with_hints(request(0x20, 4, 0x5a, 0)),
            ),
            // §2.2.7.1: no request crosses a 4 KiB boundary.
            (
                "read across 4 KiB",
                request(0x20, 2, 0xff, 0xffc),
                request(0x20, 2, 0xff, 0xff8),
            ),
            // §2.2.4.1: 4 DW headers are for addresses of 4 GiB and up.
            (
                "4 DW header below 4 GiB",
                [0x2000_0001, 0x0100_050f, 0, low],
                request(0x20, 1, 0x0f, 0),
            ),
            // Table 2-15: FetchAdd of 1 or 2 DWs, naturally aligned; CAS of 2, 4 or 8.
            (
                "FetchAdd of 3 DWs",
                request(0x6c, 3, 0, 0),
                request(0x6c, 2, 0, 0),
            ),
            (
                "FetchAdd of 8 bytes at 4",
                request(0x6c, 2, 0, 4),
                request(0x6c, 2, 0, 8),
            ),
            (
                "CAS of 2 × 16 bytes at 8",
                request(0x6e, 8, 0, 8),
                request(0x6e, 8, 0, 16),
            ),
            (
                "a Deferrable Memory Write",
                request(0x7b, 1, 0x0f, 0),
                request(0x60, 1, 0x0f, 0),
            ),
            // §2.2.7.1: Configuration and I/O requests are TC0, Attr 00b, 1 DW.
            ("CfgRd0 on TC1", config(0x0410_0001), config(0x0400_0001)),
            (
                "CfgRd0 with Relaxed Ordering",
                config(0x0400_2001),
                config(0x0400_0001),
            ),
            ("IORd of 2 DWs", io(0x0200_0002), io(0x0200_0001)),
            // Table 2-37: Completion Status 011b is reserved; 100b is CA.
            (
                "CplD with status 011b",
                completion(0b011),
                completion(0b100),
            ),
            // §2.2.8.1: Assert_INTA (0x20) is TC0 only; Vendor_Defined Type 1 (0x7f) is not.
            ("Assert_INTA on TC1", message(1, 0x20), message(1, 0x7f)),
        ];
        for (what, broken, kept) in cases {
            let (dropped, _) =
                meets_the_models_fate(&mut top, &mut window, what, &tlp_of_header(broken));
            assert_eq!(dropped, Some(DropReason::Malformed), "{what}");
            let (dropped, _) =
                meets_the_models_fate(&mut top, &mut window, what, &tlp_of_header(kept));
            assert_ne!(
                dropped,
                Some(DropReason::Malformed),
                "{what}, the rule kept"
            );
        }
        counters_agree(&mut top, &window);
    });
}

#[test]
fn a_void_tlp_for_the_cpu_is_not_queued() {
    on_big_stack(|| {
        // A write routed to the CPU whose later beat belies its Length is
        // Malformed as any other (§2.2.2): the model never delivers it, and
        // the RTL, which has queued its first beats, drops it from the
        // mailbox as its last DW shows it void, without STATUS.LOST. A
        // well-formed one after it is queued whole.
        let (mut top, mut window, [_, to_cpu]) = region_0_out_of_port_1();
        let cases = [
            ("a second beat that ends a three-beat Length", 12, 8),
            ("a third beat past a two-beat Length", 8, 12),
            ("a last beat one DW short", 8, 7),
            ("as Length says", 8, 8),
        ];
        for (what, length, dws) in cases {
            let bytes = tlp_of_length(to_cpu, true, length, dws);
            top.carry(0, &bytes).expect("carried");
            // The mailbox takes a DW per cycle, past the carry's quiet end.
            top.idle(64).expect("idles");
            let model = window
                .switch_mut()
                .ingress(PortIndex(0), &bytes)
                .expect("the port exists");
            let whole = length == dws;
            assert_eq!(
                model.dropped,
                (!whole).then_some(DropReason::Malformed),
                "{what}: the model"
            );
            for delivery in model.deliveries {
                assert_eq!(delivery.to, Destination::Cpu, "{what}");
                let out = delivery.packet.to_bytes().expect("legal");
                window.queue_for_cpu(delivery.from, &out);
            }
        }
        let rtl = common::top::empty_mailbox(&mut top);
        let model = common::top::empty_mailbox(&mut window);
        assert_eq!(rtl, model, "the RTL's mailbox holds what the model's does");
        assert_eq!(rtl.tlps.len(), 1, "the well-formed write alone");
        assert!(!rtl.lost, "a void TLP is dropped, not lost");
        counters_agree(&mut top, &window);
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Any Length against any number of DWs, over several beats and past
    /// a switching slot: the RTL forwards what the model forwards, drops
    /// what it drops, and sends on void exactly the TLPs whose mismatch
    /// only a later beat shows, each with the DWs its Length says.
    #[test]
    fn any_length_against_any_stream_meets_the_models_fate(
        tlps in prop::collection::vec(
            (prop::bool::weighted(0.9), 1..=SLOT_DW as u32 + 4, 0..=SLOT_DW as u32 + 8),
            1..24,
        )
    ) {
        on_big_stack(move || {
            let (mut top, mut window, [base, _]) = region_0_out_of_port_1();
            let beat = DWS_PER_BEAT as u32;
            for (write, length, dws) in tlps {
                let data = if write { length } else { 0 };
                // §2.2.2 over the whole TLP; the first beat shows a
                // mismatch unless both lengths run past it.
                let fate = if data == dws && length <= SLOT_DW as u32 {
                    LengthFate::Forwarded
                } else if data > beat && dws > beat && length <= SLOT_DW as u32 {
                    LengthFate::LeavesVoid(16 + 4 * length as usize)
                } else {
                    LengthFate::DroppedAtFirstBeat
                };
                let what = format!("Length {length}, {dws} DWs, write {write}");
                let bytes = tlp_of_length(base, write, length, dws);
                carry_to_its_fate(&mut top, &mut window, &what, bytes, fate);
            }
            counters_agree(&mut top, &window);
        });
    }
}
