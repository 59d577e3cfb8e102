//! Bit positions of every TLP header field, and the Fmt/Type encodings (PCIe Base 6.0 §2.2).
//!
//! This is the single definition of where each field sits. The encoder and
//! decoder in this crate use it, and the RTL slices header DWs with the same
//! constants, so the two can never disagree.
//!
//! Positions are given within a header DW as it is read from the wire:
//! big-endian, so header byte 0 (Fmt/Type) is bits \[31:24\] of DW 0, byte 1
//! is bits \[23:16\], and so on (§2.1.2). DW indices count from the first
//! header DW; TLP Prefixes in front of the header are not counted.
//! These are the Non-Flit Mode formats.

/// One header field: which DW it lives in, its lowest bit, and its width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    /// The field's name as the spec writes it, for error messages.
    pub name: &'static str,
    /// Index of the header DW that holds the field (0 = the Fmt/Type DW).
    pub dw: usize,
    /// Position of the field's least significant bit within that DW.
    pub shift: u32,
    /// Width in bits.
    pub width: u32,
}

impl Field {
    /// The field's value mask, right-aligned (`width` ones).
    pub const fn mask(self) -> u32 {
        if self.width >= 32 {
            u32::MAX
        } else {
            (1 << self.width) - 1
        }
    }

    /// Whether `value` fits in the field without losing bits.
    pub const fn fits(self, value: u32) -> bool {
        value & !self.mask() == 0
    }

    /// Reads the field out of the DW that holds it.
    pub const fn extract(self, dw_value: u32) -> u32 {
        (dw_value >> self.shift) & self.mask()
    }

    /// Returns `dw_value` with the field replaced by `value` (truncated to the field width).
    pub const fn insert(self, dw_value: u32, value: u32) -> u32 {
        (dw_value & !(self.mask() << self.shift)) | ((value & self.mask()) << self.shift)
    }

    /// Reads the field from a header given as DWs.
    pub const fn read(self, header: &[u32; MAX_HEADER_DWS]) -> u32 {
        self.extract(header[self.dw])
    }

    /// Writes the field into a header given as DWs.
    pub fn write(self, header: &mut [u32; MAX_HEADER_DWS], value: u32) {
        header[self.dw] = self.insert(header[self.dw], value);
    }
}

const fn field(name: &'static str, dw: usize, shift: u32, width: u32) -> Field {
    Field {
        name,
        dw,
        shift,
        width,
    }
}

/// The largest Non-Flit Mode header: 4 DW (§2.2.1.1, Table 2-2).
pub const MAX_HEADER_DWS: usize = 4;

// ---- DW 0: fields present in all TLP headers (§2.2.1.1, Figure 2-5) ----

/// Fmt\[2:0\], byte 0 bits 7:5: header size, data presence, or TLP Prefix (Table 2-2).
pub const FMT: Field = field("Fmt", 0, 29, 3);
/// Type\[4:0\], byte 0 bits 4:0 (Table 2-3).
pub const TYPE: Field = field("Type", 0, 24, 5);
/// Tag\[9\] (T9), byte 1 bit 7, for 10-bit tags (§2.2.6.2).
pub const TAG_9: Field = field("T9", 0, 23, 1);
/// TC\[2:0\], byte 1 bits 6:4 (§2.2.6.6).
pub const TRAFFIC_CLASS: Field = field("TC", 0, 20, 3);
/// Tag\[8\] (T8), byte 1 bit 3, for 10-bit tags (§2.2.6.2).
pub const TAG_8: Field = field("T8", 0, 19, 1);
/// Attr\[2\], ID-Based Ordering (A2), byte 1 bit 2 (§2.2.6.4).
pub const ID_BASED_ORDERING: Field = field("Attr[2] (IDO)", 0, 18, 1);
/// TH, TLP Processing Hints present, byte 1 bit 0 (§2.2.7.1.1).
pub const TPH_PRESENT: Field = field("TH", 0, 16, 1);
/// TD, TLP Digest (ECRC) present at the end of the TLP, byte 2 bit 7 (§2.2.3).
pub const DIGEST_PRESENT: Field = field("TD", 0, 15, 1);
/// EP, poisoned data, byte 2 bit 6 (§2.7).
pub const POISONED: Field = field("EP", 0, 14, 1);
/// Attr\[1\], Relaxed Ordering, byte 2 bit 5 (§2.2.6.4).
pub const RELAXED_ORDERING: Field = field("Attr[1] (RO)", 0, 13, 1);
/// Attr\[0\], No Snoop, byte 2 bit 4 (§2.2.6.5).
pub const NO_SNOOP: Field = field("Attr[0] (NS)", 0, 12, 1);
/// Attr\[1:0\] as one field, byte 2 bits 5:4 (§2.2.6.3).
pub const ATTR_LOW: Field = field("Attr[1:0]", 0, 12, 2);
/// AT\[1:0\], Address Type, byte 2 bits 3:2 (§2.2.4.1, Table 10-1).
pub const ADDRESS_TYPE: Field = field("AT", 0, 10, 2);
/// Length\[9:0\] in DW, byte 2 bits 1:0 and byte 3; 0 encodes 1024 (Table 2-4).
pub const LENGTH: Field = field("Length", 0, 0, 10);
/// Message routing r\[2:0\]: the low three Type bits of a Msg/MsgD (Table 2-20).
pub const MESSAGE_ROUTING: Field = field("r[2:0]", 0, 24, 3);
/// Type\[4\] of a TLP Prefix: 1 for End-End, 0 for Local (§2.2.10.1).
pub const PREFIX_END_END: Field = field("Type[4] (End-End)", 0, 28, 1);
/// L\[3:0\] or E\[3:0\]: the TLP Prefix type (Tables 2-38 and 2-39).
pub const PREFIX_SUBTYPE: Field = field("L[3:0]/E[3:0]", 0, 24, 4);

