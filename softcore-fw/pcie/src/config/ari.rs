//! The Alternative Routing-ID Interpretation extended capability (PCIe Base
//! 6.0 §7.8.7): links the functions of an ARI device, which may number up to
//! 256 on one bus.

use super::ext_cap_id;
use super::list::ExtendedCapability;
use super::space::ConfigSpace;

/// Size of the structure.
pub const SIZE: u16 = 8;
/// Capability version.
pub const VERSION: u8 = 1;
/// ARI Capability register, 16 bits, RO (§7.8.7.2).
pub const CAPABILITY: u16 = 0x04;
/// ARI Control register, 16 bits (§7.8.7.3).
pub const CONTROL: u16 = 0x06;

/// ARI Capability fields (§7.8.7.2).
pub mod capability {
    /// Bit 0: MFVC Function Groups Capability.
    pub const MFVC_FUNCTION_GROUPS: u16 = 1 << 0;
    /// Bit 1: ACS Function Groups Capability.
    pub const ACS_FUNCTION_GROUPS: u16 = 1 << 1;
    /// Bits 15:8: Next Function Number; 0 ends the chain.
    pub const NEXT_FUNCTION_SHIFT: u32 = 8;
}

/// ARI Control fields (§7.8.7.3).
pub mod control {
    /// Bit 0: MFVC Function Groups Enable.
    pub const MFVC_FUNCTION_GROUPS_ENABLE: u16 = 1 << 0;
    /// Bit 1: ACS Function Groups Enable.
    pub const ACS_FUNCTION_GROUPS_ENABLE: u16 = 1 << 1;
    /// Bits 6:4: Function Group.
    pub const FUNCTION_GROUP_MASK: u16 = 0b111 << 4;
}

/// An ARI capability to lay out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ari {
    /// The next function of the device, or 0 for the last.
    pub next_function: u8,
    /// Capability bits (see [`capability`]).
    pub function_groups: u16,
}

impl ExtendedCapability for Ari {
    const ID: u16 = ext_cap_id::ARI;
    const VERSION: u8 = VERSION;

    fn size_bytes(&self) -> u16 {
        SIZE
    }

    fn install(&self, space: &mut ConfigSpace, offset: u16) {
        let groups = self.function_groups & 0b11;
        let value = groups | u16::from(self.next_function) << capability::NEXT_FUNCTION_SHIFT;
        space.define_u16(offset + CAPABILITY, value, 0, 0);
        let rw = if groups != 0 {
            groups | control::FUNCTION_GROUP_MASK
        } else {
            0
        };
        space.define_u16(offset + CONTROL, 0, rw, 0);
    }
}

/// An ARI capability found in a space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AriCap {
    /// Offset of the capability header.
    pub offset: u16,
}

impl AriCap {
    /// The capability at `offset`.
    pub const fn at(offset: u16) -> Self {
        AriCap { offset }
    }

    /// The next function number in the device's chain (0 = last).
    pub const fn next_function(self, space: &ConfigSpace) -> u8 {
        (space.read_u16(self.offset + CAPABILITY) >> capability::NEXT_FUNCTION_SHIFT) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_function_number_sits_in_bits_15_8() {
        let mut space = ConfigSpace::new();
        Ari {
            next_function: 0x81,
            function_groups: 0,
        }
        .install(&mut space, 0x150);
        assert_eq!(space.read_u16(0x154), 0x8100);
        assert_eq!(AriCap::at(0x150).next_function(&space), 0x81);
        space.write_u16(0x156, 0xffff);
        assert_eq!(
            space.read_u16(0x156),
            0,
            "no function groups: control is RO 0"
        );
    }
}
