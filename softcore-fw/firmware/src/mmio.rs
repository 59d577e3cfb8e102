//! Whole-word volatile accesses to the SoC window (`weft_regs::soc`): the
//! firmware's only `unsafe` code, shared by every driver, and the
//! [`CsrBus`] that weft-drivers' drivers reach their registers through.

use weft_drivers::CsrBus;

/// Loads the SoC register or frame-buffer word at `address`.
#[allow(unsafe_code)]
pub fn read(address: u32) -> u32 {
    // SAFETY: every caller passes a word-aligned address inside the SoC
    // window (`weft_regs::soc`), which is device memory that no Rust object
    // occupies; a whole-word load is the access the window supports.
    unsafe { core::ptr::read_volatile(address as usize as *const u32) }
}

/// Stores `value` to the SoC register or frame-buffer word at `address`.
#[allow(unsafe_code)]
pub fn write(address: u32, value: u32) {
    // SAFETY: as for `read`; a whole-word store is the supported access.
    unsafe { core::ptr::write_volatile(address as usize as *mut u32, value) }
}

/// The soft core's own register accesses, as weft-drivers' bus.
pub struct Mmio;

impl CsrBus for Mmio {
    fn read32(&mut self, address: u32) -> u32 {
        read(address)
    }

    fn write32(&mut self, address: u32, value: u32) {
        write(address, value)
    }
}
