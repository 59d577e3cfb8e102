//! First/Last DW byte-enable rules for requests (PCIe Base 6.0 §2.2.5.1).

use super::error::TlpError;

/// Checks a request's First and Last DW byte enables against §2.2.5.1.
///
/// - Length 1 DW: Last DW BE must be 0000b; any First DW BE is allowed,
///   non-contiguous or 0000b (a zero-length read or write).
/// - Length > 1 DW: neither field may be 0000b.
/// - Length 2 DW at a QW-aligned address (`address` bit 2 clear): both
///   fields may be non-contiguous.
/// - Otherwise (length 2 not QW aligned, or length ≥ 3): the enabled bytes
///   must be contiguous with the data between the first and last DW, so First
///   DW BE is 1111b, 1110b, 1100b or 1000b and Last DW BE is 1111b, 0111b,
///   0011b or 0001b.
///
/// Values wider than 4 bits are rejected. Memory Reads with TH set carry a
/// Steering Tag in place of the byte enables and must not be checked here
/// (§2.2.5.1); I/O and Configuration requests always have length 1.
pub fn check_byte_enables(
    length_dw: u16,
    address: u64,
    first_be: u8,
    last_be: u8,
) -> Result<(), TlpError> {
    if byte_enables_are_legal(length_dw, address, first_be, last_be) {
        Ok(())
    } else {
        Err(TlpError::IllegalByteEnables {
            first: first_be,
            last: last_be,
            length: length_dw,
        })
    }
}

/// Whether [`check_byte_enables`] accepts these byte enables.
pub fn byte_enables_are_legal(length_dw: u16, address: u64, first_be: u8, last_be: u8) -> bool {
    if first_be > 0xf || last_be > 0xf {
        return false;
    }
    match length_dw {
        0 => false,
        1 => last_be == 0,
        _ if first_be == 0 || last_be == 0 => false,
        2 if address & 0b100 == 0 => true,
        _ => first_is_contiguous_to_end(first_be) && last_is_contiguous_from_start(last_be),
    }
}

/// First DW enables that run without a gap up to byte 3 of the DW: 1000b, 1100b, 1110b, 1111b.
fn first_is_contiguous_to_end(first_be: u8) -> bool {
    matches!(first_be, 0b1000 | 0b1100 | 0b1110 | 0b1111)
}

/// Last DW enables that run without a gap from byte 0 of the DW: 0001b, 0011b, 0111b, 1111b.
fn last_is_contiguous_from_start(last_be: u8) -> bool {
    matches!(last_be, 0b0001 | 0b0011 | 0b0111 | 0b1111)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_dw_allows_any_first_be_but_no_last_be() {
        // §2.2.5.1: non-contiguous First DW BE allowed for length 1 (1010b, 0101b, 1001b...),
        // 0000b is a zero-length access, and Last DW BE must be 0000b.
        for first in 0..=0xf {
            assert!(byte_enables_are_legal(1, 0x1000, first, 0));
            assert!(!byte_enables_are_legal(1, 0x1000, first, 0b0001));
        }
    }

    #[test]
    fn longer_requests_need_both_fields_nonzero() {
        assert!(!byte_enables_are_legal(2, 0x1000, 0, 0xf));
        assert!(!byte_enables_are_legal(2, 0x1000, 0xf, 0));
        assert!(!byte_enables_are_legal(8, 0x1000, 0, 0));
    }

    #[test]
    fn qw_aligned_two_dw_requests_may_be_non_contiguous() {
        // 0x1000 has address bit 2 clear: QW aligned.
        assert!(byte_enables_are_legal(2, 0x1000, 0b0101, 0b1010));
        // 0x1004 is DW but not QW aligned: contiguity applies.
        assert!(!byte_enables_are_legal(2, 0x1004, 0b0101, 0b1010));
        assert!(byte_enables_are_legal(2, 0x1004, 0b1100, 0b0011));
    }

    #[test]
    fn three_or_more_dw_must_be_contiguous() {
        // The spec's own examples: 1100b/0011b and 1000b/0111b.
        assert!(byte_enables_are_legal(3, 0x1000, 0b1100, 0b0011));
        assert!(byte_enables_are_legal(3, 0x1000, 0b1000, 0b0111));
        assert!(!byte_enables_are_legal(3, 0x1000, 0b0110, 0b1111));
        assert!(!byte_enables_are_legal(3, 0x1000, 0b1111, 0b1110));
        assert!(!byte_enables_are_legal(3, 0x1000, 0b1111, 0b1011));
    }

    #[test]
    fn reports_the_offending_values() {
        assert_eq!(
            check_byte_enables(1, 0, 0xf, 0x1),
            Err(TlpError::IllegalByteEnables {
                first: 0xf,
                last: 0x1,
                length: 1
            })
        );
    }
}
