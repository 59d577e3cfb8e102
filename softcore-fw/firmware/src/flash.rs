//! The configuration flash as the firmware reaches it: weft-drivers'
//! SPI NOR flash driver ([`weft_drivers::spi_flash`], which has the
//! part's layout) over the firmware's register accesses, sleeping between
//! two polls of a part that programs or erases.
//!
//! Between two polls of WIP the core sleeps in `wfi` until a timer alarm
//! [`POLL_PERIOD`] later, rather than spinning through the 45 ms of a
//! typical Sector Erase. The external interrupt (the MAC's and the data
//! plane's) is masked in `mie` meanwhile: a frame or a host's request that
//! arrived before the wait keeps it pending, which would end every `wfi`
//! at once. The main loop enables the timer interrupt before
//! anything is programmed or erased, and sets its own alarm again before
//! it next waits.

use weft_drivers::spi_flash::{self, Wait};
use weft_fabric::persist::{FlashError, PersistError};

use smoltcp::time::Duration;

use crate::mmio::Mmio;
use crate::timer;

/// How often a program or erase is polled: a quarter of a typical Page
/// Program (tPP 0.4 ms on the W25Q32JV).
pub const POLL_PERIOD: Duration = Duration::from_micros(100);

/// A span of the flash part, through the firmware's register accesses.
pub type Region = spi_flash::Region<Mmio>;

/// The management key record's region.
pub const KEY_REGION: Region = Region::new(spi_flash::KEY, Mmio);
/// The saved configuration's region (`SaveConfig`).
pub const CONFIG_REGION: Region = Region::new(spi_flash::CONFIG, Mmio);
/// The management port's network setting's region ([`crate::netstore`]).
pub const NETWORK_REGION: Region = Region::new(spi_flash::NETWORK, Mmio);
/// The firmware upload's staging record's region.
pub const STAGING_REGION: Region = Region::new(spi_flash::STAGING, Mmio);
/// The boot record's region.
pub const BOOT_RECORD_REGION: Region = Region::new(spi_flash::BOOT_RECORD, Mmio);
/// Firmware image slot A.
pub const IMAGE_A_REGION: Region = Region::new(spi_flash::IMAGE_A, Mmio);
/// Firmware image slot B.
pub const IMAGE_B_REGION: Region = Region::new(spi_flash::IMAGE_B, Mmio);

/// Sets the serial clock for Read Data; once at boot, before the first command.
pub fn configure() {
    spi_flash::configure(&mut Mmio);
}

impl Wait for Mmio {
    /// Sleeps in `wfi` for [`POLL_PERIOD`], woken by the timer alone.
    #[allow(unsafe_code)]
    fn wait(&mut self) {
        timer::alarm_after(POLL_PERIOD);
        // SAFETY: clearing and setting MEIE in `mie` cannot trap while
        // `mstatus.MIE` is clear, which nothing in the firmware sets; MEIE is
        // set again before the main loop next looks at the MAC and the mailbox.
        unsafe { riscv::register::mie::clear_mext() };
        riscv::asm::wfi();
        // SAFETY: as above.
        unsafe { riscv::register::mie::set_mext() };
    }
}

/// What went wrong with a stored record, in words for the console.
pub fn describe(error: PersistError) -> &'static str {
    match error {
        PersistError::Flash(FlashError::Failed { .. }) => {
            "the flash did not answer or stayed busy: check the part and its write protection"
        }
        PersistError::VerifyFailed { .. } => "the record read back differs: the flash may be worn",
        // A region or record of the wrong size is a bug in this firmware.
        PersistError::RegionTooSmall { .. }
        | PersistError::Flash(FlashError::OutOfRange { .. } | FlashError::Unaligned { .. }) => {
            "the flash layout does not fit the record"
        }
    }
}
