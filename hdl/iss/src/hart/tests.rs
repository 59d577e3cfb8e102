//! Tests of the hart, one group per instruction class and trap rule.
//!
//! Each test states the given state, runs instructions built with
//! `encode`, and checks the outcome against values worked out from the
//! ISA manual in the test itself.

use proptest::prelude::*;
use weft_regs::{DATA_RAM_BASE, DATA_RAM_SIZE, INSTRUCTION_RAM_SIZE};

use super::*;
use crate::csr::{self, MSTATUS_MIE, MSTATUS_MPIE, MSTATUS_MPP};
use crate::encode::{self as e, encode};
use crate::strategy::any_instruction;

const D: u32 = DATA_RAM_BASE;
const HANDLER: u32 = 0x100;

/// A hart on the reference bus with `program` at address 0.
fn hart(program: &[u32]) -> Hart {
    let mut h = Hart::new(HarvardBus::reference());
    h.bus_mut().write_words(0, program).unwrap();
    h
}

/// Like [`hart`], with `mtvec` = [`HANDLER`] (direct mode).
fn hart_with_handler(program: &[u32]) -> Hart {
    let mut h = hart(program);
    h.csrs_mut().write(csr::MTVEC, HANDLER).unwrap();
    h
}

fn retire(h: &mut Hart) -> Retirement {
    h.step().retirement().expect("hart should not be idle")
}

fn retire_n(h: &mut Hart, n: usize) -> Vec<Retirement> {
    (0..n).map(|_| retire(h)).collect()
}

fn exception(cause: Exception, tval: u32) -> Option<TrapTaken> {
    Some(TrapTaken {
        cause: TrapCause::Exception(cause),
        tval,
    })
}

fn interrupt(irq: Interrupt) -> Option<TrapTaken> {
    Some(TrapTaken {
        cause: TrapCause::Interrupt(irq),
        tval: 0,
    })
}

fn wrote(rd: u8, value: u32) -> Option<RegWrite> {
    Some(RegWrite { rd, value })
}

// ---------------------------------------------------------------- RV32I

/// Unprivileged §2.4.1: LUI places the U-immediate in the top 20 bits and
/// zeroes the low 12; AUIPC adds it to the address of the AUIPC.
#[test]
fn lui_and_auipc() {
    let mut h = hart(&[e::lui(1, 0x12345), e::auipc(2, 0x1), e::lui(3, 0xFFFFF)]);
    let r = retire_n(&mut h, 3);
    assert_eq!(r[0].rd_write, wrote(1, 0x1234_5000));
    assert_eq!(r[1].rd_write, wrote(2, 0x0000_1004));
    assert_eq!(r[2].rd_write, wrote(3, 0xFFFF_F000));
    assert_eq!(h.pc(), 12);
}

/// Unprivileged §2.4.1, register-immediate instructions.
#[test]
fn register_immediate_arithmetic() {
    let mut h = hart(&[
        e::addi(1, 0, -1),   // x1 = 0xFFFF_FFFF
        e::addi(2, 1, 2),    // wraps: 1
        e::slti(3, 1, 0),    // -1 < 0 signed: 1
        e::sltiu(4, 1, -1),  // 0xFFFF_FFFF < 0xFFFF_FFFF: 0
        e::sltiu(5, 0, 1),   // "sltiu rd, rs1, 1" is seqz: x0 == 0 → 1
        e::xori(6, 2, -1),   // "xori rd, rs1, -1" is not: !1
        e::ori(7, 0, 0x555), // 0x555
        e::andi(8, 1, 0x0F0),
        e::slli(9, 2, 31),     // 0x8000_0000
        e::srli(10, 9, 4),     // logical: 0x0800_0000
        e::srai(11, 9, 4),     // arithmetic: 0xF800_0000
        e::andi(12, 1, -2048), // imm sign-extends: 0xFFFF_F800
    ]);
    let r = retire_n(&mut h, 12);
    let writes: Vec<_> = r.iter().map(|r| r.rd_write).collect();
    assert_eq!(
        writes,
        vec![
            wrote(1, 0xFFFF_FFFF),
            wrote(2, 1),
            wrote(3, 1),
            wrote(4, 0),
            wrote(5, 1),
            wrote(6, 0xFFFF_FFFE),
            wrote(7, 0x555),
            wrote(8, 0x0F0),
            wrote(9, 0x8000_0000),
            wrote(10, 0x0800_0000),
            wrote(11, 0xF800_0000),
            wrote(12, 0xFFFF_F800),
        ]
    );
}

/// Unprivileged §2.4.2, register-register instructions; shifts use only
/// rs2[4:0].
#[test]
fn register_register_arithmetic() {
    let mut h = hart(&[
        e::add(3, 1, 2),
        e::sub(4, 2, 1),
        e::sll(5, 1, 6), // x6 = 33 → shift by 1
        e::slt(7, 8, 9), // -1 < 1 signed
        e::sltu(10, 8, 9),
        e::sltu(11, 0, 9), // snez
        e::xor_(12, 1, 2),
        e::srl(13, 8, 6),
        e::sra(14, 8, 6),
        e::or_(15, 1, 2),
        e::and_(16, 1, 2),
    ]);
    h.set_reg(1, 0x7FFF_FFFF);
    h.set_reg(2, 0x0000_0001);
    h.set_reg(6, 33);
    h.set_reg(8, 0xFFFF_FFFF);
    h.set_reg(9, 1);
    let r = retire_n(&mut h, 11);
    let writes: Vec<_> = r.iter().map(|r| r.rd_write).collect();
    assert_eq!(
        writes,
        vec![
            wrote(3, 0x8000_0000), // overflow wraps, no trap (§2.4)
            wrote(4, 0x8000_0002), // 1 - 0x7FFF_FFFF
            wrote(5, 0xFFFF_FFFE),
            wrote(7, 1),
            wrote(10, 0),
            wrote(11, 1),
            wrote(12, 0x7FFF_FFFE),
            wrote(13, 0x7FFF_FFFF),
            wrote(14, 0xFFFF_FFFF),
            wrote(15, 0x7FFF_FFFF),
            wrote(16, 1),
        ]
    );
}

