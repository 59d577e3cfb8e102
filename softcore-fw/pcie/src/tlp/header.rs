//! The TLP header model and its encoding to and from wire bytes (PCIe Base 6.0 §2.2, Non-Flit Mode).
//!
//! A [`Header`] holds only fields that mean something for its TLP type, so a
//! header that the spec forbids a transmitter to form is rejected by
//! [`Header::encode`], and a received one that breaks a rule receivers
//! check is rejected by [`Header::decode`]. Reserved bits are written as 0
//! and ignored when read (§2.2). A switch that must forward Reserved bits
//! unmodified forwards the received bytes, not a re-encoded header.

use crate::id::Bdf;

use super::byte_enables::check_byte_enables;
use super::error::TlpError;
use super::fields::{
    byte_count_from_field, byte_count_to_field, length_from_field, length_to_field, AddressType,
    Attributes, Direction, ProcessingHint, Tag, TrafficClass,
};
use super::fmt_type::{header_dws_for_fmt, TlpType};
use super::layout::{self, fmt, ty, Field, MAX_HEADER_DWS};
use super::message::{MessageCode, MessageRouting};
use super::read_completion::{lower_address, read_request_byte_count};

/// Addresses from here up need the 4 DW (64-bit) header; below it the 3 DW header is required (§2.2.4.1).
pub const FOUR_GIB: u64 = 1 << 32;

/// The span a memory request must stay within (§2.2.7.1).
const FOUR_KIB: u64 = 4096;

/// A TLP header: the bits common to every TLP type, and the type-specific part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// TD: a 1 DW TLP Digest (ECRC) follows the payload (§2.2.3).
    pub digest_present: bool,
    /// EP: the payload is poisoned (§2.7). Reserved for TLPs without data,
    /// but kept as received.
    pub poisoned: bool,
    /// The type-specific fields.
    pub body: Body,
}

/// The type-specific part of a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// MRd, MRdLk, MWr or an AtomicOp (§2.2.7.1).
    Memory(MemoryRequest),
    /// IORd or IOWr (§2.2.7.1).
    Io(IoRequest),
    /// CfgRd0/1 or CfgWr0/1 (§2.2.7.1).
    Config(ConfigRequest),
    /// Cpl, CplD, CplLk or CplDLk (§2.2.9).
    Completion(Completion),
    /// Msg or MsgD (§2.2.8).
    Message(Message),
}

/// What a memory request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryOp {
    /// MRd.
    Read,
    /// MRdLk, a locked read (§6.5).
    ReadLocked,
    /// MWr, posted.
    Write,
    /// FetchAdd AtomicOp: adds the one operand to the target and returns the
    /// original value (§6.15). Non-posted, with data.
    FetchAdd,
    /// Swap AtomicOp: writes the one operand to the target and returns the
    /// original value (§6.15). Non-posted, with data.
    Swap,
    /// CAS AtomicOp: the data holds two operands, "compare" then "swap"; the
    /// target is replaced by "swap" if it equals "compare", and the original
    /// value is returned (§2.2.7.1, §6.15). Non-posted, with data.
    CompareAndSwap,
}

impl MemoryOp {
    /// Whether this is one of the three AtomicOps.
    pub const fn is_atomic(self) -> bool {
        matches!(self, Self::FetchAdd | Self::Swap | Self::CompareAndSwap)
    }

    /// The TLP type's name as Table 2-3 writes it.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Read => "MRd",
            Self::ReadLocked => "MRdLk",
            Self::Write => "MWr",
            Self::FetchAdd => "FetchAdd",
            Self::Swap => "Swap",
            Self::CompareAndSwap => "CAS",
        }
    }
}

/// A memory read, write or AtomicOp request (§2.2.7.1, Figures 2-36 and 2-37).
///
/// The header size follows from the address: 3 DW below 4 GiB, 4 DW at or
/// above it (§2.2.4.1); AtomicOps use the same two formats.
///
/// # AtomicOps
///
/// FetchAdd, Swap and CAS carry their operands as the payload. The rules
/// checked for them, from PCIe Base 6.0 §2.2.7.1 (Non-Flit Mode request rules):
///
/// - Length is an architected operand size (Table 2-15): 1 or 2 DW (32- or
///   64-bit operand) for FetchAdd and Swap; 2, 4 or 8 DW (two 32-, 64- or
///   128-bit operands) for CAS. Anything else is Malformed
///   ([`TlpError::AtomicOpLength`]).
/// - The address is naturally aligned to the operand size, Length × 4 bytes
///   for FetchAdd and Swap, Length × 2 bytes for CAS; otherwise Malformed
///   ([`TlpError::AtomicOpMisaligned`]). This alignment keeps the access
///   inside one 4 KiB page, so the 4 KiB check is not applied: for CAS the
///   Length covers two operands but the memory touched is one.
/// - Byte enables: with TH clear the First and Last DW BE fields are
///   Reserved; with TH set byte 7 carries ST\[7:0\] and the byte enables are
///   "implied to be Reserved". So they are never checked against §2.2.5.1;
///   decoding ignores them (they read back as 0000b) and encoding refuses
///   non-zero values ([`TlpError::AtomicOpByteEnables`]). Source: the
///   §2.2.7.1 bullets on Last/First DW BE, read in a transcription of the 6.x
///   text, and consistent with Table 2-19 (ST\[7:0\] in byte 7 for reads and
///   AtomicOps). Confidence: high.
/// - TC, attributes, AT and TH are as for any memory request: no extra rule.
///
/// The spec places the Length and alignment checks on the Completer. This
/// crate applies them on every decode, as it does the 4 KiB rule, so weft
/// neither forwards nor forms such a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryRequest {
    /// Read, locked read, write or AtomicOp.
    pub op: MemoryOp,
    /// TC\[2:0\].
    pub traffic_class: TrafficClass,
    /// Attr\[2:0\].
    pub attributes: Attributes,
    /// AT\[1:0\].
    pub address_type: AddressType,
    /// Requester ID.
    pub requester: Bdf,
    /// Tag. For a write (posted) Tag\[9:8\] is Reserved, so the tag is 8 bits;
    /// with TH set its low byte is the Steering Tag ST\[7:0\] (§2.2.6.2, §2.2.7.1.1).
    /// Reads and AtomicOps are non-posted and use all 10 bits.
    pub tag: Tag,
    /// The byte address of the first DW; bits \[1:0\] are always 0.
    pub address: u64,
    /// Length\[9:0\] in DW, 1..=1024: the data written, the data requested,
    /// or an AtomicOp's operands (one, or two for CAS).
    pub length_dw: u16,
    /// First DW BE\[3:0\]. With TH set on a read or AtomicOp, the low nibble
    /// of ST\[7:0\]; otherwise Reserved (0000b) in an AtomicOp.
    pub first_be: u8,
    /// Last DW BE\[3:0\]. With TH set on a read or AtomicOp, the high nibble
    /// of ST\[7:0\]; otherwise Reserved (0000b) in an AtomicOp.
    pub last_be: u8,
    /// `Some` when TH is set, carrying PH\[1:0\] (§2.2.7.1.1).
    pub processing_hint: Option<ProcessingHint>,
}

