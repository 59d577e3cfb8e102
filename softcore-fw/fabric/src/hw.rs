//! The hardware the fabric manager drives, behind traits.
//!
//! The firmware implements these over the soft core's CSR bus, config
//! mailbox and timer; the simulator and the tests implement them over the
//! transaction-level switch model and endpoint models. Nothing else in this
//! crate touches hardware, so every decision is testable on the host.

use weft_pcie::config::msi::MsiMessage;
use weft_pcie::config::{ConfigRead, ConfigWrite};
use weft_pcie::tlp::{Completion, ConfigRequest};
use weft_pcie::Bdf;

use weft_regs::tables::PortIndex;
pub use weft_regs::tables::{DataPlane, TableWriteError};

/// Why a configuration request to a fabric function, or a memory read of
/// the management CPU ([`FabricMemory`]), did not complete successfully.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigFault {
    /// Unsupported Request: no function answers at that ID (PCIe Base 6.0 §2.3.1).
    UnsupportedRequest,
    /// Request Retry Status (CRS before 6.0): the function is not ready yet (§2.3.1, §6.6.1).
    RequestRetry,
    /// Completer Abort.
    CompleterAbort,
    /// No completion arrived within the completion timeout (§2.8).
    Timeout,
    /// The port does not exist.
    NoSuchPort(PortIndex),
}

impl ConfigFault {
    /// Whether the function stopped answering: no completion came (a
    /// timeout), or a switch on the way answered with Completer Abort after
    /// its own completion timeout (PCIe Base 6.0 §2.8).
    pub const fn unanswered(self) -> bool {
        matches!(self, ConfigFault::Timeout | ConfigFault::CompleterAbort)
    }
}

/// How a configuration request from the management CPU reaches a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigPath {
    /// A Type 0 request out of this port of the manager's own switch: the
    /// function is on that port's link (an endpoint, or the management
    /// function of a neighbouring weft switch).
    Link(PortIndex),
    /// A Type 1 request out of this port of the manager's own switch, for
    /// a bus of the port's range after its first (the link's): a bus below
    /// a conventional PCIe switch (or bridge) on the link, whose bridges
    /// route it by their bus numbers and the one whose secondary bus it is
    /// delivers it as Type 0 (PCIe Base 6.0 §7.3.3, §7.5.1.3.3-4); or a
    /// further bus an SR-IOV device's VFs sit on, which the device takes
    /// as Type 1 (§9.3.3.9).
    Below(PortIndex),
    /// A Type 1 request out of this fabric port of the manager's own
    /// switch, routed by the target's bus number by every switch on the way
    /// (their bus routes must lead there before it is sent); the port it
    /// leaves the fabric by delivers it as Type 0 when the bus is the
    /// first of the port's bus range (the link's), and passes it on as
    /// Type 1 otherwise, to a conventional switch below — as a downstream
    /// port does with its secondary and subordinate buses (§7.3.3).
    Routed(PortIndex),
}

/// Configuration access to the functions of the fabric.
///
/// The management CPU sends configuration requests with the fabric
/// manager's own fabric ID as requester; a function captures its bus and
/// device number from the Type 0 writes it receives (PCIe Base 6.0
/// §2.2.6.2), so the target ID given here is the function's fabric ID once
/// the manager assigned it. Completions come back routed by the manager's
/// bus, which every switch routes towards the manager's switch and that
/// one to its CPU.
pub trait FabricConfig {
    /// Reads the DW holding byte `offset` of function `target` on the link
    /// of `port` ([`ConfigPath::Link`]).
    fn read(&mut self, port: PortIndex, target: Bdf, offset: u16) -> Result<u32, ConfigFault>;