/// Unprivileged §2.1: x0 is hardwired to zero; a write to it is not
/// reported as a register write.
#[test]
fn x0_is_hardwired_to_zero() {
    let mut h = hart(&[e::addi(0, 0, 5), e::add(1, 0, 0)]);
    let r = retire_n(&mut h, 2);
    assert_eq!(r[0].rd_write, None);
    assert_eq!(r[0].trap, None);
    assert_eq!(h.reg(0), 0);
    assert_eq!(r[1].rd_write, wrote(1, 0));
}

/// Unprivileged §2.5.1: JAL writes pc + 4 and jumps pc-relative; JALR
/// adds rs1 and clears bit 0 of the sum, and reads rs1 before writing rd.
#[test]
fn jal_and_jalr() {
    let mut program = vec![e::nop(); 0x60];
    program[0] = e::jal(1, 0x40);
    program[0x40 / 4] = e::jalr(3, 2, 3); // x2 = 0x101 → (0x104) & !1
    program[0x104 / 4] = e::jalr(1, 1, 0); // rd == rs1: jump to old x1
    let mut h = hart(&program);
    h.set_reg(2, 0x101);
    let r = retire(&mut h);
    assert_eq!((r.rd_write, h.pc()), (wrote(1, 4), 0x40));
    let r = retire(&mut h);
    assert_eq!((r.rd_write, h.pc()), (wrote(3, 0x44), 0x104));
    let r = retire(&mut h);
    assert_eq!((r.rd_write, h.pc()), (wrote(1, 0x108), 4));
}

/// Unprivileged §2.5.2: each branch compares as its mnemonic says, with
/// x1 = -1 (0xFFFF_FFFF) and x2 = 1.
#[test]
fn conditional_branches() {
    let cases: &[(u32, bool)] = &[
        (e::beq(1, 2, 8), false),
        (e::beq(1, 1, 8), true),
        (e::bne(1, 2, 8), true),
        (e::blt(1, 2, 8), true),   // -1 < 1
        (e::bge(1, 2, 8), false),  // -1 >= 1
        (e::bge(2, 2, 8), true),   // equal
        (e::bltu(1, 2, 8), false), // 0xFFFF_FFFF < 1
        (e::bgeu(1, 2, 8), true),
    ];
    for &(word, taken) in cases {
        let mut h = hart(&[word]);
        h.set_reg(1, 0xFFFF_FFFF);
        h.set_reg(2, 1);
        let r = retire(&mut h);
        assert_eq!(r.trap, None);
        assert_eq!(r.rd_write, None);
        let expected = if taken { 8 } else { 4 };
        assert_eq!(h.pc(), expected, "{}", decode(word).unwrap());
    }
}

/// Unprivileged §2.6: LB/LH sign-extend, LBU/LHU zero-extend, little-endian.
#[test]
fn loads_extend_as_specified() {
    let mut h = hart(&[
        e::lw(2, 1, 0),
        e::lb(3, 1, 0),
        e::lbu(4, 1, 0),
        e::lh(5, 1, 2),
        e::lhu(6, 1, 2),
        e::lb(7, 1, 1),
    ]);
    h.bus_mut()
        .write_image(D + 0x10, &[0x83, 0x72, 0x81, 0x80])
        .unwrap();
    h.set_reg(1, D + 0x10);
    let r = retire_n(&mut h, 6);
    let writes: Vec<_> = r.iter().map(|r| r.rd_write).collect();
    assert_eq!(
        writes,
        vec![
            wrote(2, 0x8081_7283),
            wrote(3, 0xFFFF_FF83),
            wrote(4, 0x0000_0083),
            wrote(5, 0xFFFF_8081),
            wrote(6, 0x0000_8081),
            wrote(7, 0x0000_0072),
        ]
    );
    assert!(r.iter().all(|r| r.mem_write.is_none()));
}

/// Unprivileged §2.6: SB/SH/SW store the low 8/16/32 bits of rs2; the
/// record carries the masked value; negative offsets work.
#[test]
fn stores_write_the_low_bits() {
    let mut h = hart(&[e::sw(2, 1, 0), e::sh(2, 1, 4), e::sb(2, 1, -1)]);
    h.set_reg(1, D + 0x20);
    h.set_reg(2, 0xA1B2_C3D4);
    let r = retire_n(&mut h, 3);
    assert_eq!(
        r.iter().map(|r| r.mem_write).collect::<Vec<_>>(),
        vec![
            Some(MemWrite {
                addr: D + 0x20,
                width: Width::Word,
                value: 0xA1B2_C3D4
            }),
            Some(MemWrite {
                addr: D + 0x24,
                width: Width::Half,
                value: 0xC3D4
            }),
            Some(MemWrite {
                addr: D + 0x1F,
                width: Width::Byte,
                value: 0xD4
            }),
        ]
    );
    assert!(r.iter().all(|r| r.rd_write.is_none()));
    assert_eq!(
        &h.bus().data_ram()[0x1F..0x27],
        &[0xD4, 0xD4, 0xC3, 0xB2, 0xA1, 0xD4, 0xC3, 0x00]
    );
}

