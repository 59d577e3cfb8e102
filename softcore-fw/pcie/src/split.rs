//! Splitting transfers into TLPs: Max_Payload_Size, Max_Read_Request_Size, the
//! 4 KiB rule and the Read Completion Boundary.
//!
//! A DMA engine, a host model or a completer has a transfer of some bytes at
//! some address and must cut it into TLPs the link partner accepts. The rules:
//!
//! - A TLP's payload, counted in whole DWs as the Length field counts it,
//!   must not exceed Max_Payload_Size (PCIe Base 6.0 §2.2.2).
//! - A read request must not ask for more than Max_Read_Request_Size
//!   (§7.5.3.4, Device Control bits 14:12).
//! - A memory request must not cross a 4 KiB boundary (§2.2.7).
//! - Bytes that do not start or end on a DW boundary are masked with the
//!   First and Last DW Byte Enables (§2.2.5).
//! - A read may be answered with several completions, each ending on a
//!   naturally aligned Read Completion Boundary except the last (§2.3.1.1).
//!
//! [`split_write`] and [`split_read`] yield [`RequestChunk`]s; [`split_completion`]
//! and [`split_completion_at_rcb`] yield [`CompletionChunk`]s. All of them are
//! iterators over plain values: nothing allocates.
//!
//! # Example
//!
//! A 1000-byte write at `0xFC0` with a 256-byte Max_Payload_Size becomes five
//! TLPs: 64 bytes up to the 4 KiB boundary, then as much as MPS allows.
//!
//! ```
//! use weft_pcie::split::{split_write, PayloadSize};
//!
//! let chunks = split_write(0xFC0, 1000, PayloadSize::B256).expect("fits in 64 bits");
//! let mut got = [(0u64, 0u16); 5];
//! for (slot, chunk) in got.iter_mut().zip(chunks) {
//!     *slot = (chunk.address, chunk.len);
//! }
//! assert_eq!(got, [(0xFC0, 64), (0x1000, 256), (0x1100, 256), (0x1200, 256), (0x1300, 168)]);
//! ```

use core::fmt;
use core::iter::FusedIterator;

/// The 4 KiB boundary no memory request may cross (PCIe Base 6.0 §2.2.7).
pub const FOUR_KIB: u64 = 4096;

/// The largest number of bytes one read request can ask for, and so the largest
/// Byte Count a completion can report (§2.2.9: Byte Count is 12 bits, 000h
/// meaning 4096).
pub const MAX_READ_BYTES: u64 = 4096;

/// Why a transfer could not be split, or a field could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitError {
    /// A 3-bit Max_Payload_Size / Max_Read_Request_Size field held 110b or
    /// 111b, which are reserved (§7.5.3.4), or the value did not fit in 3 bits.
    ReservedSizeEncoding {
        /// The field value that was read.
        bits: u8,
    },
    /// A byte count is not one of the payload sizes 128, 256, …, 4096.
    NotAPayloadSize {
        /// The byte count that was given.
        bytes: u32,
    },
    /// The transfer runs past the top of the 64-bit address space.
    AddressOverflow {
        /// First byte of the transfer.
        address: u64,
        /// Length of the transfer in bytes.
        len: u64,
    },
    /// A read request asks for more than 4096 bytes, which no single request
    /// can (§2.2.9, §7.5.3.4).
    RequestTooLong {
        /// Length of the request in bytes.
        len: u64,
    },
    /// A single request crosses a 4 KiB boundary (§2.2.7).
    CrossesFourKiB {
        /// First byte of the request.
        address: u64,
        /// Length of the request in bytes.
        len: u64,
    },
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SplitError::ReservedSizeEncoding { bits } => write!(
                f,
                "payload size field {bits:#05b} is reserved; only 000b (128 B) to 101b (4096 B) are defined"
            ),
            SplitError::NotAPayloadSize { bytes } => write!(
                f,
                "{bytes} B is not a payload size; use a power of two from 128 to 4096"
            ),
            SplitError::AddressOverflow { address, len } => write!(
                f,
                "{len} B at {address:#x} runs past the top of the 64-bit address space"
            ),
            SplitError::RequestTooLong { len } => write!(
                f,
                "a single read request carries at most 4096 B, not {len}; split it with split_read first"
            ),
            SplitError::CrossesFourKiB { address, len } => write!(
                f,
                "{len} B at {address:#x} crosses a 4 KiB boundary; split it with split_read first"
            ),
        }
    }
}

/// A Max_Payload_Size or Max_Read_Request_Size: 128 to 4096 bytes in powers of two.
///
/// Both use the same 3-bit encoding, in Device Capabilities (Max_Payload_Size
/// Supported, bits 2:0, §7.5.3.3) and Device Control (Max_Payload_Size bits 7:5,
/// Max_Read_Request_Size bits 14:12, §7.5.3.4): 000b = 128 B up to 101b = 4096 B.
/// The discriminant is that encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum PayloadSize {
    /// 128 bytes (000b); the default after reset.
    B128 = 0,
    /// 256 bytes (001b).
    B256 = 1,
    /// 512 bytes (010b); also the default Max_Read_Request_Size after reset.
    B512 = 2,
    /// 1024 bytes (011b).
    B1024 = 3,
    /// 2048 bytes (100b).
    B2048 = 4,
    /// 4096 bytes (101b).
    B4096 = 5,
}

