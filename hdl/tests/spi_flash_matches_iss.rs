//! The RTL SPI flash controller, with a serial NOR part on its pins, does
//! what the ISS's controller model does: the same register-level
//! sequences (Write Enable, Page Program, Sector Erase, Read Data, Read
//! Status, Read JEDEC ID, any serial clock divisor) read the same words
//! and leave the same bytes in the flash.
//!
//! The part is `weft_iss::soc::NorFlash` in both: behind the RTL it sits on
//! the pins (`FlashOnPins`), bit by bit in SPI mode 0; behind the ISS model
//! it takes whole bytes. The polls for the controller's BUSY and the
//! part's WIP run as often as each side needs and are not compared.

use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::driver::CycleDriver;
use weft_hdl::spi_flash::{FlashOnPins, SpiFlashController};
use weft_iss::soc::{Geometry, NorFlash, SpiFlash, Timing};
use weft_iss::{Mmio, Width};
use weft_regs::soc::spi_flash::{self, opcode};

/// Short program and erase times, so a test waits in hundreds of cycles.
const FAST: Timing = Timing {
    page_program: 300,
    sector_erase: 3_000,
};

/// Polls before a test declares a side hung.
const MAX_POLLS: usize = 100_000;

/// Word reads and writes at SoC addresses.
trait Port {
    fn write(&mut self, address: u32, value: u32);
    fn read(&mut self, address: u32) -> u32;
}

/// The ISS model: one tick of the part's clock per access.
struct Iss(SpiFlash);

impl Port for Iss {
    fn write(&mut self, address: u32, value: u32) {
        self.0
            .write(address - spi_flash::LAYOUT.base, Width::Word, value)
            .expect("a register");
        self.0.advance(1);
    }

    fn read(&mut self, address: u32) -> u32 {
        let value = self
            .0
            .read(address - spi_flash::LAYOUT.base, Width::Word)
            .expect("a register");
        self.0.advance(1);
        value
    }
}

/// The RTL controller on the single-thread driver, the part on its pins.
struct Rtl {
    driver: CycleDriver<SpiFlashController>,
    pins: FlashOnPins,
}

impl Rtl {
    fn new(part: NorFlash) -> Self {
        let driver = CycleDriver::new(SpiFlashController::default(), |c| &mut c.clock)
            .expect("the controller connects");
        Rtl {
            driver,
            pins: FlashOnPins::new(part),
        }
    }

    /// One clock cycle, the part seeing the pins as they are before it.
    fn tick(&mut self) {
        let c = self.driver.block();
        let miso = self.pins.cycle(c.cs_n.val(), c.sclk.val(), c.mosi.val());
        c.miso.next = miso;
        self.driver.tick().expect("the controller settles");
    }

    /// Drives one bus access for one cycle; whether it faulted.
    fn access(&mut self, address: u32, write: Option<u32>, byte_enable: u32) -> bool {
        let bus = &mut self.driver.block().bus;
        bus.address.next = address.to_bits();
        bus.read.next = write.is_none();
        bus.write.next = write.is_some();
        bus.write_data.next = write.unwrap_or(0).to_bits();
        bus.byte_enable.next = byte_enable.to_bits();
        self.driver.settle().expect("settles");
        let fault = self.driver.block().bus.fault.val();
        self.tick();
        let bus = &mut self.driver.block().bus;
        bus.read.next = false;
        bus.write.next = false;
        fault
    }
}

impl Port for Rtl {
    fn write(&mut self, address: u32, value: u32) {
        assert!(
            !self.access(address, Some(value), 0xF),
            "{address:#x} faulted"
        );
    }

    fn read(&mut self, address: u32) -> u32 {
        assert!(!self.access(address, None, 0xF), "{address:#x} faulted");
        self.driver.settle().expect("settles");
        self.driver.block().bus.read_data.val().to_u32()
    }
}

fn register(r: weft_regs::Register) -> u32 {
    r.address(0, 0)
}

/// One transaction, then polls the controller until it is idle.
fn command<P: Port>(port: &mut P, op: u8, address: Option<u32>, length: u32, write: bool) {
    port.write(register(spi_flash::ADDRESS), address.unwrap_or(0));
    port.write(register(spi_flash::LENGTH), length);
    let value = spi_flash::OPCODE.encode(u32::from(op))
        | spi_flash::WITH_ADDRESS.encode(u32::from(address.is_some()))
        | spi_flash::WRITE.encode(u32::from(write));
    port.write(register(spi_flash::COMMAND), value);
    for _ in 0..MAX_POLLS {
        if spi_flash::BUSY.decode(port.read(register(spi_flash::STATUS))) == 0 {
            return;
        }
    }
    panic!("the controller stayed busy");
}

