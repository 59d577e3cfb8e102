//! Writing a board's complete vendor project into one directory.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use crate::constraints;
use crate::model::{Board, Vendor};
use crate::program;
use crate::project;
use crate::validate;
use crate::verilog;

/// A generated file: its name in the output directory and its text.
#[derive(Clone, Debug)]
pub struct File {
    /// Path relative to the board's output directory.
    pub name: String,
    /// Contents.
    pub text: String,
}

/// Why generation failed.
#[derive(Debug)]
pub enum GenerateError {
    /// The board file leaves facts a build needs unconfirmed, so no build
    /// script is written ([`crate::validate::unconfirmed_required`]).
    Unconfirmed {
        /// The board.
        board: String,
        /// The open facts, by field.
        facts: Vec<String>,
    },
    /// A file or directory could not be written.
    Write {
        /// The path.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
}

impl fmt::Display for GenerateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenerateError::Unconfirmed { board, facts } => {
                write!(
                    f,
                    "no build script for {board}: boards/data/{board}.toml leaves {} fact(s) a \
                     build needs unconfirmed:",
                    facts.len()
                )?;
                for fact in facts {
                    write!(f, "\n  - {fact}")?;
                }
                write!(
                    f,
                    "\nconfirm each from the kit's user guide or schematic, cite it in the \
                     board file, and generate again (pins are never guessed)"
                )
            }
            GenerateError::Write { path, error } => {
                write!(f, "could not write {}: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for GenerateError {}

/// File name of the wrapper.
pub const WRAPPER: &str = "weft_board_top.v";
/// File name of the adapter modules: clock-domain crossing and tile shims.
pub const ADAPTERS: &str = "weft_board_adapters.v";
/// File name of the chip top's interface stub, for lint without an emitted chip.
pub const PLANNED_TOP: &str = "lint/weft_chip_planned.v";

/// The files every board gets, buildable or not: the wrapper and its
/// adapters, the planned chip top, the constraints and the load step.
pub fn files(board: &Board) -> Vec<File> {
    let file = |name: &str, text: String| File {
        name: name.to_owned(),
        text,
    };
    let mut out = vec![
        file(WRAPPER, verilog::wrapper(board)),
        file(ADAPTERS, verilog::support_modules()),
        file(PLANNED_TOP, verilog::planned_switch_top()),
        file("program.sh", program::program_sh(board)),
    ];
    match board.board.vendor {
        Vendor::Intel => {
            out.push(file("pins.tcl", constraints::quartus_pins(board)));
            out.push(file("weft.sdc", constraints::quartus_sdc(board)));
        }
        Vendor::Xilinx => {
            out.push(file("weft.xdc", constraints::xdc(board)));
            out.push(file("program.tcl", project::vivado_program_tcl(board)));
        }
    }
    out
}

/// The files that build the bitstream: `build.sh` and the vendor project
/// script, which reads the emitted chip ([`project::CHIP_FILE`]). Refused
/// while the board file leaves a fact a build needs unconfirmed, so no
/// bitstream is ever built on a guessed pin.
pub fn build_files(board: &Board) -> Result<Vec<File>, GenerateError> {
    let facts = validate::unconfirmed_required(board);
    if !facts.is_empty() {
        return Err(GenerateError::Unconfirmed {
            board: board.board.name.clone(),
            facts,
        });
    }
    let project = match board.board.vendor {
        Vendor::Intel => project::quartus_tcl(board),
        Vendor::Xilinx => project::vivado_tcl(board),
    };
    Ok(vec![
        File {
            name: BUILD_SCRIPT.to_owned(),
            text: project::build_sh(board),
        },
        File {
            name: PROJECT_SCRIPT.to_owned(),
            text: project,
        },
    ])
}

/// File name of the build script.
pub const BUILD_SCRIPT: &str = "build.sh";
/// File name of the vendor project script.
pub const PROJECT_SCRIPT: &str = "project.tcl";

fn write_file(out_dir: &Path, f: File) -> Result<PathBuf, GenerateError> {
    let path = out_dir.join(&f.name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|error| GenerateError::Write {
            path: parent.to_owned(),
            error,
        })?;
    }
    fs::write(&path, f.text).map_err(|error| GenerateError::Write {
        path: path.clone(),
        error,
    })?;
    Ok(path)
}

/// Writes the files every board gets ([`files`]) under `out_dir`,
/// returning their paths.
pub fn write(board: &Board, out_dir: &Path) -> Result<Vec<PathBuf>, GenerateError> {
    files(board)
        .into_iter()
        .map(|f| write_file(out_dir, f))
        .collect()
}

/// Writes the build files ([`build_files`]) under `out_dir`, returning
/// their paths. When they are refused, the ones
/// an earlier run left there are removed, so no stale script builds the
/// board on facts since found open.
pub fn write_build(board: &Board, out_dir: &Path) -> Result<Vec<PathBuf>, GenerateError> {
    match build_files(board) {
        Ok(files) => files.into_iter().map(|f| write_file(out_dir, f)).collect(),
        Err(refused) => {
            for name in [BUILD_SCRIPT, PROJECT_SCRIPT] {
                let _ = fs::remove_file(out_dir.join(name));
            }
            Err(refused)
        }
    }
}