/// Unprivileged §2.7 and Chapter 3: FENCE and FENCE.I only advance the PC.
#[test]
fn fences_are_no_ops() {
    let mut h = hart(&[e::fence(0xf, 0xf), e::fence_i()]);
    let before = *h.regs();
    let r = retire_n(&mut h, 2);
    assert!(r
        .iter()
        .all(|r| r.rd_write.is_none() && r.mem_write.is_none() && r.trap.is_none()));
    assert_eq!(*h.regs(), before);
    assert_eq!(h.pc(), 8);
}

// ---------------------------------------------------------------- RV32M

/// Unprivileged §7.1: MUL gives the low word; MULH/MULHSU/MULHU the high
/// word of the 64-bit product with the stated signedness.
#[test]
fn multiplication() {
    let run = |insn: fn(u8, u8, u8) -> u32, a: u32, b: u32| {
        let mut h = hart(&[insn(3, 1, 2)]);
        h.set_reg(1, a);
        h.set_reg(2, b);
        retire(&mut h).rd_write.map_or(0, |w| w.value)
    };
    // 0x1234_5678 × 0x9ABC_DEF0 = 0x0B00_EA4E_242D_2080 (unsigned).
    assert_eq!(run(e::mul, 0x1234_5678, 0x9ABC_DEF0), 0x242D_2080);
    assert_eq!(run(e::mulhu, 0x1234_5678, 0x9ABC_DEF0), 0x0B00_EA4E);
    // (-1) × (-1) = 1: high word 0.
    assert_eq!(run(e::mulh, 0xFFFF_FFFF, 0xFFFF_FFFF), 0);
    // (-2^31) × (-2^31) = 2^62: high word 0x4000_0000.
    assert_eq!(run(e::mulh, 0x8000_0000, 0x8000_0000), 0x4000_0000);
    // (-1) × (2^32 - 1) unsigned = -(2^32 - 1): high word all ones.
    assert_eq!(run(e::mulhsu, 0xFFFF_FFFF, 0xFFFF_FFFF), 0xFFFF_FFFF);
    // 2 × (2^32 - 1) unsigned = 0x1_FFFF_FFFE.
    assert_eq!(run(e::mulhsu, 2, 0xFFFF_FFFF), 1);
    // (2^32 - 1)^2 = 0xFFFF_FFFE_0000_0001.
    assert_eq!(run(e::mulhu, 0xFFFF_FFFF, 0xFFFF_FFFF), 0xFFFF_FFFE);
    assert_eq!(run(e::mul, 0xFFFF_FFFF, 0xFFFF_FFFF), 1);
}

/// Unprivileged §7.2, Table 7.1 ("Semantics for division by zero and
/// division overflow"), and rounding towards zero with the remainder
/// taking the dividend's sign.
#[test]
fn division_corner_cases_follow_table_7_1() {
    let run = |insn: fn(u8, u8, u8) -> u32, a: u32, b: u32| {
        let mut h = hart(&[insn(3, 1, 2)]);
        h.set_reg(1, a);
        h.set_reg(2, b);
        let r = retire(&mut h);
        assert_eq!(r.trap, None, "division never traps");
        r.rd_write.map_or(0, |w| w.value)
    };
    let x = 0x1234_5678;
    // Division by zero: DIVU → 2^L − 1, REMU → x, DIV → −1, REM → x.
    assert_eq!(run(e::divu, x, 0), 0xFFFF_FFFF);
    assert_eq!(run(e::remu, x, 0), x);
    assert_eq!(run(e::div, x, 0), 0xFFFF_FFFF);
    assert_eq!(run(e::rem, x, 0), x);
    assert_eq!(run(e::div, 0x8000_0000, 0), 0xFFFF_FFFF);
    assert_eq!(run(e::rem, 0x8000_0000, 0), 0x8000_0000);
    // Overflow (signed only): −2^(L−1) / −1 → −2^(L−1), REM → 0.
    assert_eq!(run(e::div, 0x8000_0000, 0xFFFF_FFFF), 0x8000_0000);
    assert_eq!(run(e::rem, 0x8000_0000, 0xFFFF_FFFF), 0);
    // Unsigned forms of the same operands are ordinary: 2^31 / (2^32−1) = 0.
    assert_eq!(run(e::divu, 0x8000_0000, 0xFFFF_FFFF), 0);
    assert_eq!(run(e::remu, 0x8000_0000, 0xFFFF_FFFF), 0x8000_0000);
    // −7 / 2 = −3 (towards zero), −7 % 2 = −1 (sign of the dividend).
    assert_eq!(run(e::div, -7i32 as u32, 2), -3i32 as u32);
    assert_eq!(run(e::rem, -7i32 as u32, 2), -1i32 as u32);
    assert_eq!(run(e::div, 7, -2i32 as u32), -3i32 as u32);
    assert_eq!(run(e::rem, 7, -2i32 as u32), 1);
    assert_eq!(run(e::divu, 7, 2), 3);
    assert_eq!(run(e::remu, 7, 2), 1);
}

// ---------------------------------------------------------------- Zicsr

/// Unprivileged §9.1: CSRRW swaps; CSRRS/CSRRC set/clear the mask bits;
/// the immediate forms use the zero-extended 5-bit uimm.
#[test]
fn csr_read_modify_write() {
    let mut h = hart(&[
        e::csrrw(2, csr::MSCRATCH, 1),        // x2 = 0, mscratch = 0xF0F0
        e::csrrs(3, csr::MSCRATCH, 4),        // x3 = 0xF0F0, |= 0x000F
        e::csrrc(5, csr::MSCRATCH, 6),        // x5 = 0xF0FF, &= !0x00F0
        e::csrrwi(7, csr::MSCRATCH, 31),      // x7 = 0xF00F, = 31
        e::csrrsi(8, csr::MSCRATCH, 16),      // x8 = 31, |= 16 (no change)
        e::csrrci(9, csr::MSCRATCH, 0b00011), // x9 = 31, &= !3
        e::csrrs(10, csr::MSCRATCH, 0),       // read: 28
    ]);
    h.set_reg(1, 0xF0F0);
    h.set_reg(4, 0x000F);
    h.set_reg(6, 0x00F0);
    let r = retire_n(&mut h, 7);
    let writes: Vec<_> = r.iter().map(|r| r.rd_write).collect();
    assert_eq!(
        writes,
        vec![
            wrote(2, 0),
            wrote(3, 0xF0F0),
            wrote(5, 0xF0FF),
            wrote(7, 0xF00F),
            wrote(8, 31),
            wrote(9, 31),
            wrote(10, 28),
        ]
    );
}