impl PayloadSize {
    /// Every size, smallest first.
    pub const ALL: [PayloadSize; 6] = [
        PayloadSize::B128,
        PayloadSize::B256,
        PayloadSize::B512,
        PayloadSize::B1024,
        PayloadSize::B2048,
        PayloadSize::B4096,
    ];

    /// The size in bytes: 128 << encoding.
    pub const fn bytes(self) -> u16 {
        128 << (self as u8)
    }

    /// The size in DWs, the unit of the TLP Length field.
    pub const fn dwords(self) -> u16 {
        self.bytes() / 4
    }

    /// The 3-bit field value (§7.5.3.4).
    pub const fn encoding(self) -> u8 {
        self as u8
    }

    /// Decodes a 3-bit field value; 110b, 111b and anything wider than 3 bits
    /// are an error, because the spec reserves them (§7.5.3.4).
    pub const fn from_encoding(bits: u8) -> Result<Self, SplitError> {
        match bits {
            0 => Ok(PayloadSize::B128),
            1 => Ok(PayloadSize::B256),
            2 => Ok(PayloadSize::B512),
            3 => Ok(PayloadSize::B1024),
            4 => Ok(PayloadSize::B2048),
            5 => Ok(PayloadSize::B4096),
            _ => Err(SplitError::ReservedSizeEncoding { bits }),
        }
    }

    /// The size with exactly this many bytes.
    pub const fn from_bytes(bytes: u32) -> Result<Self, SplitError> {
        match bytes {
            128 => Ok(PayloadSize::B128),
            256 => Ok(PayloadSize::B256),
            512 => Ok(PayloadSize::B512),
            1024 => Ok(PayloadSize::B1024),
            2048 => Ok(PayloadSize::B2048),
            4096 => Ok(PayloadSize::B4096),
            _ => Err(SplitError::NotAPayloadSize { bytes }),
        }
    }
}

/// The Read Completion Boundary: the naturally aligned boundaries at which a
/// completer may cut the data for one read into several completions
/// (PCIe Base 6.0 §2.3.1.1).
///
/// A Root Complex's RCB is 64 or 128 bytes and is reported in its Root Ports'
/// Link Control register, bit 3 (§7.5.3.7). Every other element (switches,
/// bridges, endpoints as completers) uses 128 bytes; endpoints and bridges may
/// hold a copy of the Root Port's value in their own Link Control RCB bit so
/// that they know what to expect of the completions they receive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rcb {
    /// 64-byte boundaries (Link Control RCB bit clear); only a Root Complex.
    B64,
    /// 128-byte boundaries (Link Control RCB bit set).
    B128,
}

impl Rcb {
    /// The RCB of every completer that is not a Root Complex (§2.3.1.1),
    /// weft's switch ports among them.
    pub const NON_ROOT: Rcb = Rcb::B128;

    /// The boundary in bytes.
    pub const fn bytes(self) -> u16 {
        match self {
            Rcb::B64 => 64,
            Rcb::B128 => 128,
        }
    }

    /// Reads the Link Control register's RCB bit (bit 3, §7.5.3.7): clear is
    /// 64 bytes, set is 128 bytes.
    pub const fn from_link_control_bit(set: bool) -> Self {
        if set {
            Rcb::B128
        } else {
            Rcb::B64
        }
    }

    /// The value of the Link Control RCB bit for this boundary.
    pub const fn link_control_bit(self) -> bool {
        matches!(self, Rcb::B128)
    }
}

/// The First DW Byte Enables for data starting at byte `offset` (0..=3) of a DW.
const fn first_be_from(offset: u64) -> u8 {
    (0xF << offset) & 0xF
}

/// The byte enables for data ending with byte `offset` (0..=3) of a DW.
const fn be_through(offset: u64) -> u8 {
    0xF >> (3 - offset)
}

/// The number of DWs touched by `len` bytes starting at `address`; at least 1,
/// because a zero-length request still carries a Length of 1 DW (§2.2.5).
const fn span_dwords(address: u64, len: u64) -> u16 {
    if len == 0 {
        1
    } else {
        ((address & 3) + len).div_ceil(4) as u16
    }
}

/// Checks that `len` bytes at `address` stay inside the 64-bit address space.
const fn check_no_overflow(address: u64, len: u64) -> Result<(), SplitError> {
    if len != 0 && address.checked_add(len - 1).is_none() {
        Err(SplitError::AddressOverflow { address, len })
    } else {
        Ok(())
    }
}

