//! What a completer puts in the first completion of a memory read: Byte Count and Lower Address
//! (PCIe Base 6.0 §2.2.9.1, §2.3.1.1).
//!
//! Splitting the rest of the read at the Read Completion Boundary is
//! [`crate::split`]'s job; it starts from these two values.

/// The Byte Count of the first (or only) completion for a memory read: the
/// number of bytes the read covers, from the first enabled byte to the last
/// (§2.3.1.1, "Calculating Byte Count from Length and Byte Enables").
///
/// - Length 1 DW: the span from the lowest to the highest enabled byte of
///   `first_be` (1xx1b → 4, 01x1b or 1x10b → 3, 0011b, 0110b or 1100b → 2,
///   one bit → 1), and 1 for a zero-length read (First DW BE = 0000b).
/// - Length > 1 DW: `length_dw * 4`, less the disabled bytes below the first
///   enabled byte of the first DW and above the last enabled byte of the last
///   DW. Byte enables in the middle of a QW-aligned 2 DW read do not shorten it.
///
/// The result is 1..=4096; a Byte Count field encodes 4096 as 0. For
/// arguments that break §2.2.5.1 (length 0 or over 1024, zero enables with
/// length > 1) the value is meaningless but never panics. A Memory Read with
/// TH set has implied byte enables; pass those
/// ([`crate::tlp::MemoryRequest::effective_byte_enables`]).
///
/// Memory reads only. An AtomicOp completion's Byte Count is the operand
/// size in bytes (§2.2.9.1), which a CAS's Length and the AtomicOp's
/// Reserved byte enables do not give; use
/// [`crate::tlp::MemoryRequest::completion_byte_count`], which covers both.
pub fn read_request_byte_count(length_dw: u16, first_be: u8, last_be: u8) -> u16 {
    let first_be = first_be & 0xf;
    let last_be = last_be & 0xf;
    if length_dw <= 1 {
        if first_be == 0 {
            return 1;
        }
        let lowest = first_be.trailing_zeros() as u16;
        let highest = 7 - first_be.leading_zeros() as u16;
        return highest - lowest + 1;
    }
    let total = length_dw.min(1024) * 4;
    let skipped_at_start = first_be.trailing_zeros().min(4) as u16;
    // Within the 4-bit field, the disabled bytes above the last enabled one.
    let skipped_at_end = (last_be.leading_zeros() as u16).saturating_sub(4).min(4);
    total
        .saturating_sub(skipped_at_start + skipped_at_end)
        .max(1)
}

/// The Lower Address of the first completion for a memory read at `address`
/// (a DW-aligned request address): the low 7 bits of the byte address of the
/// first enabled byte (§2.2.9.1, §2.3.1.1).
///
/// Bits \[6:2\] come from the address; bits \[1:0\] from the First DW BE:
/// 0000b or xxx1b → 00b, xx10b → 01b, x100b → 10b, 1000b → 11b.
///
/// Memory reads only: in an AtomicOp completion the field is Reserved (§2.2.9.1).
pub fn lower_address(address: u64, first_be: u8) -> u8 {
    let first_be = first_be & 0xf;
    let byte_offset = if first_be == 0 {
        0
    } else {
        first_be.trailing_zeros() as u8
    };
    ((address as u8) & 0x7c) | byte_offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_dw_byte_count_follows_the_spec_table() {
        // §2.3.1.1, rows for Length = 1 DW: (First DW BE, Byte Count).
        let rows = [
            (0b1001, 4),
            (0b1011, 4),
            (0b1101, 4),
            (0b1111, 4),
            (0b0101, 3),
            (0b0111, 3),
            (0b1010, 3),
            (0b1110, 3),
            (0b0011, 2),
            (0b0110, 2),
            (0b1100, 2),
            (0b0001, 1),
            (0b0010, 1),
            (0b0100, 1),
            (0b1000, 1),
            (0b0000, 1),
        ];
        for (first_be, expected) in rows {
            assert_eq!(
                read_request_byte_count(1, first_be, 0),
                expected,
                "{first_be:04b}"
            );
        }
    }

    #[test]
    fn multi_dw_byte_count_follows_the_spec_table() {
        // §2.3.1.1, rows for Length > 1: (First DW BE, Last DW BE, bytes short of Length * 4).
        let rows = [
            (0b0001, 0b1000, 0),
            (0b0001, 0b0100, 1),
            (0b0001, 0b0010, 2),
            (0b0001, 0b0001, 3),
            (0b0010, 0b1000, 1),
            (0b0010, 0b0100, 2),
            (0b0010, 0b0010, 3),
            (0b0010, 0b0001, 4),
            (0b0100, 0b1000, 2),
            (0b0100, 0b0100, 3),
            (0b0100, 0b0010, 4),
            (0b0100, 0b0001, 5),
            (0b1000, 0b1000, 3),
            (0b1000, 0b0100, 4),
            (0b1000, 0b0010, 5),
            (0b1000, 0b0001, 6),
        ];
        for length in [2u16, 3, 16, 1024] {
            for (first_be, last_be, short) in rows {
                // The table's "x" bits do not matter: fill them in to prove it.
                let first_full = first_be | (0b1111 & !(first_be - 1)) & 0xf;
                let last_full = last_be | (last_be - 1);
                for (f, l) in [(first_be, last_be), (first_full, last_full)] {
                    assert_eq!(
                        read_request_byte_count(length, f, l),
                        length * 4 - short,
                        "length {length}, {f:04b}/{l:04b}"
                    );
                }
            }
        }
        assert_eq!(read_request_byte_count(1024, 0xf, 0xf), 4096);
    }

    #[test]
    fn byte_count_never_panics_on_illegal_input() {
        for length in [0u16, 1, 2, 1024, 1025, u16::MAX] {
            for first in 0..=0xff {
                for last in [0u8, 1, 0x80, 0xff] {
                    let count = read_request_byte_count(length, first, last);
                    assert!((1..=4096).contains(&count));
                }
            }
        }
    }

    #[test]
    fn lower_address_adds_the_first_enabled_byte_offset() {
        // §2.3.1.1: address[6:2] plus First DW BE 0000b/xxx1b → 00b, xx10b → 01b,
        // x100b → 10b, 1000b → 11b.
        assert_eq!(lower_address(0x1234_5678, 0b0000), 0x78);
        assert_eq!(lower_address(0x1234_5678, 0b1111), 0x78);
        assert_eq!(lower_address(0x1234_5678, 0b1110), 0x79);
        assert_eq!(lower_address(0x1234_5678, 0b0100), 0x7a);
        assert_eq!(lower_address(0x1234_5678, 0b1000), 0x7b);
        // Bit 7 of the address is not part of the 7-bit field: 0xfc & 0x7c = 0x7c.
        assert_eq!(lower_address(0xffff_fffc, 0b1000), 0x7f);
    }
}
