//! Transaction Layer Packets: header formats, their wire encoding, and the rules receivers check
//! (PCIe Base 6.0 §2.2, Non-Flit Mode).
//!
//! - [`layout`]: where every header field sits; the one definition the RTL also slices by.
//! - [`Header`]: a decoded header, encoded with [`Header::encode`] and decoded
//!   with [`Header::decode`], which reject what §2.2 calls Malformed.
//! - [`Tlp`]: prefixes, header, payload and digest of a whole TLP, with its length checked.
//! - [`Prefixes`]: the TLP Prefixes in front of a header (§2.2.10).
//! - Classification for routing, ordering and flow control: [`Header::kind`],
//!   [`Header::flow_control_class`], [`Header::route`], [`Header::total_len`].
//! - What a completer needs for a memory read: [`read_request_byte_count`] and [`lower_address`];
//!   for any non-posted memory request, AtomicOps included:
//!   [`MemoryRequest::completion_data_dw`], [`MemoryRequest::completion_byte_count`]
//!   and [`MemoryRequest::completion_lower_address`].
//!
//! Decoding never panics, whatever the input; each rejection is a
//! [`TlpError`] variant carrying the values at fault.
//!
//! AtomicOps (FetchAdd, Swap, CAS) are memory requests ([`MemoryOp`]) with
//! the rules of §2.2.7.1 checked; see [`MemoryRequest`]. Deferrable Memory
//! Writes and Flit Mode headers are not modelled: DMWr decodes to
//! [`TlpError::UnsupportedFmtType`].

mod byte_enables;
mod classify;
mod error;
mod fields;
mod fmt_type;
mod header;
pub mod layout;
mod message;
mod packet;
mod prefix;
mod read_completion;

#[cfg(test)]
mod tests;

pub use byte_enables::{byte_enables_are_legal, check_byte_enables};
pub use classify::{FlowControlClass, Route, RoutingKind, TlpKind, DIGEST_LEN};
pub use error::TlpError;
pub use fields::{
    byte_count_from_field, byte_count_to_field, length_from_field, length_to_field, AddressType,
    Attributes, Direction, ProcessingHint, Tag, TrafficClass, MAX_BYTE_COUNT, MAX_LENGTH_DW,
};
pub use fmt_type::{header_dws_for_fmt, TlpType};
pub use header::{
    Body, Completion, CompletionStatus, ConfigRequest, ConfigType, Header, IoRequest, MemoryOp,
    MemoryRequest, Message, FOUR_GIB,
};
pub use message::{IntxPin, MessageCode, MessageRouting};
pub use packet::Tlp;
pub use prefix::{
    Prefix, PrefixScope, Prefixes, MAX_END_END_PREFIXES, MAX_LOCAL_PREFIXES, MAX_PREFIXES,
};
pub use read_completion::{lower_address, read_request_byte_count};
