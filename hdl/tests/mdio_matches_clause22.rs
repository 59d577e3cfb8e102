//! The RTL MDIO master (`weft_hdl::soc::MdioMaster`) against a model of
//! a PHY's management interface written from IEEE 802.3 clause 22, not
//! from the master: the model watches MDC and MDIO as a PHY does, takes
//! a frame after 32 preamble ones (§22.2.4.5.1), checks its start of
//! frame, operation code and, for a write, turnaround (§22.2.4.5.2–.7),
//! answers a read at its own address by driving the turnaround's 0 and
//! the data within 300 ns of each MDC rising edge (§22.3.4.2), and
//! records a write. It also holds the line to the standard's timing: MDC
//! high and low at least 160 ns, a period of at least 400 ns
//! (§22.2.2.13), the master's MDIO stable 10 ns before and after each
//! rising edge (§22.3.4.1), and nobody driving against the PHY.

use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::driver::CycleDriver;
use weft_hdl::soc::MdioMaster;
use weft_regs::soc::mdio;
use weft_regs::SOFT_CORE_CLOCK_HZ;

/// Nanoseconds per core clock cycle (8 at the reference 125 MHz).
const NS_PER_CYCLE: u64 = 1_000_000_000 / SOFT_CORE_CLOCK_HZ as u64;

/// Cycles a frame may take before the test calls the master hung: 64
/// MDC periods at the slowest divisor, with room.
const MAX_CYCLES_PER_FRAME: u64 = 64 * 2 * 256 + 1_000;

/// Where the PHY model is in a frame.
#[derive(Clone, Copy, Debug)]
enum Phase {
    /// Counting ones of the preamble.
    Preamble { ones: u32 },
    /// Taking ST, OP, PHYAD and REGAD, 14 bits.
    Header { bits: u32, count: u32 },
    /// A frame for another PHY or a bad one: let `left` bits pass.
    Skip { left: u32 },
    /// Taking a write's turnaround and data, 18 bits.
    WriteTail { register: u8, bits: u32, count: u32 },
    /// Answering a read: rising edges after the register address.
    ReadOut { value: u16, edge: u32 },
}

/// A PHY at one address on the MDIO line, registers of 16 bits.
struct Phy {
    address: u8,
    registers: [u16; 32],
    writes: Vec<(u8, u16)>,
    reads: Vec<u8>,
    /// Cycles from an MDC rising edge to the PHY's new MDIO level.
    delay: u64,
    phase: Phase,
    drive: Option<bool>,
    pending: Option<(u64, Option<bool>)>,
    mdc: bool,
    last_rise: Option<u64>,
    last_fall: Option<u64>,
    master: Option<bool>,
    master_changed: u64,
    rises: u64,
    errors: Vec<String>,
}

impl Phy {
    fn new(address: u8, registers: [u16; 32], delay: u64) -> Self {
        Phy {
            address,
            registers,
            writes: Vec::new(),
            reads: Vec::new(),
            delay,
            phase: Phase::Preamble { ones: 0 },
            drive: None,
            pending: None,
            mdc: false,
            last_rise: None,
            last_fall: None,
            master: None,
            master_changed: 0,
            rises: 0,
            errors: Vec::new(),
        }
    }

    fn error(&mut self, cycle: u64, what: String) {
        if self.errors.len() < 8 {
            self.errors.push(format!("cycle {cycle}: {what}"));
        }
    }

