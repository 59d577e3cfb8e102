//! `cargo xtask board <name> generate|check|build|program`: a board's vendor project.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use weft_boards::{generate, lint, load, program, project, validate};

use crate::command::{on_path, run};

/// What to do with a board.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Step {
    /// Write the wrapper, constraints and vendor scripts into target/boards/<name>/.
    Generate,
    /// Validate the board file, generate, lint the wrapper with Verilator and elaborate it with yosys.
    Check,
    /// Generate, then build the bitstream with the vendor tool.
    Build,
    /// Load the built bitstream onto the board.
    Program,
}

/// Runs `step` for the board called `name`.
pub fn run_step(root: &Path, name: &str, step: Step) -> Result<()> {
    let board = load::by_name(name)?;
    let design = root.join("target").join("verilog");
    let dir = root.join("target").join("boards").join(name);
    match step {
        Step::Generate => {
            generate_into(&board, &dir)?;
            report_build_files(&board, &dir);
            Ok(())
        }
        Step::Check => check(&board, &design, &dir),
        Step::Build => {
            generate_into(&board, &dir)?;
            generate::write_build(&board, &dir)?;
            let tool = project::build_tool(&board);
            if !on_path(tool) {
                bail!(
                    "{tool} is not on PATH: building for {} needs the vendor tools; \
                     the project is ready in {} (run build.sh there once they are installed)",
                    board.board.device,
                    dir.display()
                );
            }
            run(Command::new("sh").arg("build.sh").current_dir(&dir))
        }
        Step::Program => {
            let load = program::load(&board);
            if !on_path(&load.program) {
                bail!(
                    "{} is not on PATH: loading the {} needs it; the command is `{}` in {}",
                    load.program,
                    board.board.title,
                    load.display(),
                    dir.display()
                );
            }
            let bit = dir.join(project::bitstream(&board));
            if !bit.is_file() {
                bail!(
                    "{} is missing: run `cargo xtask board {name} build` first",
                    bit.display()
                );
            }
            run(Command::new(&load.program)
                .args(&load.args)
                .current_dir(&dir))
        }
    }
}

fn generate_into(board: &weft_boards::Board, dir: &Path) -> Result<Vec<PathBuf>> {
    let written = generate::write(board, dir)?;
    eprintln!(
        "xtask: wrote {} files for {} into {}",
        written.len(),
        board.board.name,
        dir.display()
    );
    Ok(written)
}

fn check(board: &weft_boards::Board, design: &Path, dir: &Path) -> Result<()> {
    eprintln!("xtask: {} is valid", board.board.name);
    let todos = validate::todos(board);
    if !todos.is_empty() {
        eprintln!("xtask: {} open facts (TODO in the data file):", todos.len());
        for todo in &todos {
            eprintln!("  - {todo}");
        }
    }
    let unverified = validate::unverified(board);
    if !unverified.is_empty() {
        eprintln!(
            "xtask: {} items marked verify = true (not yet checked against their source):",
            unverified.len()
        );
        for item in &unverified {
            eprintln!("  - {item}");
        }
    }
    generate_into(board, dir)?;
    report_build_files(board, dir);
    lint::run(dir, design).context("linting the generated wrapper")?;
    eprintln!(
        "xtask: verilator --lint-only -Wall passes on {}",
        dir.join(generate::WRAPPER).display()
    );
    lint::elaborate(dir, design).context("elaborating the generated wrapper")?;
    eprintln!("xtask: yosys elaborates it (hierarchy -check, check -assert)");
    Ok(())
}

/// Writes the build scripts, or says why the board gets none (the wrapper
/// and constraints are written either way, for lint and review).
fn report_build_files(board: &weft_boards::Board, dir: &Path) {
    match generate::write_build(board, dir) {
        Ok(written) => eprintln!(
            "xtask: wrote {} build files for {}",
            written.len(),
            board.board.name
        ),
        Err(refused) => eprintln!("xtask: {refused}"),
    }
}
