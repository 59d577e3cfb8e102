//! Everything that must hold before a change lands, in one command.

use std::{env, path::Path, process::Command};

use anyhow::Result;

use crate::{
    command::run,
    firmware, setup,
    setup::{FirmwareToolchain, FIRMWARE_TARGET},
    verilog,
};

/// Sets up tools, builds the firmware, emits and lints Verilog, checks
/// formatting and lints, then runs every test in the workspace.
pub fn run_all(root: &Path) -> Result<()> {
    let toolchain = setup::install_missing()?;
    firmware::build(root, &toolchain)?;
    verilog::emit_and_lint(root)?;
    let cargo = || {
        let mut cmd = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        cmd.current_dir(root);
        cmd
    };
    run(cargo().args(["fmt", "--all", "--check"]))?;
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    if matches!(toolchain, FirmwareToolchain::Rustup) {
        // The bare-metal halves of the firmware, of the boot loader, of the
        // fabric manager's size probe and of the Rust benchmark are only
        // compiled for their target.
        run(cargo().args([
            "clippy",
            "--package",
            "weft-firmware",
            "--package",
            "weft-boot",
            "--package",
            "weft-fabric-size",
            "--package",
            "weft-bench",
            "--target",
            FIRMWARE_TARGET,
            "--profile",
            "firmware",
            "--",
            "-D",
            "warnings",
        ]))?;
    }
    run(cargo().args(["test", "--workspace"]))?;
    println!("xtask test: everything passed");
    Ok(())
}
