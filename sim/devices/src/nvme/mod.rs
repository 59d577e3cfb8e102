//! An NVMe SSD with SR-IOV: a Physical Function and Virtual Functions, each
//! an NVMe controller with its own namespace, so the same host driver runs
//! on either (NVMe Base 2.0 §8.2.6 on virtualization; PCIe Base 6.0 §9).
//!
//! - [`regs`]: the controller registers in BAR0; [`command`]: queue entry
//!   formats and Identify data; [`controller`]: command processing.
//! - The PF (class 01_08_02) has BAR0 (16 KiB, 64-bit) with registers,
//!   doorbells and the MSI-X table, the PM, MSI, PCI Express and MSI-X
//!   capabilities, and AER, ARI and SR-IOV extended capabilities.
//! - VFs appear when software sets VF Enable with NumVFs > 0, at the
//!   routing IDs First VF Offset and VF Stride give (§9.3.3.9-10). Their
//!   configuration space follows §9.3.4: Vendor and Device ID read FFFFh
//!   (software takes the VF Device ID from the PF's SR-IOV capability),
//!   BARs read 0 as the VF BARs live in the PF's capability (§9.3.3.14),
//!   Memory Space Enable is the PF's VF MSE, and the VF uses the PF's
//!   Max_Payload_Size (§9.3.5.4).

pub mod command;
pub mod controller;
pub mod regs;

use std::time::Duration;

use weft_pcie::config::aer::{self, Aer};
use weft_pcie::config::ari::Ari;
use weft_pcie::config::bar::{BarError, MAX_BARS};
use weft_pcie::config::header::{command as cmd, common};
use weft_pcie::config::list::CapabilityListError;
use weft_pcie::config::msi::{Msi, MsiCap};
use weft_pcie::config::msix::{BarLocation, MsiX, MsiXCap};
use weft_pcie::config::pcie_cap::{link_speed, Link, PcieCap, PcieCapability, PortType};
use weft_pcie::config::pm::PowerManagement;
use weft_pcie::config::sriov::{self, SrIov, SriovCap, SriovError};
use weft_pcie::config::{Bar, CapabilityList, ConfigSpace, FunctionIdentity, Type0Function};
use weft_pcie::split::PayloadSize;
use weft_pcie::Bdf;

use crate::bars::{find, header_windows, windows_at, BarWindow};
use crate::device::{BusCapture, Claim, ConfigError, Device, Readiness};
use crate::interrupt::{message_write, msi_write, MsixTable};
use crate::packet::Packet;
use crate::requester::BusParameters;
use command::IdentifyInfo;
use controller::Controller;

/// Class code of an NVM Express controller (§7.5.1.1.6; NVMe Base 2.0 §3.1.2).
pub const CLASS_NVME: u32 = 0x01_08_02;
/// MSI-X vectors per function.
pub const MSIX_VECTORS: u16 = 16;

/// What an NVMe model looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NvmeConfig {
    /// Vendor ID.
    pub vendor_id: u16,
    /// The PF's Device ID.
    pub device_id: u16,
    /// VF Device ID in the SR-IOV capability.
    pub vf_device_id: u16,
    /// TotalVFs (and InitialVFs).
    pub total_vfs: u16,
    /// First VF Offset.
    pub first_vf_offset: u16,
    /// VF Stride.
    pub vf_stride: u16,
    /// Bytes of each function's namespace (a multiple of 512).
    pub namespace_size: u64,
    /// I/O queue pairs per controller.
    pub max_io_queues: u16,
    /// How long the device answers configuration requests with Request
    /// Retry Status after a reset (§6.6.1).
    pub boot_time: Duration,
}

impl Default for NvmeConfig {
    /// A Samsung-like SSD with 4 VFs right after the PF and 1 MiB per
    /// namespace.
    fn default() -> Self {
        NvmeConfig {
            vendor_id: 0x144d,
            device_id: 0xa824,
            vf_device_id: 0xa824,
            total_vfs: 4,
            first_vf_offset: 1,
            vf_stride: 1,
            namespace_size: 1 << 20,
            max_io_queues: 4,
            boot_time: Duration::ZERO,
        }
    }
}

/// Why an NVMe model could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NvmeError {
    /// A BAR layout error.
    Bar(BarError),
    /// The capabilities did not fit.
    Capabilities(CapabilityListError),
    /// The SR-IOV description is invalid (zero stride, for example).
    Sriov(SriovError),
}

