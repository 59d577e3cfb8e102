//! Small identifiers and values that the messages are made of.
//!
//! Each is a newtype over a plain integer so that a host index cannot be
//! passed where a port index is meant. Postcard encodes a newtype exactly as
//! its inner integer, so these cost nothing on the wire.

use serde::{Deserialize, Serialize};
use weft_pcie::Bdf;

/// The identity of one weft switch: the value every request names as its
/// target, so that a request meant for one switch is never executed by
/// another (for example after an address is reassigned).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SwitchId(pub u64);

impl SwitchId {
    /// A target that every switch accepts, but only for [`Ping`] and
    /// [`Identify`], which change nothing: it is how a client learns the
    /// identity of a switch it knows only by address.
    ///
    /// [`Ping`]: crate::Request::Ping
    /// [`Identify`]: crate::Request::Identify
    pub const ANY: SwitchId = SwitchId(0);
}

/// A function's ID in the fabric domain (bus/device/function, 16 bits), as
/// the fabric manager assigned it when it enumerated the fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FabricId(pub u16);

/// The routing ID's layout is PCIe's, defined once in `weft-pcie`.
impl From<Bdf> for FabricId {
    fn from(id: Bdf) -> Self {
        FabricId(id.0)
    }
}

impl From<FabricId> for Bdf {
    fn from(id: FabricId) -> Self {
        Bdf(id.0)
    }
}

/// A physical port of one switch, counted from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PortIndex(pub u8);

/// A host attached to the fabric, counted from 0; each host sees its own
/// virtual switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct HostIndex(pub u8);

/// A virtual downstream port (a hot-plug slot) of one host's virtual switch,
/// counted from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SlotIndex(pub u8);

/// A long-running operation that the switch reported as in progress; poll it
/// with [`Request::OperationStatus`](crate::Request::OperationStatus).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OperationId(pub u32);

/// The sequence number of an entry in the switch's event log. Numbers only
/// grow; the log keeps the newest entries, so old numbers eventually age out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EventSeq(pub u64);

/// The version of the fabric's topology and bindings. It changes whenever
/// anything a topology page or a binding shows changes, so a client can
/// detect that pages it read belong to different states, and can make a bind
/// conditional on the state it looked at (like an HTTP ETag precondition).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Generation(pub u32);

/// Where a topology read continues: the index of the next item to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TopologyCursor(pub u32);

impl TopologyCursor {
    /// The cursor that reads from the first item.
    pub const START: TopologyCursor = TopologyCursor(0);
}

/// The one-time value that the first phase of a two-phase operation
/// (firmware commit, reset) returns and the second phase must present, so
/// that a retried or stale trigger cannot act twice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Token(pub u32);

/// A SHA-256 digest (FIPS 180-4), such as that of a firmware image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Digest(pub [u8; 32]);

/// The PCI class code of a function: base class in bits 23:16, sub-class in
/// 15:8, programming interface in 7:0 (PCIe Base 6.0 §7.5.1.1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ClassCode(pub u32);

/// What a switch can do, as bit flags; a client checks for a capability
/// before it offers the matching command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Capabilities(pub u32);

impl Capabilities {
    /// Endpoints can be bound and unbound at run time.
    pub const BIND: Capabilities = Capabilities(1 << 0);
    /// SR-IOV virtual functions can be enabled and bound individually.
    pub const SRIOV: Capabilities = Capabilities(1 << 1);
    /// Peer-to-peer traffic between endpoints stays inside the fabric.
    pub const PEER_TO_PEER: Capabilities = Capabilities(1 << 2);
    /// More than one switch forms the fabric.
    pub const MULTI_SWITCH: Capabilities = Capabilities(1 << 3);
    /// Firmware can be updated over the management plane (A/B images).
    pub const FIRMWARE_UPDATE: Capabilities = Capabilities(1 << 4);
    /// The configuration can be saved to and restored from flash.
    pub const PERSISTENT_CONFIG: Capabilities = Capabilities(1 << 5);
    /// Raw CSR and config-space access for diagnostics is enabled.
    pub const DIAGNOSTICS: Capabilities = Capabilities(1 << 6);
    /// Requests are checked against a per-switch key (not the insecure
    /// public key).
    pub const AUTHENTICATED: Capabilities = Capabilities(1 << 7);

    /// No capability.
    pub const NONE: Capabilities = Capabilities(0);

    /// Whether every flag of `other` is set in `self`.
    pub const fn contains(self, other: Capabilities) -> bool {
        self.0 & other.0 == other.0
    }

    /// The union of both sets of flags.
    pub const fn union(self, other: Capabilities) -> Capabilities {
        Capabilities(self.0 | other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fabric_id_carries_a_routing_id_unchanged() {
        // PCIe Base 6.0 §2.2.6.2: Bus[15:8] Device[7:3] Function[2:0].
        let id = FabricId::from(Bdf::new(0x3a, 0x1f, 0x7));
        assert_eq!(id, FabricId(0x3aff));
        assert_eq!(Bdf::from(id), Bdf::new(0x3a, 0x1f, 0x7));
    }

    #[test]
    fn capabilities_combine_and_test() {
        let caps = Capabilities::BIND.union(Capabilities::SRIOV);
        assert!(caps.contains(Capabilities::BIND));
        assert!(caps.contains(Capabilities::SRIOV));
        assert!(!caps.contains(Capabilities::DIAGNOSTICS));
        assert!(caps.contains(Capabilities::NONE));
    }
}
