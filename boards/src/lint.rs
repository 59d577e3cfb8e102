//! Linting a generated wrapper with Verilator against the black-box stubs,
//! and elaborating it with yosys.

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
    /// A tool could not be started.
    Start {
        /// The tool.
        tool: &'static str,
        /// Why not.
        error: std::io::Error,
    },
    /// yosys is not installed.
    NoYosys,
    /// yosys could not elaborate the wrapper or found a problem in it.
    Elaboration {
        /// yosys's report.
        report: String,
    },
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
            LintError::NoYosys => {
                write!(f, "yosys is not installed; `cargo xtask setup` installs it")
            }
            LintError::Elaboration { report } => {
                write!(f, "yosys could not elaborate the wrapper:\n{report}")
            }
            LintError::Start { tool, error } => write!(f, "could not run {tool}: {error}"),
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
/// crossing blocks, and `weft_chip` from `design_dir` if emitted, else
/// its planned stub.
pub fn files(board_dir: &Path, design_dir: &Path) -> Vec<PathBuf> {
    let real_top = design_dir.join(crate::project::CHIP_FILE);
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
        .map_err(|error| LintError::Start {
            tool: "verilator",
            error,
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(LintError::Failed {
            files,
            report: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}

/// Whether `yosys` can be run.
pub fn yosys_available() -> bool {
    Command::new("yosys")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Elaborates the generated wrapper in `board_dir` with yosys against the
/// vendor stubs (PLL and hard IPs as black boxes): every module and port
/// resolves, and `check -assert` finds no undriven or multiply driven net.
pub fn elaborate(board_dir: &Path, design_dir: &Path) -> Result<(), LintError> {
    if !yosys_available() {
        return Err(LintError::NoYosys);
    }
    let files: Vec<String> = files(board_dir, design_dir)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let script = format!(
        "read_verilog -D{} {}; hierarchy -check -top {}; proc; check -assert",
        verilog::STUB_DEFINE,
        files.join(" "),
        verilog::TOP
    );
    let out = Command::new("yosys")
        .args(["-q", "-p", &script])
        .output()
        .map_err(|error| LintError::Start {
            tool: "yosys",
            error,
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(LintError::Elaboration {
            report: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_plane_alone_is_not_taken_for_the_chip_top() {
        // weft-hdl emits `weft_switch_top.v`, the data plane without the
        // soft core, beside the designs; the wrapper needs `weft_chip`.
        let dir = std::env::temp_dir().join(format!("weft-lint-files-{}", std::process::id()));
        let design = dir.join("design");
        std::fs::create_dir_all(&design).expect("temp dir is writable");
        std::fs::write(
            design.join("weft_switch_top.v"),
            "module weft_switch_top; endmodule\n",
        )
        .expect("temp dir is writable");
        let board = dir.join("board");
        assert_eq!(
            files(&board, &design)[2],
            board.join(generate::PLANNED_TOP),
            "without weft_chip.v the planned stub is linted against"
        );
        std::fs::write(design.join("weft_chip.v"), "module weft_chip; endmodule\n")
            .expect("temp dir is writable");
        assert_eq!(files(&board, &design)[2], design.join("weft_chip.v"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
