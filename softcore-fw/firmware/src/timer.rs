//! The machine timer driver (`weft_regs::soc::timer`, Privileged 20211203
//! §3.2.1): `mtime` is smoltcp's clock, `mtimecmp` the main loop's alarm.

use smoltcp::time::{Duration, Instant};
use weft_drivers::timer::SocTimer;
use weft_regs::soc::timer;
use weft_regs::SOFT_CORE_CLOCK_HZ;

use crate::mmio::{write, Mmio};

/// `mtime` ticks per microsecond: one per soft core clock cycle.
const TICKS_PER_MICROSECOND: u64 = SOFT_CORE_CLOCK_HZ as u64 / 1_000_000;
const _: () = assert!(TICKS_PER_MICROSECOND > 0);

/// The current `mtime`, read as weft-drivers' [`SocTimer`] reads it.
pub fn ticks() -> u64 {
    SocTimer::new(Mmio).ticks()
}

/// The time since reset, as smoltcp counts it.
pub fn now() -> Instant {
    Instant::from_micros((ticks() / TICKS_PER_MICROSECOND) as i64)
}

/// Makes the machine timer interrupt pending `after` from now, and not
/// before: `mtimecmp` is written low half all ones, high half, low half,
/// so that it never passes below `mtime` on the way (Privileged §3.2.1).
pub fn alarm_after(after: Duration) {
    let at = ticks().saturating_add(after.total_micros() * TICKS_PER_MICROSECOND);
    write(timer::MTIMECMP_LOW.address(0, 0), u32::MAX);
    write(timer::MTIMECMP_HIGH.address(0, 0), (at >> 32) as u32);
    write(timer::MTIMECMP_LOW.address(0, 0), at as u32);
}
