//! The console UART driver: polled transmission and reception through the
//! registers of `weft_regs::soc::uart`.

use core::fmt;

use weft_regs::soc::uart;

use crate::mmio::{read, Mmio};

/// `STATUS` of the one console UART.
const STATUS: u32 = uart::STATUS.address(0, 0);
/// `RX_DATA` of the one console UART.
const RX_DATA: u32 = uart::RX_DATA.address(0, 0);

/// The console UART.
///
/// Any number of handles may exist: the core is a single hart and every
/// access is one whole-word volatile load or store.
pub struct Uart {
    _registers: (),
}

impl Uart {
    /// A handle on the console UART.
    pub const fn console() -> Self {
        Self { _registers: () }
    }

    /// Sends `bytes` in order, waiting for `STATUS.TX_READY` before each.
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        weft_drivers::uart::send(&mut Mmio, bytes);
    }

    /// The oldest received byte, if `STATUS.RX_VALID` says there is one.
    pub fn read_byte(&mut self) -> Option<u8> {
        if uart::RX_VALID.decode(read(STATUS)) == 0 {
            return None;
        }
        Some(uart::RX_BYTE.decode(read(RX_DATA)) as u8)
    }
}

impl fmt::Write for Uart {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.write_bytes(text.as_bytes());
        Ok(())
    }
}
