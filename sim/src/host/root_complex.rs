//! The host's root complex as a TLP endpoint: its own functions on bus 0
//! (a host bridge and one root port), the root port's routing of the
//! host's requests down its link, and the answers to what comes up it
//! (completions, DMA into host memory, interrupt messages).
//!
//! It speaks TLPs the way weft-devices' `Device` does — [`RootComplex::handle`]
//! for each TLP that arrives, [`RootComplex::poll`] for what the host sends
//! on its own — so a simulator can wire hosts and endpoints alike.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use weft_devices::memory::SparseMemory;
use weft_devices::packet::{self, Packet, RequestInfo};
use weft_devices::requester::write_packets;
use weft_pcie::config::function::{memory_window, prefetchable_window, BusNumbers};
use weft_pcie::config::header::{command, common};
use weft_pcie::config::pcie_cap::{self, link_speed, Link, PcieCapability, PortType};
use weft_pcie::config::{
    CapabilityList, ConfigSpace, FunctionIdentity, Type0Function, Type1Function,
};
use weft_pcie::split::{split_completion, PayloadSize, Rcb, RequestChunk};
use weft_pcie::tlp::{Body, CompletionStatus, ConfigType, FlowControlClass, MemoryOp, Tag};
use weft_pcie::Bdf;

use super::interrupts::{InterruptController, MSI_WINDOW};

/// The root complex's own routing ID, the Requester ID of every host
/// request: the host bridge at 00:00.0.
pub const HOST_BRIDGE: Bdf = Bdf::new(0, 0, 0);
/// The root port, 00:01.0, whose link the host's fabric hangs off.
pub const ROOT_PORT: Bdf = Bdf::new(0, 1, 0);
/// Offset of the root port's PCI Express capability.
pub const ROOT_PORT_PCIE: u16 = 0x40;
/// Root Capabilities bit 0: CRS Software Visibility (§7.5.3.13).
const CRS_SOFTWARE_VISIBILITY: u16 = 1 << 0;
/// Root Control bit 4: CRS Software Visibility Enable (§7.5.3.12).
pub const CRS_SOFTWARE_VISIBILITY_ENABLE: u16 = 1 << 4;

/// Who the host is as a PCIe platform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlatformIdentity {
    /// Vendor ID of the host bridge and root port.
    pub vendor_id: u16,
    /// Device ID of the host bridge.
    pub host_bridge_device_id: u16,
    /// Device ID of the root port.
    pub root_port_device_id: u16,
    /// Max_Payload_Size Supported of the root port (encoding, 0 = 128 B).
    pub max_payload_supported: u8,
}

impl Default for PlatformIdentity {
    /// An Intel Xeon-like root complex whose root port supports 512-byte
    /// payloads.
    fn default() -> Self {
        PlatformIdentity {
            vendor_id: 0x8086,
            host_bridge_device_id: 0x2020,
            root_port_device_id: 0x2030,
            max_payload_supported: 2,
        }
    }
}

/// How a non-posted request the host sent ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A configuration request completed; reads carry the DW.
    Config(Result<Option<u32>, CompletionStatus>),
    /// A memory read completed with these bytes, or failed with a status.
    Read(Result<Vec<u8>, CompletionStatus>),
}

/// A request awaiting its completions.
#[derive(Clone, Debug)]
enum Pending {
    Config { read: bool },
    Read { data: Vec<u8>, received: usize },
}

/// Counters of what crossed the root port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RootCounters {
    /// TLPs sent down the link.
    pub sent: u64,
    /// TLPs received from the link.
    pub received: u64,
    /// Bytes of device writes into host memory.
    pub dma_written: u64,
    /// Bytes of host memory read by devices.
    pub dma_read: u64,
    /// Completions that matched no outstanding request (§2.3.2).
    pub unexpected_completions: u64,
    /// Requests from below answered with UR or dropped.
    pub rejected: u64,
}

/// The root complex: bus 0, host memory, the interrupt controller.
#[derive(Debug)]
pub struct RootComplex {
    host_bridge: ConfigSpace,
    root_port: ConfigSpace,
    memory: SparseMemory,
    interrupts: InterruptController,
    outbox: VecDeque<Packet>,
    pending: HashMap<u16, Pending>,
    finished: HashMap<u16, Outcome>,
    next_tag: u16,
    counters: RootCounters,
    now: Duration,
}

