//! The firmware image as an image slot holds it, and what the boot loader
//! hands the image it starts.
//!
//! An image is what `weftctl firmware update` sends and
//! [`firmware_update`](crate::firmware_update) writes into a slot: a
//! header that makes it check itself, then the bytes each memory of the
//! soft core starts with. `cargo xtask firmware` writes one from the
//! firmware's ELF (its `PT_LOAD` segments at their load addresses, as the
//! ELF loader of the instruction-set simulator places them). The boot
//! loader reads a slot's header, hashes the rest as the flash holds it
//! ([`check`]), copies the segments into instruction and data RAM
//! ([`copy`]) and jumps to the entry with a [`Handoff`] in `a1`. A slot
//! that does not check is never started.
//!
//! The header (offsets from the image's start, little-endian):
//!
//! | offset | size | field                                                         |
//! |--------|------|---------------------------------------------------------------|
//! | 0      | 4    | magic, "WFTI"                                                 |
//! | 4      | 2    | version, 1                                                    |
//! | 6      | 2    | segment count, 1 to [`MAX_SEGMENTS`]                          |
//! | 8      | 4    | entry point                                                   |
//! | 12     | 4    | body length: the bytes after the header                       |
//! | 16     | 32   | SHA-256 (FIPS 180-4) of the body                              |
//!
//! The body is the segment table, each entry a load address and a length
//! (4 bytes each), then each segment's bytes, zero-padded to a multiple
//! of 4, in table order. A segment lies in instruction RAM, or in data RAM
//! below the boot loader's part of it (`weft_regs::BOOT_LOADER_RAM_BASE`:
//! the loader's stack must outlive the copy); the entry is in instruction
//! RAM. The header's own digest lets the loader check the good slot too,
//! for which the boot record keeps no digest (only a trial's).

use sha2::{Digest as _, Sha256};
use weft_proto::ImageSlot;
use weft_regs::{BOOT_LOADER_RAM_BASE, DATA_RAM_BASE, INSTRUCTION_RAM_BASE, INSTRUCTION_RAM_SIZE};

use crate::firmware_update::BootKind;
use crate::persist::{Flash, FlashError};

/// The image's magic: "WFTI".
pub const IMAGE_MAGIC: u32 = u32::from_le_bytes(*b"WFTI");
/// The image format's version.
pub const IMAGE_VERSION: u16 = 1;
/// Bytes of the header.
pub const HEADER_LEN: u32 = 48;
/// The most segments an image has: the firmware has two (code; read-only
/// data with the initial values of its statics).
pub const MAX_SEGMENTS: usize = 8;
/// Bytes of a segment table entry.
const ENTRY_LEN: u32 = 8;
/// Bytes read from the flash at a time.
const PIECE: usize = 256;

/// One part of an image: `len` bytes that load at `address`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    /// Where its first byte goes.
    pub address: u32,
    /// Its length in bytes.
    pub len: u32,
}

/// An image whose header and digest checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Image {
    /// Where it starts.
    pub entry: u32,
    /// Its bytes in the slot, header included.
    pub size: u32,
    segments: [Segment; MAX_SEGMENTS],
    count: usize,
}

impl Image {
    /// Its segments, in the order the body holds them.
    pub fn segments(&self) -> &[Segment] {
        &self.segments[..self.count]
    }
}

/// Why a slot holds no image the loader may start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageError {
    /// The flash failed.
    Flash(FlashError),
    /// The slot does not start with an image's magic (an erased slot
    /// reads 0xFFFF_FFFF).
    NoImage {
        /// The first word found.
        magic: u32,
    },
    /// A format version this loader does not read.
    Version {
        /// The version found.
        found: u16,
    },
    /// No segment, or more than [`MAX_SEGMENTS`].
    SegmentCount {
        /// The count found.
        count: u16,
    },
    /// The image is longer than its slot, or than the boot record says.
    Size {
        /// Its size, header included, as its header gives it.
        size: u32,
        /// The most it may be.
        limit: u32,
    },
    /// The body's length is not the segment table's and the segments'.
    BodyLength {
        /// The header's body length.
        header: u32,
        /// What the table adds up to.
        table: u32,
    },
    /// A segment outside the memories an image may load into.
    Placement {
        /// The segment.
        segment: Segment,
    },
    /// The entry point is not in instruction RAM.
    Entry {
        /// The entry point.
        entry: u32,
    },
    /// The body's SHA-256 is not the header's.
    DigestMismatch,
}

