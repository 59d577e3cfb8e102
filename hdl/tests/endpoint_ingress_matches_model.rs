//! The RTL endpoint ingress stage agrees with weft-model's `Switch` at an endpoint port.
//!
//! Each case draws a port configuration (enabled, bound or free, owner
//! host and proxy ID, bus range, ACS P2P Request Redirect, INTx swizzle)
//! and random peer windows, programs the windows into the stage over the
//! CSR bus and everything into a model switch whose port 0 is the
//! endpoint port and whose routes send every fabric address and bus out of
//! fabric port 1, so routing never decides. Random TLPs (memory requests
//! near the windows' edges, 4 GiB and the end of the aperture; I/O,
//! configuration, completions and every kind of message, from requesters
//! mostly below the port) go through both: the RTL's header must equal
//! the model's forwarded TLP's, and the destination and drop reason must
//! agree. Some functions are bound on their own (function owner entries,
//! requesters drawn from them often) and some windows carry an owner tag,
//! with owners from a few hosts so that tags and owners meet.
//!
//! Then directed tests, one per rule of DESIGN.md and drop reason, with
//! headers and expected values worked out by hand from PCIe Base 6.0.

mod common;

use common::on_big_stack;
use common::tlp::{
    common, header_bytes, header_dws, packet, program_window, reason_code, request, window_entry,
    wire_header, Common,
};
use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::csr::{self, CsrTarget};
use weft_hdl::driver::CycleDriver;
use weft_hdl::translate::{EndpointIngress, IngressDestination};
use weft_model::{
    AddressRoute, Destination, DropReason, FunctionOwner, HostIndex, Owner, Packet, Permissions,
    PortIndex, PortRole, PortTables, RouteTables, Switch, Window,
};
use weft_pcie::tlp::{Body, Completion, CompletionStatus, Header, Tag, TrafficClass};
use weft_pcie::Bdf;
use weft_regs::aperture::MAX_HOSTS;
use weft_regs::capacity;
use weft_regs::csr::function_owner;

/// Cases: each programs a whole window table over the bus, not cheap in debug builds.
const CASES: u32 = 16;
/// TLPs offered per case.
const TLPS: usize = 64;
const PORT: u32 = 0;
type Stage = EndpointIngress<{ capacity::WINDOWS_PER_PORT }>;

/// The endpoint port's registers.
#[derive(Clone, Debug)]
struct PortConfig {
    enabled: bool,
    owner: Option<Owner>,
    buses: (u8, u8),
    p2p_request_redirect: bool,
    intx_swizzle: u8,
    /// Function owner entries and whether each is valid.
    functions: Vec<(bool, FunctionOwner)>,
}

/// A host among a few, so that owners and window tags meet.
fn few_hosts() -> impl Strategy<Value = u16> {
    prop_oneof![4 => 0u16..3, 1 => 0..MAX_HOSTS as u16]
}

fn function_owner() -> impl Strategy<Value = (bool, FunctionOwner)> {
    (
        prop::bool::weighted(0.8),
        any::<u16>(),
        few_hosts(),
        any::<u16>(),
        any::<bool>(),
        0u8..32,
    )
        .prop_map(|(valid, function, host, proxy, redirect, swizzle)| {
            (
                valid,
                FunctionOwner {
                    function: Bdf(function),
                    owner: Owner {
                        host: HostIndex(host),
                        proxy_id: Bdf(proxy),
                    },
                    p2p_request_redirect: redirect,
                    intx_swizzle: swizzle,
                },
            )
        })
}

