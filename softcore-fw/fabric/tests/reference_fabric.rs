//! The reference fabric enumerated: four weft switches cabled in a ring,
//! two hosts, four GPUs, an NVMe drive with SR-IOV and an ordinary PCIe
//! switch (an upstream port and two downstream ports, each with an
//! endpoint) below one port. Every fabric ID, bus range, BAR address and
//! bridge window below is worked out by hand from the rules cited next to
//! it, and read back from the devices' own configuration spaces with
//! weft-pcie's decoders, not from the manager's records alone.
//!
//! The cabling is in `common/reference.rs`.
//!
//! Discovery is breadth first from S0, ports in index order: S0.0 finds
//! S1 (index 1), S0.1 finds S3 (index 2); S1.1 finds S2 (index 3); S3.0
//! leads to S2, already known (the ring's loop closes there). Buses: 0 the
//! manager, 1 and 2 the hosts' proxies, then each endpoint port the next
//! free bus, in walk order: S1.2 bus 3, S1.3 bus 4, S3.2 buses 5..=8, S2.2
//! buses 9..=10, S2.3 bus 11.

mod common;

use common::conventional::{switch_port, ConventionalSwitch, DownstreamPort};
use common::mesh::{Mesh, Partner};
use common::reference::*;
use common::*;
use weft_fabric::binding::{BindError, SharingRefused};
use weft_fabric::conventional::ACS_ISOLATION;
use weft_fabric::inventory::{BridgeKind, FunctionKind, PortKind, SwitchIndex};
use weft_fabric::manager::FabricManager;
use weft_fabric::pcie::config::acs::AcsCap;
use weft_fabric::pcie::config::function::{
    memory_window, prefetchable_window, BusNumbers, PrefetchableWindow, Window,
};
use weft_fabric::pcie::config::header::{command, common as header, type1};
use weft_fabric::pcie::config::pcie_cap::{PcieCap, PortType};
use weft_fabric::pcie::config::walk::find_extended_capability;
use weft_fabric::pcie::config::{ext_cap_id, ConfigSpace, Type1Function};
use weft_fabric::pcie::tlp::{ConfigType, MemoryOp};
use weft_fabric::pcie::Bdf;
use weft_model::{Destination, Packet};
use weft_regs::tables::{HostIndex, PortIndex};

const GPU_A: Bdf = Bdf::new(3, 0, 0);
const GPU_B: Bdf = Bdf::new(4, 0, 0);
const USP: Bdf = Bdf::new(5, 0, 0);
const DSP0: Bdf = Bdf::new(6, 0, 0);
const DSP1: Bdf = Bdf::new(6, 1, 0);
const GPU_D: Bdf = Bdf::new(7, 0, 0);
const NIC_F: Bdf = Bdf::new(8, 0, 0);
const NVME_PF: Bdf = Bdf::new_ari(9, 0);
const GPU_C: Bdf = Bdf::new(11, 0, 0);
/// §9.3.3.9-10: VF n = PF RID + First VF Offset (0x80) + (n - 1) × VF
/// Stride (0x40); VF 3 and 4 carry into bus 10.
const NVME_VFS: [Bdf; 4] = [
    Bdf::new_ari(9, 0x80),
    Bdf::new_ari(9, 0xc0),
    Bdf::new_ari(10, 0x00),
    Bdf::new_ari(10, 0x40),
];

/// The reference fabric, started.
fn started(pcie: ConventionalSwitch) -> (Mesh, FabricManager) {
    let (mut mesh, mut manager) = reference(pcie);
    start(&mut mesh, &mut manager).expect("the fabric enumerates");
    (mesh, manager)
}

fn below(mesh: &Mesh) -> &ConventionalSwitch {
    match mesh.net.partners.get(&(S3, 2)) {
        Some(Partner::Conventional(switch)) => switch,
        _ => panic!("the PCIe switch"),
    }
}

fn device(mesh: &Mesh, at: (usize, u8)) -> &FakeDevice {
    match mesh.net.partners.get(&at) {
        Some(Partner::Device(device)) => device,
        _ => panic!("a device at {at:?}"),
    }
}

/// The address a memory BAR register pair of `space` holds (§7.5.1.2.1).
fn bar_address(space: &ConfigSpace, register: u16) -> u64 {
    let low = space.read(register);
    let address = u64::from(low & !0xf);
    if low & 0b110 == 0b100 {
        address | u64::from(space.read(register + 4)) << 32
    } else {
        address
    }
}

