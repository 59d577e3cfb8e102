//! Decodes 32-bit RV32IM + Zicsr instruction words into [`Instruction`].
//!
//! Field layouts follow the base instruction formats of RISC-V Unprivileged
//! ISA 20191213 §2.2–§2.3 (Figures 2.2–2.4) and the opcode map of its
//! Chapter 24 (Table 24.1, "RV32I Base Instruction Set", plus the RV32M and
//! Zicsr rows). Every encoding this module does not accept is an illegal
//! instruction for weft's core; the hart turns a [`DecodeError`] into an
//! illegal-instruction trap with `mtval` set to the instruction bits.

use core::fmt;

/// One decoded RV32IM + Zicsr machine instruction, with its operands.
///
/// Register fields (`rd`, `rs1`, `rs2`) are register numbers `0..=31`.
/// Immediates are stored as the signed value the instruction uses (already
/// sign-extended and scaled), except [`Instruction::Lui`] and
/// [`Instruction::Auipc`], which store the 20-bit U-immediate field as an
/// assembler writes it. The RTL's differential tests print this type to
/// name the instruction on which the two models disagree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instruction {
    /// `rd ← upper << 12` (Unprivileged §2.4, "Integer Register-Immediate Instructions").
    Lui {
        /// Destination register.
        rd: u8,
        /// The 20-bit U-immediate field (`0..=0xF_FFFF`).
        upper: u32,
    },
    /// `rd ← pc + (upper << 12)` (Unprivileged §2.4).
    Auipc {
        /// Destination register.
        rd: u8,
        /// The 20-bit U-immediate field (`0..=0xF_FFFF`).
        upper: u32,
    },
    /// `rd ← pc + 4; pc ← pc + offset` (Unprivileged §2.5.1).
    Jal {
        /// Link register.
        rd: u8,
        /// Even byte offset in `-2^20..2^20`.
        offset: i32,
    },
    /// `rd ← pc + 4; pc ← (rs1 + offset) & !1` (Unprivileged §2.5.1).
    Jalr {
        /// Link register.
        rd: u8,
        /// Base register.
        rs1: u8,
        /// 12-bit signed offset.
        offset: i32,
    },
    /// Branch if `rs1 == rs2` (Unprivileged §2.5.2).
    Beq {
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
        /// Even byte offset in `-4096..4096`.
        offset: i32,
    },
    /// Branch if `rs1 != rs2` (Unprivileged §2.5.2).
    Bne {
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
        /// Even byte offset in `-4096..4096`.
        offset: i32,
    },
    /// Branch if `rs1 < rs2`, signed (Unprivileged §2.5.2).
    Blt {
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
        /// Even byte offset in `-4096..4096`.
        offset: i32,
    },
    /// Branch if `rs1 >= rs2`, signed (Unprivileged §2.5.2).
    Bge {
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
        /// Even byte offset in `-4096..4096`.
        offset: i32,
    },
    /// Branch if `rs1 < rs2`, unsigned (Unprivileged §2.5.2).
    Bltu {
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
        /// Even byte offset in `-4096..4096`.
        offset: i32,
    },
    /// Branch if `rs1 >= rs2`, unsigned (Unprivileged §2.5.2).
    Bgeu {
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
        /// Even byte offset in `-4096..4096`.
        offset: i32,
    },
    /// Load a byte, sign-extended (Unprivileged §2.6).
    Lb {
        /// Destination register.
        rd: u8,
        /// Base register.
        rs1: u8,
        /// 12-bit signed offset.
        offset: i32,
    },
    /// Load a halfword, sign-extended (Unprivileged §2.6).
    Lh {
        /// Destination register.
        rd: u8,
        /// Base register.
        rs1: u8,
        /// 12-bit signed offset.
        offset: i32,
    },
    /// Load a word (Unprivileged §2.6).
    Lw {
        /// Destination register.
        rd: u8,
        /// Base register.
        rs1: u8,
        /// 12-bit signed offset.
        offset: i32,
    },
    /// Load a byte, zero-extended (Unprivileged §2.6).
    Lbu {
        /// Destination register.
        rd: u8,
        /// Base register.
        rs1: u8,
        /// 12-bit signed offset.
        offset: i32,
    },
    /// Load a halfword, zero-extended (Unprivileged §2.6).
    Lhu {
        /// Destination register.
        rd: u8,
        /// Base register.
        rs1: u8,
        /// 12-bit signed offset.
        offset: i32,
    },
    /// Store the low byte of `rs2` (Unprivileged §2.6).
    Sb {
        /// Base register.
        rs1: u8,
        /// Source register.
        rs2: u8,
        /// 12-bit signed offset.
        offset: i32,
    },
    /// Store the low halfword of `rs2` (Unprivileged §2.6).
    Sh {
        /// Base register.
        rs1: u8,
        /// Source register.
        rs2: u8,
        /// 12-bit signed offset.
        offset: i32,
    },
    /// Store `rs2` (Unprivileged §2.6).
    Sw {
        /// Base register.
        rs1: u8,
        /// Source register.
        rs2: u8,
        /// 12-bit signed offset.
        offset: i32,
    },
    /// `rd ← rs1 + imm` (Unprivileged §2.4.1).
    Addi {
        /// Destination register.
        rd: u8,
        /// Source register.
        rs1: u8,
        /// 12-bit signed immediate.
        imm: i32,
    },
    /// `rd ← (rs1 < imm) as signed` (Unprivileged §2.4.1).
    Slti {
        /// Destination register.
        rd: u8,
        /// Source register.
        rs1: u8,
        /// 12-bit signed immediate.
        imm: i32,
    },
    /// `rd ← (rs1 < imm) as unsigned`, the immediate sign-extended first (Unprivileged §2.4.1).
    Sltiu {
        /// Destination register.
        rd: u8,
        /// Source register.
        rs1: u8,
        /// 12-bit signed immediate.
        imm: i32,
    },
    /// `rd ← rs1 ^ imm` (Unprivileged §2.4.1).
    Xori {
        /// Destination register.
        rd: u8,
        /// Source register.
        rs1: u8,
        /// 12-bit signed immediate.
        imm: i32,
    },
    /// `rd ← rs1 | imm` (Unprivileged §2.4.1).
    Ori {
        /// Destination register.
        rd: u8,
        /// Source register.
        rs1: u8,
        /// 12-bit signed immediate.
        imm: i32,
    },
    /// `rd ← rs1 & imm` (Unprivileged §2.4.1).
    Andi {
        /// Destination register.
        rd: u8,
        /// Source register.
        rs1: u8,
        /// 12-bit signed immediate.
        imm: i32,
    },
    /// `rd ← rs1 << shamt` (Unprivileged §2.4.1).
    Slli {
        /// Destination register.
        rd: u8,
        /// Source register.
        rs1: u8,
        /// Shift amount `0..=31`.
        shamt: u8,
    },
    /// `rd ← rs1 >> shamt`, logical (Unprivileged §2.4.1).
    Srli {
        /// Destination register.
        rd: u8,
        /// Source register.
        rs1: u8,
        /// Shift amount `0..=31`.
        shamt: u8,
    },
    /// `rd ← rs1 >> shamt`, arithmetic (Unprivileged §2.4.1).
    Srai {
        /// Destination register.
        rd: u8,
        /// Source register.
        rs1: u8,
        /// Shift amount `0..=31`.
        shamt: u8,
    },
    /// `rd ← rs1 + rs2` (Unprivileged §2.4.2).
    Add {
        /// Destination register.
        rd: u8,
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
    },
    /// `rd ← rs1 - rs2` (Unprivileged §2.4.2).
    Sub {
        /// Destination register.
        rd: u8,
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
    },
    /// `rd ← rs1 << rs2[4:0]` (Unprivileged §2.4.2).
    Sll {
        /// Destination register.
        rd: u8,
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
    },
    /// `rd ← (rs1 < rs2) as signed` (Unprivileged §2.4.2).
    Slt {
        /// Destination register.
        rd: u8,
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
    },
    /// `rd ← (rs1 < rs2) as unsigned` (Unprivileged §2.4.2).
    Sltu {
        /// Destination register.
        rd: u8,
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
    },
    /// `rd ← rs1 ^ rs2` (Unprivileged §2.4.2).
    Xor {
        /// Destination register.
        rd: u8,
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
    },
    /// `rd ← rs1 >> rs2[4:0]`, logical (Unprivileged §2.4.2).
    Srl {
        /// Destination register.
        rd: u8,
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
    },
    /// `rd ← rs1 >> rs2[4:0]`, arithmetic (Unprivileged §2.4.2).
    Sra {
        /// Destination register.
        rd: u8,
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
    },
    /// `rd ← rs1 | rs2` (Unprivileged §2.4.2).
    Or {
        /// Destination register.
        rd: u8,
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
    },
    /// `rd ← rs1 & rs2` (Unprivileged §2.4.2).
    And {
        /// Destination register.
        rd: u8,
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
    },
    /// Memory-ordering fence; a no-op on weft's in-order, single-hart core
    /// (Unprivileged §2.7). The `rd` and `rs1` fields are ignored as §2.7
    /// requires of base implementations, so they are not kept.
    Fence {
        /// Fence mode (`fm`, bits 31:28); `0b1000` is FENCE.TSO, other
        /// reserved values behave as a normal fence (§2.7).
        fm: u8,
        /// Predecessor set, bits I, O, R, W (bits 27:24).
        pred: u8,
        /// Successor set, bits I, O, R, W (bits 23:20).
        succ: u8,
    },
    /// Instruction-fetch fence; a no-op because the ISS decodes every fetch
    /// afresh (Unprivileged Chapter 3, "Zifencei"). Its unused fields are
    /// ignored as that chapter requires.
    FenceI,
    /// Environment call: raises an environment-call-from-M-mode exception
    /// (Unprivileged §2.8; Privileged 20211203 §3.3.1).
    Ecall,
    /// Breakpoint: raises a breakpoint exception (Unprivileged §2.8;
    /// Privileged 20211203 §3.3.1).
    Ebreak,
    /// Return from a machine-mode trap (Privileged 20211203 §3.3.2).
    Mret,
    /// Wait for interrupt (Privileged 20211203 §3.3.3).
    Wfi,
    /// Atomic read/write CSR (Unprivileged Chapter 9, "Zicsr", §9.1).
    Csrrw {
        /// Destination register (gets the old CSR value).
        rd: u8,
        /// Source register.
        rs1: u8,
        /// CSR address `0..=0xFFF`.
        csr: u16,
    },
    /// Atomic read and set bits in CSR (Unprivileged §9.1).
    Csrrs {
        /// Destination register (gets the old CSR value).
        rd: u8,
        /// Bit mask register.
        rs1: u8,
        /// CSR address `0..=0xFFF`.
        csr: u16,
    },
    /// Atomic read and clear bits in CSR (Unprivileged §9.1).
    Csrrc {
        /// Destination register (gets the old CSR value).
        rd: u8,
        /// Bit mask register.
        rs1: u8,
        /// CSR address `0..=0xFFF`.
        csr: u16,
    },
    /// CSRRW with a 5-bit zero-extended immediate (Unprivileged §9.1).
    Csrrwi {
        /// Destination register (gets the old CSR value).
        rd: u8,
        /// Immediate `0..=31`.
        uimm: u8,
        /// CSR address `0..=0xFFF`.
        csr: u16,
    },
    /// CSRRS with a 5-bit zero-extended immediate (Unprivileged §9.1).
    Csrrsi {
        /// Destination register (gets the old CSR value).
        rd: u8,
        /// Immediate `0..=31`.
        uimm: u8,
        /// CSR address `0..=0xFFF`.
        csr: u16,
    },
    /// CSRRC with a 5-bit zero-extended immediate (Unprivileged §9.1).
    Csrrci {
        /// Destination register (gets the old CSR value).
        rd: u8,
        /// Immediate `0..=31`.
        uimm: u8,
        /// CSR address `0..=0xFFF`.
        csr: u16,
    },
    /// Low 32 bits of `rs1 × rs2` (Unprivileged Chapter 7, "M", §7.1).
    Mul {
        /// Destination register.
        rd: u8,
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
    },
    /// High 32 bits of signed × signed (Unprivileged §7.1).
    Mulh {
        /// Destination register.
        rd: u8,
        /// First operand (signed).
        rs1: u8,
        /// Second operand (signed).
        rs2: u8,
    },
    /// High 32 bits of signed `rs1` × unsigned `rs2` (Unprivileged §7.1).
    Mulhsu {
        /// Destination register.
        rd: u8,
        /// First operand (signed).
        rs1: u8,
        /// Second operand (unsigned).
        rs2: u8,
    },
    /// High 32 bits of unsigned × unsigned (Unprivileged §7.1).
    Mulhu {
        /// Destination register.
        rd: u8,
        /// First operand (unsigned).
        rs1: u8,
        /// Second operand (unsigned).
        rs2: u8,
    },
    /// Signed division, rounding towards zero (Unprivileged §7.2).
    Div {
        /// Destination register.
        rd: u8,
        /// Dividend.
        rs1: u8,
        /// Divisor.
        rs2: u8,
    },
    /// Unsigned division (Unprivileged §7.2).
    Divu {
        /// Destination register.
        rd: u8,
        /// Dividend.
        rs1: u8,
        /// Divisor.
        rs2: u8,
    },
    /// Signed remainder, with the sign of the dividend (Unprivileged §7.2).
    Rem {
        /// Destination register.
        rd: u8,
        /// Dividend.
        rs1: u8,
        /// Divisor.
        rs2: u8,
    },
    /// Unsigned remainder (Unprivileged §7.2).
    Remu {
        /// Destination register.
        rd: u8,
        /// Dividend.
        rs1: u8,
        /// Divisor.
        rs2: u8,
    },
}

