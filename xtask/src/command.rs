//! Running external programs with a readable echo and a clear error.

use std::process::Command;

use anyhow::{bail, Context, Result};

/// Runs `cmd` to completion with inherited output, failing if it exits non-zero.
pub fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("xtask: {}", describe(cmd));
    let status = cmd
        .status()
        .with_context(|| format!("could not start `{}`", describe(cmd)))?;
    if !status.success() {
        bail!("`{}` failed ({status})", describe(cmd));
    }
    Ok(())
}

/// Runs `cmd` quietly and reports whether it exited zero; a missing program is `false`.
pub fn succeeds(cmd: &mut Command) -> bool {
    cmd.output()
        .map(|out| out.status.success())
        .unwrap_or(false)
}

/// Runs `cmd` quietly and returns its standard output if it exited zero.
pub fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether a program of this name is on `PATH`.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
        .unwrap_or(false)
}

/// The program and its arguments, as a shell would show them.
fn describe(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}
