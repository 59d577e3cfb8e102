//! The data plane's tables: the entries the fabric manager writes and the
//! switch reads, and the interface that writes them (and reads and clears
//! the per-port counters the switch keeps beside them).
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
        /// The owner of every function below the port that has no
        /// [`FunctionOwner`] entry; `None` while the port sits in the free
        /// pool, or while its functions are bound one by one (each bound
        /// one has an entry, and a function without one is unbound).
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
/// functions; on an endpoint port, an owner host's windows of the
/// endpoint's peers, each entry tagged with the owner it serves
/// ([`DataPlane::set_peer_window`]). A zero-sized window is an unused entry.
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
    /// A window that could deform a request it translates
    /// ([`Window::keeps_requests_well_formed`]) overlaps nothing.
    pub fn overlaps(&self, address: u64, len: u64) -> bool {
        let end = address.saturating_add(len.max(1));
        self.size != 0
            && self.keeps_requests_well_formed()
            && address < self.base.saturating_add(self.size)
            && end > self.base
    }

    /// Whether every well-formed request inside the window stays
    /// well-formed once translated, so that weft never forms a Malformed
    /// TLP (PCIe Base 6.0 §2.2.7.1).
    ///
    /// Translation adds `fabric_base - base`. It keeps an AtomicOp's
    /// natural alignment (operands of up to 16 bytes) when the two bases
    /// agree modulo 16. It keeps a request inside one 4 KiB page
    /// (§2.2.7.1's rule for memory requests) when they agree modulo 4 KiB,
    /// or when the fabric range lies wholly inside one page. Windows made
    /// from BARs, which are naturally aligned in both domains (§7.5.1.2.1),
    /// always qualify.
    pub fn keeps_requests_well_formed(&self) -> bool {
        const PAGE: u64 = 4096;
        const LARGEST_ATOMIC_OPERAND: u64 = 16;
        // Two addresses agree modulo a power of two when their XOR has no bits below it.
        let differing = self.fabric_base ^ self.base;
        let in_one_page = self.size <= PAGE - self.fabric_base % PAGE;
        differing.is_multiple_of(LARGEST_ATOMIC_OPERAND)
            && (differing.is_multiple_of(PAGE) || in_one_page)
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

/// One function owner entry of an endpoint port: a function below the port
/// bound on its own, and what its owner host's slot decides for it.
///
/// Endpoint ingress looks the requester ID of every request and message up
/// here first, and uses the port's [`PortRole::Endpoint`] owner, ACS P2P
/// Request Redirect and INTx swizzle only when no entry matches. So the
/// SR-IOV virtual functions of one drive (PCIe Base 6.0 §9.1), each with
/// its own Routing ID, can be bound to different hosts: each one's DMA goes
/// to its own owner's aperture and peer windows, its messages to its own
/// owner's proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FunctionOwner {
    /// The function's fabric ID, matched against the whole requester ID
    /// (an ARI function number or a VF on a bus after its PF's included).
    pub function: Bdf,
    /// The host it is bound to.
    pub owner: Owner,
    /// ACS P2P Request Redirect of its slot in the owner's virtual switch
    /// (§7.7.11.3): its peer requests go up to the owner.
    pub p2p_request_redirect: bool,
    /// The device number of its slot, by which its INTx is swizzled (§2.2.8.1).
    pub intx_swizzle: u8,
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
    /// A value does not fit the hardware field that holds it (a host index
    /// beyond the apertures of [`crate::aperture`], an INTx swizzle beyond
    /// the 32 device numbers).
    OutOfRange {
        /// What the value is.
        what: &'static str,
        /// The value written.
        value: u32,
        /// The largest value the field holds.
        max: u32,
    },
    /// An address or size of a range that is not a whole number of DWs:
    /// the range registers hold bits 63:2 only (memory request addresses
    /// are DW-aligned, PCIe Base 6.0 §2.2.4.1), so the hardware would
    /// silently hold a different range.
    NotDwAligned {
        /// What the value is.
        what: &'static str,
        /// The value written.
        value: u64,
    },
    /// A window whose translation could turn a well-formed request into a
    /// Malformed one ([`Window::keeps_requests_well_formed`]): the hardware
    /// would hold it but never use it, so every request to it would be
    /// refused as if it were not there.
    DeformsRequests {
        /// The window's host-domain base.
        base: u64,
        /// Its size in bytes.
        size: u64,
        /// The fabric address its base translates to.
        fabric_base: u64,
    },
    /// The data plane is another switch's, reached in-band, and an access
    /// to its CSR window did not complete (a read answered with an error
    /// status or not at all, a write that could not be sent): the entry
    /// may not hold what was written.
    InBand {
        /// The CSR address of the access that failed.
        address: u32,
    },
}