fn port_config() -> impl Strategy<Value = PortConfig> {
    (
        prop::bool::weighted(0.9),
        prop::option::weighted(
            0.85,
            (
                prop_oneof![4 => few_hosts(), 1 => Just(MAX_HOSTS as u16 - 1)],
                any::<u16>(),
            ),
        ),
        any::<(u8, u8)>(),
        prop::bool::weighted(0.25),
        0u8..32,
        prop::collection::vec(function_owner(), capacity::FUNCTION_OWNERS_PER_PORT),
    )
        .prop_map(
            |(enabled, owner, (a, b), p2p_request_redirect, intx_swizzle, functions)| PortConfig {
                enabled,
                owner: owner.map(|(host, proxy)| Owner {
                    host: HostIndex(host),
                    proxy_id: Bdf(proxy),
                }),
                buses: (a.min(b), a.max(b)),
                p2p_request_redirect,
                intx_swizzle,
                functions,
            },
        )
}

/// A requester bus inside the port's range most of the time, or any bus.
fn requester_bus() -> impl Strategy<Value = (bool, u8)> {
    (prop::bool::weighted(0.85), any::<u8>())
}

/// A peer window entry: valid, the window, and its owner tag.
type PeerWindow = ((bool, Window), Option<u16>);

fn peer_window() -> impl Strategy<Value = PeerWindow> {
    (window_entry(), prop::option::weighted(0.4, few_hosts()))
}

fn model_switch(config: &PortConfig, windows: &[PeerWindow]) -> Switch {
    let mut switch = Switch::new(2);
    let role = if config.enabled {
        PortRole::Endpoint {
            owner: config.owner,
            buses: config.buses,
        }
    } else {
        PortRole::Disabled
    };
    let endpoint = PortTables {
        role,
        windows: windows
            .iter()
            .filter(|((v, _), _)| *v)
            .map(|((_, w), _)| *w)
            .collect(),
        window_owners: windows
            .iter()
            .filter(|((v, _), _)| *v)
            .map(|(_, tag)| tag.map(HostIndex))
            .collect(),
        function_owners: config
            .functions
            .iter()
            .filter(|(v, _)| *v)
            .map(|(_, f)| *f)
            .collect(),
        p2p_request_redirect: config.p2p_request_redirect,
        intx_swizzle: config.intx_swizzle,
        ..PortTables::default()
    };
    switch
        .set_port(PortIndex(0), endpoint)
        .expect("within capacity");
    let fabric = PortTables {
        role: PortRole::Fabric,
        ..PortTables::default()
    };
    switch
        .set_port(PortIndex(1), fabric)
        .expect("within capacity");
    let mut routes = RouteTables {
        addresses: vec![AddressRoute {
            base: 0,
            size: u64::MAX,
            to: Destination::Port(PortIndex(1)),
        }],
        ..RouteTables::default()
    };
    routes.buses = [Some(Destination::Port(PortIndex(1))); capacity::BUS_ROUTES];
    switch.set_routes(routes).expect("within capacity");
    switch
}

/// What happened to a TLP.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Forwarded with this header; also copied to the CPU.
    Forward(Vec<u8>, bool),
    /// To the CPU with this header.
    Cpu(Vec<u8>),
    /// A completion passed on with this header.
    Completion(Vec<u8>),
    /// Dropped for this reason.
    Drop(u32),
}

fn model_outcome(switch: &Switch, bytes: &[u8]) -> Outcome {
    let forwarding = switch
        .clone()
        .ingress(PortIndex(0), bytes)
        .expect("the port exists");
    if let Some(reason) = forwarding.dropped {
        return Outcome::Drop(reason_code(reason));
    }
    let first = &forwarding.deliveries[0];
    let header = wire_header(
        &first
            .packet
            .to_bytes()
            .expect("the model forwards legal TLPs"),
    );
    match first.to {
        Destination::Cpu => Outcome::Cpu(header),
        Destination::Port(port) => {
            assert_eq!(port, PortIndex(1), "every route leads to port 1");
            if first.packet.completion().is_some() {
                return Outcome::Completion(header);
            }
            let copied = forwarding.deliveries[1..]
                .iter()
                .any(|d| d.to == Destination::Cpu && d.packet == first.packet);
            Outcome::Forward(header, copied)
        }
    }
}

