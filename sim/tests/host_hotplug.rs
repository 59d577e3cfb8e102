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

/// A slot of the standard usage model (§6.7.1) and pciehp's answer to its
/// Attention Button (§6.7.1.5): the Power Indicator blinks for the 5 s
/// abort window; a second press within it cancels and the GPU stays; a
/// press left alone has the driver let the GPU go, the slot powered off
/// (Power Controller Control), the indicator off, and the link and
/// presence changes of the power-off ignored.
#[test]
fn the_attention_button_releases_a_device_unless_pressed_again_within_5_s() {
    use std::time::Duration;
    use weft_pcie::config::pcie_cap::{slot_control, Indicator};
    use weft_sim::host::hotplug::{ABORT_WINDOW, POWER_OFF_WAIT};

    let mut wire = Wire::with_attention_buttons(2);
    wire.plug(1, Model::gpu());
    let mut host = Host::new(HostConfig::default());
    host.boot(&mut wire).expect("boot");
    assert!(host.gpu(NEW_GPU).is_some());
    let port = Bdf::new(2, 1, 0);
    let space = wire.port_space(1);
    let pcie = PcieCap::find(space).expect("walk").expect("PCIe");
    // Armed with Attention Button Pressed Enable (§7.5.3.10).
    assert_ne!(
        pcie.slot_control(space) & slot_control::ATTENTION_BUTTON_PRESSED_ENABLE,
        0
    );
    let settled = |host: &mut Host, wire: &mut Wire| {
        host.service_interrupts(wire).expect("slot interrupt");
    };
    settled(&mut host, &mut wire);

    // Pressed, then pressed again 2 s later: cancelled.
    let start = weft_sim::host::Fabric::now(&wire);
    wire.press_attention_button_at(1, start);
    wire.press_attention_button_at(1, start + Duration::from_secs(2));
    settled(&mut host, &mut wire);
    assert!(host
        .events()
        .contains(&HostEvent::ReleaseCancelled { port }));
    assert!(host.gpu(NEW_GPU).is_some(), "the GPU stays");
    let space = wire.port_space(1);
    assert_eq!(Indicator::power(pcie.slot_control(space)), Indicator::On);
    assert_eq!(
        pcie.slot_control(space) & slot_control::POWER_CONTROLLER_OFF,
        0
    );

    // Pressed once: released after the window and powered off.
    let start = weft_sim::host::Fabric::now(&wire);
    wire.press_attention_button_at(1, start);
    settled(&mut host, &mut wire);
    let took = weft_sim::host::Fabric::now(&wire) - start;
    assert!(took >= ABORT_WINDOW + POWER_OFF_WAIT, "{took:?}");
    assert!(host.gpu(NEW_GPU).is_none());
    assert!(host.tree().get(NEW_GPU).is_none());
    let events = host.events();
    let unbound = events.iter().position(|e| {
        *e == HostEvent::Unbound {
            bdf: NEW_GPU,
            driver: "weft-gpu",
        }
    });
    let off = events
        .iter()
        .position(|e| *e == HostEvent::PoweredOff { port });
    assert!(unbound.is_some() && unbound < off, "{events:#?}");
    let space = wire.port_space(1);
    assert_ne!(
        pcie.slot_control(space) & slot_control::POWER_CONTROLLER_OFF,
        0
    );
    assert_eq!(Indicator::power(pcie.slot_control(space)), Indicator::Off);
    assert!(!pcie.link_state(space).dll_link_active);
    // The power-off's link change was ignored and cleared, not acted on.
    assert_eq!(pcie.slot_status(space) & slot_status::EVENTS, 0);
    assert!(host
        .service_interrupts(&mut wire)
        .expect("nothing")
        .is_empty());
}
