//! Why the switch refused or failed a request: one variant per cause, each
//! carrying the values that explain it, so a client can act on it (back off,
//! resume a transfer, name the host that owns an endpoint) without parsing
//! text.

use serde::{Deserialize, Serialize};

use super::fabric::Owner;
use super::ids::{
    FabricId, Generation, HostIndex, OperationId, PortIndex, SlotIndex, SwitchId, TopologyCursor,
};
use super::ops::AccessWidth;

/// How a config request to an endpoint completed, when it did not complete
/// successfully (PCIe Base 6.0 §2.2.9.1, Completion Status).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CompletionStatus {
    /// Unsupported Request.
    UnsupportedRequest,
    /// Completer Abort.
    CompleterAbort,
    /// Configuration Request Retry Status, for longer than the switch waits.
    RetryStatus,
    /// No completion arrived in time.
    Timeout,
}

/// A flash operation, named in a flash failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FlashOp {
    /// Reading.
    Read,
    /// Erasing a sector.
    Erase,
    /// Programming a page.
    Program,
    /// Reading back what was programmed.
    Verify,
}

/// A refusal or failure, sent as [`Response::Error`](crate::Response::Error)
/// or inside a failed operation's state.
///
/// Variants are only ever appended (see the crate's versioning rules).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Error {
    /// The request's MAC did not verify under this switch's key. Nothing else
    /// is said to a sender that does not hold the key.
    Unauthenticated,
    /// The request's counter is not newer than one already accepted, and the
    /// request is not a byte-identical repeat of one recently answered.
    Replayed,
    /// The request names another switch as its target.
    WrongSwitch {
        /// This switch's identity.
        ours: SwitchId,
    },
    /// The request's protocol version is one this switch does not speak.
    WrongVersion {
        /// The newest version this switch speaks.
        ours: u16,
        /// The oldest version this switch still accepts.
        oldest: u16,
    },
    /// The request's body did not decode: an unknown variant (from a newer
    /// client) or damaged bytes that still carried a valid MAC, or trailing
    /// bytes on a request that takes none.
    Malformed,
    /// This switch knows the request but cannot do it (the board or the
    /// build lacks the feature).
    Unsupported,
    /// The switch is busy with something that conflicts; try again later
    /// with a new request.
    Busy {
        /// How long to wait before trying again.
        retry_after_ms: u32,
    },
    /// A precondition named a generation that is no longer current.
    StaleGeneration {
        /// The current generation.
        current: Generation,
    },
    /// No such host.
    NoSuchHost {
        /// The host named.
        host: HostIndex,
    },
    /// The host's virtual switch has no such slot.
    NoSuchSlot {
        /// The host named.
        host: HostIndex,
        /// The slot named.
        slot: SlotIndex,
    },
    /// The switch has no such port.
    NoSuchPort {
        /// The port named.
        port: PortIndex,
    },
    /// No function has this fabric ID.
    NoSuchEndpoint {
        /// The ID named.
        fabric_id: FabricId,
    },
    /// No operation has this ID (it finished long ago, or never existed).
    NoSuchOperation {
        /// The ID named.
        op: OperationId,
    },
    /// The function is bound elsewhere.
    EndpointBusy {
        /// The function.
        fabric_id: FabricId,
        /// Where it is bound.
        owner: Owner,
    },
    /// The slot already has something bound.
    SlotOccupied {
        /// The host.
        host: HostIndex,
        /// The slot.
        slot: SlotIndex,
        /// Function 0 of what is bound there.
        bound: FabricId,
    },
    /// The slot has nothing bound.
    SlotEmpty {
        /// The host.
        host: HostIndex,
        /// The slot.
        slot: SlotIndex,
    },
    /// The host's link is down, so it cannot see a hot-plug event.
    HostLinkDown {
        /// The host.
        host: HostIndex,
    },
    /// A bind named no functions.
    NoFunctions,
    /// The functions of one bind must belong to one device; this one does
    /// not belong with the first.
    NotSameDevice {
        /// The odd function.
        fabric_id: FabricId,
    },
    /// The function has no SR-IOV capability.
    NotSriovCapable {
        /// The function.
        fabric_id: FabricId,
    },
    /// More VFs than the function's TotalVFs.
    TooManyVfs {
        /// The function.
        fabric_id: FabricId,
        /// Its TotalVFs.
        total_vfs: u16,
    },
    /// NumVFs cannot change while one of the VFs is bound.
    VfBound {
        /// The physical function.
        fabric_id: FabricId,
        /// A bound VF.
        vf: FabricId,
    },
    /// The cursor is past the end of the topology.
    BadCursor {
        /// The cursor given.
        cursor: TopologyCursor,
    },
    /// The image does not fit a firmware partition.
    FirmwareTooLarge {
        /// The largest image that fits.
        max: u32,
    },
    /// A firmware chunk, status-changing or commit request came with no
    /// update prepared.
    NoUpdateInProgress,
    /// A firmware prepare came while another update is under way; abort it
    /// first.
    UpdateInProgress,
    /// A firmware chunk was refused (wrong offset, past the image's end,
    /// empty or too long); send from `resume_at`.
    BadChunk {
        /// The offset the switch expects next.
        resume_at: u32,
    },
    /// A commit came before every byte of the image arrived.
    ImageIncomplete {
        /// Bytes received in order.
        received: u32,
        /// The image's size.
        size: u32,
    },
    /// The received image's SHA-256 is not the one announced in the prepare.
    DigestMismatch,
    /// The token does not match the one the first phase returned.
    BadToken,
    /// The first phase's token expired; start again.
    TokenExpired,
    /// No CSR at this address.
    CsrOutOfRange {
        /// The address given.
        addr: u32,
    },
    /// The offset is not aligned to the access width.
    Misaligned {
        /// The offset or address given.
        offset: u32,
        /// The width asked for.
        width: AccessWidth,
    },
    /// The offset is past the end of config space (4 KiB, PCIe Base 6.0
    /// §7.2.2).
    ConfigOutOfRange {
        /// The offset given.
        offset: u16,
    },
    /// The endpoint did not complete the config access successfully.
    ConfigAccessFailed {
        /// The endpoint.
        fabric_id: FabricId,
        /// How it completed.
        status: CompletionStatus,
    },
    /// The flash failed.
    FlashFailed {
        /// While doing what.
        op: FlashOp,
    },
    /// No configuration was ever saved.
    NoSavedConfig,
    /// The saved configuration failed its integrity check.
    SavedConfigCorrupt,
}