impl From<FlashError> for ImageError {
    fn from(error: FlashError) -> Self {
        ImageError::Flash(error)
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// `len` rounded up to whole words.
fn padded(len: u32) -> u32 {
    len.div_ceil(4) * 4
}

/// Whether `segment` lies in instruction RAM, or in data RAM below the
/// boot loader's part of it.
fn placed(segment: Segment) -> bool {
    let inside = |base: u32, end: u32| {
        segment.address >= base
            && segment
                .address
                .checked_add(segment.len)
                .is_some_and(|last| last <= end)
    };
    segment.address.is_multiple_of(4)
        && (inside(
            INSTRUCTION_RAM_BASE,
            INSTRUCTION_RAM_BASE + INSTRUCTION_RAM_SIZE,
        ) || inside(DATA_RAM_BASE, BOOT_LOADER_RAM_BASE))
}

/// Reads and checks the image at the start of `slot`: its header, its
/// segments' placement, its size against `limit` (the slot's size, or a
/// trial's size as the boot record gives it) and its body's SHA-256.
pub fn check<F: Flash + ?Sized>(slot: &mut F, limit: u32) -> Result<Image, ImageError> {
    let mut header = [0u8; HEADER_LEN as usize];
    slot.read(0, &mut header)?;
    let magic = u32_at(&header, 0);
    if magic != IMAGE_MAGIC {
        return Err(ImageError::NoImage { magic });
    }
    let version = u16::from_le_bytes([header[4], header[5]]);
    if version != IMAGE_VERSION {
        return Err(ImageError::Version { found: version });
    }
    let count = u16::from_le_bytes([header[6], header[7]]);
    if count == 0 || usize::from(count) > MAX_SEGMENTS {
        return Err(ImageError::SegmentCount { count });
    }
    let entry = u32_at(&header, 8);
    let body = u32_at(&header, 12);
    let limit = limit.min(slot.size());
    let size = HEADER_LEN.saturating_add(body);
    if size > limit {
        return Err(ImageError::Size { size, limit });
    }
    let mut image = Image {
        entry,
        size,
        segments: [Segment::default(); MAX_SEGMENTS],
        count: usize::from(count),
    };
    let mut table = [0u8; MAX_SEGMENTS * ENTRY_LEN as usize];
    let table = &mut table[..usize::from(count) * ENTRY_LEN as usize];
    slot.read(HEADER_LEN, table)?;
    let mut length = u32::from(count) * ENTRY_LEN;
    for (i, segment) in image.segments[..image.count].iter_mut().enumerate() {
        *segment = Segment {
            address: u32_at(table, 8 * i),
            len: u32_at(table, 8 * i + 4),
        };
        if !placed(*segment) {
            return Err(ImageError::Placement { segment: *segment });
        }
        length = length.saturating_add(padded(segment.len));
    }
    if length != body {
        return Err(ImageError::BodyLength {
            header: body,
            table: length,
        });
    }
    if !(INSTRUCTION_RAM_BASE..INSTRUCTION_RAM_BASE + INSTRUCTION_RAM_SIZE).contains(&entry) {
        return Err(ImageError::Entry { entry });
    }
    let mut hasher = Sha256::new();
    let mut piece = [0u8; PIECE];
    let mut at = HEADER_LEN;
    while at < size {
        let part = &mut piece[..(size - at).min(PIECE as u32) as usize];
        slot.read(at, part)?;
        hasher.update(&*part);
        at += part.len() as u32;
    }
    let digest: [u8; 32] = hasher.finalize().into();
    if digest[..] != header[16..48] {
        return Err(ImageError::DigestMismatch);
    }
    Ok(image)
}

/// Where a loader puts an image: whole words at word-aligned addresses
/// that [`check`] placed in instruction or data RAM.
pub trait ImageMemory {
    /// Stores `word` (little-endian bytes) at `address`.
    fn write_word(&mut self, address: u32, word: u32);
}

/// Copies the segments of `image`, which [`check`] found in `slot`, into
/// `memory`, each padded to whole words with zeros.
pub fn copy<F: Flash + ?Sized, M: ImageMemory + ?Sized>(
    slot: &mut F,
    image: &Image,
    memory: &mut M,
) -> Result<(), FlashError> {
    let mut at = HEADER_LEN + image.count as u32 * ENTRY_LEN;
    let mut piece = [0u8; PIECE];
    for segment in image.segments() {
        let end = at + padded(segment.len);
        let mut address = segment.address;
        while at < end {
            let part = &mut piece[..(end - at).min(PIECE as u32) as usize];
            slot.read(at, part)?;
            for word in part.chunks_exact(4) {
                memory.write_word(address, u32_at(word, 0));
                address += 4;
            }
            at += part.len() as u32;
        }
    }
    Ok(())
}

/// The bytes of an image of `segments` (address and bytes each): its
/// length, to size the buffer [`write()`] fills.
pub fn image_len(segments: &[(u32, &[u8])]) -> usize {
    HEADER_LEN as usize
        + segments
            .iter()
            .map(|(_, bytes)| ENTRY_LEN as usize + padded(bytes.len() as u32) as usize)
            .sum::<usize>()
}

/// Writes the image of `segments` starting at `entry` into `out`, which
/// must be [`image_len`] bytes long; the image as a slot holds it.
///
/// # Panics
/// If `out` is not [`image_len`] bytes, or there are more than
/// [`MAX_SEGMENTS`] segments: a tool's bug, not an input's.
pub fn write(entry: u32, segments: &[(u32, &[u8])], out: &mut [u8]) {
    assert_eq!(out.len(), image_len(segments), "the image's buffer");
    assert!(
        segments.len() <= MAX_SEGMENTS,
        "at most {MAX_SEGMENTS} segments"
    );
    let (header, body) = out.split_at_mut(HEADER_LEN as usize);
    body.fill(0);
    let (table, mut data) = body.split_at_mut(segments.len() * ENTRY_LEN as usize);
    for ((address, bytes), entry) in segments.iter().zip(table.chunks_exact_mut(8)) {
        entry[..4].copy_from_slice(&address.to_le_bytes());
        entry[4..].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        let (this, rest) = data.split_at_mut(padded(bytes.len() as u32) as usize);
        this[..bytes.len()].copy_from_slice(bytes);
        data = rest;
    }
    header.fill(0);
    header[..4].copy_from_slice(&IMAGE_MAGIC.to_le_bytes());
    header[4..6].copy_from_slice(&IMAGE_VERSION.to_le_bytes());
    header[6..8].copy_from_slice(&(segments.len() as u16).to_le_bytes());
    header[8..12].copy_from_slice(&entry.to_le_bytes());
    header[12..16].copy_from_slice(&(body.len() as u32).to_le_bytes());
    header[16..48].copy_from_slice(&Sha256::digest(&*body));
}

/// What the boot loader tells the image it starts, in `a1` (riscv-rt
/// passes it to the entry function as its second argument): the slot the
/// boot record picked and why, and the slot whose image runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handoff {
    /// The slot [`select_boot`](crate::firmware_update::select_boot) picked.
    pub chosen: ImageSlot,
    /// Why.
    pub kind: BootKind,
    /// The slot whose image runs: the chosen one, the other one when the
    /// chosen one did not check, or none (the image the bitstream
    /// carries, already in the RAMs) when neither did.
    pub running: Option<ImageSlot>,
}

/// The handoff word's top half: "WF".
const HANDOFF_MAGIC: u32 = 0x5746_0000;

fn slot_bits(slot: ImageSlot) -> u32 {
    match slot {
        ImageSlot::A => 0,
        ImageSlot::B => 1,
    }
}

fn slot_from(bits: u32) -> Option<ImageSlot> {
    match bits {
        0 => Some(ImageSlot::A),
        1 => Some(ImageSlot::B),
        _ => None,
    }
}

/// The bits of `running` for the bitstream's image.
const BITSTREAM: u32 = 0xF;

impl Handoff {
    /// The word in `a1`: "WF" in bits 31:16, the kind in 11:8 (0 active,
    /// 1 trial, 2 rollback), the chosen slot in 7:4 and the running one in
    /// 3:0 (0 A, 1 B, 0xF the bitstream's image).
    pub fn encode(&self) -> u32 {
        let kind = match self.kind {
            BootKind::Active => 0,
            BootKind::Trial => 1,
            BootKind::Rollback => 2,
        };
        HANDOFF_MAGIC
            | kind << 8
            | slot_bits(self.chosen) << 4
            | self.running.map_or(BITSTREAM, slot_bits)
    }

