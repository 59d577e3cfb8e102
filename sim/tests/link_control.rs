//! A GPU's and an NVMe drive's links hot reset and retrained by
//! management request, answered as `weft-sim serve` answers it
//! (`weft_fabric::management::handle` with the world's clock): the device
//! takes a Conventional Reset (PCIe Base 6.0 §6.6.1), the manager programs
//! its BARs and Command again (and the drive's VFs, §9.3.3), the host it
//! stays bound to sees its slot's link go down and up and adds the device
//! again, and its driver works as before: BAR reads and writes, the GPU's
//! DMA, the VF's reads and writes. A retrain changes nothing the host sees.

use std::time::Duration;

use weft_devices::gpu::{Gpu, GpuConfig};
use weft_devices::nvme::{Nvme, NvmeConfig};
use weft_fabric::inventory::FunctionKind;
use weft_fabric::management::{handle, BoardInfo, Hardware, PortLink, PortLinks};
use weft_fabric::manager::FabricManager;
use weft_fabric::settings::{FabricSettings, HostPort};
use weft_pcie::config::header::{command, common, type0};
use weft_pcie::config::sriov;
use weft_pcie::config::FunctionIdentity;
use weft_pcie::link::{Link, LinkSpeed, LinkWidth};
use weft_pcie::Bdf;
use weft_proto::{
    AccessWidth, Error, LinkState, LinkStatus, PortAction, PortIndex as WirePort, Request, Response,
};
use weft_regs::tables::{HostIndex, PortIndex};
use weft_sim::host::{Host, HostConfig, HostEvent, Location};
use weft_sim::link::LinkConfig;
use weft_sim::scenario::engine::let_interrupts_arrive;
use weft_sim::wiring::Place;
use weft_sim::world::World;

const SWITCH_ID: u64 = 0xa0;
const HOST_PORT: u8 = 0;
const GPU_PORT: u8 = 2;
const NVME_PORT: u8 = 3;
/// §6.6.1: the manager waits 100 ms after the reset before asking the GPU.
const RESET_TO_FIRST_REQUEST: Duration = Duration::from_millis(100);

const BOARD: BoardInfo = BoardInfo {
    board: "test-board",
    version: (0, 1, 0),
    build: "",
    ports: 8,
    authenticated: false,
};

/// Every link up, as far as these requests care.
struct Up;

impl PortLinks for Up {
    fn link(&mut self, _switch_id: u64, _port: u8) -> PortLink {
        PortLink {
            status: LinkStatus {
                state: LinkState::Up,
                speed: None,
                width: 16,
            },
            max_speed: weft_proto::LinkSpeed::Gen3,
            max_width: 16,
        }
    }
}

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

/// One switch, a host on port 0, a GPU on port 2 and an NVMe drive with
/// two VFs on port 3; the GPU and VF 1 are bound to the host, which has
/// booted with both drivers bound.
fn booted() -> World {
    let mut settings = FabricSettings {
        switch_id: SWITCH_ID,
        upstream_identity: identity(0x0001),
        downstream_identity: identity(0x0002),
        num_vfs: 2,
        ..FabricSettings::default()
    };
    settings
        .hosts
        .push(HostPort {
            switch: SWITCH_ID,
            port: PortIndex(HOST_PORT),
            host: HostIndex(0),
            slots: 2,
        })
        .expect("room for a host");
    let manager = FabricManager::new(settings).expect("valid settings");
    let mut world = World::new(8, manager);
    world.attach_host(
        Place::new(0, HOST_PORT),
        Host::new(HostConfig::default()),
        link(),
    );
    let gpu = Gpu::new(GpuConfig::default()).expect("a GPU");
    world.attach_device(GPU_PORT, Box::new(gpu), link());
    let nvme = Nvme::new(NvmeConfig::default()).expect("an NVMe drive");
    world.attach_device(NVME_PORT, Box::new(nvme), link());
    world.start_manager().expect("the fabric enumerates");
    let [gpu, vf] = [gpu_id(&world), vf_id(&world)];
    for (slot, function) in [gpu, vf].into_iter().enumerate() {
        world
            .with_manager(|m, _, planes, host| {
                m.bind(function, HostIndex(0), slot as u8, planes, host)
            })
            .expect("binds");
    }
    let bound = world
        .with_host(Place::new(0, HOST_PORT), |host, link| host.boot(link))
        .expect("the host boots");
    assert_eq!(bound.len(), 2, "the GPU and NVMe drivers bind");
    world
}

