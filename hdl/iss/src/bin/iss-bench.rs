//! Measures the ISS's speed in instructions per second on the
//! hand-assembled programs of `weft_iss::programs`.
//!
//! Usage: `cargo run --release -p weft-iss --bin iss-bench [-- --json] [--seconds S]`
//!
//! Each program is reloaded and run repeatedly until the time budget is
//! spent, in two modes: `run` (the system simulator's fast path, no
//! records) and `step` (one retirement record per instruction, as the
//! lock-step comparison with the RTL core consumes them). Every run's
//! result is checked against the program's host reference.
//!
//! A last row runs the Rust benchmark's ELF (`softcore-fw/bench`, built by
//! `cargo xtask firmware`) the same way, every kernel's result checked
//! against the host's; it is left out, with a note, when the ELF is absent.
#![forbid(unsafe_code)]

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use weft_iss::programs::{self, Program};
use weft_iss::rust_bench;
use weft_iss::{Hart, HarvardBus, RunStop, Step};

/// The Rust benchmark's row in the table.
const RUST_BENCH: &str = "rust bench";

/// What runs: a generated program, or a compiled one.
enum Workload {
    /// One of `weft_iss::programs`.
    Generated(Program),
    /// The Rust benchmark's ELF image.
    RustBench(Vec<u8>),
}

impl Workload {
    fn name(&self) -> &'static str {
        match self {
            Workload::Generated(program) => program.name,
            Workload::RustBench(_) => RUST_BENCH,
        }
    }

    /// Loads the workload and resets the hart to its entry point.
    fn load(&self, hart: &mut Hart<HarvardBus>) -> Result<(), String> {
        match self {
            Workload::Generated(program) => program.load(hart).map_err(|f| f.to_string()),
            Workload::RustBench(image) => {
                let loaded = hart.load_elf(image).map_err(|e| e.to_string())?;
                hart.reset(loaded.entry);
                Ok(())
            }
        }
    }

    /// Why the halted hart's result is wrong, if it is.
    fn check(&self, hart: &Hart<HarvardBus>) -> Result<(), String> {
        match self {
            Workload::Generated(program) if program.succeeded(hart) => Ok(()),
            Workload::Generated(_) => Err("result differs from the host reference".into()),
            Workload::RustBench(_) => rust_bench::verdict(hart.reg(rust_bench::PASSED_REGISTER))
                .map_err(|wrong| wrong.to_string()),
        }
    }
}

/// Upper bound on the steps of one program run; the programs halt long
/// before it.
const STEP_LIMIT: u64 = 1 << 32;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Run,
    Step,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Run => "run",
            Mode::Step => "step",
        }
    }
}

struct Measurement {
    program: &'static str,
    mode: Mode,
    runs: u32,
    instructions: u64,
    elapsed: Duration,
}

impl Measurement {
    fn per_second(&self) -> f64 {
        self.instructions as f64 / self.elapsed.as_secs_f64()
    }
}

/// Runs `program` once; returns retired instructions and wall time, or
/// why the run is wrong.
fn run_once(
    hart: &mut Hart<HarvardBus>,
    program: &Workload,
    mode: Mode,
) -> Result<(u64, Duration), String> {
    let name = program.name();
    program
        .load(hart)
        .map_err(|f| format!("{name}: cannot load: {f}"))?;
    let start = Instant::now();
    match mode {
        Mode::Run => {
            let summary = hart.run(STEP_LIMIT);
            if summary.stop != RunStop::Idle {
                return Err(format!("{name}: did not halt"));
            }
        }
        Mode::Step => loop {
            match black_box(hart.step()) {
                Step::Idle => break,
                Step::Retired(r) if r.trap.is_some() => {
                    return Err(format!("{name}: unexpected trap {:?}", r.trap));
                }
                Step::Retired(_) => {}
            }
        },
    }
    let elapsed = start.elapsed();
    program.check(hart).map_err(|e| format!("{name}: {e}"))?;
    Ok((hart.csrs().minstret(), elapsed))
}

fn measure(program: &Workload, mode: Mode, budget: Duration) -> Result<Measurement, String> {
    let mut hart = Hart::new(HarvardBus::reference());
    let mut m = Measurement {
        program: program.name(),
        mode,
        runs: 0,
        instructions: 0,
        elapsed: Duration::ZERO,
    };
    while m.elapsed < budget || m.runs < 3 {
        let (n, t) = run_once(&mut hart, program, mode)?;
        m.runs += 1;
        m.instructions += n;
        m.elapsed += t;
    }
    Ok(m)
}

