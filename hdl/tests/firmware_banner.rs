//! The real firmware ELF (`cargo xtask firmware`) prints the same banner
//! on the RTL core as on the ISS.
//!
//! Both models run on the reference memory map with the SoC peripherals of
//! `weft_regs::soc` and the data plane's CSR window attached (each its own
//! `weft_iss::soc` models and model switch, every link down), in
//! lock-step: every retirement is compared, the stores to the UART's
//! `TX_DATA` among them, until the firmware waits in `wfi`. Then both
//! models' registers and data RAM must be equal, and each model's UART must
//! hold the banner, once, and the boot progress after it up to `ready`.

use weft_hdl::core::Lockstep;
use weft_iss::data_plane::DataPlaneWindow;
use weft_iss::elf::{self, firmware_path};
use weft_iss::soc::Soc;
use weft_iss::{Hart, HarvardBus};

/// Core cycles to run at most: start-up, the banner, and on into `wfi`.
/// The whole start (the network stack's, the fabric manager's: its
/// initialised state copied into place, its virtual switches configured,
/// the console's text sent as it is printed) took about 356 000
/// retirements and 403 000 core cycles.
const CYCLES: u64 = 600_000;
#[test]
fn the_rtl_core_and_the_iss_print_the_same_banner() {
    let path = firmware_path();
    let Some(image) = elf::firmware_image() else {
        return;
    };
    let mut iss_bus = HarvardBus::reference();
    let iss_soc = Soc::attach(&mut iss_bus).expect("the SoC window is free");
    DataPlaneWindow::unlinked(4)
        .attach(&mut iss_bus)
        .expect("the CSR window is free");
    let mut iss = Hart::new(iss_bus);
    iss.load_elf(&image).expect("the firmware ELF loads");

    let mut rtl_bus = HarvardBus::reference();
    let rtl_soc = Soc::attach(&mut rtl_bus).expect("the SoC window is free");
    DataPlaneWindow::unlinked(4)
        .attach(&mut rtl_bus)
        .expect("the CSR window is free");
    elf::load(&mut rtl_bus, &image).expect("the firmware ELF loads");

    let mut l = Lockstep::new(rtl_bus, iss).expect("the core builds");
    let idle = l
        .run_to_wfi(CYCLES)
        .unwrap_or_else(|d| panic!("{}: {d}", path.display()));
    assert!(idle, "the firmware did not reach wfi in {CYCLES} cycles");

    for r in 1..32 {
        let iss = l.iss().reg(r as u8);
        assert_eq!(l.rtl().register(r), iss, "x{r} at wfi");
    }
    let rtl_ram = l.rtl().bus().data_ram().to_vec();
    assert!(
        rtl_ram == l.iss().bus().data_ram(),
        "data RAM differs at wfi"
    );

    let rtl = rtl_soc.uart.transmitted();
    let iss = iss_soc.uart.transmitted();
    assert_eq!(
        String::from_utf8_lossy(&rtl),
        String::from_utf8_lossy(&iss),
        "the RTL core's and the ISS's UART output"
    );
    // The firmware is built from this workspace, so its version is ours.
    let expected = format!("weft firmware {}\r\n", env!("CARGO_PKG_VERSION"));
    let printed = String::from_utf8_lossy(&rtl);
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
    eprintln!(
        "firmware: banner after {} agreeing retirements, {} core cycles",
        l.compared(),
        l.rtl().cycles()
    );
}
