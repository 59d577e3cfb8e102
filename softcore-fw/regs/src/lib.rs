//! The one register map of a weft switch.
//!
//! Every address that the RTL decodes, the firmware pokes and the docs list
//! is defined here once: the data plane's control and status registers
//! (tables, counters, port control) and the soft core's SoC peripherals
//! (timer, UART, config mailbox, Ethernet MAC, SPI flash, watchdog, GPIO).
//! The RTL's decoders, the firmware's constants and the register
//! documentation are generated from these definitions.
//!
//! The map itself arrives with the data plane and the SoC; until then the
//! crate holds only the base of the soft core's address space, which the
//! firmware's linker script is checked against.
#![no_std]
#![forbid(unsafe_code)]

/// Start of the soft core's instruction memory, where the reset vector is.
pub const INSTRUCTION_RAM_BASE: u32 = 0x0000_0000;
/// Size of the instruction memory in the reference configuration (128 KiB).
pub const INSTRUCTION_RAM_SIZE: u32 = 128 * 1024;
/// Start of the soft core's data memory.
pub const DATA_RAM_BASE: u32 = 0x1000_0000;
/// Size of the data memory in the reference configuration (64 KiB).
pub const DATA_RAM_SIZE: u32 = 64 * 1024;
