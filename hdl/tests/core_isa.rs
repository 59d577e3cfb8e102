//! Directed tests, one per instruction class: small programs whose
//! expected register values are worked out from the ISA manuals
//! (Unprivileged 20191213, Privileged 20211203), run on the RTL core in
//! lock-step with the ISS (so every retirement also agrees).

use weft_hdl::core::{CoreUnderTest, Lockstep};
use weft_iss::csr::{
    INSTRET, MCAUSE, MCYCLE, MEPC, MHARTID, MIE, MIP, MISA, MSCRATCH, MSTATUS, MTVAL, MTVEC,
};
use weft_iss::encode as e;
use weft_iss::{Exception, Hart, HarvardBus, Interrupt, Retirement, TrapCause};
use weft_regs::DATA_RAM_BASE;

/// Address of the trap handler that [`with_handler`] installs.
const HANDLER: u32 = 0x400;

fn lockstep(program: &[u32]) -> Lockstep {
    let mut iss = Hart::new(HarvardBus::reference());
    iss.bus_mut().write_words(0, program).expect("fits");
    let mut bus = HarvardBus::reference();
    bus.write_words(0, program).expect("fits");
    Lockstep::new(bus, iss).expect("the core builds")
}

/// Runs `program` to its final `wfi`; panics on any divergence.
fn run(program: &[u32]) -> Lockstep {
    let mut l = lockstep(program);
    assert!(
        l.run_to_wfi(20_000).unwrap_or_else(|d| panic!("{d}")),
        "no final wfi"
    );
    l
}

/// Register values of the core (checked equal to the ISS's).
fn regs(l: &mut Lockstep) -> [u32; 32] {
    let mut r = [0; 32];
    for (i, v) in r.iter_mut().enumerate() {
        *v = l.rtl().register(i);
        assert_eq!(*v, l.iss().reg(i as u8), "x{i}");
    }
    r
}

/// `body` at 0 after setting `mtvec` to [`HANDLER`], where a handler
/// copies `mcause`, `mepc`, `mtval` to x28, x29, x30 and returns past the
/// trapping instruction (clobbering x31).
fn with_handler(body: &[u32]) -> Vec<u32> {
    let mut p = e::li(31, HANDLER).to_vec();
    p.push(e::csrrw(0, MTVEC, 31));
    p.extend(body);
    p.push(e::wfi());
    assert!(p.len() * 4 <= HANDLER as usize);
    p.resize(HANDLER as usize / 4, e::nop());
    p.extend([
        e::csrrs(28, MCAUSE, 0),
        e::csrrs(29, MEPC, 0),
        e::csrrs(30, MTVAL, 0),
        e::addi(31, 29, 4),
        e::csrrw(0, MEPC, 31),
        e::mret(),
    ]);
    p
}

fn mv(rd: u8, rs: u8) -> u32 {
    e::addi(rd, rs, 0)
}

#[test]
fn lui_and_auipc() {
    // §2.4: lui places the U-immediate in bits 31:12; auipc adds it to its pc.
    let mut l = run(&[
        e::lui(1, 0x12345),
        e::auipc(2, 1),
        e::auipc(3, 0xfffff),
        e::wfi(),
    ]);
    let r = regs(&mut l);
    assert_eq!((r[1], r[2], r[3]), (0x1234_5000, 0x1004, 0xffff_f008));
}

#[test]
fn register_immediate_arithmetic() {
    let mut l = run(&[
        e::addi(1, 0, -5),
        e::slti(2, 1, -4),
        e::sltiu(3, 1, -4), // 0xffff_fffb < 0xffff_fffc
        e::sltiu(4, 1, 5),
        e::xori(5, 1, -1), // not
        e::ori(6, 0, 0x7ff),
        e::andi(7, 1, 0xf0),
        e::slli(8, 1, 4),
        e::srli(9, 1, 28),
        e::srai(10, 1, 1),
        e::wfi(),
    ]);
    let r = regs(&mut l);
    assert_eq!(
        r[1..=10],
        [
            0xffff_fffb,
            1,
            1,
            0,
            4,
            0x7ff,
            0xf0,
            0xffff_ffb0,
            0xf,
            0xffff_fffd
        ]
    );
}

