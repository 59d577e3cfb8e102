//! The configuration flash: the SPI NOR flash controller's driver
//! (`weft_regs::soc::spi_flash`) and regions of the part that implement
//! weft-fabric's [`Flash`] for its two-slot records.
//!
//! Each operation is the JEDEC-style command sequence every serial NOR part
//! takes: Read Data in buffer-sized pieces; Write Enable, then Page Program
//! page by page (a program never crosses a page, where the part would wrap)
//! or Sector Erase sector by sector, each followed by polling Read Status
//! until WIP clears. Write Enable is checked in the status register before
//! each program or erase, so a write-protected or absent part is reported
//! rather than silently ignored.
//!
//! Between two polls of WIP the core sleeps in `wfi` until a timer alarm
//! [`POLL_PERIOD`] later, rather than spinning through the 45 ms of a
//! typical Sector Erase. The external interrupt (the MAC's and the data
//! plane's) is masked in `mie` meanwhile: a frame or a host's request that
//! arrived before the wait keeps it pending, which would end every `wfi`
//! at once. The main loop enables the timer interrupt before
//! anything is programmed or erased, and sets its own alarm again before
//! it next waits.
//!
//! The part (4 MiB, a W25Q32JV or alike) is laid out in regions, each a
//! whole number of sectors, records from the bottom up and the firmware
//! image slots above them:
//!
//! | region | flash bytes | holds |
//! |---|---|---|
//! | [`KEY_REGION`] | 0x000000..0x002000 | the management key and replay high-water mark ([`crate::keystore`]) |
//! | [`CONFIG_REGION`] | 0x002000..0x004000 | the saved configuration: bindings and NumVFs (`SaveConfig`, weft-fabric's `persist`) |
//! | | 0x004000..0x0FE000 | free, for more records |
//! | [`BOOT_RECORD_REGION`] | 0x0FE000..0x100000 | the boot record: the good image slot and a trial (`weft_fabric::firmware_update`) |
//! | [`IMAGE_A_REGION`] | 0x100000..0x200000 | firmware image slot A |
//! | [`IMAGE_B_REGION`] | 0x200000..0x300000 | firmware image slot B |
//! | | 0x300000..0x400000 | free |
//!
//! An update writes the slot the running image is not from; the boot
//! record is a two-slot record like the key's, so a power cut while it is
//! written leaves the previous one.

use weft_fabric::persist::{Flash, FlashError, PersistError};
use weft_regs::soc::spi_flash::{
    self, opcode, BUFFER_SIZE, IMAGE_SLOT_SIZE, PAGE_SIZE, SECTOR_SIZE,
};
use weft_regs::SOFT_CORE_CLOCK_HZ;

use smoltcp::time::Duration;

use crate::mmio::{read, write};
use crate::timer;

/// How often a program or erase is polled: a quarter of a typical Page
/// Program (tPP 0.4 ms on the W25Q32JV).
pub const POLL_PERIOD: Duration = Duration::from_micros(100);

/// The longest the part may stay busy: above the slowest Sector Erase of
/// typical parts (tSE at most 400 ms for the W25Q32JV) with margin.
const BUSY_TIMEOUT_TICKS: u64 = SOFT_CORE_CLOCK_HZ as u64;

/// The two sectors holding the management key record.
pub const KEY_REGION: Region = Region {
    start: 0,
    size: 2 * SECTOR_SIZE,
};

/// The two sectors holding the saved configuration, after the key's.
pub const CONFIG_REGION: Region = Region {
    start: 2 * SECTOR_SIZE,
    size: 2 * SECTOR_SIZE,
};

/// The two sectors holding the boot record, just below the image slots.
pub const BOOT_RECORD_REGION: Region = Region {
    start: IMAGE_A_REGION.start - 2 * SECTOR_SIZE,
    size: 2 * SECTOR_SIZE,
};

/// Firmware image slot A, from the part's second MiB.
pub const IMAGE_A_REGION: Region = Region {
    start: 0x10_0000,
    size: IMAGE_SLOT_SIZE,
};

