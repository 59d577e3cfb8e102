//! Fabrics of several weft switches: discovery through fabric links,
//! shortest paths with their tie-breaks, every switch's tables, and a host
//! on one switch using endpoints on others. Every expected path, bus and
//! address is worked out by hand below from the cabling, the switch IDs
//! and the BAR sizes.

mod common;

use common::conventional::ConventionalSwitch;
use common::mesh::Mesh;
use common::*;
use proptest::prelude::*;
use weft_fabric::binding::BindError;
use weft_fabric::events::Event;
use weft_fabric::hw::ConfigPath;
use weft_fabric::inventory::{Binding, PortKind, SwitchIndex};
use weft_fabric::manager::{FabricManager, StartError};
use weft_fabric::pcie::config::Bar;
use weft_fabric::pcie::tlp::{Body, CompletionStatus, ConfigType, MemoryOp};
use weft_fabric::pcie::Bdf;
use weft_fabric::port_control::PortControlError;
use weft_fabric::settings::{FabricSettings, HostPort};
use weft_model::{Destination, Packet};
use weft_regs::csr::global;
use weft_regs::driver::CsrBus;
use weft_regs::tables::{HostIndex, PortIndex};

const PORTS: usize = 8;
const HOST_PORT: u8 = 0;
const GPU_VENDOR: u16 = 0x10de;

/// A GPU: BAR0 32-bit 16 MiB, BAR1-2 64-bit prefetchable 256 MiB.
fn gpu() -> FakeDevice {
    FakeDevice::new(vec![plain_function(
        0,
        identity(GPU_VENDOR, 0x2330, 0x03_02_00),
        [
            Some(Bar::memory32(16 << 20)),
            Some(Bar::memory64(256 << 20, true)),
            None,
            None,
            None,
            None,
        ],
        false,
    )])
}

fn settings(switch_id: u64) -> FabricSettings {
    let mut s = FabricSettings {
        switch_id,
        ..FabricSettings::default()
    };
    s.upstream_identity = identity(0x1d1d, 0x0001, 0x06_04_00);
    s.downstream_identity = identity(0x1d1d, 0x0002, 0x06_04_00);
    s.hosts
        .push(HostPort {
            switch: switch_id,
            port: PortIndex(HOST_PORT),
            host: HostIndex(0),
            slots: 2,
        })
        .expect("room");
    s
}

fn start(mesh: &mut Mesh, manager: &mut FabricManager) {
    let mut clock = mesh.net.clock.clone();
    manager
        .start(&mut mesh.net, &mut clock, &mut mesh.planes, 0)
        .expect("the fabric enumerates");
}

fn p(n: u8) -> Option<PortIndex> {
    Some(PortIndex(n))
}

fn to(n: u8) -> Option<Destination> {
    Some(Destination::Port(PortIndex(n)))
}

#[test]
fn two_switches_enumerate_through_their_link() {
    // S0 (ID 0xa0): port 0 host, port 3 ↔ S1 (ID 0xb0) port 5; S1 port 1 a GPU.
    let mut mesh = Mesh::new(&[0xa0, 0xb0], PORTS, Clock::default());
    mesh.attach_host((0, HOST_PORT));
    mesh.link((0, 3), (1, 5));
    mesh.attach((1, 1), gpu());
    let mut manager = FabricManager::new(settings(0xa0)).expect("valid");
    start(&mut mesh, &mut manager);

    let inv = manager.inventory();
    assert_eq!(
        inv.switches.iter().map(|s| s.id).collect::<Vec<_>>(),
        [0xa0, 0xb0]
    );
    let (s0, s1) = (SwitchIndex(0), SwitchIndex(1));
    assert_eq!(
        inv.port_on(s0, PortIndex(3)),
        PortKind::Fabric {
            switch_id: 0xb0,
            port: PortIndex(5)
        }
    );
    assert_eq!(
        inv.port_on(s1, PortIndex(5)),
        PortKind::Fabric {
            switch_id: 0xa0,
            port: PortIndex(3)
        }
    );
    // Bus 0 the manager, 1 the host's proxy, 2 the first endpoint port.
    assert_eq!(
        inv.port_on(s1, PortIndex(1)),
        PortKind::Endpoint { buses: (2, 2) }
    );
    let gpu = inv.function(Bdf::new(2, 0, 0)).expect("the GPU");
    assert_eq!((gpu.switch, gpu.port), (s1, PortIndex(1)));
    assert_eq!(
        inv.config_path(s1, PortIndex(1), 2),
        ConfigPath::Routed(PortIndex(3))
    );
    // The GPU's BARs were assigned through the link.
    let device_bar0 = match mesh.net.partners.get(&(1, 1)) {
        Some(common::mesh::Partner::Device(d)) => d.functions[0].space.read(0x10),
        _ => panic!("the GPU"),
    };
    assert_eq!(device_bar0, 0x8000_0000);

    // Each switch routes the other's buses across the link.
    let s0 = mesh.switch(0).routes().buses;
    assert_eq!(
        (s0[0], s0[1], s0[2]),
        (Some(Destination::Cpu), to(HOST_PORT), to(3))
    );
    let s1 = mesh.switch(1).routes().buses;
    assert_eq!((s1[0], s1[1], s1[2]), (to(5), to(5), to(1)));
    assert_eq!(
        mesh.switch(1).routes().by_address(0x8000_0000),
        to(1),
        "the GPU's BAR0"
    );
    assert_eq!(
        mesh.switch(0)
            .routes()
            .by_address(0x8000_0000 + (16 << 20) - 4),
        to(3)
    );
}

