//! A GPU endpoint: a 3D controller with a register BAR, a large
//! prefetchable memory BAR backed by RAM, and a DMA copy engine that signals
//! completion with an MSI.
//!
//! Configuration space (PCIe Base 6.0 §7.5): class 03_02_00, BAR0 16 MiB
//! 32-bit non-prefetchable registers ([`regs`]), BAR1 a 64-bit prefetchable
//! window onto the GPU's memory (256 MiB by default), and the Power
//! Management, MSI (64-bit), PCI Express (endpoint, Gen3 x16) and AER
//! capabilities, laid out by weft-pcie's builders.

pub mod dma;
pub mod regs;

use std::time::Duration;

use weft_pcie::config::aer::{self, Aer};
use weft_pcie::config::bar::MAX_BARS;
use weft_pcie::config::header::{command, common};
use weft_pcie::config::msi::{Msi, MsiCap};
use weft_pcie::config::pcie_cap::{link_speed, Link, PcieCap, PcieCapability, PortType};
use weft_pcie::config::pm::PowerManagement;
use weft_pcie::config::{Bar, CapabilityList, ConfigSpace, FunctionIdentity, Type0Function};
use weft_pcie::split::PayloadSize;
use weft_pcie::Bdf;

use crate::bars::{find, header_windows};
use crate::device::{BusCapture, Claim, ConfigError, Device, Readiness};
use crate::interrupt::msi_write;
use crate::memory::SparseMemory;
use crate::packet::Packet;
use dma::{BusParameters, CopyEngine, CopyRequest, Location};

/// The GPU's class code: display controller, 3D controller (§7.5.1.1.6).
pub const CLASS_3D_CONTROLLER: u32 = 0x03_02_00;
/// BAR0's size: the register block.
pub const REGISTER_BAR_SIZE: u64 = 16 << 20;
/// The BAR slot of the register block.
pub const REGISTER_BAR: u8 = 0;
/// The BAR slot of the memory window (a 64-bit BAR using slots 1 and 2).
pub const MEMORY_BAR: u8 = 1;

/// What a GPU model looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuConfig {
    /// Vendor ID.
    pub vendor_id: u16,
    /// Device ID.
    pub device_id: u16,
    /// Size of the memory behind BAR1: a power of two, at least 16 bytes.
    pub memory_size: u64,
    /// How long the GPU answers configuration requests with Request Retry
    /// Status after a reset (§6.6.1).
    pub boot_time: Duration,
    /// Reads the copy engine keeps outstanding.
    pub max_outstanding_reads: usize,
    /// TLPs the copy engine sends per [`Device::poll`].
    pub batch: usize,
}

impl Default for GpuConfig {
    /// An NVIDIA Tesla M40-like GPU (the reference experiment's) with a
    /// 256 MiB window and no boot delay.
    fn default() -> Self {
        GpuConfig {
            vendor_id: 0x10de,
            device_id: 0x17fd,
            memory_size: 256 << 20,
            boot_time: Duration::ZERO,
            max_outstanding_reads: 32,
            batch: 64,
        }
    }
}

/// Why a GPU could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuError {
    /// The memory size is not a valid 64-bit BAR size.
    Bar(weft_pcie::config::bar::BarError),
    /// The capabilities did not fit in configuration space.
    Capabilities(weft_pcie::config::list::CapabilityListError),
}

/// Offsets of the capabilities, for typed access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    msi: MsiCap,
    pcie: PcieCap,
}

/// The engine's programmable registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Registers {
    src: u64,
    dst: u64,
    len: u32,
    control: u32,
    status: u32,
    error: u32,
    count: u32,
    elapsed_ns: u32,
}

/// A GPU endpoint (single function).
#[derive(Debug)]
pub struct Gpu {
    config: GpuConfig,
    bars: [Option<Bar>; MAX_BARS],
    space: ConfigSpace,
    layout: Layout,
    bus: BusCapture,
    readiness: Readiness,
    memory: SparseMemory,
    scratch: SparseMemory,
    registers: Registers,
    engine: CopyEngine,
    /// When the running copy's doorbell rang.
    copy_started: Duration,
    interrupt_pending: bool,
}