fn build_bus0(identity: &PlatformIdentity) -> (ConfigSpace, ConfigSpace) {
    let mut host_bridge = Type0Function::new(FunctionIdentity {
        vendor_id: identity.vendor_id,
        device_id: identity.host_bridge_device_id,
        revision_id: 0,
        class_code: 0x06_00_00,
    })
    .build()
    .expect("a header without BARs always builds");
    host_bridge.define_u16(common::COMMAND, 0, command::RW_BITS, 0);
    let mut root_port = Type1Function::switch_port(FunctionIdentity {
        vendor_id: identity.vendor_id,
        device_id: identity.root_port_device_id,
        revision_id: 0,
        class_code: weft_pcie::config::function::CLASS_PCI_BRIDGE,
    })
    .build()
    .expect("a header without BARs always builds");
    let mut pcie = PcieCapability::new(PortType::RootPort);
    pcie.max_payload_supported = identity.max_payload_supported.min(5);
    pcie.link = Some(Link::trained(link_speed::GT_8, 16, 1));
    let offset = CapabilityList::new(&mut root_port)
        .and_then(|mut list| list.push(&pcie))
        .expect("the PCI Express capability fits a fresh header");
    debug_assert_eq!(offset, ROOT_PORT_PCIE);
    root_port.define_u16(
        offset + pcie_cap::ROOT_CAPABILITIES,
        CRS_SOFTWARE_VISIBILITY,
        0,
        0,
    );
    (host_bridge, root_port)
}

impl RootComplex {
    /// A root complex with empty memory and nothing enumerated.
    pub fn new(identity: &PlatformIdentity) -> Self {
        let (host_bridge, root_port) = build_bus0(identity);
        RootComplex {
            host_bridge,
            root_port,
            memory: SparseMemory::unbounded(),
            interrupts: InterruptController::new(),
            outbox: VecDeque::new(),
            pending: HashMap::new(),
            finished: HashMap::new(),
            next_tag: 0,
            counters: RootCounters::default(),
            now: Duration::ZERO,
        }
    }

    /// Host memory.
    pub fn memory(&self) -> &SparseMemory {
        &self.memory
    }

    /// Host memory, as the CPU writes it.
    pub fn memory_mut(&mut self) -> &mut SparseMemory {
        &mut self.memory
    }

    /// The interrupt controller.
    pub fn interrupts(&self) -> &InterruptController {
        &self.interrupts
    }

    /// The interrupt controller, to allocate and take vectors.
    pub fn interrupts_mut(&mut self) -> &mut InterruptController {
        &mut self.interrupts
    }

    /// What crossed the root port so far.
    pub fn counters(&self) -> RootCounters {
        self.counters
    }

    /// The root port's configuration space as it stands.
    pub fn root_port(&self) -> &ConfigSpace {
        &self.root_port
    }

    /// The last time the root complex saw.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// The Max_Payload_Size the root port was programmed with: the
    /// largest write or completion the host sends (§2.2.2).
    pub fn max_payload(&self) -> PayloadSize {
        let control = self
            .root_port
            .read_u16(ROOT_PORT_PCIE + pcie_cap::DEVICE_CONTROL);
        let encoding = ((control & pcie_cap::device_control::MAX_PAYLOAD_MASK)
            >> pcie_cap::device_control::MAX_PAYLOAD_SHIFT) as u8;
        PayloadSize::from_encoding(encoding).unwrap_or(PayloadSize::B128)
    }

    fn allocate_tag(&mut self) -> Option<Tag> {
        let tag = (0..256u16)
            .map(|step| (self.next_tag + step) % 256)
            .find(|tag| !self.pending.contains_key(tag) && !self.finished.contains_key(tag))?;
        self.next_tag = (tag + 1) % 256;
        Some(Tag::from_8bit(tag as u8))
    }

    /// Takes the outcome of request `tag` once it has finished.
    pub fn take_outcome(&mut self, tag: Tag) -> Option<Outcome> {
        self.finished.remove(&tag.get())
    }

    /// Whether request `tag` has finished.
    pub fn has_outcome(&self, tag: Tag) -> bool {
        self.finished.contains_key(&tag.get())
    }

    /// Gives up on request `tag` (Completion Timeout, §2.8): a late
    /// completion for it is then unexpected.
    pub fn abandon(&mut self, tag: Tag) {
        self.pending.remove(&tag.get());
        self.finished.remove(&tag.get());
    }

    /// Issues a Configuration Request from the CPU: bus 0 is answered by
    /// the root complex itself, the root port's secondary bus gets a Type 0
    /// request and buses up to its subordinate a Type 1 request down the
    /// link (§7.3.3); anything else is an Unsupported Request at once.
    /// `value` is `None` for a read. Returns the tag to wait on, `None` if
    /// every tag is in use.
    pub fn issue_config(
        &mut self,
        target: Bdf,
        offset: u16,
        value: Option<(u32, u8)>,
    ) -> Option<Tag> {
        let tag = self.allocate_tag()?;
        let read = value.is_none();
        if target.bus() == 0 {
            let outcome = self.local_config(target, offset, value);
            self.finished.insert(tag.get(), Outcome::Config(outcome));
            return Some(tag);
        }
        let buses = BusNumbers::read(&self.root_port);
        let config_type = if target.bus() == buses.secondary {
            ConfigType::Type0
        } else if buses.forwards(target.bus()) {
            ConfigType::Type1
        } else {
            let outcome = Err(CompletionStatus::UnsupportedRequest);
            self.finished.insert(tag.get(), Outcome::Config(outcome));
            return Some(tag);
        };
        let mut request = match value {
            None => packet::config_read(HOST_BRIDGE, tag, target, offset),
            Some((value, enables)) => {
                packet::config_write(HOST_BRIDGE, tag, target, offset, value, enables)
            }
        };
        if let Body::Config(config) = &mut request.header.body {
            config.config_type = config_type;
        }
        self.pending.insert(tag.get(), Pending::Config { read });
        self.send(request);
        Some(tag)
    }

