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
    /// The request's counter is not newer than one already accepted, and
    /// the request is not a byte-identical repeat of one whose answer the
    /// switch still keeps. The answer to a request at protocol version 1
    /// only: a newer client gets [`Error::CounterTooOld`], which also says
    /// which counters are accepted and whether the request may have run.
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
    /// A config write would change a register the fabric manager
    /// programmed and keeps (such as the Command register, a BAR or the
    /// SR-IOV controls) or would reset the function (Function Level Reset,
    /// a power state other than D0), so it was refused and nothing was
    /// written. Protocol version 2.
    FabricOwnedRegister {
        /// The function.
        fabric_id: FabricId,
        /// The first byte of the write that the fabric owns.
        offset: u16,
    },
    /// The request's MAC verified, but its counter is not above
    /// `accepted_above` and the request is not a byte-identical repeat of
    /// one whose answer the switch still keeps; it was not run now. Sent
    /// only in answer to a request under the key (a request that fails its
    /// MAC learns nothing but [`Error::Unauthenticated`]; a replayed
    /// capture learns a counter, which every request shows in the clear
    /// anyway), to requests at protocol version 2 or later; version 1 gets
    /// [`Error::Replayed`].
    ///
    /// A switch's floor is ahead of a client's clock after a restart (it
    /// resumes from a mark kept above the last accepted counter) or when
    /// another client's clock is ahead. A client that sent this request
    /// once, or that is told `may_have_run: false`, sends it again as a new
    /// request with a counter above `accepted_above`. A client that sent it
    /// more than once and is told `may_have_run: true` must not: an earlier
    /// copy may have run, and its answer is gone.
    CounterTooOld {
        /// The newest counter the switch has accepted (or resumed from
        /// after a restart): only counters above it are accepted.
        accepted_above: u64,
        /// Whether a datagram identical to this one may have run since
        /// the switch started: its counter is at or below that of a
        /// request whose answer the switch no longer keeps. `false` means
        /// it did not run since the switch started.
        may_have_run: bool,
    },
    /// The port is a host's link: disabling it would cut the host off
    /// from every function bound to it, so it was refused. Protocol
    /// version 3.
    HostPort {
        /// The port.
        port: PortIndex,
        /// The host on it.
        host: HostIndex,
    },
    /// The port was disabled by a management request: nothing below it
    /// (or, for a fabric link, beyond it) can be bound until it is enabled
    /// again. Protocol version 3.
    PortDisabled {
        /// The port.
        port: PortIndex,
    },
    /// An unbind of the slot is already under way, waiting for the host to
    /// power the slot off (graceful or managed hot-remove); poll it, or
    /// take the function away now with a surprise unbind. Protocol
    /// version 4.
    UnbindInProgress {
        /// The host.
        host: HostIndex,
        /// The slot.
        slot: SlotIndex,
        /// The unbind under way.
        op: OperationId,
    },
    /// A CSR write would change a register the fabric manager or the
    /// firmware programs and keeps (a table entry, a port's role, the
    /// mailbox or the injector), so it was refused and nothing was
    /// written. Protocol version 4.
    FabricOwnedCsr {
        /// The address given.
        addr: u32,
    },
}

impl Error {
    /// The protocol version that introduced this variant: a switch tells
    /// a client of an older version [`Error::Unsupported`] instead.
    pub const fn introduced_in(&self) -> u16 {
        match self {
            Error::FabricOwnedRegister { .. } | Error::CounterTooOld { .. } => 2,
            Error::HostPort { .. } | Error::PortDisabled { .. } => 3,
            Error::UnbindInProgress { .. } | Error::FabricOwnedCsr { .. } => 4,
            _ => 1,
        }
    }
}

