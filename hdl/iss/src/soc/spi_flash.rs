//! The SPI NOR flash controller (`weft_regs::soc::spi_flash`) with the
//! flash part ([`NorFlash`]) on its pins.
//!
//! The model has no serial clock: a write to `COMMAND` carries out the
//! whole transaction at once, so `STATUS.BUSY` always reads 0. The part's
//! own program and erase times still pass, in the ticks the embedder
//! advances ([`SpiFlash::advance`]; [`Soc::step`](super::Soc::step) advances
//! one per step), so firmware sees WIP set and polls as on hardware.

use std::cell::RefCell;
use std::rc::Rc;

use weft_regs::soc::spi_flash;
use weft_regs::soc::BLOCK_SIZE;

use super::nor::NorFlash;
use super::register_at;
use crate::bus::{DeviceFault, HarvardBus, MapError, Mmio, Width};

#[derive(Debug)]
struct SpiFlashState {
    control: u32,
    address: u32,
    length: u32,
    buffer: [u8; spi_flash::BUFFER_SIZE as usize],
    part: NorFlash,
}

impl SpiFlashState {
    /// One transaction as `COMMAND = command` asks for it.
    fn transact(&mut self, command: u32) {
        let write = spi_flash::WRITE.decode(command) != 0;
        let length = self.length.min(spi_flash::BUFFER_SIZE) as usize;
        self.part.select();
        self.part.exchange(spi_flash::OPCODE.decode(command) as u8);
        if spi_flash::WITH_ADDRESS.decode(command) != 0 {
            for shift in [16, 8, 0] {
                self.part.exchange((self.address >> shift) as u8);
            }
        }
        for byte in &mut self.buffer[..length] {
            if write {
                self.part.exchange(*byte);
            } else {
                // The controller holds MOSI low while it receives.
                *byte = self.part.exchange(0);
            }
        }
        self.part.deselect();
    }
}

/// The SPI flash controller and its flash part.
///
/// Clones share one device: [`SpiFlash::attach`] maps a clone, and the
/// embedder keeps another to save the part's contents
/// ([`SpiFlash::contents`]) and hand them to the next run
/// ([`SpiFlash::new`] with [`NorFlash::with_contents`]), as a board keeps
/// its flash across a power cycle.
#[derive(Clone, Debug)]
pub struct SpiFlash {
    state: Rc<RefCell<SpiFlashState>>,
}

impl SpiFlash {
    /// The controller at reset (every register 0) with `part` on its pins.
    pub fn new(part: NorFlash) -> Self {
        Self {
            state: Rc::new(RefCell::new(SpiFlashState {
                control: 0,
                address: 0,
                length: 0,
                buffer: [0; spi_flash::BUFFER_SIZE as usize],
                part,
            })),
        }
    }

    /// The reset the watchdog requests (as the RTL's `reset`): the
    /// registers back to 0; the data buffer (a memory) and the part, which
    /// the reset does not reach, kept.
    pub fn reset(&self) {
        let mut s = self.state.borrow_mut();
        s.control = 0;
        s.address = 0;
        s.length = 0;
    }

    /// Maps the registers and the data buffer into `bus` at their
    /// `weft_regs::soc::spi_flash` addresses.
    pub fn attach(&self, bus: &mut HarvardBus) -> Result<(), MapError> {
        let base = spi_flash::LAYOUT.base;
        let span = spi_flash::BUFFER_LAYOUT.base + BLOCK_SIZE - base;
        bus.map_mmio(base, span, Box::new(self.clone()))
    }

    /// The flash part's array.
    pub fn contents(&self) -> Vec<u8> {
        self.state.borrow().part.contents().to_vec()
    }

    /// A copy of the flash part, its array and status as they are now.
    pub fn part(&self) -> NorFlash {
        self.state.borrow().part.clone()
    }

    /// Programs and erases the part has carried out ([`NorFlash::writes`]).
    pub fn writes(&self) -> u64 {
        self.state.borrow().part.writes()
    }

    /// Whether the flash part is programming or erasing (its WIP bit).
    pub fn busy(&self) -> bool {
        self.state.borrow().part.busy()
    }

