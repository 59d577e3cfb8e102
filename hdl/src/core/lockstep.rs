//! Lock-step comparison of the RTL core against the instruction-set
//! simulator: every retirement of the core must equal the ISS's next step.
//!
//! The two models differ in exactly two documented ways, which the
//! comparison bridges rather than hides (and one of pipelining, below):
//!
//! - **Interrupt timing.** The core decides at its commit stage which
//!   instruction an interrupt preempts; the ISS decides at the start of a
//!   step. Before each step the ISS's interrupt lines are set to what the
//!   core's commit stage saw for that retirement, so both make the decision
//!   from the same `mip`.
//! - **`mcycle`.** The ISS counts steps, the core clock cycles
//!   (`weft_iss::hart` documents this). A read of `mcycle`/`mcycleh`
//!   (or `cycle`/`cycleh`) is compared for its destination register only,
//!   and the core's value is copied into the ISS so that later
//!   instructions compute with the same number.
//!
//! The core commits a store in M, where its data port writes memory, and
//! reports it from W one cycle later. Each retirement is compared with
//! the write the port performed for it as well as with its trace record,
//! so a store that reaches memory other than as retired diverges at once;
//! and between the write and its retirement the core's memory is one
//! store ahead of the ISS's ([`Lockstep::retire_stores_in_flight`]
//! closes that gap before the two memories are compared).

use std::fmt;

use weft_iss::csr::{CYCLE, CYCLEH, MCYCLE, MCYCLEH};
use weft_iss::{decode, Hart, HarvardBus, Instruction, Interrupt, MemWrite, Retirement, Step};

use super::testbench::{BenchError, CoreBench, CoreUnderTest};

/// How the core and the ISS disagreed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Divergence {
    /// The test bench failed.
    Bench(BenchError),
    /// The two records of one retirement differ.
    Record {
        /// Retirements compared before this one.
        index: u64,
        /// The core's clock cycle.
        cycle: u64,
        /// The core's record.
        rtl: Box<Retirement>,
        /// The ISS's record.
        iss: Box<Retirement>,
    },
    /// The records agree, but the core's data port wrote memory other than
    /// the ISS's step stored (or wrote when it stored nothing, or the reverse).
    Store {
        /// Retirements compared before this one.
        index: u64,
        /// The core's clock cycle.
        cycle: u64,
        /// The retirement's PC.
        pc: u32,
        /// The write the core's data port performed for it.
        port: Option<MemWrite>,
        /// The ISS's store.
        iss: Option<MemWrite>,
    },
    /// The core retired something while the ISS waits in `wfi`.
    IssIdle {
        /// Retirements compared before this one.
        index: u64,
        /// The core's record.
        rtl: Box<Retirement>,
    },
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bench(e) => write!(f, "{e}"),
            Self::Record {
                index,
                cycle,
                rtl,
                iss,
            } => {
                let name = iss
                    .instruction
                    .and_then(|w| decode(w).ok())
                    .map_or("-", |i| i.mnemonic());
                write!(
                    f,
                    "retirement {index} (cycle {cycle}, {name} at {:#010x}) differs:\n  rtl: {rtl:?}\n  iss: {iss:?}",
                    iss.pc
                )
            }
            Self::Store {
                index,
                cycle,
                pc,
                port,
                iss,
            } => write!(
                f,
                "retirement {index} (cycle {cycle}, at {pc:#010x}): the data port wrote {port:?}, \
                 the ISS stored {iss:?}"
            ),
            Self::IssIdle { index, rtl } => write!(
                f,
                "retirement {index}: the core retired {rtl:?} while the ISS waits in wfi"
            ),
        }
    }
}

impl std::error::Error for Divergence {}

impl From<BenchError> for Divergence {
    fn from(e: BenchError) -> Self {
        Self::Bench(e)
    }
}

/// The core and the ISS, each on its own copy of the same memory: by
/// default the core on Rust memory models ([`CoreBench`]), or any other
/// [`CoreUnderTest`] such as the whole SoC.
pub struct Lockstep<R: CoreUnderTest = CoreBench<HarvardBus>> {
    rtl: R,
    iss: Hart<HarvardBus>,
    compared: u64,
}

impl Lockstep {
    /// Pairs a core on `rtl_bus` with `iss`; the core starts at the ISS's PC.
    /// The caller loads the same image into both buses.
    pub fn new(rtl_bus: HarvardBus, iss: Hart<HarvardBus>) -> Result<Self, Divergence> {
        Ok(Self {
            rtl: CoreBench::new(rtl_bus, iss.pc())?,
            iss,
            compared: 0,
        })
    }

    /// Drives the core's interrupt line `irq` (the ISS follows per retirement).
    pub fn set_interrupt(&mut self, irq: Interrupt, pending: bool) {
        self.rtl.set_interrupt(irq, pending);
    }
}

impl<R: CoreUnderTest> Lockstep<R> {
    /// Pairs the core under test `rtl` with `iss`; the caller has reset the
    /// core to the ISS's PC and loaded the same image into both.
    pub fn pair(rtl: R, iss: Hart<HarvardBus>) -> Self {
        Self {
            rtl,
            iss,
            compared: 0,
        }
    }

    /// The instruction-set simulator.
    pub fn iss(&self) -> &Hart<HarvardBus> {
        &self.iss
    }

    /// The core's test bench.
    pub fn rtl(&mut self) -> &mut R {
        &mut self.rtl
    }

    /// Retirements compared so far.
    pub fn compared(&self) -> u64 {
        self.compared
    }