    /// One cycle of the line: the master's pins as they are in it. Returns
    /// MDIO's level (the pull-up's 1 when nobody drives).
    fn cycle(&mut self, cycle: u64, mdc: bool, out: bool, enable: bool) -> bool {
        if let Some((due, level)) = self.pending {
            if cycle >= due {
                self.drive = level;
                self.pending = None;
            }
        }
        let master = enable.then_some(out);
        if master != self.master {
            // §22.3.4.1: hold 10 ns after the rising edge.
            if let Some(rise) = self.last_rise {
                if self.mdc && (cycle - rise) * NS_PER_CYCLE < 10 {
                    self.error(
                        cycle,
                        "the master changed MDIO within 10 ns of MDC rising".into(),
                    );
                }
            }
            self.master = master;
            self.master_changed = cycle;
        }
        let line = match (master, self.drive) {
            (Some(m), Some(p)) => {
                self.error(
                    cycle,
                    format!("the master drives {m} against the PHY's {p}"),
                );
                m && p
            }
            (Some(level), None) | (None, Some(level)) => level,
            (None, None) => true,
        };
        if mdc && !self.mdc {
            self.rise(cycle, line, master.is_some());
        }
        if !mdc && self.mdc {
            if let Some(rise) = self.last_rise {
                if (cycle - rise) * NS_PER_CYCLE < 160 {
                    self.error(cycle, "MDC high for less than 160 ns".into());
                }
            }
            self.last_fall = Some(cycle);
        }
        self.mdc = mdc;
        line
    }

    /// An MDC rising edge with MDIO at `level`.
    fn rise(&mut self, cycle: u64, level: bool, master_drives: bool) {
        self.rises += 1;
        if let Some(fall) = self.last_fall {
            if (cycle - fall) * NS_PER_CYCLE < 160 {
                self.error(cycle, "MDC low for less than 160 ns".into());
            }
        }
        if let Some(rise) = self.last_rise {
            if (cycle - rise) * NS_PER_CYCLE < 400 {
                self.error(cycle, "an MDC period shorter than 400 ns".into());
            }
        }
        if master_drives && (cycle - self.master_changed) * NS_PER_CYCLE < 10 {
            self.error(cycle, "MDIO changed within 10 ns before MDC rose".into());
        }
        self.last_rise = Some(cycle);
        let bit = u32::from(level);
        self.phase = match self.phase {
            Phase::Preamble { ones } if level => Phase::Preamble { ones: ones + 1 },
            // The start of frame's 0 after a whole preamble.
            Phase::Preamble { ones } if ones >= 32 => Phase::Header { bits: 0, count: 1 },
            Phase::Preamble { .. } => Phase::Preamble { ones: 0 },
            Phase::Header { bits, count } if count + 1 < 14 => Phase::Header {
                bits: bits << 1 | bit,
                count: count + 1,
            },
            Phase::Header { bits, .. } => self.header(cycle, bits << 1 | bit),
            Phase::Skip { left } if left > 1 => Phase::Skip { left: left - 1 },
            Phase::Skip { .. } => Phase::Preamble { ones: 0 },
            Phase::WriteTail {
                register,
                bits,
                count,
            } if count + 1 < 18 => Phase::WriteTail {
                register,
                bits: bits << 1 | bit,
                count: count + 1,
            },
            Phase::WriteTail { register, bits, .. } => {
                let bits = bits << 1 | bit;
                if bits >> 16 == 0b10 {
                    let value = bits as u16;
                    self.registers[usize::from(register)] = value;
                    self.writes.push((register, value));
                } else {
                    self.error(cycle, format!("a write's turnaround {:02b}", bits >> 16));
                }
                Phase::Preamble { ones: 0 }
            }
            Phase::ReadOut { value, edge } => {
                if master_drives {
                    self.error(
                        cycle,
                        "the master drives MDIO in a read's turnaround or data".into(),
                    );
                }
                // After this edge: the turnaround's 0, then D15..D0, then release.
                let next = match edge {
                    0 => Some(false),
                    1..=16 => Some(value >> (16 - edge) & 1 == 1),
                    _ => None,
                };
                self.pending = Some((cycle + self.delay, next));
                if edge < 17 {
                    Phase::ReadOut {
                        value,
                        edge: edge + 1,
                    }
                } else {
                    Phase::Preamble { ones: 0 }
                }
            }
        };
    }

