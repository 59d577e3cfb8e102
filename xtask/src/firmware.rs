//! Building the soft core's firmware ELF and reporting its size, and the
//! fabric manager's size on the soft core (measured on a probe program
//! until the firmware drives the manager).

use std::{
    env, fs,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, Result};
use object::{elf, Object, ObjectSection, ObjectSymbol, SectionFlags, SectionKind};

use crate::{
    command::run,
    setup::{FirmwareToolchain, FIRMWARE_TARGET},
};

/// The Cargo profile the firmware is built with (size-optimised, LTO, abort on panic).
const PROFILE: &str = "firmware";

/// Builds the firmware ELF, prints its size table and returns its path.
pub fn build(root: &Path, toolchain: &FirmwareToolchain) -> Result<PathBuf> {
    let elf_path = build_soft_core_binary(root, toolchain, "weft-firmware")?;
    let sizes = ImageSize::of_elf(&elf_path)?;
    println!("firmware: {}", elf_path.display());
    println!("{sizes}");
    Ok(elf_path)
}

/// The probe that links the fabric manager for the soft core, and the
/// symbol holding the size of the manager's state there.
const FABRIC_PROBE: &str = "weft-fabric-size";
const MANAGER_BYTES_SYMBOL: &str = "WEFT_FABRIC_MANAGER_BYTES";

/// Builds the fabric manager's size probe with the firmware's profile and
/// prints the library's code and RAM on the soft core, as a table or JSON.
pub fn fabric_size(root: &Path, toolchain: &FirmwareToolchain, json: bool) -> Result<()> {
    let elf_path = build_soft_core_binary(root, toolchain, FABRIC_PROBE)?;
    let sizes = ImageSize::of_elf(&elf_path)?;
    let manager = read_u32_symbol(&elf_path, MANAGER_BYTES_SYMBOL)?;
    if json {
        println!(
            "{{\"target\":\"{FIRMWARE_TARGET}\",\"profile\":\"{PROFILE}\",\"text\":{},\"data\":{},\"bss\":{},\"fabric_manager_bytes\":{manager},\"instruction_ram\":{},\"data_ram\":{}}}",
            sizes.text,
            sizes.data,
            sizes.bss,
            weft_regs::INSTRUCTION_RAM_SIZE,
            weft_regs::DATA_RAM_SIZE,
        );
        return Ok(());
    }
    println!("fabric manager on the soft core ({FIRMWARE_TARGET}, profile {PROFILE}):");
    println!("  {}", elf_path.display());
    println!("{sizes}");
    println!(
        "code and read-only data: {} bytes of the {} KiB instruction RAM",
        sizes.text,
        weft_regs::INSTRUCTION_RAM_SIZE / 1024
    );
    println!(
        "static RAM: FabricManager {manager} bytes (the firmware's static), library data+bss {} bytes, of the {} KiB data RAM",
        sizes.data + sizes.bss,
        weft_regs::DATA_RAM_SIZE / 1024
    );
    println!(
        "(the probe's stub hardware and entry point are counted in; see softcore-fw/fabric-size)"
    );
    Ok(())
}

/// The little-endian u32 a global data symbol of a RISC-V ELF holds.
fn read_u32_symbol(path: &Path, name: &str) -> Result<u32> {
    let bytes = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let file = object::File::parse(&*bytes)
        .with_context(|| format!("{} is not an ELF file", path.display()))?;
    let symbol = file
        .symbols()
        .find(|s| s.name() == Ok(name))
        .with_context(|| format!("{} has no symbol {name}", path.display()))?;
    let section = symbol
        .section_index()
        .and_then(|index| file.section_by_index(index).ok())
        .with_context(|| format!("{name} is in no section"))?;
    let data = section.data()?;
    let at = usize::try_from(symbol.address() - section.address())?;
    let word = data
        .get(at..at + 4)
        .with_context(|| format!("{name} lies outside its section's data"))?;
    Ok(u32::from_le_bytes([word[0], word[1], word[2], word[3]]))
}

/// Builds `package`'s binary of the same name for the soft core with the
/// firmware's profile; returns the ELF's path.
fn build_soft_core_binary(
    root: &Path,
    toolchain: &FirmwareToolchain,
    package: &str,
) -> Result<PathBuf> {
    let common = [
        "build",
        "--package",
        package,
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
    Ok(target_dir.join(FIRMWARE_TARGET).join(PROFILE).join(package))
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
