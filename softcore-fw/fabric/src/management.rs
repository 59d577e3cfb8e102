//! The management requests of `weft-proto`, answered from the fabric
//! manager's state: one decoded [`Request`] in, one [`Response`] out.
//!
//! Nothing here touches a socket, a key or a reply cache: the transport
//! (the firmware's smoltcp server, the simulator's UDP port) checks the
//! datagram with `weft_proto::receive_request`, calls [`handle`], and
//! encodes and remembers the answer. What the manager does not know —
//! the board's name and firmware version, and the state of each port's
//! link, which the LTSSM rather than the manager tracks — comes from the
//! caller's [`BoardInfo`] and [`PortLinks`].
//!
//! The event log is read page by page from a sequence number
//! (`ReadEvents`), each entry with the time the caller last gave the
//! manager ([`FabricManager::set_time`]). The firmware update's events
//! (staged, committed, started on trial, checked in, booted back) are taken
//! from the board's [`FirmwareService`] into the log at the start of each
//! request, so a reader sees them before its own read is answered. Raw
//! configuration reads and writes of the fabric's
//! functions (`ConfigRead`, `ConfigWrite`) go through
//! [`crate::diagnostics`], which refuses writes to what the fabric owns.
//!
//! `ReadCounters` reads every counter of one port of the manager's own
//! switch through [`DataPlane::read_counter`] and answers the kinds the
//! data plane counts, each the sum of register-map counters given by
//! `COUNTED`: TLPs in and out in all and by class, bytes in and out as
//! on the wire (`RxWireBytes`, `TxWireBytes`), credit stall cycles, and
//! drops by reason (each isolation check alone and `DroppedIsolation` as
//! their sum). The kinds the data plane does not count are left out of the
//! answer rather than sent as 0: payload bytes (`RxPayloadBytes`,
//! `TxPayloadBytes`: the data plane counts whole TLPs), poisoned TLPs
//! (forwarded, not dropped), Unsupported Request and timeout completions
//! and other completions the switch synthesizes, and link downs (the
//! LTSSM's, see [`PortLinks`]). `ClearCounters` clears one port's counters
//! or every port's ([`DataPlane::clear_counters`]); the hardware clears a
//! port's counters together, so a request naming one kind is
//! [`Error::Unsupported`]. A client of protocol version 2 or older gets
//! the kinds its version knows.
//!
//! `PortControl` enables and disables a port of the manager's own switch
//! through the data plane's port ENABLE ([`crate::port_control`] has the
//! rules and logs each change): disabling a host port is refused with
//! [`Error::HostPort`], disabling a port that a binding depends on with
//! [`Error::EndpointBusy`] naming the bound function (the request carries
//! no override: unbind first), and a bind across a disabled port with
//! [`Error::PortDisabled`].
//!
//! `SetNumVfs` changes a PF's VFs at run time ([`crate::sriov`]): `Done`
//! when nothing needs waiting for (NumVFs 0, or unchanged), otherwise in
//! progress under an operation ID that `OperationStatus` polls (and
//! [`advance_operations`] moves on) until the VFs answer, 100 ms after VF
//! Enable at the earliest. It is refused while a VF of the PF is bound
//! ([`Error::VfBound`]), while another change waits ([`Error::Busy`]), and
//! above TotalVFs ([`Error::TooManyVfs`]).
//!
//! The board's requests go to its [`Board`]: `CsrRead` and `CsrWrite`
//! through [`crate::csr_diagnostics`], which refuses a write to what the
//! manager or the firmware programs with [`Error::FabricOwnedCsr`] (a
//! client of protocol version 3 or older receives [`Error::Unsupported`]);
//! `SaveConfig` (the bindings and NumVFs, applied at the next start) and
//! `RestoreConfig` (the saved bindings made again now,
//! [`FabricManager::apply_saved`]) through the board's configuration
//! flash ([`crate::persist`]: no record is [`Error::NoSavedConfig`], a
//! damaged one [`Error::SavedConfigCorrupt`], a failing flash
//! [`Error::FlashFailed`] naming the operation); `ResetArm` and
//! `ResetTrigger` through [`crate::reset`]'s token and the board's
//! reset, after the answer is sent. A board without a facility answers
//! [`Error::Unsupported`].
//!
//! Requests the manager cannot carry out are answered with
//! [`Error::Unsupported`], so a client tells "not here" from "failed":
//! - a hot reset (`PortControl` with `HotReset`) on a board that gives no
//!   [`Timer`] ([`Hardware::timer`]), or of a fabric port or a port with a
//!   conventional switch below ([`crate::link_control`] has the rules;
//!   `Retrain` and `HotReset` of a host port are [`Error::HostPort`]);
//! - firmware update on a board that gives no [`FirmwareService`]
//!   ([`Hardware::firmware`]); one that does answers the update requests
//!   ([`crate::firmware_update`]);
//! - binds of several functions to one slot.
//!
//! `Unbind` in mode `Graceful` or `Managed` of a slot its host has powered
//! on is answered [`Response::InProgress`]: the unbind waits for the host
//! to power the slot off ([`crate::binding`]), the slot shows
//! [`SlotState::Unbinding`], and `OperationStatus` reports it running, then
//! succeeded (or failed, with the error the unbind's table writes met).
//! Another graceful or managed unbind of the slot meanwhile is refused with
//! [`Error::UnbindInProgress`]; a surprise one overrides it, and the
//! operation then ends succeeded (the function is unbound), the event
//! log's `Unbound` entry saying it was by surprise. A managed unbind whose
//! button interrupt cannot be queued is refused with [`Error::Busy`] and
//! changes nothing. Unbinds and NumVFs changes draw their operation IDs
//! from one space ([`crate::operations`]), so `OperationStatus` answers
//! for either.
//!
//! A configuration write to a register the fabric owns (Command, BARs,
//! Expansion ROM, SR-IOV, ACS Control) or one that would reset the
//! function (FLR, a power state other than D0; see [`crate::diagnostics`])
//! is refused with [`Error::FabricOwnedRegister`], which a client of protocol
//! version 1 receives as [`Error::Unsupported`] (`weft_proto::Responder`).

use weft_pcie::config::BarKind as PcieBarKind;
use weft_pcie::Bdf;
use weft_proto::heapless::{String, Vec};
use weft_proto::{
    AccessWidth, AerSeverity, BarInfo, BarKind, BoardName, BootReason, Capabilities,
    CompletionStatus, CounterKind, CounterValue, EndpointInfo, Error, Event as WireEvent,
    EventKind, EventPage, EventSeq, FabricId, FabricLink, FirmwareVersion, FlashOp, Generation,
    Identity, IsolationCheck, LinkSpeed, LinkStatus, OperationId, OperationReport,
    OperationState as WireOperationState, Owner, PortAction, PortCounters as WirePortCounters,
    PortInfo, PortRef, PortRole, Request, ResetScope, Response, RestoreFailure, SlotIndex,
    SlotInfo, SlotState, SriovInfo, SwitchId, SwitchInfo, Token, TopologyCursor, TopologyItem,
    TopologyPage, UnbindMode as ProtoUnbindMode, VirtualSwitchInfo, OLDEST_PROTOCOL_VERSION,
    PROTOCOL_VERSION, TOPOLOGY_PAGE_ITEMS,
};
use weft_regs::csr::counter;
use weft_regs::tables::{DataPlane, HostIndex, PortIndex, TableWriteError};

