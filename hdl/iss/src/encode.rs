//! Builds RV32IM + Zicsr instruction words without an assembler.
//!
//! Tests of the ISS, the RTL core's tests and the random-instruction-stream
//! generator write programs with these functions: one function per
//! instruction, named after its mnemonic (`and_`, `or_`, `xor_` carry a
//! trailing underscore because the plain names are Rust keywords), taking
//! operands in assembler order. [`encode`] turns any [`Instruction`] into
//! its word, and the format functions ([`r_type`], [`i_type`], [`s_type`],
//! [`b_type`], [`u_type`], [`j_type`]) build arbitrary, even illegal,
//! encodings for trap tests.
//!
//! Layouts are the base formats of Unprivileged ISA 20191213 §2.2–§2.3
//! (Figures 2.2–2.4) and the opcode map of its Table 24.1.
//!
//! # Panics
//!
//! An operand out of range for its field (a register above 31, an
//! immediate that does not fit, an odd branch offset) is a bug in the
//! program being written, and every function here panics on it rather than
//! silently encoding a different instruction.

use crate::decode::{opcode, Instruction};

#[track_caller]
fn reg(r: u8) -> u32 {
    assert!(r < 32, "register x{r} does not exist (x0..=x31)");
    u32::from(r)
}

#[track_caller]
fn field(value: u32, bits: u32, what: &str) -> u32 {
    assert!(
        value < (1 << bits),
        "{what} {value:#x} does not fit in {bits} bits"
    );
    value
}

#[track_caller]
fn signed(value: i32, bits: u32, what: &str) -> u32 {
    let limit = 1i32 << (bits - 1);
    assert!(
        (-limit..limit).contains(&value),
        "{what} {value} is outside the {bits}-bit signed range {}..={}",
        -limit,
        limit - 1
    );
    value as u32 & ((1 << bits) - 1)
}

/// R-type: `funct7 | rs2 | rs1 | funct3 | rd | opcode` (Unprivileged §2.2).
#[track_caller]
pub fn r_type(opcode: u32, rd: u8, funct3: u32, rs1: u8, rs2: u8, funct7: u32) -> u32 {
    field(funct7, 7, "funct7") << 25
        | reg(rs2) << 20
        | reg(rs1) << 15
        | field(funct3, 3, "funct3") << 12
        | reg(rd) << 7
        | field(opcode, 7, "opcode")
}

/// I-type: `imm[11:0] | rs1 | funct3 | rd | opcode` (Unprivileged §2.2);
/// `imm` in `-2048..=2047`.
#[track_caller]
pub fn i_type(opcode: u32, rd: u8, funct3: u32, rs1: u8, imm: i32) -> u32 {
    signed(imm, 12, "I-immediate") << 20
        | reg(rs1) << 15
        | field(funct3, 3, "funct3") << 12
        | reg(rd) << 7
        | field(opcode, 7, "opcode")
}

/// S-type: `imm[11:5] | rs2 | rs1 | funct3 | imm[4:0] | opcode`
/// (Unprivileged §2.2); `imm` in `-2048..=2047`.
#[track_caller]
pub fn s_type(opcode: u32, funct3: u32, rs1: u8, rs2: u8, imm: i32) -> u32 {
    let imm = signed(imm, 12, "S-immediate");
    (imm >> 5) << 25
        | reg(rs2) << 20
        | reg(rs1) << 15
        | field(funct3, 3, "funct3") << 12
        | (imm & 0x1f) << 7
        | field(opcode, 7, "opcode")
}

/// B-type: `imm[12|10:5] | rs2 | rs1 | funct3 | imm[4:1|11] | opcode`
/// (Unprivileged §2.3); `offset` even, in `-4096..=4094`.
#[track_caller]
pub fn b_type(opcode: u32, funct3: u32, rs1: u8, rs2: u8, offset: i32) -> u32 {
    assert!(offset % 2 == 0, "branch offset {offset} is odd");
    let imm = signed(offset, 13, "B-immediate");
    ((imm >> 12) & 1) << 31
        | ((imm >> 5) & 0x3f) << 25
        | reg(rs2) << 20
        | reg(rs1) << 15
        | field(funct3, 3, "funct3") << 12
        | ((imm >> 1) & 0xf) << 8
        | ((imm >> 11) & 1) << 7
        | field(opcode, 7, "opcode")
}

