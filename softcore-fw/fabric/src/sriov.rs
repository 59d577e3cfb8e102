//! Enabling SR-IOV on a PF during enumeration (PCIe Base 6.0 §9.3.3).
//!
//! The order is the spec's: ARI Capable Hierarchy (lowest PF of an ARI
//! device only) and NumVFs are written while VF Enable is clear, since First
//! VF Offset and VF Stride may depend on both (§9.3.3.3.5, §9.3.3.9,
//! §9.3.3.10) and are read only afterwards; the VF BARs are sized and placed,
//! one region of TotalVFs × the per-VF size each, aligned to the per-VF size
//! (§9.3.3.14), and the buses up to TotalVFs' last VF are claimed, so that
//! NumVFs can change later without moving anything; then VF Enable and VF MSE are set, and the VFs are accessed
//! after the 100 ms wait of §9.3.3.3.1, with Request Retry Status retried.
//! Each VF becomes its own entry in the inventory, with its routing ID and
//! BAR addresses, so it can be bound on its own.
//!
//! At run time a management request changes NumVFs of one PF
//! ([`FabricManager::begin_num_vfs`], finished by
//! [`FabricManager::poll_num_vfs`] once the VFs may be accessed): the same
//! order, inside the VF BAR regions and bus numbers enumeration laid out.

use weft_pcie::config::bar::{size_bar_array, MAX_BARS};
use weft_pcie::config::header::{command, common, type0};
use weft_pcie::config::sriov::{self, control, vf_routing_id, SriovError};
use weft_pcie::config::ConfigWrite;
use weft_pcie::Bdf;

use crate::address::Pool;
use crate::enumerate::{read, At, EnumerationError, Enumerator};
use crate::events::Event;
use crate::hw::{config_read, ConfigFault, Fabric, FabricConfig, FunctionAccess, Timer};
use crate::inventory::{Function, FunctionKind, Inventory, PlacedBar, PortKind, SriovSetup};
use crate::limits::MAX_FUNCTIONS;
use crate::manager::FabricManager;
use crate::operations::{OperationError, OperationId};
use crate::readiness::{read_when_ready, READINESS_TIMEOUT_NS, RESET_TO_FIRST_REQUEST_NS};
use crate::settings::PfVfs;

/// Byte enables of the low 16-bit register of a DW (the high one may be RW1C or another register).
const LOW_HALF: u8 = 0b0011;