use crate::binding::{BindError, UnbindMode, Unbinding};
use crate::board::{Board, BoardFault};
use crate::csr_diagnostics::{self, CsrError};
use crate::diagnostics::{DiagnosticError, Width};
use crate::enumerate::EnumerationError;
use crate::events::{ErrorSeverity, Event as LogEvent, IsolationCheck as LogCheck, NotRestored};
use crate::firmware_update::FirmwareService;
use crate::hw::{ConfigFault, Fabric, FabricConfig, HostInterface, HostSendError, Timer};
use crate::inventory::{Function, FunctionKind, PortKind, SwitchIndex};
use crate::manager::FabricManager;
use crate::operations::{OperationError, OperationId as ManagerOperationId, OperationState};
use crate::persist::{self, Flash, FlashError, PersistError, Saved, StoredConfig};
use crate::port_control::PortControlError;
use crate::reset::{TriggerError, RESET_TOKEN_LIFETIME_MS};
use crate::sriov::{NumVfsError, NumVfsProgress, NumVfsStarted};

/// How long a client waits before asking again while the fabric is still
/// being enumerated: enumeration of the reference fabric takes tens of
/// milliseconds of device readiness waits.
pub const NOT_READY_RETRY_MS: u32 = 100;

/// How long a client waits when a hot-plug interrupt could not be queued to
/// a host: the egress queue drains within microseconds.
pub const QUEUE_FULL_RETRY_MS: u32 = 1;

/// What the board says about itself, which the fabric manager does not know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoardInfo {
    /// The board's name, such as `"ac701"` (cut to
    /// `weft_proto::MAX_BOARD_NAME` bytes on the wire).
    pub board: &'static str,
    /// The firmware's version: major, minor, patch.
    pub version: (u16, u16, u16),
    /// The build the firmware came from, such as a commit hash (cut to
    /// `weft_proto::MAX_BUILD_STRING` bytes on the wire).
    pub build: &'static str,
    /// How many physical ports the manager's switch has.
    pub ports: u8,
    /// Whether requests are checked against a per-switch key rather than
    /// the publicly known insecure one.
    pub authenticated: bool,
}

/// A port's link as the board's link layer reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortLink {
    /// The link now.
    pub status: LinkStatus,
    /// The fastest speed the port supports.
    pub max_speed: LinkSpeed,
    /// The widest link the port supports, in lanes.
    pub max_width: u8,
}

/// The state of every port's link, which the data plane's LTSSMs rather
/// than the fabric manager track.
pub trait PortLinks {
    /// The link of `port` of the switch with ID `switch_id`.
    fn link(&mut self, switch_id: u64, port: u8) -> PortLink;
}

/// What a request may drive: configuration access to the fabric's
/// functions, every switch's tables, the host-facing side (for hot-plug
/// interrupts), the ports' link state and the board (CSR window,
/// configuration flash, reset).
pub struct Hardware<'a, C: ?Sized, F: ?Sized, H: ?Sized, L: ?Sized, B: ?Sized> {
    /// Configuration requests to the fabric's functions.
    pub config: &'a mut C,
    /// Every switch's data plane.
    pub fabric: &'a mut F,
    /// Completions and MSIs to hosts.
    pub hosts: &'a mut H,
    /// The ports' links.
    pub links: &'a mut L,
    /// The firmware update's flash, on a board that has one; without it
    /// the update requests are [`Error::Unsupported`].
    pub firmware: Option<&'a mut dyn FirmwareService>,
    /// The clock a hot reset waits on ([`crate::link_control`]); without
    /// it `PortControl` with `HotReset` is [`Error::Unsupported`].
    pub timer: Option<&'a mut dyn Timer>,
    /// The board's CSR window, configuration flash and reset.
    pub board: &'a mut B,
}

/// Answers `request` (with the bulk bytes `trailing` after it in its
/// datagram) from `manager`, driving `hardware` for requests that change
/// the fabric. Every refusal or failure is a [`Response::Error`].
pub fn handle<C, F, H, L, B>(
    manager: &mut FabricManager,
    board: &BoardInfo,
    request: &Request,
    trailing: &[u8],
    hardware: Hardware<'_, C, F, H, L, B>,
) -> Response
where
    C: FabricConfig + ?Sized,
    F: Fabric + ?Sized,
    H: HostInterface + ?Sized,
    L: PortLinks + ?Sized,
    B: Board + ?Sized,
{
    let mut hardware = hardware;
    if let Some(firmware) = hardware.firmware.as_deref_mut() {
        while let Some(event) = firmware.take_event() {
            manager.events.record(event);
        }
    }
    let answer = match request {
        Request::Ping => Ok(Response::Pong),
        Request::Identify => Ok(Response::Identity(identity(
            manager,
            board,
            hardware.board,
            hardware.firmware.is_some(),
        ))),
        Request::Topology { cursor, generation } => {
            topology(manager, board, *cursor, *generation, hardware.links).map(Response::Topology)
        }
        Request::VirtualSwitch { host } => {
            virtual_switch(manager, *host, hardware.links).map(Response::VirtualSwitch)
        }
        Request::Bind {
            host,
            slot,
            functions,
            if_generation,
        } => bind(manager, *host, *slot, functions, *if_generation, hardware),
        Request::Unbind {
            host,
            slot,
            mode,
            if_generation,
        } => unbind(manager, *host, *slot, *mode, *if_generation, hardware),
        // Bind finishes before its answer is sent; an unbind may wait for
        // its host, and a NumVFs change for its VFs, in the background.
        Request::OperationStatus { op } => {
            operation_status(manager, *op, hardware.config).map(Response::Operation)
        }
        Request::ReadEvents { from } => Ok(Response::Events(event_page(manager, *from))),
        Request::ConfigRead {
            target,
            offset,
            width,
        } => manager
            .diagnostic_read(
                Bdf::from(*target),
                *offset,
                width_of(*width),
                hardware.config,
            )
            .map(|value| Response::Config {
                target: *target,
                offset: *offset,
                value,
            })
            .map_err(|error| diagnostic_error(error, *target)),
        Request::ConfigWrite {
            target,
            offset,
            width,
            value,
        } => manager
            .diagnostic_write(
                Bdf::from(*target),
                *offset,
                width_of(*width),
                *value,
                hardware.config,
            )
            .map(|()| Response::Done)
            .map_err(|error| diagnostic_error(error, *target)),
        Request::PortControl {
            port,
            action: action @ (PortAction::HotReset | PortAction::Retrain),
        } => {
            crate::link_control::answer(manager, *port, *action, hardware).map(|()| Response::Done)
        }
        Request::PortControl { port, action } => {
            port_control(manager, *port, *action, hardware.fabric).map(|()| Response::Done)
        }
        Request::ReadCounters { port } => {
            read_counters(hardware.fabric.local(), *port).map(Response::Counters)
        }
        Request::ClearCounters { port, kind } => {
            clear_counters(hardware.fabric.local(), *port, *kind).map(|()| Response::Done)
        }
        Request::SetNumVfs { endpoint, num_vfs } => {
            set_num_vfs(manager, *endpoint, *num_vfs, hardware.config)
        }
        Request::SaveConfig => save_config(manager, hardware.board).map(|()| Response::Done),
        Request::RestoreConfig => {
            restore_config(manager, hardware.fabric, hardware.hosts, hardware.board)
                .map(|()| Response::Done)
        }
        Request::ResetArm { scope } => arm_reset(manager, *scope, hardware.board),
        Request::ResetTrigger { token } => {
            trigger_reset(manager, *token, hardware.board).map(|()| Response::Done)
        }
        Request::CsrRead { addr } => {
            csr_diagnostics::read(hardware.board, usize::from(board.ports), *addr)
                .map(|value| Response::Csr { addr: *addr, value })
                .map_err(csr_error)
        }
        Request::CsrWrite { addr, value } => {
            csr_diagnostics::write(hardware.board, usize::from(board.ports), *addr, *value)
                .map(|()| Response::Done)
                .map_err(csr_error)
        }
        // Only a firmware chunk carries bulk bytes: the codec has refused
        // them on every other request.
        Request::FirmwarePrepare { .. }
        | Request::FirmwareChunk { .. }
        | Request::FirmwareStatus
        | Request::FirmwarePrepareCommit
        | Request::FirmwareCommit { .. }
        | Request::FirmwareAbort => match hardware.firmware {
            Some(firmware) => firmware.serve(request, trailing),
            None => Err(Error::Unsupported),
        },
    };
    answer.unwrap_or_else(Response::Error)
}

