//! A host: a root complex with its own memory and interrupt controller, an
//! operating-system-like enumerator, a hot-plug driver and GPU and NVMe
//! drivers, all talking to the hierarchy only through TLPs on the root
//! port's link.
//!
//! - [`root_complex`]: the TLP endpoint a simulator wires to a link
//!   ([`Host::handle`], [`Host::poll`]); [`fabric`]: what the link leads
//!   to, for the host's synchronous software; [`access`]: the CPU's
//!   configuration and memory accesses over it.
//! - [`scan`], [`resources`], [`setup`]: enumeration as Linux does it —
//!   bus walk and numbering, BAR sizing and window placement, then MPS,
//!   Command and interrupts; [`tree`]: the result, printable like `lspci`.
//! - [`hotplug`]: the pciehp-like slot driver; [`sriov`]: `sriov_numvfs`.
//! - [`gpu`], [`nvme`]: drivers; [`dma`]: DMA buffers; [`interrupts`]:
//!   MSI vectors.
//!
//! Section numbers refer to the PCI Express Base Specification 6.0 and the
//! NVM Express Base Specification 2.0.

pub mod access;
pub mod dma;
pub mod error;
pub mod fabric;
pub mod gpu;
pub mod hotplug;
pub mod interrupts;
pub mod nvme;
pub mod resources;
pub mod root_complex;
pub mod scan;
pub mod setup;
pub mod sriov;
pub mod tree;

use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;

use weft_model::Packet;
use weft_pcie::config::pcie_cap;
use weft_pcie::Bdf;

pub use access::Cpu;
pub use error::HostError;
pub use fabric::Fabric;
pub use gpu::{CopyStats, CopyTicket, GpuDriver, GpuError, Location};
pub use nvme::{NvmeDriver, NvmeError};
pub use root_complex::{PlatformIdentity, RootComplex, ROOT_PORT};
pub use scan::ScanStats;
pub use tree::{DeviceTree, Function};

use dma::DmaAllocator;
use hotplug::SlotEvent;
use root_complex::{CRS_SOFTWARE_VISIBILITY_ENABLE, ROOT_PORT_PCIE};
use tree::InterruptSetup;

/// How a host is built and what policy its enumerator follows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostConfig {
    /// The root complex's IDs and MPS.
    pub identity: PlatformIdentity,
    /// RAM handed out as DMA buffers.
    pub dma: Range<u64>,
    /// Where non-prefetchable BARs and windows go (below 4 GiB, clear of
    /// the interrupt window at 0xFEE0_0000).
    pub mmio32: Range<u64>,
    /// Where 64-bit prefetchable BARs and windows go.
    pub mmio64: Range<u64>,
    /// Non-prefetchable bytes reserved per hot-plug bridge
    /// (`pci=hpmmiosize=`).
    pub hotplug_mmio: u64,
    /// Prefetchable bytes reserved per hot-plug bridge
    /// (`pci=hpmmioprefsize=`).
    pub hotplug_mmio_pref: u64,
    /// Bus numbers reserved per hot-plug bridge (`pci=hpbussize=`).
    pub hotplug_buses: u8,
    /// MSI-X vectors given to a function that has MSI-X.
    pub msix_vectors: u16,
    /// How long the enumerator waits for a device answering with RRS
    /// (Linux: 60 s).
    pub crs_timeout: Duration,
}

impl Default for HostConfig {
    /// A 64-bit PC: DMA buffers between 256 MiB and 2 GiB, 32-bit MMIO from
    /// 2 GiB to 0xFEC0_0000, 64-bit MMIO from 512 GiB to 1 TiB; 128 MiB +
    /// 4 GiB and one bus reserved per hot-plug slot; two MSI-X vectors.
    fn default() -> Self {
        HostConfig {
            identity: PlatformIdentity::default(),
            dma: 0x1000_0000..0x8000_0000,
            mmio32: 0x8000_0000..0xfec0_0000,
            mmio64: 0x80_0000_0000..0x100_0000_0000,
            hotplug_mmio: 128 << 20,
            hotplug_mmio_pref: 4 << 30,
            hotplug_buses: 1,
            msix_vectors: 2,
            crs_timeout: Duration::from_secs(60),
        }
    }
}

/// A driver bound to a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Driver {
    /// The GPU driver.
    Gpu(GpuDriver),
    /// The NVMe driver.
    Nvme(Box<NvmeDriver>),
}

