//! A serial NOR flash part as its pins see it, a byte at a time: the
//! JEDEC-style basic command set of `weft_regs::soc::spi_flash::opcode`
//! with 3-byte addresses.
//!
//! The part follows what serial NOR datasheets (Winbond W25Q32JV, Macronix
//! MX25L3233F, and JESD216's basic flash parameter table) agree on:
//!
//! - erased bytes read 0xFF; Page Program only clears bits (each data byte
//!   is ANDed into the array), and only Sector Erase sets them again, a
//!   whole 4 KiB sector at a time;
//! - Page Program and Sector Erase are ignored unless Write Enable set the
//!   status register's WEL first, and WEL clears when the operation ends;
//! - both take effect when `cs_n` rises — Sector Erase only right after its
//!   3 address bytes, Page Program only after at least one data byte — and
//!   then keep the part busy: status bit 0 (WIP) is set and every command
//!   but Read Status is ignored until the operation's time has passed;
//! - Page Program addresses wrap inside the 256-byte page: of more than 256
//!   data bytes, the last 256 are programmed;
//! - Read Data runs on from its address for as long as `cs_n` stays low,
//!   wrapping at the end of the array.
//!
//! Time is ticks of whatever clock the embedder advances with
//! [`NorFlash::advance`]: the ISS's steps, or the RTL's clock cycles.

use weft_regs::soc::spi_flash::{opcode, PAGE_SIZE, SECTOR_SIZE};

/// What a Read JEDEC ID returns and how big the array is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// The 3 ID bytes: manufacturer (JEP106), memory type, capacity code,
    /// which by the common convention is log2 of the array's bytes.
    pub jedec_id: [u8; 3],
}

impl Geometry {
    /// A 4 MiB part answering as a Winbond W25Q32JV does (EF 40 16).
    pub const W25Q32: Geometry = Geometry {
        jedec_id: [0xEF, 0x40, 0x16],
    };

    /// Bytes in the array: 2 to the power of the capacity code.
    pub const fn capacity(self) -> usize {
        1 << self.jedec_id[2]
    }
}

/// How long the part stays busy, in ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// A Page Program's duration (tPP).
    pub page_program: u64,
    /// A Sector Erase's duration (tSE).
    pub sector_erase: u64,
}

impl Timing {
    /// Typical W25Q32JV figures (tPP 0.4 ms, tSE 45 ms) in ticks of the
    /// reference soft core clock (`weft_regs::SOFT_CORE_CLOCK_HZ`).
    pub const TYPICAL: Timing = Timing {
        page_program: weft_regs::SOFT_CORE_CLOCK_HZ as u64 * 4 / 10_000,
        sector_erase: weft_regs::SOFT_CORE_CLOCK_HZ as u64 * 45 / 1_000,
    };
}

/// The command being carried out while `cs_n` is low.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting for the opcode.
    Opcode,
    /// A command the part ignores (unknown, or sent while busy), to the end.
    Ignored,
    /// One of the addressed commands, collecting its address.
    Address { opcode: u8, bytes: u8, address: u32 },
    /// Read Data, at this address.
    Reading { address: u32 },
    /// Page Program, `bytes` data bytes so far.
    Programming { address: u32, bytes: u32 },
    /// Sector Erase with its whole address and nothing after it yet.
    Erasing { address: u32 },
    /// Sector Erase with bytes after the address: ignored when `cs_n` rises.
    Overrun,
    /// Read Status: the status byte, live, for every byte.
    Status,
    /// Read JEDEC ID, `bytes` ID bytes sent so far.
    Id { bytes: u8 },
    /// Write Enable or Write Disable, with nothing after the opcode yet.
    Latch { enable: bool },
}

/// A serial NOR flash part: its array, status and the command in progress.
#[derive(Clone, Debug)]
pub struct NorFlash {
    geometry: Geometry,
    timing: Timing,
    array: Vec<u8>,
    write_enabled: bool,
    now: u64,
    busy_until: u64,
    selected: bool,
    phase: Phase,
    page: [u8; PAGE_SIZE as usize],
    writes: u64,
    /// Whether a part is on the pins at all (see [`NorFlash::absent`]).
    present: bool,
}

impl NorFlash {
    /// An erased part (every byte 0xFF).
    pub fn erased(geometry: Geometry, timing: Timing) -> Self {
        Self::with_contents(geometry, timing, &[])
    }

    /// The reference board's configuration flash, erased: a
    /// [`Geometry::W25Q32`] part of [`Timing::TYPICAL`].
    pub fn reference() -> Self {
        Self::erased(Geometry::W25Q32, Timing::TYPICAL)
    }

