//! The Rust benchmark (`softcore-fw/bench`) on the ISS: it runs to its
//! `wfi` without a trap, and every kernel's result matches the one its
//! build script computed on the host with independent code (the `crc`
//! crate, the standard library's sort, ...).

use weft_iss::rust_bench::{self, CHECKSUM_REGISTER, PASSED_REGISTER};
use weft_iss::{Hart, HarvardBus, Step};

/// Steps to run at most; the benchmark takes a few hundred thousand.
const STEP_LIMIT: u64 = 5_000_000;

#[test]
fn every_kernel_of_the_rust_benchmark_matches_the_host() {
    let path = rust_bench::elf_path();
    let Some(image) = rust_bench::elf_image() else {
        return;
    };
    let mut hart = Hart::new(HarvardBus::reference());
    hart.load_elf(&image)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut idle = false;
    for _ in 0..STEP_LIMIT {
        let pc = hart.pc();
        match hart.step() {
            Step::Idle => {
                idle = true;
                break;
            }
            Step::Retired(r) => {
                assert!(r.trap.is_none(), "trap at pc {pc:#010x}: {:?}", r.trap);
            }
        }
    }
    assert!(
        idle,
        "no wfi in {STEP_LIMIT} steps (pc {:#010x})",
        hart.pc()
    );
    let passed = hart.reg(PASSED_REGISTER);
    let checksum = hart.reg(CHECKSUM_REGISTER);
    if let Err(wrong) = rust_bench::verdict(passed) {
        panic!("{wrong} (a0 = {passed:#x}, checksum {checksum:#010x})");
    }
}
