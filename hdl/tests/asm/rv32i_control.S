/* RV32I conditional branches, JAL and JALR (Unprivileged 20191213 §2.5). */
#include "weft_test.h"

PROGRAM_START
    TEST_BRANCH(1, beq, 1, 1, 1)
    TEST_BRANCH(2, beq, 0, 1, 2)
    TEST_BRANCH(3, bne, 1, 1, 2)
    TEST_BRANCH(4, bne, 0, 3, 3)
    /* BLT/BGE compare signed, BLTU/BGEU unsigned. */
    TEST_BRANCH(5, blt, 1, -1, 1)
    TEST_BRANCH(6, blt, 0, 1, -1)
    TEST_BRANCH(7, blt, 0, 4, 4)
    TEST_BRANCH(8, bge, 1, -1, -1)
    TEST_BRANCH(9, bge, 0, -2, -1)
    TEST_BRANCH(10, bge, 1, 1, -1)
    TEST_BRANCH(11, bltu, 1, 1, 0xffffffff)
    TEST_BRANCH(12, bltu, 0, 0xffffffff, 1)
    TEST_BRANCH(13, bgeu, 1, 0xffffffff, 1)
    TEST_BRANCH(14, bgeu, 0, 0, 1)
    TEST_BRANCH(15, bgeu, 1, 7, 7)
    /* A backward loop: 5 + 4 + 3 + 2 + 1. */
    li x11, 5
    li RESULT, 0
1:  add RESULT, RESULT, x11
    addi x11, x11, -1
    bnez x11, 1b
    CHECK(16, 15)
    /* JAL writes the address of the next instruction to rd. */
    li RESULT, 0
    jal x1, 2f
    li RESULT, 99
2:  la x15, 2b
    addi x15, x15, -4
    sub RESULT, x1, x15
    CHECK(17, 0)
    /* JALR's target is rs1 + imm with bit 0 cleared. */
    la x5, 3f
    li RESULT, 0
    jalr x1, 1(x5)
    li RESULT, 99
3:  CHECK(18, 0)
    /* rd = rs1: the target is computed from the old value. */
    la RESULT, 4f
    jalr RESULT, 0(RESULT)
4:  la x15, 4b
    sub RESULT, RESULT, x15
    CHECK(19, 0)
    /* A call and return through ra. */
    li RESULT, 0
    call add_three
    call add_three
    CHECK(20, 6)
    j pass
add_three:
    addi RESULT, RESULT, 3
    ret
PROGRAM_END