/// The largest host index, as the hardware holds it: one aperture each (`crate::aperture::MAX_HOSTS`).
pub const MAX_HOST_INDEX: u16 = (crate::aperture::MAX_HOSTS - 1) as u16;
/// The largest INTx swizzle: a device number (PCIe Base 6.0 §2.2.8.1, five bits).
pub const MAX_INTX_SWIZZLE: u8 = 31;

/// `value` of `what`, if it is at most `max`: the largest its hardware field holds.
fn at_most(what: &'static str, value: u32, max: u32) -> Result<u32, TableWriteError> {
    if value <= max {
        Ok(value)
    } else {
        Err(TableWriteError::OutOfRange { what, value, max })
    }
}

impl HostIndex {
    /// The host index, checked against [`MAX_HOST_INDEX`].
    pub fn checked(self) -> Result<HostIndex, TableWriteError> {
        at_most("host index", u32::from(self.0), u32::from(MAX_HOST_INDEX)).map(|_| self)
    }
}

/// `swizzle`, checked against [`MAX_INTX_SWIZZLE`].
pub fn checked_intx_swizzle(swizzle: u8) -> Result<u8, TableWriteError> {
    at_most(
        "INTx swizzle",
        u32::from(swizzle),
        u32::from(MAX_INTX_SWIZZLE),
    )
    .map(|_| swizzle)
}

impl PortRole {
    /// Checks the host indices the role holds against [`MAX_HOST_INDEX`].
    pub fn checked(self) -> Result<PortRole, TableWriteError> {
        match self {
            PortRole::Host { host, .. } => host.checked().map(|_| self),
            PortRole::Endpoint {
                owner: Some(owner), ..
            } => owner.host.checked().map(|_| self),
            _ => Ok(self),
        }
    }
}

/// `value`, checked to be a whole number of DWs.
fn checked_dw_aligned(what: &'static str, value: u64) -> Result<u64, TableWriteError> {
    if value.is_multiple_of(4) {
        Ok(value)
    } else {
        Err(TableWriteError::NotDwAligned { what, value })
    }
}

impl Window {
    /// Checks that the base, size and fabric base are whole DWs, as the
    /// window registers hold them, and that a window in use translates
    /// without deforming requests, as the hardware uses only such windows.
    pub fn checked(self) -> Result<Window, TableWriteError> {
        checked_dw_aligned("window base", self.base)?;
        checked_dw_aligned("window size", self.size)?;
        checked_dw_aligned("window fabric base", self.fabric_base)?;
        if self.size != 0 && !self.keeps_requests_well_formed() {
            return Err(TableWriteError::DeformsRequests {
                base: self.base,
                size: self.size,
                fabric_base: self.fabric_base,
            });
        }
        Ok(self)
    }
}

impl AddressRoute {
    /// Checks that the base and size are whole DWs, as the address route registers hold them.
    pub fn checked(self) -> Result<AddressRoute, TableWriteError> {
        checked_dw_aligned("address route base", self.base)?;
        checked_dw_aligned("address route size", self.size)?;
        Ok(self)
    }
}

impl FunctionOwner {
    /// Checks the owner's host index and the INTx swizzle against what the hardware holds.
    pub fn checked(self) -> Result<FunctionOwner, TableWriteError> {
        self.owner.host.checked()?;
        checked_intx_swizzle(self.intx_swizzle)?;
        Ok(self)
    }
}

/// What a port's link is asked to do ([`DataPlane::request_link`], the port
/// block's LINK register).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkRequest {
    /// Send a hot reset to the link partner (PCIe Base 6.0 §4.2.5.11,
    /// §4.2.7): every function below the port takes a Conventional Reset
    /// (§6.6.1) and its configuration space returns to its defaults.
    HotReset,
    /// Retrain the link (Retrain Link, §7.5.3.7): the link goes through
    /// Recovery (§4.2.6.4) with its Data Link Layer up, so its flow
    /// control credits carry on (§3.4); no configuration is lost.
    Retrain,
}

/// The data plane's tables, one method per kind of entry, and its per-port
/// counters ([`DataPlane::read_counter`], [`DataPlane::clear_counters`]).
///
/// Each call writes one entry, as the firmware writes one CSR group; the
/// caller keeps indices below the capacities of `weft_regs::capacity`.
/// Every implementation checks ports, then indices, then values (host
/// indices, INTx swizzles) and writes nothing when one is out of range.
pub trait DataPlane {
    /// How many ports the switch has.
    fn ports(&self) -> usize;

    /// Sets what sits behind `port`, deciding how its TLPs are translated.
    fn set_port_role(&mut self, port: PortIndex, role: PortRole) -> Result<(), TableWriteError>;

    /// Marks `port`'s role as settled by the fabric manager, or not: until
    /// it is, a disabled port answers Configuration Requests with Request
    /// Retry Status (PCIe Base 6.0 §2.3.1, §6.6.1) rather than dropping
    /// them, as a switch not yet ready after reset.
    fn set_port_settled(&mut self, port: PortIndex, settled: bool) -> Result<(), TableWriteError>;

