//! The MSI capability (PCIe Base 6.0 §7.7.1): 32- or 64-bit message address,
//! optional per-vector masking, and up to 32 vectors.
//!
//! The layout depends on two Message Control bits: 64-bit Address Capable
//! moves Message Data from +0x08 to +0x0C, and Per-Vector Masking Capable
//! adds the Mask and Pending Bits registers after it.

use super::cap_id;
use super::list::Capability;
use super::space::{ConfigRegisters, ConfigSpace};

/// Message Control, 16 bits (§7.7.1.2).
pub const MESSAGE_CONTROL: u16 = 0x02;
/// Message Address (low 32 bits), DW-aligned (§7.7.1.3).
pub const MESSAGE_ADDRESS: u16 = 0x04;
/// Message Upper Address, 64-bit capable functions only (§7.7.1.4).
pub const MESSAGE_UPPER_ADDRESS: u16 = 0x08;

/// Message Control fields (§7.7.1.2).
pub mod message_control {
    /// Bit 0: MSI Enable, RW.
    pub const ENABLE: u16 = 1 << 0;
    /// Bits 3:1: Multiple Message Capable, RO: log2 of the vectors requested.
    pub const MULTIPLE_MESSAGE_CAPABLE_SHIFT: u32 = 1;
    /// Mask of Multiple Message Capable.
    pub const MULTIPLE_MESSAGE_CAPABLE_MASK: u16 = 0b111 << 1;
    /// Bits 6:4: Multiple Message Enable, RW: log2 of the vectors granted.
    pub const MULTIPLE_MESSAGE_ENABLE_SHIFT: u32 = 4;
    /// Mask of Multiple Message Enable.
    pub const MULTIPLE_MESSAGE_ENABLE_MASK: u16 = 0b111 << 4;
    /// Bit 7: 64 Bit Address Capable, RO.
    pub const ADDRESS_64: u16 = 1 << 7;
    /// Bit 8: Per-Vector Masking Capable, RO.
    pub const PER_VECTOR_MASKING: u16 = 1 << 8;
}

/// An MSI capability to lay out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msi {
    /// log2 of the vectors the function requests (0..=5: 1 to 32 vectors).
    pub multiple_message_capable: u8,
    /// Whether the function can send to a 64-bit address.
    pub address_64: bool,
    /// Whether the function implements Mask Bits and Pending Bits.
    pub per_vector_masking: bool,
}

impl Msi {
    /// The offset of Message Data in this layout.
    pub const fn message_data_offset(&self) -> u16 {
        if self.address_64 {
            0x0c
        } else {
            0x08
        }
    }

    const fn vectors_mask(&self) -> u32 {
        let vectors = 1u64
            << if self.multiple_message_capable > 5 {
                5
            } else {
                self.multiple_message_capable
            };
        ((1u64 << vectors) - 1) as u32
    }
}

impl Capability for Msi {
    const ID: u8 = cap_id::MSI;

    /// 0x0C, 0x10, 0x14 or 0x18 bytes (§7.7.1).
    fn size_bytes(&self) -> u16 {
        self.message_data_offset() + if self.per_vector_masking { 0x0c } else { 0x04 }
    }

    fn install(&self, space: &mut ConfigSpace, offset: u16) {
        let mut control = (u16::from(self.multiple_message_capable.min(5))
            << message_control::MULTIPLE_MESSAGE_CAPABLE_SHIFT)
            & message_control::MULTIPLE_MESSAGE_CAPABLE_MASK;
        if self.address_64 {
            control |= message_control::ADDRESS_64;
        }
        if self.per_vector_masking {
            control |= message_control::PER_VECTOR_MASKING;
        }
        let control_rw = message_control::ENABLE | message_control::MULTIPLE_MESSAGE_ENABLE_MASK;
        space.define_u16(offset + MESSAGE_CONTROL, control, control_rw, 0);
        // Address bits 1:0 are reserved: messages are DW-aligned writes.
        space.define_u32(offset + MESSAGE_ADDRESS, 0, !0b11, 0);
        let data = offset + self.message_data_offset();
        if self.address_64 {
            space.define_u32(offset + MESSAGE_UPPER_ADDRESS, 0, u32::MAX, 0);
        }
        space.define_u32(data, 0, 0xffff, 0);
        if self.per_vector_masking {
            // Mask Bits: RW for implemented vectors; Pending Bits: RO.
            space.define_u32(data + 4, 0, self.vectors_mask(), 0);
            space.define_u32(data + 8, 0, 0, 0);
        }
    }
}

/// An MSI write: where the function writes and what, for one vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsiMessage {
    /// The Memory Write's address.
    pub address: u64,
    /// The 16-bit data, written as a DW with the upper half 0.
    pub data: u16,
}

/// An MSI capability found in a space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsiCap {
    /// Offset of the capability header.
    pub offset: u16,
}

impl MsiCap {
    /// The capability at `offset`.
    pub const fn at(offset: u16) -> Self {
        MsiCap { offset }
    }

    fn control(self, space: &impl ConfigRegisters) -> u16 {
        space.read_u16(self.offset + MESSAGE_CONTROL)
    }

    /// MSI Enable.
    pub fn enabled(self, space: &impl ConfigRegisters) -> bool {
        self.control(space) & message_control::ENABLE != 0
    }

