//! The boot loader of weft's RISC-V soft core.
//!
//! The core starts here after every reset (`weft_regs::BOOT_ROM_BASE`,
//! a block RAM the bitstream initialises and no store reaches). The
//! loader:
//!
//! 1. reads the boot record in the configuration flash and picks the
//!    image slot to run exactly as the firmware update defines it
//!    (`weft_fabric::firmware_update::boot`: the good slot; once, a
//!    committed trial, recording that it started; the good slot again
//!    when a trial started before and never checked in), storing the
//!    record it leaves. A record that cannot be read or stored starts no
//!    trial: the loader goes on as a new board does, from slot A;
//! 2. checks the slot's image (`weft_fabric::boot_image::check`: header,
//!    placement, SHA-256 of the whole body as the flash holds it; a trial
//!    may not be longer than the record says). A slot that does not check
//!    is never started: the loader tries the other slot (except after a
//!    boot-back, where the other slot is the trial that never checked in),
//!    then starts the image the bitstream carries, which is still in the
//!    RAMs because nothing was copied;
//! 3. copies the image's segments into instruction RAM (through the data
//!    port's write path into it) and data RAM, and jumps to its entry with
//!    `weft_fabric::boot_image::Handoff` in `a1`, so the firmware knows the slot it runs and
//!    does not pick again. Before it starts a trial's image it arms the
//!    SoC's watchdog (`weft_drivers::watchdog`) with
//!    `weft_fabric::firmware_update::TRIAL_CHECK_IN_MS`: a trial that hangs
//!    before it checks in (and disarms it) is reset, and this loader, finding
//!    the trial started and not checked in, boots back to the good slot.
//!    No other start arms it: the watchdog's own reset and power-on both
//!    leave it stopped.
//!
//! It says each step on the console in one line (`boot: ...`). Its
//! read-only data is in the boot ROM, which data loads may read; its
//! statics and stack are in the top `weft_regs::BOOT_LOADER_RAM_SIZE`
//! bytes of data memory, where no image loads.
//!
//! A host build of this crate is only a pointer to the real build, as the
//! firmware's is.
#![cfg_attr(target_os = "none", no_std, no_main)]
#![deny(unsafe_code)]

#[cfg(target_os = "none")]
mod soft_core {
    use core::panic::PanicInfo;

    use weft_drivers::spi_flash::{self, Region, Span, Wait};
    use weft_drivers::uart::send;
    use weft_drivers::{watchdog, CsrBus};
    use weft_fabric::boot_image::{self, Handoff, ImageError, ImageMemory};
    use weft_fabric::firmware_update::{
        boot, other, select_boot, BootKind, BootRecord, TRIAL_CHECK_IN_MS,
    };
    use weft_proto::ImageSlot;
    use weft_regs::soc::spi_flash::IMAGE_SLOT_SIZE;
    use weft_regs::INSTRUCTION_RAM_BASE;

    /// Whole-word volatile accesses: to the SoC window's registers, and
    /// the image's words into instruction and data RAM.
    struct Mmio;

    impl CsrBus for Mmio {
        #[allow(unsafe_code)]
        fn read32(&mut self, address: u32) -> u32 {
            // SAFETY: the drivers pass word-aligned addresses of SoC
            // registers (`weft_regs::soc`), device memory that no Rust
            // object occupies.
            unsafe { core::ptr::read_volatile(address as usize as *const u32) }
        }

        #[allow(unsafe_code)]
        fn write32(&mut self, address: u32, value: u32) {
            // SAFETY: as for `read32`.
            unsafe { core::ptr::write_volatile(address as usize as *mut u32, value) }
        }
    }

    impl Wait for Mmio {
        /// Nothing else to do while the part programs the boot record:
        /// poll again at once.
        fn wait(&mut self) {}
    }

    impl ImageMemory for Mmio {
        #[allow(unsafe_code)]
        fn write_word(&mut self, address: u32, word: u32) {
            // SAFETY: `boot_image::check` placed every segment in
            // instruction RAM or in data RAM below the loader's own part,
            // which no Rust object of the loader occupies.
            unsafe { core::ptr::write_volatile(address as usize as *mut u32, word) }
        }
    }

    fn say(parts: &[&[u8]]) {
        for part in parts {
            send(&mut Mmio, part);
        }
    }

