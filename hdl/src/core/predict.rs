//! Static branch prediction in the fetch stage: `jal` and backward
//! conditional branches are taken, everything else falls through.
//!
//! Loops close with backward branches, which are mostly taken; forward
//! branches skip code and are taken about half the time. Predicting from
//! the fetched word itself, in the cycle it arrives, turns `jal` and
//! loop-closing branches into zero-bubble jumps without any table.
//! `jalr` is never predicted: the execute stage redirects it (two
//! bubbles).

use rust_hdl::prelude::*;

/// Predicts the next fetch address from the word arriving from the
/// instruction port (combinational).
///
/// A target that is not 4-byte aligned is never predicted: the branch or
/// jump traps in the execute stage instead (Unprivileged 20191213 §2.5).
#[derive(LogicBlock, Default)]
pub struct StaticPredictor {
    /// `word` is a fetched instruction (not a bubble or a fetch fault).
    pub valid: Signal<In, Bit>,
    /// The word's address.
    pub pc: Signal<In, Bits<32>>,
    /// The fetched word.
    pub word: Signal<In, Bits<32>>,
    /// Fetch `target` next.
    pub taken: Signal<Out, Bit>,
    /// `pc` plus the word's J- or B-immediate.
    pub target: Signal<Out, Bits<32>>,
}

impl Logic for StaticPredictor {
    #[hdl_gen]
    fn update(&mut self) {
        self.taken.next = false;
        // B-immediate imm[12|10:5|4:1|11] (Unprivileged §2.3, Figure 2.4).
        self.target.next = self.pc.val()
            + ((bit_cast::<32, 1>(self.word.val().get_bits::<1>(7)) << 11)
                | (bit_cast::<32, 6>(self.word.val().get_bits::<6>(25)) << 5)
                | (bit_cast::<32, 4>(self.word.val().get_bits::<4>(8)) << 1)
                | !bits::<32>(0xfff));
        if self.word.val().get_bits::<7>(0) == 0x63 {
            // Only backward branches (sign bit set) are predicted, so the
            // sign extension above is always ones.
            self.taken.next =
                self.valid.val() && self.word.val().get_bit(31) && !self.word.val().get_bit(8);
        }
        if self.word.val().get_bits::<7>(0) == 0x6f {
            // J-immediate imm[20|10:1|11|19:12].
            self.target.next = self.pc.val()
                + ((bit_cast::<32, 8>(self.word.val().get_bits::<8>(12)) << 12)
                    | (bit_cast::<32, 1>(self.word.val().get_bits::<1>(20)) << 11)
                    | (bit_cast::<32, 10>(self.word.val().get_bits::<10>(21)) << 1));
            if self.word.val().get_bit(31) {
                self.target.next = self.pc.val()
                    + ((bit_cast::<32, 8>(self.word.val().get_bits::<8>(12)) << 12)
                        | (bit_cast::<32, 1>(self.word.val().get_bits::<1>(20)) << 11)
                        | (bit_cast::<32, 10>(self.word.val().get_bits::<10>(21)) << 1)
                        | !bits::<32>(0xf_ffff));
            }
            self.taken.next = self.valid.val() && !self.word.val().get_bit(21);
        }
    }
}

#[cfg(test)]
mod tests {
    use weft_iss::encode as e;

    use super::*;
    use crate::driver::settle;

    fn predict(pc: u32, word: u32) -> (bool, u32) {
        let mut p = StaticPredictor::default();
        p.connect_all();
        p.valid.next = true;
        p.pc.next = bits(u64::from(pc));
        p.word.next = bits(u64::from(word));
        settle(&mut p).expect("combinational");
        (p.taken.val(), p.target.val().to_u32())
    }

    #[test]
    fn jumps_and_backward_branches_are_taken() {
        assert_eq!(predict(0x100, e::jal(1, -0x80)), (true, 0x80));
        assert_eq!(predict(0x100, e::jal(0, 0x1000)), (true, 0x1100));
        assert_eq!(predict(0x100, e::bne(1, 2, -8)), (true, 0xf8));
        assert!(
            !predict(0x100, e::beq(1, 2, 8)).0,
            "forward branches fall through"
        );
        assert!(!predict(0x100, e::jalr(0, 1, 0)).0, "jalr is not predicted");
        assert!(
            !predict(0x100, e::jal(0, 6)).0,
            "misaligned targets are not predicted"
        );
        assert!(
            !predict(0x100, e::blt(0, 0, -6)).0,
            "misaligned targets are not predicted"
        );
        assert!(!predict(0x100, e::addi(1, 1, -8)).0);
    }
}
