//! The entries of the data plane's tables, as the fabric manager writes them.
//!
//! These mirror, field for field, the tables the data plane reads (the
//! transaction-level model in `weft-model` and the RTL): port roles, address
//! windows, ID maps, completer IDs, ACS redirect, INTx swizzle, and the
//! address and bus routing tables. Their sizes are `weft_regs::capacity`.

use weft_pcie::Bdf;

/// A switch port's index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PortIndex(pub u8);

/// A host's index in the fabric: it selects the host's aperture in fabric address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct HostIndex(pub u16);

/// The host an endpoint is bound to, as the endpoint's port needs to know it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    /// The host, selecting the aperture DMA goes to.
    pub host: HostIndex,
    /// The host's proxy fabric ID, to which interrupts and error messages are routed.
    pub proxy_id: Bdf,
}

/// What sits on the far side of a port, which decides how its TLPs are translated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PortRole {
    /// Nothing: every TLP arriving is dropped.
    #[default]
    Disabled,
    /// A host's root port.
    Host {
        /// Which host, selecting its aperture.
        host: HostIndex,
        /// The fabric requester ID that stands for this host in the fabric.
        proxy_id: Bdf,
    },
    /// An endpoint (or a conventional switch with endpoints below it).
    Endpoint {
        /// The host it is bound to; `None` while it sits in the free pool.
        owner: Option<Owner>,
        /// The fabric bus numbers below the port, `first..=last` (ACS Source
        /// Validation, PCIe Base 6.0 §6.12.1.1).
        buses: (u8, u8),
    },
    /// A link to another weft switch: TLPs are already in fabric terms.
    Fabric,
}

/// What a window lets through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Permissions {
    /// Memory reads (and AtomicOps).
    pub read: bool,
    /// Memory writes (and AtomicOps).
    pub write: bool,
}

impl Permissions {
    /// Reads and writes.
    pub const READ_WRITE: Permissions = Permissions {
        read: true,
        write: true,
    };
}

/// One address window: a host-domain range and where it lands in the fabric.
///
/// On a host port these are the BARs the host assigned to its bound
/// functions; on an endpoint port, the owner host's windows of the
/// endpoint's peers. A zero-sized window is an unused entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Window {
    /// First host-domain address.
    pub base: u64,
    /// Size in bytes; 0 leaves the entry unused.
    pub size: u64,
    /// The fabric address `base` translates to.
    pub fabric_base: u64,
    /// What the window lets through.
    pub permissions: Permissions,
}

impl Window {
    /// The unused entry.
    pub const UNUSED: Window = Window {
        base: 0,
        size: 0,
        fabric_base: 0,
        permissions: Permissions {
            read: false,
            write: false,
        },
    };
}

/// One ID map entry of a host port: a bound function's fabric ID and the ID its host gave it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct IdMapping {
    /// The function's fabric ID.
    pub fabric: Bdf,
    /// The ID the host enumerated it at, below its virtual downstream port.
    pub host: Bdf,
}

/// Where a routed TLP goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Destination {
    /// Out of a port.
    Port(PortIndex),
    /// To the management CPU (its mailbox).
    Cpu,
}

/// A fabric address range and the port that leads to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressRoute {
    /// First fabric address.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// Where TLPs addressed into the range go.
    pub to: Destination,
}
