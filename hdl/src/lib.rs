//! The weft switch in rust-hdl.
//!
//! The data plane (ingress parse, translate, route, queue, switch, egress),
//! the RISC-V soft core and its SoC live here as rust-hdl blocks. They run
//! in rust-hdl's simulator, single-threaded for long runs, and emit Verilog
//! (`weft-verilog`, run by `cargo xtask verilog`) for the FPGA. Every TLP
//! field position comes from `weft-pcie`; tests hold the RTL to it.
#![forbid(unsafe_code)]

pub mod chip;
pub mod core;
pub mod counters;
pub mod csr;
pub mod driver;
pub mod emit;
pub mod header_decode;
pub mod header_rules;
pub mod isolation;
pub mod management;
pub mod port;
pub mod soc;
pub mod spi_flash;
pub mod stream;
pub mod switching;
pub mod tables;
pub mod top;
pub mod top_harness;
pub mod top_pins;
pub mod top_verilated;
pub mod translate;

pub use header_decode::HeaderDecoder;
pub use header_rules::HeaderRules;