    /// No part on the pins, as on a board whose flash no user logic
    /// reaches (weft-boards' `access = "absent"`): the board holds the
    /// data line low, so every byte reads 0, the status register included
    /// (Write Enable never latches), and no command takes effect.
    pub fn absent() -> Self {
        NorFlash {
            present: false,
            ..Self::reference()
        }
    }

    /// A part holding `contents` from address 0, erased beyond it (a
    /// longer `contents` is cut to the capacity).
    pub fn with_contents(geometry: Geometry, timing: Timing, contents: &[u8]) -> Self {
        let mut array = vec![0xFF; geometry.capacity()];
        let n = contents.len().min(array.len());
        array[..n].copy_from_slice(&contents[..n]);
        NorFlash {
            geometry,
            timing,
            array,
            write_enabled: false,
            now: 0,
            busy_until: 0,
            selected: false,
            phase: Phase::Opcode,
            page: [0xFF; PAGE_SIZE as usize],
            writes: 0,
            present: true,
        }
    }

    /// The array's bytes.
    pub fn contents(&self) -> &[u8] {
        &self.array
    }

    /// Programs and erases carried out so far: an embedder that keeps the
    /// array in a file saves it when this moves.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// The part's geometry.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// Lets `ticks` pass: a program or erase under way may finish.
    pub fn advance(&mut self, ticks: u64) {
        self.now = self.now.saturating_add(ticks);
        self.finish_if_due();
    }

    /// Whether a program or erase is under way (status bit WIP).
    pub fn busy(&self) -> bool {
        self.now < self.busy_until
    }

    /// The status register: WIP and WEL.
    pub fn status(&self) -> u8 {
        let mut status = 0;
        if self.busy() {
            status |= opcode::STATUS_WIP;
        }
        if self.write_enabled {
            status |= opcode::STATUS_WEL;
        }
        status
    }

    fn finish_if_due(&mut self) {
        if self.busy_until != 0 && !self.busy() {
            // WEL clears when the program or erase ends.
            self.write_enabled = false;
            self.busy_until = 0;
        }
    }

    /// `cs_n` falls: a command begins.
    pub fn select(&mut self) {
        self.finish_if_due();
        self.selected = true;
        self.phase = Phase::Opcode;
    }

    /// The byte the part drives on its output during the next byte while
    /// selected: it depends only on the bytes before it, never on the byte
    /// coming in at the same time, so a model on the pins can send it bit
    /// by bit as the byte arrives.
    pub fn output(&self) -> u8 {
        match self.phase {
            Phase::Reading { address } => self.array[address as usize],
            Phase::Status => self.status(),
            Phase::Id { bytes } => self
                .geometry
                .jedec_id
                .get(usize::from(bytes))
                .copied()
                .unwrap_or(0xFF),
            _ => 0xFF,
        }
    }

    /// One byte each way while selected: `mosi` in, the returned byte out.
    /// The part drives nothing (reads as 0xFF, a pulled-up line) where a
    /// command has no output.
    ///
    /// # Panics
    ///
    /// If the part is not selected: a byte with `cs_n` high is a bug in the
    /// embedder.
    pub fn exchange(&mut self, mosi: u8) -> u8 {
        assert!(self.selected, "a byte exchanged with cs_n high");
        if !self.present {
            return 0;
        }
        self.finish_if_due();
        let out = self.output();
        self.phase = match self.phase {
            Phase::Opcode => self.decode(mosi),
            Phase::Ignored => Phase::Ignored,
            Phase::Address {
                opcode,
                bytes,
                address,
            } => {
                let address = (address << 8 | u32::from(mosi)) & self.address_mask();
                if bytes < 2 {
                    Phase::Address {
                        opcode,
                        bytes: bytes + 1,
                        address,
                    }
                } else {
                    match opcode {
                        opcode::READ_DATA => Phase::Reading { address },
                        opcode::PAGE_PROGRAM => {
                            self.page = [0xFF; PAGE_SIZE as usize];
                            Phase::Programming { address, bytes: 0 }
                        }
                        _ => Phase::Erasing { address },
                    }
                }
            }
            Phase::Reading { address } => Phase::Reading {
                address: (address + 1) & self.address_mask(),
            },
            Phase::Programming { address, bytes } => {
                let column = (address + bytes) % PAGE_SIZE;
                self.page[column as usize] = mosi;
                Phase::Programming {
                    address,
                    bytes: bytes + 1,
                }
            }
            Phase::Erasing { .. } | Phase::Overrun => Phase::Overrun,
            Phase::Status => Phase::Status,
            Phase::Id { bytes } => Phase::Id { bytes: bytes + 1 },
            Phase::Latch { .. } => Phase::Ignored,
        };
        out
    }