#[test]
fn register_register_arithmetic() {
    let mut l = run(&[
        e::lui(1, 0x80000),
        e::addi(2, 0, 1),
        e::addi(3, 0, 33), // shifts use rs2[4:0] = 1 (§2.4.2)
        e::add(4, 1, 1),
        e::sub(5, 0, 2),
        e::sll(6, 2, 3),
        e::slt(7, 1, 2),
        e::sltu(8, 1, 2),
        e::xor_(9, 1, 5),
        e::srl(10, 1, 3),
        e::sra(11, 1, 3),
        e::or_(12, 1, 2),
        e::and_(13, 5, 1),
        e::wfi(),
    ]);
    let r = regs(&mut l);
    assert_eq!(
        r[4..=13],
        [
            0,
            0xffff_ffff,
            2,
            1,
            0,
            0x7fff_ffff,
            0x4000_0000,
            0xc000_0000,
            0x8000_0001,
            0x8000_0000
        ]
    );
}

#[test]
fn jumps_link_and_jalr_clears_bit_zero() {
    let mut l = run(&[
        e::jal(1, 8),      // 0: x1 = 4, to 8
        e::addi(10, 0, 1), // 4: skipped
        e::auipc(5, 0),    // 8: x5 = 8
        e::jalr(2, 5, 13), // 12: to (8 + 13) & !1 = 20, x2 = 16
        e::addi(11, 0, 1), // 16: skipped
        e::addi(12, 0, 7), // 20
        e::wfi(),
    ]);
    let r = regs(&mut l);
    assert_eq!((r[1], r[2], r[10], r[11], r[12]), (4, 16, 0, 0, 7));
}

#[test]
fn branches_compare_as_specified() {
    // x1 = -1, x2 = 1. Each branch, when taken (§2.5.2), skips the
    // instruction that marks it: bit i of x3, or x4 for the last one (whose
    // bit would not fit `ori`'s immediate).
    let cases = [
        (e::beq(1, 1, 8), true),
        (e::bne(1, 2, 8), true),
        (e::blt(1, 2, 8), true),
        (e::bge(2, 1, 8), true),
        (e::bltu(2, 1, 8), true),
        (e::bgeu(1, 2, 8), true),
        (e::beq(1, 2, 8), false),
        (e::bne(1, 1, 8), false),
        (e::blt(2, 1, 8), false),
        (e::bge(1, 2, 8), false),
        (e::bltu(1, 2, 8), false),
        (e::bgeu(2, 1, 8), false),
    ];
    let mut p = vec![e::addi(1, 0, -1), e::addi(2, 0, 1)];
    let mut expected = 0;
    for (bit, (branch, taken)) in cases.into_iter().enumerate() {
        p.push(branch);
        p.push(if bit < 11 {
            e::ori(3, 3, 1 << bit)
        } else {
            e::addi(4, 0, 1)
        });
        if !taken && bit < 11 {
            expected |= 1 << bit;
        }
    }
    // A backward loop: five iterations.
    p.extend([
        e::addi(6, 0, 5),
        e::addi(5, 5, 2),
        e::addi(6, 6, -1),
        e::bne(6, 0, -8),
        e::wfi(),
    ]);
    let mut l = run(&p);
    let r = regs(&mut l);
    assert_eq!((r[3], r[4]), (expected, 1));
    assert_eq!(r[5], 10);
}

#[test]
fn loads_and_stores_extend_and_place_bytes() {
    let [li0, li1] = e::li(2, 0x80ff_7f01);
    let mut l = run(&[
        e::lui(1, DATA_RAM_BASE >> 12),
        li0,
        li1,
        e::sw(2, 1, 0),
        e::lb(3, 1, 0),
        e::lb(4, 1, 2),
        e::lbu(5, 1, 2),
        e::lh(6, 1, 2),
        e::lhu(7, 1, 2),
        e::lw(8, 1, 0),
        e::sb(2, 1, 5),
        e::sh(2, 1, 6),
        e::lw(9, 1, 4),
        e::lw(10, 1, 0),
        e::addi(11, 10, 1), // load-use
        e::wfi(),
    ]);
    let r = regs(&mut l);
    assert_eq!(
        r[3..=11],
        [
            1,
            0xffff_ffff,
            0xff,
            0xffff_80ff,
            0x80ff,
            0x80ff_7f01,
            0x7f01_0100,
            0x80ff_7f01,
            0x80ff_7f02
        ]
    );
    assert_eq!(
        &l.rtl().bus().data_ram()[..8],
        &[0x01, 0x7f, 0xff, 0x80, 0x00, 0x01, 0x01, 0x7f]
    );
}

