//! Instruction decode: one 32-bit RV32IM + Zicsr instruction word into
//! the register numbers, immediate and control signals of the pipeline.
//!
//! Field layouts and opcodes follow Unprivileged ISA 20191213 §2.2–§2.3
//! (Figures 2.2–2.4) and Chapter 24 (Table 24.1, the RV32I, RV32M and
//! Zicsr rows). The legal set is exactly `weft_iss::decode`'s: a test
//! checks every class of word against it. CSR address legality is not
//! decided here but by the CSR file, which knows which CSRs exist.

use rust_hdl::prelude::*;

/// ALU operation codes: `{alt, funct3}` of the OP/OP-IMM encodings, where
/// `alt` is instruction bit 30 (SUB, SRA). Every other instruction that
/// uses the ALU adds.
pub mod alu_op {
    /// `a + b`.
    pub const ADD: u64 = 0b0000;
    /// `a - b`.
    pub const SUB: u64 = 0b1000;
    /// `a << b[4:0]`.
    pub const SLL: u64 = 0b0001;
    /// `a < b`, signed.
    pub const SLT: u64 = 0b0010;
    /// `a < b`, unsigned.
    pub const SLTU: u64 = 0b0011;
    /// `a ^ b`.
    pub const XOR: u64 = 0b0100;
    /// `a >> b[4:0]`, logical.
    pub const SRL: u64 = 0b0101;
    /// `a >> b[4:0]`, arithmetic.
    pub const SRA: u64 = 0b1101;
    /// `a | b`.
    pub const OR: u64 = 0b0110;
    /// `a & b`.
    pub const AND: u64 = 0b0111;
}

/// Decodes one instruction word (combinational).
///
/// `illegal` is raised for every word `weft_iss::decode` rejects: a
/// compressed or unknown opcode, an unlisted funct3/funct7, a shift-immediate
/// with `imm[11:5]` other than 0 or 0x20, and SYSTEM funct3 = 0 words other
/// than `ecall`, `ebreak`, `mret` and `wfi`. The other outputs are only
/// meaningful for a legal word.
#[derive(LogicBlock, Default)]
pub struct Decoder {
    /// The instruction word.
    pub insn: Signal<In, Bits<32>>,
    /// Destination register number.
    pub rd: Signal<Out, Bits<5>>,
    /// First source register number (also the CSR `uimm` field).
    pub rs1: Signal<Out, Bits<5>>,
    /// Second source register number.
    pub rs2: Signal<Out, Bits<5>>,
    /// funct3: branch condition, access width, M operation or CSR operation.
    pub funct3: Signal<Out, Bits<3>>,
    /// The sign-extended immediate of the word's format (I, S, B, U or J).
    pub imm: Signal<Out, Bits<32>>,
    /// The ALU operation ([`alu_op`]).
    pub alu_op: Signal<Out, Bits<4>>,
    /// The ALU's second operand is `imm` rather than `rs2`'s value.
    pub alu_imm: Signal<Out, Bit>,
    /// The ALU's first operand is the PC (`auipc`).
    pub alu_pc: Signal<Out, Bit>,
    /// The ALU's first operand is zero (`lui`).
    pub alu_zero: Signal<Out, Bit>,
    /// The instruction reads `rs1`'s value.
    pub uses_rs1: Signal<Out, Bit>,
    /// The instruction reads `rs2`'s value.
    pub uses_rs2: Signal<Out, Bit>,
    /// The instruction writes `rd` and `rd` is not `x0`.
    pub writes_rd: Signal<Out, Bit>,
    /// A conditional branch.
    pub cond_branch: Signal<Out, Bit>,
    /// `jal`.
    pub jal: Signal<Out, Bit>,
    /// `jalr`.
    pub jalr: Signal<Out, Bit>,
    /// A load.
    pub load: Signal<Out, Bit>,
    /// A store.
    pub store: Signal<Out, Bit>,
    /// An M-extension multiply or divide.
    pub muldiv: Signal<Out, Bit>,
    /// A Zicsr instruction.
    pub csr: Signal<Out, Bit>,
    /// The CSR instruction takes `uimm` (the `rs1` field) as its source.
    pub csr_imm: Signal<Out, Bit>,
    /// The CSR instruction writes the CSR: CSRRW/CSRRWI always, the
    /// set/clear forms only with a non-zero `rs1`/`uimm` field
    /// (Unprivileged §9.1, Table 9.1).
    pub csr_writes: Signal<Out, Bit>,
    /// `ecall`.
    pub ecall: Signal<Out, Bit>,
    /// `ebreak`.
    pub ebreak: Signal<Out, Bit>,
    /// `mret`.
    pub mret: Signal<Out, Bit>,
    /// `wfi`.
    pub wfi: Signal<Out, Bit>,
    /// The word is not a legal RV32IM + Zicsr instruction.
    pub illegal: Signal<Out, Bit>,
    opcode: Signal<Local, Bits<7>>,
    f3: Signal<Local, Bits<3>>,
    f7: Signal<Local, Bits<7>>,
    sign: Signal<Local, Bit>,
}

