//! A flat, ideal interconnect for tests: one host (root complex and
//! memory) and devices on their own buses, with every TLP delivered at once
//! and recorded.
//!
//! It is not a switch model (that is `weft-model`); it routes the way any
//! PCIe hierarchy would once enumerated: memory requests by the BAR that
//! claims the address, else to host memory; completions by Requester ID;
//! configuration requests by target (PCIe Base 6.0 §2.2.4). That is enough
//! to drive a device model through a host driver's steps, to wire two GPUs
//! back to back for peer-to-peer copies, and to check the TLPs a model sends.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use weft_pcie::split::{split_completion, split_read, PayloadSize, Rcb};
use weft_pcie::tlp::{Body, CompletionStatus, MemoryOp, Tag};
use weft_pcie::Bdf;

use crate::device::{Claim, ConfigError, Device};
use crate::memory::SparseMemory;
use crate::packet::{self, Packet, RequestInfo};
use crate::requester::write_packets;

/// The host's routing ID: the root complex at 00:00.0.
pub const HOST_ID: Bdf = Bdf(0);
/// The start of the range a host decodes as MSI writes (x86's 0xFEEx_xxxx).
pub const MSI_WINDOW: core::ops::Range<u64> = 0xfee0_0000..0xfef0_0000;
/// Rounds of [`Bench::run`] after which devices are assumed to loop forever.
const MAX_ROUNDS: usize = 1_000_000;

/// Who sent or received a TLP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    /// The host: root complex and memory.
    Host,
    /// The device attached with this index.
    Device(usize),
}

/// One delivered TLP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Traced {
    /// Sender.
    pub from: Node,
    /// Receiver.
    pub to: Node,
    /// The TLP.
    pub packet: Packet,
}

/// An interrupt message the host received: a Memory Write into
/// [`MSI_WINDOW`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interrupt {
    /// The function that sent it.
    pub requester: Bdf,
    /// The address written.
    pub address: u64,
    /// The DW written.
    pub data: u32,
}

/// Why [`Bench::run`] gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchError {
    /// Devices kept sending TLPs for this many rounds.
    NoQuiescence {
        /// Rounds run.
        rounds: usize,
    },
}

/// A device on its bus.
#[derive(Debug)]
struct Slot<D> {
    bus: u8,
    device: D,
}

/// The test interconnect.
#[derive(Debug)]
pub struct Bench<D> {
    now: Duration,
    host: SparseMemory,
    slots: Vec<Slot<D>>,
    trace: Vec<Traced>,
    tracing: bool,
    interrupts: Vec<Interrupt>,
    host_completions: HashMap<u16, Vec<Packet>>,
    next_tag: u16,
    host_limit: u64,
    /// Max_Payload_Size of the host's writes and completions.
    pub host_max_payload: PayloadSize,
    /// Max_Read_Request_Size of the host's reads.
    pub host_max_read_request: PayloadSize,
}

impl<D: Device> Default for Bench<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Device> Bench<D> {
    /// An empty bench at time zero; host MPS 256 bytes, MRRS 512 bytes.
    pub fn new() -> Self {
        Bench {
            now: Duration::ZERO,
            host: SparseMemory::unbounded(),
            slots: Vec::new(),
            trace: Vec::new(),
            tracing: true,
            interrupts: Vec::new(),
            host_completions: HashMap::new(),
            next_tag: 0,
            host_limit: u64::MAX,
            host_max_payload: PayloadSize::B256,
            host_max_read_request: PayloadSize::B512,
        }
    }

    /// Attaches `device` as the only device on `bus`; returns its index.
    pub fn attach(&mut self, bus: u8, device: D) -> usize {
        self.slots.push(Slot { bus, device });
        self.slots.len() - 1
    }

    /// The device with index `index`.
    pub fn device(&self, index: usize) -> Option<&D> {
        self.slots.get(index).map(|slot| &slot.device)
    }

    /// The device with index `index`, mutably.
    pub fn device_mut(&mut self, index: usize) -> Option<&mut D> {
        self.slots.get_mut(index).map(|slot| &mut slot.device)
    }

    /// Simulated time.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// Moves simulated time forward.
    pub fn advance(&mut self, by: Duration) {
        self.now = self.now.saturating_add(by);
    }

    /// The host's memory.
    pub fn host_memory(&self) -> &SparseMemory {
        &self.host
    }

    /// The host's memory, mutably (what the host's CPU writes directly).
    pub fn host_memory_mut(&mut self) -> &mut SparseMemory {
        &mut self.host
    }