    /// Writes window `index` of `port` (host BAR windows on a host port,
    /// peer windows on an endpoint port); a zero-sized window clears it.
    ///
    /// On an endpoint port this is [`DataPlane::set_peer_window`] with no
    /// owner tag: the window serves the port's own owner.
    fn set_window(
        &mut self,
        port: PortIndex,
        index: usize,
        window: Window,
    ) -> Result<(), TableWriteError>;

    /// Writes peer window `index` of an endpoint port together with the
    /// owner host whose functions it serves: a request uses the window only
    /// if its function's owner (its [`FunctionOwner`] entry's, or else the
    /// port's) is `owner`, or the port's own owner when `owner` is `None`.
    /// Windows serving other owners are invisible to it, so first-match
    /// lookup runs over the requester's owner's windows only.
    ///
    /// Window and tag form one entry: an implementation that writes them
    /// as several registers invalidates the entry first and validates it
    /// last, so no request ever sees one owner's window with another's tag.
    fn set_peer_window(
        &mut self,
        port: PortIndex,
        index: usize,
        window: Window,
        owner: Option<HostIndex>,
    ) -> Result<(), TableWriteError>;

    /// Writes function owner entry `index` of an endpoint port; `None`
    /// clears it. Ingress matches the requester ID against the valid
    /// entries in index order, and the first match wins.
    fn set_function_owner(
        &mut self,
        port: PortIndex,
        index: usize,
        entry: Option<FunctionOwner>,
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

    /// Sets whether an endpoint port sends a request or completion from
    /// below it that routes back to it out of it again, instead of
    /// dropping it as a route to the ingress port.
    ///
    /// A switch port never sends a TLP back out of its ingress port, but
    /// an endpoint port facing a conventional switch whose downstream
    /// ports redirect peer traffic upstream (ACS P2P Request and
    /// Completion Redirect, PCIe Base 6.0 §6.12.1.1, §7.7.11) stands where
    /// a root port stands for that traffic: it returns it downstream
    /// after translation and isolation checks. Host and fabric ports
    /// never return a TLP, whatever the setting.
    fn set_return_to_ingress(
        &mut self,
        port: PortIndex,
        enable: bool,
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

    /// Completes with an error the requests in flight to `port` from the
    /// host on host port `host_port` only: one function of a shared
    /// endpoint port is gone, the other hosts' functions there are not.
    fn abandon_host_requests_to(
        &mut self,
        host_port: PortIndex,
        port: PortIndex,
    ) -> Result<(), TableWriteError>;

    /// Asks the link of `port` for `request`; the port's LTSSM carries it
    /// out on its own time (a hot reset takes the LTSSM's 2 ms in Hot
    /// Reset, then training; a retrain, Recovery), so the call returns at once.
    fn request_link(
        &mut self,
        port: PortIndex,
        request: LinkRequest,
    ) -> Result<(), TableWriteError>;

    /// Reads counter `entry` of `port`, in the entry order of
    /// [`crate::csr::counter`] (traffic by class and direction, bytes,
    /// stall cycles, then one drop counter per reason): a 64-bit count
    /// since reset or the port's last [`DataPlane::clear_counters`],
    /// wrapping. An entry beyond [`crate::csr::counter::NAMES`] is
    /// [`TableWriteError::NoSuchEntry`].
    fn read_counter(&mut self, port: PortIndex, entry: u32) -> Result<u64, TableWriteError>;

    /// Sets every counter of `port` to zero at once
    /// ([`crate::csr::counter_control`]): the hardware clears a port's
    /// counters together, never one counter alone.
    fn clear_counters(&mut self, port: PortIndex) -> Result<(), TableWriteError>;

    /// Sets how long a host's non-posted request waits for its completion
    /// before the switch completes it with Completer Abort
    /// ([`crate::csr::global::COMPLETION_TIMEOUT`]), in microseconds; 0
    /// selects [`crate::csr::global::DEFAULT_COMPLETION_TIMEOUT_US`]. A
    /// time beyond the register's field is [`TableWriteError::OutOfRange`].
    fn set_completion_timeout_us(&mut self, microseconds: u32) -> Result<(), TableWriteError>;
}

/// `microseconds` as [`crate::csr::global::TIMEOUT_MICROSECONDS`], if it fits.
pub fn checked_completion_timeout(microseconds: u32) -> Result<u32, TableWriteError> {
    at_most(
        "completion timeout (µs)",
        microseconds,
        crate::csr::global::TIMEOUT_MICROSECONDS.mask(),
    )
}

/// A data plane whose every table access goes to another data plane, lent
/// for the one access: a switch model shared by several holders, borrowed
/// for the access, or a remote switch's CSR window reached in-band, whose
/// register failures are checked after each access. [`DataPlane`] follows
/// from it, method by method.
pub trait DataPlaneAccess {
    /// How many ports the switch behind has ([`DataPlane::ports`]).
    fn port_count(&self) -> usize;

    /// Runs `access` on the data plane behind; its result, or the error
    /// the lending itself found.
    fn access<R>(
        &mut self,
        access: impl FnOnce(&mut dyn DataPlane) -> Result<R, TableWriteError>,
    ) -> Result<R, TableWriteError>;
}

impl<T: DataPlaneAccess> DataPlane for T {
    fn ports(&self) -> usize {
        self.port_count()
    }

    fn set_port_role(&mut self, port: PortIndex, role: PortRole) -> Result<(), TableWriteError> {
        self.access(|plane| plane.set_port_role(port, role))
    }

    fn set_port_settled(&mut self, port: PortIndex, settled: bool) -> Result<(), TableWriteError> {
        self.access(|plane| plane.set_port_settled(port, settled))
    }

    fn set_window(
        &mut self,
        port: PortIndex,
        index: usize,
        window: Window,
    ) -> Result<(), TableWriteError> {
        self.access(|plane| plane.set_window(port, index, window))
    }

    fn set_peer_window(
        &mut self,
        port: PortIndex,
        index: usize,
        window: Window,
        owner: Option<HostIndex>,
    ) -> Result<(), TableWriteError> {
        self.access(|plane| plane.set_peer_window(port, index, window, owner))
    }

    fn set_function_owner(
        &mut self,
        port: PortIndex,
        index: usize,
        entry: Option<FunctionOwner>,
    ) -> Result<(), TableWriteError> {
        self.access(|plane| plane.set_function_owner(port, index, entry))
    }

    fn set_id_mapping(
        &mut self,
        port: PortIndex,
        index: usize,
        mapping: Option<IdMapping>,
    ) -> Result<(), TableWriteError> {
        self.access(|plane| plane.set_id_mapping(port, index, mapping))
    }

    fn set_completer_id(&mut self, port: PortIndex, id: Bdf) -> Result<(), TableWriteError> {
        self.access(|plane| plane.set_completer_id(port, id))
    }

    fn set_p2p_request_redirect(
        &mut self,
        port: PortIndex,
        redirect: bool,
    ) -> Result<(), TableWriteError> {
        self.access(|plane| plane.set_p2p_request_redirect(port, redirect))
    }

    fn set_return_to_ingress(
        &mut self,
        port: PortIndex,
        enable: bool,
    ) -> Result<(), TableWriteError> {
        self.access(|plane| plane.set_return_to_ingress(port, enable))
    }

    fn set_intx_swizzle(&mut self, port: PortIndex, swizzle: u8) -> Result<(), TableWriteError> {
        self.access(|plane| plane.set_intx_swizzle(port, swizzle))
    }

    fn set_address_route(
        &mut self,
        index: usize,
        route: Option<AddressRoute>,
    ) -> Result<(), TableWriteError> {
        self.access(|plane| plane.set_address_route(index, route))
    }

    fn set_bus_route(&mut self, bus: u8, to: Option<Destination>) -> Result<(), TableWriteError> {
        self.access(|plane| plane.set_bus_route(bus, to))
    }

    fn abandon_requests_to(&mut self, port: PortIndex) -> Result<(), TableWriteError> {
        self.access(|plane| plane.abandon_requests_to(port))
    }

    fn abandon_host_requests_to(
        &mut self,
        host_port: PortIndex,
        port: PortIndex,
    ) -> Result<(), TableWriteError> {
        self.access(|plane| plane.abandon_host_requests_to(host_port, port))
    }

    fn request_link(
        &mut self,
        port: PortIndex,
        request: LinkRequest,
    ) -> Result<(), TableWriteError> {
        self.access(|plane| plane.request_link(port, request))
    }

    fn read_counter(&mut self, port: PortIndex, entry: u32) -> Result<u64, TableWriteError> {
        self.access(|plane| plane.read_counter(port, entry))
    }

    fn clear_counters(&mut self, port: PortIndex) -> Result<(), TableWriteError> {
        self.access(|plane| plane.clear_counters(port))
    }

    fn set_completion_timeout_us(&mut self, microseconds: u32) -> Result<(), TableWriteError> {
        self.access(|plane| plane.set_completion_timeout_us(microseconds))
    }
}

/// `entry` as an entry of the [`crate::csr::counter`] block, if there is one.
pub fn checked_counter_entry(entry: u32) -> Result<u32, TableWriteError> {
    if (entry as usize) < crate::csr::counter::NAMES.len() {
        Ok(entry)
    } else {
        Err(TableWriteError::NoSuchEntry {
            table: "counter",
            index: entry as usize,
        })
    }
}
