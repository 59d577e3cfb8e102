//! Enumeration through a switch with hot-plug slots: bus numbers, BARs,
//! windows, MPS and MSI as Linux would assign them. Expected values are
//! worked out by hand from the documented policy (`weft_sim::host`):
//!
//! - Depth first: root port 00:01.0 → bus 1 (switch upstream port) → bus
//!   2 (downstream ports 02:00.0..02:03.0) → buses 3..6, one per slot.
//! - Each hot-plug port reserves 128 MiB non-prefetchable and 4 GiB
//!   prefetchable; four of them make 512 MiB from 0x8000_0000 and 16 GiB
//!   from 0x80_0000_0000, each port's share in device order.
//! - MPS: root port and switch ports support 512 bytes, the endpoints 256:
//!   every function on a path to an endpoint runs 256, the empty slot's
//!   port keeps 512.

mod host_support;

use host_support::{Model, Wire};
use weft_pcie::config::header::{command, common};
use weft_pcie::config::msi::MsiCap;
use weft_pcie::config::pcie_cap::PcieCap;
use weft_pcie::Bdf;
use weft_sim::host::tree::InterruptSetup;
use weft_sim::host::{Host, HostConfig, HostEvent};

fn booted() -> (Host, Wire) {
    let mut wire = Wire::new(4);
    wire.plug(0, Model::gpu());
    wire.plug(1, Model::gpu());
    wire.plug(2, Model::nvme());
    let mut host = Host::new(HostConfig::default());
    host.boot(&mut wire).expect("boot");
    (host, wire)
}

fn bus_numbers(host: &Host, bdf: Bdf) -> (u8, u8, u8) {
    let bridge = host
        .tree()
        .get(bdf)
        .and_then(|f| f.bridge.clone())
        .expect("bridge");
    (bridge.primary, bridge.secondary, bridge.subordinate)
}

#[test]
fn bus_numbers_are_assigned_depth_first() {
    let (host, wire) = booted();
    assert_eq!(bus_numbers(&host, Bdf::new(0, 1, 0)), (0, 1, 6));
    assert_eq!(bus_numbers(&host, Bdf::new(1, 0, 0)), (1, 2, 6));
    for port in 0..4u8 {
        let secondary = 3 + port;
        assert_eq!(
            bus_numbers(&host, Bdf::new(2, port, 0)),
            (2, secondary, secondary)
        );
        // What the port's registers hold (§7.5.1.3.2-4).
        let dw = wire.port_space(usize::from(port)).read(0x18);
        assert_eq!(
            dw & 0x00ff_ffff,
            2 | u32::from(secondary) << 8 | u32::from(secondary) << 16
        );
    }
    let found: Vec<Bdf> = host.tree().iter().map(|f| f.bdf).collect();
    assert_eq!(
        found,
        [
            Bdf::new(0, 0, 0),
            Bdf::new(0, 1, 0),
            Bdf::new(1, 0, 0),
            Bdf::new(2, 0, 0),
            Bdf::new(2, 1, 0),
            Bdf::new(2, 2, 0),
            Bdf::new(2, 3, 0),
            Bdf::new(3, 0, 0),
            Bdf::new(4, 0, 0),
            Bdf::new(5, 0, 0),
        ]
    );
}

