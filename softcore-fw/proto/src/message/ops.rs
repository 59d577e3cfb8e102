//! The values that operations on the switch carry: port actions, counters,
//! events, firmware update state, background operations and diagnostics.

use heapless::Vec;
use serde::{Deserialize, Serialize};

use super::error::Error;
use super::fabric::{PortRef, UnbindMode};
use super::ids::{EventSeq, FabricId, HostIndex, OperationId, PortIndex, SlotIndex};

/// The most counters one port reports in one answer.
pub const MAX_COUNTERS: usize = 32;

/// The most events one page of the event log carries.
pub const EVENTS_PAGE_LEN: usize = 32;

/// The most firmware bytes that trail one
/// [`FirmwareChunk`](crate::Request::FirmwareChunk) request. A power of two,
/// so that flash pages split evenly, and small enough that the chunk and its
/// request fit one datagram.
pub const MAX_CHUNK: usize = 1024;

/// What to do to a physical port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PortAction {
    /// Allow the link to train.
    Enable,
    /// Hold the link down (Link Disable, PCIe Base 6.0 §7.5.3.7).
    Disable,
    /// Send a hot reset to the link partner (PCIe Base 6.0 §4.2.7.4).
    HotReset,
    /// Retrain the link (Retrain Link, PCIe Base 6.0 §7.5.3.7).
    Retrain,
}

/// The width of a config-space access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AccessWidth {
    /// One byte.
    Byte,
    /// Two bytes, aligned to two.
    Word,
    /// Four bytes, aligned to four.
    Dword,
}

/// What a reset resets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ResetScope {
    /// Restart the firmware; the data plane keeps forwarding.
    Firmware,
    /// Restart the firmware and reset the data plane (every link drops).
    Switch,
}

/// What one counter counts. Every port has a value per kind; drops are
/// counted per reason so an operator can tell a routing hole from an
/// isolation violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CounterKind {
    /// TLPs received.
    RxTlps,
    /// TLPs sent.
    TxTlps,
    /// Payload bytes received.
    RxPayloadBytes,
    /// Payload bytes sent.
    TxPayloadBytes,
    /// Posted requests received.
    RxPosted,
    /// Non-posted requests received.
    RxNonPosted,
    /// Completions received.
    RxCompletions,
    /// Dropped: no route table entry matched.
    DroppedNoRoute,
    /// Dropped: the source may not reach the target (isolation).
    DroppedIsolation,
    /// Dropped: the TLP was malformed (PCIe Base 6.0 §2.3).
    DroppedMalformed,
    /// Dropped: the TLP was poisoned.
    DroppedPoisoned,
    /// Unsupported Request completions the switch synthesized.
    UnsupportedRequests,
    /// Non-posted requests the switch completed because they timed out.
    CompletionTimeouts,
    /// Completions the switch synthesized for requests to a removed endpoint.
    SynthesizedCompletions,
    /// Cycles egress waited for the link partner's flow-control credits.
    CreditStallCycles,
    /// Times the link went down.
    LinkDowns,
    /// Posted requests sent. Protocol version 3, as are the kinds after it.
    TxPosted,
    /// Non-posted requests sent.
    TxNonPosted,
    /// Completions sent.
    TxCompletions,
    /// Bytes of the TLPs received, as on the wire (prefixes, header,
    /// payload, digest), where [`CounterKind::RxPayloadBytes`] counts
    /// payload only.
    RxWireBytes,
    /// Bytes of the TLPs sent, as on the wire.
    TxWireBytes,
    /// Dropped: the port is disabled.
    DroppedPortDisabled,
    /// Dropped: a request type the fabric does not carry (I/O,
    /// configuration from an endpoint).
    DroppedUnsupportedType,
    /// Dropped: the route leads back out of the port it came in on.
    DroppedRoutesToIngress,
    /// Dropped: a completion that answers no outstanding request.
    DroppedUnexpectedCompletion,
    /// Dropped: a TLP for a host whose ID map does not know its requester
    /// or completer.
    DroppedUnknownFunction,
    /// Dropped by isolation: a request from an endpoint bound to no host
    /// (one part of [`CounterKind::DroppedIsolation`], as are the four after it).
    DroppedUnbound,
    /// Dropped by isolation: a requester ID not below the port (ACS Source
    /// Validation, PCIe Base 6.0 §6.12.1.1).
    DroppedSpoofedRequester,
    /// Dropped by isolation: a host memory request inside none of the host's windows.
    DroppedNoWindow,
    /// Dropped by isolation: a window covers the request but does not permit it.
    DroppedForbidden,
    /// Dropped by isolation: an endpoint's DMA address outside its owner's aperture.
    DroppedOutsideAperture,
}

