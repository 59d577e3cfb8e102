//! The hart's view of memory: the [`Bus`] trait and [`HarvardBus`], the
//! reference memory map of weft's soft core.
//!
//! The hart checks alignment before it calls the bus (misaligned accesses
//! trap, see [`crate::hart`]), so a bus only ever sees naturally aligned
//! accesses and reports whether the address decodes.

use core::fmt;

use weft_regs::{
    BOOT_ROM_BASE, BOOT_ROM_SIZE, DATA_RAM_BASE, DATA_RAM_SIZE, INSTRUCTION_RAM_BASE,
    INSTRUCTION_RAM_SIZE,
};

/// Width of a data access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    /// 1 byte (`lb`, `lbu`, `sb`).
    Byte = 1,
    /// 2 bytes (`lh`, `lhu`, `sh`).
    Half = 2,
    /// 4 bytes (`lw`, `sw`, fetch).
    Word = 4,
}

impl Width {
    /// Size in bytes.
    pub fn bytes(self) -> u32 {
        self as u32
    }
}

/// Kind of bus access, carried in faults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Instruction fetch.
    Fetch,
    /// Data load.
    Load,
    /// Data store.
    Store,
    /// Image loading (ELF segments, test programs): the back door through
    /// which block RAM is initialised, not an access the core can make.
    Image,
}

/// Why a peripheral refused an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceFault {
    /// No register at this offset.
    NoRegister,
    /// The register does not accept this width.
    UnsupportedWidth,
    /// A store to a read-only register.
    ReadOnly,
    /// A load from a write-only register.
    WriteOnly,
}

/// Why an access did not complete; the hart raises the matching access
/// fault with `mtval` = the address (Privileged ISA 20211203 §3.1.16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BusFault {
    /// No memory or device decodes the address.
    Unmapped {
        /// The accessed address.
        addr: u32,
        /// What was attempted.
        access: Access,
    },
    /// The address decodes, but the region does not allow this access —
    /// e.g. a data load from instruction RAM, a store to the boot ROM, or
    /// a fetch from data RAM.
    Denied {
        /// The accessed address.
        addr: u32,
        /// What was attempted.
        access: Access,
    },
    /// A memory-mapped device refused the access.
    Device {
        /// The accessed address.
        addr: u32,
        /// What was attempted.
        access: Access,
        /// The device's reason.
        fault: DeviceFault,
    },
}

impl BusFault {
    /// The address of the failed access.
    pub fn addr(&self) -> u32 {
        match *self {
            Self::Unmapped { addr, .. } | Self::Denied { addr, .. } | Self::Device { addr, .. } => {
                addr
            }
        }
    }
}

impl fmt::Display for BusFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Unmapped { addr, access } => {
                write!(f, "{access:?} at {addr:#010x}: no memory or device there")
            }
            Self::Denied { addr, access } => write!(
                f,
                "{access:?} at {addr:#010x}: the region there does not allow this access \
                 (instruction RAM is fetched and stored to but not loaded from, the boot ROM \
                 is fetched and loaded from but not stored to, data RAM is data-only)"
            ),
            Self::Device {
                addr,
                access,
                fault,
            } => write!(
                f,
                "{access:?} at {addr:#010x}: device refused it ({fault:?})"
            ),
        }
    }
}

impl std::error::Error for BusFault {}

/// The memory system seen by one hart.
///
/// Implement it to give the ISS a different SoC memory map; the system
/// simulator implements it over its peripheral models. All accesses the
/// hart makes are naturally aligned.
pub trait Bus {
    /// Fetches the 32-bit instruction word at `addr` (4-byte aligned).
    fn fetch(&mut self, addr: u32) -> Result<u32, BusFault>;

    /// Loads `width` bytes at `addr`, little-endian, zero-extended to 32
    /// bits (the hart sign-extends for `lb`/`lh`).
    fn load(&mut self, addr: u32, width: Width) -> Result<u32, BusFault>;

    /// Stores the low `width` bytes of `value` at `addr`, little-endian.
    fn store(&mut self, addr: u32, width: Width, value: u32) -> Result<(), BusFault>;