/// Capability offsets of one function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    pcie: PcieCap,
    msix: MsiXCap,
    msi: Option<MsiCap>,
}

/// One function: its configuration space, controller and MSI-X table.
#[derive(Clone, Debug)]
struct Function {
    space: ConfigSpace,
    layout: Layout,
    controller: Controller,
    msix: MsixTable,
}

/// The NVMe device: a PF and its enabled VFs.
#[derive(Clone, Debug)]
pub struct Nvme {
    config: NvmeConfig,
    pf: Function,
    sriov: SriovCap,
    vfs: Vec<Function>,
    bus: BusCapture,
    readiness: Readiness,
}

fn register_bar() -> [Option<Bar>; MAX_BARS] {
    let mut bars = [None; MAX_BARS];
    bars[0] = Some(Bar::memory64(regs::BAR0_SIZE, false));
    bars
}

fn msix_capability() -> MsiX {
    MsiX {
        table_entries: MSIX_VECTORS,
        table: BarLocation {
            bir: 0,
            offset: regs::MSIX_TABLE as u32,
        },
        pending_bits: BarLocation {
            bir: 0,
            offset: regs::MSIX_PBA as u32,
        },
    }
}

fn endpoint_pcie() -> PcieCapability {
    let mut pcie = PcieCapability::new(PortType::Endpoint);
    pcie.link = Some(Link::trained(link_speed::GT_8, 4, 0));
    pcie
}

fn identity(config: &NvmeConfig, device_id: u16) -> FunctionIdentity {
    FunctionIdentity {
        vendor_id: config.vendor_id,
        device_id,
        revision_id: 0,
        class_code: CLASS_NVME,
    }
}

fn controller(config: &NvmeConfig, controller_id: u16) -> Controller {
    Controller::new(
        IdentifyInfo {
            vendor_id: config.vendor_id,
            serial: format!("WEFTSIM{controller_id:04}"),
            model: "weft simulated NVMe".into(),
            controller_id,
            blocks: config.namespace_size >> command::LBA_SHIFT,
        },
        config.namespace_size,
        config.max_io_queues,
    )
}

/// The PF's configuration space (§7.5, §9.3.3).
fn build_pf(config: &NvmeConfig) -> Result<(Function, SriovCap), NvmeError> {
    let mut header = Type0Function::new(identity(config, config.device_id));
    header.bars = register_bar();
    header.subsystem_vendor_id = config.vendor_id;
    header.subsystem_id = config.device_id;
    let mut space = header.build().map_err(NvmeError::Bar)?;
    let mut vf_bars = [None; MAX_BARS];
    vf_bars[0] = Some(Bar::memory64(regs::BAR0_SIZE, false));
    let sriov = SrIov {
        capabilities: 0,
        initial_vfs: config.total_vfs,
        total_vfs: config.total_vfs,
        function_dependency_link: 0,
        first_vf_offset: config.first_vf_offset,
        vf_stride: config.vf_stride,
        vf_device_id: config.vf_device_id,
        supported_page_sizes: sriov::REQUIRED_PAGE_SIZES,
        vf_bars,
        migration_state_array: 0,
    };
    sriov.validate().map_err(NvmeError::Sriov)?;
    let mut list = CapabilityList::new(&mut space).map_err(NvmeError::Capabilities)?;
    let err = NvmeError::Capabilities;
    list.push(&PowerManagement::minimal()).map_err(err)?;
    let msi = list
        .push(&Msi {
            multiple_message_capable: 0,
            address_64: true,
            per_vector_masking: false,
        })
        .map_err(err)?;
    let pcie = list.push(&endpoint_pcie()).map_err(err)?;
    let msix = list.push(&msix_capability()).map_err(err)?;
    list.push_extended(&Aer {
        uncorrectable_supported: aer::uncorrectable::POISONED_TLP
            | aer::uncorrectable::COMPLETION_TIMEOUT
            | aer::uncorrectable::COMPLETER_ABORT
            | aer::uncorrectable::UNEXPECTED_COMPLETION
            | aer::uncorrectable::MALFORMED_TLP
            | aer::uncorrectable::UNSUPPORTED_REQUEST,
        correctable_supported: aer::correctable::ALL,
        root_port: false,
    })
    .map_err(err)?;
    list.push_extended(&Ari {
        next_function: 0,
        function_groups: 0,
    })
    .map_err(err)?;
    let sriov_offset = list.push_extended(&sriov).map_err(err)?;
    Ok((
        Function {
            space,
            layout: Layout {
                pcie: PcieCap::at(pcie),
                msix: MsiXCap::at(msix),
                msi: Some(MsiCap::at(msi)),
            },
            controller: controller(config, 0),
            msix: MsixTable::new(MSIX_VECTORS),
        },
        SriovCap::at(sriov_offset),
    ))
}