    /// How many vectors software granted (Multiple Message Enable, a power
    /// of two up to what the function requested).
    pub fn enabled_vectors(self, space: &impl ConfigRegisters) -> u8 {
        let granted = (self.control(space) & message_control::MULTIPLE_MESSAGE_ENABLE_MASK)
            >> message_control::MULTIPLE_MESSAGE_ENABLE_SHIFT;
        let requested = (self.control(space) & message_control::MULTIPLE_MESSAGE_CAPABLE_MASK)
            >> message_control::MULTIPLE_MESSAGE_CAPABLE_SHIFT;
        // Granting more than requested is undefined (§7.7.1.2); use the lesser.
        1 << granted.min(requested).min(5)
    }

    fn data_offset(self, space: &impl ConfigRegisters) -> u16 {
        if self.control(space) & message_control::ADDRESS_64 != 0 {
            self.offset + 0x0c
        } else {
            self.offset + 0x08
        }
    }

    /// Whether `vector` is masked (always false without per-vector masking).
    pub fn masked(self, space: &impl ConfigRegisters, vector: u8) -> bool {
        if self.control(space) & message_control::PER_VECTOR_MASKING == 0 || vector >= 32 {
            return false;
        }
        space.read(self.data_offset(space) + 4) & (1 << vector) != 0
    }

    /// The message the function sends for `vector`: the programmed address,
    /// and the programmed data with its low log2(enabled vectors) bits
    /// replaced by the vector number (§7.7.1.2, Multiple Message Enable).
    /// `None` if MSI is disabled or the vector was not granted.
    pub fn message(self, space: &impl ConfigRegisters, vector: u8) -> Option<MsiMessage> {
        if !self.enabled(space) {
            return None;
        }
        let vectors = self.enabled_vectors(space);
        if vector >= vectors {
            return None;
        }
        let low = (space.read(self.offset + MESSAGE_ADDRESS) & !0b11) as u64;
        let address = if self.control(space) & message_control::ADDRESS_64 != 0 {
            (space.read(self.offset + MESSAGE_UPPER_ADDRESS) as u64) << 32 | low
        } else {
            low
        };
        let data = space.read_u16(self.data_offset(space));
        let low_bits = vectors as u16 - 1;
        Some(MsiMessage {
            address,
            data: (data & !low_bits) | (vector as u16 & low_bits),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_put_data_and_masks_where_the_spec_does() {
        let cases = [
            (
                Msi {
                    multiple_message_capable: 0,
                    address_64: false,
                    per_vector_masking: false,
                },
                0x0c,
                0x08,
            ),
            (
                Msi {
                    multiple_message_capable: 0,
                    address_64: true,
                    per_vector_masking: false,
                },
                0x10,
                0x0c,
            ),
            (
                Msi {
                    multiple_message_capable: 0,
                    address_64: false,
                    per_vector_masking: true,
                },
                0x14,
                0x08,
            ),
            (
                Msi {
                    multiple_message_capable: 0,
                    address_64: true,
                    per_vector_masking: true,
                },
                0x18,
                0x0c,
            ),
        ];
        for (msi, size, data) in cases {
            assert_eq!((msi.size_bytes(), msi.message_data_offset()), (size, data));
        }
    }

    #[test]
    fn a_64_bit_message_with_four_vectors() {
        let mut space = ConfigSpace::new();
        let msi = Msi {
            multiple_message_capable: 2,
            address_64: true,
            per_vector_masking: true,
        };
        msi.install(&mut space, 0x50);
        // MMC 2 (bits 3:1 = 010b), 64-bit (7), PVM (8): 0x0184.
        assert_eq!(space.read_u16(0x52), 0x0184);
        let cap = MsiCap::at(0x50);
        assert_eq!(cap.message(&space, 0), None, "disabled");
        space.write_u32(0x54, 0xfee0_100f);
        space.write_u32(0x58, 0x0000_0001);
        space.write_u32(0x5c, 0xffff_4563);
        // Enable with MME 2 (4 vectors): bits 6:4 = 010b, enable bit 0.
        space.write_u16(0x52, 0x0021);
        assert_eq!(space.read(0x54), 0xfee0_100c, "address bits 1:0 are RO 0");
        assert_eq!(space.read(0x5c), 0x0000_4563, "upper data bits are RO 0");
        assert_eq!(
            cap.message(&space, 2),
            Some(MsiMessage {
                address: 0x1_fee0_100c,
                data: 0x4562
            })
        );
        assert_eq!(cap.message(&space, 4), None, "only 4 vectors granted");
        // Mask Bits: only the 4 implemented vectors are RW.
        space.write_u32(0x60, 0xffff_ffff);
        assert_eq!(space.read(0x60), 0x0000_000f);
        assert!(cap.masked(&space, 3));
    }

    #[test]
    fn a_32_bit_single_vector_message() {
        let mut space = ConfigSpace::new();
        Msi {
            multiple_message_capable: 0,
            address_64: false,
            per_vector_masking: false,
        }
        .install(&mut space, 0x50);
        space.write_u32(0x54, 0xfee0_0000);
        space.write_u16(0x58, 0x0041);
        space.write_u16(0x52, 0x0071);
        let cap = MsiCap::at(0x50);
        assert_eq!(cap.enabled_vectors(&space), 1, "MME above MMC is clamped");
        assert_eq!(
            cap.message(&space, 0),
            Some(MsiMessage {
                address: 0xfee0_0000,
                data: 0x0041
            })
        );
    }
}
