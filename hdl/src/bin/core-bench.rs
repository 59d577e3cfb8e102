//! Measures the RTL soft core on the ISS's benchmark programs: cycles per
//! instruction, and the single-thread cycle driver's speed in simulated
//! cycles per second, for the core alone and for the whole SoC.
//!
//! Usage: `cargo run --release -p weft-hdl --bin core-bench [-- --json]`
//!
//! Each program runs twice, on `weft_hdl::core::CoreBench` (the core with
//! Rust RAM models on the reference memory map) and on
//! `weft_hdl::soc::SocBench` (the all-RTL SoC: core, block RAMs, decoder,
//! peripherals), from reset to its final `wfi`;
//! its result is checked against the program's plain-Rust reference, so a
//! wrong core fails here instead of reporting a figure. CPI counts every
//! clock cycle from the end of reset to the cycle the final `wfi` retires,
//! pipeline fill included.
//!
//! The last rows run compiled Rust rather than generated programs, ELFs
//! that `cargo xtask firmware` builds, on the core from reset to their
//! first `wfi`: the real firmware's boot, and the Rust benchmark
//! (`softcore-fw/bench`: CRC-32, a sorted linked list, a matrix product,
//! a tokenizer), whose kernels must all match the host's results. The
//! "all" rows total the generated programs only.
#![forbid(unsafe_code)]

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use weft_hdl::core::{CoreBench, CoreUnderTest};
use weft_hdl::soc::{MemoryImage, Soc, SocBench};
use weft_iss::data_plane::DataPlaneWindow;
use weft_iss::elf;
use weft_iss::encode::wfi;
use weft_iss::programs::{self, Expected, Program};
use weft_iss::rust_bench;
use weft_iss::soc::Soc as IssSoc;
use weft_iss::HarvardBus;
use weft_regs::INSTRUCTION_RAM_BASE;

/// The firmware's row in the table.
const FIRMWARE: &str = "firmware boot";

/// The Rust benchmark's row in the table.
const RUST_BENCH: &str = "rust bench";

/// Clock cycles after which a program counts as hung.
const CYCLE_LIMIT: u64 = 50_000_000;

/// What runs the program.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Platform {
    /// The core with Rust memory models.
    Core,
    /// The all-RTL SoC.
    Soc,
}

impl Platform {
    fn name(self) -> &'static str {
        match self {
            Platform::Core => "core",
            Platform::Soc => "soc",
        }
    }
}

struct Measurement {
    program: &'static str,
    platform: Platform,
    instructions: u64,
    cycles: u64,
    seconds: f64,
}

impl Measurement {
    fn cpi(&self) -> f64 {
        self.cycles as f64 / self.instructions as f64
    }

    fn cycles_per_second(&self) -> f64 {
        self.cycles as f64 / self.seconds
    }
}

/// The programs, with inputs sized for a simulated core: the same
/// generators as the ISS benchmark, smaller inputs.
fn suite() -> Vec<Program> {
    // Pseudo-random inputs from a fixed xorshift so every run is identical.
    let mut s = 0x2545_F491_u32;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    };
    let crc_input: Vec<u8> = (0..1024).map(|_| next() as u8).collect();
    let sort_input: Vec<i32> = (0..160).map(|_| next() as i32).collect();
    vec![
        programs::crc32(crc_input),
        programs::insertion_sort(&sort_input),
        programs::lcg_mix(0x1234_5678, 1_000),
    ]
}

/// Instructions retired, cycles and seconds from reset to the `wfi` that
/// ends the run: the one at `end` if given, else the first retired.
fn run_to_wfi(
    bench: &mut impl CoreUnderTest,
    name: &str,
    end: Option<u32>,
) -> Result<(u64, u64, f64), String> {
    let first = bench.cycles();
    let mut instructions = 0;
    let start = Instant::now();
    loop {
        let retired = bench.cycle().map_err(|e| format!("{name}: {e}"))?;
        if let Some(r) = retired.map(|r| r.retirement) {
            if let Some(trap) = r.trap {
                return Err(format!("{name}: unexpected trap {trap:?} at {:#x}", r.pc));
            }
            instructions += 1;
            if r.instruction == Some(wfi()) && end.is_none_or(|end| r.pc == end) {
                break;
            }
        }
        if bench.cycles() - first > CYCLE_LIMIT {
            return Err(format!("{name}: no final wfi within {CYCLE_LIMIT} cycles"));
        }
    }
    Ok((
        instructions,
        bench.cycles() - first,
        start.elapsed().as_secs_f64(),
    ))
}