/// One memory request TLP of a split write or read.
///
/// `address..address + len` are the bytes it moves. The TLP's Address field
/// holds [`RequestChunk::dw_address`]; its Length field holds `length_dw`
/// (with 1024 encoded as 0, §2.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RequestChunk {
    /// Address of the first byte moved.
    pub address: u64,
    /// Number of bytes moved, 0..=4096. Zero only for a zero-length request.
    pub len: u16,
    /// The Length field: DWs spanned, 1..=1024 (a zero-length request is 1 DW
    /// with no bytes enabled, §2.2.5).
    pub length_dw: u16,
    /// First DW Byte Enables, bit n for byte n of the first DW (§2.2.5).
    pub first_be: u8,
    /// Last DW Byte Enables; 0000b when `length_dw` is 1, as §2.2.5 requires.
    pub last_be: u8,
}

impl RequestChunk {
    /// The DW-aligned address the TLP's Address field carries (bits 1:0 are
    /// not transmitted; the First DW Byte Enables say which bytes count).
    pub const fn dw_address(&self) -> u64 {
        self.address & !3
    }

    /// Whether this is a zero-length request (§2.2.5): 1 DW, no bytes enabled.
    pub const fn is_zero_length(&self) -> bool {
        self.len == 0
    }

    fn new(address: u64, len: u64) -> Self {
        if len == 0 {
            return RequestChunk {
                address,
                len: 0,
                length_dw: 1,
                first_be: 0,
                last_be: 0,
            };
        }
        let length_dw = span_dwords(address, len);
        let first = first_be_from(address & 3);
        // The last byte is address + len - 1; the modulo keeps this free of
        // overflow at the top of the address space.
        let last = be_through((address & 3).wrapping_add(len - 1) & 3);
        let (first_be, last_be) = if length_dw == 1 {
            (first & last, 0)
        } else {
            (first, last)
        };
        RequestChunk {
            address,
            len: len as u16,
            length_dw,
            first_be,
            last_be,
        }
    }
}

/// Iterator over the request TLPs of a write or read; made by [`split_write`]
/// or [`split_read`].
#[derive(Clone, Debug)]
pub struct RequestSplit {
    next: u64,
    remaining: u64,
    max: u64,
    zero_length_pending: bool,
}

impl Iterator for RequestSplit {
    type Item = RequestChunk;

    fn next(&mut self) -> Option<RequestChunk> {
        if self.zero_length_pending {
            self.zero_length_pending = false;
            return Some(RequestChunk::new(self.next, 0));
        }
        if self.remaining == 0 {
            return None;
        }
        let address = self.next;
        // §2.2.7: stop at the next 4 KiB boundary.
        let to_boundary = FOUR_KIB - (address & (FOUR_KIB - 1));
        // §2.2.2: the Length field counts whole DWs, so an unaligned start
        // spends part of the first DW's budget.
        let to_size_limit = self.max - (address & 3);
        let len = self.remaining.min(to_boundary).min(to_size_limit);
        self.remaining -= len;
        // Wraps only when the last byte is the top of the address space,
        // and then nothing remains.
        self.next = address.wrapping_add(len);
        Some(RequestChunk::new(address, len))
    }
}

impl FusedIterator for RequestSplit {}

fn split_requests(address: u64, len: u64, max: PayloadSize) -> Result<RequestSplit, SplitError> {
    check_no_overflow(address, len)?;
    Ok(RequestSplit {
        next: address,
        remaining: len,
        max: u64::from(max.bytes()),
        zero_length_pending: len == 0,
    })
}

/// Splits a memory write of `len` bytes at `address` into Memory Write TLPs.
///
/// Each TLP carries at most `mps` bytes counted in whole DWs (§2.2.2) and
/// none crosses a 4 KiB boundary (§2.2.7). TLPs are as long as those rules
/// allow, in increasing address order, so the count is the smallest possible.
/// A zero-length write yields one 1-DW TLP with no bytes enabled (§2.2.5).
///
/// Errors with [`SplitError::AddressOverflow`] if the bytes run past
/// `u64::MAX`.
pub fn split_write(address: u64, len: u64, mps: PayloadSize) -> Result<RequestSplit, SplitError> {
    split_requests(address, len, mps)
}

/// Splits a DMA read of `len` bytes at `address` into Memory Read Requests.
///
/// Each request asks for at most `mrrs` bytes counted in whole DWs
/// (§7.5.3.4) and none crosses a 4 KiB boundary (§2.2.7). A zero-length read
/// yields one 1-DW request with no bytes enabled (§2.2.5), which a requester
/// uses to flush earlier posted writes.
///
/// Errors with [`SplitError::AddressOverflow`] if the bytes run past
/// `u64::MAX`.
pub fn split_read(address: u64, len: u64, mrrs: PayloadSize) -> Result<RequestSplit, SplitError> {
    split_requests(address, len, mrrs)
}