/// The version of what topology and virtual-switch reads show: the
/// manager's generation counter, which every bind and unbind advances.
pub fn generation(manager: &FabricManager) -> Generation {
    Generation(manager.generation().0)
}

/// The manager's generation for a precondition on the wire.
fn precondition(expected: Option<Generation>) -> Option<crate::generation::Generation> {
    expected.map(|g| crate::generation::Generation(g.0))
}

/// Who the switch is, and what it can do: configuration-space
/// diagnostics always, saved configuration when the board has flash for it,
/// firmware update when a [`FirmwareService`] serves its requests
/// (`firmware_update`).
fn identity<B: Board + ?Sized>(
    manager: &FabricManager,
    board: &BoardInfo,
    hardware: &mut B,
    firmware_update: bool,
) -> Identity {
    let mut capabilities = Capabilities::BIND
        .union(Capabilities::SRIOV)
        .union(Capabilities::PEER_TO_PEER)
        .union(Capabilities::DIAGNOSTICS);
    if hardware.config_flash().is_some() {
        capabilities = capabilities.union(Capabilities::PERSISTENT_CONFIG);
    }
    if manager.inventory().switches.len() > 1 {
        capabilities = capabilities.union(Capabilities::MULTI_SWITCH);
    }
    if board.authenticated {
        capabilities = capabilities.union(Capabilities::AUTHENTICATED);
    }
    if firmware_update {
        capabilities = capabilities.union(Capabilities::FIRMWARE_UPDATE);
    }
    let (major, minor, patch) = board.version;
    Identity {
        switch: SwitchId(manager.settings().switch_id),
        firmware: FirmwareVersion {
            major,
            minor,
            patch,
            build: truncated(board.build),
        },
        protocol: PROTOCOL_VERSION,
        oldest_protocol: OLDEST_PROTOCOL_VERSION,
        board: truncated(board.board),
        ports: board.ports,
        capabilities,
    }
}

/// `text` cut at a character boundary to fit `N` bytes.
fn truncated<const N: usize>(text: &str) -> String<N> {
    let mut out = String::new();
    for c in text.chars() {
        if out.push(c).is_err() {
            break;
        }
    }
    out
}

/// The host index of the protocol as the manager's.
fn host_index(host: weft_proto::HostIndex) -> HostIndex {
    HostIndex(u16::from(host.0))
}

/// The manager's host index on the wire; indices past 255 cannot be named
/// there and read as 255.
fn wire_host(host: HostIndex) -> weft_proto::HostIndex {
    weft_proto::HostIndex(u8::try_from(host.0).unwrap_or(u8::MAX))
}

/// The switch ID of the inventory's switch `index`.
fn switch_id(manager: &FabricManager, index: SwitchIndex) -> SwitchId {
    SwitchId(
        manager
            .inventory()
            .switches
            .get(usize::from(index.0))
            .map_or(0, |s| s.id),
    )
}

// ---------------------------------------------------------------- topology

/// How many items of each kind the listing has, in its order: switches,
/// fabric links, ports, endpoints.
struct Counts {
    switches: usize,
    links: usize,
    ports: usize,
    endpoints: usize,
}

/// The fabric links, each once: from the end with the lower (switch ID, port).
fn links(manager: &FabricManager) -> impl Iterator<Item = (PortRef, PortRef)> + '_ {
    manager.inventory().switches.iter().flat_map(|switch| {
        (0..switch.port_count).filter_map(move |port| match switch.port(PortIndex(port)) {
            PortKind::Fabric {
                switch_id,
                port: far,
            } if (switch.id, port) < (switch_id, far.0) => Some((
                PortRef {
                    switch: SwitchId(switch.id),
                    port: weft_proto::PortIndex(port),
                },
                PortRef {
                    switch: SwitchId(switch_id),
                    port: weft_proto::PortIndex(far.0),
                },
            )),
            _ => None,
        })
    })
}

/// Every port of every switch, in discovery order, with its role as the
/// protocol shows it.
fn ports(manager: &FabricManager) -> impl Iterator<Item = (u64, u8, PortRole)> + '_ {
    manager.inventory().switches.iter().flat_map(|switch| {
        (0..switch.port_count).map(move |port| {
            let role = match switch.port(PortIndex(port)) {
                PortKind::Empty if switch.not_responding(PortIndex(port)) => {
                    PortRole::NotResponding
                }
                PortKind::Empty => PortRole::Unused,
                PortKind::Host { host, .. } => PortRole::Host {
                    host: wire_host(host),
                },
                PortKind::Endpoint { .. } => PortRole::Endpoint,
                PortKind::Fabric { .. } => PortRole::Fabric,
            };
            (switch.id, port, role)
        })
    })
}

fn counts(manager: &FabricManager) -> Counts {
    let inventory = manager.inventory();
    Counts {
        switches: inventory.switches.len(),
        links: links(manager).count(),
        ports: ports(manager).count(),
        endpoints: inventory.functions.len(),
    }
}

/// One page of the listing from `cursor` on.
fn topology<L: PortLinks + ?Sized>(
    manager: &FabricManager,
    board: &BoardInfo,
    cursor: TopologyCursor,
    expected: Option<Generation>,
    port_links: &mut L,
) -> Result<TopologyPage, Error> {
    let generation = generation(manager);
    if let Some(expected) = expected {
        if expected != generation {
            return Err(Error::StaleGeneration {
                current: generation,
            });
        }
    }
    let counts = counts(manager);
    let total = counts.switches + counts.links + counts.ports + counts.endpoints;
    let start = usize::try_from(cursor.0).unwrap_or(usize::MAX);
    if start > total {
        return Err(Error::BadCursor { cursor });
    }
    let end = total.min(start + TOPOLOGY_PAGE_ITEMS);
    let mut items = Vec::new();
    for index in start..end {
        let Some(item) = topology_item(manager, board, &counts, index, port_links) else {
            break;
        };
        // The page holds TOPOLOGY_PAGE_ITEMS, and at most that many are asked for.
        let _ = items.push(item);
    }
    let next = (end < total).then_some(TopologyCursor(end as u32));
    Ok(TopologyPage {
        generation,
        items,
        next,
    })
}

