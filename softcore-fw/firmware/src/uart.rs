//! The console UART driver: polled transmission through the registers of
//! `weft_regs::soc::uart`.

use weft_regs::soc::uart;

/// `TX_DATA` of the one console UART.
const TX_DATA: usize = uart::TX_DATA.address(0, 0) as usize;
/// `STATUS` of the one console UART.
const STATUS: usize = uart::STATUS.address(0, 0) as usize;

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
        for &byte in bytes {
            while uart::TX_READY.decode(read(STATUS)) == 0 {
                core::hint::spin_loop();
            }
            write(TX_DATA, uart::TX_BYTE.encode(u32::from(byte)));
        }
    }
}

/// Loads the SoC register at `address`.
#[allow(unsafe_code)]
fn read(address: usize) -> u32 {
    // SAFETY: `address` is a word-aligned register of the SoC window
    // (`weft_regs::soc`), which is device memory that no Rust object
    // occupies; a whole-word load is the access the window supports.
    unsafe { core::ptr::read_volatile(address as *const u32) }
}

/// Stores `value` to the SoC register at `address`.
#[allow(unsafe_code)]
fn write(address: usize, value: u32) {
    // SAFETY: as for `read`; a whole-word store is the supported access.
    unsafe { core::ptr::write_volatile(address as *mut u32, value) }
}
