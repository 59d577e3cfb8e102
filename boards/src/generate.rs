//! Writing a board's complete vendor project into one directory.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use crate::constraints;
use crate::model::{Board, Vendor};
use crate::program;
use crate::project;
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
/// File name of the planned switch top's stub, for lint only.
pub const PLANNED_TOP: &str = "lint/weft_switch_top_planned.v";

/// The emitted design's Verilog files in `design_dir`, by file name, sorted.
pub fn design_files(design_dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = fs::read_dir(design_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|name| name.ends_with(".v"))
        .collect();
    files.sort();
    files
}

/// Every file of the board's project. The project scripts list the emitted
/// design's files (`design_files`) and always `weft_switch_top.v`.
pub fn files(board: &Board, design_files: &[String]) -> Vec<File> {
    let mut design: Vec<String> = design_files.to_vec();
    if !design.iter().any(|f| f == "weft_switch_top.v") {
        design.push("weft_switch_top.v".to_owned());
    }
    let file = |name: &str, text: String| File {
        name: name.to_owned(),
        text,
    };
    let mut out = vec![
        file(WRAPPER, verilog::wrapper(board)),
        file(ADAPTERS, verilog::support_modules()),
        file(PLANNED_TOP, verilog::planned_switch_top()),
        file("build.sh", project::build_sh(board)),
        file("program.sh", program::program_sh(board)),
    ];
    match board.board.vendor {
        Vendor::Intel => {
            out.push(file("pins.tcl", constraints::quartus_pins(board)));
            out.push(file("weft.sdc", constraints::quartus_sdc(board)));
            out.push(file("project.tcl", project::quartus_tcl(board, &design)));
        }
        Vendor::Xilinx => {
            out.push(file("weft.xdc", constraints::xdc(board)));
            out.push(file("project.tcl", project::vivado_tcl(board, &design)));
            out.push(file("program.tcl", project::vivado_program_tcl(board)));
        }
    }
    out
}

/// Writes every file of the board's project under `out_dir`, returning their paths.
pub fn write(
    board: &Board,
    design_dir: &Path,
    out_dir: &Path,
) -> Result<Vec<PathBuf>, GenerateError> {
    let mut written = Vec::new();
    for f in files(board, &design_files(design_dir)) {
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
        written.push(path);
    }
    Ok(written)
}
