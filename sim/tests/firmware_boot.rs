//! The boot loader on the ISS board: after every reset the core starts in
//! the boot ROM, and the loader runs the image the boot record picks
//! (weft-fabric's `firmware_update::select_boot`) from the configuration
//! flash, checked against its SHA-256 (weft-fabric's `boot_image`), or
//! the image the bitstream carries when no slot holds a valid one.
//!
//! The flash is laid out here from the firmware's layout (weft-drivers'
//! `spi_flash`) with weft-fabric's record and image encoders; the images
//! are small programs that print which image they are and which slot the
//! loader's handoff names, and then wait for ever, as a trial that hangs
//! does: the watchdog the loader arms for a trial resets the board.

mod firmware_support;

use firmware_support::*;

use sha2::{Digest as _, Sha256};
use weft_fabric::firmware_update::{BootRecord, ImageId, Trial, TRIAL_CHECK_IN_MS};
use weft_fabric::memory_flash::MemoryFlash;
use weft_fabric::persist::{load_record, save_record};
use weft_iss::soc::{NorFlash, Timing};
use weft_proto::{
    BootReason, Digest, EventKind, EventPage, EventSeq, ImageSlot, Request, Response,
};
use weft_regs::soc::spi_flash::SECTOR_SIZE;
use weft_sim::iss_board::CPU_CLOCK_HZ;

const BOOT_RECORD: usize = 0x0F_E000;
const SLOT_A: usize = 0x10_0000;
const SLOT_B: usize = 0x20_0000;

/// The first page of the event log of `board`'s firmware, read over UDP
/// by a client that typed the test key on its console.
fn events(board: &mut weft_sim::iss_board::IssBoard) -> EventPage {
    board
        .console()
        .receive(format!("key {TEST_KEY_HEX}\r").as_bytes());
    settle(board);
    // The host's ARP request teaches the firmware where to answer.
    assert_eq!(exchange(board, &arp_request(FIRMWARE_IP)).len(), 1);
    let key = test_key();
    let read = Request::ReadEvents { from: EventSeq(0) };
    let Response::Events(page) = ask_firmware(board, 40_002, 1, &read, &key) else {
        panic!("expected an event page");
    };
    page
}

fn image_id(image: &[u8]) -> ImageId {
    ImageId {
        size: image.len() as u32,
        digest: Digest(Sha256::digest(image).into()),
    }
}

/// An erased 4 MiB part holding `record` and the slots' images.
fn flash_with(record: &BootRecord, a: &[u8], b: &[u8]) -> NorFlash {
    let part = NorFlash::reference();
    let mut contents = part.contents().to_vec();
    let mut region = MemoryFlash::new(vec![0xFF; 2 * SECTOR_SIZE as usize], SECTOR_SIZE);
    save_record(&mut region, record).expect("the record fits its region");
    contents[BOOT_RECORD..BOOT_RECORD + region.contents().len()].copy_from_slice(region.contents());
    contents[SLOT_A..SLOT_A + a.len()].copy_from_slice(a);
    contents[SLOT_B..SLOT_B + b.len()].copy_from_slice(b);
    NorFlash::with_contents(part.geometry(), Timing::TYPICAL, &contents)
}

/// The boot record `part` holds.
fn record_in(part: &NorFlash) -> BootRecord {
    let contents = part.contents();
    let mut region = MemoryFlash::new(
        contents[BOOT_RECORD..BOOT_RECORD + 2 * SECTOR_SIZE as usize].to_vec(),
        SECTOR_SIZE,
    );
    load_record::<BootRecord, _>(&mut region)
        .expect("the record reads")
        .expect("a record")
}

/// The part as a board powered up again finds it.
fn power_cycled(part: &NorFlash) -> NorFlash {
    NorFlash::with_contents(part.geometry(), Timing::TYPICAL, part.contents())
}

fn committed_trial_of(image: &[u8]) -> BootRecord {
    BootRecord {
        active: ImageSlot::A,
        trial: Some(Trial {
            slot: ImageSlot::B,
            started: false,
            image: image_id(image),
        }),
    }
}

#[test]
fn a_committed_image_runs_once_on_trial_and_a_trial_that_never_checks_in_boots_back() {
    let (Some(boot), Some(firmware)) = (boot_loader_image(), firmware_image()) else {
        return;
    };
    let a = test_image(b'A');
    let b = test_image(b'B');
    let flash = flash_with(&committed_trial_of(&b), &a, &b);

    let (board, printed) = booted_by_loader(&boot, &firmware, flash, &[]);
    assert_eq!(printed, "boot: slot B\r\nimage B in slot B\r\n");
    let part = board.flash().part();
    assert_eq!(
        record_in(&part),
        BootRecord {
            active: ImageSlot::A,
            trial: Some(Trial {
                slot: ImageSlot::B,
                started: true,
                image: image_id(&b),
            }),
        },
        "the loader recorded that the trial started"
    );

    // The test image never checks in: the next start runs slot A again
    // and drops the trial.
    let (board, printed) = booted_by_loader(&boot, &firmware, power_cycled(&part), &[]);
    assert_eq!(printed, "boot: slot A\r\nimage A in slot A\r\n");
    assert_eq!(
        record_in(&board.flash().part()),
        BootRecord {
            active: ImageSlot::A,
            trial: None
        }
    );
}