/// VF `vf`'s configuration space (§9.3.4).
fn build_vf(config: &NvmeConfig, vf: u16) -> Result<Function, NvmeError> {
    let header = Type0Function::new(identity(config, config.vf_device_id));
    let mut space = header.build().map_err(NvmeError::Bar)?;
    // §9.3.4.1.1-2: Vendor ID and Device ID read FFFFh.
    space.define_u16(common::VENDOR_ID, 0xffff, 0, 0);
    space.define_u16(common::DEVICE_ID, 0xffff, 0, 0);
    // §9.3.4.1.3: Memory Space Enable is RO 0 (VF MSE governs), I/O Space
    // and INTx Disable do not apply; Bus Master Enable is the VF's own.
    space.define_u16(
        common::COMMAND,
        0,
        cmd::BUS_MASTER | cmd::PARITY_ERROR_RESPONSE | cmd::SERR_ENABLE,
        0,
    );
    space.define_u16(0x2c, config.vendor_id, 0, 0);
    space.define_u16(0x2e, config.device_id, 0, 0);
    let mut list = CapabilityList::new(&mut space).map_err(NvmeError::Capabilities)?;
    let pcie = list
        .push(&endpoint_pcie())
        .map_err(NvmeError::Capabilities)?;
    let msix = list
        .push(&msix_capability())
        .map_err(NvmeError::Capabilities)?;
    list.push_extended(&Ari {
        next_function: 0,
        function_groups: 0,
    })
    .map_err(NvmeError::Capabilities)?;
    Ok(Function {
        space,
        layout: Layout {
            pcie: PcieCap::at(pcie),
            msix: MsiXCap::at(msix),
            msi: None,
        },
        controller: controller(config, vf),
        msix: MsixTable::new(MSIX_VECTORS),
    })
}

/// Which function a request addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    Pf,
    Vf(usize),
}

impl Nvme {
    /// An NVMe device that left reset at time zero, VFs disabled.
    pub fn new(config: NvmeConfig) -> Result<Self, NvmeError> {
        let (pf, sriov) = build_pf(&config)?;
        Ok(Nvme {
            config,
            pf,
            sriov,
            vfs: Vec::new(),
            bus: BusCapture::default(),
            readiness: Readiness::new(Duration::ZERO, config.boot_time),
        })
    }

    /// The PF's routing ID (the captured bus, function 0).
    pub fn pf_id(&self) -> Bdf {
        self.bus.base(Bdf(0))
    }

    /// The routing ID of VF `vf` (1-based) as SR-IOV computes it, if enabled.
    pub fn vf_id(&self, vf: u16) -> Option<Bdf> {
        if usize::from(vf) > self.vfs.len() {
            return None;
        }
        self.sriov
            .vf_routing_id(&self.pf.space, self.pf_id(), vf)
            .ok()
    }

    /// How many VFs exist now.
    pub fn active_vfs(&self) -> usize {
        self.vfs.len()
    }

    /// The namespace of the PF (`None`) or of VF `vf` (1-based).
    pub fn namespace(&self, vf: Option<u16>) -> Option<&crate::memory::SparseMemory> {
        match vf {
            None => Some(self.pf.controller.namespace()),
            Some(n) => self
                .vfs
                .get(usize::from(n).checked_sub(1)?)
                .map(|f| f.controller.namespace()),
        }
    }

    fn which(&self, target: Bdf) -> Option<Which> {
        let index = self.bus.index(target)?;
        if index == 0 {
            return Some(Which::Pf);
        }
        let offset = self.sriov.first_vf_offset(&self.pf.space);
        let stride = self.sriov.vf_stride(&self.pf.space).max(1);
        let past = index.checked_sub(offset)?;
        if past % stride != 0 {
            return None;
        }
        let vf = usize::from(past / stride);
        (vf < self.vfs.len()).then_some(Which::Vf(vf))
    }