impl core::fmt::Display for Error {
    /// A sentence for an operator: what went wrong and, where there is one,
    /// what to do about it.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::Unauthenticated => f.write_str(
                "the switch refused the request: it is not signed with the switch's key \
                 (check the key file)",
            ),
            Error::Replayed => f.write_str(
                "the switch refused the request as a replay: its counter is not newer than one \
                 already used (check this machine's clock)",
            ),
            Error::WrongSwitch { ours } => write!(
                f,
                "the request is meant for another switch; this one is {:#x} (check the target)",
                ours.0
            ),
            Error::WrongVersion { ours, oldest } => write!(
                f,
                "the switch speaks protocol versions {oldest} to {ours} only; \
                 use a matching weftctl or update the firmware"
            ),
            Error::Malformed => f.write_str("the switch could not decode the request"),
            Error::Unsupported => {
                f.write_str("this switch's board or firmware does not support the request")
            }
            Error::Busy { retry_after_ms } => {
                write!(f, "the switch is busy; try again in {retry_after_ms} ms")
            }
            Error::StaleGeneration { current } => write!(
                f,
                "the fabric changed since it was read (now generation {}); read it again",
                current.0
            ),
            Error::NoSuchHost { host } => write!(f, "there is no host {}", host.0),
            Error::NoSuchSlot { host, slot } => write!(f, "host {} has no slot {}", host.0, slot.0),
            Error::NoSuchPort { port } => write!(f, "the switch has no port {}", port.0),
            Error::NoSuchEndpoint { fabric_id } => {
                write!(f, "no function has fabric ID {:#06x}", fabric_id.0)
            }
            Error::NoSuchOperation { op } => write!(f, "there is no operation {}", op.0),
            Error::EndpointBusy { fabric_id, owner } => write!(
                f,
                "function {:#06x} is bound to host {} slot {}; unbind it first",
                fabric_id.0, owner.host.0, owner.slot.0
            ),
            Error::SlotOccupied { host, slot, bound } => write!(
                f,
                "host {} slot {} already holds function {:#06x}; unbind it or choose another slot",
                host.0, slot.0, bound.0
            ),
            Error::SlotEmpty { host, slot } => {
                write!(f, "host {} slot {} has nothing bound", host.0, slot.0)
            }
            Error::HostLinkDown { host } => {
                write!(
                    f,
                    "host {}'s link is down, so it cannot see a hot-plug event",
                    host.0
                )
            }
            Error::NoFunctions => f.write_str("a bind needs at least one function"),
            Error::NotSameDevice { fabric_id } => write!(
                f,
                "function {:#06x} is not part of the same device as the first function of the bind",
                fabric_id.0
            ),
            Error::NotSriovCapable { fabric_id } => {
                write!(f, "function {:#06x} has no SR-IOV capability", fabric_id.0)
            }
            Error::TooManyVfs {
                fabric_id,
                total_vfs,
            } => {
                write!(
                    f,
                    "function {:#06x} supports at most {total_vfs} VFs",
                    fabric_id.0
                )
            }
            Error::VfBound { fabric_id, vf } => write!(
                f,
                "VF {:#06x} of function {:#06x} is bound; unbind its VFs first",
                vf.0, fabric_id.0
            ),
            Error::BadCursor { cursor } => {
                write!(
                    f,
                    "topology cursor {} is past the end; start again from 0",
                    cursor.0
                )
            }
            Error::FirmwareTooLarge { max } => {
                write!(f, "the image is larger than the {max}-byte partition")
            }
            Error::NoUpdateInProgress => {
                f.write_str("no firmware update is in progress; prepare one first")
            }
            Error::UpdateInProgress => {
                f.write_str("another firmware update is in progress; abort it first")
            }
            Error::BadChunk { resume_at } => {
                write!(
                    f,
                    "the firmware chunk was refused; resume from offset {resume_at}"
                )
            }
            Error::ImageIncomplete { received, size } => {
                write!(
                    f,
                    "only {received} of {size} image bytes arrived; send the rest first"
                )
            }
            Error::DigestMismatch => f.write_str(
                "the received image does not match the announced SHA-256; the update was abandoned",
            ),
            Error::BadToken => f.write_str("the token does not match; arm the operation again"),
            Error::TokenExpired => f.write_str("the token expired; arm the operation again"),
            Error::CsrOutOfRange { addr } => write!(f, "there is no CSR at {addr:#010x}"),
            Error::Misaligned { offset, width } => write!(
                f,
                "offset {offset:#x} is not aligned for a {width:?} access"
            ),
            Error::ConfigOutOfRange { offset } => write!(
                f,
                "config offset {offset:#x} is past the 4 KiB config space"
            ),
            Error::ConfigAccessFailed { fabric_id, status } => {
                write!(
                    f,
                    "function {:#06x} answered the config access with {status:?}",
                    fabric_id.0
                )
            }
            Error::FlashFailed { op } => write!(f, "the flash failed during {op:?}"),
            Error::NoSavedConfig => f.write_str("no configuration was ever saved"),
            Error::SavedConfigCorrupt => {
                f.write_str("the saved configuration is corrupt; save the current one again")
            }
            Error::FabricOwnedRegister { fabric_id, offset } => write!(
                f,
                "the write to config offset {offset:#05x} of function {:#06x} was refused: it \
                 would change what the fabric manager programmed (Command, BARs, Expansion ROM, \
                 SR-IOV, ACS Control) or reset the function (FLR, power state); nothing changed",
                fabric_id.0
            ),
            Error::CounterTooOld { accepted_above, .. } => write!(
                f,
                "the switch refused the request: its counter is not above {accepted_above}, \
                 the newest the switch accepted (it restarted recently, or this machine's clock \
                 is behind); send it again as a new request"
            ),
            Error::HostPort { port, host } => write!(
                f,
                "port {} is host {}'s link; disabling it would cut the host off, so nothing changed",
                port.0, host.0
            ),
            Error::PortDisabled { port } => write!(
                f,
                "port {} is disabled; enable it before binding what is below or beyond it",
                port.0
            ),
            Error::UnbindInProgress { host, slot, op } => write!(
                f,
                "host {} slot {} is already being unbound (operation {}), waiting for the host \
                 to power the slot off; poll the operation, or unbind with mode surprise to \
                 take the function away now",
                host.0, slot.0, op.0
            ),
            Error::FabricOwnedCsr { addr } => write!(
                f,
                "the write to CSR {addr:#010x} was refused: the fabric manager programs that \
                 register (tables, port roles, mailbox, injector); nothing changed"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::string::ToString;

    #[test]
    fn a_message_carries_the_values_an_operator_acts_on() {
        assert_eq!(
            Error::BadChunk { resume_at: 4096 }.to_string(),
            "the firmware chunk was refused; resume from offset 4096"
        );
        let busy = Error::EndpointBusy {
            fabric_id: FabricId(0x0300),
            owner: Owner {
                host: HostIndex(2),
                slot: SlotIndex(1),
            },
        };
        assert_eq!(
            busy.to_string(),
            "function 0x0300 is bound to host 2 slot 1; unbind it first"
        );
    }
}