/// The generated programs, then the Rust benchmark if its ELF is built.
fn suite() -> Vec<Workload> {
    // Pseudo-random inputs from a fixed xorshift so every run is identical.
    let mut s = 0x2545_F491_u32;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    };
    let crc_input: Vec<u8> = (0..48 * 1024).map(|_| next() as u8).collect();
    let sort_input: Vec<i32> = (0..1024).map(|_| next() as i32).collect();
    let mut suite: Vec<Workload> = [
        programs::crc32(crc_input),
        programs::insertion_sort(&sort_input),
        programs::lcg_mix(0x1234_5678, 200_000),
    ]
    .into_iter()
    .map(Workload::Generated)
    .collect();
    let path = rust_bench::elf_path();
    match std::fs::read(&path) {
        Ok(image) => suite.push(Workload::RustBench(image)),
        Err(_) => eprintln!(
            "iss-bench: no benchmark ELF at {} (`cargo xtask firmware` builds it): \
             its row is left out",
            path.display()
        ),
    }
    suite
}

struct Options {
    json: bool,
    budget: Duration,
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options {
        json: false,
        budget: Duration::from_secs(1),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--json" => opts.json = true,
            "--seconds" => {
                let v = args
                    .next()
                    .ok_or("--seconds needs a value, e.g. --seconds 0.5")?;
                let secs: f64 = v
                    .parse()
                    .map_err(|_| format!("--seconds {v}: not a number of seconds"))?;
                if !(secs.is_finite() && secs > 0.0) {
                    return Err(format!("--seconds {v}: must be positive"));
                }
                opts.budget = Duration::from_secs_f64(secs);
            }
            "-h" | "--help" => {
                return Err("usage: iss-bench [--json] [--seconds S]  (S: time per program and mode, default 1)".into())
            }
            other => return Err(format!("unknown argument {other}; try --help")),
        }
    }
    Ok(opts)
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("{msg}");
            return ExitCode::FAILURE;
        }
    };
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let mut results = Vec::new();
    for program in suite() {
        for mode in [Mode::Run, Mode::Step] {
            match measure(&program, mode, opts.budget) {
                Ok(m) => results.push(m),
                Err(msg) => {
                    eprintln!("iss-bench: {msg}; the ISS is wrong, not slow");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    let bus = format!(
        "HarvardBus::reference (instruction RAM {} KiB at {:#010x}, data RAM {} KiB at {:#010x})",
        weft_regs::INSTRUCTION_RAM_SIZE / 1024,
        weft_regs::INSTRUCTION_RAM_BASE,
        weft_regs::DATA_RAM_SIZE / 1024,
        weft_regs::DATA_RAM_BASE
    );
    if opts.json {
        let rows: Vec<String> = results
            .iter()
            .map(|m| {
                format!(
                    "{{\"program\":\"{}\",\"mode\":\"{}\",\"runs\":{},\"instructions\":{},\"seconds\":{:.6},\"instructions_per_second\":{:.0}}}",
                    m.program,
                    m.mode.name(),
                    m.runs,
                    m.instructions,
                    m.elapsed.as_secs_f64(),
                    m.per_second()
                )
            })
            .collect();
        println!(
            "{{\"config\":{{\"profile\":\"{profile}\",\"bus\":\"{bus}\",\"seconds_per_measurement\":{}}},\"results\":[{}]}}",
            opts.budget.as_secs_f64(),
            rows.join(",")
        );
    } else {
        println!("weft-iss benchmark: {profile} build, {bus}");
        println!(
            "{:<16} {:<5} {:>6} {:>14} {:>9} {:>10}",
            "program", "mode", "runs", "instructions", "seconds", "M instr/s"
        );
        for m in &results {
            println!(
                "{:<16} {:<5} {:>6} {:>14} {:>9.3} {:>10.1}",
                m.program,
                m.mode.name(),
                m.runs,
                m.instructions,
                m.elapsed.as_secs_f64(),
                m.per_second() / 1e6
            );
        }
    }
    ExitCode::SUCCESS
}