fn rtl_csr(stage: &mut Stage) -> &mut CsrTarget {
    &mut stage.csr
}

fn configure(driver: &mut CycleDriver<Stage>, config: &PortConfig) {
    for (entry, (valid, f)) in config.functions.iter().enumerate() {
        let control = function_owner::VALID.encode((*valid).into())
            | function_owner::CONTROL.fields[1].encode(f.p2p_request_redirect.into())
            | function_owner::CONTROL.fields[2].encode(f.intx_swizzle.into());
        let owner = u32::from(f.owner.host.0) | u32::from(f.owner.proxy_id.0) << 16;
        for (register, value) in [
            (function_owner::FUNCTION, u32::from(f.function.0)),
            (function_owner::OWNER, owner),
            (function_owner::CONTROL, control),
        ] {
            csr::write(driver, rtl_csr, register.address(PORT, entry as u32), value)
                .expect("the stage settles");
        }
    }
    let stage = driver.block();
    stage.enabled.next = config.enabled;
    stage.bound.next = config.owner.is_some();
    let owner = config.owner.unwrap_or(Owner {
        host: HostIndex(0),
        proxy_id: Bdf(0),
    });
    stage.owner_host.next = u32::from(owner.host.0).to_bits();
    stage.owner_proxy_id.next = u32::from(owner.proxy_id.0).to_bits();
    stage.bus_first.next = u32::from(config.buses.0).to_bits();
    stage.bus_last.next = u32::from(config.buses.1).to_bits();
    stage.p2p_request_redirect.next = config.p2p_request_redirect;
    stage.intx_swizzle.next = u32::from(config.intx_swizzle % 4).to_bits();
}

fn rtl_outcome(driver: &mut CycleDriver<Stage>, dws: [u32; 4]) -> Outcome {
    let stage = driver.block();
    stage.valid.next = true;
    stage.dw0.next = dws[0].to_bits();
    stage.dw1.next = dws[1].to_bits();
    stage.dw2.next = dws[2].to_bits();
    stage.dw3.next = dws[3].to_bits();
    // The answer follows one clock edge later.
    driver.tick().expect("the stage settles");
    let stage = driver.block();
    assert!(stage.answer_valid.val());
    let out = [
        &stage.header_dw0,
        &stage.header_dw1,
        &stage.header_dw2,
        &stage.header_dw3,
    ]
    .map(|s| s.val().to_u32());
    let destination = IngressDestination::from_code(stage.destination.val().to_u32())
        .expect("a defined destination code");
    match destination {
        IngressDestination::Forward => Outcome::Forward(header_bytes(out), stage.copy_to_cpu.val()),
        IngressDestination::Cpu => Outcome::Cpu(header_bytes(out)),
        IngressDestination::Completion => Outcome::Completion(header_bytes(out)),
        IngressDestination::Drop => Outcome::Drop(stage.drop_reason.val().to_u32()),
    }
}

fn new_stage() -> CycleDriver<Stage> {
    CycleDriver::new(Stage::new(PORT), |b| &mut b.clock).expect("the stage is well formed")
}