impl Logic for Decoder {
    #[hdl_gen]
    fn update(&mut self) {
        self.opcode.next = self.insn.val().get_bits::<7>(0);
        self.f3.next = self.insn.val().get_bits::<3>(12);
        self.f7.next = self.insn.val().get_bits::<7>(25);
        self.sign.next = self.insn.val().get_bit(31);
        self.rd.next = self.insn.val().get_bits::<5>(7);
        self.rs1.next = self.insn.val().get_bits::<5>(15);
        self.rs2.next = self.insn.val().get_bits::<5>(20);
        self.funct3.next = self.f3.val();

        self.alu_op.next = bits::<4>(0); // alu_op::ADD
        self.alu_imm.next = false;
        self.alu_pc.next = false;
        self.alu_zero.next = false;
        self.uses_rs1.next = false;
        self.uses_rs2.next = false;
        self.writes_rd.next = false;
        self.cond_branch.next = false;
        self.jal.next = false;
        self.jalr.next = false;
        self.load.next = false;
        self.store.next = false;
        self.muldiv.next = false;
        self.csr.next = false;
        self.csr_imm.next = false;
        self.csr_writes.next = false;
        self.ecall.next = false;
        self.ebreak.next = false;
        self.mret.next = false;
        self.wfi.next = false;
        self.illegal.next = false;
        // I-immediate by default: insn[31:20], sign-extended.
        self.imm.next = bit_cast::<32, 12>(self.insn.val().get_bits::<12>(20));
        if self.sign.val() {
            self.imm.next =
                bit_cast::<32, 12>(self.insn.val().get_bits::<12>(20)) | !bits::<32>(0xfff);
        }

        if self.opcode.val() == 0x37 {
            // LUI: U-immediate.
            self.imm.next = self.insn.val() & !bits::<32>(0xfff);
            self.alu_imm.next = true;
            self.alu_zero.next = true;
            self.writes_rd.next = true;
        } else if self.opcode.val() == 0x17 {
            // AUIPC.
            self.imm.next = self.insn.val() & !bits::<32>(0xfff);
            self.alu_imm.next = true;
            self.alu_pc.next = true;
            self.writes_rd.next = true;
        } else if self.opcode.val() == 0x6f {
            // JAL: J-immediate imm[20|10:1|11|19:12].
            self.imm.next = (bit_cast::<32, 8>(self.insn.val().get_bits::<8>(12)) << 12)
                | (bit_cast::<32, 1>(self.insn.val().get_bits::<1>(20)) << 11)
                | (bit_cast::<32, 10>(self.insn.val().get_bits::<10>(21)) << 1);
            if self.sign.val() {
                self.imm.next = (bit_cast::<32, 8>(self.insn.val().get_bits::<8>(12)) << 12)
                    | (bit_cast::<32, 1>(self.insn.val().get_bits::<1>(20)) << 11)
                    | (bit_cast::<32, 10>(self.insn.val().get_bits::<10>(21)) << 1)
                    | !bits::<32>(0xf_ffff);
            }
            self.jal.next = true;
            self.writes_rd.next = true;
        } else if self.opcode.val() == 0x67 {
            // JALR: I-immediate; target = (rs1 + imm) & !1, computed by the ALU's add.
            self.jalr.next = true;
            self.alu_imm.next = true;
            self.uses_rs1.next = true;
            self.writes_rd.next = true;
            self.illegal.next = self.f3.val() != 0;
        } else if self.opcode.val() == 0x63 {
            // BRANCH: B-immediate imm[12|10:5] ... imm[4:1|11].
            self.imm.next = (bit_cast::<32, 1>(self.insn.val().get_bits::<1>(7)) << 11)
                | (bit_cast::<32, 6>(self.insn.val().get_bits::<6>(25)) << 5)
                | (bit_cast::<32, 4>(self.insn.val().get_bits::<4>(8)) << 1);
            if self.sign.val() {
                self.imm.next = (bit_cast::<32, 1>(self.insn.val().get_bits::<1>(7)) << 11)
                    | (bit_cast::<32, 6>(self.insn.val().get_bits::<6>(25)) << 5)
                    | (bit_cast::<32, 4>(self.insn.val().get_bits::<4>(8)) << 1)
                    | !bits::<32>(0xfff);
            }
            self.cond_branch.next = true;
            self.uses_rs1.next = true;
            self.uses_rs2.next = true;
            // funct3 010 and 011 are not branches.
            self.illegal.next = self.f3.val() == 2 || self.f3.val() == 3;
        } else if self.opcode.val() == 0x03 {
            // LOAD: lb, lh, lw, lbu, lhu.
            self.load.next = true;
            self.alu_imm.next = true;
            self.uses_rs1.next = true;
            self.writes_rd.next = true;
            self.illegal.next = self.f3.val() == 3 || self.f3.val() == 6 || self.f3.val() == 7;
        } else if self.opcode.val() == 0x23 {
            // STORE: S-immediate imm[11:5|4:0].
            self.imm.next = (bit_cast::<32, 7>(self.f7.val()) << 5)
                | bit_cast::<32, 5>(self.insn.val().get_bits::<5>(7));
            if self.sign.val() {
                self.imm.next = (bit_cast::<32, 7>(self.f7.val()) << 5)
                    | bit_cast::<32, 5>(self.insn.val().get_bits::<5>(7))
                    | !bits::<32>(0xfff);
            }
            self.store.next = true;
            self.alu_imm.next = true;
            self.uses_rs1.next = true;
            self.uses_rs2.next = true;
            self.illegal.next = self.f3.val().get_bit(2) || self.f3.val() == 3;
        } else if self.opcode.val() == 0x13 {
            // OP-IMM. Shifts: imm[11:5] selects SRLI/SRAI; any other value,
            // including a set shamt[5], is reserved (§2.4.1).
            self.alu_op.next = bit_cast::<4, 3>(self.f3.val());
            self.alu_imm.next = true;
            self.uses_rs1.next = true;
            self.writes_rd.next = true;
            if self.f3.val() == 1 {
                self.illegal.next = self.f7.val() != 0;
            }
            if self.f3.val() == 5 {
                self.alu_op.next = bit_cast::<4, 3>(self.f3.val())
                    | (bit_cast::<4, 1>(self.f7.val().get_bits::<1>(5)) << 3);
                self.illegal.next = self.f7.val() != 0 && self.f7.val() != 0x20;
            }
        } else if self.opcode.val() == 0x33 {
            // OP: funct7 0 (base), 0x20 (SUB, SRA), 1 (M extension).
            self.alu_op.next = bit_cast::<4, 3>(self.f3.val())
                | (bit_cast::<4, 1>(self.f7.val().get_bits::<1>(5)) << 3);
            self.uses_rs1.next = true;
            self.uses_rs2.next = true;
            self.writes_rd.next = true;
            self.muldiv.next = self.f7.val() == 1;
            self.illegal.next = !(self.f7.val() == 0
                || self.f7.val() == 1
                || (self.f7.val() == 0x20 && (self.f3.val() == 0 || self.f3.val() == 5)));
        } else if self.opcode.val() == 0x0f {
            // MISC-MEM: FENCE (funct3 0) and FENCE.I (funct3 1) retire as
            // no-ops on this single in-order hart without caches (§2.7).
            self.illegal.next = self.f3.val() != 0 && self.f3.val() != 1;
        } else if self.opcode.val() == 0x73 {
            // SYSTEM.
            self.uses_rs1.next = !self.f3.val().get_bit(2);
            self.writes_rd.next = self.f3.val() != 0;
            self.csr.next = self.f3.val() != 0;
            self.csr_imm.next = self.f3.val().get_bit(2);
            self.csr_writes.next =
                (self.f3.val().get_bits::<2>(0) == 1) || (self.insn.val().get_bits::<5>(15) != 0);
            // funct3 = 0: only the four funct12 words with rd = rs1 = 0
            // (Unprivileged §2.8; Privileged 20211203 §3.3).
            self.ecall.next = self.insn.val() == 0x0000_0073;
            self.ebreak.next = self.insn.val() == 0x0010_0073;
            self.mret.next = self.insn.val() == 0x3020_0073;
            self.wfi.next = self.insn.val() == 0x1050_0073;
            self.illegal.next = self.f3.val() == 4
                || (self.f3.val() == 0
                    && !(self.insn.val() == 0x0000_0073
                        || self.insn.val() == 0x0010_0073
                        || self.insn.val() == 0x3020_0073
                        || self.insn.val() == 0x1050_0073));
        } else {
            // Compressed (bits [1:0] != 11) or an opcode RV32IM + Zicsr does not define.
            self.illegal.next = true;
        }
        if self.insn.val().get_bits::<5>(7) == 0 {
            self.writes_rd.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use weft_iss::encode::encode;
    use weft_iss::strategy::any_instruction;
    use weft_iss::{decode, Instruction};

    use super::*;
    use crate::driver::settle;

    /// The decoder's view of `word`.
    struct Decoded {
        illegal: bool,
        rd: u8,
        rs1: u8,
        rs2: u8,
        imm: u32,
        writes_rd: bool,
        class: [bool; 12],
    }

    fn decode_rtl(word: u32) -> Decoded {
        let mut d = Decoder::default();
        d.connect_all();
        d.insn.next = bits(u64::from(word));
        settle(&mut d).expect("combinational");
        let reg = |s: &Signal<Out, Bits<5>>| s.val().to_u64() as u8;
        Decoded {
            illegal: d.illegal.val(),
            rd: reg(&d.rd),
            rs1: reg(&d.rs1),
            rs2: reg(&d.rs2),
            imm: d.imm.val().to_u32(),
            writes_rd: d.writes_rd.val(),
            class: [
                d.cond_branch.val(),
                d.jal.val(),
                d.jalr.val(),
                d.load.val(),
                d.store.val(),
                d.muldiv.val(),
                d.csr.val(),
                d.ecall.val(),
                d.ebreak.val(),
                d.mret.val(),
                d.wfi.val(),
                d.csr_writes.val(),
            ],
        }
    }

    /// What an instruction must decode to: rd written, rs1, rs2, immediate,
    /// class flags in `Decoded::class` order.
    type Fields = (Option<u8>, Option<u8>, Option<u8>, Option<u32>, [bool; 12]);

    /// The [`Fields`] of `insn`, from the instruction's own operands.
    fn expected(insn: Instruction) -> Fields {
        use Instruction as I;
        let mut class = [false; 12];
        let (rd, rs1, rs2, imm) = match insn {
            I::Lui { rd, upper } | I::Auipc { rd, upper } => {
                (Some(rd), None, None, Some(upper << 12))
            }
            I::Jal { rd, offset } => {
                class[1] = true;
                (Some(rd), None, None, Some(offset as u32))
            }
            I::Jalr { rd, rs1, offset } => {
                class[2] = true;
                (Some(rd), Some(rs1), None, Some(offset as u32))
            }
            I::Beq { rs1, rs2, offset }
            | I::Bne { rs1, rs2, offset }
            | I::Blt { rs1, rs2, offset }
            | I::Bge { rs1, rs2, offset }
            | I::Bltu { rs1, rs2, offset }
            | I::Bgeu { rs1, rs2, offset } => {
                class[0] = true;
                (None, Some(rs1), Some(rs2), Some(offset as u32))
            }
            I::Lb { rd, rs1, offset }
            | I::Lh { rd, rs1, offset }
            | I::Lw { rd, rs1, offset }
            | I::Lbu { rd, rs1, offset }
            | I::Lhu { rd, rs1, offset } => {
                class[3] = true;
                (Some(rd), Some(rs1), None, Some(offset as u32))
            }
            I::Sb { rs1, rs2, offset }
            | I::Sh { rs1, rs2, offset }
            | I::Sw { rs1, rs2, offset } => {
                class[4] = true;
                (None, Some(rs1), Some(rs2), Some(offset as u32))
            }
            I::Addi { rd, rs1, imm }
            | I::Slti { rd, rs1, imm }
            | I::Sltiu { rd, rs1, imm }
            | I::Xori { rd, rs1, imm }
            | I::Ori { rd, rs1, imm }
            | I::Andi { rd, rs1, imm } => (Some(rd), Some(rs1), None, Some(imm as u32)),
            I::Slli { rd, rs1, .. } | I::Srli { rd, rs1, .. } | I::Srai { rd, rs1, .. } => {
                (Some(rd), Some(rs1), None, None)
            }
            I::Mul { rd, rs1, rs2 }
            | I::Mulh { rd, rs1, rs2 }
            | I::Mulhsu { rd, rs1, rs2 }
            | I::Mulhu { rd, rs1, rs2 }
            | I::Div { rd, rs1, rs2 }
            | I::Divu { rd, rs1, rs2 }
            | I::Rem { rd, rs1, rs2 }
            | I::Remu { rd, rs1, rs2 } => {
                class[5] = true;
                (Some(rd), Some(rs1), Some(rs2), None)
            }
            I::Add { rd, rs1, rs2 }
            | I::Sub { rd, rs1, rs2 }
            | I::Sll { rd, rs1, rs2 }
            | I::Slt { rd, rs1, rs2 }
            | I::Sltu { rd, rs1, rs2 }
            | I::Xor { rd, rs1, rs2 }
            | I::Srl { rd, rs1, rs2 }
            | I::Sra { rd, rs1, rs2 }
            | I::Or { rd, rs1, rs2 }
            | I::And { rd, rs1, rs2 } => (Some(rd), Some(rs1), Some(rs2), None),
            I::Fence { .. } | I::FenceI => (None, None, None, None),
            I::Ecall => {
                class[7] = true;
                (None, None, None, None)
            }
            I::Ebreak => {
                class[8] = true;
                (None, None, None, None)
            }
            I::Mret => {
                class[9] = true;
                (None, None, None, None)
            }
            I::Wfi => {
                class[10] = true;
                (None, None, None, None)
            }
            I::Csrrw { rd, rs1, .. } | I::Csrrwi { rd, uimm: rs1, .. } => {
                class[6] = true;
                class[11] = true;
                (Some(rd), Some(rs1), None, None)
            }
            I::Csrrs { rd, rs1, .. }
            | I::Csrrc { rd, rs1, .. }
            | I::Csrrsi { rd, uimm: rs1, .. }
            | I::Csrrci { rd, uimm: rs1, .. } => {
                class[6] = true;
                class[11] = rs1 != 0;
                (Some(rd), Some(rs1), None, None)
            }
        };
        (rd, rs1, rs2, imm, class)
    }

    fn check(word: u32) -> Result<(), TestCaseError> {
        let rtl = decode_rtl(word);
        let Ok(insn) = decode(word) else {
            prop_assert!(rtl.illegal, "{:#010x} is illegal", word);
            return Ok(());
        };
        prop_assert!(!rtl.illegal, "{:#010x} ({:?}) is legal", word, insn);
        let (rd, rs1, rs2, imm, class) = expected(insn);
        prop_assert_eq!(rtl.writes_rd, rd.is_some_and(|r| r != 0), "{:?}", insn);
        if let Some(rd) = rd {
            prop_assert_eq!(rtl.rd, rd);
        }
        if let Some(rs1) = rs1 {
            prop_assert_eq!(rtl.rs1, rs1);
        }
        if let Some(rs2) = rs2 {
            prop_assert_eq!(rtl.rs2, rs2);
        }
        if let Some(imm) = imm {
            prop_assert_eq!(rtl.imm, imm, "{:?}", insn);
        }
        prop_assert_eq!(rtl.class, class, "{:?}", insn);
        Ok(())
    }

    proptest! {
        /// Every valid instruction decodes to its own fields and class.
        #[test]
        fn valid_instructions_decode_to_their_fields(insn in any_instruction()) {
            check(encode(&insn))?;
        }

        /// Any word is illegal exactly when the ISS's decoder rejects it.
        #[test]
        fn legality_matches_the_iss(word in any::<u32>()) {
            check(word)?;
        }

        /// Words near the legal ones: a valid instruction with one bit flipped.
        #[test]
        fn one_bit_away_legality_matches_the_iss(insn in any_instruction(), bit in 0u32..32) {
            check(encode(&insn) ^ (1 << bit))?;
        }
    }
}
