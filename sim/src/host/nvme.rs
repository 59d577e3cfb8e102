//! An NVMe driver: controller initialisation, the admin queue, Identify,
//! one I/O queue pair, and block reads and writes completed by MSI-X
//! interrupts (NVMe Base 2.0 §3.5.1, §5; NVM Command Set 1.0 §3). It
//! touches only BAR0 and host memory, so it runs the same on a PF and on
//! an SR-IOV VF.

use std::time::Duration;

use weft_devices::nvme::command::{admin, cns, io, Command, CompletionEntry, Status};
use weft_devices::nvme::regs;
use weft_pcie::Bdf;

use super::access::{Cpu, MemoryAccessError};
use super::dma::{DmaAllocator, PAGE};
use super::error::HostError;
use super::interrupts::Vector;
use super::tree::{DeviceTree, InterruptSetup};

/// Class code of an NVM Express controller: 01_08_02 (NVMe Base 2.0 §3.1.2).
pub const CLASS_NVME: u32 = 0x01_08_02;
/// Entries per queue.
pub const QUEUE_ENTRIES: u16 = 64;
/// How long a command may take before the driver gives up.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// CC.IOSQES: 2^6 = 64-byte submission entries (§3.1.4.5).
const IOSQES: u32 = 6 << 16;
/// CC.IOCQES: 2^4 = 16-byte completion entries (§3.1.4.5).
const IOCQES: u32 = 4 << 20;

/// Why an NVMe operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NvmeError {
    /// BAR0 was not assigned.
    MissingBar {
        /// The function.
        bdf: Bdf,
    },
    /// MSI-X was not set up.
    NoInterrupt {
        /// The function.
        bdf: Bdf,
    },
    /// CSTS.RDY did not reach `ready` in time, or CSTS.CFS was set.
    NotReady {
        /// The function.
        bdf: Bdf,
        /// The RDY value waited for.
        ready: bool,
        /// CSTS as last read.
        csts: u32,
    },
    /// A command completed with an error status.
    Command {
        /// The function.
        bdf: Bdf,
        /// The opcode.
        opcode: u8,
        /// Status Code Type.
        sct: u8,
        /// Status Code.
        sc: u8,
    },
    /// No completion arrived in time.
    Timeout {
        /// The function.
        bdf: Bdf,
        /// The opcode.
        opcode: u8,
    },
    /// A read or write past the namespace or not a whole number of blocks.
    BadRange {
        /// First block.
        lba: u64,
        /// Bytes.
        len: u64,
    },
    /// No NVMe driver is bound to the function.
    NotBound {
        /// The function.
        bdf: Bdf,
    },
    /// A register access failed.
    Access(MemoryAccessError),
    /// The host could not provide DMA memory.
    Host(HostError),
}

impl From<MemoryAccessError> for NvmeError {
    fn from(error: MemoryAccessError) -> Self {
        NvmeError::Access(error)
    }
}

impl From<HostError> for NvmeError {
    fn from(error: HostError) -> Self {
        NvmeError::Host(error)
    }
}

/// What Identify reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvmeIdentity {
    /// Serial number.
    pub serial: String,
    /// Model number.
    pub model: String,
    /// Controller ID.
    pub controller_id: u16,
    /// Namespace 1's size in blocks.
    pub blocks: u64,
    /// Bytes per block.
    pub block_size: u64,
    /// Largest transfer in bytes (MDTS).
    pub max_transfer: u64,
}

/// One submission/completion queue pair in host memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct QueuePair {
    id: u16,
    sq: u64,
    cq: u64,
    tail: u16,
    head: u16,
    phase: bool,
    vector: Vector,
}

impl QueuePair {
    fn new(id: u16, sq: u64, cq: u64, vector: Vector) -> Self {
        QueuePair {
            id,
            sq,
            cq,
            tail: 0,
            head: 0,
            phase: true,
            vector,
        }
    }
}

/// A bound NVMe controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvmeDriver {
    /// The function (PF or VF).
    pub bdf: Bdf,
    /// Where BAR0 sits.
    pub bar0: u64,
    /// What Identify reported.
    pub identity: NvmeIdentity,
    admin: QueuePair,
    io: QueuePair,
    buffer: u64,
    prp_list: u64,
    next_cid: u16,
    /// Commands completed.
    pub completed: u64,
}

fn ascii(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim_end().to_owned()
}