impl<C, T, F> Enumerator<'_, C, T, F>
where
    C: FabricConfig + ?Sized,
    T: Timer + ?Sized,
    F: Fabric + ?Sized,
{
    /// Enables the configured number of VFs on the PF at inventory index
    /// `pf_index`, whose SR-IOV capability is at `offset`; the buses its
    /// VFs sit on are given to the port.
    pub(crate) fn enable_sriov(
        &mut self,
        at: At,
        pf_index: usize,
        offset: u16,
        lowest_ari_pf: bool,
    ) -> Result<(), EnumerationError> {
        let pf = self.inventory.functions[pf_index].id;
        let path = self.path(at, pf.bus());
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: pf,
        };
        let total_vfs = read(&mut access, offset + sriov::TOTAL_VFS)? as u16;
        let function = &self.inventory.functions[pf_index];
        let num_vfs = self
            .settings
            .num_vfs_for(pf, function.vendor_id, function.device_id)
            .min(total_vfs);
        let mut setup = SriovSetup {
            offset,
            total_vfs,
            num_vfs,
            first_vf_offset: 0,
            vf_stride: 0,
        };
        if total_vfs == 0 {
            self.inventory.functions[pf_index].sriov = Some(setup);
            return Ok(());
        }
        let write16 = |access: &mut FunctionAccess<'_, C>, at: u16, value: u16| {
            access
                .write_dword(at, u32::from(value), LOW_HALF)
                .map_err(|fault| EnumerationError::Config { id: pf, fault })
        };
        // NumVFs may change only with VF Enable clear (§9.3.3.7).
        let mut control_bits = read(&mut access, offset + sriov::CONTROL)? as u16;
        control_bits &= !(control::VF_ENABLE | control::VF_MEMORY_SPACE_ENABLE);
        if lowest_ari_pf {
            control_bits |= control::ARI_CAPABLE_HIERARCHY;
        }
        write16(&mut access, offset + sriov::CONTROL, control_bits)?;
        // Room for every VF the PF can have, as an operating system
        // reserves it, so NumVFs may change at run time without moving
        // anything: the buses up to TotalVFs' last VF (its routing ID with
        // NumVFs at TotalVFs), and VF BAR regions of TotalVFs × the per-VF
        // size below.
        write16(&mut access, offset + sriov::NUM_VFS, total_vfs)?;
        let routing = read(&mut access, offset + sriov::FIRST_VF_OFFSET)?;
        if let Ok(last) = vf_routing_id(pf, routing as u16, (routing >> 16) as u16, total_vfs) {
            self.claim_bus(at, last.bus())?;
        }
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: pf,
        };
        write16(&mut access, offset + sriov::NUM_VFS, num_vfs)?;
        let routing = read(&mut access, offset + sriov::FIRST_VF_OFFSET)?;
        setup.first_vf_offset = routing as u16;
        setup.vf_stride = (routing >> 16) as u16;
        if setup.vf_stride == 0 && num_vfs > 1 {
            return Err(EnumerationError::Sriov {
                id: pf,
                error: SriovError::ZeroStride,
            });
        }
        let vf_bar0 = offset + sriov::VF_BAR0;
        let decoded = size_bar_array(&mut access, vf_bar0, MAX_BARS as u8)
            .map_err(|error| EnumerationError::BarSizing { id: pf, error })?;
        let mut vf_bars: heapless::Vec<PlacedBar, MAX_BARS> = heapless::Vec::new();
        for bar in decoded.iter().flatten() {
            let host_register = type0::BAR0 + (bar.register - vf_bar0);
            let placed = self.place_bar(at, pf, bar, host_register, bar.bar.size, total_vfs)?;
            // At most six VF BARs were decoded.
            let _ = vf_bars.push(placed);
        }
        if num_vfs == 0 {
            self.inventory.functions[pf_index].sriov = Some(setup);
            return Ok(());
        }
        let mut access = FunctionAccess {
            config: &mut *self.config,
            path,
            target: pf,
        };
        let vf_device_id = read(&mut access, offset + sriov::VF_DEVICE_ID)? as u16;
        control_bits |= control::VF_ENABLE | control::VF_MEMORY_SPACE_ENABLE;
        write16(&mut access, offset + sriov::CONTROL, control_bits)?;
        self.inventory.functions[pf_index].sriov = Some(setup);

        // §9.3.3.3.1: wait 100 ms after VF Enable before accessing the VFs.
        let enabled_at = self.timer.now_ns();
        self.timer
            .wait_until_ns(enabled_at.saturating_add(RESET_TO_FIRST_REQUEST_NS));
        let deadline = enabled_at.saturating_add(READINESS_TIMEOUT_NS);
        let vendor_id = self.inventory.functions[pf_index].vendor_id;
        for vf in 1..=num_vfs {
            let id = vf_routing_id(pf, setup.first_vf_offset, setup.vf_stride, vf)
                .map_err(|error| EnumerationError::Sriov { id: pf, error })?;
            // VFs may sit on buses after the PF's (§9.3.3.9).
            self.claim_bus(at, id.bus())?;
            let path = self.path(at, id.bus());
            if read_when_ready(self.config, self.timer, path, id, 0, deadline)
                .map_err(EnumerationError::Readiness)?
                .is_none()
            {
                return Err(EnumerationError::Config {
                    id,
                    fault: ConfigFault::UnsupportedRequest,
                });
            }
            let new = NewVf {
                at,
                bridge: self.bridge,
                pf,
                id,
                vf,
                vendor_id,
                device_id: vf_device_id,
            };
            add_vf(self.config, self.inventory, &new, &vf_bars)?;
        }
        Ok(())
    }
}

/// A VF about to join the inventory: where it is and who it is.
struct NewVf {
    at: At,
    /// The bridge of a conventional switch the PF sits below, if any.
    bridge: Option<Bdf>,
    pf: Bdf,
    id: Bdf,
    /// Its VF number, 1-based.
    vf: u16,
    vendor_id: u16,
    device_id: u16,
}