    /// What the part does with opcode `op`: while busy only Read Status is heard.
    fn decode(&self, op: u8) -> Phase {
        if self.busy() && op != opcode::READ_STATUS {
            return Phase::Ignored;
        }
        match op {
            opcode::READ_STATUS => Phase::Status,
            opcode::READ_JEDEC_ID => Phase::Id { bytes: 0 },
            opcode::WRITE_ENABLE => Phase::Latch { enable: true },
            opcode::WRITE_DISABLE => Phase::Latch { enable: false },
            opcode::READ_DATA | opcode::PAGE_PROGRAM | opcode::SECTOR_ERASE => Phase::Address {
                opcode: op,
                bytes: 0,
                address: 0,
            },
            _ => Phase::Ignored,
        }
    }

    /// `cs_n` rises: a Write Enable, Page Program or Sector Erase takes effect.
    pub fn deselect(&mut self) {
        self.selected = false;
        if !self.present {
            return;
        }
        match self.phase {
            Phase::Latch { enable } => self.write_enabled = enable,
            Phase::Programming { address, bytes } if bytes > 0 && self.write_enabled => {
                let start = (address & !(PAGE_SIZE - 1)) as usize;
                for (cell, byte) in self.array[start..start + PAGE_SIZE as usize]
                    .iter_mut()
                    .zip(self.page)
                {
                    *cell &= byte;
                }
                self.writes += 1;
                self.busy_until = self.now + self.timing.page_program.max(1);
            }
            Phase::Erasing { address } if self.write_enabled => {
                let start = (address & !(SECTOR_SIZE - 1)) as usize;
                self.array[start..start + SECTOR_SIZE as usize].fill(0xFF);
                self.writes += 1;
                self.busy_until = self.now + self.timing.sector_erase.max(1);
            }
            _ => {}
        }
        self.phase = Phase::Opcode;
    }

