//! Why a TLP could not be decoded or encoded: one variant per cause, carrying the offending values.

use core::fmt;

use super::header::MemoryOp;
use super::layout::Field;

/// A TLP that breaks a rule of PCIe Base 6.0 §2.2, or a buffer that cannot hold one.
///
/// Decoding returns these for Malformed TLPs the receiver is required or
/// permitted to check; encoding returns them for headers that a transmitter
/// must not form. Each variant names the rule's section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlpError {
    /// The buffer ends before the header (or prefix, or full TLP) does.
    Truncated {
        /// Bytes required.
        needed: usize,
        /// Bytes available.
        got: usize,
    },
    /// The output buffer is too small for the encoded header or TLP.
    BufferTooSmall {
        /// Bytes required.
        needed: usize,
        /// Bytes available.
        got: usize,
    },
    /// The TLP's size implied by Fmt, Type, Length and TD differs from the
    /// bytes received (§2.2.2, §2.2.3: a Malformed TLP).
    LengthMismatch {
        /// Bytes the header says the TLP occupies.
        expected: usize,
        /// Bytes received.
        got: usize,
    },
    /// Fmt/Type is a Reserved encoding (§2.2.1.1, Table 2-3; Malformed per §2.3).
    ReservedFmtType {
        /// Fmt\[2:0\].
        fmt: u8,
        /// Type\[4:0\].
        ty: u8,
    },
    /// Fmt/Type is defined by the spec but this crate does not model it: a
    /// Deferrable Memory Write (DMWr, Fmt 010b/011b, Type 1_1011b).
    UnsupportedFmtType {
        /// Fmt\[2:0\].
        fmt: u8,
        /// Type\[4:0\].
        ty: u8,
    },
    /// A header was expected but byte 0 has Fmt = 100b, a TLP Prefix (§2.2.10.1).
    UnexpectedPrefix {
        /// Byte 0 of the DW.
        byte0: u8,
    },
    /// A DW offered as a TLP Prefix does not have Fmt = 100b.
    NotAPrefix {
        /// Byte 0 of the DW.
        byte0: u8,
    },
    /// A 4 DW memory request addresses below 4 GiB. §2.2.4.1 requires the
    /// 3 DW format there and leaves receiver behaviour unspecified; weft rejects it.
    FourDwAddressBelow4G {
        /// The 64-bit address carried.
        address: u64,
    },
    /// An address with bits \[1:0\] set: request addresses are DW aligned (§2.2.4.1, Table 2-7).
    AddressNotDwAligned {
        /// The address offered.
        address: u64,
    },
    /// An I/O address above 4 GiB: I/O requests use the 32-bit format only (§2.2.4.1).
    IoAddressAbove4G {
        /// The address offered.
        address: u64,
    },
    /// A memory request whose address and length cross a 4 KiB boundary (§2.2.7.1).
    CrossesFourKiB {
        /// The request's start address.
        address: u64,
        /// Its Length in DW.
        length_dw: u16,
    },
    /// The First/Last DW byte enables break §2.2.5.1 for this length and alignment.
    IllegalByteEnables {
        /// First DW BE\[3:0\].
        first: u8,
        /// Last DW BE\[3:0\].
        last: u8,
        /// Length in DW.
        length: u16,
    },
    /// A length outside 1..=1024 DW (Table 2-4).
    LengthOutOfRange {
        /// The length offered, in DW.
        length_dw: u16,
    },
    /// An I/O or Configuration request whose Length is not 1 DW (§2.2.7.1).
    NotSingleDw {
        /// The Length field, in DW.
        length_dw: u16,
    },
    /// An I/O or Configuration request whose Traffic Class is not TC0 (§2.2.7.1).
    IoConfigTrafficClass {
        /// TC\[2:0\].
        traffic_class: u8,
    },
    /// An I/O or Configuration request with Attr\[1:0\] not 00b (§2.2.7.1).
    IoConfigAttributes {
        /// Attr\[1:0\].
        attr: u8,
    },
    /// A Completion Status encoding that Table 2-37 reserves (§2.2.9.1).
    /// §2.3.2 says a requester treats it as Unsupported Request.
    ReservedCompletionStatus {
        /// Completion Status\[2:0\].
        status: u8,
    },
    /// A completion byte count outside 1..=4096 (§2.2.9.1).
    ByteCountOutOfRange {
        /// The byte count offered.
        byte_count: u16,
    },
    /// A value too wide for its header field.
    FieldOutOfRange {
        /// The field, with its width.
        field: Field,
        /// The value offered.
        value: u32,
    },
    /// A posted request with Tag\[9:8\] set: those bits are Reserved for posted requests (§2.2.6.2).
    PostedTagTooWide {
        /// The 10-bit tag offered.
        tag: u16,
    },
    /// A message that must use TC0 does not (§2.2.8.1–§2.2.8.5: receivers must check).
    MessageRequiresTc0 {
        /// Message Code\[7:0\].
        code: u8,
        /// TC\[2:0\].
        traffic_class: u8,
    },
    /// More End-End TLP Prefixes than the spec permits (§2.2.10.4).
    TooManyEndEndPrefixes {
        /// The maximum permitted.
        max: usize,
    },
    /// More Local TLP Prefixes than this crate stores.
    TooManyLocalPrefixes {
        /// The maximum stored.
        max: usize,
    },
    /// A Local TLP Prefix after an End-End TLP Prefix (§2.2.10.1: Malformed).
    LocalPrefixAfterEndEnd,
    /// The payload offered for encoding does not match the header's Length.
    PayloadLengthMismatch {
        /// Payload bytes the header's Length calls for.
        expected: usize,
        /// Payload bytes offered.
        got: usize,
    },
    /// TD and the presence of a digest disagree when encoding (§2.2.3).
    DigestMismatch {
        /// The header's TD bit.
        digest_present_in_header: bool,
        /// Whether a digest value was supplied.
        digest_supplied: bool,
    },
    /// An AtomicOp whose Length is not an architected operand size: 1 or 2 DW
    /// for FetchAdd and Swap, 2, 4 or 8 DW for CAS (§2.2.7.1, Table 2-15;
    /// a Completer must treat any other value as Malformed).
    AtomicOpLength {
        /// FetchAdd, Swap or CompareAndSwap.
        op: MemoryOp,
        /// The Length field, in DW.
        length_dw: u16,
    },
    /// An AtomicOp whose address is not naturally aligned to its operand size
    /// (§2.2.7.1: Malformed, and the Completer must check).
    AtomicOpMisaligned {
        /// The request address.
        address: u64,
        /// The operand size in bytes: Length × 4 for FetchAdd and Swap,
        /// Length × 2 for CAS (whose data holds two operands).
        operand_bytes: u16,
    },
    /// An AtomicOp without TH whose byte enables are not 0000b. They are
    /// Reserved there (§2.2.7.1), so a transmitter writes 0; only encoding
    /// returns this, as a receiver ignores Reserved bits.
    AtomicOpByteEnables {
        /// First DW BE\[3:0\].
        first: u8,
        /// Last DW BE\[3:0\].
        last: u8,
    },
}