impl NvmeDriver {
    /// Whether this driver handles the function.
    pub fn matches(tree: &DeviceTree, bdf: Bdf) -> bool {
        tree.get(bdf).is_some_and(|f| f.class == CLASS_NVME)
    }

    /// Initialises the controller at `bdf` and creates one I/O queue pair.
    pub fn probe(
        cpu: &mut Cpu<'_>,
        tree: &DeviceTree,
        dma: &mut DmaAllocator,
        bdf: Bdf,
    ) -> Result<Self, NvmeError> {
        let function = tree.get(bdf).ok_or(NvmeError::MissingBar { bdf })?;
        let bar0 = function
            .bar(0)
            .and_then(|bar| bar.address)
            .ok_or(NvmeError::MissingBar { bdf })?;
        let InterruptSetup::MsiX { vectors } = &function.interrupts else {
            return Err(NvmeError::NoInterrupt { bdf });
        };
        let admin_vector = *vectors.first().ok_or(NvmeError::NoInterrupt { bdf })?;
        let io_vector = vectors.get(1).copied().unwrap_or(admin_vector);
        let io_entry = if vectors.len() > 1 { 1 } else { 0 };

        // §3.5.1: reset, admin queues, enable.
        cpu.write_u32(bar0 + regs::CC, 0)?;
        wait_ready(cpu, bdf, bar0, false)?;
        let queue_bytes = u64::from(QUEUE_ENTRIES) * Command::SIZE as u64;
        let admin_sq = dma.allocate(queue_bytes, PAGE)?;
        let admin_cq = dma.allocate(
            u64::from(QUEUE_ENTRIES) * CompletionEntry::SIZE as u64,
            PAGE,
        )?;
        let entries = u32::from(QUEUE_ENTRIES - 1);
        cpu.write_u32(bar0 + regs::AQA, entries << 16 | entries)?;
        cpu.write_u64(bar0 + regs::ASQ, admin_sq)?;
        cpu.write_u64(bar0 + regs::ACQ, admin_cq)?;
        cpu.write_u32(bar0 + regs::CC, regs::cc::EN | IOSQES | IOCQES)?;
        wait_ready(cpu, bdf, bar0, true)?;

        let max_transfer = PAGE << weft_devices::nvme::command::MDTS;
        let buffer = dma.allocate(max_transfer, PAGE)?;
        let prp_list = dma.allocate(PAGE, PAGE)?;
        let mut driver = NvmeDriver {
            bdf,
            bar0,
            identity: NvmeIdentity {
                serial: String::new(),
                model: String::new(),
                controller_id: 0,
                blocks: 0,
                block_size: 512,
                max_transfer,
            },
            admin: QueuePair::new(0, admin_sq, admin_cq, admin_vector),
            io: QueuePair::new(1, 0, 0, io_vector),
            buffer,
            prp_list,
            next_cid: 0,
            completed: 0,
        };

        // Identify Controller and Namespace 1 (§5.17).
        driver.admin_command(
            cpu,
            admin::IDENTIFY,
            0,
            [u32::from(cns::CONTROLLER), 0, 0, 0, 0, 0],
        )?;
        let data = cpu.root().memory().read(buffer, 4096);
        driver.identity.serial = ascii(&data[4..24]);
        driver.identity.model = ascii(&data[24..64]);
        driver.identity.controller_id = u16::from_le_bytes([data[78], data[79]]);
        if data[77] != 0 {
            driver.identity.max_transfer = max_transfer.min(PAGE << data[77]);
        }
        driver.admin_command(
            cpu,
            admin::IDENTIFY,
            1,
            [u32::from(cns::NAMESPACE), 0, 0, 0, 0, 0],
        )?;
        let data = cpu.root().memory().read(buffer, 4096);
        let mut size = [0u8; 8];
        size.copy_from_slice(&data[0..8]);
        driver.identity.blocks = u64::from_le_bytes(size);
        let lbads = data[128 + 2];
        driver.identity.block_size = 1 << lbads.clamp(9, 16);

        // One I/O queue pair on the second vector (§5.4, §5.5).
        let io_sq = dma.allocate(queue_bytes, PAGE)?;
        let io_cq = dma.allocate(
            u64::from(QUEUE_ENTRIES) * CompletionEntry::SIZE as u64,
            PAGE,
        )?;
        driver.io = QueuePair::new(1, io_sq, io_cq, io_vector);
        let size_and_id = entries << 16 | 1;
        // CDW11: IV in 31:16, IEN bit 1, PC bit 0.
        let cq_flags = (io_entry as u32) << 16 | 0b11;
        driver.admin_command_at(
            cpu,
            admin::CREATE_IO_CQ,
            0,
            io_cq,
            [size_and_id, cq_flags, 0, 0, 0, 0],
        )?;
        // CDW11: CQID in 31:16, PC bit 0.
        driver.admin_command_at(
            cpu,
            admin::CREATE_IO_SQ,
            0,
            io_sq,
            [size_and_id, 1 << 16 | 1, 0, 0, 0, 0],
        )?;
        Ok(driver)
    }