    /// Writes `bytes` at `addr` through the back door that initialises
    /// memories (ELF loading, test programs), including memories the core
    /// cannot store to, such as the boot ROM.
    fn write_image(&mut self, addr: u32, bytes: &[u8]) -> Result<(), BusFault>;
}

/// A memory-mapped peripheral behind [`HarvardBus`].
///
/// Offsets are relative to the region's base; accesses are naturally
/// aligned.
pub trait Mmio {
    /// Reads `width` bytes at `offset`.
    fn read(&mut self, offset: u32, width: Width) -> Result<u32, DeviceFault>;
    /// Writes the low `width` bytes of `value` at `offset`.
    fn write(&mut self, offset: u32, width: Width, value: u32) -> Result<(), DeviceFault>;
}

/// Why a memory map cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapError {
    /// A region has size zero or a size that is not a multiple of 4.
    BadSize {
        /// Region base.
        base: u32,
        /// Region size in bytes.
        size: u32,
    },
    /// A region's base is not 4-byte aligned.
    Misaligned {
        /// Region base.
        base: u32,
    },
    /// A region runs past the end of the 32-bit address space.
    Wraps {
        /// Region base.
        base: u32,
        /// Region size in bytes.
        size: u32,
    },
    /// A region overlaps one already mapped.
    Overlap {
        /// Base of the new region.
        base: u32,
        /// Size of the new region.
        size: u32,
        /// Base of the region it overlaps.
        existing: u32,
    },
}

impl fmt::Display for MapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::BadSize { base, size } => write!(
                f,
                "region at {base:#010x} has size {size:#x}; sizes must be non-zero multiples of 4"
            ),
            Self::Misaligned { base } => {
                write!(f, "region base {base:#010x} is not 4-byte aligned")
            }
            Self::Wraps { base, size } => write!(
                f,
                "region at {base:#010x} of size {size:#x} runs past the end of the address space"
            ),
            Self::Overlap {
                base,
                size,
                existing,
            } => write!(
                f,
                "region at {base:#010x} of size {size:#x} overlaps the region at {existing:#010x}"
            ),
        }
    }
}

impl std::error::Error for MapError {}

/// A RAM region.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Ram {
    base: u32,
    bytes: Vec<u8>,
}

impl Ram {
    fn new(base: u32, size: u32) -> Self {
        Self {
            base,
            bytes: vec![0; size as usize],
        }
    }

    /// Offset of `addr` if `len` bytes from it lie inside the region.
    #[inline(always)]
    fn offset(&self, addr: u32, len: u32) -> Option<usize> {
        let off = addr.wrapping_sub(self.base) as usize;
        (off.checked_add(len as usize)? <= self.bytes.len()).then_some(off)
    }

    #[inline(always)]
    fn contains(&self, addr: u32) -> bool {
        self.offset(addr, 1).is_some()
    }

    #[inline(always)]
    fn read(&self, addr: u32, width: Width) -> Option<u32> {
        let off = self.offset(addr, width.bytes())?;
        let b = &self.bytes;
        Some(match width {
            Width::Byte => u32::from(b[off]),
            Width::Half => u32::from(u16::from_le_bytes([b[off], b[off + 1]])),
            Width::Word => u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]]),
        })
    }

    #[inline(always)]
    fn write(&mut self, addr: u32, width: Width, value: u32) -> Option<()> {
        let off = self.offset(addr, width.bytes())?;
        let n = width.bytes() as usize;
        self.bytes[off..off + n].copy_from_slice(&value.to_le_bytes()[..n]);
        Some(())
    }
}

/// One memory-mapped device region.
struct MmioRegion {
    base: u32,
    size: u32,
    device: Box<dyn Mmio>,
}