#[test]
fn bars_and_windows_follow_the_memory_map() {
    let (host, wire) = booted();
    let window = |bdf: Bdf| {
        let bridge = host
            .tree()
            .get(bdf)
            .and_then(|f| f.bridge.clone())
            .expect("bridge");
        (
            bridge.memory.expect("memory window"),
            bridge.prefetchable.expect("prefetchable window"),
        )
    };
    assert_eq!(
        window(Bdf::new(0, 1, 0)),
        (0x8000_0000..=0x9fff_ffff, 0x80_0000_0000..=0x83_ffff_ffff)
    );
    assert_eq!(window(Bdf::new(1, 0, 0)), window(Bdf::new(0, 1, 0)));
    for port in 0..4u64 {
        let mem = 0x8000_0000 + port * (128 << 20);
        let pref = 0x80_0000_0000 + port * (4 << 30);
        assert_eq!(
            window(Bdf::new(2, port as u8, 0)),
            (mem..=mem + (128 << 20) - 1, pref..=pref + (4 << 30) - 1)
        );
    }
    // GPU BAR0 (16 MiB, 32-bit) and BAR1 (256 MiB, 64-bit prefetchable)
    // at the start of their port's windows, as the device holds them.
    for (slot, mem, pref) in [(0, 0x8000_0000u32, 0x80u32), (1, 0x8800_0000, 0x81)] {
        let space = wire.gpu(slot).config_space();
        assert_eq!(space.read(0x10), mem);
        assert_eq!(
            space.read(0x14),
            0x0000_000c,
            "64-bit prefetchable, low half 0"
        );
        assert_eq!(space.read(0x18), pref);
    }
    // NVMe: BAR0 first, then the 4 × 16 KiB VF BAR0 reservation.
    let nvme = host.tree().get(Bdf::new(5, 0, 0)).expect("NVMe PF");
    assert_eq!(nvme.bar(0).and_then(|b| b.address), Some(0x9000_0000));
    let sriov = nvme.sriov.as_ref().expect("SR-IOV");
    assert_eq!(sriov.total_vfs, 4);
    assert_eq!(sriov.vf_bars[0].address, Some(0x9000_4000));
}

#[test]
fn command_mps_and_msi_are_programmed() {
    let (host, wire) = booted();
    for slot in [0, 1] {
        let space = wire.gpu(slot).config_space();
        let cmd = space.read_u16(common::COMMAND);
        assert_eq!(cmd & command::MEMORY_SPACE, command::MEMORY_SPACE);
        assert_eq!(cmd & command::BUS_MASTER, command::BUS_MASTER);
        assert_eq!(cmd & command::IO_SPACE, 0);
        let pcie = PcieCap::find(space)
            .expect("walk")
            .expect("PCIe capability");
        assert_eq!(pcie.max_payload_size(space), 1, "256 bytes");
        let bdf = Bdf::new(3 + slot as u8, 0, 0);
        let InterruptSetup::Msi { vector } = host.tree().get(bdf).expect("GPU").interrupts else {
            panic!("GPU has MSI");
        };
        let msi = host
            .tree()
            .get(bdf)
            .and_then(|f| f.capabilities.msi)
            .expect("MSI");
        let message = MsiCap::at(msi).message(space, 0).expect("MSI enabled");
        assert_eq!(message.address, 0xfee0_0000);
        assert_eq!(message.data, u16::from(vector.0));
    }
    // The empty slot's port: nothing below it caps its 512 bytes.
    let space = wire.port_space(3);
    let pcie = PcieCap::find(space)
        .expect("walk")
        .expect("PCIe capability");
    assert_eq!(pcie.max_payload_size(space), 2);
    let space = wire.upstream_space();
    let pcie = PcieCap::find(space)
        .expect("walk")
        .expect("PCIe capability");
    assert_eq!(pcie.max_payload_size(space), 1);
    // NVMe uses MSI-X with two vectors.
    let nvme = host.tree().get(Bdf::new(5, 0, 0)).expect("NVMe");
    assert!(matches!(&nvme.interrupts, InterruptSetup::MsiX { vectors } if vectors.len() == 2));
}

#[test]
fn drivers_bind_and_lspci_prints_the_tree() {
    let (host, _) = booted();
    assert!(host.gpu(Bdf::new(3, 0, 0)).is_some());
    assert!(host.gpu(Bdf::new(4, 0, 0)).is_some());
    let nvme = host.nvme(Bdf::new(5, 0, 0)).expect("NVMe bound");
    assert_eq!(nvme.identity.serial, "WEFTSIM0000");
    assert_eq!(nvme.identity.blocks, 2048);
    assert!(host
        .events()
        .iter()
        .all(|e| !matches!(e, HostEvent::ProbeFailed { .. })));
    let tree = host.tree().lspci_tree();
    println!("{tree}\n{}", host.tree().lspci_list());
    assert!(tree.contains("\\-00:01.0-[01-06]-  8086:2030 PCI bridge"));
    assert!(tree.contains("03:00.0  10de:17fd 3D controller"));
    let list = host.tree().lspci_list();
    assert!(list.contains("Region 1: Memory at 8100000000 (64-bit, prefetchable) [size=256M]"));
}