/// Records `new` in `inventory` with its BARs (VF `n`'s at the VF BAR
/// region's base + (n − 1) × the per-VF size, §9.3.3.14) and enables its
/// bus mastering (a VF's Memory Space Enable is the PF's VF MSE, §9.3.4.1.3).
fn add_vf<C: FabricConfig + ?Sized>(
    config: &mut C,
    inventory: &mut Inventory,
    new: &NewVf,
    vf_bars: &[PlacedBar],
) -> Result<(), EnumerationError> {
    let id = new.id;
    let mut access = FunctionAccess {
        config,
        path: inventory.config_path(new.at.switch, new.at.port, id.bus()),
        target: id,
    };
    let class_code = read(&mut access, common::REVISION_ID)? >> 8;
    let current = read(&mut access, common::COMMAND)? as u16;
    access
        .write_dword(
            common::COMMAND,
            u32::from(current | command::BUS_MASTER),
            LOW_HALF,
        )
        .map_err(|fault| EnumerationError::Config { id, fault })?;
    let mut bars = heapless::Vec::new();
    for bar in vf_bars {
        let fabric_address = bar
            .fabric_address()
            .map(|base| base + u64::from(new.vf - 1) * bar.size());
        // vf_bars holds at most MAX_BARS entries, as bars does.
        let _ = bars.push(bar.at(fabric_address));
    }
    inventory
        .functions
        .push(Function {
            id,
            switch: new.at.switch,
            port: new.at.port,
            kind: FunctionKind::Virtual {
                pf: new.pf,
                vf: new.vf,
            },
            vendor_id: new.vendor_id,
            device_id: new.device_id,
            class_code,
            bars,
            sriov: None,
            acs: None,
            bridge: new.bridge,
            binding: None,
        })
        .map_err(|_| EnumerationError::TooManyFunctions {
            capacity: MAX_FUNCTIONS,
        })
}

// ---------------------------------------------------------------- run time

/// Why NumVFs of a PF could not be changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumVfsError {
    /// The fabric is not enumerated yet.
    NotReady,
    /// No function of the inventory has this fabric ID.
    NoSuchFunction(Bdf),
    /// The function is a VF, or a PF without an SR-IOV capability.
    NotSriovCapable(Bdf),
    /// More VFs than the PF's TotalVFs (§9.3.3.6).
    AboveTotal {
        /// The PF.
        pf: Bdf,
        /// Its TotalVFs.
        total_vfs: u16,
    },
    /// A VF of the PF is bound to a host: its VFs may not go away.
    VfBound {
        /// The PF.
        pf: Bdf,
        /// The bound VF.
        vf: Bdf,
    },
    /// Another NumVFs change is still waiting for its VFs.
    Busy,
    /// The settings keep the NumVFs of
    /// [`MAX_SRIOV_PFS`](crate::limits::MAX_SRIOV_PFS) other PFs already.
    TooManyPfs,
    /// A VF's routing ID lies outside the bus numbers of its port, which
    /// enumeration claimed for TotalVFs' VFs: First VF Offset and VF
    /// Stride at this NumVFs put it elsewhere.
    OutsidePortBuses {
        /// The VF's routing ID.
        vf: Bdf,
    },
    /// The hardware failed during the change.
    Hardware(EnumerationError),
}

impl From<EnumerationError> for NumVfsError {
    fn from(error: EnumerationError) -> Self {
        NumVfsError::Hardware(error)
    }
}

/// What a NumVFs change did when it was asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumVfsStarted {
    /// Finished: the VFs are gone (NumVFs 0), or NumVFs was already the one asked for.
    Done,
    /// VF Enable is set; the VFs join the inventory once they answer, at
    /// the earliest 100 ms later (§9.3.3.3.1): poll [`FabricManager::poll_num_vfs`].
    /// The change runs as this background operation ([`crate::operations`]).
    Waiting(OperationId),
}

/// Where a NumVFs change that waits for its VFs stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumVfsProgress {
    /// Still waiting; rough progress 0 to 99.
    Waiting {
        /// Percent of the wait gone by.
        percent: u8,
    },
    /// Every VF answered and is in the inventory.
    Done,
}

/// A NumVFs change waiting for its VFs to answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PendingVfs {
    /// The background operation the change runs as.
    op: OperationId,
    pf: Bdf,
    at: At,
    enabled_at_ns: u64,
    vf_device_id: u16,
    /// VF 1's BARs: per-VF size, at the VF BAR region's base.
    vf_bars: heapless::Vec<PlacedBar, MAX_BARS>,
}