/// Item `index` of the listing.
fn topology_item<L: PortLinks + ?Sized>(
    manager: &FabricManager,
    board: &BoardInfo,
    counts: &Counts,
    index: usize,
    port_links: &mut L,
) -> Option<TopologyItem> {
    let inventory = manager.inventory();
    let mut index = index;
    if index < counts.switches {
        let switch = inventory.switches.get(index)?;
        let local = index == usize::from(SwitchIndex::LOCAL.0);
        return Some(TopologyItem::Switch(SwitchInfo {
            id: SwitchId(switch.id),
            // The manager learns other switches' IDs and port counts from
            // their identity VSECs, not their boards.
            board: if local {
                truncated(board.board)
            } else {
                BoardName::new()
            },
            ports: switch.port_count,
            manager: local,
        }));
    }
    index -= counts.switches;
    if index < counts.links {
        let (a, b) = links(manager).nth(index)?;
        let link = port_links.link(a.switch.0, a.port.0).status;
        return Some(TopologyItem::Link(FabricLink { a, b, link }));
    }
    index -= counts.links;
    if index < counts.ports {
        let (switch, port, role) = ports(manager).nth(index)?;
        let link = port_links.link(switch, port);
        return Some(TopologyItem::Port(PortInfo {
            at: PortRef {
                switch: SwitchId(switch),
                port: weft_proto::PortIndex(port),
            },
            role,
            link: link.status,
            max_speed: link.max_speed,
            max_width: link.max_width,
        }));
    }
    index -= counts.ports;
    let function = inventory.functions.get(index)?;
    Some(TopologyItem::Endpoint(endpoint(manager, function)))
}

/// One function as the listing shows it.
fn endpoint(manager: &FabricManager, function: &Function) -> EndpointInfo {
    let mut bars = Vec::new();
    for bar in &function.bars {
        let (kind, prefetchable) = match bar.bar().kind {
            PcieBarKind::Io => (BarKind::Io, false),
            PcieBarKind::Memory32 { prefetchable } => (BarKind::Memory32, prefetchable),
            PcieBarKind::Memory64 { prefetchable } => (BarKind::Memory64, prefetchable),
        };
        // Both lists hold the six BARs of a Type 0 header.
        let _ = bars.push(BarInfo {
            index: ((bar.register() - 0x10) / 4) as u8,
            kind,
            prefetchable,
            size: bar.size(),
            fabric_address: bar.fabric_address().unwrap_or(0),
        });
    }
    let sriov = function.sriov.map(|setup| SriovInfo {
        total_vfs: setup.total_vfs,
        num_vfs: setup.num_vfs,
        first_vf_offset: setup.first_vf_offset,
        vf_stride: setup.vf_stride,
        // The inventory keeps the VF Device ID on each VF (§9.3.3.11); a
        // PF with no VFs enabled reports 0.
        vf_device_id: vf_device_id(manager, function.id),
    });
    let physical_function = match function.kind {
        FunctionKind::Physical => None,
        FunctionKind::Virtual { pf, .. } => Some(FabricId::from(pf)),
    };
    EndpointInfo {
        fabric_id: FabricId::from(function.id),
        at: PortRef {
            switch: switch_id(manager, function.switch),
            port: weft_proto::PortIndex(function.port.0),
        },
        vendor_id: function.vendor_id,
        device_id: function.device_id,
        class_code: weft_proto::ClassCode(function.class_code),
        bars,
        sriov,
        physical_function,
        owner: function.binding.map(|b| Owner {
            host: wire_host(b.host),
            slot: SlotIndex(b.slot),
        }),
    }
}

/// The Device ID of the VFs of PF `pf`, 0 if it has none.
fn vf_device_id(manager: &FabricManager, pf: Bdf) -> u16 {
    manager
        .inventory()
        .functions
        .iter()
        .find(|f| matches!(f.kind, FunctionKind::Virtual { pf: of, .. } if of == pf))
        .map_or(0, |vf| vf.device_id)
}

// ---------------------------------------------------------------- events

/// One page of the event log from sequence number `from` on: the oldest
/// entry held, up to [`weft_proto::EVENTS_PAGE_LEN`] entries (which fit one datagram
/// whatever they are) and the number to ask for next.
///
/// A `from` older than the oldest entry held gets the entries from the
/// oldest on, and `oldest` after `from` says that those in between were
/// overwritten. A `from` past the next number to be recorded (asked of a
/// restarted switch) gets no entries and that next number. A client of
/// protocol version 1 gets the page without the kinds introduced in
/// version 2 (`weft_proto::Response::downgrade_for`).
fn event_page(manager: &FabricManager, from: EventSeq) -> EventPage {
    let log = manager.events();
    let mut page = EventPage {
        oldest: EventSeq(u64::from(log.oldest_sequence())),
        events: Vec::new(),
        next: EventSeq(u64::from(log.next_sequence())),
    };
    let start = match u32::try_from(from.0) {
        Ok(start) if start <= log.next_sequence() => start,
        _ => return page,
    };
    for logged in log.since(start) {
        let seq = EventSeq(u64::from(logged.sequence));
        let event = WireEvent {
            seq,
            // The timer counts from the links' reset, when the firmware starts.
            time_ms: logged.time_ns / 1_000_000,
            kind: wire_event(manager, &logged.event),
        };
        if page.events.push(event).is_err() {
            page.next = seq;
            break;
        }
    }
    page
}

/// An entry of the manager's log as the protocol shows it. A link of a
/// host port is the host's, a link of the manager's own fabric port is a
/// fabric link's, and any other port's link is named by switch and port.
fn wire_event(manager: &FabricManager, event: &LogEvent) -> EventKind {
    let port_ref = |switch: SwitchIndex, port: PortIndex| PortRef {
        switch: switch_id(manager, switch),
        port: weft_proto::PortIndex(port.0),
    };
    let link = |switch: SwitchIndex, port: PortIndex, up: bool| match manager
        .inventory()
        .port_on(switch, port)
    {
        PortKind::Host { host, .. } if up => EventKind::HostLinkUp {
            host: wire_host(host),
        },
        PortKind::Host { host, .. } => EventKind::HostLinkDown {
            host: wire_host(host),
        },
        PortKind::Fabric { .. } if switch == SwitchIndex::LOCAL => {
            let port = weft_proto::PortIndex(port.0);
            if up {
                EventKind::FabricLinkUp { port }
            } else {
                EventKind::FabricLinkDown { port }
            }
        }
        _ if up => EventKind::PortLinkUp {
            at: port_ref(switch, port),
        },
        _ => EventKind::PortLinkDown {
            at: port_ref(switch, port),
        },
    };
    match *event {
        LogEvent::LinkUp { switch, port } => link(switch, port, true),
        LogEvent::LinkDown { switch, port } => link(switch, port, false),
        LogEvent::DeviceAdded { function, .. } => EventKind::EndpointAdded {
            fabric_id: FabricId::from(function),
        },
        LogEvent::NotResponding { switch, port } => EventKind::PortNotResponding {
            at: port_ref(switch, port),
        },
        LogEvent::DeviceNotResponding {
            device,
            switch,
            port,
        } => EventKind::DeviceNotResponding {
            at: port_ref(switch, port),
            fabric_id: FabricId::from(device),
        },
        LogEvent::DeviceRemoved { function, .. } => EventKind::EndpointRemoved {
            fabric_id: FabricId::from(function),
        },
        LogEvent::Bound {
            function, binding, ..
        } => EventKind::Bound {
            host: wire_host(binding.host),
            slot: SlotIndex(binding.slot),
            fabric_id: FabricId::from(function),
        },
        LogEvent::Unbound {
            function,
            binding,
            mode,
            ..
        } => EventKind::Unbound {
            host: wire_host(binding.host),
            slot: SlotIndex(binding.slot),
            fabric_id: FabricId::from(function),
            mode: wire_mode(mode),
        },
        LogEvent::BindingNotRestored {
            function,
            binding,
            reason,
        } => EventKind::BindingNotRestored {
            host: wire_host(binding.host),
            slot: SlotIndex(binding.slot),
            fabric_id: FabricId::from(function),
            reason: match reason {
                NotRestored::FunctionGone => RestoreFailure::FunctionGone,
                NotRestored::Refused => RestoreFailure::Refused,
            },
        },
        LogEvent::HotPlugSent {
            host,
            slot,
            present,
        } => EventKind::HotPlugSignalled {
            host: wire_host(host),
            slot: SlotIndex(slot),
            present,
        },
        LogEvent::IsolationDrops {
            switch,
            port,
            check,
            count,
        } => EventKind::IsolationDrops {
            at: port_ref(switch, port),
            check: match check {
                LogCheck::Unbound => IsolationCheck::Unbound,
                LogCheck::SpoofedRequester => IsolationCheck::SpoofedRequester,
                LogCheck::NoWindow => IsolationCheck::NoWindow,
                LogCheck::Forbidden => IsolationCheck::Forbidden,
                LogCheck::OutsideAperture => IsolationCheck::OutsideAperture,
            },
            count,
        },
        LogEvent::PortControlled { port, enabled } => EventKind::PortControlled {
            port: weft_proto::PortIndex(port.0),
            action: if enabled {
                PortAction::Enable
            } else {
                PortAction::Disable
            },
        },
        LogEvent::LinkControlled { port, request } => EventKind::PortControlled {
            port: weft_proto::PortIndex(port.0),
            action: crate::link_control::wire_action(request),
        },
        LogEvent::ErrorMessage {
            requester,
            severity,
            ..
        } => EventKind::Aer {
            fabric_id: FabricId::from(requester),
            severity: match severity {
                ErrorSeverity::Correctable => AerSeverity::Correctable,
                ErrorSeverity::NonFatal => AerSeverity::NonFatal,
                ErrorSeverity::Fatal => AerSeverity::Fatal,
            },
            // The manager logs the message, not the function's AER
            // status registers: 0, not read.
            status: 0,
        },
        LogEvent::NumVfsChanged { pf, num_vfs } => EventKind::NumVfsChanged {
            fabric_id: FabricId::from(pf),
            num_vfs,
        },
        LogEvent::ConfigSaved => EventKind::ConfigSaved,
        LogEvent::ConfigRestored => EventKind::ConfigRestored,
        LogEvent::FirmwareStaged => EventKind::FirmwareStaged,
        LogEvent::FirmwareCommitted => EventKind::FirmwareCommitted,
        LogEvent::FirmwareTrialStarted { .. } => EventKind::Booted {
            reason: BootReason::FirmwareTrial,
        },
        LogEvent::FirmwareCheckedIn { slot } => EventKind::FirmwareCheckedIn { slot },
        LogEvent::FirmwareBootedBack { .. } => EventKind::Booted {
            reason: BootReason::FirmwareRollback,
        },
    }
}