/// Privileged §3.1.1–§3.1.5: misa reports RV32 with I and M; the ID
/// registers read as documented.
#[test]
fn machine_information_registers() {
    let mut h = Hart::with_hart_id(HarvardBus::reference(), 3);
    h.bus_mut()
        .write_words(
            0,
            &[
                e::csrrs(1, csr::MISA, 0),
                e::csrrs(2, csr::MHARTID, 0),
                e::csrrs(3, csr::MVENDORID, 0),
                e::csrrs(4, csr::MARCHID, 0),
                e::csrrs(5, csr::MIMPID, 0),
                e::csrrs(6, csr::MSTATUS, 0),
            ],
        )
        .unwrap();
    let r = retire_n(&mut h, 6);
    // MXL = 1 in bits 31:30; extension bits 'I' (8) and 'M' (12).
    assert_eq!(r[0].rd_write, wrote(1, 0x4000_1100));
    assert_eq!(r[1].rd_write, wrote(2, 3));
    assert_eq!(r[2].rd_write, wrote(3, 0));
    assert_eq!(r[3].rd_write, wrote(4, 0));
    assert_eq!(r[4].rd_write, wrote(5, 0));
    // Reset: MIE = MPIE = 0, MPP = M (0b11 << 11).
    assert_eq!(r[5].rd_write, wrote(6, 0x1800));
}

/// Privileged §2.1: a write to a read-only CSR (bits 11:10 = 0b11) is
/// illegal, but CSRRS/CSRRC with rs1 = x0 and CSRRSI/CSRRCI with uimm = 0
/// do not write and are legal; a missing CSR is illegal even to read.
#[test]
fn csr_access_rules() {
    let read_cycle = e::csrrs(1, csr::CYCLE, 0);
    let read_cycle_imm = e::csrrsi(1, csr::CYCLE, 0);
    let write_cycle = e::csrrw(0, csr::CYCLE, 1);
    let set_cycle = e::csrrs(0, csr::CYCLE, 1);
    let write_hartid = e::csrrwi(0, csr::MHARTID, 1);
    let read_missing = e::csrrs(1, 0x7C0, 0);
    let read_time = e::csrrs(1, 0xC01, 0); // time: memory-mapped on weft
    for word in [read_cycle, read_cycle_imm] {
        let mut h = hart_with_handler(&[word]);
        assert_eq!(retire(&mut h).trap, None);
    }
    for word in [
        write_cycle,
        set_cycle,
        write_hartid,
        read_missing,
        read_time,
    ] {
        let mut h = hart_with_handler(&[word]);
        h.set_reg(1, 5);
        let r = retire(&mut h);
        assert_eq!(r.trap, exception(Exception::IllegalInstruction, word));
        assert_eq!(r.rd_write, None);
        assert_eq!(h.pc(), HANDLER);
    }
}

/// Privileged §3.1.6, §3.1.7, §3.1.9, §3.1.14: WARL fields keep only legal
/// values.
#[test]
fn csr_warl_fields() {
    let mut h = hart(&[
        e::csrrw(0, csr::MSTATUS, 1),
        e::csrrs(2, csr::MSTATUS, 0),
        e::csrrw(0, csr::MEPC, 1),
        e::csrrs(3, csr::MEPC, 0),
        e::csrrw(0, csr::MTVEC, 4),
        e::csrrs(5, csr::MTVEC, 0),
        e::csrrw(0, csr::MIE, 1),
        e::csrrs(6, csr::MIE, 0),
        e::csrrw(0, csr::MIP, 1),
        e::csrrs(7, csr::MIP, 0),
        e::csrrw(0, csr::MISA, 0),
        e::csrrs(8, csr::MISA, 0),
    ]);
    h.set_reg(1, 0xFFFF_FFFF);
    h.set_reg(4, 0x0000_0103); // MODE = 3 (reserved)
    let r = retire_n(&mut h, 12);
    // mstatus: only MIE, MPIE writable; MPP reads M.
    assert_eq!(
        r[1].rd_write,
        wrote(2, MSTATUS_MIE | MSTATUS_MPIE | MSTATUS_MPP)
    );
    // mepc[1:0] are zero with IALIGN = 32.
    assert_eq!(r[3].rd_write, wrote(3, 0xFFFF_FFFC));
    // mtvec MODE keeps bit 0 only: 3 → 1 (vectored).
    assert_eq!(r[5].rd_write, wrote(5, 0x0000_0101));
    // mie: MSIE, MTIE, MEIE only.
    assert_eq!(r[7].rd_write, wrote(6, 0x888));
    // mip: MSIP, MTIP, MEIP are read-only; no line is asserted.
    assert_eq!(r[9].rd_write, wrote(7, 0));
    assert_eq!(r[11].rd_write, wrote(8, csr::MISA_VALUE));
}

