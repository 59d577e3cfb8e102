//! Instruction-set simulator of weft's soft core: RV32IM + Zicsr, machine
//! mode only.
//!
//! It is the golden model of the RTL core in `weft-hdl` and the fast CPU
//! of `weft-sim`:
//!
//! - The system simulator loads the firmware ELF ([`Hart::load_elf`]) and
//!   runs it with [`Hart::run`], driving interrupt lines with
//!   [`Hart::set_interrupt_pending`] and peripherals through [`Bus`].
//! - The RTL core's differential tests run the same program on both models
//!   in lock-step and compare every [`Retirement`] that [`Hart::step`]
//!   returns: PC, instruction, destination register write, memory write,
//!   and trap.
//! - Programs for tests are built with [`mod@encode`] (one function per
//!   instruction); [`decode()`] names the instruction on which models
//!   disagree.
//!
//! Spec references are to *The RISC-V Instruction Set Manual, Volume I:
//! Unprivileged ISA*, version 20191213 ("Unprivileged"), and *Volume II:
//! Privileged Architecture*, version 20211203 ("Privileged").
//!
//! ```
//! use weft_iss::{encode as e, Hart, HarvardBus, Step};
//!
//! let mut hart = Hart::new(HarvardBus::reference());
//! // x1 = 6 * 7
//! let program = [e::addi(1, 0, 6), e::addi(2, 0, 7), e::mul(1, 1, 2)];
//! hart.bus_mut().write_words(0, &program).expect("instruction RAM is at 0");
//! for _ in 0..3 {
//!     assert!(matches!(hart.step(), Step::Retired(r) if r.trap.is_none()));
//! }
//! assert_eq!(hart.reg(1), 42);
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod bus;
pub mod csr;
pub mod data_plane;
pub mod decode;
pub mod elf;
pub mod encode;
pub mod hart;
pub mod programs;
pub mod rust_bench;
pub mod soc;
pub mod trap;

pub use bus::{Access, Bus, BusFault, DeviceFault, HarvardBus, MapError, Mmio, Width};
pub use csr::{CsrError, Csrs};
pub use decode::{decode, DecodeError, Instruction};
pub use elf::{ElfError, LoadedImage};
pub use hart::{Hart, MemWrite, RegWrite, Retirement, RunStop, RunSummary, Step};
pub use trap::{Exception, Interrupt, TrapCause, TrapTaken};

#[cfg(any(test, feature = "strategy"))]
pub mod strategy;