// ---- DW 1 of requests: Memory, I/O, Configuration and Message (§2.2.7.1, §2.2.8) ----

/// Requester ID\[15:0\], bytes 4–5 (§2.2.6.2).
pub const REQUESTER_ID: Field = field("Requester ID", 1, 16, 16);
/// Tag\[7:0\] of a request, byte 6 (§2.2.6.2). Carries ST\[7:0\] in a
/// Memory Write with TH set (§2.2.7.1.1, Table 2-19).
pub const REQUEST_TAG_LOW: Field = field("Tag[7:0]", 1, 8, 8);
/// Last DW BE\[3:0\], byte 7 bits 7:4 (§2.2.5.1, Table 2-10).
pub const LAST_DW_BE: Field = field("Last DW BE", 1, 4, 4);
/// First DW BE\[3:0\], byte 7 bits 3:0 (§2.2.5.1, Table 2-10).
pub const FIRST_DW_BE: Field = field("First DW BE", 1, 0, 4);
/// ST\[7:0\] of a Memory Read or AtomicOp with TH set, byte 7, in place of the
/// byte enables (Table 2-19, §2.2.7.1).
pub const READ_STEERING_TAG: Field = field("ST[7:0]", 1, 0, 8);
/// Message Code\[7:0\], byte 7 of a Msg/MsgD (§2.2.8).
pub const MESSAGE_CODE: Field = field("Message Code", 1, 0, 8);

// ---- Address fields (§2.2.4.1, Table 2-7) ----

/// Address\[31:2\] of a 3 DW (32-bit) header, bytes 8–11 bits 7:2.
pub const ADDRESS_32: Field = field("Address[31:2]", 2, 2, 30);
/// PH\[1:0\] of a 3 DW header, byte 11 bits 1:0 (Table 2-17).
pub const PROCESSING_HINT_32: Field = field("PH", 2, 0, 2);
/// Address\[63:32\] of a 4 DW (64-bit) header, bytes 8–11.
pub const ADDRESS_64_HIGH: Field = field("Address[63:32]", 2, 0, 32);
/// Address\[31:2\] of a 4 DW header, bytes 12–15 bits 7:2.
pub const ADDRESS_64_LOW: Field = field("Address[31:2]", 3, 2, 30);
/// PH\[1:0\] of a 4 DW header, byte 15 bits 1:0 (Table 2-17).
pub const PROCESSING_HINT_64: Field = field("PH", 3, 0, 2);

// ---- Configuration requests (§2.2.7.1, Figure 2-39; ID fields per Table 2-8) ----

/// The whole destination routing ID (bus, device, function), bytes 8–9.
pub const CONFIG_TARGET_ID: Field = field("Bus/Device/Function", 2, 16, 16);
/// Bus Number\[7:0\], byte 8.
pub const CONFIG_BUS: Field = field("Bus Number", 2, 24, 8);
/// Device Number\[4:0\], byte 9 bits 7:3.
pub const CONFIG_DEVICE: Field = field("Device Number", 2, 19, 5);
/// Function Number\[2:0\], byte 9 bits 2:0.
pub const CONFIG_FUNCTION: Field = field("Function Number", 2, 16, 3);
/// Extended Register Number\[3:0\], byte 10 bits 3:0.
pub const CONFIG_EXT_REGISTER: Field = field("Extended Register Number", 2, 8, 4);
/// Register Number\[5:0\], byte 11 bits 7:2.
pub const CONFIG_REGISTER: Field = field("Register Number", 2, 2, 6);

// ---- Completions (§2.2.9.1, Figure 2-79) ----

/// Completer ID\[15:0\], bytes 4–5.
pub const COMPLETER_ID: Field = field("Completer ID", 1, 16, 16);
/// Completion Status\[2:0\], byte 6 bits 7:5 (Table 2-37).
pub const COMPLETION_STATUS: Field = field("Completion Status", 1, 13, 3);
/// BCM, Byte Count Modified, byte 6 bit 4.
pub const BYTE_COUNT_MODIFIED: Field = field("BCM", 1, 12, 1);
/// Byte Count\[11:0\], byte 6 bits 3:0 and byte 7; 0 encodes 4096.
pub const BYTE_COUNT: Field = field("Byte Count", 1, 0, 12);
/// Requester ID\[15:0\] of a completion, bytes 8–9.
pub const COMPLETION_REQUESTER_ID: Field = field("Requester ID", 2, 16, 16);
/// Tag\[7:0\] of a completion, byte 10.
pub const COMPLETION_TAG_LOW: Field = field("Tag[7:0]", 2, 8, 8);
/// Lower Address\[6:0\], byte 11 bits 6:0.
pub const LOWER_ADDRESS: Field = field("Lower Address", 2, 0, 7);

