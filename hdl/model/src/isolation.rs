//! Why the switch drops a TLP, and the completion it answers a dropped request with.

use weft_pcie::tlp::{Body, Completion, CompletionStatus, Header, MemoryOp};
use weft_pcie::Bdf;

use crate::packet::Packet;

/// Every reason the switch drops a TLP; each is counted per ingress port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The bytes are not a well-formed TLP (PCIe Base 6.0 §2.3.1 Malformed TLP).
    Malformed,
    /// The ingress port is disabled.
    PortDisabled,
    /// A request from an endpoint that is bound to no host.
    Unbound,
    /// A request whose requester ID is not below the port it came in on
    /// (ACS Source Validation, §6.12.1.1).
    SpoofedRequester,
    /// A host memory request that hits none of the host's windows.
    NoWindow,
    /// A request that a window covers but does not permit (a write to a read-only window).
    Forbidden,
    /// An endpoint's DMA address that does not fit its owner's aperture.
    OutsideAperture,
    /// A request type the fabric does not carry (I/O; configuration from an endpoint).
    Unsupported,
    /// No routing table entry leads anywhere.
    NoRoute,
    /// The route leads back out of the ingress port, and the port does not
    /// return it: it is not an endpoint port with
    /// [`crate::PortTables::return_to_ingress`], or the TLP is a completion
    /// between functions of different owners.
    RoutesToIngress,
    /// A completion that answers no outstanding request (late after a timeout, or never asked).
    UnexpectedCompletion,
    /// A TLP for a host carries a requester or completer that the host's ID map does not know.
    UnknownFunction,
}

impl DropReason {
    /// Every reason, in counter order.
    pub const ALL: [DropReason; 12] = [
        DropReason::Malformed,
        DropReason::PortDisabled,
        DropReason::Unbound,
        DropReason::SpoofedRequester,
        DropReason::NoWindow,
        DropReason::Forbidden,
        DropReason::OutsideAperture,
        DropReason::Unsupported,
        DropReason::NoRoute,
        DropReason::RoutesToIngress,
        DropReason::UnexpectedCompletion,
        DropReason::UnknownFunction,
    ];
}

/// The status of the completion the switch answers `request` with when
/// it drops it at its ingress for `reason`, at a port whose role the
/// fabric manager has `settled` or not; `None` when it sends none.
///
/// A malformed TLP is never answered (§2.3.1: its fields cannot be
/// trusted). Nor is anything at a disabled port, but a Configuration
/// Request before the port is settled: the switch is not yet ready after
/// reset, and Request Retry Status makes the host ask again rather than
/// time out (§2.3.1, §6.6.1). Every other drop is an Unsupported Request;
/// [`error_completion`] then answers non-posted requests only.
pub fn refusal_status(
    request: &Header,
    reason: DropReason,
    settled: bool,
) -> Option<CompletionStatus> {
    match reason {
        DropReason::Malformed => None,
        DropReason::PortDisabled => (!settled && matches!(request.body, Body::Config(_)))
            .then_some(CompletionStatus::RequestRetry),
        _ => Some(CompletionStatus::UnsupportedRequest),
    }
}

/// The completion that tells `request`'s requester it was not carried out.
///
/// Only non-posted requests are answered (§2.3.1: a posted request has no
/// completion to carry the error). The completion copies the request's
/// requester ID, tag, traffic class and attributes (§2.2.9), carries no
/// data, and for a memory read has the Byte Count and Lower Address of the
/// whole request (§2.3.1.1), so the requester retires it at once.
pub fn error_completion(
    request: &Header,
    completer: Bdf,
    status: CompletionStatus,
) -> Option<Packet> {
    let (byte_count, lower) = match &request.body {
        // §2.3.1.1 and §2.2.9.1: the whole request's Byte Count (the operand
        // size for an AtomicOp) and the Lower Address of its first byte.
        Body::Memory(m) => match (m.completion_byte_count(), m.completion_lower_address()) {
            (Some(byte_count), Some(lower)) => (byte_count, lower),
            _ => return None,
        },
        Body::Io(_) | Body::Config(_) => (4, 0),
        _ => return None,
    };
    let locked = matches!(&request.body, Body::Memory(m) if m.op == MemoryOp::ReadLocked);
    let completion = Completion {
        locked,
        traffic_class: request.traffic_class(),
        attributes: request.attributes(),
        completer,
        status,
        byte_count_modified: false,
        byte_count,
        requester: request.requester(),
        tag: request.tag(),
        lower_address: lower,
        data_dw: None,
    };
    Some(Packet::new(
        Header {
            digest_present: false,
            poisoned: false,
            body: Body::Completion(completion),
        },
        Vec::new(),
    ))
}