/// U-type: `imm[31:12] | rd | opcode` (Unprivileged §2.2); `upper` is the
/// 20-bit field, `0..=0xF_FFFF`.
#[track_caller]
pub fn u_type(opcode: u32, rd: u8, upper: u32) -> u32 {
    field(upper, 20, "U-immediate") << 12 | reg(rd) << 7 | field(opcode, 7, "opcode")
}

/// J-type: `imm[20|10:1|11|19:12] | rd | opcode` (Unprivileged §2.3);
/// `offset` even, in `-2^20..2^20`.
#[track_caller]
pub fn j_type(opcode: u32, rd: u8, offset: i32) -> u32 {
    assert!(offset % 2 == 0, "jump offset {offset} is odd");
    let imm = signed(offset, 21, "J-immediate");
    ((imm >> 20) & 1) << 31
        | ((imm >> 1) & 0x3ff) << 21
        | ((imm >> 11) & 1) << 20
        | ((imm >> 12) & 0xff) << 12
        | reg(rd) << 7
        | field(opcode, 7, "opcode")
}

/// The instruction word of `insn`; the inverse of [`crate::decode::decode`]
/// (`decode(encode(x)) == x` for every in-range `x`).
#[track_caller]
pub fn encode(insn: &Instruction) -> u32 {
    use opcode::*;
    use Instruction as I;
    let csr_field = |csr: u16| field(u32::from(csr), 12, "CSR address");
    let csr_type = |f3: u32, rd: u8, src: u8, csr: u16| {
        csr_field(csr) << 20 | reg(src) << 15 | f3 << 12 | reg(rd) << 7 | SYSTEM
    };
    let shift = |f3: u32, rd: u8, rs1: u8, shamt: u8, f7: u32| {
        field(u32::from(shamt), 5, "shift amount");
        r_type(OP_IMM, rd, f3, rs1, shamt, f7)
    };
    match *insn {
        I::Lui { rd, upper } => u_type(LUI, rd, upper),
        I::Auipc { rd, upper } => u_type(AUIPC, rd, upper),
        I::Jal { rd, offset } => j_type(JAL, rd, offset),
        I::Jalr { rd, rs1, offset } => i_type(JALR, rd, 0b000, rs1, offset),
        I::Beq { rs1, rs2, offset } => b_type(BRANCH, 0b000, rs1, rs2, offset),
        I::Bne { rs1, rs2, offset } => b_type(BRANCH, 0b001, rs1, rs2, offset),
        I::Blt { rs1, rs2, offset } => b_type(BRANCH, 0b100, rs1, rs2, offset),
        I::Bge { rs1, rs2, offset } => b_type(BRANCH, 0b101, rs1, rs2, offset),
        I::Bltu { rs1, rs2, offset } => b_type(BRANCH, 0b110, rs1, rs2, offset),
        I::Bgeu { rs1, rs2, offset } => b_type(BRANCH, 0b111, rs1, rs2, offset),
        I::Lb { rd, rs1, offset } => i_type(LOAD, rd, 0b000, rs1, offset),
        I::Lh { rd, rs1, offset } => i_type(LOAD, rd, 0b001, rs1, offset),
        I::Lw { rd, rs1, offset } => i_type(LOAD, rd, 0b010, rs1, offset),
        I::Lbu { rd, rs1, offset } => i_type(LOAD, rd, 0b100, rs1, offset),
        I::Lhu { rd, rs1, offset } => i_type(LOAD, rd, 0b101, rs1, offset),
        I::Sb { rs1, rs2, offset } => s_type(STORE, 0b000, rs1, rs2, offset),
        I::Sh { rs1, rs2, offset } => s_type(STORE, 0b001, rs1, rs2, offset),
        I::Sw { rs1, rs2, offset } => s_type(STORE, 0b010, rs1, rs2, offset),
        I::Addi { rd, rs1, imm } => i_type(OP_IMM, rd, 0b000, rs1, imm),
        I::Slti { rd, rs1, imm } => i_type(OP_IMM, rd, 0b010, rs1, imm),
        I::Sltiu { rd, rs1, imm } => i_type(OP_IMM, rd, 0b011, rs1, imm),
        I::Xori { rd, rs1, imm } => i_type(OP_IMM, rd, 0b100, rs1, imm),
        I::Ori { rd, rs1, imm } => i_type(OP_IMM, rd, 0b110, rs1, imm),
        I::Andi { rd, rs1, imm } => i_type(OP_IMM, rd, 0b111, rs1, imm),
        I::Slli { rd, rs1, shamt } => shift(0b001, rd, rs1, shamt, 0b000_0000),
        I::Srli { rd, rs1, shamt } => shift(0b101, rd, rs1, shamt, 0b000_0000),
        I::Srai { rd, rs1, shamt } => shift(0b101, rd, rs1, shamt, 0b010_0000),
        I::Add { rd, rs1, rs2 } => r_type(OP, rd, 0b000, rs1, rs2, 0b000_0000),
        I::Sub { rd, rs1, rs2 } => r_type(OP, rd, 0b000, rs1, rs2, 0b010_0000),
        I::Sll { rd, rs1, rs2 } => r_type(OP, rd, 0b001, rs1, rs2, 0b000_0000),
        I::Slt { rd, rs1, rs2 } => r_type(OP, rd, 0b010, rs1, rs2, 0b000_0000),
        I::Sltu { rd, rs1, rs2 } => r_type(OP, rd, 0b011, rs1, rs2, 0b000_0000),
        I::Xor { rd, rs1, rs2 } => r_type(OP, rd, 0b100, rs1, rs2, 0b000_0000),
        I::Srl { rd, rs1, rs2 } => r_type(OP, rd, 0b101, rs1, rs2, 0b000_0000),
        I::Sra { rd, rs1, rs2 } => r_type(OP, rd, 0b101, rs1, rs2, 0b010_0000),
        I::Or { rd, rs1, rs2 } => r_type(OP, rd, 0b110, rs1, rs2, 0b000_0000),
        I::And { rd, rs1, rs2 } => r_type(OP, rd, 0b111, rs1, rs2, 0b000_0000),
        I::Mul { rd, rs1, rs2 } => r_type(OP, rd, 0b000, rs1, rs2, 0b000_0001),
        I::Mulh { rd, rs1, rs2 } => r_type(OP, rd, 0b001, rs1, rs2, 0b000_0001),
        I::Mulhsu { rd, rs1, rs2 } => r_type(OP, rd, 0b010, rs1, rs2, 0b000_0001),
        I::Mulhu { rd, rs1, rs2 } => r_type(OP, rd, 0b011, rs1, rs2, 0b000_0001),
        I::Div { rd, rs1, rs2 } => r_type(OP, rd, 0b100, rs1, rs2, 0b000_0001),
        I::Divu { rd, rs1, rs2 } => r_type(OP, rd, 0b101, rs1, rs2, 0b000_0001),
        I::Rem { rd, rs1, rs2 } => r_type(OP, rd, 0b110, rs1, rs2, 0b000_0001),
        I::Remu { rd, rs1, rs2 } => r_type(OP, rd, 0b111, rs1, rs2, 0b000_0001),
        I::Fence { fm, pred, succ } => {
            field(u32::from(fm), 4, "fence mode") << 28
                | field(u32::from(pred), 4, "fence predecessor set") << 24
                | field(u32::from(succ), 4, "fence successor set") << 20
                | MISC_MEM
        }
        I::FenceI => 0b001 << 12 | MISC_MEM,
        I::Ecall => 0x0000_0073,
        I::Ebreak => 0x0010_0073,
        I::Mret => 0x3020_0073,
        I::Wfi => 0x1050_0073,
        I::Csrrw { rd, rs1, csr } => csr_type(0b001, rd, rs1, csr),
        I::Csrrs { rd, rs1, csr } => csr_type(0b010, rd, rs1, csr),
        I::Csrrc { rd, rs1, csr } => csr_type(0b011, rd, rs1, csr),
        I::Csrrwi { rd, uimm, csr } => csr_type(0b101, rd, uimm, csr),
        I::Csrrsi { rd, uimm, csr } => csr_type(0b110, rd, uimm, csr),
        I::Csrrci { rd, uimm, csr } => csr_type(0b111, rd, uimm, csr),
    }
}

