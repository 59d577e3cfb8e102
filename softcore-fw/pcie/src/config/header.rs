//! Register offsets and bit fields of the Type 0 and Type 1 configuration
//! headers (PCIe Base 6.0 §7.5.1).
//!
//! These are the one definition of the header layout for the firmware, the
//! simulator and the RTL. Offsets are byte offsets into configuration space.

/// Registers common to both header types (§7.5.1.1).
pub mod common {
    /// Vendor ID, 16 bits, HwInit (§7.5.1.1.1).
    pub const VENDOR_ID: u16 = 0x00;
    /// Device ID, 16 bits, HwInit (§7.5.1.1.2).
    pub const DEVICE_ID: u16 = 0x02;
    /// Command register, 16 bits (§7.5.1.1.3); bits in [`super::command`].
    pub const COMMAND: u16 = 0x04;
    /// Status register, 16 bits (§7.5.1.1.4); bits in [`super::status`].
    pub const STATUS: u16 = 0x06;
    /// Revision ID, 8 bits, HwInit (§7.5.1.1.5).
    pub const REVISION_ID: u16 = 0x08;
    /// Class Code, 24 bits from here: programming interface, sub-class, base
    /// class (§7.5.1.1.6).
    pub const CLASS_CODE: u16 = 0x09;
    /// Programming Interface byte of the Class Code.
    pub const PROG_IF: u16 = 0x09;
    /// Sub-Class Code byte of the Class Code.
    pub const SUB_CLASS: u16 = 0x0a;
    /// Base Class Code byte of the Class Code.
    pub const BASE_CLASS: u16 = 0x0b;
    /// Cache Line Size, 8 bits, RW with no effect on PCIe behaviour (§7.5.1.1.7).
    pub const CACHE_LINE_SIZE: u16 = 0x0c;
    /// Latency Timer (Primary Latency Timer in Type 1), hardwired 0 (§7.5.1.1.8).
    pub const LATENCY_TIMER: u16 = 0x0d;
    /// Header Type, 8 bits (§7.5.1.1.9); values in [`super::header_type`].
    pub const HEADER_TYPE: u16 = 0x0e;
    /// BIST, 8 bits; 0 when BIST is not implemented (§7.5.1.1.10).
    pub const BIST: u16 = 0x0f;
    /// Capabilities Pointer, 8 bits, RO: offset of the first capability, or 0
    /// (§7.5.1.1.11).
    pub const CAPABILITIES_POINTER: u16 = 0x34;
    /// Interrupt Line, 8 bits, RW: used by system software only (§7.5.1.1.12).
    pub const INTERRUPT_LINE: u16 = 0x3c;
    /// Interrupt Pin, 8 bits, RO: 0 none, 1..=4 INTA..INTD (§7.5.1.1.13).
    pub const INTERRUPT_PIN: u16 = 0x3d;
    /// First byte after the header: where capabilities may start (§7.5.1.1.11).
    pub const HEADER_END: u16 = 0x40;
}

/// Type 0 (endpoint) header registers (§7.5.1.2).
pub mod type0 {
    /// Base Address Register 0; BARs 0..5 are consecutive DWs (§7.5.1.2.1).
    pub const BAR0: u16 = 0x10;
    /// Number of Base Address Registers in a Type 0 header.
    pub const BAR_COUNT: u8 = 6;
    /// Cardbus CIS Pointer, unused by PCIe, hardwired 0 (§7.5.1.2.2).
    pub const CARDBUS_CIS_POINTER: u16 = 0x28;
    /// Subsystem Vendor ID, 16 bits, HwInit (§7.5.1.2.3).
    pub const SUBSYSTEM_VENDOR_ID: u16 = 0x2c;
    /// Subsystem ID, 16 bits, HwInit (§7.5.1.2.3).
    pub const SUBSYSTEM_ID: u16 = 0x2e;
    /// Expansion ROM Base Address (§7.5.1.2.4); bits in [`super::expansion_rom`].
    pub const EXPANSION_ROM_BASE: u16 = 0x30;
    /// Min_Gnt, hardwired 0 for PCIe (§7.5.1.2.5).
    pub const MIN_GNT: u16 = 0x3e;
    /// Max_Lat, hardwired 0 for PCIe (§7.5.1.2.5).
    pub const MAX_LAT: u16 = 0x3f;
}

