//! The requester side of a DMA engine: tags for outstanding reads, and
//! reassembling their completions (PCIe Base 6.0 §2.2.6.2, §2.3.1.1).
//!
//! Callers split transfers with weft-pcie's [`weft_pcie::split`] (writes at
//! Max_Payload_Size, reads at Max_Read_Request_Size, never across 4 KiB) and
//! hand each read chunk here with a context value of their own; when every
//! completion for a chunk has arrived the chunk comes back with its data.

use std::collections::HashMap;

use weft_pcie::split::{split_write, PayloadSize, RequestChunk, SplitError};
use weft_pcie::tlp::{CompletionStatus, Tag};
use weft_pcie::Bdf;

use crate::packet::{self, Packet};

/// What a function's requests obey: its routing ID, the sizes software
/// programmed in Device Control, and Bus Master Enable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusParameters {
    /// Requester ID of every request.
    pub requester: Bdf,
    /// Max_Payload_Size for writes.
    pub max_payload: PayloadSize,
    /// Max_Read_Request_Size for reads.
    pub max_read_request: PayloadSize,
    /// Bus Master Enable (§7.5.1.1.3): without it no request may be sent.
    pub bus_master: bool,
}

/// How a read finished.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadOutcome<T> {
    /// Every byte arrived.
    Done {
        /// The caller's context for the chunk.
        context: T,
        /// The chunk's bytes.
        data: Vec<u8>,
    },
    /// A completion carried an error status (UR, CA), which ends the
    /// request (§2.3.2).
    Failed {
        /// The caller's context for the chunk.
        context: T,
        /// The status received.
        status: CompletionStatus,
    },
}

#[derive(Clone, Debug)]
struct Pending<T> {
    context: T,
    data: Vec<u8>,
    received: usize,
}

/// Outstanding reads of one function, by tag.
#[derive(Clone, Debug)]
pub struct Requester<T> {
    pending: HashMap<u16, Pending<T>>,
    next_tag: u16,
    limit: usize,
}

impl<T> Requester<T> {
    /// A requester that keeps at most `limit` reads outstanding (at most
    /// 256: 8-bit tags, as a function without 10-Bit Tag Requester Enable
    /// uses, §2.2.6.2).
    pub fn new(limit: usize) -> Self {
        Requester {
            pending: HashMap::new(),
            next_tag: 0,
            limit: limit.clamp(1, 256),
        }
    }

    /// Whether another read may be issued.
    pub fn has_room(&self) -> bool {
        self.pending.len() < self.limit
    }

    /// How many reads await completions.
    pub fn outstanding(&self) -> usize {
        self.pending.len()
    }

    /// Issues a Memory Read for `chunk` from `requester`; `None` if every
    /// tag is in use.
    pub fn read(&mut self, requester: Bdf, chunk: &RequestChunk, context: T) -> Option<Packet> {
        if !self.has_room() {
            return None;
        }
        let tag = (0..256u16)
            .map(|step| (self.next_tag + step) % 256)
            .find(|tag| !self.pending.contains_key(tag))?;
        self.next_tag = (tag + 1) % 256;
        self.pending.insert(
            tag,
            Pending {
                context,
                data: vec![0; usize::from(chunk.len)],
                received: 0,
            },
        );
        Some(packet::read_chunk(
            requester,
            Tag::from_8bit(tag as u8),
            chunk,
        ))
    }

    /// Takes in a completion; returns the outcome once its read is finished.
    /// A completion matching no outstanding tag is an Unexpected Completion
    /// (§2.3.2) and is dropped.
    pub fn receive(&mut self, packet: &Packet) -> Option<ReadOutcome<T>> {
        let completion = packet.completion()?;
        let tag = completion.tag.get();
        let pending = self.pending.get_mut(&tag)?;
        if completion.status != CompletionStatus::Successful {
            let pending = self.pending.remove(&tag)?;
            return Some(ReadOutcome::Failed {
                context: pending.context,
                status: completion.status,
            });
        }
        // Byte Count is what remains of the request, this completion
        // included, so it locates the data (§2.3.1.1).
        let total = pending.data.len();
        let remaining = usize::from(completion.byte_count).min(total);
        let offset = total - remaining;
        let start = usize::from(completion.lower_address & 3);
        let available = packet.payload.len().saturating_sub(start);
        let count = remaining.min(available);
        pending.data[offset..offset + count].copy_from_slice(&packet.payload[start..start + count]);
        pending.received += count;
        if count == remaining || pending.received >= total {
            let pending = self.pending.remove(&tag)?;
            return Some(ReadOutcome::Done {
                context: pending.context,
                data: pending.data,
            });
        }
        None
    }

    /// Forgets every outstanding read (after a reset or an abort).
    pub fn clear(&mut self) {
        self.pending.clear();
    }
}

/// Memory Writes of `data` to `address` from `requester`, split at `mps` and
/// at 4 KiB boundaries (§2.2.2, §2.2.7).
pub fn write_packets(
    requester: Bdf,
    address: u64,
    data: &[u8],
    mps: PayloadSize,
) -> Result<Vec<Packet>, SplitError> {
    let mut consumed = 0usize;
    Ok(split_write(address, data.len() as u64, mps)?
        .map(|chunk| {
            let len = usize::from(chunk.len);
            let packet = packet::write_chunk(requester, &chunk, &data[consumed..consumed + len]);
            consumed += len;
            packet
        })
        .collect())
}
