//! DMA buffers in host RAM: page-aligned ranges handed to drivers, as a
//! kernel's DMA allocator hands out bus addresses (no IOMMU: the bus
//! address is the physical address).

use std::ops::Range;

use super::error::HostError;

/// The page size buffers are aligned to.
pub const PAGE: u64 = 4096;

/// A bump allocator over the host's DMA range.
#[derive(Clone, Debug)]
pub struct DmaAllocator {
    range: Range<u64>,
    next: u64,
}

impl DmaAllocator {
    /// Buffers come from `range`.
    pub fn new(range: Range<u64>) -> Self {
        DmaAllocator {
            next: range.start,
            range,
        }
    }

    /// A buffer of `len` bytes aligned to `align` (at least a page).
    pub fn allocate(&mut self, len: u64, align: u64) -> Result<u64, HostError> {
        let align = align.max(PAGE);
        let start = self.next.div_ceil(align) * align;
        let end = start
            .checked_add(len.max(1).div_ceil(PAGE) * PAGE)
            .filter(|&end| end <= self.range.end)
            .ok_or(HostError::OutOfDmaMemory { requested: len })?;
        self.next = end;
        Ok(start)
    }

    /// Bytes handed out so far.
    pub fn used(&self) -> u64 {
        self.next - self.range.start
    }
}