impl Gpu {
    /// A GPU that left reset at time zero.
    pub fn new(config: GpuConfig) -> Result<Self, GpuError> {
        let mut bars = [None; MAX_BARS];
        bars[usize::from(REGISTER_BAR)] = Some(Bar::memory32(REGISTER_BAR_SIZE));
        bars[usize::from(MEMORY_BAR)] = Some(Bar::memory64(config.memory_size, true));
        let (space, layout) = build_space(&config, &bars)?;
        Ok(Gpu {
            config,
            bars,
            space,
            layout,
            bus: BusCapture::default(),
            readiness: Readiness::new(Duration::ZERO, config.boot_time),
            memory: SparseMemory::with_size(config.memory_size),
            scratch: SparseMemory::with_size(regs::SCRATCH_SIZE),
            registers: Registers::default(),
            engine: CopyEngine::new(config.max_outstanding_reads, config.batch),
            copy_started: Duration::ZERO,
            interrupt_pending: false,
        })
    }

    /// The configuration space as it stands (for inspection in tests).
    pub fn config_space(&self) -> &ConfigSpace {
        &self.space
    }

    /// The GPU's memory, as the driver would see it through BAR1.
    pub fn memory(&self) -> &SparseMemory {
        &self.memory
    }

    /// The GPU's memory, to preload data.
    pub fn memory_mut(&mut self) -> &mut SparseMemory {
        &mut self.memory
    }

    /// The routing ID the GPU sends requests with.
    pub fn id(&self) -> Bdf {
        self.bus.base(Bdf(0))
    }

    fn bus_parameters(&self) -> BusParameters {
        let encoding = |bits: u8| PayloadSize::from_encoding(bits).unwrap_or(PayloadSize::B128);
        BusParameters {
            requester: self.id(),
            max_payload: encoding(self.layout.pcie.max_payload_size(&self.space)),
            max_read_request: encoding(self.layout.pcie.max_read_request_size(&self.space)),
            bus_master: self.space.read_u16(common::COMMAND) & command::BUS_MASTER != 0,
        }
    }

    fn read_register(&self, offset: u64) -> u32 {
        let r = &self.registers;
        match offset & !3 {
            regs::ID => regs::ID_VALUE,
            regs::DMA_SRC_LO => r.src as u32,
            regs::DMA_SRC_HI => (r.src >> 32) as u32,
            regs::DMA_DST_LO => r.dst as u32,
            regs::DMA_DST_HI => (r.dst >> 32) as u32,
            regs::DMA_LEN => r.len,
            regs::DMA_CONTROL => r.control,
            regs::DMA_STATUS => r.status,
            regs::DMA_ERROR => r.error,
            regs::DMA_COUNT => r.count,
            regs::DMA_ELAPSED_NS => r.elapsed_ns,
            _ => 0,
        }
    }

    /// A whole-DW register write at `now` and its side effects.
    fn write_register(&mut self, now: Duration, offset: u64, value: u32) {
        let r = &mut self.registers;
        let low = |old: u64| (old & !0xffff_ffff) | u64::from(value);
        let high = |old: u64| (old & 0xffff_ffff) | u64::from(value) << 32;
        match offset {
            regs::DMA_SRC_LO => r.src = low(r.src),
            regs::DMA_SRC_HI => r.src = high(r.src),
            regs::DMA_DST_LO => r.dst = low(r.dst),
            regs::DMA_DST_HI => r.dst = high(r.dst),
            regs::DMA_LEN => r.len = value,
            regs::DMA_CONTROL => r.control = value & 0b111,
            regs::DMA_STATUS => {
                r.status &= !(value & (regs::status::DONE | regs::status::ERROR));
            }
            regs::DMA_DOORBELL => self.ring_doorbell(now),
            _ => {}
        }
    }