fn gpu_id(world: &World) -> Bdf {
    let functions = &world.manager().inventory().functions;
    functions
        .iter()
        .find(|f| f.port == PortIndex(GPU_PORT))
        .expect("the GPU")
        .id
}

fn vf_id(world: &World) -> Bdf {
    world
        .manager()
        .inventory()
        .functions
        .iter()
        .find(|f| matches!(f.kind, FunctionKind::Virtual { vf: 1, .. }))
        .expect("VF 1")
        .id
}

/// Answers `request` as `weft-sim serve` does, and lets the host's
/// hot-plug driver see what it showed the host's slots.
fn ask(world: &mut World, request: Request) -> Response {
    let response = world.with_manager_and_timer(|manager, config, planes, hosts, timer| {
        let mut sim_board = weft_sim::serve::SimBoard::new();
        let mut board_on = sim_board.on(planes);
        let hardware = Hardware {
            config,
            fabric: planes,
            hosts,
            links: &mut Up,
            firmware: None,
            timer: Some(timer),
            board: &mut board_on,
        };
        handle(manager, &BOARD, &request, &[], hardware)
    });
    let_interrupts_arrive(world);
    world
        .with_host(Place::new(0, HOST_PORT), |host, link| {
            host.service_interrupts(link)
        })
        .expect("the host handles its slot's interrupt");
    response
}

/// What the fabric owns of the GPU's Command (Memory Space and Bus Master
/// Enable; the rest is the host's, §7.5.1.1.3) and its BARs, read by the
/// manager from the GPU itself.
fn gpu_registers(world: &mut World) -> Vec<u32> {
    let gpu = gpu_id(world);
    owned(world, gpu, (0..6).map(|n| type0::BAR0 + 4 * n).collect())
}

/// What the fabric owns of the NVMe PF's SR-IOV capability (Control,
/// NumVFs, the VF BARs, §9.3.3) and of VF 1's Command.
fn sriov_registers(world: &mut World) -> Vec<u32> {
    let inventory = world.manager().inventory();
    let pf = inventory
        .functions
        .iter()
        .find(|f| f.sriov.is_some())
        .expect("the PF");
    let (pf_id, cap) = (pf.id, pf.sriov.expect("SR-IOV").offset);
    let vf = vf_id(world);
    let mut offsets = vec![cap + sriov::CONTROL, cap + sriov::NUM_VFS];
    offsets.extend((0..6).map(|n| cap + sriov::VF_BAR0 + 4 * n));
    let mut values = owned(world, pf_id, offsets);
    values.extend(owned(world, vf, vec![]));
    values
}

/// Command's Memory Space and Bus Master Enable of `function`, then the
/// DWs at `offsets`.
fn owned(world: &mut World, function: Bdf, offsets: Vec<u16>) -> Vec<u32> {
    [common::COMMAND]
        .into_iter()
        .chain(offsets)
        .map(|offset| {
            let request = Request::ConfigRead {
                target: function.into(),
                offset,
                width: AccessWidth::Dword,
            };
            match ask(world, request) {
                Response::Config { value, .. } if offset == common::COMMAND => {
                    value & u32::from(command::MEMORY_SPACE | command::BUS_MASTER)
                }
                Response::Config { value, .. } => value,
                other => panic!("expected the GPU's register {offset:#x}, got {other:?}"),
            }
        })
        .collect()
}

/// The host writes `data` into the GPU's memory through BAR1, reads it
/// back through BAR1, and has the GPU's copy engine DMA it into host
/// memory; returns both copies as the host sees them.
fn round_trip(world: &mut World, data: &[u8]) -> (Vec<u8>, Vec<u8>) {
    world.with_host(Place::new(0, HOST_PORT), |host, link| {
        let bdf = *host.drivers().keys().next().expect("a driver");
        let driver = *host.gpu(bdf).expect("the GPU driver");
        let mut cpu = host.cpu(link);
        driver.upload(&mut cpu, 0, data).expect("BAR writes");
        let read = driver
            .download(&mut cpu, 0, data.len() as u64)
            .expect("BAR reads");
        let buffer = host.allocate_dma(data.len() as u64).expect("a DMA buffer");
        host.gpu_copy(
            link,
            bdf,
            Location::Local(0),
            Location::Bus(buffer),
            data.len() as u64,
        )
        .expect("GPU to host");
        (read, host.root().memory().read(buffer, data.len()))
    })
}