/// Privileged §3.1.10 / Unprivileged §10.1: minstret counts retired
/// instructions (not those that trap), mcycle counts steps, and a CSR
/// write to a counter takes precedence over that instruction's increment.
#[test]
fn counters() {
    let mut program = vec![e::nop(); (HANDLER / 4 + 6) as usize];
    program[..4].copy_from_slice(&[
        e::nop(),
        e::csrrs(1, csr::INSTRET, 0), // one retired before it: 1
        e::csrrs(2, csr::CYCLE, 0),   // two steps before it: 2
        e::ecall(),                   // traps: not retired
    ]);
    program[(HANDLER / 4) as usize..].copy_from_slice(&[
        e::csrrs(3, csr::MINSTRET, 0), // nop and two csrrs retired: 3
        e::csrrw(0, csr::MINSTRET, 4), // minstret = 100, not 101
        e::csrrs(5, csr::INSTRETH, 0), // 100 >> 32 = 0
        e::csrrs(6, csr::MINSTRET, 0), // 101
        e::csrrw(0, csr::MCYCLEH, 7),  // mcycle high word = 1
        e::csrrs(8, csr::CYCLEH, 0),   // 1
    ]);
    let mut h = hart_with_handler(&program);
    h.set_reg(4, 100);
    h.set_reg(7, 1);
    retire_n(&mut h, 4);
    assert_eq!(h.reg(1), 1);
    assert_eq!(h.reg(2), 2);
    assert_eq!(h.csrs().minstret(), 3, "ecall does not retire");
    assert_eq!(h.csrs().mcycle(), 4, "but it takes a step");
    retire_n(&mut h, 6);
    assert_eq!(h.reg(3), 3);
    assert_eq!(h.reg(5), 0);
    assert_eq!(h.reg(6), 101);
    assert_eq!(h.reg(8), 1);
    assert_eq!(h.csrs().mcycle() >> 32, 1);
}

// ---------------------------------------------------------------- traps

/// Privileged §3.1.15–§3.1.16: an illegal instruction traps to mtvec with
/// mcause = 2, mtval = the instruction bits, mepc = its address; no other
/// state changes (precise).
#[test]
fn illegal_instruction_trap() {
    for word in [0xFFFF_FFFF, 0x0000_0000, 0x0205_1513, 0x1020_0073] {
        let mut h = hart_with_handler(&[e::nop(), word]);
        retire(&mut h);
        let regs = *h.regs();
        let r = retire(&mut h);
        assert_eq!(r.pc, 4);
        assert_eq!(r.instruction, Some(word));
        assert_eq!(r.trap, exception(Exception::IllegalInstruction, word));
        assert_eq!((r.rd_write, r.mem_write), (None, None));
        assert_eq!(*h.regs(), regs);
        assert_eq!(h.pc(), HANDLER);
        assert_eq!(h.csrs().mepc(), 4);
        assert_eq!(h.csrs().mcause(), 2);
        assert_eq!(h.csrs().mtval(), word);
    }
}

/// Privileged §3.3.1–§3.3.2: ECALL traps with mcause 11 and mepc at the
/// ECALL; the handler advances mepc and MRET returns after it. Trap entry
/// stacks MIE into MPIE and clears MIE; MRET restores it and sets MPIE.
#[test]
fn ecall_mret_round_trip() {
    let mut program = vec![e::nop(); (HANDLER / 4 + 4) as usize];
    program[0] = e::csrrsi(0, csr::MSTATUS, MSTATUS_MIE as u8);
    program[1] = e::ecall();
    program[2] = e::addi(1, 0, 42);
    let h0 = (HANDLER / 4) as usize;
    program[h0] = e::csrrs(2, csr::MEPC, 0);
    program[h0 + 1] = e::addi(2, 2, 4);
    program[h0 + 2] = e::csrrw(0, csr::MEPC, 2);
    program[h0 + 3] = e::mret();
    let mut h = hart_with_handler(&program);
    retire(&mut h);
    let r = retire(&mut h);
    assert_eq!(r.trap, exception(Exception::EnvironmentCallFromMMode, 0));
    assert_eq!(h.csrs().mcause(), 11);
    assert_eq!(h.csrs().mepc(), 4);
    assert_eq!(h.csrs().mstatus(), MSTATUS_MPIE | MSTATUS_MPP);
    retire_n(&mut h, 3);
    let r = retire(&mut h);
    assert_eq!(r.trap, None);
    assert_eq!(h.pc(), 8);
    assert_eq!(h.csrs().mstatus(), MSTATUS_MIE | MSTATUS_MPIE | MSTATUS_MPP);
    retire(&mut h);
    assert_eq!(h.reg(1), 42);
}

/// Privileged §3.1.6.1 and §3.3.2: trap entry copies MIE into MPIE and
/// clears MIE; MRET copies MPIE into MIE and sets MPIE — for both values
/// of MIE.
#[test]
fn trap_entry_and_mret_stack_the_interrupt_enable() {
    for mie_before in [false, true] {
        let mut program = vec![e::nop(); (HANDLER / 4 + 1) as usize];
        program[0] = e::ecall();
        program[(HANDLER / 4) as usize] = e::mret();
        let mut h = hart_with_handler(&program);
        let mstatus = if mie_before { MSTATUS_MIE } else { 0 };
        h.csrs_mut().write(csr::MSTATUS, mstatus).unwrap();
        retire(&mut h);
        let mpie = if mie_before { MSTATUS_MPIE } else { 0 };
        assert_eq!(h.csrs().mstatus(), mpie | MSTATUS_MPP);
        retire(&mut h);
        assert_eq!(h.pc(), 0, "mret returns to mepc, the ecall itself");
        assert_eq!(h.csrs().mstatus(), mstatus | MSTATUS_MPIE | MSTATUS_MPP);
    }
}