#[test]
fn a_corrupt_trial_falls_back_to_the_good_slot_and_no_valid_slot_to_the_bitstream_image() {
    let (Some(boot), Some(firmware)) = (boot_loader_image(), firmware_image()) else {
        return;
    };
    let a = test_image(b'A');
    let b = test_image(b'B');
    let mut corrupt = b.clone();
    let last = corrupt.len() - 4;
    corrupt[last] ^= 1;
    // The record names the image as sent; the slot holds a flipped bit.
    let flash = flash_with(&committed_trial_of(&b), &a, &corrupt);
    let (board, printed) = booted_by_loader(&boot, &firmware, flash, &[]);
    assert_eq!(
        printed,
        "boot: slot B: its SHA-256 does not match\r\nboot: slot A\r\nimage A in slot A\r\n"
    );

    // Slot A erased as well, after the boot-back: the trial slot is not
    // tried again, and the firmware the bitstream carries starts, told so.
    let mut contents = board.flash().part().contents().to_vec();
    contents[SLOT_A..SLOT_A + a.len()].fill(0xFF);
    let part = NorFlash::with_contents(board.flash().part().geometry(), Timing::TYPICAL, &contents);
    let (_, printed) = booted_by_loader(&boot, &firmware, part, &[]);
    assert!(
        printed
            .starts_with("boot: slot A: no image\r\nboot: the bitstream's image\r\nweft firmware"),
        "{printed}"
    );
    assert!(
        printed.contains("firmware: the bitstream's image: neither slot holds a valid one"),
        "{printed}"
    );
}

#[test]
fn the_firmware_runs_from_slot_b_on_trial_checks_in_and_starts_from_there() {
    let (Some(boot), Some(firmware)) = (boot_loader_image(), firmware_image()) else {
        return;
    };
    let image = weft_iss::elf::boot_image(&firmware).expect("the firmware's ELF makes an image");
    let flash = flash_with(&committed_trial_of(&image), &[], &image);
    let (board, printed) = booted_by_loader(&boot, &firmware, flash, &[]);
    assert!(
        printed.starts_with("boot: slot B\r\nweft firmware"),
        "{printed}"
    );
    // The firmware checks in once its fabric's start (100 ms after reset)
    // is over, which the loader's 0.3 s of checking and copying the
    // image already passed.
    let trial = printed
        .find("firmware: slot B on trial\r\n")
        .expect("the firmware says it runs on trial");
    assert!(
        printed[trial..].contains("firmware: slot B checked in"),
        "{printed}"
    );
    let part = board.flash().part();
    assert_eq!(
        record_in(&part),
        BootRecord {
            active: ImageSlot::B,
            trial: None
        }
    );
    // The check-in disarmed the watchdog the loader armed for the trial.
    let mut board = board;
    board.advance_ticks(2 * TRIAL_TICKS);
    settle(&mut board);
    assert_eq!(board.watchdog_resets(), 0);
    // A client reading the event log sees the trial's start and check-in.
    let page = events(&mut board);
    let firmware_events: Vec<EventKind> = page
        .events
        .iter()
        .map(|e| e.kind)
        .filter(|kind| {
            matches!(
                kind,
                EventKind::Booted { .. } | EventKind::FirmwareCheckedIn { .. }
            )
        })
        .collect();
    assert_eq!(
        firmware_events,
        [
            EventKind::Booted {
                reason: BootReason::FirmwareTrial
            },
            EventKind::FirmwareCheckedIn { slot: ImageSlot::B },
        ]
    );

    let (_, printed) = booted_by_loader(&boot, &firmware, power_cycled(&part), &[]);
    assert!(
        printed.starts_with("boot: slot B\r\nweft firmware"),
        "{printed}"
    );
    assert!(printed.contains("firmware: slot B\r\n"), "{printed}");
}

/// `TRIAL_CHECK_IN_MS` in ticks of the ISS board's clock.
const TRIAL_TICKS: u64 = TRIAL_CHECK_IN_MS as u64 * CPU_CLOCK_HZ / 1_000;

#[test]
fn a_trial_that_hangs_is_reset_by_the_watchdog_and_the_good_image_boots_back_and_says_so() {
    let (Some(boot), Some(firmware)) = (boot_loader_image(), firmware_image()) else {
        return;
    };
    let good = weft_iss::elf::boot_image(&firmware).expect("the firmware's ELF makes an image");
    // The trial prints its banner and then waits in `wfi` for ever: it
    // never checks in.
    let hangs = test_image(b'B');
    let flash = flash_with(&committed_trial_of(&hangs), &good, &hangs);
    let (mut board, printed) = booted_by_loader(&boot, &firmware, flash, &[]);
    assert_eq!(printed, "boot: slot B\r\nimage B in slot B\r\n");

    // Nothing happens before the loader's timeout...
    board.advance_ticks(TRIAL_TICKS - CPU_CLOCK_HZ / 1_000);
    assert_eq!(settle(&mut board), "");
    assert_eq!(board.watchdog_resets(), 0);
    // ...and at it the watchdog resets the core, the loader finds the
    // trial started and not checked in, and the good slot starts.
    board.advance_ticks(CPU_CLOCK_HZ / 1_000);
    let printed = settle(&mut board);
    assert_eq!(board.watchdog_resets(), 1, "{printed}");
    assert!(
        printed.starts_with("boot: slot A\r\nweft firmware"),
        "{printed}"
    );
    assert!(
        printed.contains("firmware: slot A again: the trial never checked in\r\n"),
        "{printed}"
    );
    assert_eq!(
        record_in(&board.flash().part()),
        BootRecord {
            active: ImageSlot::A,
            trial: None
        }
    );
    // A client reading the event log sees the boot-back.
    let page = events(&mut board);
    assert!(
        page.events.iter().any(|e| e.kind
            == EventKind::Booted {
                reason: BootReason::FirmwareRollback
            }),
        "{page:?}"
    );
    // The good image started unarmed: it runs on past another timeout.
    board.advance_ticks(2 * TRIAL_TICKS);
    settle(&mut board);
    assert_eq!(board.watchdog_resets(), 1);
}
