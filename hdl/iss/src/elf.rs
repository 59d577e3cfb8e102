//! Loads a 32-bit little-endian RISC-V ELF executable onto a [`Bus`].
//!
//! Each `PT_LOAD` segment is written at its physical address (`p_paddr`,
//! the load memory address), as the FPGA's block-RAM initialisation places
//! it, and the part of `p_memsz` past `p_filesz` is zero-filled (ELF
//! gABI, "Program Header"). The firmware's start-up code copies `.data`
//! from its load address to its run address, exactly as on the hardware.
//! A bad image is an [`ElfError`], never a panic.

use core::fmt;

/// Where the firmware ELF is: `$WEFT_FIRMWARE`, or where `cargo xtask
/// firmware` puts it in this workspace. Tests and tools that run the real
/// firmware look here, and skip with the reason when it is not built.
pub fn firmware_path() -> std::path::PathBuf {
    soft_core_binary_path("WEFT_FIRMWARE", "weft-firmware")
}

/// The firmware ELF at [`firmware_path`], or `None` with the reason
/// printed, for a test that then skips.
pub fn firmware_image() -> Option<Vec<u8>> {
    built_image(&firmware_path(), "firmware", "WEFT_FIRMWARE")
}

/// Where the boot loader's ELF is: `$WEFT_BOOT`, or where `cargo xtask
/// firmware` puts it in this workspace.
pub fn boot_loader_path() -> std::path::PathBuf {
    soft_core_binary_path("WEFT_BOOT", "weft-boot")
}

/// The boot loader's ELF at [`boot_loader_path`], or `None` with the
/// reason printed, for a test that then skips.
pub fn boot_loader_image() -> Option<Vec<u8>> {
    built_image(&boot_loader_path(), "boot loader", "WEFT_BOOT")
}

/// The `what` ELF built by `cargo xtask firmware` at `path`, or `None` with
/// the reason printed (build it, or point `$variable` at one).
pub(crate) fn built_image(path: &std::path::Path, what: &str, variable: &str) -> Option<Vec<u8>> {
    let image = std::fs::read(path).ok();
    if image.is_none() {
        eprintln!(
            "skipped: no {what} ELF at {} (build it with `cargo xtask firmware`, \
             or point {variable} at one)",
            path.display()
        );
    }
    image
}

/// Where a soft-core program built by `cargo xtask firmware` is: the path
/// in `$variable`, or package `package`'s binary under the workspace's
/// target directory (firmware profile).
pub(crate) fn soft_core_binary_path(variable: &str, package: &str) -> std::path::PathBuf {
    std::env::var_os(variable).map_or_else(
        || {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/riscv32im-unknown-none-elf/firmware")
                .join(package)
        },
        std::path::PathBuf::from,
    )
}

use object::elf::{
    FileHeader32, EF_RISCV_RVC, ELFCLASS32, ELFDATA2LSB, ELFMAG, EM_RISCV, ET_EXEC, PT_LOAD,
};
use object::read::elf::{FileHeader, ProgramHeader};
use object::LittleEndian;

use crate::bus::{Bus, BusFault};

