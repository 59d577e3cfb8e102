//! A function's 4 KiB configuration space with the spec's per-bit write
//! semantics (PCIe Base 6.0 §7.4).
//!
//! Every bit has one of the register attributes of §7.4 that matter to a
//! writer: read-only (RO, and hardware-initialized HwInit, which is read-only
//! to software and set by the function itself), read-write (RW), or
//! write-1-to-clear (RW1C). [`ConfigSpace`] keeps the value beside two masks,
//! `rw` and `rw1c`; a bit in neither is read-only. Software writes go through
//! [`ConfigSpace::write`], which applies the masks and byte enables exactly as
//! a configuration write request does (§2.2.7: First DW Byte Enables).
//! The function's own hardware updates bits through the `set_*` methods,
//! which ignore the masks.

use core::convert::Infallible;

/// Size of a PCI Express function's configuration space in bytes (§7.2.2).
pub const CONFIG_SPACE_SIZE: usize = 4096;

/// Size of the configuration space in DWs: a Configuration Request addresses
/// one of these with its Extended Register Number and Register Number fields
/// (§2.2.7, §7.2.2).
pub const CONFIG_SPACE_DWORDS: usize = CONFIG_SPACE_SIZE / 4;

/// Size of the PCI-compatible part of configuration space (§7.2.1): the
/// header and the (legacy) capability list live below this offset.
pub const PCI_COMPATIBLE_SIZE: u16 = 0x100;

/// Byte enables selecting all four bytes of a DW.
pub const ALL_BYTES: u8 = 0b1111;

/// The byte offsets a [`ConfigSpace`] accepts: 12 bits, as carried by a
/// Configuration Request's Extended Register Number and Register Number
/// fields. Offsets are masked to this range.
const OFFSET_MASK: u16 = 0x0fff;

/// How software sees one bit of a configuration register (§7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitAccess {
    /// Read-only to software: RO, HwInit, or reserved (RsvdP/RsvdZ).
    ReadOnly,
    /// Read-write (RW): a write stores the written value.
    ReadWrite,
    /// Write-1-to-clear (RW1C): writing 1 clears the bit, writing 0 has no effect.
    WriteOneToClear,
}

/// Read access to a function's configuration space, wherever it lives.
///
/// The capability walkers and BAR decoders are written against this trait so
/// the fabric manager can run them on a [`ConfigSpace`] it holds (a virtual
/// port) and on a real endpoint reached through Configuration Requests,
/// whose reads can fail.
pub trait ConfigRead {
    /// Why an access failed (for example a completion with UR status).
    type Error;

    /// Reads the DW containing byte `offset` (the low two bits are ignored).
    fn read_dword(&mut self, offset: u16) -> Result<u32, Self::Error>;

    /// Whether `error` says the function stopped answering: its request
    /// got no completion (PCIe Base 6.0 §2.8). A caller then sends it no
    /// more requests to tidy up, each of which would only wait out another
    /// completion timeout. `false` unless the access can tell.
    fn unanswered(_error: &Self::Error) -> bool {
        false
    }
}

/// Write access to a function's configuration space (a Configuration Write
/// Request: one DW and its First DW Byte Enables, §2.2.7).
pub trait ConfigWrite: ConfigRead {
    /// Writes the bytes of `value` selected by `byte_enables` (bit n selects
    /// byte n, i.e. bits `8n+7..8n`) into the DW containing byte `offset`.
    fn write_dword(&mut self, offset: u16, value: u32, byte_enables: u8)
        -> Result<(), Self::Error>;
}

impl<T: ConfigRead + ?Sized> ConfigRead for &mut T {
    type Error = T::Error;

    fn read_dword(&mut self, offset: u16) -> Result<u32, Self::Error> {
        (**self).read_dword(offset)
    }

    fn unanswered(error: &Self::Error) -> bool {
        T::unanswered(error)
    }
}

impl<T: ConfigWrite + ?Sized> ConfigWrite for &mut T {
    fn write_dword(
        &mut self,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), Self::Error> {
        (**self).write_dword(offset, value, byte_enables)
    }
}

/// Configuration registers held in memory by whoever models the function:
/// reads never fail, and the function's own hardware may set any bit.
///
/// The capability handles' accessors and hardware updates (Slot Status,
/// Link Status, MSI, ACS, bus numbers) are written against this trait, so
/// they run on a full [`ConfigSpace`] and on any more compact storage of
/// the same registers alike.
pub trait ConfigRegisters {
    /// Reads the DW containing byte `offset`, as a Configuration Read does.
    fn read(&self, offset: u16) -> u32;