    /// Makes the host decode only addresses below `limit` as memory: a
    /// device's read above it completes with UR, as a root complex answers
    /// a request nothing claims (§2.3.1).
    pub fn set_host_memory_limit(&mut self, limit: u64) {
        self.host_limit = limit;
    }

    /// Every TLP delivered since the last [`Bench::clear_trace`].
    pub fn trace(&self) -> &[Traced] {
        &self.trace
    }

    /// Forgets the recorded TLPs.
    pub fn clear_trace(&mut self) {
        self.trace.clear();
    }

    /// Turns recording of TLPs on or off (long transfers).
    pub fn set_tracing(&mut self, on: bool) {
        self.tracing = on;
    }

    /// Interrupt messages the host received, oldest first.
    pub fn interrupts(&self) -> &[Interrupt] {
        &self.interrupts
    }

    /// Takes the interrupts received so far.
    pub fn take_interrupts(&mut self) -> Vec<Interrupt> {
        std::mem::take(&mut self.interrupts)
    }

    fn tag(&mut self) -> Tag {
        let tag = Tag::from_8bit(self.next_tag as u8);
        self.next_tag = (self.next_tag + 1) % 256;
        tag
    }

    /// The device a configuration request for `target` reaches: one that
    /// owns the ID (its PF or an enabled VF), else the device on that bus.
    fn config_route(&self, target: Bdf) -> Option<usize> {
        self.slots
            .iter()
            .position(|slot| slot.device.owns(target))
            .or_else(|| self.slots.iter().position(|s| s.bus == target.bus()))
    }

    /// The host's Configuration Read, through the device's TLP interface.
    /// A request that reaches no device is a UR (§2.3.1), which software
    /// sees as all ones.
    pub fn config_read(&mut self, target: Bdf, offset: u16) -> Result<u32, CompletionStatus> {
        let tag = self.tag();
        let packet = packet::config_read(HOST_ID, tag, target, offset);
        let completion = self.config_exchange(target, packet)?;
        let mut lanes = [0u8; 4];
        let n = completion.payload.len().min(4);
        lanes[..n].copy_from_slice(&completion.payload[..n]);
        Ok(u32::from_le_bytes(lanes))
    }

    /// The host's Configuration Write.
    pub fn config_write(
        &mut self,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), CompletionStatus> {
        let tag = self.tag();
        let packet = packet::config_write(HOST_ID, tag, target, offset, value, byte_enables);
        self.config_exchange(target, packet).map(|_| ())
    }

    fn config_exchange(&mut self, target: Bdf, packet: Packet) -> Result<Packet, CompletionStatus> {
        let Some(index) = self.config_route(target) else {
            return Err(CompletionStatus::UnsupportedRequest);
        };
        let tag = packet.header.tag().get();
        self.deliver(Node::Host, Node::Device(index), packet);
        let completion = self
            .host_completions
            .remove(&tag)
            .and_then(|mut list| list.pop())
            .ok_or(CompletionStatus::UnsupportedRequest)?;
        match completion.completion().map(|c| c.status) {
            Some(CompletionStatus::Successful) => Ok(completion),
            Some(status) => Err(status),
            None => Err(CompletionStatus::UnsupportedRequest),
        }
    }

    /// The host writes `data` at bus address `address` (split at the host's
    /// MPS, as a root complex would).
    pub fn write(&mut self, address: u64, data: &[u8]) {
        let Ok(packets) = write_packets(HOST_ID, address, data, self.host_max_payload) else {
            return;
        };
        for packet in packets {
            self.route(Node::Host, packet);
        }
    }

    /// Writes one little-endian DW (a register write).
    pub fn write_u32(&mut self, address: u64, value: u32) {
        self.write(address, &value.to_le_bytes());
    }

    /// The host reads `len` bytes at `address`; the first error status of
    /// any completion fails the read.
    pub fn read(&mut self, address: u64, len: u64) -> Result<Vec<u8>, CompletionStatus> {
        let chunks = split_read(address, len, self.host_max_read_request)
            .map_err(|_| CompletionStatus::UnsupportedRequest)?;
        let mut out = Vec::new();
        for chunk in chunks {
            let tag = self.tag();
            self.route(Node::Host, packet::read_chunk(HOST_ID, tag, &chunk));
            let mut data = vec![0u8; usize::from(chunk.len)];
            let completions = self.host_completions.remove(&tag.get()).unwrap_or_default();
            if completions.is_empty() {
                return Err(CompletionStatus::UnsupportedRequest);
            }
            for packet in completions {
                let Some(completion) = packet.completion() else {
                    continue;
                };
                if completion.status != CompletionStatus::Successful {
                    return Err(completion.status);
                }
                let remaining = usize::from(completion.byte_count).min(data.len());
                let offset = data.len() - remaining;
                let start = usize::from(completion.lower_address & 3);
                let count = remaining.min(packet.payload.len().saturating_sub(start));
                data[offset..offset + count].copy_from_slice(&packet.payload[start..start + count]);
            }
            out.extend(data);
        }
        Ok(out)
    }