/// Firmware image slot B, above slot A.
pub const IMAGE_B_REGION: Region = Region {
    start: IMAGE_A_REGION.start + IMAGE_SLOT_SIZE,
    size: IMAGE_SLOT_SIZE,
};

/// One transaction, as `COMMAND` describes it.
struct Command {
    opcode: u8,
    address: Option<u32>,
    length: u32,
    write: bool,
}

impl Command {
    /// A command with neither address nor data, or with `length` bytes to read.
    const fn plain(opcode: u8, length: u32) -> Self {
        Command {
            opcode,
            address: None,
            length,
            write: false,
        }
    }
}

/// Sets the serial clock to the fastest Read Data (0x03) that typical
/// parts accept at the soft core's clock; once at boot, before the first
/// command (the controller resets to half the core clock).
pub fn configure() {
    write(
        spi_flash::CONTROL.address(0, 0),
        spi_flash::DIVISOR.encode(spi_flash::divisor_for(
            SOFT_CORE_CLOCK_HZ,
            spi_flash::READ_DATA_MAX_HZ,
        )),
    );
}

/// Runs `command` and waits for the controller to finish it; false if
/// the controller did not finish within the timeout.
fn transact(command: Command) -> bool {
    write(
        spi_flash::ADDRESS.address(0, 0),
        command.address.unwrap_or(0),
    );
    write(spi_flash::LENGTH.address(0, 0), command.length);
    write(
        spi_flash::COMMAND.address(0, 0),
        spi_flash::OPCODE.encode(u32::from(command.opcode))
            | spi_flash::WITH_ADDRESS.encode(u32::from(command.address.is_some()))
            | spi_flash::WRITE.encode(u32::from(command.write)),
    );
    let deadline = timer::ticks() + BUSY_TIMEOUT_TICKS;
    while spi_flash::BUSY.decode(read(spi_flash::STATUS.address(0, 0))) != 0 {
        if timer::ticks() > deadline {
            return false;
        }
    }
    true
}

/// The part's status register.
fn status() -> Option<u8> {
    transact(Command::plain(opcode::READ_STATUS, 1)).then(|| read(spi_flash::buffer_word(0)) as u8)
}

/// Waits until the part's program or erase is over (WIP clear).
fn wait_ready(offset: u32) -> Result<(), FlashError> {
    let deadline = timer::ticks() + BUSY_TIMEOUT_TICKS;
    loop {
        match status() {
            Some(s) if s & opcode::STATUS_WIP == 0 => return Ok(()),
            Some(_) if timer::ticks() <= deadline => sleep(POLL_PERIOD),
            _ => return Err(FlashError::Failed { offset }),
        }
    }
}

/// Sleeps in `wfi` for `period`, woken by the timer alone.
#[allow(unsafe_code)]
fn sleep(period: Duration) {
    timer::alarm_after(period);
    // SAFETY: clearing and setting MEIE in `mie` cannot trap while
    // `mstatus.MIE` is clear, which nothing in the firmware sets; MEIE is
    // set again before the main loop next looks at the MAC and the mailbox.
    unsafe { riscv::register::mie::clear_mext() };
    riscv::asm::wfi();
    // SAFETY: as above.
    unsafe { riscv::register::mie::set_mext() };
}

/// Sets the part's write enable latch and checks it took.
fn write_enable(offset: u32) -> Result<(), FlashError> {
    let enabled = transact(Command::plain(opcode::WRITE_ENABLE, 0))
        && status().is_some_and(|s| s & opcode::STATUS_WEL != 0);
    if enabled {
        Ok(())
    } else {
        Err(FlashError::Failed { offset })
    }
}

/// Copies `bytes` into the controller's buffer from its start.
fn fill_buffer(bytes: &[u8]) {
    for (i, chunk) in bytes.chunks(4).enumerate() {
        let mut word = [0xFF; 4];
        word[..chunk.len()].copy_from_slice(chunk);
        write(
            spi_flash::buffer_word(4 * i as u32),
            u32::from_le_bytes(word),
        );
    }
}