fn window(base: u64, limit: u64) -> Option<Window> {
    Some(Window { base, limit })
}

#[test]
fn the_reference_fabric_enumerates_as_worked_out_by_hand() {
    let (mesh, manager) = started(pcie_switch(true));
    let inv = manager.inventory();

    // Switches in discovery order, and the ring's four links, each once.
    assert_eq!(
        inv.switches.iter().map(|s| s.id).collect::<Vec<_>>(),
        [0x10, 0x11, 0x13, 0x12]
    );
    let (i0, i1, i2, i3) = (
        SwitchIndex(0),
        SwitchIndex(1),
        SwitchIndex(3),
        SwitchIndex(2),
    );
    let fabric = |switch_id, port| PortKind::Fabric {
        switch_id,
        port: PortIndex(port),
    };
    let endpoint = |first, last| PortKind::Endpoint {
        buses: (first, last),
    };
    let expected_ports = [
        (i0, [fabric(0x11, 0), fabric(0x13, 1)]),
        (i1, [fabric(0x10, 0), fabric(0x12, 0)]),
        (i2, [fabric(0x11, 1), fabric(0x13, 0)]),
        (i3, [fabric(0x12, 1), fabric(0x10, 1)]),
    ];
    for (switch, links) in expected_ports {
        for (port, kind) in links.into_iter().enumerate() {
            assert_eq!(inv.port_on(switch, PortIndex(port as u8)), kind);
        }
    }
    assert!(
        matches!(inv.port_on(i0, PortIndex(2)), PortKind::Host { proxy_id, .. } if proxy_id == Bdf::new(1, 0, 0))
    );
    assert!(
        matches!(inv.port_on(i0, PortIndex(3)), PortKind::Host { proxy_id, .. } if proxy_id == Bdf::new(2, 0, 0))
    );
    assert_eq!(inv.port_on(i1, PortIndex(2)), endpoint(3, 3));
    assert_eq!(inv.port_on(i1, PortIndex(3)), endpoint(4, 4));
    assert_eq!(inv.port_on(i3, PortIndex(2)), endpoint(5, 8));
    assert_eq!(inv.port_on(i3, PortIndex(3)), PortKind::Empty);
    assert_eq!(inv.port_on(i2, PortIndex(2)), endpoint(9, 10));
    assert_eq!(inv.port_on(i2, PortIndex(3)), endpoint(11, 11));

    // Every endpoint function in enumeration order, where it is, and what
    // it sits below; the PCIe switch's own ports are not among them.
    let functions: Vec<_> = inv
        .functions
        .iter()
        .map(|f| (f.id, f.switch, f.port.0, f.bridge))
        .collect();
    let mut expected = vec![
        (GPU_A, i1, 2, None),
        (GPU_B, i1, 3, None),
        (GPU_D, i3, 2, Some(DSP0)),
        (NIC_F, i3, 2, Some(DSP1)),
        (NVME_PF, i2, 2, None),
    ];
    expected.extend(NVME_VFS.iter().map(|&vf| (vf, i2, 2, None)));
    expected.push((GPU_C, i2, 3, None));
    assert_eq!(functions, expected);
    for (n, vf) in NVME_VFS.iter().enumerate() {
        let f = inv.function(*vf).expect("VF");
        assert_eq!(
            f.kind,
            FunctionKind::Virtual {
                pf: NVME_PF,
                vf: n as u16 + 1
            }
        );
    }

    // BARs, each at the next multiple of its size in its pool (§7.5.1.2.1):
    // below 4 GiB from 0x8000_0000, 64-bit prefetchable from 0x40_0000_0000.
    // Before and after the PCIe switch both pools move to a 1 MiB boundary,
    // the windows' granularity (§7.5.1.3.8-9).
    //
    // A: 0x8000_0000, 0x40_0000_0000.   B: 0x8100_0000, 0x40_1000_0000.
    // D: 0x8200_0000, 0x40_2000_0000.   F: 0x8300_0000 (64 KiB),
    //    0x40_3000_0000 (512 KiB); the pools then stand at 0x8310_0000 and
    //    0x40_3010_0000 after rounding up to 1 MiB.
    // NVMe PF BAR0 (64-bit, not prefetchable: below 4 GiB) 0x8310_0000;
    // its VF BAR0 region, 4 × 16 KiB aligned to 16 KiB (§9.3.3.14), at
    // 0x8310_4000. C: 16 MiB at 0x8400_0000, 256 MiB at 0x40_4000_0000.
    let gpu_bars = [
        ((S1, 2), 0x8000_0000, 0x40_0000_0000),
        ((S1, 3), 0x8100_0000, 0x40_1000_0000),
        ((S2, 3), 0x8400_0000, 0x40_4000_0000),
    ];
    for (at, bar0, bar1) in gpu_bars {
        let space = &device(&mesh, at).functions[0].space;
        assert_eq!(
            (bar_address(space, 0x10), bar_address(space, 0x14)),
            (bar0, bar1),
            "GPU at {at:?}"
        );
    }
    let pcie = below(&mesh);
    let d = &pcie.downstream[0].device.as_ref().expect("D").functions[0].space;
    assert_eq!(
        (bar_address(d, 0x10), bar_address(d, 0x14)),
        (0x8200_0000, 0x40_2000_0000)
    );
    let f = &pcie.downstream[1].device.as_ref().expect("F").functions[0].space;
    assert_eq!(
        (bar_address(f, 0x10), bar_address(f, 0x18)),
        (0x8300_0000, 0x40_3000_0000)
    );
    let pf = &device(&mesh, (S2, 2)).functions[0];
    assert_eq!(bar_address(&pf.space, 0x10), 0x8310_0000);
    let (cap, _) = pf.sriov.as_ref().expect("SR-IOV");
    assert_eq!(bar_address(&pf.space, cap.vf_bar0()), 0x8310_4000);
    for (n, vf) in NVME_VFS.iter().enumerate() {
        let placed = inv.function(*vf).expect("VF").bars[0].fabric_address();
        assert_eq!(placed, Some(0x8310_4000 + n as u64 * 0x4000));
    }
    // Every enabled function decodes memory and masters (§7.5.1.1.3).
    let enabled = command::MEMORY_SPACE | command::BUS_MASTER;
    for space in [d, f] {
        assert_eq!(space.read_u16(header::COMMAND) & enabled, enabled);
    }

    // The PCIe switch, programmed as §7.5.1.3 says: primary, secondary,
    // subordinate; windows covering exactly the BARs below, in whole MiB;
    // I/O closed; decoding and mastering; ACS redirect on the downstream ports.
    let usp = &pcie.upstream;
    let dsp0 = &pcie.downstream[0].space;
    let dsp1 = &pcie.downstream[1].space;
    let buses = |space| {
        let b = BusNumbers::read(space);
        (b.primary, b.secondary, b.subordinate)
    };
    assert_eq!(buses(usp), (5, 6, 8));
    assert_eq!(buses(dsp0), (6, 7, 7));
    assert_eq!(buses(dsp1), (6, 8, 8));
    assert_eq!(memory_window(dsp0), window(0x8200_0000, 0x82ff_ffff));
    assert_eq!(
        prefetchable_window(dsp0),
        window(0x40_2000_0000, 0x40_2fff_ffff)
    );
    assert_eq!(memory_window(dsp1), window(0x8300_0000, 0x830f_ffff));
    assert_eq!(
        prefetchable_window(dsp1),
        window(0x40_3000_0000, 0x40_300f_ffff)
    );
    assert_eq!(memory_window(usp), window(0x8200_0000, 0x830f_ffff));
    assert_eq!(
        prefetchable_window(usp),
        window(0x40_2000_0000, 0x40_300f_ffff)
    );
    for space in [usp, dsp0, dsp1] {
        assert!(
            space.read_u8(type1::IO_BASE) & 0xf0 > space.read_u8(type1::IO_LIMIT) & 0xf0,
            "I/O window closed (§7.5.1.3.6)"
        );
        assert_eq!(space.read_u16(header::COMMAND) & enabled, enabled);
    }
    for space in [dsp0, dsp1] {
        let acs = find_extended_capability(space, ext_cap_id::ACS)
            .expect("walks")
            .expect("ACS");
        assert_eq!(
            AcsCap::at(acs).enabled(space),
            weft_fabric::pcie::config::acs::feature::SOURCE_VALIDATION
                | weft_fabric::pcie::config::acs::feature::P2P_REQUEST_REDIRECT
                | weft_fabric::pcie::config::acs::feature::P2P_COMPLETION_REDIRECT
                | weft_fabric::pcie::config::acs::feature::UPSTREAM_FORWARDING
        );
    }
    // The manager's record of it agrees.
    let kinds: Vec<_> = inv
        .bridges
        .iter()
        .map(|b| (b.id, b.kind, b.parent, b.buses, b.acs_enabled))
        .collect();
    assert_eq!(
        kinds,
        [
            (USP, BridgeKind::SwitchUpstream, None, (6, 8), 0),
            (
                DSP0,
                BridgeKind::SwitchDownstream,
                Some(USP),
                (7, 7),
                ACS_ISOLATION
            ),
            (
                DSP1,
                BridgeKind::SwitchDownstream,
                Some(USP),
                (8, 8),
                ACS_ISOLATION
            ),
        ]
    );

    // D answered Request Retry Status until 300 ms, and was waited for.
    assert!(mesh.net.clock.0.get() >= GPU_D_READY_NS);
}

