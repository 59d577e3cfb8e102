//! The GPU model's BAR0 register map: one DMA copy engine and a scratch
//! area. Offsets are from the start of BAR0; every register is 32 bits.

/// Reads a constant that identifies the model ("WGPU" in ASCII).
pub const ID: u64 = 0x0000;
/// The value of [`ID`].
pub const ID_VALUE: u32 = 0x5547_5057;
/// Copy source address, bits 31:0.
pub const DMA_SRC_LO: u64 = 0x0100;
/// Copy source address, bits 63:32.
pub const DMA_SRC_HI: u64 = 0x0104;
/// Copy destination address, bits 31:0.
pub const DMA_DST_LO: u64 = 0x0108;
/// Copy destination address, bits 63:32.
pub const DMA_DST_HI: u64 = 0x010c;
/// Copy length in bytes.
pub const DMA_LEN: u64 = 0x0110;
/// Copy options (see [`control`]).
pub const DMA_CONTROL: u64 = 0x0114;
/// Writing any value starts the copy described by the registers above.
pub const DMA_DOORBELL: u64 = 0x0118;
/// Engine state (see [`status`]); DONE and ERROR are write-1-to-clear.
pub const DMA_STATUS: u64 = 0x011c;
/// Why the last copy failed (see [`error`]); 0 if it did not.
pub const DMA_ERROR: u64 = 0x0120;
/// Copies completed since reset.
pub const DMA_COUNT: u64 = 0x0124;
/// The last copy's duration on the GPU's own clock, in nanoseconds: from
/// the doorbell (when the engine sends its first request) to the copy's
/// finish (its last read completion in, or its last write handed to the
/// link), like a GPU's event timer. Saturates at `u32::MAX`; read-only.
pub const DMA_ELAPSED_NS: u64 = 0x0128;
/// First byte of the scratch area: plain RAM peers and the host may use as
/// a mailbox.
pub const SCRATCH: u64 = 0x1000;
/// Size of the scratch area.
pub const SCRATCH_SIZE: u64 = 0x1000;

/// DMA_CONTROL bits.
pub mod control {
    /// The source is an offset into the GPU's own memory, not a bus address.
    pub const SRC_LOCAL: u32 = 1 << 0;
    /// The destination is an offset into the GPU's own memory.
    pub const DST_LOCAL: u32 = 1 << 1;
    /// Send an MSI when the copy finishes, or fails once started (needs MSI
    /// and Bus Master enabled); a copy refused at the doorbell sends none.
    pub const INTERRUPT: u32 = 1 << 2;
}

/// DMA_STATUS bits.
pub mod status {
    /// A copy is running.
    pub const BUSY: u32 = 1 << 0;
    /// The last copy finished; write 1 to clear.
    pub const DONE: u32 = 1 << 1;
    /// The last copy failed, see DMA_ERROR; write 1 to clear.
    pub const ERROR: u32 = 1 << 2;
}

/// DMA_ERROR values.
pub mod error {
    /// No error.
    pub const NONE: u32 = 0;
    /// Bus Master Enable is clear, so the function may not send requests
    /// (PCIe Base 6.0 §7.5.1.1.3).
    pub const BUS_MASTER_DISABLED: u32 = 1;
    /// A local range runs past the end of the GPU's memory.
    pub const LOCAL_OUT_OF_RANGE: u32 = 2;
    /// A read completed with UR or CA (§2.3.2).
    pub const COMPLETION_ERROR: u32 = 3;
    /// The doorbell rang while a copy was running.
    pub const BUSY: u32 = 4;
    /// A bus range runs past the top of the 64-bit address space.
    pub const ADDRESS_OVERFLOW: u32 = 5;
}