/// Copies the controller's buffer from its start into `bytes`.
fn drain_buffer(bytes: &mut [u8]) {
    for (i, chunk) in bytes.chunks_mut(4).enumerate() {
        let word = read(spi_flash::buffer_word(4 * i as u32)).to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
}

/// A range of the flash part, addressed from its own 0, whose halves each
/// start on a sector (as [`Flash`] asks).
#[derive(Clone, Copy, Debug)]
pub struct Region {
    start: u32,
    size: u32,
}

impl Region {
    /// The part's address of `offset`, after checking `offset..offset + len` is inside.
    fn address(&self, offset: u32, len: usize) -> Result<u32, FlashError> {
        let len = len as u32;
        if offset.checked_add(len).is_none_or(|end| end > self.size) {
            return Err(FlashError::OutOfRange { offset, len });
        }
        Ok(self.start + offset)
    }
}

const _: () = assert!(
    KEY_REGION.start.is_multiple_of(SECTOR_SIZE) && KEY_REGION.size.is_multiple_of(2 * SECTOR_SIZE)
);
const _: () = assert!(
    CONFIG_REGION.start.is_multiple_of(SECTOR_SIZE)
        && CONFIG_REGION.size.is_multiple_of(2 * SECTOR_SIZE)
        && CONFIG_REGION.start >= KEY_REGION.start + KEY_REGION.size
);
const _: () = assert!(
    BOOT_RECORD_REGION.start.is_multiple_of(SECTOR_SIZE)
        && BOOT_RECORD_REGION.size.is_multiple_of(2 * SECTOR_SIZE)
        && CONFIG_REGION.start + CONFIG_REGION.size <= BOOT_RECORD_REGION.start
);
// The slots start on sectors, and slot B ends inside the 4 MiB part.
const _: () = assert!(
    IMAGE_A_REGION.start.is_multiple_of(SECTOR_SIZE)
        && IMAGE_B_REGION.start + IMAGE_B_REGION.size <= 0x40_0000
);

impl Flash for Region {
    fn size(&self) -> u32 {
        self.size
    }

    fn read(&mut self, offset: u32, buf: &mut [u8]) -> Result<(), FlashError> {
        let mut address = self.address(offset, buf.len())?;
        for piece in buf.chunks_mut(BUFFER_SIZE as usize) {
            let command = Command {
                opcode: opcode::READ_DATA,
                address: Some(address),
                length: piece.len() as u32,
                write: false,
            };
            if !transact(command) {
                return Err(FlashError::Failed { offset });
            }
            drain_buffer(piece);
            address += piece.len() as u32;
        }
        Ok(())
    }

    fn erase(&mut self, offset: u32, len: u32) -> Result<(), FlashError> {
        let start = self.address(offset, len as usize)?;
        if !start.is_multiple_of(SECTOR_SIZE) || !len.is_multiple_of(SECTOR_SIZE) {
            return Err(FlashError::Unaligned { offset, len });
        }
        for sector in (start..start + len).step_by(SECTOR_SIZE as usize) {
            let failed = FlashError::Failed {
                offset: sector - self.start,
            };
            write_enable(sector - self.start)?;
            let command = Command {
                opcode: opcode::SECTOR_ERASE,
                address: Some(sector),
                length: 0,
                write: false,
            };
            if !transact(command) {
                return Err(failed);
            }
            wait_ready(sector - self.start)?;
        }
        Ok(())
    }

    fn write(&mut self, offset: u32, data: &[u8]) -> Result<(), FlashError> {
        let mut address = self.address(offset, data.len())?;
        let mut rest = data;
        while !rest.is_empty() {
            // Up to the end of the page: the part wraps within a page.
            let room = (PAGE_SIZE - address % PAGE_SIZE) as usize;
            let (piece, after) = rest.split_at(room.min(rest.len()));
            let at = address - self.start;
            write_enable(at)?;
            fill_buffer(piece);
            let command = Command {
                opcode: opcode::PAGE_PROGRAM,
                address: Some(address),
                length: piece.len() as u32,
                write: true,
            };
            if !transact(command) {
                return Err(FlashError::Failed { offset: at });
            }
            wait_ready(at)?;
            address += piece.len() as u32;
            rest = after;
        }
        Ok(())
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
