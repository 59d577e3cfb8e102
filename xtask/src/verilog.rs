//! Emitting the top-level designs as Verilog and linting them with Verilator.

use std::{
    env, fs,
    path::{Path, PathBuf},
    process::Command,
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
/// check it asked for beyond lint (`synthesize` or `structure`).
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
/// `verilator --lint-only -Wall` and synthesizes (or elaborates) each with yosys.
pub fn emit_and_lint(root: &Path) -> Result<()> {
    let designs = emit(root)?;
    for Emitted {
        file,
        module,
        check,
    } in &designs
    {
        run(Command::new("verilator").args(VERILATOR_LINT).arg(file))?;
        let script = match check.as_str() {
            "synthesize" => format!(
                "read_verilog {}; synth -top {module}; check -assert",
                file.display()
            ),
            "structure" => format!(
                "read_verilog {}; hierarchy -top {module}; proc; flatten; opt_clean; check -assert",
                file.display()
            ),
            other => bail!(
                "weft-verilog asked for an unknown check {other:?} on {}",
                file.display()
            ),
        };
        run(Command::new("yosys").args(["-q", "-p", &script]))?;
    }
    println!(
        "verilog: {} designs emitted, lint-clean, and synthesized (or elaborated) by yosys without logic loops in {}",
        designs.len(),
        root.join("target").join("verilog").display()
    );
    Ok(())
}
