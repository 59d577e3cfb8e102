/* RV32I loads and stores: widths, sign and zero extension, byte lanes,
   offsets (Unprivileged 20191213 §2.6); little-endian (§1.5). */
#include "weft_test.h"

    .data
    .align 2
bytes:
    .word 0x80ff7f01
scratch:
    .word 0
    .word 0

PROGRAM_START
    la x5, bytes
    lb RESULT, 0(x5)
    CHECK(1, 0x00000001)
    lb RESULT, 1(x5)
    CHECK(2, 0x0000007f)
    lb RESULT, 2(x5)
    CHECK(3, 0xffffffff)
    lb RESULT, 3(x5)
    CHECK(4, 0xffffff80)
    lbu RESULT, 2(x5)
    CHECK(5, 0x000000ff)
    lbu RESULT, 3(x5)
    CHECK(6, 0x00000080)
    lh RESULT, 0(x5)
    CHECK(7, 0x00007f01)
    lh RESULT, 2(x5)
    CHECK(8, 0xffff80ff)
    lhu RESULT, 2(x5)
    CHECK(9, 0x000080ff)
    lw RESULT, 0(x5)
    CHECK(10, 0x80ff7f01)
    /* Stores write only their bytes. */
    la x6, scratch
    li x11, 0x11223344
    sw x11, 0(x6)
    li x11, 0xaa
    sb x11, 1(x6)
    lw RESULT, 0(x6)
    CHECK(11, 0x1122aa44)
    li x11, 0xbeef
    sh x11, 2(x6)
    lw RESULT, 0(x6)
    CHECK(12, 0xbeefaa44)
    /* Only the low byte or half of rs2 is stored. */
    li x11, 0x123456cd
    sb x11, 0(x6)
    lw RESULT, 0(x6)
    CHECK(13, 0xbeefaacd)
    /* A negative offset. */
    addi x7, x6, 8
    li x11, 0x5a5a5a5a
    sw x11, -4(x7)
    lw RESULT, 4(x6)
    CHECK(14, 0x5a5a5a5a)
    /* A loaded value used at once. */
    lw x11, 0(x5)
    addi RESULT, x11, 1
    CHECK(15, 0x80ff7f02)
    /* A load right after a store to the same word. */
    li x11, 0x600df00d
    sw x11, 0(x6)
    lw RESULT, 0(x6)
    CHECK(16, 0x600df00d)
    /* A loaded address used at once as the next load's base. */
    la x11, scratch
    sw x11, 4(x6)
    lw x12, 4(x6)
    lw RESULT, 0(x12)
    CHECK(17, 0x600df00d)
    j pass
PROGRAM_END