#[test]
fn every_switch_completes_a_lost_host_request_well_before_its_host_times_out() {
    let (mesh, _manager) = started(pcie_switch(true));
    for switch in [S0, S1, S2, S3] {
        // 10 ms: the top of Range A (PCIe Base 6.0 §7.5.3.15), a fifth of
        // the 50 ms a host waits at the top of the default range.
        assert_eq!(
            mesh.switch(switch).completion_timeout(),
            10_000_000,
            "S{switch}"
        );
    }
}

#[test]
fn every_switch_routes_the_buses_and_windows_below_the_pcie_switch_to_it() {
    let (mesh, _manager) = started(pcie_switch(true));
    let to = |port: u8| Some(Destination::Port(PortIndex(port)));
    // Paths to S3: S0 directly by S0.1; S1 by S0 or S2, both two hops,
    // the lower switch ID (S0, 0x10) wins: S1.0; S2 directly by S2.1.
    for (switch, port) in [(S0, 1), (S1, 0), (S2, 1), (S3, 2)] {
        let model = mesh.switch(switch);
        let routes = model.routes();
        for bus in 5..=8 {
            assert_eq!(routes.buses[bus], to(port), "bus {bus} on S{switch}");
        }
        for address in [
            0x8200_0000u64,
            0x82ff_fffc,
            0x8300_0000,
            0x830f_fffc,
            0x40_2000_0000,
            0x40_300f_fffc,
        ] {
            assert_eq!(
                routes.by_address(address),
                to(port),
                "{address:#x} on S{switch}"
            );
        }
        // Just past the PCIe switch's windows is the NVMe drive, on S2.
        assert_ne!(routes.by_address(0x8310_0000), to(port));
    }
}