/// `lui rd, upper`: `rd ← upper << 12`; `upper` in `0..=0xF_FFFF`.
pub fn lui(rd: u8, upper: u32) -> u32 {
    encode(&Instruction::Lui { rd, upper })
}

/// `auipc rd, upper`: `rd ← pc + (upper << 12)`; `upper` in `0..=0xF_FFFF`.
pub fn auipc(rd: u8, upper: u32) -> u32 {
    encode(&Instruction::Auipc { rd, upper })
}

/// `jal rd, offset`; `offset` even, in `-2^20..2^20`, relative to this instruction.
pub fn jal(rd: u8, offset: i32) -> u32 {
    encode(&Instruction::Jal { rd, offset })
}

/// `jalr rd, offset(rs1)`; `offset` in `-2048..=2047`.
pub fn jalr(rd: u8, rs1: u8, offset: i32) -> u32 {
    encode(&Instruction::Jalr { rd, rs1, offset })
}

/// `fence pred, succ` with `fm = 0`; the sets are 4-bit I/O/R/W masks
/// (`0b1111` = `iorw`).
pub fn fence(pred: u8, succ: u8) -> u32 {
    encode(&Instruction::Fence { fm: 0, pred, succ })
}

/// `fence.i` (Zifencei).
pub fn fence_i() -> u32 {
    encode(&Instruction::FenceI)
}

