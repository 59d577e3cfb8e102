//! Host configuration requests: answered for the virtual ports, forwarded
//! to bound functions with what belongs to the fabric trapped.
//!
//! Which function a request reaches follows the bus numbers the host
//! programmed, as in a real switch (§7.3.3, §7.5.1.3.3-4): a Type 0 request
//! on the link is for the virtual upstream port (device 0, function 0 only),
//! which captures its bus number from Type 0 writes (§2.2.6.2); a Type 1
//! request for the upstream port's secondary bus reaches virtual downstream
//! port `device`; one for a downstream port's secondary bus reaches device
//! 0, function 0 behind it, the bound function. Everything else, and a slot
//! with nothing bound, completes with Unsupported Request, which software
//! reads as all ones (§2.3.2, §7.5.1.1.1). Until the fabric is enumerated,
//! every request completes with Request Retry Status (§2.3.1).
//!
//! A write to a virtual downstream port's Slot Control is a hot-plug
//! command ([`crate::vswitch::VirtualDownstreamPort::slot_command`]); one
//! that powers a slot off completes a graceful or managed unbind waiting
//! for it ([`crate::binding`]).
//!
//! A request forwarded to a bound function waits for the function's
//! completion no longer than the switch's completion timeout
//! ([`FORWARDED_TIMEOUT_NS`], the one the data plane gives a host's memory
//! request, PCIe Base 6.0 §2.8): one the function never completes (it has
//! hung) is completed with Completer Abort by the virtual upstream port,
//! as the data plane completes a host's timed-out request from the host
//! port's completer ID, well before the host's own timeout (50 ms at most
//! in the default range, §7.5.3.16) would end it with no answer.
//!
//! A bound function is reached at its fabric ID; its host-domain ID and
//! bus numbers never reach it. Trapped registers:
//! - **BARs** (§7.5.1.2.1): the host's values are shadow state, sized like
//!   the function's BARs (a VF's are its PF's VF BARs, §9.3.3.14); the
//!   function keeps its fabric addresses, and the host port's windows are
//!   programmed from the shadow values (host BAR → fabric BAR).
//! - **Command**: the host's Memory Space and Bus Master bits are shadowed
//!   (they gate its windows); the function keeps decode and bus mastering on.
//! - **Expansion ROM**: not offered (reads 0).
//! - **Vendor/Device ID of a VF**, which reads all ones on the VF itself
//!   (§9.3.4.1.1-2): the PF's Vendor ID and VF Device ID.
//! - **SR-IOV and ACS controls**: writes are dropped; the fabric set them.
//!   The SR-IOV capability is hidden: its header reads as a Null Extended
//!   Capability (ID 0000h, version 0) with the same Next Capability Offset
//!   (§7.6.3), and its registers read 0, so the host's capability walk
//!   passes over it. The VFs are the fabric's to enable and hand out; a host
//!   that found the capability would size VF BARs whose writes are dropped.

use weft_pcie::config::acs::CONTROL as ACS_CONTROL;
use weft_pcie::config::function::BusNumbers;
use weft_pcie::config::header::{bar as bar_bits, command, common, type0, type1};
use weft_pcie::config::pcie_cap;
use weft_pcie::config::space::byte_enable_mask;
use weft_pcie::config::sriov;
use weft_pcie::config::BarKind;
use weft_pcie::tlp::{
    Attributes, Completion, CompletionStatus, ConfigRequest, ConfigType, Direction, TrafficClass,
};
use weft_pcie::Bdf;

use crate::binding::BindError;
use crate::hw::{
    config_read, config_write, ConfigFault, ConfigPath, Fabric, FabricConfig, HostConfigRequest,
    HostInterface,
};
use crate::inventory::{Function, FunctionKind, PlacedBar};
use crate::manager::FabricManager;
use crate::routes::COMPLETION_TIMEOUT_US;
use crate::vswitch::{BoundFunction, VirtualSwitch};

/// How long a host's configuration request forwarded to a bound function
/// waits for the function's completion, in nanoseconds: the switch's
/// completion timeout ([`COMPLETION_TIMEOUT_US`], 10 ms, the top of Range
/// A, PCIe Base 6.0 §7.5.3.15). A switch completes a host's non-posted
/// request before the host gives up on it (§2.8); the manager's own wait
/// (50 ms) would end as late as the host's, which then has no answer.
pub const FORWARDED_TIMEOUT_NS: u64 = COMPLETION_TIMEOUT_US as u64 * 1_000;

