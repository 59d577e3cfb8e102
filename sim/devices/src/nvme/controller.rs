//! One NVMe controller (a PF's or a VF's): its registers, queues and
//! namespace, and the command processing that moves data with DMA
//! (NVMe Base 2.0 §3, §4, §5; NVM Command Set 1.0 §3).
//!
//! Commands run one at a time, in submission order per queue and round
//! robin across queues (§4.13 arbitration, with one command in flight):
//! fetch the entry, resolve its PRPs (fetching a PRP list when PRP2 points
//! to one, §4.1.1), move the data, post the completion with the current
//! phase tag, then signal the completion queue's interrupt vector.

use std::collections::{BTreeMap, VecDeque};

use weft_pcie::split::{split_read, RequestChunk};

use super::command::{
    active_namespaces, admin, cns, identify_controller, identify_namespace, io, Command,
    CompletionEntry, IdentifyInfo, Status, FEATURE_NUMBER_OF_QUEUES, LBA_SHIFT, MDTS,
};
use super::regs::{self, cc, csts, PAGE_SIZE};
use crate::memory::SparseMemory;
use crate::packet::Packet;
use crate::requester::{write_packets, BusParameters, ReadOutcome, Requester};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SubmissionQueue {
    base: u64,
    size: u16,
    head: u16,
    tail: u16,
    cqid: u16,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct CompletionQueue {
    base: u64,
    size: u16,
    head: u16,
    tail: u16,
    phase: bool,
    vector: u16,
    interrupts: bool,
    waiting: VecDeque<CompletionEntry>,
}

/// What a read the controller issued is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadTag {
    Entry,
    PrpList,
    Data { offset: usize },
}

