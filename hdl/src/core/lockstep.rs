//! Lock-step comparison of the RTL core against the instruction-set
//! simulator: every retirement of the core must equal the ISS's next step.
//!
//! The two models differ in exactly two documented ways, which the
//! comparison bridges rather than hides:
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

use std::fmt;

use weft_iss::csr::{CYCLE, CYCLEH, MCYCLE, MCYCLEH};
use weft_iss::{decode, Hart, HarvardBus, Instruction, Interrupt, Retirement, Step};

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
        self.compared += 1;
        Ok(Some(rtl))
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
