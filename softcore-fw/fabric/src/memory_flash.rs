//! A flash region held in memory, behaving as NOR flash does: the
//! simulator's board flash and the flash of host tests.
//!
//! Erased bytes read 0xFF, an erase covers whole erase blocks and a write
//! programs bits from 1 to 0 only (the stored byte becomes the AND of the
//! old and the new), so writing over bytes not erased first leaves
//! different bytes than were written, as on a real part, and a read-back
//! check catches it.

use crate::persist::{Flash, FlashError};

/// A region of `bytes.len()` bytes that erases in blocks of `erase_block`
/// bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryFlash<B> {
    bytes: B,
    erase_block: u32,
    erases: u32,
    writes: u32,
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> MemoryFlash<B> {
    /// The region held in `bytes`, taken as they are (fill them with 0xFF
    /// for an erased part), erasing in blocks of `erase_block` bytes.
    pub fn new(bytes: B, erase_block: u32) -> Self {
        MemoryFlash {
            bytes,
            erase_block,
            erases: 0,
            writes: 0,
        }
    }

    /// What the region holds.
    pub fn contents(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// How many erase calls succeeded.
    pub fn erases(&self) -> u32 {
        self.erases
    }

    /// How many write calls succeeded.
    pub fn writes(&self) -> u32 {
        self.writes
    }

    /// The bytes `offset..offset + len`, if they are inside the region.
    fn range(&self, offset: u32, len: usize) -> Result<core::ops::Range<usize>, FlashError> {
        let start = offset as usize;
        match start.checked_add(len) {
            Some(end) if end <= self.bytes.as_ref().len() => Ok(start..end),
            _ => Err(FlashError::OutOfRange {
                offset,
                len: len as u32,
            }),
        }
    }
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> Flash for MemoryFlash<B> {
    fn size(&self) -> u32 {
        self.bytes.as_ref().len() as u32
    }

    fn read(&mut self, offset: u32, buf: &mut [u8]) -> Result<(), FlashError> {
        let range = self.range(offset, buf.len())?;
        buf.copy_from_slice(&self.bytes.as_ref()[range]);
        Ok(())
    }

    fn erase(&mut self, offset: u32, len: u32) -> Result<(), FlashError> {
        let range = self.range(offset, len as usize)?;
        if !offset.is_multiple_of(self.erase_block) || !len.is_multiple_of(self.erase_block) {
            return Err(FlashError::Unaligned { offset, len });
        }
        self.bytes.as_mut()[range].fill(0xFF);
        self.erases += 1;
        Ok(())
    }

    fn write(&mut self, offset: u32, data: &[u8]) -> Result<(), FlashError> {
        let range = self.range(offset, data.len())?;
        for (stored, byte) in self.bytes.as_mut()[range].iter_mut().zip(data) {
            *stored &= byte;
        }
        self.writes += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_only_clears_bits_and_an_erase_sets_whole_blocks() {
        let mut flash = MemoryFlash::new([0xFFu8; 32], 16);
        flash.write(2, &[0x0F, 0xF0]).expect("inside");
        flash.write(2, &[0xF0, 0xF0]).expect("inside");
        assert_eq!(flash.contents()[2..4], [0x00, 0xF0]);
        assert_eq!(
            flash.erase(8, 16),
            Err(FlashError::Unaligned { offset: 8, len: 16 })
        );
        flash.erase(0, 16).expect("one block");
        assert!(flash.contents().iter().all(|&b| b == 0xFF));
        assert_eq!(
            flash.read(30, &mut [0; 4]),
            Err(FlashError::OutOfRange { offset: 30, len: 4 })
        );
    }
}