fn status<P: Port>(port: &mut P) -> u32 {
    command(port, opcode::READ_STATUS, None, 1, false);
    port.read(spi_flash::buffer_word(0)) & 0xFF
}

/// Polls Read Status until WIP clears; the final status.
fn wait_ready<P: Port>(port: &mut P) -> u32 {
    for _ in 0..MAX_POLLS {
        let s = status(port);
        if s & u32::from(opcode::STATUS_WIP) == 0 {
            return s;
        }
    }
    panic!("the part stayed busy");
}

/// A register-level operation, as firmware would run it.
#[derive(Clone, Debug)]
enum Op {
    Divisor(u32),
    Fill(Vec<u32>),
    Program {
        enable: bool,
        address: u32,
        data: Vec<u8>,
    },
    Erase {
        enable: bool,
        address: u32,
    },
    Read {
        address: u32,
        length: u32,
    },
    Id,
}

/// Runs `ops` on `port`; every value read that the register map defines.
fn run<P: Port>(port: &mut P, ops: &[Op]) -> Vec<u32> {
    let mut seen = Vec::new();
    for op in ops {
        match op {
            Op::Divisor(d) => {
                port.write(register(spi_flash::CONTROL), *d);
                seen.push(port.read(register(spi_flash::CONTROL)));
            }
            Op::Fill(words) => {
                for (i, w) in words.iter().enumerate() {
                    port.write(spi_flash::buffer_word(4 * i as u32), *w);
                }
            }
            Op::Program {
                enable,
                address,
                data,
            } => {
                if *enable {
                    command(port, opcode::WRITE_ENABLE, None, 0, false);
                }
                // A LENGTH above the buffer sends the buffer's 256 bytes.
                let buffered = &data[..data.len().min(spi_flash::BUFFER_SIZE as usize)];
                for (i, chunk) in buffered.chunks(4).enumerate() {
                    let mut word = [0xFF; 4];
                    word[..chunk.len()].copy_from_slice(chunk);
                    port.write(
                        spi_flash::buffer_word(4 * i as u32),
                        u32::from_le_bytes(word),
                    );
                }
                command(
                    port,
                    opcode::PAGE_PROGRAM,
                    Some(*address),
                    data.len() as u32,
                    true,
                );
                seen.push(wait_ready(port));
            }
            Op::Erase { enable, address } => {
                if *enable {
                    command(port, opcode::WRITE_ENABLE, None, 0, false);
                }
                command(port, opcode::SECTOR_ERASE, Some(*address), 0, false);
                seen.push(wait_ready(port));
            }
            Op::Read { address, length } => {
                command(port, opcode::READ_DATA, Some(*address), *length, false);
                // The whole buffer: bytes past LENGTH keep their values.
                for i in 0..spi_flash::BUFFER_SIZE / 4 {
                    seen.push(port.read(spi_flash::buffer_word(4 * i)));
                }
            }
            Op::Id => {
                command(port, opcode::READ_JEDEC_ID, None, 3, false);
                seen.push(port.read(spi_flash::buffer_word(0)));
            }
        }
    }
    seen
}

/// Addresses in the first four sectors, so operations overlap.
fn address() -> impl Strategy<Value = u32> {
    0u32..4 * spi_flash::SECTOR_SIZE
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => (0u32..4).prop_map(Op::Divisor),
        1 => proptest::collection::vec(any::<u32>(), 1..=64).prop_map(Op::Fill),
        4 => (prop::bool::weighted(0.8), address(), proptest::collection::vec(any::<u8>(), 1..=40))
            .prop_map(|(enable, address, data)| Op::Program { enable, address, data }),
        1 => (prop::bool::weighted(0.8), address(), proptest::collection::vec(any::<u8>(), 250..=300))
            .prop_map(|(enable, address, data)| Op::Program { enable, address, data }),
        1 => (prop::bool::weighted(0.7), address()).prop_map(|(enable, address)| Op::Erase { enable, address }),
        3 => (address(), 0u32..=300).prop_map(|(address, length)| Op::Read { address, length }),
        1 => Just(Op::Id),
    ]
}

