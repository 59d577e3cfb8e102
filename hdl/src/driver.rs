//! The single-thread cycle driver: runs a rust-hdl block without `Simulation`'s threads.
//!
//! rust-hdl's `Simulation` hands control between testbench threads on every
//! clock edge, which caps it near 8 k cycles/s on a 32-bit counter
//! (DESIGN.md). Long tests and benchmarks instead drive the block from the
//! calling thread: set inputs, settle the combinational logic
//! (`update_all` until nothing changes), raise the clock, settle, lower the
//! clock, settle. That is the same sequence of evaluations `Simulation`
//! performs per clock period, and a test here holds the two to the same
//! outputs on the same stimulus.

use std::io::Write;

use rust_hdl::core::vcd_probe::VCDProbe;
use rust_hdl::prelude::*;

/// How many `update_all` passes a settle may take before the logic is
/// declared oscillating; `Simulation` uses the same bound.
const MAX_SETTLE_PASSES: usize = 100;

/// Picoseconds per half clock period written to a VCD trace (a 250 MHz
/// clock); a `Simulation` set beside the driver clocks at it too.
pub const HALF_PERIOD_PS: u64 = 2_000;

/// Why a driven block could not be advanced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriveError {
    /// The combinational logic did not stop changing: a loop or oscillation.
    DidNotSettle {
        /// The clock cycle during which it happened (0 for a block settled without a clock).
        cycle: u64,
    },
    /// rust-hdl's connection check rejected the block (an undriven or multiply driven signal, a latch).
    Unconnected(String),
    /// Writing the VCD trace failed.
    Trace(String),
}

impl std::fmt::Display for DriveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DriveError::DidNotSettle { cycle } => write!(
                f,
                "logic did not settle within {MAX_SETTLE_PASSES} passes in cycle {cycle}: a combinational loop"
            ),
            DriveError::Unconnected(why) => write!(f, "block failed rust-hdl's connection check: {why}"),
            DriveError::Trace(why) => write!(f, "writing the VCD trace failed: {why}"),
        }
    }
}

impl std::error::Error for DriveError {}

/// Propagates input changes through a block's combinational logic until
/// nothing changes; a block without a clock needs nothing more.
pub fn settle<B: Block>(block: &mut B) -> Result<(), DriveError> {
    for _ in 0..MAX_SETTLE_PASSES {
        block.update_all();
        if !block.has_changed() {
            return Ok(());
        }
    }
    Err(DriveError::DidNotSettle { cycle: 0 })
}

/// Picks one of a block's clock inputs.
pub type ClockInput<B> = fn(&mut B) -> &mut Signal<In, Clock>;

/// Runs a block clock cycle by clock cycle on the calling thread.
pub struct CycleDriver<B: Block> {
    block: B,
    clock: ClockInput<B>,
    divided: Option<(ClockInput<B>, u64)>,
    cycles: u64,
    trace: Option<VCDProbe<Box<dyn Write + Send>>>,
}

impl<B: Block> CycleDriver<B> {
    /// Connects and checks `block`, settles it with the clock low, and
    /// returns a driver whose `clock` function picks the block's clock input.
    pub fn new(mut block: B, clock: ClockInput<B>) -> Result<Self, DriveError> {
        block.connect_all();
        check_all(&block).map_err(|err| DriveError::Unconnected(format!("{err:?}")))?;
        clock(&mut block).next = Clock::from(false);
        let mut driver = CycleDriver {
            block,
            clock,
            divided: None,
            cycles: 0,
            trace: None,
        };
        driver.settle()?;
        Ok(driver)
    }

    /// Drives a second clock input, `clock`, at 1/`divisor` of the first and
    /// edge-aligned with it, as one PLL makes both: it rises in the same
    /// settle as the first clock at the end of cycles 0, `divisor`,
    /// 2·`divisor`…, so registers on both sample what came before the edge.
    ///
    /// # Panics
    ///
    /// If `divisor` is below 2.
    pub fn with_divided_clock(mut self, clock: ClockInput<B>, divisor: u64) -> Self {
        assert!(divisor >= 2, "a divided clock is slower than the first");
        self.divided = Some((clock, divisor));
        self
    }