impl MemoryRequest {
    /// Whether the address requires the 4 DW header (§2.2.4.1).
    pub const fn uses_four_dw_header(&self) -> bool {
        self.address >= FOUR_GIB
    }

    /// Whether TH is set on a read or AtomicOp, so byte 7 holds ST\[7:0\]
    /// and the byte enables are implied (§2.2.5.1, §2.2.7.1).
    pub const fn byte_enables_replaced_by_steering_tag(&self) -> bool {
        self.processing_hint.is_some() && !matches!(self.op, MemoryOp::Write)
    }

    /// The Steering Tag ST\[7:0\] when TH is set: byte 6 of a write, byte 7
    /// of a read or AtomicOp (Table 2-19, §2.2.7.1).
    pub const fn steering_tag(&self) -> Option<u8> {
        if self.processing_hint.is_none() {
            None
        } else if self.byte_enables_replaced_by_steering_tag() {
            Some((self.last_be << 4) | (self.first_be & 0xf))
        } else {
            Some(self.tag.low())
        }
    }

    /// The byte enables that apply: the fields themselves, or for a read
    /// with TH set the implied 1111b/0000b (1 DW) or 1111b/1111b (§2.2.5.1).
    ///
    /// An AtomicOp has none, as its byte enables are Reserved (§2.2.7.1),
    /// and gives (0000b, 0000b). Its whole operand is accessed; for the
    /// completion use [`MemoryRequest::completion_byte_count`].
    pub const fn effective_byte_enables(&self) -> (u8, u8) {
        if self.op.is_atomic() {
            (0, 0)
        } else if !self.byte_enables_replaced_by_steering_tag() {
            (self.first_be, self.last_be)
        } else if self.length_dw == 1 {
            (0b1111, 0b0000)
        } else {
            (0b1111, 0b1111)
        }
    }

    /// An AtomicOp's operand size in bytes: Length × 4 for FetchAdd and
    /// Swap, Length × 2 for CAS, whose data holds two operands (§2.2.7.1,
    /// Table 2-15). `None` for reads and writes.
    pub const fn atomic_operand_bytes(&self) -> Option<u16> {
        match self.op {
            MemoryOp::FetchAdd | MemoryOp::Swap => Some(self.length_dw.saturating_mul(4)),
            MemoryOp::CompareAndSwap => Some(self.length_dw.saturating_mul(2)),
            MemoryOp::Read | MemoryOp::ReadLocked | MemoryOp::Write => None,
        }
    }

    /// The data, in DW, that the completions of this request return in all
    /// when it succeeds; `None` for a posted write, which is not completed.
    ///
    /// - MRd, MRdLk: Length, possibly spread over several CplD/CplDLk (§2.3.1.1).
    /// - FetchAdd, Swap: Length, the original value of the one operand-sized
    ///   target (§6.15), in a single CplD.
    /// - CAS: Length / 2, one operand's worth, as the request carried two.
    ///
    /// A completion with a status other than Successful carries no data (Cpl).
    pub const fn completion_data_dw(&self) -> Option<u16> {
        match self.op {
            MemoryOp::Write => None,
            MemoryOp::Read | MemoryOp::ReadLocked => Some(self.length_dw),
            MemoryOp::FetchAdd | MemoryOp::Swap => Some(self.length_dw),
            MemoryOp::CompareAndSwap => Some(self.length_dw / 2),
        }
    }