    fn letter(slot: ImageSlot) -> &'static [u8] {
        match slot {
            ImageSlot::A => b"A",
            ImageSlot::B => b"B",
        }
    }

    fn span(slot: ImageSlot) -> Span {
        match slot {
            ImageSlot::A => spi_flash::IMAGE_A,
            ImageSlot::B => spi_flash::IMAGE_B,
        }
    }

    /// Why a slot was passed over, in words for the console.
    fn reason(error: ImageError) -> &'static [u8] {
        match error {
            ImageError::Flash(_) => b"the flash failed",
            ImageError::NoImage { .. } => b"no image",
            ImageError::DigestMismatch => b"its SHA-256 does not match",
            ImageError::Size { .. } => b"longer than its slot or its record",
            ImageError::Version { .. }
            | ImageError::SegmentCount { .. }
            | ImageError::BodyLength { .. }
            | ImageError::Placement { .. }
            | ImageError::Entry { .. } => b"a bad header",
        }
    }

    /// Starts the image at `entry` with `handoff` in `a1`.
    #[allow(unsafe_code)]
    fn start(entry: u32, handoff: Handoff) -> ! {
        // SAFETY: `entry` is the entry point of an image just copied and
        // checked, or the reset vector of the bitstream's image; the image's
        // start-up code sets up its own stack, so nothing of the loader's
        // is used after the jump.
        unsafe {
            core::arch::asm!(
                "jr {entry}",
                entry = in(reg) entry,
                in("a1") handoff.encode(),
                options(noreturn)
            )
        }
    }

    #[riscv_rt::entry]
    fn main() -> ! {
        spi_flash::configure(&mut Mmio);
        let mut record = Region::new(spi_flash::BOOT_RECORD, Mmio);
        let choice = boot(&mut record).unwrap_or_else(|_| {
            say(&[b"boot: the boot record could not be read or stored\r\n"]);
            select_boot(&BootRecord::default())
        });
        let trial_size = match (choice.kind, choice.record.trial) {
            (BootKind::Trial, Some(trial)) => trial.image.size,
            _ => IMAGE_SLOT_SIZE,
        };
        let fallback = (choice.kind != BootKind::Rollback).then(|| other(choice.slot));
        let mut copied = false;
        for (slot, limit) in [(Some(choice.slot), trial_size), (fallback, IMAGE_SLOT_SIZE)] {
            let Some(slot) = slot else { continue };
            let mut flash = Region::new(span(slot), Mmio);
            match boot_image::check(&mut flash, limit) {
                Ok(image) => {
                    copied = true;
                    if boot_image::copy(&mut flash, &image, &mut Mmio).is_ok() {
                        say(&[b"boot: slot ", letter(slot), b"\r\n"]);
                        if choice.kind == BootKind::Trial && slot == choice.slot {
                            watchdog::arm(&mut Mmio, watchdog::load_for_ms(TRIAL_CHECK_IN_MS));
                        }
                        start(
                            image.entry,
                            Handoff {
                                chosen: choice.slot,
                                kind: choice.kind,
                                running: Some(slot),
                            },
                        );
                    }
                    say(&[b"boot: slot ", letter(slot), b": the flash failed\r\n"]);
                }
                Err(error) => say(&[b"boot: slot ", letter(slot), b": ", reason(error), b"\r\n"]),
            }
        }
        if copied {
            // Part of an image is in the RAMs: the bitstream's is gone.
            say(&[b"boot: no image could be copied; halted\r\n"]);
            loop {
                core::hint::spin_loop();
            }
        }
        say(&[b"boot: the bitstream's image\r\n"]);
        start(
            INSTRUCTION_RAM_BASE,
            Handoff {
                chosen: choice.slot,
                kind: choice.kind,
                running: None,
            },
        )
    }

    /// A panic halts the core.
    #[panic_handler]
    fn halt(_info: &PanicInfo) -> ! {
        loop {
            core::hint::spin_loop();
        }
    }
}

#[cfg(not(target_os = "none"))]
fn main() {
    eprintln!(
        "weft-boot runs from the weft soft core's boot ROM (riscv32im-unknown-none-elf); \
         build it with `cargo xtask firmware`"
    );
}