/// Type 1 (bridge, root port, switch port) header registers (§7.5.1.3).
pub mod type1 {
    /// Base Address Register 0; a Type 1 header has two (§7.5.1.3.1).
    pub const BAR0: u16 = 0x10;
    /// Number of Base Address Registers in a Type 1 header.
    pub const BAR_COUNT: u8 = 2;
    /// Primary Bus Number, 8 bits, RW (§7.5.1.3.2).
    pub const PRIMARY_BUS: u16 = 0x18;
    /// Secondary Bus Number, 8 bits, RW (§7.5.1.3.3).
    pub const SECONDARY_BUS: u16 = 0x19;
    /// Subordinate Bus Number, 8 bits, RW (§7.5.1.3.4).
    pub const SUBORDINATE_BUS: u16 = 0x1a;
    /// Secondary Latency Timer, hardwired 0 for PCIe (§7.5.1.3.5).
    pub const SECONDARY_LATENCY_TIMER: u16 = 0x1b;
    /// I/O Base, 8 bits: address bits 15:12 in bits 7:4, decode width in
    /// bits 3:0 (§7.5.1.3.6); see [`super::window`].
    pub const IO_BASE: u16 = 0x1c;
    /// I/O Limit, 8 bits, same layout as I/O Base (§7.5.1.3.6).
    pub const IO_LIMIT: u16 = 0x1d;
    /// Secondary Status, 16 bits (§7.5.1.3.7); bits in [`super::secondary_status`].
    pub const SECONDARY_STATUS: u16 = 0x1e;
    /// Memory Base, 16 bits: address bits 31:20 in bits 15:4 (§7.5.1.3.8).
    pub const MEMORY_BASE: u16 = 0x20;
    /// Memory Limit, 16 bits: address bits 31:20 in bits 15:4 (§7.5.1.3.8).
    pub const MEMORY_LIMIT: u16 = 0x22;
    /// Prefetchable Memory Base, 16 bits: address bits 31:20 in bits 15:4,
    /// decode width in bits 3:0 (§7.5.1.3.9).
    pub const PREFETCHABLE_BASE: u16 = 0x24;
    /// Prefetchable Memory Limit, 16 bits, same layout (§7.5.1.3.9).
    pub const PREFETCHABLE_LIMIT: u16 = 0x26;
    /// Prefetchable Base Upper 32 Bits: address bits 63:32 (§7.5.1.3.10).
    pub const PREFETCHABLE_BASE_UPPER: u16 = 0x28;
    /// Prefetchable Limit Upper 32 Bits: address bits 63:32 (§7.5.1.3.10).
    pub const PREFETCHABLE_LIMIT_UPPER: u16 = 0x2c;
    /// I/O Base Upper 16 Bits: address bits 31:16 (§7.5.1.3.11).
    pub const IO_BASE_UPPER: u16 = 0x30;
    /// I/O Limit Upper 16 Bits: address bits 31:16 (§7.5.1.3.11).
    pub const IO_LIMIT_UPPER: u16 = 0x32;
    /// Expansion ROM Base Address of a Type 1 function (§7.5.1.3.12).
    pub const EXPANSION_ROM_BASE: u16 = 0x38;
    /// Bridge Control, 16 bits (§7.5.1.3.13); bits in [`super::bridge_control`].
    pub const BRIDGE_CONTROL: u16 = 0x3e;
}

/// Command register bits (§7.5.1.1.3).
pub mod command {
    /// I/O Space Enable, RW.
    pub const IO_SPACE: u16 = 1 << 0;
    /// Memory Space Enable, RW.
    pub const MEMORY_SPACE: u16 = 1 << 1;
    /// Bus Master Enable, RW.
    pub const BUS_MASTER: u16 = 1 << 2;
    /// Special Cycle Enable, hardwired 0 for PCIe.
    pub const SPECIAL_CYCLE: u16 = 1 << 3;
    /// Memory Write and Invalidate, hardwired 0 for PCIe.
    pub const MEMORY_WRITE_INVALIDATE: u16 = 1 << 4;
    /// VGA Palette Snoop, hardwired 0 for PCIe.
    pub const VGA_PALETTE_SNOOP: u16 = 1 << 5;
    /// Parity Error Response, RW.
    pub const PARITY_ERROR_RESPONSE: u16 = 1 << 6;
    /// IDSEL Stepping/Wait Cycle Control, hardwired 0 for PCIe.
    pub const IDSEL_STEPPING: u16 = 1 << 7;
    /// SERR# Enable, RW.
    pub const SERR_ENABLE: u16 = 1 << 8;
    /// Fast Back-to-Back Transactions Enable, hardwired 0 for PCIe.
    pub const FAST_BACK_TO_BACK: u16 = 1 << 9;
    /// Interrupt Disable, RW: stops INTx emulation messages.
    pub const INTERRUPT_DISABLE: u16 = 1 << 10;
    /// The bits a PCIe function implements as RW.
    pub const RW_BITS: u16 = IO_SPACE
        | MEMORY_SPACE
        | BUS_MASTER
        | PARITY_ERROR_RESPONSE
        | SERR_ENABLE
        | INTERRUPT_DISABLE;
}

