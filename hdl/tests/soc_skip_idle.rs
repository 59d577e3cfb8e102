//! `SocBench::skip_idle` lets a sleeping SoC's idle cycles pass without
//! simulating them, and the SoC cannot tell: a program that sets a timer
//! alarm, waits in `wfi` for it and reads `mtime` on waking reads the
//! same value after the same number of cycles whether its sleep was run
//! cycle by cycle or skipped, and the value is at or past the alarm
//! (Privileged 20211203 §3.2.1: the timer interrupt is pending while
//! `mtime >= mtimecmp`; §3.3.3: `wfi` resumes on it when it is enabled in
//! `mie`, even with `mstatus.MIE` clear).

use weft_hdl::soc::{MemoryImage, Soc, SocBench};
use weft_iss::csr::MIE;
use weft_iss::encode as e;
use weft_regs::soc::timer::{MTIMECMP_HIGH, MTIMECMP_LOW, MTIME_LOW};
use weft_regs::Register;

/// The alarm the program sets: `mtimecmp`.
const ALARM: u32 = 0x5000;

/// The upper part for `lui` and the signed 12-bit offset that reach `register`.
fn split(register: Register) -> (u32, i32) {
    let address = register.address(0, 0);
    let upper = address.wrapping_add(0x800) >> 12;
    (upper, address.wrapping_sub(upper << 12) as i32)
}

/// Sets `mtimecmp` to [`ALARM`], enables the timer interrupt, waits for
/// it, reads `mtime` into `a0`, disables it and waits for good.
fn program() -> Vec<u32> {
    let (upper, _) = split(MTIMECMP_LOW);
    let offset = |register: Register| {
        let (its_upper, offset) = split(register);
        assert_eq!(its_upper, upper, "the timer's registers share a page");
        offset
    };
    vec![
        e::lui(5, upper),
        e::sw(0, 5, offset(MTIMECMP_HIGH)),
        e::lui(6, ALARM >> 12),
        e::sw(6, 5, offset(MTIMECMP_LOW)),
        e::addi(7, 0, 0x80),
        e::csrrs(0, MIE, 7),
        e::wfi(),
        e::lw(10, 5, offset(MTIME_LOW)),
        e::csrrw(0, MIE, 0),
        e::wfi(),
        e::jal(0, -4),
    ]
}

/// Runs the program to its last `wfi`, skipping idle cycles if `skip`;
/// returns `a0`, the cycles taken and the cycles skipped.
fn run(skip: bool) -> (u32, u64, u64) {
    let mut memory = MemoryImage::reference();
    let code = program();
    memory.instructions[..code.len()].copy_from_slice(&code);
    let mut bench = SocBench::new(Soc::new(&memory).expect("the reference memories fit"))
        .expect("the SoC builds");
    let mut skipped = 0;
    loop {
        let woke = bench.register(10) != 0;
        if woke && bench.waiting_for_interrupt().expect("the SoC settles") {
            return (bench.register(10), bench.cycles(), skipped);
        }
        if skip {
            skipped += bench.skip_idle(u64::from(ALARM)).expect("the SoC settles");
        }
        bench.cycle().expect("the SoC runs");
        assert!(
            bench.cycles() < 2 * u64::from(ALARM),
            "the program never woke"
        );
    }
}

#[test]
fn skipping_a_sleep_leaves_the_program_what_running_it_does() {
    let (run_mtime, run_cycles, none) = run(false);
    let (skip_mtime, skip_cycles, skipped) = run(true);
    assert_eq!(none, 0);
    assert!(
        skipped > u64::from(ALARM) * 9 / 10,
        "the sleep was skipped: {skipped} cycles"
    );
    assert!(
        (ALARM..ALARM + 16).contains(&run_mtime),
        "woken at the alarm: mtime {run_mtime:#x}"
    );
    assert_eq!(skip_mtime, run_mtime, "mtime read on waking");
    assert_eq!(skip_cycles, run_cycles, "cycles to the last wfi");
}
