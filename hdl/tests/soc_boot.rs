//! The boot loader on the all-RTL SoC and on the ISS: the core starts in
//! the boot ROM, the loader reads the boot record and the image in slot B
//! through the SPI flash controller from a serial NOR part on the SoC's
//! pins, checks the image's SHA-256, copies it into instruction RAM
//! (through the data port's write path) and data RAM, and jumps to it;
//! the image prints its banner on the UART, its name loaded from data RAM
//! and its slot from the loader's handoff. The loader reads the
//! free-running `mtime` (its flash timeouts), which counts clock cycles on
//! the RTL and steps on the ISS, so each model runs free, as
//! `soc_firmware` runs the firmware past its banner, and the lines they
//! print must be the same. The RTL run is 66 k cycles: 9 s with
//! `--release`, about 3 minutes in a debug build.

use weft_fabric::boot_image;
use weft_fabric::firmware_update::BootRecord;
use weft_fabric::memory_flash::MemoryFlash;
use weft_fabric::persist::save_record;
use weft_hdl::soc::{MemoryImage, Soc, SocBench};
use weft_iss::elf::boot_loader_image;
use weft_iss::programs::banner_image;
use weft_iss::soc::{NorFlash, Timing};
use weft_iss::{Hart, HarvardBus};
use weft_proto::ImageSlot;
use weft_regs::soc::spi_flash::SECTOR_SIZE;

/// The firmware's flash layout (weft-drivers' `spi_flash`): the boot
/// record and image slot B.
const BOOT_RECORD: usize = 0x0F_E000;
const SLOT_B: usize = 0x20_0000;

#[test]
fn the_boot_loader_copies_slot_b_and_starts_it_on_the_rtl_soc_as_on_the_iss() {
    let Some(boot) = boot_loader_image() else {
        return;
    };
    // Slot B is the good slot and holds the image; no trial, so the loader
    // reads the flash but never programs it.
    let image = banner_image(b'R');
    let part = NorFlash::reference();
    let mut contents = part.contents().to_vec();
    let mut record = MemoryFlash::new(vec![0xFF; 2 * SECTOR_SIZE as usize], SECTOR_SIZE);
    save_record(
        &mut record,
        &BootRecord {
            active: ImageSlot::B,
            trial: None,
        },
    )
    .expect("the record fits");
    contents[BOOT_RECORD..BOOT_RECORD + record.contents().len()].copy_from_slice(record.contents());
    contents[SLOT_B..SLOT_B + image.len()].copy_from_slice(&image);
    assert!(boot_image::check(&mut MemoryFlash::new(image.clone(), SECTOR_SIZE), u32::MAX).is_ok());
    let part = NorFlash::with_contents(part.geometry(), Timing::TYPICAL, &contents);

    let memory = MemoryImage::reference()
        .with_boot_loader(&boot)
        .expect("the boot loader loads into the boot ROM");
    let mut rtl =
        SocBench::new(Soc::new(&memory).expect("reference memories fit")).expect("the SoC builds");
    rtl.attach_flash(part.clone());
    let mut bus = HarvardBus::reference();
    let iss_soc =
        weft_iss::soc::Soc::attach_with_flash(&mut bus, part).expect("the SoC window is free");
    let mut hart = Hart::new(bus);
    hart.load_elf(&boot).expect("the boot loader loads");
    let banner = b"boot: slot B\r\nimage R in slot B\r\n";
    let mut steps = 0u64;
    while !hart.is_waiting() {
        iss_soc.step(&mut hart);
        steps += 1;
        assert!(steps < 2_000_000, "the image never started on the ISS");
    }
    assert_eq!(
        String::from_utf8_lossy(&iss_soc.uart.transmitted()),
        String::from_utf8_lossy(banner)
    );

    while rtl.transmitted().len() < banner.len() {
        rtl.cycle().expect("the SoC runs");
        assert!(
            rtl.cycles() < 2_000_000,
            "the image never started on the RTL SoC"
        );
    }
    assert_eq!(
        String::from_utf8_lossy(rtl.transmitted()),
        String::from_utf8_lossy(banner)
    );
    eprintln!(
        "boot loader to the image's banner: {} RTL SoC cycles, {steps} ISS steps",
        rtl.cycles()
    );
}
