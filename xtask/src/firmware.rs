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

/// The Rust benchmark program core-bench runs on the RTL core (see
/// softcore-fw/bench), built with the firmware.
const BENCHMARK: &str = "weft-bench";

/// The boot loader, which the boot ROM holds (see softcore-fw/boot).
const BOOT_LOADER: &str = "weft-boot";

/// Builds the firmware ELF, its image for a flash slot (`<elf>.img`, the
/// file `weftctl firmware update` sends; `weft_fabric::boot_image`), the
/// boot loader's ELF and the Rust benchmark's, prints their size tables
/// and returns the firmware's path.
pub fn build(root: &Path, toolchain: &FirmwareToolchain) -> Result<PathBuf> {
    let elf_path = build_soft_core_binary(root, toolchain, "weft-firmware")?;
    let sizes = ImageSize::of_elf(&elf_path)?;
    println!("firmware: {}", elf_path.display());
    println!("{sizes}");
    let image_path = elf_path.with_extension("img");
    let elf = fs::read(&elf_path).with_context(|| format!("reading {}", elf_path.display()))?;
    let image = weft_iss::elf::boot_image(&elf)
        .map_err(|e| anyhow::anyhow!("{}: no slot image: {e}", elf_path.display()))?;
    fs::write(&image_path, &image).with_context(|| format!("writing {}", image_path.display()))?;
    println!(
        "firmware image for a flash slot (weftctl firmware update): {} ({} bytes)",
        image_path.display(),
        image.len()
    );
    let boot_path = build_soft_core_binary(root, toolchain, BOOT_LOADER)?;
    let boot_sizes = ImageSize::of_elf(&boot_path)?;
    println!("boot loader: {}", boot_path.display());
    println!("{boot_sizes}");
    let rom = u64::from(weft_regs::BOOT_ROM_SIZE);
    anyhow::ensure!(
        boot_sizes.text + boot_sizes.data <= rom,
        "the boot loader's {} bytes do not fit the {rom}-byte boot ROM",
        boot_sizes.text + boot_sizes.data
    );
    let bench_path = build_soft_core_binary(root, toolchain, BENCHMARK)?;
    println!("benchmark: {}", bench_path.display());
    println!("{}", ImageSize::of_elf(&bench_path)?);
    Ok(elf_path)
}

/// The probe that links the fabric manager for the soft core, the symbol
/// holding the size of the manager's state there, and the one where it
/// records the instructions it retired (see softcore-fw/fabric-size).
const FABRIC_PROBE: &str = "weft-fabric-size";
const MANAGER_BYTES_SYMBOL: &str = "WEFT_FABRIC_MANAGER_BYTES";
const ISS_INSTRUCTIONS_SYMBOL: &str = "WEFT_FABRIC_ISS_INSTRUCTIONS";

/// What the probe measures on the ISS, in the order it records them
/// (after the enumeration count).
const PROBE_REQUESTS: [&str; 8] = [
    "virtual upstream port read",
    "virtual downstream port read",
    "bound function read, forwarded",
    "unclaimed function (UR)",
    "bound function Command write, windows rewritten",
    "bound function BAR write, windows rewritten",
    "bound function Command write, decoding off",
    "bound function BAR write, decoding off (sizing)",
];

/// Steps the probe may take on the ISS before it must be waiting in `wfi`.
const PROBE_STEP_LIMIT: u64 = 50_000_000;

/// The soft core clock the requests-per-second column is stated at
/// (`weft_regs::SOFT_CORE_CLOCK_HZ`), with one instruction per cycle (the
/// ISS's count; the RTL core's CPI is higher).
const STATED_CLOCK_HZ: f64 = weft_regs::SOFT_CORE_CLOCK_HZ as f64;

/// What the probe recorded on the ISS.
struct ProbeRun {
    /// Instructions for the enumeration, then per request of [`PROBE_REQUESTS`].
    instructions: Vec<u32>,
    /// The deepest the stack went, in bytes below its top.
    stack_peak: u32,
}

