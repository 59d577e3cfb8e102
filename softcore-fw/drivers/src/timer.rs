//! [`Timer`] over the machine timer's `mtime` (`weft_regs::soc::timer`,
//! RISC-V Privileged 20211203 §3.2.1), which counts soft core clock cycles.

use weft_fabric::hw::Timer;
use weft_regs::soc::timer;
use weft_regs::SOFT_CORE_CLOCK_HZ;

use crate::CsrBus;

/// Nanoseconds per `mtime` tick.
const NS_PER_TICK: u64 = 1_000_000_000 / SOFT_CORE_CLOCK_HZ as u64;
const _: () = assert!(
    NS_PER_TICK * SOFT_CORE_CLOCK_HZ as u64 == 1_000_000_000,
    "the soft core clock divides a second into whole nanoseconds"
);

/// The machine timer as the fabric manager's clock.
pub struct SocTimer<B> {
    bus: B,
}

impl<B: CsrBus> SocTimer<B> {
    /// The timer whose registers `bus` reaches.
    pub fn new(bus: B) -> Self {
        SocTimer { bus }
    }

    /// The current `mtime`. The low half carries into the high half between
    /// two loads, so the high half is read on both sides of the low one and
    /// the pair retried if it moved (Privileged §3.2.1).
    pub fn ticks(&mut self) -> u64 {
        loop {
            let high = self.bus.read32(timer::MTIME_HIGH.address(0, 0));
            let low = self.bus.read32(timer::MTIME_LOW.address(0, 0));
            if self.bus.read32(timer::MTIME_HIGH.address(0, 0)) == high {
                return u64::from(high) << 32 | u64::from(low);
            }
        }
    }
}

impl<B: CsrBus> Timer for SocTimer<B> {
    fn now_ns(&mut self) -> u64 {
        self.ticks().saturating_mul(NS_PER_TICK)
    }

    fn wait_until_ns(&mut self, deadline_ns: u64) {
        while self.now_ns() < deadline_ns {
            core::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mtime` that advances by `step` ticks on every read of its low half.
    struct Counting {
        mtime: u64,
        step: u64,
        reads: usize,
    }

    impl CsrBus for Counting {
        fn read32(&mut self, address: u32) -> u32 {
            self.reads += 1;
            if address == timer::MTIME_LOW.address(0, 0) {
                let low = self.mtime as u32;
                self.mtime += self.step;
                low
            } else if address == timer::MTIME_HIGH.address(0, 0) {
                (self.mtime >> 32) as u32
            } else {
                panic!("the timer reads only mtime, not {address:#x}")
            }
        }

        fn write32(&mut self, address: u32, _value: u32) {
            panic!("the clock writes nothing, got a write to {address:#x}");
        }
    }

    #[test]
    fn a_carry_between_the_halves_is_read_again() {
        // The low half wraps right after it is read: the first pair would
        // read 0x1_ffff_fff0 as 0x0_ffff_fff0 if the high half were not re-read.
        let mut timer = SocTimer::new(Counting {
            mtime: 0xffff_fff0,
            step: 0x20,
            reads: 0,
        });
        assert_eq!(timer.ticks(), 0x1_0000_0010);
        assert_eq!(timer.bus.reads, 6, "one retry");
    }

    #[test]
    fn nanoseconds_follow_the_soft_core_clock() {
        let mut timer = SocTimer::new(Counting {
            mtime: u64::from(SOFT_CORE_CLOCK_HZ),
            step: 0,
            reads: 0,
        });
        assert_eq!(timer.now_ns(), 1_000_000_000, "one second of cycles");
    }

    #[test]
    fn waiting_returns_once_the_deadline_passed() {
        let mut timer = SocTimer::new(Counting {
            mtime: 0,
            step: 1,
            reads: 0,
        });
        timer.wait_until_ns(100 * NS_PER_TICK);
        assert!(timer.ticks() >= 100);
    }
}