impl Driver {
    /// The driver's name, as `lspci -k` shows it.
    pub fn name(&self) -> &'static str {
        match self {
            Driver::Gpu(_) => "weft-gpu",
            Driver::Nvme(_) => "nvme",
        }
    }
}

/// Something the host's OS noticed, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostEvent {
    /// Enumeration finished.
    Enumerated {
        /// Functions found.
        functions: usize,
        /// Simulated time it took.
        took: Duration,
    },
    /// A function appeared (hot-add or VF enable).
    Added {
        /// The function.
        bdf: Bdf,
    },
    /// A function went away.
    Removed {
        /// The function.
        bdf: Bdf,
    },
    /// A driver bound.
    Bound {
        /// The function.
        bdf: Bdf,
        /// The driver.
        driver: &'static str,
    },
    /// A driver was told its device is gone and released it.
    Unbound {
        /// The function.
        bdf: Bdf,
        /// The driver.
        driver: &'static str,
    },
    /// A driver's probe failed.
    ProbeFailed {
        /// The function.
        bdf: Bdf,
        /// The driver.
        driver: &'static str,
        /// Why, for the log.
        reason: String,
    },
    /// The hot-plug driver released what was below a slot and powered the
    /// slot off (after an Attention Button press, or at an operator's
    /// request).
    PoweredOff {
        /// The port.
        port: Bdf,
    },
    /// An Attention Button press was cancelled by a second press within
    /// the abort window.
    ReleaseCancelled {
        /// The port.
        port: Bdf,
    },
    /// A hot-plug slot interrupt was handled.
    Slot {
        /// The port.
        port: Bdf,
        /// Slot Status as read.
        status: u16,
    },
}

/// A simulated host.
#[derive(Debug)]
pub struct Host {
    config: HostConfig,
    rc: RootComplex,
    tree: DeviceTree,
    drivers: BTreeMap<Bdf, Driver>,
    dma: DmaAllocator,
    events: Vec<HostEvent>,
    scan_stats: ScanStats,
}

impl Host {
    /// A host that has not enumerated yet.
    pub fn new(config: HostConfig) -> Self {
        Host {
            rc: RootComplex::new(&config.identity),
            dma: DmaAllocator::new(config.dma.clone()),
            config,
            tree: DeviceTree::new(),
            drivers: BTreeMap::new(),
            events: Vec::new(),
            scan_stats: ScanStats::default(),
        }
    }

    /// The configuration the host was built with.
    pub fn config(&self) -> &HostConfig {
        &self.config
    }

    /// One TLP arriving from the root port's link; returns the TLPs the
    /// root complex answers with at once.
    pub fn handle(&mut self, now: Duration, packet: Packet) -> Vec<Packet> {
        self.rc.handle(now, packet)
    }

    /// TLPs the host sends on its own now.
    pub fn poll(&mut self, now: Duration) -> Vec<Packet> {
        self.rc.poll(now)
    }

    /// The root complex.
    pub fn root(&self) -> &RootComplex {
        &self.rc
    }

    /// The root complex, mutably (host memory, vectors).
    pub fn root_mut(&mut self) -> &mut RootComplex {
        &mut self.rc
    }

    /// The CPU, issuing through this host into `fabric`.
    pub fn cpu<'a>(&'a mut self, fabric: &'a mut dyn Fabric) -> Cpu<'a> {
        Cpu::new(&mut self.rc, fabric)
    }

    /// What enumeration found.
    pub fn tree(&self) -> &DeviceTree {
        &self.tree
    }

    /// Bound drivers by function.
    pub fn drivers(&self) -> &BTreeMap<Bdf, Driver> {
        &self.drivers
    }

    /// What the OS noticed, oldest first.
    pub fn events(&self) -> &[HostEvent] {
        &self.events
    }

    /// What the last bus walk counted.
    pub fn scan_stats(&self) -> ScanStats {
        self.scan_stats
    }

    /// A DMA buffer of `len` bytes in host RAM.
    pub fn allocate_dma(&mut self, len: u64) -> Result<u64, HostError> {
        self.dma.allocate(len, dma::PAGE)
    }

