//! The soft core's CSR requests carried onto the data plane's faster clock.
//!
//! The soft core runs on `core_clock`, the data plane on `clock`, `N`
//! times as fast; one PLL makes both and their rising edges align every
//! `N` data plane cycles (`weft_regs::SOFT_CORE_CLOCK_DIVISOR`), so the
//! crossing is synchronous and needs no synchronizer, only care that each
//! request happens once and each answer is seen once:
//!
//! - A flip-flop on `core_clock` toggles every core cycle; one on `clock`
//!   follows it a cycle later, so the two differ in exactly the first data
//!   plane cycle of each core cycle (`starting`).
//! - The core's request is steady for the whole core cycle; the data plane
//!   sees `write` and `read` only in its first cycle, so a register is
//!   written once and read once (a read may have side effects: the
//!   mailbox's).
//! - A target answers a read in the data plane cycle after it (the CSR bus
//!   protocol, [`crate::csr`]), still inside the core cycle when `N` ≥ 2.
//!   The answer is kept until the next core cycle starts, and registered
//!   on `core_clock` at the end of the core cycle, so the core sees
//!   `read_valid` in the core cycle after its `read`, as from any target
//!   on its own clock.

use rust_hdl::prelude::*;

use crate::csr::{CsrBus, CsrTarget};

/// Carries CSR accesses from the soft core's clock to the data plane's.
#[derive(LogicBlock, Default)]
pub struct CsrClockBridge {
    /// The data plane's clock.
    pub clock: Signal<In, Clock>,
    /// The soft core's clock: edge-aligned with `clock`, at an integer fraction of it.
    pub core_clock: Signal<In, Clock>,
    /// The soft core's requests, on `core_clock`.
    pub core: CsrTarget,
    /// The same requests to the data plane's registers, on `clock`.
    pub data_plane: CsrBus,
    phase: DFF<Bit>,
    seen_phase: DFF<Bit>,
    answered: DFF<Bit>,
    answer: DFF<Bits<32>>,
    core_read_valid: DFF<Bit>,
    core_read_data: DFF<Bits<32>>,
    starting: Signal<Local, Bit>,
}

