//! Measures the RTL soft core on the ISS's benchmark programs: cycles per
//! instruction, and the single-thread cycle driver's speed in simulated
//! cycles per second.
//!
//! Usage: `cargo run --release -p weft-hdl --bin core-bench [-- --json]`
//!
//! Each program runs on `weft_hdl::core::CoreBench` (the core with Rust
//! RAM models on the reference memory map) from reset to its final `wfi`;
//! its result is checked against the program's plain-Rust reference, so a
//! wrong core fails here instead of reporting a figure. CPI counts every
//! clock cycle from the end of reset to the cycle the final `wfi` retires,
//! pipeline fill included.
#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::time::Instant;

use weft_hdl::core::CoreBench;
use weft_iss::encode::wfi;
use weft_iss::programs::{self, Expected, Program};
use weft_iss::HarvardBus;
use weft_regs::INSTRUCTION_RAM_BASE;

/// Clock cycles after which a program counts as hung.
const CYCLE_LIMIT: u64 = 50_000_000;

struct Measurement {
    program: &'static str,
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

fn measure(program: &Program) -> Result<Measurement, String> {
    let mut bus = HarvardBus::reference();
    program
        .write_to(&mut bus)
        .map_err(|e| format!("{}: loading failed: {e}", program.name))?;
    let mut core =
        CoreBench::new(bus, INSTRUCTION_RAM_BASE).map_err(|e| format!("{}: {e}", program.name))?;
    let first = core.cycles();
    let end = INSTRUCTION_RAM_BASE + 4 * (program.code.len() as u32 - 1);
    let mut instructions = 0;
    let start = Instant::now();
    loop {
        let retired = core.cycle().map_err(|e| format!("{}: {e}", program.name))?;
        if let Some(r) = retired.map(|r| r.retirement) {
            if let Some(trap) = r.trap {
                return Err(format!(
                    "{}: unexpected trap {trap:?} at {:#x}",
                    program.name, r.pc
                ));
            }
            instructions += 1;
            if r.pc == end && r.instruction == Some(wfi()) {
                break;
            }
        }
        if core.cycles() - first > CYCLE_LIMIT {
            return Err(format!(
                "{}: no final wfi within {CYCLE_LIMIT} cycles",
                program.name
            ));
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let ok = match &program.expected {
        Expected::Register { reg, value } => core.register(usize::from(*reg)) == *value,
        Expected::DataRam(bytes) => core.bus().data_ram().starts_with(bytes),
    };
    if !ok {
        return Err(format!("{}: wrong result", program.name));
    }
    Ok(Measurement {
        program: program.name,
        instructions,
        cycles: core.cycles() - first,
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
    for program in suite() {
        match measure(&program) {
            Ok(m) => results.push(m),
            Err(msg) => {
                eprintln!("core-bench: {msg}; the core is wrong, not slow");
                return ExitCode::FAILURE;
            }
        }
    }
    let total_cycles: u64 = results.iter().map(|m| m.cycles).sum();
    let total_seconds: f64 = results.iter().map(|m| m.seconds).sum();
    let config = "5-stage RV32IM+Zicsr, static backward-taken prediction, \
                  mul 2 cycles, div 34 cycles; memory: HarvardBus::reference";
    if json {
        let rows: Vec<String> = results
            .iter()
            .map(|m| {
                format!(
                    "{{\"program\":\"{}\",\"instructions\":{},\"cycles\":{},\"cpi\":{:.4},\"seconds\":{:.6},\"cycles_per_second\":{:.0}}}",
                    m.program,
                    m.instructions,
                    m.cycles,
                    m.cpi(),
                    m.seconds,
                    m.cycles_per_second()
                )
            })
            .collect();
        println!(
            "{{\"config\":{{\"profile\":\"{profile}\",\"driver\":\"CycleDriver (single thread)\",\"core\":\"{config}\"}},\"results\":[{}],\"cycles_per_second\":{:.0}}}",
            rows.join(","),
            total_cycles as f64 / total_seconds
        );
    } else {
        println!("weft-hdl soft core benchmark: {profile} build, single-thread CycleDriver");
        println!("core: {config}");
        println!(
            "{:<16} {:>12} {:>10} {:>6} {:>9} {:>10}",
            "program", "instructions", "cycles", "CPI", "seconds", "cycles/s"
        );
        for m in &results {
            println!(
                "{:<16} {:>12} {:>10} {:>6.3} {:>9.3} {:>10.0}",
                m.program,
                m.instructions,
                m.cycles,
                m.cpi(),
                m.seconds,
                m.cycles_per_second()
            );
        }
        println!(
            "{:<16} {:>12} {:>10} {:>6} {:>9.3} {:>10.0}",
            "all",
            "",
            total_cycles,
            "",
            total_seconds,
            total_cycles as f64 / total_seconds
        );
    }
    ExitCode::SUCCESS
}