/// Why an image cannot be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ElfError {
    /// The image is shorter than an ELF identification (16 bytes).
    TooShort {
        /// Length of the image in bytes.
        len: usize,
    },
    /// The image does not start with the ELF magic `\x7fELF`.
    NotElf {
        /// The first four bytes.
        magic: [u8; 4],
    },
    /// Not a 32-bit ELF (`EI_CLASS` ≠ `ELFCLASS32`): built for RV64?
    WrongClass {
        /// The `EI_CLASS` byte.
        class: u8,
    },
    /// Not little-endian (`EI_DATA` ≠ `ELFDATA2LSB`).
    WrongEndian {
        /// The `EI_DATA` byte.
        data: u8,
    },
    /// Not a RISC-V image (`e_machine` ≠ `EM_RISCV`, 243).
    WrongMachine {
        /// The `e_machine` field.
        machine: u16,
    },
    /// Not an executable (`e_type` ≠ `ET_EXEC`): an object file or library.
    NotExecutable {
        /// The `e_type` field.
        e_type: u16,
    },
    /// The image was built with compressed instructions (`EF_RISCV_RVC`),
    /// which weft's core does not implement: build for `riscv32im`.
    CompressedInstructions {
        /// The `e_flags` field.
        flags: u32,
    },
    /// The headers are inconsistent (truncated, or sizes that do not add
    /// up).
    Malformed {
        /// What the parser found wrong.
        reason: String,
    },
    /// A segment's file size exceeds its memory size.
    SegmentSizes {
        /// Load address of the segment.
        addr: u32,
        /// `p_filesz`.
        file_size: u32,
        /// `p_memsz`.
        mem_size: u32,
    },
    /// A segment does not fit in any memory on the bus.
    SegmentOutsideMemory {
        /// Load address (`p_paddr`) of the segment.
        addr: u32,
        /// `p_memsz` of the segment.
        size: u32,
        /// The bus's refusal.
        fault: BusFault,
    },
    /// The image has no `PT_LOAD` segment.
    NoLoadableSegments,
    /// The entry point is not 4-byte aligned.
    EntryMisaligned {
        /// `e_entry`.
        entry: u32,
    },
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooShort { len } => write!(f, "image is {len} bytes, too short to be an ELF file"),
            Self::NotElf { magic } => write!(
                f,
                "image starts with {magic:02x?}, not the ELF magic 7f 45 4c 46; pass the linked firmware ELF"
            ),
            Self::WrongClass { class } => write!(
                f,
                "ELF class {class} is not 32-bit (1); build for riscv32im-unknown-none-elf"
            ),
            Self::WrongEndian { data } => {
                write!(f, "ELF data encoding {data} is not little-endian (1)")
            }
            Self::WrongMachine { machine } => write!(
                f,
                "ELF machine {machine} is not RISC-V (243); build for riscv32im-unknown-none-elf"
            ),
            Self::NotExecutable { e_type } => write!(
                f,
                "ELF type {e_type} is not an executable (2); pass the linked image, not an object file"
            ),
            Self::CompressedInstructions { flags } => write!(
                f,
                "ELF flags {flags:#x} mark compressed instructions, which the core lacks; build for riscv32im"
            ),
            Self::Malformed { reason } => write!(f, "malformed ELF: {reason}"),
            Self::SegmentSizes {
                addr,
                file_size,
                mem_size,
            } => write!(
                f,
                "segment at {addr:#010x} has file size {file_size:#x} larger than memory size {mem_size:#x}"
            ),
            Self::SegmentOutsideMemory { addr, size, fault } => write!(
                f,
                "segment at {addr:#010x} ({size:#x} bytes) does not fit the memory map ({fault}); \
                 check the linker script's MEMORY against weft-regs"
            ),
            Self::NoLoadableSegments => write!(f, "ELF has no loadable (PT_LOAD) segment"),
            Self::EntryMisaligned { entry } => {
                write!(f, "entry point {entry:#010x} is not 4-byte aligned")
            }
        }
    }
}

impl std::error::Error for ElfError {}

/// What [`load`] placed in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoadedImage {
    /// The entry point (`e_entry`), where the hart starts.
    pub entry: u32,
    /// Number of `PT_LOAD` segments written.
    pub segments: usize,
    /// Total bytes written, zero fill included.
    pub bytes: u64,
    /// One past the highest byte a segment fills: for a program whose
    /// statics are its highest segments (the firmware's `.bss` in data
    /// memory), where the free memory its stack grows down into begins.
    pub end: u64,
}

/// Zero fill is written in chunks of this size, so a large `.bss` costs no
/// large allocation.
const ZERO_CHUNK: usize = 4096;

