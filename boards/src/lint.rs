//! Linting a generated wrapper with Verilator against the black-box stubs.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::generate;
use crate::verilog;

/// Verilator's lint flags for the wrapper: every warning on.
pub const FLAGS: &[&str] = &["--lint-only", "-Wall"];

/// Why the lint did not pass.
#[derive(Debug)]
pub enum LintError {
    /// Verilator is not installed.
    NoVerilator,
    /// Verilator could not be started.
    Start(std::io::Error),
    /// Verilator found problems.
    Failed {
        /// The files linted.
        files: Vec<PathBuf>,
        /// Verilator's report.
        report: String,
    },
}

impl fmt::Display for LintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LintError::NoVerilator => write!(
                f,
                "verilator is not installed; `cargo xtask setup` installs it"
            ),
            LintError::Start(error) => write!(f, "could not run verilator: {error}"),
            LintError::Failed { files, report } => {
                let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
                write!(
                    f,
                    "verilator --lint-only failed on {}:\n{report}",
                    names.join(" ")
                )
            }
        }
    }
}

impl std::error::Error for LintError {}

/// Whether `verilator` can be run.
pub fn verilator_available() -> bool {
    Command::new("verilator")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// The Verilog files to lint a board's wrapper with: the wrapper, the
/// crossing blocks, and `weft_switch_top` from `design_dir` if emitted, else
/// its planned stub.
pub fn files(board_dir: &Path, design_dir: &Path) -> Vec<PathBuf> {
    let real_top = design_dir.join("weft_switch_top.v");
    let top = if real_top.is_file() {
        real_top
    } else {
        board_dir.join(generate::PLANNED_TOP)
    };
    vec![
        board_dir.join(generate::WRAPPER),
        board_dir.join(generate::ADAPTERS),
        top,
    ]
}

/// Lints the generated wrapper in `board_dir` with `verilator --lint-only -Wall`.
pub fn run(board_dir: &Path, design_dir: &Path) -> Result<(), LintError> {
    if !verilator_available() {
        return Err(LintError::NoVerilator);
    }
    let files = files(board_dir, design_dir);
    let out = Command::new("verilator")
        .args(FLAGS)
        // rust-hdl's own output is linted by `cargo xtask verilog` with its
        // allowances; here only the wrapper's own warnings count.
        .args(["-Wno-WIDTH", "-Wno-DECLFILENAME", "-Wno-UNOPTFLAT"])
        .arg(format!("+define+{}", verilog::STUB_DEFINE))
        .args(["--top-module", verilog::TOP])
        .args(&files)
        .output()
        .map_err(LintError::Start)?;
    if out.status.success() {
        Ok(())
    } else {
        Err(LintError::Failed {
            files,
            report: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}
