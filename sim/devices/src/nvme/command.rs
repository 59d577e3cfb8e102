//! NVMe command and completion formats: the 64-byte submission queue entry,
//! the 16-byte completion queue entry, status codes, and the Identify data
//! structures (NVMe Base 2.0 §4.2, §4.6, §5.17).

/// Admin opcodes (§5, Figure 28).
pub mod admin {
    /// Delete I/O Submission Queue.
    pub const DELETE_IO_SQ: u8 = 0x00;
    /// Create I/O Submission Queue (§5.5).
    pub const CREATE_IO_SQ: u8 = 0x01;
    /// Delete I/O Completion Queue.
    pub const DELETE_IO_CQ: u8 = 0x04;
    /// Create I/O Completion Queue (§5.4).
    pub const CREATE_IO_CQ: u8 = 0x05;
    /// Identify (§5.17).
    pub const IDENTIFY: u8 = 0x06;
    /// Set Features (§5.27).
    pub const SET_FEATURES: u8 = 0x09;
    /// Get Features (§5.15).
    pub const GET_FEATURES: u8 = 0x0a;
}

/// NVM command set I/O opcodes (NVM Command Set 1.0 §3).
pub mod io {
    /// Flush.
    pub const FLUSH: u8 = 0x00;
    /// Write.
    pub const WRITE: u8 = 0x01;
    /// Read.
    pub const READ: u8 = 0x02;
}

/// Identify CNS values (§5.17.1).
pub mod cns {
    /// Identify Namespace data structure for NSID.
    pub const NAMESPACE: u8 = 0x00;
    /// Identify Controller data structure.
    pub const CONTROLLER: u8 = 0x01;
    /// Active Namespace ID list.
    pub const ACTIVE_NAMESPACES: u8 = 0x02;
}

/// Feature Identifier of Number of Queues (§5.27.1.5).
pub const FEATURE_NUMBER_OF_QUEUES: u8 = 0x07;

/// A completion status: Status Code Type and Status Code (§4.6.1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// Status Code Type: 0 generic, 1 command specific.
    pub sct: u8,
    /// Status Code.
    pub sc: u8,
}

impl Status {
    /// Successful Completion.
    pub const SUCCESS: Status = Status { sct: 0, sc: 0x00 };
    /// Invalid Command Opcode.
    pub const INVALID_OPCODE: Status = Status { sct: 0, sc: 0x01 };
    /// Invalid Field in Command.
    pub const INVALID_FIELD: Status = Status { sct: 0, sc: 0x02 };
    /// Data Transfer Error.
    pub const DATA_TRANSFER_ERROR: Status = Status { sct: 0, sc: 0x04 };
    /// Invalid Namespace or Format.
    pub const INVALID_NAMESPACE: Status = Status { sct: 0, sc: 0x0b };
    /// LBA Out of Range.
    pub const LBA_OUT_OF_RANGE: Status = Status { sct: 0, sc: 0x80 };
    /// Completion Queue Invalid (command specific).
    pub const INVALID_CQ: Status = Status { sct: 1, sc: 0x00 };
    /// Invalid Queue Identifier (command specific).
    pub const INVALID_QUEUE_ID: Status = Status { sct: 1, sc: 0x01 };
    /// Invalid Queue Size (command specific).
    pub const INVALID_QUEUE_SIZE: Status = Status { sct: 1, sc: 0x02 };
}

/// A submission queue entry's fields this model uses (§4.2, Figure 87).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    /// CDW0 bits 7:0.
    pub opcode: u8,
    /// CDW0 bits 31:16: Command Identifier.
    pub cid: u16,
    /// Namespace Identifier.
    pub nsid: u32,
    /// PRP Entry 1.
    pub prp1: u64,
    /// PRP Entry 2.
    pub prp2: u64,
    /// CDW10 to CDW15.
    pub cdw: [u32; 6],
}

impl Command {
    /// Bytes per submission queue entry.
    pub const SIZE: usize = 64;

    /// Decodes 64 bytes (little-endian DWs).
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let dw = |n: usize| -> Option<u32> {
            let b = bytes.get(n * 4..n * 4 + 4)?;
            Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let qw =
            |n: usize| -> Option<u64> { Some(u64::from(dw(n)?) | u64::from(dw(n + 1)?) << 32) };
        let cdw0 = dw(0)?;
        Some(Command {
            opcode: cdw0 as u8,
            cid: (cdw0 >> 16) as u16,
            nsid: dw(1)?,
            prp1: qw(6)?,
            prp2: qw(8)?,
            cdw: [dw(10)?, dw(11)?, dw(12)?, dw(13)?, dw(14)?, dw(15)?],
        })
    }

    /// Encodes the entry (what a host driver writes).
    pub fn encode(&self) -> [u8; Self::SIZE] {
        let mut out = [0u8; Self::SIZE];
        let mut put = |n: usize, v: u32| out[n * 4..n * 4 + 4].copy_from_slice(&v.to_le_bytes());
        put(0, u32::from(self.opcode) | u32::from(self.cid) << 16);
        put(1, self.nsid);
        put(6, self.prp1 as u32);
        put(7, (self.prp1 >> 32) as u32);
        put(8, self.prp2 as u32);
        put(9, (self.prp2 >> 32) as u32);
        for (i, v) in self.cdw.iter().enumerate() {
            put(10 + i, *v);
        }
        out
    }
}