/// One completion with data for a memory read.
///
/// It carries `address..address + len` of the requested bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CompletionChunk {
    /// Address of the first byte this completion returns.
    pub address: u64,
    /// Number of requested bytes it returns; 0 only for a zero-length read.
    pub len: u16,
    /// The Length field: DWs spanned by the data, 1..=1024. The first DW may
    /// be partial; `lower_address` says where its data starts (§2.2.9).
    pub length_dw: u16,
    /// The Byte Count field's value: bytes still to be returned for the
    /// request, this completion's included (§2.2.9, §2.3.1.1), 1..=4096.
    /// A zero-length read reports 1.
    pub byte_count: u16,
    /// The Lower Address field: bits 6:0 of the address of the first byte
    /// returned (§2.2.9).
    pub lower_address: u8,
}

impl CompletionChunk {
    /// Whether this completion finishes the request: its data is all that
    /// remained.
    pub const fn is_final(&self) -> bool {
        self.byte_count <= self.len || self.len == 0
    }
}

/// Iterator over the completions for one read request; made by
/// [`split_completion`] or [`split_completion_at_rcb`].
#[derive(Clone, Debug)]
pub struct CompletionSplit {
    next: u64,
    remaining: u64,
    max: u64,
    rcb: u64,
    every_boundary: bool,
    zero_length_pending: bool,
}

impl Iterator for CompletionSplit {
    type Item = CompletionChunk;

    fn next(&mut self) -> Option<CompletionChunk> {
        if self.zero_length_pending {
            self.zero_length_pending = false;
            // §2.3.1.1: a zero-length read is answered with 1 DW, Byte Count 1,
            // and Lower Address bits 1:0 = 00b (no byte enabled).
            return Some(CompletionChunk {
                address: self.next,
                len: 0,
                length_dw: 1,
                byte_count: 1,
                lower_address: (self.next & 0x7C) as u8,
            });
        }
        if self.remaining == 0 {
            return None;
        }
        let address = self.next;
        // §2.2.2: payload in whole DWs must not exceed the limit.
        let to_size_limit = self.max - (address & 3);
        let len = if self.every_boundary {
            // One completion per RCB block: stop at the next boundary.
            self.remaining.min(self.rcb - (address % self.rcb))
        } else if self.remaining <= to_size_limit {
            // §2.3.1.1: a completion may always end where the request ends.
            self.remaining
        } else {
            // §2.3.1.1: otherwise it must end on a naturally aligned RCB
            // boundary. The limit is DW-aligned and the RCB a multiple of 4,
            // so the boundary lies past `address` and the chunk is non-empty.
            let limit = address.wrapping_add(to_size_limit);
            to_size_limit - (limit % self.rcb)
        };
        let chunk = CompletionChunk {
            address,
            len: len as u16,
            length_dw: span_dwords(address, len),
            byte_count: self.remaining as u16,
            lower_address: (address & 0x7F) as u8,
        };
        self.remaining -= len;
        self.next = address.wrapping_add(len);
        Some(chunk)
    }
}

impl FusedIterator for CompletionSplit {}

fn split_completions(
    address: u64,
    len: u64,
    max: u64,
    rcb: Rcb,
    every_boundary: bool,
) -> Result<CompletionSplit, SplitError> {
    if len > MAX_READ_BYTES {
        return Err(SplitError::RequestTooLong { len });
    }
    check_no_overflow(address, len)?;
    if len != 0 && (address & (FOUR_KIB - 1)) + len > FOUR_KIB {
        return Err(SplitError::CrossesFourKiB { address, len });
    }
    Ok(CompletionSplit {
        next: address,
        remaining: len,
        max,
        rcb: u64::from(rcb.bytes()),
        every_boundary,
        zero_length_pending: len == 0,
    })
}

/// Splits the data for one memory read request of `len` bytes at `address`
/// into as few completions as the rules allow.
///
/// Each completion carries at most `mps` bytes counted in whole DWs (§2.2.2).
/// When more than one is needed, every completion but the last ends on a
/// naturally aligned `rcb` boundary, and data is returned in increasing
/// address order (§2.3.1.1). `address` is the request's first enabled byte
/// and `len` its Byte Count as §2.3.1.1 computes them from Length and the
/// byte enables (the first completion's Byte Count and Lower Address); `len`
/// 0 is a zero-length read, answered by one 1-DW completion with Byte Count
/// 1 (§2.3.1.1).
///
/// Errors if the request is longer than 4096 bytes, crosses a 4 KiB boundary
/// or runs past `u64::MAX`: no valid request does.
pub fn split_completion(
    address: u64,
    len: u64,
    mps: PayloadSize,
    rcb: Rcb,
) -> Result<CompletionSplit, SplitError> {
    split_completions(address, len, u64::from(mps.bytes()), rcb, false)
}