#[test]
fn devices_below_acs_ports_go_to_different_hosts_and_a_host_reaches_its_own() {
    let (mut mesh, mut manager) = started(pcie_switch(true));
    let mut host = FakeHost::default();
    manager
        .bind(GPU_D, HostIndex(0), 0, &mut mesh.planes, &mut host)
        .expect("D to host 0");
    manager
        .bind(NIC_F, HostIndex(1), 0, &mut mesh.planes, &mut host)
        .expect("F to host 1: both downstream ports redirect peers upstream");
    // Two hosts below one port: no port owner, one function owner each.
    let s3 = mesh.switch(S3);
    let tables = s3.port_tables(PortIndex(2)).expect("port");
    let owners: Vec<_> = tables
        .function_owners
        .iter()
        .map(|o| (o.function, o.owner.host))
        .collect();
    assert_eq!(owners, [(GPU_D, HostIndex(0)), (NIC_F, HostIndex(1))]);
    drop(s3);

    // Host 0 enumerates its virtual switch (upstream port bus 1, slots on
    // bus 2, slot 0's secondary bus 3), reads D through the fabric and the
    // PCIe switch, and assigns its BAR0.
    let (t0, t1) = (ConfigType::Type0, ConfigType::Type1);
    let at = (S0, 2);
    let mut config = |t, target, offset, value| {
        mesh.host_config(&mut manager, &mut host, at, t, target, offset, value)
    };
    config(t0, Bdf::new(1, 0, 0), 0x18, Some(0x0004_0201));
    config(t1, Bdf::new(2, 0, 0), 0x18, Some(0x0003_0302));
    let d = Bdf::new(3, 0, 0);
    assert_eq!(
        config(t1, d, 0, None),
        0x1db4_0000 | u32::from(GPU_VENDOR),
        "D answers below the PCIe switch"
    );
    config(t1, d, 0x10, Some(0x9000_0000));
    config(t1, d, 0x04, Some(0b110));
    // The host's write to its BAR reaches the PCIe switch's port on S3 at
    // D's fabric address, inside DSP 0's window.
    let write = Packet::new(
        memory(MemoryOp::Write, ROOT_PORT, 0, 0x9000_0010, 1),
        vec![1, 2, 3, 4],
    );
    mesh.net.send(S0, 2, write);
    let (switch, port, packet) = mesh.net.arrivals.pop().expect("delivered");
    assert_eq!((switch, port), (S3, 2));
    assert_eq!(as_memory(&packet).address, 0x8200_0010);

    // Host 1 numbers its virtual switch the same way; then each device's
    // DMA, leaving the PCIe switch by the same weft port, reaches its own
    // host only, as the function in that host's slot 0.
    let mut config = |t, target, offset, value| {
        mesh.host_config(&mut manager, &mut host, (S0, 3), t, target, offset, value)
    };
    config(t0, Bdf::new(1, 0, 0), 0x18, Some(0x0004_0201));
    config(t1, Bdf::new(2, 0, 0), 0x18, Some(0x0003_0302));
    for (requester, host_port) in [(GPU_D, 2), (NIC_F, 3)] {
        let dma = Packet::new(
            memory(MemoryOp::Write, requester, 0, 0x1000, 1),
            vec![1, 2, 3, 4],
        );
        mesh.net.send(S3, 2, dma);
        assert_eq!(mesh.net.arrivals.len(), 1, "{requester:?}");
        let (switch, port, packet) = mesh.net.arrivals.pop().expect("delivered");
        assert_eq!((switch, port), (S0, host_port), "{requester:?}");
        let m = as_memory(&packet);
        assert_eq!((m.address, m.requester), (0x1000, Bdf::new(3, 0, 0)));
    }
}

