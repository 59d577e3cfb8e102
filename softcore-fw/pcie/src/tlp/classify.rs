//! What the switch needs to know about a header without looking at its fields one by one:
//! kind, ordering/flow-control class, routing, sizes (PCIe Base 6.0 §2.2.4, §2.4, §2.6.1).

use crate::id::Bdf;

use super::fields::Direction;
use super::fields::{Attributes, Tag, TrafficClass};
use super::fmt_type::TlpType;
use super::header::{Body, ConfigType, Header, MemoryOp};
use super::message::MessageRouting;

/// The address space or role of a TLP (§2.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TlpKind {
    /// A memory request: read, write or AtomicOp.
    Memory,
    /// An I/O request.
    Io,
    /// A configuration request.
    Config,
    /// A completion.
    Completion,
    /// A message.
    Message,
}

/// The three traffic classes that ordering (§2.4.1) and flow control
/// (§2.6.1) keep apart: each has its own credits and queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowControlClass {
    /// Posted requests: memory writes and messages. Need no completion.
    Posted,
    /// Non-posted requests: memory, I/O and configuration reads, I/O and
    /// configuration writes, AtomicOps.
    NonPosted,
    /// Completions.
    Completion,
}

/// The routing mechanism a TLP uses (§2.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoutingKind {
    /// By address: memory (AtomicOps included), I/O and address-routed messages.
    Address,
    /// By ID: configuration requests, completions and ID-routed messages.
    Id,
    /// Implicit: messages routed to the root, broadcast, local or gathered.
    Implicit,
}

/// Where a TLP goes: the routing mechanism together with its destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// Route by this address (§2.2.4.1).
    Address(u64),
    /// Route by this ID (§2.2.4.2): the target of a configuration request or
    /// ID-routed message, the requester of a completion.
    Id(Bdf),
    /// Route implicitly, as the message routing says (§2.2.8, Table 2-20).
    Implicit(MessageRouting),
}

impl Route {
    /// The mechanism without its destination.
    pub const fn kind(self) -> RoutingKind {
        match self {
            Self::Address(_) => RoutingKind::Address,
            Self::Id(_) => RoutingKind::Id,
            Self::Implicit(_) => RoutingKind::Implicit,
        }
    }
}

/// The length of a TLP Digest (ECRC), present when TD is set (§2.2.3).
pub const DIGEST_LEN: usize = 4;

impl Header {
    /// The TLP type, as Fmt/Type would encode it (Table 2-3).
    pub const fn tlp_type(&self) -> TlpType {
        match &self.body {
            Body::Memory(request) => match request.op {
                MemoryOp::Read => TlpType::MemoryRead,
                MemoryOp::ReadLocked => TlpType::MemoryReadLocked,
                MemoryOp::Write => TlpType::MemoryWrite,
                MemoryOp::FetchAdd => TlpType::FetchAdd,
                MemoryOp::Swap => TlpType::Swap,
                MemoryOp::CompareAndSwap => TlpType::CompareAndSwap,
            },
            Body::Io(request) => match request.direction {
                Direction::Read => TlpType::IoRead,
                Direction::Write => TlpType::IoWrite,
            },
            Body::Config(request) => match (request.config_type, request.direction) {
                (ConfigType::Type0, Direction::Read) => TlpType::ConfigRead0,
                (ConfigType::Type0, Direction::Write) => TlpType::ConfigWrite0,
                (ConfigType::Type1, Direction::Read) => TlpType::ConfigRead1,
                (ConfigType::Type1, Direction::Write) => TlpType::ConfigWrite1,
            },
            Body::Completion(completion) => match (completion.locked, completion.data_dw) {
                (false, None) => TlpType::Completion,
                (false, Some(_)) => TlpType::CompletionWithData,
                (true, None) => TlpType::CompletionLocked,
                (true, Some(_)) => TlpType::CompletionWithDataLocked,
            },
            Body::Message(message) => match message.data_dw {
                None => TlpType::Message(message.routing),
                Some(_) => TlpType::MessageWithData(message.routing),
            },
        }
    }

    /// Memory, I/O, configuration, completion or message.
    pub const fn kind(&self) -> TlpKind {
        match &self.body {
            Body::Memory(_) => TlpKind::Memory,
            Body::Io(_) => TlpKind::Io,
            Body::Config(_) => TlpKind::Config,
            Body::Completion(_) => TlpKind::Completion,
            Body::Message(_) => TlpKind::Message,
        }
    }

