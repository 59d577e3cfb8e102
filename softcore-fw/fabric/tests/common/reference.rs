//! The reference fabric of REFERENCE.md as the tests and the benchmark
//! build it: four weft switches cabled in a ring, two hosts, GPUs, an NVMe
//! drive with SR-IOV and an ordinary PCIe switch below one port.
//!
//! | switch | ID   | port 0  | port 1  | port 2             | port 3  |
//! |--------|------|---------|---------|--------------------|---------|
//! | S0     | 0x10 | ↔ S1.0  | ↔ S3.1  | host 0             | host 1  |
//! | S1     | 0x11 | ↔ S0.0  | ↔ S2.0  | GPU A              | GPU B   |
//! | S2     | 0x12 | ↔ S1.1  | ↔ S3.0  | NVMe PF + 4 VFs    | GPU C   |
//! | S3     | 0x13 | ↔ S2.1  | ↔ S0.1  | PCIe switch: D, F  | —       |

use weft_fabric::manager::{FabricManager, StartError};
use weft_fabric::pcie::config::Bar;
use weft_fabric::settings::{FabricSettings, HostPort};
use weft_regs::tables::{HostIndex, PortIndex};

use super::conventional::ConventionalSwitch;
use super::mesh::Mesh;
use super::{identity, nvme_sriov, plain_function, sriov_pf, Clock, FakeDevice};

pub const PORTS: usize = 4;
pub const IDS: [u64; 4] = [0x10, 0x11, 0x12, 0x13];
pub const S0: usize = 0;
pub const S1: usize = 1;
pub const S2: usize = 2;
pub const S3: usize = 3;

pub const GPU_VENDOR: u16 = 0x10de;
pub const NVME_VENDOR: u16 = 0x144d;
pub const NIC_VENDOR: u16 = 0x8086;
pub const BRIDGE_VENDOR: u16 = 0x10b5;

/// Below GPU D, answering Request Retry Status until 300 ms after reset.
pub const GPU_D_READY_NS: u64 = 300_000_000;

/// A GPU: BAR0 32-bit 16 MiB, BAR1-2 64-bit prefetchable 256 MiB.
pub fn gpu(device_id: u16) -> FakeDevice {
    FakeDevice::new(vec![plain_function(
        0,
        identity(GPU_VENDOR, device_id, 0x03_02_00),
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

/// A NIC: BAR0 32-bit 64 KiB, BAR2-3 64-bit prefetchable 512 KiB.
pub fn nic() -> FakeDevice {
    FakeDevice::new(vec![plain_function(
        0,
        identity(NIC_VENDOR, 0x1533, 0x02_00_00),
        [
            Some(Bar::memory32(64 << 10)),
            None,
            Some(Bar::memory64(512 << 10, true)),
            None,
            None,
            None,
        ],
        false,
    )])
}

/// The NVMe drive: PF BAR0-1 64-bit 16 KiB, four VFs each with a 64-bit 16 KiB VF BAR0.
pub fn nvme() -> FakeDevice {
    FakeDevice::new(vec![sriov_pf(
        identity(NVME_VENDOR, 0xa824, 0x01_08_02),
        [
            Some(Bar::memory64(16 << 10, false)),
            None,
            None,
            None,
            None,
            None,
        ],
        nvme_sriov(4),
    )])
}

/// The PCIe switch: GPU D (not ready until [`GPU_D_READY_NS`]) below
/// downstream port 0, which has ACS; the NIC below downstream port 1,
/// with ACS if `acs_on_dsp1`.
pub fn pcie_switch(acs_on_dsp1: bool) -> ConventionalSwitch {
    let mut d = gpu(0x1db4);
    d.ready_at_ns = GPU_D_READY_NS;
    ConventionalSwitch::new(
        identity(BRIDGE_VENDOR, 0x8724, 0x06_04_00),
        vec![(true, Some(d)), (acs_on_dsp1, Some(nic()))],
    )
}

/// The manager on S0, hosts 0 and 1 on S0.2 and S0.3, four VFs per PF.
pub fn settings() -> FabricSettings {
    let mut s = FabricSettings {
        switch_id: IDS[S0],
        num_vfs: 4,
        ..FabricSettings::default()
    };
    s.upstream_identity = identity(0x1d1d, 0x0001, 0x06_04_00);
    s.downstream_identity = identity(0x1d1d, 0x0002, 0x06_04_00);
    for (port, host) in [(2, 0), (3, 1)] {
        s.hosts
            .push(HostPort {
                switch: IDS[S0],
                port: PortIndex(port),
                host: HostIndex(host),
                slots: 2,
            })
            .expect("room");
    }
    s
}

/// The cabled fabric and its manager, not started yet.
pub fn reference(pcie: ConventionalSwitch) -> (Mesh, FabricManager) {
    let mut mesh = Mesh::new(&IDS, PORTS, Clock::default());
    mesh.link((S0, 0), (S1, 0));
    mesh.link((S1, 1), (S2, 0));
    mesh.link((S2, 1), (S3, 0));
    mesh.link((S3, 1), (S0, 1));
    mesh.attach_host((S0, 2));
    mesh.attach_host((S0, 3));
    mesh.attach((S1, 2), gpu(0x17fd));
    mesh.attach((S1, 3), gpu(0x17fd));
    mesh.attach((S2, 2), nvme());
    mesh.attach((S2, 3), gpu(0x17fd));
    mesh.attach_conventional((S3, 2), pcie);
    let manager = FabricManager::new(settings()).expect("valid settings");
    (mesh, manager)
}

/// Starts the manager on `mesh`: discovery, enumeration, routes.
pub fn start(mesh: &mut Mesh, manager: &mut FabricManager) -> Result<(), StartError> {
    let mut clock = mesh.net.clock.clone();
    manager.start(&mut mesh.net, &mut clock, &mut mesh.planes, 0)
}