/// A completion an endpoint sends back to whoever read from it.
fn completion(common: &Common) -> Packet {
    let completion = Completion {
        locked: false,
        traffic_class: TrafficClass::from_bits(common.traffic_class),
        attributes: common::tlp::attributes(common.attributes),
        completer: Bdf(common.requester),
        status: CompletionStatus::Successful,
        byte_count_modified: false,
        byte_count: 4,
        requester: Bdf(common.requester.rotate_left(8)),
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

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn endpoint_ingress_translates_as_the_model(
        config in port_config(),
        windows in prop::collection::vec(peer_window(), capacity::WINDOWS_PER_PORT),
        requests in prop::collection::vec(
            (request(), common(), requester_bus(), prop::bool::weighted(0.1), prop::option::weighted(0.4, any::<usize>())),
            TLPS,
        ),
    ) {
        on_big_stack(move || -> Result<(), TestCaseError> {
            let mut driver = new_stage();
            for (entry, (window, tag)) in windows.iter().enumerate() {
                program_window(&mut driver, rtl_csr, PORT, entry, window, *tag);
            }
            configure(&mut driver, &config);
            // A window write takes effect from the second cycle after it.
            driver.run(2).expect("the stage settles");
            let model = model_switch(&config, &windows);
            let mut compared = 0;
            let ranges: Vec<(bool, Window)> = windows.iter().map(|(w, _)| *w).collect();
            for (request, common, (inside, bus), is_completion, function) in &requests {
                let (first, last) = config.buses;
                let bus = if *inside {
                    first + (bus % (last - first).saturating_add(1).max(1))
                } else {
                    *bus
                };
                let requester = match function {
                    Some(f) => config.functions[f % config.functions.len()].1.function.0,
                    None => u16::from(bus) << 8 | (common.requester & 0xff),
                };
                let common = Common {
                    requester,
                    ..common.clone()
                };
                let packet = if *is_completion {
                    Some(completion(&common))
                } else {
                    packet(request, &common, &ranges)
                };
                let Some(packet) = packet else {
                    continue;
                };
                let bytes = packet.to_bytes().expect("checked when built");
                let expected = model_outcome(&model, &bytes);
                let rtl = rtl_outcome(&mut driver, header_dws(&bytes, common.beyond_header));
                prop_assert_eq!(rtl, expected, "{:?} {:?} {:?} as {:02x?}", config, request, common, &bytes[..16.min(bytes.len())]);
                compared += 1;
            }
            prop_assert!(compared >= TLPS / 2, "only {} of {} TLPs were legal", compared, TLPS);
            Ok(())
        })?;
    }
}

/// The endpoint port of the directed tests: enabled, buses 2..=3 below it,
/// bound to host 3 whose proxy ID is F0:00.0, INTx device number 3; one
/// peer window of 4 KiB at 0x9000_0000 onto fabric 0x40_0000_0000
/// (read-write), one read-only window of 4 KiB at 0xA000_0000 onto fabric 0x2000.
fn directed(adjust: impl FnOnce(&mut PortConfig)) -> CycleDriver<Stage> {
    let mut config = PortConfig {
        enabled: true,
        owner: Some(Owner {
            host: HostIndex(3),
            proxy_id: Bdf::new(0xf0, 0, 0),
        }),
        buses: (2, 3),
        p2p_request_redirect: false,
        intx_swizzle: 3,
        functions: Vec::new(),
    };
    adjust(&mut config);
    let mut driver = new_stage();
    let windows = [
        Window {
            base: 0x9000_0000,
            size: 0x1000,
            fabric_base: 0x40_0000_0000,
            permissions: Permissions::READ_WRITE,
        },
        Window {
            base: 0xa000_0000,
            size: 0x1000,
            fabric_base: 0x2000,
            permissions: Permissions {
                read: true,
                write: false,
            },
        },
    ];
    for (entry, window) in windows.iter().enumerate() {
        program_window(&mut driver, rtl_csr, PORT, entry, &(true, *window), None);
    }
    configure(&mut driver, &config);
    driver.run(2).expect("the stage settles");
    driver
}

fn dropped(reason: DropReason) -> Outcome {
    Outcome::Drop(reason_code(reason))
}

// Headers by hand (PCIe Base 6.0 §2.2.1): DW0 byte 0 is Fmt[2:0] Type[4:0];
// MRd 3 DW = 0x00, MRd 4 DW = 0x20, MWr 3 DW = 0x40, MWr 4 DW = 0x60,
// Msg (4 DW, no data) = 0x30 | r[2:0], CplD = 0x4a, CfgRd0 = 0x04, IORd = 0x02.
// DW1 of a request: requester ID, tag, last/first DW byte enables.

/// MRd, 1 DW, from 02:00.0 tag 0x11, at `address` (below 4 GiB).
fn read_3dw(address: u32) -> [u32; 4] {
    [0x0000_0001, 0x0200_110f, address, 0]
}

#[test]
fn dma_into_a_peer_window_goes_to_the_peers_fabric_address() {
    let mut driver = directed(|_| ());
    // 0x9000_0010 is 0x10 into the window: fabric 0x40_0000_0010, which
    // needs the 4 DW header (§2.2.4.1); the requester ID stays.
    assert_eq!(
        rtl_outcome(&mut driver, read_3dw(0x9000_0010)),
        Outcome::Forward(header_bytes([0x2000_0001, 0x0200_110f, 0x40, 0x10]), false)
    );
    // Into the read-only window, a read lands below 4 GiB: 3 DW at 0x2ff0.
    assert_eq!(
        rtl_outcome(&mut driver, read_3dw(0xa000_0ff0)),
        Outcome::Forward(header_bytes([0x0000_0001, 0x0200_110f, 0x2ff0, 0]), false)
    );
}

#[test]
fn other_dma_goes_into_the_owners_aperture_with_td_cleared() {
    let mut driver = directed(|_| ());
    // MWr 3 DW, TD set (DW0 bit 15), 2 DW to host address 0x1000_0000:
    // fabric 1 << 63 | 3 << 52 | 0x1000_0000 = 0x8030_0000_1000_0000.
    assert_eq!(
        rtl_outcome(&mut driver, [0x4000_8002, 0x0300_00ff, 0x1000_0000, 0]),
        Outcome::Forward(
            header_bytes([0x6000_0002, 0x0300_00ff, 0x8030_0000, 0x1000_0000]),
            false
        )
    );
    // The last DW below the aperture's end (2^52) fits; one DW further does not.
    assert_eq!(
        rtl_outcome(
            &mut driver,
            [0x2000_0001, 0x0200_110f, 0x000f_ffff, 0xffff_fffc]
        ),
        Outcome::Forward(
            header_bytes([0x2000_0001, 0x0200_110f, 0x803f_ffff, 0xffff_fffc]),
            false
        )
    );
    assert_eq!(
        rtl_outcome(
            &mut driver,
            [0x2000_0002, 0x0200_11ff, 0x000f_ffff, 0xffff_fffc]
        ),
        dropped(DropReason::OutsideAperture)
    );
    assert_eq!(
        rtl_outcome(&mut driver, [0x2000_0001, 0x0200_110f, 0x0010_0000, 0]),
        dropped(DropReason::OutsideAperture)
    );
}

#[test]
fn p2p_request_redirect_sends_peer_dma_up_to_the_host() {
    // §7.7.11.3: with P2P Request Redirect, the peer address is the host's to route.
    let mut driver = directed(|c| c.p2p_request_redirect = true);
    assert_eq!(
        rtl_outcome(&mut driver, read_3dw(0x9000_0010)),
        Outcome::Forward(
            header_bytes([0x2000_0001, 0x0200_110f, 0x8030_0000, 0x9000_0010]),
            false
        )
    );
}

#[test]
fn peer_windows_must_contain_and_permit_the_request() {
    let mut driver = directed(|_| ());
    // 2 DW at 0x9000_0ffc run past the window's end: it overlaps, so no aperture either.
    assert_eq!(
        rtl_outcome(&mut driver, [0x0000_0002, 0x0200_11ff, 0x9000_0ffc, 0]),
        dropped(DropReason::NoWindow)
    );
    // A write into the read-only window.
    assert_eq!(
        rtl_outcome(&mut driver, [0x4000_0001, 0x0200_000f, 0xa000_0000, 0]),
        dropped(DropReason::Forbidden)
    );
}

#[test]
fn isolation_drops_by_reason() {
    let mut driver = directed(|_| ());
    // Requester 04:00.0 is not below the port (buses 2..=3): ACS Source Validation.
    assert_eq!(
        rtl_outcome(&mut driver, [0x0000_0001, 0x0400_110f, 0x1000, 0]),
        dropped(DropReason::SpoofedRequester)
    );
    // CfgRd0 and IORd from an endpoint.
    assert_eq!(
        rtl_outcome(&mut driver, [0x0400_0001, 0x0200_110f, 0x0100_0000, 0]),
        dropped(DropReason::Unsupported)
    );
    assert_eq!(
        rtl_outcome(&mut driver, [0x0200_0001, 0x0200_110f, 0x0cf8, 0]),
        dropped(DropReason::Unsupported)
    );
    // Type 0_0011b is reserved (Table 2-3).
    assert_eq!(
        rtl_outcome(&mut driver, [0x0300_0001, 0x0200_110f, 0x1000, 0]),
        dropped(DropReason::Malformed)
    );
    let mut driver = directed(|c| c.enabled = false);
    assert_eq!(
        rtl_outcome(&mut driver, read_3dw(0x1000)),
        dropped(DropReason::PortDisabled)
    );
}

#[test]
fn a_free_endpoint_only_reports_to_the_fabric_manager() {
    let mut driver = directed(|c| c.owner = None);
    assert_eq!(
        rtl_outcome(&mut driver, read_3dw(0x1000)),
        dropped(DropReason::Unbound)
    );
    // ERR_FATAL (code 0x33), routed to the root complex: to the CPU as it is.
    let error = [0x3000_0000, 0x0200_0033, 0, 0];
    assert_eq!(
        rtl_outcome(&mut driver, error),
        Outcome::Cpu(header_bytes(error))
    );
}

#[test]
fn completions_pass_unchanged_to_id_routing() {
    let mut driver = directed(|_| ());
    // CplD from 02:00.0 to F0:00.0 tag 0x11, byte count 4, TD set: not rewritten, so kept.
    let completion = [0x4a00_8001, 0x0200_0004, 0xf000_1100, 0];
    assert_eq!(
        rtl_outcome(&mut driver, completion),
        Outcome::Completion(header_bytes(completion))
    );
}

#[test]
fn interrupts_errors_and_pme_go_to_the_owners_proxy() {
    let mut driver = directed(|_| ());
    // Assert_INTB (0x21), local: the slot's device number 3 makes it INTA
    // ((1 + 3) mod 4, §2.2.8.1), routed by ID (r = 010b) to F0:00.0 in bytes 8–9.
    assert_eq!(
        rtl_outcome(&mut driver, [0x3400_8000, 0x0208_0021, 0x0000_1234, 0]),
        Outcome::Forward(
            header_bytes([0x3200_0000, 0x0208_0020, 0xf000_1234, 0]),
            false
        )
    );
    // Deassert_INTD (0x27) becomes Deassert_INTC (0x26).
    assert_eq!(
        rtl_outcome(&mut driver, [0x3400_0000, 0x0208_0027, 0, 0]),
        Outcome::Forward(
            header_bytes([0x3200_0000, 0x0208_0026, 0xf000_0000, 0]),
            false
        )
    );
    // ERR_NONFATAL (0x31): to the owner, and a copy to the event log.
    assert_eq!(
        rtl_outcome(&mut driver, [0x3000_0000, 0x0200_0031, 0, 0]),
        Outcome::Forward(
            header_bytes([0x3200_0000, 0x0200_0031, 0xf000_0000, 0]),
            true
        )
    );
    // PM_PME (0x18): to the owner only.
    assert_eq!(
        rtl_outcome(&mut driver, [0x3000_0000, 0x0200_0018, 0, 0]),
        Outcome::Forward(
            header_bytes([0x3200_0000, 0x0200_0018, 0xf000_0000, 0]),
            false
        )
    );
    // PME_TO_Ack (0x1b) means nothing to a host: the CPU's.
    let ack = [0x3500_0000, 0x0200_001b, 0, 0];
    assert_eq!(
        rtl_outcome(&mut driver, ack),
        Outcome::Cpu(header_bytes(ack))
    );
}

#[test]
fn a_function_bound_on_its_own_uses_its_owners_aperture_windows_and_proxy() {
    // 02:00.1 (a VF, ID 0x0201) is bound to host 5 (proxy F5:00.0), with
    // P2P Request Redirect clear and device number 1; the port's owner is host 3.
    let vf = FunctionOwner {
        function: Bdf(0x0201),
        owner: Owner {
            host: HostIndex(5),
            proxy_id: Bdf::new(0xf5, 0, 0),
        },
        p2p_request_redirect: false,
        intx_swizzle: 1,
    };
    let mut driver = directed(|c| c.functions = vec![(true, vf)]);
    // A window tagged for host 5: 4 KiB at 0xb000_0000 onto fabric 0x50_0000_0000.
    let tagged = Window {
        base: 0xb000_0000,
        size: 0x1000,
        fabric_base: 0x50_0000_0000,
        permissions: Permissions::READ_WRITE,
    };
    program_window(&mut driver, rtl_csr, PORT, 2, &(true, tagged), Some(5));
    driver.run(2).expect("the stage settles");
    let read_from =
        |requester: u32, address: u32| [0x0000_0001, requester << 16 | 0x110f, address, 0];
    // The VF's DMA to 0x1000 goes to host 5's aperture: 1 << 63 | 5 << 52.
    assert_eq!(
        rtl_outcome(&mut driver, read_from(0x0201, 0x1000)),
        Outcome::Forward(
            header_bytes([0x2000_0001, 0x0201_110f, 0x8050_0000, 0x1000]),
            false
        )
    );
    // Host 5's window serves the VF; the port owner's untagged one does not
    // (0x9000_0010 goes to host 5's aperture instead).
    assert_eq!(
        rtl_outcome(&mut driver, read_from(0x0201, 0xb000_0010)),
        Outcome::Forward(header_bytes([0x2000_0001, 0x0201_110f, 0x50, 0x10]), false)
    );
    assert_eq!(
        rtl_outcome(&mut driver, read_from(0x0201, 0x9000_0010)),
        Outcome::Forward(
            header_bytes([0x2000_0001, 0x0201_110f, 0x8050_0000, 0x9000_0010]),
            false
        )
    );
    // The PF (02:00.0) is the port owner's: host 3's window, not host 5's.
    assert_eq!(
        rtl_outcome(&mut driver, read_from(0x0200, 0xb000_0010)),
        Outcome::Forward(
            header_bytes([0x2000_0001, 0x0200_110f, 0x8030_0000, 0xb000_0010]),
            false
        )
    );
    // The VF's Assert_INTA goes to F5:00.0 as INTB ((0 + 1) mod 4).
    assert_eq!(
        rtl_outcome(&mut driver, [0x3400_0000, 0x0201_0020, 0, 0]),
        Outcome::Forward(
            header_bytes([0x3200_0000, 0x0201_0021, 0xf500_0000, 0]),
            false
        )
    );
    // With the port free, the VF is still bound; the PF is not.
    let mut driver = directed(|c| {
        c.owner = None;
        c.functions = vec![(true, vf)];
    });
    assert_eq!(
        rtl_outcome(&mut driver, read_from(0x0201, 0x1000)),
        Outcome::Forward(
            header_bytes([0x2000_0001, 0x0201_110f, 0x8050_0000, 0x1000]),
            false
        )
    );
    assert_eq!(
        rtl_outcome(&mut driver, read_from(0x0200, 0x1000)),
        dropped(DropReason::Unbound)
    );
}
