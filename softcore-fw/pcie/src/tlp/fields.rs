//! Small typed header fields shared by several TLP kinds: TC, attributes, tags, AT, PH, lengths.

use super::error::TlpError;
use super::layout;

/// A Traffic Class, TC0–TC7 (PCIe Base 6.0 §2.2.6.6). TC0 is the default best-effort class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TrafficClass(u8);

impl TrafficClass {
    /// TC0, the default class every device supports (Table 2-14).
    pub const TC0: Self = TrafficClass(0);

    /// The class numbered `tc`, or `None` above TC7: the field is 3 bits.
    pub const fn new(tc: u8) -> Option<Self> {
        if tc <= 7 {
            Some(TrafficClass(tc))
        } else {
            None
        }
    }

    /// Reads the class from a 3-bit field value, ignoring higher bits.
    pub const fn from_bits(bits: u8) -> Self {
        TrafficClass(bits & 0x7)
    }

    /// The class number, 0–7.
    pub const fn get(self) -> u8 {
        self.0
    }
}

/// The Attr\[2:0\] bits of a TLP (§2.2.6.3–§2.2.6.5).
///
/// They decide which ordering rules of §2.4 apply to the TLP and whether
/// the completer needs to snoop caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Attributes {
    /// Attr\[1\], Relaxed Ordering (§2.2.6.4).
    pub relaxed_ordering: bool,
    /// Attr\[0\], No Snoop (§2.2.6.5).
    pub no_snoop: bool,
    /// Attr\[2\], ID-Based Ordering; in Non-Flit Mode it sits apart from Attr\[1:0\], in byte 1 (§2.2.6.4).
    pub id_based_ordering: bool,
}

impl Attributes {
    /// Attr\[2:0\] as one 3-bit value, Attr\[2\] = IDO in bit 2.
    pub const fn bits(self) -> u8 {
        (self.id_based_ordering as u8) << 2
            | (self.relaxed_ordering as u8) << 1
            | self.no_snoop as u8
    }

    /// Builds the attributes from a 3-bit Attr\[2:0\] value.
    pub const fn from_bits(bits: u8) -> Self {
        Attributes {
            relaxed_ordering: bits & 0b010 != 0,
            no_snoop: bits & 0b001 != 0,
            id_based_ordering: bits & 0b100 != 0,
        }
    }

    pub(crate) fn write(self, header: &mut [u32; layout::MAX_HEADER_DWS]) {
        layout::RELAXED_ORDERING.write(header, self.relaxed_ordering.into());
        layout::NO_SNOOP.write(header, self.no_snoop.into());
        layout::ID_BASED_ORDERING.write(header, self.id_based_ordering.into());
    }

    pub(crate) fn read(header: &[u32; layout::MAX_HEADER_DWS]) -> Self {
        Attributes {
            relaxed_ordering: layout::RELAXED_ORDERING.read(header) != 0,
            no_snoop: layout::NO_SNOOP.read(header) != 0,
            id_based_ordering: layout::ID_BASED_ORDERING.read(header) != 0,
        }
    }
}

/// A 10-bit Non-Flit Mode tag, Tag\[9:0\] (§2.2.6.2).
///
/// Tag\[9\] and Tag\[8\] travel in DW 0 (the T9 and T8 bits of byte 1);
/// Tag\[7:0\] travels in byte 6 of a request or byte 10 of a completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Tag(u16);

impl Tag {
    /// The largest 10-bit tag.
    pub const MAX: u16 = 0x3ff;

    /// The tag `value`, or `None` if it needs more than 10 bits.
    pub const fn new(value: u16) -> Option<Self> {
        if value <= Self::MAX {
            Some(Tag(value))
        } else {
            None
        }
    }

    /// An 8-bit tag, as requesters without 10-bit Tag Requester capability send.
    pub const fn from_8bit(value: u8) -> Self {
        Tag(value as u16)
    }

    /// The tag value, 0–1023.
    pub const fn get(self) -> u16 {
        self.0
    }

    /// Tag\[7:0\].
    pub const fn low(self) -> u8 {
        self.0 as u8
    }

    pub(crate) fn write(self, header: &mut [u32; layout::MAX_HEADER_DWS], low: layout::Field) {
        layout::TAG_9.write(header, u32::from(self.0 >> 9) & 1);
        layout::TAG_8.write(header, u32::from(self.0 >> 8) & 1);
        low.write(header, u32::from(self.low()));
    }

    pub(crate) fn read(header: &[u32; layout::MAX_HEADER_DWS], low: layout::Field) -> Self {
        let high = (layout::TAG_9.read(header) << 1) | layout::TAG_8.read(header);
        Tag(((high << 8) | low.read(header)) as u16)
    }
}

/// The Address Type field, AT\[1:0\], of a memory request (§2.2.4.1, §10.2.1 Table 10-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AddressType {
    /// 00b: the address is untranslated (the default).
    #[default]
    Untranslated,
    /// 01b: an ATS Translation Request.
    TranslationRequest,
    /// 10b: the address was translated by ATS.
    Translated,
    /// 11b: reserved.
    Reserved,
}

impl AddressType {
    /// The 2-bit field value.
    pub const fn bits(self) -> u8 {
        match self {
            Self::Untranslated => 0b00,
            Self::TranslationRequest => 0b01,
            Self::Translated => 0b10,
            Self::Reserved => 0b11,
        }
    }