#[test]
fn devices_below_a_port_without_acs_stay_with_one_host() {
    let (mut mesh, mut manager) = started(pcie_switch(false));
    assert_eq!(
        manager.inventory().bridge(DSP1).map(|b| b.acs_enabled),
        Some(0)
    );
    let mut host = FakeHost::default();
    manager
        .bind(GPU_D, HostIndex(0), 0, &mut mesh.planes, &mut host)
        .expect("D to host 0");
    let refused = manager.bind(NIC_F, HostIndex(1), 0, &mut mesh.planes, &mut host);
    assert_eq!(
        refused,
        Err(BindError::PortOwnedByOtherHost {
            switch: SwitchIndex(2),
            port: PortIndex(2),
            owner: HostIndex(0),
            function: NIC_F,
            reason: SharingRefused::PeerRouteBelowPort {
                downstream_port: DSP1
            },
        })
    );
    assert_eq!(manager.binding_of(NIC_F), None);
    manager
        .bind(NIC_F, HostIndex(0), 1, &mut mesh.planes, &mut host)
        .expect("F to D's host");
    // One host owns everything below the port.
    let s3 = mesh.switch(S3);
    let tables = s3.port_tables(PortIndex(2)).expect("port");
    assert!(tables.function_owners.is_empty());
    assert!(matches!(
        tables.role,
        weft_model::PortRole::Endpoint { owner: Some(owner), .. } if owner.host == HostIndex(0)
    ));
}

#[test]
fn a_port_returns_peer_traffic_only_below_a_switch_whose_ports_all_redirect_it() {
    let returns = |mesh: &Mesh, switch, port| {
        mesh.switch(switch)
            .port_tables(PortIndex(port))
            .expect("port")
            .return_to_ingress
    };
    let (mesh, manager) = started(pcie_switch(true));
    assert!(manager
        .inventory()
        .returns_peers_to(SwitchIndex(2), PortIndex(2)));
    assert!(
        returns(&mesh, S3, 2),
        "both downstream ports redirect requests and completions up"
    );
    // A GPU or a drive on the port's own link has no peer below it.
    for (switch, port) in [(S1, 2), (S1, 3), (S2, 2), (S2, 3)] {
        assert!(!returns(&mesh, switch, port), "S{switch}.{port}");
    }
    // Host and fabric ports never do.
    for (switch, port) in [(S0, 0), (S0, 1), (S0, 2), (S0, 3)] {
        assert!(!returns(&mesh, switch, port), "S{switch}.{port}");
    }
    let (mesh, _manager) = started(pcie_switch(false));
    assert!(
        !returns(&mesh, S3, 2),
        "DSP 1 lets the PCIe switch turn peer traffic itself"
    );
}

