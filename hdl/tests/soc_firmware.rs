//! The real firmware ELF (`cargo xtask firmware`) boots on the all-RTL SoC
//! (core, block RAMs, decoder and peripherals, all rust-hdl) and prints
//! the banner the ISS prints.
//!
//! The ISS runs the same ELF on `HarvardBus::reference()` with the
//! `weft_iss::soc` models attached, in lock-step: every retirement is
//! compared, the stores to the UART's `TX_DATA` among them, until the
//! firmware waits in `wfi`. Then both models' registers and data RAM must
//! be equal, and the bytes that left the RTL UART's transmit stream must
//! be the ISS UART's, byte for byte: the banner.

use weft_hdl::core::Lockstep;
use weft_hdl::soc::{firmware_path, MemoryImage, Soc, SocBench};
use weft_iss::{Hart, HarvardBus};

/// Core cycles to run at most: start-up, the banner, and on into `wfi`.
const CYCLES: u64 = 20_000;

#[test]
fn the_firmware_boots_on_the_rtl_soc_and_prints_the_iss_banner() {
    let path = firmware_path();
    let Ok(image) = std::fs::read(&path) else {
        eprintln!(
            "skipped: no firmware ELF at {} (build it with `cargo xtask firmware`, \
             or point WEFT_FIRMWARE at one)",
            path.display()
        );
        return;
    };
    let mut iss_bus = HarvardBus::reference();
    let iss_soc = weft_iss::soc::Soc::attach(&mut iss_bus).expect("the SoC window is free");
    let mut iss = Hart::new(iss_bus);
    iss.load_elf(&image).expect("the firmware ELF loads");

    let memory = MemoryImage::reference_from_elf(&image).expect("the firmware ELF loads");
    let soc = Soc::new(&memory).expect("the reference memories fit");
    let bench = SocBench::new(soc).expect("the SoC builds");
    let mut l = Lockstep::pair(bench, iss);
    let idle = l
        .run_to_wfi(CYCLES)
        .unwrap_or_else(|d| panic!("{}: {d}", path.display()));
    assert!(idle, "the firmware did not reach wfi in {CYCLES} cycles");
    // The UART's transmit FIFO drains a byte per cycle; let it empty.
    for _ in 0..32 {
        l.rtl().cycle().expect("the SoC runs");
    }

    for r in 1..32 {
        let iss = l.iss().reg(r as u8);
        assert_eq!(l.rtl().register(r), iss, "x{r} at wfi");
    }
    assert!(
        l.rtl().data_ram() == l.iss().bus().data_ram(),
        "data RAM differs at wfi"
    );
    let rtl = l.rtl().transmitted().to_vec();
    let iss = iss_soc.uart.transmitted();
    assert_eq!(
        String::from_utf8_lossy(&rtl),
        String::from_utf8_lossy(&iss),
        "the RTL SoC's and the ISS's UART output"
    );
    let expected = format!("weft firmware {}\r\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(String::from_utf8_lossy(&rtl), expected, "the banner, once");
    eprintln!(
        "soc firmware: banner after {} agreeing retirements, {} SoC cycles",
        l.compared(),
        l.rtl().cycles()
    );
}
