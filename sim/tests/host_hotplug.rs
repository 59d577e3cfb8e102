//! Hot-plug: a GPU appears in an empty slot (Presence Detect Changed and
//! DLL State Changed, the port's MSI), the host scans the slot inside the
//! resources it reserved, binds the driver and uses the GPU; then the GPU
//! is surprise-removed and the host drops it and its driver.

mod host_support;

use host_support::{Model, Wire};
use weft_pcie::config::pcie_cap::{slot_status, PcieCap};
use weft_pcie::Bdf;
use weft_sim::host::{Host, HostConfig, HostEvent, Location};

const NEW_GPU: Bdf = Bdf::new(4, 0, 0);

#[test]
fn hot_add_then_hot_remove() {
    let mut wire = Wire::new(2);
    wire.plug(0, Model::gpu());
    let mut host = Host::new(HostConfig::default());
    host.boot(&mut wire).expect("boot");
    assert!(host.tree().get(NEW_GPU).is_none());
    // pciehp armed the slot: HPIE, PDCE, DLLSCE (§7.5.3.10).
    let space = wire.port_space(1);
    let pcie = PcieCap::find(space).expect("walk").expect("PCIe");
    assert_eq!(pcie.slot_control(space) & 0x1028, 0x1028);

    wire.plug(1, Model::gpu());
    let events = host.service_interrupts(&mut wire).expect("slot interrupt");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].port, Bdf::new(2, 1, 0));
    assert!(events[0].present);
    assert_eq!(events[0].added, [NEW_GPU]);
    // The events were cleared (RW1C), so the port can interrupt again.
    let space = wire.port_space(1);
    assert_eq!(pcie.slot_status(space) & slot_status::EVENTS, 0);
    // Placed in the second port's reserved windows.
    let gpu = *host.gpu(NEW_GPU).expect("driver bound");
    assert_eq!(gpu.registers, 0x8800_0000);
    assert_eq!(gpu.memory, 0x81_0000_0000);
    assert!(host.events().contains(&HostEvent::Bound {
        bdf: NEW_GPU,
        driver: "weft-gpu"
    }));
    let buffer = host.allocate_dma(4096).expect("DMA buffer");
    host.root_mut().memory_mut().write(buffer, &[0xab; 4096]);
    host.gpu_copy(
        &mut wire,
        NEW_GPU,
        Location::Bus(buffer),
        Location::Local(0),
        4096,
    )
    .expect("the hot-added GPU works");
    assert_eq!(wire.gpu(1).memory().read(0, 4096), vec![0xab; 4096]);

    wire.unplug(1);
    let events = host.service_interrupts(&mut wire).expect("slot interrupt");
    assert_eq!(events.len(), 1);
    assert!(!events[0].present);
    assert_eq!(events[0].removed.len(), 1);
    assert!(host.tree().get(NEW_GPU).is_none());
    assert!(host.gpu(NEW_GPU).is_none());
    assert!(host.events().contains(&HostEvent::Unbound {
        bdf: NEW_GPU,
        driver: "weft-gpu"
    }));

    // And once more: the same resources are used again.
    wire.plug(1, Model::gpu());
    host.service_interrupts(&mut wire).expect("slot interrupt");
    assert_eq!(host.gpu(NEW_GPU).map(|g| g.memory), Some(0x81_0000_0000));
}