    fn address_mask(&self) -> u32 {
        (self.array.len() - 1) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAST: Timing = Timing {
        page_program: 10,
        sector_erase: 100,
    };

    /// One command: select, the bytes, deselect; what the part sent back.
    fn command(flash: &mut NorFlash, bytes: &[u8], read: usize) -> Vec<u8> {
        flash.select();
        for &b in bytes {
            flash.exchange(b);
        }
        let out = (0..read).map(|_| flash.exchange(0)).collect();
        flash.deselect();
        out
    }

    fn addressed(op: u8, address: u32) -> Vec<u8> {
        vec![
            op,
            (address >> 16) as u8,
            (address >> 8) as u8,
            address as u8,
        ]
    }

    fn wait(flash: &mut NorFlash) {
        while command(flash, &[opcode::READ_STATUS], 1)[0] & opcode::STATUS_WIP != 0 {
            flash.advance(1);
        }
    }

    fn program(flash: &mut NorFlash, address: u32, data: &[u8]) {
        command(flash, &[opcode::WRITE_ENABLE], 0);
        let mut bytes = addressed(opcode::PAGE_PROGRAM, address);
        bytes.extend_from_slice(data);
        command(flash, &bytes, 0);
        wait(flash);
    }

    fn read(flash: &mut NorFlash, address: u32, len: usize) -> Vec<u8> {
        command(flash, &addressed(opcode::READ_DATA, address), len)
    }

    #[test]
    fn the_id_names_the_part_and_its_capacity() {
        let mut flash = NorFlash::erased(Geometry::W25Q32, FAST);
        assert_eq!(
            command(&mut flash, &[opcode::READ_JEDEC_ID], 3),
            [0xEF, 0x40, 0x16]
        );
        assert_eq!(flash.contents().len(), 4 << 20);
        assert_eq!(read(&mut flash, 0x12345, 2), [0xFF, 0xFF], "erased");
    }

    #[test]
    fn an_absent_part_reads_zero_and_takes_no_command() {
        let mut flash = NorFlash::absent();
        assert_eq!(command(&mut flash, &[opcode::READ_JEDEC_ID], 3), [0, 0, 0]);
        command(&mut flash, &[opcode::WRITE_ENABLE], 0);
        // Write Enable never latches, and nothing is ever busy.
        assert_eq!(command(&mut flash, &[opcode::READ_STATUS], 1), [0]);
        let mut bytes = addressed(opcode::PAGE_PROGRAM, 0x100);
        bytes.push(0x00);
        command(&mut flash, &bytes, 0);
        assert_eq!(read(&mut flash, 0x100, 2), [0, 0]);
        assert_eq!(flash.writes(), 0);
    }

    #[test]
    fn program_needs_write_enable_and_only_clears_bits() {
        let mut flash = NorFlash::erased(Geometry::W25Q32, FAST);
        // No Write Enable: ignored, and the part is not busy.
        let mut bytes = addressed(opcode::PAGE_PROGRAM, 0x100);
        bytes.push(0x00);
        command(&mut flash, &bytes, 0);
        assert_eq!(command(&mut flash, &[opcode::READ_STATUS], 1), [0]);
        assert_eq!(read(&mut flash, 0x100, 1), [0xFF]);

        program(&mut flash, 0x100, &[0xF0, 0x0F]);
        program(&mut flash, 0x100, &[0x3C, 0xFF]);
        // 0xF0 & 0x3C = 0x30: a second program cannot set a bit back.
        assert_eq!(read(&mut flash, 0x100, 3), [0x30, 0x0F, 0xFF]);
    }

    #[test]
    fn wip_and_wel_while_busy_and_commands_are_ignored() {
        let mut flash = NorFlash::erased(Geometry::W25Q32, FAST);
        command(&mut flash, &[opcode::WRITE_ENABLE], 0);
        assert_eq!(
            command(&mut flash, &[opcode::READ_STATUS], 1),
            [opcode::STATUS_WEL]
        );
        let mut bytes = addressed(opcode::PAGE_PROGRAM, 0);
        bytes.push(0x55);
        command(&mut flash, &bytes, 0);
        // Busy with WEL still set, for tPP.
        assert_eq!(
            command(&mut flash, &[opcode::READ_STATUS], 2),
            [opcode::STATUS_WIP | opcode::STATUS_WEL; 2]
        );
        // Read Data is ignored while busy: the line floats high.
        assert_eq!(read(&mut flash, 0, 1), [0xFF]);
        flash.advance(FAST.page_program - 1);
        assert!(flash.busy());
        flash.advance(1);
        assert_eq!(
            command(&mut flash, &[opcode::READ_STATUS], 1),
            [0],
            "WEL clears at the end"
        );
        assert_eq!(read(&mut flash, 0, 1), [0x55]);
    }

    #[test]
    fn a_page_wraps_and_keeps_the_last_bytes() {
        let mut flash = NorFlash::erased(Geometry::W25Q32, FAST);
        // From column 0xFE: bytes 0, 1 at 0xFE, 0xFF; bytes 2, 3 wrap to 0, 1.
        program(&mut flash, 0x2FE, &[1, 2, 3, 4]);
        assert_eq!(read(&mut flash, 0x2FE, 2), [1, 2]);
        assert_eq!(read(&mut flash, 0x200, 2), [3, 4]);
        assert_eq!(
            read(&mut flash, 0x300, 1),
            [0xFF],
            "the next page is untouched"
        );
        // 257 bytes from column 0: the first byte is overwritten by the last.
        let data: Vec<u8> = (0..=256).map(|i| (i as u8).wrapping_add(0x80)).collect();
        program(&mut flash, 0x400, &data);
        assert_eq!(read(&mut flash, 0x400, 2), [data[256], data[1]]);
    }

    #[test]
    fn erase_sets_a_whole_sector_and_only_after_exactly_its_address() {
        let mut flash = NorFlash::erased(Geometry::W25Q32, FAST);
        program(&mut flash, 0x0FFF, &[0]);
        program(&mut flash, 0x1000, &[0]);
        program(&mut flash, 0x1FFF, &[0]);
        program(&mut flash, 0x2000, &[0]);
        // One byte too many after the address: ignored.
        command(&mut flash, &[opcode::WRITE_ENABLE], 0);
        let mut bytes = addressed(opcode::SECTOR_ERASE, 0x1234);
        bytes.push(0);
        command(&mut flash, &bytes, 0);
        assert!(!flash.busy());
        assert_eq!(read(&mut flash, 0x1000, 1), [0]);
        command(&mut flash, &[opcode::WRITE_ENABLE], 0);
        command(&mut flash, &addressed(opcode::SECTOR_ERASE, 0x1234), 0);
        assert!(flash.busy());
        wait(&mut flash);
        assert_eq!(read(&mut flash, 0x0FFF, 1), [0]);
        assert_eq!(read(&mut flash, 0x1000, 1), [0xFF]);
        assert_eq!(read(&mut flash, 0x1FFF, 1), [0xFF]);
        assert_eq!(read(&mut flash, 0x2000, 1), [0]);
    }

    #[test]
    fn reads_run_on_and_wrap_at_the_end_of_the_array() {
        let mut contents = vec![0u8; 4 << 20];
        contents[0] = 0xA5;
        *contents.last_mut().unwrap() = 0x5A;
        let mut flash = NorFlash::with_contents(Geometry::W25Q32, FAST, &contents);
        assert_eq!(read(&mut flash, (4 << 20) - 1, 2), [0x5A, 0xA5]);
        // Write Disable clears WEL.
        command(&mut flash, &[opcode::WRITE_ENABLE], 0);
        command(&mut flash, &[opcode::WRITE_DISABLE], 0);
        assert_eq!(command(&mut flash, &[opcode::READ_STATUS], 1), [0]);
    }
}
