//! Emitting the top-level designs as Verilog and linting them with Verilator.

use std::{
    env, fs,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{bail, Context, Result};

use crate::command::run;

/// Emits every top-level design into `target/verilog/`, lints each with
/// `verilator --lint-only -Wall`, and returns the files written.
pub fn emit_and_lint(root: &Path) -> Result<Vec<PathBuf>> {
    let out_dir = root.join("target").join("verilog");
    fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    run(Command::new(cargo)
        .current_dir(root)
        .args(["run", "--quiet", "--release", "--package", "weft-hdl", "--bin", "weft-verilog", "--"])
        .arg(&out_dir))?;
    let mut files: Vec<PathBuf> = fs::read_dir(&out_dir)?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "v"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("weft-verilog wrote no .v files into {}", out_dir.display());
    }
    for file in &files {
        run(Command::new("verilator").args(["--lint-only", "-Wall"]).arg(file))?;
    }
    println!("verilog: {} designs emitted and lint-clean in {}", files.len(), out_dir.display());
    Ok(files)
}
