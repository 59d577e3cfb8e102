//! Base Address Registers: describing them, making a configuration space
//! size them as hardware does, and sizing and placing them as an enumerator
//! does (PCIe Base 6.0 §7.5.1.2.1).
//!
//! A BAR's size is encoded in which of its address bits are writable: the
//! bits below the size are hardwired to 0, so after software writes all ones
//! the register reads back the size mask with the RO type bits. A 64-bit
//! memory BAR spans two consecutive registers, the second holding address
//! bits 63:32. The same rules apply to SR-IOV VF BARs (§9.3.3.14).

use super::header::{bar as bits, command, common, expansion_rom, header_type, type0, type1};
use super::space::{ConfigSpace, ConfigWrite, ALL_BYTES};

/// The most BARs any BAR array holds (a Type 0 header or SR-IOV VF BARs).
pub const MAX_BARS: usize = 6;

/// What a BAR decodes: I/O or memory space, and for memory its width and
/// whether it is prefetchable (§7.5.1.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarKind {
    /// I/O space (bit 0 set).
    Io,
    /// 32-bit memory space (type 00b), one register.
    Memory32 {
        /// Bit 3: reads have no side effects and writes may be merged.
        prefetchable: bool,
    },
    /// 64-bit memory space (type 10b), two registers.
    Memory64 {
        /// Bit 3: reads have no side effects and writes may be merged.
        prefetchable: bool,
    },
}

impl BarKind {
    /// The RO low bits the BAR reads back with: I/O flag, type, prefetchable.
    pub const fn type_bits(self) -> u32 {
        match self {
            BarKind::Io => bits::IO_SPACE,
            BarKind::Memory32 { prefetchable } => {
                bits::MEMORY_TYPE_32 | if prefetchable { bits::PREFETCHABLE } else { 0 }
            }
            BarKind::Memory64 { prefetchable } => {
                bits::MEMORY_TYPE_64 | if prefetchable { bits::PREFETCHABLE } else { 0 }
            }
        }
    }

    /// How many BAR registers the BAR occupies: 2 for 64-bit memory, else 1.
    pub const fn registers(self) -> u8 {
        match self {
            BarKind::Memory64 { .. } => 2,
            _ => 1,
        }
    }
}

/// A BAR a function implements: its kind and size in bytes (a power of two).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bar {
    /// What the BAR decodes.
    pub kind: BarKind,
    /// The size of the region in bytes: a power of two.
    pub size: u64,
}

impl Bar {
    /// A 32-bit, non-prefetchable memory BAR.
    pub const fn memory32(size: u64) -> Self {
        Bar {
            kind: BarKind::Memory32 {
                prefetchable: false,
            },
            size,
        }
    }

    /// A 64-bit memory BAR.
    pub const fn memory64(size: u64, prefetchable: bool) -> Self {
        Bar {
            kind: BarKind::Memory64 { prefetchable },
            size,
        }
    }

    /// An I/O BAR.
    pub const fn io(size: u64) -> Self {
        Bar {
            kind: BarKind::Io,
            size,
        }
    }

    /// Checks the size against the spec's limits for the kind.
    fn validate(&self, slot: u8) -> Result<(), BarError> {
        let (minimum, maximum) = match self.kind {
            BarKind::Io => (bits::MIN_IO_SIZE, bits::MAX_IO_SIZE),
            BarKind::Memory32 { .. } => (bits::MIN_MEMORY_SIZE, 1 << 31),
            BarKind::Memory64 { .. } => (bits::MIN_MEMORY_SIZE, 1 << 63),
        };
        let size = self.size;
        if !size.is_power_of_two() {
            return Err(BarError::SizeNotPowerOfTwo { slot, size });
        }
        if size < minimum {
            return Err(BarError::SizeTooSmall {
                slot,
                size,
                minimum,
            });
        }
        if size > maximum {
            return Err(BarError::SizeTooLarge {
                slot,
                size,
                maximum,
            });
        }
        Ok(())
    }

