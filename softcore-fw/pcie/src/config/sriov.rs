//! The Single Root I/O Virtualization extended capability (PCIe Base 6.0
//! §9.3.3): how many Virtual Functions a Physical Function offers, where
//! their routing IDs fall, and their BARs.

use super::bar::{install_bars, validate_bars, Bar, BarError, BarKind, MAX_BARS};
use super::ext_cap_id;
use super::list::ExtendedCapability;
use super::space::ConfigSpace;
use crate::id::Bdf;

/// Size of the structure.
pub const SIZE: u16 = 0x40;
/// Capability version.
pub const VERSION: u8 = 1;
/// SR-IOV Capabilities, 32 bits, RO (§9.3.3.2).
pub const CAPABILITIES: u16 = 0x04;
/// SR-IOV Control, 16 bits (§9.3.3.3).
pub const CONTROL: u16 = 0x08;
/// SR-IOV Status, 16 bits (§9.3.3.4).
pub const STATUS: u16 = 0x0a;
/// InitialVFs, 16 bits, RO (§9.3.3.5).
pub const INITIAL_VFS: u16 = 0x0c;
/// TotalVFs, 16 bits, RO (§9.3.3.6).
pub const TOTAL_VFS: u16 = 0x0e;
/// NumVFs, 16 bits, RW (§9.3.3.7).
pub const NUM_VFS: u16 = 0x10;
/// Function Dependency Link, 8 bits, RO (§9.3.3.8).
pub const FUNCTION_DEPENDENCY_LINK: u16 = 0x12;
/// First VF Offset, 16 bits, RO (§9.3.3.9).
pub const FIRST_VF_OFFSET: u16 = 0x14;
/// VF Stride, 16 bits, RO (§9.3.3.10).
pub const VF_STRIDE: u16 = 0x16;
/// VF Device ID, 16 bits, RO (§9.3.3.11).
pub const VF_DEVICE_ID: u16 = 0x1a;
/// Supported Page Sizes, 32 bits, RO: bit n = 2^(n+12) bytes (§9.3.3.12).
pub const SUPPORTED_PAGE_SIZES: u16 = 0x1c;
/// System Page Size, 32 bits, RW: one bit of Supported Page Sizes (§9.3.3.13).
pub const SYSTEM_PAGE_SIZE: u16 = 0x20;
/// VF BAR0; VF BAR0..5 are consecutive DWs (§9.3.3.14).
pub const VF_BAR0: u16 = 0x24;
/// VF Migration State Array Offset, 32 bits, RO (§9.3.3.15).
pub const VF_MIGRATION_STATE_ARRAY_OFFSET: u16 = 0x3c;

/// SR-IOV Capabilities fields (§9.3.3.2).
pub mod capabilities {
    /// Bit 0: VF Migration Capable.
    pub const VF_MIGRATION_CAPABLE: u32 = 1 << 0;
    /// Bit 1: ARI Capable Hierarchy Preserved.
    pub const ARI_CAPABLE_HIERARCHY_PRESERVED: u32 = 1 << 1;
    /// Bit 2: VF 10-Bit Tag Requester Supported.
    pub const VF_TEN_BIT_TAG_REQUESTER: u32 = 1 << 2;
    /// Bits 31:21: VF Migration Interrupt Message Number.
    pub const MIGRATION_INTERRUPT_MESSAGE_SHIFT: u32 = 21;
}

/// SR-IOV Control fields (§9.3.3.3).
pub mod control {
    /// Bit 0: VF Enable.
    pub const VF_ENABLE: u16 = 1 << 0;
    /// Bit 1: VF Migration Enable.
    pub const VF_MIGRATION_ENABLE: u16 = 1 << 1;
    /// Bit 2: VF Migration Interrupt Enable.
    pub const VF_MIGRATION_INTERRUPT_ENABLE: u16 = 1 << 2;
    /// Bit 3: VF MSE (Memory Space Enable for every VF's BARs).
    pub const VF_MEMORY_SPACE_ENABLE: u16 = 1 << 3;
    /// Bit 4: ARI Capable Hierarchy: the PF may place VFs at function
    /// numbers above 7 (lowest-numbered PF only).
    pub const ARI_CAPABLE_HIERARCHY: u16 = 1 << 4;
    /// Bit 5: VF 10-Bit Tag Requester Enable.
    pub const VF_TEN_BIT_TAG_REQUESTER_ENABLE: u16 = 1 << 5;
}