/// Splits the data for one memory read request into one completion per RCB
/// block: every completion ends on the next `rcb` boundary, or where the
/// request ends.
///
/// This is what many Root Complexes do (64-byte completions for cache-line
/// reads), and the most completions the rules of §2.3.1.1 allow. Since
/// Max_Payload_Size is at least 128 bytes, these completions never exceed it.
/// Errors as [`split_completion`] does.
pub fn split_completion_at_rcb(
    address: u64,
    len: u64,
    rcb: Rcb,
) -> Result<CompletionSplit, SplitError> {
    split_completions(address, len, u64::from(rcb.bytes()), rcb, true)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    fn requests(split: RequestSplit) -> Vec<(u64, u16, u16, u8, u8)> {
        split
            .map(|c| (c.address, c.len, c.length_dw, c.first_be, c.last_be))
            .collect()
    }

    fn completions(split: CompletionSplit) -> Vec<(u64, u16, u16, u16, u8)> {
        split
            .map(|c| (c.address, c.len, c.length_dw, c.byte_count, c.lower_address))
            .collect()
    }

    #[test]
    fn size_field_encodings_follow_device_control() {
        // §7.5.3.4: 000b 128 B, 001b 256 B, 010b 512 B, 011b 1024 B, 100b 2048 B, 101b 4096 B.
        let expected = [
            (0, 128),
            (1, 256),
            (2, 512),
            (3, 1024),
            (4, 2048),
            (5, 4096),
        ];
        for (bits, bytes) in expected {
            let size = PayloadSize::from_encoding(bits).expect("defined encoding");
            assert_eq!(size.bytes(), bytes);
            assert_eq!(size.dwords(), bytes / 4);
            assert_eq!(size.encoding(), bits);
            assert_eq!(PayloadSize::from_bytes(u32::from(bytes)), Ok(size));
        }
        for bits in [6, 7, 8, 0xFF] {
            assert_eq!(
                PayloadSize::from_encoding(bits),
                Err(SplitError::ReservedSizeEncoding { bits })
            );
        }
        assert_eq!(
            PayloadSize::from_bytes(64),
            Err(SplitError::NotAPayloadSize { bytes: 64 })
        );
        assert_eq!(
            PayloadSize::from_bytes(8192),
            Err(SplitError::NotAPayloadSize { bytes: 8192 })
        );
    }

    #[test]
    fn rcb_follows_link_control_bit() {
        // §7.5.3.7: RCB bit clear = 64 B, set = 128 B; §2.3.1.1: non-root elements use 128 B.
        assert_eq!(Rcb::from_link_control_bit(false).bytes(), 64);
        assert_eq!(Rcb::from_link_control_bit(true).bytes(), 128);
        assert!(Rcb::B128.link_control_bit());
        assert_eq!(Rcb::NON_ROOT, Rcb::B128);
    }

    #[test]
    fn write_stops_at_4k_then_fills_mps() {
        // 1000 B at 0xFC0, MPS 256: 0x1000 - 0xFC0 = 64 B to the boundary, then
        // 256 + 256 + 256 = 768, and 1000 - 64 - 768 = 168 B (42 DW) at 0x1300.
        let got = requests(split_write(0xFC0, 1000, PayloadSize::B256).expect("in range"));
        assert_eq!(
            got,
            [
                (0xFC0, 64, 16, 0xF, 0xF),
                (0x1000, 256, 64, 0xF, 0xF),
                (0x1100, 256, 64, 0xF, 0xF),
                (0x1200, 256, 64, 0xF, 0xF),
                (0x1300, 168, 42, 0xF, 0xF),
            ]
        );
    }

    #[test]
    fn unaligned_write_sets_byte_enables() {
        // 10 B at 0x1003 are bytes 0x1003..=0x100C: DWs 0x1000, 0x1004, 0x1008,
        // 0x100C. First DW only byte 3 (1000b); last DW only byte 0 (0001b).
        assert_eq!(
            requests(split_write(0x1003, 10, PayloadSize::B128).expect("in range")),
            [(0x1003, 10, 4, 0b1000, 0b0001)]
        );
        // 3 B at 0x1001 fit in one DW: bytes 1..=3 (1110b), Last BE 0000b (§2.2.5).
        assert_eq!(
            requests(split_write(0x1001, 3, PayloadSize::B128).expect("in range")),
            [(0x1001, 3, 1, 0b1110, 0)]
        );
        // 2 B at 0x1001: bytes 1 and 2 (0110b).
        assert_eq!(
            requests(split_write(0x1001, 2, PayloadSize::B128).expect("in range")),
            [(0x1001, 2, 1, 0b0110, 0)]
        );
    }

    #[test]
    fn unaligned_start_spends_part_of_the_first_dw() {
        // 256 B at 0x2, MPS 128 (32 DW): the first TLP spans DWs 0x0..0x80, so
        // it carries 0x80 - 0x2 = 126 B; then 128 B at 0x80; then 256 - 254 = 2 B
        // at 0x100 (bytes 0 and 1: 0011b).
        let got = requests(split_write(0x2, 256, PayloadSize::B128).expect("in range"));
        assert_eq!(
            got,
            [
                (0x2, 126, 32, 0b1100, 0xF),
                (0x80, 128, 32, 0xF, 0xF),
                (0x100, 2, 1, 0b0011, 0)
            ]
        );
    }

    #[test]
    fn read_splits_at_mrrs_and_4k() {
        // 8192 B at 0 with MRRS 512: 8192 / 512 = 16 requests of 128 DW each.
        let got = requests(split_read(0, 8192, PayloadSize::B512).expect("in range"));
        assert_eq!(got.len(), 16);
        for (i, chunk) in got.iter().enumerate() {
            assert_eq!(*chunk, (512 * i as u64, 512, 128, 0xF, 0xF));
        }
        // 5000 B at 0x800 with MRRS 4096: 0x1000 - 0x800 = 2048 B, then 5000 - 2048 = 2952 B.
        let got = requests(split_read(0x800, 5000, PayloadSize::B4096).expect("in range"));
        assert_eq!(
            got,
            [(0x800, 2048, 512, 0xF, 0xF), (0x1000, 2952, 738, 0xF, 0xF)]
        );
    }

    #[test]
    fn zero_length_read_is_one_dw_with_no_bytes_enabled() {
        // §2.2.5: Length 1 DW, First and Last DW BE 0000b.
        let got: Vec<_> = split_read(0x1234, 0, PayloadSize::B512)
            .expect("in range")
            .collect();
        assert_eq!(got.len(), 1);
        assert_eq!(
            (
                got[0].len,
                got[0].length_dw,
                got[0].first_be,
                got[0].last_be
            ),
            (0, 1, 0, 0)
        );
        assert_eq!(got[0].dw_address(), 0x1234);
        assert!(got[0].is_zero_length());
        // Zero length at the very top of the address space is still fine.
        assert_eq!(
            split_write(u64::MAX, 0, PayloadSize::B128)
                .expect("in range")
                .count(),
            1
        );
    }

    #[test]
    fn top_of_address_space() {
        // The last byte, 0xFFFF_FFFF_FFFF_FFFF, is byte 3 of its DW.
        assert_eq!(
            requests(split_write(u64::MAX, 1, PayloadSize::B128).expect("in range")),
            [(u64::MAX, 1, 1, 0b1000, 0)]
        );
        // 256 B ending exactly at 2^64: two MPS-128 TLPs.
        let top = 0xFFFF_FFFF_FFFF_FF00;
        assert_eq!(
            requests(split_read(top, 256, PayloadSize::B128).expect("in range")),
            [(top, 128, 32, 0xF, 0xF), (top + 128, 128, 32, 0xF, 0xF)]
        );
        assert_eq!(
            split_write(u64::MAX, 2, PayloadSize::B128).err(),
            Some(SplitError::AddressOverflow {
                address: u64::MAX,
                len: 2
            })
        );
        assert_eq!(
            split_read(2, u64::MAX, PayloadSize::B128).err(),
            Some(SplitError::AddressOverflow {
                address: 2,
                len: u64::MAX
            })
        );
        // u64::MAX bytes from 1 end with byte 2^64 - 1: still addressable.
        assert!(split_read(1, u64::MAX, PayloadSize::B4096).is_ok());
    }

    #[test]
    fn completions_with_mps_and_rcb_128_from_unaligned_address() {
        // 200 B at 0x3E, MPS 128, RCB 128. First: DWs from 0x3C, MPS allows up to
        // 0x3C + 0x80 = 0xBC, which is short of the end 0x3E + 200 = 0x106, so it
        // ends at the RCB boundary 0x80: 0x80 - 0x3E = 66 B in 17 DW (0x3C..0x80).
        // Second: 0x80..0x100, 128 B, Byte Count 200 - 66 = 134.
        // Third: 0x100..0x106, 6 B in 2 DW, Byte Count 6.
        let got = completions(
            split_completion(0x3E, 200, PayloadSize::B128, Rcb::B128).expect("valid request"),
        );
        assert_eq!(
            got,
            [
                (0x3E, 66, 17, 200, 0x3E),
                (0x80, 128, 32, 134, 0x00),
                (0x100, 6, 2, 6, 0x00)
            ]
        );
    }

    #[test]
    fn completions_with_mps_and_rcb_64() {
        // 300 B at 0x1010 (end 0x113C), MPS 128, RCB 64.
        // First: limit 0x1010 + 0x80 = 0x1090, back to the 64 B boundary 0x1080:
        // 0x70 = 112 B (28 DW), Byte Count 300, Lower Address 0x10.
        // Second: 0x1080..0x1100, 128 B, Byte Count 300 - 112 = 188, Lower Address 0x00.
        // Third: 0x1100..0x113C, 60 B (15 DW), Byte Count 60.
        let got = completions(
            split_completion(0x1010, 300, PayloadSize::B128, Rcb::B64).expect("valid request"),
        );
        assert_eq!(
            got,
            [
                (0x1010, 112, 28, 300, 0x10),
                (0x1080, 128, 32, 188, 0x00),
                (0x1100, 60, 15, 60, 0x00)
            ]
        );
    }

    #[test]
    fn completions_at_every_rcb_boundary() {
        // 300 B at 0x1010, RCB 64: 0x1010..0x1040 (48 B), then 64 B blocks at
        // 0x1040, 0x1080, 0x10C0, then 0x1100..0x113C (60 B).
        // Byte Counts: 300, 252, 188, 124, 60. Lower Address = address & 0x7F.
        let got =
            completions(split_completion_at_rcb(0x1010, 300, Rcb::B64).expect("valid request"));
        assert_eq!(
            got,
            [
                (0x1010, 48, 12, 300, 0x10),
                (0x1040, 64, 16, 252, 0x40),
                (0x1080, 64, 16, 188, 0x00),
                (0x10C0, 64, 16, 124, 0x40),
                (0x1100, 60, 15, 60, 0x00),
            ]
        );
    }

    #[test]
    fn small_unaligned_read_is_one_completion() {
        // 10 B at 0x1FE: DWs 0x1FC..0x208 = 3 DW, Byte Count 10, Lower Address 0x7E.
        let got = completions(
            split_completion(0x1FE, 10, PayloadSize::B128, Rcb::B64).expect("valid request"),
        );
        assert_eq!(got, [(0x1FE, 10, 3, 10, 0x7E)]);
    }

    #[test]
    fn full_4k_read_reports_byte_count_4096() {
        // MPS 4096: one completion of 1024 DW with Byte Count 4096
        // (the 12-bit field sends 000h, §2.2.9).
        let got: Vec<_> = split_completion(0x2000, 4096, PayloadSize::B4096, Rcb::B128)
            .expect("valid request")
            .collect();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].length_dw, got[0].byte_count), (1024, 4096));
        assert!(got[0].is_final());
    }

    #[test]
    fn zero_length_read_completion() {
        // §2.3.1.1: Byte Count 1 and Lower Address[1:0] 00b for a zero-length read.
        let got = completions(
            split_completion(0x1234, 0, PayloadSize::B128, Rcb::B64).expect("valid request"),
        );
        assert_eq!(got, [(0x1234, 0, 1, 1, 0x34)]);
    }

    #[test]
    fn invalid_read_requests_are_refused() {
        assert_eq!(
            split_completion(0, 4097, PayloadSize::B128, Rcb::B64).err(),
            Some(SplitError::RequestTooLong { len: 4097 })
        );
        assert_eq!(
            split_completion(0xFF0, 32, PayloadSize::B128, Rcb::B64).err(),
            Some(SplitError::CrossesFourKiB {
                address: 0xFF0,
                len: 32
            })
        );
        assert!(split_completion(0xFE0, 32, PayloadSize::B128, Rcb::B64).is_ok());
        assert_eq!(
            split_completion_at_rcb(u64::MAX, 2, Rcb::B64).err(),
            Some(SplitError::AddressOverflow {
                address: u64::MAX,
                len: 2
            })
        );
    }

    #[test]
    fn errors_explain_themselves() {
        use std::string::ToString;
        let text = SplitError::CrossesFourKiB {
            address: 0xFF0,
            len: 32,
        }
        .to_string();
        assert!(text.contains("0xff0") && text.contains("4 KiB"), "{text}");
        let text = SplitError::ReservedSizeEncoding { bits: 6 }.to_string();
        assert!(text.contains("0b110"), "{text}");
    }

    /// The byte enables of a chunk, recomputed byte by byte: bit n of First BE
    /// is set when byte n of the first DW lies inside the chunk.
    fn expected_bes(address: u64, len: u64) -> (u8, u8) {
        let dw = address & !3;
        // A chunk may end on byte 2^64 - 1, so `address + len` may not exist.
        let last_byte = address + (len - 1);
        let last_dw = last_byte & !3;
        let inside = |byte: u64| byte >= address && byte <= last_byte;
        let mask = |base: u64| {
            (0..4)
                .filter(|n| inside(base + n))
                .fold(0u8, |m, n| m | 1 << n)
        };
        if dw == last_dw {
            (mask(dw), 0)
        } else {
            (mask(dw), mask(last_dw))
        }
    }

    fn any_size() -> impl Strategy<Value = PayloadSize> {
        prop::sample::select(PayloadSize::ALL.to_vec())
    }

    fn any_rcb() -> impl Strategy<Value = Rcb> {
        prop::sample::select(std::vec![Rcb::B64, Rcb::B128])
    }

    /// Addresses near 4 KiB boundaries, DW boundaries and the top of memory.
    fn any_address() -> impl Strategy<Value = u64> {
        prop_oneof![
            0u64..0x4000,
            any::<u64>(),
            (0u64..0x1000).prop_map(|low| u64::MAX - 0x3FFF + low),
        ]
    }

    proptest! {
        #[test]
        fn requests_cover_the_transfer_exactly(
            address in any_address(),
            len in 0u64..20_000,
            size in any_size(),
            read in any::<bool>(),
        ) {
            let split = if read {
                split_read(address, len, size)
            } else {
                split_write(address, len, size)
            };
            let Ok(split) = split else {
                // Only refused when the last byte is past 2^64 - 1.
                prop_assert!(u128::from(address) + u128::from(len) > 1u128 << 64);
                return Ok(());
            };
            let mut next = u128::from(address);
            let mut count = 0;
            for chunk in split {
                count += 1;
                prop_assert_eq!(u128::from(chunk.address), next, "contiguous");
                if len == 0 {
                    let fields = (chunk.len, chunk.length_dw, chunk.first_be, chunk.last_be);
                    prop_assert_eq!(fields, (0, 1, 0, 0));
                    continue;
                }
                prop_assert!(chunk.len > 0);
                let start = u128::from(chunk.address);
                let end = start + u128::from(chunk.len);
                next = end;
                // §2.2.7: first and last byte in the same 4 KiB page.
                prop_assert_eq!(start >> 12, (end - 1) >> 12, "crosses 4 KiB");
                // Length counts every DW touched, and stays within MPS/MRRS.
                let dws = ((end + 3) >> 2) - (start >> 2);
                prop_assert_eq!(u128::from(chunk.length_dw), dws);
                prop_assert!(chunk.length_dw <= size.dwords());
                let (first_be, last_be) = expected_bes(chunk.address, u64::from(chunk.len));
                prop_assert_eq!((chunk.first_be, chunk.last_be), (first_be, last_be));
            }
            if len == 0 {
                prop_assert_eq!(count, 1);
            } else {
                prop_assert_eq!(next, u128::from(address) + u128::from(len), "covers the transfer");
            }
        }

        #[test]
        fn completions_obey_rcb_and_byte_count(
            page in any_address(),
            offset in 0u64..4096,
            len in 0u64..=4096,
            mps in any_size(),
            rcb in any_rcb(),
            at_rcb in any::<bool>(),
        ) {
            // A valid request: inside one 4 KiB page.
            let address = (page & !0xFFF) + offset;
            let len = len.min(4096 - offset);
            let split = if at_rcb {
                split_completion_at_rcb(address, len, rcb)
            } else {
                split_completion(address, len, mps, rcb)
            }
            .expect("a request inside one page is valid");
            let limit_dw = if at_rcb { rcb.bytes() / 4 } else { mps.dwords() };
            let chunks: Vec<_> = split.collect();
            if len == 0 {
                prop_assert_eq!(chunks.len(), 1);
                let c = chunks[0];
                let fields = (c.len, c.length_dw, c.byte_count, c.lower_address);
                prop_assert_eq!(fields, (0, 1, 1, (address & 0x7C) as u8));
                return Ok(());
            }
            let mut next = address;
            let mut remaining = len;
            for (i, c) in chunks.iter().enumerate() {
                let last = i + 1 == chunks.len();
                prop_assert_eq!(c.address, next, "increasing address order, no gaps");
                prop_assert!(c.len > 0);
                prop_assert_eq!(
                    u64::from(c.byte_count),
                    remaining,
                    "Byte Count includes this completion"
                );
                prop_assert_eq!(u64::from(c.lower_address), c.address & 0x7F);
                let end = c.address + u64::from(c.len);
                let dws = ((end + 3) >> 2) - (c.address >> 2);
                prop_assert_eq!(u64::from(c.length_dw), dws);
                prop_assert!(c.length_dw <= limit_dw, "payload within MPS");
                prop_assert_eq!(c.is_final(), last);
                if !last {
                    prop_assert_eq!(end % u64::from(rcb.bytes()), 0, "ends on an RCB boundary");
                }
                if at_rcb {
                    // Never runs past the next RCB boundary.
                    let block = u64::from(rcb.bytes());
                    prop_assert_eq!(c.address / block, (end - 1) / block);
                }
                remaining -= u64::from(c.len);
                next = end;
            }
            prop_assert_eq!(remaining, 0, "covers the request");
            if !at_rcb {
                // As few completions as possible: each stops at the last RCB boundary
                // its payload limit reaches, so it is never followed by a completion
                // that would have fitted entirely.
                for pair in chunks.windows(2) {
                    let start_dw = pair[0].address & !3;
                    let next_end = pair[1].address + u64::from(pair[1].len);
                    let fits = next_end - start_dw <= u64::from(mps.bytes())
                        && (pair[1].is_final() || next_end % u64::from(rcb.bytes()) == 0);
                    prop_assert!(
                        !fits,
                        "{:?} and {:?} could have been one completion",
                        pair[0],
                        pair[1]
                    );
                }
            }
        }
    }
}