    /// Lets `ticks` pass for the flash part.
    pub fn advance(&self, ticks: u64) {
        self.state.borrow_mut().part.advance(ticks);
    }

    /// The buffer byte index of the word at `offset`, if `offset` is in the buffer.
    fn buffer_index(offset: u32, width: Width) -> Option<Result<usize, DeviceFault>> {
        let address = spi_flash::LAYOUT.base + offset;
        let layout = spi_flash::BUFFER_LAYOUT;
        if !(layout.base..layout.base + layout.instance_span()).contains(&address) {
            return None;
        }
        Some(if width == Width::Word {
            Ok((address - layout.base) as usize)
        } else {
            Err(DeviceFault::UnsupportedWidth)
        })
    }
}

impl Mmio for SpiFlash {
    fn read(&mut self, offset: u32, width: Width) -> Result<u32, DeviceFault> {
        let s = self.state.borrow();
        if let Some(at) = Self::buffer_index(offset, width) {
            let at = at?;
            let word = &s.buffer[at..at + 4];
            return Ok(u32::from_le_bytes([word[0], word[1], word[2], word[3]]));
        }
        let name = register_at(spi_flash::BLOCK.registers, offset, width)?;
        Ok(match name {
            n if n == spi_flash::CONTROL.name => s.control,
            n if n == spi_flash::ADDRESS.name => s.address,
            n if n == spi_flash::LENGTH.name => s.length,
            // COMMAND is write-only; STATUS.BUSY never stays set here.
            _ => 0,
        })
    }