    /// The Byte Count of the first (or only) completion of this request;
    /// `None` for a posted write (§2.2.9.1).
    ///
    /// For a read, the bytes from the first to the last enabled byte
    /// ([`read_request_byte_count`] with the effective byte enables,
    /// §2.3.1.1). For an AtomicOp, the operand size in bytes: §2.2.9.1 says
    /// an AtomicOp Completion's Byte Count "must equal the associated AtomicOp
    /// operand size in bytes", whatever its status. The read rule must not be
    /// applied to AtomicOps: their byte enables are Reserved, and a CAS's
    /// Length counts two operands.
    pub fn completion_byte_count(&self) -> Option<u16> {
        match self.atomic_operand_bytes() {
            Some(bytes) => Some(bytes),
            None if self.op == MemoryOp::Write => None,
            None => {
                let (first_be, last_be) = self.effective_byte_enables();
                Some(read_request_byte_count(self.length_dw, first_be, last_be))
            }
        }
    }

    /// The Lower Address of the first (or only) completion of this request;
    /// `None` for a posted write (§2.2.9.1).
    ///
    /// For a read, the low 7 bits of the first enabled byte's address
    /// ([`lower_address`], §2.3.1.1). For an AtomicOp the field is Reserved
    /// (§2.2.9.1), so 0.
    pub fn completion_lower_address(&self) -> Option<u8> {
        match self.op {
            MemoryOp::Write => None,
            MemoryOp::FetchAdd | MemoryOp::Swap | MemoryOp::CompareAndSwap => Some(0),
            MemoryOp::Read | MemoryOp::ReadLocked => {
                Some(lower_address(self.address, self.effective_byte_enables().0))
            }
        }
    }

    fn validate(&self) -> Result<(), TlpError> {
        length_to_field(self.length_dw)?;
        if self.address & 0b11 != 0 {
            return Err(TlpError::AddressNotDwAligned {
                address: self.address,
            });
        }
        check_field(layout::FIRST_DW_BE, self.first_be.into())?;
        check_field(layout::LAST_DW_BE, self.last_be.into())?;
        if self.op == MemoryOp::Write && self.tag.get() > 0xff {
            return Err(TlpError::PostedTagTooWide {
                tag: self.tag.get(),
            });
        }
        // Reserved fields are formed as 0 (§2.2); an AtomicOp's byte enables
        // are Reserved unless TH puts ST[7:0] there (§2.2.7.1).
        if self.op.is_atomic()
            && !self.byte_enables_replaced_by_steering_tag()
            && (self.first_be != 0 || self.last_be != 0)
        {
            return Err(TlpError::AtomicOpByteEnables {
                first: self.first_be,
                last: self.last_be,
            });
        }
        self.check_rules()
    }

    /// The rules a receiver checks, shared by encode and decode.
    fn check_rules(&self) -> Result<(), TlpError> {
        if self.op.is_atomic() {
            return self.check_atomic_rules();
        }
        if !self.byte_enables_replaced_by_steering_tag() {
            check_byte_enables(self.length_dw, self.address, self.first_be, self.last_be)?;
        }
        if (self.address % FOUR_KIB) + u64::from(self.length_dw) * 4 > FOUR_KIB {
            return Err(TlpError::CrossesFourKiB {
                address: self.address,
                length_dw: self.length_dw,
            });
        }
        Ok(())
    }

    /// The AtomicOp rules of §2.2.7.1: an architected Length (Table 2-15)
    /// and natural alignment. Byte enables are Reserved and not checked;
    /// alignment already keeps the access inside one 4 KiB page.
    fn check_atomic_rules(&self) -> Result<(), TlpError> {
        let architected = match self.op {
            MemoryOp::FetchAdd | MemoryOp::Swap => matches!(self.length_dw, 1 | 2),
            _ => matches!(self.length_dw, 2 | 4 | 8),
        };
        if !architected {
            return Err(TlpError::AtomicOpLength {
                op: self.op,
                length_dw: self.length_dw,
            });
        }
        let operand_bytes = self
            .atomic_operand_bytes()
            .expect("check_atomic_rules is only called for AtomicOps");
        // An architected operand is 4, 8 or 16 bytes: a power of two, so a mask tests alignment.
        if self.address & (u64::from(operand_bytes) - 1) != 0 {
            return Err(TlpError::AtomicOpMisaligned {
                address: self.address,
                operand_bytes,
            });
        }
        Ok(())
    }
}

/// An I/O read or write (§2.2.7.1, Figure 2-38).
///
/// TC, attributes, AT and length are fixed by the spec (TC0, 00b, 00b,
/// 1 DW) and so are not fields here; Last DW BE is always 0000b.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    /// IORd or IOWr.
    pub direction: Direction,
    /// Requester ID.
    pub requester: Bdf,
    /// Tag.
    pub tag: Tag,
    /// The DW-aligned 32-bit I/O address.
    pub address: u32,
    /// First DW BE\[3:0\].
    pub first_be: u8,
}

/// Type 0 (to the function on this bus) or Type 1 (to be forwarded by a bridge) (§7.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConfigType {
    /// CfgRd0/CfgWr0.
    Type0,
    /// CfgRd1/CfgWr1.
    Type1,
}

/// A configuration read or write (§2.2.7.1, Figure 2-39).
///
/// Like I/O, TC, attributes, AT and length are fixed by the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigRequest {
    /// CfgRd or CfgWr.
    pub direction: Direction,
    /// Type 0 or Type 1.
    pub config_type: ConfigType,
    /// Requester ID.
    pub requester: Bdf,
    /// Tag.
    pub tag: Tag,
    /// The target bus, device and function.
    pub target: Bdf,
    /// Register Number\[5:0\]: DW index within the first 256 bytes.
    pub register_number: u8,
    /// Extended Register Number\[3:0\]: which 256-byte block of the 4 KiB space.
    pub extended_register_number: u8,
    /// First DW BE\[3:0\].
    pub first_be: u8,
}