    fn ring_doorbell(&mut self, now: Duration) {
        let r = self.registers;
        let side = |local: bool, address: u64| {
            if local {
                Location::Local(address)
            } else {
                Location::Bus(address)
            }
        };
        let request = CopyRequest {
            src: side(r.control & regs::control::SRC_LOCAL != 0, r.src),
            dst: side(r.control & regs::control::DST_LOCAL != 0, r.dst),
            len: u64::from(r.len),
        };
        let bus = self.bus_parameters();
        match self.engine.start(request, &self.memory, &bus) {
            Ok(()) => {
                self.registers.status = regs::status::BUSY;
                self.registers.error = regs::error::NONE;
                self.registers.elapsed_ns = 0;
                self.copy_started = now;
            }
            Err(code) => self.fail(code),
        }
    }

    fn fail(&mut self, code: u32) {
        // A doorbell while busy leaves the running copy alone.
        if code == regs::error::BUSY {
            self.registers.error = code;
            return;
        }
        self.registers.status = regs::status::ERROR;
        self.registers.error = code;
    }

    /// Ends the running copy: DONE, or ERROR with the engine's code, and
    /// either way the MSI if the copy asked for one, so a driver learns of
    /// a failed copy (a read answered with UR, §2.3.2) as soon as of a
    /// finished one.
    fn finish(&mut self, now: Duration, outcome: Result<(), u32>) {
        let elapsed = now.saturating_sub(self.copy_started).as_nanos();
        self.registers.elapsed_ns = u32::try_from(elapsed).unwrap_or(u32::MAX);
        match outcome {
            Ok(()) => {
                self.registers.status = regs::status::DONE;
                self.registers.count = self.registers.count.wrapping_add(1);
            }
            Err(code) => self.fail(code),
        }
        if self.registers.control & regs::control::INTERRUPT != 0 {
            self.interrupt_pending = true;
        }
    }

    fn reset_state(&mut self, now: Duration) {
        if let Ok((space, layout)) = build_space(&self.config, &self.bars) {
            self.space = space;
            self.layout = layout;
        }
        self.bus.clear();
        self.readiness = Readiness::new(now, self.config.boot_time);
        self.registers = Registers::default();
        self.engine.reset();
        self.copy_started = now;
        self.interrupt_pending = false;
        self.scratch = SparseMemory::with_size(regs::SCRATCH_SIZE);
    }
}

/// Lays out the GPU's configuration space with weft-pcie's builders.
fn build_space(
    config: &GpuConfig,
    bars: &[Option<Bar>; MAX_BARS],
) -> Result<(ConfigSpace, Layout), GpuError> {
    let mut function = Type0Function::new(FunctionIdentity {
        vendor_id: config.vendor_id,
        device_id: config.device_id,
        revision_id: 0xa1,
        class_code: CLASS_3D_CONTROLLER,
    });
    function.bars = *bars;
    function.subsystem_vendor_id = config.vendor_id;
    function.subsystem_id = config.device_id;
    function.interrupt_pin = weft_pcie::config::function::InterruptPin::IntA;
    let mut space = function.build().map_err(GpuError::Bar)?;
    let mut pcie = PcieCapability::new(PortType::Endpoint);
    pcie.link = Some(Link::trained(link_speed::GT_8, 16, 0));
    let mut list = CapabilityList::new(&mut space).map_err(GpuError::Capabilities)?;
    list.push(&PowerManagement::minimal())
        .map_err(GpuError::Capabilities)?;
    let msi = list
        .push(&Msi {
            multiple_message_capable: 0,
            address_64: true,
            per_vector_masking: false,
        })
        .map_err(GpuError::Capabilities)?;
    let pcie_offset = list.push(&pcie).map_err(GpuError::Capabilities)?;
    list.push_extended(&Aer {
        uncorrectable_supported: aer::uncorrectable::DEFAULT_SEVERITY
            | aer::uncorrectable::POISONED_TLP
            | aer::uncorrectable::COMPLETION_TIMEOUT
            | aer::uncorrectable::COMPLETER_ABORT
            | aer::uncorrectable::UNEXPECTED_COMPLETION
            | aer::uncorrectable::UNSUPPORTED_REQUEST,
        correctable_supported: aer::correctable::ALL,
        root_port: false,
    })
    .map_err(GpuError::Capabilities)?;
    Ok((
        space,
        Layout {
            msi: MsiCap::at(msi),
            pcie: PcieCap::at(pcie_offset),
        },
    ))
}