    /// Posted, non-posted or completion (§2.4.1 Table 2-42, §2.6.1).
    ///
    /// I/O and configuration writes are non-posted: they are completed. So
    /// are AtomicOps, which carry data but return the target's original
    /// value (§2.2.9: AtomicOp Requests require Completion).
    pub const fn flow_control_class(&self) -> FlowControlClass {
        match &self.body {
            Body::Memory(request) => match request.op {
                MemoryOp::Write => FlowControlClass::Posted,
                MemoryOp::Read
                | MemoryOp::ReadLocked
                | MemoryOp::FetchAdd
                | MemoryOp::Swap
                | MemoryOp::CompareAndSwap => FlowControlClass::NonPosted,
            },
            Body::Io(_) | Body::Config(_) => FlowControlClass::NonPosted,
            Body::Completion(_) => FlowControlClass::Completion,
            Body::Message(_) => FlowControlClass::Posted,
        }
    }

    /// Where the TLP is routed (§2.2.4, §2.3: completions route by their Requester ID).
    pub const fn route(&self) -> Route {
        match &self.body {
            Body::Memory(request) => Route::Address(request.address),
            Body::Io(request) => Route::Address(request.address as u64),
            Body::Config(request) => Route::Id(request.target),
            Body::Completion(completion) => Route::Id(completion.requester),
            Body::Message(message) => match (message.address(), message.target()) {
                (Some(address), _) => Route::Address(address),
                (_, Some(target)) => Route::Id(target),
                _ => Route::Implicit(message.routing),
            },
        }
    }

    /// Whether a data payload follows the header.
    pub const fn has_data(&self) -> bool {
        self.tlp_type().has_data()
    }

    /// The payload length in DW as the Length field gives it; 0 when the TLP carries no data.
    ///
    /// A memory read's Length is the data requested, not a payload, so it
    /// gives 0 here. An AtomicOp's Length is its payload, the operands.
    pub const fn payload_len_dw(&self) -> u16 {
        match &self.body {
            Body::Memory(request) => match request.op {
                MemoryOp::Write
                | MemoryOp::FetchAdd
                | MemoryOp::Swap
                | MemoryOp::CompareAndSwap => request.length_dw,
                MemoryOp::Read | MemoryOp::ReadLocked => 0,
            },
            Body::Io(request) => match request.direction {
                Direction::Write => 1,
                Direction::Read => 0,
            },
            Body::Config(request) => match request.direction {
                Direction::Write => 1,
                Direction::Read => 0,
            },
            Body::Completion(completion) => match completion.data_dw {
                Some(length_dw) => length_dw,
                None => 0,
            },
            Body::Message(message) => match message.data_dw {
                Some(length_dw) => length_dw,
                None => 0,
            },
        }
    }

    /// The payload length in bytes.
    pub const fn payload_len(&self) -> usize {
        self.payload_len_dw() as usize * 4
    }

    /// Bytes on the wire for this header with `prefix_count` TLP Prefixes:
    /// prefixes, header, payload, and the digest if TD is set (§2.1.2, §2.2.3).
    pub const fn total_len(&self, prefix_count: usize) -> usize {
        let digest = if self.digest_present { DIGEST_LEN } else { 0 };
        prefix_count * 4 + self.header_len() + self.payload_len() + digest
    }

    /// The Requester ID: of the request, or for a completion of the request it completes.
    pub const fn requester(&self) -> Bdf {
        match &self.body {
            Body::Memory(request) => request.requester,
            Body::Io(request) => request.requester,
            Body::Config(request) => request.requester,
            Body::Completion(completion) => completion.requester,
            Body::Message(message) => message.requester,
        }
    }

    /// The tag that, with [`Header::requester`], forms the Transaction ID (§2.2.6.2).
    pub const fn tag(&self) -> Tag {
        match &self.body {
            Body::Memory(request) => request.tag,
            Body::Io(request) => request.tag,
            Body::Config(request) => request.tag,
            Body::Completion(completion) => completion.tag,
            Body::Message(message) => Tag::from_8bit(message.tag),
        }
    }

    /// The Traffic Class; I/O and configuration requests are always TC0.
    pub const fn traffic_class(&self) -> TrafficClass {
        match &self.body {
            Body::Memory(request) => request.traffic_class,
            Body::Completion(completion) => completion.traffic_class,
            Body::Message(message) => message.traffic_class,
            Body::Io(_) | Body::Config(_) => TrafficClass::TC0,
        }
    }

    /// The attributes; I/O and configuration requests have none (§2.2.7.1).
    pub const fn attributes(&self) -> Attributes {
        match &self.body {
            Body::Memory(request) => request.attributes,
            Body::Completion(completion) => completion.attributes,
            Body::Message(message) => message.attributes,
            Body::Io(_) | Body::Config(_) => Attributes {
                relaxed_ordering: false,
                no_snoop: false,
                id_based_ordering: false,
            },
        }
    }
}