/// Privileged §3.3.1 and §3.1.16: EBREAK traps with mcause 3 and mtval =
/// its own address.
#[test]
fn ebreak_trap() {
    let mut h = hart_with_handler(&[e::nop(), e::ebreak()]);
    retire(&mut h);
    let r = retire(&mut h);
    assert_eq!(r.trap, exception(Exception::Breakpoint, 4));
    assert_eq!(
        (h.pc(), h.csrs().mepc(), h.csrs().mcause()),
        (HANDLER, 4, 3)
    );
}

/// Unprivileged §2.6 (weft traps misaligned accesses): mcause 4/6,
/// mtval = the address, rd and memory unchanged.
#[test]
fn misaligned_loads_and_stores_trap() {
    let cases = [
        (e::lw(2, 1, 2), Exception::LoadAddressMisaligned, D + 2),
        (e::lh(2, 1, 1), Exception::LoadAddressMisaligned, D + 1),
        (e::lhu(2, 1, 3), Exception::LoadAddressMisaligned, D + 3),
        (e::sw(3, 1, 1), Exception::StoreAddressMisaligned, D + 1),
        (e::sh(3, 1, 3), Exception::StoreAddressMisaligned, D + 3),
    ];
    for (word, cause, addr) in cases {
        let mut h = hart_with_handler(&[word]);
        h.set_reg(1, D);
        h.set_reg(2, 0x5555);
        h.set_reg(3, 0xFFFF_FFFF);
        let r = retire(&mut h);
        assert_eq!(r.trap, exception(cause, addr), "{}", decode(word).unwrap());
        assert_eq!((r.rd_write, r.mem_write), (None, None));
        assert_eq!(h.reg(2), 0x5555);
        assert!(h.bus().data_ram()[..8].iter().all(|&b| b == 0));
        assert_eq!(h.csrs().mtval(), addr);
    }
    // Byte accesses are always aligned.
    let mut h = hart_with_handler(&[e::lb(2, 1, 3), e::sb(3, 1, 1)]);
    h.set_reg(1, D);
    assert!(retire_n(&mut h, 2).iter().all(|r| r.trap.is_none()));
}

/// Unprivileged §2.5: a taken branch or a jump to an address that is not
/// 4-byte aligned raises instruction-address-misaligned on the branch or
/// jump, mtval = target, rd unwritten; a not-taken branch does not trap.
#[test]
fn misaligned_jump_targets_trap_on_the_jump() {
    let cases = [
        (e::jal(1, 6), 6),
        (e::jalr(1, 2, 2), 0x42), // x2 = 0x40
        (e::jalr(1, 2, 3), 0x42), // (0x43) & !1
        (e::beq(0, 0, 0x22), 0x22),
    ];
    for (word, target) in cases {
        let mut h = hart_with_handler(&[word]);
        h.set_reg(2, 0x40);
        let r = retire(&mut h);
        assert_eq!(
            r.trap,
            exception(Exception::InstructionAddressMisaligned, target),
            "{}",
            decode(word).unwrap()
        );
        assert_eq!(r.rd_write, None);
        assert_eq!(h.reg(1), 0);
        assert_eq!(h.csrs().mepc(), 0);
    }
    let mut h = hart_with_handler(&[e::bne(0, 0, 0x22)]);
    assert_eq!(retire(&mut h).trap, None);
    assert_eq!(h.pc(), 4);
}

/// Access faults (mcause 1/5/7, mtval = address) for addresses the
/// Harvard bus does not decode on that port.
#[test]
fn access_faults() {
    let unmapped = 0x2000_0000;
    let cases = [
        (e::lw(2, 1, 0), unmapped, Exception::LoadAccessFault),
        (e::sw(2, 1, 0), unmapped, Exception::StoreAccessFault),
        // Instruction RAM is not loaded from; the boot ROM is not stored to.
        (e::lw(2, 1, 0), 0x40, Exception::LoadAccessFault),
        (
            e::sb(2, 1, 0),
            weft_regs::BOOT_ROM_BASE + 0x40,
            Exception::StoreAccessFault,
        ),
        // Just past the end of data RAM.
        (
            e::lbu(2, 1, 0),
            D + DATA_RAM_SIZE,
            Exception::LoadAccessFault,
        ),
    ];
    for (word, addr, cause) in cases {
        let mut h = hart_with_handler(&[word]);
        h.set_reg(1, addr);
        h.set_reg(2, 0x77);
        let r = retire(&mut h);
        assert_eq!(r.trap, exception(cause, addr), "{}", decode(word).unwrap());
        assert_eq!((r.rd_write, r.mem_write), (None, None));
        assert_eq!(h.reg(2), 0x77);
    }
    // Fetch past the end of instruction RAM, and from data RAM.
    for target in [INSTRUCTION_RAM_SIZE, D] {
        let mut h = hart_with_handler(&[e::jalr(0, 1, 0)]);
        h.set_reg(1, target);
        retire(&mut h);
        let r = retire(&mut h);
        assert_eq!(r.pc, target);
        assert_eq!(r.instruction, None);
        assert_eq!(r.trap, exception(Exception::InstructionAccessFault, target));
        assert_eq!(h.csrs().mepc(), target);
        assert_eq!(h.pc(), HANDLER);
    }
}

/// Privileged §3.1.7: in vectored mode exceptions still go to BASE.
#[test]
fn vectored_mode_sends_exceptions_to_base() {
    let mut h = hart(&[e::ecall()]);
    h.csrs_mut().write(csr::MTVEC, 0x200 | 1).unwrap();
    retire(&mut h);
    assert_eq!(h.pc(), 0x200);
}

// ---------------------------------------------------------------- interrupts