/// Runs the probe on the ISS until it waits in `wfi`, following its stack
/// pointer; fails if it traps, as a stack overflowing the data RAM would.
fn run_probe_on_iss(image: &[u8], symbols: &object::File<'_>) -> Result<ProbeRun> {
    let mut hart = weft_iss::Hart::new(weft_iss::HarvardBus::reference());
    hart.load_elf(image)?;
    let stack_top = weft_regs::DATA_RAM_BASE + weft_regs::DATA_RAM_SIZE;
    let mut lowest_sp = stack_top;
    let mut idle = false;
    for _ in 0..PROBE_STEP_LIMIT {
        let pc = hart.pc();
        match hart.step() {
            weft_iss::Step::Idle => {
                idle = true;
                break;
            }
            weft_iss::Step::Retired(r) => {
                if let Some(trap) = r.trap {
                    anyhow::bail!("the probe trapped at pc {pc:#010x}: {trap:?}");
                }
            }
        }
        // Before the start-up code sets it, sp is 0.
        let sp = hart.reg(2);
        if sp >= weft_regs::DATA_RAM_BASE {
            lowest_sp = lowest_sp.min(sp);
        }
    }
    anyhow::ensure!(
        idle,
        "the probe did not reach wfi in {PROBE_STEP_LIMIT} steps (pc {:#010x})",
        hart.pc()
    );
    let symbol = symbols
        .symbols()
        .find(|s| s.name() == Ok(ISS_INSTRUCTIONS_SYMBOL))
        .with_context(|| format!("the probe has no symbol {ISS_INSTRUCTIONS_SYMBOL}"))?;
    let at = usize::try_from(symbol.address() - u64::from(weft_regs::DATA_RAM_BASE))?;
    let ram = hart.bus().data_ram();
    let words: Vec<u32> = (0..PROBE_REQUESTS.len() + 2)
        .map(|i| {
            let b = &ram[at + 4 * i..at + 4 * i + 4];
            u32::from_le_bytes([b[0], b[1], b[2], b[3]])
        })
        .collect();
    anyhow::ensure!(
        words.last() == Some(&1),
        "the probe stopped before recording everything"
    );
    Ok(ProbeRun {
        instructions: words[..words.len() - 1].to_vec(),
        stack_peak: stack_top - lowest_sp,
    })
}

/// Builds the fabric manager's size probe with the firmware's profile and
/// prints the library's code and RAM on the soft core, as a table or JSON.
pub fn fabric_size(root: &Path, toolchain: &FirmwareToolchain, json: bool) -> Result<()> {
    let elf_path = build_soft_core_binary(root, toolchain, FABRIC_PROBE)?;
    let sizes = ImageSize::of_elf(&elf_path)?;
    let manager = read_u32_symbol(&elf_path, MANAGER_BYTES_SYMBOL)?;
    let image = fs::read(&elf_path).with_context(|| format!("reading {}", elf_path.display()))?;
    let symbols = object::File::parse(&*image)?;
    let run = run_probe_on_iss(&image, &symbols)?;
    let counts = &run.instructions;
    let per_second = |instructions: u32| STATED_CLOCK_HZ / f64::from(instructions.max(1));
    if json {
        let requests: Vec<String> = PROBE_REQUESTS
            .iter()
            .zip(&counts[1..])
            .map(|(name, n)| {
                format!(
                    "{{\"request\":\"{name}\",\"instructions\":{n},\"per_second_at_stated_clock\":{:.0}}}",
                    per_second(*n)
                )
            })
            .collect();
        println!(
            "{{\"target\":\"{FIRMWARE_TARGET}\",\"profile\":\"{PROFILE}\",\"text\":{},\"data\":{},\"bss\":{},\"fabric_manager_bytes\":{manager},\"instruction_ram\":{},\"data_ram\":{},\"stated_clock_hz\":{STATED_CLOCK_HZ},\"iss_stack_peak\":{},\"iss_enumeration_instructions\":{},\"iss_requests\":[{}]}}",
            sizes.text,
            sizes.data,
            sizes.bss,
            weft_regs::INSTRUCTION_RAM_SIZE,
            weft_regs::DATA_RAM_SIZE,
            run.stack_peak,
            counts[0],
            requests.join(","),
        );
        return Ok(());
    }
    println!("fabric manager on the soft core ({FIRMWARE_TARGET}, profile {PROFILE}):");
    println!("  {}", elf_path.display());
    println!("{sizes}");
    println!(
        "code and read-only data: {} bytes (code in the {} KiB instruction RAM, read-only data in the data RAM)",
        sizes.text,
        weft_regs::INSTRUCTION_RAM_SIZE / 1024
    );
    println!(
        "static RAM: data+bss {} bytes, the FabricManager static {manager} of it, of the {} KiB data RAM",
        sizes.data + sizes.bss,
        weft_regs::DATA_RAM_SIZE / 1024
    );
    println!(
        "(the probe's stub hardware and entry point are counted in; see softcore-fw/fabric-size)"
    );
    println!(
        "stack: {} bytes at the deepest, on the ISS run below",
        run.stack_peak
    );
    println!();
    println!(
        "on the ISS, instructions retired (requests/s at {} MHz, one instruction per cycle):",
        STATED_CLOCK_HZ / 1e6
    );
    println!(
        "{:<50} {:>12}",
        "enumeration, one GPU on an 8-port switch", counts[0]
    );
    for (name, n) in PROBE_REQUESTS.iter().zip(&counts[1..]) {
        println!("{name:<50} {n:>12} {:>12.0}/s", per_second(*n));
    }
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
