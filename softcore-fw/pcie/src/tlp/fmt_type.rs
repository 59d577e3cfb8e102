//! What byte 0 of a header says: the TLP type, header size and data presence (PCIe Base 6.0 §2.2.1.1).

use super::error::TlpError;
use super::layout::{fmt, ty};
use super::message::MessageRouting;

/// The TLP types this crate models, as named in Table 2-3.
///
/// It is decided by byte 0 alone, before the rest of the header arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TlpType {
    /// MRd, 3 or 4 DW.
    MemoryRead,
    /// MRdLk, 3 or 4 DW.
    MemoryReadLocked,
    /// MWr, 3 or 4 DW.
    MemoryWrite,
    /// IORd.
    IoRead,
    /// IOWr.
    IoWrite,
    /// CfgRd0.
    ConfigRead0,
    /// CfgWr0.
    ConfigWrite0,
    /// CfgRd1.
    ConfigRead1,
    /// CfgWr1.
    ConfigWrite1,
    /// Cpl: completion without data.
    Completion,
    /// CplD: completion with data.
    CompletionWithData,
    /// CplLk: locked-read completion without data (error cases only).
    CompletionLocked,
    /// CplDLk: locked-read completion with data.
    CompletionWithDataLocked,
    /// Msg, with its routing.
    Message(MessageRouting),
    /// MsgD, with its routing.
    MessageWithData(MessageRouting),
    /// FetchAdd AtomicOp, 3 or 4 DW, with data.
    FetchAdd,
    /// Swap (unconditional swap) AtomicOp, 3 or 4 DW, with data.
    Swap,
    /// CAS (compare and swap) AtomicOp, 3 or 4 DW, with data.
    CompareAndSwap,
}

impl TlpType {
    /// Classifies a Fmt\[2:0\] / Type\[4:0\] pair (Table 2-3).
    ///
    /// TLP Prefixes (Fmt = 100b) are not headers and give
    /// [`TlpError::UnexpectedPrefix`]. The one encoding the spec defines but
    /// this crate does not model, DMWr, gives
    /// [`TlpError::UnsupportedFmtType`]; all others give
    /// [`TlpError::ReservedFmtType`], including the deprecated TCfgRd, which
    /// receivers without Trusted Configuration Space treat as Malformed.
    pub fn from_fmt_type(fmt_bits: u8, ty_bits: u8) -> Result<Self, TlpError> {
        let fmt_bits = fmt_bits & 0b111;
        let ty_bits = ty_bits & 0b1_1111;
        let reserved = TlpError::ReservedFmtType {
            fmt: fmt_bits,
            ty: ty_bits,
        };
        if fmt_bits == fmt::PREFIX {
            return Err(TlpError::UnexpectedPrefix {
                byte0: fmt_bits << 5 | ty_bits,
            });
        }
        if fmt_bits > fmt::FOUR_DW_WITH_DATA {
            return Err(reserved);
        }
        let with_data = fmt_bits & fmt::WITH_DATA_BIT != 0;
        let four_dw = fmt_bits & fmt::FOUR_DW_BIT != 0;
        if ty_bits & ty::MESSAGE_MASK == ty::MESSAGE {
            // Messages always use the 4 DW header (Table 2-3: Fmt 001b or 011b).
            let routing = MessageRouting::from_bits(ty_bits);
            return match (four_dw, with_data) {
                (true, false) => Ok(Self::Message(routing)),
                (true, true) => Ok(Self::MessageWithData(routing)),
                (false, _) => Err(reserved),
            };
        }
        let three_dw_only = |read: Self, write: Self| match (four_dw, with_data) {
            (false, false) => Ok(read),
            (false, true) => Ok(write),
            (true, _) => Err(reserved),
        };
        match ty_bits {
            ty::MEMORY if with_data => Ok(Self::MemoryWrite),
            ty::MEMORY => Ok(Self::MemoryRead),
            ty::MEMORY_LOCKED if with_data => Err(reserved),
            ty::MEMORY_LOCKED => Ok(Self::MemoryReadLocked),
            ty::IO => three_dw_only(Self::IoRead, Self::IoWrite),
            ty::CONFIG_TYPE0 => three_dw_only(Self::ConfigRead0, Self::ConfigWrite0),
            ty::CONFIG_TYPE1 => three_dw_only(Self::ConfigRead1, Self::ConfigWrite1),
            ty::COMPLETION => three_dw_only(Self::Completion, Self::CompletionWithData),
            ty::COMPLETION_LOCKED => {
                three_dw_only(Self::CompletionLocked, Self::CompletionWithDataLocked)
            }
            // AtomicOps always carry their operands (Table 2-3: Fmt 010b or 011b).
            ty::FETCH_ADD if with_data => Ok(Self::FetchAdd),
            ty::SWAP if with_data => Ok(Self::Swap),
            ty::COMPARE_AND_SWAP if with_data => Ok(Self::CompareAndSwap),
            ty::DEFERRABLE_MEMORY_WRITE if with_data => Err(TlpError::UnsupportedFmtType {
                fmt: fmt_bits,
                ty: ty_bits,
            }),
            _ => Err(reserved),
        }
    }