/// A hart whose program is all NOPs, with interrupts globally enabled and
/// `mie` = `enabled`, and `mtvec` = `mtvec`.
fn interruptible(enabled: u32, mtvec: u32) -> Hart {
    let mut h = hart(&vec![e::nop(); 0x100]);
    let c = h.csrs_mut();
    c.write(csr::MTVEC, mtvec).unwrap();
    c.write(csr::MIE, enabled).unwrap();
    c.write(csr::MSTATUS, MSTATUS_MIE).unwrap();
    h
}

/// Privileged §3.1.7 and §3.1.9: an enabled, pending interrupt is taken
/// between instructions; in vectored mode the PC is BASE + 4 × cause;
/// mepc = the preempted instruction; mtval = 0.
#[test]
fn timer_interrupt_in_vectored_mode() {
    let mut h = interruptible(Interrupt::MachineTimer.mask(), 0x300 | 1);
    retire_n(&mut h, 2);
    h.set_interrupt_pending(Interrupt::MachineTimer, true);
    let r = retire(&mut h);
    assert_eq!(r.pc, 8);
    assert_eq!(r.instruction, None);
    assert_eq!((r.rd_write, r.mem_write), (None, None));
    assert_eq!(r.trap, interrupt(Interrupt::MachineTimer));
    assert_eq!(h.pc(), 0x300 + 4 * 7);
    assert_eq!(h.csrs().mepc(), 8);
    assert_eq!(h.csrs().mcause(), 0x8000_0007);
    assert_eq!(h.csrs().mtval(), 0);
    assert_eq!(h.csrs().mstatus(), MSTATUS_MPIE | MSTATUS_MPP);
    assert_eq!(h.csrs().minstret(), 2, "an interrupt entry retires nothing");
    // MIE is now clear: the still-pending line is not taken again.
    let r = retire(&mut h);
    assert_eq!((r.pc, r.trap), (0x31C, None));
}

/// Direct mode: every trap, interrupt or not, goes to BASE.
#[test]
fn external_interrupt_in_direct_mode() {
    let mut h = interruptible(Interrupt::MachineExternal.mask(), 0x300);
    h.set_interrupt_pending(Interrupt::MachineExternal, true);
    let r = retire(&mut h);
    assert_eq!(r.trap, interrupt(Interrupt::MachineExternal));
    assert_eq!(h.pc(), 0x300);
    assert_eq!(h.csrs().mcause(), 0x8000_000B);
}

/// Privileged §3.1.9: simultaneous machine interrupts are taken in the
/// order MEI, MSI, MTI.
#[test]
fn interrupt_priority_is_external_software_timer() {
    let all = csr::INTERRUPT_BITS;
    let mut h = interruptible(all, 0x300 | 1);
    for irq in [
        Interrupt::MachineTimer,
        Interrupt::MachineSoftware,
        Interrupt::MachineExternal,
    ] {
        h.set_interrupt_pending(irq, true);
    }
    let mut taken = Vec::new();
    for _ in 0..3 {
        let r = retire(&mut h);
        let Some(TrapTaken {
            cause: TrapCause::Interrupt(irq),
            ..
        }) = r.trap
        else {
            panic!("expected an interrupt, got {r:?}");
        };
        taken.push(irq);
        // The handler acknowledges the source and re-enables interrupts.
        h.set_interrupt_pending(irq, false);
        h.csrs_mut().write(csr::MSTATUS, MSTATUS_MIE).unwrap();
    }
    assert_eq!(
        taken,
        vec![
            Interrupt::MachineExternal,
            Interrupt::MachineSoftware,
            Interrupt::MachineTimer
        ]
    );
    // mip reflects the lines through the CSR too.
    h.set_interrupt_pending(Interrupt::MachineSoftware, true);
    assert_eq!(h.csrs().read(csr::MIP), Ok(1 << 3));
}

/// Privileged §3.1.6.1 and §3.1.9: an interrupt is taken only if its mie
/// bit and mstatus.MIE are both set.
#[test]
fn interrupts_are_masked() {
    // Pending, but mie has only MEIE.
    let mut h = interruptible(Interrupt::MachineExternal.mask(), 0x300);
    h.set_interrupt_pending(Interrupt::MachineTimer, true);
    h.set_interrupt_pending(Interrupt::MachineSoftware, true);
    assert!(retire_n(&mut h, 4).iter().all(|r| r.trap.is_none()));
    // Enabled in mie, but mstatus.MIE clear.
    let mut h = interruptible(Interrupt::MachineTimer.mask(), 0x300);
    h.csrs_mut().write(csr::MSTATUS, 0).unwrap();
    h.set_interrupt_pending(Interrupt::MachineTimer, true);
    assert!(retire_n(&mut h, 4).iter().all(|r| r.trap.is_none()));
    // Setting MIE with csrrsi: the interrupt is taken before the next
    // instruction, with mepc = that instruction.
    let mut h = hart(&[e::csrrsi(0, csr::MSTATUS, MSTATUS_MIE as u8), e::nop()]);
    h.csrs_mut()
        .write(csr::MIE, Interrupt::MachineTimer.mask())
        .unwrap();
    h.set_interrupt_pending(Interrupt::MachineTimer, true);
    assert_eq!(retire(&mut h).trap, None);
    let r = retire(&mut h);
    assert_eq!(r.trap, interrupt(Interrupt::MachineTimer));
    assert_eq!(h.csrs().mepc(), 4);
}