/// `ecall`.
pub fn ecall() -> u32 {
    encode(&Instruction::Ecall)
}

/// `ebreak`.
pub fn ebreak() -> u32 {
    encode(&Instruction::Ebreak)
}

/// `mret`.
pub fn mret() -> u32 {
    encode(&Instruction::Mret)
}

/// `wfi`.
pub fn wfi() -> u32 {
    encode(&Instruction::Wfi)
}

/// `nop`, the canonical `addi x0, x0, 0` (Unprivileged §2.4.3).
pub fn nop() -> u32 {
    addi(0, 0, 0)
}

/// `li rd, value` as the two-instruction `lui` + `addi` pair an assembler
/// emits for an arbitrary 32-bit constant. The `lui` field is rounded so
/// that adding the sign-extended low 12 bits lands on `value`.
pub fn li(rd: u8, value: u32) -> [u32; 2] {
    let low = ((value << 20) as i32) >> 20;
    let upper = value.wrapping_sub(low as u32) >> 12;
    [lui(rd, upper), addi(rd, rd, low)]
}

/// `add rd, rs1, rs2`.
pub fn add(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Add { rd, rs1, rs2 })
}

/// `sub rd, rs1, rs2`.
pub fn sub(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Sub { rd, rs1, rs2 })
}

/// `sll rd, rs1, rs2`.
pub fn sll(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Sll { rd, rs1, rs2 })
}

/// `slt rd, rs1, rs2`.
pub fn slt(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Slt { rd, rs1, rs2 })
}

/// `sltu rd, rs1, rs2`.
pub fn sltu(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Sltu { rd, rs1, rs2 })
}

/// `xor rd, rs1, rs2`.
pub fn xor_(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Xor { rd, rs1, rs2 })
}

