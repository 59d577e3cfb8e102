//! The NVMe controller registers in BAR0 (NVMe Base 2.0 §3.1.4) and where
//! this model puts its MSI-X table.

/// Controller Capabilities, 64 bits (§3.1.4.1).
pub const CAP: u64 = 0x00;
/// Version (§3.1.4.2).
pub const VS: u64 = 0x08;
/// Interrupt Mask Set (§3.1.4.3).
pub const INTMS: u64 = 0x0c;
/// Interrupt Mask Clear (§3.1.4.4).
pub const INTMC: u64 = 0x10;
/// Controller Configuration (§3.1.4.5).
pub const CC: u64 = 0x14;
/// Controller Status (§3.1.4.6).
pub const CSTS: u64 = 0x1c;
/// Admin Queue Attributes (§3.1.4.8).
pub const AQA: u64 = 0x24;
/// Admin Submission Queue Base Address, 64 bits (§3.1.4.9).
pub const ASQ: u64 = 0x28;
/// Admin Completion Queue Base Address, 64 bits (§3.1.4.10).
pub const ACQ: u64 = 0x30;
/// First doorbell: SQ y Tail at 0x1000 + (2y) × stride, CQ y Head at
/// 0x1000 + (2y + 1) × stride, stride = 4 << CAP.DSTRD (§3.1.4.20-21).
pub const DOORBELLS: u64 = 0x1000;
/// Doorbell stride in bytes: CAP.DSTRD = 0.
pub const DOORBELL_STRIDE: u64 = 4;
/// The MSI-X table's offset in BAR0 (PCIe Base 6.0 §7.7.2).
pub const MSIX_TABLE: u64 = 0x2000;
/// The MSI-X Pending Bit Array's offset in BAR0.
pub const MSIX_PBA: u64 = 0x3000;
/// BAR0's size: registers, doorbells, MSI-X table and PBA.
pub const BAR0_SIZE: u64 = 0x4000;

/// Maximum Queue Entries Supported, 0's based (CAP.MQES): 256 entries.
pub const MAX_QUEUE_ENTRIES: u32 = 256;

/// CAP: MQES = 255, Contiguous Queues Required (bit 16), Timeout 500 ms
/// (bits 31:24 = 1), DSTRD 0, NVM command set (CSS bit 0 = bit 37),
/// MPSMIN = MPSMAX = 0 (4 KiB pages only).
pub const CAP_VALUE: u64 = (MAX_QUEUE_ENTRIES as u64 - 1) | 1 << 16 | 1 << 24 | 1 << 37;
/// VS: version 2.0.0 (§3.1.4.2).
pub const VS_VALUE: u32 = 0x0002_0000;

/// CC fields (§3.1.4.5).
pub mod cc {
    /// Enable.
    pub const EN: u32 = 1 << 0;
    /// Memory Page Size, bits 10:7: 4 KiB << MPS.
    pub const MPS_SHIFT: u32 = 7;
    /// Shutdown Notification, bits 15:14.
    pub const SHN_MASK: u32 = 0b11 << 14;
}

/// CSTS fields (§3.1.4.6).
pub mod csts {
    /// Ready.
    pub const RDY: u32 = 1 << 0;
    /// Controller Fatal Status.
    pub const CFS: u32 = 1 << 1;
    /// Shutdown Status = complete (10b in bits 3:2).
    pub const SHST_COMPLETE: u32 = 0b10 << 2;
}

/// The host memory page size this controller supports (CC.MPS = 0).
pub const PAGE_SIZE: u64 = 4096;
