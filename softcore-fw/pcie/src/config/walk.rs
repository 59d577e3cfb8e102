//! Walking the capability lists of a configuration space: the PCI-compatible
//! list from the Capabilities Pointer (PCIe Base 6.0 §7.5.1.1.11) and the
//! extended list from offset 0x100 (§7.6.3).
//!
//! The walkers read devices weft does not control, so a malformed list is an
//! error, never a hang or a panic: a pointer into the header, a pointer
//! outside extended space, and a pointer back to a capability already seen
//! all end the walk with a [`WalkError`] that names the offending pointer.
//! Visited capabilities are tracked in a 1024-bit set (one bit per DW), so
//! loops are detected exactly and with no allocation.

use super::header::{common, status};
use super::space::{ConfigRead, CONFIG_SPACE_DWORDS, PCI_COMPATIBLE_SIZE};

/// Offset of the first extended capability header (§7.6.3).
pub const EXTENDED_CAPABILITIES_START: u16 = PCI_COMPATIBLE_SIZE;

/// What to do with a pointer whose low two bits are set.
///
/// The spec reserves those bits and tells software to mask them off
/// (§7.5.1.1.11, §7.6.3), which is what an operating system does and what
/// [`PointerRule::MaskReservedBits`] does. [`PointerRule::Strict`] reports
/// them instead: a function weft builds or models must never set them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointerRule {
    /// Ignore the reserved low bits, as the spec tells software to.
    MaskReservedBits,
    /// Report a pointer with its low bits set as [`WalkError::Misaligned`].
    Strict,
}

/// Why a capability walk stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkError<E> {
    /// The configuration read itself failed.
    Access(E),
    /// A PCI-compatible capability pointer below 0x40, inside the header.
    PointerIntoHeader {
        /// Offset of the register holding the pointer.
        from: u16,
        /// The pointer value.
        pointer: u16,
    },
    /// An extended capability pointer below 0x100, outside extended space.
    PointerOutsideExtendedSpace {
        /// Offset of the header holding the pointer.
        from: u16,
        /// The pointer value.
        pointer: u16,
    },
    /// A pointer with its reserved low two bits set (only under [`PointerRule::Strict`]).
    Misaligned {
        /// Offset of the register holding the pointer.
        from: u16,
        /// The pointer value.
        pointer: u16,
    },
    /// A pointer to a capability already visited: the list loops.
    Loop {
        /// Offset of the register holding the pointer.
        from: u16,
        /// The pointer value.
        pointer: u16,
    },
}

impl<E> From<E> for WalkError<E> {
    fn from(error: E) -> Self {
        WalkError::Access(error)
    }
}

/// A capability found on the PCI-compatible list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapabilityEntry {
    /// Offset of the capability's header.
    pub offset: u16,
    /// Its Capability ID (see [`super::cap_id`]).
    pub id: u8,
}

/// A capability found on the extended list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtendedCapabilityEntry {
    /// Offset of the capability's header.
    pub offset: u16,
    /// Its Extended Capability ID (see [`super::ext_cap_id`]).
    pub id: u16,
    /// Its Capability Version, bits 19:16 of the header.
    pub version: u8,
}

/// One bit per DW of configuration space.
#[derive(Clone)]
struct Visited([u32; CONFIG_SPACE_DWORDS / 32]);

impl Visited {
    const fn new() -> Self {
        Visited([0; CONFIG_SPACE_DWORDS / 32])
    }

    /// Marks the DW at `offset`; false if it was already marked.
    fn insert(&mut self, offset: u16) -> bool {
        let dword = usize::from(offset >> 2) % CONFIG_SPACE_DWORDS;
        let (word, bit) = (dword / 32, 1u32 << (dword % 32));
        let fresh = self.0[word] & bit == 0;
        self.0[word] |= bit;
        fresh
    }
}

/// Applies the pointer rule and the common checks to a pointer read from `from`.
fn follow<E>(
    rule: PointerRule,
    visited: &mut Visited,
    from: u16,
    pointer: u16,
    lowest: u16,
) -> Result<u16, WalkError<E>> {
    let pointer = match rule {
        PointerRule::Strict if pointer & 3 != 0 => {
            return Err(WalkError::Misaligned { from, pointer })
        }
        _ => pointer & !3,
    };
    if pointer < lowest {
        return Err(if lowest == EXTENDED_CAPABILITIES_START {
            WalkError::PointerOutsideExtendedSpace { from, pointer }
        } else {
            WalkError::PointerIntoHeader { from, pointer }
        });
    }
    if !visited.insert(pointer) {
        return Err(WalkError::Loop { from, pointer });
    }
    Ok(pointer)
}

