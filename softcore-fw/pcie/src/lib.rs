//! The PCIe base specification as code: weft's `wire` layer.
//!
//! Everything weft needs to speak PCIe is defined here once, and nowhere else:
//! TLP headers and their encodings ([`tlp`]), the rules for splitting
//! requests and completions ([`split`]), configuration space and capability
//! structures ([`config`]), and the link-rate model ([`link`]).
//!
//! Like smoltcp's `wire` module, this crate parses and emits and holds no
//! state; behaviour lives in `weft-fabric`, `weft-model` and the RTL. It is
//! `no_std` and never allocates, so the firmware, the simulator and the tests
//! share the same definitions.
//!
//! Section numbers refer to the PCI Express Base Specification, Revision 6.0
//! ("PCIe Base 6.0 §x.y"), unless a doc comment says otherwise.
#![no_std]
#![forbid(unsafe_code)]

pub mod config;
pub mod id;
pub mod link;
pub mod split;
pub mod tlp;

pub use id::{Bdf, BdfParseError};
