/* The M extension (Unprivileged 20191213 §7): products, quotients
   rounded towards zero, remainders with the dividend's sign, and the
   results §7.2 defines for division by zero and signed overflow. */
#include "weft_test.h"

PROGRAM_START
    TEST_RR(1, mul, 21, 3, 7)
    TEST_RR(2, mul, 0x80000000, 0x80000000, -1)
    TEST_RR(3, mul, 0xfffffffd, -1, 3)
    TEST_RR(4, mulh, 0, -1, -1)
    TEST_RR(5, mulh, 0x40000000, 0x80000000, 0x80000000)
    TEST_RR(6, mulh, 0xffffffff, -1, 1)
    TEST_RR(7, mulhu, 0xfffffffe, 0xffffffff, 0xffffffff)
    TEST_RR(8, mulhu, 0, 0x80000000, 1)
    /* MULHSU: rs1 signed, rs2 unsigned: -1 * (2^32 - 1). */
    TEST_RR(9, mulhsu, 0xffffffff, -1, 0xffffffff)
    TEST_RR(10, mulhsu, 0, 1, 0xffffffff)
    TEST_RR(11, div, 3, 20, 6)
    TEST_RR(12, div, 0xfffffffd, -20, 6)
    TEST_RR(13, div, 0xfffffffd, 20, -6)
    TEST_RR(14, div, 3, -20, -6)
    TEST_RR(15, rem, 2, 20, 6)
    TEST_RR(16, rem, 0xfffffffe, -20, 6)
    TEST_RR(17, rem, 2, 20, -6)
    TEST_RR(18, divu, 3, 20, 6)
    TEST_RR(19, divu, 0x7fffffff, 0xffffffff, 2)
    TEST_RR(20, remu, 1, 0xffffffff, 2)
    /* Division by zero: quotient all ones, remainder the dividend. */
    TEST_RR(21, div, 0xffffffff, 20, 0)
    TEST_RR(22, divu, 0xffffffff, 20, 0)
    TEST_RR(23, rem, 20, 20, 0)
    TEST_RR(24, remu, 0x80000000, 0x80000000, 0)
    /* Signed overflow: -2^31 / -1 is -2^31, remainder 0. */
    TEST_RR(25, div, 0x80000000, 0x80000000, -1)
    TEST_RR(26, rem, 0, 0x80000000, -1)
    /* A product used at once, and a quotient. */
    li x11, 6
    li x12, 7
    mul x13, x11, x12
    addi RESULT, x13, 1
    CHECK(27, 43)
    divu x13, x13, x11
    addi RESULT, x13, 0
    CHECK(28, 7)
    j pass
PROGRAM_END
