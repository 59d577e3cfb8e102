//! The firmware ELF on the RTL soft core (weft-hdl's SoC, cycle by cycle,
//! `weft_sim::rtl_board`) as the fabric manager of a tiny fabric — one
//! switch, one host, one GPU — does what the same ELF on the ISS does in
//! the same scenario: `[fabric] manager = "firmware-rtl"` against
//! `"firmware-iss"`, the same world otherwise.
//!
//! Always run: each core boots in the world to its first console line,
//! which must be the same banner, and the RTL core's cannot come earlier
//! in world time than the ISS's (it retires at most an instruction a
//! cycle, the ISS one a tick).
//!
//! Ignored, for their length on the RTL core (about a million cycles of a
//! few thousand a second): each core starts the fabric 100 ms after reset
//! and enumerates the GPU through switch 0's injector and mailbox (every
//! CSR transaction of the RTL SoC's master port answered by switch 0's
//! CSR window); the console up to its start line must be the same (the
//! instructions and cycles the start took aside: a core's polling loops
//! run as often as its timing says). Then the host reads its virtual
//! upstream port's configuration header through the fabric, gives it its
//! bus numbers and reads them back and its first downstream port's ID,
//! each request waking the firmware through the data plane's interrupt:
//! the completions must be the ISS run's, and what the firmware's
//! virtual switch has ([`FIRMWARE_BRIDGE_IDS`], the buses written). The last test boots the
//! host through either core and compares its device tree.
//!
//! Each test prints the RTL run's wall time (and the first its simulated
//! cycles per second); the figures are in `weft_sim::rtl_board`'s docs.

mod firmware_support;

use std::time::{Duration, Instant};

use firmware_support::{firmware_image, firmware_switch_with_host};
use weft_hdl::driver::on_big_stack;
use weft_pcie::Bdf;
use weft_sim::firmware_board::FirmwareCore;
use weft_sim::host::{Cpu, ROOT_PORT};
use weft_sim::iss_board::CPU_CLOCK_HZ;
use weft_sim::iss_manager::{run_to_fabric_start, FabricStart, FIRMWARE_BRIDGE_IDS};
use weft_sim::scenario::build;
use weft_sim::wiring::Place;
use weft_sim::world::World;

/// The GPU the tiny fabric has besides the host, on port 2.
const GPU: &str = r#"
[[endpoint]]
name = "gpu1"
kind = "gpu"

[[link]]
ends = ["gpu1", "s0.2"]
"#;

/// The host's port on switch 0.
const HOST_PORT: u8 = 0;

/// The configuration header registers the host reads from the virtual
/// upstream port (PCIe Base 6.0 §7.5.1.1, §7.5.1.3): vendor and device
/// ID, class code and revision, header type, bus numbers, capabilities
/// pointer.
const HEADER_OFFSETS: [u16; 5] = [0x00, 0x08, 0x0c, 0x18, 0x34];

/// The bus numbers register of a Type 1 header (§7.5.1.3.4).
const BUS_NUMBERS: u16 = 0x18;

/// Bus numbers `primary`, `secondary`, `subordinate` as the register holds them.
fn bus_numbers(primary: u8, secondary: u8, subordinate: u8) -> u32 {
    u32::from_le_bytes([primary, secondary, subordinate, 0])
}

/// The tiny world with the firmware on `core` as its manager, or `None`
/// when the firmware ELF is not built.
fn tiny_world(core: FirmwareCore) -> Option<World> {
    firmware_image()?;
    let scenario = firmware_switch_with_host(core, GPU);
    Some(build::world(&scenario).expect("the scenario builds"))
}

/// What a run showed, and how long it took on the wall clock.
struct Run {
    start: FabricStart,
    started_in: Duration,
    header: Vec<u32>,
    answered_in: Duration,
}

