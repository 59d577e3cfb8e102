//! The data port's byte lanes: where a store's bytes go and which bytes a
//! load takes, for the naturally aligned accesses of Unprivileged ISA
//! 20191213 §2.6 (misaligned ones trap before they reach the port).
//!
//! The data port is one little-endian 32-bit word wide. A store drives
//! its value on every lane it may occupy (a byte on all four, a halfword on
//! both halves) and selects the lanes with byte enables; a load reads the
//! whole word and picks its bytes here.

use rust_hdl::prelude::*;

/// Byte enables, lane placement and the alignment check of one access
/// (combinational). `width` is the load or store instruction's
/// funct3\[1:0\]: 0 byte, 1 halfword, 2 word.
#[derive(LogicBlock, Default)]
pub struct StoreLanes {
    /// Address bits \[1:0\].
    pub offset: Signal<In, Bits<2>>,
    /// The access width (funct3\[1:0\]).
    pub width: Signal<In, Bits<2>>,
    /// The store's `rs2` value.
    pub value: Signal<In, Bits<32>>,
    /// The value on the data port's write lanes.
    pub write_data: Signal<Out, Bits<32>>,
    /// Lanes the access touches.
    pub byte_enable: Signal<Out, Bits<4>>,
    /// `value` masked to the access width, as the retirement trace reports it.
    pub stored: Signal<Out, Bits<32>>,
    /// The address is not a multiple of the width.
    pub misaligned: Signal<Out, Bit>,
}

impl Logic for StoreLanes {
    #[hdl_gen]
    fn update(&mut self) {
        self.write_data.next = self.value.val();
        self.stored.next = self.value.val();
        self.byte_enable.next = bits::<4>(0xf);
        self.misaligned.next = self.offset.val().any();
        if self.width.val() == 0 {
            self.stored.next = self.value.val() & 0xff;
            self.write_data.next = bit_cast::<32, 8>(self.value.val().get_bits::<8>(0))
                | (bit_cast::<32, 8>(self.value.val().get_bits::<8>(0)) << 8)
                | (bit_cast::<32, 8>(self.value.val().get_bits::<8>(0)) << 16)
                | (bit_cast::<32, 8>(self.value.val().get_bits::<8>(0)) << 24);
            self.byte_enable.next = bits::<4>(1) << self.offset.val();
            self.misaligned.next = false;
        }
        if self.width.val() == 1 {
            self.stored.next = self.value.val() & 0xffff;
            self.write_data.next = bit_cast::<32, 16>(self.value.val().get_bits::<16>(0))
                | (bit_cast::<32, 16>(self.value.val().get_bits::<16>(0)) << 16);
            self.byte_enable.next = bits::<4>(3) << self.offset.val();
            self.misaligned.next = self.offset.val().get_bit(0);
        }
    }
}

/// Extracts a load's value from the data port's word (combinational):
/// `lb`/`lh` sign-extend, `lbu`/`lhu` zero-extend (§2.6).
#[derive(LogicBlock, Default)]
pub struct LoadLanes {
    /// The word read from the data port.
    pub word: Signal<In, Bits<32>>,
    /// Address bits \[1:0\].
    pub offset: Signal<In, Bits<2>>,
    /// The load's funct3: bits \[1:0\] width, bit 2 unsigned.
    pub funct3: Signal<In, Bits<3>>,
    /// The value written to `rd`.
    pub value: Signal<Out, Bits<32>>,
    shifted: Signal<Local, Bits<32>>,
}

impl Logic for LoadLanes {
    #[hdl_gen]
    fn update(&mut self) {
        self.shifted.next = self.word.val() >> (bit_cast::<5, 2>(self.offset.val()) << 3);
        self.value.next = self.shifted.val();
        if self.funct3.val().get_bits::<2>(0) == 0 {
            self.value.next = self.shifted.val() & 0xff;
            if !self.funct3.val().get_bit(2) && self.shifted.val().get_bit(7) {
                self.value.next = (self.shifted.val() & 0xff) | !bits::<32>(0xff);
            }
        }
        if self.funct3.val().get_bits::<2>(0) == 1 {
            self.value.next = self.shifted.val() & 0xffff;
            if !self.funct3.val().get_bit(2) && self.shifted.val().get_bit(15) {
                self.value.next = (self.shifted.val() & 0xffff) | !bits::<32>(0xffff);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::settle;

    fn store(offset: u64, width: u64, value: u32) -> (u32, u64, u32, bool) {
        let mut s = StoreLanes::default();
        s.connect_all();
        s.offset.next = bits(offset);
        s.width.next = bits(width);
        s.value.next = bits(u64::from(value));
        settle(&mut s).expect("combinational");
        (
            s.write_data.val().to_u32(),
            s.byte_enable.val().to_u64(),
            s.stored.val().to_u32(),
            s.misaligned.val(),
        )
    }

    fn load(word: u32, offset: u64, funct3: u64) -> u32 {
        let mut l = LoadLanes::default();
        l.connect_all();
        l.word.next = bits(u64::from(word));
        l.offset.next = bits(offset);
        l.funct3.next = bits(funct3);
        settle(&mut l).expect("combinational");
        l.value.val().to_u32()
    }

    #[test]
    fn stores_select_their_lanes() {
        // sb (width 0) at offset 2: byte on every lane, enable lane 2.
        assert_eq!(store(2, 0, 0x1234_56ab), (0xabab_abab, 0b0100, 0xab, false));
        // sh (width 1) at offset 2: upper half.
        assert_eq!(
            store(2, 1, 0x1234_cdef),
            (0xcdef_cdef, 0b1100, 0xcdef, false)
        );
        assert!(store(1, 1, 0).3);
        // sw (width 2).
        assert_eq!(
            store(0, 2, 0x1234_5678),
            (0x1234_5678, 0b1111, 0x1234_5678, false)
        );
        assert!(store(2, 2, 0).3);
    }

    #[test]
    fn loads_extend_as_specified() {
        let word = 0x80ff_7f01;
        assert_eq!(load(word, 0, 0), 1); // lb
        assert_eq!(load(word, 2, 0), 0xffff_ffff); // lb of 0xff
        assert_eq!(load(word, 2, 4), 0xff); // lbu
        assert_eq!(load(word, 3, 0), 0xffff_ff80);
        assert_eq!(load(word, 0, 1), 0x7f01); // lh
        assert_eq!(load(word, 2, 1), 0xffff_80ff);
        assert_eq!(load(word, 2, 5), 0x80ff); // lhu
        assert_eq!(load(word, 0, 2), word); // lw
    }
}
