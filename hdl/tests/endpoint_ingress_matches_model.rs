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

use common::endpoint::{
    configure, model_outcome, new_stage, offer, offered, peer_window, port_config, rtl_csr,
    rtl_outcome, Outcome, PeerWindow, PortConfig, Stage, PORT,
};
use common::tlp::{header_bytes, program_window, reason_code};
use proptest::prelude::*;
use weft_hdl::driver::on_big_stack;
use weft_hdl::driver::CycleDriver;
use weft_model::{
    AddressRoute, Destination, DropReason, FunctionOwner, HostIndex, Owner, Permissions, PortIndex,
    PortRole, PortTables, RouteTables, Switch, Window,
};
use weft_pcie::Bdf;
use weft_regs::capacity;

/// Cases: each programs a whole window table over the bus, not cheap in debug builds.
const CASES: u32 = 16;
/// TLPs offered per case.
const TLPS: usize = 64;

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

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn endpoint_ingress_translates_as_the_model(
        config in port_config(),
        windows in prop::collection::vec(peer_window(), capacity::WINDOWS_PER_PORT),
        requests in prop::collection::vec(offer(), TLPS),
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
            for offer in &requests {
                let Some((bytes, dws)) = offered(&config, &ranges, offer) else {
                    continue;
                };
                let expected = model_outcome(&model, &bytes);
                let rtl = rtl_outcome(&mut driver, dws);
                prop_assert_eq!(rtl, expected, "{:?} {:?} as {:02x?}", config, offer, &bytes[..16.min(bytes.len())]);
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

/// 02:00.1, a VF bound on its own to host 5 (proxy F5:00.0), P2P Request
/// Redirect clear, device number 1.
fn vf_of_host_5() -> FunctionOwner {
    FunctionOwner {
        function: Bdf(0x0201),
        owner: Owner {
            host: HostIndex(5),
            proxy_id: Bdf::new(0xf5, 0, 0),
        },
        p2p_request_redirect: false,
        intx_swizzle: 1,
    }
}

/// A completion's owners: whether its completer's and its requester's
/// owner hosts are one (DESIGN.md: a port returning peer traffic to its
/// ingress sends back only completions within one owner).
fn within_owner(driver: &mut CycleDriver<Stage>, completer: u32, requester: u32) -> bool {
    // CplD, 1 DW, byte count 4, tag 0x11 (§2.2.9): completer in DW1[31:16], requester in DW2[31:16].
    let completion = [
        0x4a00_0001,
        completer << 16 | 4,
        requester << 16 | 0x1100,
        0,
    ];
    assert_eq!(
        rtl_outcome(driver, completion),
        Outcome::Completion(header_bytes(completion))
    );
    driver.block().completion_within_owner.val()
}

#[test]
fn a_completion_is_within_one_owner_only_when_both_functions_are_that_hosts() {
    // 02:00.1 is bound to host 5 on its own; the port (02:00.0, 03:00.0) is host 3's.
    let vf = vf_of_host_5();
    let mut driver = directed(|c| c.functions = vec![(true, vf)]);
    assert!(within_owner(&mut driver, 0x0200, 0x0300));
    assert!(within_owner(&mut driver, 0x0201, 0x0201));
    assert!(!within_owner(&mut driver, 0x0201, 0x0200));
    assert!(!within_owner(&mut driver, 0x0300, 0x0201));
    // With the port free, only the VF has an owner.
    let mut driver = directed(|c| {
        c.owner = None;
        c.functions = vec![(true, vf)];
    });
    assert!(!within_owner(&mut driver, 0x0200, 0x0300));
    assert!(!within_owner(&mut driver, 0x0200, 0x0201));
    assert!(within_owner(&mut driver, 0x0201, 0x0201));
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
    let vf = vf_of_host_5();
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