    /// Sets the DW containing byte `offset` as the function's hardware
    /// would: every bit, whatever its software access.
    fn set_u32(&mut self, offset: u16, value: u32);

    /// Reads the byte at `offset`.
    fn read_u8(&self, offset: u16) -> u8 {
        (self.read(offset) >> ((offset & 3) * 8)) as u8
    }

    /// Reads the 16-bit register at `offset` (bit 0 of the offset is
    /// ignored: 16-bit registers are 2-byte aligned, §7.2).
    fn read_u16(&self, offset: u16) -> u16 {
        (self.read(offset) >> ((offset & 2) * 8)) as u16
    }

    /// Sets a 16-bit register as the function's hardware would (bit 0 of
    /// the offset is ignored).
    fn set_u16(&mut self, offset: u16, value: u16) {
        let shift = u32::from(offset & 2) * 8;
        let mask = 0xffff << shift;
        let current = self.read(offset);
        self.set_u32(offset, (current & !mask) | (u32::from(value) << shift));
    }

    /// Hardware sets bits of the 16-bit register at `offset` (an event
    /// latching into an RW1C status bit, for example).
    fn set_bits_u16(&mut self, offset: u16, bits: u16) {
        let current = self.read_u16(offset);
        self.set_u16(offset, current | bits);
    }
}

/// The DW a software Configuration Write leaves: for each byte selected by
/// `byte_enables`, bits in `rw` take the written value, bits in `rw1c`
/// written as 1 clear, and every other bit keeps its `current` value
/// (§7.4, §2.2.7).
pub const fn software_write(current: u32, value: u32, rw: u32, rw1c: u32, byte_enables: u8) -> u32 {
    let lanes = byte_enable_mask(byte_enables);
    let rw = rw & lanes;
    let rw1c = rw1c & lanes;
    ((current & !rw) | (value & rw)) & !(value & rw1c)
}

/// The configuration space of one function: 4096 bytes of register values
/// and, per bit, whether software may write it (RW), clear it (RW1C), or
/// only read it.
///
/// It is a plain value (three 4 KiB arrays, no allocation): the simulator's
/// endpoint models and the firmware's virtual switch ports own one per
/// function, and the builders in this module fill it in. Offsets are byte
/// offsets; multi-byte registers are little-endian as on the wire (§7.2).
#[derive(Clone, PartialEq, Eq)]
pub struct ConfigSpace {
    value: [u32; CONFIG_SPACE_DWORDS],
    rw: [u32; CONFIG_SPACE_DWORDS],
    rw1c: [u32; CONFIG_SPACE_DWORDS],
}

impl Default for ConfigSpace {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for ConfigSpace {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ConfigSpace")
            .field("vendor_id", &format_args!("{:#06x}", self.read_u16(0)))
            .field("device_id", &format_args!("{:#06x}", self.read_u16(2)))
            .finish_non_exhaustive()
    }
}

/// The index of the DW holding byte `offset`, and the bit shift of that byte.
const fn locate(offset: u16) -> (usize, u32) {
    let offset = offset & OFFSET_MASK;
    ((offset >> 2) as usize, ((offset & 3) as u32) * 8)
}

/// Expands First DW Byte Enables into a bit mask over the DW.
pub const fn byte_enable_mask(byte_enables: u8) -> u32 {
    let mut mask = 0u32;
    let mut lane = 0;
    while lane < 4 {
        if byte_enables & (1 << lane) != 0 {
            mask |= 0xff << (lane * 8);
        }
        lane += 1;
    }
    mask
}

impl ConfigSpace {
    /// An all-zero, all-read-only space: what a function with nothing
    /// implemented returns (a Vendor ID of 0 is not a valid function; the
    /// builders fill the header in).
    pub const fn new() -> Self {
        ConfigSpace {
            value: [0; CONFIG_SPACE_DWORDS],
            rw: [0; CONFIG_SPACE_DWORDS],
            rw1c: [0; CONFIG_SPACE_DWORDS],
        }
    }

    /// Reads the DW containing byte `offset`, as a Configuration Read does.
    pub const fn read(&self, offset: u16) -> u32 {
        self.value[locate(offset).0]
    }

    /// Reads the byte at `offset`.
    pub const fn read_u8(&self, offset: u16) -> u8 {
        let (index, shift) = locate(offset);
        (self.value[index] >> shift) as u8
    }