impl ConfigRequest {
    /// A request for the DW at byte `offset` of `target`'s configuration
    /// space: a write of the bytes enabled in `write_be` (First DW BE\[3:0\])
    /// when it is some, else a read of the whole DW (§2.2.7.1: a read's
    /// First DW BE selects the bytes returned; 1111b, all four).
    pub const fn new(
        config_type: ConfigType,
        requester: Bdf,
        tag: Tag,
        target: Bdf,
        offset: u16,
        write_be: Option<u8>,
    ) -> Self {
        let (direction, first_be) = match write_be {
            Some(byte_enables) => (Direction::Write, byte_enables & 0xf),
            None => (Direction::Read, 0xf),
        };
        ConfigRequest {
            direction,
            config_type,
            requester,
            tag,
            target,
            register_number: 0,
            extended_register_number: 0,
            first_be,
        }
        .with_byte_offset(offset)
    }

    /// The byte offset in configuration space of the DW addressed (0..=0xffc).
    pub const fn byte_offset(&self) -> u16 {
        ((self.extended_register_number as u16 & 0xf) << 8)
            | ((self.register_number as u16 & 0x3f) << 2)
    }

    /// Sets Register Number and Extended Register Number from a byte offset;
    /// bits \[1:0\] are dropped and offsets past 4 KiB wrap.
    pub const fn with_byte_offset(mut self, offset: u16) -> Self {
        self.register_number = ((offset >> 2) & 0x3f) as u8;
        self.extended_register_number = ((offset >> 8) & 0xf) as u8;
        self
    }
}

/// The Completion Status field (§2.2.9.1, Table 2-37).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompletionStatus {
    /// 000b: Successful Completion (SC).
    Successful,
    /// 001b: Unsupported Request (UR).
    UnsupportedRequest,
    /// 010b: Request Retry Status (RRS), called Configuration Request Retry Status (CRS) before 6.0.
    RequestRetry,
    /// 100b: Completer Abort (CA).
    CompleterAbort,
}

impl CompletionStatus {
    /// The 3-bit field value.
    pub const fn bits(self) -> u8 {
        match self {
            Self::Successful => 0b000,
            Self::UnsupportedRequest => 0b001,
            Self::RequestRetry => 0b010,
            Self::CompleterAbort => 0b100,
        }
    }

    /// Reads the 3-bit field; the other encodings are reserved.
    pub const fn from_bits(bits: u8) -> Result<Self, TlpError> {
        match bits {
            0b000 => Ok(Self::Successful),
            0b001 => Ok(Self::UnsupportedRequest),
            0b010 => Ok(Self::RequestRetry),
            0b100 => Ok(Self::CompleterAbort),
            status => Err(TlpError::ReservedCompletionStatus { status }),
        }
    }
}

/// A completion (§2.2.9.1, Figure 2-79). Always a 3 DW header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// CplLk/CplDLk: completes a locked read.
    pub locked: bool,
    /// TC\[2:0\], copied from the request.
    pub traffic_class: TrafficClass,
    /// Attr\[2:0\], copied from the request (IDO may differ, §2.2.6.4).
    pub attributes: Attributes,
    /// Completer ID.
    pub completer: Bdf,
    /// Completion Status.
    pub status: CompletionStatus,
    /// BCM: set only by PCI-X completers.
    pub byte_count_modified: bool,
    /// Byte Count, 1..=4096: bytes remaining for the request, including
    /// this completion's (§2.3.1.1); 4 for I/O and configuration completions.
    pub byte_count: u16,
    /// Requester ID of the request completed, which routes the completion.
    pub requester: Bdf,
    /// Tag of the request completed.
    pub tag: Tag,
    /// Lower Address\[6:0\] (§2.2.9.1); 0 for non-memory completions.
    pub lower_address: u8,
    /// `Some(length in DW)` for CplD/CplDLk; `None` for Cpl/CplLk, whose Length is Reserved.
    pub data_dw: Option<u16>,
}

/// A message request (§2.2.8, Figure 2-49). Always a 4 DW header; posted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// TC\[2:0\]. INTx, PM, error, Unlock and Set_Slot_Power_Limit must use TC0.
    pub traffic_class: TrafficClass,
    /// Attr\[2:0\].
    pub attributes: Attributes,
    /// Requester ID.
    pub requester: Bdf,
    /// Tag\[7:0\]; Tag\[9:8\] is Reserved for posted requests (§2.2.6.2).
    pub tag: u8,
    /// Message Code.
    pub code: MessageCode,
    /// r\[2:0\].
    pub routing: MessageRouting,
    /// Header bytes 8–15 as sent: the address of an address-routed message,
    /// the destination ID (bytes 8–9) of an ID-routed one, the Vendor ID
    /// (bytes 10–11) of a Vendor_Defined one, otherwise message-specific or Reserved.
    pub bytes_8_to_15: [u8; 8],
    /// `Some(length in DW)` for MsgD; `None` for Msg, whose Length is Reserved.
    pub data_dw: Option<u16>,
}

impl Message {
    /// A message with all optional fields zero: TC0, no attributes, tag 0, no payload.
    pub const fn new(requester: Bdf, code: MessageCode, routing: MessageRouting) -> Self {
        Message {
            traffic_class: TrafficClass::TC0,
            attributes: Attributes {
                relaxed_ordering: false,
                no_snoop: false,
                id_based_ordering: false,
            },
            requester,
            tag: 0,
            code,
            routing,
            bytes_8_to_15: [0; 8],
            data_dw: None,
        }
    }

