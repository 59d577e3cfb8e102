//! PCIe endpoint models for the weft simulator and the fabric manager's tests.
//!
//! GPU and NVMe (with SR-IOV virtual functions) endpoints, and devices
//! described by an `lspci -xxxx` configuration-space dump, each answering
//! configuration and memory requests as the real device would. They are
//! shared by `weft-sim` and by `weft-fabric`'s tests, so the fabric manager
//! is tested against the same devices the simulator runs.
#![forbid(unsafe_code)]

pub use weft_pcie as pcie;