/// The answer to a host's configuration request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The completion, in the host's terms.
    pub completion: Completion,
    /// A successful read's data DW.
    pub data: Option<u32>,
}

/// Which function of the host's view a request reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VirtualTarget {
    /// The virtual upstream port.
    Upstream,
    /// Virtual downstream port (slot) `n`.
    Downstream(u8),
    /// The function bound behind slot `n`.
    Bound(u8),
    /// Nothing: Unsupported Request.
    Unclaimed,
}

/// Decides which function of `switch` a host configuration request reaches.
pub fn route_request(switch: &VirtualSwitch, request: &ConfigRequest) -> VirtualTarget {
    let target = request.target;
    if request.config_type == ConfigType::Type0 {
        return if target.device() == 0 && target.function() == 0 {
            VirtualTarget::Upstream
        } else {
            VirtualTarget::Unclaimed
        };
    }
    let upstream = BusNumbers::read(&switch.upstream);
    let bus = target.bus();
    if !upstream.forwards(bus) {
        return VirtualTarget::Unclaimed;
    }
    if bus == upstream.secondary {
        let slot = target.device();
        return if target.function() == 0 && usize::from(slot) < switch.downstream.len() {
            VirtualTarget::Downstream(slot)
        } else {
            VirtualTarget::Unclaimed
        };
    }
    for (slot, vdsp) in switch.downstream.iter().enumerate() {
        let buses = BusNumbers::read(&vdsp.space);
        if buses.forwards(bus) {
            let claimed = bus == buses.secondary
                && target.device() == 0
                && target.function() == 0
                && vdsp.bound.is_some();
            return if claimed {
                VirtualTarget::Bound(slot as u8)
            } else {
                VirtualTarget::Unclaimed
            };
        }
    }
    VirtualTarget::Unclaimed
}

/// A configuration completion (§2.2.9.1: Byte Count 4, Lower Address 0).
fn reply(
    request: &ConfigRequest,
    completer: Bdf,
    status: CompletionStatus,
    data: Option<u32>,
) -> Reply {
    let data = if status == CompletionStatus::Successful && request.direction == Direction::Read {
        data
    } else {
        None
    };
    Reply {
        completion: Completion {
            locked: false,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            completer,
            status,
            byte_count_modified: false,
            byte_count: 4,
            requester: request.requester,
            tag: request.tag,
            lower_address: 0,
            data_dw: data.map(|_| 1),
        },
        data,
    }
}

/// The host-domain address a shadow BAR holds.
pub(crate) fn host_bar_address(shadow: &[u32; 6], bar: &PlacedBar) -> u64 {
    let index = usize::from((bar.register() - type0::BAR0) / 4);
    let low = shadow.get(index).copied().unwrap_or(0);
    match bar.bar().kind {
        BarKind::Io => u64::from(low & bar_bits::IO_ADDRESS_MASK),
        BarKind::Memory32 { .. } => u64::from(low & bar_bits::MEMORY_ADDRESS_MASK),
        BarKind::Memory64 { .. } => {
            let high = shadow.get(index + 1).copied().unwrap_or(0);
            u64::from(high) << 32 | u64::from(low & bar_bits::MEMORY_ADDRESS_MASK)
        }
    }
}

/// A host write to shadow BAR register `register`: only the address bits
/// above the BAR's size are writable, type bits read back as the BAR's
/// (§7.5.1.2.1), so writing all ones reads back the size.
fn write_shadow_bar(
    function: &Function,
    shadow: &mut [u32; 6],
    register: u16,
    value: u32,
    byte_enables: u8,
) {
    let index = usize::from((register - type0::BAR0) / 4);
    let Some(old) = shadow.get(index).copied() else {
        return;
    };
    let mask = byte_enable_mask(byte_enables);
    let merged = (old & !mask) | (value & mask);
    let mut stored = 0;
    for bar in &function.bars {
        let kind = bar.bar().kind;
        let address_mask = !(bar.size().wrapping_sub(1));
        if bar.register() == register {
            let flags = match kind {
                BarKind::Io => bar_bits::IO_ADDRESS_MASK,
                _ => bar_bits::MEMORY_ADDRESS_MASK,
            };
            stored = merged & address_mask as u32 & flags | kind.type_bits();
        } else if matches!(kind, BarKind::Memory64 { .. }) && bar.register() + 4 == register {
            stored = merged & (address_mask >> 32) as u32;
        }
    }
    shadow[index] = stored;
}