    /// Reads the 16-bit register at `offset` (bit 0 of the offset is ignored:
    /// 16-bit registers are 2-byte aligned, §7.2).
    pub const fn read_u16(&self, offset: u16) -> u16 {
        let (index, shift) = locate(offset & !1);
        (self.value[index] >> shift) as u16
    }

    /// Reads the 32-bit register at `offset` (same as [`ConfigSpace::read`]).
    pub const fn read_u32(&self, offset: u16) -> u32 {
        self.read(offset)
    }

    /// Applies a software Configuration Write: for each byte selected by
    /// `byte_enables`, RW bits take the written value, RW1C bits written as 1
    /// clear, and every other bit keeps its value (§7.4).
    pub fn write(&mut self, offset: u16, value: u32, byte_enables: u8) {
        let index = locate(offset).0;
        self.value[index] = software_write(
            self.value[index],
            value,
            self.rw[index],
            self.rw1c[index],
            byte_enables,
        );
    }

    /// A software write of one byte.
    pub fn write_u8(&mut self, offset: u16, value: u8) {
        let shift = locate(offset).1;
        self.write(offset, u32::from(value) << shift, 1 << (offset & 3));
    }

    /// A software write of a 16-bit register (bit 0 of the offset is ignored).
    pub fn write_u16(&mut self, offset: u16, value: u16) {
        let offset = offset & !1;
        let shift = locate(offset).1;
        self.write(offset, u32::from(value) << shift, 0b11 << (offset & 3));
    }

    /// A software write of a whole DW.
    pub fn write_u32(&mut self, offset: u16, value: u32) {
        self.write(offset, value, ALL_BYTES);
    }

    /// Sets the DW at `offset` as the function's hardware would: every bit,
    /// whatever its software access.
    pub fn set_u32(&mut self, offset: u16, value: u32) {
        self.value[locate(offset).0] = value;
    }

    /// Sets a 16-bit register as the function's hardware would.
    pub fn set_u16(&mut self, offset: u16, value: u16) {
        self.set_masked(offset & !1, u32::from(value), 0xffff);
    }

    /// Sets a byte as the function's hardware would.
    pub fn set_u8(&mut self, offset: u16, value: u8) {
        self.set_masked(offset, u32::from(value), 0xff);
    }

    /// Hardware sets bits of the 16-bit register at `offset` (an event
    /// latching into an RW1C status bit, for example).
    pub fn set_bits_u16(&mut self, offset: u16, bits: u16) {
        let current = self.read_u16(offset);
        self.set_u16(offset, current | bits);
    }

    /// Hardware clears bits of the 16-bit register at `offset`.
    pub fn clear_bits_u16(&mut self, offset: u16, bits: u16) {
        let current = self.read_u16(offset);
        self.set_u16(offset, current & !bits);
    }

    /// Hardware sets bits of the DW at `offset`.
    pub fn set_bits_u32(&mut self, offset: u16, bits: u32) {
        let current = self.read(offset);
        self.set_u32(offset, current | bits);
    }

    /// Writes `value` into the bits of `mask` (both aligned to the low end of
    /// the register at `offset`), leaving the other bits of the DW alone.
    fn set_masked(&mut self, offset: u16, value: u32, mask: u32) {
        let (index, shift) = locate(offset);
        let mask = mask << shift;
        self.value[index] = (self.value[index] & !mask) | ((value << shift) & mask);
    }

    /// Stores the two masks for the bits selected by `lanes` of one DW.
    fn define_masked(&mut self, offset: u16, lanes: u32, value: u32, rw: u32, rw1c: u32) {
        let (index, shift) = locate(offset);
        let lanes = lanes << shift;
        let rw = (rw << shift) & lanes;
        // A bit cannot be both: RW1C wins, as clearing is the safer reading.
        let rw1c = (rw1c << shift) & lanes;
        let rw = rw & !rw1c;
        self.value[index] = (self.value[index] & !lanes) | ((value << shift) & lanes);
        self.rw[index] = (self.rw[index] & !lanes) | rw;
        self.rw1c[index] = (self.rw1c[index] & !lanes) | rw1c;
    }

    /// Defines a byte register: its initial value and which bits software
    /// may write (`rw`) or clear (`rw1c`). All other bits are read-only.
    pub fn define_u8(&mut self, offset: u16, value: u8, rw: u8, rw1c: u8) {
        self.define_masked(offset, 0xff, value.into(), rw.into(), rw1c.into());
    }

    /// Defines a 16-bit register (see [`ConfigSpace::define_u8`]).
    pub fn define_u16(&mut self, offset: u16, value: u16, rw: u16, rw1c: u16) {
        self.define_masked(offset & !1, 0xffff, value.into(), rw.into(), rw1c.into());
    }