/// Where a command's data goes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Direction {
    /// To host memory: these bytes.
    ToHost(Vec<u8>),
    /// From host memory into the namespace at this byte offset.
    FromHost { namespace_offset: u64 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Transfer {
    sqid: u16,
    command: Command,
    direction: Direction,
    len: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Stage {
    Idle,
    Fetching {
        sqid: u16,
    },
    ListFetch {
        transfer: Transfer,
    },
    Reading {
        transfer: Transfer,
        buffer: Vec<u8>,
        chunks: VecDeque<(RequestChunk, usize)>,
        outstanding: usize,
    },
}

/// One controller.
#[derive(Clone, Debug)]
pub struct Controller {
    info: IdentifyInfo,
    max_io_queues: u16,
    cc: u32,
    csts: u32,
    aqa: u32,
    asq: u64,
    acq: u64,
    sqs: BTreeMap<u16, SubmissionQueue>,
    cqs: BTreeMap<u16, CompletionQueue>,
    namespace: SparseMemory,
    reads: Requester<ReadTag>,
    stage: Stage,
    outbox: VecDeque<Packet>,
    vectors: Vec<u16>,
    last_served: u16,
}

/// PRP entry `n`'s page-aligned address check (§4.1.1: entries after the
/// first have offset 0).
fn page_aligned(address: u64) -> bool {
    address % PAGE_SIZE == 0
}

impl Controller {
    /// A disabled controller with a zeroed namespace of `namespace_size`
    /// bytes and at most `max_io_queues` I/O queue pairs.
    pub fn new(info: IdentifyInfo, namespace_size: u64, max_io_queues: u16) -> Self {
        Controller {
            info,
            max_io_queues: max_io_queues.max(1),
            cc: 0,
            csts: 0,
            aqa: 0,
            asq: 0,
            acq: 0,
            sqs: BTreeMap::new(),
            cqs: BTreeMap::new(),
            namespace: SparseMemory::with_size(namespace_size),
            reads: Requester::new(32),
            stage: Stage::Idle,
            outbox: VecDeque::new(),
            vectors: Vec::new(),
            last_served: 0,
        }
    }

    /// The namespace's contents.
    pub fn namespace(&self) -> &SparseMemory {
        &self.namespace
    }

    /// A Controller Level Reset (§3.7.2): queues deleted, registers but the
    /// admin queue attributes cleared, namespace contents kept.
    pub fn reset(&mut self) {
        self.cc = 0;
        self.csts = 0;
        self.disable();
    }

    fn disable(&mut self) {
        self.sqs.clear();
        self.cqs.clear();
        self.reads.clear();
        self.stage = Stage::Idle;
        self.outbox.clear();
        self.vectors.clear();
        self.csts &= !csts::RDY;
    }

    fn ready(&self) -> bool {
        self.csts & csts::RDY != 0
    }

    /// Reads the register DW at `offset` in BAR0.
    pub fn read_register(&self, offset: u64) -> u32 {
        match offset & !3 {
            regs::CAP => regs::CAP_VALUE as u32,
            0x04 => (regs::CAP_VALUE >> 32) as u32,
            regs::VS => regs::VS_VALUE,
            regs::CC => self.cc,
            regs::CSTS => self.csts,
            regs::AQA => self.aqa,
            regs::ASQ => self.asq as u32,
            0x2c => (self.asq >> 32) as u32,
            regs::ACQ => self.acq as u32,
            0x34 => (self.acq >> 32) as u32,
            _ => 0,
        }
    }

    /// A DW write to the register or doorbell at `offset` in BAR0.
    pub fn write_register(&mut self, offset: u64, value: u32) {
        let low = |old: u64| (old & !0xffff_ffff) | u64::from(value & !0xfff);
        let high = |old: u64| (old & 0xffff_ffff) | u64::from(value) << 32;
        match offset {
            regs::CC => self.write_cc(value),
            regs::AQA => self.aqa = value & 0x0fff_0fff,
            // Queue bases are page aligned: bits 11:0 are reserved (§3.1.4.9).
            regs::ASQ => self.asq = low(self.asq),
            0x2c => self.asq = high(self.asq),
            regs::ACQ => self.acq = low(self.acq),
            0x34 => self.acq = high(self.acq),
            _ if (regs::DOORBELLS..regs::MSIX_TABLE).contains(&offset) => {
                let index = (offset - regs::DOORBELLS) / regs::DOORBELL_STRIDE;
                let qid = (index / 2) as u16;
                if index % 2 == 0 {
                    if let Some(sq) = self.sqs.get_mut(&qid) {
                        // A tail past the queue is an invalid doorbell write
                        // (§4.1): ignored.
                        if (value as u16) < sq.size && value >> 16 == 0 {
                            sq.tail = value as u16;
                        }
                    }
                } else if let Some(cq) = self.cqs.get_mut(&qid) {
                    if (value as u16) < cq.size && value >> 16 == 0 {
                        cq.head = value as u16;
                    }
                }
            }
            _ => {}
        }
    }

    /// CC.EN 0 → 1 creates the admin queues from AQA/ASQ/ACQ and sets
    /// CSTS.RDY; 1 → 0 resets the controller (§3.5.1, §3.5.2).
    fn write_cc(&mut self, value: u32) {
        let was = self.cc & cc::EN != 0;
        let now = value & cc::EN != 0;
        self.cc = value;
        if value & cc::SHN_MASK != 0 {
            self.csts |= csts::SHST_COMPLETE;
        }
        if !was && now {
            let sq_size = (self.aqa & 0xfff) as u16 + 1;
            let cq_size = (self.aqa >> 16 & 0xfff) as u16 + 1;
            let page_size_ok = value >> cc::MPS_SHIFT & 0xf == 0;
            if sq_size < 2 || cq_size < 2 || self.asq == 0 || self.acq == 0 || !page_size_ok {
                self.csts |= csts::CFS;
                return;
            }
            self.sqs.insert(
                0,
                SubmissionQueue {
                    base: self.asq,
                    size: sq_size,
                    head: 0,
                    tail: 0,
                    cqid: 0,
                },
            );
            self.cqs.insert(0, new_cq(self.acq, cq_size, 0, true));
            self.csts = csts::RDY;
        } else if was && !now {
            self.disable();
            self.csts = 0;
        }
    }

    /// Sends what is ready: waiting completions, more data reads, the next
    /// command fetch. Returns the interrupt vectors to signal.
    pub fn poll(&mut self, bus: &BusParameters, out: &mut Vec<Packet>) -> Vec<u16> {
        if !self.ready() || !bus.bus_master {
            return Vec::new();
        }
        let cqids: Vec<u16> = self.cqs.keys().copied().collect();
        for cqid in cqids {
            self.flush_cq(cqid, bus);
        }
        if let Stage::Reading {
            chunks,
            outstanding,
            ..
        } = &mut self.stage
        {
            while let Some(&(chunk, offset)) = chunks.front() {
                let Some(packet) = self
                    .reads
                    .read(bus.requester, &chunk, ReadTag::Data { offset })
                else {
                    break;
                };
                chunks.pop_front();
                *outstanding += 1;
                self.outbox.push_back(packet);
            }
        }
        if self.stage == Stage::Idle {
            self.fetch_next(bus);
        }
        out.extend(self.outbox.drain(..));
        std::mem::take(&mut self.vectors)
    }

    /// Issues the read of the next submission queue entry, round robin.
    fn fetch_next(&mut self, bus: &BusParameters) {
        let ids: Vec<u16> = self.sqs.keys().copied().collect();
        let start = ids
            .iter()
            .position(|&id| id > self.last_served)
            .unwrap_or(0);
        let order = ids[start..].iter().chain(ids[..start].iter());
        let Some((&sqid, sq)) = order
            .filter_map(|id| self.sqs.get(id).map(|sq| (id, *sq)))
            .find(|(_, sq)| sq.head != sq.tail)
        else {
            return;
        };
        let address = sq.base + u64::from(sq.head) * Command::SIZE as u64;
        let Ok(mut chunks) = split_read(address, Command::SIZE as u64, bus.max_read_request) else {
            return;
        };
        let Some(chunk) = chunks.next() else { return };
        if let Some(packet) = self.reads.read(bus.requester, &chunk, ReadTag::Entry) {
            self.outbox.push_back(packet);
            self.stage = Stage::Fetching { sqid };
            self.last_served = sqid;
        }
    }

    /// Takes in a completion for one of the controller's reads.
    pub fn receive(&mut self, packet: &Packet, bus: &BusParameters) {
        let Some(outcome) = self.reads.receive(packet) else {
            return;
        };
        let stage = std::mem::replace(&mut self.stage, Stage::Idle);
        match (stage, outcome) {
            (Stage::Fetching { sqid }, ReadOutcome::Done { data, .. }) => {
                let Some(sq) = self.sqs.get_mut(&sqid) else {
                    return;
                };
                sq.head = (sq.head + 1) % sq.size;
                match Command::decode(&data) {
                    Some(command) => self.execute(sqid, command, bus),
                    None => self.csts |= csts::CFS,
                }
            }
            (Stage::Fetching { .. }, ReadOutcome::Failed { .. }) => {
                // An entry that cannot be fetched is a fatal controller
                // error (§9.5).
                self.csts |= csts::CFS;
            }
            (Stage::ListFetch { transfer }, ReadOutcome::Done { data, .. }) => {
                let pages: Vec<u64> = data
                    .chunks_exact(8)
                    .map(|e| u64::from_le_bytes([e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]]))
                    .collect();
                self.run_transfer(transfer, &pages, bus);
            }
            (Stage::ListFetch { transfer }, ReadOutcome::Failed { .. }) => {
                self.complete(
                    transfer.sqid,
                    transfer.command.cid,
                    Status::DATA_TRANSFER_ERROR,
                    0,
                    bus,
                );
            }
            (
                Stage::Reading {
                    transfer,
                    mut buffer,
                    chunks,
                    outstanding,
                },
                outcome,
            ) => {
                let outstanding = outstanding.saturating_sub(1);
                match outcome {
                    ReadOutcome::Done {
                        context: ReadTag::Data { offset },
                        data,
                    } => {
                        let end = (offset + data.len()).min(buffer.len());
                        buffer[offset..end].copy_from_slice(&data[..end - offset]);
                    }
                    _ => {
                        self.reads.clear();
                        self.complete(
                            transfer.sqid,
                            transfer.command.cid,
                            Status::DATA_TRANSFER_ERROR,
                            0,
                            bus,
                        );
                        return;
                    }
                }
                if outstanding == 0 && chunks.is_empty() {
                    if let Direction::FromHost { namespace_offset } = transfer.direction {
                        self.namespace.write(namespace_offset, &buffer);
                    }
                    self.complete(transfer.sqid, transfer.command.cid, Status::SUCCESS, 0, bus);
                } else {
                    self.stage = Stage::Reading {
                        transfer,
                        buffer,
                        chunks,
                        outstanding,
                    };
                }
            }
            (stage, _) => self.stage = stage,
        }
    }

    fn execute(&mut self, sqid: u16, command: Command, bus: &BusParameters) {
        let result = if sqid == 0 {
            self.execute_admin(sqid, command, bus)
        } else {
            self.execute_io(sqid, command, bus)
        };
        if let Some((status, dw0)) = result {
            self.complete(sqid, command.cid, status, dw0, bus);
        }
    }

    /// Runs an admin command; `Some` when it completes at once.
    fn execute_admin(
        &mut self,
        sqid: u16,
        command: Command,
        bus: &BusParameters,
    ) -> Option<(Status, u32)> {
        let qid = command.cdw[0] as u16;
        let qsize = (command.cdw[0] >> 16) + 1;
        match command.opcode {
            admin::IDENTIFY => {
                let data = match command.cdw[0] as u8 {
                    cns::CONTROLLER => identify_controller(&self.info),
                    cns::NAMESPACE if command.nsid == 1 => identify_namespace(&self.info),
                    cns::NAMESPACE => return Some((Status::INVALID_NAMESPACE, 0)),
                    cns::ACTIVE_NAMESPACES => active_namespaces(),
                    _ => return Some((Status::INVALID_FIELD, 0)),
                };
                let len = data.len();
                self.start_transfer(
                    Transfer {
                        sqid,
                        command,
                        direction: Direction::ToHost(data),
                        len,
                    },
                    bus,
                );
                None
            }
            admin::CREATE_IO_CQ => {
                if qid == 0 || qid > self.max_io_queues || self.cqs.contains_key(&qid) {
                    return Some((Status::INVALID_QUEUE_ID, 0));
                }
                if !(2..=regs::MAX_QUEUE_ENTRIES).contains(&qsize) {
                    return Some((Status::INVALID_QUEUE_SIZE, 0));
                }
                // Physically Contiguous is required (CAP.CQR, §5.4).
                if command.cdw[1] & 1 == 0 || !page_aligned(command.prp1) {
                    return Some((Status::INVALID_FIELD, 0));
                }
                let vector = (command.cdw[1] >> 16) as u16;
                let interrupts = command.cdw[1] & 2 != 0;
                self.cqs
                    .insert(qid, new_cq(command.prp1, qsize as u16, vector, interrupts));
                Some((Status::SUCCESS, 0))
            }
            admin::CREATE_IO_SQ => {
                if qid == 0 || qid > self.max_io_queues || self.sqs.contains_key(&qid) {
                    return Some((Status::INVALID_QUEUE_ID, 0));
                }
                if !(2..=regs::MAX_QUEUE_ENTRIES).contains(&qsize) {
                    return Some((Status::INVALID_QUEUE_SIZE, 0));
                }
                if command.cdw[1] & 1 == 0 || !page_aligned(command.prp1) {
                    return Some((Status::INVALID_FIELD, 0));
                }
                let cqid = (command.cdw[1] >> 16) as u16;
                if cqid == 0 || !self.cqs.contains_key(&cqid) {
                    return Some((Status::INVALID_CQ, 0));
                }
                self.sqs.insert(
                    qid,
                    SubmissionQueue {
                        base: command.prp1,
                        size: qsize as u16,
                        head: 0,
                        tail: 0,
                        cqid,
                    },
                );
                Some((Status::SUCCESS, 0))
            }
            admin::DELETE_IO_SQ => {
                if qid == 0 || self.sqs.remove(&qid).is_none() {
                    return Some((Status::INVALID_QUEUE_ID, 0));
                }
                Some((Status::SUCCESS, 0))
            }
            admin::DELETE_IO_CQ => {
                if qid == 0 || self.sqs.values().any(|sq| sq.cqid == qid) {
                    return Some((Status::INVALID_QUEUE_ID, 0));
                }
                if self.cqs.remove(&qid).is_none() {
                    return Some((Status::INVALID_QUEUE_ID, 0));
                }
                Some((Status::SUCCESS, 0))
            }
            admin::SET_FEATURES | admin::GET_FEATURES => {
                if command.cdw[0] as u8 != FEATURE_NUMBER_OF_QUEUES {
                    return Some((Status::INVALID_FIELD, 0));
                }
                // Both counts are 0's based (§5.27.1.5).
                let n = u32::from(self.max_io_queues - 1);
                Some((Status::SUCCESS, n | n << 16))
            }
            _ => Some((Status::INVALID_OPCODE, 0)),
        }
    }

    /// Runs an NVM command; `Some` when it completes at once.
    fn execute_io(
        &mut self,
        sqid: u16,
        command: Command,
        bus: &BusParameters,
    ) -> Option<(Status, u32)> {
        match command.opcode {
            io::FLUSH => Some((Status::SUCCESS, 0)),
            io::READ | io::WRITE => {
                if command.nsid != 1 {
                    return Some((Status::INVALID_NAMESPACE, 0));
                }
                let slba = u64::from(command.cdw[0]) | u64::from(command.cdw[1]) << 32;
                let blocks = u64::from(command.cdw[2] & 0xffff) + 1;
                let capacity = self.namespace.size().unwrap_or(0) >> LBA_SHIFT;
                if slba.checked_add(blocks).is_none_or(|end| end > capacity) {
                    return Some((Status::LBA_OUT_OF_RANGE, 0));
                }
                let len = (blocks << LBA_SHIFT) as usize;
                if len as u64 > PAGE_SIZE << MDTS {
                    return Some((Status::INVALID_FIELD, 0));
                }
                let offset = slba << LBA_SHIFT;
                let direction = if command.opcode == io::READ {
                    Direction::ToHost(self.namespace.read(offset, len))
                } else {
                    Direction::FromHost {
                        namespace_offset: offset,
                    }
                };
                self.start_transfer(
                    Transfer {
                        sqid,
                        command,
                        direction,
                        len,
                    },
                    bus,
                );
                None
            }
            _ => Some((Status::INVALID_OPCODE, 0)),
        }
    }

    /// Resolves the PRPs of a transfer: PRP1 (any DW-aligned offset), then
    /// PRP2 as the second page, or as a PRP list when more than two pages
    /// are needed (§4.1.1).
    fn start_transfer(&mut self, transfer: Transfer, bus: &BusParameters) {
        let prp1 = transfer.command.prp1;
        let first = (PAGE_SIZE - prp1 % PAGE_SIZE).min(transfer.len as u64);
        let rest = transfer.len as u64 - first;
        if rest <= PAGE_SIZE {
            let pages = if rest > 0 {
                vec![transfer.command.prp2]
            } else {
                Vec::new()
            };
            self.run_transfer(transfer, &pages, bus);
            return;
        }
        let entries = rest.div_ceil(PAGE_SIZE);
        let list = transfer.command.prp2;
        // The list must fit in its page; chained lists need more pages
        // than MDTS allows.
        if list % 8 != 0 || list % PAGE_SIZE + entries * 8 > PAGE_SIZE {
            self.complete(
                transfer.sqid,
                transfer.command.cid,
                Status::INVALID_FIELD,
                0,
                bus,
            );
            return;
        }
        let chunk = split_read(list, entries * 8, bus.max_read_request)
            .ok()
            .and_then(|mut chunks| chunks.next())
            .filter(|chunk| u64::from(chunk.len) == entries * 8);
        let packet =
            chunk.and_then(|chunk| self.reads.read(bus.requester, &chunk, ReadTag::PrpList));
        match packet {
            Some(packet) => {
                self.outbox.push_back(packet);
                self.stage = Stage::ListFetch { transfer };
            }
            None => self.complete(
                transfer.sqid,
                transfer.command.cid,
                Status::DATA_TRANSFER_ERROR,
                0,
                bus,
            ),
        }
    }

    /// Moves the data once every page is known: writes it out, or starts
    /// the reads that bring it in.
    fn run_transfer(&mut self, transfer: Transfer, pages: &[u64], bus: &BusParameters) {
        let prp1 = transfer.command.prp1;
        let first = (PAGE_SIZE - prp1 % PAGE_SIZE).min(transfer.len as u64) as usize;
        let mut segments = vec![(prp1, first)];
        let mut left = transfer.len - first;
        for &page in pages {
            if left == 0 {
                break;
            }
            if !page_aligned(page) {
                self.complete(
                    transfer.sqid,
                    transfer.command.cid,
                    Status::INVALID_FIELD,
                    0,
                    bus,
                );
                return;
            }
            let len = left.min(PAGE_SIZE as usize);
            segments.push((page, len));
            left -= len;
        }
        if prp1 % 4 != 0 || left != 0 {
            self.complete(
                transfer.sqid,
                transfer.command.cid,
                Status::INVALID_FIELD,
                0,
                bus,
            );
            return;
        }
        match &transfer.direction {
            Direction::ToHost(data) => {
                let mut offset = 0;
                for (address, len) in segments {
                    let bytes = &data[offset..offset + len];
                    if let Ok(packets) =
                        write_packets(bus.requester, address, bytes, bus.max_payload)
                    {
                        self.outbox.extend(packets);
                    }
                    offset += len;
                }
                self.complete(transfer.sqid, transfer.command.cid, Status::SUCCESS, 0, bus);
            }
            Direction::FromHost { .. } => {
                let mut chunks = VecDeque::new();
                let mut offset = 0;
                for (address, len) in segments {
                    if let Ok(split) = split_read(address, len as u64, bus.max_read_request) {
                        for chunk in split {
                            chunks.push_back((chunk, offset));
                            offset += usize::from(chunk.len);
                        }
                    }
                }
                self.stage = Stage::Reading {
                    buffer: vec![0; transfer.len],
                    transfer,
                    chunks,
                    outstanding: 0,
                };
            }
        }
    }

    /// Queues the completion entry on the submission queue's completion
    /// queue and posts what fits.
    fn complete(&mut self, sqid: u16, cid: u16, status: Status, dw0: u32, bus: &BusParameters) {
        let Some(sq) = self.sqs.get(&sqid).copied() else {
            return;
        };
        let Some(cq) = self.cqs.get_mut(&sq.cqid) else {
            return;
        };
        cq.waiting.push_back(CompletionEntry {
            dw0,
            sq_head: sq.head,
            sq_id: sqid,
            cid,
            phase: false,
            status,
        });
        self.flush_cq(sq.cqid, bus);
    }

    /// Writes waiting entries while the queue has room: full when the tail
    /// is one behind the head (§4.1.2). Each entry carries the current
    /// phase tag, which flips each time the tail wraps (§4.6.1.1).
    fn flush_cq(&mut self, cqid: u16, bus: &BusParameters) {
        let Some(cq) = self.cqs.get_mut(&cqid) else {
            return;
        };
        while (cq.tail + 1) % cq.size != cq.head {
            let Some(mut entry) = cq.waiting.pop_front() else {
                break;
            };
            entry.phase = cq.phase;
            let address = cq.base + u64::from(cq.tail) * CompletionEntry::SIZE as u64;
            if let Ok(packets) =
                write_packets(bus.requester, address, &entry.encode(), bus.max_payload)
            {
                self.outbox.extend(packets);
            }
            cq.tail = (cq.tail + 1) % cq.size;
            if cq.tail == 0 {
                cq.phase = !cq.phase;
            }
            if cq.interrupts {
                self.vectors.push(cq.vector);
            }
        }
    }

    /// Controller Fatal Status: set when an entry could not be fetched or
    /// the admin queues were invalid at enable.
    pub fn fatal(&self) -> bool {
        self.csts & csts::CFS != 0
    }
}

fn new_cq(base: u64, size: u16, vector: u16, interrupts: bool) -> CompletionQueue {
    CompletionQueue {
        base,
        size,
        head: 0,
        tail: 0,
        phase: true,
        vector,
        interrupts,
        waiting: VecDeque::new(),
    }
}