/// Whether `offset` lies in a register the fabric owns on a bound function
/// (its SR-IOV capability, its ACS Control), so host writes are dropped.
pub(crate) fn fabric_owned(function: &Function, offset: u16) -> bool {
    let in_sriov = in_sriov_capability(function, offset);
    let in_acs = function
        .acs
        .is_some_and(|acs| offset & !3 == (acs + ACS_CONTROL) & !3);
    in_sriov || in_acs
}

/// Whether `offset` lies in the function's SR-IOV capability.
fn in_sriov_capability(function: &Function, offset: u16) -> bool {
    function
        .sriov
        .is_some_and(|s| offset >= s.offset && offset < s.offset + sriov::SIZE)
}

/// Reads a bound function's register as its host sees it.
fn bound_read<C: FabricConfig + ?Sized>(
    config: &mut C,
    path: ConfigPath,
    function: &Function,
    bound: &BoundFunction,
    offset: u16,
) -> Result<u32, ConfigFault> {
    let dword = offset & !3;
    match dword {
        common::VENDOR_ID => match function.kind {
            FunctionKind::Virtual { .. } => {
                Ok(u32::from(function.device_id) << 16 | u32::from(function.vendor_id))
            }
            FunctionKind::Physical => config_read(config, path, function.id, dword),
        },
        common::COMMAND => {
            let real = config_read(config, path, function.id, dword)?;
            Ok(real & 0xffff_0000 | u32::from(bound.shadow_command))
        }
        type0::BAR0..=0x24 => Ok(bound.shadow_bars[usize::from((dword - type0::BAR0) / 4)]),
        type0::EXPANSION_ROM_BASE => Ok(0),
        _ => match function.sriov {
            Some(sriov) if dword == sriov.offset => {
                // §7.6.3: keep Next Capability Offset (bits 31:20), clear
                // the ID and version: a Null Extended Capability.
                let header = config_read(config, path, function.id, dword)?;
                Ok(header & NEXT_CAPABILITY_MASK)
            }
            _ if in_sriov_capability(function, dword) => Ok(0),
            _ => config_read(config, path, function.id, dword),
        },
    }
}

/// Next Capability Offset of an Extended Capability header (§7.6.3).
const NEXT_CAPABILITY_MASK: u32 = 0xfff0_0000;

/// Applies a host write to a bound function; returns whether the host's
/// windows depend on what changed: Memory Space Enable, or a BAR while
/// Memory Space is enabled (only then is it in a window; software sizes
/// BARs with decoding off, §7.5.1.2.1).
fn bound_write<C: FabricConfig + ?Sized>(
    config: &mut C,
    path: ConfigPath,
    function: &Function,
    bound: &mut BoundFunction,
    offset: u16,
    value: u32,
    byte_enables: u8,
) -> Result<bool, ConfigFault> {
    let dword = offset & !3;
    match dword {
        common::VENDOR_ID | type0::EXPANSION_ROM_BASE => Ok(false),
        common::COMMAND => {
            let mut forwarded = value;
            let touches_command = byte_enables & 0b0011 != 0;
            if touches_command {
                let mask = byte_enable_mask(byte_enables & 0b0011);
                let merged = (u32::from(bound.shadow_command) & !mask) | (value & mask);
                bound.shadow_command = merged as u16 & command::RW_BITS;
                // The function keeps decoding its fabric BARs and mastering.
                let keep = command::BUS_MASTER
                    | if function.bars.iter().any(|b| b.fabric_address().is_some()) {
                        command::MEMORY_SPACE
                    } else {
                        0
                    };
                forwarded = value & 0xffff_0000 | u32::from(bound.shadow_command | keep);
            }
            config_write(config, path, function.id, dword, forwarded, byte_enables)?;
            Ok(touches_command)
        }
        type0::BAR0..=0x24 => {
            write_shadow_bar(function, &mut bound.shadow_bars, dword, value, byte_enables);
            Ok(bound.shadow_command & command::MEMORY_SPACE != 0)
        }
        _ if fabric_owned(function, dword) => Ok(false),
        _ => {
            config_write(config, path, function.id, dword, value, byte_enables)?;
            Ok(false)
        }
    }
}

