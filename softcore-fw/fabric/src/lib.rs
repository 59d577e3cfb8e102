//! The weft fabric manager.
//!
//! Every decision of weft's control plane lives here: discovery and
//! enumeration of the fabric, fabric IDs and addresses, routes between
//! switches, one virtual PCIe switch per host, configuration-space
//! virtualization, binding and unbinding of endpoints and SR-IOV virtual
//! functions, hot-plug and the event log. It reaches hardware only through
//! traits (configuration access, table writes, the config mailbox, a timer,
//! flash), so the same code runs in the firmware, in the simulator and in
//! unit tests, without a heap.
#![no_std]
#![forbid(unsafe_code)]

pub use weft_pcie as pcie;