    /// Enumerates the hierarchy from scratch: CRS Software Visibility on,
    /// bus walk, resources, MPS/Command/interrupts, slots armed.
    pub fn enumerate(&mut self, fabric: &mut dyn Fabric) -> Result<&DeviceTree, HostError> {
        let Host {
            config, rc, tree, ..
        } = self;
        let mut cpu = Cpu::new(rc, fabric);
        let start = cpu.now();
        *tree = DeviceTree::new();
        // Linux's pci_enable_crs: visible RRS lets the walk back off.
        let control_offset = ROOT_PORT_PCIE + pcie_cap::ROOT_CONTROL;
        let control = cpu.config_read_u16(ROOT_PORT, control_offset)?;
        cpu.config_write_u16(
            ROOT_PORT,
            control_offset,
            control | CRS_SOFTWARE_VISIBILITY_ENABLE,
        )?;
        let mut scan = scan::Scan::new(&mut cpu, tree, config);
        scan.scan_bus(0, None, 0xff)?;
        let stats = scan.stats;
        resources::assign_all(&mut cpu, tree, config)?;
        let all: Vec<Bdf> = tree.iter().map(|f| f.bdf).collect();
        setup::configure(&mut cpu, tree, config, &all)?;
        for port in hotplug::hot_plug_ports(tree) {
            let armed = tree
                .get(port)
                .is_some_and(|f| f.interrupts != InterruptSetup::None);
            if armed {
                hotplug::arm(&mut cpu, tree, port)?;
            }
        }
        let took = cpu.now().saturating_sub(start);
        self.scan_stats = stats;
        self.events.push(HostEvent::Enumerated {
            functions: self.tree.len(),
            took,
        });
        Ok(&self.tree)
    }

    /// Probes a driver for every function that has none and matches one.
    pub fn bind_drivers(&mut self, fabric: &mut dyn Fabric) -> Vec<Bdf> {
        let candidates: Vec<Bdf> = self
            .tree
            .iter()
            .map(|f| f.bdf)
            .filter(|bdf| !self.drivers.contains_key(bdf))
            .collect();
        let mut bound = Vec::new();
        for bdf in candidates {
            let Host {
                rc,
                tree,
                dma,
                drivers,
                events,
                ..
            } = self;
            let mut cpu = Cpu::new(rc, fabric);
            let (name, result) = if GpuDriver::matches(tree, bdf) {
                (
                    "weft-gpu",
                    GpuDriver::probe(&mut cpu, tree, bdf)
                        .map(Driver::Gpu)
                        .map_err(|e| format!("{e:?}")),
                )
            } else if NvmeDriver::matches(tree, bdf) {
                (
                    "nvme",
                    NvmeDriver::probe(&mut cpu, tree, dma, bdf)
                        .map(|d| Driver::Nvme(Box::new(d)))
                        .map_err(|e| format!("{e:?}")),
                )
            } else {
                continue;
            };
            match result {
                Ok(driver) => {
                    drivers.insert(bdf, driver);
                    events.push(HostEvent::Bound { bdf, driver: name });
                    bound.push(bdf);
                }
                Err(reason) => events.push(HostEvent::ProbeFailed {
                    bdf,
                    driver: name,
                    reason,
                }),
            }
        }
        bound
    }

    /// Enumerates and binds drivers: what booting does.
    pub fn boot(&mut self, fabric: &mut dyn Fabric) -> Result<Vec<Bdf>, HostError> {
        self.enumerate(fabric)?;
        Ok(self.bind_drivers(fabric))
    }

    /// Lets what is in flight arrive, then handles every hot-plug slot
    /// whose interrupt fired: devices added get drivers, devices removed
    /// lose them.
    pub fn service_interrupts(
        &mut self,
        fabric: &mut dyn Fabric,
    ) -> Result<Vec<SlotEvent>, HostError> {
        let mut handled = Vec::new();
        {
            let mut cpu = Cpu::new(&mut self.rc, fabric);
            cpu.settle();
        }
        for port in hotplug::hot_plug_ports(&self.tree) {
            let Some(InterruptSetup::Msi { vector }) =
                self.tree.get(port).map(|f| f.interrupts.clone())
            else {
                continue;
            };
            if self.rc.interrupts_mut().take(vector) == 0 {
                continue;
            }
            let event = {
                let Host {
                    config, rc, tree, ..
                } = self;
                let mut cpu = Cpu::new(rc, fabric);
                hotplug::handle(&mut cpu, tree, config, port)?
            };
            self.events.push(HostEvent::Slot {
                port,
                status: event.status,
            });
            for gone in &event.removed {
                if let Some(driver) = self.drivers.remove(&gone.bdf) {
                    // Surprise removal: the driver releases its state
                    // without touching the absent device.
                    self.events.push(HostEvent::Unbound {
                        bdf: gone.bdf,
                        driver: driver.name(),
                    });
                }
                self.events.push(HostEvent::Removed { bdf: gone.bdf });
            }
            for &bdf in &event.added {
                self.events.push(HostEvent::Added { bdf });
            }
            if !event.added.is_empty() {
                self.bind_drivers(fabric);
            }
            if event.release_requested {
                self.release_slot(fabric, port, true)?;
            }
            handled.push(event);
        }
        Ok(handled)
    }