/// Loads `image`'s `PT_LOAD` segments onto `bus` through
/// [`Bus::write_image`] and returns the entry point.
///
/// Checks, in order: ELF identification (magic, 32-bit class,
/// little-endian), `e_machine` = RISC-V, `e_type` = executable, no RVC
/// flag, then each segment's sizes and placement.
pub fn load<B: Bus>(bus: &mut B, image: &[u8]) -> Result<LoadedImage, ElfError> {
    let (entry, segments) = parse(image)?;
    let mut loaded = LoadedImage {
        entry,
        segments: 0,
        bytes: 0,
        end: 0,
    };
    for segment in segments {
        let (addr, mem_size) = (segment.addr, segment.mem_size);
        let outside = |fault| ElfError::SegmentOutsideMemory {
            addr,
            size: mem_size,
            fault,
        };
        bus.write_image(addr, segment.data).map_err(outside)?;
        let zeros = [0u8; ZERO_CHUNK];
        let mut at = addr + segment.data.len() as u32;
        let end = u64::from(addr) + u64::from(mem_size);
        while u64::from(at) < end {
            let n = (end - u64::from(at)).min(ZERO_CHUNK as u64) as usize;
            bus.write_image(at, &zeros[..n]).map_err(outside)?;
            // n <= ZERO_CHUNK, and at + n <= end <= 2^32 was checked above.
            at = at.wrapping_add(n as u32);
            if at == 0 {
                break;
            }
        }
        loaded.segments += 1;
        loaded.bytes += u64::from(mem_size);
        loaded.end = loaded.end.max(end);
    }
    Ok(loaded)
}

/// The firmware image a slot holds (`weft_fabric::boot_image`), made from
/// the ELF `image`: its entry point and each `PT_LOAD` segment's file
/// bytes at its load address (`p_paddr`), as [`load`] places them. The
/// zero fill past a segment's file bytes is left out: it is `.bss`, which
/// the program's start-up code clears.
pub fn boot_image(image: &[u8]) -> Result<Vec<u8>, ElfError> {
    let (entry, segments) = parse(image)?;
    let segments: Vec<(u32, &[u8])> = segments
        .iter()
        .filter(|s| !s.data.is_empty())
        .map(|s| (s.addr, s.data))
        .collect();
    if segments.len() > weft_fabric::boot_image::MAX_SEGMENTS {
        return Err(ElfError::Malformed {
            reason: format!(
                "{} segments with file bytes, more than a boot image holds ({})",
                segments.len(),
                weft_fabric::boot_image::MAX_SEGMENTS
            ),
        });
    }
    let mut out = vec![0; weft_fabric::boot_image::image_len(&segments)];
    weft_fabric::boot_image::write(entry, &segments, &mut out);
    Ok(out)
}

/// A `PT_LOAD` segment of an ELF: its load address, file bytes and memory size.
struct Segment<'a> {
    addr: u32,
    data: &'a [u8],
    mem_size: u32,
}