/// Runs `access`, one forwarded access to a bound function, with
/// `config`'s requests waiting no longer than [`FORWARDED_TIMEOUT_NS`]
/// for their completions; `config` waits its own time again after.
fn forwarded<C: FabricConfig + ?Sized, R>(config: &mut C, access: impl FnOnce(&mut C) -> R) -> R {
    config.limit_completion_wait(Some(FORWARDED_TIMEOUT_NS));
    let result = access(config);
    config.limit_completion_wait(None);
    result
}

/// The completion of a host's request whose forwarded access to the bound
/// function `completer` failed with `fault`. The function's own error
/// status comes from it; a request it never completed (§2.8) is completed
/// with Completer Abort by the virtual upstream port `upstream`, as the
/// data plane completes a host's timed-out request from the host port's
/// completer ID.
fn failed(request: &ConfigRequest, completer: Bdf, upstream: Bdf, fault: ConfigFault) -> Reply {
    let (completer, status) = match fault {
        ConfigFault::UnsupportedRequest | ConfigFault::NoSuchPort(_) => {
            (completer, CompletionStatus::UnsupportedRequest)
        }
        ConfigFault::RequestRetry => (completer, CompletionStatus::RequestRetry),
        ConfigFault::CompleterAbort => (completer, CompletionStatus::CompleterAbort),
        ConfigFault::Timeout => (upstream, CompletionStatus::CompleterAbort),
    };
    reply(request, completer, status, None)
}