impl PendingVfs {
    /// The background operation the change runs as.
    pub(crate) fn operation(&self) -> OperationId {
        self.op
    }
}

impl FabricManager {
    /// Changes NumVFs of PF `pf` at run time (PCIe Base 6.0 §9.3.3.3):
    /// VF Enable and VF MSE are cleared, so the VFs go away, and they
    /// leave the inventory; NumVFs is written while VF Enable is clear
    /// (§9.3.3.7), then First VF Offset and VF Stride are read again
    /// (they may depend on NumVFs, §9.3.3.9-10); VF Enable and VF MSE are
    /// set again for a NumVFs above 0.
    ///
    /// The VF BAR regions stay where enumeration placed them, room for
    /// TotalVFs each: the VF BAR registers keep their base, and VF `n`'s
    /// BARs follow at the base + (n − 1) × the per-VF size (§9.3.3.14),
    /// inside the port's routed range; the VFs' buses are the port's,
    /// claimed for TotalVFs' VFs. So no table changes.
    ///
    /// Refused with nothing changed while a VF of `pf` is bound (unbind it
    /// first) or another change waits for its VFs. The new VFs are
    /// accessed no sooner than 100 ms after VF Enable (§9.3.3.3.1), by
    /// [`FabricManager::poll_num_vfs`], so the caller is not held for it.
    pub fn begin_num_vfs<C: FabricConfig + ?Sized>(
        &mut self,
        pf: Bdf,
        num_vfs: u16,
        config: &mut C,
    ) -> Result<NumVfsStarted, NumVfsError> {
        if !self.ready {
            return Err(NumVfsError::NotReady);
        }
        let function = self
            .inventory
            .function(pf)
            .ok_or(NumVfsError::NoSuchFunction(pf))?;
        let setup = match (function.kind, function.sriov) {
            (FunctionKind::Physical, Some(setup)) => setup,
            _ => return Err(NumVfsError::NotSriovCapable(pf)),
        };
        let at = At {
            switch: function.switch,
            port: function.port,
        };
        if num_vfs > setup.total_vfs {
            return Err(NumVfsError::AboveTotal {
                pf,
                total_vfs: setup.total_vfs,
            });
        }
        if let Some(vf) = self
            .vfs_of(pf)
            .find(|vf| vf.binding.is_some())
            .map(|vf| vf.id)
        {
            return Err(NumVfsError::VfBound { pf, vf });
        }
        if self.pending_vfs.is_some() {
            return Err(NumVfsError::Busy);
        }
        if num_vfs == setup.num_vfs {
            return Ok(NumVfsStarted::Done);
        }
        let (vendor_id, device_id) = (function.vendor_id, function.device_id);
        // Kept first, so that a refusal changes nothing; a saved
        // configuration and the next enumeration take it from there.
        self.settings
            .keep_pf_vfs(PfVfs {
                function: pf,
                vendor_id,
                device_id,
                num_vfs,
            })
            .map_err(|_| NumVfsError::TooManyPfs)?;
        let mut access = FunctionAccess {
            config: &mut *config,
            path: self.inventory.config_path(at.switch, at.port, pf.bus()),
            target: pf,
        };
        let write16 = |access: &mut FunctionAccess<'_, C>, at: u16, value: u16| {
            access
                .write_dword(at, u32::from(value), LOW_HALF)
                .map_err(|fault| EnumerationError::Config { id: pf, fault })
        };
        let offset = setup.offset;
        let mut control_bits = read(&mut access, offset + sriov::CONTROL)? as u16;
        control_bits &= !(control::VF_ENABLE | control::VF_MEMORY_SPACE_ENABLE);
        write16(&mut access, offset + sriov::CONTROL, control_bits)?;
        // From here the PF has no VFs, whatever fails later.
        self.forget_vfs(pf);
        self.set_sriov(
            pf,
            SriovSetup {
                num_vfs: 0,
                ..setup
            },
        );
        self.generation = self.generation.next();
        // NumVFs may change only with VF Enable clear (§9.3.3.7).
        write16(&mut access, offset + sriov::NUM_VFS, num_vfs)?;
        let routing = read(&mut access, offset + sriov::FIRST_VF_OFFSET)?;
        let mut changed = SriovSetup {
            num_vfs,
            first_vf_offset: routing as u16,
            vf_stride: (routing >> 16) as u16,
            ..setup
        };
        let outside = (1..=num_vfs).find_map(|vf| {
            match vf_routing_id(pf, changed.first_vf_offset, changed.vf_stride, vf) {
                Ok(id) if self.below_port(at, id.bus()) => None,
                Ok(id) => Some(Err(NumVfsError::OutsidePortBuses { vf: id })),
                Err(error) => Some(Err(NumVfsError::Hardware(EnumerationError::Sriov {
                    id: pf,
                    error,
                }))),
            }
        });
        let checked = match outside {
            Some(refused) => refused,
            None if changed.vf_stride == 0 && num_vfs > 1 => {
                Err(NumVfsError::Hardware(EnumerationError::Sriov {
                    id: pf,
                    error: SriovError::ZeroStride,
                }))
            }
            None => Ok(()),
        };
        if let Err(refused) = checked {
            // Leave the PF without VFs rather than with VFs the fabric cannot reach.
            write16(&mut access, offset + sriov::NUM_VFS, 0)?;
            self.set_sriov(
                pf,
                SriovSetup {
                    num_vfs: 0,
                    ..changed
                },
            );
            self.events.record(Event::NumVfsChanged { pf, num_vfs: 0 });
            return Err(refused);
        }
        if num_vfs == 0 {
            self.set_sriov(pf, changed);
            self.events.record(Event::NumVfsChanged { pf, num_vfs });
            return Ok(NumVfsStarted::Done);
        }
        // Sizing restores each VF BAR, so the regions keep their base.
        let vf_bar0 = offset + sriov::VF_BAR0;
        let decoded = size_bar_array(&mut access, vf_bar0, MAX_BARS as u8)
            .map_err(|error| EnumerationError::BarSizing { id: pf, error })?;
        let mut vf_bars = heapless::Vec::new();
        for bar in decoded.iter().flatten() {
            let host_register = type0::BAR0 + (bar.register - vf_bar0);
            let address = Pool::for_kind(bar.bar.kind).map(|_| bar.address);
            // At most six VF BARs were decoded.
            let _ = vf_bars.push(PlacedBar::new(host_register, bar.bar, address));
        }
        let vf_device_id = read(&mut access, offset + sriov::VF_DEVICE_ID)? as u16;
        control_bits |= control::VF_ENABLE | control::VF_MEMORY_SPACE_ENABLE;
        write16(&mut access, offset + sriov::CONTROL, control_bits)?;
        changed.num_vfs = num_vfs;
        self.set_sriov(pf, changed);
        let op = self.operations.start();
        self.pending_vfs = Some(PendingVfs {
            op,
            pf,
            at,
            enabled_at_ns: self.events.now_ns(),
            vf_device_id,
            vf_bars,
        });
        Ok(NumVfsStarted::Waiting(op))
    }

    /// Finishes the NumVFs change that waits for its VFs, if their time
    /// has come (the manager's time, [`FabricManager::set_time`]): 100 ms
    /// after VF Enable each VF is read, and one that answers Request Retry
    /// Status is read again at a later poll, up to the readiness timeout
    /// of §6.6.1 (1 s). Once every VF answered they join the inventory
    /// (Bus Master enabled, BARs at their place in the regions), each
    /// logged as added, and the change is logged.
    ///
    /// `None` when no change waits. A failure ends the change: the VFs
    /// that answered are not added, and NumVFs stays set in the PF. The
    /// operation's outcome is kept for `OperationStatus` once it ends
    /// ([`crate::operations`]).
    pub fn poll_num_vfs<C: FabricConfig + ?Sized>(
        &mut self,
        config: &mut C,
    ) -> Option<Result<NumVfsProgress, NumVfsError>> {
        let op = self.num_vfs_operation()?;
        let progress = self.advance_num_vfs(config)?;
        match progress {
            Ok(NumVfsProgress::Waiting { .. }) => {}
            Ok(NumVfsProgress::Done) => self.operations.finish(op, Ok(())),
            Err(error) => self
                .operations
                .finish(op, Err(OperationError::NumVfs(error))),
        }
        Some(progress)
    }

    /// One step of [`FabricManager::poll_num_vfs`]: the VFs read, and
    /// added once all answered; the change is no longer pending once it
    /// ends either way.
    fn advance_num_vfs<C: FabricConfig + ?Sized>(
        &mut self,
        config: &mut C,
    ) -> Option<Result<NumVfsProgress, NumVfsError>> {
        let pending = self.pending_vfs.as_ref()?;
        let now = self.events.now_ns();
        let waited = now.saturating_sub(pending.enabled_at_ns);
        if waited < RESET_TO_FIRST_REQUEST_NS {
            let percent = (waited * 100 / RESET_TO_FIRST_REQUEST_NS).min(99) as u8;
            return Some(Ok(NumVfsProgress::Waiting { percent }));
        }
        let (pf, at) = (pending.pf, pending.at);
        let Some(setup) = self.inventory.function(pf).and_then(|f| f.sriov) else {
            self.pending_vfs = None;
            return Some(Err(NumVfsError::NoSuchFunction(pf)));
        };
        for vf in 1..=setup.num_vfs {
            let answered = vf_routing_id(pf, setup.first_vf_offset, setup.vf_stride, vf)
                .map_err(|error| EnumerationError::Sriov { id: pf, error })
                .and_then(|id| {
                    let path = self.inventory.config_path(at.switch, at.port, id.bus());
                    config_read(config, path, id, 0)
                        .map_err(|fault| EnumerationError::Config { id, fault })
                });
            match answered {
                Ok(_) => {}
                Err(EnumerationError::Config {
                    fault: ConfigFault::RequestRetry,
                    ..
                }) if waited < READINESS_TIMEOUT_NS => {
                    return Some(Ok(NumVfsProgress::Waiting { percent: 99 }));
                }
                Err(error) => {
                    self.pending_vfs = None;
                    return Some(Err(NumVfsError::Hardware(error)));
                }
            }
        }
        let pending = self.pending_vfs.take()?;
        let vendor_id = self.inventory.function(pf).map_or(0, |f| f.vendor_id);
        let bridge = self.inventory.function(pf).and_then(|f| f.bridge);
        for vf in 1..=setup.num_vfs {
            let added = vf_routing_id(pf, setup.first_vf_offset, setup.vf_stride, vf)
                .map_err(|error| EnumerationError::Sriov { id: pf, error })
                .and_then(|id| {
                    let new = NewVf {
                        at,
                        bridge,
                        pf,
                        id,
                        vf,
                        vendor_id,
                        device_id: pending.vf_device_id,
                    };
                    add_vf(config, &mut self.inventory, &new, &pending.vf_bars).map(|()| id)
                });
            match added {
                Ok(id) => {
                    self.events.record(Event::DeviceAdded {
                        function: id,
                        switch: at.switch,
                        port: at.port,
                    });
                }
                Err(error) => return Some(Err(NumVfsError::Hardware(error))),
            }
        }
        self.generation = self.generation.next();
        self.events.record(Event::NumVfsChanged {
            pf,
            num_vfs: setup.num_vfs,
        });
        Some(Ok(NumVfsProgress::Done))
    }

    /// The VFs of `pf` in the inventory.
    fn vfs_of(&self, pf: Bdf) -> impl Iterator<Item = &Function> {
        self.inventory
            .functions
            .iter()
            .filter(move |f| matches!(f.kind, FunctionKind::Virtual { pf: of, .. } if of == pf))
    }

    /// Takes the VFs of `pf` out of the inventory, each logged as removed.
    fn forget_vfs(&mut self, pf: Bdf) {
        while let Some(index) = self
            .inventory
            .functions
            .iter()
            .position(|f| matches!(f.kind, FunctionKind::Virtual { pf: of, .. } if of == pf))
        {
            let vf = self.inventory.functions.remove(index);
            self.events.record(Event::DeviceRemoved {
                function: vf.id,
                switch: vf.switch,
                port: vf.port,
            });
        }
    }

    /// Whether `bus` is one of the bus numbers below the endpoint port `at`.
    fn below_port(&self, at: At, bus: u8) -> bool {
        match self.inventory.port_on(at.switch, at.port) {
            PortKind::Endpoint { buses } => (buses.0..=buses.1).contains(&bus),
            _ => false,
        }
    }

    fn set_sriov(&mut self, pf: Bdf, setup: SriovSetup) {
        if let Some(index) = self.inventory.index_of(pf) {
            self.inventory.functions[index].sriov = Some(setup);
        }
    }
}