// ---------------------------------------------------------------- diagnostics

/// The manager's access width for the protocol's.
fn width_of(width: AccessWidth) -> Width {
    match width {
        AccessWidth::Byte => Width::Byte,
        AccessWidth::Word => Width::Word,
        AccessWidth::Dword => Width::Dword,
    }
}

/// The protocol's error for a refused or failed diagnostic access to `target`.
fn diagnostic_error(error: DiagnosticError, target: FabricId) -> Error {
    match error {
        DiagnosticError::NotReady => Error::Busy {
            retry_after_ms: NOT_READY_RETRY_MS,
        },
        DiagnosticError::NoSuchFunction(id) => Error::NoSuchEndpoint {
            fabric_id: FabricId::from(id),
        },
        DiagnosticError::OutOfRange { offset } => Error::ConfigOutOfRange { offset },
        DiagnosticError::Misaligned { offset, width } => Error::Misaligned {
            offset: u32::from(offset),
            width: match width {
                Width::Byte => AccessWidth::Byte,
                Width::Word => AccessWidth::Word,
                Width::Dword => AccessWidth::Dword,
            },
        },
        DiagnosticError::FabricOwned { function, offset } => Error::FabricOwnedRegister {
            fabric_id: FabricId::from(function),
            offset,
        },
        DiagnosticError::Config(fault) => Error::ConfigAccessFailed {
            fabric_id: target,
            status: completion_status(fault),
        },
    }
}

/// How a failed configuration request completed, as the protocol says it.
fn completion_status(fault: ConfigFault) -> CompletionStatus {
    match fault {
        ConfigFault::UnsupportedRequest | ConfigFault::NoSuchPort(_) => {
            CompletionStatus::UnsupportedRequest
        }
        ConfigFault::RequestRetry => CompletionStatus::RetryStatus,
        ConfigFault::CompleterAbort => CompletionStatus::CompleterAbort,
        ConfigFault::Timeout => CompletionStatus::Timeout,
    }
}

// ---------------------------------------------------------------- virtual switches

/// `host`'s virtual switch and what is bound to its slots.
fn virtual_switch<L: PortLinks + ?Sized>(
    manager: &FabricManager,
    host: weft_proto::HostIndex,
    port_links: &mut L,
) -> Result<VirtualSwitchInfo, Error> {
    let switch = manager
        .virtual_switch(host_index(host))
        .ok_or(Error::NoSuchHost { host })?;
    let mut slots = Vec::new();
    for (slot, vdsp) in switch.downstream.iter().enumerate() {
        let state = match (vdsp.bound, vdsp.unbinding) {
            (Some(bound), unbinding) => {
                let mut functions = Vec::new();
                // One function per slot fits a list of eight.
                let _ = functions.push(FabricId::from(bound.function));
                match unbinding {
                    Some(pending) => SlotState::Unbinding {
                        functions,
                        mode: wire_mode(pending.mode),
                    },
                    None => SlotState::Bound { functions },
                }
            }
            (None, _) => SlotState::Empty,
        };
        // The manager's slots (MAX_SLOTS_PER_HOST) fit the message's (MAX_SLOTS).
        let _ = slots.push(SlotInfo {
            slot: SlotIndex(slot as u8),
            state,
        });
    }
    Ok(VirtualSwitchInfo {
        host,
        upstream: port_links.link(switch.switch_id, switch.port.0).status,
        generation: generation(manager),
        slots,
    })
}

/// Binds `functions` (one function: the manager binds one per slot) to
/// `host`'s `slot`.
fn bind<C, F, H, L, B>(
    manager: &mut FabricManager,
    host: weft_proto::HostIndex,
    slot: SlotIndex,
    functions: &[FabricId],
    if_generation: Option<Generation>,
    hardware: Hardware<'_, C, F, H, L, B>,
) -> Result<Response, Error>
where
    C: FabricConfig + ?Sized,
    F: Fabric + ?Sized,
    H: HostInterface + ?Sized,
    L: PortLinks + ?Sized,
    B: ?Sized,
{
    let endpoint = match functions {
        [] => return Err(Error::NoFunctions),
        [only] => Bdf::from(*only),
        // A slot holds one function in the manager's virtual switches.
        [_, ..] => return Err(Error::Unsupported),
    };
    manager
        .bind_if(
            endpoint,
            host_index(host),
            slot.0,
            precondition(if_generation),
            hardware.fabric,
            hardware.hosts,
        )
        .map_err(|error| bind_error(manager, error, endpoint, host))?;
    Ok(Response::Done)
}

