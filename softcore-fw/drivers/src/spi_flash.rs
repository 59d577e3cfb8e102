//! The configuration flash: the SPI NOR flash controller's driver
//! (`weft_regs::soc::spi_flash`), the part's layout, and regions of it
//! that implement weft-fabric's [`Flash`] for its two-slot records and
//! image slots. The firmware and the boot loader both use it.
//!
//! Each operation is the JEDEC-style command sequence every serial NOR part
//! takes: Read Data in buffer-sized pieces; Write Enable, then Page Program
//! page by page (a program never crosses a page, where the part would wrap)
//! or Sector Erase sector by sector, each followed by polling Read Status
//! until WIP clears, with the bus's [`Wait`] between two polls. Write
//! Enable is checked in the status register before each program or erase,
//! so a write-protected or absent part is reported rather than silently
//! ignored.
//!
//! The part (4 MiB, a W25Q32JV or alike) is laid out in spans, each a
//! whole number of sectors, records from the bottom up and the firmware
//! image slots above them:
//!
//! | span | flash bytes | holds |
//! |---|---|---|
//! | [`KEY`] | 0x000000..0x002000 | the management key and replay high-water mark |
//! | [`CONFIG`] | 0x002000..0x004000 | the saved configuration: bindings and NumVFs (`SaveConfig`, `weft_fabric::persist`) |
//! | [`NETWORK`] | 0x004000..0x006000 | the management port's network setting: a static address, prefix and gateway, or DHCP (`weft_fabric::network_setting`) |
//! | | 0x006000..0x0FC000 | free, for more records |
//! | [`STAGING`] | 0x0FC000..0x0FE000 | where a firmware upload stands, so it resumes after a restart (`weft_fabric::firmware_update`) |
//! | [`BOOT_RECORD`] | 0x0FE000..0x100000 | the boot record: the good image slot and a trial (`weft_fabric::firmware_update`) |
//! | [`IMAGE_A`] | 0x100000..0x200000 | firmware image slot A (`weft_fabric::boot_image`) |
//! | [`IMAGE_B`] | 0x200000..0x300000 | firmware image slot B |
//! | | 0x300000..0x400000 | free |
//!
//! An update writes the slot the running image is not from; the boot
//! record is a two-slot record like the key's, so a power cut while it is
//! written leaves the previous one.

use weft_fabric::persist::{Flash, FlashError};
use weft_regs::soc::spi_flash::{
    self, opcode, BUFFER_SIZE, IMAGE_SLOT_SIZE, PAGE_SIZE, SECTOR_SIZE,
};
use weft_regs::SOFT_CORE_CLOCK_HZ;

use crate::timer::SocTimer;
use crate::CsrBus;

/// The longest the controller or the part may stay busy: above the
/// slowest Sector Erase of typical parts (tSE at most 400 ms for the
/// W25Q32JV) with margin.
const BUSY_TIMEOUT_TICKS: u64 = SOFT_CORE_CLOCK_HZ as u64;

/// A range of the flash part: its first byte and its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// The part's address of its first byte.
    pub start: u32,
    /// Its bytes.
    pub size: u32,
}

/// The two sectors holding the management key record.
pub const KEY: Span = Span {
    start: 0,
    size: 2 * SECTOR_SIZE,
};

/// The two sectors holding the saved configuration, after the key's.
pub const CONFIG: Span = Span {
    start: KEY.start + KEY.size,
    size: 2 * SECTOR_SIZE,
};

/// The two sectors holding the management port's network setting (a
/// static address or DHCP), after the configuration's.
pub const NETWORK: Span = Span {
    start: CONFIG.start + CONFIG.size,
    size: 2 * SECTOR_SIZE,
};

/// The two sectors holding the firmware upload's staging record, below
/// the boot record's.
pub const STAGING: Span = Span {
    start: BOOT_RECORD.start - 2 * SECTOR_SIZE,
    size: 2 * SECTOR_SIZE,
};

