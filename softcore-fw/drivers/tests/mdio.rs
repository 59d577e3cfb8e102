//! The MDIO driver and the DP83867 set-up against the ISS's MDIO master
//! (`weft_iss::soc::Mdio`) with a model of the DP83867's registers on its
//! line, written from TI's datasheet (SNLS504): clause 22's registers and
//! the extended ones behind REGCR (0x0D) and ADDAR (0x0E).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use weft_drivers::dp83867::{self, SetupError};
use weft_drivers::mdio::{self, MdioError};
use weft_drivers::CsrBus;
use weft_iss::soc::{ManagedPhy, Soc};
use weft_iss::{Bus, HarvardBus, Width};
use weft_regs::soc::mdio as regs;

/// The reference SoC's window on the ISS.
struct IssBus {
    bus: HarvardBus,
    soc: Soc,
}

impl CsrBus for IssBus {
    fn read32(&mut self, address: u32) -> u32 {
        self.bus.load(address, Width::Word).expect("a SoC register")
    }

    fn write32(&mut self, address: u32, value: u32) {
        self.bus
            .store(address, Width::Word, value)
            .expect("a SoC register");
    }
}

/// What the DP83867 model holds, shared with the test.
#[derive(Debug, Default)]
struct Registers {
    basic: [u16; 32],
    extended: BTreeMap<u16, u16>,
    /// Extended registers written, in order.
    extended_writes: Vec<(u16, u16)>,
}

/// A DP83867's management registers (SNLS504): REGCR's function 00 makes
/// ADDAR the extended address, function 01 its data.
struct Dp83867 {
    registers: Rc<RefCell<Registers>>,
    address: u16,
}

impl ManagedPhy for Dp83867 {
    fn read(&mut self, register: u8) -> u16 {
        let r = self.registers.borrow();
        if register == 0x0E && r.basic[0x0D] >> 14 == 0b01 {
            return r.extended.get(&self.address).copied().unwrap_or(0);
        }
        if register == 0x0E {
            return self.address;
        }
        r.basic[usize::from(register)]
    }

    fn write(&mut self, register: u8, value: u16) {
        let mut r = self.registers.borrow_mut();
        match register {
            0x0E if r.basic[0x0D] >> 14 == 0b01 && r.basic[0x0D] & 0x1F == 0x1F => {
                r.extended.insert(self.address, value);
                r.extended_writes.push((self.address, value));
            }
            0x0E => self.address = value,
            _ => r.basic[usize::from(register)] = value,
        }
    }
}

/// A board with a DP83867 at address 3 after power-on: its identifier,
/// auto-negotiation on, 1000BASE-T advertised.
fn board() -> (IssBus, Rc<RefCell<Registers>>) {
    let mut bus = HarvardBus::reference();
    let soc = Soc::attach(&mut bus).expect("the SoC maps");
    let registers = Rc::new(RefCell::new(Registers::default()));
    {
        let mut r = registers.borrow_mut();
        r.basic[0x00] = 0x1140;
        r.basic[0x02] = 0x2000;
        r.basic[0x03] = 0xA231;
        r.basic[0x09] = 0x0300;
    }
    soc.mdio.attach_phy(
        3,
        Box::new(Dp83867 {
            registers: Rc::clone(&registers),
            address: 0,
        }),
    );
    (IssBus { bus, soc }, registers)
}

#[test]
fn reads_and_writes_reach_the_phy_and_errors_say_why() {
    let (mut board, registers) = board();
    assert_eq!(mdio::read(&mut board, 3, 2), Ok(0x2000));
    assert_eq!(mdio::write(&mut board, 3, 0x10, 0x5A5A), Ok(()));
    assert_eq!(registers.borrow().basic[0x10], 0x5A5A);
    assert_eq!(
        mdio::read(&mut board, 4, 2),
        Err(MdioError::NoAnswer {
            phy: 4,
            register: 2
        })
    );
    assert_eq!(
        mdio::read(&mut board, 3, 32),
        Err(MdioError::Address {
            phy: 3,
            register: 32
        })
    );
    assert_eq!(
        mdio::write(&mut board, 32, 0, 0),
        Err(MdioError::Address {
            phy: 32,
            register: 0
        })
    );
}

/// A master that never finishes a frame.
struct Stuck(u32);

impl CsrBus for Stuck {
    fn read32(&mut self, address: u32) -> u32 {
        self.0 += 1;
        if address == regs::STATUS.address(0, 0) {
            regs::BUSY.encode(1)
        } else {
            0
        }
    }

    fn write32(&mut self, _address: u32, _value: u32) {}
}

#[test]
fn a_master_that_stays_busy_times_out() {
    let mut stuck = Stuck(0);
    assert_eq!(mdio::read(&mut stuck, 3, 2), Err(MdioError::Timeout));
    assert_eq!(stuck.0, mdio::POLL_LIMIT, "polls, then gives up");
    assert_eq!(mdio::write(&mut stuck, 3, 2, 0), Err(MdioError::Timeout));
    assert_eq!(
        dp83867::configure_sgmii_10_100(&mut stuck, 3),
        Err(SetupError::Mdio(MdioError::Timeout))
    );
}

#[test]
fn only_a_dp83867_is_identified() {
    let (mut board, registers) = board();
    assert_eq!(dp83867::identify(&mut board, 3), Ok(true));
    assert_eq!(dp83867::identify(&mut board, 5), Ok(false), "nobody there");
    registers.borrow_mut().basic[0x03] = 0xA211;
    assert_eq!(dp83867::identify(&mut board, 3), Ok(false), "another model");
}

#[test]
fn the_sgmii_setup_writes_the_extended_registers_and_drops_1000base_t() {
    let (mut board, registers) = board();
    assert_eq!(dp83867::configure_sgmii_10_100(&mut board, 3), Ok(()));
    let r = registers.borrow();
    assert_eq!(
        r.extended_writes,
        [(0x0031, 0x0070), (0x00D3, 0x4000), (0x016F, 0x0015)]
    );
    assert_eq!(r.basic[0x09] & 0x0300, 0, "1000BASE-T not advertised");
    assert_eq!(r.basic[0x00], 0x1140 | 1 << 9, "auto-negotiation restarted");
    drop(r);
    assert_eq!(dp83867::read_extended(&mut board, 3, 0x00D3), Ok(0x4000));
    let _ = &board.soc;
}

#[test]
fn a_register_that_does_not_keep_its_value_is_reported() {
    let (mut board, _) = board();
    // A PHY at 7 that ignores every write.
    struct Deaf;
    impl ManagedPhy for Deaf {
        fn read(&mut self, _register: u8) -> u16 {
            0
        }
        fn write(&mut self, _register: u8, _value: u16) {}
    }
    board.soc.mdio.attach_phy(7, Box::new(Deaf));
    assert_eq!(
        dp83867::configure_sgmii_10_100(&mut board, 7),
        Err(SetupError::ReadBack {
            register: 0x0031,
            wrote: 0x0070,
            read: 0
        })
    );
}