    /// An operator powers the slot below `port` off, as writing 0 to
    /// Linux's `/sys/bus/pci/slots/N/power` does: the drivers below it are
    /// quiesced, the devices removed and the slot powered off
    /// ([`hotplug::release`]), with no Attention Button and no abort window.
    pub fn power_off_slot(&mut self, fabric: &mut dyn Fabric, port: Bdf) -> Result<(), HostError> {
        self.release_slot(fabric, port, false).map(|_| ())
    }

    /// Releases what is below `port`'s slot and powers it off; after an
    /// Attention Button press (`button`), first the abort window. Returns
    /// whether it did (false: a second press cancelled).
    fn release_slot(
        &mut self,
        fabric: &mut dyn Fabric,
        port: Bdf,
        button: bool,
    ) -> Result<bool, HostError> {
        let vector = match self.tree.get(port).map(|f| &f.interrupts) {
            Some(InterruptSetup::Msi { vector }) => Some(*vector),
            _ => None,
        };
        let Host {
            rc,
            tree,
            drivers,
            events,
            ..
        } = self;
        let mut cpu = Cpu::new(rc, fabric);
        if button && !hotplug::await_abort_window(&mut cpu, tree, port)? {
            events.push(HostEvent::ReleaseCancelled { port });
            return Ok(false);
        }
        // Safe removal: each driver stops its device while it is still
        // there (an NVMe controller is disabled, CC.EN = 0), then lets go.
        for bdf in tree.descendants(port) {
            let Some(driver) = drivers.remove(&bdf) else {
                continue;
            };
            if let Driver::Nvme(nvme) = &driver {
                // A controller that does not answer is removed all the same.
                let _ = nvme.shutdown(&mut cpu);
            }
            events.push(HostEvent::Unbound {
                bdf,
                driver: driver.name(),
            });
        }
        for gone in hotplug::release(&mut cpu, tree, port, vector)? {
            events.push(HostEvent::Removed { bdf: gone.bdf });
        }
        events.push(HostEvent::PoweredOff { port });
        Ok(true)
    }

    /// Sets the number of VFs of `pf`, as writing `sriov_numvfs` does, and
    /// binds drivers to the new VFs.
    pub fn set_num_vfs(
        &mut self,
        fabric: &mut dyn Fabric,
        pf: Bdf,
        num_vfs: u16,
    ) -> Result<Vec<Bdf>, HostError> {
        let old: Vec<Bdf> = self
            .tree
            .iter()
            .filter(|f| f.physical_function == Some(pf))
            .map(|f| f.bdf)
            .collect();
        for vf in &old {
            if let Some(driver) = self.drivers.remove(vf) {
                if let Driver::Nvme(nvme) = &driver {
                    let mut cpu = Cpu::new(&mut self.rc, fabric);
                    // Best effort: the VF is going away either way.
                    let _ = nvme.shutdown(&mut cpu);
                }
                self.events.push(HostEvent::Unbound {
                    bdf: *vf,
                    driver: driver.name(),
                });
            }
            self.events.push(HostEvent::Removed { bdf: *vf });
        }
        let vfs = {
            let Host {
                config, rc, tree, ..
            } = self;
            let mut cpu = Cpu::new(rc, fabric);
            sriov::set_num_vfs(&mut cpu, tree, config, pf, num_vfs)?
        };
        for &bdf in &vfs {
            self.events.push(HostEvent::Added { bdf });
        }
        self.bind_drivers(fabric);
        Ok(vfs)
    }

    /// The GPU driver bound to `bdf`.
    pub fn gpu(&self, bdf: Bdf) -> Option<&GpuDriver> {
        match self.drivers.get(&bdf) {
            Some(Driver::Gpu(gpu)) => Some(gpu),
            _ => None,
        }
    }

    /// The NVMe driver bound to `bdf`.
    pub fn nvme(&self, bdf: Bdf) -> Option<&NvmeDriver> {
        match self.drivers.get(&bdf) {
            Some(Driver::Nvme(nvme)) => Some(nvme),
            _ => None,
        }
    }