    /// Reads one little-endian DW.
    pub fn read_u32(&mut self, address: u64) -> Result<u32, CompletionStatus> {
        let bytes = self.read(address, 4)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    /// Polls every device and delivers what they send until all are quiet.
    pub fn run(&mut self) -> Result<(), BenchError> {
        self.run_rounds(MAX_ROUNDS)
    }

    /// As [`Bench::run`], giving up after `rounds` rounds of polling.
    pub fn run_rounds(&mut self, rounds: usize) -> Result<(), BenchError> {
        for _ in 0..rounds {
            let mut quiet = true;
            for index in 0..self.slots.len() {
                let now = self.now;
                let sent = self.slots[index].device.poll(now);
                quiet &= sent.is_empty();
                for packet in sent {
                    self.route(Node::Device(index), packet);
                }
            }
            if quiet {
                return Ok(());
            }
        }
        Err(BenchError::NoQuiescence { rounds })
    }

    /// Where a TLP from `from` goes.
    fn destination(&self, from: Node, packet: &Packet) -> Option<Node> {
        match &packet.header.body {
            Body::Memory(request) => {
                let claimed = self
                    .slots
                    .iter()
                    .position(|slot| slot.device.claim(request.address).is_some());
                match (claimed, from) {
                    (Some(index), _) => Some(Node::Device(index)),
                    (None, Node::Device(_)) => Some(Node::Host),
                    // The host's own unclaimed requests master-abort.
                    (None, Node::Host) => None,
                }
            }
            Body::Completion(completion) if completion.requester == HOST_ID => Some(Node::Host),
            Body::Completion(completion) => self
                .slots
                .iter()
                .position(|slot| slot.device.owns(completion.requester))
                .map(Node::Device),
            Body::Config(request) => self.config_route(request.target).map(Node::Device),
            _ => None,
        }
    }

    fn route(&mut self, from: Node, packet: Packet) {
        match self.destination(from, &packet) {
            Some(to) => self.deliver(from, to, packet),
            None => {
                // An unclaimed non-posted request from the host completes
                // with UR so the host read fails instead of hanging.
                if from == Node::Host {
                    if let Some(MemoryOp::Read) = packet.memory().map(|r| r.op) {
                        let info = RequestInfo::of(&packet.header);
                        let ur = packet::completion_for(
                            &info,
                            HOST_ID,
                            CompletionStatus::UnsupportedRequest,
                            4,
                            0,
                            None,
                        );
                        self.host_completions
                            .entry(info.tag.get())
                            .or_default()
                            .push(ur);
                    }
                }
            }
        }
    }

    fn deliver(&mut self, from: Node, to: Node, packet: Packet) {
        let mut queue = VecDeque::from([(from, to, packet)]);
        while let Some((from, to, packet)) = queue.pop_front() {
            if self.tracing {
                self.trace.push(Traced {
                    from,
                    to,
                    packet: packet.clone(),
                });
            }
            let responses = match to {
                Node::Device(index) => {
                    let now = self.now;
                    self.slots[index].device.handle(now, &packet)
                }
                Node::Host => self.host_receive(&packet),
            };
            for response in responses {
                match self.destination(to, &response) {
                    Some(next) => queue.push_back((to, next, response)),
                    None => continue,
                }
            }
        }
    }

    /// The host's side: completions for its reads, writes into memory
    /// (interrupts recorded), reads of its memory completed at the root
    /// complex's 64-byte RCB (§2.3.1.1).
    fn host_receive(&mut self, packet: &Packet) -> Vec<Packet> {
        match &packet.header.body {
            Body::Completion(completion) => {
                self.host_completions
                    .entry(completion.tag.get())
                    .or_default()
                    .push(packet.clone());
                Vec::new()
            }
            Body::Memory(request) if request.address >= self.host_limit => {
                if request.op == MemoryOp::Write {
                    return Vec::new();
                }
                let info = RequestInfo::of(&packet.header);
                vec![packet::completion_for(
                    &info,
                    HOST_ID,
                    CompletionStatus::UnsupportedRequest,
                    4,
                    0,
                    None,
                )]
            }
            Body::Memory(request) if request.op == MemoryOp::Write => {
                let mut sink = HostSink {
                    memory: &mut self.host,
                };
                sink.handle(self.now, packet);
                if MSI_WINDOW.contains(&request.address) {
                    let mut lanes = [0u8; 4];
                    let n = packet.payload.len().min(4);
                    lanes[..n].copy_from_slice(&packet.payload[..n]);
                    self.interrupts.push(Interrupt {
                        requester: request.requester,
                        address: request.address,
                        data: u32::from_le_bytes(lanes),
                    });
                }
                Vec::new()
            }
            Body::Memory(request) if request.op == MemoryOp::Read => {
                let info = RequestInfo::of(&packet.header);
                let (first_be, _) = request.effective_byte_enables();
                let first = request.address + u64::from(first_be.trailing_zeros().min(3));
                let count = u64::from(request.completion_byte_count().unwrap_or(4));
                let Ok(chunks) = split_completion(first, count, self.host_max_payload, Rcb::B64)
                else {
                    return Vec::new();
                };
                chunks
                    .map(|chunk| {
                        let data = self
                            .host
                            .read(chunk.address & !3, usize::from(chunk.length_dw) * 4);
                        packet::completion_chunk(&info, HOST_ID, &chunk, data)
                    })
                    .collect()
            }
            _ => Vec::new(),
        }
    }
}

/// Host memory seen through the [`Device`] interface, to reuse its
/// byte-enable handling for writes.
struct HostSink<'a> {
    memory: &'a mut SparseMemory,
}

