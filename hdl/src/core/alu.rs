//! The integer ALU: the RV32I register-register and register-immediate
//! operations (Unprivileged ISA 20191213 §2.4).

use rust_hdl::prelude::*;

/// Computes `op(a, b)` combinationally; `op` is a
/// [`alu_op`](super::decode::alu_op) code (written as literals here,
/// because rust-hdl's HDL translation cannot name Rust constants).
///
/// Shifts use `b[4:0]` (§2.4.1, §2.4.2). Signed comparison is unsigned
/// comparison with the sign bits deciding when they differ, which keeps
/// every operation on 32-bit unsigned words.
#[derive(LogicBlock, Default)]
pub struct Alu {
    /// Operation ([`alu_op`](super::decode::alu_op)).
    pub op: Signal<In, Bits<4>>,
    /// First operand.
    pub a: Signal<In, Bits<32>>,
    /// Second operand.
    pub b: Signal<In, Bits<32>>,
    /// `op(a, b)`.
    pub result: Signal<Out, Bits<32>>,
}

impl Logic for Alu {
    #[hdl_gen]
    fn update(&mut self) {
        self.result.next = self.a.val() + self.b.val();
        if self.op.val() == 0b1000 {
            self.result.next = self.a.val() - self.b.val();
        }
        if self.op.val() == 0b0001 {
            self.result.next = self.a.val() << self.b.val().get_bits::<5>(0);
        }
        if self.op.val() == 0b0010 {
            self.result.next = bit_cast::<32, 1>((self.a.val() < self.b.val()).into());
            if self.a.val().get_bit(31) != self.b.val().get_bit(31) {
                self.result.next = bit_cast::<32, 1>(self.a.val().get_bits::<1>(31));
            }
        }
        if self.op.val() == 0b0011 {
            self.result.next = bit_cast::<32, 1>((self.a.val() < self.b.val()).into());
        }
        if self.op.val() == 0b0100 {
            self.result.next = self.a.val() ^ self.b.val();
        }
        if self.op.val() == 0b0101 {
            self.result.next = self.a.val() >> self.b.val().get_bits::<5>(0);
        }
        if self.op.val() == 0b1101 {
            self.result.next = self.a.val() >> self.b.val().get_bits::<5>(0);
            if self.a.val().get_bit(31) {
                self.result.next = (self.a.val() >> self.b.val().get_bits::<5>(0))
                    | !(!bits::<32>(0) >> self.b.val().get_bits::<5>(0));
            }
        }
        if self.op.val() == 0b0110 {
            self.result.next = self.a.val() | self.b.val();
        }
        if self.op.val() == 0b0111 {
            self.result.next = self.a.val() & self.b.val();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decode::alu_op;
    use crate::driver::settle;

    fn run(op: u64, a: u32, b: u32) -> u32 {
        let mut alu = Alu::default();
        alu.connect_all();
        alu.op.next = bits(op);
        alu.a.next = bits(u64::from(a));
        alu.b.next = bits(u64::from(b));
        settle(&mut alu).expect("the ALU is combinational");
        alu.result.val().to_u32()
    }

    /// Values from the definitions in Unprivileged 20191213 §2.4.
    #[test]
    fn operations_follow_the_isa_definitions() {
        use alu_op::*;
        let cases: &[(u64, u32, u32, u32)] = &[
            (ADD, 0xffff_ffff, 1, 0),
            (SUB, 0, 1, 0xffff_ffff),
            (SLL, 1, 31, 0x8000_0000),
            (SLL, 1, 32 + 3, 8), // only b[4:0] counts
            (SLT, 0xffff_ffff, 0, 1),
            (SLT, 0, 0xffff_ffff, 0),
            (SLT, 0x8000_0000, 0x7fff_ffff, 1),
            (SLTU, 0, 0xffff_ffff, 1),
            (SLTU, 0xffff_ffff, 0, 0),
            (SLTU, 5, 5, 0),
            (XOR, 0xff00_ff00, 0x0ff0_0ff0, 0xf0f0_f0f0),
            (SRL, 0x8000_0000, 31, 1),
            (SRA, 0x8000_0000, 31, 0xffff_ffff),
            (SRA, 0x8000_0000, 0, 0x8000_0000),
            (SRA, 0x4000_0000, 30, 1),
            (OR, 0xf0, 0x0f, 0xff),
            (AND, 0xf0, 0x3c, 0x30),
        ];
        for &(op, a, b, expected) in cases {
            assert_eq!(run(op, a, b), expected, "op {op:#06b} a {a:#x} b {b:#x}");
        }
    }
}