    fn function(&self, which: Which) -> &Function {
        match which {
            Which::Pf => &self.pf,
            Which::Vf(index) => &self.vfs[index],
        }
    }

    fn function_mut(&mut self, which: Which) -> &mut Function {
        match which {
            Which::Pf => &mut self.pf,
            Which::Vf(index) => &mut self.vfs[index],
        }
    }

    fn id_of(&self, which: Which) -> Bdf {
        match which {
            Which::Pf => self.pf_id(),
            Which::Vf(index) => self
                .sriov
                .vf_routing_id(&self.pf.space, self.pf_id(), index as u16 + 1)
                .unwrap_or(self.pf_id()),
        }
    }

    /// The BAR0 window of a function, if it decodes now.
    fn window(&self, which: Which) -> Option<BarWindow> {
        match which {
            Which::Pf => header_windows(&self.pf.space, &register_bar())
                .first()
                .copied(),
            Which::Vf(index) => {
                let control = self.pf.space.read_u16(self.sriov.offset + sriov::CONTROL);
                let enabled = sriov::control::VF_ENABLE | sriov::control::VF_MEMORY_SPACE_ENABLE;
                if control & enabled != enabled {
                    return None;
                }
                windows_at(
                    &self.pf.space,
                    self.sriov.vf_bar0(),
                    &register_bar(),
                    index as u64,
                )
                .first()
                .copied()
            }
        }
    }

    fn hit(&self, address: u64) -> Option<(Which, u64)> {
        let all = std::iter::once(Which::Pf).chain((0..self.vfs.len()).map(Which::Vf));
        for which in all {
            if let Some(window) = self.window(which) {
                if let Some((_, offset)) = find(&[window], address) {
                    return Some((which, offset));
                }
            }
        }
        None
    }

    fn bus_parameters(&self, which: Which) -> BusParameters {
        let function = self.function(which);
        let encoding = |bits: u8| PayloadSize::from_encoding(bits).unwrap_or(PayloadSize::B128);
        BusParameters {
            requester: self.id_of(which),
            // §9.3.5.4: a VF's Max_Payload_Size field is reserved; the PF's applies.
            max_payload: encoding(self.pf.layout.pcie.max_payload_size(&self.pf.space)),
            max_read_request: encoding(function.layout.pcie.max_read_request_size(&function.space)),
            bus_master: function.space.read_u16(common::COMMAND) & cmd::BUS_MASTER != 0,
        }
    }

    /// Creates or removes VFs after a write to the PF's SR-IOV Control.
    fn update_vfs(&mut self) {
        let wanted = usize::from(self.sriov.active_vfs(&self.pf.space));
        if wanted == 0 {
            self.vfs.clear();
            return;
        }
        if self.vfs.is_empty() {
            self.vfs = (1..=wanted as u16)
                .filter_map(|vf| build_vf(&self.config, vf).ok())
                .collect();
        }
    }

    /// The TLP for interrupt `vector` of a function: MSI-X if enabled, else
    /// MSI (vector 0 if more than granted), else none (INTx not modelled).
    fn interrupt(&mut self, which: Which, vector: u16, requester: Bdf) -> Option<Packet> {
        let function = self.function_mut(which);
        if function.layout.msix.enabled(&function.space) {
            let masked = function.layout.msix.function_masked(&function.space);
            let (address, data) = function.msix.signal(vector, masked)?;
            return Some(message_write(requester, address, data));
        }
        let msi = function.layout.msi?;
        let vector = if vector < u16::from(msi.enabled_vectors(&function.space)) {
            vector as u8
        } else {
            0
        };
        msi.message(&function.space, vector)
            .map(|message| msi_write(requester, message))
    }
}

impl Device for Nvme {
    fn config_read(&mut self, now: Duration, target: Bdf, offset: u16) -> Result<u32, ConfigError> {
        self.readiness.check(now, target)?;
        let which = self
            .which(target)
            .ok_or(ConfigError::UnsupportedRequest { target })?;
        Ok(self.function(which).space.read(offset))
    }