/// Host `at` numbers its virtual switch (upstream port bus 1, slots on bus
/// 2, slot n's secondary bus 3 + n) and puts BAR0 of the function in each
/// of `slots` at its address, with Memory Space enabled.
fn assign_bars(
    mesh: &mut Mesh,
    manager: &mut FabricManager,
    host: &mut FakeHost,
    at: (usize, u8),
    slots: &[(u8, u32)],
) {
    let (t0, t1) = (ConfigType::Type0, ConfigType::Type1);
    let mut config =
        |t, target, offset, value| mesh.host_config(manager, host, at, t, target, offset, value);
    config(t0, Bdf::new(1, 0, 0), 0x18, Some(0x0004_0201));
    for &(slot, bar) in slots {
        let bus = 3 + u32::from(slot);
        let buses = bus << 16 | bus << 8 | 2;
        config(t1, Bdf::new(2, slot, 0), 0x18, Some(buses));
        let function = Bdf::new(bus as u8, 0, 0);
        config(t1, function, 0x10, Some(bar));
        config(t1, function, 0x04, Some(0b110));
    }
}

/// A completion with `dw` DWs of data from `completer` to `requester`.
fn peer_completion(completer: Bdf, requester: Bdf, tag: u16, dw: u16) -> Packet {
    use weft_fabric::pcie::tlp::{
        Attributes, Body, Completion, CompletionStatus, Header, Tag, TrafficClass,
    };
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
            byte_count: dw * 4,
            requester,
            tag: Tag::new(tag).expect("fits"),
            lower_address: 0,
            data_dw: Some(dw),
        }),
    };
    Packet::new(header, vec![0x5a; usize::from(dw) * 4])
}

#[test]
fn devices_below_one_port_bound_to_one_host_do_peer_to_peer() {
    let (mut mesh, mut manager) = started(pcie_switch(true));
    let mut host = FakeHost::default();
    manager
        .bind(GPU_D, HostIndex(0), 0, &mut mesh.planes, &mut host)
        .expect("D to host 0");
    manager
        .bind(NIC_F, HostIndex(0), 1, &mut mesh.planes, &mut host)
        .expect("F to host 0");
    assign_bars(
        &mut mesh,
        &mut manager,
        &mut host,
        (S0, 2),
        &[(0, 0x9000_0000), (1, 0x9100_0000)],
    );
    // D writes into F's BAR0 as host 0 assigned it: the PCIe switch sends
    // it up (P2P Request Redirect), S3.2 translates it through host 0's
    // window of F and sends it back down, at F's fabric address (inside
    // DSP 1's window, §7.5.1.3.8), so the PCIe switch delivers it to F.
    mesh.net.send(
        S3,
        2,
        Packet::new(
            memory(MemoryOp::Write, GPU_D, 0, 0x9100_0010, 1),
            vec![1, 2, 3, 4],
        ),
    );
    let (switch, port, packet) = mesh.net.arrivals.pop().expect("returned");
    assert_eq!((switch, port), (S3, 2));
    let m = as_memory(&packet);
    assert_eq!((m.address, m.requester), (0x8300_0010, GPU_D));
    assert_eq!(packet.payload, [1, 2, 3, 4]);

    // D reads F; F's completion comes up too (P2P Completion Redirect)
    // and goes back down to D.
    mesh.net.send(
        S3,
        2,
        Packet::new(memory(MemoryOp::Read, GPU_D, 9, 0x9100_0020, 2), vec![]),
    );
    let (switch, port, packet) = mesh.net.arrivals.pop().expect("returned");
    assert_eq!((switch, port), (S3, 2));
    assert_eq!(as_memory(&packet).address, 0x8300_0020);
    mesh.net.send(S3, 2, peer_completion(NIC_F, GPU_D, 9, 2));
    assert_eq!(mesh.net.arrivals.len(), 1);
    let (switch, port, packet) = mesh.net.arrivals.pop().expect("returned");
    assert_eq!((switch, port), (S3, 2));
    assert_eq!(packet.payload, [0x5a; 8]);
    let counters = mesh
        .switch(S3)
        .counters(PortIndex(2))
        .expect("port")
        .clone();
    assert_eq!(
        counters.drops_for(weft_model::DropReason::RoutesToIngress),
        0
    );
}

