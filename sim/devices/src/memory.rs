//! Sparse byte-addressed memory: RAM behind a BAR, or a host's memory, that
//! costs nothing until it is written.
//!
//! A GPU's 256 MiB window or a host's 64-bit address space would be too big
//! to allocate up front; pages are allocated on first write and unwritten
//! bytes read as zero.

use std::collections::HashMap;

/// Bytes per allocated page.
const PAGE: u64 = 4096;

/// Memory of `size` bytes (or unbounded), allocated one 4 KiB page at a time.
#[derive(Clone, Debug, Default)]
pub struct SparseMemory {
    pages: HashMap<u64, Box<[u8; PAGE as usize]>>,
    size: Option<u64>,
}

impl SparseMemory {
    /// Memory holding offsets `0..size`; accesses past the end are ignored
    /// (writes) or read as zero.
    pub fn with_size(size: u64) -> Self {
        SparseMemory {
            pages: HashMap::new(),
            size: Some(size),
        }
    }

    /// Memory spanning the whole 64-bit address space (a host's memory).
    pub fn unbounded() -> Self {
        SparseMemory::default()
    }

    /// The size given at creation, `None` if unbounded.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    fn in_range(&self, address: u64) -> bool {
        self.size.is_none_or(|size| address < size)
    }

    /// Copies `data` to `address..`; bytes past the end are dropped.
    pub fn write(&mut self, address: u64, data: &[u8]) {
        for (index, &byte) in data.iter().enumerate() {
            let Some(at) = address.checked_add(index as u64) else {
                return;
            };
            if !self.in_range(at) {
                return;
            }
            let page = self
                .pages
                .entry(at / PAGE)
                .or_insert_with(|| Box::new([0; PAGE as usize]));
            page[(at % PAGE) as usize] = byte;
        }
    }

    /// Fills `out` from `address..`; unwritten bytes and bytes past the
    /// end read as zero.
    pub fn read_into(&self, address: u64, out: &mut [u8]) {
        for (index, slot) in out.iter_mut().enumerate() {
            *slot = address
                .checked_add(index as u64)
                .filter(|&at| self.in_range(at))
                .and_then(|at| {
                    self.pages
                        .get(&(at / PAGE))
                        .map(|p| p[(at % PAGE) as usize])
                })
                .unwrap_or(0);
        }
    }

    /// `len` bytes from `address`.
    pub fn read(&self, address: u64, len: usize) -> Vec<u8> {
        let mut out = vec![0; len];
        self.read_into(address, &mut out);
        out
    }

    /// Copies `len` bytes from `from` to `to` within this memory.
    pub fn copy_within(&mut self, from: u64, to: u64, len: u64) {
        const STEP: u64 = 64 * 1024;
        // Copy in the direction that keeps overlapping ranges intact.
        let steps: Vec<u64> = (0..len.div_ceil(STEP)).map(|i| i * STEP).collect();
        let ordered: Box<dyn Iterator<Item = &u64>> = if to > from {
            Box::new(steps.iter().rev())
        } else {
            Box::new(steps.iter())
        };
        for &done in ordered {
            let n = (len - done).min(STEP) as usize;
            let chunk = self.read(from.wrapping_add(done), n);
            self.write(to.wrapping_add(done), &chunk);
        }
    }

    /// Bytes of pages allocated so far.
    pub fn resident_bytes(&self) -> u64 {
        self.pages.len() as u64 * PAGE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritten_bytes_read_zero_and_writes_cross_pages() {
        let mut memory = SparseMemory::with_size(3 * PAGE);
        memory.write(PAGE - 2, &[1, 2, 3, 4]);
        assert_eq!(memory.read(PAGE - 3, 6), [0, 1, 2, 3, 4, 0]);
        assert_eq!(memory.resident_bytes(), 2 * PAGE);
    }

    #[test]
    fn accesses_past_the_end_are_dropped() {
        let mut memory = SparseMemory::with_size(8);
        memory.write(6, &[9, 9, 9, 9]);
        assert_eq!(memory.read(4, 6), [0, 0, 9, 9, 0, 0]);
    }

    #[test]
    fn overlapping_copies_keep_the_source_bytes() {
        let mut memory = SparseMemory::unbounded();
        let data: Vec<u8> = (0..=255).collect();
        memory.write(0, &data);
        memory.copy_within(0, 16, 256);
        assert_eq!(memory.read(16, 256), data);
    }
}
