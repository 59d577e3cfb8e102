//! The console UART's transmitter (`weft_regs::soc::uart`), polled: what
//! the firmware's console and the boot loader print with.

use weft_regs::soc::uart;

use crate::CsrBus;

/// Sends `bytes` in order on the console UART, waiting for
/// `STATUS.TX_READY` before each.
pub fn send<B: CsrBus>(bus: &mut B, bytes: &[u8]) {
    for &byte in bytes {
        while uart::TX_READY.decode(bus.read32(uart::STATUS.address(0, 0))) == 0 {
            core::hint::spin_loop();
        }
        bus.write32(
            uart::TX_DATA.address(0, 0),
            uart::TX_BYTE.encode(u32::from(byte)),
        );
    }
}