/// `srl rd, rs1, rs2`.
pub fn srl(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Srl { rd, rs1, rs2 })
}

/// `sra rd, rs1, rs2`.
pub fn sra(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Sra { rd, rs1, rs2 })
}

/// `or rd, rs1, rs2`.
pub fn or_(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Or { rd, rs1, rs2 })
}

/// `and rd, rs1, rs2`.
pub fn and_(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::And { rd, rs1, rs2 })
}

/// `mul rd, rs1, rs2`.
pub fn mul(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Mul { rd, rs1, rs2 })
}

/// `mulh rd, rs1, rs2`.
pub fn mulh(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Mulh { rd, rs1, rs2 })
}

/// `mulhsu rd, rs1, rs2`.
pub fn mulhsu(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Mulhsu { rd, rs1, rs2 })
}

/// `mulhu rd, rs1, rs2`.
pub fn mulhu(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Mulhu { rd, rs1, rs2 })
}

/// `div rd, rs1, rs2`.
pub fn div(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Div { rd, rs1, rs2 })
}

/// `divu rd, rs1, rs2`.
pub fn divu(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Divu { rd, rs1, rs2 })
}

/// `rem rd, rs1, rs2`.
pub fn rem(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Rem { rd, rs1, rs2 })
}

/// `remu rd, rs1, rs2`.
pub fn remu(rd: u8, rs1: u8, rs2: u8) -> u32 {
    encode(&Instruction::Remu { rd, rs1, rs2 })
}

/// `addi rd, rs1, imm`; `imm` in `-2048..=2047`.
pub fn addi(rd: u8, rs1: u8, imm: i32) -> u32 {
    encode(&Instruction::Addi { rd, rs1, imm })
}

/// `slti rd, rs1, imm`; `imm` in `-2048..=2047`.
pub fn slti(rd: u8, rs1: u8, imm: i32) -> u32 {
    encode(&Instruction::Slti { rd, rs1, imm })
}

/// `sltiu rd, rs1, imm`; `imm` in `-2048..=2047`.
pub fn sltiu(rd: u8, rs1: u8, imm: i32) -> u32 {
    encode(&Instruction::Sltiu { rd, rs1, imm })
}

/// `xori rd, rs1, imm`; `imm` in `-2048..=2047`.
pub fn xori(rd: u8, rs1: u8, imm: i32) -> u32 {
    encode(&Instruction::Xori { rd, rs1, imm })
}

/// `ori rd, rs1, imm`; `imm` in `-2048..=2047`.
pub fn ori(rd: u8, rs1: u8, imm: i32) -> u32 {
    encode(&Instruction::Ori { rd, rs1, imm })
}

/// `andi rd, rs1, imm`; `imm` in `-2048..=2047`.
pub fn andi(rd: u8, rs1: u8, imm: i32) -> u32 {
    encode(&Instruction::Andi { rd, rs1, imm })
}

/// `slli rd, rs1, shamt`; `shamt` in `0..=31`.
pub fn slli(rd: u8, rs1: u8, shamt: u8) -> u32 {
    encode(&Instruction::Slli { rd, rs1, shamt })
}

/// `srli rd, rs1, shamt`; `shamt` in `0..=31`.
pub fn srli(rd: u8, rs1: u8, shamt: u8) -> u32 {
    encode(&Instruction::Srli { rd, rs1, shamt })
}

/// `srai rd, rs1, shamt`; `shamt` in `0..=31`.
pub fn srai(rd: u8, rs1: u8, shamt: u8) -> u32 {
    encode(&Instruction::Srai { rd, rs1, shamt })
}

/// `beq rs1, rs2, offset`; `offset` even, in `-4096..=4094`, relative to this instruction.
pub fn beq(rs1: u8, rs2: u8, offset: i32) -> u32 {
    encode(&Instruction::Beq { rs1, rs2, offset })
}