impl FabricManager {
    /// Answers one host configuration request, updating the tables a write affects.
    ///
    /// An error means a table or MSI write failed after the request took
    /// effect; the caller still owes the host a completion.
    pub fn handle_config<C, F, H>(
        &mut self,
        request: &HostConfigRequest,
        config: &mut C,
        fabric: &mut F,
        host_if: &mut H,
    ) -> Result<Reply, BindError>
    where
        C: FabricConfig + ?Sized,
        F: Fabric + ?Sized,
        H: HostInterface + ?Sized,
    {
        let req = request.request;
        let Some(si) = self
            .switches
            .iter()
            .position(|s| (s.switch_id, s.port) == (request.switch, request.port))
        else {
            return Ok(reply(
                &req,
                Bdf::default(),
                CompletionStatus::UnsupportedRequest,
                None,
            ));
        };
        let upstream_id = self.switches[si].upstream_id();
        if !self.ready {
            return Ok(reply(
                &req,
                upstream_id,
                CompletionStatus::RequestRetry,
                None,
            ));
        }
        let offset = req.byte_offset();
        let write = req.direction == Direction::Write;
        let (value, be) = (request.data, req.first_be);
        match route_request(&self.switches[si], &req) {
            VirtualTarget::Unclaimed => Ok(reply(
                &req,
                upstream_id,
                CompletionStatus::UnsupportedRequest,
                None,
            )),
            VirtualTarget::Upstream => {
                let switch = &mut self.switches[si];
                if !write {
                    let data = switch.upstream.read(offset);
                    return Ok(reply(
                        &req,
                        upstream_id,
                        CompletionStatus::Successful,
                        Some(data),
                    ));
                }
                switch
                    .upstream
                    .write(&self.layouts.upstream, offset, value, be);
                let captured = req.target.bus();
                if captured != switch.upstream_bus {
                    // §2.2.6.2: the bus number comes with every Type 0 write.
                    switch.upstream_bus = captured;
                    let (port, completer) = (switch.port, switch.upstream_id());
                    self.host_plane(si, fabric)?
                        .set_completer_id(port, completer)?;
                }
                let switch = &self.switches[si];
                Ok(reply(
                    &req,
                    switch.upstream_id(),
                    CompletionStatus::Successful,
                    None,
                ))
            }
            VirtualTarget::Downstream(slot) => {
                let switch = &mut self.switches[si];
                let completer = switch.downstream_id(slot);
                let (switch_id, port) = (switch.switch_id, switch.port);
                let vdsp = &mut switch.downstream[usize::from(slot)];
                if !write {
                    let data = vdsp.space.read(offset);
                    return Ok(reply(
                        &req,
                        completer,
                        CompletionStatus::Successful,
                        Some(data),
                    ));
                }
                let slot_control = vdsp.caps.pcie.offset + pcie_cap::SLOT_CONTROL;
                let before = vdsp.caps.pcie.slot_control(&vdsp.space);
                vdsp.space
                    .write(&self.layouts.downstream, offset, value, be);
                let affects_tables = offset & !3 == type1::PRIMARY_BUS
                    || vdsp
                        .caps
                        .acs
                        .is_some_and(|acs| offset & !3 == (acs.offset + ACS_CONTROL) & !3);
                // Slot Control is the low half of its DW (§7.5.3.10): a
                // write to either of its bytes is a hot-plug command.
                let command = offset & !3 == slot_control & !3 && be & 0b0011 != 0;
                let (msi, powered_off) = if command {
                    let done = vdsp.slot_command(before);
                    (done.msi, done.powered_off)
                } else {
                    (vdsp.check_interrupt(), false)
                };
                if let Some(message) = msi {
                    host_if.send_msi(switch_id, port, completer, message)?;
                }
                if affects_tables {
                    self.program_host(si, fabric)?;
                }
                if powered_off {
                    self.slot_powered_off(si, slot, fabric, host_if)?;
                }
                Ok(reply(&req, completer, CompletionStatus::Successful, None))
            }
            VirtualTarget::Bound(slot) => {
                let Some(mut bound) = self.switches[si].downstream[usize::from(slot)].bound else {
                    return Ok(reply(
                        &req,
                        upstream_id,
                        CompletionStatus::UnsupportedRequest,
                        None,
                    ));
                };
                let Some(function) = self.inventory.function(bound.function) else {
                    return Ok(reply(
                        &req,
                        upstream_id,
                        CompletionStatus::UnsupportedRequest,
                        None,
                    ));
                };
                let completer = req.target;
                let path = self.inventory.path_to(function);
                if !write {
                    let result =
                        forwarded(config, |c| bound_read(c, path, function, &bound, offset));
                    return Ok(match result {
                        Ok(data) => {
                            reply(&req, completer, CompletionStatus::Successful, Some(data))
                        }
                        Err(fault) => failed(&req, completer, upstream_id, fault),
                    });
                }
                let result = forwarded(config, |c| {
                    bound_write(c, path, function, &mut bound, offset, value, be)
                });
                self.switches[si].downstream[usize::from(slot)].bound = Some(bound);
                match result {
                    Ok(affects_windows) => {
                        if affects_windows {
                            self.program_host(si, fabric)?;
                        }
                        Ok(reply(&req, completer, CompletionStatus::Successful, None))
                    }
                    Err(fault) => Ok(failed(&req, completer, upstream_id, fault)),
                }
            }
        }
    }

    /// Answers every configuration request waiting in the mailbox; returns how many.
    ///
    /// A request whose side effects could not be written to the tables is
    /// completed with Completer Abort, and the error returned.
    pub fn service<C, F, H>(
        &mut self,
        config: &mut C,
        fabric: &mut F,
        host_if: &mut H,
    ) -> Result<usize, BindError>
    where
        C: FabricConfig + ?Sized,
        F: Fabric + ?Sized,
        H: HostInterface + ?Sized,
    {
        let mut handled = 0;
        while let Some(request) = host_if.receive() {
            match self.handle_config(&request, config, fabric, host_if) {
                Ok(answer) => host_if.complete(
                    request.switch,
                    request.port,
                    answer.completion,
                    answer.data,
                )?,
                Err(error) => {
                    let completer = self
                        .virtual_switch_on(request.switch, request.port)
                        .map_or(Bdf::default(), VirtualSwitch::upstream_id);
                    let abort = reply(
                        &request.request,
                        completer,
                        CompletionStatus::CompleterAbort,
                        None,
                    );
                    host_if.complete(request.switch, request.port, abort.completion, None)?;
                    return Err(error);
                }
            }
            handled += 1;
        }
        Ok(handled)
    }
}