    /// The routing address of an address-routed message (bytes 8–15, bits \[1:0\] dropped).
    pub const fn address(&self) -> Option<u64> {
        match self.routing {
            MessageRouting::ByAddress => Some(u64::from_be_bytes(self.bytes_8_to_15) & !0b11),
            _ => None,
        }
    }

    /// The destination ID of an ID-routed message (bytes 8–9, §2.2.4.2).
    pub const fn target(&self) -> Option<Bdf> {
        match self.routing {
            MessageRouting::ById => Some(Bdf(u16::from_be_bytes([
                self.bytes_8_to_15[0],
                self.bytes_8_to_15[1],
            ]))),
            _ => None,
        }
    }

    /// The Vendor ID of a Vendor_Defined message (bytes 10–11, §2.2.8.6).
    pub const fn vendor_id(&self) -> Option<u16> {
        if self.code.is_vendor_defined() {
            Some(u16::from_be_bytes([
                self.bytes_8_to_15[2],
                self.bytes_8_to_15[3],
            ]))
        } else {
            None
        }
    }

    /// Sets bytes 8–15 to `address` (an address-routed message).
    pub const fn with_address(mut self, address: u64) -> Self {
        self.bytes_8_to_15 = address.to_be_bytes();
        self
    }

    /// Sets bytes 8–9 to the destination ID (an ID-routed message).
    pub const fn with_target(mut self, target: Bdf) -> Self {
        let [high, low] = target.0.to_be_bytes();
        self.bytes_8_to_15[0] = high;
        self.bytes_8_to_15[1] = low;
        self
    }

    /// Sets bytes 10–11 to the Vendor ID (a Vendor_Defined message).
    pub const fn with_vendor_id(mut self, vendor_id: u16) -> Self {
        let [high, low] = vendor_id.to_be_bytes();
        self.bytes_8_to_15[2] = high;
        self.bytes_8_to_15[3] = low;
        self
    }

    fn check_rules(&self) -> Result<(), TlpError> {
        if self.code.requires_tc0() && self.traffic_class != TrafficClass::TC0 {
            return Err(TlpError::MessageRequiresTc0 {
                code: self.code.code(),
                traffic_class: self.traffic_class.get(),
            });
        }
        Ok(())
    }
}

fn check_field(field: Field, value: u32) -> Result<(), TlpError> {
    if field.fits(value) {
        Ok(())
    } else {
        Err(TlpError::FieldOutOfRange { field, value })
    }
}

fn write_bool(header: &mut [u32; MAX_HEADER_DWS], field: Field, value: bool) {
    field.write(header, value.into());
}

fn read_bool(header: &[u32; MAX_HEADER_DWS], field: Field) -> bool {
    field.read(header) != 0
}

impl Header {
    /// The header size in DW: 3, or 4 for 64-bit memory requests and all messages (Table 2-2).
    pub const fn header_dws(&self) -> usize {
        match &self.body {
            Body::Memory(request) if request.uses_four_dw_header() => 4,
            Body::Message(_) => 4,
            _ => 3,
        }
    }

    /// The header size in bytes: 12 or 16.
    pub const fn header_len(&self) -> usize {
        self.header_dws() * 4
    }

    /// Encodes the header into DWs in wire order (DW 0 holds Fmt/Type in bits
    /// \[31:24\]); a 3 DW header leaves the fourth DW 0. Rejects headers a
    /// transmitter must not form.
    pub fn encode_dws(&self) -> Result<[u32; MAX_HEADER_DWS], TlpError> {
        let mut dws = [0u32; MAX_HEADER_DWS];
        let (fmt_bits, ty_bits) = match &self.body {
            Body::Memory(request) => encode_memory(request, &mut dws)?,
            Body::Io(request) => encode_io(request, &mut dws)?,
            Body::Config(request) => encode_config(request, &mut dws)?,
            Body::Completion(completion) => encode_completion(completion, &mut dws)?,
            Body::Message(message) => encode_message(message, &mut dws)?,
        };
        layout::FMT.write(&mut dws, fmt_bits.into());
        layout::TYPE.write(&mut dws, ty_bits.into());
        write_bool(&mut dws, layout::DIGEST_PRESENT, self.digest_present);
        write_bool(&mut dws, layout::POISONED, self.poisoned);
        Ok(dws)
    }

    /// Encodes the header into `out` in wire order and returns its length in bytes (12 or 16).
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, TlpError> {
        let dws = self.encode_dws()?;
        let len = self.header_len();
        let got = out.len();
        let out = out
            .get_mut(..len)
            .ok_or(TlpError::BufferTooSmall { needed: len, got })?;
        for (chunk, dw) in out.chunks_exact_mut(4).zip(dws) {
            chunk.copy_from_slice(&dw.to_be_bytes());
        }
        Ok(len)
    }