impl CounterKind {
    /// The protocol version that introduced this kind: a switch leaves it
    /// out of the counters it sends a client of an older version.
    pub const fn introduced_in(&self) -> u16 {
        match self {
            CounterKind::TxPosted
            | CounterKind::TxNonPosted
            | CounterKind::TxCompletions
            | CounterKind::RxWireBytes
            | CounterKind::TxWireBytes
            | CounterKind::DroppedPortDisabled
            | CounterKind::DroppedUnsupportedType
            | CounterKind::DroppedRoutesToIngress
            | CounterKind::DroppedUnexpectedCompletion
            | CounterKind::DroppedUnknownFunction
            | CounterKind::DroppedUnbound
            | CounterKind::DroppedSpoofedRequester
            | CounterKind::DroppedNoWindow
            | CounterKind::DroppedForbidden
            | CounterKind::DroppedOutsideAperture => 3,
            _ => 1,
        }
    }
}

/// One counter's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CounterValue {
    /// What it counts.
    pub kind: CounterKind,
    /// Its value since it was last cleared.
    pub value: u64,
}

/// A port's counters: the answer to
/// [`Request::ReadCounters`](crate::Request::ReadCounters).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortCounters {
    /// Whose counters.
    pub port: PortIndex,
    /// Every counter the port has.
    pub values: Vec<CounterValue, MAX_COUNTERS>,
}

/// The severity of an AER error message (PCIe Base 6.0 §6.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AerSeverity {
    /// ERR_COR.
    Correctable,
    /// ERR_NONFATAL.
    NonFatal,
    /// ERR_FATAL.
    Fatal,
}

/// Why the firmware started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BootReason {
    /// Power was applied.
    PowerOn,
    /// A management reset.
    Reset,
    /// The watchdog fired.
    Watchdog,
    /// A new firmware image was committed and started on trial.
    FirmwareTrial,
    /// A trial image did not check in, and the previous one was started.
    FirmwareRollback,
}

/// What happened, in one event-log entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventKind {
    /// The firmware started.
    Booted {
        /// Why.
        reason: BootReason,
    },
    /// A host's link came up.
    HostLinkUp {
        /// Which host.
        host: HostIndex,
    },
    /// A host's link went down.
    HostLinkDown {
        /// Which host.
        host: HostIndex,
    },
    /// A fabric link came up.
    FabricLinkUp {
        /// The local port of the link.
        port: PortIndex,
    },
    /// A fabric link went down.
    FabricLinkDown {
        /// The local port of the link.
        port: PortIndex,
    },
    /// A function was enumerated.
    EndpointAdded {
        /// Its fabric ID.
        fabric_id: FabricId,
    },
    /// A function disappeared.
    EndpointRemoved {
        /// Its fabric ID.
        fabric_id: FabricId,
    },
    /// A function was bound to a host's slot.
    Bound {
        /// The host.
        host: HostIndex,
        /// The slot.
        slot: SlotIndex,
        /// The function.
        fabric_id: FabricId,
    },
    /// A function was unbound.
    Unbound {
        /// The host that had it.
        host: HostIndex,
        /// The slot it was behind.
        slot: SlotIndex,
        /// The function.
        fabric_id: FabricId,
        /// How.
        mode: UnbindMode,
    },
    /// An endpoint sent an AER error message.
    Aer {
        /// The sender.
        fabric_id: FabricId,
        /// Its severity.
        severity: AerSeverity,
        /// The matching AER status register, if the fabric manager read it.
        status: u32,
    },
    /// A function's NumVFs changed.
    NumVfsChanged {
        /// The physical function.
        fabric_id: FabricId,
        /// The new NumVFs.
        num_vfs: u16,
    },
    /// The configuration was saved to flash.
    ConfigSaved,
    /// The configuration was restored from flash.
    ConfigRestored,
    /// A firmware image was verified and is ready to commit.
    FirmwareStaged,
    /// A firmware image was committed.
    FirmwareCommitted,
    /// The link of a port that is neither a host's nor one of this
    /// switch's fabric links came up (an endpoint port, or a port of
    /// another switch of the fabric). Protocol version 2.
    PortLinkUp {
        /// The port.
        at: PortRef,
    },
    /// The link of such a port went down. Protocol version 2.
    PortLinkDown {
        /// The port.
        at: PortRef,
    },
    /// The switch sent a host the hot-plug interrupt for a change of one
    /// of its slots (Presence Detect Changed, PCIe Base 6.0 §6.7.3).
    /// Protocol version 2.
    HotPlugSignalled {
        /// The host.
        host: HostIndex,
        /// The slot.
        slot: SlotIndex,
        /// Whether the slot now shows a device present.
        present: bool,
    },
    /// A binding saved in flash was not made again at start. Protocol
    /// version 2.
    BindingNotRestored {
        /// The host it was bound to.
        host: HostIndex,
        /// The slot it was bound to.
        slot: SlotIndex,
        /// The function saved.
        fabric_id: FabricId,
        /// Why.
        reason: RestoreFailure,
    },
    /// The data plane dropped TLPs that would have crossed an isolation
    /// boundary. Protocol version 2.
    IsolationDrops {
        /// The ingress port.
        at: PortRef,
        /// The check that dropped them.
        check: IsolationCheck,
        /// How many since the last such entry for this port and check.
        count: u32,
    },
    /// A management request acted on one of the switch's own ports
    /// ([`Request::PortControl`](crate::Request::PortControl)). Protocol
    /// version 3.
    PortControlled {
        /// The port.
        port: PortIndex,
        /// What was done.
        action: PortAction,
    },
    /// The image running on trial checked in: it is the good image from
    /// now on, and the previous one is no longer booted back to. Protocol
    /// version 5.
    FirmwareCheckedIn {
        /// The slot it runs from.
        slot: ImageSlot,
    },
    /// The device on a port stopped completing the fabric manager's
    /// configuration requests while the fabric was enumerated (they timed
    /// out, PCIe Base 6.0 §2.8): the port is left empty
    /// ([`PortRole::NotResponding`](crate::PortRole::NotResponding)).
    /// Logged once per enumeration that finds it so, unless the one
    /// before found it so too. Protocol version 6.
    PortNotResponding {
        /// The port.
        at: PortRef,
    },
    /// The device on a conventional switch's downstream port, below the
    /// port `at`, stopped completing the fabric manager's configuration
    /// requests while the fabric was enumerated (PCIe Base 6.0 §2.8): it
    /// alone was left out, and the port and the device's siblings stay in
    /// use. Logged once per enumeration that finds it so, unless the one
    /// before found it so too. Protocol version 7.
    DeviceNotResponding {
        /// The weft port it is below.
        at: PortRef,
        /// Its fabric ID (function 0 on the downstream port's link).
        fabric_id: FabricId,
    },
}