/// The reference memory map of weft's soft core: Harvard block RAMs plus
/// memory-mapped peripherals.
///
/// - **Instruction RAM** is fetched from, and written by data-port stores
///   (the boot loader copies an image into it) but not read by loads
///   ([`BusFault::Denied`], raised as a load access fault): its second
///   block RAM port is write-only, so no data-port read path joins the
///   data port's load multiplexer, and the firmware links read-only data
///   into data RAM. Nothing needs to read code back: the loader checks an
///   image's digest in the flash, before it copies.
/// - **The boot ROM** (`weft_regs::BOOT_ROM_BASE`), where the core starts
///   after reset, is fetched from and read by loads (the loader's
///   read-only data is there); stores fault, so no program can break the
///   boot path.
/// - **Data RAM** is on the data port only: loads and stores succeed,
///   fetches fault (instruction access fault).
/// - **MMIO regions** ([`HarvardBus::map_mmio`]) are data-port only.
/// - Anything else is [`BusFault::Unmapped`].
///
/// [`Bus::write_image`] may write all three memories, as the FPGA's block
/// RAM initialisation does.
pub struct HarvardBus {
    iram: Ram,
    dram: Ram,
    boot: Ram,
    mmio: Vec<MmioRegion>,
}

impl fmt::Debug for HarvardBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mmio: Vec<(u32, u32)> = self.mmio.iter().map(|r| (r.base, r.size)).collect();
        f.debug_struct("HarvardBus")
            .field("iram", &(self.iram.base, self.iram.bytes.len()))
            .field("dram", &(self.dram.base, self.dram.bytes.len()))
            .field("boot", &(self.boot.base, self.boot.bytes.len()))
            .field("mmio", &mmio)
            .finish()
    }
}

fn check_region(base: u32, size: u32) -> Result<(), MapError> {
    if size == 0 || size % 4 != 0 {
        return Err(MapError::BadSize { base, size });
    }
    if base % 4 != 0 {
        return Err(MapError::Misaligned { base });
    }
    if base.checked_add(size - 1).is_none() {
        return Err(MapError::Wraps { base, size });
    }
    Ok(())
}

fn overlaps(a_base: u32, a_size: u32, b_base: u32, b_size: u32) -> bool {
    // Both regions are checked not to wrap, so the u64 ends are exact.
    let (a_end, b_end) = (
        u64::from(a_base) + u64::from(a_size),
        u64::from(b_base) + u64::from(b_size),
    );
    u64::from(a_base) < b_end && u64::from(b_base) < a_end
}

impl HarvardBus {
    /// The reference configuration from `weft-regs`: 256 KiB instruction
    /// RAM at `INSTRUCTION_RAM_BASE`, 256 KiB data RAM at `DATA_RAM_BASE`,
    /// the boot ROM at `BOOT_ROM_BASE`, no peripherals.
    pub fn reference() -> Self {
        Self::new(
            INSTRUCTION_RAM_BASE,
            INSTRUCTION_RAM_SIZE,
            DATA_RAM_BASE,
            DATA_RAM_SIZE,
        )
        .expect("the weft-regs memory map has two disjoint, aligned RAMs")
    }

    /// A bus with instruction RAM of `iram_size` bytes at `iram_base`,
    /// data RAM of `dram_size` bytes at `dram_base` and the boot ROM of
    /// `weft_regs`, all zero-filled.
    pub fn new(
        iram_base: u32,
        iram_size: u32,
        dram_base: u32,
        dram_size: u32,
    ) -> Result<Self, MapError> {
        check_region(iram_base, iram_size)?;
        check_region(dram_base, dram_size)?;
        if overlaps(iram_base, iram_size, dram_base, dram_size) {
            return Err(MapError::Overlap {
                base: dram_base,
                size: dram_size,
                existing: iram_base,
            });
        }
        for (base, size) in [(iram_base, iram_size), (dram_base, dram_size)] {
            if overlaps(base, size, BOOT_ROM_BASE, BOOT_ROM_SIZE) {
                return Err(MapError::Overlap {
                    base,
                    size,
                    existing: BOOT_ROM_BASE,
                });
            }
        }
        Ok(Self {
            iram: Ram::new(iram_base, iram_size),
            dram: Ram::new(dram_base, dram_size),
            boot: Ram::new(BOOT_ROM_BASE, BOOT_ROM_SIZE),
            mmio: Vec::new(),
        })
    }

