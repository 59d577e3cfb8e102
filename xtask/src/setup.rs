//! Installing what the other tasks need, and only what is missing.
//!
//! Debian packages come from apt (as root; anyone else is told the exact
//! command). The firmware target comes from rustup; where rustup cannot
//! download it, Debian's `rustc-web` toolchain builds `core` for the target
//! itself (`-Zbuild-std`) and links with its `rust-lld`.

use std::{path::PathBuf, process::Command};

use anyhow::{bail, Result};

use crate::command::{on_path, output, run, succeeds};

/// The soft core's Rust target.
pub const FIRMWARE_TARGET: &str = "riscv32im-unknown-none-elf";

/// Debian packages that provide a program the tasks run, by that program.
/// `ping` is Linux's own ICMP echo client, which the firmware's network
/// test (sim/tests/firmware_tap.rs) points at the ISS board, and dnsmasq
/// the DHCP server that leases the firmware its address there; the bare-metal
/// RISC-V compiler assembles the core's assembly tests
/// (hdl/tests/asm_programs.rs); g++ compiles Verilator's C++ models
/// (weft-verilated).
const TOOL_PACKAGES: &[(&str, &str)] = &[
    ("verilator", "verilator"),
    ("g++", "g++"),
    ("yosys", "yosys"),
    ("iverilog", "iverilog"),
    ("openFPGALoader", "openfpgaloader"),
    ("ping", "iputils-ping"),
    ("dnsmasq", "dnsmasq-base"),
    ("riscv64-unknown-elf-gcc", "gcc-riscv64-unknown-elf"),
];

/// Debian's Rust toolchain that builds the firmware when rustup cannot.
const DEBIAN_RUST_PACKAGES: &[&str] = &["rustc-web", "cargo-web", "rust-web-src", "rust-web-llvm"];

/// Where Debian's `rust-web-src` puts the standard library's sources.
const DEBIAN_RUST_SRC: &str = "/usr/lib/rustlib/src/rust/library";

/// How the firmware is built on this machine.
pub enum FirmwareToolchain {
    /// rustup's toolchain with the prebuilt target installed.
    Rustup,
    /// Debian's toolchain, building `core` for the target from source.
    Debian {
        /// Debian's `cargo`.
        cargo: PathBuf,
        /// Debian's `rustc`, which `-Zbuild-std` needs beside its cargo.
        rustc: PathBuf,
        /// The linker for the bare-metal target.
        linker: PathBuf,
    },
}

/// Installs every missing tool and returns how the firmware will be built.
pub fn install_missing() -> Result<FirmwareToolchain> {
    let missing: Vec<&str> = TOOL_PACKAGES
        .iter()
        .filter(|(program, _)| !on_path(program))
        .map(|(_, package)| *package)
        .collect();
    apt_install(&missing)?;
    ensure_rust_components()?;
    firmware_toolchain()
}

/// Finds (installing if needed) a toolchain that builds the firmware.
pub fn firmware_toolchain() -> Result<FirmwareToolchain> {
    if rustup_has_target() {
        return Ok(FirmwareToolchain::Rustup);
    }
    if on_path("rustup") {
        eprintln!("xtask: adding the {FIRMWARE_TARGET} target with rustup");
        if succeeds(Command::new("rustup").args(["target", "add", FIRMWARE_TARGET])) {
            return Ok(FirmwareToolchain::Rustup);
        }
        eprintln!(
            "xtask: rustup could not add {FIRMWARE_TARGET}; using Debian's rustc-web instead"
        );
    }
    let debian = FirmwareToolchain::Debian {
        cargo: PathBuf::from("/usr/bin/cargo"),
        rustc: PathBuf::from("/usr/bin/rustc"),
        linker: PathBuf::from("/usr/bin/rust-lld"),
    };
    if !debian_toolchain_present(&debian) {
        apt_install(DEBIAN_RUST_PACKAGES)?;
        install_rust_lld_target()?;
    }
    Ok(debian)
}

fn rustup_has_target() -> bool {
    output(Command::new("rustup").args(["target", "list", "--installed"]))
        .is_some_and(|targets| targets.lines().any(|line| line.trim() == FIRMWARE_TARGET))
}

fn debian_toolchain_present(toolchain: &FirmwareToolchain) -> bool {
    let FirmwareToolchain::Debian {
        cargo,
        rustc,
        linker,
    } = toolchain
    else {
        return true;
    };
    [cargo, rustc, linker].iter().all(|path| path.is_file())
        && PathBuf::from(DEBIAN_RUST_SRC).is_dir()
}

/// `rust-web-llvm` links `/usr/bin/rust-lld` to a versioned `lld-NN` that
/// it does not depend on; installs the package of that name when the link
/// dangles.
fn install_rust_lld_target() -> Result<()> {
    let link = PathBuf::from("/usr/bin/rust-lld");
    if link.is_file() {
        return Ok(());
    }
    let target = std::fs::read_link(&link)
        .map_err(|err| anyhow::anyhow!("{} is not a link to an lld: {err}", link.display()))?;
    let package = target
        .file_name()
        .and_then(|name| name.to_str())
        .ok_or_else(|| anyhow::anyhow!("{} links to {}", link.display(), target.display()))?
        .to_owned();
    apt_install(&[&package])
}

/// rustfmt and clippy come with rustup's default profile, but not with the minimal one.
fn ensure_rust_components() -> Result<()> {
    let fmt = succeeds(Command::new("cargo").args(["fmt", "--version"]));
    let clippy = succeeds(Command::new("cargo").args(["clippy", "--version"]));
    if fmt && clippy {
        return Ok(());
    }
    run(Command::new("rustup").args(["component", "add", "rustfmt", "clippy"]))
}

/// Installs Debian packages, or tells a non-root user the exact command.
fn apt_install(packages: &[&str]) -> Result<()> {
    if packages.is_empty() {
        return Ok(());
    }
    let list = packages.join(" ");
    let is_root = output(Command::new("id").arg("-u")).is_some_and(|uid| uid.trim() == "0");
    if !is_root {
        bail!(
            "missing Debian packages: {list}\n\
             install them with:  sudo apt-get update && sudo apt-get install -y {list}\n\
             then run this command again"
        );
    }
    eprintln!("xtask: installing {list}");
    run(Command::new("apt-get").args(["update", "-qq"]))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive"))
}