impl Device for Gpu {
    fn config_read(&mut self, now: Duration, target: Bdf, offset: u16) -> Result<u32, ConfigError> {
        self.readiness.check(now, target)?;
        if target.ari_function() != 0 {
            return Err(ConfigError::UnsupportedRequest { target });
        }
        Ok(self.space.read(offset))
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
        if target.ari_function() != 0 {
            return Err(ConfigError::UnsupportedRequest { target });
        }
        self.bus.capture(target);
        self.space.write(offset, value, byte_enables);
        Ok(())
    }

    fn claim(&self, address: u64) -> Option<Claim> {
        let windows = header_windows(&self.space, &self.bars);
        find(&windows, address)?;
        Some(Claim {
            function: self.id(),
            max_payload: self.bus_parameters().max_payload,
        })
    }

    fn memory_read(&mut self, _now: Duration, address: u64, out: &mut [u8]) {
        let windows = header_windows(&self.space, &self.bars);
        let Some((window, offset)) = find(&windows, address) else {
            out.fill(0);
            return;
        };
        if window.slot == MEMORY_BAR {
            self.memory.read_into(offset, out);
            return;
        }
        for (index, byte) in out.iter_mut().enumerate() {
            let at = offset + index as u64;
            *byte = if (regs::SCRATCH..regs::SCRATCH + regs::SCRATCH_SIZE).contains(&at) {
                self.scratch.read(at - regs::SCRATCH, 1)[0]
            } else {
                self.read_register(at).to_le_bytes()[(at & 3) as usize]
            };
        }
    }

    fn memory_write(&mut self, now: Duration, address: u64, data: &[u8]) {
        let windows = header_windows(&self.space, &self.bars);
        let Some((window, offset)) = find(&windows, address) else {
            return;
        };
        if window.slot == MEMORY_BAR {
            self.memory.write(offset, data);
            return;
        }
        if (regs::SCRATCH..regs::SCRATCH + regs::SCRATCH_SIZE).contains(&offset) {
            self.scratch.write(offset - regs::SCRATCH, data);
            return;
        }
        // Registers take whole, aligned DWs; partial writes are ignored,
        // as the register block documents.
        if offset % 4 != 0 {
            return;
        }
        for (index, dw) in data.chunks_exact(4).enumerate() {
            let value = u32::from_le_bytes([dw[0], dw[1], dw[2], dw[3]]);
            self.write_register(now, offset + 4 * index as u64, value);
        }
    }

    fn receive_completion(&mut self, _now: Duration, completion: &Packet) {
        let bus = self.bus_parameters();
        self.engine.receive(completion, &mut self.memory, &bus);
    }

    fn poll(&mut self, now: Duration) -> Vec<Packet> {
        let mut out = Vec::new();
        let bus = self.bus_parameters();
        if let Some(outcome) = self.engine.poll(&mut self.memory, &bus, &mut out) {
            self.finish(now, outcome);
        }
        if self.interrupt_pending && bus.bus_master {
            // MSI needs Bus Master Enable (§7.5.1.1.3); the write follows
            // the data writes, and posted writes stay in order (§2.4.1).
            if let Some(message) = self.layout.msi.message(&self.space, 0) {
                out.push(msi_write(bus.requester, message));
            }
            self.interrupt_pending = false;
        }
        out
    }

    fn owns(&self, id: Bdf) -> bool {
        self.bus.bus().is_some() && id == self.id()
    }

    fn reset(&mut self, now: Duration) {
        self.reset_state(now);
    }

    fn completer_for_unclaimed(&self) -> Bdf {
        self.id()
    }
}