/// Iterates over the PCI-compatible capability list (§7.5.1.1.11).
///
/// Yields each capability, then ends; on a malformed list it yields one
/// `Err` and then ends. A function whose Status register has Capabilities
/// List clear has no list (§7.5.1.1.4).
pub struct Capabilities<R: ConfigRead> {
    reader: R,
    rule: PointerRule,
    visited: Visited,
    /// Offset of the byte holding the next pointer; `None` once finished.
    pointer_at: Option<u16>,
    started: bool,
}

impl<R: ConfigRead> Capabilities<R> {
    /// The reader being walked, to read a capability's registers between
    /// steps of the walk.
    pub fn reader_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// Walks the list of the function `reader` reads, masking the reserved
    /// pointer bits as the spec tells software to.
    pub fn new(reader: R) -> Self {
        Capabilities {
            reader,
            rule: PointerRule::MaskReservedBits,
            visited: Visited::new(),
            pointer_at: Some(common::CAPABILITIES_POINTER),
            started: false,
        }
    }

    /// The same walk, reporting pointers with reserved bits set as errors.
    pub fn strict(mut self) -> Self {
        self.rule = PointerRule::Strict;
        self
    }

    fn step(&mut self, from: u16) -> Result<Option<CapabilityEntry>, WalkError<R::Error>> {
        if !self.started {
            self.started = true;
            let status_dword = self.reader.read_dword(common::STATUS)?;
            if (status_dword >> 16) as u16 & status::CAPABILITIES_LIST == 0 {
                return Ok(None);
            }
        }
        let pointer = (self.reader.read_dword(from)? >> ((from & 3) * 8)) as u8;
        if pointer == 0 {
            return Ok(None);
        }
        let offset = follow(
            self.rule,
            &mut self.visited,
            from,
            pointer.into(),
            common::HEADER_END,
        )?;
        let id = self.reader.read_dword(offset)? as u8;
        self.pointer_at = Some(offset + 1);
        Ok(Some(CapabilityEntry { offset, id }))
    }
}

impl<R: ConfigRead> Iterator for Capabilities<R> {
    type Item = Result<CapabilityEntry, WalkError<R::Error>>;

    fn next(&mut self) -> Option<Self::Item> {
        let from = self.pointer_at.take()?;
        self.step(from).transpose()
    }
}

/// Iterates over the extended capability list from 0x100 (§7.6.3).
///
/// An all-zero header at 0x100 means the list is empty (§7.6.3). Like
/// [`Capabilities`], a malformed list yields one `Err` and ends.
pub struct ExtendedCapabilities<R: ConfigRead> {
    reader: R,
    rule: PointerRule,
    visited: Visited,
    /// Where the next header is, and the header that pointed there.
    next: Option<(u16, u16)>,
}

impl<R: ConfigRead> ExtendedCapabilities<R> {
    /// The reader being walked, to read a capability's registers between
    /// steps of the walk.
    pub fn reader_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// Walks the extended list of the function `reader` reads, masking the
    /// reserved pointer bits as the spec tells software to.
    pub fn new(reader: R) -> Self {
        ExtendedCapabilities {
            reader,
            rule: PointerRule::MaskReservedBits,
            visited: Visited::new(),
            next: Some((EXTENDED_CAPABILITIES_START, EXTENDED_CAPABILITIES_START)),
        }
    }

    /// The same walk, reporting pointers with reserved bits set as errors.
    pub fn strict(mut self) -> Self {
        self.rule = PointerRule::Strict;
        self
    }

    fn step(
        &mut self,
        pointer: u16,
        from: u16,
    ) -> Result<Option<ExtendedCapabilityEntry>, WalkError<R::Error>> {
        let offset = follow(
            self.rule,
            &mut self.visited,
            from,
            pointer,
            EXTENDED_CAPABILITIES_START,
        )?;
        let header = self.reader.read_dword(offset)?;
        if offset == EXTENDED_CAPABILITIES_START && header == 0 {
            return Ok(None);
        }
        let next = (header >> 20) as u16;
        if next != 0 {
            self.next = Some((next, offset));
        }
        Ok(Some(ExtendedCapabilityEntry {
            offset,
            id: header as u16,
            version: ((header >> 16) & 0xf) as u8,
        }))
    }
}

impl<R: ConfigRead> Iterator for ExtendedCapabilities<R> {
    type Item = Result<ExtendedCapabilityEntry, WalkError<R::Error>>;