#[test]
fn a_device_below_one_port_does_not_reach_a_peer_bound_to_another_host() {
    let (mut mesh, mut manager) = started(pcie_switch(true));
    let mut host = FakeHost::default();
    manager
        .bind(GPU_D, HostIndex(0), 0, &mut mesh.planes, &mut host)
        .expect("D to host 0");
    manager
        .bind(NIC_F, HostIndex(1), 0, &mut mesh.planes, &mut host)
        .expect("F to host 1");
    assign_bars(
        &mut mesh,
        &mut manager,
        &mut host,
        (S0, 2),
        &[(0, 0x9000_0000)],
    );
    assign_bars(
        &mut mesh,
        &mut manager,
        &mut host,
        (S0, 3),
        &[(0, 0xa000_0000)],
    );
    // Host 0 knows no F: D's write at F's host 1 address is DMA into host
    // 0's memory, never a peer request.
    mesh.net.send(
        S3,
        2,
        Packet::new(
            memory(MemoryOp::Write, GPU_D, 0, 0xa000_0010, 1),
            vec![1, 2, 3, 4],
        ),
    );
    assert_eq!(mesh.net.arrivals.len(), 1);
    let (switch, port, packet) = mesh.net.arrivals.pop().expect("delivered");
    assert_eq!((switch, port), (S0, 2));
    assert_eq!(as_memory(&packet).address, 0xa000_0010);
    // F cannot answer D either: a completion between two owners is not returned.
    mesh.net.send(S3, 2, peer_completion(NIC_F, GPU_D, 9, 1));
    assert!(mesh.net.arrivals.is_empty());
    let counters = mesh
        .switch(S3)
        .counters(PortIndex(2))
        .expect("port")
        .clone();
    assert_eq!(
        counters.drops_for(weft_model::DropReason::RoutesToIngress),
        1
    );
    // Each still reaches its own BAR through its own host's window.
    for (requester, address, fabric) in [
        (GPU_D, 0x9000_0010, 0x8200_0010),
        (NIC_F, 0xa000_0010, 0x8300_0010),
    ] {
        mesh.net.send(
            S3,
            2,
            Packet::new(
                memory(MemoryOp::Write, requester, 0, address, 1),
                vec![0; 4],
            ),
        );
        let (switch, port, packet) = mesh.net.arrivals.pop().expect("returned");
        assert_eq!((switch, port), (S3, 2), "{requester:?}");
        assert_eq!(as_memory(&packet).address, fabric, "{requester:?}");
    }
}

/// A PCIe switch on the manager's own switch, reached on the link and by
/// Type 1 requests through it; its second downstream port forwards
/// prefetchable memory below 4 GiB only, so the 64-bit prefetchable BAR
/// below it goes in its memory window (§7.5.1.3.9).
#[test]
fn a_pcie_switch_on_the_managers_switch_with_a_32_bit_prefetchable_window() {
    let mut mesh = Mesh::new(&[0x10], PORTS, Clock::default());
    let mut pcie = pcie_switch(true);
    let mut narrow = Type1Function::switch_port(identity(BRIDGE_VENDOR, 0x8724, 0x06_04_00));
    narrow.prefetchable_window = PrefetchableWindow::Decode32;
    pcie.downstream[1] = DownstreamPort::new(
        switch_port(narrow, PortType::SwitchDownstream, true),
        Some(nic()),
    );
    mesh.attach_conventional((0, 1), pcie);
    let mut settings = settings();
    settings.hosts.truncate(1);
    let mut manager = FabricManager::new(settings).expect("valid settings");
    let mut clock = mesh.net.clock.clone();
    manager
        .start(&mut mesh.net, &mut clock, &mut mesh.planes, 0)
        .expect("the fabric enumerates");

    // Bus 0 the manager, 1 host 0's proxy; the switch at 2, its internal
    // bus 3, D at 4, F at 5.
    let inv = manager.inventory();
    assert_eq!(inv.port(PortIndex(1)), PortKind::Endpoint { buses: (2, 5) });
    assert_eq!(
        inv.functions.iter().map(|f| f.id).collect::<Vec<_>>(),
        [Bdf::new(4, 0, 0), Bdf::new(5, 0, 0)]
    );
    let pcie = match mesh.net.partners.get(&(0, 1)) {
        Some(Partner::Conventional(switch)) => switch,
        _ => panic!("the PCIe switch"),
    };
    // D: 0x8000_0000 and 0x40_0000_0000. F: BAR0 64 KiB at 0x8100_0000,
    // then its 512 KiB prefetchable BAR below 4 GiB too, at 0x8108_0000.
    let f = &pcie.downstream[1].device.as_ref().expect("F").functions[0].space;
    assert_eq!(
        (bar_address(f, 0x10), bar_address(f, 0x18)),
        (0x8100_0000, 0x8108_0000)
    );
    let dsp1 = &pcie.downstream[1].space;
    assert_eq!(memory_window(dsp1), window(0x8100_0000, 0x810f_ffff));
    assert_eq!(prefetchable_window(dsp1), None);
    assert_eq!(
        memory_window(&pcie.upstream),
        window(0x8000_0000, 0x810f_ffff)
    );
    assert_eq!(
        prefetchable_window(&pcie.upstream),
        window(0x40_0000_0000, 0x40_0fff_ffff)
    );
}