/// Instructions retired, cycles and seconds from reset to the program's final `wfi`.
fn run_to_end(
    bench: &mut impl CoreUnderTest,
    program: &Program,
) -> Result<(u64, u64, f64), String> {
    let end = INSTRUCTION_RAM_BASE + 4 * (program.code.len() as u32 - 1);
    run_to_wfi(bench, program.name, Some(end))
}

/// A soft-core ELF built by `cargo xtask firmware`, run on the core from
/// reset to its first `wfi` over the firmware's machine: the SoC
/// peripherals and the data plane's CSR window are the ISS's models (every
/// link down), as in the firmware lock-step test. Returns the measurement,
/// the core as the program left it and the peripherals; `None` without an
/// ELF at `path`.
fn run_elf(
    program: &'static str,
    path: &Path,
) -> Result<Option<(Measurement, CoreBench<HarvardBus>, IssSoc)>, String> {
    let Ok(image) = std::fs::read(path) else {
        return Ok(None);
    };
    let failed = |e: &dyn std::fmt::Display| format!("{program} {}: {e}", path.display());
    let mut bus = HarvardBus::reference();
    let soc = IssSoc::attach(&mut bus).map_err(|e| failed(&e))?;
    DataPlaneWindow::unlinked(4)
        .attach(&mut bus)
        .map_err(|e| failed(&e))?;
    elf::load(&mut bus, &image).map_err(|e| failed(&e))?;
    let mut core = CoreBench::new(bus, INSTRUCTION_RAM_BASE).map_err(|e| failed(&e))?;
    let (instructions, cycles, seconds) = run_to_wfi(&mut core, program, None)?;
    let measurement = Measurement {
        program,
        platform: Platform::Core,
        instructions,
        cycles,
        seconds,
    };
    Ok(Some((measurement, core, soc)))
}

/// The firmware ELF (`cargo xtask firmware`) on the core, from reset to its
/// first `wfi`: start-up, the banner, the network stack's and the fabric
/// manager's initialisation, all compiled Rust. The run counts only if the
/// console printed the boot to its end. `None` without an ELF.
fn measure_firmware() -> Result<Option<Measurement>, String> {
    let path = elf::firmware_path();
    let Some((measurement, _, soc)) = run_elf(FIRMWARE, &path)? else {
        return Ok(None);
    };
    let console = String::from_utf8_lossy(&soc.uart.transmitted()).into_owned();
    if !console.ends_with("ready\r\n") {
        return Err(format!(
            "{FIRMWARE} {}: boot did not finish: {console:?}",
            path.display()
        ));
    }
    Ok(Some(measurement))
}

/// The Rust benchmark (`softcore-fw/bench`, built by `cargo xtask
/// firmware`) on the core, from reset to its `wfi`: four kernels of
/// compiled Rust, CRC-32, a sorted linked list, a matrix product and a
/// tokenizer. The run counts only if every kernel's result matched the
/// host's. `None` without an ELF.
fn measure_rust_bench() -> Result<Option<Measurement>, String> {
    let path = rust_bench::elf_path();
    let Some((measurement, mut core, _)) = run_elf(RUST_BENCH, &path)? else {
        return Ok(None);
    };
    rust_bench::verdict(core.register(usize::from(rust_bench::PASSED_REGISTER)))
        .map_err(|wrong| format!("{RUST_BENCH} {}: {wrong}", path.display()))?;
    Ok(Some(measurement))
}

fn measure(program: &Program, platform: Platform) -> Result<Measurement, String> {
    let mut bus = HarvardBus::reference();
    program
        .write_to(&mut bus)
        .map_err(|e| format!("{}: loading failed: {e}", program.name))?;
    let failed =
        |e: &dyn std::fmt::Display| format!("{} on the {}: {e}", program.name, platform.name());
    let (ok, (instructions, cycles, seconds)) = match platform {
        Platform::Core => {
            let mut core = CoreBench::new(bus, INSTRUCTION_RAM_BASE).map_err(|e| failed(&e))?;
            let run = run_to_end(&mut core, program)?;
            let ok = match &program.expected {
                Expected::Register { reg, value } => core.register(usize::from(*reg)) == *value,
                Expected::DataRam(bytes) => core.bus().data_ram().starts_with(bytes),
            };
            (ok, run)
        }
        Platform::Soc => {
            let image = MemoryImage::from_bus(&bus).map_err(|e| failed(&e))?;
            let soc = Soc::new(&image).map_err(|e| failed(&e))?;
            let mut soc = SocBench::new(soc).map_err(|e| failed(&e))?;
            let run = run_to_end(&mut soc, program)?;
            let ok = match &program.expected {
                Expected::Register { reg, value } => soc.register(usize::from(*reg)) == *value,
                Expected::DataRam(bytes) => soc.data_ram().starts_with(bytes),
            };
            (ok, run)
        }
    };
    if !ok {
        return Err(format!(
            "{} on the {}: wrong result",
            program.name,
            platform.name()
        ));
    }
    Ok(Measurement {
        program: program.name,
        platform,
        instructions,
        cycles,
        seconds,
    })
}

