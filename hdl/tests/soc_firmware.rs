//! The real firmware ELF (`cargo xtask firmware`) boots on the all-RTL SoC
//! (core, block RAMs, decoder and peripherals, all rust-hdl) and prints
//! the banner the ISS prints.
//!
//! The ISS runs the same ELF on `HarvardBus::reference()` with the
//! `weft_iss::soc` models attached, in lock-step: every retirement is
//! compared (each register write and store, those to the UART's `TX_DATA`
//! among them) until the ISS has printed the banner. Then the bytes that
//! left the RTL UART's transmit stream must be the ISS UART's, byte for
//! byte: the banner, once. The run stops there, before the firmware
//! reads the free-running `mtime`, which counts clock cycles on the RTL
//! and steps on the ISS.
//!
//! Past the banner the firmware reads its key record from the SPI flash,
//! the RTL SoC's through the flash controller to a serial NOR part on its
//! pins: each model runs free to the line the firmware prints about the
//! record, and the lines must be the same.

use weft_hdl::core::Lockstep;
use weft_hdl::soc::{MemoryImage, Soc, SocBench};
use weft_iss::elf::{self, firmware_path};
use weft_iss::{Hart, HarvardBus};

/// SoC cycles to run at most: start-up and the banner. Start-up copies the
/// initialised data (41 KiB, most of it the fabric manager's state) and
/// zeroes the bss (30 KiB) before `main` prints the banner: 77 000 cycles.
const CYCLES: u64 = 100_000;

#[test]
fn the_firmware_boots_on_the_rtl_soc_and_prints_the_iss_banner() {
    let path = firmware_path();
    let Some(image) = elf::firmware_image() else {
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
    let banner = format!("weft firmware {}\r\n", env!("CARGO_PKG_VERSION"));
    while !iss_soc.uart.transmitted().ends_with(banner.as_bytes()) {
        l.cycle()
            .unwrap_or_else(|d| panic!("{}: {d}", path.display()));
        assert!(
            l.rtl().cycles() < CYCLES,
            "no banner from the ISS in {CYCLES} cycles"
        );
    }
    let compared = l.compared();
    // The UART's transmit FIFO drains a byte per cycle; let it empty.
    for _ in 0..32 {
        l.rtl().cycle().expect("the SoC runs");
    }
    let rtl = l.rtl().transmitted().to_vec();
    assert_eq!(
        String::from_utf8_lossy(&rtl),
        String::from_utf8_lossy(&iss_soc.uart.transmitted()),
        "the RTL SoC's and the ISS's UART output"
    );
    assert_eq!(String::from_utf8_lossy(&rtl), banner, "the banner, once");
    eprintln!(
        "soc firmware: banner after {compared} agreeing retirements, {} SoC cycles",
        l.rtl().cycles()
    );
}

/// SoC cycles to run at most to the firmware's management line, past the
/// banner, the MAC's start and the read of its key record from the flash:
/// 122 000 cycles.
const KEY_CYCLES: u64 = 160_000;

/// The line `output` holds that starts with `prefix`, once complete.
fn line<'a>(output: &'a str, prefix: &str) -> Option<&'a str> {
    let start = output.find(prefix)?;
    let end = output[start..].find("\r\n")?;
    Some(&output[start..start + end])
}

#[test]
fn the_firmware_reads_its_key_record_from_the_flash_on_the_rtl_soc_as_on_the_iss() {
    // Past the banner the firmware reads mtime and polls the flash
    // controller's BUSY, which take different numbers of steps on the two
    // models, so each runs free and the line the firmware prints about
    // the key record it read is compared.
    let Some(image) = elf::firmware_image() else {
        return;
    };
    let prefix = "management: ";
    let mut iss_bus = HarvardBus::reference();
    let iss_soc = weft_iss::soc::Soc::attach(&mut iss_bus).expect("the SoC window is free");
    let mut iss = Hart::new(iss_bus);
    iss.load_elf(&image).expect("the firmware ELF loads");
    let mut steps = 0;
    let iss_line = loop {
        let output = String::from_utf8_lossy(&iss_soc.uart.transmitted()).into_owned();
        if let Some(found) = line(&output, prefix) {
            break found.to_owned();
        }
        iss_soc.step(&mut iss);
        steps += 1;
        assert!(steps < KEY_CYCLES, "no key record line from the ISS");
    };

    let memory = MemoryImage::reference_from_elf(&image).expect("the firmware ELF loads");
    let mut rtl = SocBench::new(Soc::new(&memory).expect("the reference memories fit"))
        .expect("the SoC builds");
    let rtl_line = loop {
        let output = String::from_utf8_lossy(rtl.transmitted()).into_owned();
        if let Some(found) = line(&output, prefix) {
            break found.to_owned();
        }
        rtl.cycle().expect("the SoC runs");
        assert!(
            rtl.cycles() < KEY_CYCLES,
            "no key record line from the RTL SoC in {KEY_CYCLES} cycles: {output:?}"
        );
    };
    assert_eq!(rtl_line, iss_line, "the firmware's word on its key record");
    assert!(
        rtl_line.contains("no key yet"),
        "an erased part holds no key record: {rtl_line:?}"
    );
    eprintln!(
        "soc firmware: key record line after {} SoC cycles",
        rtl.cycles()
    );
}
