//! PCIe endpoint models for the weft simulator and the fabric manager's tests.
//!
//! GPU and NVMe (with SR-IOV virtual functions) endpoints, and devices
//! described by an `lspci -xxxx` configuration-space dump, each answering
//! configuration and memory requests as the real device would. They are
//! shared by `weft-sim` and by `weft-fabric`'s tests, so the fabric manager
//! is tested against the same devices the simulator runs.
//!
//! - [`device`]: the [`Device`] trait every model implements: configuration
//!   reads and writes by routing ID with their completion status (SC, UR,
//!   and RRS while booting), memory requests that hit BARs, TLPs in through
//!   [`Device::handle`] and autonomous TLPs out through [`Device::poll`].
//! - [`packet`]: the owned TLP ([`Packet`]) the interface speaks, built on
//!   weft-pcie's header types.
//! - [`gpu`]: a 3D controller with a DMA copy engine and MSI.
//! - [`nvme`]: an NVMe controller with SR-IOV virtual functions.
//! - [`dump`]: a device built from an `lspci -xxxx` dump and BAR sizes.
//! - [`conventional`]: a conventional PCIe switch with devices below it.
//! - [`bench`](mod@bench): a flat interconnect with host memory for tests.
//! - Building blocks the models share: [`bars`], [`requester`],
//!   [`interrupt`], [`memory`].
//!
//! Section numbers refer to the PCI Express Base Specification 6.0 ("PCIe
//! Base 6.0 §x.y") and the NVM Express Base Specification 2.0 ("NVMe Base
//! 2.0 §x.y").
#![forbid(unsafe_code)]

pub use weft_pcie as pcie;

pub mod bars;
pub mod bench;
pub mod conventional;
pub mod device;
pub mod dump;
pub mod gpu;
pub mod hang;
pub mod interrupt;
pub mod memory;
pub mod nvme;
pub mod packet;
pub mod requester;

pub use device::{Claim, ConfigError, Device, Readiness};
pub use packet::Packet;