// ---- Messages (§2.2.8, Table 2-20, §2.2.8.6) ----

/// Destination ID of an ID-routed message, bytes 8–9.
pub const MESSAGE_TARGET_ID: Field = field("Destination ID", 2, 16, 16);
/// Vendor ID of a Vendor_Defined message, bytes 10–11 (§2.2.8.6).
pub const MESSAGE_VENDOR_ID: Field = field("Vendor ID", 2, 0, 16);

/// Fmt\[2:0\] encodings (§2.2.1.1, Table 2-2).
pub mod fmt {
    /// 3 DW header, no data.
    pub const THREE_DW_NO_DATA: u8 = 0b000;
    /// 4 DW header, no data.
    pub const FOUR_DW_NO_DATA: u8 = 0b001;
    /// 3 DW header, with data.
    pub const THREE_DW_WITH_DATA: u8 = 0b010;
    /// 4 DW header, with data.
    pub const FOUR_DW_WITH_DATA: u8 = 0b011;
    /// TLP Prefix (§2.2.10.1).
    pub const PREFIX: u8 = 0b100;
    /// Set in Fmt when the header is 4 DW.
    pub const FOUR_DW_BIT: u8 = 0b001;
    /// Set in Fmt when a data payload follows the header.
    pub const WITH_DATA_BIT: u8 = 0b010;
}

/// Type\[4:0\] encodings (§2.2.1.1, Table 2-3).
pub mod ty {
    /// MRd / MWr: memory read or write.
    pub const MEMORY: u8 = 0b0_0000;
    /// MRdLk: memory read, locked.
    pub const MEMORY_LOCKED: u8 = 0b0_0001;
    /// IORd / IOWr.
    pub const IO: u8 = 0b0_0010;
    /// CfgRd0 / CfgWr0.
    pub const CONFIG_TYPE0: u8 = 0b0_0100;
    /// CfgRd1 / CfgWr1.
    pub const CONFIG_TYPE1: u8 = 0b0_0101;
    /// Cpl / CplD.
    pub const COMPLETION: u8 = 0b0_1010;
    /// CplLk / CplDLk.
    pub const COMPLETION_LOCKED: u8 = 0b0_1011;
    /// FetchAdd AtomicOp (with data only).
    pub const FETCH_ADD: u8 = 0b0_1100;
    /// Swap AtomicOp (with data only).
    pub const SWAP: u8 = 0b0_1101;
    /// CAS AtomicOp (with data only).
    pub const COMPARE_AND_SWAP: u8 = 0b0_1110;
    /// DMWr (with data); the deprecated TCfgRd without data.
    pub const DEFERRABLE_MEMORY_WRITE: u8 = 0b1_1011;
    /// Msg / MsgD: `10r₂r₁r₀`, the routing in the low three bits.
    pub const MESSAGE: u8 = 0b1_0000;
    /// The Type bits that identify a message, whatever its routing.
    pub const MESSAGE_MASK: u8 = 0b1_1000;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dw0_fields_sit_at_the_byte_positions_the_spec_names() {
        // §2.2.1.1: T9 byte 1 bit 7, T8 byte 1 bit 3, A2 byte 1 bit 2, TH byte 1 bit 0,
        // TD byte 2 bit 7, EP byte 2 bit 6, Attr[1:0] byte 2 bits 5:4, AT byte 2 bits 3:2.
        // Byte b bit i of DW 0 is DW bit (3 - b) * 8 + i.
        assert_eq!(TAG_9.shift, 2 * 8 + 7);
        assert_eq!(TAG_8.shift, 2 * 8 + 3);
        assert_eq!(ID_BASED_ORDERING.shift, 2 * 8 + 2);
        assert_eq!(TPH_PRESENT.shift, 2 * 8);
        assert_eq!(DIGEST_PRESENT.shift, 8 + 7);
        assert_eq!(POISONED.shift, 8 + 6);
        assert_eq!(ATTR_LOW.shift, 8 + 4);
        assert_eq!(ADDRESS_TYPE.shift, 8 + 2);
    }

    #[test]
    fn insert_then_extract_returns_the_value_and_leaves_neighbours_alone() {
        let dw = TRAFFIC_CLASS.insert(0xffff_ffff, 0b010);
        assert_eq!(TRAFFIC_CLASS.extract(dw), 0b010);
        assert_eq!(dw | (0b111 << 20), 0xffff_ffff);
        assert_eq!(ADDRESS_64_HIGH.mask(), u32::MAX);
        assert!(LOWER_ADDRESS.fits(0x7f) && !LOWER_ADDRESS.fits(0x80));
    }
}