/// SR-IOV Status fields (§9.3.3.4).
pub mod status {
    /// Bit 0: VF Migration Status, RW1C.
    pub const VF_MIGRATION: u16 = 1 << 0;
}

/// The page sizes Supported Page Sizes must include: 4 KiB, 8 KiB, 64 KiB,
/// 256 KiB, 1 MiB and 4 MiB (bits 0, 1, 4, 6, 8, 10, §9.3.3.12).
pub const REQUIRED_PAGE_SIZES: u32 = 0x0000_0553;

/// Why an SR-IOV capability or a VF request is invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SriovError {
    /// A VF BAR layout error.
    Bar(BarError),
    /// VF BARs map memory only (§9.3.3.14).
    IoVfBar {
        /// The VF BAR slot.
        slot: u8,
    },
    /// InitialVFs above TotalVFs.
    InitialAboveTotal {
        /// InitialVFs.
        initial: u16,
        /// TotalVFs.
        total: u16,
    },
    /// VF Stride 0 with more than one VF would give every VF the same ID.
    ZeroStride,
    /// VF numbers run from 1 to NumVFs.
    NoSuchVf {
        /// The VF number asked for.
        vf: u16,
        /// NumVFs.
        num_vfs: u16,
    },
    /// The VF's routing ID would pass 0xFFFF: the spec adds ignoring the
    /// carry, which would put the VF on a bus below its PF, something
    /// chapter 9 does not allow.
    RoutingIdOverflow {
        /// The VF number.
        vf: u16,
    },
    /// NumVFs may change only while VF Enable is clear (§9.3.3.7).
    NumVfsWhileEnabled,
    /// NumVFs above TotalVFs (§9.3.3.7).
    NumVfsAboveTotal {
        /// The value asked for.
        requested: u16,
        /// TotalVFs.
        total: u16,
    },
}

impl From<BarError> for SriovError {
    fn from(error: BarError) -> Self {
        SriovError::Bar(error)
    }
}

/// The routing ID of VF `vf` (1-based) of a PF: PF RID + First VF Offset +
/// (vf - 1) * VF Stride (§9.3.3.9, §9.3.3.10).
pub const fn vf_routing_id(
    pf: Bdf,
    first_vf_offset: u16,
    vf_stride: u16,
    vf: u16,
) -> Result<Bdf, SriovError> {
    if vf == 0 {
        return Err(SriovError::NoSuchVf { vf, num_vfs: 0 });
    }
    let id = pf.0 as u32 + first_vf_offset as u32 + (vf as u32 - 1) * vf_stride as u32;
    if id > 0xffff {
        return Err(SriovError::RoutingIdOverflow { vf });
    }
    Ok(Bdf(id as u16))
}

/// An SR-IOV capability to lay out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SrIov {
    /// SR-IOV Capabilities bits (see [`capabilities`]).
    pub capabilities: u32,
    /// InitialVFs.
    pub initial_vfs: u16,
    /// TotalVFs.
    pub total_vfs: u16,
    /// Function Dependency Link: the PF's own function number unless it
    /// depends on another PF.
    pub function_dependency_link: u8,
    /// First VF Offset (for the NumVFs and ARI setting the device starts with).
    pub first_vf_offset: u16,
    /// VF Stride.
    pub vf_stride: u16,
    /// VF Device ID.
    pub vf_device_id: u16,
    /// Supported Page Sizes; must include [`REQUIRED_PAGE_SIZES`].
    pub supported_page_sizes: u32,
    /// Each VF's BARs; sizes are per VF.
    pub vf_bars: [Option<Bar>; MAX_BARS],
    /// VF Migration State Array Offset (BIR in bits 2:0), 0 if none.
    pub migration_state_array: u32,
}

