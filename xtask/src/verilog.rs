//! Emitting the top-level designs as Verilog and linting them with Verilator.

use std::{
    env, fs,
    path::{Path, PathBuf},
    process::Command,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Mutex,
    },
    thread,
    time::Instant,
};

use anyhow::{bail, Context, Result};

use crate::command::run;

/// Verilator's lint, every warning on but the ones listed with their reason.
const VERILATOR_LINT: &[&str] = &[
    "--lint-only",
    "-Wall",
    // rust-hdl writes every literal as 32 bits and every `bit_cast` as a
    // mask, so operand widths differ in the text although each value's
    // width is fixed by its `Bits<N>` type, which rustc checks.
    "-Wno-WIDTH",
    // rust-hdl writes a design and all of its submodules into one file, so
    // only the top module can match the file's name.
    "-Wno-DECLFILENAME",
    // rust-hdl writes each module's combinational logic as one `always @(*)`,
    // so a module that feeds one submodule output back into another's input
    // looks like a loop to Verilator's block-level ordering (UNOPTFLAT, a
    // simulation-speed warning). Real combinational loops are caught by
    // yosys's `check -assert` below, and by rust-hdl's settling in tests.
    "-Wno-UNOPTFLAT",
];

/// One design `weft-verilog` wrote: its file, its top module and the
/// check it asked for beyond lint (`synthesize`, `structure` or `lint`:
/// none).
pub struct Emitted {
    /// The `.v` file.
    pub file: PathBuf,
    /// The top module, the file's stem.
    pub module: String,
    /// The word weft-hdl's `emit::Check` prints.
    pub check: String,
}

/// Emits every top-level design into `target/verilog/` with weft-hdl's
/// `weft-verilog` and returns what it wrote.
pub fn emit(root: &Path) -> Result<Vec<Emitted>> {
    let out_dir = root.join("target").join("verilog");
    fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let emitted = Command::new(cargo)
        .current_dir(root)
        .args([
            "run",
            "--quiet",
            "--release",
            "--package",
            "weft-hdl",
            "--bin",
            "weft-verilog",
            "--",
        ])
        .arg(&out_dir)
        .output()
        .context("could not run weft-verilog")?;
    if !emitted.status.success() {
        bail!(
            "weft-verilog failed ({}):\n{}",
            emitted.status,
            String::from_utf8_lossy(&emitted.stderr)
        );
    }
    let listing = String::from_utf8_lossy(&emitted.stdout);
    let mut designs = Vec::new();
    for line in listing.lines() {
        let (file, check) = line
            .split_once('\t')
            .with_context(|| format!("weft-verilog printed {line:?}, not a file and a check"))?;
        let file = PathBuf::from(file);
        let module = file
            .file_stem()
            .and_then(|stem| stem.to_str())
            .context("emitted file names are module names")?
            .to_owned();
        designs.push(Emitted {
            file,
            module,
            check: check.to_owned(),
        });
    }
    if designs.is_empty() {
        bail!("weft-verilog wrote no designs into {}", out_dir.display());
    }
    Ok(designs)
}

/// Emits every top-level design into `target/verilog/`, lints each with
/// `verilator --lint-only -Wall` and synthesizes (or elaborates) each with
/// yosys. Both tools are single-threaded, so the designs are checked on as
/// many threads as the machine has CPUs, largest file first.
pub fn emit_and_lint(root: &Path) -> Result<()> {
    let started = Instant::now();
    let mut designs = emit(root)?;
    eprintln!(
        "xtask: {} designs emitted in {:.0} s",
        designs.len(),
        started.elapsed().as_secs_f64()
    );
    designs.sort_by_cached_key(|design| {
        std::cmp::Reverse(fs::metadata(&design.file).map_or(0, |meta| meta.len()))
    });
    let threads = thread::available_parallelism().map_or(1, |n| n.get());
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    thread::scope(|scope| {
        for _ in 0..threads.min(designs.len()) {
            scope.spawn(|| {
                while let Some(design) = designs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Err(err) = check(design) {
                        failures.lock().expect("no checker panics").push(err);
                    }
                }
            });
        }
    });
    if let Some(first) = failures
        .into_inner()
        .expect("no checker panics")
        .into_iter()
        .next()
    {
        return Err(first);
    }
    println!(
        "verilog: {} designs emitted, lint-clean, and synthesized (or elaborated) by yosys without logic loops, but for those made of the others, in {} ({:.0} s)",
        designs.len(),
        root.join("target").join("verilog").display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Lints one design with Verilator, then synthesizes or elaborates it with
/// yosys as weft-verilog asked, and says how long both took.
fn check(design: &Emitted) -> Result<()> {
    let Emitted {
        file,
        module,
        check,
    } = design;
    let started = Instant::now();
    run(Command::new("verilator").args(VERILATOR_LINT).arg(file))?;
    // "lint": a design made of others, elaborated as designs of their own.
    let script = match check.as_str() {
        "lint" => None,
        "synthesize" => Some(format!(
            "read_verilog {}; synth -top {module}; check -assert",
            file.display()
        )),
        "structure" => Some(format!(
            "read_verilog {}; hierarchy -top {module}; proc; flatten; opt_clean; check -assert",
            file.display()
        )),
        other => bail!(
            "weft-verilog asked for an unknown check {other:?} on {}",
            file.display()
        ),
    };
    if let Some(script) = script {
        run(Command::new("yosys").args(["-q", "-p", &script]))?;
    }
    eprintln!(
        "xtask: {module} checked in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
