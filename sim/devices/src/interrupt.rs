//! Message Signalled Interrupts as an endpoint sends them: an MSI from the
//! MSI capability (PCIe Base 6.0 §7.7.1, §6.1.4) and an MSI-X vector table
//! with its Pending Bit Array living in a BAR (§7.7.2).

use weft_pcie::config::msi::MsiMessage;
use weft_pcie::split::RequestChunk;
use weft_pcie::Bdf;

use crate::packet::{self, Packet};

/// The Memory Write that signals an interrupt: one DW of `data` at
/// `address` (§6.1.4). An MSI's 16-bit data goes in the low half, the upper
/// half zero (§7.7.1.5); an MSI-X message carries all 32 bits (§7.7.2).
pub fn message_write(requester: Bdf, address: u64, data: u32) -> Packet {
    let chunk = RequestChunk {
        address: address & !3,
        len: 4,
        length_dw: 1,
        first_be: 0b1111,
        last_be: 0,
    };
    packet::write_chunk(requester, &chunk, &data.to_le_bytes())
}

/// The MSI write for a message read from the MSI capability.
pub fn msi_write(requester: Bdf, message: MsiMessage) -> Packet {
    message_write(requester, message.address, u32::from(message.data))
}

/// Bytes per MSI-X table entry (§7.7.2).
pub const MSIX_ENTRY_SIZE: u64 = 16;
/// Vector Control bit 0: Mask Bit (§7.7.2.5).
const VECTOR_MASK: u32 = 1;

/// An MSI-X vector table and Pending Bit Array, as the function's BAR holds
/// them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MsixTable {
    /// Per entry: address low, address high, data, vector control.
    entries: Vec<[u32; 4]>,
    pending: Vec<bool>,
}

impl MsixTable {
    /// A table of `entries` vectors, every vector masked as after reset
    /// (§7.7.2.5).
    pub fn new(entries: u16) -> Self {
        MsixTable {
            entries: vec![[0, 0, 0, VECTOR_MASK]; usize::from(entries.max(1))],
            pending: vec![false; usize::from(entries.max(1))],
        }
    }

    /// Bytes the table occupies.
    pub fn table_len(&self) -> u64 {
        self.entries.len() as u64 * MSIX_ENTRY_SIZE
    }

    /// Bytes the Pending Bit Array occupies: whole QWs (§7.7.2.6).
    pub fn pba_len(&self) -> u64 {
        (self.pending.len() as u64).div_ceil(64) * 8
    }

    /// Reads the table DW at byte `offset` (DW-aligned).
    pub fn read_table(&self, offset: u64) -> u32 {
        let entry = (offset / MSIX_ENTRY_SIZE) as usize;
        let word = ((offset % MSIX_ENTRY_SIZE) / 4) as usize;
        self.entries.get(entry).map_or(0, |e| e[word])
    }

    /// Writes the table DW at byte `offset`. A vector unmasked with its
    /// message pending is sent by the next [`MsixTable::take_deliverable`]
    /// (§7.7.2.5).
    pub fn write_table(&mut self, offset: u64, value: u32) {
        let entry = (offset / MSIX_ENTRY_SIZE) as usize;
        let word = ((offset % MSIX_ENTRY_SIZE) / 4) as usize;
        if let Some(slot) = self.entries.get_mut(entry) {
            slot[word] = match word {
                0 => value & !3,
                3 => value & VECTOR_MASK,
                _ => value,
            };
        }
    }

    /// Reads the Pending Bit Array DW at byte `offset`.
    pub fn read_pba(&self, offset: u64) -> u32 {
        let first = (offset / 4 * 32) as usize;
        (0..32).fold(0, |bits, bit| {
            let set = self.pending.get(first + bit).copied().unwrap_or(false);
            bits | (u32::from(set) << bit)
        })
    }

    /// Signals `vector`: the (address, data) to write, or `None` if the
    /// vector is masked (it becomes pending) or does not exist.
    /// `function_masked` is the capability's Function Mask (§7.7.2.2).
    pub fn signal(&mut self, vector: u16, function_masked: bool) -> Option<(u64, u32)> {
        let index = usize::from(vector);
        let entry = *self.entries.get(index)?;
        if function_masked || entry[3] & VECTOR_MASK != 0 {
            self.pending[index] = true;
            return None;
        }
        Some((u64::from(entry[1]) << 32 | u64::from(entry[0]), entry[2]))
    }

    /// The message of `vector` regardless of masking.
    pub fn message(&self, vector: u16) -> Option<(u64, u32)> {
        let entry = self.entries.get(usize::from(vector))?;
        Some((u64::from(entry[1]) << 32 | u64::from(entry[0]), entry[2]))
    }

    /// Vectors pending and now deliverable (their mask clear), cleared as
    /// they are returned; call only while the Function Mask is clear.
    pub fn take_deliverable(&mut self) -> Vec<u16> {
        let mut ready = Vec::new();
        for (index, entry) in self.entries.iter().enumerate() {
            if self.pending[index] && entry[3] & VECTOR_MASK == 0 {
                self.pending[index] = false;
                ready.push(index as u16);
            }
        }
        ready
    }

    /// Back to the reset state: every vector masked, nothing pending.
    pub fn reset(&mut self) {
        let entries = self.entries.len() as u16;
        *self = MsixTable::new(entries);
    }
}