impl SrIov {
    /// Checks the rules [`ExtendedCapability::install`] cannot report.
    pub fn validate(&self) -> Result<(), SriovError> {
        validate_bars(MAX_BARS as u8, &self.vf_bars)?;
        for (slot, bar) in self.vf_bars.iter().enumerate() {
            if let Some(Bar {
                kind: BarKind::Io, ..
            }) = bar
            {
                return Err(SriovError::IoVfBar { slot: slot as u8 });
            }
        }
        if self.initial_vfs > self.total_vfs {
            return Err(SriovError::InitialAboveTotal {
                initial: self.initial_vfs,
                total: self.total_vfs,
            });
        }
        if self.vf_stride == 0 && self.total_vfs > 1 {
            return Err(SriovError::ZeroStride);
        }
        Ok(())
    }
}

impl ExtendedCapability for SrIov {
    const ID: u16 = ext_cap_id::SRIOV;
    const VERSION: u8 = VERSION;

    fn size_bytes(&self) -> u16 {
        SIZE
    }

    /// Lays the structure out. Call [`SrIov::validate`] first: an invalid
    /// VF BAR layout leaves every VF BAR read-only zero.
    fn install(&self, space: &mut ConfigSpace, offset: u16) {
        space.define_u32(offset + CAPABILITIES, self.capabilities, 0, 0);
        let migration = self.capabilities & capabilities::VF_MIGRATION_CAPABLE != 0;
        let mut control_rw =
            control::VF_ENABLE | control::VF_MEMORY_SPACE_ENABLE | control::ARI_CAPABLE_HIERARCHY;
        if migration {
            control_rw |= control::VF_MIGRATION_ENABLE | control::VF_MIGRATION_INTERRUPT_ENABLE;
        }
        if self.capabilities & capabilities::VF_TEN_BIT_TAG_REQUESTER != 0 {
            control_rw |= control::VF_TEN_BIT_TAG_REQUESTER_ENABLE;
        }
        space.define_u16(offset + CONTROL, 0, control_rw, 0);
        space.define_u16(
            offset + STATUS,
            0,
            0,
            if migration { status::VF_MIGRATION } else { 0 },
        );
        space.define_u16(offset + INITIAL_VFS, self.initial_vfs, 0, 0);
        space.define_u16(offset + TOTAL_VFS, self.total_vfs, 0, 0);
        space.define_u16(offset + NUM_VFS, 0, 0xffff, 0);
        space.define_u16(
            offset + FUNCTION_DEPENDENCY_LINK,
            u16::from(self.function_dependency_link),
            0,
            0,
        );
        space.define_u16(offset + FIRST_VF_OFFSET, self.first_vf_offset, 0, 0);
        space.define_u16(offset + VF_STRIDE, self.vf_stride, 0, 0);
        space.define_u16(offset + 0x18, 0, 0, 0);
        space.define_u16(offset + VF_DEVICE_ID, self.vf_device_id, 0, 0);
        space.define_u32(
            offset + SUPPORTED_PAGE_SIZES,
            self.supported_page_sizes,
            0,
            0,
        );
        // System Page Size defaults to 4 KiB (bit 0); only supported sizes
        // can be selected.
        space.define_u32(offset + SYSTEM_PAGE_SIZE, 1, self.supported_page_sizes, 0);
        if install_bars(space, offset + VF_BAR0, MAX_BARS as u8, &self.vf_bars).is_err() {
            for slot in 0..MAX_BARS as u16 {
                space.define_u32(offset + VF_BAR0 + 4 * slot, 0, 0, 0);
            }
        }
        space.define_u32(
            offset + VF_MIGRATION_STATE_ARRAY_OFFSET,
            self.migration_state_array,
            0,
            0,
        );
    }
}

