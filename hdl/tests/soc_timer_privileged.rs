//! The RTL machine timer against RISC-V Privileged 20211203 §3.2.1
//! ("Machine Timer Registers (mtime and mtimecmp)"): `mtime` counts up at
//! a constant rate, the interrupt is pending exactly while `mtime >=
//! mtimecmp` as unsigned 64-bit numbers, software clears it by writing
//! `mtimecmp`, and on RV32 the three-store sequence of the spec moves the
//! compare without a spurious interrupt.

use rust_hdl::prelude::*;
use weft_hdl::driver::CycleDriver;
use weft_hdl::soc::Timer;
use weft_regs::soc::timer::{MTIMECMP_HIGH, MTIMECMP_LOW, MTIME_HIGH, MTIME_LOW};
use weft_regs::Register;

struct Bench(CycleDriver<Timer>);

impl Bench {
    fn new() -> Self {
        let mut d = CycleDriver::new(Timer::new(), |t| &mut t.clock).expect("timer builds");
        d.block().reset.next = true;
        d.tick().expect("settles");
        d.block().reset.next = false;
        Self(d)
    }

    /// One cycle with the bus idle.
    fn idle(&mut self) {
        let bus = &mut self.0.block().bus;
        bus.read.next = false;
        bus.write.next = false;
        self.0.tick().expect("settles");
    }

    fn write(&mut self, register: Register, value: u32) {
        let bus = &mut self.0.block().bus;
        bus.read.next = false;
        bus.write.next = true;
        bus.address.next = bits(u64::from(register.offset));
        bus.write_data.next = bits(u64::from(value));
        self.0.tick().expect("settles");
        self.0.block().bus.write.next = false;
    }

    /// Reads `register` in this cycle; the value is `mtime` as of this cycle.
    fn read(&mut self, register: Register) -> u32 {
        let bus = &mut self.0.block().bus;
        bus.read.next = true;
        bus.write.next = false;
        bus.address.next = bits(u64::from(register.offset));
        self.0.tick().expect("settles");
        self.0.block().bus.read.next = false;
        self.0.block().bus.read_data.val().to_u32()
    }

    fn pending(&mut self) -> bool {
        self.0.block().interrupt.val()
    }
}

#[test]
fn mtime_counts_one_per_cycle_from_zero_and_carries_into_the_high_half() {
    let mut t = Bench::new();
    assert_eq!(t.read(MTIME_LOW), 0, "mtime is 0 after reset");
    assert_eq!(t.read(MTIME_LOW), 1);
    t.idle();
    t.idle();
    assert_eq!(t.read(MTIME_LOW), 4, "one tick per cycle, idle or not");
    // Low half at all ones: the next tick carries.
    t.write(MTIME_LOW, u32::MAX - 1);
    assert_eq!(t.read(MTIME_LOW), u32::MAX, "written value, then one tick");
    assert_eq!(t.read(MTIME_HIGH), 1, "the carry reached the high half");
    assert_eq!(t.read(MTIME_LOW), 1, "0x1_0000_0000 one cycle before");
}

#[test]
fn no_interrupt_after_reset_because_mtimecmp_is_all_ones() {
    let mut t = Bench::new();
    assert_eq!(t.read(MTIMECMP_LOW), u32::MAX);
    assert_eq!(t.read(MTIMECMP_HIGH), u32::MAX);
    for _ in 0..10 {
        assert!(!t.pending());
        t.idle();
    }
}

#[test]
fn the_interrupt_compares_all_64_bits_unsigned() {
    let mut t = Bench::new();
    // mtimecmp = 0x0000_0000_FFFF_FFF0 (high half first keeps it above mtime).
    t.write(MTIMECMP_HIGH, 0);
    t.write(MTIMECMP_LOW, 0xFFFF_FFF0);
    assert!(!t.pending(), "mtime is small");
    // mtime = 0x1_0000_0000: low half below the compare's, high half above.
    t.write(MTIME_HIGH, 1);
    t.write(MTIME_LOW, 0);
    assert!(t.pending(), "0x1_0000_0001 >= 0xFFFF_FFF0");
    // mtimecmp = 0x2_0000_0000: low half 0 <= mtime's, high half above it.
    t.write(MTIMECMP_HIGH, 2);
    t.write(MTIMECMP_LOW, 0);
    assert!(!t.pending(), "writing mtimecmp is how software clears MTIP");
    // mtimecmp = 0x8000_0000_0000_0000: a signed compare would call it negative.
    t.write(MTIMECMP_HIGH, 0x8000_0000);
    assert!(!t.pending(), "unsigned compare");
}

#[test]
fn the_interrupt_is_pending_from_the_cycle_mtime_reaches_mtimecmp() {
    let mut t = Bench::new();
    t.write(MTIMECMP_HIGH, 0);
    t.write(MTIMECMP_LOW, 20);
    let mut waited = 0;
    while !t.pending() {
        t.idle();
        waited += 1;
        assert!(waited < 100, "the timer never interrupted");
    }
    // Pending now: mtime == 20 in this cycle, and it stays pending.
    assert_eq!(t.read(MTIME_LOW), 20);
    for _ in 0..5 {
        assert!(t.pending(), "mtime > mtimecmp keeps it pending");
        t.idle();
    }
}

#[test]
fn the_rv32_three_store_sequence_moves_mtimecmp_without_a_spurious_interrupt() {
    // mtime = 0x5_8000_0000; mtimecmp moves from 0x6_0000_0010 to
    // 0x5_FFFF_FFFF, both above mtime.
    let setup = |t: &mut Bench| {
        t.write(MTIMECMP_HIGH, 6);
        t.write(MTIMECMP_LOW, 0x10);
        t.write(MTIME_LOW, 0x8000_0000);
        t.write(MTIME_HIGH, 5);
        assert!(!t.pending());
    };
    // High half first: the compare passes through 0x5_0000_0010 <= mtime.
    let mut naive = Bench::new();
    setup(&mut naive);
    naive.write(MTIMECMP_HIGH, 5);
    let spurious = naive.pending();
    naive.write(MTIMECMP_LOW, u32::MAX);
    assert!(spurious, "the naive order raises MTIP for a cycle");
    assert!(!naive.pending());

    // Privileged §3.2.1: low = all ones, then high, then low.
    let mut t = Bench::new();
    setup(&mut t);
    for (register, value) in [
        (MTIMECMP_LOW, u32::MAX),
        (MTIMECMP_HIGH, 5),
        (MTIMECMP_LOW, u32::MAX),
    ] {
        t.write(register, value);
        assert!(
            !t.pending(),
            "spurious MTIP after writing {}",
            register.name
        );
    }
    assert_eq!(t.read(MTIMECMP_HIGH), 5);
}
