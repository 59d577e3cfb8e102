//! Constructors for the requests and completions an endpoint model sends.
//!
//! Packets are weft-model's owned TLPs ([`Packet`]), whose header is
//! weft-pcie's, so every field and encoding comes from there and the models
//! plug behind the simulator's links and switches without conversion.

use weft_pcie::split::{CompletionChunk, RequestChunk};
use weft_pcie::tlp::{
    AddressType, Attributes, Body, Completion, CompletionStatus, ConfigRequest, ConfigType, Header,
    MemoryOp, MemoryRequest, Tag, TrafficClass,
};
use weft_pcie::Bdf;

pub use weft_model::Packet;

/// A header with TD and EP clear around `body`.
const fn plain(body: Body) -> Header {
    Header {
        digest_present: false,
        poisoned: false,
        body,
    }
}

/// A Memory Write carrying `data` for one chunk of a split write
/// ([`weft_pcie::split::split_write`]); `data` holds the chunk's
/// `len` bytes and is placed after the chunk's offset in its first DW.
pub fn write_chunk(requester: Bdf, chunk: &RequestChunk, data: &[u8]) -> Packet {
    let mut payload = vec![0; usize::from(chunk.length_dw) * 4];
    let start = (chunk.address & 3) as usize;
    let len = data.len().min(payload.len() - start);
    payload[start..start + len].copy_from_slice(&data[..len]);
    let request = memory_request(MemoryOp::Write, requester, Tag::from_8bit(0), chunk);
    Packet::new(plain(Body::Memory(request)), payload)
}

/// A Memory Read Request for one chunk of a split read
/// ([`weft_pcie::split::split_read`]).
pub fn read_chunk(requester: Bdf, tag: Tag, chunk: &RequestChunk) -> Packet {
    let request = memory_request(MemoryOp::Read, requester, tag, chunk);
    Packet::new(plain(Body::Memory(request)), Vec::new())
}

/// A Type 0 Configuration Read of the DW holding byte `offset`.
pub fn config_read(requester: Bdf, tag: Tag, target: Bdf, offset: u16) -> Packet {
    let request = ConfigRequest::new(ConfigType::Type0, requester, tag, target, offset, None);
    Packet::new(plain(Body::Config(request)), Vec::new())
}

/// A Type 0 Configuration Write of `value` (byte lanes selected by
/// `byte_enables`) into the DW holding byte `offset`. The payload is the
/// DW in configuration-space byte order: byte 0 of the register first.
pub fn config_write(
    requester: Bdf,
    tag: Tag,
    target: Bdf,
    offset: u16,
    value: u32,
    byte_enables: u8,
) -> Packet {
    let request = ConfigRequest::new(
        ConfigType::Type0,
        requester,
        tag,
        target,
        offset,
        Some(byte_enables),
    );
    Packet::new(plain(Body::Config(request)), value.to_le_bytes().to_vec())
}

/// The completion answering a request with `requester`, `tag`, TC and
/// attributes; `data` is `Some` for a CplD (its DWs) and `None` for a Cpl.
pub fn completion_for(
    request: &RequestInfo,
    completer: Bdf,
    status: CompletionStatus,
    byte_count: u16,
    lower_address: u8,
    data: Option<Vec<u8>>,
) -> Packet {
    let data_dw = data.as_ref().map(|bytes| (bytes.len() / 4) as u16);
    let completion = Completion {
        locked: false,
        traffic_class: request.traffic_class,
        attributes: request.attributes,
        completer,
        status,
        byte_count_modified: false,
        byte_count,
        requester: request.requester,
        tag: request.tag,
        lower_address,
        data_dw,
    };
    Packet::new(
        plain(Body::Completion(completion)),
        data.unwrap_or_default(),
    )
}

/// One CplD of a split read completion: `data` holds the chunk's DWs,
/// starting with the DW that holds `chunk.address`.
pub fn completion_chunk(
    request: &RequestInfo,
    completer: Bdf,
    chunk: &CompletionChunk,
    data: Vec<u8>,
) -> Packet {
    completion_for(
        request,
        completer,
        CompletionStatus::Successful,
        chunk.byte_count,
        chunk.lower_address,
        Some(data),
    )
}

/// What a completer copies from a non-posted request into its completions
/// (§2.2.9.1: Requester ID, Tag, TC and Attr).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestInfo {
    /// Requester ID: routes the completion back.
    pub requester: Bdf,
    /// Tag.
    pub tag: Tag,
    /// Traffic class.
    pub traffic_class: TrafficClass,
    /// Attributes.
    pub attributes: Attributes,
}

impl RequestInfo {
    /// The fields of `header`, whatever its type.
    pub const fn of(header: &Header) -> Self {
        RequestInfo {
            requester: header.requester(),
            tag: header.tag(),
            traffic_class: header.traffic_class(),
            attributes: header.attributes(),
        }
    }
}

fn memory_request(op: MemoryOp, requester: Bdf, tag: Tag, chunk: &RequestChunk) -> MemoryRequest {
    MemoryRequest {
        op,
        traffic_class: TrafficClass::TC0,
        attributes: Attributes::default(),
        address_type: AddressType::default(),
        requester,
        tag,
        address: chunk.dw_address(),
        length_dw: chunk.length_dw,
        first_be: chunk.first_be,
        last_be: chunk.last_be,
        processing_hint: None,
    }
}