    /// ST, OP, PHYAD, REGAD taken (Table 22-12): what follows.
    fn header(&mut self, cycle: u64, bits: u32) -> Phase {
        let start = bits >> 12;
        let op = bits >> 10 & 0b11;
        let phy = (bits >> 5 & 0x1F) as u8;
        let register = (bits & 0x1F) as u8;
        if start != 0b01 {
            self.error(cycle, format!("start of frame {start:02b}"));
            return Phase::Skip { left: 18 };
        }
        if phy != self.address {
            return Phase::Skip { left: 18 };
        }
        match op {
            0b01 => Phase::WriteTail {
                register,
                bits: 0,
                count: 0,
            },
            0b10 => {
                self.reads.push(register);
                Phase::ReadOut {
                    value: self.registers[usize::from(register)],
                    edge: 0,
                }
            }
            _ => {
                self.error(cycle, format!("operation code {op:02b}"));
                Phase::Skip { left: 18 }
            }
        }
    }
}

/// The master on the single-thread driver with the PHY model on its pins.
struct Bench {
    driver: CycleDriver<MdioMaster>,
    phy: Phy,
}

impl Bench {
    fn new(phy: Phy) -> Self {
        let mut driver =
            CycleDriver::new(MdioMaster::new(), |m| &mut m.clock).expect("the master connects");
        driver.block().reset.next = true;
        driver.tick().expect("settles");
        driver.block().reset.next = false;
        let mut bench = Bench { driver, phy };
        bench.tick();
        bench
    }

    fn tick(&mut self) {
        self.driver.settle().expect("settles");
        let cycle = self.driver.cycles();
        let m = self.driver.block();
        let (mdc, out, enable) = (m.mdc.val(), m.mdio_out.val(), m.mdio_out_enable.val());
        m.mdio_in.next = self.phy.cycle(cycle, mdc, out, enable);
        self.driver.tick().expect("the master settles");
    }

    fn access(&mut self, register: weft_regs::Register, write: Option<u32>) -> u32 {
        let bus = &mut self.driver.block().bus;
        bus.address.next = register.address(0, 0).to_bits();
        bus.read.next = write.is_none();
        bus.write.next = write.is_some();
        bus.write_data.next = write.unwrap_or(0).to_bits();
        self.tick();
        let bus = &mut self.driver.block().bus;
        bus.read.next = false;
        bus.write.next = false;
        self.driver.settle().expect("settles");
        self.driver.block().bus.read_data.val().to_u32()
    }

    /// One frame: COMMAND, then STATUS polled until BUSY clears. Returns
    /// READ_DATA and STATUS.
    fn frame(&mut self, phy: u8, register: u8, write: Option<u16>) -> (u16, u32) {
        let command = mdio::PHY.encode(u32::from(phy))
            | mdio::REGISTER.encode(u32::from(register))
            | write.map_or(0, |v| {
                mdio::WRITE.encode(1) | mdio::DATA.encode(u32::from(v))
            });
        self.access(mdio::COMMAND, Some(command));
        let start = self.driver.cycles();
        loop {
            let status = self.access(mdio::STATUS, None);
            if mdio::BUSY.decode(status) == 0 {
                let data = self.access(mdio::READ_DATA, None) as u16;
                return (data, status);
            }
            assert!(
                self.driver.cycles() - start < MAX_CYCLES_PER_FRAME,
                "the frame never ended"
            );
        }
    }
}

fn clean(bench: &Bench) -> Result<(), TestCaseError> {
    prop_assert!(bench.phy.errors.is_empty(), "{:?}", bench.phy.errors);
    Ok(())
}