    /// Reads the 2-bit field value, ignoring higher bits.
    pub const fn from_bits(bits: u8) -> Self {
        match bits & 0b11 {
            0b00 => Self::Untranslated,
            0b01 => Self::TranslationRequest,
            0b10 => Self::Translated,
            _ => Self::Reserved,
        }
    }
}

/// The Processing Hint PH\[1:0\] carried when TH is set (§2.2.7.1.1, Table 2-18).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProcessingHint {
    /// 00b: frequent access by both host and device.
    Bidirectional,
    /// 01b: frequent access by the device.
    Requester,
    /// 10b: frequent access by the host.
    Target,
    /// 11b: frequent access by the host, with high temporal locality.
    TargetWithPriority,
}

impl ProcessingHint {
    /// The 2-bit PH value.
    pub const fn bits(self) -> u8 {
        match self {
            Self::Bidirectional => 0b00,
            Self::Requester => 0b01,
            Self::Target => 0b10,
            Self::TargetWithPriority => 0b11,
        }
    }

    /// Reads the 2-bit PH value, ignoring higher bits.
    pub const fn from_bits(bits: u8) -> Self {
        match bits & 0b11 {
            0b00 => Self::Bidirectional,
            0b01 => Self::Requester,
            0b10 => Self::Target,
            _ => Self::TargetWithPriority,
        }
    }
}

/// Whether a request reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// A read: no payload in the request; data comes back in a completion.
    Read,
    /// A write: the payload travels with the request.
    Write,
}

/// The largest length a TLP can carry or request: 1024 DW, encoded as 0 (Table 2-4).
pub const MAX_LENGTH_DW: u16 = 1024;

/// Decodes the 10-bit Length field: 0 means 1024 DW (Table 2-4).
pub const fn length_from_field(field: u32) -> u16 {
    let value = (field & 0x3ff) as u16;
    if value == 0 {
        MAX_LENGTH_DW
    } else {
        value
    }
}

/// Encodes a length of 1..=1024 DW into the 10-bit Length field (Table 2-4).
pub fn length_to_field(length_dw: u16) -> Result<u32, TlpError> {
    if (1..=MAX_LENGTH_DW).contains(&length_dw) {
        Ok(u32::from(length_dw) & 0x3ff)
    } else {
        Err(TlpError::LengthOutOfRange { length_dw })
    }
}

/// The largest completion byte count: 4096, encoded as 0 (§2.2.9.1).
pub const MAX_BYTE_COUNT: u16 = 4096;

/// Decodes the 12-bit Byte Count field: 0 means 4096 bytes (§2.2.9.1).
pub const fn byte_count_from_field(field: u32) -> u16 {
    let value = (field & 0xfff) as u16;
    if value == 0 {
        MAX_BYTE_COUNT
    } else {
        value
    }
}

/// Encodes a byte count of 1..=4096 into the 12-bit Byte Count field (§2.2.9.1).
pub fn byte_count_to_field(byte_count: u16) -> Result<u32, TlpError> {
    if (1..=MAX_BYTE_COUNT).contains(&byte_count) {
        Ok(u32::from(byte_count) & 0xfff)
    } else {
        Err(TlpError::ByteCountOutOfRange { byte_count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_zero_means_1024_dw() {
        // Table 2-4: 00 0000 0000b is 1024 DW, 00 0000 0001b is 1 DW.
        assert_eq!(length_from_field(0), 1024);
        assert_eq!(length_from_field(1), 1);
        assert_eq!(length_from_field(0x3ff), 1023);
        assert_eq!(length_to_field(1024), Ok(0));
        assert_eq!(
            length_to_field(0),
            Err(TlpError::LengthOutOfRange { length_dw: 0 })
        );
        assert_eq!(
            length_to_field(1025),
            Err(TlpError::LengthOutOfRange { length_dw: 1025 })
        );
    }

    #[test]
    fn byte_count_zero_means_4096_bytes() {
        // §2.2.9.1: 0000 0000 0000b indicates 4096 bytes.
        assert_eq!(byte_count_from_field(0), 4096);
        assert_eq!(byte_count_from_field(0xfff), 4095);
        assert_eq!(byte_count_to_field(4096), Ok(0));
        assert!(byte_count_to_field(0).is_err());
    }

    #[test]
    fn ten_bit_tag_splits_into_t9_t8_and_the_low_byte() {
        let mut header = [0u32; 4];
        Tag::new(0x2a5)
            .expect("0x2a5 fits 10 bits")
            .write(&mut header, layout::REQUEST_TAG_LOW);
        // T9 = 1 (DW0 bit 23), T8 = 0 (bit 19), Tag[7:0] = 0xa5 in byte 6 (DW1 bits 15:8).
        assert_eq!(header[0], 1 << 23);
        assert_eq!(header[1], 0xa5 << 8);
        assert_eq!(Tag::read(&header, layout::REQUEST_TAG_LOW).get(), 0x2a5);
        assert_eq!(Tag::new(0x400), None);
    }

    #[test]
    fn attributes_pack_as_ido_ro_ns() {
        let attrs = Attributes {
            relaxed_ordering: true,
            no_snoop: false,
            id_based_ordering: true,
        };
        assert_eq!(attrs.bits(), 0b110);
        assert_eq!(Attributes::from_bits(0b110), attrs);
    }
}
