//! A GPU driver for weft-devices' GPU model, through standard interfaces
//! only: its register BAR, its memory BAR, MSI and DMA. Peer-to-peer
//! copies target a peer GPU's memory BAR at the address this host's own
//! enumeration gave it, as CUDA's peer access does.

use std::time::Duration;

use weft_devices::gpu::{regs, MEMORY_BAR, REGISTER_BAR};
use weft_pcie::Bdf;

use super::access::{Cpu, MemoryAccessError};
use super::interrupts::Vector;
use super::tree::{DeviceTree, InterruptSetup};

/// Class code of a 3D controller (§7.5.1.1.6).
pub const CLASS_3D_CONTROLLER: u16 = 0x0302;
/// How long a copy may take before the driver gives up.
pub const COPY_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest copy the engine takes at once (DMA_LEN is 32 bits).
const MAX_COPY: u64 = u32::MAX as u64 & !0xfff;

/// One side of a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// An offset in this GPU's own memory.
    Local(u64),
    /// A bus address: host RAM, or a peer's memory BAR.
    Bus(u64),
}

/// Why a GPU operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuError {
    /// The function is not a GPU this driver knows: its ID register read
    /// this instead of "WGPU".
    UnknownDevice {
        /// The function.
        bdf: Bdf,
        /// What BAR0's ID register read.
        id: u32,
    },
    /// A BAR the driver needs was not assigned.
    MissingBar {
        /// The function.
        bdf: Bdf,
        /// The BAR index.
        index: u8,
    },
    /// MSI was not set up for the function.
    NoInterrupt {
        /// The function.
        bdf: Bdf,
    },
    /// The engine reported an error (DMA_ERROR value).
    Engine {
        /// The function.
        bdf: Bdf,
        /// The DMA_ERROR code.
        code: u32,
    },
    /// The copy is longer than the engine takes.
    TooLong {
        /// Bytes asked for.
        len: u64,
    },
    /// No completion interrupt within [`COPY_TIMEOUT`], and no engine error.
    Timeout {
        /// The function.
        bdf: Bdf,
    },
    /// A copy ticket was handed to a GPU other than the one running it.
    ForeignTicket {
        /// The GPU the ticket was handed to.
        bdf: Bdf,
        /// The GPU running the ticket's copy.
        ticket: Bdf,
    },
    /// No GPU driver is bound to the function.
    NotBound {
        /// The function.
        bdf: Bdf,
    },
    /// A register access failed.
    Access(MemoryAccessError),
}

impl From<MemoryAccessError> for GpuError {
    fn from(error: MemoryAccessError) -> Self {
        GpuError::Access(error)
    }
}

/// A copy the engine is running: what [`GpuDriver::start`] returns and
/// [`GpuDriver::finish`] takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a started copy is finished with GpuDriver::finish"]
pub struct CopyTicket {
    /// The GPU running the copy.
    pub bdf: Bdf,
    /// Bytes the copy moves.
    pub bytes: u64,
    /// Simulated time when the CPU wrote the doorbell.
    pub started: Duration,
}

/// What one copy achieved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CopyStats {
    /// Bytes copied.
    pub bytes: u64,
    /// Simulated time from the CPU writing the doorbell to the completion
    /// interrupt arriving at the CPU.
    pub elapsed: Duration,
    /// The copy's duration on the GPU's own clock (its DMA_ELAPSED_NS
    /// register): from the doorbell reaching the engine to the last read
    /// completion arriving, or the last write leaving.
    pub engine: Duration,
    /// Simulated time when the CPU wrote the doorbell.
    pub started: Duration,
    /// Simulated time when the CPU saw the completion interrupt.
    pub finished: Duration,
}

impl CopyStats {
    /// Bytes per second of simulated time (decimal GB/s × 1e9).
    pub fn bytes_per_second(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds == 0.0 {
            f64::INFINITY
        } else {
            self.bytes as f64 / seconds
        }
    }
}

/// A bound GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuDriver {
    /// The function.
    pub bdf: Bdf,
    /// Where BAR0 (registers) sits.
    pub registers: u64,
    /// Where BAR1 (memory) sits.
    pub memory: u64,
    /// Size of the memory BAR.
    pub memory_size: u64,
    /// The MSI vector signalling copy completion.
    pub vector: Vector,
}

impl GpuDriver {
    /// Whether this driver handles the function.
    pub fn matches(tree: &DeviceTree, bdf: Bdf) -> bool {
        tree.get(bdf)
            .is_some_and(|f| f.class_id() == CLASS_3D_CONTROLLER && !f.is_virtual())
    }

    /// Binds to `bdf`: finds its BARs and vector in the host's enumeration
    /// and checks the ID register.
    pub fn probe(cpu: &mut Cpu<'_>, tree: &DeviceTree, bdf: Bdf) -> Result<Self, GpuError> {
        let function = tree.get(bdf).ok_or(GpuError::MissingBar {
            bdf,
            index: REGISTER_BAR,
        })?;
        let bar = |index: u8| {
            function
                .bar(index)
                .and_then(|bar| bar.address.map(|address| (address, bar.size)))
                .ok_or(GpuError::MissingBar { bdf, index })
        };
        let (registers, _) = bar(REGISTER_BAR)?;
        let (memory, memory_size) = bar(MEMORY_BAR)?;
        let InterruptSetup::Msi { vector } = function.interrupts else {
            return Err(GpuError::NoInterrupt { bdf });
        };
        let id = cpu.read_u32(registers + regs::ID)?;
        if id != regs::ID_VALUE {
            return Err(GpuError::UnknownDevice { bdf, id });
        }
        Ok(GpuDriver {
            bdf,
            registers,
            memory,
            memory_size,
            vector,
        })
    }