/// An SR-IOV capability found in a space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SriovCap {
    /// Offset of the capability header.
    pub offset: u16,
}

impl SriovCap {
    /// The capability at `offset`.
    pub const fn at(offset: u16) -> Self {
        SriovCap { offset }
    }

    /// Offset of VF BAR0, for sizing the VF BARs like header BARs.
    pub const fn vf_bar0(self) -> u16 {
        self.offset + VF_BAR0
    }

    /// TotalVFs.
    pub const fn total_vfs(self, space: &ConfigSpace) -> u16 {
        space.read_u16(self.offset + TOTAL_VFS)
    }

    /// InitialVFs.
    pub const fn initial_vfs(self, space: &ConfigSpace) -> u16 {
        space.read_u16(self.offset + INITIAL_VFS)
    }

    /// NumVFs as software set it.
    pub const fn num_vfs(self, space: &ConfigSpace) -> u16 {
        space.read_u16(self.offset + NUM_VFS)
    }

    /// VF Enable.
    pub const fn vf_enabled(self, space: &ConfigSpace) -> bool {
        space.read_u16(self.offset + CONTROL) & control::VF_ENABLE != 0
    }

    /// First VF Offset.
    pub const fn first_vf_offset(self, space: &ConfigSpace) -> u16 {
        space.read_u16(self.offset + FIRST_VF_OFFSET)
    }

    /// VF Stride.
    pub const fn vf_stride(self, space: &ConfigSpace) -> u16 {
        space.read_u16(self.offset + VF_STRIDE)
    }

    /// VF Device ID.
    pub const fn vf_device_id(self, space: &ConfigSpace) -> u16 {
        space.read_u16(self.offset + VF_DEVICE_ID)
    }

    /// How many VFs exist: NumVFs while VF Enable is set, otherwise none.
    pub const fn active_vfs(self, space: &ConfigSpace) -> u16 {
        if self.vf_enabled(space) {
            self.num_vfs(space)
        } else {
            0
        }
    }

    /// The routing ID of VF `vf` (1..=NumVFs) of the PF at `pf`.
    pub const fn vf_routing_id(
        self,
        space: &ConfigSpace,
        pf: Bdf,
        vf: u16,
    ) -> Result<Bdf, SriovError> {
        let num_vfs = self.num_vfs(space);
        if vf == 0 || vf > num_vfs {
            return Err(SriovError::NoSuchVf { vf, num_vfs });
        }
        vf_routing_id(pf, self.first_vf_offset(space), self.vf_stride(space), vf)
    }

    /// The highest bus number any of the NumVFs VFs uses: the bus range a
    /// bridge above the PF must cover.
    pub const fn last_vf_bus(self, space: &ConfigSpace, pf: Bdf) -> Result<u8, SriovError> {
        let num_vfs = self.num_vfs(space);
        if num_vfs == 0 {
            return Ok(pf.bus());
        }
        match self.vf_routing_id(space, pf, num_vfs) {
            Ok(last) => Ok(last.bus()),
            Err(error) => Err(error),
        }
    }

    /// Software sets NumVFs, keeping the rules of §9.3.3.7: only while VF
    /// Enable is clear and never above TotalVFs.
    pub fn set_num_vfs(self, space: &mut ConfigSpace, num_vfs: u16) -> Result<(), SriovError> {
        if self.vf_enabled(space) {
            return Err(SriovError::NumVfsWhileEnabled);
        }
        let total = self.total_vfs(space);
        if num_vfs > total {
            return Err(SriovError::NumVfsAboveTotal {
                requested: num_vfs,
                total,
            });
        }
        space.write_u16(self.offset + NUM_VFS, num_vfs);
        Ok(())
    }

