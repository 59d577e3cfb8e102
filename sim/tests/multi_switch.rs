//! A fabric of two weft switches: the manager on switch 0 discovers switch
//! 1 through their fabric link, enumerates the GPU behind it with routed
//! configuration requests, and the host on switch 0 uses that GPU — its
//! BAR writes cross the link one way, the GPU's DMA the other.

use weft_devices::gpu::{Gpu, GpuConfig};
use weft_fabric::inventory::{PortKind, SwitchIndex};
use weft_fabric::manager::FabricManager;
use weft_fabric::settings::{FabricSettings, HostPort};
use weft_pcie::config::FunctionIdentity;
use weft_pcie::link::{Link, LinkSpeed, LinkWidth};
use weft_regs::tables::{HostIndex, PortIndex};
use weft_sim::host::{Host, HostConfig, Location};
use weft_sim::link::LinkConfig;
use weft_sim::wiring::Place;
use weft_sim::world::World;

const LOCAL_ID: u64 = 0xa0;
const REMOTE_ID: u64 = 0xb0;
const HOST_PORT: u8 = 0;
/// S0.3 — S1.5.
const LOCAL_FABRIC_PORT: u8 = 3;
const REMOTE_FABRIC_PORT: u8 = 5;
const GPU_AT: Place = Place::new(1, 1);

fn link() -> LinkConfig {
    LinkConfig {
        link: Link::new(LinkSpeed::Gen3, LinkWidth::X16),
        latency_ps: 100_000,
    }
}

fn identity(device_id: u16) -> FunctionIdentity {
    FunctionIdentity {
        vendor_id: 0x1d1d,
        device_id,
        revision_id: 0,
        class_code: 0x06_04_00,
    }
}

/// Two switches, a host on switch 0, a GPU on switch 1; the manager
/// started and the GPU bound to the host, which has booted.
fn two_switches() -> World {
    let mut settings = FabricSettings {
        switch_id: LOCAL_ID,
        upstream_identity: identity(0x0001),
        downstream_identity: identity(0x0002),
        ..FabricSettings::default()
    };
    settings
        .hosts
        .push(HostPort {
            switch: LOCAL_ID,
            port: PortIndex(HOST_PORT),
            host: HostIndex(0),
            slots: 2,
        })
        .expect("room for a host");
    let manager = FabricManager::new(settings).expect("valid settings");
    let mut world = World::new(8, manager);
    let remote = world.add_switch(REMOTE_ID, 8);
    world.connect(
        Place::new(0, LOCAL_FABRIC_PORT),
        Place::new(remote, REMOTE_FABRIC_PORT),
        link(),
    );
    world.attach_host(
        Place::new(0, HOST_PORT),
        Host::new(HostConfig::default()),
        link(),
    );
    let gpu = Gpu::new(GpuConfig::default()).expect("a GPU");
    world.attach_device_at(GPU_AT, Box::new(gpu), link());
    world.start_manager().expect("the fabric enumerates");
    world
}

#[test]
fn the_manager_discovers_the_remote_switch_and_its_gpu() {
    let world = two_switches();
    let inventory = world.manager().inventory();
    assert_eq!(
        inventory.switches.iter().map(|s| s.id).collect::<Vec<_>>(),
        [LOCAL_ID, REMOTE_ID]
    );
    // Each end of the link answered with its identity VSEC.
    assert_eq!(
        inventory.port_on(SwitchIndex(0), PortIndex(LOCAL_FABRIC_PORT)),
        PortKind::Fabric {
            switch_id: REMOTE_ID,
            port: PortIndex(REMOTE_FABRIC_PORT),
        }
    );
    let gpus: Vec<_> = inventory.functions.iter().collect();
    assert_eq!(gpus.len(), 1, "{gpus:#?}");
    assert_eq!(
        (gpus[0].switch, gpus[0].port),
        (SwitchIndex(1), PortIndex(GPU_AT.port))
    );
    assert_eq!(gpus[0].vendor_id, 0x10de);
    // The GPU's BARs were sized and placed through the link.
    assert!(gpus[0]
        .bars
        .iter()
        .all(|bar| bar.fabric_address().is_some()));
}

#[test]
fn a_host_writes_a_remote_gpus_bar_and_the_gpu_dmas_back() {
    let mut world = two_switches();
    let gpu = world.manager().inventory().functions[0].id;
    world
        .with_manager(|m, _, planes, host| m.bind(gpu, HostIndex(0), 0, planes, host))
        .expect("bind the GPU on switch 1");
    let bound = world
        .with_host(Place::new(0, HOST_PORT), |host, link| host.boot(link))
        .expect("the host boots");
    assert_eq!(bound.len(), 1, "the GPU driver binds");
    let counters = |world: &World, switch: usize, port: u8| {
        let counters = world.switches()[switch]
            .model()
            .counters(PortIndex(port))
            .expect("the port exists");
        (counters.ingress.bytes, counters.egress.bytes)
    };
    let before = counters(&world, 1, REMOTE_FABRIC_PORT);

    let len = 64 << 10;
    let data: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
    let copied_back = world.with_host(Place::new(0, HOST_PORT), |host, link| {
        let bdf = *host.drivers().keys().next().expect("a driver");
        let driver = *host.gpu(bdf).expect("the GPU driver");
        // The CPU writes the GPU's memory through BAR1: across S0 — S1.
        let mut cpu = host.cpu(link);
        driver.upload(&mut cpu, 0, &data).expect("BAR writes");
        // The GPU's copy engine writes it into host memory: back across.
        let buffer = host.allocate_dma(len as u64).expect("a DMA buffer");
        host.gpu_copy(
            link,
            bdf,
            Location::Local(0),
            Location::Bus(buffer),
            len as u64,
        )
        .expect("GPU to host");
        host.root().memory().read(buffer, len)
    });
    assert_eq!(copied_back, data);

    // Both ways went over the fabric link, payload and headers.
    let after = counters(&world, 1, REMOTE_FABRIC_PORT);
    assert!(after.0 - before.0 > len as u64, "{before:?} → {after:?}");
    assert!(after.1 - before.1 > len as u64, "{before:?} → {after:?}");
}
