//! The core's interfaces: the instruction fetch port, the data port, and
//! the retirement trace.
//!
//! Both memory ports follow block RAM timing: the core drives an address
//! (and for stores the data and byte enables) in one cycle; a read's data
//! comes back in the next cycle. `fault` answers in the *same* cycle as the
//! request, from the address alone (a decode of the memory map), so that a
//! faulting access raises its exception before any younger instruction
//! reaches memory: exceptions stay precise without holding back the next
//! access. There are no wait states: a slow device buffers behind its
//! register interface.

pub use interface::{DataBus, DataPort, FetchBus, FetchPort, RetireTrace};

/// rust-hdl's `LogicInterface` derive adds `join` and `link` methods
/// without doc comments, hence the allowance here.
#[allow(missing_docs)]
mod interface {
    use rust_hdl::prelude::*;

    /// The core's instruction fetch port.
    #[derive(Clone, Debug, Default, LogicInterface)]
    #[join = "FetchBus"]
    pub struct FetchPort {
        /// Word address (bits \[1:0\] zero) read at this rising edge.
        pub address: Signal<Out, Bits<32>>,
        /// No instruction memory decodes `address`: the fetch faults.
        pub fault: Signal<In, Bit>,
        /// The word at the `address` of the previous cycle.
        pub data: Signal<In, Bits<32>>,
    }

    /// The memory side of [`FetchPort`].
    #[derive(Clone, Debug, Default, LogicInterface)]
    #[join = "FetchPort"]
    pub struct FetchBus {
        /// Word address read at this rising edge.
        pub address: Signal<In, Bits<32>>,
        /// `address` does not decode.
        pub fault: Signal<Out, Bit>,
        /// The word at the previous cycle's `address`.
        pub data: Signal<Out, Bits<32>>,
    }

    /// The core's data load/store port.
    #[derive(Clone, Debug, Default, LogicInterface)]
    #[join = "DataBus"]
    pub struct DataPort {
        /// Byte address of the access (naturally aligned for its width).
        pub address: Signal<Out, Bits<32>>,
        /// A load: the word containing `address` is read at this edge.
        pub read: Signal<Out, Bit>,
        /// A store: the enabled lanes of `write_data` are written at this edge.
        pub write: Signal<Out, Bit>,
        /// Lanes of the little-endian word the access covers (bit i = byte i).
        pub byte_enable: Signal<Out, Bits<4>>,
        /// Store data, replicated onto every lane the width can occupy.
        pub write_data: Signal<Out, Bits<32>>,
        /// The access does not decode or is not allowed (same cycle).
        pub fault: Signal<In, Bit>,
        /// The word read by the previous cycle's `read`.
        pub read_data: Signal<In, Bits<32>>,
    }

    /// The memory side of [`DataPort`].
    #[derive(Clone, Debug, Default, LogicInterface)]
    #[join = "DataPort"]
    pub struct DataBus {
        /// Byte address of the access.
        pub address: Signal<In, Bits<32>>,
        /// A load.
        pub read: Signal<In, Bit>,
        /// A store.
        pub write: Signal<In, Bit>,
        /// Lanes the access covers.
        pub byte_enable: Signal<In, Bits<4>>,
        /// Store data.
        pub write_data: Signal<In, Bits<32>>,
        /// The access faults (same cycle).
        pub fault: Signal<Out, Bit>,
        /// The word read by the previous cycle's load.
        pub read_data: Signal<Out, Bits<32>>,
    }

    /// One retirement per cycle at most, in program order: an instruction
    /// that completed, an exception, or an interrupt taken before an
    /// instruction. The fields mirror `weft_iss::Retirement`, so the two
    /// models can be compared step by step.
    #[derive(Clone, Debug, Default, LogicInterface)]
    pub struct RetireTrace {
        /// A retirement is reported in this cycle.
        pub valid: Signal<Out, Bit>,
        /// Its instruction's address (for an interrupt: the preempted one's).
        pub pc: Signal<Out, Bits<32>>,
        /// An instruction word was fetched (not an interrupt or fetch fault).
        pub has_instruction: Signal<Out, Bit>,
        /// The instruction word.
        pub instruction: Signal<Out, Bits<32>>,
        /// `rd` was written.
        pub rd_write: Signal<Out, Bit>,
        /// The register written.
        pub rd: Signal<Out, Bits<5>>,
        /// The value written.
        pub rd_value: Signal<Out, Bits<32>>,
        /// A store was performed.
        pub mem_write: Signal<Out, Bit>,
        /// Its byte address.
        pub mem_address: Signal<Out, Bits<32>>,
        /// The stored value, masked to its width.
        pub mem_value: Signal<Out, Bits<32>>,
        /// Its width: 0 byte, 1 halfword, 2 word.
        pub mem_width: Signal<Out, Bits<2>>,
        /// A trap was taken instead of completing the instruction.
        pub trap: Signal<Out, Bit>,
        /// The trap's `mcause`.
        pub trap_cause: Signal<Out, Bits<32>>,
        /// The trap's `mtval`.
        pub trap_value: Signal<Out, Bits<32>>,
    }
}
