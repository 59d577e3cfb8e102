//! weft's soft core: a five-stage pipelined RV32IM + Zicsr machine-mode
//! RISC-V core in rust-hdl, held instruction by instruction to the
//! instruction-set simulator `weft_iss`.
//!
//! - [`Core`] (`pipeline`): the pipeline, its hazards and its commit
//!   stage, with Harvard memory ports ([`FetchPort`], [`DataPort`]),
//!   three interrupt lines and a retirement trace ([`RetireTrace`]).
//! - Its parts, one job each: [`decode`](decode::Decoder), the
//!   [`alu`](alu::Alu), the [`muldiv`](muldiv::MulDiv) unit (mul 2 cycles,
//!   div 34), the [`csr`](csr::CsrFile) file with traps and interrupts, the
//!   [`regfile`](regfile::RegisterFile), the static branch
//!   [`predict`](predict::StaticPredictor)or and the data port's byte
//!   [`lsu`](lsu) lanes.
//! - Verification: [`CoreBench`] attaches Rust memory models and reads the
//!   trace back as `weft_iss::Retirement`s; [`Lockstep`] runs the ISS next
//!   to it and compares every retirement.
//!
//! Behaviour the ISA leaves open is fixed as in `weft_iss::hart`:
//! misaligned loads and stores trap, a jump or taken branch to a misaligned
//! target traps on itself, `ebreak`'s `mtval` is its address, `wfi` waits
//! for an interrupt enabled in `mie`. `mcycle` counts clock cycles.

pub mod alu;
pub mod csr;
pub mod decode;
pub mod lockstep;
pub mod lsu;
pub mod muldiv;
pub mod pipeline;
pub mod ports;
pub mod predict;
pub mod regfile;
pub mod testbench;

pub use lockstep::{Divergence, Lockstep};
pub use pipeline::Core;
pub use ports::{DataBus, DataPort, FetchBus, FetchPort, RetireTrace};
pub use testbench::{BenchError, CoreBench, CoreUnderTest, Retired};