/// Status register bits (§7.5.1.1.4).
pub mod status {
    /// Immediate Readiness, RO.
    pub const IMMEDIATE_READINESS: u16 = 1 << 0;
    /// Interrupt Status, RO: an INTx is pending.
    pub const INTERRUPT_STATUS: u16 = 1 << 3;
    /// Capabilities List, RO: hardwired 1 for PCIe functions.
    pub const CAPABILITIES_LIST: u16 = 1 << 4;
    /// 66 MHz Capable, hardwired 0 for PCIe.
    pub const CAPABLE_66MHZ: u16 = 1 << 5;
    /// Fast Back-to-Back Transactions Capable, hardwired 0 for PCIe.
    pub const FAST_BACK_TO_BACK: u16 = 1 << 7;
    /// Master Data Parity Error, RW1C.
    pub const MASTER_DATA_PARITY_ERROR: u16 = 1 << 8;
    /// DEVSEL Timing (bits 10:9), hardwired 0 for PCIe.
    pub const DEVSEL_TIMING: u16 = 0b11 << 9;
    /// Signaled Target Abort, RW1C.
    pub const SIGNALED_TARGET_ABORT: u16 = 1 << 11;
    /// Received Target Abort, RW1C.
    pub const RECEIVED_TARGET_ABORT: u16 = 1 << 12;
    /// Received Master Abort, RW1C.
    pub const RECEIVED_MASTER_ABORT: u16 = 1 << 13;
    /// Signaled System Error, RW1C.
    pub const SIGNALED_SYSTEM_ERROR: u16 = 1 << 14;
    /// Detected Parity Error, RW1C.
    pub const DETECTED_PARITY_ERROR: u16 = 1 << 15;
    /// The error bits, all RW1C.
    pub const RW1C_BITS: u16 = MASTER_DATA_PARITY_ERROR
        | SIGNALED_TARGET_ABORT
        | RECEIVED_TARGET_ABORT
        | RECEIVED_MASTER_ABORT
        | SIGNALED_SYSTEM_ERROR
        | DETECTED_PARITY_ERROR;
}

/// Header Type register values (§7.5.1.1.9).
pub mod header_type {
    /// Bits 6:0 select the header layout.
    pub const LAYOUT_MASK: u8 = 0x7f;
    /// Type 0: an endpoint function.
    pub const TYPE0: u8 = 0x00;
    /// Type 1: a bridge (root port, switch port, PCIe-to-PCI bridge).
    pub const TYPE1: u8 = 0x01;
    /// Bit 7: the device has more than one function.
    pub const MULTI_FUNCTION: u8 = 0x80;
}

/// Base Address Register bits (§7.5.1.2.1).
pub mod bar {
    /// Bit 0: 1 for an I/O BAR, 0 for a memory BAR (RO).
    pub const IO_SPACE: u32 = 1 << 0;
    /// Bits 2:1 of a memory BAR: its decode width (RO).
    pub const MEMORY_TYPE_MASK: u32 = 0b11 << 1;
    /// Memory type 00b: a 32-bit BAR.
    pub const MEMORY_TYPE_32: u32 = 0b00 << 1;
    /// Memory type 10b: a 64-bit BAR spanning this register and the next.
    pub const MEMORY_TYPE_64: u32 = 0b10 << 1;
    /// Bit 3 of a memory BAR: Prefetchable (RO).
    pub const PREFETCHABLE: u32 = 1 << 3;
    /// The address bits of a memory BAR's low register.
    pub const MEMORY_ADDRESS_MASK: u32 = !0xf;
    /// The address bits of an I/O BAR (bit 1 is reserved).
    pub const IO_ADDRESS_MASK: u32 = !0x3;
    /// Smallest memory BAR the layout allows: 16 bytes (bits 3:0 are flags).
    pub const MIN_MEMORY_SIZE: u64 = 16;
    /// Smallest I/O BAR: 4 bytes.
    pub const MIN_IO_SIZE: u64 = 4;
    /// Largest I/O BAR the spec allows a function to request: 256 bytes.
    pub const MAX_IO_SIZE: u64 = 256;
}

