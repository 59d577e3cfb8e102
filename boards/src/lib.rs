//! From the emitted weft design to a bitstream on a real dev board.
//!
//! A board is a data file (device, PCIe hard IPs and their roles, clocks,
//! the management Ethernet PHY, flash, LEDs, UART); this crate generates
//! from it and the emitted Verilog the top-level wrapper around the vendor's
//! hard IPs, the constraints, the vendor project script, and the step that
//! loads the bitstream. `cargo xtask board <name> build|program` drives it.
//! Boards arrive here one by one; until then the crate is empty.
#![forbid(unsafe_code)]