#[test]
fn a_hung_device_is_reported_not_responding_and_the_rest_enumerated() {
    // S0 (ID 0xa0): port 0 host, port 1 a hung device, port 2 a GPU,
    // port 3 ↔ S1 (ID 0xb0) port 5; S1: port 1 a hung device, port 2 a GPU.
    let mut mesh = Mesh::new(&[0xa0, 0xb0], PORTS, Clock::default());
    mesh.attach_host((0, HOST_PORT));
    mesh.attach_hung((0, 1));
    mesh.attach((0, 2), gpu());
    mesh.link((0, 3), (1, 5));
    mesh.attach_hung((1, 1));
    mesh.attach((1, 2), gpu());
    let mut manager = FabricManager::new(settings(0xa0)).expect("valid");
    // The manager's first reads of the hung devices, on their link and
    // routed through the fabric, time out; enumeration goes on.
    start(&mut mesh, &mut manager);

    let inv = manager.inventory();
    let (s0, s1) = (SwitchIndex(0), SwitchIndex(1));
    let silent = |switch: SwitchIndex| {
        (0..PORTS as u8)
            .filter(|port| inv.switches[usize::from(switch.0)].not_responding(PortIndex(*port)))
            .collect::<Vec<_>>()
    };
    assert_eq!((silent(s0), silent(s1)), (vec![1], vec![1]));
    for (switch, port) in [(s0, 1), (s1, 1)] {
        assert_eq!(inv.port_on(switch, PortIndex(port)), PortKind::Empty);
    }
    // Both GPUs were enumerated, on the buses after the host's proxy.
    let gpus: Vec<_> = inv
        .functions
        .iter()
        .map(|f| (f.id, f.switch, f.port))
        .collect();
    assert_eq!(
        gpus,
        [
            (Bdf::new(2, 0, 0), s0, PortIndex(2)),
            (Bdf::new(3, 0, 0), s1, PortIndex(2)),
        ]
    );
    // The fabric works: both bind to the host.
    let mut host = FakeHost::default();
    for (slot, gpu) in [(0, Bdf::new(2, 0, 0)), (1, Bdf::new(3, 0, 0))] {
        manager
            .bind(gpu, HostIndex(0), slot, &mut mesh.planes, &mut host)
            .expect("the GPU binds");
    }
}

/// A device that the tests below make hang partway through enumeration.
#[derive(Clone, Copy, Debug)]
enum Hangs {
    /// A GPU ([`gpu`]).
    Gpu,
    /// An NVMe PF with SR-IOV (two VFs enabled) and ARI.
    Nvme,
    /// A conventional PCIe switch with a GPU below it.
    Conventional,
}

/// Attaches `device` at `at`, hanging after `after` configuration
/// requests if given, or hung from the first if `hung`.
fn attach_hanging(mesh: &mut Mesh, at: (usize, u8), device: Hangs, after: Option<usize>) {
    match device {
        Hangs::Gpu => mesh.attach(at, gpu()),
        Hangs::Nvme => mesh.attach(at, common::reference::nvme()),
        Hangs::Conventional => mesh.attach_conventional(
            at,
            ConventionalSwitch::new(
                identity(0x10b5, 0x8724, 0x06_04_00),
                vec![(true, Some(gpu()))],
            ),
        ),
    }
    if let Some(after) = after {
        mesh.hang_after(at, after);
    }
}

/// Where the hanging devices sit: S0 (ID 0xa0) port 1 and S1 (ID 0xb0)
/// port 1. S0: port 0 host, port 2 a GPU, port 3 ↔ S1 port 5 (so S1 is
/// discovered after S0's device hung); S1: port 2 a GPU.
const HANGING: [(usize, u8); 2] = [(0, 1), (1, 1)];

/// The fabric with `devices` at [`HANGING`], each hanging after the
/// number of requests given (`Some(0)`: hung before enumeration), started.
fn hanging_fabric(devices: [(Hangs, Option<usize>); 2]) -> (Mesh, FabricManager) {
    let mut mesh = Mesh::new(&[0xa0, 0xb0], PORTS, Clock::default());
    mesh.attach_host((0, HOST_PORT));
    mesh.attach((0, 2), gpu());
    mesh.link((0, 3), (1, 5));
    mesh.attach((1, 2), gpu());
    for (at, (device, after)) in HANGING.into_iter().zip(devices) {
        attach_hanging(&mut mesh, at, device, after);
    }
    let mut settings = settings(0xa0);
    settings.num_vfs = 2;
    let mut manager = FabricManager::new(settings).expect("valid");
    start(&mut mesh, &mut manager);
    (mesh, manager)
}

/// Every pair of `ranges` (`(first, last)`, inclusive) is disjoint.
fn disjoint(ranges: &[(u64, u64)]) -> Result<(), TestCaseError> {
    for (i, a) in ranges.iter().enumerate() {
        for b in &ranges[i + 1..] {
            prop_assert!(a.1 < b.0 || b.1 < a.0, "{a:x?} overlaps {b:x?}");
        }
    }
    Ok(())
}

