//! The Ethernet frame check sequence, a nibble at a time (IEEE 802.3
//! §3.2.9): CRC-32 with the generator polynomial
//! x^32 + x^26 + x^23 + x^22 + x^16 + x^12 + x^11 + x^10 + x^8 + x^7 + x^5
//! + x^4 + x^2 + x + 1.

use rust_hdl::prelude::*;

/// The generator polynomial with x^0 in bit 31 and x^31 in bit 0: bits
/// enter the register least significant first, as MII carries them.
pub const POLYNOMIAL: u32 = 0xEDB8_8320;

/// The register before a frame's first bit: all ones, so leading zeros
/// count (§3.2.9 a, the first 32 bits complemented).
pub const INITIAL: u32 = u32::MAX;

/// The register after a frame and its own correct frame check sequence
/// have both passed through it (the complemented CRC of §3.2.9 e makes
/// this a constant, whatever the frame).
pub const RESIDUE: u32 = 0xDEBB_20E3;

/// One MII nibble through the CRC-32 register: four bits, `nibble` bit 0
/// first, each shifting the register right and folding in the
/// polynomial when the bit leaving differs from the bit entering.
///
/// A transmitter starts from [`INITIAL`], passes every nibble of the
/// frame and sends the complement of the register, least significant bit
/// first; a receiver passes the frame and its FCS and compares with
/// [`RESIDUE`].
#[derive(LogicBlock)]
pub struct Crc32Nibble {
    /// The register before the nibble.
    pub crc: Signal<In, Bits<32>>,
    /// The nibble, its bit 0 first on the line.
    pub nibble: Signal<In, Bits<4>>,
    /// The register after it.
    pub updated: Signal<Out, Bits<32>>,
    after_one: Signal<Local, Bits<32>>,
    after_two: Signal<Local, Bits<32>>,
    after_three: Signal<Local, Bits<32>>,
    polynomial: Constant<Bits<32>>,
}

impl Default for Crc32Nibble {
    fn default() -> Self {
        Self {
            crc: Signal::default(),
            nibble: Signal::default(),
            updated: Signal::default(),
            after_one: Signal::default(),
            after_two: Signal::default(),
            after_three: Signal::default(),
            polynomial: Constant::new(POLYNOMIAL.to_bits()),
        }
    }
}

impl Logic for Crc32Nibble {
    #[hdl_gen]
    fn update(&mut self) {
        self.after_one.next = self.crc.val() >> 1;
        if self.crc.val().get_bit(0) != self.nibble.val().get_bit(0) {
            self.after_one.next = (self.crc.val() >> 1) ^ self.polynomial.val();
        }
        self.after_two.next = self.after_one.val() >> 1;
        if self.after_one.val().get_bit(0) != self.nibble.val().get_bit(1) {
            self.after_two.next = (self.after_one.val() >> 1) ^ self.polynomial.val();
        }
        self.after_three.next = self.after_two.val() >> 1;
        if self.after_two.val().get_bit(0) != self.nibble.val().get_bit(2) {
            self.after_three.next = (self.after_two.val() >> 1) ^ self.polynomial.val();
        }
        self.updated.next = self.after_three.val() >> 1;
        if self.after_three.val().get_bit(0) != self.nibble.val().get_bit(3) {
            self.updated.next = (self.after_three.val() >> 1) ^ self.polynomial.val();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::settle;

    /// The register after `bytes`, low nibble first, through the block.
    fn through_block(bytes: &[u8]) -> u32 {
        let mut block = Crc32Nibble::default();
        block.connect_all();
        let mut crc = INITIAL;
        for nibble in bytes.iter().flat_map(|b| [b & 0xF, b >> 4]) {
            block.crc.next = crc.to_bits();
            block.nibble.next = u32::from(nibble).to_bits();
            settle(&mut block).expect("combinational");
            crc = block.updated.val().to_u32();
        }
        crc
    }

    #[test]
    fn the_check_value_and_the_residue() {
        // The CRC-32 check value: "123456789" gives 0xCBF43926 once complemented.
        assert_eq!(!through_block(b"123456789"), 0xCBF4_3926);
        let mut frame = b"123456789".to_vec();
        frame.extend_from_slice(&0xCBF4_3926u32.to_le_bytes());
        assert_eq!(through_block(&frame), RESIDUE);
    }
}