    /// The handoff in `word`, or `None` if no boot loader left one there
    /// (the image was started directly, as the simulator's boards do).
    pub fn decode(word: u32) -> Option<Self> {
        if word & 0xFFFF_0000 != HANDOFF_MAGIC || word & 0xF000 != 0 {
            return None;
        }
        let kind = match (word >> 8) & 0xF {
            0 => BootKind::Active,
            1 => BootKind::Trial,
            2 => BootKind::Rollback,
            _ => return None,
        };
        let running = match word & 0xF {
            BITSTREAM => None,
            bits => Some(slot_from(bits)?),
        };
        Some(Handoff {
            chosen: slot_from((word >> 4) & 0xF)?,
            kind,
            running,
        })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::memory_flash::MemoryFlash;

    const SLOT: u32 = 64 * 1024;

    fn image_of(entry: u32, segments: &[(u32, &[u8])]) -> Vec<u8> {
        let mut out = vec![0; image_len(segments)];
        write(entry, segments, &mut out);
        out
    }

    fn slot_holding(image: &[u8]) -> MemoryFlash<Vec<u8>> {
        let mut bytes = vec![0xFF; SLOT as usize];
        bytes[..image.len()].copy_from_slice(image);
        MemoryFlash::new(bytes, 4096)
    }

    /// The RAMs as a map of word stores.
    #[derive(Default)]
    struct Words(Vec<(u32, u32)>);

    impl ImageMemory for Words {
        fn write_word(&mut self, address: u32, word: u32) {
            self.0.push((address, word));
        }
    }

    const CODE: [u8; 8] = [0x13, 0, 0, 0, 0x6F, 0, 0, 0];
    const DATA: [u8; 5] = [1, 2, 3, 4, 5];

    #[test]
    fn an_image_checks_and_copies_its_segments_as_words_at_their_addresses() {
        let image = image_of(0, &[(0, &CODE), (DATA_RAM_BASE + 8, &DATA)]);
        // Header, two table entries, 8 bytes of code, 5 bytes padded to 8.
        assert_eq!(image.len(), 48 + 16 + 8 + 8);
        assert_eq!(&image[..4], b"WFTI");
        let mut slot = slot_holding(&image);
        let checked = check(&mut slot, SLOT).expect("a good image");
        assert_eq!(checked.entry, 0);
        assert_eq!(checked.size, image.len() as u32);
        let mut memory = Words::default();
        copy(&mut slot, &checked, &mut memory).expect("the flash reads");
        assert_eq!(
            memory.0,
            [
                (0, 0x13),
                (4, 0x6F),
                (DATA_RAM_BASE + 8, 0x0403_0201),
                (DATA_RAM_BASE + 12, 5)
            ]
        );
    }

    #[test]
    fn a_flipped_bit_anywhere_after_the_header_fails_the_digest() {
        let image = image_of(0, &[(0, &CODE), (DATA_RAM_BASE, &DATA)]);
        for at in [48, 60, 64, image.len() - 1] {
            let mut bad = image.clone();
            bad[at] ^= 0x40;
            let result = check(&mut slot_holding(&bad), SLOT);
            assert!(
                matches!(
                    result,
                    Err(ImageError::DigestMismatch | ImageError::BodyLength { .. })
                ),
                "byte {at}: {result:?}"
            );
        }
        // The last data byte is covered by the digest alone.
        let mut bad = image.clone();
        let last = image.len() - 4;
        bad[last] ^= 1;
        assert_eq!(
            check(&mut slot_holding(&bad), SLOT),
            Err(ImageError::DigestMismatch)
        );
    }

    #[test]
    fn an_erased_slot_or_a_foreign_file_is_no_image() {
        assert_eq!(
            check(&mut slot_holding(&[]), SLOT),
            Err(ImageError::NoImage { magic: u32::MAX })
        );
        // An ELF, as the update sent before images had a header.
        assert_eq!(
            check(&mut slot_holding(b"\x7fELF\x01\x01\x01\0"), SLOT),
            Err(ImageError::NoImage {
                magic: u32::from_le_bytes(*b"\x7fELF")
            })
        );
    }

    #[test]
    fn an_image_longer_than_its_limit_is_refused_before_it_is_hashed() {
        let image = image_of(0, &[(0, &CODE)]);
        let size = image.len() as u32;
        assert_eq!(
            check(&mut slot_holding(&image), size - 1),
            Err(ImageError::Size {
                size,
                limit: size - 1
            })
        );
        assert!(check(&mut slot_holding(&image), size).is_ok());
    }

    #[test]
    fn segments_may_not_reach_the_boot_loader_ram_or_leave_the_memories() {
        let loader_ram = [0u8; 4];
        for address in [
            BOOT_LOADER_RAM_BASE - 2,
            BOOT_LOADER_RAM_BASE,
            INSTRUCTION_RAM_BASE + INSTRUCTION_RAM_SIZE - 2,
            weft_regs::BOOT_ROM_BASE,
            weft_regs::soc::SOC_BASE,
            2,
        ] {
            let image = image_of(0, &[(address, &loader_ram)]);
            assert_eq!(
                check(&mut slot_holding(&image), SLOT),
                Err(ImageError::Placement {
                    segment: Segment { address, len: 4 }
                }),
                "{address:#x}"
            );
        }
        let image = image_of(DATA_RAM_BASE, &[(BOOT_LOADER_RAM_BASE - 4, &loader_ram)]);
        assert_eq!(
            check(&mut slot_holding(&image), SLOT),
            Err(ImageError::Entry {
                entry: DATA_RAM_BASE
            })
        );
    }

    #[test]
    fn the_handoff_round_trips_and_nothing_else_decodes() {
        for chosen in [ImageSlot::A, ImageSlot::B] {
            for kind in [BootKind::Active, BootKind::Trial, BootKind::Rollback] {
                for running in [None, Some(ImageSlot::A), Some(ImageSlot::B)] {
                    let handoff = Handoff {
                        chosen,
                        kind,
                        running,
                    };
                    assert_eq!(Handoff::decode(handoff.encode()), Some(handoff));
                }
            }
        }
        // A hart's reset value, and a trial from slot B that fell back to A.
        assert_eq!(Handoff::decode(0), None);
        assert_eq!(
            Handoff::decode(0x5746_0110).map(|h| h.running),
            Some(Some(ImageSlot::A))
        );
        assert_eq!(Handoff::decode(0x5746_0310), None, "no kind 3");
    }
}