/// Why a 32-bit word is not an instruction of weft's core.
///
/// Each variant carries the word, which the hart reports in `mtval` of the
/// illegal-instruction trap (Privileged 20211203 §3.1.16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecodeError {
    /// The low two bits are not `0b11`: a 16-bit compressed encoding
    /// (Unprivileged §1.5), and the core does not implement the C extension.
    Compressed {
        /// The fetched word.
        word: u32,
    },
    /// The major opcode (bits 6:0) is not one RV32IM + Zicsr uses.
    UnsupportedOpcode {
        /// The fetched word.
        word: u32,
        /// Bits 6:0 of `word`.
        opcode: u8,
    },
    /// The opcode is known but its `funct3`/`funct7`/`funct12` fields, or
    /// fields that must be zero, select no RV32IM + Zicsr instruction
    /// (for example `slli` with shamt\[5\] set, reserved on RV32 per §2.4.1).
    UnsupportedFunction {
        /// The fetched word.
        word: u32,
    },
}

impl DecodeError {
    /// The word that failed to decode, as reported in `mtval`.
    pub fn word(&self) -> u32 {
        match *self {
            Self::Compressed { word }
            | Self::UnsupportedOpcode { word, .. }
            | Self::UnsupportedFunction { word } => word,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Compressed { word } => write!(
                f,
                "{word:#010x} is a compressed (16-bit) encoding; weft's core implements RV32IM without C"
            ),
            Self::UnsupportedOpcode { word, opcode } => write!(
                f,
                "{word:#010x} has major opcode {opcode:#09b}, which RV32IM + Zicsr does not use"
            ),
            Self::UnsupportedFunction { word } => write!(
                f,
                "{word:#010x} selects no RV32IM + Zicsr instruction within its opcode"
            ),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Major opcodes (bits 6:0), Unprivileged Table 24.1.
pub(crate) mod opcode {
    pub const LOAD: u32 = 0b000_0011;
    pub const MISC_MEM: u32 = 0b000_1111;
    pub const OP_IMM: u32 = 0b001_0011;
    pub const AUIPC: u32 = 0b001_0111;
    pub const STORE: u32 = 0b010_0011;
    pub const OP: u32 = 0b011_0011;
    pub const LUI: u32 = 0b011_0111;
    pub const BRANCH: u32 = 0b110_0011;
    pub const JALR: u32 = 0b110_0111;
    pub const JAL: u32 = 0b110_1111;
    pub const SYSTEM: u32 = 0b111_0011;
}

#[inline(always)]
fn rd(word: u32) -> u8 {
    ((word >> 7) & 0x1f) as u8
}

#[inline(always)]
fn rs1(word: u32) -> u8 {
    ((word >> 15) & 0x1f) as u8
}

#[inline(always)]
fn rs2(word: u32) -> u8 {
    ((word >> 20) & 0x1f) as u8
}

#[inline(always)]
fn funct3(word: u32) -> u32 {
    (word >> 12) & 0x7
}

#[inline(always)]
fn funct7(word: u32) -> u32 {
    word >> 25
}

/// I-immediate: inst\[31:20\] sign-extended (Unprivileged §2.3, Figure 2.4).
#[inline(always)]
fn imm_i(word: u32) -> i32 {
    (word as i32) >> 20
}

/// S-immediate: inst\[31:25\] ‖ inst\[11:7\] sign-extended (§2.3).
#[inline(always)]
fn imm_s(word: u32) -> i32 {
    (((word as i32) >> 25) << 5) | ((word >> 7) & 0x1f) as i32
}

/// B-immediate: inst\[31\] ‖ inst\[7\] ‖ inst\[30:25\] ‖ inst\[11:8\] ‖ 0 (§2.3).
#[inline(always)]
fn imm_b(word: u32) -> i32 {
    (((word as i32) >> 31) << 12)
        | (((word >> 7) & 0x1) << 11) as i32
        | (((word >> 25) & 0x3f) << 5) as i32
        | (((word >> 8) & 0xf) << 1) as i32
}

/// J-immediate: inst\[31\] ‖ inst\[19:12\] ‖ inst\[20\] ‖ inst\[30:21\] ‖ 0 (§2.3).
#[inline(always)]
fn imm_j(word: u32) -> i32 {
    (((word as i32) >> 31) << 20)
        | (word & 0x000f_f000) as i32
        | (((word >> 20) & 0x1) << 11) as i32
        | (((word >> 21) & 0x3ff) << 1) as i32
}

/// Decodes one instruction word.
///
/// Accepts exactly the RV32I, RV32M, Zicsr, Zifencei and machine-mode
/// SYSTEM encodings of Unprivileged Table 24.1 and Privileged Table 9.1
/// (`mret`, `wfi`); everything else is a [`DecodeError`], which the hart
/// raises as an illegal-instruction exception.
#[inline]
pub fn decode(word: u32) -> Result<Instruction, DecodeError> {
    use Instruction as I;
    if word & 0b11 != 0b11 {
        return Err(DecodeError::Compressed { word });
    }
    let bad = DecodeError::UnsupportedFunction { word };
    let (rd, rs1, rs2, f3) = (rd(word), rs1(word), rs2(word), funct3(word));
    let insn = match word & 0x7f {
        opcode::LUI => I::Lui {
            rd,
            upper: word >> 12,
        },
        opcode::AUIPC => I::Auipc {
            rd,
            upper: word >> 12,
        },
        opcode::JAL => I::Jal {
            rd,
            offset: imm_j(word),
        },
        opcode::JALR => match f3 {
            0b000 => I::Jalr {
                rd,
                rs1,
                offset: imm_i(word),
            },
            _ => return Err(bad),
        },
        opcode::BRANCH => {
            let offset = imm_b(word);
            match f3 {
                0b000 => I::Beq { rs1, rs2, offset },
                0b001 => I::Bne { rs1, rs2, offset },
                0b100 => I::Blt { rs1, rs2, offset },
                0b101 => I::Bge { rs1, rs2, offset },
                0b110 => I::Bltu { rs1, rs2, offset },
                0b111 => I::Bgeu { rs1, rs2, offset },
                _ => return Err(bad),
            }
        }
        opcode::LOAD => {
            let offset = imm_i(word);
            match f3 {
                0b000 => I::Lb { rd, rs1, offset },
                0b001 => I::Lh { rd, rs1, offset },
                0b010 => I::Lw { rd, rs1, offset },
                0b100 => I::Lbu { rd, rs1, offset },
                0b101 => I::Lhu { rd, rs1, offset },
                _ => return Err(bad),
            }
        }
        opcode::STORE => {
            let offset = imm_s(word);
            match f3 {
                0b000 => I::Sb { rs1, rs2, offset },
                0b001 => I::Sh { rs1, rs2, offset },
                0b010 => I::Sw { rs1, rs2, offset },
                _ => return Err(bad),
            }
        }
        opcode::OP_IMM => {
            let imm = imm_i(word);
            // RV32 shifts: imm[11:5] selects logical/arithmetic, and a set
            // shamt[5] (imm[5]) is reserved (Unprivileged §2.4.1).
            let shamt = rs2;
            match (f3, funct7(word)) {
                (0b000, _) => I::Addi { rd, rs1, imm },
                (0b010, _) => I::Slti { rd, rs1, imm },
                (0b011, _) => I::Sltiu { rd, rs1, imm },
                (0b100, _) => I::Xori { rd, rs1, imm },
                (0b110, _) => I::Ori { rd, rs1, imm },
                (0b111, _) => I::Andi { rd, rs1, imm },
                (0b001, 0b000_0000) => I::Slli { rd, rs1, shamt },
                (0b101, 0b000_0000) => I::Srli { rd, rs1, shamt },
                (0b101, 0b010_0000) => I::Srai { rd, rs1, shamt },
                _ => return Err(bad),
            }
        }
        opcode::OP => match (funct7(word), f3) {
            (0b000_0000, 0b000) => I::Add { rd, rs1, rs2 },
            (0b010_0000, 0b000) => I::Sub { rd, rs1, rs2 },
            (0b000_0000, 0b001) => I::Sll { rd, rs1, rs2 },
            (0b000_0000, 0b010) => I::Slt { rd, rs1, rs2 },
            (0b000_0000, 0b011) => I::Sltu { rd, rs1, rs2 },
            (0b000_0000, 0b100) => I::Xor { rd, rs1, rs2 },
            (0b000_0000, 0b101) => I::Srl { rd, rs1, rs2 },
            (0b010_0000, 0b101) => I::Sra { rd, rs1, rs2 },
            (0b000_0000, 0b110) => I::Or { rd, rs1, rs2 },
            (0b000_0000, 0b111) => I::And { rd, rs1, rs2 },
            (0b000_0001, 0b000) => I::Mul { rd, rs1, rs2 },
            (0b000_0001, 0b001) => I::Mulh { rd, rs1, rs2 },
            (0b000_0001, 0b010) => I::Mulhsu { rd, rs1, rs2 },
            (0b000_0001, 0b011) => I::Mulhu { rd, rs1, rs2 },
            (0b000_0001, 0b100) => I::Div { rd, rs1, rs2 },
            (0b000_0001, 0b101) => I::Divu { rd, rs1, rs2 },
            (0b000_0001, 0b110) => I::Rem { rd, rs1, rs2 },
            (0b000_0001, 0b111) => I::Remu { rd, rs1, rs2 },
            _ => return Err(bad),
        },
        opcode::MISC_MEM => match f3 {
            0b000 => I::Fence {
                fm: (word >> 28) as u8,
                pred: ((word >> 24) & 0xf) as u8,
                succ: ((word >> 20) & 0xf) as u8,
            },
            0b001 => I::FenceI,
            _ => return Err(bad),
        },
        opcode::SYSTEM => {
            let csr = (word >> 20) as u16;
            match f3 {
                // funct12 encodings with rd = rs1 = 0 (Privileged Table 9.1).
                0b000 => match word {
                    0x0000_0073 => I::Ecall,
                    0x0010_0073 => I::Ebreak,
                    0x3020_0073 => I::Mret,
                    0x1050_0073 => I::Wfi,
                    _ => return Err(bad),
                },
                0b001 => I::Csrrw { rd, rs1, csr },
                0b010 => I::Csrrs { rd, rs1, csr },
                0b011 => I::Csrrc { rd, rs1, csr },
                0b101 => I::Csrrwi { rd, uimm: rs1, csr },
                0b110 => I::Csrrsi { rd, uimm: rs1, csr },
                0b111 => I::Csrrci { rd, uimm: rs1, csr },
                _ => return Err(bad),
            }
        }
        other => {
            return Err(DecodeError::UnsupportedOpcode {
                word,
                opcode: other as u8,
            })
        }
    };
    Ok(insn)
}

impl Instruction {
    /// The assembler mnemonic, e.g. `"addi"`.
    pub fn mnemonic(&self) -> &'static str {
        use Instruction as I;
        match self {
            I::Lui { .. } => "lui",
            I::Auipc { .. } => "auipc",
            I::Jal { .. } => "jal",
            I::Jalr { .. } => "jalr",
            I::Beq { .. } => "beq",
            I::Bne { .. } => "bne",
            I::Blt { .. } => "blt",
            I::Bge { .. } => "bge",
            I::Bltu { .. } => "bltu",
            I::Bgeu { .. } => "bgeu",
            I::Lb { .. } => "lb",
            I::Lh { .. } => "lh",
            I::Lw { .. } => "lw",
            I::Lbu { .. } => "lbu",
            I::Lhu { .. } => "lhu",
            I::Sb { .. } => "sb",
            I::Sh { .. } => "sh",
            I::Sw { .. } => "sw",
            I::Addi { .. } => "addi",
            I::Slti { .. } => "slti",
            I::Sltiu { .. } => "sltiu",
            I::Xori { .. } => "xori",
            I::Ori { .. } => "ori",
            I::Andi { .. } => "andi",
            I::Slli { .. } => "slli",
            I::Srli { .. } => "srli",
            I::Srai { .. } => "srai",
            I::Add { .. } => "add",
            I::Sub { .. } => "sub",
            I::Sll { .. } => "sll",
            I::Slt { .. } => "slt",
            I::Sltu { .. } => "sltu",
            I::Xor { .. } => "xor",
            I::Srl { .. } => "srl",
            I::Sra { .. } => "sra",
            I::Or { .. } => "or",
            I::And { .. } => "and",
            I::Fence { .. } => "fence",
            I::FenceI => "fence.i",
            I::Ecall => "ecall",
            I::Ebreak => "ebreak",
            I::Mret => "mret",
            I::Wfi => "wfi",
            I::Csrrw { .. } => "csrrw",
            I::Csrrs { .. } => "csrrs",
            I::Csrrc { .. } => "csrrc",
            I::Csrrwi { .. } => "csrrwi",
            I::Csrrsi { .. } => "csrrsi",
            I::Csrrci { .. } => "csrrci",
            I::Mul { .. } => "mul",
            I::Mulh { .. } => "mulh",
            I::Mulhsu { .. } => "mulhsu",
            I::Mulhu { .. } => "mulhu",
            I::Div { .. } => "div",
            I::Divu { .. } => "divu",
            I::Rem { .. } => "rem",
            I::Remu { .. } => "remu",
        }
    }
}

/// Assembler syntax with ABI-free register names (`x0`..`x31`), branch and
/// jump offsets relative to the instruction, e.g. `beq x1, x2, -8`.
impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Instruction as I;
        let m = self.mnemonic();
        match *self {
            I::Lui { rd, upper } | I::Auipc { rd, upper } => write!(f, "{m} x{rd}, {upper:#x}"),
            I::Jal { rd, offset } => write!(f, "{m} x{rd}, {offset}"),
            I::Jalr { rd, rs1, offset } => write!(f, "{m} x{rd}, {offset}(x{rs1})"),
            I::Beq { rs1, rs2, offset }
            | I::Bne { rs1, rs2, offset }
            | I::Blt { rs1, rs2, offset }
            | I::Bge { rs1, rs2, offset }
            | I::Bltu { rs1, rs2, offset }
            | I::Bgeu { rs1, rs2, offset } => write!(f, "{m} x{rs1}, x{rs2}, {offset}"),
            I::Lb { rd, rs1, offset }
            | I::Lh { rd, rs1, offset }
            | I::Lw { rd, rs1, offset }
            | I::Lbu { rd, rs1, offset }
            | I::Lhu { rd, rs1, offset } => write!(f, "{m} x{rd}, {offset}(x{rs1})"),
            I::Sb { rs1, rs2, offset }
            | I::Sh { rs1, rs2, offset }
            | I::Sw { rs1, rs2, offset } => {
                write!(f, "{m} x{rs2}, {offset}(x{rs1})")
            }
            I::Addi { rd, rs1, imm }
            | I::Slti { rd, rs1, imm }
            | I::Sltiu { rd, rs1, imm }
            | I::Xori { rd, rs1, imm }
            | I::Ori { rd, rs1, imm }
            | I::Andi { rd, rs1, imm } => write!(f, "{m} x{rd}, x{rs1}, {imm}"),
            I::Slli { rd, rs1, shamt }
            | I::Srli { rd, rs1, shamt }
            | I::Srai { rd, rs1, shamt } => {
                write!(f, "{m} x{rd}, x{rs1}, {shamt}")
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
            | I::And { rd, rs1, rs2 }
            | I::Mul { rd, rs1, rs2 }
            | I::Mulh { rd, rs1, rs2 }
            | I::Mulhsu { rd, rs1, rs2 }
            | I::Mulhu { rd, rs1, rs2 }
            | I::Div { rd, rs1, rs2 }
            | I::Divu { rd, rs1, rs2 }
            | I::Rem { rd, rs1, rs2 }
            | I::Remu { rd, rs1, rs2 } => write!(f, "{m} x{rd}, x{rs1}, x{rs2}"),
            I::Fence { fm, pred, succ } => {
                write!(f, "{m} {pred:#06b}, {succ:#06b}")?;
                if fm != 0 {
                    write!(f, " (fm {fm:#06b})")?;
                }
                Ok(())
            }
            I::FenceI | I::Ecall | I::Ebreak | I::Mret | I::Wfi => f.write_str(m),
            I::Csrrw { rd, rs1, csr } | I::Csrrs { rd, rs1, csr } | I::Csrrc { rd, rs1, csr } => {
                write!(f, "{m} x{rd}, {csr:#05x}, x{rs1}")
            }
            I::Csrrwi { rd, uimm, csr }
            | I::Csrrsi { rd, uimm, csr }
            | I::Csrrci { rd, uimm, csr } => write!(f, "{m} x{rd}, {csr:#05x}, {uimm}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words as the GNU assembler emits them for the listed source lines
    /// (and as Unprivileged Table 24.1 lays them out).
    #[test]
    fn decodes_known_encodings() {
        use Instruction as I;
        let cases: &[(u32, Instruction)] = &[
            // nop
            (
                0x0000_0013,
                I::Addi {
                    rd: 0,
                    rs1: 0,
                    imm: 0,
                },
            ),
            // li a0, 1
            (
                0x0010_0513,
                I::Addi {
                    rd: 10,
                    rs1: 0,
                    imm: 1,
                },
            ),
            // addi sp, sp, -16
            (
                0xff01_0113,
                I::Addi {
                    rd: 2,
                    rs1: 2,
                    imm: -16,
                },
            ),
            // lui a0, 0x10000
            (
                0x1000_0537,
                I::Lui {
                    rd: 10,
                    upper: 0x10000,
                },
            ),
            // ret
            (
                0x0000_8067,
                I::Jalr {
                    rd: 0,
                    rs1: 1,
                    offset: 0,
                },
            ),
            // j .
            (0x0000_006f, I::Jal { rd: 0, offset: 0 }),
            // jal ra, .+8
            (0x0080_00ef, I::Jal { rd: 1, offset: 8 }),
            // beq zero, zero, .-4
            (
                0xfe00_0ee3,
                I::Beq {
                    rs1: 0,
                    rs2: 0,
                    offset: -4,
                },
            ),
            // sw ra, 12(sp)
            (
                0x0011_2623,
                I::Sw {
                    rs1: 2,
                    rs2: 1,
                    offset: 12,
                },
            ),
            // lw ra, 12(sp)
            (
                0x00c1_2083,
                I::Lw {
                    rd: 1,
                    rs1: 2,
                    offset: 12,
                },
            ),
            // mul a0, a0, a1
            (
                0x02b5_0533,
                I::Mul {
                    rd: 10,
                    rs1: 10,
                    rs2: 11,
                },
            ),
            // sub a0, a0, a1
            (
                0x40b5_0533,
                I::Sub {
                    rd: 10,
                    rs1: 10,
                    rs2: 11,
                },
            ),
            // srai a0, a0, 1
            (
                0x4015_5513,
                I::Srai {
                    rd: 10,
                    rs1: 10,
                    shamt: 1,
                },
            ),
            // csrr a0, mhartid
            (
                0xf140_2573,
                I::Csrrs {
                    rd: 10,
                    rs1: 0,
                    csr: 0xf14,
                },
            ),
            // csrw mtvec, t0
            (
                0x3052_9073,
                I::Csrrw {
                    rd: 0,
                    rs1: 5,
                    csr: 0x305,
                },
            ),
            // fence iorw, iorw
            (
                0x0ff0_000f,
                I::Fence {
                    fm: 0,
                    pred: 0xf,
                    succ: 0xf,
                },
            ),
            // fence.i
            (0x0000_100f, I::FenceI),
            (0x0000_0073, I::Ecall),
            (0x0010_0073, I::Ebreak),
            (0x3020_0073, I::Mret),
            (0x1050_0073, I::Wfi),
        ];
        for &(word, expected) in cases {
            assert_eq!(decode(word), Ok(expected), "{word:#010x}");
        }
    }

    #[test]
    fn rejects_encodings_outside_rv32im_zicsr() {
        let cases: &[(u32, DecodeError)] = &[
            (0x0000_0000, DecodeError::Compressed { word: 0 }),
            (
                0xffff_ffff,
                DecodeError::UnsupportedOpcode {
                    word: 0xffff_ffff,
                    opcode: 0x7f,
                },
            ),
            // flw (F extension, LOAD-FP)
            (
                0x0005_2507,
                DecodeError::UnsupportedOpcode {
                    word: 0x0005_2507,
                    opcode: 0x07,
                },
            ),
            // amoadd.w (A extension)
            (
                0x00b5_252f,
                DecodeError::UnsupportedOpcode {
                    word: 0x00b5_252f,
                    opcode: 0x2f,
                },
            ),
            // slli a0, a0, 32: shamt[5] set, reserved on RV32 (§2.4.1)
            (
                0x0205_1513,
                DecodeError::UnsupportedFunction { word: 0x0205_1513 },
            ),
            // ld a0, 0(a0): RV64 only
            (
                0x0005_3503,
                DecodeError::UnsupportedFunction { word: 0x0005_3503 },
            ),
            // sret: no S-mode
            (
                0x1020_0073,
                DecodeError::UnsupportedFunction { word: 0x1020_0073 },
            ),
            // ecall with rd = 1
            (
                0x0000_00f3,
                DecodeError::UnsupportedFunction { word: 0x0000_00f3 },
            ),
            // SYSTEM funct3 = 0b100 (reserved in Zicsr's space)
            (
                0x0000_4073,
                DecodeError::UnsupportedFunction { word: 0x0000_4073 },
            ),
            // add with funct7 = 0b0000010
            (
                0x04b5_0533,
                DecodeError::UnsupportedFunction { word: 0x04b5_0533 },
            ),
            // branch funct3 = 0b010
            (
                0x0000_2063,
                DecodeError::UnsupportedFunction { word: 0x0000_2063 },
            ),
            // jalr funct3 = 0b001
            (
                0x0000_9067,
                DecodeError::UnsupportedFunction { word: 0x0000_9067 },
            ),
        ];
        for &(word, expected) in cases {
            assert_eq!(decode(word), Err(expected), "{word:#010x}");
            assert_eq!(expected.word(), word);
        }
    }

    #[test]
    fn fence_ignores_rd_and_rs1() {
        // Unprivileged §2.7: base implementations ignore rd and rs1.
        assert_eq!(
            decode(0x0ff0_000f | 5 << 7 | 6 << 15),
            Ok(Instruction::Fence {
                fm: 0,
                pred: 0xf,
                succ: 0xf
            })
        );
        // fence.tso: fm = 0b1000, pred = succ = rw.
        assert_eq!(
            decode(0x8330_000f),
            Ok(Instruction::Fence {
                fm: 0b1000,
                pred: 0b0011,
                succ: 0b0011
            })
        );
    }

    #[test]
    fn displays_in_assembler_syntax() {
        assert_eq!(decode(0xff01_0113).unwrap().to_string(), "addi x2, x2, -16");
        assert_eq!(decode(0x0011_2623).unwrap().to_string(), "sw x1, 12(x2)");
        assert_eq!(decode(0xfe00_0ee3).unwrap().to_string(), "beq x0, x0, -4");
        assert_eq!(
            decode(0xf140_2573).unwrap().to_string(),
            "csrrs x10, 0xf14, x0"
        );
        assert_eq!(decode(0x3020_0073).unwrap().to_string(), "mret");
    }
}