    /// The bus address of byte `offset` of this GPU's memory, for a peer
    /// to copy to or from.
    pub fn peer_address(&self, offset: u64) -> u64 {
        self.memory + offset
    }

    /// Copies `len` bytes with the GPU's engine and waits for its MSI:
    /// [`start`](Self::start) then [`finish`](Self::finish).
    pub fn copy(
        &self,
        cpu: &mut Cpu<'_>,
        src: Location,
        dst: Location,
        len: u64,
    ) -> Result<CopyStats, GpuError> {
        let ticket = self.start(cpu, src, dst, len)?;
        self.finish(cpu, ticket)
    }

    /// Programs a copy of `len` bytes and rings the doorbell, without
    /// waiting for it: only posted writes, so other GPUs' copies may start
    /// at once. An engine that refuses the copy reports it when
    /// [`finish`](Self::finish) finds no interrupt.
    pub fn start(
        &self,
        cpu: &mut Cpu<'_>,
        src: Location,
        dst: Location,
        len: u64,
    ) -> Result<CopyTicket, GpuError> {
        if len > MAX_COPY {
            return Err(GpuError::TooLong { len });
        }
        let split = |location: Location| match location {
            Location::Local(offset) => (offset, true),
            Location::Bus(address) => (address, false),
        };
        let (src_address, src_local) = split(src);
        let (dst_address, dst_local) = split(dst);
        let mut control = regs::control::INTERRUPT;
        if src_local {
            control |= regs::control::SRC_LOCAL;
        }
        if dst_local {
            control |= regs::control::DST_LOCAL;
        }
        let r = self.registers;
        cpu.write_u32(
            r + regs::DMA_STATUS,
            regs::status::DONE | regs::status::ERROR,
        )?;
        cpu.write_u64(r + regs::DMA_SRC_LO, src_address)?;
        cpu.write_u64(r + regs::DMA_DST_LO, dst_address)?;
        cpu.write_u32(r + regs::DMA_LEN, len as u32)?;
        cpu.write_u32(r + regs::DMA_CONTROL, control)?;
        // Drop interrupts left from before this copy.
        cpu.root_mut().interrupts_mut().take(self.vector);
        let started = cpu.now();
        cpu.write_u32(r + regs::DMA_DOORBELL, 1)?;
        Ok(CopyTicket {
            bdf: self.bdf,
            bytes: len,
            started,
        })
    }

    /// Waits for the MSI of the copy `ticket` started on this GPU, checks
    /// its status and returns what it achieved.
    pub fn finish(&self, cpu: &mut Cpu<'_>, ticket: CopyTicket) -> Result<CopyStats, GpuError> {
        if ticket.bdf != self.bdf {
            return Err(GpuError::ForeignTicket {
                bdf: self.bdf,
                ticket: ticket.bdf,
            });
        }
        let r = self.registers;
        if cpu.wait_interrupt(self.vector, COPY_TIMEOUT).is_err() {
            return Err(self.failure(cpu));
        }
        let finished = cpu.now();
        let status = cpu.read_u32(r + regs::DMA_STATUS)?;
        if status & regs::status::DONE == 0 {
            let code = cpu.read_u32(r + regs::DMA_ERROR)?;
            return Err(GpuError::Engine {
                bdf: self.bdf,
                code,
            });
        }
        let engine_ns = cpu.read_u32(r + regs::DMA_ELAPSED_NS)?;
        cpu.write_u32(r + regs::DMA_STATUS, regs::status::DONE)?;
        Ok(CopyStats {
            bytes: ticket.bytes,
            elapsed: finished.saturating_sub(ticket.started),
            engine: Duration::from_nanos(u64::from(engine_ns)),
            started: ticket.started,
            finished,
        })
    }

    /// Why a copy signalled no completion: the engine's error if it
    /// reports one (a copy it refused at the doorbell; one that fails once
    /// started signals its MSI), else a timeout.
    pub fn failure(&self, cpu: &mut Cpu<'_>) -> GpuError {
        let r = self.registers;
        let timeout = GpuError::Timeout { bdf: self.bdf };
        match cpu.read_u32(r + regs::DMA_STATUS) {
            Ok(status) if status & regs::status::ERROR != 0 => {
                match cpu.read_u32(r + regs::DMA_ERROR) {
                    Ok(code) => GpuError::Engine {
                        bdf: self.bdf,
                        code,
                    },
                    Err(err) => GpuError::Access(err),
                }
            }
            Ok(_) => timeout,
            Err(err) => GpuError::Access(err),
        }
    }

    /// Writes `data` into the GPU's memory at `offset` through BAR1.
    pub fn upload(&self, cpu: &mut Cpu<'_>, offset: u64, data: &[u8]) -> Result<(), GpuError> {
        Ok(cpu.write(self.memory + offset, data)?)
    }

    /// Reads `len` bytes of the GPU's memory at `offset` through BAR1.
    pub fn download(&self, cpu: &mut Cpu<'_>, offset: u64, len: u64) -> Result<Vec<u8>, GpuError> {
        Ok(cpu.read(self.memory + offset, len)?)
    }
}
