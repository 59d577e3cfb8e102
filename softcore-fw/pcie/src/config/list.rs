//! Appending capabilities to a configuration space and linking them into
//! the PCI-compatible list (PCIe Base 6.0 §7.5.1.1.11) and the extended list
//! (§7.6.3).

use super::header::{common, status};
use super::space::{ConfigSpace, CONFIG_SPACE_SIZE, PCI_COMPATIBLE_SIZE};
use super::walk::EXTENDED_CAPABILITIES_START;

/// A capability structure that can be laid out on the PCI-compatible list.
pub trait Capability {
    /// Its Capability ID (see [`super::cap_id`]).
    const ID: u8;

    /// Its size in bytes, including the 2-byte header; the list rounds it
    /// up to whole DWs.
    fn size_bytes(&self) -> u16;

    /// Defines the registers after the header (values and write masks),
    /// starting at `offset + 2`. The list writes the ID and Next Pointer.
    fn install(&self, space: &mut ConfigSpace, offset: u16);
}

/// A capability structure that can be laid out on the extended list.
pub trait ExtendedCapability {
    /// Its Extended Capability ID (see [`super::ext_cap_id`]).
    const ID: u16;
    /// Its Capability Version, bits 19:16 of the header.
    const VERSION: u8;

    /// Its size in bytes, including the 4-byte header; rounded up to DWs.
    fn size_bytes(&self) -> u16;

    /// Defines the registers after the header, starting at `offset + 4`.
    /// The list writes the header.
    fn install(&self, space: &mut ConfigSpace, offset: u16);
}

/// Why a capability could not be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapabilityListError {
    /// The space already has capabilities; [`CapabilityList`] builds the
    /// lists from scratch so that it knows where free space starts.
    NotEmpty {
        /// The Capabilities Pointer found.
        capabilities_pointer: u8,
        /// The header found at 0x100.
        extended_header: u32,
    },
    /// The capability does not fit in what is left of its region (0x40..0x100
    /// for the PCI-compatible list, 0x100..0x1000 for the extended list).
    NoRoom {
        /// Bytes the capability needs.
        needed: u16,
        /// Bytes left.
        available: u16,
    },
}

/// Lays capabilities out one after another and links each into its list.
///
/// PCI-compatible capabilities go from 0x40 upwards, extended ones from
/// 0x100 upwards, each DW-aligned; the Capabilities Pointer, the Next
/// Pointers, Next Capability Offsets and the Status register's Capabilities
/// List bit are read-only and set here.
pub struct CapabilityList<'a> {
    space: &'a mut ConfigSpace,
    next_free: u16,
    last_pointer: u16,
    next_free_extended: u16,
    last_extended: Option<u16>,
}

const fn round_up_to_dword(bytes: u16) -> u16 {
    (bytes + 3) & !3
}

impl<'a> CapabilityList<'a> {
    /// Starts both lists in a space that has none yet (a freshly built header).
    pub fn new(space: &'a mut ConfigSpace) -> Result<Self, CapabilityListError> {
        let capabilities_pointer = space.read_u8(common::CAPABILITIES_POINTER);
        let extended_header = space.read(EXTENDED_CAPABILITIES_START);
        if capabilities_pointer != 0 || extended_header != 0 {
            return Err(CapabilityListError::NotEmpty {
                capabilities_pointer,
                extended_header,
            });
        }
        Ok(CapabilityList {
            space,
            next_free: common::HEADER_END,
            last_pointer: common::CAPABILITIES_POINTER,
            next_free_extended: EXTENDED_CAPABILITIES_START,
            last_extended: None,
        })
    }

    /// Appends a PCI-compatible capability; returns its offset.
    pub fn push<C: Capability>(&mut self, capability: &C) -> Result<u16, CapabilityListError> {
        let needed = round_up_to_dword(capability.size_bytes().max(4));
        let available = PCI_COMPATIBLE_SIZE - self.next_free;
        if needed > available {
            return Err(CapabilityListError::NoRoom { needed, available });
        }
        let offset = self.next_free;
        capability.install(self.space, offset);
        self.space.define_u8(offset, C::ID, 0, 0);
        self.space.define_u8(offset + 1, 0, 0, 0);
        self.space.set_u8(self.last_pointer, offset as u8);
        self.space
            .set_bits_u16(common::STATUS, status::CAPABILITIES_LIST);
        self.last_pointer = offset + 1;
        self.next_free += needed;
        Ok(offset)
    }

