//! Building the soft core's firmware ELF and reporting its size.

use std::{
    env, fs,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, Result};
use object::{elf, Object, ObjectSection, SectionFlags, SectionKind};

use crate::{
    command::run,
    setup::{FirmwareToolchain, FIRMWARE_TARGET},
};

/// The Cargo profile the firmware is built with (size-optimised, LTO, abort on panic).
const PROFILE: &str = "firmware";

/// Builds the firmware ELF, prints its size table and returns its path.
pub fn build(root: &Path, toolchain: &FirmwareToolchain) -> Result<PathBuf> {
    let common = [
        "build",
        "--package",
        "weft-firmware",
        "--target",
        FIRMWARE_TARGET,
        "--profile",
        PROFILE,
    ];
    let target_dir = match toolchain {
        FirmwareToolchain::Rustup => {
            let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            run(Command::new(cargo).current_dir(root).args(common))?;
            root.join("target")
        }
        FirmwareToolchain::Debian {
            cargo,
            rustc,
            linker,
        } => {
            // A separate target directory: its artefacts come from another
            // compiler and must not mix with rustup's.
            let target_dir = root.join("target").join("debian-rust");
            run(Command::new(cargo)
                .current_dir(root)
                .args(common)
                .arg("--target-dir")
                .arg(&target_dir)
                .args([
                    "-Zbuild-std=core,compiler_builtins",
                    "-Zbuild-std-features=compiler-builtins-mem",
                ])
                .env("RUSTC_BOOTSTRAP", "1")
                .env("RUSTC", rustc)
                .env("CARGO_TARGET_RISCV32IM_UNKNOWN_NONE_ELF_LINKER", linker)
                .env_remove("RUSTUP_TOOLCHAIN"))?;
            target_dir
        }
    };
    let elf_path = target_dir
        .join(FIRMWARE_TARGET)
        .join(PROFILE)
        .join("weft-firmware");
    let sizes = ImageSize::of_elf(&elf_path)?;
    println!("firmware: {}", elf_path.display());
    println!("{sizes}");
    Ok(elf_path)
}

/// The firmware's memory use, split the way the soft core's memories see it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ImageSize {
    /// Code and read-only data: what the image must carry.
    pub text: u64,
    /// Initialised writable data, also carried by the image.
    pub data: u64,
    /// Zero-initialised data.
    pub bss: u64,
    /// Stack and heap reserved by the linker script.
    pub reserved: u64,
}

impl ImageSize {
    /// Sums the ELF's allocated sections by kind, as `size` (Berkeley format) does,
    /// with the startup code's stack and heap reservations counted apart from bss.
    pub fn of_elf(path: &Path) -> Result<Self> {
        let bytes = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let file = object::File::parse(&*bytes)
            .with_context(|| format!("{} is not an ELF file", path.display()))?;
        let mut size = ImageSize::default();
        for section in file.sections() {
            let SectionFlags::Elf { sh_flags } = section.flags() else {
                continue;
            };
            if sh_flags & u64::from(elf::SHF_ALLOC) == 0 {
                continue;
            }
            let name = section.name().unwrap_or_default();
            let writable = sh_flags & u64::from(elf::SHF_WRITE) != 0;
            let bucket = match section.kind() {
                _ if name == ".stack" || name == ".heap" => &mut size.reserved,
                SectionKind::UninitializedData | SectionKind::UninitializedTls => &mut size.bss,
                _ if writable => &mut size.data,
                _ => &mut size.text,
            };
            *bucket += section.size();
        }
        Ok(size)
    }
}

impl std::fmt::Display for ImageSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{:>10} {:>10} {:>10} {:>16}",
            "text", "data", "bss", "stack+heap"
        )?;
        write!(
            f,
            "{:>10} {:>10} {:>10} {:>16}",
            self.text, self.data, self.bss, self.reserved
        )
    }
}
