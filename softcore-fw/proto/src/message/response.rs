//! What a switch answers.

use serde::{Deserialize, Serialize};

use super::error::Error;
use super::fabric::{Identity, TopologyItem, TopologyPage, VirtualSwitchInfo};
use super::ids::{FabricId, OperationId, Token};
use super::ops::{
    EventPage, FirmwareStatus, OperationReport, OperationState, PortCounters, UpdateState,
};

/// A response, the body of a response datagram.
///
/// Variants are only ever appended, never reordered or removed: postcard
/// encodes a variant by its position, and `tests/golden.rs` pins every one.
/// A switch answers a client with only the variants that existed at the
/// protocol version the request carried.
///
/// The pages are held inline, not boxed: the crate runs without an
/// allocator, and the firmware keeps one response in static memory.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Response {
    /// The answer to a ping.
    Pong,
    /// Who the switch is.
    Identity(Identity),
    /// One page of the topology.
    Topology(TopologyPage),
    /// One host's virtual switch.
    VirtualSwitch(VirtualSwitchInfo),
    /// The request was carried out completely.
    Done,
    /// The request started a background operation; poll it with
    /// [`Request::OperationStatus`](crate::Request::OperationStatus).
    InProgress {
        /// The operation.
        op: OperationId,
    },
    /// Where a background operation stands.
    Operation(OperationReport),
    /// A port's counters.
    Counters(PortCounters),
    /// One page of the event log.
    Events(EventPage),
    /// The firmware partitions and update state.
    FirmwareStatus(FirmwareStatus),
    /// A firmware chunk was written.
    ChunkAccepted {
        /// The offset to send next.
        next_offset: u32,
    },
    /// The commit is prepared; trigger it with this token.
    CommitPrepared {
        /// Present it in [`Request::FirmwareCommit`](crate::Request::FirmwareCommit).
        token: Token,
    },
    /// The reset is armed; trigger it with this token before it expires.
    ResetArmed {
        /// Present it in [`Request::ResetTrigger`](crate::Request::ResetTrigger).
        token: Token,
        /// How long the token stays valid.
        expires_in_ms: u32,
    },
    /// A CSR's value.
    Csr {
        /// The address read.
        addr: u32,
        /// Its value.
        value: u32,
    },
    /// A config-space value.
    Config {
        /// The function read.
        target: FabricId,
        /// The offset read.
        offset: u16,
        /// The value, in the low bytes.
        value: u32,
    },
    /// The request was refused or failed.
    Error(Error),
}

impl Response {
    /// The protocol version that introduced what this response carries:
    /// its own variant and any error inside it.
    pub fn introduced_in(&self) -> u16 {
        match self {
            Response::Error(error)
            | Response::Operation(OperationReport {
                state: OperationState::Failed { reason: error },
                ..
            })
            | Response::FirmwareStatus(FirmwareStatus {
                state: UpdateState::Failed { reason: error },
                ..
            }) => error.introduced_in(),
            Response::Events(page) => page
                .events
                .iter()
                .map(|e| e.kind.introduced_in())
                .max()
                .unwrap_or(1),
            Response::Counters(counters) => counters
                .values
                .iter()
                .map(|c| c.kind.introduced_in())
                .max()
                .unwrap_or(1),
            Response::Topology(page) => page
                .items
                .iter()
                .map(|item| match item {
                    TopologyItem::Port(port) => port.role.introduced_in(),
                    _ => 1,
                })
                .max()
                .unwrap_or(1),
            _ => 1,
        }
    }

    /// Makes this response one a client speaking protocol `version` can
    /// decode: an event page without the entries of kinds introduced after
    /// that version (their sequence numbers are missing from it), a port's
    /// counters without the kinds introduced after that version, a
    /// topology page with each port's role as that version knows it
    /// ([`PortRole::for_version`](crate::PortRole::for_version)), any
    /// other response unchanged or, when it carries a variant introduced
    /// after that version, [`Error::Unsupported`] (the switch cannot say
    /// more to that client). In place, since a response may be a whole page.
    pub fn downgrade_for(&mut self, version: u16) {
        match self {
            Response::Events(page) => page.events.retain(|e| e.kind.introduced_in() <= version),
            Response::Counters(counters) => counters
                .values
                .retain(|c| c.kind.introduced_in() <= version),
            Response::Topology(page) => {
                for item in page.items.iter_mut() {
                    if let TopologyItem::Port(port) = item {
                        port.role = port.role.for_version(version);
                    }
                }
            }
            _ => {}
        }
        if self.introduced_in() > version {
            *self = Response::Error(Error::Unsupported);
        }
    }

    /// Whether bulk bytes may trail this response in its datagram. No
    /// response carries any yet; the parameter exists so that one can be
    /// added without changing the codec's shape.
    pub const fn takes_trailing(&self) -> bool {
        false
    }
}