    /// Decodes a header from the start of `bytes` (byte 0 = Fmt/Type; no
    /// prefixes). Bytes after the header are ignored, so this works on a
    /// header alone; the payload size it announces is
    /// [`Header::payload_len_dw`]. Use [`crate::tlp::Tlp::parse`] to check a
    /// whole TLP.
    pub fn decode(bytes: &[u8]) -> Result<Self, TlpError> {
        let &byte0 = bytes
            .first()
            .ok_or(TlpError::Truncated { needed: 12, got: 0 })?;
        TlpType::from_byte0(byte0)?;
        let len = header_dws_for_fmt(byte0 >> 5) * 4;
        let header_bytes = bytes.get(..len).ok_or(TlpError::Truncated {
            needed: len,
            got: bytes.len(),
        })?;
        let mut dws = [0u32; MAX_HEADER_DWS];
        for (dw, chunk) in dws.iter_mut().zip(header_bytes.chunks_exact(4)) {
            *dw = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        Self::decode_dws(&dws)
    }

    /// Decodes a header given as DWs in wire order; for a 3 DW header the fourth DW is ignored.
    pub fn decode_dws(dws: &[u32; MAX_HEADER_DWS]) -> Result<Self, TlpError> {
        let fmt_bits = layout::FMT.read(dws) as u8;
        let ty_bits = layout::TYPE.read(dws) as u8;
        let tlp_type = TlpType::from_fmt_type(fmt_bits, ty_bits)?;
        let four_dw = fmt_bits & fmt::FOUR_DW_BIT != 0;
        let body = match tlp_type {
            TlpType::MemoryRead => decode_memory(MemoryOp::Read, four_dw, dws)?,
            TlpType::MemoryReadLocked => decode_memory(MemoryOp::ReadLocked, four_dw, dws)?,
            TlpType::MemoryWrite => decode_memory(MemoryOp::Write, four_dw, dws)?,
            TlpType::IoRead => decode_io(Direction::Read, dws)?,
            TlpType::IoWrite => decode_io(Direction::Write, dws)?,
            TlpType::ConfigRead0 => decode_config(Direction::Read, ConfigType::Type0, dws)?,
            TlpType::ConfigWrite0 => decode_config(Direction::Write, ConfigType::Type0, dws)?,
            TlpType::ConfigRead1 => decode_config(Direction::Read, ConfigType::Type1, dws)?,
            TlpType::ConfigWrite1 => decode_config(Direction::Write, ConfigType::Type1, dws)?,
            TlpType::Completion => decode_completion(false, false, dws)?,
            TlpType::CompletionWithData => decode_completion(false, true, dws)?,
            TlpType::CompletionLocked => decode_completion(true, false, dws)?,
            TlpType::CompletionWithDataLocked => decode_completion(true, true, dws)?,
            TlpType::Message(routing) => decode_message(routing, false, dws)?,
            TlpType::MessageWithData(routing) => decode_message(routing, true, dws)?,
            TlpType::FetchAdd => decode_memory(MemoryOp::FetchAdd, four_dw, dws)?,
            TlpType::Swap => decode_memory(MemoryOp::Swap, four_dw, dws)?,
            TlpType::CompareAndSwap => decode_memory(MemoryOp::CompareAndSwap, four_dw, dws)?,
        };
        Ok(Header {
            digest_present: read_bool(dws, layout::DIGEST_PRESENT),
            poisoned: read_bool(dws, layout::POISONED),
            body,
        })
    }
}

fn fmt_for(four_dw: bool, with_data: bool) -> u8 {
    (if four_dw { fmt::FOUR_DW_BIT } else { 0 }) | (if with_data { fmt::WITH_DATA_BIT } else { 0 })
}

fn write_qos(dws: &mut [u32; MAX_HEADER_DWS], tc: TrafficClass, attributes: Attributes) {
    layout::TRAFFIC_CLASS.write(dws, tc.get().into());
    attributes.write(dws);
}

fn read_traffic_class(dws: &[u32; MAX_HEADER_DWS]) -> TrafficClass {
    TrafficClass::from_bits(layout::TRAFFIC_CLASS.read(dws) as u8)
}

fn encode_memory(
    request: &MemoryRequest,
    dws: &mut [u32; MAX_HEADER_DWS],
) -> Result<(u8, u8), TlpError> {
    request.validate()?;
    let four_dw = request.uses_four_dw_header();
    let (ty_bits, with_data) = match request.op {
        MemoryOp::Read => (ty::MEMORY, false),
        MemoryOp::ReadLocked => (ty::MEMORY_LOCKED, false),
        MemoryOp::Write => (ty::MEMORY, true),
        MemoryOp::FetchAdd => (ty::FETCH_ADD, true),
        MemoryOp::Swap => (ty::SWAP, true),
        MemoryOp::CompareAndSwap => (ty::COMPARE_AND_SWAP, true),
    };
    write_qos(dws, request.traffic_class, request.attributes);
    layout::ADDRESS_TYPE.write(dws, request.address_type.bits().into());
    layout::LENGTH.write(dws, length_to_field(request.length_dw)?);
    write_bool(dws, layout::TPH_PRESENT, request.processing_hint.is_some());
    layout::REQUESTER_ID.write(dws, request.requester.0.into());
    request.tag.write(dws, layout::REQUEST_TAG_LOW);
    layout::LAST_DW_BE.write(dws, request.last_be.into());
    layout::FIRST_DW_BE.write(dws, request.first_be.into());
    let hint = u32::from(request.processing_hint.map_or(0, ProcessingHint::bits));
    let low = (request.address as u32) >> 2;
    if four_dw {
        layout::ADDRESS_64_HIGH.write(dws, (request.address >> 32) as u32);
        layout::ADDRESS_64_LOW.write(dws, low);
        layout::PROCESSING_HINT_64.write(dws, hint);
    } else {
        layout::ADDRESS_32.write(dws, low);
        layout::PROCESSING_HINT_32.write(dws, hint);
    }
    Ok((fmt_for(four_dw, with_data), ty_bits))
}

fn decode_memory(
    op: MemoryOp,
    four_dw: bool,
    dws: &[u32; MAX_HEADER_DWS],
) -> Result<Body, TlpError> {
    let (address, hint_bits) = if four_dw {
        let address = (u64::from(layout::ADDRESS_64_HIGH.read(dws)) << 32)
            | u64::from(layout::ADDRESS_64_LOW.read(dws) << 2);
        if address < FOUR_GIB {
            return Err(TlpError::FourDwAddressBelow4G { address });
        }
        (address, layout::PROCESSING_HINT_64.read(dws))
    } else {
        (
            u64::from(layout::ADDRESS_32.read(dws) << 2),
            layout::PROCESSING_HINT_32.read(dws),
        )
    };
    let tag = if op == MemoryOp::Write {
        // Tag[9:8] is Reserved for posted requests (§2.2.6.2).
        Tag::from_8bit(layout::REQUEST_TAG_LOW.read(dws) as u8)
    } else {
        Tag::read(dws, layout::REQUEST_TAG_LOW)
    };
    let tph = read_bool(dws, layout::TPH_PRESENT);
    let (first_be, last_be) = if op.is_atomic() && !tph {
        // Reserved in an AtomicOp without TH (§2.2.7.1): ignored when received.
        (0, 0)
    } else {
        (
            layout::FIRST_DW_BE.read(dws) as u8,
            layout::LAST_DW_BE.read(dws) as u8,
        )
    };
    let request = MemoryRequest {
        op,
        traffic_class: read_traffic_class(dws),
        attributes: Attributes::read(dws),
        address_type: AddressType::from_bits(layout::ADDRESS_TYPE.read(dws) as u8),
        requester: Bdf(layout::REQUESTER_ID.read(dws) as u16),
        tag,
        address,
        length_dw: length_from_field(layout::LENGTH.read(dws)),
        first_be,
        last_be,
        processing_hint: tph.then(|| ProcessingHint::from_bits(hint_bits as u8)),
    };
    request.check_rules()?;
    Ok(Body::Memory(request))
}

fn encode_io(request: &IoRequest, dws: &mut [u32; MAX_HEADER_DWS]) -> Result<(u8, u8), TlpError> {
    if request.address & 0b11 != 0 {
        return Err(TlpError::AddressNotDwAligned {
            address: request.address.into(),
        });
    }
    check_field(layout::FIRST_DW_BE, request.first_be.into())?;
    layout::LENGTH.write(dws, 1);
    layout::REQUESTER_ID.write(dws, request.requester.0.into());
    request.tag.write(dws, layout::REQUEST_TAG_LOW);
    layout::FIRST_DW_BE.write(dws, request.first_be.into());
    layout::ADDRESS_32.write(dws, request.address >> 2);
    let with_data = request.direction == Direction::Write;
    Ok((fmt_for(false, with_data), ty::IO))
}

/// The §2.2.7.1 restrictions shared by I/O and Configuration requests. TH
/// and Attr\[2\] are Reserved there, and AT "need not be checked", so none
/// of the three is looked at.
fn check_io_config_restrictions(dws: &[u32; MAX_HEADER_DWS]) -> Result<(), TlpError> {
    let traffic_class = layout::TRAFFIC_CLASS.read(dws) as u8;
    if traffic_class != 0 {
        return Err(TlpError::IoConfigTrafficClass { traffic_class });
    }
    let attr = layout::ATTR_LOW.read(dws) as u8;
    if attr != 0 {
        return Err(TlpError::IoConfigAttributes { attr });
    }
    let length_dw = length_from_field(layout::LENGTH.read(dws));
    if length_dw != 1 {
        return Err(TlpError::NotSingleDw { length_dw });
    }
    check_byte_enables(
        1,
        0,
        layout::FIRST_DW_BE.read(dws) as u8,
        layout::LAST_DW_BE.read(dws) as u8,
    )
}

fn decode_io(direction: Direction, dws: &[u32; MAX_HEADER_DWS]) -> Result<Body, TlpError> {
    check_io_config_restrictions(dws)?;
    Ok(Body::Io(IoRequest {
        direction,
        requester: Bdf(layout::REQUESTER_ID.read(dws) as u16),
        tag: Tag::read(dws, layout::REQUEST_TAG_LOW),
        address: layout::ADDRESS_32.read(dws) << 2,
        first_be: layout::FIRST_DW_BE.read(dws) as u8,
    }))
}

fn encode_config(
    request: &ConfigRequest,
    dws: &mut [u32; MAX_HEADER_DWS],
) -> Result<(u8, u8), TlpError> {
    check_field(layout::FIRST_DW_BE, request.first_be.into())?;
    check_field(layout::CONFIG_REGISTER, request.register_number.into())?;
    check_field(
        layout::CONFIG_EXT_REGISTER,
        request.extended_register_number.into(),
    )?;
    layout::LENGTH.write(dws, 1);
    layout::REQUESTER_ID.write(dws, request.requester.0.into());
    request.tag.write(dws, layout::REQUEST_TAG_LOW);
    layout::FIRST_DW_BE.write(dws, request.first_be.into());
    layout::CONFIG_TARGET_ID.write(dws, request.target.0.into());
    layout::CONFIG_EXT_REGISTER.write(dws, request.extended_register_number.into());
    layout::CONFIG_REGISTER.write(dws, request.register_number.into());
    let ty_bits = match request.config_type {
        ConfigType::Type0 => ty::CONFIG_TYPE0,
        ConfigType::Type1 => ty::CONFIG_TYPE1,
    };
    let with_data = request.direction == Direction::Write;
    Ok((fmt_for(false, with_data), ty_bits))
}

fn decode_config(
    direction: Direction,
    config_type: ConfigType,
    dws: &[u32; MAX_HEADER_DWS],
) -> Result<Body, TlpError> {
    check_io_config_restrictions(dws)?;
    Ok(Body::Config(ConfigRequest {
        direction,
        config_type,
        requester: Bdf(layout::REQUESTER_ID.read(dws) as u16),
        tag: Tag::read(dws, layout::REQUEST_TAG_LOW),
        target: Bdf(layout::CONFIG_TARGET_ID.read(dws) as u16),
        register_number: layout::CONFIG_REGISTER.read(dws) as u8,
        extended_register_number: layout::CONFIG_EXT_REGISTER.read(dws) as u8,
        first_be: layout::FIRST_DW_BE.read(dws) as u8,
    }))
}

fn encode_completion(
    completion: &Completion,
    dws: &mut [u32; MAX_HEADER_DWS],
) -> Result<(u8, u8), TlpError> {
    check_field(layout::LOWER_ADDRESS, completion.lower_address.into())?;
    let byte_count = byte_count_to_field(completion.byte_count)?;
    if let Some(length_dw) = completion.data_dw {
        layout::LENGTH.write(dws, length_to_field(length_dw)?);
    }
    write_qos(dws, completion.traffic_class, completion.attributes);
    layout::COMPLETER_ID.write(dws, completion.completer.0.into());
    layout::COMPLETION_STATUS.write(dws, completion.status.bits().into());
    write_bool(
        dws,
        layout::BYTE_COUNT_MODIFIED,
        completion.byte_count_modified,
    );
    layout::BYTE_COUNT.write(dws, byte_count);
    layout::COMPLETION_REQUESTER_ID.write(dws, completion.requester.0.into());
    completion.tag.write(dws, layout::COMPLETION_TAG_LOW);
    layout::LOWER_ADDRESS.write(dws, completion.lower_address.into());
    let ty_bits = if completion.locked {
        ty::COMPLETION_LOCKED
    } else {
        ty::COMPLETION
    };
    Ok((fmt_for(false, completion.data_dw.is_some()), ty_bits))
}

fn decode_completion(
    locked: bool,
    with_data: bool,
    dws: &[u32; MAX_HEADER_DWS],
) -> Result<Body, TlpError> {
    let status = CompletionStatus::from_bits(layout::COMPLETION_STATUS.read(dws) as u8)?;
    Ok(Body::Completion(Completion {
        locked,
        traffic_class: read_traffic_class(dws),
        attributes: Attributes::read(dws),
        completer: Bdf(layout::COMPLETER_ID.read(dws) as u16),
        status,
        byte_count_modified: read_bool(dws, layout::BYTE_COUNT_MODIFIED),
        byte_count: byte_count_from_field(layout::BYTE_COUNT.read(dws)),
        requester: Bdf(layout::COMPLETION_REQUESTER_ID.read(dws) as u16),
        tag: Tag::read(dws, layout::COMPLETION_TAG_LOW),
        lower_address: layout::LOWER_ADDRESS.read(dws) as u8,
        data_dw: with_data.then(|| length_from_field(layout::LENGTH.read(dws))),
    }))
}

fn encode_message(
    message: &Message,
    dws: &mut [u32; MAX_HEADER_DWS],
) -> Result<(u8, u8), TlpError> {
    if let MessageRouting::Reserved(bits) = message.routing {
        if MessageRouting::from_bits(bits) != message.routing {
            return Err(TlpError::FieldOutOfRange {
                field: layout::MESSAGE_ROUTING,
                value: bits.into(),
            });
        }
    }
    message.check_rules()?;
    if let Some(length_dw) = message.data_dw {
        layout::LENGTH.write(dws, length_to_field(length_dw)?);
    }
    write_qos(dws, message.traffic_class, message.attributes);
    layout::REQUESTER_ID.write(dws, message.requester.0.into());
    layout::REQUEST_TAG_LOW.write(dws, message.tag.into());
    layout::MESSAGE_CODE.write(dws, message.code.code().into());
    let [b8, b9, b10, b11, b12, b13, b14, b15] = message.bytes_8_to_15;
    dws[2] = u32::from_be_bytes([b8, b9, b10, b11]);
    dws[3] = u32::from_be_bytes([b12, b13, b14, b15]);
    let ty_bits = ty::MESSAGE | message.routing.bits();
    Ok((fmt_for(true, message.data_dw.is_some()), ty_bits))
}

fn decode_message(
    routing: MessageRouting,
    with_data: bool,
    dws: &[u32; MAX_HEADER_DWS],
) -> Result<Body, TlpError> {
    let [b8, b9, b10, b11] = dws[2].to_be_bytes();
    let [b12, b13, b14, b15] = dws[3].to_be_bytes();
    let message = Message {
        traffic_class: read_traffic_class(dws),
        attributes: Attributes::read(dws),
        requester: Bdf(layout::REQUESTER_ID.read(dws) as u16),
        tag: layout::REQUEST_TAG_LOW.read(dws) as u8,
        code: MessageCode::from_code(layout::MESSAGE_CODE.read(dws) as u8),
        routing,
        bytes_8_to_15: [b8, b9, b10, b11, b12, b13, b14, b15],
        data_dw: with_data.then(|| length_from_field(layout::LENGTH.read(dws))),
    };
    message.check_rules()?;
    Ok(Body::Message(message))
}