/// Unbinds whatever is bound to `host`'s `slot`.
fn unbind<C, F, H, L, B>(
    manager: &mut FabricManager,
    host: weft_proto::HostIndex,
    slot: SlotIndex,
    mode: ProtoUnbindMode,
    if_generation: Option<Generation>,
    hardware: Hardware<'_, C, F, H, L, B>,
) -> Result<Response, Error>
where
    C: FabricConfig + ?Sized,
    F: Fabric + ?Sized,
    H: HostInterface + ?Sized,
    L: PortLinks + ?Sized,
    B: ?Sized,
{
    if let Some(expected) = if_generation {
        let current = generation(manager);
        if expected != current {
            return Err(Error::StaleGeneration { current });
        }
    }
    let switch = manager
        .virtual_switch(host_index(host))
        .ok_or(Error::NoSuchHost { host })?;
    let vdsp = switch
        .downstream
        .get(usize::from(slot.0))
        .ok_or(Error::NoSuchSlot { host, slot })?;
    let bound = vdsp.bound.ok_or(Error::SlotEmpty { host, slot })?;
    let mode = match mode {
        ProtoUnbindMode::Graceful => UnbindMode::Graceful,
        ProtoUnbindMode::Managed => UnbindMode::Managed,
        ProtoUnbindMode::Surprise => UnbindMode::Surprise,
    };
    let unbinding = manager
        .unbind_if(
            bound.function,
            mode,
            precondition(if_generation),
            hardware.fabric,
            hardware.hosts,
        )
        .map_err(|error| bind_error(manager, error, bound.function, host))?;
    Ok(match unbinding {
        Unbinding::Unbound(_) => Response::Done,
        Unbinding::Waiting(op) => Response::InProgress {
            op: OperationId(op.0),
        },
    })
}

/// The protocol's name for an unbind mode.
fn wire_mode(mode: UnbindMode) -> ProtoUnbindMode {
    match mode {
        UnbindMode::Graceful => ProtoUnbindMode::Graceful,
        UnbindMode::Managed => ProtoUnbindMode::Managed,
        UnbindMode::Surprise => ProtoUnbindMode::Surprise,
    }
}

/// Where background operation `op` stands: an unbind waiting for its
/// host, or a NumVFs change waiting for its VFs (moved on first, so the
/// answer is current), or how either ended.
fn operation_status<C: FabricConfig + ?Sized>(
    manager: &mut FabricManager,
    op: OperationId,
    config: &mut C,
) -> Result<OperationReport, Error> {
    if manager.num_vfs_operation() == Some(ManagerOperationId(op.0)) {
        if let Some(report) = advance_operations(manager, config) {
            return Ok(report);
        }
    }
    let state = match manager.operation(ManagerOperationId(op.0)) {
        None => return Err(Error::NoSuchOperation { op }),
        Some(OperationState::Running) => WireOperationState::Running { percent: 0 },
        Some(OperationState::Finished(Ok(()))) => WireOperationState::Succeeded,
        Some(OperationState::Finished(Err(error))) => WireOperationState::Failed {
            reason: operation_error(error),
        },
    };
    Ok(OperationReport { op, state })
}

/// The protocol's error for a background operation that failed after it
/// was answered in progress.
fn operation_error(error: OperationError) -> Error {
    match error {
        OperationError::Unbind(error) => unbind_error(error),
        OperationError::NumVfs(error) => num_vfs_error(error),
    }
}

/// The protocol's error for an unbind that failed after it was answered
/// in progress: its table writes or its hot-plug MSI.
fn unbind_error(error: BindError) -> Error {
    match error {
        BindError::Host(HostSendError::QueueFull(_)) => Error::Busy {
            retry_after_ms: QUEUE_FULL_RETRY_MS,
        },
        BindError::PortDisabled(port) => Error::PortDisabled {
            port: weft_proto::PortIndex(port.0),
        },
        _ => Error::Unsupported,
    }
}

/// The protocol's error for a refused or failed bind or unbind of
/// `endpoint` for `host`.
fn bind_error(
    manager: &FabricManager,
    error: BindError,
    endpoint: Bdf,
    host: weft_proto::HostIndex,
) -> Error {
    match error {
        BindError::NotReady => Error::Busy {
            retry_after_ms: NOT_READY_RETRY_MS,
        },
        BindError::StaleGeneration { current, .. } => Error::StaleGeneration {
            current: Generation(current.0),
        },
        BindError::NoSuchEndpoint(id) | BindError::NotBound(id) => Error::NoSuchEndpoint {
            fabric_id: FabricId::from(id),
        },
        BindError::NoSuchHost(host) => Error::NoSuchHost {
            host: wire_host(host),
        },
        BindError::NoSuchSlot { host, slot } => Error::NoSuchSlot {
            host: wire_host(host),
            slot: SlotIndex(slot),
        },
        BindError::SlotOccupied {
            host,
            slot,
            occupant,
        } => Error::SlotOccupied {
            host: wire_host(host),
            slot: SlotIndex(slot),
            bound: FabricId::from(occupant),
        },
        BindError::EndpointBusy { owner } => Error::EndpointBusy {
            fabric_id: FabricId::from(endpoint),
            owner: Owner {
                host: wire_host(owner.host),
                slot: SlotIndex(owner.slot),
            },
        },
        // The port is held by a function bound to another host: name that
        // function and where it is bound, which is what must be unbound.
        BindError::PortOwnedByOtherHost {
            switch,
            port,
            owner,
            ..
        } => manager
            .inventory()
            .functions
            .iter()
            .filter(|f| f.switch == switch && f.port == port)
            .find_map(|f| {
                f.binding
                    .filter(|b| b.host == owner)
                    .map(|b| Error::EndpointBusy {
                        fabric_id: FabricId::from(f.id),
                        owner: Owner {
                            host: wire_host(b.host),
                            slot: SlotIndex(b.slot),
                        },
                    })
            })
            .unwrap_or(Error::Unsupported),
        BindError::Host(HostSendError::QueueFull(_)) => Error::Busy {
            retry_after_ms: QUEUE_FULL_RETRY_MS,
        },
        BindError::Host(HostSendError::NoSuchPort(_)) => Error::HostLinkDown { host },
        // A table too small for the binding, a failed table write or a
        // switch without a data plane handle: the board cannot do it, and
        // the protocol has no closer cause.
        BindError::TableFull { .. } | BindError::Table(_) | BindError::UnreachableSwitch { .. } => {
            Error::Unsupported
        }
        BindError::PortDisabled(port) => Error::PortDisabled {
            port: weft_proto::PortIndex(port.0),
        },
        BindError::UnbindInProgress { host, slot, op } => Error::UnbindInProgress {
            host: wire_host(host),
            slot: SlotIndex(slot),
            op: OperationId(op.0),
        },
    }
}

// ---------------------------------------------------------------- counters

