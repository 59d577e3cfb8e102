//! The real firmware ELF (`cargo xtask firmware`) on the ISS with the SoC
//! peripherals of `weft_regs::soc` and the data plane's CSR window (a
//! model switch with every link down) prints its banner on the console UART,
//! once, then its boot progress up to `ready`, and then waits for
//! interrupts.

use weft_iss::data_plane::DataPlaneWindow;
use weft_iss::elf;
use weft_iss::soc::Soc;
use weft_iss::{Hart, HarvardBus, Step};

/// Steps to run at most: start-up, the banner, and on into `wfi`. With the
/// fabric manager (its initialised state copied into place, its virtual
/// switches built) that takes about 279 000 steps.
const STEPS: u64 = 400_000;
#[test]
fn the_firmware_prints_its_banner_and_waits() {
    let Some(image) = elf::firmware_image() else {
        return;
    };
    let mut bus = HarvardBus::reference();
    let soc = Soc::attach(&mut bus).expect("the SoC window is free in the reference map");
    DataPlaneWindow::unlinked(4)
        .attach(&mut bus)
        .expect("the CSR window is free in the reference map");
    let mut hart = Hart::new(bus);
    hart.load_elf(&image).expect("the firmware ELF loads");
    let mut steps = 0;
    while let Step::Retired(r) = soc.step(&mut hart) {
        assert!(
            r.trap.is_none(),
            "the firmware trapped at {:#010x}: {:?}",
            r.pc,
            r.trap
        );
        steps += 1;
        assert!(steps < STEPS, "no wfi within {STEPS} steps");
    }
    // The firmware is built from this workspace, so its version is ours.
    let expected = format!("weft firmware {}\r\n", env!("CARGO_PKG_VERSION"));
    let printed = String::from_utf8_lossy(&soc.uart.transmitted()).into_owned();
    assert!(
        printed.starts_with(&expected),
        "the banner first: {printed:?}"
    );
    assert_eq!(
        printed.matches("weft firmware").count(),
        1,
        "once: {printed:?}"
    );
    assert!(printed.ends_with("ready\r\n"), "boot finished: {printed:?}");
    eprintln!("firmware: banner after {steps} steps");
}