    /// Defines a 32-bit register (see [`ConfigSpace::define_u8`]).
    pub fn define_u32(&mut self, offset: u16, value: u32, rw: u32, rw1c: u32) {
        self.define_masked(offset, u32::MAX, value, rw, rw1c);
    }

    /// The RW mask of the DW at `offset`: the bits a write stores.
    pub const fn rw_mask(&self, offset: u16) -> u32 {
        self.rw[locate(offset).0]
    }

    /// The RW1C mask of the DW at `offset`: the bits a written 1 clears.
    pub const fn rw1c_mask(&self, offset: u16) -> u32 {
        self.rw1c[locate(offset).0]
    }

    /// How software sees bit `bit` (0..=31) of the DW at `offset`.
    pub const fn bit_access(&self, offset: u16, bit: u8) -> BitAccess {
        let index = locate(offset).0;
        let mask = 1u32 << (bit & 31);
        if self.rw1c[index] & mask != 0 {
            BitAccess::WriteOneToClear
        } else if self.rw[index] & mask != 0 {
            BitAccess::ReadWrite
        } else {
            BitAccess::ReadOnly
        }
    }

    /// The whole space as bytes in wire order (for dumps and golden tests).
    pub fn to_bytes(&self) -> [u8; CONFIG_SPACE_SIZE] {
        let mut bytes = [0u8; CONFIG_SPACE_SIZE];
        for (chunk, dword) in bytes.chunks_exact_mut(4).zip(self.value.iter()) {
            chunk.copy_from_slice(&dword.to_le_bytes());
        }
        bytes
    }
}

/// The inherent accessors of [`ConfigSpace`] behind the shared interface.
impl ConfigRegisters for ConfigSpace {
    fn read(&self, offset: u16) -> u32 {
        ConfigSpace::read(self, offset)
    }

    fn set_u32(&mut self, offset: u16, value: u32) {
        ConfigSpace::set_u32(self, offset, value);
    }

    fn read_u8(&self, offset: u16) -> u8 {
        ConfigSpace::read_u8(self, offset)
    }

    fn read_u16(&self, offset: u16) -> u16 {
        ConfigSpace::read_u16(self, offset)
    }

    fn set_u16(&mut self, offset: u16, value: u16) {
        ConfigSpace::set_u16(self, offset, value);
    }
}

/// Reading a [`ConfigSpace`] you hold never fails.
impl ConfigRead for ConfigSpace {
    type Error = Infallible;

    fn read_dword(&mut self, offset: u16) -> Result<u32, Infallible> {
        Ok(self.read(offset))
    }
}

/// Writing a [`ConfigSpace`] applies the software write semantics.
impl ConfigWrite for ConfigSpace {
    fn write_dword(&mut self, offset: u16, value: u32, byte_enables: u8) -> Result<(), Infallible> {
        self.write(offset, value, byte_enables);
        Ok(())
    }
}

/// A shared reference reads as well: walking capabilities needs no `&mut`.
impl ConfigRead for &ConfigSpace {
    type Error = Infallible;

