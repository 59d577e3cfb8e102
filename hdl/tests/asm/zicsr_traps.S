/* Zicsr (Unprivileged 20191213 §9) on mscratch, the counters, and the
   machine-mode traps of Privileged 20211203 §3.1.6, §3.1.14-§3.1.17,
   §3.3.1: ecall, ebreak, illegal instructions, misaligned accesses and
   mret. The handler records mcause in x20, mepc in x21, mtval in x22,
   mstatus in x23, and returns past the trapping instruction. */
#include "weft_test.h"

#define MCAUSE_ILLEGAL 2
#define MCAUSE_BREAKPOINT 3
#define MCAUSE_LOAD_MISALIGNED 4
#define MCAUSE_STORE_MISALIGNED 6
#define MCAUSE_ECALL_M 11

/* RESULT = x20 - the address of label `at` (0 when mepc is `at`). */
#define MEPC_OFFSET(at) \
    la x15, at;         \
    sub RESULT, x21, x15;

    .data
    .align 2
word:
    .word 0x01020304

PROGRAM_START
    la t0, handler
    csrw mtvec, t0
    /* CSRRW swaps; CSRRS and CSRRC set and clear the bits of rs1 and
       return the old value. */
    li x11, 0x1234
    csrw mscratch, x11
    csrr RESULT, mscratch
    CHECK(1, 0x1234)
    li x11, 0xf000
    csrrs RESULT, mscratch, x11
    CHECK(2, 0x1234)
    csrr RESULT, mscratch
    CHECK(3, 0xf234)
    li x11, 0x0204
    csrrc RESULT, mscratch, x11
    CHECK(4, 0xf234)
    csrr RESULT, mscratch
    CHECK(5, 0xf030)
    li x11, 0x55
    csrrw RESULT, mscratch, x11
    CHECK(6, 0xf030)
    /* The immediate forms take a 5-bit zero-extended immediate. */
    csrrwi RESULT, mscratch, 31
    CHECK(7, 0x55)
    csrrci RESULT, mscratch, 1
    CHECK(8, 31)
    csrrsi RESULT, mscratch, 0
    CHECK(9, 30)
    /* Three instructions retire between the two reads of minstret:
       the first read itself and two nops. */
    csrr x11, minstret
    nop
    nop
    csrr x12, minstret
    sub RESULT, x12, x11
    CHECK(10, 3)
    /* mcycle counts on. */
    csrr x11, mcycle
    csrr x12, mcycle
    sltu RESULT, x11, x12
    CHECK(11, 1)
    /* ecall from M-mode: cause 11, mepc the ecall. */
    li x20, 0
1:  ecall
    mv RESULT, x20
    CHECK(12, MCAUSE_ECALL_M)
    MEPC_OFFSET(1b)
    CHECK(13, 0)
    /* Taking a trap clears MIE into MPIE; mret restores it (§3.1.6.1). */
    csrsi mstatus, 8
2:  ecall
    andi RESULT, x23, 0x88
    CHECK(14, 0x80)
    csrr RESULT, mstatus
    andi RESULT, RESULT, 0x88
    CHECK(15, 0x88)
    csrci mstatus, 8
    /* ebreak: cause 3. */
3:  ebreak
    mv RESULT, x20
    CHECK(16, MCAUSE_BREAKPOINT)
    MEPC_OFFSET(3b)
    CHECK(17, 0)
    /* An all-zero word is an illegal instruction. */
4:  .word 0
    mv RESULT, x20
    CHECK(18, MCAUSE_ILLEGAL)
    MEPC_OFFSET(4b)
    CHECK(19, 0)
    /* A CSR that does not exist is an illegal instruction too. */
5:  csrr x11, 0x7ff
    mv RESULT, x20
    CHECK(20, MCAUSE_ILLEGAL)
    /* A misaligned word load traps with the address in mtval and does
       not write rd. */
    la x5, word
    li x11, 0x77
6:  lw x11, 1(x5)
    mv RESULT, x20
    CHECK(21, MCAUSE_LOAD_MISALIGNED)
    addi x15, x5, 1
    sub RESULT, x22, x15
    CHECK(22, 0)
    mv RESULT, x11
    CHECK(23, 0x77)
    /* A misaligned half store traps and writes nothing. */
7:  sh x11, 3(x5)
    mv RESULT, x20
    CHECK(24, MCAUSE_STORE_MISALIGNED)
    addi x15, x5, 3
    sub RESULT, x22, x15
    CHECK(25, 0)
    lw RESULT, 0(x5)
    CHECK(26, 0x01020304)
    /* A misaligned halfword load at an odd address. */
8:  lhu x11, 1(x5)
    mv RESULT, x20
    CHECK(27, MCAUSE_LOAD_MISALIGNED)
    MEPC_OFFSET(8b)
    CHECK(28, 0)
    j pass

handler:
    csrr x20, mcause
    csrr x21, mepc
    csrr x22, mtval
    csrr x23, mstatus
    addi x24, x21, 4
    csrw mepc, x24
    mret
PROGRAM_END