#[test]
fn memories_agree_wherever_a_run_stops_once_stores_in_flight_retire() {
    // §2.6: sw, sh, sb store the low 4, 2, 1 bytes of rs2, little-endian.
    // The core writes memory as a store commits and reports it a cycle
    // later; stopped at any cycle, the two memories agree once the store
    // written but not yet reported retires.
    let [li0, li1] = e::li(2, 0x1234_5678);
    let program = [
        e::lui(1, DATA_RAM_BASE >> 12),
        li0,
        li1,
        e::sw(2, 1, 0),
        e::sh(2, 1, 4),
        e::sb(2, 1, 7),
        e::wfi(),
    ];
    let mut stopped_in_flight = 0;
    for cycles in 0..20 {
        let mut l = lockstep(&program);
        for _ in 0..cycles {
            l.cycle().unwrap_or_else(|d| panic!("{d}"));
        }
        stopped_in_flight += u32::from(l.rtl().store_in_flight());
        l.retire_stores_in_flight()
            .unwrap_or_else(|d| panic!("{d}"));
        let rtl = l.rtl().bus().data_ram()[..8].to_vec();
        assert_eq!(
            rtl,
            l.iss().bus().data_ram()[..8],
            "stopped after {cycles} cycles"
        );
    }
    assert_eq!(stopped_in_flight, 3, "once with each store in flight");
    let l = run(&program);
    assert_eq!(
        &l.iss().bus().data_ram()[..8],
        &[0x78, 0x56, 0x34, 0x12, 0x78, 0x56, 0x00, 0x78]
    );
}

#[test]
fn multiply_and_divide_follow_chapter_7() {
    let mut l = run(&[
        e::addi(1, 0, -7),
        e::addi(2, 0, 2),
        e::addi(3, 0, 0),
        e::lui(4, 0x80000),
        e::addi(5, 0, -1),
        e::mul(6, 1, 2),
        e::mulh(7, 1, 2),
        e::mulhu(8, 1, 2),
        e::mulhsu(9, 1, 2),
        e::div(10, 1, 2),
        e::rem(11, 1, 2),
        e::divu(12, 1, 2),
        e::remu(13, 1, 2),
        // Table 7.1: division by zero and overflow.
        e::div(14, 1, 3),
        e::rem(15, 1, 3),
        e::divu(16, 1, 3),
        e::remu(17, 1, 3),
        e::div(18, 4, 5),
        e::rem(19, 4, 5),
        e::mulh(20, 4, 4),
        e::mulhsu(21, 5, 5),
        e::mulhu(22, 5, 5),
        e::add(23, 6, 10), // uses two M results
        e::wfi(),
    ]);
    let r = regs(&mut l);
    let minus7 = (-7i32) as u32;
    assert_eq!(
        r[6..=23],
        [
            (-14i32) as u32,
            0xffff_ffff,
            1,
            0xffff_ffff,
            (-3i32) as u32,
            0xffff_ffff,
            0x7fff_fffc,
            1,
            0xffff_ffff,
            minus7,
            0xffff_ffff,
            minus7,
            0x8000_0000,
            0,
            0x4000_0000,
            0xffff_ffff,
            0xffff_fffe,
            (-17i32) as u32,
        ]
    );
}

#[test]
fn csr_instructions_and_warl_fields() {
    let mut l = run(&[
        e::csrrs(1, MISA, 0),
        e::csrrs(2, MHARTID, 0),
        e::csrrwi(3, MSCRATCH, 5),
        e::csrrsi(4, MSCRATCH, 2),
        e::csrrci(5, MSCRATCH, 1),
        e::csrrw(6, MSCRATCH, 0),
        e::addi(7, 0, -1),
        e::csrrw(0, MTVEC, 7),
        e::csrrs(8, MTVEC, 0), // MODE >= 2 reserved: bit 1 dropped
        e::csrrw(0, MEPC, 7),
        e::csrrs(9, MEPC, 0), // IALIGN 32
        e::csrrw(0, MSTATUS, 7),
        e::csrrs(10, MSTATUS, 0), // MPP = M, MPIE, MIE
        e::csrrw(0, MSTATUS, 0),
        e::csrrs(11, MSTATUS, 0),
        e::csrrw(0, MIE, 7),
        e::csrrs(12, MIE, 0), // MSIE, MTIE, MEIE only
        e::csrrs(13, MIP, 0),
        e::csrrs(14, INSTRET, 0), // 18 instructions retired before it
        e::csrrs(15, MCYCLE, 0),
        e::csrrs(16, MCYCLE, 0),
        e::wfi(),
    ]);
    let r = regs(&mut l);
    assert_eq!(
        r[1..=14],
        [
            0x4000_1100,
            0,
            0,
            5,
            7,
            6,
            0xffff_ffff,
            0xffff_fffd,
            0xffff_fffc,
            0x1888,
            0x1800,
            0x888,
            0,
            18
        ]
    );
    assert!(r[16] > r[15], "mcycle counts up");
}