    /// Maps `device` at `base..base + size` on the data port.
    pub fn map_mmio(
        &mut self,
        base: u32,
        size: u32,
        device: Box<dyn Mmio>,
    ) -> Result<(), MapError> {
        check_region(base, size)?;
        let existing = [
            (self.iram.base, self.iram.bytes.len() as u32),
            (self.dram.base, self.dram.bytes.len() as u32),
            (self.boot.base, self.boot.bytes.len() as u32),
        ]
        .into_iter()
        .chain(self.mmio.iter().map(|r| (r.base, r.size)));
        for (b, s) in existing {
            if overlaps(base, size, b, s) {
                return Err(MapError::Overlap {
                    base,
                    size,
                    existing: b,
                });
            }
        }
        self.mmio.push(MmioRegion { base, size, device });
        Ok(())
    }

    /// Instruction RAM contents.
    pub fn instruction_ram(&self) -> &[u8] {
        &self.iram.bytes
    }

    /// Boot ROM contents.
    pub fn boot_rom(&self) -> &[u8] {
        &self.boot.bytes
    }

    /// Data RAM contents.
    pub fn data_ram(&self) -> &[u8] {
        &self.dram.bytes
    }

    /// Data RAM contents, writable (to place test inputs).
    pub fn data_ram_mut(&mut self) -> &mut [u8] {
        &mut self.dram.bytes
    }

    /// Writes instruction words from `addr` on through the image back door.
    pub fn write_words(&mut self, addr: u32, words: &[u32]) -> Result<(), BusFault> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.write_image(addr, &bytes)
    }

    fn mmio_at(&mut self, addr: u32) -> Option<&mut MmioRegion> {
        self.mmio
            .iter_mut()
            .find(|r| addr.wrapping_sub(r.base) < r.size)
    }

    #[cold]
    fn data_miss_load(&mut self, addr: u32, width: Width) -> Result<u32, BusFault> {
        if let Some(value) = self.boot.read(addr, width) {
            return Ok(value);
        }
        if self.iram.contains(addr) {
            return Err(BusFault::Denied {
                addr,
                access: Access::Load,
            });
        }
        match self.mmio_at(addr) {
            Some(r) => r
                .device
                .read(addr - r.base, width)
                .map_err(|fault| BusFault::Device {
                    addr,
                    access: Access::Load,
                    fault,
                }),
            None => Err(BusFault::Unmapped {
                addr,
                access: Access::Load,
            }),
        }
    }

    #[cold]
    fn data_miss_store(&mut self, addr: u32, width: Width, value: u32) -> Result<(), BusFault> {
        if self.iram.write(addr, width, value).is_some() {
            return Ok(());
        }
        if self.boot.contains(addr) {
            return Err(BusFault::Denied {
                addr,
                access: Access::Store,
            });
        }
        match self.mmio_at(addr) {
            Some(r) => r
                .device
                .write(addr - r.base, width, value)
                .map_err(|fault| BusFault::Device {
                    addr,
                    access: Access::Store,
                    fault,
                }),
            None => Err(BusFault::Unmapped {
                addr,
                access: Access::Store,
            }),
        }
    }
}

impl Bus for HarvardBus {
    #[inline(always)]
    fn fetch(&mut self, addr: u32) -> Result<u32, BusFault> {
        match self
            .iram
            .read(addr, Width::Word)
            .or_else(|| self.boot.read(addr, Width::Word))
        {
            Some(w) => Ok(w),
            None if self.dram.contains(addr) || self.mmio_at(addr).is_some() => {
                Err(BusFault::Denied {
                    addr,
                    access: Access::Fetch,
                })
            }
            None => Err(BusFault::Unmapped {
                addr,
                access: Access::Fetch,
            }),
        }
    }

    #[inline(always)]
    fn load(&mut self, addr: u32, width: Width) -> Result<u32, BusFault> {
        match self.dram.read(addr, width) {
            Some(v) => Ok(v),
            None => self.data_miss_load(addr, width),
        }
    }

    #[inline(always)]
    fn store(&mut self, addr: u32, width: Width, value: u32) -> Result<(), BusFault> {
        match self.dram.write(addr, width, value) {
            Some(()) => Ok(()),
            None => self.data_miss_store(addr, width, value),
        }
    }