/// A completion queue entry (§4.6, Figure 89).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompletionEntry {
    /// DW0: command specific.
    pub dw0: u32,
    /// SQ Head Pointer.
    pub sq_head: u16,
    /// SQ Identifier.
    pub sq_id: u16,
    /// Command Identifier.
    pub cid: u16,
    /// Phase Tag.
    pub phase: bool,
    /// Status.
    pub status: Status,
}

impl CompletionEntry {
    /// Bytes per completion queue entry.
    pub const SIZE: usize = 16;

    /// Encodes the entry: DW3 holds CID (15:0), P (16), SC (24:17), SCT (27:25).
    pub fn encode(&self) -> [u8; Self::SIZE] {
        let mut out = [0u8; Self::SIZE];
        out[0..4].copy_from_slice(&self.dw0.to_le_bytes());
        let dw2 = u32::from(self.sq_head) | u32::from(self.sq_id) << 16;
        out[8..12].copy_from_slice(&dw2.to_le_bytes());
        let dw3 = u32::from(self.cid)
            | u32::from(self.phase) << 16
            | u32::from(self.status.sc) << 17
            | u32::from(self.status.sct & 0b111) << 25;
        out[12..16].copy_from_slice(&dw3.to_le_bytes());
        out
    }

    /// Decodes an entry (what a host driver reads).
    pub fn decode(bytes: &[u8; Self::SIZE]) -> Self {
        let dw = |n: usize| {
            u32::from_le_bytes([
                bytes[n * 4],
                bytes[n * 4 + 1],
                bytes[n * 4 + 2],
                bytes[n * 4 + 3],
            ])
        };
        let dw3 = dw(3);
        CompletionEntry {
            dw0: dw(0),
            sq_head: dw(2) as u16,
            sq_id: (dw(2) >> 16) as u16,
            cid: dw3 as u16,
            phase: dw3 >> 16 & 1 != 0,
            status: Status {
                sc: (dw3 >> 17) as u8,
                sct: (dw3 >> 25 & 0b111) as u8,
            },
        }
    }
}

/// What the Identify data structures report about a controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdentifyInfo {
    /// PCI Vendor ID and Subsystem Vendor ID.
    pub vendor_id: u16,
    /// Serial number (ASCII, up to 20 bytes).
    pub serial: String,
    /// Model number (ASCII, up to 40 bytes).
    pub model: String,
    /// Controller ID.
    pub controller_id: u16,
    /// Namespace size in logical blocks.
    pub blocks: u64,
}

/// log2 of the logical block size: 512 bytes.
pub const LBA_SHIFT: u32 = 9;
/// Maximum Data Transfer Size as a power of two of the 4 KiB page (MDTS).
pub const MDTS: u8 = 5;

fn put_ascii(out: &mut [u8], text: &str) {
    out.fill(b' ');
    for (slot, byte) in out.iter_mut().zip(text.bytes()) {
        *slot = byte;
    }
}

/// The Identify Controller data structure (§5.17.2.1, Figure 275).
pub fn identify_controller(info: &IdentifyInfo) -> Vec<u8> {
    let mut out = vec![0u8; 4096];
    out[0..2].copy_from_slice(&info.vendor_id.to_le_bytes());
    out[2..4].copy_from_slice(&info.vendor_id.to_le_bytes());
    put_ascii(&mut out[4..24], &info.serial);
    put_ascii(&mut out[24..64], &info.model);
    put_ascii(&mut out[64..72], "1.0");
    out[77] = MDTS;
    out[78..80].copy_from_slice(&info.controller_id.to_le_bytes());
    out[80..84].copy_from_slice(&super::regs::VS_VALUE.to_le_bytes());
    // CNTRLTYPE: I/O controller.
    out[111] = 1;
    // SQES and CQES: required and maximum entry sizes 2^6 and 2^4.
    out[512] = 0x66;
    out[513] = 0x44;
    // NN: one namespace.
    out[516..520].copy_from_slice(&1u32.to_le_bytes());
    out
}

/// The Identify Namespace data structure (NVM Command Set 1.0 §4.1.5.1).
pub fn identify_namespace(info: &IdentifyInfo) -> Vec<u8> {
    let mut out = vec![0u8; 4096];
    for field in 0..3 {
        out[field * 8..field * 8 + 8].copy_from_slice(&info.blocks.to_le_bytes());
    }
    // NLBAF 0 (one format), FLBAS 0; LBAF0: LBADS in bits 23:16.
    out[128..132].copy_from_slice(&(LBA_SHIFT << 16).to_le_bytes());
    out
}

/// The Active Namespace ID list: namespace 1 (§5.17.2.2).
pub fn active_namespaces() -> Vec<u8> {
    let mut out = vec![0u8; 4096];
    out[0..4].copy_from_slice(&1u32.to_le_bytes());
    out
}