    /// Copies `len` bytes with GPU `bdf`'s engine.
    pub fn gpu_copy(
        &mut self,
        fabric: &mut dyn Fabric,
        bdf: Bdf,
        src: Location,
        dst: Location,
        len: u64,
    ) -> Result<CopyStats, GpuError> {
        let gpu = *self.gpu(bdf).ok_or(GpuError::NotBound { bdf })?;
        let mut cpu = Cpu::new(&mut self.rc, fabric);
        gpu.copy(&mut cpu, src, dst, len)
    }

    /// Starts a copy of `len` bytes on GPU `bdf`'s engine without waiting
    /// for it; [`gpu_copy_finish`](Self::gpu_copy_finish) waits.
    pub fn gpu_copy_start(
        &mut self,
        fabric: &mut dyn Fabric,
        bdf: Bdf,
        src: Location,
        dst: Location,
        len: u64,
    ) -> Result<CopyTicket, GpuError> {
        let gpu = *self.gpu(bdf).ok_or(GpuError::NotBound { bdf })?;
        let mut cpu = Cpu::new(&mut self.rc, fabric);
        gpu.start(&mut cpu, src, dst, len)
    }

    /// Waits for the copy `ticket` started and returns what it achieved.
    pub fn gpu_copy_finish(
        &mut self,
        fabric: &mut dyn Fabric,
        ticket: CopyTicket,
    ) -> Result<CopyStats, GpuError> {
        let bdf = ticket.bdf;
        let gpu = *self.gpu(bdf).ok_or(GpuError::NotBound { bdf })?;
        let mut cpu = Cpu::new(&mut self.rc, fabric);
        gpu.finish(&mut cpu, ticket)
    }

    /// Waits until every copy in `tickets` has signalled its MSI, then
    /// finishes each; returns the simulated time when the last MSI was seen
    /// and each copy's figures, in `tickets` order.
    pub fn gpu_copy_finish_all(
        &mut self,
        fabric: &mut dyn Fabric,
        tickets: &[CopyTicket],
    ) -> Result<(Duration, Vec<CopyStats>), GpuError> {
        let mut gpus = Vec::with_capacity(tickets.len());
        for ticket in tickets {
            let bdf = ticket.bdf;
            gpus.push(*self.gpu(bdf).ok_or(GpuError::NotBound { bdf })?);
        }
        let mut cpu = Cpu::new(&mut self.rc, fabric);
        let all_pending = |rc: &RootComplex| {
            gpus.iter()
                .all(|gpu| rc.interrupts().is_pending(gpu.vector))
        };
        if cpu.wait_until(gpu::COPY_TIMEOUT, all_pending).is_err() {
            let late = gpus
                .iter()
                .find(|gpu| !cpu.root().interrupts().is_pending(gpu.vector));
            if let Some(gpu) = late {
                return Err(gpu.failure(&mut cpu));
            }
        }
        let done = cpu.now();
        let mut stats = Vec::with_capacity(tickets.len());
        for (gpu, ticket) in gpus.iter().zip(tickets) {
            stats.push(gpu.finish(&mut cpu, *ticket)?);
        }
        Ok((done, stats))
    }

    /// Runs `f` with the NVMe driver bound to `bdf` and the CPU.
    fn with_nvme<T>(
        &mut self,
        fabric: &mut dyn Fabric,
        bdf: Bdf,
        f: impl FnOnce(&mut NvmeDriver, &mut Cpu<'_>) -> Result<T, NvmeError>,
    ) -> Result<T, NvmeError> {
        let Some(Driver::Nvme(nvme)) = self.drivers.get_mut(&bdf) else {
            return Err(NvmeError::NotBound { bdf });
        };
        let mut cpu = Cpu::new(&mut self.rc, fabric);
        f(nvme, &mut cpu)
    }

    /// Writes whole blocks to NVMe function `bdf` from block `lba` on.
    pub fn nvme_write(
        &mut self,
        fabric: &mut dyn Fabric,
        bdf: Bdf,
        lba: u64,
        data: &[u8],
    ) -> Result<(), NvmeError> {
        self.with_nvme(fabric, bdf, |nvme, cpu| nvme.write(cpu, lba, data))
    }

    /// Reads `len` bytes of whole blocks from NVMe function `bdf`.
    pub fn nvme_read(
        &mut self,
        fabric: &mut dyn Fabric,
        bdf: Bdf,
        lba: u64,
        len: u64,
    ) -> Result<Vec<u8>, NvmeError> {
        self.with_nvme(fabric, bdf, |nvme, cpu| nvme.read(cpu, lba, len))
    }
}