    /// Applies a configuration write the way a device weft models does.
    ///
    /// The spec leaves a NumVFs write while VF Enable is set, or above
    /// TotalVFs, undefined (§9.3.3.7); weft's device models ignore such a
    /// write and keep the old NumVFs, so a misbehaving driver sees a stable
    /// device. Every other write applies the register masks as usual.
    pub fn device_write(self, space: &mut ConfigSpace, offset: u16, value: u32, byte_enables: u8) {
        let num_vfs_dword = self.offset + NUM_VFS;
        if offset & !3 != num_vfs_dword & !3 {
            space.write(offset, value, byte_enables);
            return;
        }
        let before = self.num_vfs(space);
        space.write(offset, value, byte_enables);
        let after = self.num_vfs(space);
        if after != before && (self.vf_enabled(space) || after > self.total_vfs(space)) {
            space.set_u16(num_vfs_dword, before);
        }
    }

    /// The device recomputes First VF Offset and VF Stride, which may depend
    /// on NumVFs and ARI Capable Hierarchy (§9.3.3.9, §9.3.3.10).
    pub fn set_routing(self, space: &mut ConfigSpace, first_vf_offset: u16, vf_stride: u16) {
        space.set_u16(self.offset + FIRST_VF_OFFSET, first_vf_offset);
        space.set_u16(self.offset + VF_STRIDE, vf_stride);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::bar::size_bar_array;

    fn nvme_pf() -> SrIov {
        let mut vf_bars = [None; MAX_BARS];
        vf_bars[0] = Some(Bar::memory64(16 << 10, false));
        SrIov {
            capabilities: 0,
            initial_vfs: 16,
            total_vfs: 16,
            function_dependency_link: 0,
            first_vf_offset: 0x80,
            vf_stride: 1,
            vf_device_id: 0x0a55,
            supported_page_sizes: REQUIRED_PAGE_SIZES,
            vf_bars,
            migration_state_array: 0,
        }
    }

    fn installed() -> (ConfigSpace, SriovCap) {
        let mut space = ConfigSpace::new();
        let sriov = nvme_pf();
        sriov.validate().expect("valid SR-IOV");
        sriov.install(&mut space, 0x160);
        (space, SriovCap::at(0x160))
    }

    #[test]
    fn vf_routing_ids_follow_offset_and_stride() {
        // PF 03:00.0 = 0x0300; VF n = 0x0300 + 0x80 + (n - 1) * 1.
        let pf = Bdf::new(3, 0, 0);
        assert_eq!(vf_routing_id(pf, 0x80, 1, 1), Ok(Bdf(0x0380)));
        assert_eq!(vf_routing_id(pf, 0x80, 1, 16), Ok(Bdf(0x038f)));
        // Stride 2 from an ARI PF 02:01: VF 3 = 0x0201 + 0x10 + 2 * 2 = 0x0215.
        assert_eq!(
            vf_routing_id(Bdf::new_ari(2, 1), 0x10, 2, 3),
            Ok(Bdf(0x0215))
        );
        // VFs spill onto the next bus: 0x03ff + 1 = 0x0400.
        assert_eq!(vf_routing_id(pf, 0x80, 1, 129).map(|id| id.bus()), Ok(4));
        assert_eq!(
            vf_routing_id(Bdf(0xfff0), 0x20, 1, 1),
            Err(SriovError::RoutingIdOverflow { vf: 1 })
        );
        assert!(matches!(
            vf_routing_id(pf, 0x80, 1, 0),
            Err(SriovError::NoSuchVf { vf: 0, .. })
        ));
    }

    #[test]
    fn vf_ids_are_limited_to_num_vfs() {
        let (mut space, cap) = installed();
        let pf = Bdf::new(3, 0, 0);
        assert_eq!(
            cap.vf_routing_id(&space, pf, 1),
            Err(SriovError::NoSuchVf { vf: 1, num_vfs: 0 })
        );
        cap.set_num_vfs(&mut space, 4).expect("VF Enable clear");
        assert_eq!(cap.vf_routing_id(&space, pf, 4), Ok(Bdf(0x0383)));
        assert_eq!(cap.last_vf_bus(&space, pf), Ok(3));
        assert_eq!(
            cap.vf_routing_id(&space, pf, 5),
            Err(SriovError::NoSuchVf { vf: 5, num_vfs: 4 })
        );
    }

    #[test]
    fn num_vfs_is_locked_while_vfs_are_enabled() {
        let (mut space, cap) = installed();
        assert_eq!(
            cap.set_num_vfs(&mut space, 17),
            Err(SriovError::NumVfsAboveTotal {
                requested: 17,
                total: 16
            })
        );
        cap.set_num_vfs(&mut space, 8).expect("VF Enable clear");
        assert_eq!(cap.active_vfs(&space), 0, "VFs exist only once enabled");
        // VF Enable + VF MSE.
        space.write_u16(0x168, 0x0009);
        assert_eq!(cap.active_vfs(&space), 8);
        assert_eq!(
            cap.set_num_vfs(&mut space, 2),
            Err(SriovError::NumVfsWhileEnabled)
        );
        // A device model ignores the raw write too.
        cap.device_write(&mut space, 0x170, 0x0000_0002, 0b0011);
        assert_eq!(cap.num_vfs(&space), 8);
        // Once disabled, NumVFs takes writes again (but not above TotalVFs).
        space.write_u16(0x168, 0);
        cap.device_write(&mut space, 0x170, 0x0000_0020, 0b0011);
        assert_eq!(cap.num_vfs(&space), 8);
        cap.device_write(&mut space, 0x170, 0x0000_0002, 0b0011);
        assert_eq!(cap.num_vfs(&space), 2);
    }

    #[test]
    fn registers_sit_at_spec_offsets_with_their_access() {
        let (mut space, cap) = installed();
        assert_eq!(space.read_u16(0x160 + 0x0e), 16, "TotalVFs");
        assert_eq!(
            space.read(0x160 + 0x14),
            0x0001_0080,
            "stride 1, offset 0x80"
        );
        assert_eq!(space.read_u16(0x160 + 0x1a), 0x0a55);
        assert_eq!(space.read(0x160 + 0x1c), 0x553);
        assert_eq!(space.read(0x160 + 0x20), 1, "4 KiB system page size");
        space.write_u32(0x160 + 0x0c, 0xffff_ffff);
        assert_eq!(
            space.read(0x160 + 0x0c),
            0x0010_0010,
            "InitialVFs and TotalVFs are RO"
        );
        space.write_u32(0x160 + 0x20, 0x0000_0002);
        assert_eq!(space.read(0x160 + 0x20), 2, "8 KiB is supported");
        space.write_u32(0x160 + 0x20, 0x0000_0004);
        assert_eq!(space.read(0x160 + 0x20), 0, "16 KiB is not");
        // Control: bits 0, 3, 4 RW; migration bits RO without migration.
        space.write_u16(0x168, 0xffff);
        assert_eq!(space.read_u16(0x168), 0x0019);
        let _ = cap;
    }

    #[test]
    fn vf_bars_size_like_header_bars() {
        let (mut space, cap) = installed();
        space.write_u32(cap.vf_bar0(), 0xffff_ffff);
        space.write_u32(cap.vf_bar0() + 4, 0xffff_ffff);
        // 16 KiB 64-bit: low reads 0xffff_c004, high 0xffff_ffff.
        assert_eq!(space.read(cap.vf_bar0()), 0xffff_c004);
        assert_eq!(space.read(cap.vf_bar0() + 4), 0xffff_ffff);
        let found = size_bar_array(&mut space, cap.vf_bar0(), 6).expect("sizable");
        assert_eq!(
            found[0].map(|b| b.bar),
            Some(Bar::memory64(16 << 10, false))
        );
    }

    #[test]
    fn io_vf_bars_are_refused() {
        let mut sriov = nvme_pf();
        sriov.vf_bars[2] = Some(Bar::io(16));
        assert_eq!(sriov.validate(), Err(SriovError::IoVfBar { slot: 2 }));
    }
}
