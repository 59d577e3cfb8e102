//! The GPU's copy engine: moves bytes between its own memory and bus
//! addresses (host memory or a peer's BAR) with Memory Read and Memory
//! Write requests.
//!
//! Writes are split at Max_Payload_Size and 4 KiB boundaries, reads at
//! Max_Read_Request_Size and 4 KiB boundaries (PCIe Base 6.0 §2.2.2,
//! §2.2.7, §7.5.3.4), using weft-pcie's splitter. A bus-to-bus copy stores
//! each read chunk and forwards it as writes.

use std::collections::VecDeque;

use weft_pcie::split::{split_read, split_write};

use super::regs::error;
use crate::memory::SparseMemory;
use crate::packet::{self, Packet};
pub use crate::requester::BusParameters;
use crate::requester::{write_packets, ReadOutcome, Requester};

/// One side of a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// An offset into the GPU's own memory.
    Local(u64),
    /// A bus address: host memory or a peer's BAR.
    Bus(u64),
}

/// A copy the driver asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyRequest {
    /// Where the bytes come from.
    pub src: Location,
    /// Where they go.
    pub dst: Location,
    /// How many bytes.
    pub len: u64,
}

#[derive(Clone, Debug)]
struct Job {
    request: CopyRequest,
    /// Bytes of the source for which reads (bus source) or writes (local
    /// source, bus destination) have been issued.
    issued: u64,
    /// Bytes that reached the destination (or were handed to writes).
    landed: u64,
    writes: VecDeque<Packet>,
    failed: Option<u32>,
}

/// The copy engine: one copy at a time.
#[derive(Clone, Debug)]
pub struct CopyEngine {
    job: Option<Job>,
    reads: Requester<u64>,
    batch: usize,
}

impl CopyEngine {
    /// An idle engine keeping at most `max_reads` reads outstanding and
    /// sending at most `batch` TLPs per poll.
    pub fn new(max_reads: usize, batch: usize) -> Self {
        CopyEngine {
            job: None,
            reads: Requester::new(max_reads),
            batch: batch.max(1),
        }
    }

    /// Whether a copy is running.
    pub fn busy(&self) -> bool {
        self.job.is_some()
    }

    /// Abandons any copy (reset).
    pub fn reset(&mut self) {
        self.job = None;
        self.reads.clear();
    }

    /// Starts a copy; an error code from [`error`] if it cannot run.
    pub fn start(
        &mut self,
        request: CopyRequest,
        memory: &SparseMemory,
        bus: &BusParameters,
    ) -> Result<(), u32> {
        if self.busy() {
            return Err(error::BUSY);
        }
        let size = memory.size().unwrap_or(u64::MAX);
        for side in [request.src, request.dst] {
            match side {
                Location::Local(offset) => {
                    if offset.checked_add(request.len).is_none_or(|end| end > size) {
                        return Err(error::LOCAL_OUT_OF_RANGE);
                    }
                }
                Location::Bus(address) => {
                    if request.len > 0 && address.checked_add(request.len - 1).is_none() {
                        return Err(error::ADDRESS_OVERFLOW);
                    }
                    if !bus.bus_master {
                        return Err(error::BUS_MASTER_DISABLED);
                    }
                }
            }
        }
        self.reads.clear();
        self.job = Some(Job {
            request,
            issued: 0,
            landed: 0,
            writes: VecDeque::new(),
            failed: None,
        });
        Ok(())
    }

    /// Sends the next batch of requests into `out`. Returns the outcome
    /// when the copy has finished: every byte at its destination (writes
    /// are posted, so handing them to the link is finishing, §2.4.1).
    pub fn poll(
        &mut self,
        memory: &mut SparseMemory,
        bus: &BusParameters,
        out: &mut Vec<Packet>,
    ) -> Option<Result<(), u32>> {
        let job = self.job.as_mut()?;
        if let Some(code) = job.failed {
            self.reset();
            return Some(Err(code));
        }
        let CopyRequest { src, dst, len } = job.request;
        let needs_bus = matches!(src, Location::Bus(_)) || matches!(dst, Location::Bus(_));
        if needs_bus && !bus.bus_master && job.landed < len {
            self.reset();
            return Some(Err(error::BUS_MASTER_DISABLED));
        }
        let mut budget = self.batch;
        while budget > 0 {
            let Some(packet) = job.writes.pop_front() else {
                break;
            };
            out.push(packet);
            budget -= 1;
        }
        match (src, dst) {
            (Location::Local(from), Location::Local(to)) => {
                memory.copy_within(from, to, len);
                job.landed = len;
            }
            (Location::Local(from), Location::Bus(to)) => {
                let remaining = len - job.issued;
                if remaining > 0 && budget > 0 {
                    let chunks = split_write(to + job.issued, remaining, bus.max_payload)
                        .into_iter()
                        .flatten()
                        .take(budget);
                    for chunk in chunks {
                        let data = memory.read(from + job.issued, usize::from(chunk.len));
                        out.push(packet::write_chunk(bus.requester, &chunk, &data));
                        job.issued += u64::from(chunk.len);
                        job.landed = job.issued;
                    }
                }
            }
            (Location::Bus(from), _) => {
                let remaining = len - job.issued;
                if remaining > 0 && budget > 0 {
                    let chunks = split_read(from + job.issued, remaining, bus.max_read_request)
                        .into_iter()
                        .flatten();
                    for chunk in chunks {
                        if budget == 0 || !self.reads.has_room() {
                            break;
                        }
                        let Some(packet) = self.reads.read(bus.requester, &chunk, job.issued)
                        else {
                            break;
                        };
                        out.push(packet);
                        job.issued += u64::from(chunk.len);
                        budget -= 1;
                    }
                }
            }
        }
        if job.landed >= len && job.writes.is_empty() {
            self.reset();
            return Some(Ok(()));
        }
        None
    }

    /// Takes in a completion for one of the engine's reads.
    pub fn receive(&mut self, packet: &Packet, memory: &mut SparseMemory, bus: &BusParameters) {
        let Some(outcome) = self.reads.receive(packet) else {
            return;
        };
        let Some(job) = self.job.as_mut() else {
            return;
        };
        match outcome {
            ReadOutcome::Failed { .. } => job.failed = Some(error::COMPLETION_ERROR),
            ReadOutcome::Done { context, data } => {
                match job.request.dst {
                    Location::Local(to) => memory.write(to + context, &data),
                    Location::Bus(to) => {
                        match write_packets(bus.requester, to + context, &data, bus.max_payload) {
                            Ok(packets) => job.writes.extend(packets),
                            Err(_) => job.failed = Some(error::ADDRESS_OVERFLOW),
                        }
                    }
                }
                job.landed += data.len() as u64;
            }
        }
    }
}
