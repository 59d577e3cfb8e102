//! A whole weft fabric without hardware.
//!
//! Hosts, endpoints, links, switches and firmware, driven in simulated time.
//! The pieces arrive one by one; [`link`] models the PCIe links between them.
#![forbid(unsafe_code)]

pub mod host;
pub mod link;
pub mod reference;
pub mod world;