    fn admin_command(
        &mut self,
        cpu: &mut Cpu<'_>,
        opcode: u8,
        nsid: u32,
        cdw: [u32; 6],
    ) -> Result<u32, NvmeError> {
        let buffer = self.buffer;
        self.admin_command_at(cpu, opcode, nsid, buffer, cdw)
    }

    fn admin_command_at(
        &mut self,
        cpu: &mut Cpu<'_>,
        opcode: u8,
        nsid: u32,
        prp1: u64,
        cdw: [u32; 6],
    ) -> Result<u32, NvmeError> {
        let mut queue = self.admin;
        let result = self.submit(cpu, &mut queue, opcode, nsid, prp1, 0, cdw);
        self.admin = queue;
        result
    }

    /// Writes a submission entry, rings the SQ tail doorbell, waits for the
    /// queue's interrupt and consumes the completion (§4.1, §4.6).
    #[allow(clippy::too_many_arguments)]
    fn submit(
        &mut self,
        cpu: &mut Cpu<'_>,
        queue: &mut QueuePair,
        opcode: u8,
        nsid: u32,
        prp1: u64,
        prp2: u64,
        cdw: [u32; 6],
    ) -> Result<u32, NvmeError> {
        let cid = self.next_cid;
        self.next_cid = self.next_cid.wrapping_add(1);
        let command = Command {
            opcode,
            cid,
            nsid,
            prp1,
            prp2,
            cdw,
        };
        let slot = queue.sq + u64::from(queue.tail) * Command::SIZE as u64;
        cpu.root_mut().memory_mut().write(slot, &command.encode());
        queue.tail = (queue.tail + 1) % QUEUE_ENTRIES;
        let doorbell =
            self.bar0 + regs::DOORBELLS + u64::from(2 * queue.id) * regs::DOORBELL_STRIDE;
        cpu.write_u32(doorbell, u32::from(queue.tail))?;
        let deadline = cpu.now() + COMMAND_TIMEOUT;
        loop {
            // Interrupt-driven: sleep until the queue's vector fires, then
            // consume every entry whose phase tag is current.
            let left = deadline.saturating_sub(cpu.now());
            cpu.wait_interrupt(queue.vector, left)
                .map_err(|_| NvmeError::Timeout {
                    bdf: self.bdf,
                    opcode,
                })?;
            let mut found = None;
            while let Some(entry) = self.peek(cpu, queue) {
                queue.head = (queue.head + 1) % QUEUE_ENTRIES;
                if queue.head == 0 {
                    queue.phase = !queue.phase;
                }
                self.completed += 1;
                if entry.cid == cid {
                    found = Some(entry);
                }
            }
            let head_doorbell =
                self.bar0 + regs::DOORBELLS + u64::from(2 * queue.id + 1) * regs::DOORBELL_STRIDE;
            cpu.write_u32(head_doorbell, u32::from(queue.head))?;
            let Some(entry) = found else {
                continue;
            };
            if entry.status != Status::SUCCESS {
                return Err(NvmeError::Command {
                    bdf: self.bdf,
                    opcode,
                    sct: entry.status.sct,
                    sc: entry.status.sc,
                });
            }
            return Ok(entry.dw0);
        }
    }

    /// The completion entry at the queue head if its phase tag is current.
    fn peek(&self, cpu: &Cpu<'_>, queue: &QueuePair) -> Option<CompletionEntry> {
        let at = queue.cq + u64::from(queue.head) * CompletionEntry::SIZE as u64;
        let mut bytes = [0u8; CompletionEntry::SIZE];
        cpu.root().memory().read_into(at, &mut bytes);
        let entry = CompletionEntry::decode(&bytes);
        (entry.phase == queue.phase).then_some(entry)
    }