    fn local_config(
        &mut self,
        target: Bdf,
        offset: u16,
        value: Option<(u32, u8)>,
    ) -> Result<Option<u32>, CompletionStatus> {
        let space = match target {
            HOST_BRIDGE => &mut self.host_bridge,
            ROOT_PORT => &mut self.root_port,
            _ => return Err(CompletionStatus::UnsupportedRequest),
        };
        match value {
            None => Ok(Some(space.read(offset))),
            Some((value, enables)) => {
                space.write(offset, value, enables);
                Ok(None)
            }
        }
    }

    /// Whether the root port forwards a memory request for `address` down
    /// its link: it falls in one of its windows and Memory Space Enable is
    /// set (§7.5.1.3.8-9, §7.5.1.1.3).
    pub fn forwards_down(&self, address: u64) -> bool {
        let enabled = self.root_port.read_u16(common::COMMAND) & command::MEMORY_SPACE != 0;
        enabled
            && (memory_window(&self.root_port).is_some_and(|w| w.contains(address))
                || prefetchable_window(&self.root_port).is_some_and(|w| w.contains(address)))
    }

    /// Issues a Memory Read for one chunk (split by the caller at
    /// Max_Read_Request_Size and 4 KiB); `None` if no tag is free.
    pub fn issue_read(&mut self, chunk: &RequestChunk) -> Option<Tag> {
        let tag = self.allocate_tag()?;
        self.pending.insert(
            tag.get(),
            Pending::Read {
                data: vec![0; usize::from(chunk.len)],
                received: 0,
            },
        );
        self.send(packet::read_chunk(HOST_BRIDGE, tag, chunk));
        Some(tag)
    }

    /// Queues Memory Writes of `data` at `address`, split at the root
    /// port's Max_Payload_Size and 4 KiB boundaries.
    pub fn issue_write(&mut self, address: u64, data: &[u8]) {
        let Ok(packets) = write_packets(HOST_BRIDGE, address, data, self.max_payload()) else {
            return;
        };
        for packet in packets {
            self.send(packet);
        }
    }

    fn send(&mut self, packet: Packet) {
        self.counters.sent += 1;
        self.outbox.push_back(packet);
    }

    /// What the root port sends down its link now: the requests the CPU
    /// issued and peer traffic it turned around.
    pub fn poll(&mut self, now: Duration) -> Vec<Packet> {
        self.now = self.now.max(now);
        self.outbox.drain(..).collect()
    }

    /// One TLP up the link; returns the completions the root complex
    /// answers with.
    pub fn handle(&mut self, now: Duration, packet: Packet) -> Vec<Packet> {
        self.now = self.now.max(now);
        self.counters.received += 1;
        match &packet.header.body {
            Body::Completion(_) => {
                self.receive_completion(&packet);
                Vec::new()
            }
            Body::Memory(request) => {
                let bus_master =
                    self.root_port.read_u16(common::COMMAND) & command::BUS_MASTER != 0;
                let address = request.address;
                let op = request.op;
                if !bus_master {
                    // Bus Master Enable clear: the port forwards no
                    // upstream memory request (§7.5.1.1.3); non-posted
                    // ones complete with UR.
                    return self.reject(&packet);
                }
                match op {
                    MemoryOp::Write if MSI_WINDOW.contains(&address) => {
                        let mut lanes = [0u8; 4];
                        let n = packet.payload.len().min(4);
                        lanes[..n].copy_from_slice(&packet.payload[..n]);
                        self.interrupts.deliver(address, u32::from_le_bytes(lanes));
                        Vec::new()
                    }
                    MemoryOp::Write if self.forwards_down(address) => {
                        // Peer-to-peer through the root complex: the
                        // write goes back down the link.
                        self.send(packet);
                        Vec::new()
                    }
                    MemoryOp::Write => {
                        self.write_memory(&packet);
                        Vec::new()
                    }
                    MemoryOp::Read
                        if !MSI_WINDOW.contains(&address) && !self.forwards_down(address) =>
                    {
                        self.read_memory(&packet)
                    }
                    // Peer reads through the root complex, reads of the
                    // interrupt window and other requests are not
                    // supported: UR (§2.3.1).
                    _ => self.reject(&packet),
                }
            }
            Body::Config(_) | Body::Io(_) => self.reject(&packet),
            Body::Message(_) => Vec::new(),
        }
    }

