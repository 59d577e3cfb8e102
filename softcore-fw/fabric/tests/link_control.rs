//! Hot reset and retraining of a port's link: given a started fabric with
//! a host, a GPU bound to it and an NVMe drive with two VFs enabled, a hot
//! reset leaves every register the fabric owns as enumeration programmed
//! it, after the waits of PCIe Base 6.0 §6.6.1 and §9.3.3.3.1, with the
//! bindings and tables untouched; a retrain changes nothing a function
//! or a host sees; host and fabric ports, and a port with a conventional
//! switch below, are refused with nothing sent.

mod common;

use common::conventional::ConventionalSwitch;
use common::mesh::{Mesh, Partner, BOOT_AFTER_RESET_NS};
use common::reference::nvme;
use common::*;
use weft_fabric::link_control::LinkControlError;
use weft_fabric::manager::FabricManager;
use weft_fabric::pcie::config::header::{common as header, type0};
use weft_fabric::pcie::config::{sriov, Bar};
use weft_fabric::pcie::Bdf;
use weft_fabric::settings::{FabricSettings, HostPort};
use weft_regs::tables::{HostIndex, LinkRequest, PortIndex};

const PORTS: usize = 8;
const SWITCH: u64 = 0xa0;
const HOST_PORT: u8 = 0;
const GPU_PORT: u8 = 1;
const NVME_PORT: u8 = 2;
const FABRIC_PORT: u8 = 3;
/// §6.6.1: no configuration request within 100 ms of a Conventional Reset.
const RESET_TO_FIRST_REQUEST_NS: u64 = 100_000_000;