impl Logic for CsrClockBridge {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, seen_phase, answered, answer);
        dff_setup!(self, core_clock, phase, core_read_valid, core_read_data);
        self.phase.d.next = !self.phase.q.val();
        self.seen_phase.d.next = self.phase.q.val();
        self.starting.next = self.phase.q.val() != self.seen_phase.q.val();

        self.data_plane.address.next = self.core.address.val();
        self.data_plane.write_data.next = self.core.write_data.val();
        self.data_plane.write.next = self.core.write.val() & self.starting.val();
        self.data_plane.read.next = self.core.read.val() & self.starting.val();

        if self.starting.val() {
            self.answered.d.next = false;
            self.answer.d.next = bits::<32>(0);
        }
        if self.data_plane.read_valid.val() {
            self.answered.d.next = true;
            self.answer.d.next = self.data_plane.read_data.val();
        }
        self.core_read_valid.d.next = self.answered.q.val() | self.data_plane.read_valid.val();
        self.core_read_data.d.next = self.answer.q.val() | self.data_plane.read_data.val();
        self.core.read_valid.next = self.core_read_valid.q.val();
        self.core.read_data.next = self.core_read_data.q.val();
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::driver::CycleDriver;

    /// One core cycle's request.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Access {
        Idle,
        Write(u32, u32),
        Read(u32),
    }

    /// What the data plane saw and the core got over a run.
    #[derive(Debug, Default, PartialEq)]
    struct Seen {
        /// Writes as the data plane's registers took them, in order.
        writes: Vec<(u32, u32)>,
        /// Reads the data plane's registers answered, in order.
        reads: Vec<u32>,
        /// Per core cycle: what the core's `read_valid` and `read_data`
        /// say in the next one (the answer to this cycle's read).
        answers: Vec<Option<u32>>,
    }

    /// Runs `accesses`, one per core cycle, through a bridge whose core
    /// clock is `1/divisor` of its data plane clock, against registers
    /// that answer a read in the next data plane cycle with its address
    /// plus what was last written there.
    fn run(accesses: &[Access], divisor: u64) -> Seen {
        let mut driver = CycleDriver::new(CsrClockBridge::default(), |b| &mut b.clock)
            .expect("well formed")
            .with_divided_clock(|b| &mut b.core_clock, divisor);
        // The core clock's first edge: from here each core cycle is `divisor` ticks.
        driver.tick().expect("settles");
        let mut registers: HashMap<u32, u32> = HashMap::new();
        let mut seen = Seen::default();
        let mut answering: Option<u32> = None;
        // Two more core cycles for the last answer.
        let plan: Vec<Access> = accesses
            .iter()
            .copied()
            .chain([Access::Idle, Access::Idle])
            .collect();
        for access in &plan {
            // The core's registered request, steady for its whole cycle.
            let b = driver.block();
            let (address, data, write, read) = match *access {
                Access::Idle => (0, 0, false, false),
                Access::Write(address, data) => (address, data, true, false),
                Access::Read(address) => (address, 0, false, true),
            };
            b.core.address.next = u64::from(address).into();
            b.core.write_data.next = u64::from(data).into();
            b.core.write.next = write;
            b.core.read.next = read;
            for _ in 0..divisor {
                // The registers' answer to last cycle's read.
                let b = driver.block();
                b.data_plane.read_valid.next = answering.is_some();
                b.data_plane.read_data.next = u64::from(answering.unwrap_or(0)).into();
                driver.settle().expect("settles");
                let b = driver.block();
                let address = b.data_plane.address.val().to_u32();
                answering = None;
                if b.data_plane.write.val() {
                    seen.writes
                        .push((address, b.data_plane.write_data.val().to_u32()));
                    registers.insert(address, b.data_plane.write_data.val().to_u32());
                }
                if b.data_plane.read.val() {
                    seen.reads.push(address);
                    answering = Some(address + registers.get(&address).copied().unwrap_or(0));
                }
                driver.tick().expect("settles");
            }
            // The answer the core-clock registers took at the edge just passed.
            let b = driver.block();
            seen.answers.push(
                b.core
                    .read_valid
                    .val()
                    .then(|| b.core.read_data.val().to_u32()),
            );
        }
        seen
    }

    /// The accesses and what a core on the data plane's own clock would see:
    /// each write once, each read once, its answer in the next core cycle.
    fn expected(accesses: &[Access]) -> Seen {
        let mut registers: HashMap<u32, u32> = HashMap::new();
        let mut seen = Seen::default();
        for access in accesses.iter().chain(&[Access::Idle, Access::Idle]) {
            let mut this = None;
            match *access {
                Access::Idle => {}
                Access::Write(address, data) => {
                    seen.writes.push((address, data));
                    registers.insert(address, data);
                }
                Access::Read(address) => {
                    seen.reads.push(address);
                    this = Some(address + registers.get(&address).copied().unwrap_or(0));
                }
            }
            seen.answers.push(this);
        }
        seen
    }

    fn accesses(seed: u64, count: usize) -> Vec<Access> {
        let mut x = seed;
        (0..count)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let address = ((x >> 40) as u32 & 0x7) << 2;
                match x >> 62 {
                    0 => Access::Idle,
                    1 => Access::Write(address, (x >> 8) as u32),
                    _ => Access::Read(address),
                }
            })
            .collect()
    }

    #[test]
    fn each_access_happens_once_and_each_answer_is_seen_in_the_next_core_cycle() {
        for divisor in [2, 3, 4] {
            for seed in [1, 2, 3, 0x5eed] {
                let accesses = accesses(seed, 64);
                assert_eq!(
                    run(&accesses, divisor),
                    expected(&accesses),
                    "1:{divisor}, seed {seed}"
                );
            }
        }
    }

    #[test]
    fn back_to_back_reads_of_one_register_each_get_their_own_answer() {
        let accesses = [
            Access::Write(8, 1),
            Access::Read(8),
            Access::Write(8, 2),
            Access::Read(8),
            Access::Read(8),
        ];
        let seen = run(&accesses, 2);
        assert_eq!(seen.reads, [8, 8, 8], "three reads, not six");
        assert_eq!(
            seen.answers,
            [None, Some(9), None, Some(10), Some(10), None, None]
        );
    }
}