    /// Runs the core one cycle; if it retired something, steps the ISS and
    /// compares. Returns the agreed retirement.
    pub fn cycle(&mut self) -> Result<Option<Retirement>, Divergence> {
        let Some(retired) = self.rtl.cycle()? else {
            return Ok(None);
        };
        let rtl = retired.retirement;
        for irq in Interrupt::BY_PRIORITY {
            self.iss
                .set_interrupt_pending(irq, retired.mip & irq.mask() != 0);
        }
        let index = self.compared;
        let mut iss = match self.iss.step() {
            Step::Retired(r) => r,
            Step::Idle => {
                return Err(Divergence::IssIdle {
                    index,
                    rtl: Box::new(rtl),
                })
            }
        };
        if reads_cycle_counter(iss.instruction) {
            if let (Some(mine), Some(theirs)) = (rtl.rd_write, iss.rd_write) {
                if mine.rd == theirs.rd {
                    self.iss.set_reg(mine.rd, mine.value);
                    iss.rd_write = Some(mine);
                }
            }
        }
        if rtl != iss {
            return Err(Divergence::Record {
                index,
                cycle: self.rtl.cycles(),
                rtl: Box::new(rtl),
                iss: Box::new(iss),
            });
        }
        if retired.stored != iss.mem_write {
            return Err(Divergence::Store {
                index,
                cycle: self.rtl.cycles(),
                pc: iss.pc,
                port: retired.stored,
                iss: iss.mem_write,
            });
        }
        self.compared += 1;
        Ok(Some(rtl))
    }

    /// Runs until no store the core's data port has written awaits its
    /// retirement, comparing what retires meanwhile: after it the core's
    /// memory and the ISS's hold the same stores, and may be compared.
    pub fn retire_stores_in_flight(&mut self) -> Result<(), Divergence> {
        while self.rtl.store_in_flight() {
            self.cycle()?;
        }
        Ok(())
    }

    /// Runs until the ISS waits in `wfi` with no enabled interrupt pending
    /// (a program's end), or `max_cycles` core cycles pass; returns whether
    /// the program ended.
    pub fn run_to_wfi(&mut self, max_cycles: u64) -> Result<bool, Divergence> {
        let start = self.rtl.cycles();
        while self.rtl.cycles() - start < max_cycles {
            self.cycle()?;
            let c = self.iss.csrs();
            if self.iss.is_waiting() && c.mip() & c.mie() == 0 {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Whether `word` is a CSR instruction on the cycle counter.
fn reads_cycle_counter(word: Option<u32>) -> bool {
    use Instruction as I;
    let csr = match word.map(decode) {
        Some(Ok(
            I::Csrrw { csr, .. }
            | I::Csrrs { csr, .. }
            | I::Csrrc { csr, .. }
            | I::Csrrwi { csr, .. }
            | I::Csrrsi { csr, .. }
            | I::Csrrci { csr, .. },
        )) => csr,
        _ => return false,
    };
    [MCYCLE, MCYCLEH, CYCLE, CYCLEH].contains(&csr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Retired;
    use weft_iss::encode as e;
    use weft_regs::DATA_RAM_BASE;

    /// A stand-in core: a second ISS whose trace records are its own
    /// steps, and whose data port writes `port_xor` into every store's value.
    struct Replay {
        hart: Hart<HarvardBus>,
        port_xor: u32,
        cycles: u64,
    }

    impl CoreUnderTest for Replay {
        fn cycle(&mut self) -> Result<Option<Retired>, BenchError> {
            self.cycles += 1;
            let Step::Retired(retirement) = self.hart.step() else {
                return Ok(None);
            };
            let stored = retirement.mem_write.map(|w| MemWrite {
                value: w.value ^ self.port_xor,
                ..w
            });
            Ok(Some(Retired {
                retirement,
                mip: 0,
                stored,
            }))
        }

        fn cycles(&self) -> u64 {
            self.cycles
        }

        fn store_in_flight(&self) -> bool {
            false
        }
    }

    fn hart(program: &[u32]) -> Hart<HarvardBus> {
        let mut hart = Hart::new(HarvardBus::reference());
        hart.bus_mut().write_words(0, program).expect("fits");
        hart
    }

    /// Lock-steps `program` against a stand-in core whose port writes
    /// `port_xor` into stored values, until the ISS waits in `wfi`.
    fn run(program: &[u32], port_xor: u32) -> Result<bool, Divergence> {
        let core = Replay {
            hart: hart(program),
            port_xor,
            cycles: 0,
        };
        Lockstep::pair(core, hart(program)).run_to_wfi(100)
    }

    #[test]
    fn a_store_written_other_than_retired_diverges() {
        // sh stores rs2[15:0] (Unprivileged 20191213 §2.6): 0x5678 at the
        // data RAM's base. A port that writes 0x5778 while the trace
        // reports 0x5678 (as a misplaced lane would) diverges at the sh.
        let [li0, li1] = e::li(2, 0x1234_5678);
        let program = [
            e::lui(1, DATA_RAM_BASE >> 12),
            li0,
            li1,
            e::sh(2, 1, 0),
            e::wfi(),
        ];
        assert_eq!(run(&program, 0), Ok(true));
        let sh = |value| {
            Some(MemWrite {
                addr: DATA_RAM_BASE,
                width: weft_iss::Width::Half,
                value,
            })
        };
        assert_eq!(
            run(&program, 0x100),
            Err(Divergence::Store {
                index: 3,
                cycle: 4,
                pc: 12,
                port: sh(0x5778),
                iss: sh(0x5678),
            })
        );
    }
}
