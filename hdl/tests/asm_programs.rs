//! Assembly tests in the style of the RISC-V architecture tests, written
//! for weft (`hdl/tests/asm/*.S`, never fetched): each is assembled with
//! Debian's `riscv64-unknown-elf-gcc` for `rv32im_zicsr`/`ilp32` onto the
//! reference memory map and run on the RTL core in lock-step with the ISS,
//! so every retirement agrees, and the program itself checks every result
//! against the value the ISA manual gives (see `asm/weft_test.h`): it ends
//! in `wfi` with a0 = 0, or with a0 = the number of the first failed test.
//!
//! `cargo xtask setup` installs the assembler; without it the test says
//! so and passes, as the other tests that need an outside tool do.

use std::path::{Path, PathBuf};
use std::process::Command;

use weft_hdl::core::Lockstep;
use weft_iss::{elf, Hart, HarvardBus};

/// Debian's bare-metal RISC-V compiler, which assembles RV32 with `-march`.
const ASSEMBLER: &str = "riscv64-unknown-elf-gcc";
/// Core cycles a program may take.
const MAX_CYCLES: u64 = 20_000;

/// The directory of the assembly sources, the macros and the linker script.
fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/asm")
}

/// Assembles `name`.S into an ELF image; `None` without the assembler.
fn assemble(name: &str) -> Option<Vec<u8>> {
    let dir = sources();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.elf"));
    let status = match Command::new(ASSEMBLER)
        .args([
            "-march=rv32im_zicsr",
            "-mabi=ilp32",
            "-nostdlib",
            "-nostartfiles",
            "-static",
            "-T",
        ])
        .arg(dir.join("link.ld"))
        .arg("-o")
        .arg(&out)
        .arg(dir.join(format!("{name}.S")))
        .status()
    {
        Ok(status) => status,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("skipped: {ASSEMBLER} is not installed (`cargo xtask setup` installs it)");
            return None;
        }
        Err(e) => panic!("running {ASSEMBLER}: {e}"),
    };
    assert!(status.success(), "{ASSEMBLER} failed on {name}.S");
    Some(std::fs::read(&out).unwrap_or_else(|e| panic!("reading {}: {e}", out.display())))
}

/// Runs `name`.S on the RTL core and the ISS in lock-step and checks that
/// it passed every test it holds.
fn passes(name: &str) {
    let Some(image) = assemble(name) else {
        return;
    };
    let mut iss = Hart::new(HarvardBus::reference());
    iss.load_elf(&image)
        .unwrap_or_else(|e| panic!("{name}: the ISS cannot load it: {e}"));
    let mut bus = HarvardBus::reference();
    elf::load(&mut bus, &image).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut l = Lockstep::new(bus, iss).expect("the core builds");
    let ended = l
        .run_to_wfi(MAX_CYCLES)
        .unwrap_or_else(|d| panic!("{name}: RTL and ISS diverge: {d}"));
    assert!(ended, "{name}: no final wfi within {MAX_CYCLES} cycles");
    let (failed, tests) = (l.rtl().register(10), l.rtl().register(3));
    assert_eq!(failed, 0, "{name}: test {failed} failed (x3 = {tests})");
    assert!(tests > 0, "{name}: no test ran");
    eprintln!(
        "{name}: {tests} tests passed, {} retirements agreed",
        l.compared()
    );
}

#[test]
fn rv32i_arithmetic_logic_and_shifts() {
    passes("rv32i_alu");
}

#[test]
fn rv32i_branches_and_jumps() {
    passes("rv32i_control");
}

#[test]
fn rv32i_loads_and_stores() {
    passes("rv32i_memory");
}

#[test]
fn rv32m_products_quotients_and_remainders() {
    passes("rv32m");
}

#[test]
fn zicsr_counters_and_machine_traps() {
    passes("zicsr_traps");
}
