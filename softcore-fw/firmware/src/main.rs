//! The firmware of weft's RISC-V soft core.
//!
//! It runs the fabric manager (`weft-fabric`) against the real hardware:
//! drivers for the data plane's CSR window, the config mailbox, the timer,
//! UART, flash and Ethernet MAC, and the smoltcp management server. It is
//! built for `riscv32im-unknown-none-elf` by `cargo xtask firmware`.
//!
//! Rodata lives in the data memory: the core is Harvard, and its instruction
//! memory is not readable by loads.
//!
//! A host build of this crate (as `cargo test --workspace` makes) is only a
//! pointer to the real build, so the workspace stays one `cargo` command.
//!
//! Register accesses are the only `unsafe` code: each driver's volatile
//! load and store accessors.
#![cfg_attr(target_os = "none", no_std, no_main)]
#![deny(unsafe_code)]

#[cfg(target_os = "none")]
mod uart;

#[cfg(target_os = "none")]
mod soft_core {
    use core::panic::PanicInfo;

    use crate::uart::Uart;

    /// The line the firmware prints on the console when it starts.
    const BANNER: &str = concat!("weft firmware ", env!("CARGO_PKG_VERSION"), "\r\n");

    /// The firmware's main loop: the soft core prints its banner, then
    /// waits for interrupts until the fabric manager and its drivers are
    /// brought up here.
    #[riscv_rt::entry]
    fn main() -> ! {
        Uart::console().write_bytes(BANNER.as_bytes());
        loop {
            riscv::asm::wfi();
        }
    }

    /// A panic halts the core; the watchdog then resets it.
    #[panic_handler]
    fn halt(_info: &PanicInfo) -> ! {
        loop {
            core::hint::spin_loop();
        }
    }
}

#[cfg(not(target_os = "none"))]
fn main() {
    eprintln!(
        "weft-firmware runs on the weft soft core (riscv32im-unknown-none-elf); \
         build it with `cargo xtask firmware`"
    );
}