impl Device for HostSink<'_> {
    fn config_read(&mut self, _: Duration, target: Bdf, _: u16) -> Result<u32, ConfigError> {
        Err(ConfigError::UnsupportedRequest { target })
    }

    fn config_write(
        &mut self,
        _: Duration,
        target: Bdf,
        _: u16,
        _: u32,
        _: u8,
    ) -> Result<(), ConfigError> {
        Err(ConfigError::UnsupportedRequest { target })
    }

    fn claim(&self, _: u64) -> Option<Claim> {
        Some(Claim {
            function: HOST_ID,
            max_payload: PayloadSize::B128,
        })
    }

    fn memory_read(&mut self, _: Duration, address: u64, out: &mut [u8]) {
        self.memory.read_into(address, out);
    }

    fn memory_write(&mut self, _: Duration, address: u64, data: &[u8]) {
        self.memory.write(address, data);
    }

    fn receive_completion(&mut self, _: Duration, _: &Packet) {}

    fn poll(&mut self, _: Duration) -> Vec<Packet> {
        Vec::new()
    }

    fn owns(&self, id: Bdf) -> bool {
        id == HOST_ID
    }

    fn reset(&mut self, _: Duration) {}

    fn completer_for_unclaimed(&self) -> Bdf {
        HOST_ID
    }
}

/// A boxed device is a device, so a bench can hold different models.
impl<D: Device + ?Sized> Device for Box<D> {
    fn config_read(&mut self, now: Duration, target: Bdf, offset: u16) -> Result<u32, ConfigError> {
        (**self).config_read(now, target, offset)
    }

    fn config_write(
        &mut self,
        now: Duration,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigError> {
        (**self).config_write(now, target, offset, value, byte_enables)
    }

    fn claim(&self, address: u64) -> Option<Claim> {
        (**self).claim(address)
    }

    fn memory_read(&mut self, now: Duration, address: u64, out: &mut [u8]) {
        (**self).memory_read(now, address, out)
    }

    fn memory_write(&mut self, now: Duration, address: u64, data: &[u8]) {
        (**self).memory_write(now, address, data)
    }

    fn receive_completion(&mut self, now: Duration, completion: &Packet) {
        (**self).receive_completion(now, completion)
    }

    fn poll(&mut self, now: Duration) -> Vec<Packet> {
        (**self).poll(now)
    }

    fn owns(&self, id: Bdf) -> bool {
        (**self).owns(id)
    }

    fn reset(&mut self, now: Duration) {
        (**self).reset(now)
    }

    fn handle(&mut self, now: Duration, packet: &Packet) -> Vec<Packet> {
        (**self).handle(now, packet)
    }

    fn completer_for_unclaimed(&self) -> Bdf {
        (**self).completer_for_unclaimed()
    }
}