    fn config_write(
        &mut self,
        now: Duration,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigError> {
        self.readiness.check(now, target)?;
        let which = self
            .which(target)
            .ok_or(ConfigError::UnsupportedRequest { target })?;
        match which {
            Which::Pf => {
                // §2.2.6.2: capture the bus from writes to the PF; with VFs
                // enabled the PF keeps the bus it had.
                if self.vfs.is_empty() {
                    self.bus.capture(target);
                }
                self.sriov
                    .device_write(&mut self.pf.space, offset, value, byte_enables);
                self.update_vfs();
            }
            Which::Vf(index) => self.vfs[index].space.write(offset, value, byte_enables),
        }
        Ok(())
    }

    fn claim(&self, address: u64) -> Option<Claim> {
        let (which, _) = self.hit(address)?;
        Some(Claim {
            function: self.id_of(which),
            max_payload: self.bus_parameters(which).max_payload,
        })
    }

    fn memory_read(&mut self, _now: Duration, address: u64, out: &mut [u8]) {
        let Some((which, offset)) = self.hit(address) else {
            out.fill(0);
            return;
        };
        let function = self.function(which);
        for (index, byte) in out.iter_mut().enumerate() {
            let at = offset + index as u64;
            let dw = if at >= regs::MSIX_PBA {
                function.msix.read_pba((at - regs::MSIX_PBA) & !3)
            } else if at >= regs::MSIX_TABLE {
                function.msix.read_table((at - regs::MSIX_TABLE) & !3)
            } else {
                function.controller.read_register(at)
            };
            *byte = dw.to_le_bytes()[(at & 3) as usize];
        }
    }

    fn memory_write(&mut self, _now: Duration, address: u64, data: &[u8]) {
        let Some((which, offset)) = self.hit(address) else {
            return;
        };
        // Registers, doorbells and the table take whole aligned DWs
        // (NVMe Base 2.0 §3.1.4; PCIe Base 6.0 §7.7.2).
        if offset % 4 != 0 {
            return;
        }
        let function = self.function_mut(which);
        for (index, dw) in data.chunks_exact(4).enumerate() {
            let at = offset + 4 * index as u64;
            let value = u32::from_le_bytes([dw[0], dw[1], dw[2], dw[3]]);
            if at >= regs::MSIX_PBA {
                continue;
            } else if at >= regs::MSIX_TABLE {
                function.msix.write_table(at - regs::MSIX_TABLE, value);
            } else {
                function.controller.write_register(at, value);
            }
        }
    }

    fn receive_completion(&mut self, _now: Duration, completion: &Packet) {
        let Some(requester) = completion.completion().map(|c| c.requester) else {
            return;
        };
        let Some(which) = self.which(requester) else {
            return;
        };
        let bus = self.bus_parameters(which);
        self.function_mut(which)
            .controller
            .receive(completion, &bus);
    }

    fn poll(&mut self, _now: Duration) -> Vec<Packet> {
        let mut out = Vec::new();
        let all: Vec<Which> = std::iter::once(Which::Pf)
            .chain((0..self.vfs.len()).map(Which::Vf))
            .collect();
        for which in all {
            let bus = self.bus_parameters(which);
            let function = self.function_mut(which);
            // Messages held back by a mask go out once it clears (§7.7.2.5).
            let mut vectors = Vec::new();
            if function.layout.msix.enabled(&function.space)
                && !function.layout.msix.function_masked(&function.space)
            {
                vectors.extend(function.msix.take_deliverable());
            }
            vectors.extend(function.controller.poll(&bus, &mut out));
            if !bus.bus_master {
                continue;
            }
            for vector in vectors {
                if let Some(packet) = self.interrupt(which, vector, bus.requester) {
                    out.push(packet);
                }
            }
        }
        out
    }

    fn owns(&self, id: Bdf) -> bool {
        self.bus.bus().is_some() && self.which(id).is_some()
    }

    fn reset(&mut self, now: Duration) {
        if let Ok((pf, sriov)) = build_pf(&self.config) {
            let namespace = std::mem::replace(&mut self.pf, pf);
            // Conventional reset keeps the media: the namespace survives.
            self.pf.controller = namespace.controller;
            self.pf.controller.reset();
            self.sriov = sriov;
        }
        self.vfs.clear();
        self.bus.clear();
        self.readiness = Readiness::new(now, self.config.boot_time);
    }

    fn completer_for_unclaimed(&self) -> Bdf {
        self.pf_id()
    }
}