    fn reject(&mut self, packet: &Packet) -> Vec<Packet> {
        self.counters.rejected += 1;
        if packet.header.flow_control_class() != FlowControlClass::NonPosted {
            return Vec::new();
        }
        let info = RequestInfo::of(&packet.header);
        vec![packet::completion_for(
            &info,
            HOST_BRIDGE,
            CompletionStatus::UnsupportedRequest,
            4,
            0,
            None,
        )]
    }

    /// Applies a device's Memory Write to host memory, honouring its byte
    /// enables (§2.2.5).
    fn write_memory(&mut self, packet: &Packet) {
        let Some(request) = packet.memory() else {
            return;
        };
        let length = usize::from(request.length_dw) * 4;
        let payload = &packet.payload[..length.min(packet.payload.len())];
        let last_dw = usize::from(request.length_dw.max(1)) - 1;
        for (index, byte) in payload.iter().enumerate() {
            let dw = index / 4;
            let mask = if dw == 0 {
                request.first_be
            } else if dw == last_dw {
                request.last_be
            } else {
                0b1111
            };
            if mask & (1 << (index % 4)) != 0 {
                self.memory
                    .write(request.address.wrapping_add(index as u64), &[*byte]);
                self.counters.dma_written += 1;
            }
        }
    }

    /// Completes a device's read of host memory at the root complex's
    /// 64-byte Read Completion Boundary and its Max_Payload_Size
    /// (§2.3.1.1).
    fn read_memory(&mut self, packet: &Packet) -> Vec<Packet> {
        let Some(request) = packet.memory() else {
            return Vec::new();
        };
        let info = RequestInfo::of(&packet.header);
        let (first_be, _) = request.effective_byte_enables();
        let first = request.address + u64::from(first_be.trailing_zeros().min(3));
        let count = u64::from(request.completion_byte_count().unwrap_or(4));
        let Ok(chunks) = split_completion(first, count, self.max_payload(), Rcb::B64) else {
            return self.reject(packet);
        };
        self.counters.dma_read += count;
        chunks
            .map(|chunk| {
                let data = self
                    .memory
                    .read(chunk.address & !3, usize::from(chunk.length_dw) * 4);
                packet::completion_chunk(&info, HOST_BRIDGE, &chunk, data)
            })
            .collect()
    }

    fn receive_completion(&mut self, packet: &Packet) {
        let Some(completion) = packet.completion() else {
            return;
        };
        let tag = completion.tag.get();
        let Some(pending) = self.pending.get_mut(&tag) else {
            self.counters.unexpected_completions += 1;
            return;
        };
        let status = completion.status;
        match pending {
            Pending::Config { read } => {
                let outcome = if status != CompletionStatus::Successful {
                    Err(status)
                } else if *read {
                    let mut lanes = [0u8; 4];
                    let n = packet.payload.len().min(4);
                    lanes[..n].copy_from_slice(&packet.payload[..n]);
                    Ok(Some(u32::from_le_bytes(lanes)))
                } else {
                    Ok(None)
                };
                self.pending.remove(&tag);
                self.finished.insert(tag, Outcome::Config(outcome));
            }
            Pending::Read { data, received } => {
                if status != CompletionStatus::Successful {
                    self.pending.remove(&tag);
                    self.finished.insert(tag, Outcome::Read(Err(status)));
                    return;
                }
                // Byte Count is what remains of the request, this
                // completion included (§2.3.1.1).
                let total = data.len();
                let remaining = usize::from(completion.byte_count).min(total);
                let offset = total - remaining;
                let start = usize::from(completion.lower_address & 3);
                let count = remaining.min(packet.payload.len().saturating_sub(start));
                data[offset..offset + count].copy_from_slice(&packet.payload[start..start + count]);
                *received += count;
                if count == remaining || *received >= total {
                    if let Some(Pending::Read { data, .. }) = self.pending.remove(&tag) {
                        self.finished.insert(tag, Outcome::Read(Ok(data)));
                    }
                }
            }
        }
    }

    /// Whether a Request Retry Status completion of a Vendor ID read is
    /// shown to software as 0001h: CRS Software Visibility is enabled in
    /// Root Control (§2.3.2, §7.5.3.12).
    pub fn crs_visible(&self) -> bool {
        self.root_port
            .read_u16(ROOT_PORT_PCIE + pcie_cap::ROOT_CONTROL)
            & CRS_SOFTWARE_VISIBILITY_ENABLE
            != 0
    }
}