    /// Appends an extended capability; returns its offset.
    pub fn push_extended<C: ExtendedCapability>(
        &mut self,
        capability: &C,
    ) -> Result<u16, CapabilityListError> {
        let needed = round_up_to_dword(capability.size_bytes().max(4));
        let available = CONFIG_SPACE_SIZE as u16 - self.next_free_extended;
        if needed > available {
            return Err(CapabilityListError::NoRoom { needed, available });
        }
        let offset = self.next_free_extended;
        capability.install(self.space, offset);
        let header = u32::from(C::VERSION & 0xf) << 16 | u32::from(C::ID);
        self.space.define_u32(offset, header, 0, 0);
        if let Some(previous) = self.last_extended {
            let previous_header = self.space.read(previous) & 0x000f_ffff;
            self.space
                .set_u32(previous, previous_header | u32::from(offset) << 20);
        }
        self.last_extended = Some(offset);
        self.next_free_extended += needed;
        Ok(offset)
    }

    /// The space being built, to adjust registers between pushes.
    pub fn space(&mut self) -> &mut ConfigSpace {
        self.space
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::walk::{Capabilities, CapabilityEntry, ExtendedCapabilities};

    struct Blob(u16);

    impl Capability for Blob {
        const ID: u8 = 0x09;
        fn size_bytes(&self) -> u16 {
            self.0
        }
        fn install(&self, space: &mut ConfigSpace, offset: u16) {
            space.define_u8(offset + 2, self.0 as u8, 0, 0);
        }
    }

    impl ExtendedCapability for Blob {
        const ID: u16 = 0x000b;
        const VERSION: u8 = 1;
        fn size_bytes(&self) -> u16 {
            self.0
        }
        fn install(&self, _space: &mut ConfigSpace, _offset: u16) {}
    }

    #[test]
    fn pushes_link_both_lists_in_order() {
        let mut space = ConfigSpace::new();
        let mut list = CapabilityList::new(&mut space).expect("empty space");
        assert_eq!(list.push(&Blob(6)), Ok(0x40));
        assert_eq!(list.push(&Blob(3)), Ok(0x48));
        assert_eq!(list.push_extended(&Blob(8)), Ok(0x100));
        assert_eq!(list.push_extended(&Blob(12)), Ok(0x108));
        // Bytes at spec offsets: pointer, then ID/next pairs, Status bit 4.
        assert_eq!(space.read_u8(0x34), 0x40);
        assert_eq!(space.read_u16(0x40), 0x4809);
        assert_eq!(space.read_u16(0x48), 0x0009);
        assert_eq!(space.read_u16(0x06) & 0x10, 0x10);
        // Extended headers: next 0x108 << 20 | version 1 << 16 | ID 0x000b.
        assert_eq!(space.read(0x100), 0x1081_000b);
        assert_eq!(space.read(0x108), 0x0001_000b);
        let walked: [Option<CapabilityEntry>; 3] = {
            let mut walk = Capabilities::new(&space).strict().map(|e| e.ok());
            [
                walk.next().flatten(),
                walk.next().flatten(),
                walk.next().flatten(),
            ]
        };
        assert_eq!(
            walked,
            [
                Some(CapabilityEntry {
                    offset: 0x40,
                    id: 9
                }),
                Some(CapabilityEntry {
                    offset: 0x48,
                    id: 9
                }),
                None
            ]
        );
        assert_eq!(ExtendedCapabilities::new(&space).strict().count(), 2);
    }

    #[test]
    fn the_regions_are_bounded() {
        let mut space = ConfigSpace::new();
        let mut list = CapabilityList::new(&mut space).expect("empty space");
        assert_eq!(list.push(&Blob(0xb0)), Ok(0x40));
        assert_eq!(
            list.push(&Blob(0x14)),
            Err(CapabilityListError::NoRoom {
                needed: 0x14,
                available: 0x10
            })
        );
        assert_eq!(list.push_extended(&Blob(0xf00)), Ok(0x100));
        assert_eq!(
            list.push_extended(&Blob(8)),
            Err(CapabilityListError::NoRoom {
                needed: 8,
                available: 0
            })
        );
    }

    #[test]
    fn refuses_a_space_with_lists() {
        let mut space = ConfigSpace::new();
        space.set_u8(0x34, 0x40);
        assert!(matches!(
            CapabilityList::new(&mut space),
            Err(CapabilityListError::NotEmpty {
                capabilities_pointer: 0x40,
                ..
            })
        ));
    }
}