fn hangs() -> impl Strategy<Value = Hangs> {
    prop_oneof![
        Just(Hangs::Gpu),
        Just(Hangs::Nvme),
        Just(Hangs::Conventional)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A device that stops answering after it completed N of the
    /// manager's configuration requests (PCIe Base 6.0 §2.8: they time
    /// out) leaves the fabric as if it had hung before enumeration: its
    /// port is not responding and empty, and everything else — every
    /// other function with its fabric ID and BARs, every port's buses,
    /// the other switch — is what it is then; nothing it was given is
    /// handed out twice. A device that completed every request it gets is
    /// enumerated as if it never hung.
    #[test]
    fn a_device_hung_partway_is_not_responding_and_the_rest_enumerated(
        devices in [hangs(), hangs()],
        fractions in [0.0..1.2f64, 0.0..1.2f64],
    ) {
        let healthy = hanging_fabric(devices.map(|d| (d, None)));
        let needs = HANGING.map(|at| healthy.0.net.completed[&at]);
        let after: [usize; 2] =
            core::array::from_fn(|i| (fractions[i] * needs[i] as f64) as usize);
        let hung: [bool; 2] = core::array::from_fn(|i| after[i] < needs[i]);
        // The expected fabric: each device that hangs partway is hung from
        // the first request instead.
        let expected = hanging_fabric(core::array::from_fn(|i| {
            (devices[i], hung[i].then_some(0))
        }));
        let (mut mesh, mut manager) =
            hanging_fabric(core::array::from_fn(|i| (devices[i], Some(after[i]))));

        let inv = manager.inventory();
        let want = expected.1.inventory();
        for (i, (switch, port)) in HANGING.into_iter().enumerate() {
            let (switch, port) = (SwitchIndex(switch as u8), PortIndex(port));
            prop_assert_eq!(inv.switches[usize::from(switch.0)].not_responding(port), hung[i]);
            if hung[i] {
                prop_assert_eq!(inv.port_on(switch, port), PortKind::Empty);
                prop_assert!(!inv.functions.iter().any(|f| (f.switch, f.port) == (switch, port)));
                prop_assert!(!inv.bridges.iter().any(|b| (b.switch, b.port) == (switch, port)));
            }
        }
        // Each hung device is logged once, by its switch and port.
        let logged: Vec<(SwitchIndex, PortIndex)> = manager
            .events()
            .since(0)
            .filter_map(|logged| match logged.event {
                Event::NotResponding { switch, port } => Some((switch, port)),
                _ => None,
            })
            .collect();
        let hung_ports: Vec<(SwitchIndex, PortIndex)> = HANGING
            .into_iter()
            .zip(hung)
            .filter(|(_, hung)| *hung)
            .map(|((switch, port), _)| (SwitchIndex(switch as u8), PortIndex(port)))
            .collect();
        prop_assert_eq!(logged, hung_ports);
        prop_assert_eq!(&inv.switches, &want.switches);
        prop_assert_eq!(&inv.functions, &want.functions);
        prop_assert_eq!(&inv.bridges, &want.bridges);

        // No bus and no BAR is given twice.
        let buses: Vec<(u64, u64)> = inv
            .switches
            .iter()
            .flat_map(|s| s.ports.iter())
            .filter_map(|kind| match kind {
                PortKind::Endpoint { buses } => Some((u64::from(buses.0), u64::from(buses.1))),
                _ => None,
            })
            .collect();
        disjoint(&buses)?;
        let bars: Vec<(u64, u64)> = inv
            .functions
            .iter()
            .flat_map(|f| f.bars.iter())
            .filter_map(|bar| Some((bar.fabric_address()?, bar.fabric_address()? + bar.size() - 1)))
            .collect();
        disjoint(&bars)?;

        // The rest works: S1's GPU, found after S0's device hung, binds.
        let gpu = inv
            .functions
            .iter()
            .find(|f| (f.switch, f.port) == (SwitchIndex(1), PortIndex(2)))
            .expect("S1's GPU")
            .id;
        let mut host = FakeHost::default();
        manager
            .bind(gpu, HostIndex(0), 0, &mut mesh.planes, &mut host)
            .expect("the GPU binds");
    }
}

/// A switch (ID 0xa0): port 0 a host, port 1 a conventional PCIe switch
/// with a GPU on each of its two downstream ports, the first GPU as
/// `first` (`None`: no device; `Some(n)`: hanging after n configuration
/// requests), started.
fn gpus_below_a_pcie_switch(first: Option<Option<usize>>) -> (Mesh, FabricManager) {
    let mut mesh = Mesh::new(&[0xa0], PORTS, Clock::default());
    mesh.attach_host((0, HOST_PORT));
    let mut pcie = ConventionalSwitch::new(
        identity(0x10b5, 0x8724, 0x06_04_00),
        vec![(true, first.map(|_| gpu())), (true, Some(gpu()))],
    );
    pcie.downstream[0].hang_after = first.flatten();
    mesh.attach_conventional((0, 1), pcie);
    let mut manager = FabricManager::new(settings(0xa0)).expect("valid");
    start(&mut mesh, &mut manager);
    (mesh, manager)
}

/// The configuration requests the device on the conventional switch's
/// first downstream port completed.
fn first_gpu_completed(mesh: &Mesh) -> usize {
    match mesh.net.partners.get(&(0, 1)) {
        Some(common::mesh::Partner::Conventional(pcie)) => pcie.downstream[0].completed,
        _ => unreachable!("a conventional switch is on port 1"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// A device on a conventional switch's downstream port that stops
    /// answering after N of the manager's configuration requests (they
    /// time out, PCIe Base 6.0 §2.8) is left out alone: the fabric is the
    /// one with nothing on that downstream port, but for the port's record
    /// of it; the weft port is not "not responding", its other GPU is
    /// enumerated and binds, and the device is logged once, by its fabric
    /// ID. One that completes every request it gets is enumerated.
    #[test]
    fn a_device_hung_below_a_pcie_switch_is_left_out_alone(fraction in 0.0..1.2f64) {
        let healthy = gpus_below_a_pcie_switch(Some(None));
        let needs = first_gpu_completed(&healthy.0);
        let after = (fraction * needs as f64) as usize;
        let hung = after < needs;
        let (mut mesh, mut manager) = gpus_below_a_pcie_switch(Some(Some(after)));
        let inv = manager.inventory();
        prop_assert!(!inv.switches[0].not_responding(PortIndex(1)));

        let mut want = if hung {
            gpus_below_a_pcie_switch(None).1.inventory().clone()
        } else {
            healthy.1.inventory().clone()
        };
        let downstream = want
            .bridges
            .iter_mut()
            .find(|b| b.kind == weft_fabric::inventory::BridgeKind::SwitchDownstream)
            .expect("the first downstream port");
        downstream.device_not_responding = hung;
        let device = Bdf::new(downstream.buses.0, 0, 0);
        prop_assert_eq!(&inv.switches, &want.switches);
        prop_assert_eq!(&inv.functions, &want.functions);
        prop_assert_eq!(&inv.bridges, &want.bridges);

        let logged: Vec<Event> = manager
            .events()
            .since(0)
            .map(|logged| logged.event)
            .filter(|event| {
                matches!(event, Event::NotResponding { .. } | Event::DeviceNotResponding { .. })
            })
            .collect();
        let expected: Vec<Event> = if hung {
            vec![Event::DeviceNotResponding {
                device,
                switch: SwitchIndex(0),
                port: PortIndex(1),
            }]
        } else {
            vec![]
        };
        prop_assert_eq!(logged, expected);

        let gpu = inv.functions.last().expect("the second GPU").id;
        let mut host = FakeHost::default();
        manager
            .bind(gpu, HostIndex(0), 0, &mut mesh.planes, &mut host)
            .expect("the second GPU binds");
    }
}

#[test]
fn a_weft_switch_that_stops_answering_once_known_stops_enumeration() {
    // S0 (ID 0xa0): port 0 host, port 3 ↔ S1 (ID 0xb0) port 5, S1's
    // management function hanging after n requests. Until its identity is
    // read it may be any device, and is left not responding; once the
    // manager knows it for a weft switch, a timeout is the fabric's own
    // failure and stops enumeration.
    let run = |after: Option<usize>| {
        let mut mesh = Mesh::new(&[0xa0, 0xb0], PORTS, Clock::default());
        mesh.attach_host((0, HOST_PORT));
        mesh.link((0, 3), (1, 5));
        if let Some(after) = after {
            mesh.hang_after((0, 3), after);
        }
        let mut manager = FabricManager::new(settings(0xa0)).expect("valid");
        let mut clock = mesh.net.clock.clone();
        let result = manager.start(&mut mesh.net, &mut clock, &mut mesh.planes, 0);
        (mesh, manager, result)
    };
    let (mesh, _, result) = run(None);
    result.expect("the fabric enumerates");
    let needs = mesh.net.completed[&(0, 3)];
    let mut outcomes = Vec::new();
    for after in 0..needs {
        let (_, manager, result) = run(Some(after));
        outcomes.push(match result {
            Ok(()) => {
                assert!(manager.inventory().switches[0].not_responding(PortIndex(3)));
                assert_eq!(manager.inventory().switches.len(), 1);
                "not responding"
            }
            Err(StartError::Enumeration(error)) if error.device_timed_out() => "fatal",
            Err(other) => panic!("after {after} requests: {other:?}"),
        });
    }
    // Not responding while it is identified, fatal from then on.
    let identified = outcomes
        .iter()
        .take_while(|o| **o == "not responding")
        .count();
    assert!(identified > 0 && identified < needs, "{outcomes:?}");
    assert!(
        outcomes[identified..].iter().all(|o| *o == "fatal"),
        "{outcomes:?}"
    );
}

/// The ring: A (ID 0x10, the manager's) — B (0x40) — C (0x30) — D (0x20) —
/// A, with a second, parallel link between A and D.
///
/// | link        | ports         |
/// |-------------|---------------|
/// | A — B       | A.1 — B.1     |
/// | A — D       | A.2 — D.1     |
/// | A — D       | A.3 — D.3     |
/// | B — C       | B.2 — C.1     |
/// | C — D       | C.2 — D.2     |
///
/// Discovery is breadth first from A, ports in order: A.1 finds B (index
/// 1), A.2 finds D (index 2), A.3 finds D again (known: a second link);
/// from B, B.2 finds C (index 3); D.2 leads to C, known. The host is on
/// A.0; GPU 1 on B.0 gets bus 2 (B is walked before C), GPU 0 on C.0 bus 3.
/// Until the manager starts the fabric, a host asking any switch's
/// disabled port for configuration space is told to retry (PCIe Base 6.0
/// §2.3.1, §6.6.1: Request Retry Status, where silence would be a
/// completion timeout); the start settles every port of every switch it
/// reaches, and a port left disabled then drops what arrives unanswered.
#[test]
fn a_host_asking_before_the_fabric_starts_is_told_to_retry() {
    // The two switches above, and a host on S1's port 2 that the settings do not name.
    let mut mesh = Mesh::new(&[0xa0, 0xb0], PORTS, Clock::default());
    mesh.attach_host((0, HOST_PORT));
    mesh.link((0, 3), (1, 5));
    mesh.attach((1, 1), gpu());
    let read = config_request(ROOT_PORT, 9, ConfigType::Type0, ROOT_PORT, 0, None);
    for (switch, port) in [(0, HOST_PORT), (1, 2)] {
        mesh.net.send(switch, port, read.clone());
        let (at_switch, at_port, answer) = mesh.net.arrivals.pop().expect("an answer");
        let Body::Completion(c) = answer.header.body else {
            panic!("not a completion: {answer:?}");
        };
        assert_eq!(
            (at_switch, at_port, c.status, c.requester, c.tag.get()),
            (switch, port, CompletionStatus::RequestRetry, ROOT_PORT, 9)
        );
    }
    let mut manager = FabricManager::new(settings(0xa0)).expect("valid");
    start(&mut mesh, &mut manager);
    for switch in 0..2 {
        for port in 0..PORTS as u8 {
            let settled = mesh
                .switch(switch)
                .port_tables(PortIndex(port))
                .is_some_and(|t| t.settled);
            assert!(settled, "S{switch} port {port}");
        }
    }
    mesh.net.send(1, 2, read);
    assert!(
        mesh.net.arrivals.is_empty(),
        "a settled disabled port answers nothing"
    );
}

fn ring() -> (Mesh, FabricManager) {
    let (a, b, c, d) = (0, 1, 3, 2);
    let mut mesh = Mesh::new(&[0x10, 0x40, 0x20, 0x30], PORTS, Clock::default());
    mesh.attach_host((a, HOST_PORT));
    mesh.link((a, 1), (b, 1));
    mesh.link((a, 2), (d, 1));
    mesh.link((a, 3), (d, 3));
    mesh.link((b, 2), (c, 1));
    mesh.link((c, 2), (d, 2));
    mesh.attach((b, 0), gpu());
    mesh.attach((c, 0), gpu());
    let mut manager = FabricManager::new(settings(0x10)).expect("valid");
    start(&mut mesh, &mut manager);
    (mesh, manager)
}

/// Switch indices in discovery order, and the mesh's (model) indices.
const A: SwitchIndex = SwitchIndex(0);
const B: SwitchIndex = SwitchIndex(1);
const D: SwitchIndex = SwitchIndex(2);
const C: SwitchIndex = SwitchIndex(3);
const MODEL_A: usize = 0;
const MODEL_B: usize = 1;
const MODEL_D: usize = 2;
const MODEL_C: usize = 3;

const GPU1: Bdf = Bdf::new(2, 0, 0);
const GPU0: Bdf = Bdf::new(3, 0, 0);
const PROXY: Bdf = Bdf::new(1, 0, 0);

#[test]
fn a_ring_is_discovered_once_per_switch_and_link() {
    let (_mesh, manager) = ring();
    let inv = manager.inventory();
    assert_eq!(
        inv.switches.iter().map(|s| s.id).collect::<Vec<_>>(),
        [0x10, 0x40, 0x20, 0x30]
    );
    let fabric = |switch_id, port| PortKind::Fabric {
        switch_id,
        port: PortIndex(port),
    };
    assert_eq!(inv.port_on(A, PortIndex(1)), fabric(0x40, 1));
    assert_eq!(inv.port_on(A, PortIndex(2)), fabric(0x20, 1));
    assert_eq!(inv.port_on(A, PortIndex(3)), fabric(0x20, 3));
    assert_eq!(inv.port_on(B, PortIndex(2)), fabric(0x30, 1));
    assert_eq!(inv.port_on(D, PortIndex(2)), fabric(0x30, 2));
    assert_eq!(inv.port_on(C, PortIndex(2)), fabric(0x20, 2));
    assert_eq!(
        inv.port_on(B, PortIndex(0)),
        PortKind::Endpoint { buses: (2, 2) }
    );
    assert_eq!(
        inv.port_on(C, PortIndex(0)),
        PortKind::Endpoint { buses: (3, 3) }
    );
    assert_eq!(inv.port_on(D, PortIndex(0)), PortKind::Empty);
    let ids: Vec<_> = inv.functions.iter().map(|f| (f.id, f.switch)).collect();
    assert_eq!(ids, [(GPU1, B), (GPU0, C)]);
}

#[test]
fn ring_paths_are_shortest_with_the_lower_switch_id_then_port_first() {
    let (_mesh, manager) = ring();
    let paths = &manager.inventory().paths;
    let hop = |from, to| paths.next_hop(from, to);
    // Neighbours: straight across their link (A to D: ports 2 and 3, the lower wins).
    assert_eq!(hop(A, B), p(1));
    assert_eq!(hop(A, D), p(2));
    assert_eq!(hop(D, A), p(1));
    assert_eq!(hop(B, C), p(2));
    assert_eq!(hop(C, D), p(2));
    // Two hops, two ways each: through the neighbour with the lower ID.
    // A to C: through B (0x40) or D (0x20): D.
    assert_eq!(hop(A, C), p(2));
    assert_eq!(hop(D, C), p(2));
    // C to A: through B (0x40) or D (0x20): D.
    assert_eq!(hop(C, A), p(2));
    // B to D and D to B: through A (0x10) or C (0x30): A.
    assert_eq!(hop(B, D), p(1));
    assert_eq!(hop(D, B), p(1));
    assert_eq!(hop(A, A), None);
    assert_eq!(paths.distance(A, C), Some(2));
    assert_eq!(paths.distance(B, D), Some(2));
    // Configuration requests to C leave A the way its routes go, not the
    // way discovery first reached it (through B).
    assert_eq!(
        manager.inventory().config_path(C, PortIndex(0), 3),
        ConfigPath::Routed(PortIndex(2))
    );
}

#[test]
fn every_switch_routes_every_bus_and_range_along_its_path() {
    let (mesh, _manager) = ring();
    // Buses: 0 the manager (A's CPU), 1 the host's proxy (A.0), 2 GPU 1 (B.0), 3 GPU 0 (C.0).
    let cpu = Some(Destination::Cpu);
    let expected = [
        (MODEL_A, [cpu, to(0), to(1), to(2)]),
        (MODEL_B, [to(1), to(1), to(0), to(2)]),
        (MODEL_D, [to(1), to(1), to(1), to(2)]),
        (MODEL_C, [to(2), to(2), to(1), to(0)]),
    ];
    for (switch, buses) in expected {
        let routes = mesh.switch(switch).routes().buses;
        assert_eq!(routes[..4], buses, "switch {switch}");
        assert!(routes[4..].iter().all(Option::is_none), "switch {switch}");
    }
    // BARs, below 4 GiB from 0x8000_0000 and prefetchable from 256 GiB:
    // GPU 1: 0x8000_0000 (16 MiB), 0x40_0000_0000 (256 MiB);
    // GPU 0: 0x8100_0000, 0x40_1000_0000. Host 0's aperture: 1 << 63.
    let addresses = [
        (0x8000_0000u64, [to(1), to(0), to(1), to(1)]),
        (0x40_0000_0000, [to(1), to(0), to(1), to(1)]),
        (0x8100_0000, [to(2), to(2), to(2), to(0)]),
        (0x40_1000_0000, [to(2), to(2), to(2), to(0)]),
        (1 << 63, [to(0), to(1), to(1), to(2)]),
    ];
    for (address, per_switch) in addresses {
        for (switch, want) in [MODEL_A, MODEL_B, MODEL_D, MODEL_C]
            .into_iter()
            .zip(per_switch)
        {
            assert_eq!(
                mesh.switch(switch).routes().by_address(address),
                want,
                "{address:#x} on switch {switch}"
            );
        }
    }
}

/// A ring of the manager's full sixteen switches (port 6 out to the next,
/// port 7 in from the one before), the host on switch 0, and a GPU on every
/// other port: 77 GPUs, each two BARs, far more ranges than an address
/// routing table holds (`weft_regs::capacity::ADDRESS_ROUTES`). Neighbouring
/// ranges that leave a switch the same way share a route, so every switch's
/// table fits, and still every BAR, the host's aperture and every bus is
/// routed out of the port its path takes.
#[test]
fn a_ring_of_sixteen_switches_routes_every_bar_within_the_table() {
    let switches = weft_fabric::limits::MAX_SWITCHES;
    let ids: Vec<u64> = (0..switches as u64).map(|s| 0x100 + s).collect();
    let mut mesh = Mesh::new(&ids, PORTS, Clock::default());
    mesh.attach_host((0, HOST_PORT));
    for s in 0..switches {
        mesh.link((s, 6), ((s + 1) % switches, 7));
        for port in 0..6 {
            if (s, port) != (0, HOST_PORT) {
                mesh.attach((s, port), gpu());
            }
        }
    }
    let mut manager = FabricManager::new(settings(0x100)).expect("valid");
    start(&mut mesh, &mut manager);
    let inventory = manager.inventory();
    assert_eq!(inventory.switches.len(), switches);
    assert_eq!(inventory.functions.len(), switches * 6 - 1);
    // Discovery numbers the switches breadth first, both ways round the
    // ring; the mesh numbers them by ID.
    let index_of = |model: usize| {
        let id = ids[model];
        SwitchIndex(
            inventory
                .switches
                .iter()
                .position(|s| s.id == id)
                .expect("every switch discovered") as u8,
        )
    };
    let way = |from: usize, at: SwitchIndex, port: PortIndex| {
        let from = index_of(from);
        if from == at {
            Some(Destination::Port(port))
        } else {
            inventory.paths.next_hop(from, at).map(Destination::Port)
        }
    };
    for function in &inventory.functions {
        let at = function.switch;
        for from in 0..switches {
            let switch = mesh.switch(from);
            let routes = switch.routes();
            let want = way(from, at, function.port);
            assert!(want.is_some(), "a path from {from} to {at:?}");
            assert_eq!(
                routes.by_id(function.id),
                want,
                "{} from switch {from}",
                function.id
            );
            for bar in &function.bars {
                let base = bar.fabric_address().expect("memory BARs");
                for address in [base, base + bar.size() - 4] {
                    assert_eq!(
                        routes.by_address(address),
                        want,
                        "{address:#x} ({}) from switch {from}",
                        function.id
                    );
                }
            }
        }
    }
    for from in 0..switches {
        assert_eq!(
            mesh.switch(from).routes().by_address(1 << 63),
            way(from, index_of(0), PortIndex(HOST_PORT)),
            "the host's aperture from switch {from}"
        );
    }
}

#[test]
fn remote_tables_are_written_through_each_switchs_management_bar() {
    let (mesh, manager) = ring();
    // Discovery gives each switch it finds a 1 MiB management BAR (the CSR
    // window, weft_regs::csr::CSR_SIZE), from the top of the 32-bit pool
    // down, in discovery order: B, D, C.
    let bars = [
        (B, MODEL_B, 0xfff0_0000u64),
        (D, MODEL_D, 0xffe0_0000),
        (C, MODEL_C, 0xffd0_0000),
    ];
    let inv = manager.inventory();
    assert_eq!(inv.switches[usize::from(A.0)].management_bar, None);
    for (index, model, bar) in bars {
        assert_eq!(inv.switches[usize::from(index.0)].management_bar, Some(bar));
        // Its management function decodes it: the switch's own register.
        assert_eq!(
            mesh.net.switches.borrow()[model].management_bar(),
            Some(bar)
        );
    }
    // Each decodes it on the links discovery probed it by, the way the
    // manager's requests come in (each link is probed from the switch
    // walked first, nearer the manager), on no other port: B.1 (from A.1),
    // D.1 and D.3 (from A.2, A.3), C.1 and C.2 (from B.2, D.2).
    for (model, ports) in [(MODEL_B, 0b0010), (MODEL_D, 0b1010), (MODEL_C, 0b0110)] {
        let low = global::MANAGEMENT_BAR_LOW.address(0, 0);
        let enables =
            global::MANAGEMENT_ENABLE.decode(mesh.net.switches.borrow_mut()[model].read32(low));
        assert_eq!(enables, ports, "switch {model}");
    }
    // Every other switch routes a BAR towards its switch, as it routes the
    // buses behind it (GPU 1's bus 2 for B, GPU 0's bus 3 for C, and D by
    // the paths above); its own switch takes it at ingress, unrouted.
    let routes = [
        (0xfff0_0000u64, [to(1), None, to(1), to(1)]),
        (0xffe0_0000, [to(2), to(1), None, to(2)]),
        (0xffd0_0000, [to(2), to(2), to(2), None]),
    ];
    for (bar, per_switch) in routes {
        for (switch, want) in [MODEL_A, MODEL_B, MODEL_D, MODEL_C]
            .into_iter()
            .zip(per_switch)
        {
            assert_eq!(
                mesh.switch(switch).routes().by_address(bar),
                want,
                "{bar:#x} on switch {switch}"
            );
        }
    }
    // The remote switches' tables arrived as posted memory writes on the
    // fabric port discovery found each by: the manager sends no other
    // posted TLP while it starts the fabric.
    for (model, port) in [(MODEL_B, 1), (MODEL_D, 1), (MODEL_C, 1)] {
        let posted = mesh
            .switch(model)
            .counters(PortIndex(port))
            .expect("the port exists")
            .ingress
            .posted;
        assert!(posted > 0, "switch {model} port {port}: {posted}");
    }
}

/// Host 0, on host port `at` (switch, port), enumerates its virtual switch
/// (upstream port bus 1, downstream ports on bus 2, their secondary buses
/// 3 and 4), and assigns the BARs of what is bound behind slot `slot` at
/// `bar0` (32-bit) and `bar1` (64-bit).
#[allow(clippy::too_many_arguments)]
fn host_assigns(
    mesh: &mut Mesh,
    manager: &mut FabricManager,
    host: &mut FakeHost,
    at: (usize, u8),
    slot: u8,
    bar0: u32,
    bar1: u64,
) {
    let (t0, t1) = (ConfigType::Type0, ConfigType::Type1);
    let mut config =
        |t, target, offset, value| mesh.host_config(manager, host, at, t, target, offset, value);
    config(t0, Bdf::new(1, 0, 0), 0x18, Some(0x0004_0201));
    for s in 0..2u32 {
        let secondary = 3 + s;
        config(
            t1,
            Bdf::new(2, s as u8, 0),
            0x18,
            Some(secondary << 16 | secondary << 8 | 2),
        );
    }
    let function = Bdf::new(3 + slot, 0, 0);
    assert_eq!(
        config(t1, function, 0, None),
        0x2330_0000 | u32::from(GPU_VENDOR),
        "the bound GPU answers through the fabric"
    );
    config(t1, function, 0x10, Some(bar0));
    config(t1, function, 0x14, Some(bar1 as u32 | 0xc));
    config(t1, function, 0x18, Some((bar1 >> 32) as u32));
    config(t1, function, 0x04, Some(0b110));
}

fn memory_write(requester: Bdf, address: u64) -> Packet {
    Packet::new(
        memory(MemoryOp::Write, requester, 0, address, 1),
        vec![1, 2, 3, 4],
    )
}

#[test]
fn a_host_on_one_switch_uses_a_gpu_on_the_far_side_of_the_ring() {
    let (mut mesh, mut manager) = ring();
    let mut host = FakeHost::default();
    manager
        .bind(GPU0, HostIndex(0), 0, &mut mesh.planes, &mut host)
        .expect("bind the GPU on C");
    host_assigns(
        &mut mesh,
        &mut manager,
        &mut host,
        (MODEL_A, HOST_PORT),
        0,
        0x9000_0000,
        0x2_0000_0000,
    );

    // The host's write to its BAR reaches the GPU on C at its fabric address.
    let out = mesh
        .net
        .send(MODEL_A, HOST_PORT, memory_write(ROOT_PORT, 0x9000_0010));
    assert!(out.is_empty());
    let (switch, port, packet) = mesh.net.arrivals.pop().expect("delivered");
    assert_eq!((switch, port), (MODEL_C, 0));
    let m = as_memory(&packet);
    assert_eq!((m.address, m.requester), (0x8100_0010, PROXY));
    assert!(mesh.net.arrivals.is_empty());

    // The GPU's DMA comes back to the host, in the host's terms.
    mesh.net.send(MODEL_C, 0, memory_write(GPU0, 0x1000));
    let (switch, port, packet) = mesh.net.arrivals.pop().expect("delivered");
    assert_eq!((switch, port), (MODEL_A, HOST_PORT));
    let m = as_memory(&packet);
    assert_eq!((m.address, m.requester), (0x1000, Bdf::new(3, 0, 0)));
}

#[test]
fn peers_on_different_switches_talk_without_touching_the_host() {
    let (mut mesh, mut manager) = ring();
    let mut host = FakeHost::default();
    manager
        .bind(GPU0, HostIndex(0), 0, &mut mesh.planes, &mut host)
        .expect("bind the GPU on C");
    manager
        .bind(GPU1, HostIndex(0), 1, &mut mesh.planes, &mut host)
        .expect("bind the GPU on B");
    host_assigns(
        &mut mesh,
        &mut manager,
        &mut host,
        (MODEL_A, HOST_PORT),
        0,
        0x9000_0000,
        0x2_0000_0000,
    );
    host_assigns(
        &mut mesh,
        &mut manager,
        &mut host,
        (MODEL_A, HOST_PORT),
        1,
        0xa000_0000,
        0x3_0000_0000,
    );

    // GPU 1 (on B) writes GPU 0's BAR as the host assigned it: across B — C.
    mesh.net.send(MODEL_B, 0, memory_write(GPU1, 0x9000_0020));
    assert_eq!(mesh.net.arrivals.len(), 1, "{:#?}", mesh.net.arrivals);
    let (switch, port, packet) = mesh.net.arrivals.pop().expect("delivered");
    assert_eq!((switch, port), (MODEL_C, 0));
    assert_eq!(as_memory(&packet).address, 0x8100_0020);
    // And back, into GPU 1's prefetchable BAR, through C — B.
    mesh.net.send(MODEL_C, 0, memory_write(GPU0, 0x3_0000_0040));
    let (switch, port, packet) = mesh.net.arrivals.pop().expect("delivered");
    assert_eq!((switch, port), (MODEL_B, 0));
    assert_eq!(as_memory(&packet).address, 0x40_0000_0040);
    // Neither touched switch A, where the host is.
    let a = mesh.switch(MODEL_A);
    let host_egress = a.counters(PortIndex(HOST_PORT)).expect("port");
    assert_eq!(
        host_egress.egress.posted, 0,
        "no posted TLP went out to the host"
    );
    drop(a);
    // Nothing went to a switch's CPU but the manager's own completions.
    assert!(mesh.net.to_cpu.is_empty());
}

/// A line H (0x20) — M (0x10, the manager's) — E (0x30): M.1 — H.1,
/// M.2 — E.1; host 0 on H.0, a GPU on E.0. The host's port is on neither
/// the manager's switch nor the GPU's.
///
/// Discovery: M.0 is probed at bus 2 (nothing), M.1 finds H (index 1),
/// M.2 finds E (index 2); H.0 is the host's port (proxy bus 1, right after
/// the manager's), so only H.2.. are probed; E.0's GPU gets bus 2, BARs
/// 0x8000_0000 and 0x40_0000_0000.
#[test]
fn a_host_on_a_remote_switch_uses_a_gpu_on_a_third_switch() {
    const M: usize = 0;
    const H: usize = 1;
    const E: usize = 2;
    let mut mesh = Mesh::new(&[0x10, 0x20, 0x30], PORTS, Clock::default());
    mesh.link((M, 1), (H, 1));
    mesh.link((M, 2), (E, 1));
    mesh.attach_host((H, HOST_PORT));
    mesh.attach((E, 0), gpu());
    let mut settings = settings(0x10);
    settings.hosts[0].switch = 0x20;
    let mut manager = FabricManager::new(settings).expect("valid");
    start(&mut mesh, &mut manager);

    let inv = manager.inventory();
    assert_eq!(
        inv.port_on(SwitchIndex(1), PortIndex(HOST_PORT)),
        PortKind::Host {
            host: HostIndex(0),
            proxy_id: PROXY
        }
    );
    assert_eq!(inv.function(GPU1).map(|f| f.switch), Some(SwitchIndex(2)));
    // Every switch routes the host's proxy bus and aperture towards H.0.
    for (switch, port) in [(M, 1), (H, HOST_PORT), (E, 1)] {
        let model = mesh.switch(switch);
        assert_eq!(model.routes().buses[1], to(port), "switch {switch}");
        assert_eq!(
            model.routes().by_address(1 << 63),
            to(port),
            "switch {switch}"
        );
    }

    let mut host = FakeHost::default();
    manager
        .bind(GPU1, HostIndex(0), 0, &mut mesh.planes, &mut host)
        .expect("bind the GPU on E to the host on H");
    host_assigns(
        &mut mesh,
        &mut manager,
        &mut host,
        (H, HOST_PORT),
        0,
        0x9000_0000,
        0x2_0000_0000,
    );
    // The host's port role, windows and ID map are on H's host port; M's
    // ports have none.
    {
        let h = mesh.switch(H);
        let tables = h
            .port_tables(weft_model::PortIndex(HOST_PORT))
            .expect("port");
        assert!(matches!(
            tables.role,
            weft_model::PortRole::Host {
                proxy_id: PROXY,
                ..
            }
        ));
        let windows: Vec<_> = tables
            .windows
            .iter()
            .map(|w| (w.base, w.size, w.fabric_base))
            .collect();
        assert_eq!(
            windows,
            [
                (0x9000_0000, 16 << 20, 0x8000_0000),
                (0x2_0000_0000, 256 << 20, 0x40_0000_0000)
            ]
        );
        let ids: Vec<_> = tables.id_map.iter().map(|m| (m.fabric, m.host)).collect();
        assert_eq!(ids, [(GPU1, Bdf::new(3, 0, 0))]);
        let m = mesh.switch(M);
        for port in 0..PORTS as u8 {
            let tables = m.port_tables(weft_model::PortIndex(port)).expect("port");
            assert!(tables.windows.is_empty() && tables.id_map.is_empty());
        }
    }

    // The host's write to its BAR crosses M and reaches the GPU on E at
    // its fabric address, from the host's proxy ID.
    mesh.net
        .send(H, HOST_PORT, memory_write(ROOT_PORT, 0x9000_0010));
    let (switch, port, packet) = mesh.net.arrivals.pop().expect("delivered");
    assert_eq!((switch, port), (E, 0));
    let m = as_memory(&packet);
    assert_eq!((m.address, m.requester), (0x8000_0010, PROXY));
    // The GPU's DMA comes back to the host on H, in the host's terms.
    mesh.net.send(E, 0, memory_write(GPU1, 0x1000));
    let (switch, port, packet) = mesh.net.arrivals.pop().expect("delivered");
    assert_eq!((switch, port), (H, HOST_PORT));
    let m = as_memory(&packet);
    assert_eq!((m.address, m.requester), (0x1000, Bdf::new(3, 0, 0)));
    assert!(mesh.net.arrivals.is_empty());
}

/// The role of `port` of the manager's switch, A.
fn role(mesh: &Mesh, port: PortIndex) -> weft_regs::tables::PortRole {
    mesh.switch(MODEL_A)
        .port_tables(port)
        .expect("the port exists")
        .role
}

/// A fabric link of the manager's switch is taken out of service only while
/// no function of another switch is bound, and nothing of another switch is
/// bound while one is out of service.
#[test]
fn a_fabric_link_is_disabled_only_while_no_binding_crosses_the_fabric() {
    let (mut mesh, mut manager) = ring();
    let mut host = FakeHost::default();
    let link = PortIndex(1);
    assert!(matches!(
        manager.inventory().port_on(A, link),
        PortKind::Fabric { .. }
    ));
    manager
        .disable_port(link, &mut mesh.planes)
        .expect("nothing is bound");
    assert!(manager.is_port_disabled(link));
    assert_eq!(role(&mesh, link), weft_regs::tables::PortRole::Disabled);
    assert_eq!(
        manager.bind(GPU0, HostIndex(0), 0, &mut mesh.planes, &mut host),
        Err(BindError::PortDisabled(link))
    );
    assert_eq!(manager.binding_of(GPU0), None);

    manager
        .enable_port(link, &mut mesh.planes)
        .expect("enabled again");
    assert_eq!(role(&mesh, link), weft_regs::tables::PortRole::Fabric);
    manager
        .bind(GPU0, HostIndex(0), 0, &mut mesh.planes, &mut host)
        .expect("bind the GPU on C");
    assert_eq!(
        manager.disable_port(PortIndex(2), &mut mesh.planes),
        Err(PortControlError::Bound {
            function: GPU0,
            binding: Binding {
                host: HostIndex(0),
                slot: 0
            },
        })
    );
    assert_eq!(
        manager.disable_port(PortIndex(HOST_PORT), &mut mesh.planes),
        Err(PortControlError::HostPort {
            port: PortIndex(HOST_PORT),
            host: HostIndex(0),
        })
    );
}
