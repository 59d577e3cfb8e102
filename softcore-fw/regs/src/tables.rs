//! The data plane's tables: the entries the fabric manager writes and the
//! switch reads, and the interface that writes them.
//!
//! One definition serves every side: the fabric manager (`weft-fabric`)
//! writes entries through [`DataPlane`]; the firmware implements it with
//! writes to the CSRs of [`crate::csr`]; the transaction-level model
//! (`weft-model`) implements it directly and the RTL's tables are tested
//! against the model. Table sizes are [`crate::capacity`].

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
    /// The fabric address of the `len` bytes at `address`, if they lie wholly inside the window.
    pub fn translate(&self, address: u64, len: u64) -> Option<u64> {
        let offset = address.checked_sub(self.base)?;
        let end = offset.checked_add(len.max(1))?;
        (end <= self.size).then(|| self.fabric_base.wrapping_add(offset))
    }

    /// Whether any byte of `address..address + len` is inside the window.
    pub fn overlaps(&self, address: u64, len: u64) -> bool {
        let end = address.saturating_add(len.max(1));
        self.size != 0 && address < self.base.saturating_add(self.size) && end > self.base
    }

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

/// Why a table entry could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableWriteError {
    /// The port does not exist.
    NoSuchPort(PortIndex),
    /// The entry index is beyond the table.
    NoSuchEntry {
        /// Which table.
        table: &'static str,
        /// The index written.
        index: usize,
    },
}

/// The data plane's tables, one method per kind of entry.
///
/// Each call writes one entry, as the firmware writes one CSR group; the
/// caller keeps indices below the capacities of `weft_regs::capacity`.
pub trait DataPlane {
    /// How many ports the switch has.
    fn ports(&self) -> usize;

    /// Sets what sits behind `port`, deciding how its TLPs are translated.
    fn set_port_role(&mut self, port: PortIndex, role: PortRole) -> Result<(), TableWriteError>;

    /// Writes window `index` of `port` (host BAR windows on a host port,
    /// peer windows on an endpoint port); a zero-sized window clears it.
    fn set_window(
        &mut self,
        port: PortIndex,
        index: usize,
        window: Window,
    ) -> Result<(), TableWriteError>;

    /// Writes ID map entry `index` of a host port; `None` clears it.
    fn set_id_mapping(
        &mut self,
        port: PortIndex,
        index: usize,
        mapping: Option<IdMapping>,
    ) -> Result<(), TableWriteError>;

    /// Sets the completer ID of completions `port` synthesizes, in the
    /// domain of its link partner.
    fn set_completer_id(&mut self, port: PortIndex, id: Bdf) -> Result<(), TableWriteError>;

    /// Sets ACS P2P Request Redirect for an endpoint port (PCIe Base 6.0 §7.7.11.3).
    fn set_p2p_request_redirect(
        &mut self,
        port: PortIndex,
        redirect: bool,
    ) -> Result<(), TableWriteError>;

    /// Sets the device number an endpoint port's INTx messages are swizzled by (§2.2.8.1).
    fn set_intx_swizzle(&mut self, port: PortIndex, swizzle: u8) -> Result<(), TableWriteError>;

    /// Writes entry `index` of the address routing table; `None` clears it.
    fn set_address_route(
        &mut self,
        index: usize,
        route: Option<AddressRoute>,
    ) -> Result<(), TableWriteError>;

    /// Writes the bus routing table's entry for `bus`; `None` clears it.
    fn set_bus_route(&mut self, bus: u8, to: Option<Destination>) -> Result<(), TableWriteError>;

    /// Completes every host request in flight to `port` with an error: its
    /// endpoint is gone and will never answer (DESIGN.md: no host waits forever).
    fn abandon_requests_to(&mut self, port: PortIndex) -> Result<(), TableWriteError>;
}