/// The two sectors holding the boot record, just below the image slots.
pub const BOOT_RECORD: Span = Span {
    start: IMAGE_A.start - 2 * SECTOR_SIZE,
    size: 2 * SECTOR_SIZE,
};

/// Firmware image slot A, from the part's second MiB.
pub const IMAGE_A: Span = Span {
    start: 0x10_0000,
    size: IMAGE_SLOT_SIZE,
};

/// Firmware image slot B, above slot A.
pub const IMAGE_B: Span = Span {
    start: IMAGE_A.start + IMAGE_SLOT_SIZE,
    size: IMAGE_SLOT_SIZE,
};

const _: () =
    assert!(KEY.start.is_multiple_of(SECTOR_SIZE) && KEY.size.is_multiple_of(2 * SECTOR_SIZE));
const _: () = assert!(
    CONFIG.start.is_multiple_of(SECTOR_SIZE)
        && CONFIG.size.is_multiple_of(2 * SECTOR_SIZE)
        && KEY.start + KEY.size <= CONFIG.start
);
const _: () = assert!(
    NETWORK.start.is_multiple_of(SECTOR_SIZE)
        && NETWORK.size.is_multiple_of(2 * SECTOR_SIZE)
        && CONFIG.start + CONFIG.size <= NETWORK.start
);
const _: () = assert!(
    STAGING.start.is_multiple_of(SECTOR_SIZE)
        && STAGING.size.is_multiple_of(2 * SECTOR_SIZE)
        && NETWORK.start + NETWORK.size <= STAGING.start
);
const _: () = assert!(
    BOOT_RECORD.start.is_multiple_of(SECTOR_SIZE)
        && BOOT_RECORD.size.is_multiple_of(2 * SECTOR_SIZE)
        && STAGING.start + STAGING.size <= BOOT_RECORD.start
);
// The slots start on sectors, and slot B ends inside the 4 MiB part.
const _: () =
    assert!(IMAGE_A.start.is_multiple_of(SECTOR_SIZE) && IMAGE_B.start + IMAGE_B.size <= 0x40_0000);

/// What a program does between two polls of a part that programs or
/// erases (typically 0.4 ms a page, 45 ms a sector): the firmware sleeps
/// until a timer alarm, the boot loader, with nothing else to do, returns
/// at once.
pub trait Wait {
    /// Lets some time pass.
    fn wait(&mut self);
}

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
/// parts accept at the soft core's clock; once at start, before the first
/// command (the controller resets to half the core clock).
pub fn configure<B: CsrBus>(bus: &mut B) {
    bus.write32(
        spi_flash::CONTROL.address(0, 0),
        spi_flash::DIVISOR.encode(spi_flash::divisor_for(
            SOFT_CORE_CLOCK_HZ,
            spi_flash::READ_DATA_MAX_HZ,
        )),
    );
}

/// A span of the flash part reached through the controller on `bus`,
/// addressed from the span's own 0, whose halves each start on a sector
/// (as [`Flash`] asks).
#[derive(Clone, Copy, Debug)]
pub struct Region<B> {
    span: Span,
    bus: B,
}

impl<B: CsrBus + Wait> Region<B> {
    /// The region of `span` through `bus`.
    pub const fn new(span: Span, bus: B) -> Self {
        Region { span, bus }
    }

    /// The part's address of `offset`, after checking `offset..offset + len` is inside.
    fn address(&self, offset: u32, len: usize) -> Result<u32, FlashError> {
        let len = len as u32;
        if offset
            .checked_add(len)
            .is_none_or(|end| end > self.span.size)
        {
            return Err(FlashError::OutOfRange { offset, len });
        }
        Ok(self.span.start + offset)
    }

    fn ticks(&mut self) -> u64 {
        SocTimer::new(&mut self.bus).ticks()
    }

