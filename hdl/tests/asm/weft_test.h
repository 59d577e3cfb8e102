/*
 * Self-checking assembly tests for the weft soft core (RV32IM + Zicsr).
 *
 * Each test computes a value into x14 and compares it with the value the
 * ISA manual gives (Unprivileged 20191213, Privileged 20211203), written
 * into the test as a literal. The first mismatch stops the program with
 * its test number in a0 (x10); a program that runs to its end leaves
 * a0 = 0 and the number of tests run in x3. Both end in `wfi`, where the
 * runner (hdl/tests/asm_programs.rs) reads them.
 *
 * Memory: code at the instruction RAM (0x0), data and the scratch area
 * at the data RAM (0x1000_0000): the core is Harvard, loads cannot read
 * the instruction RAM.
 */
#ifndef WEFT_TEST_H
#define WEFT_TEST_H

#define TESTNUM x3
#define RESULT x14
#define EXPECTED x7

/* Start of every program: tests counted from 0, a trap lands at `trap`. */
#define PROGRAM_START            \
    .section .text.init;         \
    .globl _start;               \
_start:                          \
    li TESTNUM, 0;               \
    la t0, trap;                 \
    csrw mtvec, t0;

/* Checks RESULT against `expected` as test `n`. */
#define CHECK(n, expected)       \
    li TESTNUM, n;               \
    li EXPECTED, expected;       \
    bne RESULT, EXPECTED, fail;

/* RESULT = rs1 <op> rs2 for register operands. */
#define TEST_RR(n, inst, expected, a, b) \
    li x11, a;                   \
    li x12, b;                   \
    inst RESULT, x11, x12;       \
    CHECK(n, expected)

/* RESULT = rs1 <op> imm. */
#define TEST_RI(n, inst, expected, a, imm) \
    li x11, a;                   \
    inst RESULT, x11, imm;       \
    CHECK(n, expected)

/* The same register as both source and destination. */
#define TEST_RR_SAME(n, inst, expected, a) \
    li RESULT, a;                \
    inst RESULT, RESULT, RESULT; \
    CHECK(n, expected)

/* A branch that must be taken (RESULT = 1) or not (RESULT = 0). */
#define TEST_BRANCH(n, inst, taken, a, b) \
    li x11, a;                   \
    li x12, b;                   \
    li RESULT, 1;                \
    inst x11, x12, 1f;           \
    li RESULT, 0;                \
1:  CHECK(n, taken)

/* End of every program: pass, fail and the default trap handler. */
#define PROGRAM_END              \
pass:                            \
    li a0, 0;                    \
    j done;                      \
fail:                            \
    mv a0, TESTNUM;              \
    bnez a0, done;               \
    li a0, -1;                   \
done:                            \
    wfi;                         \
    j done;                      \
trap:                            \
    j fail;

#endif
