//! The fabric manager's hardware, as the soft core reaches it: the traits
//! of `weft_fabric::hw` over whole-word register accesses.
//!
//! - [`timer::SocTimer`]: [`weft_fabric::hw::Timer`] over the machine timer
//!   (`weft_regs::soc::timer`);
//! - [`mailbox::CsrMailbox`]: the manager's configuration and memory
//!   requests ([`weft_fabric::hw::FabricConfig`],
//!   [`weft_fabric::hw::FabricMemory`]) and the hosts'
//!   ([`weft_fabric::hw::HostInterface`]) over the data plane's mailbox and
//!   injector (`weft_regs::csr::mailbox`, `inject`), which all share;
//! - [`hosts::FabricHosts`]: every host port of the fabric as one
//!   [`weft_fabric::hw::HostInterface`], other switches' mailboxes read
//!   in-band;
//! - [`spi_flash::Region`]: [`weft_fabric::persist::Flash`] over the SPI
//!   NOR flash controller (`weft_regs::soc::spi_flash`), and the flash
//!   part's layout, for the firmware and the boot loader;
//! - [`uart::send`]: the console UART's transmitter;
//! - [`mdio`]: reads and writes of the Ethernet PHY's registers through
//!   the SoC's MDIO master (`weft_regs::soc::mdio`, IEEE 802.3 clause 22),
//!   and [`dp83867`]: the set-up the VCU118's PHY needs before its SGMII
//!   link carries the management port;
//! - [`watchdog`]: arming and disarming the SoC's watchdog
//!   (`weft_regs::soc::watchdog`), for a trial boot and a requested reset.
//!
//! The data plane's tables are written by `weft_regs::driver::CsrDataPlane`,
//! which lives beside the register map because the fabric manager's crate
//! depends on it. Every driver takes a [`CsrBus`]: the firmware's is its
//! volatile loads and stores, the tests' the CSR window model of
//! `weft-model`. Nothing here allocates.
#![no_std]
#![forbid(unsafe_code)]

pub mod dp83867;
pub mod hosts;
pub mod mailbox;
pub mod mdio;
pub mod spi_flash;
pub mod timer;
pub mod uart;
pub mod watchdog;

pub use weft_regs::driver::CsrBus;