    /// Writes the bytes of `value` selected by `byte_enables` (bit n: byte n)
    /// into the DW holding byte `offset` of function `target` on the link of `port`.
    fn write(
        &mut self,
        port: PortIndex,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigFault>;

    /// Reads the DW holding byte `offset` of `target` on a bus of `port`'s
    /// range after the link's ([`ConfigPath::Below`]). A fabric whose
    /// ports have no conventional switch below them and no VFs beyond the
    /// first bus need not implement it: no function is reached so.
    fn read_below(
        &mut self,
        port: PortIndex,
        target: Bdf,
        offset: u16,
    ) -> Result<u32, ConfigFault> {
        let _ = (target, offset);
        Err(ConfigFault::NoSuchPort(port))
    }

    /// Writes into the DW holding byte `offset` of `target` on a bus below
    /// a conventional switch on the link of `port` (see [`FabricConfig::read_below`]).
    fn write_below(
        &mut self,
        port: PortIndex,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigFault> {
        let _ = (target, offset, value, byte_enables);
        Err(ConfigFault::NoSuchPort(port))
    }

    /// Reads the DW holding byte `offset` of `target`, routed through the
    /// fabric out of fabric port `via` ([`ConfigPath::Routed`]). A switch
    /// with no fabric links need not implement it: no function is reached so.
    fn read_routed(
        &mut self,
        via: PortIndex,
        target: Bdf,
        offset: u16,
    ) -> Result<u32, ConfigFault> {
        let _ = (target, offset);
        Err(ConfigFault::NoSuchPort(via))
    }

    /// Writes into the DW holding byte `offset` of `target`, routed through
    /// the fabric out of fabric port `via` (see [`FabricConfig::read_routed`]).
    fn write_routed(
        &mut self,
        via: PortIndex,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigFault> {
        let _ = (target, offset, value, byte_enables);
        Err(ConfigFault::NoSuchPort(via))
    }

    /// Makes the following configuration requests wait at most
    /// `timeout_ns` for their completion before they fail with
    /// [`ConfigFault::Timeout`] (`Some`), or the access's own wait again
    /// (`None`: the manager's, the top of the default range of PCIe Base
    /// 6.0 §2.8, §7.5.3.16). The manager shortens the wait for a host's
    /// request it forwards to a bound function
    /// ([`crate::virtualize::FORWARDED_TIMEOUT_NS`]), so that the host gets
    /// its completion before its own timeout ends. An access whose requests
    /// complete at once never waits and may ignore it, as this default does.
    fn limit_completion_wait(&mut self, timeout_ns: Option<u64>) {
        let _ = timeout_ns;
    }
}

/// Configuration access as one function for every [`ConfigPath`]: a
/// fabric that sends every request the same way, whatever its path,
/// implements this and gets [`FabricConfig`] from it.
pub trait ConfigRequests {
    /// Sends a configuration request for the DW holding byte `offset` of
    /// `target` along `path`: a read, or with `write` = `(value, byte
    /// enables)` a write; returns the DW read (0 for a write).
    fn config_request(
        &mut self,
        path: ConfigPath,
        target: Bdf,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> Result<u32, ConfigFault>;

    /// Bounds the wait of the following requests for their completion
    /// ([`FabricConfig::limit_completion_wait`]); every transport says how
    /// it honours it.
    fn limit_completion_wait(&mut self, timeout_ns: Option<u64>);
}

impl<T: ConfigRequests> FabricConfig for T {
    fn read(&mut self, port: PortIndex, target: Bdf, offset: u16) -> Result<u32, ConfigFault> {
        self.config_request(ConfigPath::Link(port), target, offset, None)
    }

    fn write(
        &mut self,
        port: PortIndex,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigFault> {
        let write = Some((value, byte_enables));
        self.config_request(ConfigPath::Link(port), target, offset, write)
            .map(|_| ())
    }

    fn read_below(
        &mut self,
        port: PortIndex,
        target: Bdf,
        offset: u16,
    ) -> Result<u32, ConfigFault> {
        self.config_request(ConfigPath::Below(port), target, offset, None)
    }

    fn write_below(
        &mut self,
        port: PortIndex,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigFault> {
        let write = Some((value, byte_enables));
        self.config_request(ConfigPath::Below(port), target, offset, write)
            .map(|_| ())
    }

    fn read_routed(
        &mut self,
        via: PortIndex,
        target: Bdf,
        offset: u16,
    ) -> Result<u32, ConfigFault> {
        self.config_request(ConfigPath::Routed(via), target, offset, None)
    }

    fn write_routed(
        &mut self,
        via: PortIndex,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigFault> {
        let write = Some((value, byte_enables));
        self.config_request(ConfigPath::Routed(via), target, offset, write)
            .map(|_| ())
    }

    fn limit_completion_wait(&mut self, timeout_ns: Option<u64>) {
        ConfigRequests::limit_completion_wait(self, timeout_ns);
    }
}

/// Reads the DW holding `offset` of `target` along `path`.
pub fn config_read<C: FabricConfig + ?Sized>(
    config: &mut C,
    path: ConfigPath,
    target: Bdf,
    offset: u16,
) -> Result<u32, ConfigFault> {
    match path {
        ConfigPath::Link(port) => config.read(port, target, offset),
        ConfigPath::Below(port) => config.read_below(port, target, offset),
        ConfigPath::Routed(via) => config.read_routed(via, target, offset),
    }
}

/// Writes the DW holding `offset` of `target` along `path`.
pub fn config_write<C: FabricConfig + ?Sized>(
    config: &mut C,
    path: ConfigPath,
    target: Bdf,
    offset: u16,
    value: u32,
    byte_enables: u8,
) -> Result<(), ConfigFault> {
    match path {
        ConfigPath::Link(port) => config.write(port, target, offset, value, byte_enables),
        ConfigPath::Below(port) => config.write_below(port, target, offset, value, byte_enables),
        ConfigPath::Routed(via) => config.write_routed(via, target, offset, value, byte_enables),
    }
}

/// One function's configuration space reached through [`FabricConfig`], so
/// weft-pcie's BAR sizing and capability walkers run on it.
pub struct FunctionAccess<'a, C: FabricConfig + ?Sized> {
    /// The configuration access.
    pub config: &'a mut C,
    /// How requests reach the function.
    pub path: ConfigPath,
    /// The function's ID.
    pub target: Bdf,
}

impl<C: FabricConfig + ?Sized> ConfigRead for FunctionAccess<'_, C> {
    type Error = ConfigFault;

    fn read_dword(&mut self, offset: u16) -> Result<u32, ConfigFault> {
        config_read(self.config, self.path, self.target, offset & !3)
    }

    fn unanswered(error: &ConfigFault) -> bool {
        error.unanswered()
    }
}

impl<C: FabricConfig + ?Sized> ConfigWrite for FunctionAccess<'_, C> {
    fn write_dword(
        &mut self,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigFault> {
        config_write(
            self.config,
            self.path,
            self.target,
            offset & !3,
            value,
            byte_enables,
        )
    }
}

/// A weft switch other than the manager's own, as discovery found it:
/// what a [`Fabric`] needs to reach its data plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemoteSwitch {
    /// Its switch ID (the one its identity VSEC carries).
    pub id: u64,
    /// The port of the manager's own switch that requests to it leave by.
    pub via: PortIndex,
    /// The fabric address of its management BAR (over its CSR window,
    /// `weft_regs::csr::global::MANAGEMENT_BAR_LOW`), once discovery
    /// assigned it and routed it there.
    pub management_bar: Option<u64>,
}

/// The data planes of every weft switch in the fabric, each reached by its
/// switch ID (the one its identity VSEC carries,
/// `weft_pcie::config::vsec`).
///
/// The manager's own switch is [`Fabric::local`]: the firmware writes its
/// CSRs directly. Another switch's tables are written in-band
/// ([`crate::inband::InbandFabric`]): each register access becomes a
/// memory request to that switch's management BAR, which travels the
/// fabric to it and is executed against its CSR window there; the manager
/// asks for a switch only after discovery assigned its BAR and routed it.
/// A benchmark or test that is not about the path may hand each switch
/// model over as its own [`DataPlane`] instead.
///
/// Every [`DataPlane`] is a fabric of one switch, so a single-switch
/// deployment passes its data plane as it is.
pub trait Fabric {
    /// The data plane of the switch the manager runs on.
    fn local(&mut self) -> &mut dyn DataPlane;

    /// The data plane of the remote switch `switch`, if it can be reached.
    fn remote(&mut self, switch: RemoteSwitch) -> Option<&mut dyn DataPlane>;
}

impl<D: DataPlane> Fabric for D {
    fn local(&mut self) -> &mut dyn DataPlane {
        self
    }

    fn remote(&mut self, _switch: RemoteSwitch) -> Option<&mut dyn DataPlane> {
        None
    }
}

/// Memory requests of the management CPU into the fabric: one DW read or
/// written at a fabric address, out of a port of the manager's own switch,
/// with the manager's fabric ID as requester. That is how it reaches the
/// CSR windows of the other switches ([`crate::inband`]); a read's
/// completion comes back routed by the manager's bus, as those of its
/// configuration requests do ([`FabricConfig`]).
pub trait FabricMemory {
    /// Reads the DW at fabric address `address` (DW-aligned) through `via`.
    fn read_memory(&mut self, via: PortIndex, address: u64) -> Result<u32, ConfigFault>;

    /// Writes `value` to the DW at fabric address `address` (DW-aligned)
    /// through `via`: a posted write, done once it is sent.
    fn write_memory(&mut self, via: PortIndex, address: u64, value: u32)
        -> Result<(), ConfigFault>;
}

/// A monotonic clock the manager waits on (device readiness, §6.6.1).
pub trait Timer {
    /// Nanoseconds since an arbitrary epoch; never goes backwards.
    fn now_ns(&mut self) -> u64;

    /// Returns once [`Timer::now_ns`] has reached `deadline_ns`.
    fn wait_until_ns(&mut self, deadline_ns: u64);
}

/// A host's configuration request, as the mailbox delivers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostConfigRequest {
    /// The switch ID of the switch whose host port it arrived on: the
    /// manager's own, or another whose mailbox the firmware reads in-band
    /// through that switch's CSR window, as it writes its tables ([`Fabric`]).
    pub switch: u64,
    /// The host port it arrived on.
    pub port: PortIndex,
    /// The request, in the host's terms.
    pub request: ConfigRequest,
    /// A write's data DW: payload byte n is byte n of the DW, so the DW is
    /// the payload read little-endian, as configuration space is (§7.2).
    pub data: u32,
}

/// Why something could not be sent to a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostSendError {
    /// The port does not exist or is not a host port.
    NoSuchPort(PortIndex),
    /// The egress queue to the host is full; try again.
    QueueFull(PortIndex),
}

/// The host-facing side: configuration requests in from the mailboxes,
/// completions and MSI writes out of a host port, of any switch of the
/// fabric (named by its switch ID).
pub trait HostInterface {
    /// The next configuration request from any host, if one is waiting.
    fn receive(&mut self) -> Option<HostConfigRequest>;

    /// Sends a completion out of `port` of switch `switch`; `data` is the
    /// one DW of a configuration read's CplD, little-endian like
    /// [`HostConfigRequest::data`].
    fn complete(
        &mut self,
        switch: u64,
        port: PortIndex,
        completion: Completion,
        data: Option<u32>,
    ) -> Result<(), HostSendError>;

    /// Sends an MSI out of `port` of switch `switch`: a one-DW memory
    /// write of `message.data` to `message.address` with requester ID
    /// `requester` (a virtual port's host-domain ID), §6.1.4.
    fn send_msi(
        &mut self,
        switch: u64,
        port: PortIndex,
        requester: Bdf,
        message: MsiMessage,
    ) -> Result<(), HostSendError>;
}