    /// Points PRP1/PRP2 at the driver's buffer for `len` bytes: PRP2 is the
    /// second page, or a PRP list when more than two pages (§4.1.1).
    fn prps(&self, cpu: &mut Cpu<'_>, len: u64) -> (u64, u64) {
        let pages = len.div_ceil(PAGE);
        match pages {
            0 | 1 => (self.buffer, 0),
            2 => (self.buffer, self.buffer + PAGE),
            _ => {
                let list: Vec<u8> = (1..pages)
                    .flat_map(|page| (self.buffer + page * PAGE).to_le_bytes())
                    .collect();
                cpu.root_mut().memory_mut().write(self.prp_list, &list);
                (self.buffer, self.prp_list)
            }
        }
    }

    fn check_range(&self, lba: u64, len: u64) -> Result<(), NvmeError> {
        let block = self.identity.block_size;
        let blocks = len / block;
        if len == 0
            || !len.is_multiple_of(block)
            || lba
                .checked_add(blocks)
                .is_none_or(|end| end > self.identity.blocks)
        {
            return Err(NvmeError::BadRange { lba, len });
        }
        Ok(())
    }

    /// Writes `data` (whole blocks) from block `lba` on.
    pub fn write(&mut self, cpu: &mut Cpu<'_>, lba: u64, data: &[u8]) -> Result<(), NvmeError> {
        self.check_range(lba, data.len() as u64)?;
        let block = self.identity.block_size;
        for (index, chunk) in data.chunks(self.identity.max_transfer as usize).enumerate() {
            let first = lba + index as u64 * self.identity.max_transfer / block;
            cpu.root_mut().memory_mut().write(self.buffer, chunk);
            self.io_command(cpu, io::WRITE, first, chunk.len() as u64)?;
        }
        Ok(())
    }

    /// Reads `len` bytes (whole blocks) from block `lba` on.
    pub fn read(&mut self, cpu: &mut Cpu<'_>, lba: u64, len: u64) -> Result<Vec<u8>, NvmeError> {
        self.check_range(lba, len)?;
        let block = self.identity.block_size;
        let mut out = Vec::with_capacity(len as usize);
        let mut done = 0;
        while done < len {
            let chunk = (len - done).min(self.identity.max_transfer);
            self.io_command(cpu, io::READ, lba + done / block, chunk)?;
            out.extend(cpu.root().memory().read(self.buffer, chunk as usize));
            done += chunk;
        }
        Ok(out)
    }

    fn io_command(
        &mut self,
        cpu: &mut Cpu<'_>,
        opcode: u8,
        lba: u64,
        len: u64,
    ) -> Result<(), NvmeError> {
        let (prp1, prp2) = self.prps(cpu, len);
        let blocks = (len / self.identity.block_size) as u32;
        let cdw = [lba as u32, (lba >> 32) as u32, blocks - 1, 0, 0, 0];
        let mut queue = self.io;
        let result = self.submit(cpu, &mut queue, opcode, 1, prp1, prp2, cdw);
        self.io = queue;
        result.map(|_| ())
    }

    /// Tells the controller to stop (CC.EN = 0), as on unbind. Skipped
    /// after a surprise removal, when the device is gone.
    pub fn shutdown(&self, cpu: &mut Cpu<'_>) -> Result<(), NvmeError> {
        cpu.write_u32(self.bar0 + regs::CC, 0)?;
        Ok(())
    }
}

/// Polls CSTS until RDY equals `ready` (§3.5.1); CAP.TO bounds the wait.
fn wait_ready(cpu: &mut Cpu<'_>, bdf: Bdf, bar0: u64, ready: bool) -> Result<(), NvmeError> {
    // CAP.TO, bits 31:24, in 500 ms units (§3.1.4.1).
    let cap_low = cpu.read_u32(bar0 + regs::CAP)?;
    let timeout_units = u64::from(cap_low >> 24).max(1);
    let deadline = cpu.now() + Duration::from_millis(500 * timeout_units);
    loop {
        let csts = cpu.read_u32(bar0 + regs::CSTS)?;
        if csts & regs::csts::CFS != 0 {
            return Err(NvmeError::NotReady { bdf, ready, csts });
        }
        if (csts & regs::csts::RDY != 0) == ready {
            return Ok(());
        }
        if cpu.now() >= deadline {
            return Err(NvmeError::NotReady { bdf, ready, csts });
        }
        cpu.sleep(Duration::from_millis(1));
    }
}