    /// The writable address bits over both registers (the upper 32 bits
    /// matter only for 64-bit BARs): the complement of `size - 1`, less the
    /// low flag bits.
    const fn address_mask(&self) -> u64 {
        let flags = match self.kind {
            BarKind::Io => !bits::IO_ADDRESS_MASK,
            _ => !bits::MEMORY_ADDRESS_MASK,
        } as u64;
        !(self.size.wrapping_sub(1)) & !flags
    }
}

/// Why a BAR layout cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarError {
    /// BAR sizes are powers of two (§7.5.1.2.1).
    SizeNotPowerOfTwo {
        /// The BAR slot (0-based).
        slot: u8,
        /// The requested size.
        size: u64,
    },
    /// Below the smallest size the register layout can express.
    SizeTooSmall {
        /// The BAR slot.
        slot: u8,
        /// The requested size.
        size: u64,
        /// The smallest size allowed for this kind.
        minimum: u64,
    },
    /// Above the largest size allowed for the kind (256 bytes for I/O,
    /// 2 GiB for 32-bit memory).
    SizeTooLarge {
        /// The BAR slot.
        slot: u8,
        /// The requested size.
        size: u64,
        /// The largest size allowed for this kind.
        maximum: u64,
    },
    /// A 64-bit BAR's upper register is described as a BAR of its own.
    UpperHalfOccupied {
        /// The slot of the 64-bit BAR.
        slot: u8,
    },
    /// A 64-bit BAR sits in the last slot, with no register for its upper half.
    UpperHalfMissing {
        /// The slot of the 64-bit BAR.
        slot: u8,
    },
    /// More BARs than the header (or VF BAR array) has registers.
    TooManyBars {
        /// How many were described.
        described: usize,
        /// How many registers exist.
        registers: u8,
    },
    /// An expansion ROM size that is not a power of two between 2 KiB and 16 MiB.
    InvalidRomSize {
        /// The requested size.
        size: u32,
    },
}

/// Checks a BAR array description: sizes within the spec's limits, and
/// every 64-bit BAR followed by a free register for its upper half.
pub fn validate_bars(registers: u8, bars: &[Option<Bar>]) -> Result<(), BarError> {
    if bars.len() > usize::from(registers) {
        return Err(BarError::TooManyBars {
            described: bars.len(),
            registers,
        });
    }
    for (slot, bar) in bars.iter().enumerate() {
        let slot = slot as u8;
        let Some(bar) = bar else { continue };
        bar.validate(slot)?;
        if let BarKind::Memory64 { .. } = bar.kind {
            match bars.get(usize::from(slot) + 1) {
                Some(Some(_)) => return Err(BarError::UpperHalfOccupied { slot }),
                None if slot + 1 >= registers => return Err(BarError::UpperHalfMissing { slot }),
                _ => {}
            }
        }
    }
    Ok(())
}

/// Lays out a BAR array at `base` (BAR0's offset): each register gets its
/// type bits and the RW mask that makes it size itself. Unused registers are
/// read-only zero, as an unimplemented BAR is (§7.5.1.2.1).
pub fn install_bars(
    space: &mut ConfigSpace,
    base: u16,
    registers: u8,
    bars: &[Option<Bar>],
) -> Result<(), BarError> {
    validate_bars(registers, bars)?;
    for slot in 0..registers {
        space.define_u32(base + 4 * u16::from(slot), 0, 0, 0);
    }
    for (slot, bar) in bars.iter().enumerate() {
        let Some(bar) = bar else { continue };
        let register = base + 4 * slot as u16;
        let mask = bar.address_mask();
        space.define_u32(register, bar.kind.type_bits(), mask as u32, 0);
        if bar.kind.registers() == 2 {
            space.define_u32(register + 4, 0, (mask >> 32) as u32, 0);
        }
    }
    Ok(())
}