/// The NVMe drive below a PCIe switch's downstream port: its VFs' routing
/// IDs are ARI function numbers (0x80 on), which reach it only once the
/// port forwards ARI (§6.13), and VFs 3 and 4 sit on the bus after its
/// own, which the port forwards as Type 1 (§7.3.3).
///
/// Buses: 0 the manager, 1 host 0's proxy; the switch's upstream port at
/// 2, internal bus 3, downstream port 0's link 4 (the PF, VFs 1-2) and 5
/// (VFs 3-4); the empty downstream port 1 gets bus 6.
#[test]
fn an_sriov_drive_below_a_pcie_switch_has_its_vfs_through_ari_forwarding() {
    let mut mesh = Mesh::new(&[0x10], PORTS, Clock::default());
    let pcie = ConventionalSwitch::new(
        identity(BRIDGE_VENDOR, 0x8724, 0x06_04_00),
        vec![(true, Some(nvme())), (true, None)],
    );
    mesh.attach_conventional((0, 1), pcie);
    let mut settings = settings();
    settings.hosts.truncate(1);
    let mut manager = FabricManager::new(settings).expect("valid settings");
    let mut clock = mesh.net.clock.clone();
    manager
        .start(&mut mesh.net, &mut clock, &mut mesh.planes, 0)
        .expect("the fabric enumerates");

    let inv = manager.inventory();
    assert_eq!(inv.port(PortIndex(1)), PortKind::Endpoint { buses: (2, 6) });
    let pf = Bdf::new_ari(4, 0);
    let expected = [
        pf,
        Bdf::new_ari(4, 0x80),
        Bdf::new_ari(4, 0xc0),
        Bdf::new_ari(5, 0x00),
        Bdf::new_ari(5, 0x40),
    ];
    assert_eq!(
        inv.functions.iter().map(|f| f.id).collect::<Vec<_>>(),
        expected
    );
    assert!(inv.functions[1..]
        .iter()
        .all(|f| matches!(f.kind, FunctionKind::Virtual { pf: p, .. } if p == pf)));
    let pcie = match mesh.net.partners.get(&(0, 1)) {
        Some(Partner::Conventional(switch)) => switch,
        _ => panic!("the PCIe switch"),
    };
    let buses = |space| {
        let b = BusNumbers::read(space);
        (b.primary, b.secondary, b.subordinate)
    };
    assert_eq!(buses(&pcie.upstream), (2, 3, 6));
    assert_eq!(buses(&pcie.downstream[0].space), (3, 4, 5));
    assert_eq!(buses(&pcie.downstream[1].space), (3, 6, 6));
    let forwards_ari = |space: &ConfigSpace| {
        PcieCap::find(space)
            .expect("walks")
            .expect("PCI Express capability")
            .ari_forwarding_enabled(space)
    };
    assert!(forwards_ari(&pcie.downstream[0].space));
    assert!(!forwards_ari(&pcie.downstream[1].space));
}