#[test]
fn exceptions_set_mcause_mepc_mtval() {
    let d = DATA_RAM_BASE;
    let body = [
        e::lui(20, d >> 12),
        e::ecall(), // at 16
        mv(5, 28),
        mv(6, 29),
        mv(7, 30),
        e::ebreak(), // at 32
        mv(8, 28),
        mv(9, 30),
        0xffff_ffff, // illegal
        mv(10, 28),
        mv(11, 30),
        e::lw(12, 20, 1), // misaligned
        mv(13, 28),
        mv(14, 30),
        e::sh(0, 20, 3), // misaligned
        mv(15, 28),
        e::lw(16, 0, 0), // instruction RAM is not on the data port
        mv(17, 28),
        e::sw(0, 20, -4), // unmapped
        mv(18, 28),
        e::jal(19, 6), // misaligned target, at 92: rd not written
        mv(21, 28),
        mv(22, 30),
        e::csrrw(0, 0xc00, 0), // write to read-only cycle
        mv(23, 28),
        e::csrrs(24, 0x7c0, 0), // no such CSR
        mv(25, 28),
    ];
    let mut l = run(&with_handler(&body));
    let r = regs(&mut l);
    let code = |x: Exception| x.code();
    assert_eq!(
        (r[5], r[6], r[7]),
        (code(Exception::EnvironmentCallFromMMode), 16, 0)
    );
    assert_eq!((r[8], r[9]), (code(Exception::Breakpoint), 32));
    assert_eq!(
        (r[10], r[11]),
        (code(Exception::IllegalInstruction), 0xffff_ffff)
    );
    assert_eq!(
        (r[12], r[13], r[14]),
        (0, code(Exception::LoadAddressMisaligned), d + 1)
    );
    assert_eq!(r[15], code(Exception::StoreAddressMisaligned));
    assert_eq!((r[16], r[17]), (0, code(Exception::LoadAccessFault)));
    assert_eq!(r[18], code(Exception::StoreAccessFault));
    assert_eq!(
        (r[19], r[21], r[22]),
        (0, code(Exception::InstructionAddressMisaligned), 98)
    );
    assert_eq!(r[23], code(Exception::IllegalInstruction));
    assert_eq!((r[24], r[25]), (0, code(Exception::IllegalInstruction)));
}

#[test]
fn hazards_forward_and_stall() {
    let mut l = run(&[
        e::lui(20, DATA_RAM_BASE >> 12),
        e::addi(1, 0, 1),
        e::add(2, 1, 1), // from M
        e::add(3, 2, 1), // from M and W
        e::add(4, 3, 2),
        e::sw(4, 20, 0), // store data forwarded
        e::lw(5, 20, 0),
        e::add(6, 5, 5), // load-use
        e::csrrw(0, MSCRATCH, 6),
        e::csrrs(7, MSCRATCH, 0),
        e::add(8, 7, 7), // CSR read-use
        e::mul(9, 8, 8),
        e::add(10, 9, 1),  // multiply-use
        e::beq(10, 10, 8), // forwarded branch operands
        e::addi(11, 0, 1),
        e::wfi(),
    ]);
    let r = regs(&mut l);
    assert_eq!(r[1..=11], [1, 2, 3, 5, 5, 10, 10, 20, 400, 401, 0]);
}

/// Runs `l` until a retirement satisfies `stop`, at most `cycles` cycles.
fn run_until(l: &mut Lockstep, cycles: u64, stop: impl Fn(&Retirement) -> bool) -> Retirement {
    for _ in 0..cycles {
        if let Some(r) = l.cycle().unwrap_or_else(|d| panic!("{d}")) {
            if stop(&r) {
                return r;
            }
        }
    }
    panic!("no such retirement within {cycles} cycles");
}