/// Lays out an Expansion ROM Base Address register at `offset` for a ROM of
/// `size` bytes (§7.5.1.2.4): Enable is RW, and address bits 31:11 are RW
/// down to the ROM size. `None` makes the register read-only zero.
pub fn install_expansion_rom(
    space: &mut ConfigSpace,
    offset: u16,
    size: Option<u32>,
) -> Result<(), BarError> {
    let Some(size) = size else {
        space.define_u32(offset, 0, 0, 0);
        return Ok(());
    };
    if !size.is_power_of_two() || !(expansion_rom::MIN_SIZE..=1 << 24).contains(&size) {
        return Err(BarError::InvalidRomSize { size });
    }
    let rw = (!(size - 1) & expansion_rom::ADDRESS_MASK) | expansion_rom::ENABLE;
    space.define_u32(offset, 0, rw, 0);
    Ok(())
}

/// A BAR found by sizing: where its (first) register is, what it decodes,
/// how big it is, and the address it held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodedBar {
    /// Offset of the BAR's register (the low one for 64-bit BARs).
    pub register: u16,
    /// Kind and size.
    pub bar: Bar,
    /// The address the BAR held when it was sized.
    pub address: u64,
}

/// Why sizing a BAR array failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarDecodeError<E> {
    /// The configuration access itself failed.
    Access(E),
    /// A memory BAR reads back type 01b or 11b, reserved in PCIe (§7.5.1.2.1).
    ReservedMemoryType {
        /// Offset of the register.
        register: u16,
        /// What it read back after all ones were written.
        readback: u32,
    },
    /// The writable address bits are not a contiguous run from the top, so
    /// they do not encode a power-of-two size.
    NonContiguousSizeMask {
        /// Offset of the (low) register.
        register: u16,
        /// The address bits that read back as ones.
        mask: u64,
    },
    /// A 64-bit BAR in the last register of the array.
    UpperHalfMissing {
        /// Offset of the register.
        register: u16,
    },
    /// More registers asked for than any BAR array has.
    TooManyRegisters {
        /// How many were asked for.
        registers: u8,
    },
}

impl<E> From<E> for BarDecodeError<E> {
    fn from(error: E) -> Self {
        BarDecodeError::Access(error)
    }
}

/// Saves a register, writes all ones, reads the size mask back, restores it.
fn probe<A: ConfigWrite>(access: &mut A, register: u16) -> Result<(u32, u32), A::Error> {
    let original = access.read_dword(register)?;
    access.write_dword(register, u32::MAX, ALL_BYTES)?;
    let readback = access.read_dword(register)?;
    access.write_dword(register, original, ALL_BYTES)?;
    Ok((original, readback))
}

/// Sizes the BARs of an array of `registers` registers at `base` the way an
/// operating system's enumerator does (§7.5.1.2.1): for each register save
/// it, write all ones, read back, restore; the read-back holds the type bits
/// and the size mask. Entry `n` of the result is the BAR whose first
/// register is `n`; the upper register of a 64-bit BAR and unimplemented
/// registers (reading back 0) are `None`.
///
/// The caller disables decoding first (see [`size_header_bars`]); a BAR
/// briefly holds all ones while it is sized.
pub fn size_bar_array<A: ConfigWrite>(
    access: &mut A,
    base: u16,
    registers: u8,
) -> Result<[Option<DecodedBar>; MAX_BARS], BarDecodeError<A::Error>> {
    if usize::from(registers) > MAX_BARS {
        return Err(BarDecodeError::TooManyRegisters { registers });
    }
    let mut found = [None; MAX_BARS];
    let mut slot = 0u8;
    while slot < registers {
        let register = base + 4 * u16::from(slot);
        let (original, readback) = probe(access, register)?;
        if readback == 0 {
            slot += 1;
            continue;
        }
        let (kind, mask, address) = if readback & bits::IO_SPACE != 0 {
            let mut mask = readback & bits::IO_ADDRESS_MASK;
            // A function decoding only 16-bit I/O addresses hardwires bits
            // 31:16 to 0 (§7.5.1.2.1); they are not part of the size.
            if mask & 0xffff_0000 == 0 {
                mask |= 0xffff_0000;
            }
            let address = u64::from(original & bits::IO_ADDRESS_MASK);
            (
                BarKind::Io,
                u64::from(mask) | 0xffff_ffff_0000_0000,
                address,
            )
        } else {
            let prefetchable = readback & bits::PREFETCHABLE != 0;
            let low_mask = readback & bits::MEMORY_ADDRESS_MASK;
            let low_address = original & bits::MEMORY_ADDRESS_MASK;
            match readback & bits::MEMORY_TYPE_MASK {
                bits::MEMORY_TYPE_32 => (
                    BarKind::Memory32 { prefetchable },
                    u64::from(low_mask) | 0xffff_ffff_0000_0000,
                    u64::from(low_address),
                ),
                bits::MEMORY_TYPE_64 => {
                    if slot + 1 >= registers {
                        return Err(BarDecodeError::UpperHalfMissing { register });
                    }
                    let (upper_original, upper_readback) = probe(access, register + 4)?;
                    (
                        BarKind::Memory64 { prefetchable },
                        u64::from(upper_readback) << 32 | u64::from(low_mask),
                        u64::from(upper_original) << 32 | u64::from(low_address),
                    )
                }
                _ => return Err(BarDecodeError::ReservedMemoryType { register, readback }),
            }
        };
        let size = (!mask).wrapping_add(1);
        if mask == 0 || !size.is_power_of_two() || mask != !(size - 1) {
            return Err(BarDecodeError::NonContiguousSizeMask { register, mask });
        }
        // An I/O BAR's bit 1 is reserved, a memory BAR's bits 3:0 are flags:
        // the size mask above already counts them as address bits of value 0.
        let size = match kind {
            BarKind::Io => size.max(bits::MIN_IO_SIZE),
            _ => size.max(bits::MIN_MEMORY_SIZE),
        };
        found[usize::from(slot)] = Some(DecodedBar {
            register,
            bar: Bar { kind, size },
            address,
        });
        slot += kind.registers();
    }
    Ok(found)
}