fn gpu() -> FakeDevice {
    FakeDevice::new(vec![plain_function(
        0,
        identity(0x10de, 0x2330, 0x03_02_00),
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

fn settings() -> FabricSettings {
    let mut s = FabricSettings {
        switch_id: SWITCH,
        num_vfs: 2,
        ..FabricSettings::default()
    };
    s.hosts
        .push(HostPort {
            switch: SWITCH,
            port: PortIndex(HOST_PORT),
            host: HostIndex(0),
            slots: 2,
        })
        .expect("room for a host");
    s
}

/// The started fabric, with the GPU bound to the host's slot 0; a second
/// switch on the fabric port.
fn started() -> (Mesh, FabricManager, Bdf) {
    let mut mesh = Mesh::new(&[SWITCH, 0xb0], PORTS, Clock::default());
    mesh.attach_host((0, HOST_PORT));
    mesh.attach_resettable((0, GPU_PORT), gpu);
    mesh.attach_resettable((0, NVME_PORT), nvme);
    mesh.link((0, FABRIC_PORT), (1, 5));
    let mut manager = FabricManager::new(settings()).expect("valid");
    let mut clock = mesh.net.clock.clone();
    manager
        .start(&mut mesh.net, &mut clock, &mut mesh.planes, 0)
        .expect("the fabric enumerates");
    let gpu = manager
        .inventory()
        .functions
        .iter()
        .find(|f| f.port == PortIndex(GPU_PORT))
        .expect("the GPU is found")
        .id;
    manager
        .bind(
            gpu,
            HostIndex(0),
            0,
            &mut mesh.planes,
            &mut FakeHost::default(),
        )
        .expect("the GPU binds");
    (mesh, manager, gpu)
}

/// The registers the fabric owns in every function below `port`, as the
/// device holds them: Command, the six BARs, and on the PF SR-IOV Control,
/// NumVFs and the VF BARs, then each VF's Command.
fn owned_registers(mesh: &Mesh, port: u8) -> Vec<u32> {
    let Some(Partner::Device(device)) = mesh.net.partners.get(&(0, port)) else {
        panic!("a device on port {port}");
    };
    let mut values = Vec::new();
    for function in &device.functions {
        let space = &function.space;
        values.push(space.read(header::COMMAND) & 0xffff);
        values.extend((0..6).map(|n| space.read(type0::BAR0 + 4 * n)));
        if let Some((cap, vfs)) = &function.sriov {
            values.push(space.read(cap.offset + sriov::CONTROL) & 0xffff);
            values.push(space.read(cap.offset + sriov::NUM_VFS) & 0xffff);
            values.extend((0..6).map(|n| space.read(cap.offset + sriov::VF_BAR0 + 4 * n)));
            values.extend(vfs.iter().map(|vf| vf.read(header::COMMAND) & 0xffff));
        }
    }
    values
}

fn hot_reset(
    mesh: &mut Mesh,
    manager: &mut FabricManager,
    port: u8,
) -> Result<(), LinkControlError> {
    let mut clock = mesh.net.clock.clone();
    let mut hosts = FakeHost::default();
    manager.hot_reset_port(
        PortIndex(port),
        &mut mesh.net,
        &mut clock,
        &mut mesh.planes,
        &mut hosts,
    )
}

#[test]
fn a_hot_reset_brings_back_what_enumeration_programmed_and_keeps_the_binding() {
    let (mut mesh, mut manager, gpu) = started();
    for port in [GPU_PORT, NVME_PORT] {
        let programmed = owned_registers(&mesh, port);
        let tables = mesh.switch(0).port_tables(PortIndex(port)).cloned();
        let reset_at = mesh.net.clock.0.get();
        mesh.net.link_events.clear();

        hot_reset(&mut mesh, &mut manager, port).expect("the port comes back");

        let events = &mesh.net.link_events;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(
            (events[0].at, events[0].request),
            ((0, port), LinkRequest::HotReset)
        );
        let first = events[0].first_config_ns.expect("the manager asked again");
        assert!(
            first >= reset_at + RESET_TO_FIRST_REQUEST_NS,
            "first request {first} ns, reset at {reset_at} ns"
        );
        // The device booted after the first request reached it: the
        // manager retried Request Retry Status until it answered.
        assert!(mesh.net.clock.0.get() >= first + BOOT_AFTER_RESET_NS);
        let Some(Partner::Device(device)) = mesh.net.partners.get(&(0, port)) else {
            panic!("the device is there");
        };
        assert!(device.bus.is_some(), "it captured its bus from a write");
        assert_eq!(owned_registers(&mesh, port), programmed, "port {port}");
        assert_eq!(mesh.switch(0).port_tables(PortIndex(port)).cloned(), tables);
    }
    assert_eq!(manager.bound_at(HostIndex(0), 0), Some(gpu));
}

#[test]
fn the_reset_device_really_returned_to_its_defaults() {
    // Without this, the test above could pass on a reset that did nothing.
    let (mesh, _, _) = started();
    let fresh = {
        let mut fresh = Mesh::new(&[SWITCH], PORTS, Clock::default());
        fresh.attach((0, GPU_PORT), gpu());
        owned_registers(&fresh, GPU_PORT)
    };
    assert_ne!(owned_registers(&mesh, GPU_PORT), fresh);
}

#[test]
fn a_retrain_changes_nothing_a_function_sees() {
    let (mut mesh, mut manager, gpu) = started();
    let programmed = owned_registers(&mesh, NVME_PORT);
    let before = mesh.net.clock.0.get();
    mesh.net.link_events.clear();
    manager
        .retrain_port(PortIndex(NVME_PORT), &mut mesh.planes)
        .expect("retrained");
    assert_eq!(
        mesh.switch(0).clone().take_link_requests(),
        [(PortIndex(NVME_PORT), LinkRequest::Retrain)]
    );
    assert_eq!(mesh.net.clock.0.get(), before, "nothing to wait for");
    assert_eq!(owned_registers(&mesh, NVME_PORT), programmed);
    assert_eq!(manager.bound_at(HostIndex(0), 0), Some(gpu));
}

#[test]
fn host_and_fabric_ports_are_refused_with_nothing_sent() {
    let (mut mesh, mut manager, _) = started();
    assert_eq!(
        hot_reset(&mut mesh, &mut manager, HOST_PORT),
        Err(LinkControlError::HostPort {
            port: PortIndex(HOST_PORT),
            host: HostIndex(0)
        })
    );
    assert_eq!(
        manager.retrain_port(PortIndex(HOST_PORT), &mut mesh.planes),
        Err(LinkControlError::HostPort {
            port: PortIndex(HOST_PORT),
            host: HostIndex(0)
        })
    );
    assert_eq!(
        hot_reset(&mut mesh, &mut manager, FABRIC_PORT),
        Err(LinkControlError::FabricPort(PortIndex(FABRIC_PORT)))
    );
    assert_eq!(
        hot_reset(&mut mesh, &mut manager, PORTS as u8),
        Err(LinkControlError::NoSuchPort(PortIndex(PORTS as u8)))
    );
    assert!(mesh.switch(0).clone().take_link_requests().is_empty());
}

/// The bus numbers and windows of a conventional switch below the port
/// would be lost too, and are not written back: refused before the link
/// is touched.
#[test]
fn a_port_with_a_conventional_switch_below_is_not_hot_reset() {
    let mut mesh = Mesh::new(&[SWITCH], PORTS, Clock::default());
    mesh.attach_host((0, HOST_PORT));
    let below = ConventionalSwitch::new(
        identity(0x10b5, 0x8724, 0x06_04_00),
        vec![(true, Some(gpu()))],
    );
    mesh.attach_conventional((0, GPU_PORT), below);
    let mut manager = FabricManager::new(settings()).expect("valid");
    let mut clock = mesh.net.clock.clone();
    manager
        .start(&mut mesh.net, &mut clock, &mut mesh.planes, 0)
        .expect("the fabric enumerates");
    let upstream = manager.inventory().bridges[0].id;
    assert_eq!(
        hot_reset(&mut mesh, &mut manager, GPU_PORT),
        Err(LinkControlError::BridgeBelow {
            port: PortIndex(GPU_PORT),
            bridge: upstream
        })
    );
    assert!(mesh.switch(0).clone().take_link_requests().is_empty());
}