    fn write_image(&mut self, addr: u32, bytes: &[u8]) -> Result<(), BusFault> {
        let len = u32::try_from(bytes.len()).map_err(|_| BusFault::Unmapped {
            addr,
            access: Access::Image,
        })?;
        for ram in [&mut self.iram, &mut self.dram, &mut self.boot] {
            if let Some(off) = ram.offset(addr, len) {
                ram.bytes[off..off + bytes.len()].copy_from_slice(bytes);
                return Ok(());
            }
        }
        // Report the first byte that no single RAM holds.
        let first_bad = (0..len)
            .map(|i| addr.wrapping_add(i))
            .find(|&a| !self.iram.contains(a) && !self.dram.contains(a) && !self.boot.contains(a))
            .unwrap_or(addr);
        let fault =
            if self.iram.contains(addr) || self.dram.contains(addr) || self.boot.contains(addr) {
                // Starts in a RAM but runs off its end.
                BusFault::Unmapped {
                    addr: first_bad,
                    access: Access::Image,
                }
            } else if self.mmio_at(addr).is_some() {
                BusFault::Denied {
                    addr,
                    access: Access::Image,
                }
            } else {
                BusFault::Unmapped {
                    addr,
                    access: Access::Image,
                }
            };
        Err(fault)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IRAM: u32 = INSTRUCTION_RAM_BASE;
    const DRAM: u32 = DATA_RAM_BASE;

    /// A device with one 32-bit register at offset 0 that remembers writes.
    struct Latch(u32);

    impl Mmio for Latch {
        fn read(&mut self, offset: u32, width: Width) -> Result<u32, DeviceFault> {
            match (offset, width) {
                (0, Width::Word) => Ok(self.0),
                (0, _) => Err(DeviceFault::UnsupportedWidth),
                _ => Err(DeviceFault::NoRegister),
            }
        }
        fn write(&mut self, offset: u32, width: Width, value: u32) -> Result<(), DeviceFault> {
            match (offset, width) {
                (0, Width::Word) => {
                    self.0 = value;
                    Ok(())
                }
                (0, _) => Err(DeviceFault::UnsupportedWidth),
                _ => Err(DeviceFault::NoRegister),
            }
        }
    }

    #[test]
    fn reference_map_comes_from_weft_regs() {
        let bus = HarvardBus::reference();
        assert_eq!(bus.instruction_ram().len(), 256 * 1024);
        assert_eq!(bus.data_ram().len(), 256 * 1024);
    }

    #[test]
    fn data_ram_is_little_endian() {
        let mut bus = HarvardBus::reference();
        bus.store(DRAM, Width::Word, 0x1122_3344).unwrap();
        assert_eq!(bus.load(DRAM, Width::Byte), Ok(0x44));
        assert_eq!(bus.load(DRAM + 2, Width::Half), Ok(0x1122));
        bus.store(DRAM + 1, Width::Byte, 0xAB).unwrap();
        assert_eq!(bus.load(DRAM, Width::Word), Ok(0x1122_AB44));
    }

    #[test]
    fn instruction_ram_is_fetched_and_stored_to_but_not_loaded() {
        let mut bus = HarvardBus::reference();
        bus.write_words(IRAM + 8, &[0xDEAD_BEEF]).unwrap();
        assert_eq!(bus.fetch(IRAM + 8), Ok(0xDEAD_BEEF));
        assert_eq!(
            bus.load(IRAM + 8, Width::Word),
            Err(BusFault::Denied {
                addr: IRAM + 8,
                access: Access::Load
            })
        );
        // A store takes its bytes only, little-endian, and the fetch sees it.
        bus.store(IRAM + 9, Width::Byte, 0x11).unwrap();
        assert_eq!(bus.fetch(IRAM + 8), Ok(0xDEAD_11EF));
        bus.store(IRAM + 8, Width::Word, 0x0000_0013).unwrap();
        assert_eq!(bus.fetch(IRAM + 8), Ok(0x13));
    }

    #[test]
    fn the_boot_rom_is_fetched_and_loaded_but_not_stored_to() {
        let mut bus = HarvardBus::reference();
        assert_eq!(bus.boot_rom().len(), BOOT_ROM_SIZE as usize);
        bus.write_words(BOOT_ROM_BASE + 4, &[0x1234_5678]).unwrap();
        assert_eq!(bus.fetch(BOOT_ROM_BASE + 4), Ok(0x1234_5678));
        assert_eq!(bus.load(BOOT_ROM_BASE + 6, Width::Half), Ok(0x1234));
        assert_eq!(
            bus.store(BOOT_ROM_BASE + 4, Width::Word, 0),
            Err(BusFault::Denied {
                addr: BOOT_ROM_BASE + 4,
                access: Access::Store
            })
        );
        let past = BOOT_ROM_BASE + BOOT_ROM_SIZE;
        assert!(matches!(bus.fetch(past), Err(BusFault::Unmapped { .. })));
        assert!(matches!(
            bus.load(past, Width::Word),
            Err(BusFault::Unmapped { .. })
        ));
    }

    #[test]
    fn data_ram_is_not_fetchable() {
        let mut bus = HarvardBus::reference();
        assert_eq!(
            bus.fetch(DRAM),
            Err(BusFault::Denied {
                addr: DRAM,
                access: Access::Fetch
            })
        );
    }

    #[test]
    fn unmapped_addresses_fault() {
        let mut bus = HarvardBus::reference();
        let past_dram = DRAM + DATA_RAM_SIZE;
        assert_eq!(
            bus.load(past_dram, Width::Word),
            Err(BusFault::Unmapped {
                addr: past_dram,
                access: Access::Load
            })
        );
        // The last word of data RAM is fine, and a word that would straddle
        // the end cannot be asked for (the hart faults misalignment first).
        assert_eq!(bus.load(past_dram - 4, Width::Word), Ok(0));
        assert!(bus.fetch(0xFFFF_FFFC).is_err());
    }

    #[test]
    fn mmio_regions_route_to_devices() {
        let mut bus = HarvardBus::reference();
        bus.map_mmio(0x2000_0000, 0x100, Box::new(Latch(7)))
            .unwrap();
        assert_eq!(bus.load(0x2000_0000, Width::Word), Ok(7));
        bus.store(0x2000_0000, Width::Word, 9).unwrap();
        assert_eq!(bus.load(0x2000_0000, Width::Word), Ok(9));
        assert_eq!(
            bus.load(0x2000_0004, Width::Word),
            Err(BusFault::Device {
                addr: 0x2000_0004,
                access: Access::Load,
                fault: DeviceFault::NoRegister
            })
        );
        assert!(matches!(
            bus.fetch(0x2000_0000),
            Err(BusFault::Denied { .. })
        ));
    }

    #[test]
    fn overlapping_regions_are_refused() {
        let mut bus = HarvardBus::reference();
        assert_eq!(
            bus.map_mmio(DRAM + 0x100, 0x100, Box::new(Latch(0))),
            Err(MapError::Overlap {
                base: DRAM + 0x100,
                size: 0x100,
                existing: DRAM
            })
        );
        assert_eq!(
            HarvardBus::new(0, 0x1000, 0x800, 0x1000).err(),
            Some(MapError::Overlap {
                base: 0x800,
                size: 0x1000,
                existing: 0
            })
        );
        assert_eq!(
            bus.map_mmio(0xFFFF_FF00, 0x200, Box::new(Latch(0))),
            Err(MapError::Wraps {
                base: 0xFFFF_FF00,
                size: 0x200
            })
        );
    }

    #[test]
    fn image_writes_reach_both_rams_but_not_past_them() {
        let mut bus = HarvardBus::reference();
        bus.write_image(IRAM, &[1, 2, 3, 4]).unwrap();
        bus.write_image(DRAM + 4, &[5, 6]).unwrap();
        assert_eq!(&bus.instruction_ram()[..4], &[1, 2, 3, 4]);
        assert_eq!(&bus.data_ram()[4..6], &[5, 6]);
        let end = DRAM + DATA_RAM_SIZE;
        assert_eq!(
            bus.write_image(end - 2, &[0; 4]),
            Err(BusFault::Unmapped {
                addr: end,
                access: Access::Image
            })
        );
    }
}