/// Sizes the BARs of a Type 0 or Type 1 header (6 or 2 registers at 0x10),
/// with I/O and memory decoding turned off in the Command register for the
/// duration and the Command register restored afterwards, as enumerators do
/// so that a half-written BAR never claims addresses; not restored when the
/// function stopped answering ([`super::ConfigRead::unanswered`]).
pub fn size_header_bars<A: ConfigWrite>(
    access: &mut A,
) -> Result<[Option<DecodedBar>; MAX_BARS], BarDecodeError<A::Error>> {
    let header = access.read_dword(common::HEADER_TYPE)?;
    let layout = (header >> 16) as u8 & header_type::LAYOUT_MASK;
    let registers = if layout == header_type::TYPE1 {
        type1::BAR_COUNT
    } else {
        type0::BAR_COUNT
    };
    let command_dword = access.read_dword(common::COMMAND)?;
    let decode = u32::from(command::IO_SPACE | command::MEMORY_SPACE);
    // Write only the Command bytes (byte enables 0b0011): the Status half
    // is RW1C and a write of its current value would clear it.
    access.write_dword(common::COMMAND, command_dword & !decode, 0b0011)?;
    let result = size_bar_array(access, type0::BAR0, registers);
    // A function that stopped answering is sent nothing more: written
    // back, Command would only wait out another completion timeout.
    if matches!(&result, Err(BarDecodeError::Access(error)) if A::unanswered(error)) {
        return result;
    }
    access.write_dword(common::COMMAND, command_dword, 0b0011)?;
    result
}

/// Why a BAR could not be given an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarAssignError<E> {
    /// The configuration access itself failed.
    Access(E),
    /// A BAR's address must be a multiple of its size (§7.5.1.2.1).
    Misaligned {
        /// The address asked for.
        address: u64,
        /// The BAR's size.
        size: u64,
    },
    /// A 32-bit memory or an I/O BAR cannot hold an address at or above 4 GiB.
    AboveFourGiB {
        /// The address asked for.
        address: u64,
    },
}

impl<E> From<E> for BarAssignError<E> {
    fn from(error: E) -> Self {
        BarAssignError::Access(error)
    }
}