    fn next(&mut self) -> Option<Self::Item> {
        let (pointer, from) = self.next.take()?;
        self.step(pointer, from).transpose()
    }
}

/// The offset of the first capability with ID `id` on the PCI-compatible
/// list, `None` if there is none.
pub fn find_capability<R: ConfigRead>(
    reader: R,
    id: u8,
) -> Result<Option<u16>, WalkError<R::Error>> {
    for entry in Capabilities::new(reader) {
        let entry = entry?;
        if entry.id == id {
            return Ok(Some(entry.offset));
        }
    }
    Ok(None)
}

/// The offset of the first extended capability with ID `id`, `None` if
/// there is none.
pub fn find_extended_capability<R: ConfigRead>(
    reader: R,
    id: u16,
) -> Result<Option<u16>, WalkError<R::Error>> {
    for entry in ExtendedCapabilities::new(reader) {
        let entry = entry?;
        if entry.id == id {
            return Ok(Some(entry.offset));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::space::ConfigSpace;
    use core::convert::Infallible;

    /// A space with Capabilities List set and the given (offset, id, next)
    /// entries, written byte by byte as a device would hold them.
    fn with_list(first: u8, entries: &[(u16, u8, u8)]) -> ConfigSpace {
        let mut space = ConfigSpace::new();
        space.set_u16(0x06, 0x0010);
        space.set_u8(0x34, first);
        for &(offset, id, next) in entries {
            space.set_u8(offset, id);
            space.set_u8(offset + 1, next);
        }
        space
    }

    fn ids(space: &ConfigSpace) -> [Option<Result<CapabilityEntry, WalkError<Infallible>>>; 4] {
        let mut walk = Capabilities::new(space);
        [walk.next(), walk.next(), walk.next(), walk.next()]
    }

    #[test]
    fn walks_a_well_formed_list() {
        let space = with_list(
            0x40,
            &[(0x40, 0x01, 0x50), (0x50, 0x05, 0x70), (0x70, 0x10, 0x00)],
        );
        assert_eq!(
            ids(&space),
            [
                Some(Ok(CapabilityEntry {
                    offset: 0x40,
                    id: 0x01
                })),
                Some(Ok(CapabilityEntry {
                    offset: 0x50,
                    id: 0x05
                })),
                Some(Ok(CapabilityEntry {
                    offset: 0x70,
                    id: 0x10
                })),
                None,
            ]
        );
        assert_eq!(find_capability(&space, 0x10), Ok(Some(0x70)));
        assert_eq!(find_capability(&space, 0x11), Ok(None));
    }

    #[test]
    fn no_list_without_the_status_bit() {
        let mut space = with_list(0x40, &[(0x40, 0x01, 0x00)]);
        space.set_u16(0x06, 0);
        assert_eq!(Capabilities::new(&space).count(), 0);
    }

    #[test]
    fn a_loop_is_reported_once_and_ends_the_walk() {
        let space = with_list(0x40, &[(0x40, 0x01, 0x50), (0x50, 0x05, 0x40)]);
        let mut walk = Capabilities::new(&space);
        assert!(matches!(walk.next(), Some(Ok(_))));
        assert!(matches!(walk.next(), Some(Ok(_))));
        assert_eq!(
            walk.next(),
            Some(Err(WalkError::Loop {
                from: 0x51,
                pointer: 0x40
            }))
        );
        assert_eq!(walk.next(), None);
    }

    #[test]
    fn a_self_loop_from_all_ones_reads_terminates() {
        // A function that is not there reads all ones: pointer 0xff.
        let mut space = ConfigSpace::new();
        for offset in (0..0x100).step_by(4) {
            space.set_u32(offset, u32::MAX);
        }
        let results = Capabilities::new(&space).take(100).count();
        assert_eq!(results, 2, "one capability at 0xfc, then the loop error");
    }

    #[test]
    fn a_pointer_into_the_header_is_refused() {
        let space = with_list(0x40, &[(0x40, 0x01, 0x3c)]);
        let mut walk = Capabilities::new(&space);
        assert!(matches!(walk.next(), Some(Ok(_))));
        assert_eq!(
            walk.next(),
            Some(Err(WalkError::PointerIntoHeader {
                from: 0x41,
                pointer: 0x3c
            }))
        );
        let first = with_list(0x10, &[]);
        assert_eq!(
            find_capability(&first, 1),
            Err(WalkError::PointerIntoHeader {
                from: 0x34,
                pointer: 0x10
            })
        );
    }

    #[test]
    fn misaligned_pointers_are_masked_or_refused() {
        let space = with_list(0x42, &[(0x40, 0x05, 0x00)]);
        assert_eq!(find_capability(&space, 0x05), Ok(Some(0x40)));
        let mut strict = Capabilities::new(&space).strict();
        assert_eq!(
            strict.next(),
            Some(Err(WalkError::Misaligned {
                from: 0x34,
                pointer: 0x42
            }))
        );
        assert_eq!(strict.next(), None);
    }

    fn extended(space: &mut ConfigSpace, offset: u16, id: u16, version: u32, next: u16) {
        space.set_u32(
            offset,
            u32::from(next) << 20 | version << 16 | u32::from(id),
        );
    }

    #[test]
    fn walks_the_extended_list() {
        let mut space = ConfigSpace::new();
        extended(&mut space, 0x100, 0x0001, 2, 0x148);
        extended(&mut space, 0x148, 0x000e, 1, 0x150);
        extended(&mut space, 0x150, 0x0010, 1, 0);
        let mut walk = ExtendedCapabilities::new(&space);
        assert_eq!(
            walk.next(),
            Some(Ok(ExtendedCapabilityEntry {
                offset: 0x100,
                id: 1,
                version: 2
            }))
        );
        assert_eq!(
            walk.next(),
            Some(Ok(ExtendedCapabilityEntry {
                offset: 0x148,
                id: 0xe,
                version: 1
            }))
        );
        assert_eq!(
            walk.next(),
            Some(Ok(ExtendedCapabilityEntry {
                offset: 0x150,
                id: 0x10,
                version: 1
            }))
        );
        assert_eq!(walk.next(), None);
        assert_eq!(find_extended_capability(&space, 0x10), Ok(Some(0x150)));
    }

    #[test]
    fn an_empty_extended_list_yields_nothing() {
        let space = ConfigSpace::new();
        assert_eq!(ExtendedCapabilities::new(&space).count(), 0);
    }

    #[test]
    fn malformed_extended_lists_are_reported() {
        let mut below = ConfigSpace::new();
        extended(&mut below, 0x100, 0x0001, 2, 0x0f0);
        assert_eq!(
            find_extended_capability(&below, 0x10),
            Err(WalkError::PointerOutsideExtendedSpace {
                from: 0x100,
                pointer: 0x0f0
            })
        );

        let mut looping = ConfigSpace::new();
        extended(&mut looping, 0x100, 0x0001, 2, 0x140);
        extended(&mut looping, 0x140, 0x000d, 1, 0x100);
        assert_eq!(
            find_extended_capability(&looping, 0x10),
            Err(WalkError::Loop {
                from: 0x140,
                pointer: 0x100
            })
        );

        let mut misaligned = ConfigSpace::new();
        extended(&mut misaligned, 0x100, 0x0001, 2, 0x142);
        extended(&mut misaligned, 0x140, 0x0010, 1, 0);
        assert_eq!(find_extended_capability(&misaligned, 0x10), Ok(Some(0x140)));
        let mut strict = ExtendedCapabilities::new(&misaligned).strict();
        assert!(matches!(strict.next(), Some(Ok(_))));
        assert_eq!(
            strict.next(),
            Some(Err(WalkError::Misaligned {
                from: 0x100,
                pointer: 0x142
            }))
        );
    }

    #[test]
    fn an_all_ones_extended_space_terminates() {
        let mut space = ConfigSpace::new();
        for offset in (0x100..0x1000).step_by(4) {
            space.set_u32(offset, u32::MAX);
        }
        let results: usize = ExtendedCapabilities::new(&space).take(2000).count();
        assert_eq!(
            results, 3,
            "headers at 0x100 and 0xffc, then the loop error"
        );
    }

    /// A reader whose reads fail past a point, like a device that stops
    /// answering: the error comes back as `Access` and ends the walk.
    struct Failing(ConfigSpace);

    impl ConfigRead for Failing {
        type Error = u16;
        fn read_dword(&mut self, offset: u16) -> Result<u32, u16> {
            if offset >= 0x50 {
                Err(offset)
            } else {
                Ok(self.0.read(offset))
            }
        }
    }

    #[test]
    fn access_errors_end_the_walk() {
        let space = with_list(0x40, &[(0x40, 0x01, 0x50)]);
        let mut walk = Capabilities::new(Failing(space));
        assert!(matches!(walk.next(), Some(Ok(_))));
        assert_eq!(walk.next(), Some(Err(WalkError::Access(0x50))));
        assert_eq!(walk.next(), None);
    }
}
