//! Verilator builds of weft's emitted Verilog, run inside the process.
//!
//! rust-hdl's simulator evaluates the whole switch top (8 ports) at about
//! 40–60 clock cycles per second; the same Verilog compiled by Verilator
//! runs thousands. This crate turns a design's Verilog into a shared
//! library once ([`build`]: `verilator --cc`, then the C++ compiler) and
//! loads it ([`Model`]), so a long run can clock the RTL at Verilator's
//! speed through the same pins rust-hdl's block has.
//!
//! A build is cached under a directory named by a digest of the Verilog,
//! the Verilator version and the build's options, so a design that did not change is built
//! once (the 8-port switch takes about 3 minutes of C++ compilation on a
//! 2-CPU machine). Each build found or made marks itself used, and the
//! cache keeps only the [`KEPT_BUILDS`] most recently used builds of a top
//! (about 28 MB each for the switch) and no stopped build's leftovers.
//!
//! The library's C ABI is a small shim generated beside the model
//! ([`build`]): create, evaluate, delete, and the address of each top-level
//! port's storage, in the order of the port list the build records. The
//! port values are then read and written in place, as Verilator's own
//! C++ harnesses do, without a call per signal.

mod build;
mod cache;
mod model;

pub use build::{build, BuildError, Built};
pub use cache::{ABANDONED_AFTER, KEPT_BUILDS};
pub use model::{LoadError, Model, Port};

/// How Verilator stores a top-level port (its `verilated.h` types):
/// `CData`, `SData`, `IData`, `QData`, or `VlWide` words for wider ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// Up to 8 bits in a `u8`.
    Byte,
    /// 9 to 16 bits in a `u16`.
    Half,
    /// 17 to 32 bits in a `u32`.
    Word,
    /// 33 to 64 bits in a `u64`.
    Double,
    /// More than 64 bits in this many `u32` words, least significant first.
    Words(usize),
}

/// A top-level port as the build recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortDecl {
    /// The port's name in the Verilog (`ingress$0$valid`), not Verilator's
    /// escaped C++ name.
    pub name: String,
    /// Its width in bits.
    pub bits: u32,
    /// Whether the design drives it.
    pub output: bool,
    /// How Verilator stores it.
    pub storage: Storage,
}
