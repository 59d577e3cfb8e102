//! The MSI-X capability (PCIe Base 6.0 §7.7.2): table size and the BAR and
//! offset of the vector table and Pending Bit Array.

use super::cap_id;
use super::list::Capability;
use super::space::ConfigSpace;

/// Size of the structure.
pub const SIZE: u16 = 12;
/// Message Control, 16 bits (§7.7.2.2).
pub const MESSAGE_CONTROL: u16 = 0x02;
/// Table Offset/Table BIR (§7.7.2.3).
pub const TABLE: u16 = 0x04;
/// PBA Offset/PBA BIR (§7.7.2.4).
pub const PBA: u16 = 0x08;
/// Bytes per MSI-X table entry: address, upper address, data, vector control.
pub const TABLE_ENTRY_SIZE: u32 = 16;

/// Message Control fields (§7.7.2.2).
pub mod message_control {
    /// Bits 10:0: Table Size, RO, encoded as N-1.
    pub const TABLE_SIZE_MASK: u16 = 0x07ff;
    /// Bit 14: Function Mask, RW: masks every vector.
    pub const FUNCTION_MASK: u16 = 1 << 14;
    /// Bit 15: MSI-X Enable, RW.
    pub const ENABLE: u16 = 1 << 15;
}

/// Bits 2:0 of Table and PBA registers: the BAR Indicator Register.
pub const BIR_MASK: u32 = 0b111;

/// Where a structure lives: which BAR, and the offset in it (8-byte aligned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarLocation {
    /// The BAR Indicator: 0..=5 for BAR0..BAR5 (0x10 + 4 * bir).
    pub bir: u8,
    /// Offset from the BAR's base; the low 3 bits are dropped.
    pub offset: u32,
}

impl BarLocation {
    const fn encode(self) -> u32 {
        (self.offset & !BIR_MASK) | (self.bir as u32 & BIR_MASK)
    }

    const fn decode(register: u32) -> Self {
        BarLocation {
            bir: (register & BIR_MASK) as u8,
            offset: register & !BIR_MASK,
        }
    }
}

/// An MSI-X capability to lay out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsiX {
    /// Number of table entries, 1..=2048.
    pub table_entries: u16,
    /// Where the vector table lives.
    pub table: BarLocation,
    /// Where the Pending Bit Array lives.
    pub pending_bits: BarLocation,
}

impl Capability for MsiX {
    const ID: u8 = cap_id::MSIX;

    fn size_bytes(&self) -> u16 {
        SIZE
    }

    fn install(&self, space: &mut ConfigSpace, offset: u16) {
        let table_size = self.table_entries.clamp(1, 2048) - 1;
        let rw = message_control::ENABLE | message_control::FUNCTION_MASK;
        space.define_u16(offset + MESSAGE_CONTROL, table_size, rw, 0);
        space.define_u32(offset + TABLE, self.table.encode(), 0, 0);
        space.define_u32(offset + PBA, self.pending_bits.encode(), 0, 0);
    }
}

/// An MSI-X capability found in a space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsiXCap {
    /// Offset of the capability header.
    pub offset: u16,
}

impl MsiXCap {
    /// The capability at `offset`.
    pub const fn at(offset: u16) -> Self {
        MsiXCap { offset }
    }

    /// Number of table entries (Table Size + 1).
    pub const fn table_entries(self, space: &ConfigSpace) -> u16 {
        (space.read_u16(self.offset + MESSAGE_CONTROL) & message_control::TABLE_SIZE_MASK) + 1
    }

    /// MSI-X Enable.
    pub const fn enabled(self, space: &ConfigSpace) -> bool {
        space.read_u16(self.offset + MESSAGE_CONTROL) & message_control::ENABLE != 0
    }

    /// Function Mask.
    pub const fn function_masked(self, space: &ConfigSpace) -> bool {
        space.read_u16(self.offset + MESSAGE_CONTROL) & message_control::FUNCTION_MASK != 0
    }

    /// Where the vector table is.
    pub const fn table(self, space: &ConfigSpace) -> BarLocation {
        BarLocation::decode(space.read_u32(self.offset + TABLE))
    }

    /// Where the Pending Bit Array is.
    pub const fn pending_bits(self, space: &ConfigSpace) -> BarLocation {
        BarLocation::decode(space.read_u32(self.offset + PBA))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_size_is_n_minus_one_and_locations_round_trip() {
        let mut space = ConfigSpace::new();
        let msix = MsiX {
            table_entries: 64,
            table: BarLocation {
                bir: 0,
                offset: 0x2000,
            },
            pending_bits: BarLocation {
                bir: 4,
                offset: 0x3000,
            },
        };
        msix.install(&mut space, 0x70);
        assert_eq!(space.read_u16(0x72), 63);
        assert_eq!(space.read(0x74), 0x0000_2000);
        assert_eq!(space.read(0x78), 0x0000_3004);
        let cap = MsiXCap::at(0x70);
        assert_eq!(cap.table_entries(&space), 64);
        assert_eq!(
            cap.pending_bits(&space),
            BarLocation {
                bir: 4,
                offset: 0x3000
            }
        );
        space.write_u16(0x72, 0xffff);
        assert_eq!(space.read_u16(0x72), 0xc03f, "enable and mask RW, size RO");
        assert!(cap.enabled(&space) && cap.function_masked(&space));
    }
}