    /// Runs `command` and waits for the controller to finish it; false if
    /// the controller did not finish within the timeout.
    fn transact(&mut self, command: Command) -> bool {
        self.bus.write32(
            spi_flash::ADDRESS.address(0, 0),
            command.address.unwrap_or(0),
        );
        self.bus
            .write32(spi_flash::LENGTH.address(0, 0), command.length);
        self.bus.write32(
            spi_flash::COMMAND.address(0, 0),
            spi_flash::OPCODE.encode(u32::from(command.opcode))
                | spi_flash::WITH_ADDRESS.encode(u32::from(command.address.is_some()))
                | spi_flash::WRITE.encode(u32::from(command.write)),
        );
        let deadline = self.ticks() + BUSY_TIMEOUT_TICKS;
        while spi_flash::BUSY.decode(self.bus.read32(spi_flash::STATUS.address(0, 0))) != 0 {
            if self.ticks() > deadline {
                return false;
            }
        }
        true
    }

    /// The part's status register.
    fn status(&mut self) -> Option<u8> {
        self.transact(Command::plain(opcode::READ_STATUS, 1))
            .then(|| self.bus.read32(spi_flash::buffer_word(0)) as u8)
    }

    /// Waits until the part's program or erase is over (WIP clear).
    fn wait_ready(&mut self, offset: u32) -> Result<(), FlashError> {
        let deadline = self.ticks() + BUSY_TIMEOUT_TICKS;
        loop {
            match self.status() {
                Some(s) if s & opcode::STATUS_WIP == 0 => return Ok(()),
                Some(_) if self.ticks() <= deadline => self.bus.wait(),
                _ => return Err(FlashError::Failed { offset }),
            }
        }
    }

    /// Sets the part's write enable latch and checks it took.
    fn write_enable(&mut self, offset: u32) -> Result<(), FlashError> {
        let enabled = self.transact(Command::plain(opcode::WRITE_ENABLE, 0))
            && self.status().is_some_and(|s| s & opcode::STATUS_WEL != 0);
        if enabled {
            Ok(())
        } else {
            Err(FlashError::Failed { offset })
        }
    }

    /// Copies `bytes` into the controller's buffer from its start.
    fn fill_buffer(&mut self, bytes: &[u8]) {
        for (i, chunk) in bytes.chunks(4).enumerate() {
            let mut word = [0xFF; 4];
            word[..chunk.len()].copy_from_slice(chunk);
            self.bus.write32(
                spi_flash::buffer_word(4 * i as u32),
                u32::from_le_bytes(word),
            );
        }
    }

    /// Copies the controller's buffer from its start into `bytes`.
    fn drain_buffer(&mut self, bytes: &mut [u8]) {
        for (i, chunk) in bytes.chunks_mut(4).enumerate() {
            let word = self
                .bus
                .read32(spi_flash::buffer_word(4 * i as u32))
                .to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

impl<B: CsrBus + Wait> Flash for Region<B> {
    fn size(&self) -> u32 {
        self.span.size
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
            if !self.transact(command) {
                return Err(FlashError::Failed { offset });
            }
            self.drain_buffer(piece);
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
            let at = sector - self.span.start;
            self.write_enable(at)?;
            let command = Command {
                opcode: opcode::SECTOR_ERASE,
                address: Some(sector),
                length: 0,
                write: false,
            };
            if !self.transact(command) {
                return Err(FlashError::Failed { offset: at });
            }
            self.wait_ready(at)?;
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
            let at = address - self.span.start;
            self.write_enable(at)?;
            self.fill_buffer(piece);
            let command = Command {
                opcode: opcode::PAGE_PROGRAM,
                address: Some(address),
                length: piece.len() as u32,
                write: true,
            };
            if !self.transact(command) {
                return Err(FlashError::Failed { offset: at });
            }
            self.wait_ready(at)?;
            address += piece.len() as u32;
            rest = after;
        }
        Ok(())
    }
}