    /// Records every signal of the block to `writer` as a VCD trace from now on.
    pub fn trace_to(&mut self, writer: Box<dyn Write + Send>) {
        let vcd = write_vcd_header(writer, &self.block);
        self.trace = Some(write_vcd_dump(vcd, &self.block));
    }

    /// The block, to set inputs (`.next`) and read outputs (`.val()`).
    pub fn block(&mut self) -> &mut B {
        &mut self.block
    }

    /// The block, to read outputs (`.val()`) without changing it.
    pub fn block_ref(&self) -> &B {
        &self.block
    }

    /// Clock cycles completed so far.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Propagates input changes through the combinational logic.
    pub fn settle(&mut self) -> Result<(), DriveError> {
        settle(&mut self.block).map_err(|_| DriveError::DidNotSettle { cycle: self.cycles })
    }

    /// Settles the inputs set so far, then runs one full clock period
    /// (rising edge, settle, falling edge, settle).
    pub fn tick(&mut self) -> Result<(), DriveError> {
        self.settle()?;
        for level in [true, false] {
            (self.clock)(&mut self.block).next = Clock::from(level);
            if let (Some((divided, divisor)), true) = (self.divided, level) {
                // High for the first half of its period, low for the rest.
                divided(&mut self.block).next =
                    Clock::from(self.cycles % divisor < divisor.div_ceil(2));
            }
            self.settle()?;
            self.record(level)?;
        }
        self.cycles += 1;
        Ok(())
    }

    /// Runs `count` clock periods with the inputs unchanged.
    pub fn run(&mut self, count: u64) -> Result<(), DriveError> {
        (0..count).try_for_each(|_| self.tick())
    }

    /// Gives the block back, for instance to inspect it after a run.
    pub fn into_block(self) -> B {
        self.block
    }

    fn record(&mut self, rising: bool) -> Result<(), DriveError> {
        let Some(vcd) = self.trace.take() else {
            return Ok(());
        };
        let mut vcd = vcd;
        let half_periods = 2 * self.cycles + if rising { 1 } else { 2 };
        vcd.timestamp(half_periods * HALF_PERIOD_PS)
            .map_err(|err| DriveError::Trace(err.to_string()))?;
        self.trace = Some(write_vcd_change(vcd, &self.block));
        Ok(())
    }
}