/// Expansion ROM Base Address register bits (§7.5.1.2.4).
pub mod expansion_rom {
    /// Bit 0: Expansion ROM Enable, RW.
    pub const ENABLE: u32 = 1 << 0;
    /// Bits 31:11: the ROM address; bits below the ROM size are hardwired 0.
    pub const ADDRESS_MASK: u32 = 0xffff_f800;
    /// Smallest expansion ROM: 2 KiB.
    pub const MIN_SIZE: u32 = 0x800;
}

/// Secondary Status bits of a Type 1 header (§7.5.1.3.7).
pub mod secondary_status {
    /// Master Data Parity Error, RW1C.
    pub const MASTER_DATA_PARITY_ERROR: u16 = 1 << 8;
    /// Signaled Target Abort, RW1C.
    pub const SIGNALED_TARGET_ABORT: u16 = 1 << 11;
    /// Received Target Abort, RW1C.
    pub const RECEIVED_TARGET_ABORT: u16 = 1 << 12;
    /// Received Master Abort, RW1C.
    pub const RECEIVED_MASTER_ABORT: u16 = 1 << 13;
    /// Received System Error, RW1C.
    pub const RECEIVED_SYSTEM_ERROR: u16 = 1 << 14;
    /// Detected Parity Error, RW1C.
    pub const DETECTED_PARITY_ERROR: u16 = 1 << 15;
    /// The error bits, all RW1C.
    pub const RW1C_BITS: u16 = MASTER_DATA_PARITY_ERROR
        | SIGNALED_TARGET_ABORT
        | RECEIVED_TARGET_ABORT
        | RECEIVED_MASTER_ABORT
        | RECEIVED_SYSTEM_ERROR
        | DETECTED_PARITY_ERROR;
}

/// Bridge Control bits of a Type 1 header (§7.5.1.3.13).
pub mod bridge_control {
    /// Parity Error Response Enable, RW.
    pub const PARITY_ERROR_RESPONSE: u16 = 1 << 0;
    /// SERR# Enable, RW: forward ERR_ messages from the secondary side.
    pub const SERR_ENABLE: u16 = 1 << 1;
    /// ISA Enable, RW.
    pub const ISA_ENABLE: u16 = 1 << 2;
    /// VGA Enable, RW.
    pub const VGA_ENABLE: u16 = 1 << 3;
    /// VGA 16-bit Decode, RW.
    pub const VGA_16BIT_DECODE: u16 = 1 << 4;
    /// Master Abort Mode, hardwired 0 for PCIe.
    pub const MASTER_ABORT_MODE: u16 = 1 << 5;
    /// Secondary Bus Reset, RW: hot reset of the secondary side.
    pub const SECONDARY_BUS_RESET: u16 = 1 << 6;
    /// The bits a PCIe bridge implements as RW.
    pub const RW_BITS: u16 = PARITY_ERROR_RESPONSE
        | SERR_ENABLE
        | ISA_ENABLE
        | VGA_ENABLE
        | VGA_16BIT_DECODE
        | SECONDARY_BUS_RESET;
}

/// Address window encodings of a Type 1 header (§7.5.1.3.6, §7.5.1.3.8, §7.5.1.3.9).
pub mod window {
    /// Low bits of I/O Base/Limit: the window decodes 16-bit I/O addresses.
    pub const IO_DECODE_16: u8 = 0x0;
    /// Low bits of I/O Base/Limit: the window decodes 32-bit I/O addresses
    /// and the upper 16-bit registers are implemented.
    pub const IO_DECODE_32: u8 = 0x1;
    /// Bits 3:0 of I/O Base/Limit hold the decode width, RO.
    pub const IO_CAPABILITY_MASK: u8 = 0x0f;
    /// Bits 7:4 of I/O Base/Limit hold I/O address bits 15:12, RW.
    pub const IO_ADDRESS_MASK: u8 = 0xf0;
    /// An I/O window is a multiple of 4 KiB.
    pub const IO_GRANULARITY: u32 = 0x1000;
    /// Low bits of Prefetchable Base/Limit: a 32-bit window.
    pub const PREFETCHABLE_DECODE_32: u16 = 0x0;
    /// Low bits of Prefetchable Base/Limit: a 64-bit window with upper registers.
    pub const PREFETCHABLE_DECODE_64: u16 = 0x1;
    /// Bits 15:4 of Memory/Prefetchable Base/Limit hold address bits 31:20, RW.
    pub const MEMORY_ADDRESS_MASK: u16 = 0xfff0;
    /// Bits 3:0 of Prefetchable Base/Limit hold the decode width, RO.
    pub const MEMORY_CAPABILITY_MASK: u16 = 0x000f;
    /// A memory window is a multiple of 1 MiB.
    pub const MEMORY_GRANULARITY: u64 = 0x10_0000;
}