/// `bne rs1, rs2, offset`; `offset` even, in `-4096..=4094`, relative to this instruction.
pub fn bne(rs1: u8, rs2: u8, offset: i32) -> u32 {
    encode(&Instruction::Bne { rs1, rs2, offset })
}

/// `blt rs1, rs2, offset`; `offset` even, in `-4096..=4094`, relative to this instruction.
pub fn blt(rs1: u8, rs2: u8, offset: i32) -> u32 {
    encode(&Instruction::Blt { rs1, rs2, offset })
}

/// `bge rs1, rs2, offset`; `offset` even, in `-4096..=4094`, relative to this instruction.
pub fn bge(rs1: u8, rs2: u8, offset: i32) -> u32 {
    encode(&Instruction::Bge { rs1, rs2, offset })
}

/// `bltu rs1, rs2, offset`; `offset` even, in `-4096..=4094`, relative to this instruction.
pub fn bltu(rs1: u8, rs2: u8, offset: i32) -> u32 {
    encode(&Instruction::Bltu { rs1, rs2, offset })
}

/// `bgeu rs1, rs2, offset`; `offset` even, in `-4096..=4094`, relative to this instruction.
pub fn bgeu(rs1: u8, rs2: u8, offset: i32) -> u32 {
    encode(&Instruction::Bgeu { rs1, rs2, offset })
}

/// `lb rd, offset(rs1)`; `offset` in `-2048..=2047`.
pub fn lb(rd: u8, rs1: u8, offset: i32) -> u32 {
    encode(&Instruction::Lb { rd, rs1, offset })
}

/// `lh rd, offset(rs1)`; `offset` in `-2048..=2047`.
pub fn lh(rd: u8, rs1: u8, offset: i32) -> u32 {
    encode(&Instruction::Lh { rd, rs1, offset })
}

/// `lw rd, offset(rs1)`; `offset` in `-2048..=2047`.
pub fn lw(rd: u8, rs1: u8, offset: i32) -> u32 {
    encode(&Instruction::Lw { rd, rs1, offset })
}

/// `lbu rd, offset(rs1)`; `offset` in `-2048..=2047`.
pub fn lbu(rd: u8, rs1: u8, offset: i32) -> u32 {
    encode(&Instruction::Lbu { rd, rs1, offset })
}

/// `lhu rd, offset(rs1)`; `offset` in `-2048..=2047`.
pub fn lhu(rd: u8, rs1: u8, offset: i32) -> u32 {
    encode(&Instruction::Lhu { rd, rs1, offset })
}

/// `sb rs2, offset(rs1)` (assembler operand order); `offset` in `-2048..=2047`.
pub fn sb(rs2: u8, rs1: u8, offset: i32) -> u32 {
    encode(&Instruction::Sb { rs1, rs2, offset })
}

/// `sh rs2, offset(rs1)` (assembler operand order); `offset` in `-2048..=2047`.
pub fn sh(rs2: u8, rs1: u8, offset: i32) -> u32 {
    encode(&Instruction::Sh { rs1, rs2, offset })
}

/// `sw rs2, offset(rs1)` (assembler operand order); `offset` in `-2048..=2047`.
pub fn sw(rs2: u8, rs1: u8, offset: i32) -> u32 {
    encode(&Instruction::Sw { rs1, rs2, offset })
}

/// `csrrw rd, csr, rs1` (assembler operand order); `csr` in `0..=0xFFF`.
pub fn csrrw(rd: u8, csr: u16, rs1: u8) -> u32 {
    encode(&Instruction::Csrrw { rd, rs1, csr })
}

/// `csrrs rd, csr, rs1` (assembler operand order); `csr` in `0..=0xFFF`.
pub fn csrrs(rd: u8, csr: u16, rs1: u8) -> u32 {
    encode(&Instruction::Csrrs { rd, rs1, csr })
}

/// `csrrc rd, csr, rs1` (assembler operand order); `csr` in `0..=0xFFF`.
pub fn csrrc(rd: u8, csr: u16, rs1: u8) -> u32 {
    encode(&Instruction::Csrrc { rd, rs1, csr })
}