/// A part with a pattern in its first sectors, so erases and programs show.
fn part() -> NorFlash {
    let pattern: Vec<u8> = (0..4 * spi_flash::SECTOR_SIZE)
        .map(|i| (i * 7 + i / 256) as u8 | 0x0F)
        .collect();
    NorFlash::with_contents(Geometry::W25Q32, FAST, &pattern)
}

fn check(ops: &[Op]) {
    let mut iss = Iss(SpiFlash::new(part()));
    let mut rtl = Rtl::new(part());
    let iss_seen = run(&mut iss, ops);
    let rtl_seen = run(&mut rtl, ops);
    assert_eq!(rtl_seen, iss_seen, "values read");
    assert!(
        rtl.pins.part().contents() == iss.0.part().contents(),
        "flash contents differ"
    );
}

#[test]
fn a_page_program_and_read_back_agree_at_every_divisor() {
    for divisor in 0..3 {
        let data: Vec<u8> = (0..=255).collect();
        check(&[
            Op::Divisor(divisor),
            Op::Id,
            Op::Erase {
                enable: true,
                address: 0x1000,
            },
            Op::Program {
                enable: true,
                address: 0x1080,
                data,
            },
            Op::Read {
                address: 0x1000,
                length: 256,
            },
            Op::Read {
                address: 0x1181,
                length: 7,
            },
        ]);
    }
}

#[test]
fn the_rtl_reads_what_the_datasheet_says() {
    // Independent of the ISS model's controller: the ID bytes of the part
    // and an erased sector, straight from the pins.
    let mut rtl = Rtl::new(part());
    assert_eq!(run(&mut rtl, &[Op::Id]), [0x0016_40EF]);
    let seen = run(
        &mut rtl,
        &[
            Op::Erase {
                enable: true,
                address: 0x2345,
            },
            Op::Read {
                address: 0x2000,
                length: 8,
            },
        ],
    );
    assert_eq!(seen[0], 0, "WIP and WEL clear after the erase");
    assert_eq!(seen[1..3], [u32::MAX, u32::MAX], "erased bytes read 0xFF");
    assert_eq!(
        rtl.pins.part().contents()[0x1FFF],
        part().contents()[0x1FFF],
        "the sector below is untouched"
    );
}

#[test]
fn narrow_accesses_and_holes_fault() {
    let mut rtl = Rtl::new(part());
    let status = register(spi_flash::STATUS);
    assert!(rtl.access(status, None, 0x1), "a byte read");
    assert!(rtl.access(status + 4, None, 0xF), "no register there");
    assert!(
        rtl.access(status + 0x200, None, 0xF),
        "outside the controller"
    );
    assert!(!rtl.access(spi_flash::buffer_word(252), None, 0xF));
}

#[test]
fn a_reset_ends_the_transaction_and_clears_the_registers() {
    // The state the ISS model starts in (`SpiFlash::new`: every register 0),
    // wherever the reset comes in a transaction.
    let mut rtl = Rtl::new(part());
    let mut iss = Iss(SpiFlash::new(part()));
    let registers = [spi_flash::CONTROL, spi_flash::ADDRESS, spi_flash::LENGTH];
    let at_reset: Vec<u32> = registers.iter().map(|r| iss.read(register(*r))).collect();
    rtl.write(register(spi_flash::CONTROL), 2);
    rtl.write(register(spi_flash::ADDRESS), 0x1234);
    rtl.write(register(spi_flash::LENGTH), 200);
    rtl.write(
        register(spi_flash::COMMAND),
        spi_flash::OPCODE.encode(u32::from(opcode::READ_DATA)) | spi_flash::WITH_ADDRESS.encode(1),
    );
    // Mid-byte: the part on the pins would refuse to see cs_n rise, so
    // the controller runs alone from here, `miso` held high.
    for _ in 0..50 {
        rtl.driver.tick().expect("the controller settles");
    }
    assert!(!rtl.driver.block().cs_n.val(), "the transaction runs");
    rtl.driver.block().reset.next = true;
    rtl.driver.tick().expect("the controller settles");
    rtl.driver.block().reset.next = false;
    rtl.driver.settle().expect("settles");
    assert!(rtl.driver.block().cs_n.val(), "cs_n rises with the reset");
    assert!(!rtl.driver.block().sclk.val(), "sclk idles low");
    let after: Vec<u32> = registers.iter().map(|r| rtl.read(register(*r))).collect();
    assert_eq!(after, at_reset);
    assert_eq!(rtl.read(register(spi_flash::STATUS)), 0, "not busy");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn any_register_sequence_agrees(ops in proptest::collection::vec(op(), 1..10)) {
        check(&ops);
    }
}