fn main() -> ExitCode {
    let json = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--json") => true,
        Some("-h" | "--help") => {
            eprintln!("usage: core-bench [--json]");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("unknown argument {other}; try --help");
            return ExitCode::FAILURE;
        }
    };
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let mut results = Vec::new();
    for platform in [Platform::Core, Platform::Soc] {
        for program in suite() {
            match measure(&program, platform) {
                Ok(m) => results.push(m),
                Err(msg) => {
                    eprintln!("core-bench: {msg}; the core is wrong, not slow");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    for (measured, what, path) in [
        (measure_firmware(), "firmware", elf::firmware_path()),
        (measure_rust_bench(), "benchmark", rust_bench::elf_path()),
    ] {
        match measured {
            Ok(Some(m)) => results.push(m),
            Ok(None) => eprintln!(
                "core-bench: no {what} ELF at {} (`cargo xtask firmware` builds it): \
                 its row is left out",
                path.display()
            ),
            Err(msg) => {
                eprintln!("core-bench: {msg}; the core is wrong, not slow");
                return ExitCode::FAILURE;
            }
        }
    }
    // Cycles and seconds over every program, per platform: the core's
    // figure first (the one this benchmark always reported), then the SoC's.
    let totals: Vec<(Platform, u64, f64)> = [Platform::Core, Platform::Soc]
        .into_iter()
        .map(|platform| {
            let runs = results
                .iter()
                .filter(|m| m.platform == platform && ![FIRMWARE, RUST_BENCH].contains(&m.program));
            let cycles = runs.clone().map(|m| m.cycles).sum();
            let seconds = runs.map(|m| m.seconds).sum();
            (platform, cycles, seconds)
        })
        .collect();
    let (_, total_cycles, total_seconds) = totals[0];
    let (_, soc_cycles, soc_seconds) = totals[1];
    let config = "5-stage RV32IM+Zicsr, static backward-taken prediction, \
                  mul 2 cycles, div 34 cycles; core: Rust HarvardBus::reference memory; \
                  soc: all-RTL SoC with the reference block RAMs";
    if json {
        let rows: Vec<String> = results
            .iter()
            .map(|m| {
                format!(
                    "{{\"program\":\"{}\",\"platform\":\"{}\",\"instructions\":{},\"cycles\":{},\"cpi\":{:.4},\"seconds\":{:.6},\"cycles_per_second\":{:.0}}}",
                    m.program,
                    m.platform.name(),
                    m.instructions,
                    m.cycles,
                    m.cpi(),
                    m.seconds,
                    m.cycles_per_second()
                )
            })
            .collect();
        println!(
            "{{\"config\":{{\"profile\":\"{profile}\",\"driver\":\"CycleDriver (single thread)\",\"core\":\"{config}\"}},\"results\":[{}],\"cycles_per_second\":{:.0},\"soc_cycles_per_second\":{:.0}}}",
            rows.join(","),
            total_cycles as f64 / total_seconds,
            soc_cycles as f64 / soc_seconds
        );
    } else {
        println!("weft-hdl soft core benchmark: {profile} build, single-thread CycleDriver");
        println!("core: {config}");
        println!(
            "{:<16} {:<8} {:>12} {:>10} {:>6} {:>9} {:>10}",
            "program", "platform", "instructions", "cycles", "CPI", "seconds", "cycles/s"
        );
        for m in &results {
            println!(
                "{:<16} {:<8} {:>12} {:>10} {:>6.3} {:>9.3} {:>10.0}",
                m.program,
                m.platform.name(),
                m.instructions,
                m.cycles,
                m.cpi(),
                m.seconds,
                m.cycles_per_second()
            );
        }
        for (platform, cycles, seconds) in totals {
            println!(
                "{:<16} {:<8} {:>12} {:>10} {:>6} {:>9.3} {:>10.0}",
                "all",
                platform.name(),
                "",
                cycles,
                "",
                seconds,
                cycles as f64 / seconds
            );
        }
    }
    ExitCode::SUCCESS
}