/// Boots the firmware on `core` in the tiny world to its fabric start,
/// then has the host read its upstream port's header.
fn run(core: FirmwareCore) -> Option<(World, Run)> {
    let mut world = tiny_world(core)?;
    let wall = Instant::now();
    let start = run_to_fabric_start(&mut world)
        .unwrap_or_else(|why| panic!("the firmware on {core}: {why}"));
    let started_in = wall.elapsed();
    let wall = Instant::now();
    // The root port (on bus 0, the host's own) forwards bus 1 and below;
    // the virtual upstream port on bus 1 is the firmware's, which is told
    // its buses by a configuration write and then forwards bus 2, its
    // downstream ports.
    let upstream = Bdf::new(1, 0, 0);
    let header = world.with_host(Place::new(0, HOST_PORT), |host, link| {
        let mut cpu = host.cpu(link);
        let write = |cpu: &mut Cpu<'_>, target: Bdf, value: u32| {
            cpu.config_write(target, BUS_NUMBERS, value, 0b0111)
                .unwrap_or_else(|e| panic!("{target:?} takes its bus numbers: {e:?}"));
        };
        let read = |cpu: &mut Cpu<'_>, target: Bdf, offset: u16| {
            cpu.config_read(target, offset).unwrap_or_else(|e| {
                panic!("the firmware on {core} answers {target:?} at {offset:#x}: {e:?}")
            })
        };
        write(&mut cpu, ROOT_PORT, bus_numbers(0, 1, 0xff));
        let mut header: Vec<u32> = HEADER_OFFSETS
            .iter()
            .map(|&offset| read(&mut cpu, upstream, offset))
            .collect();
        write(&mut cpu, upstream, bus_numbers(1, 2, 0xff));
        header.push(read(&mut cpu, upstream, BUS_NUMBERS));
        header.push(read(&mut cpu, Bdf::new(2, 0, 0), 0x00));
        header
    });
    let answered_in = wall.elapsed();
    Some((
        world,
        Run {
            start,
            started_in,
            header,
            answered_in,
        },
    ))
}

/// The console up to and including the start line, its instruction and
/// cycle counts cut (what follows depends on when the console was read).
fn console_without_counts(start: &FabricStart) -> String {
    let counts = format!(
        " in {} instructions, {} cycles",
        start.instructions, start.cycles
    );
    let line_end = start
        .console
        .find(&counts)
        .and_then(|at| start.console[at..].find('\n').map(|end| at + end + 1))
        .unwrap_or(start.console.len());
    start.console[..line_end].replace(&counts, " in _ instructions, _ cycles")
}

/// World time the firmware gets to print its banner: start-up copies
/// its initialised data and zeroes its bss first, about 50 000 cycles
/// (`weft-hdl`'s `soc_firmware` test), 0.4 ms at 125 MHz.
const BANNER_TIME: Duration = Duration::from_millis(2);

/// Runs `world` until the firmware's console holds a whole first line,
/// looking every 20 µs; the line and the world time then.
fn first_line(world: &mut World) -> (String, Duration) {
    let mut console = String::new();
    while world.now() < BANNER_TIME {
        world.run_until(world.now() + Duration::from_micros(20));
        let printed = world
            .take_firmware_console()
            .expect("the firmware manages the world");
        console.push_str(&String::from_utf8_lossy(&printed));
        if let Some(end) = console.find("\r\n") {
            return (console[..end].to_owned(), world.now());
        }
    }
    panic!("no line from the firmware in {BANNER_TIME:?}: {console:?}");
}