fn host_events(world: &mut World) -> Vec<HostEvent> {
    world.with_host(Place::new(0, HOST_PORT), |host, _| host.events().to_vec())
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed))
        .collect()
}

#[test]
fn a_hot_reset_gpu_comes_back_with_its_bars_and_its_host_still_drives_it() {
    let mut world = booted();
    let before = pattern(16 << 10, 1);
    assert_eq!(round_trip(&mut world, &before), (before.clone(), before));
    let programmed = gpu_registers(&mut world);
    let reset_at = world.now();
    let seen = host_events(&mut world).len();

    let request = Request::PortControl {
        port: WirePort(GPU_PORT),
        action: PortAction::HotReset,
    };
    assert_eq!(ask(&mut world, request), Response::Done);

    assert!(world.now() >= reset_at + RESET_TO_FIRST_REQUEST);
    assert_eq!(gpu_registers(&mut world), programmed);
    // The host saw its slot's link go down and up, and took the GPU away
    // and added it again, its driver bound afresh.
    let events = host_events(&mut world)[seen..].to_vec();
    let gone = events
        .iter()
        .position(|e| matches!(e, HostEvent::Removed { .. }))
        .unwrap_or_else(|| panic!("the GPU is taken away: {events:?}"));
    let back = events
        .iter()
        .position(|e| matches!(e, HostEvent::Bound { .. }))
        .unwrap_or_else(|| panic!("its driver binds again: {events:?}"));
    assert!(gone < back, "{events:?}");
    let after = pattern(16 << 10, 2);
    assert_eq!(round_trip(&mut world, &after), (after.clone(), after));
}

#[test]
fn a_hot_reset_drive_comes_back_with_its_vfs_and_its_host_still_reads_and_writes() {
    let mut world = booted();
    let vf = world.with_host(Place::new(0, HOST_PORT), |host, _| {
        *host
            .drivers()
            .keys()
            .find(|bdf| host.nvme(**bdf).is_some())
            .expect("the NVMe driver")
    });
    let data = pattern(4096, 4);
    world
        .with_host(Place::new(0, HOST_PORT), |host, link| {
            host.nvme_write(link, vf, 8, &data)
        })
        .expect("written before");
    let programmed = sriov_registers(&mut world);
    let request = Request::PortControl {
        port: WirePort(NVME_PORT),
        action: PortAction::HotReset,
    };
    assert_eq!(ask(&mut world, request), Response::Done);
    assert_eq!(sriov_registers(&mut world), programmed);
    let vf = world.with_host(Place::new(0, HOST_PORT), |host, _| {
        *host
            .drivers()
            .keys()
            .find(|bdf| host.nvme(**bdf).is_some())
            .expect("the NVMe driver is bound again")
    });
    let again = pattern(4096, 5);
    world
        .with_host(Place::new(0, HOST_PORT), |host, link| {
            host.nvme_write(link, vf, 16, &again)
        })
        .expect("written after");
    let read = world
        .with_host(Place::new(0, HOST_PORT), |host, link| {
            host.nvme_read(link, vf, 16, 4096)
        })
        .expect("read after");
    assert_eq!(read, again);
}

#[test]
fn a_retrained_gpu_link_changes_nothing_its_host_sees() {
    let mut world = booted();
    let programmed = gpu_registers(&mut world);
    let retrain = Request::PortControl {
        port: WirePort(GPU_PORT),
        action: PortAction::Retrain,
    };
    let seen = host_events(&mut world).len();
    assert_eq!(ask(&mut world, retrain), Response::Done);
    assert_eq!(gpu_registers(&mut world), programmed);
    assert_eq!(host_events(&mut world).len(), seen, "nothing for the host");
    let data = pattern(8 << 10, 3);
    assert_eq!(round_trip(&mut world, &data), (data.clone(), data));
}

#[test]
fn the_host_port_is_refused() {
    let mut world = booted();
    for action in [PortAction::HotReset, PortAction::Retrain] {
        let request = Request::PortControl {
            port: WirePort(HOST_PORT),
            action,
        };
        assert_eq!(
            ask(&mut world, request),
            Response::Error(Error::HostPort {
                port: WirePort(HOST_PORT),
                host: weft_proto::HostIndex(0)
            })
        );
    }
}