/// Privileged §3.3.3: WFI retires, the hart idles until an interrupt is
/// pending and enabled in mie; with mstatus.MIE set the interrupt is taken
/// with mepc after the WFI.
#[test]
fn wfi_wakes_on_an_enabled_interrupt_and_takes_it() {
    let mut h = interruptible(Interrupt::MachineTimer.mask(), 0x300);
    h.bus_mut()
        .write_words(0, &[e::wfi(), e::addi(1, 0, 1)])
        .unwrap();
    let r = retire(&mut h);
    assert_eq!((r.trap, h.pc()), (None, 4));
    assert!(h.is_waiting());
    let cycles = h.csrs().mcycle();
    assert_eq!(h.step(), Step::Idle);
    assert_eq!(h.step(), Step::Idle);
    assert_eq!(h.csrs().mcycle(), cycles + 2, "idle steps count cycles");
    assert_eq!(h.csrs().minstret(), 1);
    // A pending but disabled interrupt does not wake it.
    h.set_interrupt_pending(Interrupt::MachineExternal, true);
    assert_eq!(h.step(), Step::Idle);
    assert_eq!(
        h.run(100),
        RunSummary {
            steps: 0,
            stop: RunStop::Idle
        }
    );
    h.set_interrupt_pending(Interrupt::MachineTimer, true);
    let r = retire(&mut h);
    assert_eq!(r.trap, interrupt(Interrupt::MachineTimer));
    assert_eq!(h.csrs().mepc(), 4);
    assert!(!h.is_waiting());
}

/// Privileged §3.3.3: with mstatus.MIE clear, an enabled pending interrupt
/// still ends the wait, and execution continues after the WFI.
#[test]
fn wfi_resumes_without_taking_a_globally_disabled_interrupt() {
    let mut h = hart(&[e::wfi(), e::addi(1, 0, 1)]);
    h.csrs_mut()
        .write(csr::MIE, Interrupt::MachineSoftware.mask())
        .unwrap();
    retire(&mut h);
    assert_eq!(h.step(), Step::Idle);
    h.set_interrupt_pending(Interrupt::MachineSoftware, true);
    let r = retire(&mut h);
    assert_eq!((r.pc, r.trap, r.rd_write), (4, None, wrote(1, 1)));
}

/// The retirement record of a program that mixes every kind of step.
#[test]
fn retirement_records_are_complete() {
    let program = [e::addi(1, 0, 7), e::sw(1, 2, 0), e::lw(3, 2, 0), e::ecall()];
    let mut h = hart_with_handler(&program);
    h.set_reg(2, D);
    let r = retire_n(&mut h, 4);
    assert_eq!(
        r,
        vec![
            Retirement {
                pc: 0,
                instruction: Some(program[0]),
                rd_write: wrote(1, 7),
                mem_write: None,
                trap: None
            },
            Retirement {
                pc: 4,
                instruction: Some(program[1]),
                rd_write: None,
                mem_write: Some(MemWrite {
                    addr: D,
                    width: Width::Word,
                    value: 7
                }),
                trap: None
            },
            Retirement {
                pc: 8,
                instruction: Some(program[2]),
                rd_write: wrote(3, 7),
                mem_write: None,
                trap: None
            },
            Retirement {
                pc: 12,
                instruction: Some(program[3]),
                rd_write: None,
                mem_write: None,
                trap: exception(Exception::EnvironmentCallFromMMode, 0)
            },
        ]
    );
}

#[test]
fn reset_keeps_memory_and_interrupt_lines() {
    let mut h = hart(&[e::addi(1, 0, 1)]);
    retire(&mut h);
    h.set_interrupt_pending(Interrupt::MachineTimer, true);
    h.reset(0);
    assert_eq!((h.pc(), h.reg(1), h.csrs().minstret()), (0, 0, 0));
    assert!(h.interrupt_pending(Interrupt::MachineTimer));
    retire(&mut h);
    assert_eq!(h.reg(1), 1);
}

// ---------------------------------------------------------------- random streams

/// One slot of a random program: a valid instruction or any 32-bit word.
fn any_word() -> impl Strategy<Value = u32> {
    prop_oneof![
        8 => any_instruction().prop_map(|i| encode(&i)),
        1 => any::<u32>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Random instruction streams (valid encodings with some raw words),
    /// random registers — half of them pointing into data RAM — and
    /// interrupt lines toggling at random never panic the ISS, and every
    /// step keeps the architectural invariants: x0 = 0, the PC stays
    /// aligned, and a trapping step writes nothing.
    #[test]
    fn random_streams_never_panic(
        words in prop::collection::vec(any_word(), 1..128),
        regs in prop::collection::vec(any::<u32>(), 31),
        in_data in prop::collection::vec(any::<bool>(), 31),
        mtvec in (0u32..0x80).prop_map(|w| w * 4),
        vectored in any::<bool>(),
        irqs in prop::collection::vec((0usize..40, 0usize..3, any::<bool>()), 0..8),
    ) {
        let mut h = hart(&words);
        for (i, (&v, &d)) in regs.iter().zip(&in_data).enumerate() {
            let v = if d { D + (v % DATA_RAM_SIZE) } else { v };
            h.set_reg(i as u8 + 1, v);
        }
        h.csrs_mut().write(csr::MTVEC, mtvec | u32::from(vectored)).unwrap();
        h.csrs_mut().write(csr::MIE, csr::INTERRUPT_BITS).unwrap();
        for n in 0..300usize {
            for &(when, which, level) in &irqs {
                if when == n % 40 {
                    h.set_interrupt_pending(Interrupt::BY_PRIORITY[which], level);
                }
            }
            match h.step() {
                Step::Idle => {
                    // Wake it so the stream keeps running.
                    h.set_interrupt_pending(Interrupt::MachineTimer, true);
                }
                Step::Retired(r) => {
                    if r.trap.is_some() {
                        prop_assert_eq!(r.rd_write, None);
                        prop_assert_eq!(r.mem_write, None);
                    }
                    if let Some(w) = r.rd_write {
                        prop_assert_ne!(w.rd, 0);
                    }
                }
            }
            prop_assert_eq!(h.reg(0), 0);
            prop_assert_eq!(h.pc() % 4, 0);
        }
    }
}