    fn write(&mut self, offset: u32, width: Width, value: u32) -> Result<(), DeviceFault> {
        let mut s = self.state.borrow_mut();
        if let Some(at) = Self::buffer_index(offset, width) {
            let at = at?;
            s.buffer[at..at + 4].copy_from_slice(&value.to_le_bytes());
            return Ok(());
        }
        let name = register_at(spi_flash::BLOCK.registers, offset, width)?;
        match name {
            n if n == spi_flash::CONTROL.name => s.control = value & spi_flash::CONTROL.mask(),
            n if n == spi_flash::ADDRESS.name => s.address = value & spi_flash::ADDRESS.mask(),
            n if n == spi_flash::LENGTH.name => s.length = value & spi_flash::LENGTH.mask(),
            n if n == spi_flash::COMMAND.name => s.transact(value),
            // STATUS is read-only.
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::{Access, Bus, BusFault};
    use crate::soc::nor::{Geometry, Timing};
    use spi_flash::opcode;

    const FAST: Timing = Timing {
        page_program: 5,
        sector_erase: 50,
    };

    fn attached() -> (HarvardBus, SpiFlash) {
        let mut bus = HarvardBus::reference();
        let flash = SpiFlash::new(NorFlash::erased(Geometry::W25Q32, FAST));
        flash.attach(&mut bus).unwrap();
        (bus, flash)
    }

    fn reg(register: weft_regs::Register) -> u32 {
        register.address(0, 0)
    }

    /// Runs one command through the registers, as firmware does.
    fn command(bus: &mut HarvardBus, op: u8, address: Option<u32>, length: u32, write: bool) {
        bus.store(reg(spi_flash::ADDRESS), Width::Word, address.unwrap_or(0))
            .unwrap();
        bus.store(reg(spi_flash::LENGTH), Width::Word, length)
            .unwrap();
        let value = spi_flash::OPCODE.encode(u32::from(op))
            | spi_flash::WITH_ADDRESS.encode(u32::from(address.is_some()))
            | spi_flash::WRITE.encode(u32::from(write));
        bus.store(reg(spi_flash::COMMAND), Width::Word, value)
            .unwrap();
        assert_eq!(bus.load(reg(spi_flash::STATUS), Width::Word), Ok(0));
    }

    fn status(bus: &mut HarvardBus) -> u8 {
        command(bus, opcode::READ_STATUS, None, 1, false);
        bus.load(spi_flash::buffer_word(0), Width::Word).unwrap() as u8
    }

    #[test]
    fn the_jedec_id_lands_in_the_buffer() {
        let (mut bus, _) = attached();
        bus.store(spi_flash::buffer_word(0), Width::Word, 0xDDCC_BBAA)
            .unwrap();
        command(&mut bus, opcode::READ_JEDEC_ID, None, 3, false);
        // Three bytes received; the fourth is left as it was.
        assert_eq!(
            bus.load(spi_flash::buffer_word(0), Width::Word),
            Ok(0xDD16_40EF)
        );
    }

    #[test]
    fn a_page_programmed_through_the_buffer_reads_back_after_wip_clears() {
        let (mut bus, flash) = attached();
        for word in 0..64 {
            bus.store(
                spi_flash::buffer_word(word * 4),
                Width::Word,
                word * 0x0101_0101,
            )
            .unwrap();
        }
        // Without Write Enable the part ignores the program.
        command(&mut bus, opcode::PAGE_PROGRAM, Some(0x1_0000), 256, true);
        assert_eq!(status(&mut bus), 0);
        command(&mut bus, opcode::WRITE_ENABLE, None, 0, false);
        command(&mut bus, opcode::PAGE_PROGRAM, Some(0x1_0000), 256, true);
        assert_eq!(status(&mut bus) & opcode::STATUS_WIP, opcode::STATUS_WIP);
        flash.advance(FAST.page_program);
        assert_eq!(status(&mut bus), 0);
        assert_eq!(flash.contents()[0x1_0004..0x1_0008], [1, 1, 1, 1]);
        assert_eq!(flash.contents()[0x1_00FF], 63);

        // Read back the middle of the page: 8 bytes from 0x1_0006.
        command(&mut bus, opcode::READ_DATA, Some(0x1_0006), 8, false);
        assert_eq!(
            bus.load(spi_flash::buffer_word(0), Width::Word),
            Ok(0x0202_0101)
        );
        assert_eq!(
            bus.load(spi_flash::buffer_word(4), Width::Word),
            Ok(0x0303_0202)
        );
    }

    #[test]
    fn registers_keep_their_fields_and_narrow_accesses_fault() {
        let (mut bus, _) = attached();
        bus.store(reg(spi_flash::CONTROL), Width::Word, u32::MAX)
            .unwrap();
        bus.store(reg(spi_flash::ADDRESS), Width::Word, u32::MAX)
            .unwrap();
        bus.store(reg(spi_flash::LENGTH), Width::Word, u32::MAX)
            .unwrap();
        assert_eq!(bus.load(reg(spi_flash::CONTROL), Width::Word), Ok(0xFF));
        assert_eq!(
            bus.load(reg(spi_flash::ADDRESS), Width::Word),
            Ok(0xFF_FFFF)
        );
        assert_eq!(bus.load(reg(spi_flash::LENGTH), Width::Word), Ok(0x1FF));
        assert_eq!(bus.load(reg(spi_flash::COMMAND), Width::Word), Ok(0));
        assert_eq!(
            bus.load(spi_flash::buffer_word(0), Width::Byte),
            Err(BusFault::Device {
                addr: spi_flash::buffer_word(0),
                access: Access::Load,
                fault: DeviceFault::UnsupportedWidth
            })
        );
        let hole = reg(spi_flash::STATUS) + 4;
        assert_eq!(
            bus.load(hole, Width::Word),
            Err(BusFault::Device {
                addr: hole,
                access: Access::Load,
                fault: DeviceFault::NoRegister
            })
        );
    }

    #[test]
    fn contents_carry_over_to_a_new_controller() {
        let (mut bus, flash) = attached();
        bus.store(spi_flash::buffer_word(0), Width::Word, 0x1234_5678)
            .unwrap();
        command(&mut bus, opcode::WRITE_ENABLE, None, 0, false);
        command(&mut bus, opcode::PAGE_PROGRAM, Some(0x40), 4, true);
        flash.advance(FAST.page_program);

        let mut bus = HarvardBus::reference();
        let part = NorFlash::with_contents(Geometry::W25Q32, FAST, &flash.contents());
        SpiFlash::new(part).attach(&mut bus).unwrap();
        command(&mut bus, opcode::READ_DATA, Some(0x40), 4, false);
        assert_eq!(
            bus.load(spi_flash::buffer_word(0), Width::Word),
            Ok(0x1234_5678)
        );
    }
}
