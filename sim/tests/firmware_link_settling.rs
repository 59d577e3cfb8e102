//! The firmware's start on a board that reports its ports' links (the
//! SoC's GPIO inputs, as `weft_chip` drives them): below a port faster than
//! 5.0 GT/s the first configuration request waits 100 ms after the link
//! trained, not after the reset (PCIe Base 6.0 §6.6.1), and links train at
//! their own pace after the reset.
//!
//! A world with the firmware as manager, its host on port 0, and two
//! GPUs: one whose link the board shows up at 50 ms, before the 100 ms
//! after reset at which the start used to go, and one at 150 ms, after it.
//! The switch's counters must show nothing sent to either within 100 ms of
//! its link coming up, and both must be found: as many functions as the
//! same world enumerates when its board reports no links.

mod firmware_support;

use std::time::Duration;

use firmware_support::*;
use weft_devices::gpu::{Gpu, GpuConfig};
use weft_model::PortIndex;
use weft_regs::soc::gpio;
use weft_sim::firmware_board::FirmwareCore;
use weft_sim::iss_board::IssBoard;
use weft_sim::iss_manager::{run_to_fabric_start, FabricStart};
use weft_sim::scenario::build;
use weft_sim::scenario::validate::DEFAULT_LINK;
use weft_sim::world::World;

/// The ports of the two GPUs, and when the board shows each one's link up.
const EARLY_PORT: u8 = 1;
const EARLY_UP: Duration = Duration::from_millis(50);
const LATE_PORT: u8 = 2;
const LATE_UP: Duration = Duration::from_millis(150);

/// What §6.6.1 asks between a link's training and the first
/// configuration request below it.
const SETTLE: Duration = Duration::from_millis(100);

/// The world with the firmware on the ISS as manager, its host on port 0,
/// and a GPU on each of [`EARLY_PORT`] and [`LATE_PORT`], attached here so
/// that the scenario's enumeration step knows nothing of them.
fn world_with_gpus() -> World {
    let scenario = firmware_switch_with_host(FirmwareCore::Iss, "");
    let mut world = build::world(&scenario).expect("the scenario builds");
    for port in [EARLY_PORT, LATE_PORT] {
        let gpu = Gpu::new(GpuConfig::default()).expect("a valid GPU");
        world.attach_device(port, Box::new(gpu), DEFAULT_LINK);
    }
    board(&world)
        .console()
        .receive(format!("key {TEST_KEY_HEX}\r").as_bytes());
    world
}

/// TLPs the switch has sent out of `port`: before the start, only the
/// firmware's configuration requests to the device there.
fn sent_to(world: &World, port: u8) -> u64 {
    world
        .switch()
        .counters(PortIndex(port))
        .map_or(0, |c| c.egress.tlps())
}

/// The firmware's board in `world`.
fn board(world: &World) -> &IssBoard {
    world.firmware().expect("the firmware manages the world")
}

/// Shows the ports of `up` with their links up on the board's GPIO inputs.
fn show_links(world: &World, up: u32) {
    board(world)
        .gpio()
        .set_input(gpio::INPUT_LINKS_REPORTED.encode(1) | gpio::INPUT_LINK_UP.encode(up));
}

fn started(world: &mut World) -> FabricStart {
    run_to_fabric_start(world).unwrap_or_else(|why| panic!("{why}"))
}

#[test]
fn each_port_is_first_asked_100_ms_after_its_link_came_up() {
    if firmware_image().is_none() {
        return;
    }
    // The same devices on a board that reports no links: what is there.
    let mut unreported = world_with_gpus();
    let expected = started(&mut unreported).functions;
    assert!(expected >= 2, "both GPUs found: {expected} functions");

    let mut world = world_with_gpus();
    show_links(&world, 1);
    world.run_until(EARLY_UP);
    show_links(&world, 1 | 1 << EARLY_PORT);
    world.run_until(LATE_UP);
    show_links(&world, 1 | 1 << EARLY_PORT | 1 << LATE_PORT);
    // Nothing is asked below either port within 100 ms of its link coming up.
    assert_eq!(sent_to(&world, EARLY_PORT), 0);
    world.run_until(EARLY_UP + SETTLE);
    assert_eq!(
        sent_to(&world, EARLY_PORT),
        0,
        "asked within 100 ms of its link"
    );
    world.run_until(LATE_UP + SETTLE);
    assert_eq!(
        sent_to(&world, LATE_PORT),
        0,
        "asked within 100 ms of its link"
    );
    let start = started(&mut world);
    eprintln!(
        "links up at {EARLY_UP:?} and {LATE_UP:?}: the start was over at {:?}",
        world.now()
    );
    assert!(sent_to(&world, EARLY_PORT) > 0 && sent_to(&world, LATE_PORT) > 0);
    assert_eq!(start.functions, expected, "{}", start.console);
    // The start waited for the links it saw come up, not to its 1 s limit.
    assert!(
        world.now() < Duration::from_millis(400),
        "{:?}",
        world.now()
    );
}

#[test]
fn a_port_whose_link_stays_down_is_not_waited_for() {
    if firmware_image().is_none() {
        return;
    }
    // The host's link and the early GPU's up from the first look, the late
    // GPU's down throughout: the start goes 100 ms after that look.
    let mut world = world_with_gpus();
    show_links(&world, 1 | 1 << EARLY_PORT);
    world.run_until(SETTLE);
    assert_eq!(sent_to(&world, EARLY_PORT), 0);
    let start = started(&mut world);
    eprintln!(
        "links up from the reset: the start was over at {:?}",
        world.now()
    );
    // The boot says which links it found up, and that the start waits for them.
    let said =
        "enumeration 100 ms after reset and 100 ms after each link comes up; links up: 0 1\r\n";
    assert!(start.console.contains(said), "{}", start.console);
    assert!(sent_to(&world, EARLY_PORT) > 0);
    assert!(
        world.now() < SETTLE + Duration::from_millis(30),
        "{:?}",
        world.now()
    );
    assert_eq!(
        sent_to(&world, LATE_PORT),
        0,
        "nothing is asked below a port whose link is down"
    );
}

#[test]
fn links_changing_after_the_start_are_said_on_the_console() {
    if firmware_image().is_none() {
        return;
    }
    // Port 3 is empty at the start: a device whose link comes up there
    // later is not enumerated, and the console says so and what to do.
    let mut world = world_with_gpus();
    show_links(&world, 1 | 1 << EARLY_PORT | 1 << LATE_PORT);
    started(&mut world);
    let until = world.now() + Duration::from_millis(40);
    world.run_until(until);
    world.take_firmware_console();
    show_links(&world, 1 | 1 << LATE_PORT | 1 << 3);
    let until = world.now() + Duration::from_millis(40);
    world.run_until(until);
    let console =
        String::from_utf8(world.take_firmware_console().expect("the firmware's")).expect("text");
    assert_eq!(
        console,
        "link: port 1 down\r\n\
         link: port 3 up; nothing was there when the fabric started, so it is enumerated only \
         when the firmware restarts (`weftctl reset`, or a reset of the board)\r\n"
    );
    // Back up where the start found a GPU: a plain line.
    show_links(&world, 1 | 1 << EARLY_PORT | 1 << LATE_PORT | 1 << 3);
    let until = world.now() + Duration::from_millis(40);
    world.run_until(until);
    let console = world.take_firmware_console().expect("the firmware's");
    assert_eq!(String::from_utf8_lossy(&console), "link: port 1 up\r\n");
}