/// `csrrwi rd, csr, uimm` (assembler operand order); `uimm` in `0..=31`.
pub fn csrrwi(rd: u8, csr: u16, uimm: u8) -> u32 {
    encode(&Instruction::Csrrwi { rd, uimm, csr })
}

/// `csrrsi rd, csr, uimm` (assembler operand order); `uimm` in `0..=31`.
pub fn csrrsi(rd: u8, csr: u16, uimm: u8) -> u32 {
    encode(&Instruction::Csrrsi { rd, uimm, csr })
}

/// `csrrci rd, csr, uimm` (assembler operand order); `uimm` in `0..=31`.
pub fn csrrci(rd: u8, csr: u16, uimm: u8) -> u32 {
    encode(&Instruction::Csrrci { rd, uimm, csr })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::decode::decode;
    use crate::strategy::any_instruction;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn decode_inverts_encode(insn in any_instruction()) {
            prop_assert_eq!(decode(encode(&insn)), Ok(insn));
        }

        /// Every accepted word except FENCE/FENCE.I (whose ignored fields
        /// are not kept) re-encodes to itself.
        #[test]
        fn encode_inverts_decode(word in any::<u32>()) {
            if let Ok(insn) = decode(word) {
                if !matches!(insn, Instruction::Fence { .. } | Instruction::FenceI) {
                    prop_assert_eq!(encode(&insn), word);
                }
            }
        }
    }

    /// Words as the GNU assembler emits them for the named source lines.
    #[test]
    fn builds_known_encodings() {
        assert_eq!(nop(), 0x0000_0013);
        assert_eq!(addi(2, 2, -16), 0xff01_0113);
        assert_eq!(lui(10, 0x10000), 0x1000_0537);
        assert_eq!(jalr(0, 1, 0), 0x0000_8067);
        assert_eq!(jal(1, 8), 0x0080_00ef);
        assert_eq!(beq(0, 0, -4), 0xfe00_0ee3);
        assert_eq!(sw(1, 2, 12), 0x0011_2623);
        assert_eq!(lw(1, 2, 12), 0x00c1_2083);
        assert_eq!(mul(10, 10, 11), 0x02b5_0533);
        assert_eq!(srai(10, 10, 1), 0x4015_5513);
        assert_eq!(csrrs(10, 0xf14, 0), 0xf140_2573);
        assert_eq!(csrrw(0, 0x305, 5), 0x3052_9073);
        assert_eq!(fence(0xf, 0xf), 0x0ff0_000f);
        assert_eq!(fence_i(), 0x0000_100f);
        assert_eq!(ecall(), 0x0000_0073);
        assert_eq!(ebreak(), 0x0010_0073);
        assert_eq!(mret(), 0x3020_0073);
        assert_eq!(wfi(), 0x1050_0073);
    }

    #[test]
    fn li_covers_the_sign_extension_of_addi() {
        // 0x12345FFF: the low 12 bits (0xFFF) sign-extend to -1, so the
        // upper field is rounded up to 0x12346.
        assert_eq!(li(5, 0x1234_5FFF), [lui(5, 0x12346), addi(5, 5, -1)]);
        assert_eq!(li(5, 0x1000_0000), [lui(5, 0x10000), addi(5, 5, 0)]);
        assert_eq!(li(5, 0xFFFF_FFFF), [lui(5, 0), addi(5, 5, -1)]);
    }

    #[test]
    #[should_panic(expected = "outside the 12-bit signed range")]
    fn out_of_range_immediates_panic() {
        addi(1, 1, 2048);
    }

    #[test]
    #[should_panic(expected = "register x32 does not exist")]
    fn out_of_range_registers_panic() {
        add(32, 0, 0);
    }

    #[test]
    #[should_panic(expected = "branch offset 3 is odd")]
    fn odd_branch_offsets_panic() {
        bne(1, 2, 3);
    }
}
