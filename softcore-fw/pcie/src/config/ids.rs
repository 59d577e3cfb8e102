//! Capability IDs (PCI Code and ID Assignment Specification, as referenced by
//! PCIe Base 6.0 §7.5.1.1.11 and §7.6).

/// Capability IDs of the PCI-compatible capability list (8 bits).
pub mod cap_id {
    /// PCI Power Management (§7.5.2).
    pub const POWER_MANAGEMENT: u8 = 0x01;
    /// Vital Product Data.
    pub const VPD: u8 = 0x03;
    /// Message Signaled Interrupts (§7.7.1).
    pub const MSI: u8 = 0x05;
    /// Vendor-specific capability.
    pub const VENDOR_SPECIFIC: u8 = 0x09;
    /// Bridge Subsystem Vendor ID (Type 1 functions).
    pub const BRIDGE_SUBSYSTEM_VENDOR_ID: u8 = 0x0d;
    /// PCI Express capability (§7.5.3).
    pub const PCI_EXPRESS: u8 = 0x10;
    /// MSI-X (§7.7.2).
    pub const MSIX: u8 = 0x11;
    /// Enhanced Allocation.
    pub const ENHANCED_ALLOCATION: u8 = 0x14;
}

/// Extended Capability IDs (16 bits, in the header at 0x100 and after, §7.6.3).
pub mod ext_cap_id {
    /// Null capability: a header and no registers.
    pub const NULL: u16 = 0x0000;
    /// Advanced Error Reporting (§7.8.4).
    pub const AER: u16 = 0x0001;
    /// Virtual Channel.
    pub const VIRTUAL_CHANNEL: u16 = 0x0002;
    /// Device Serial Number.
    pub const DEVICE_SERIAL_NUMBER: u16 = 0x0003;
    /// Vendor-Specific Extended Capability (§7.9.5).
    pub const VENDOR_SPECIFIC: u16 = 0x000b;
    /// Access Control Services (§7.7.11).
    pub const ACS: u16 = 0x000d;
    /// Alternative Routing-ID Interpretation (§7.8.7).
    pub const ARI: u16 = 0x000e;
    /// Single Root I/O Virtualization (§9.3.3).
    pub const SRIOV: u16 = 0x0010;
    /// Resizable BAR.
    pub const RESIZABLE_BAR: u16 = 0x0015;
    /// Latency Tolerance Reporting.
    pub const LTR: u16 = 0x0018;
    /// Secondary PCI Express.
    pub const SECONDARY_PCI_EXPRESS: u16 = 0x0019;
    /// Data Link Feature.
    pub const DATA_LINK_FEATURE: u16 = 0x0025;
    /// Physical Layer 16.0 GT/s.
    pub const PHYSICAL_LAYER_16GT: u16 = 0x0026;
}