    /// Classifies header byte 0 (Fmt in bits 7:5, Type in bits 4:0).
    pub fn from_byte0(byte0: u8) -> Result<Self, TlpError> {
        Self::from_fmt_type(byte0 >> 5, byte0 & 0x1f)
    }

    /// Whether a data payload follows the header (Fmt\[1\]).
    pub const fn has_data(self) -> bool {
        matches!(
            self,
            Self::MemoryWrite
                | Self::IoWrite
                | Self::ConfigWrite0
                | Self::ConfigWrite1
                | Self::CompletionWithData
                | Self::CompletionWithDataLocked
                | Self::MessageWithData(_)
                | Self::FetchAdd
                | Self::Swap
                | Self::CompareAndSwap
        )
    }
}

/// The header size in DW that Fmt\[0\] announces: 3 or 4 (Table 2-2).
pub const fn header_dws_for_fmt(fmt_bits: u8) -> usize {
    if fmt_bits & fmt::FOUR_DW_BIT != 0 {
        4
    } else {
        3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_2_3_encodings_classify_as_named() {
        let cases = [
            (0b000, 0b0_0000, TlpType::MemoryRead),
            (0b001, 0b0_0000, TlpType::MemoryRead),
            (0b000, 0b0_0001, TlpType::MemoryReadLocked),
            (0b011, 0b0_0000, TlpType::MemoryWrite),
            (0b000, 0b0_0010, TlpType::IoRead),
            (0b010, 0b0_0010, TlpType::IoWrite),
            (0b000, 0b0_0100, TlpType::ConfigRead0),
            (0b010, 0b0_0101, TlpType::ConfigWrite1),
            (0b000, 0b0_1010, TlpType::Completion),
            (0b010, 0b0_1010, TlpType::CompletionWithData),
            (0b000, 0b0_1011, TlpType::CompletionLocked),
            (0b010, 0b0_1011, TlpType::CompletionWithDataLocked),
            (0b001, 0b1_0100, TlpType::Message(MessageRouting::Local)),
            (
                0b011,
                0b1_0010,
                TlpType::MessageWithData(MessageRouting::ById),
            ),
            (0b010, 0b0_1100, TlpType::FetchAdd),
            (0b011, 0b0_1100, TlpType::FetchAdd),
            (0b010, 0b0_1101, TlpType::Swap),
            (0b011, 0b0_1101, TlpType::Swap),
            (0b010, 0b0_1110, TlpType::CompareAndSwap),
            (0b011, 0b0_1110, TlpType::CompareAndSwap),
        ];
        for (f, t, expected) in cases {
            assert_eq!(
                TlpType::from_fmt_type(f, t),
                Ok(expected),
                "{f:03b} {t:05b}"
            );
        }
    }

    #[test]
    fn reserved_and_unsupported_encodings_are_told_apart() {
        let reserved = |fmt, ty| Err(TlpError::ReservedFmtType { fmt, ty });
        // MRdLk with data, 4 DW I/O, 4 DW config, 4 DW completion, 3 DW message,
        // Fmt 101b and 111b, TCfgRd, AtomicOps without data, Type 0_0011b.
        for (f, t) in [
            (0b010, 0b0_0001),
            (0b001, 0b0_0010),
            (0b011, 0b0_0100),
            (0b001, 0b0_1010),
            (0b000, 0b1_0000),
            (0b101, 0b0_0000),
            (0b111, 0b1_1111),
            (0b000, 0b1_1011),
            (0b000, 0b0_1100),
            (0b001, 0b0_1101),
            (0b000, 0b0_1110),
            (0b000, 0b0_0011),
        ] {
            assert_eq!(TlpType::from_fmt_type(f, t), reserved(f, t));
        }
        // DMWr, 3 and 4 DW: defined by Table 2-3, not modelled here.
        for f in [0b010, 0b011] {
            assert_eq!(
                TlpType::from_fmt_type(f, 0b1_1011),
                Err(TlpError::UnsupportedFmtType {
                    fmt: f,
                    ty: 0b1_1011
                })
            );
        }
        assert_eq!(
            TlpType::from_byte0(0b1001_0001),
            Err(TlpError::UnexpectedPrefix { byte0: 0x91 })
        );
    }
}
