//! What the fabric looks like: switches, links, ports, endpoints, and each
//! host's virtual switch, as the topology and virtual-switch reads report it.

use heapless::{String, Vec};
use serde::{Deserialize, Serialize};

use super::ids::{
    ClassCode, FabricId, Generation, HostIndex, PortIndex, SlotIndex, SwitchId, TopologyCursor,
};

/// The most bytes in a board name (UTF-8).
pub const MAX_BOARD_NAME: usize = 32;

/// The most bytes in a firmware build string (UTF-8), such as a short commit
/// hash and a dirty flag.
pub const MAX_BUILD_STRING: usize = 24;

/// The most topology items one page carries. Six of the largest item (an
/// endpoint with six 64-bit BARs and SR-IOV) still fit one datagram; the
/// size tests check that.
pub const TOPOLOGY_PAGE_ITEMS: usize = 6;

/// The most functions one bind attaches to one slot (a multi-function
/// device), as in Switchtec's bind command.
pub const MAX_BIND_FUNCTIONS: usize = 8;

/// The most virtual downstream ports (slots) one host's virtual switch
/// reports.
pub const MAX_SLOTS: usize = 32;

/// The most BARs of one function (a Type 0 header has six, PCIe Base 6.0
/// §7.5.1.2.1).
pub const MAX_BARS: usize = 6;

/// A board's name, such as `"ac701"`.
pub type BoardName = String<MAX_BOARD_NAME>;

/// The functions bound to one slot, function 0 first.
pub type BoundFunctions = Vec<FabricId, MAX_BIND_FUNCTIONS>;

/// A firmware's version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirmwareVersion {
    /// Incompatible changes.
    pub major: u16,
    /// Compatible additions.
    pub minor: u16,
    /// Fixes.
    pub patch: u16,
    /// The build it came from (for example a commit hash), empty if unknown.
    pub build: String<MAX_BUILD_STRING>,
}

/// Who a switch is and what it can do: the answer to
/// [`Request::Identify`](crate::Request::Identify).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// This switch's identity, the target that requests must name.
    pub switch: SwitchId,
    /// The firmware that is running.
    pub firmware: FirmwareVersion,
    /// The newest protocol version the switch speaks.
    pub protocol: u16,
    /// The oldest protocol version the switch still accepts.
    pub oldest_protocol: u16,
    /// The board the switch runs on.
    pub board: BoardName,
    /// How many physical ports the switch has.
    pub ports: u8,
    /// What the switch can do.
    pub capabilities: super::ids::Capabilities,
}

/// One port of one switch, named across the fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PortRef {
    /// The switch the port belongs to.
    pub switch: SwitchId,
    /// The port on that switch.
    pub port: PortIndex,
}

/// The state of a link's Link Training and Status State Machine, reduced to
/// what an operator acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LinkState {
    /// No link partner, or the link is down.
    Down,
    /// The link is training (Detect to Configuration, or Recovery).
    Training,
    /// The link is up (L0) and the Data Link Layer is active.
    Up,
    /// The port was disabled by management.
    Disabled,
}

/// A PCIe link speed (PCIe Base 6.0 §7.5.3.18, Current Link Speed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum LinkSpeed {
    /// 2.5 GT/s.
    Gen1,
    /// 5.0 GT/s.
    Gen2,
    /// 8.0 GT/s.
    Gen3,
    /// 16.0 GT/s.
    Gen4,
    /// 32.0 GT/s.
    Gen5,
    /// 64.0 GT/s.
    Gen6,
}

/// A link's current state, speed and width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LinkStatus {
    /// Whether the link is up.
    pub state: LinkState,
    /// The negotiated speed, `None` while the link is not up.
    pub speed: Option<LinkSpeed>,
    /// The negotiated width in lanes, 0 while the link is not up.
    pub width: u8,
}

/// What a physical port is used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PortRole {
    /// Nothing is configured on the port.
    Unused,
    /// A host's root port connects here; the host sees a virtual switch.
    Host {
        /// The host on this port.
        host: HostIndex,
    },
    /// An endpoint (device) connects here.
    Endpoint,
    /// Another weft switch connects here (a fabric link).
    Fabric,
    /// A device connects here but stopped completing the fabric manager's
    /// configuration requests while the fabric was enumerated (they timed
    /// out, PCIe Base 6.0 §2.8): the manager enumerated nothing below the
    /// port and gave it nothing. Protocol version 6.
    NotResponding,
}

impl PortRole {
    /// The protocol version that introduced this role.
    pub const fn introduced_in(&self) -> u16 {
        match self {
            PortRole::NotResponding => 6,
            _ => 1,
        }
    }

    /// The role a client of protocol `version` is told: one introduced
    /// after that version reaches it as the role switches of its version
    /// reported for such a port ([`PortRole::NotResponding`] as
    /// [`PortRole::Unused`]: nothing was enumerated there).
    pub const fn for_version(self, version: u16) -> PortRole {
        match self {
            PortRole::NotResponding if version < 6 => PortRole::Unused,
            role => role,
        }
    }
}

/// One switch of the fabric.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchInfo {
    /// The switch's identity.
    pub id: SwitchId,
    /// Its board.
    pub board: BoardName,
    /// How many physical ports it has.
    pub ports: u8,
    /// Whether this switch runs the fabric manager.
    pub manager: bool,
}

