//! The ports' links as the board shows them on the SoC's GPIO inputs
//! (`weft_chip`'s `link_up`, from each hard IP's flow control state), and
//! on the board's LEDs: LED n lights while port n's link is up.

use weft_regs::soc::gpio;

use crate::mmio;

/// The ports whose links are up, bit n for port n; `None` where nothing
/// drives the inputs (LINKS_REPORTED clear: the simulator's boards).
pub fn up() -> Option<u32> {
    gpio::links_up(mmio::read(gpio::INPUT.address(0, 0)))
}

/// Lights LED n (the GPIO's output n) while port n's link is up; leaves
/// the outputs alone where nothing reports the links.
pub fn show_on_leds() {
    if let Some(up) = up() {
        mmio::write(gpio::OUTPUT.address(0, 0), up);
    }
}
