//! The weft switch data plane's behaviour in plain Rust.
//!
//! This is the executable specification that the rust-hdl data plane is
//! tested against, and the fast transaction-level switch of the simulator:
//! parse, classify, translate at the edges, isolate, route and queue, with
//! the same tables the firmware programs into the RTL.
#![forbid(unsafe_code)]

pub use weft_pcie as pcie;