fn is_interrupt(r: &Retirement) -> Option<Interrupt> {
    match r.trap?.cause {
        TrapCause::Interrupt(i) => Some(i),
        TrapCause::Exception(_) => None,
    }
}

#[test]
fn vectored_interrupts_in_priority_order() {
    // mtvec = 0x400 | vectored: interrupt i enters at 0x400 + 4i (§3.1.7),
    // where a stub records i in x3 and returns.
    let mut p = e::li(31, HANDLER | 1).to_vec();
    p.extend([
        e::csrrw(0, MTVEC, 31),
        e::addi(1, 0, 0x7ff),
        e::addi(1, 1, 0x89), // 0x888: MSIE | MTIE | MEIE
        e::csrrw(0, MIE, 1),
        e::csrrsi(0, MSTATUS, 8),
        e::addi(2, 2, 1), // loop: count
        e::jal(0, -4),
    ]);
    p.resize(HANDLER as usize / 4, e::nop());
    for i in 0..12 {
        p.push(e::jal(0, 4 * (12 - i) + 8 * i)); // to stub i
    }
    for i in 0..12 {
        p.extend([e::addi(3, 0, i), e::mret()]);
    }
    let mut l = lockstep(&p);
    l.run_to_wfi(60).expect("agrees");
    for irq in Interrupt::BY_PRIORITY {
        l.set_interrupt(irq, true);
    }
    // §3.1.9: MEI, then MSI, then MTI; each taken once its line is the
    // highest still high. Lower each line once its interrupt is taken.
    for expected in Interrupt::BY_PRIORITY {
        let r = run_until(&mut l, 200, |r| is_interrupt(r).is_some());
        assert_eq!(is_interrupt(&r), Some(expected));
        l.set_interrupt(expected, false);
        run_until(&mut l, 200, |r| r.instruction == Some(e::mret()));
        assert_eq!(l.rtl().register(3), expected.code());
    }
    assert!(l.rtl().register(2) > 0);
}

#[test]
fn wfi_waits_for_an_enabled_interrupt_even_when_masked_globally() {
    // §3.3.3: wfi resumes when an interrupt is pending and enabled in mie,
    // whatever mstatus.MIE says; with MIE clear it is not taken.
    let [li0, li1] = e::li(1, 0x800);
    let mut l = lockstep(&[
        li0,
        li1,
        e::csrrw(0, MIE, 1),
        e::wfi(),
        e::addi(5, 0, 1),
        e::wfi(),
    ]);
    for _ in 0..100 {
        l.cycle().expect("agrees");
    }
    assert_eq!(l.rtl().register(5), 0, "still waiting");
    l.set_interrupt(Interrupt::MachineTimer, true); // not enabled in mie
    for _ in 0..50 {
        l.cycle().expect("agrees");
    }
    assert_eq!(
        l.rtl().register(5),
        0,
        "a disabled interrupt does not wake it"
    );
    l.set_interrupt(Interrupt::MachineExternal, true);
    let r = run_until(&mut l, 50, |r| r.rd_write.is_some());
    assert_eq!((r.pc, r.trap), (16, None));
    assert_eq!(l.rtl().register(5), 1);
}

#[test]
fn far_branches_and_jumps_reach_their_targets() {
    // Offsets beyond ±2 KiB exercise the top immediate bits (§2.3,
    // Figure 2.4: B-immediate bit 11 comes from instruction bit 7).
    let mut p = vec![e::nop(); 0x1a00 / 4];
    p[0] = e::jal(0, 0x1000); // to 0x1000
    p[0x7fc / 4] = e::addi(1, 0, 1);
    p[0x800 / 4] = e::jal(0, 0x1004 - 0x800); // to 0x1004
    p[0x1000 / 4] = e::beq(0, 0, -2052); // to 0x7fc
    p[0x1004 / 4] = e::bltu(0, 1, 0x900); // to 0x1904
    p[0x1008 / 4] = e::wfi();
    p[0x1904 / 4] = e::addi(2, 0, 2);
    p[0x1908 / 4] = e::wfi();
    let mut l = run(&p);
    let r = regs(&mut l);
    assert_eq!((r[1], r[2]), (1, 2));
}