/// A link between two switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FabricLink {
    /// One end.
    pub a: PortRef,
    /// The other end.
    pub b: PortRef,
    /// The link's state.
    pub link: LinkStatus,
}

/// One physical port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PortInfo {
    /// Which port.
    pub at: PortRef,
    /// What it is used for.
    pub role: PortRole,
    /// Its link now.
    pub link: LinkStatus,
    /// The fastest speed the port supports.
    pub max_speed: LinkSpeed,
    /// The widest link the port supports, in lanes.
    pub max_width: u8,
}

/// The kind of a Base Address Register (PCIe Base 6.0 §7.5.1.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BarKind {
    /// I/O space.
    Io,
    /// 32-bit memory space.
    Memory32,
    /// 64-bit memory space (occupies two BAR registers).
    Memory64,
}

/// One BAR of an endpoint, placed in the fabric address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BarInfo {
    /// Which BAR register (0..6).
    pub index: u8,
    /// Its kind.
    pub kind: BarKind,
    /// Whether it is prefetchable.
    pub prefetchable: bool,
    /// Its size in bytes.
    pub size: u64,
    /// Where the fabric manager placed it in the fabric address space.
    pub fabric_address: u64,
}

/// A physical function's SR-IOV state (PCIe Base 6.0 §9.3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SriovInfo {
    /// TotalVFs: how many VFs the function can have.
    pub total_vfs: u16,
    /// NumVFs: how many are enabled now.
    pub num_vfs: u16,
    /// First VF Offset, in routing IDs.
    pub first_vf_offset: u16,
    /// VF Stride, in routing IDs.
    pub vf_stride: u16,
    /// The VFs' Device ID.
    pub vf_device_id: u16,
}

/// Where an endpoint is bound: a slot of a host's virtual switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Owner {
    /// The host that sees the endpoint.
    pub host: HostIndex,
    /// The slot it appears behind.
    pub slot: SlotIndex,
}

/// One function (physical or virtual) that the fabric manager enumerated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndpointInfo {
    /// Its fabric ID.
    pub fabric_id: FabricId,
    /// The port it hangs off.
    pub at: PortRef,
    /// Vendor ID.
    pub vendor_id: u16,
    /// Device ID.
    pub device_id: u16,
    /// Class code.
    pub class_code: ClassCode,
    /// Its implemented BARs.
    pub bars: Vec<BarInfo, MAX_BARS>,
    /// SR-IOV state, for a physical function that has the capability.
    pub sriov: Option<SriovInfo>,
    /// The physical function, for a virtual function.
    pub physical_function: Option<FabricId>,
    /// The host it is bound to, if any.
    pub owner: Option<Owner>,
}

/// One entry of the topology listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TopologyItem {
    /// A switch.
    Switch(SwitchInfo),
    /// A link between switches.
    Link(FabricLink),
    /// A physical port.
    Port(PortInfo),
    /// An enumerated function.
    Endpoint(EndpointInfo),
}

/// One page of the topology: the answer to
/// [`Request::Topology`](crate::Request::Topology).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyPage {
    /// The state these items describe; if it differs between pages, start
    /// again from [`TopologyCursor::START`].
    pub generation: Generation,
    /// The items, in the switch's order.
    pub items: Vec<TopologyItem, TOPOLOGY_PAGE_ITEMS>,
    /// Where the next page starts, `None` after the last page.
    pub next: Option<TopologyCursor>,
}

/// How an endpoint is taken away from a host (the three modes of CXL's
/// Unbind vPPB).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UnbindMode {
    /// Wait until the host's hot-plug driver powers the slot off (link
    /// down), then unbind: the host gives the device up first.
    Graceful,
    /// Raise an attention request so that the host releases the device
    /// (managed hot-remove), then unbind once it has.
    Managed,
    /// Unbind now (surprise hot-remove); requests in flight complete with
    /// synthesized errors so the host never hangs.
    Surprise,
}

/// What sits in one slot of a host's virtual switch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SlotState {
    /// Nothing is bound.
    Empty,
    /// A bind is under way (the host has not yet seen the device).
    Binding {
        /// The functions being bound.
        functions: BoundFunctions,
    },
    /// These functions are bound and visible to the host.
    Bound {
        /// The bound functions.
        functions: BoundFunctions,
    },
    /// An unbind is under way.
    Unbinding {
        /// The functions being unbound.
        functions: BoundFunctions,
        /// How.
        mode: UnbindMode,
    },
}

/// One slot of a virtual switch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotInfo {
    /// Which slot.
    pub slot: SlotIndex,
    /// What is bound there.
    pub state: SlotState,
}

/// One host's virtual switch: the answer to
/// [`Request::VirtualSwitch`](crate::Request::VirtualSwitch).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VirtualSwitchInfo {
    /// Whose virtual switch.
    pub host: HostIndex,
    /// The host's link to the switch.
    pub upstream: LinkStatus,
    /// The state the slots below describe (see [`Generation`]).
    pub generation: Generation,
    /// Every slot, in order.
    pub slots: Vec<SlotInfo, MAX_SLOTS>,
}