#[test]
fn the_firmware_on_the_rtl_core_prints_its_banner_into_the_world_as_on_the_iss() {
    on_big_stack(|| {
        let Some(mut iss) = tiny_world(FirmwareCore::Iss) else {
            return;
        };
        let Some(mut rtl) = tiny_world(FirmwareCore::Rtl) else {
            return;
        };
        assert_eq!(rtl.firmware_core(), Some(FirmwareCore::Rtl));
        let (iss_line, iss_at) = first_line(&mut iss);
        let wall = Instant::now();
        let (rtl_line, rtl_at) = first_line(&mut rtl);
        let took = wall.elapsed();
        eprintln!(
            "firmware banner on the RTL core at {rtl_at:?} of world time ({:.0} cycles), \
             {:.1} s wall ({:.0} cycles/s); on the ISS at {iss_at:?}",
            rtl_at.as_secs_f64() * CPU_CLOCK_HZ as f64,
            took.as_secs_f64(),
            rtl_at.as_secs_f64() * CPU_CLOCK_HZ as f64 / took.as_secs_f64(),
        );
        assert_eq!(rtl_line, iss_line, "the firmware's first line");
        assert_eq!(
            rtl_line,
            format!("weft firmware {}", env!("CARGO_PKG_VERSION")),
            "the banner"
        );
        // The ISS retires an instruction a tick; the pipelined core at most
        // one a cycle, fewer where it stalls: its banner cannot come first.
        assert!(
            rtl_at >= iss_at,
            "the RTL core printed at {rtl_at:?}, before the ISS at {iss_at:?}"
        );
    });
}

#[test]
#[ignore = "the firmware's start on the RTL core is about a million cycles: about 15 minutes in a debug build"]
fn the_firmware_on_the_rtl_core_starts_the_fabric_and_answers_the_host_as_on_the_iss() {
    on_big_stack(|| {
        let Some((_, iss)) = run(FirmwareCore::Iss) else {
            return;
        };
        let Some((_, rtl)) = run(FirmwareCore::Rtl) else {
            return;
        };
        eprintln!(
            "firmware on the RTL core: fabric start ({} functions) after {} cycles of enumeration \
             ({} instructions; the ISS: {} steps, {} instructions); wall time {:.1} s to the \
             start, {:.1} s for {} host requests through the fabric (the ISS: {:.2} s, {:.2} s)",
            rtl.start.functions,
            rtl.start.cycles,
            rtl.start.instructions,
            iss.start.cycles,
            iss.start.instructions,
            rtl.started_in.as_secs_f64(),
            rtl.answered_in.as_secs_f64(),
            rtl.header.len() + 1,
            iss.started_in.as_secs_f64(),
            iss.answered_in.as_secs_f64(),
        );
        assert_eq!(
            console_without_counts(&rtl.start),
            console_without_counts(&iss.start),
            "the console to the fabric start"
        );
        assert_eq!(rtl.start.functions, iss.start.functions);
        assert!(
            iss.start.functions >= 1,
            "the GPU enumerated: {}",
            iss.start.console
        );
        assert_eq!(rtl.header, iss.header, "the upstream port's header");
        let (vendor, upstream, _) = FIRMWARE_BRIDGE_IDS;
        assert_eq!(
            rtl.header[0],
            u32::from(upstream) << 16 | u32::from(vendor),
            "the firmware's virtual upstream port"
        );
    });
}

#[test]
#[ignore = "the firmware's start and the host's boot through the RTL core: about 10 minutes in release"]
fn a_host_enumerates_the_same_tree_through_the_rtl_core_as_through_the_iss() {
    on_big_stack(|| {
        let boot = |core| {
            let (mut world, _) = run(core)?;
            let wall = Instant::now();
            let tree = world
                .with_host(Place::new(0, HOST_PORT), |host, link| {
                    host.boot(link)
                        .map(|drivers| (drivers, host.tree().clone()))
                })
                .unwrap_or_else(|e| panic!("the host boots through the firmware on {core}: {e:?}"));
            eprintln!(
                "host boot through the firmware on {core}: {:.1} s wall",
                wall.elapsed().as_secs_f64()
            );
            Some(tree)
        };
        let Some(iss) = boot(FirmwareCore::Iss) else {
            return;
        };
        let Some(rtl) = boot(FirmwareCore::Rtl) else {
            return;
        };
        assert_eq!(rtl, iss, "the host's drivers and device tree");
    });
}
