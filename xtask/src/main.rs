//! `cargo xtask`: weft's one entry point for everything beyond `cargo build`.
//!
//! - `setup` installs the tools the other commands need (idempotent);
//! - `firmware` builds the soft core's firmware ELF and the Rust benchmark's and prints their sizes;
//! - `fabric-size` prints the fabric manager's code and RAM on the soft core;
//! - `verilog` emits the top-level designs as Verilog and lints them;
//! - `regs` writes the register map's documentation, docs/registers.md;
//! - `hardware` maps the designs onto an FPGA and writes README.md's hardware table;
//! - `test` runs all of the above, then format, lint and every test;
//! - `board <name> generate|check|build|program` makes a dev board's vendor project.

mod board;
mod command;
mod firmware;
mod hardware;
mod regs;
mod setup;
mod test;
mod verilog;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// weft's build, check and test tasks.
#[derive(Parser)]
#[command(name = "cargo xtask", about = "weft's build, check and test tasks")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Install missing tools: Verilog linters, synthesis, the RISC-V target.
    Setup,
    /// Build the soft core's firmware ELF and the Rust benchmark's, and print their text/data/bss sizes.
    Firmware,
    /// Print the fabric manager's code size and static RAM on the soft core.
    FabricSize {
        /// Print one JSON object instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Emit the top-level designs into target/verilog/ and lint them with Verilator.
    Verilog,
    /// Write docs/registers.md from the register map in weft-regs.
    Regs,
    /// Map the designs onto AMD UltraScale+ with yosys and write README.md's hardware table.
    Hardware {
        /// Also map the block RAM-heavy designs (4 to 23 CPU-minutes each as
        /// measured; the whole data plane, `weft_switch_top`, over 50).
        #[arg(long)]
        all: bool,
        /// Map only these designs (by module name, e.g. `weft_switch_core`),
        /// block RAM-heavy or not; every other row keeps its figures.
        #[arg(long, value_name = "MODULE")]
        only: Vec<String>,
    },
    /// Set up, build firmware, emit Verilog, check format and lints, run every test.
    Test,
    /// Generate, check, build or load a dev board's vendor project (boards/data/<name>.toml).
    Board {
        /// The board's name.
        name: String,
        /// What to do.
        step: board::Step,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.task, &workspace_root()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(task: Task, root: &Path) -> Result<()> {
    match task {
        Task::Setup => setup::install_missing().map(|_| ()),
        Task::Firmware => {
            let toolchain = setup::firmware_toolchain()?;
            firmware::build(root, &toolchain).map(|_| ())
        }
        Task::FabricSize { json } => {
            let toolchain = setup::firmware_toolchain()?;
            firmware::fabric_size(root, &toolchain, json)
        }
        Task::Verilog => verilog::emit_and_lint(root),
        Task::Regs => regs::write_docs(root).map(|_| ()),
        Task::Hardware { all, only } => hardware::write_table(root, all, &only),
        Task::Test => test::run_all(root),
        Task::Board { name, step } => board::run_step(root, &name, step),
    }
}

/// The workspace root: xtask's own manifest directory is one level below it.
fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one directory below the workspace root")
        .to_path_buf()
}
