//! The MDIO master (`weft_regs::soc::mdio`) and the PHYs on its line.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

use weft_regs::soc::mdio;

use super::register_at;
use crate::bus::{DeviceFault, Mmio, Width};

/// A PHY's management registers as the MDIO line reaches them (IEEE 802.3
/// §22.2.4: 32 registers of 16 bits at one PHY address).
pub trait ManagedPhy {
    /// The value of register `register` (0 to 31), as a read frame returns it.
    fn read(&mut self, register: u8) -> u16;
    /// A write frame of `value` to register `register` (0 to 31).
    fn write(&mut self, register: u8, value: u16);
}

struct MdioState {
    divisor: u32,
    read_value: u16,
    no_answer: bool,
    phys: BTreeMap<u8, Box<dyn ManagedPhy>>,
}

impl fmt::Debug for MdioState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MdioState")
            .field("divisor", &self.divisor)
            .field("read_value", &self.read_value)
            .field("no_answer", &self.no_answer)
            .field("phys", &self.phys.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The MDIO master (`weft_regs::soc::mdio`): a write to `COMMAND` carries
/// out the whole management frame at once, so `STATUS.BUSY` always reads
/// 0 (the ISS has no clock to spend the frame's 64 MDC periods on).
///
/// A frame reaches the PHY attached at its address ([`Mdio::attach_phy`]);
/// a read at an address no PHY answers on finds the line pulled up, as
/// IEEE 802.3 §22.2.4.5 leaves it: `READ_DATA` 0xFFFF and
/// `STATUS.NO_ANSWER` set, as the RTL master reads an empty line.
#[derive(Clone, Debug)]
pub struct Mdio {
    state: Rc<RefCell<MdioState>>,
}

impl Default for Mdio {
    fn default() -> Self {
        Self::new()
    }
}

impl Mdio {
    /// A master at reset with no PHY on its line.
    pub fn new() -> Self {
        Self {
            state: Rc::new(RefCell::new(MdioState {
                divisor: mdio::DIVISOR_RESET,
                read_value: 0,
                no_answer: false,
                phys: BTreeMap::new(),
            })),
        }
    }

    /// Puts `phy` on the line at PHY address `address` (0 to 31), in place
    /// of any PHY there.
    pub fn attach_phy(&self, address: u8, phy: Box<dyn ManagedPhy>) {
        self.state.borrow_mut().phys.insert(address & 0x1F, phy);
    }

    /// The reset the watchdog requests: the registers as at power-on; the
    /// PHYs on the line keep their state.
    pub fn reset(&self) {
        let mut s = self.state.borrow_mut();
        s.divisor = mdio::DIVISOR_RESET;
        s.read_value = 0;
        s.no_answer = false;
    }

    fn command(&self, value: u32) {
        let mut s = self.state.borrow_mut();
        let phy = mdio::PHY.decode(value) as u8;
        let register = mdio::REGISTER.decode(value) as u8;
        let data = mdio::DATA.decode(value) as u16;
        let write = mdio::WRITE.decode(value) == 1;
        s.no_answer = false;
        match (s.phys.get_mut(&phy), write) {
            (Some(device), true) => device.write(register, data),
            (Some(device), false) => s.read_value = device.read(register),
            (None, true) => {}
            (None, false) => {
                s.read_value = 0xFFFF;
                s.no_answer = true;
            }
        }
    }
}

impl Mmio for Mdio {
    fn read(&mut self, offset: u32, width: Width) -> Result<u32, DeviceFault> {
        let name = register_at(mdio::BLOCK.registers, offset, width)?;
        let s = self.state.borrow();
        Ok(if name == mdio::CONTROL.name {
            mdio::DIVISOR.encode(s.divisor)
        } else if name == mdio::STATUS.name {
            mdio::NO_ANSWER.encode(u32::from(s.no_answer))
        } else if name == mdio::READ_DATA.name {
            mdio::READ_VALUE.encode(u32::from(s.read_value))
        } else {
            0
        })
    }

    fn write(&mut self, offset: u32, width: Width, value: u32) -> Result<(), DeviceFault> {
        let name = register_at(mdio::BLOCK.registers, offset, width)?;
        if name == mdio::CONTROL.name {
            self.state.borrow_mut().divisor = mdio::DIVISOR.decode(value);
        } else if name == mdio::COMMAND.name {
            self.command(value);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::{Bus, HarvardBus};
    use crate::soc::Soc;

    /// A PHY that keeps what is written and answers it back.
    struct Echo([u16; 32]);

    impl ManagedPhy for Echo {
        fn read(&mut self, register: u8) -> u16 {
            self.0[usize::from(register)]
        }
        fn write(&mut self, register: u8, value: u16) {
            self.0[usize::from(register)] = value;
        }
    }

    #[test]
    fn frames_reach_the_phy_at_their_address_and_an_empty_address_reads_high() {
        let mut bus = HarvardBus::reference();
        let soc = Soc::attach(&mut bus).expect("the SoC maps");
        soc.mdio.attach_phy(3, Box::new(Echo([0; 32])));
        let base = mdio::LAYOUT.base;
        let command =
            |phy: u32, register: u32| mdio::PHY.encode(phy) | mdio::REGISTER.encode(register);
        let write = command(3, 9) | mdio::WRITE.encode(1) | 0x1234;
        bus.store(base + 4, Width::Word, write).expect("COMMAND");
        bus.store(base + 4, Width::Word, command(3, 9))
            .expect("COMMAND");
        assert_eq!(bus.load(base + 0xC, Width::Word), Ok(0x1234));
        assert_eq!(bus.load(base + 8, Width::Word), Ok(0), "idle, answered");
        bus.store(base + 4, Width::Word, command(4, 9))
            .expect("COMMAND");
        assert_eq!(bus.load(base + 0xC, Width::Word), Ok(0xFFFF));
        assert_eq!(bus.load(base + 8, Width::Word), Ok(0b10), "NO_ANSWER");
        assert_eq!(bus.load(base, Width::Word), Ok(mdio::DIVISOR_RESET));
        assert!(bus.load(base + 0x10, Width::Word).is_err(), "a hole");
    }
}
