//! From the emitted weft design to a bitstream on a real dev board.
//!
//! A board is a data file in `boards/data/` (device, PCIe hard IPs and their
//! roles, clocks, resets, the management Ethernet PHY, flash, LEDs, UART,
//! each fact citing its source document). This crate loads and checks it
//! ([`load`], [`validate`]) against what each hard IP can do ([`catalog`]),
//! and generates from it and the emitted Verilog the top-level wrapper
//! around the vendor's hard IPs ([`verilog`], with the Intel tiles' ports
//! as tables in [`tile`], and the management Ethernet port in
//! [`ethernet`]), the constraints
//! ([`constraints`]), the vendor project and build scripts ([`project`]),
//! and the step that loads the bitstream ([`program`]);
//! [`generate`] writes them all. [`sim`] runs the wrapper's adapters
//! between models of the hard IPs in a smoke simulation. `cargo xtask board <name>
//! generate|check|build|program` drives it.
#![forbid(unsafe_code)]

pub mod catalog;
pub mod chip_sim;
pub mod clocking;
pub mod console;
pub mod constraints;
pub mod ethernet;
pub mod generate;
pub mod lint;
pub mod load;
pub mod model;
pub mod pll;
pub mod program;
pub mod project;
pub mod sim;
pub mod tile;
pub mod validate;
pub mod verilog;

pub use load::{by_name, LoadError};
pub use model::Board;