/// Runs `f` on a thread with a 64 MiB stack and returns what it returns
/// (a panic in it carries on in the caller): a table of many entries, or
/// the soft core's SoC, is a struct of a few hundred KiB, which
/// unoptimised builds copy on the stack more than the 2 MiB of a test
/// thread hold. For tests and tools that build such blocks.
pub fn on_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(f)
        .expect("the machine can start a thread")
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A counter with enable and a registered output: enough state and
    /// combinational logic to expose any difference in evaluation order.
    #[derive(LogicBlock, Default)]
    struct EnabledCounter {
        clock: Signal<In, Clock>,
        enable: Signal<In, Bit>,
        count: Signal<Out, Bits<16>>,
        doubled: Signal<Out, Bits<16>>,
        state: DFF<Bits<16>>,
    }

    impl Logic for EnabledCounter {
        #[hdl_gen]
        fn update(&mut self) {
            dff_setup!(self, clock, state);
            self.count.next = self.state.q.val();
            self.doubled.next = self.state.q.val() + self.state.q.val();
            if self.enable.val() {
                self.state.d.next = self.state.q.val() + 1;
            }
        }
    }

    /// An enable pattern with runs of both levels (a fixed LCG, so both runs see the same).
    fn enable_pattern(cycles: usize) -> Vec<bool> {
        let mut x: u32 = 0x2545_f491;
        (0..cycles)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                !(x >> 16).is_multiple_of(3)
            })
            .collect()
    }

    fn driven_outputs(pattern: &[bool]) -> Vec<(u64, u64)> {
        let mut driver = CycleDriver::new(EnabledCounter::default(), |b| &mut b.clock)
            .expect("counter is well formed");
        pattern
            .iter()
            .map(|&enable| {
                driver.block().enable.next = enable;
                driver.tick().expect("counter settles");
                let b = driver.block();
                (b.count.val().to_u64(), b.doubled.val().to_u64())
            })
            .collect()
    }

    fn simulated_outputs(pattern: &[bool]) -> Vec<(u64, u64)> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut sim: Simulation<EnabledCounter> = Simulation::new();
        sim.add_clock(HALF_PERIOD_PS, |x: &mut Box<EnabledCounter>| {
            x.clock.next = !x.clock.val()
        });
        let stimulus = pattern.to_vec();
        let record = seen.clone();
        sim.add_testbench(move |mut sim: Sim<EnabledCounter>| {
            let mut x = sim.init()?;
            for &enable in &stimulus {
                x.enable.next = enable;
                // Wait for the rising edge, then the falling edge: one full period.
                x = sim.watch(|x| x.clock.val().clk, x)?;
                x = sim.watch(|x| !x.clock.val().clk, x)?;
                record
                    .lock()
                    .expect("only this testbench records")
                    .push((x.count.val().to_u64(), x.doubled.val().to_u64()));
            }
            sim.done(x)
        });
        sim.run(Box::new(EnabledCounter::default()), 1_000_000_000)
            .expect("simulation runs to completion");
        let outputs = seen.lock().expect("simulation has finished").clone();
        outputs
    }

    #[test]
    fn single_thread_driver_agrees_with_rust_hdl_simulation() {
        let pattern = enable_pattern(200);
        let driven = driven_outputs(&pattern);
        // Independent expectation: the count after n cycles is the number
        // of enabled cycles among the first n.
        let expected: Vec<u64> = pattern
            .iter()
            .scan(0u64, |count, &enable| {
                *count += u64::from(enable);
                Some(*count)
            })
            .collect();
        assert_eq!(
            driven.iter().map(|(count, _)| *count).collect::<Vec<_>>(),
            expected
        );
        assert_eq!(driven, simulated_outputs(&pattern));
    }

    #[test]
    fn trace_records_every_edge() {
        #[derive(Clone, Default)]
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.lock().expect("single writer").extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let sink = Shared::default();
        let mut driver = CycleDriver::new(EnabledCounter::default(), |b| &mut b.clock)
            .expect("counter is well formed");
        driver.trace_to(Box::new(sink.clone()));
        driver.block().enable.next = true;
        driver.run(3).expect("counter settles");
        let text =
            String::from_utf8(sink.0.lock().expect("run finished").clone()).expect("VCD is text");
        assert!(text.contains("$enddefinitions"));
        for edge in 1..=6 {
            assert!(
                text.contains(&format!("#{}", edge * HALF_PERIOD_PS)),
                "edge {edge} missing"
            );
        }
        assert_eq!(driver.cycles(), 3);
        assert_eq!(driver.block().count.val().to_u64(), 3);
    }

    /// A counter on one clock, and a register on a second clock that
    /// samples it: what the second holds shows when its edges come.
    #[derive(LogicBlock, Default)]
    struct TwoClocks {
        clock: Signal<In, Clock>,
        slow_clock: Signal<In, Clock>,
        sampled: Signal<Out, Bits<16>>,
        count: DFF<Bits<16>>,
        slow: DFF<Bits<16>>,
    }

    impl Logic for TwoClocks {
        #[hdl_gen]
        fn update(&mut self) {
            dff_setup!(self, clock, count);
            dff_setup!(self, slow_clock, slow);
            self.count.d.next = self.count.q.val() + 1;
            self.slow.d.next = self.count.q.val();
            self.sampled.next = self.slow.q.val();
        }
    }

    #[test]
    fn a_divided_clock_rises_with_the_first_every_divisor_cycles_and_samples_before_it() {
        for divisor in [2, 3, 4] {
            let mut driver = CycleDriver::new(TwoClocks::default(), |b| &mut b.clock)
                .expect("well formed")
                .with_divided_clock(|b| &mut b.slow_clock, divisor);
            let mut seen = Vec::new();
            for _ in 0..4 * divisor {
                driver.tick().expect("settles");
                seen.push(driver.block().sampled.val().to_u64());
            }
            // Edges at the end of cycles 0, d, 2d, 3d, each taking the
            // count as it was before that edge: the cycle's number.
            let expected: Vec<u64> = (0..4 * divisor).map(|k| k - k % divisor).collect();
            assert_eq!(seen, expected, "1:{divisor}");
        }
    }
}
