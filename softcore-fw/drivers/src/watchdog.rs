//! The SoC's watchdog (`weft_regs::soc::watchdog`): the only thing that
//! resets the soft core. The boot loader arms it before it starts an image
//! on trial, so that a trial that hangs before it checks in is reset and
//! booted back from; the firmware disarms it when the trial checks in, and
//! arms it with a short timeout to carry out a requested reset.

use weft_regs::soc::watchdog;
use weft_regs::SOFT_CORE_CLOCK_HZ;

use crate::CsrBus;

/// The `LOAD` value that makes the watchdog fire `ms` milliseconds after
/// it is armed, at the reference soft core clock (`LOAD + 1` cycles; the
/// longest, `u32::MAX` cycles, is 34 s).
pub const fn load_for_ms(ms: u32) -> u32 {
    SOFT_CORE_CLOCK_HZ / 1_000 * ms
}

/// Makes the watchdog fire `LOAD + 1` = `load + 1` cycles from now,
/// whether it ran before or not: `LOAD` first, then `CONTROL.ENABLE`
/// (which reloads the count only when it was clear), then a kick (which
/// reloads it when it was already set).
pub fn arm<B: CsrBus>(bus: &mut B, load: u32) {
    bus.write32(watchdog::LOAD.address(0, 0), load);
    bus.write32(watchdog::CONTROL.address(0, 0), watchdog::ENABLE.encode(1));
    bus.write32(watchdog::KICK.address(0, 0), watchdog::KICK_KEY);
}

/// Stops the watchdog if it was armed with `load` (`LOAD` holds it): the
/// firmware ends the boot loader's trial timeout so, and leaves an arm
/// for another purpose, such as a reset a request scheduled, running.
/// Whether it stopped it.
pub fn disarm_if_armed_with<B: CsrBus>(bus: &mut B, load: u32) -> bool {
    if bus.read32(watchdog::LOAD.address(0, 0)) != load {
        return false;
    }
    bus.write32(watchdog::CONTROL.address(0, 0), watchdog::ENABLE.encode(0));
    true
}