impl fmt::Display for TlpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Truncated { needed, got } => {
                write!(f, "TLP truncated: {needed} bytes needed, {got} available")
            }
            Self::BufferTooSmall { needed, got } => {
                write!(f, "output buffer too small: {needed} bytes needed, {got} available")
            }
            Self::LengthMismatch { expected, got } => write!(
                f,
                "malformed TLP: header implies {expected} bytes but {got} were received (§2.2.2)"
            ),
            Self::ReservedFmtType { fmt, ty } => {
                write!(f, "malformed TLP: reserved Fmt {fmt:03b}b / Type {ty:05b}b (Table 2-3)")
            }
            Self::UnsupportedFmtType { fmt, ty } => write!(
                f,
                "Fmt {fmt:03b}b / Type {ty:05b}b (Deferrable Memory Write) is not modelled by weft-pcie"
            ),
            Self::UnexpectedPrefix { byte0 } => {
                write!(f, "expected a TLP header but found a TLP Prefix (byte 0 = {byte0:#04x})")
            }
            Self::NotAPrefix { byte0 } => {
                write!(f, "not a TLP Prefix: Fmt is not 100b (byte 0 = {byte0:#04x})")
            }
            Self::FourDwAddressBelow4G { address } => write!(
                f,
                "4 DW memory request addresses {address:#x}, below 4 GiB; use the 3 DW format (§2.2.4.1)"
            ),
            Self::AddressNotDwAligned { address } => {
                write!(f, "address {address:#x} is not DW aligned (§2.2.4.1)")
            }
            Self::IoAddressAbove4G { address } => {
                write!(f, "I/O address {address:#x} does not fit 32 bits (§2.2.4.1)")
            }
            Self::CrossesFourKiB { address, length_dw } => write!(
                f,
                "request at {address:#x} of {length_dw} DW crosses a 4 KiB boundary (§2.2.7.1)"
            ),
            Self::IllegalByteEnables { first, last, length } => write!(
                f,
                "illegal byte enables first {first:04b}b, last {last:04b}b for length {length} DW (§2.2.5.1)"
            ),
            Self::LengthOutOfRange { length_dw } => {
                write!(f, "length {length_dw} DW is outside 1..=1024 (Table 2-4)")
            }
            Self::NotSingleDw { length_dw } => write!(
                f,
                "I/O or configuration request of {length_dw} DW; these must be 1 DW (§2.2.7.1)"
            ),
            Self::IoConfigTrafficClass { traffic_class } => write!(
                f,
                "I/O or configuration request on TC{traffic_class}; these must use TC0 (§2.2.7.1)"
            ),
            Self::IoConfigAttributes { attr } => write!(
                f,
                "I/O or configuration request with Attr[1:0] = {attr:02b}b; must be 00b (§2.2.7.1)"
            ),
            Self::ReservedCompletionStatus { status } => {
                write!(f, "reserved completion status {status:03b}b (Table 2-37)")
            }
            Self::ByteCountOutOfRange { byte_count } => {
                write!(f, "byte count {byte_count} is outside 1..=4096 (§2.2.9.1)")
            }
            Self::FieldOutOfRange { field, value } => write!(
                f,
                "{value:#x} does not fit the {}-bit {} field",
                field.width, field.name
            ),
            Self::PostedTagTooWide { tag } => write!(
                f,
                "posted request with tag {tag:#x}: Tag[9:8] is reserved for posted requests (§2.2.6.2)"
            ),
            Self::MessageRequiresTc0 {
                code,
                traffic_class,
            } => write!(
                f,
                "message code {code:#04x} on TC{traffic_class}; this message must use TC0 (§2.2.8)"
            ),
            Self::TooManyEndEndPrefixes { max } => {
                write!(f, "more than {max} End-End TLP Prefixes (§2.2.10.4)")
            }
            Self::TooManyLocalPrefixes { max } => {
                write!(f, "more than {max} Local TLP Prefixes, the most weft-pcie stores")
            }
            Self::LocalPrefixAfterEndEnd => write!(
                f,
                "a Local TLP Prefix follows an End-End TLP Prefix; Local ones come first (§2.2.10.1)"
            ),
            Self::PayloadLengthMismatch { expected, got } => write!(
                f,
                "payload of {got} bytes does not match the header's length of {expected} bytes"
            ),
            Self::DigestMismatch {
                digest_present_in_header,
                digest_supplied,
            } => write!(
                f,
                "TD is {} but a digest was {}supplied (§2.2.3)",
                u8::from(digest_present_in_header),
                if digest_supplied { "" } else { "not " }
            ),
            Self::AtomicOpLength { op, length_dw } => write!(
                f,
                "malformed AtomicOp: {} of {length_dw} DW; FetchAdd and Swap take 1 or 2 DW, \
                 CAS 2, 4 or 8 DW (§2.2.7.1, Table 2-15)",
                op.name()
            ),
            Self::AtomicOpMisaligned {
                address,
                operand_bytes,
            } => write!(
                f,
                "malformed AtomicOp: address {address:#x} is not aligned to its \
                 {operand_bytes}-byte operand (§2.2.7.1)"
            ),
            Self::AtomicOpByteEnables { first, last } => write!(
                f,
                "AtomicOp byte enables first {first:04b}b, last {last:04b}b are Reserved and \
                 must be 0000b when TH is clear (§2.2.7.1)"
            ),
        }
    }
}

impl core::error::Error for TlpError {}