#[test]
fn a_write_then_a_read_reach_the_phy_with_64_mdc_periods_each() {
    let mut registers = [0u16; 32];
    registers[2] = 0x2000;
    let mut bench = Bench::new(Phy::new(3, registers, 37));
    let (_, status) = bench.frame(3, 9, Some(0x0300));
    assert_eq!(status, 0, "a write is never 'not answered'");
    assert_eq!(bench.phy.writes, [(9, 0x0300)]);
    assert_eq!(bench.phy.rises, 64);
    assert_eq!(bench.frame(3, 2, None), (0x2000, 0));
    assert_eq!(bench.phy.rises, 128);
    assert_eq!(bench.frame(3, 9, None), (0x0300, 0));
    // Nobody at address 4: the pulled-up line reads all ones.
    let (data, status) = bench.frame(4, 2, None);
    assert_eq!((data, mdio::NO_ANSWER.decode(status)), (0xFFFF, 1));
    assert_eq!(bench.phy.reads, [2, 9]);
    assert!(bench.phy.errors.is_empty(), "{:?}", bench.phy.errors);
    // Idle: MDC low, MDIO released.
    bench.driver.settle().expect("settles");
    let m = bench.driver.block();
    assert!(!m.mdc.val() && !m.mdio_out_enable.val());
}

#[test]
fn a_command_while_busy_is_ignored_and_the_divisor_sets_mdc() {
    let mut bench = Bench::new(Phy::new(1, [0; 32], 0));
    assert_eq!(bench.access(mdio::CONTROL, None), mdio::DIVISOR_RESET);
    bench.access(mdio::CONTROL, Some(40));
    let write = mdio::PHY.encode(1) | mdio::REGISTER.encode(5) | mdio::WRITE.encode(1) | 0xBEEF;
    bench.access(mdio::COMMAND, Some(write));
    assert_eq!(mdio::BUSY.decode(bench.access(mdio::STATUS, None)), 1);
    bench.access(mdio::COMMAND, Some(write ^ 0xFFFF));
    bench.access(mdio::CONTROL, Some(0));
    assert_eq!(
        bench.access(mdio::CONTROL, None),
        40,
        "CONTROL holds while busy"
    );
    let start = bench.driver.cycles();
    while mdio::BUSY.decode(bench.access(mdio::STATUS, None)) == 1 {}
    // 64 periods and the idle one, 2 (40 + 1) cycles each, give or take the polls.
    let took = bench.driver.cycles() - start;
    assert!(
        (65 * 82 - 10..=65 * 82 + 10).contains(&took),
        "{took} cycles"
    );
    assert_eq!(bench.phy.writes, [(5, 0xBEEF)]);
    assert!(bench.phy.errors.is_empty(), "{:?}", bench.phy.errors);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Frames to any address, register and data, at any PHY output delay
    /// the standard allows and any MDC no faster than 2.5 MHz: writes at
    /// the PHY's address land in its registers, reads there return them,
    /// reads elsewhere find nobody, and the line keeps clause 22's timing.
    #[test]
    fn frames_do_what_clause_22_says(
        address in 0u8..32,
        registers in prop::array::uniform32(any::<u16>()),
        delay_ns in 0u64..=300,
        divisor in mdio::DIVISOR_RESET..=mdio::DIVISOR_RESET + 8,
        frames in prop::collection::vec((any::<bool>(), 0u8..32, any::<Option<u16>>()), 1..5),
    ) {
        let mut bench = Bench::new(Phy::new(address, registers, delay_ns / NS_PER_CYCLE));
        bench.access(mdio::CONTROL, Some(divisor));
        let mut expected = registers;
        let mut writes = Vec::new();
        for (here, register, write) in frames {
            let phy = if here { address } else { address ^ 0b10101 };
            let (data, status) = bench.frame(phy, register, write);
            match (here, write) {
                (true, Some(value)) => {
                    expected[usize::from(register)] = value;
                    writes.push((register, value));
                }
                (true, None) => {
                    prop_assert_eq!(data, expected[usize::from(register)]);
                    prop_assert_eq!(status, 0);
                }
                (false, None) => prop_assert_eq!((data, status), (0xFFFF, 0b10)),
                (false, Some(_)) => {}
            }
            clean(&bench)?;
        }
        prop_assert_eq!(&bench.phy.writes, &writes);
        prop_assert_eq!(bench.phy.registers, expected);
    }
}
