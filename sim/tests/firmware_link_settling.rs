//! The firmware's start on a board that reports its ports' links (the
//! SoC's GPIO inputs, as `weft_chip` drives them): below a port faster than
//! 5.0 GT/s the first configuration request waits 100 ms after the link
//! trained, not after the reset (PCIe Base 6.0 §6.6.1), and links train at
//! their own pace after the reset.
//!
//! A world with the firmware as manager, its host on port 0, and two GPUs
//! that note when their first configuration request arrives: one whose
//! link the board shows up at 50 ms, before the 100 ms after reset at
//! which the start used to go, and one at 150 ms, after it. Each must be
//! asked no sooner than 100 ms after its link came up, and both must be
//! found: as many functions as the same world enumerates when its board
//! reports no links.

mod firmware_support;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use firmware_support::*;
use weft_devices::device::{Claim, ConfigError, Device};
use weft_devices::gpu::{Gpu, GpuConfig};
use weft_model::Packet;
use weft_pcie::Bdf;
use weft_regs::soc::gpio;
use weft_sim::firmware_board::FirmwareCore;
use weft_sim::iss_board::IssBoard;
use weft_sim::iss_manager::{run_to_fabric_start, FabricStart};
use weft_sim::scenario::validate::{ManagerPlan, DEFAULT_LINK};
use weft_sim::scenario::{build, Scenario};
use weft_sim::world::World;

/// The firmware's switch with its host on port 0 and nothing else: the
/// GPUs are attached by the test.
const HOST_ONLY: &str = r#"
[scenario]
name = "firmware-link-settling"
title = "the firmware's switch with a host, GPUs attached by the test"

[[switch]]
name = "s0"
id = 0x0257_4546_5401
ports = 4
roles = { "0" = "host" }

[[host]]
name = "host1"
slots = 4

[[link]]
ends = ["host1", "s0.0"]

[[step]]
do = "enumerate"
"#;

/// The ports of the two GPUs, and when the board shows each one's link up.
const EARLY_PORT: u8 = 1;
const EARLY_UP: Duration = Duration::from_millis(50);
const LATE_PORT: u8 = 2;
const LATE_UP: Duration = Duration::from_millis(150);

/// What §6.6.1 asks between a link's training and the first
/// configuration request below it.
const SETTLE: Duration = Duration::from_millis(100);

/// A GPU that notes the simulated time of the first configuration request
/// it is asked.
struct FirstRequestNoted {
    gpu: Gpu,
    first: Rc<Cell<Option<Duration>>>,
}

impl FirstRequestNoted {
    fn new() -> (Self, Rc<Cell<Option<Duration>>>) {
        let first = Rc::new(Cell::new(None));
        let device = FirstRequestNoted {
            gpu: Gpu::new(GpuConfig::default()).expect("a valid GPU"),
            first: Rc::clone(&first),
        };
        (device, first)
    }

    fn note(&self, now: Duration) {
        if self.first.get().is_none() {
            self.first.set(Some(now));
        }
    }
}

impl Device for FirstRequestNoted {
    fn config_read(&mut self, now: Duration, target: Bdf, offset: u16) -> Result<u32, ConfigError> {
        self.note(now);
        self.gpu.config_read(now, target, offset)
    }

    fn config_write(
        &mut self,
        now: Duration,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigError> {
        self.note(now);
        self.gpu
            .config_write(now, target, offset, value, byte_enables)
    }

    fn claim(&self, address: u64) -> Option<Claim> {
        self.gpu.claim(address)
    }

    fn memory_read(&mut self, now: Duration, address: u64, out: &mut [u8]) {
        self.gpu.memory_read(now, address, out);
    }

    fn memory_write(&mut self, now: Duration, address: u64, data: &[u8]) {
        self.gpu.memory_write(now, address, data);
    }

    fn receive_completion(&mut self, now: Duration, completion: &Packet) {
        self.gpu.receive_completion(now, completion);
    }

    fn poll(&mut self, now: Duration) -> Vec<Packet> {
        self.gpu.poll(now)
    }

    fn owns(&self, id: Bdf) -> bool {
        self.gpu.owns(id)
    }

    fn reset(&mut self, now: Duration) {
        self.gpu.reset(now);
    }

    fn completer_for_unclaimed(&self) -> Bdf {
        self.gpu.completer_for_unclaimed()
    }
}

/// The world with the firmware `image` as manager and the two GPUs
/// attached; when each is first asked.
fn world_with_gpus(image: &[u8]) -> (World, [Rc<Cell<Option<Duration>>>; 2]) {
    let mut scenario =
        Scenario::parse(HOST_ONLY, "firmware_link_settling.rs", ".".as_ref()).expect("parses");
    scenario.switches[0].id = FIRMWARE_SWITCH;
    scenario.manager = ManagerPlan::Firmware {
        path: firmware_path(),
        elf: image.to_vec(),
        core: FirmwareCore::Iss,
    };
    let mut world = build::world(&scenario).expect("the scenario builds");
    let (early, early_first) = FirstRequestNoted::new();
    let (late, late_first) = FirstRequestNoted::new();
    world.attach_device(EARLY_PORT, Box::new(early), DEFAULT_LINK);
    world.attach_device(LATE_PORT, Box::new(late), DEFAULT_LINK);
    board(&world)
        .console()
        .receive(format!("key {TEST_KEY_HEX}\r").as_bytes());
    (world, [early_first, late_first])
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
    let Some(image) = firmware_image() else {
        return;
    };
    // The same devices on a board that reports no links: what is there.
    let (mut unreported, _) = world_with_gpus(&image);
    let expected = started(&mut unreported).functions;
    assert!(expected >= 2, "both GPUs found: {expected} functions");

    let (mut world, [early, late]) = world_with_gpus(&image);
    show_links(&world, 1);
    world.run_until(EARLY_UP);
    show_links(&world, 1 | 1 << EARLY_PORT);
    world.run_until(LATE_UP);
    show_links(&world, 1 | 1 << EARLY_PORT | 1 << LATE_PORT);
    let start = started(&mut world);
    let early = early
        .get()
        .expect("the GPU whose link came up early was asked");
    let late = late
        .get()
        .expect("the GPU whose link came up late was asked");
    eprintln!(
        "first configuration requests: {early:?} (link up at {EARLY_UP:?}), \
         {late:?} (link up at {LATE_UP:?}); start over at {:?}",
        world.now()
    );
    assert!(early >= EARLY_UP + SETTLE, "{early:?}");
    assert!(late >= LATE_UP + SETTLE, "{late:?}");
    // The start waited for the links it saw come up, not to its 1 s limit.
    assert!(late < Duration::from_millis(400), "{late:?}");
    assert_eq!(start.functions, expected, "{}", start.console);
}

#[test]
fn a_port_whose_link_stays_down_holds_the_start_up_no_longer_than_the_reset_does() {
    let Some(image) = firmware_image() else {
        return;
    };
    // Only the host's link and the early GPU's, up from the first look:
    // the late GPU's port stays down and is not waited for.
    let (mut world, [early, late]) = world_with_gpus(&image);
    show_links(&world, 1 | 1 << EARLY_PORT);
    started(&mut world);
    let early = early.get().expect("the GPU on a link that is up was asked");
    eprintln!("links up from the reset: first configuration request at {early:?}");
    assert!(early >= SETTLE, "{early:?}");
    assert!(early < SETTLE + Duration::from_millis(30), "{early:?}");
    assert_eq!(
        late.get(),
        None,
        "nothing is asked below a port whose link is down"
    );
}