    fn read_dword(&mut self, offset: u16) -> Result<u32, Infallible> {
        Ok(self.read(offset))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A DW at 0x40 with one byte of each kind: byte 0 RO, byte 1 RW,
    /// byte 2 RW1C, byte 3 mixed (bits 31:28 RW, bits 27:24 RW1C).
    fn mixed_register() -> ConfigSpace {
        let mut space = ConfigSpace::new();
        space.define_u32(0x40, 0xa5a5_a5a5, 0xf000_ff00, 0x0fff_0000);
        space
    }

    #[test]
    fn read_only_bits_keep_their_value() {
        let mut space = mixed_register();
        space.write_u32(0x40, 0);
        assert_eq!(space.read(0x40) & 0x0000_00ff, 0xa5);
    }

    #[test]
    fn read_write_bits_take_the_written_value() {
        let mut space = mixed_register();
        space.write_u32(0x40, 0x0000_3c00);
        // Byte 1 takes 0x3c; bits 31:28 take 0; byte 2 and bits 27:24 are
        // RW1C and were written 0, so they keep 0xa5 and 0x5.
        assert_eq!(space.read(0x40), 0x05a5_3ca5);
    }

    #[test]
    fn rw1c_bits_clear_only_where_a_one_is_written() {
        let mut space = mixed_register();
        // Write 1s to bits 16, 18 (set: 0xa5 = 1010_0101) and 17 (already clear),
        // and to RW bits 31:28 so they keep 0xa.
        space.write_u32(0x40, 0xa007_a500);
        assert_eq!(space.read(0x40) >> 16 & 0xff, 0xa0);
        assert_eq!(space.read(0x40), 0xa5a0_a5a5);
    }

    #[test]
    fn byte_enables_limit_the_write_to_the_selected_bytes() {
        let mut space = mixed_register();
        // Only byte 3 enabled: bits 31:28 take 0x3, RW1C bits 27:24 written 1 clear.
        space.write(0x40, 0x3fff_ffff, 0b1000);
        assert_eq!(space.read(0x40), 0x30a5_a5a5);
        // Byte 1 is RW but not enabled in the write above: unchanged.
        space.write(0x40, 0x0000_1200, 0b0010);
        assert_eq!(space.read(0x40), 0x30a5_12a5);
    }

    #[test]
    fn narrow_writes_reach_the_right_lanes() {
        let mut space = ConfigSpace::new();
        space.define_u32(0x44, 0, u32::MAX, 0);
        space.write_u8(0x47, 0xab);
        space.write_u16(0x44, 0x1234);
        assert_eq!(space.read(0x44), 0xab00_1234);
        assert_eq!(space.read_u8(0x47), 0xab);
        assert_eq!(space.read_u16(0x46), 0xab00);
    }

    #[test]
    fn hardware_sets_read_only_and_rw1c_bits() {
        let mut space = ConfigSpace::new();
        space.define_u16(0x50, 0, 0, 0x00ff);
        space.set_bits_u16(0x50, 0x0101);
        assert_eq!(space.read_u16(0x50), 0x0101);
        space.write_u16(0x50, 0xffff);
        assert_eq!(space.read_u16(0x50), 0x0100);
        assert_eq!(space.bit_access(0x50, 0), BitAccess::WriteOneToClear);
        assert_eq!(space.bit_access(0x50, 8), BitAccess::ReadOnly);
    }

    #[test]
    fn bytes_come_out_little_endian() {
        let mut space = ConfigSpace::new();
        space.set_u32(0, 0x1234_10ee);
        let bytes = space.to_bytes();
        assert_eq!(&bytes[..4], &[0xee, 0x10, 0x34, 0x12]);
    }

    /// Storage that keeps only the DW at 0x40, as a compact space might.
    struct OneDword(u32);

    impl ConfigRegisters for OneDword {
        fn read(&self, offset: u16) -> u32 {
            if offset & 0x0ffc == 0x40 {
                self.0
            } else {
                0
            }
        }

        fn set_u32(&mut self, offset: u16, value: u32) {
            if offset & 0x0ffc == 0x40 {
                self.0 = value;
            }
        }
    }

    /// Hardware updates through [`ConfigRegisters`] land in the same lanes
    /// on any storage: 16-bit registers in the half `offset` bit 1 selects,
    /// bit 0 ignored (§7.2).
    fn hardware_updates_reach_the_same_lanes<S: ConfigRegisters>(mut space: S) {
        space.set_u16(0x43, 0xbeef);
        space.set_u16(0x40, 0x1234);
        space.set_bits_u16(0x41, 0x8001);
        assert_eq!(space.read(0x42), 0xbeef_9235);
        assert_eq!(space.read_u8(0x43), 0xbe);
        assert_eq!(space.read_u16(0x43), 0xbeef);
        assert_eq!(space.read_u16(0x40), 0x9235);
    }

    #[test]
    fn the_shared_interface_behaves_alike_on_any_storage() {
        hardware_updates_reach_the_same_lanes(ConfigSpace::new());
        hardware_updates_reach_the_same_lanes(OneDword(0));
    }

    proptest! {
        #[test]
        fn random_writes_never_change_read_only_bits(
            initial in any::<u32>(),
            rw in any::<u32>(),
            rw1c in any::<u32>(),
            writes in proptest::collection::vec((any::<u32>(), 0u8..16), 1..16),
        ) {
            let mut space = ConfigSpace::new();
            space.define_u32(0x80, initial, rw, rw1c);
            let read_only = !(rw | rw1c);
            for (value, byte_enables) in writes {
                let before = space.read(0x80);
                space.write(0x80, value, byte_enables);
                let after = space.read(0x80);
                let lanes = byte_enable_mask(byte_enables);
                prop_assert_eq!(after & read_only, initial & read_only);
                // RW1C bits never become set by a software write.
                prop_assert_eq!(after & rw1c & !before, 0);
                // Disabled lanes never change.
                prop_assert_eq!(after & !lanes, before & !lanes);
            }
        }
    }
}
