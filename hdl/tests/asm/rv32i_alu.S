/* RV32I register-register and register-immediate arithmetic, logic,
   shifts, comparisons, LUI and AUIPC (Unprivileged 20191213 §2.4). */
#include "weft_test.h"

PROGRAM_START
    /* ADD/SUB wrap modulo 2^32; overflow is ignored. */
    TEST_RR(1, add, 2, 1, 1)
    TEST_RR(2, add, 0x80000000, 0x7fffffff, 1)
    TEST_RR(3, add, 0, -1, 1)
    TEST_RR(4, add, 0xfffffffe, 0xffffffff, 0xffffffff)
    TEST_RR(5, sub, 0xffffffff, 0, 1)
    TEST_RR(6, sub, 0x7fffffff, 0x80000000, 1)
    TEST_RR(7, and, 0x0f000f00, 0xff00ff00, 0x0f0f0f0f)
    TEST_RR(8, or, 0xff0fff0f, 0xff00ff00, 0x0f0f0f0f)
    TEST_RR(9, xor, 0xf00ff00f, 0xff00ff00, 0x0f0f0f0f)
    /* SLT signed, SLTU unsigned. */
    TEST_RR(10, slt, 1, -1, 1)
    TEST_RR(11, slt, 0, 1, -1)
    TEST_RR(12, slt, 0, 5, 5)
    TEST_RR(13, sltu, 0, 0xffffffff, 1)
    TEST_RR(14, sltu, 1, 1, 0xffffffff)
    /* Shifts by register take the amount from rs2[4:0]. */
    TEST_RR(15, sll, 0x80000000, 1, 31)
    TEST_RR(16, sll, 2, 1, 33)
    TEST_RR(17, srl, 1, 0x80000000, 31)
    TEST_RR(18, sra, 0xffffffff, 0x80000000, 31)
    TEST_RR(19, sra, 0xf8000000, 0x80000000, 36)
    TEST_RR(20, srl, 0x08000000, 0x80000000, 36)
    /* Immediates are 12 bits, sign-extended. */
    TEST_RI(21, addi, 0xffffffff, 0, -1)
    TEST_RI(22, addi, 2048, 1, 2047)
    TEST_RI(23, addi, 0xfffff800, 0, -2048)
    TEST_RI(24, slti, 1, -1, 0)
    TEST_RI(25, slti, 0, 0, -1)
    /* SLTIU compares with the sign-extended immediate as unsigned. */
    TEST_RI(26, sltiu, 1, 5, -1)
    TEST_RI(27, sltiu, 1, 0, 1)
    TEST_RI(28, sltiu, 0, 1, 1)
    TEST_RI(29, xori, 0xf0f0f0f0, 0x0f0f0f0f, -1)
    TEST_RI(30, andi, 0x678, 0x12345678, 0x7ff)
    TEST_RI(31, ori, 0xfffffe78, 0x12345678, -2048)
    TEST_RI(32, slli, 0x80000000, 1, 31)
    TEST_RI(33, srli, 0xf, 0xffffffff, 28)
    TEST_RI(34, srai, 0xc0000000, 0x80000000, 1)
    TEST_RI(35, srai, 0x7fffffff, 0x7fffffff, 0)
    /* A source that is also the destination is read before it is written. */
    TEST_RR_SAME(36, add, 10, 5)
    TEST_RR_SAME(37, sub, 0, 0x12345678)
    /* LUI places the immediate in bits 31:12 and zeroes the rest. */
    lui RESULT, 0x80000
    CHECK(38, 0x80000000)
    lui RESULT, 0xfffff
    CHECK(39, 0xfffff000)
    /* AUIPC adds the shifted immediate to its own address. */
1:  auipc RESULT, 0
    la x15, 1b
    sub RESULT, RESULT, x15
    CHECK(40, 0)
2:  auipc RESULT, 1
    la x15, 2b
    sub RESULT, RESULT, x15
    CHECK(41, 0x1000)
    /* x0 is hard-wired to zero. */
    addi x0, x0, 5
    mv RESULT, x0
    CHECK(42, 0)
    /* A result is forwarded to the next instruction, and the one after. */
    li x11, 7
    addi x12, x11, 1
    add RESULT, x12, x11
    CHECK(43, 15)
    j pass
PROGRAM_END
