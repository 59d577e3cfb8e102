//! A proptest strategy over every valid [`Instruction`], for this crate's
//! tests and for other models' differential tests (cargo feature
//! `strategy`).

use proptest::prelude::*;

use crate::decode::Instruction;

fn reg() -> impl Strategy<Value = u8> {
    0u8..32
}

fn imm12() -> impl Strategy<Value = i32> {
    -2048i32..2048
}

fn branch_offset() -> impl Strategy<Value = i32> {
    (-2048i32..2048).prop_map(|h| h * 2)
}

fn jal_offset() -> impl Strategy<Value = i32> {
    (-(1i32 << 19)..(1 << 19)).prop_map(|h| h * 2)
}

fn csr() -> impl Strategy<Value = u16> {
    0u16..0x1000
}

/// Any instruction with in-range operands: every variant, every field
/// value.
pub fn any_instruction() -> impl Strategy<Value = Instruction> {
    use Instruction as I;
    let r3 = || (reg(), reg(), reg());
    prop_oneof![
        (reg(), 0u32..0x10_0000).prop_map(|(rd, upper)| I::Lui { rd, upper }),
        (reg(), 0u32..0x10_0000).prop_map(|(rd, upper)| I::Auipc { rd, upper }),
        (reg(), jal_offset()).prop_map(|(rd, offset)| I::Jal { rd, offset }),
        (reg(), reg(), imm12()).prop_map(|(rd, rs1, offset)| I::Jalr { rd, rs1, offset }),
        (0usize..6, reg(), reg(), branch_offset()).prop_map(|(k, rs1, rs2, offset)| {
            [
                I::Beq { rs1, rs2, offset },
                I::Bne { rs1, rs2, offset },
                I::Blt { rs1, rs2, offset },
                I::Bge { rs1, rs2, offset },
                I::Bltu { rs1, rs2, offset },
                I::Bgeu { rs1, rs2, offset },
            ][k]
        }),
        (0usize..5, reg(), reg(), imm12()).prop_map(|(k, rd, rs1, offset)| {
            [
                I::Lb { rd, rs1, offset },
                I::Lh { rd, rs1, offset },
                I::Lw { rd, rs1, offset },
                I::Lbu { rd, rs1, offset },
                I::Lhu { rd, rs1, offset },
            ][k]
        }),
        (0usize..3, reg(), reg(), imm12()).prop_map(|(k, rs1, rs2, offset)| {
            [
                I::Sb { rs1, rs2, offset },
                I::Sh { rs1, rs2, offset },
                I::Sw { rs1, rs2, offset },
            ][k]
        }),
        (0usize..6, reg(), reg(), imm12()).prop_map(|(k, rd, rs1, imm)| {
            [
                I::Addi { rd, rs1, imm },
                I::Slti { rd, rs1, imm },
                I::Sltiu { rd, rs1, imm },
                I::Xori { rd, rs1, imm },
                I::Ori { rd, rs1, imm },
                I::Andi { rd, rs1, imm },
            ][k]
        }),
        (0usize..3, reg(), reg(), 0u8..32).prop_map(|(k, rd, rs1, shamt)| {
            [
                I::Slli { rd, rs1, shamt },
                I::Srli { rd, rs1, shamt },
                I::Srai { rd, rs1, shamt },
            ][k]
        }),
        (0usize..18, r3()).prop_map(|(k, (rd, rs1, rs2))| {
            [
                I::Add { rd, rs1, rs2 },
                I::Sub { rd, rs1, rs2 },
                I::Sll { rd, rs1, rs2 },
                I::Slt { rd, rs1, rs2 },
                I::Sltu { rd, rs1, rs2 },
                I::Xor { rd, rs1, rs2 },
                I::Srl { rd, rs1, rs2 },
                I::Sra { rd, rs1, rs2 },
                I::Or { rd, rs1, rs2 },
                I::And { rd, rs1, rs2 },
                I::Mul { rd, rs1, rs2 },
                I::Mulh { rd, rs1, rs2 },
                I::Mulhsu { rd, rs1, rs2 },
                I::Mulhu { rd, rs1, rs2 },
                I::Div { rd, rs1, rs2 },
                I::Divu { rd, rs1, rs2 },
                I::Rem { rd, rs1, rs2 },
                I::Remu { rd, rs1, rs2 },
            ][k]
        }),
        (0u8..16, 0u8..16, 0u8..16).prop_map(|(fm, pred, succ)| I::Fence { fm, pred, succ }),
        prop_oneof![
            Just(I::FenceI),
            Just(I::Ecall),
            Just(I::Ebreak),
            Just(I::Mret),
            Just(I::Wfi)
        ],
        (0usize..6, reg(), reg(), csr()).prop_map(|(k, rd, src, csr)| {
            [
                I::Csrrw { rd, rs1: src, csr },
                I::Csrrs { rd, rs1: src, csr },
                I::Csrrc { rd, rs1: src, csr },
                I::Csrrwi { rd, uimm: src, csr },
                I::Csrrsi { rd, uimm: src, csr },
                I::Csrrci { rd, uimm: src, csr },
            ][k]
        }),
    ]
}
