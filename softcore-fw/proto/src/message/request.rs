//! What a client asks a switch to do.

use serde::{Deserialize, Serialize};

use super::fabric::{BoundFunctions, UnbindMode};
use super::ids::{
    Digest, EventSeq, FabricId, Generation, HostIndex, OperationId, PortIndex, SlotIndex, Token,
    TopologyCursor,
};
use super::ops::{AccessWidth, CounterKind, PortAction, ResetScope};

/// A request, the body of a request datagram.
///
/// Variants are only ever appended, never reordered or removed: postcard
/// encodes a variant by its position, and `tests/golden.rs` pins every one.
///
/// Requests are safe to retry: a client resends the same bytes, and the
/// server answers a repeat from its reply cache. Actions that must not
/// happen twice by accident (firmware commit, reset) are split into an arm
/// step that returns a [`Token`] and a trigger step that presents it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// Is the switch there? Answered with [`Response::Pong`](crate::Response::Pong).
    Ping,
    /// Who is the switch? Answered with
    /// [`Response::Identity`](crate::Response::Identity).
    Identify,
    /// One page of the fabric's topology, from `cursor` on. Answered with
    /// [`Response::Topology`](crate::Response::Topology).
    Topology {
        /// Where to start; [`TopologyCursor::START`] for the first page.
        cursor: TopologyCursor,
        /// For later pages, the generation the first page reported; a
        /// different current one is refused with `StaleGeneration`.
        generation: Option<Generation>,
    },
    /// One host's virtual switch: its slots and what is bound. Answered with
    /// [`Response::VirtualSwitch`](crate::Response::VirtualSwitch).
    VirtualSwitch {
        /// Which host.
        host: HostIndex,
    },
    /// Bind functions to a slot of a host's virtual switch; the host sees a
    /// hot-add. Usually answered with
    /// [`Response::InProgress`](crate::Response::InProgress).
    Bind {
        /// The host.
        host: HostIndex,
        /// The slot.
        slot: SlotIndex,
        /// The functions, function 0 first (up to 8, one device).
        functions: BoundFunctions,
        /// Refuse with `StaleGeneration` unless this is current.
        if_generation: Option<Generation>,
    },
    /// Unbind whatever is bound to a slot. Usually answered with
    /// [`Response::InProgress`](crate::Response::InProgress).
    Unbind {
        /// The host.
        host: HostIndex,
        /// The slot.
        slot: SlotIndex,
        /// How to take it away.
        mode: UnbindMode,
        /// Refuse with `StaleGeneration` unless this is current.
        if_generation: Option<Generation>,
    },
    /// Set a physical function's NumVFs (0 disables SR-IOV).
    SetNumVfs {
        /// The physical function.
        endpoint: FabricId,
        /// The new NumVFs.
        num_vfs: u16,
    },
    /// Act on a physical port.
    PortControl {
        /// The port.
        port: PortIndex,
        /// What to do.
        action: PortAction,
    },
    /// Read a port's counters. Answered with
    /// [`Response::Counters`](crate::Response::Counters).
    ReadCounters {
        /// The port.
        port: PortIndex,
    },
    /// Clear counters.
    ClearCounters {
        /// The port, or every port.
        port: Option<PortIndex>,
        /// The counter, or every counter.
        kind: Option<CounterKind>,
    },
    /// Read the event log from a sequence number on. Answered with
    /// [`Response::Events`](crate::Response::Events).
    ReadEvents {
        /// The first entry wanted; `EventSeq(0)` for the oldest kept.
        from: EventSeq,
    },
    /// Save the current configuration (bindings, NumVFs, port settings) to
    /// flash, so it is applied at the next start.
    SaveConfig,
    /// Apply the configuration saved in flash now.
    RestoreConfig,
    /// Start a firmware update into the partition not running.
    FirmwarePrepare {
        /// The image's size in bytes.
        size: u32,
        /// The image's SHA-256.
        digest: Digest,
    },
    /// Write a piece of the image. The bytes trail the message (at most
    /// [`MAX_CHUNK`](crate::MAX_CHUNK)); chunks are written in order, and a
    /// refused chunk says where to resume. Answered with
    /// [`Response::ChunkAccepted`](crate::Response::ChunkAccepted).
    FirmwareChunk {
        /// Where the trailing bytes go in the image.
        offset: u32,
    },
    /// Where the update stands. Answered with
    /// [`Response::FirmwareStatus`](crate::Response::FirmwareStatus).
    FirmwareStatus,
    /// First phase of a commit: check the image is complete and verified,
    /// and get a token. Answered with
    /// [`Response::CommitPrepared`](crate::Response::CommitPrepared).
    FirmwarePrepareCommit,
    /// Second phase of a commit: boot the new image on trial. If it does not
    /// check in, the switch boots the old image again.
    FirmwareCommit {
        /// The token from the first phase.
        token: Token,
    },
    /// Abandon the update; the running image was never touched.
    FirmwareAbort,
    /// First phase of a reset: get a token that expires soon. Answered with
    /// [`Response::ResetArmed`](crate::Response::ResetArmed).
    ResetArm {
        /// What to reset.
        scope: ResetScope,
    },
    /// Second phase of a reset: reset, after sending the answer.
    ResetTrigger {
        /// The token from the first phase.
        token: Token,
    },
    /// Read a data-plane or SoC CSR (diagnostics). Answered with
    /// [`Response::Csr`](crate::Response::Csr).
    CsrRead {
        /// The CSR's byte address, aligned to 4.
        addr: u32,
    },
    /// Write a CSR (diagnostics; bypasses the fabric manager).
    CsrWrite {
        /// The CSR's byte address, aligned to 4.
        addr: u32,
        /// The value.
        value: u32,
    },
    /// Read a function's config space in the fabric domain (diagnostics).
    /// Answered with [`Response::Config`](crate::Response::Config).
    ConfigRead {
        /// The function.
        target: FabricId,
        /// The byte offset.
        offset: u16,
        /// How many bytes.
        width: AccessWidth,
    },
    /// Write a function's config space (diagnostics). A switch refuses a
    /// write that would undo what its fabric manager programmed or reset
    /// the function, with
    /// [`Error::FabricOwnedRegister`](crate::Error::FabricOwnedRegister)
    /// (protocol version 2).
    ConfigWrite {
        /// The function.
        target: FabricId,
        /// The byte offset.
        offset: u16,
        /// How many bytes.
        width: AccessWidth,
        /// The value, in the low bytes.
        value: u32,
    },
    /// Where a background operation stands. Answered with
    /// [`Response::Operation`](crate::Response::Operation).
    OperationStatus {
        /// The operation.
        op: OperationId,
    },
}

impl Request {
    /// Whether bulk bytes may trail this request in its datagram. Only a
    /// firmware chunk carries any; the codec refuses trailing bytes on
    /// every other request rather than ignore them.
    pub const fn takes_trailing(&self) -> bool {
        matches!(self, Request::FirmwareChunk { .. })
    }

    /// Whether a switch accepts this request addressed to
    /// [`SwitchId::ANY`](crate::SwitchId::ANY): only requests that change
    /// nothing and reveal only what a switch says about itself.
    pub const fn allows_any_switch(&self) -> bool {
        matches!(self, Request::Ping | Request::Identify)
    }
}