/// The entry point and `PT_LOAD` segments (those with a memory size) of
/// `image`, checked as [`load`] documents.
fn parse(image: &[u8]) -> Result<(u32, Vec<Segment<'_>>), ElfError> {
    const EI_CLASS: usize = 4;
    const EI_DATA: usize = 5;
    if image.len() < 16 {
        return Err(ElfError::TooShort { len: image.len() });
    }
    let magic = [image[0], image[1], image[2], image[3]];
    if magic != ELFMAG {
        return Err(ElfError::NotElf { magic });
    }
    if image[EI_CLASS] != ELFCLASS32 {
        return Err(ElfError::WrongClass {
            class: image[EI_CLASS],
        });
    }
    if image[EI_DATA] != ELFDATA2LSB {
        return Err(ElfError::WrongEndian {
            data: image[EI_DATA],
        });
    }
    let malformed = |e: object::read::Error| ElfError::Malformed {
        reason: e.to_string(),
    };
    let header = FileHeader32::<LittleEndian>::parse(image).map_err(malformed)?;
    let endian = LittleEndian;
    let machine = header.e_machine(endian);
    if machine != EM_RISCV {
        return Err(ElfError::WrongMachine { machine });
    }
    let e_type = header.e_type(endian);
    if e_type != ET_EXEC {
        return Err(ElfError::NotExecutable { e_type });
    }
    let flags = header.e_flags(endian);
    if flags & EF_RISCV_RVC != 0 {
        return Err(ElfError::CompressedInstructions { flags });
    }
    let entry = header.e_entry(endian);
    if entry % 4 != 0 {
        return Err(ElfError::EntryMisaligned { entry });
    }

    let mut segments = Vec::new();
    let headers = header.program_headers(endian, image).map_err(malformed)?;
    for ph in headers.iter().filter(|ph| ph.p_type(endian) == PT_LOAD) {
        let addr = ph.p_paddr(endian);
        let (file_size, mem_size) = (ph.p_filesz(endian), ph.p_memsz(endian));
        if file_size > mem_size {
            return Err(ElfError::SegmentSizes {
                addr,
                file_size,
                mem_size,
            });
        }
        if mem_size == 0 {
            continue;
        }
        let outside = |fault| ElfError::SegmentOutsideMemory {
            addr,
            size: mem_size,
            fault,
        };
        if addr.checked_add(mem_size - 1).is_none() {
            return Err(outside(BusFault::Unmapped {
                addr: u32::MAX,
                access: crate::bus::Access::Image,
            }));
        }
        let data = ph.data(endian, image).map_err(|()| ElfError::Malformed {
            reason: format!(
                "segment at {addr:#010x} claims {file_size:#x} bytes at file offset {:#x}, past the end of the image",
                ph.p_offset(endian)
            ),
        })?;
        segments.push(Segment {
            addr,
            data,
            mem_size,
        });
    }
    if segments.is_empty() {
        return Err(ElfError::NoLoadableSegments);
    }
    Ok((entry, segments))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use weft_regs::{DATA_RAM_BASE, DATA_RAM_SIZE};

    use super::*;
    use crate::bus::{Access, HarvardBus};
    use crate::encode as e;
    use crate::hart::{Hart, RunStop};

    const D: u32 = DATA_RAM_BASE;

    /// One program header of a test image.
    struct Seg {
        p_type: u32,
        paddr: u32,
        data: Vec<u8>,
        memsz: u32,
    }

    fn load_seg(paddr: u32, data: Vec<u8>) -> Seg {
        let memsz = data.len() as u32;
        Seg {
            p_type: PT_LOAD,
            paddr,
            data,
            memsz,
        }
    }

    /// A little-endian ELF32 image laid out by the System V gABI: the
    /// 52-byte file header, 32-byte program headers, then segment data.
    fn image(e_type: u16, machine: u16, flags: u32, entry: u32, segs: &[Seg]) -> Vec<u8> {
        let phoff = 52u32;
        let mut data_off = phoff + 32 * segs.len() as u32;
        let mut out = vec![0x7f, b'E', b'L', b'F', 1, 1, 1, 0];
        out.resize(16, 0);
        out.extend(e_type.to_le_bytes());
        out.extend(machine.to_le_bytes());
        out.extend(1u32.to_le_bytes()); // e_version
        out.extend(entry.to_le_bytes());
        out.extend(phoff.to_le_bytes());
        out.extend(0u32.to_le_bytes()); // e_shoff
        out.extend(flags.to_le_bytes());
        out.extend(52u16.to_le_bytes()); // e_ehsize
        out.extend(32u16.to_le_bytes()); // e_phentsize
        out.extend((segs.len() as u16).to_le_bytes());
        out.extend(40u16.to_le_bytes()); // e_shentsize
        out.extend(0u16.to_le_bytes()); // e_shnum
        out.extend(0u16.to_le_bytes()); // e_shstrndx
        for s in segs {
            for field in [
                s.p_type,
                data_off,
                s.paddr,
                s.paddr,
                s.data.len() as u32,
                s.memsz,
                0b101,
                4,
            ] {
                out.extend(field.to_le_bytes());
            }
            data_off += s.data.len() as u32;
        }
        for s in segs {
            out.extend(&s.data);
        }
        out
    }

    fn riscv_exec(entry: u32, segs: &[Seg]) -> Vec<u8> {
        image(ET_EXEC, EM_RISCV, 0, entry, segs)
    }

    fn words(w: &[u32]) -> Vec<u8> {
        w.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn loads_segments_zero_fills_and_starts_at_the_entry() {
        // Code at 0x40: x1 = *(D + 4) (in the zero-filled tail) + *(D).
        let code = words(&[
            e::lui(2, D >> 12),
            e::lw(1, 2, 0),
            e::lw(3, 2, 4),
            e::add(1, 1, 3),
            e::wfi(),
        ]);
        let mut data = load_seg(D, 7u32.to_le_bytes().to_vec());
        data.memsz = 12;
        let img = riscv_exec(0x40, &[load_seg(0x40, code), data]);
        let mut hart = Hart::new(HarvardBus::reference());
        hart.bus_mut().data_ram_mut()[..12].fill(0xAA);
        let loaded = hart.load_elf(&img).unwrap();
        assert_eq!(
            loaded,
            LoadedImage {
                entry: 0x40,
                segments: 2,
                bytes: 20 + 12,
                end: u64::from(D) + 12,
            }
        );
        assert_eq!(hart.pc(), 0x40);
        assert_eq!(
            &hart.bus().data_ram()[..12],
            &[7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(hart.run(100).stop, RunStop::Idle);
        assert_eq!(hart.reg(1), 7);
    }

    #[test]
    fn non_load_segments_are_skipped() {
        let mut note = load_seg(0x2000_0000, vec![1, 2, 3, 4]);
        note.p_type = 4; // PT_NOTE
        let img = riscv_exec(0, &[note, load_seg(0, words(&[e::nop()]))]);
        let mut bus = HarvardBus::reference();
        assert_eq!(load(&mut bus, &img).map(|l| l.segments), Ok(1));
    }

    #[test]
    fn rejects_images_that_are_not_riscv32_executables() {
        let good = riscv_exec(0, &[load_seg(0, words(&[e::nop()]))]);
        let mut bus = HarvardBus::reference();
        let mut with = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut img = good.clone();
            f(&mut img);
            load(&mut bus, &img)
        };
        assert_eq!(
            with(&|i| i.truncate(10)),
            Err(ElfError::TooShort { len: 10 })
        );
        assert_eq!(
            with(&|i| i[..4].copy_from_slice(b"MZ\x90\x00")),
            Err(ElfError::NotElf {
                magic: *b"MZ\x90\x00"
            })
        );
        assert_eq!(with(&|i| i[4] = 2), Err(ElfError::WrongClass { class: 2 }));
        assert_eq!(with(&|i| i[5] = 2), Err(ElfError::WrongEndian { data: 2 }));
        assert!(matches!(
            with(&|i| i.truncate(40)),
            Err(ElfError::Malformed { .. })
        ));
        assert_eq!(
            with(&|i| i[18..20].copy_from_slice(&62u16.to_le_bytes())),
            Err(ElfError::WrongMachine { machine: 62 })
        );
        assert_eq!(
            with(&|i| i[16..18].copy_from_slice(&1u16.to_le_bytes())),
            Err(ElfError::NotExecutable { e_type: 1 })
        );
        assert_eq!(
            with(&|i| i[36..40].copy_from_slice(&EF_RISCV_RVC.to_le_bytes())),
            Err(ElfError::CompressedInstructions { flags: 1 })
        );
        assert_eq!(
            with(&|i| i[24..28].copy_from_slice(&2u32.to_le_bytes())),
            Err(ElfError::EntryMisaligned { entry: 2 })
        );
        // Program header table cut off.
        assert!(matches!(
            with(&|i| i.truncate(60)),
            Err(ElfError::Malformed { .. })
        ));
        // Segment data cut off.
        assert!(matches!(
            with(&|i| i.truncate(86)),
            Err(ElfError::Malformed { .. })
        ));
        assert_eq!(
            load(&mut bus, &riscv_exec(0, &[])),
            Err(ElfError::NoLoadableSegments)
        );
    }

    #[test]
    fn rejects_segments_outside_memory() {
        let mut bus = HarvardBus::reference();
        let unmapped = riscv_exec(0, &[load_seg(0x2000_0000, vec![0; 8])]);
        assert_eq!(
            load(&mut bus, &unmapped),
            Err(ElfError::SegmentOutsideMemory {
                addr: 0x2000_0000,
                size: 8,
                fault: BusFault::Unmapped {
                    addr: 0x2000_0000,
                    access: Access::Image
                }
            })
        );
        // Its .bss runs past the end of data RAM.
        let mut seg = load_seg(D + DATA_RAM_SIZE - 8, vec![0; 4]);
        seg.memsz = 16;
        assert!(matches!(
            load(&mut bus, &riscv_exec(0, &[seg])),
            Err(ElfError::SegmentOutsideMemory { addr, size: 16, .. }) if addr == D + DATA_RAM_SIZE - 8
        ));
        // Wraps around the address space.
        let mut seg = load_seg(0xFFFF_FFF0, vec![]);
        seg.memsz = 0x20;
        assert!(matches!(
            load(&mut bus, &riscv_exec(0, &[seg])),
            Err(ElfError::SegmentOutsideMemory {
                addr: 0xFFFF_FFF0,
                ..
            })
        ));
        let mut seg = load_seg(D, vec![0; 8]);
        seg.memsz = 4;
        assert_eq!(
            load(&mut bus, &riscv_exec(0, &[seg])),
            Err(ElfError::SegmentSizes {
                addr: D,
                file_size: 8,
                mem_size: 4
            })
        );
    }

    /// The firmware built by `cargo xtask firmware` loads and runs its
    /// start-up code into `main`'s `wfi` loop.
    #[test]
    #[ignore = "set WEFT_FIRMWARE_ELF to the firmware ELF built by `cargo xtask firmware`"]
    fn firmware_boots_to_its_idle_loop() {
        let path = std::env::var("WEFT_FIRMWARE_ELF").expect("WEFT_FIRMWARE_ELF is set");
        let img = std::fs::read(&path).expect("WEFT_FIRMWARE_ELF names a readable file");
        let mut hart = Hart::new(HarvardBus::reference());
        hart.load_elf(&img).unwrap();
        let summary = hart.run(1_000_000);
        assert_eq!(summary.stop, RunStop::Idle, "{hart:?}");
        assert_eq!(hart.csrs().mcause(), 0, "no trap during start-up");
    }

    proptest! {
        /// Any corruption of a valid image is an error or a load, never a
        /// panic.
        #[test]
        fn corrupted_images_never_panic(
            edits in prop::collection::vec((0usize..120, any::<u8>()), 1..8),
            cut in 0usize..130,
        ) {
            let mut seg = load_seg(D, vec![1; 8]);
            seg.memsz = 64;
            let mut img = riscv_exec(0, &[load_seg(0, words(&[e::nop(), e::wfi()])), seg]);
            for (at, byte) in edits {
                if let Some(b) = img.get_mut(at) {
                    *b = byte;
                }
            }
            img.truncate(cut);
            let mut bus = HarvardBus::reference();
            let _ = load(&mut bus, &img);
        }

        #[test]
        fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let mut bus = HarvardBus::reference();
            let _ = load(&mut bus, &bytes);
        }
    }
}