/// Each counter kind the data plane counts, with the counters of the
/// register map (`weft_regs::csr::counter`, by name) whose sum it is.
/// Every counter of the map is in at least one; the kinds not here are
/// not counted by the data plane (see the module's documentation).
const COUNTED: &[(CounterKind, &[&str])] = &[
    (
        CounterKind::RxTlps,
        &["TLPS_IN_POSTED", "TLPS_IN_NON_POSTED", "TLPS_IN_COMPLETION"],
    ),
    (
        CounterKind::TxTlps,
        &[
            "TLPS_OUT_POSTED",
            "TLPS_OUT_NON_POSTED",
            "TLPS_OUT_COMPLETION",
        ],
    ),
    (CounterKind::RxPosted, &["TLPS_IN_POSTED"]),
    (CounterKind::RxNonPosted, &["TLPS_IN_NON_POSTED"]),
    (CounterKind::RxCompletions, &["TLPS_IN_COMPLETION"]),
    (CounterKind::TxPosted, &["TLPS_OUT_POSTED"]),
    (CounterKind::TxNonPosted, &["TLPS_OUT_NON_POSTED"]),
    (CounterKind::TxCompletions, &["TLPS_OUT_COMPLETION"]),
    (CounterKind::RxWireBytes, &["BYTES_IN"]),
    (CounterKind::TxWireBytes, &["BYTES_OUT"]),
    (CounterKind::CreditStallCycles, &["STALL_CYCLES"]),
    (CounterKind::DroppedMalformed, &["DROP_MALFORMED"]),
    (CounterKind::DroppedPortDisabled, &["DROP_PORT_DISABLED"]),
    (
        CounterKind::DroppedIsolation,
        &[
            "DROP_UNBOUND",
            "DROP_SPOOFED_REQUESTER",
            "DROP_NO_WINDOW",
            "DROP_FORBIDDEN",
            "DROP_OUTSIDE_APERTURE",
        ],
    ),
    (CounterKind::DroppedUnbound, &["DROP_UNBOUND"]),
    (
        CounterKind::DroppedSpoofedRequester,
        &["DROP_SPOOFED_REQUESTER"],
    ),
    (CounterKind::DroppedNoWindow, &["DROP_NO_WINDOW"]),
    (CounterKind::DroppedForbidden, &["DROP_FORBIDDEN"]),
    (
        CounterKind::DroppedOutsideAperture,
        &["DROP_OUTSIDE_APERTURE"],
    ),
    (CounterKind::DroppedUnsupportedType, &["DROP_UNSUPPORTED"]),
    (CounterKind::DroppedNoRoute, &["DROP_NO_ROUTE"]),
    (
        CounterKind::DroppedRoutesToIngress,
        &["DROP_ROUTES_TO_INGRESS"],
    ),
    (
        CounterKind::DroppedUnexpectedCompletion,
        &["DROP_UNEXPECTED_COMPLETION"],
    ),
    (
        CounterKind::DroppedUnknownFunction,
        &["DROP_UNKNOWN_FUNCTION"],
    ),
];

/// The protocol's error for a data plane that refused a counter access to `port`.
fn counter_error(error: TableWriteError, port: weft_proto::PortIndex) -> Error {
    match error {
        TableWriteError::NoSuchPort(_) => Error::NoSuchPort { port },
        // Entries come from the register map itself: no other refusal is
        // possible, and the protocol has no closer cause.
        _ => Error::Unsupported,
    }
}

/// `port`'s counters: every counter of the register map read once, then
/// summed into the kinds of [`COUNTED`], in its order.
fn read_counters(
    plane: &mut dyn DataPlane,
    port: weft_proto::PortIndex,
) -> Result<WirePortCounters, Error> {
    let mut raw = [0u64; counter::NAMES.len()];
    for (entry, value) in raw.iter_mut().enumerate() {
        *value = plane
            .read_counter(PortIndex(port.0), entry as u32)
            .map_err(|error| counter_error(error, port))?;
    }
    let mut values = Vec::new();
    for (kind, names) in COUNTED {
        let value = names
            .iter()
            .filter_map(|name| counter::NAMES.iter().position(|n| n.name == *name))
            .fold(0u64, |sum, entry| sum.wrapping_add(raw[entry]));
        // COUNTED has fewer kinds than a message holds (MAX_COUNTERS).
        let _ = values.push(CounterValue { kind: *kind, value });
    }
    Ok(WirePortCounters { port, values })
}

/// Clears the counters of `port`, or of every port. The data plane clears
/// a port's counters together (`weft_regs::csr::counter_control`), so a
/// request for one kind alone is refused with [`Error::Unsupported`]
/// before anything is cleared.
fn clear_counters(
    plane: &mut dyn DataPlane,
    port: Option<weft_proto::PortIndex>,
    kind: Option<CounterKind>,
) -> Result<(), Error> {
    if kind.is_some() {
        return Err(Error::Unsupported);
    }
    match port {
        Some(port) => plane
            .clear_counters(PortIndex(port.0))
            .map_err(|error| counter_error(error, port)),
        None => (0..plane.ports()).try_for_each(|p| {
            let port = weft_proto::PortIndex(p as u8);
            plane
                .clear_counters(PortIndex(port.0))
                .map_err(|error| counter_error(error, port))
        }),
    }
}

// ---------------------------------------------------------------- port control

/// Enables or disables `port` of the manager's own switch
/// ([`crate::port_control`]); hot reset and retraining are answered by
/// [`crate::link_control::answer`].
fn port_control<F: Fabric + ?Sized>(
    manager: &mut FabricManager,
    port: weft_proto::PortIndex,
    action: PortAction,
    fabric: &mut F,
) -> Result<(), Error> {
    let local = PortIndex(port.0);
    let done = match action {
        PortAction::Enable => manager.enable_port(local, fabric),
        PortAction::Disable => manager.disable_port(local, fabric),
        PortAction::HotReset | PortAction::Retrain => {
            unreachable!("handle answers link actions through link_control")
        }
    };
    done.map_err(|error| match error {
        PortControlError::NotReady => Error::Busy {
            retry_after_ms: NOT_READY_RETRY_MS,
        },
        PortControlError::NoSuchPort(_) => Error::NoSuchPort { port },
        PortControlError::HostPort { host, .. } => Error::HostPort {
            port,
            host: wire_host(host),
        },
        PortControlError::Bound { function, binding } => Error::EndpointBusy {
            fabric_id: FabricId::from(function),
            owner: Owner {
                host: wire_host(binding.host),
                slot: SlotIndex(binding.slot),
            },
        },
        // The data plane refused its own port's role: nothing closer to say.
        PortControlError::Table(_) => Error::Unsupported,
    })
}

// ---------------------------------------------------------------- SR-IOV

/// How long a client waits when another NumVFs change is still waiting
/// for its VFs: they are accessed 100 ms after VF Enable (§9.3.3.3.1).
pub const NUM_VFS_RETRY_MS: u32 = 100;

/// Sets NumVFs of `endpoint`: `Done` when nothing needs waiting for,
/// in progress while the new VFs may not be accessed yet.
fn set_num_vfs<C: FabricConfig + ?Sized>(
    manager: &mut FabricManager,
    endpoint: FabricId,
    num_vfs: u16,
    config: &mut C,
) -> Result<Response, Error> {
    match manager.begin_num_vfs(Bdf::from(endpoint), num_vfs, config) {
        Ok(NumVfsStarted::Done) => Ok(Response::Done),
        Ok(NumVfsStarted::Waiting(op)) => Ok(Response::InProgress {
            op: OperationId(op.0),
        }),
        Err(error) => Err(num_vfs_error(error)),
    }
}

/// Moves the background NumVFs change on, if one runs
/// ([`FabricManager::poll_num_vfs`], which keeps its outcome once it
/// ends); returns where it stands. The firmware calls it on every pass of
/// its loop, so the VFs join the inventory whether or not a client polls.
pub fn advance_operations<C: FabricConfig + ?Sized>(
    manager: &mut FabricManager,
    config: &mut C,
) -> Option<OperationReport> {
    let op = manager.num_vfs_operation()?;
    let state = match manager.poll_num_vfs(config)? {
        Ok(NumVfsProgress::Waiting { percent }) => WireOperationState::Running { percent },
        Ok(NumVfsProgress::Done) => WireOperationState::Succeeded,
        Err(error) => WireOperationState::Failed {
            reason: num_vfs_error(error),
        },
    };
    Some(OperationReport {
        op: OperationId(op.0),
        state,
    })
}

