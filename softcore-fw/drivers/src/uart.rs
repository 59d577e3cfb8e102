//! The console UART's transmitter (`weft_regs::soc::uart`), polled: what
//! the firmware's console and the boot loader print with.

use weft_regs::soc::uart;

use crate::CsrBus;

/// Whether `TX_DATA` takes a byte now (`STATUS.TX_READY`: the transmit
/// FIFO has room).
pub fn ready<B: CsrBus>(bus: &mut B) -> bool {
    uart::TX_READY.decode(bus.read32(uart::STATUS.address(0, 0))) != 0
}

/// Queues `byte` for transmission; dropped unless [`ready`] said so.
pub fn put<B: CsrBus>(bus: &mut B, byte: u8) {
    bus.write32(
        uart::TX_DATA.address(0, 0),
        uart::TX_BYTE.encode(u32::from(byte)),
    );
}

/// Sends `bytes` in order on the console UART, waiting for
/// `STATUS.TX_READY` before each.
pub fn send<B: CsrBus>(bus: &mut B, bytes: &[u8]) {
    for &byte in bytes {
        while !ready(bus) {
            core::hint::spin_loop();
        }
        put(bus, byte);
    }
}