/// Places a sized BAR at `address`: writes the low register and, for a
/// 64-bit BAR, the upper one.
pub fn assign_bar<A: ConfigWrite>(
    access: &mut A,
    bar: &DecodedBar,
    address: u64,
) -> Result<(), BarAssignError<A::Error>> {
    let size = bar.bar.size;
    if size == 0 || address & (size - 1) != 0 {
        return Err(BarAssignError::Misaligned { address, size });
    }
    match bar.bar.kind {
        BarKind::Memory64 { .. } => {
            access.write_dword(bar.register, address as u32, ALL_BYTES)?;
            access.write_dword(bar.register + 4, (address >> 32) as u32, ALL_BYTES)?;
        }
        _ => {
            if address > u64::from(u32::MAX) {
                return Err(BarAssignError::AboveFourGiB { address });
            }
            access.write_dword(bar.register, address as u32, ALL_BYTES)?;
        }
    }
    Ok(())
}

/// Reads the address a BAR currently holds from a space, without sizing it.
pub fn bar_address(space: &ConfigSpace, bar: &DecodedBar) -> u64 {
    let low = space.read(bar.register);
    match bar.bar.kind {
        BarKind::Io => u64::from(low & bits::IO_ADDRESS_MASK),
        BarKind::Memory32 { .. } => u64::from(low & bits::MEMORY_ADDRESS_MASK),
        BarKind::Memory64 { .. } => {
            u64::from(space.read(bar.register + 4)) << 32
                | u64::from(low & bits::MEMORY_ADDRESS_MASK)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::space::ConfigRead;
    use proptest::prelude::*;

    const BAR0: u16 = 0x10;

    /// A function that answers `left` more accesses, then none: each
    /// access after fails `Err(true)` ("unanswered") if `silent`, else
    /// `Err(false)`. Writes to Command are counted.
    struct StopsAnswering {
        space: ConfigSpace,
        left: usize,
        silent: bool,
        command_writes: usize,
    }

    impl StopsAnswering {
        fn access(&mut self) -> Result<(), bool> {
            match self.left.checked_sub(1) {
                Some(left) => {
                    self.left = left;
                    Ok(())
                }
                None => Err(self.silent),
            }
        }
    }

    impl ConfigRead for StopsAnswering {
        type Error = bool;
        fn read_dword(&mut self, offset: u16) -> Result<u32, bool> {
            self.access()?;
            Ok(self.space.read(offset))
        }
        fn unanswered(error: &bool) -> bool {
            *error
        }
    }

    impl ConfigWrite for StopsAnswering {
        fn write_dword(&mut self, offset: u16, value: u32, byte_enables: u8) -> Result<(), bool> {
            if offset == common::COMMAND {
                self.command_writes += 1;
            }
            self.access()?;
            self.space.write(offset, value, byte_enables);
            Ok(())
        }
    }

    #[test]
    fn command_is_restored_after_a_failed_sizing_unless_the_function_went_silent() {
        for silent in [false, true] {
            let mut space = ConfigSpace::new();
            install_bars(&mut space, BAR0, 6, &[Some(Bar::memory32(16 << 20))]).expect("valid");
            // Header Type, Command read, Command write, then BAR0 sizing fails.
            let mut access = StopsAnswering {
                space,
                left: 3,
                silent,
                command_writes: 0,
            };
            let result = size_header_bars(&mut access);
            assert_eq!(result.err(), Some(BarDecodeError::Access(silent)));
            // Decoding off, then back on only for a function still answering.
            let expected = if silent { 1 } else { 2 };
            assert_eq!(access.command_writes, expected, "silent: {silent}");
        }
    }

    #[test]
    fn a_16_mib_32_bit_bar_reads_back_its_size_mask() {
        let mut space = ConfigSpace::new();
        install_bars(&mut space, BAR0, 6, &[Some(Bar::memory32(16 << 20))]).expect("valid BAR");
        space.write_u32(BAR0, 0xffff_ffff);
        // 16 MiB = 2^24: bits 31:24 writable, 23:4 hardwired 0, type 00b, not prefetchable.
        assert_eq!(space.read(BAR0), 0xff00_0000);
    }

    #[test]
    fn a_64_bit_prefetchable_bar_spans_two_registers() {
        let mut space = ConfigSpace::new();
        // 8 GiB = 2^33, prefetchable, 64-bit.
        let bars = [None, Some(Bar::memory64(8 << 30, true))];
        install_bars(&mut space, BAR0, 6, &bars).expect("valid BAR");
        space.write_u32(0x14, 0xffff_ffff);
        space.write_u32(0x18, 0xffff_ffff);
        // Low: all of 31:4 are below the size, so only the flags remain:
        // prefetchable (bit 3) and type 10b (bits 2:1) = 0xc.
        assert_eq!(space.read(0x14), 0x0000_000c);
        // High: bits 63:33 writable = 0xffff_fffe.
        assert_eq!(space.read(0x18), 0xffff_fffe);
    }

    #[test]
    fn an_io_bar_reads_back_its_mask_and_the_io_flag() {
        let mut space = ConfigSpace::new();
        install_bars(&mut space, BAR0, 6, &[Some(Bar::io(32))]).expect("valid BAR");
        space.write_u32(BAR0, 0xffff_ffff);
        // 32 bytes: bits 4:2 hardwired 0, bit 1 reserved 0, bit 0 = 1.
        assert_eq!(space.read(BAR0), 0xffff_ffe1);
    }

    #[test]
    fn unimplemented_registers_stay_zero() {
        let mut space = ConfigSpace::new();
        install_bars(&mut space, BAR0, 6, &[]).expect("no BARs");
        space.write_u32(0x1c, 0xffff_ffff);
        assert_eq!(space.read(0x1c), 0);
    }

    #[test]
    fn bad_layouts_are_refused() {
        let mut space = ConfigSpace::new();
        assert_eq!(
            install_bars(&mut space, BAR0, 6, &[Some(Bar::memory32(3000))]),
            Err(BarError::SizeNotPowerOfTwo {
                slot: 0,
                size: 3000
            })
        );
        assert_eq!(
            install_bars(
                &mut space,
                BAR0,
                6,
                &[Some(Bar::memory64(4096, false)), Some(Bar::io(4))]
            ),
            Err(BarError::UpperHalfOccupied { slot: 0 })
        );
        let mut last = [None; 6];
        last[5] = Some(Bar::memory64(4096, false));
        assert_eq!(
            install_bars(&mut space, BAR0, 6, &last),
            Err(BarError::UpperHalfMissing { slot: 5 })
        );
        assert_eq!(
            install_bars(&mut space, BAR0, 6, &[Some(Bar::io(512))]),
            Err(BarError::SizeTooLarge {
                slot: 0,
                size: 512,
                maximum: 256
            })
        );
    }

    #[test]
    fn an_enumerator_sizes_a_mixed_set_and_restores_it() {
        let mut space = ConfigSpace::new();
        let bars = [
            Some(Bar::memory32(16 << 20)),
            Some(Bar::memory64(8 << 30, true)),
            None,
            Some(Bar::io(256)),
            Some(Bar {
                kind: BarKind::Memory32 { prefetchable: true },
                size: 4096,
            }),
        ];
        install_bars(&mut space, BAR0, 6, &bars).expect("valid BARs");
        space.write_u32(BAR0, 0xfe00_0000);
        space.write_u32(0x14, 0x0000_0000);
        space.write_u32(0x18, 0x0000_0002);
        let before = space.clone();
        let found = size_bar_array(&mut space, BAR0, 6).expect("sizable");
        assert_eq!(space, before, "sizing restores every register");
        assert_eq!(
            found[0],
            Some(DecodedBar {
                register: 0x10,
                bar: Bar::memory32(16 << 20),
                address: 0xfe00_0000
            })
        );
        assert_eq!(
            found[1],
            Some(DecodedBar {
                register: 0x14,
                bar: Bar::memory64(8 << 30, true),
                address: 0x2_0000_0000
            })
        );
        assert_eq!(found[2], None, "upper half of BAR1");
        assert_eq!(found[3].map(|b| b.bar), Some(Bar::io(256)));
        assert_eq!(found[4].map(|b| b.bar.size), Some(4096));
        assert_eq!(found[5], None);
    }

    #[test]
    fn a_16_bit_io_bar_is_sized_from_its_low_half() {
        // A function that hardwires I/O address bits 31:16 to 0: a 16-byte BAR
        // reads back 0x0000_fff1.
        let mut space = ConfigSpace::new();
        space.define_u32(BAR0, 0x1, 0x0000_fff0, 0);
        let found = size_bar_array(&mut space, BAR0, 1).expect("sizable");
        assert_eq!(found[0].map(|b| b.bar), Some(Bar::io(16)));
    }

    #[test]
    fn broken_bars_are_reported() {
        let mut space = ConfigSpace::new();
        space.define_u32(BAR0, 0x2, 0xffff_0000, 0);
        assert_eq!(
            size_bar_array(&mut space, BAR0, 1),
            Err(BarDecodeError::ReservedMemoryType {
                register: BAR0,
                readback: 0xffff_0002
            })
        );
        space.define_u32(BAR0, 0x0, 0xff0f_0000, 0);
        assert_eq!(
            size_bar_array(&mut space, BAR0, 1),
            Err(BarDecodeError::NonContiguousSizeMask {
                register: BAR0,
                mask: 0xffff_ffff_ff0f_0000
            })
        );
        space.define_u32(BAR0, 0x4, 0xffff_0000, 0);
        assert_eq!(
            size_bar_array(&mut space, BAR0, 1),
            Err(BarDecodeError::UpperHalfMissing { register: BAR0 })
        );
    }

    #[test]
    fn assigning_checks_alignment_and_width() {
        let mut space = ConfigSpace::new();
        install_bars(
            &mut space,
            BAR0,
            6,
            &[
                Some(Bar::memory32(1 << 20)),
                Some(Bar::memory64(1 << 20, false)),
            ],
        )
        .expect("valid BARs");
        let found = size_bar_array(&mut space, BAR0, 6).expect("sizable");
        let bar0 = found[0].expect("BAR0 present");
        let bar1 = found[1].expect("BAR1 present");
        assert_eq!(
            assign_bar(&mut space, &bar0, 0x8_0000),
            Err(BarAssignError::Misaligned {
                address: 0x8_0000,
                size: 1 << 20
            })
        );
        assert_eq!(
            assign_bar(&mut space, &bar0, 1 << 32),
            Err(BarAssignError::AboveFourGiB { address: 1 << 32 })
        );
        assign_bar(&mut space, &bar0, 0xc010_0000).expect("aligned");
        assign_bar(&mut space, &bar1, 0x40_0010_0000).expect("aligned");
        assert_eq!(space.read(0x10), 0xc010_0000);
        assert_eq!(space.read(0x14), 0x0010_0004);
        assert_eq!(space.read(0x18), 0x0000_0040);
        assert_eq!(bar_address(&space, &bar1), 0x40_0010_0000);
    }

    #[test]
    fn expansion_rom_keeps_its_enable_bit_and_size() {
        let mut space = ConfigSpace::new();
        install_expansion_rom(&mut space, 0x30, Some(64 << 10)).expect("valid ROM");
        space.write_u32(0x30, 0xffff_ffff);
        // 64 KiB: bits 31:16 writable, 15:11 hardwired 0, bits 10:1 RO 0, enable RW.
        assert_eq!(space.read(0x30), 0xffff_0001);
        assert_eq!(
            install_expansion_rom(&mut space, 0x30, Some(1024)),
            Err(BarError::InvalidRomSize { size: 1024 })
        );
    }

    proptest! {
        #[test]
        fn any_valid_bar_sizes_back_to_itself(
            log2 in 4u32..40,
            prefetchable in any::<bool>(),
            wide in any::<bool>(),
        ) {
            let bar = if wide || log2 > 31 {
                Bar::memory64(1 << log2, prefetchable)
            } else {
                Bar { kind: BarKind::Memory32 { prefetchable }, size: 1 << log2 }
            };
            let mut space = ConfigSpace::new();
            install_bars(&mut space, BAR0, 6, &[None, None, Some(bar)]).expect("valid BAR");
            let found = size_bar_array(&mut space, BAR0, 6).expect("sizable");
            prop_assert_eq!(found[2].map(|b| b.bar), Some(bar));
        }
    }
}