/// The protocol's error for a refused or failed NumVFs change.
fn num_vfs_error(error: NumVfsError) -> Error {
    match error {
        NumVfsError::NotReady => Error::Busy {
            retry_after_ms: NOT_READY_RETRY_MS,
        },
        NumVfsError::Busy => Error::Busy {
            retry_after_ms: NUM_VFS_RETRY_MS,
        },
        NumVfsError::NoSuchFunction(id) => Error::NoSuchEndpoint {
            fabric_id: FabricId::from(id),
        },
        NumVfsError::NotSriovCapable(id) => Error::NotSriovCapable {
            fabric_id: FabricId::from(id),
        },
        NumVfsError::AboveTotal { pf, total_vfs } => Error::TooManyVfs {
            fabric_id: FabricId::from(pf),
            total_vfs,
        },
        NumVfsError::VfBound { pf, vf } => Error::VfBound {
            fabric_id: FabricId::from(pf),
            vf: FabricId::from(vf),
        },
        NumVfsError::Hardware(EnumerationError::Config { id, fault }) => {
            Error::ConfigAccessFailed {
                fabric_id: FabricId::from(id),
                status: completion_status(fault),
            }
        }
        // VFs beyond the port's bus numbers, a malformed SR-IOV
        // capability, a full inventory or settings: the protocol has no
        // closer cause.
        NumVfsError::OutsidePortBuses { .. }
        | NumVfsError::TooManyPfs
        | NumVfsError::Hardware(_) => Error::Unsupported,
    }
}

// ---------------------------------------------------------------- saved configuration

/// A flash that remembers the last operation asked of it, so that a
/// failure names it ([`Error::FlashFailed`]).
struct Tracked<'a> {
    flash: &'a mut dyn Flash,
    last: FlashOp,
}

impl Flash for Tracked<'_> {
    fn size(&self) -> u32 {
        self.flash.size()
    }

    fn read(&mut self, offset: u32, buf: &mut [u8]) -> Result<(), FlashError> {
        self.last = FlashOp::Read;
        self.flash.read(offset, buf)
    }

    fn erase(&mut self, offset: u32, len: u32) -> Result<(), FlashError> {
        self.last = FlashOp::Erase;
        self.flash.erase(offset, len)
    }

    fn write(&mut self, offset: u32, data: &[u8]) -> Result<(), FlashError> {
        self.last = FlashOp::Program;
        self.flash.write(offset, data)
    }
}

/// The protocol's error for a failed store or load during `last`.
fn persist_error(error: PersistError, last: FlashOp) -> Error {
    match error {
        PersistError::Flash(_) => Error::FlashFailed { op: last },
        PersistError::VerifyFailed { .. } => Error::FlashFailed {
            op: FlashOp::Verify,
        },
        // The board's region cannot hold a record: it cannot save one.
        PersistError::RegionTooSmall { .. } => Error::Unsupported,
    }
}

/// The board's configuration flash, tracked, or `Unsupported` without one.
fn config_flash<B: Board + ?Sized>(board: &mut B) -> Result<Tracked<'_>, Error> {
    let flash = board.config_flash().ok_or(Error::Unsupported)?;
    Ok(Tracked {
        flash,
        last: FlashOp::Read,
    })
}

/// Saves the bindings and NumVFs to the board's flash
/// ([`FabricManager::save_config`]), once the fabric is enumerated (a
/// save before would replace the saved bindings with none).
fn save_config<B: Board + ?Sized>(manager: &mut FabricManager, board: &mut B) -> Result<(), Error> {
    if !manager.is_ready() {
        return Err(Error::Busy {
            retry_after_ms: NOT_READY_RETRY_MS,
        });
    }
    let mut flash = config_flash(board)?;
    manager
        .save_config(&mut flash)
        .map_err(|error| persist_error(error, flash.last))?;
    manager.events.record(LogEvent::ConfigSaved);
    Ok(())
}

/// Applies the configuration saved in the board's flash now
/// ([`FabricManager::apply_saved`]): no record is [`Error::NoSavedConfig`],
/// a damaged one [`Error::SavedConfigCorrupt`], and nothing changes.
fn restore_config<F, H, B>(
    manager: &mut FabricManager,
    fabric: &mut F,
    hosts: &mut H,
    board: &mut B,
) -> Result<(), Error>
where
    F: Fabric + ?Sized,
    H: HostInterface + ?Sized,
    B: Board + ?Sized,
{
    if !manager.is_ready() {
        return Err(Error::Busy {
            retry_after_ms: NOT_READY_RETRY_MS,
        });
    }
    let mut flash = config_flash(board)?;
    let saved = persist::load_saved::<StoredConfig, _>(&mut flash)
        .map_err(|error| persist_error(error, flash.last))?;
    let config = match saved {
        Saved::Record(config) => config,
        Saved::Empty => return Err(Error::NoSavedConfig),
        Saved::Corrupt => return Err(Error::SavedConfigCorrupt),
    };
    manager
        .apply_saved(&config, fabric, hosts)
        .map_err(|error| match error {
            BindError::NotReady => Error::Busy {
                retry_after_ms: NOT_READY_RETRY_MS,
            },
            BindError::Host(HostSendError::QueueFull(_)) => Error::Busy {
                retry_after_ms: QUEUE_FULL_RETRY_MS,
            },
            // A hot-plug interrupt that cannot reach its host: the
            // bindings are made, the host was not told.
            _ => Error::Unsupported,
        })?;
    manager.events.record(LogEvent::ConfigRestored);
    Ok(())
}

// ---------------------------------------------------------------- reset

/// Arms a reset of `scope` ([`crate::reset`]), if the board can do it.
fn arm_reset<B: Board + ?Sized>(
    manager: &mut FabricManager,
    scope: ResetScope,
    board: &mut B,
) -> Result<Response, Error> {
    if !board.resets(scope) {
        return Err(Error::Unsupported);
    }
    let now = manager.events.now_ns();
    let token = manager.reset.arm(scope, now);
    Ok(Response::ResetArmed {
        token: Token(token),
        expires_in_ms: RESET_TOKEN_LIFETIME_MS,
    })
}

/// Resets what the arm named, after the answer is sent, if `token` is
/// the armed one and still valid.
fn trigger_reset<B: Board + ?Sized>(
    manager: &mut FabricManager,
    token: Token,
    board: &mut B,
) -> Result<(), Error> {
    let now = manager.events.now_ns();
    let scope = manager
        .reset
        .trigger(token.0, now)
        .map_err(|error| match error {
            TriggerError::BadToken => Error::BadToken,
            TriggerError::Expired => Error::TokenExpired,
        })?;
    board.schedule_reset(scope);
    Ok(())
}

// ---------------------------------------------------------------- CSR diagnostics

/// The protocol's error for a refused or failed CSR access.
fn csr_error(error: CsrError) -> Error {
    match error {
        CsrError::Misaligned { address } => Error::Misaligned {
            offset: address,
            width: AccessWidth::Dword,
        },
        CsrError::NoSuchRegister { address } => Error::CsrOutOfRange { addr: address },
        CsrError::FabricOwned { address } => Error::FabricOwnedCsr { addr: address },
        CsrError::Board(BoardFault::Unsupported) => Error::Unsupported,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_of_the_register_map_reaches_the_wire_once_by_its_own_kind() {
        for (entry, name) in counter::NAMES.iter().enumerate() {
            let alone = COUNTED
                .iter()
                .filter(|(_, names)| names == &[name.name])
                .count();
            assert_eq!(
                alone, 1,
                "counter {entry} ({}) has one kind of its own",
                name.name
            );
        }
        for (kind, names) in COUNTED {
            for name in *names {
                assert!(
                    counter::NAMES.iter().any(|n| n.name == *name),
                    "{kind:?} sums {name}, which the register map lacks"
                );
            }
        }
        assert!(COUNTED.len() <= weft_proto::MAX_COUNTERS);
    }
}