impl EventKind {
    /// The protocol version that introduced this kind: a switch leaves it
    /// out of the pages it sends a client of an older version.
    pub const fn introduced_in(&self) -> u16 {
        match self {
            EventKind::PortLinkUp { .. }
            | EventKind::PortLinkDown { .. }
            | EventKind::HotPlugSignalled { .. }
            | EventKind::BindingNotRestored { .. }
            | EventKind::IsolationDrops { .. } => 2,
            EventKind::PortControlled { .. } => 3,
            EventKind::FirmwareCheckedIn { .. } => 5,
            EventKind::PortNotResponding { .. } => 6,
            EventKind::DeviceNotResponding { .. } => 7,
            _ => 1,
        }
    }
}

/// Why a binding saved in flash was not made again at start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RestoreFailure {
    /// No function with the saved fabric ID, vendor and device ID was found.
    FunctionGone,
    /// The function is there, but the bind was refused or failed (the host
    /// or slot no longer exists, or the slot or port is taken).
    Refused,
}

/// The isolation check of the data plane that dropped a TLP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IsolationCheck {
    /// A request from an endpoint bound to no host.
    Unbound,
    /// A requester ID that does not belong below the ingress port.
    SpoofedRequester,
    /// A host's memory request inside none of its windows.
    NoWindow,
    /// A window covers the request but does not permit it.
    Forbidden,
    /// An endpoint's DMA address outside its owner's aperture.
    OutsideAperture,
}

/// One event-log entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Event {
    /// Its sequence number.
    pub seq: EventSeq,
    /// Milliseconds since the firmware started; 0 from a switch that does
    /// not record when its events happened.
    pub time_ms: u64,
    /// What happened.
    pub kind: EventKind,
}

/// One page of the event log: the answer to
/// [`Request::ReadEvents`](crate::Request::ReadEvents).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventPage {
    /// The oldest entry the log still holds; if it is newer than what the
    /// client asked for, the entries in between were overwritten.
    pub oldest: EventSeq,
    /// The entries from the requested number on, oldest first.
    pub events: Vec<Event, EVENTS_PAGE_LEN>,
    /// The number to ask for next.
    pub next: EventSeq,
}

/// One of the two firmware partitions (A/B images).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ImageSlot {
    /// Partition A.
    A,
    /// Partition B.
    B,
}

/// Where a firmware update stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UpdateState {
    /// No update is under way.
    Idle,
    /// Chunks are being received.
    Receiving,
    /// Every byte arrived and the digest matched; ready to commit.
    Verified,
    /// The commit is prepared and waits for its trigger.
    CommitArmed,
    /// The new image runs on trial and has not yet checked in.
    Trial,
    /// The update failed; the running image is untouched.
    Failed {
        /// Why.
        reason: Error,
    },
}

/// The state of the firmware partitions and of any update: the answer to
/// [`Request::FirmwareStatus`](crate::Request::FirmwareStatus).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirmwareStatus {
    /// Where the update stands.
    pub state: UpdateState,
    /// The size of the image being received, 0 when idle.
    pub size: u32,
    /// How many bytes arrived in order: the offset to send next.
    pub received: u32,
    /// The partition the running firmware came from.
    pub running: ImageSlot,
    /// The partition the next boot starts.
    pub next_boot: ImageSlot,
}

/// Where a background operation stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OperationState {
    /// Still running.
    Running {
        /// Rough progress, 0 to 100.
        percent: u8,
    },
    /// Finished successfully.
    Succeeded,
    /// Finished with an error.
    Failed {
        /// Why.
        reason: Error,
    },
}

/// A background operation's state: the answer to
/// [`Request::OperationStatus`](crate::Request::OperationStatus).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationReport {
    /// Which operation.
    pub op: OperationId,
    /// Where it stands.
    pub state: OperationState,
}
