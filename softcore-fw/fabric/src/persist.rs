//! Values kept in flash across a restart, as versioned, checksummed
//! records in two slots; and the one such value the fabric manager keeps,
//! the binding configuration: which function is bound to which host's
//! slot, the NumVFs setting and the generation, restored at boot.
//!
//! A [`Record`] lives in a flash region split into two halves (slots).
//! Each save writes the slot the newest valid record is not in, with a
//! sequence number one higher, so a save interrupted at any byte (during
//! the erase or the write) leaves the other slot, the last good record,
//! intact; loading takes the valid record with the higher sequence number.
//! A record is valid when its magic, version, length and CRC-32 agree.
//! [`save_record`] and [`load_record`] do this for any record type; the
//! firmware keeps its management key and replay high-water mark the same
//! way.
//!
//! Every record (little-endian):
//!
//! | offset | size | field                                       |
//! |--------|------|---------------------------------------------|
//! | 0      | 4    | magic, [`Record::MAGIC`]                    |
//! | 4      | 2    | version, [`Record::OLDEST_VERSION`] to [`Record::VERSION`] |
//! | 6      | 2    | payload length in bytes                     |
//! | 8      | 4    | sequence number                             |
//! | 12     | n    | payload                                     |
//! | 12+n   | 4    | CRC-32 (IEEE 802.3) of every byte before it |
//!
//! The binding configuration's payload, [`RECORD_MAGIC`] "WFTB",
//! [`RECORD_VERSION`] 2 (offsets from the record's start):
//!
//! | offset | size | field                                       |
//! |--------|------|---------------------------------------------|
//! | 12     | 4    | generation                                  |
//! | 16     | 2    | NumVFs                                      |
//! | 18     | 1    | number of bindings, n                       |
//! | 19     | 1    | number of PFs with their own NumVFs, m      |
//! | 20     | 10 n | bindings: fabric ID, vendor ID, device ID, host (2 bytes each), slot, 0 |
//! | 20+10n | 8 m  | PFs: fabric ID, vendor ID, device ID, NumVFs (2 bytes each) |
//!
//! Version 1 is the same without PFs (byte 19 reserved, 0), and is read
//! as such. Version 3 appends the host ports the virtual switches are
//! presented on ([`FabricSettings::hosts`]), which before were the
//! firmware's built-in ones (a version 1 or 2 record leaves them so):
//!
//! | offset | size | field                                       |
//! |--------|------|---------------------------------------------|
//! | 20+10n+8m | 1 | number of host ports, h                     |
//! | 21+10n+8m | 12 h | host ports: switch ID (8 bytes), port, host (2 bytes), slots |

use heapless::Vec;
use weft_pcie::Bdf;
use weft_regs::tables::{HostIndex, PortIndex};

use crate::binding::BindError;
use crate::events::{Event, NotRestored};
use crate::generation::Generation;
use crate::hw::{Fabric, HostInterface};
use crate::inventory::Binding;
use crate::limits::{MAX_HOST_PORTS, MAX_SLOTS_PER_HOST, MAX_SRIOV_PFS};
use crate::manager::FabricManager;
use crate::settings::{FabricSettings, HostPort, PfVfs};

/// Bindings a record holds: one per slot of every virtual switch.
pub const MAX_STORED_BINDINGS: usize = MAX_HOST_PORTS * MAX_SLOTS_PER_HOST;

/// The first four bytes of every record: "WFTB".
pub const RECORD_MAGIC: u32 = u32::from_le_bytes(*b"WFTB");

/// The record layout this code writes.
pub const RECORD_VERSION: u16 = 3;

const HEADER_LEN: usize = 12;
const FIXED_PAYLOAD_LEN: usize = 8;
const BINDING_LEN: usize = 10;
const PF_VFS_LEN: usize = 8;
const HOST_PORT_LEN: usize = 12;
const CRC_LEN: usize = 4;

/// The longest record: every slot bound, every PF kept.
pub const MAX_RECORD_LEN: usize = HEADER_LEN
    + FIXED_PAYLOAD_LEN
    + MAX_STORED_BINDINGS * BINDING_LEN
    + MAX_SRIOV_PFS * PF_VFS_LEN
    + 1
    + MAX_HOST_PORTS * HOST_PORT_LEN
    + CRC_LEN;

/// Why the flash did not do what it was asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlashError {
    /// The range is not inside the region.
    OutOfRange {
        /// Its first byte.
        offset: u32,
        /// Its length.
        len: u32,
    },
    /// The device erases whole blocks, and the range is not made of them.
    Unaligned {
        /// Its first byte.
        offset: u32,
        /// Its length.
        len: u32,
    },
    /// The device reported a failure at this offset.
    Failed {
        /// The offset.
        offset: u32,
    },
}

/// A small region of flash: erased bytes read 0xFF, and a write only
/// programs bytes erased before.
///
/// Each half of the region must start on an erase block of the device,
/// so erasing one half never touches the other.
pub trait Flash {
    /// The region's size in bytes.
    fn size(&self) -> u32;

    /// Reads `buf.len()` bytes from `offset`.
    fn read(&mut self, offset: u32, buf: &mut [u8]) -> Result<(), FlashError>;

    /// Erases `len` bytes from `offset` (to 0xFF).
    fn erase(&mut self, offset: u32, len: u32) -> Result<(), FlashError>;

    /// Programs `data` at `offset`.
    fn write(&mut self, offset: u32, data: &[u8]) -> Result<(), FlashError>;
}

/// A [`Flash`] in memory: `N` bytes, erased to 0xFF, erasing any range
/// and programming only erased bytes (a program clears bits, never sets
/// them, as NOR flash does). For the simulator's board and for tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayFlash<const N: usize> {
    bytes: [u8; N],
}

impl<const N: usize> ArrayFlash<N> {
    /// Every byte erased.
    pub const fn erased() -> Self {
        ArrayFlash { bytes: [0xff; N] }
    }

    /// The bytes as stored.
    pub fn bytes(&self) -> &[u8; N] {
        &self.bytes
    }

    /// The bytes as stored, to damage them in a test.
    pub fn bytes_mut(&mut self) -> &mut [u8; N] {
        &mut self.bytes
    }

    fn range(&self, offset: u32, len: usize) -> Result<core::ops::Range<usize>, FlashError> {
        let start = offset as usize;
        match start.checked_add(len) {
            Some(end) if end <= N => Ok(start..end),
            _ => Err(FlashError::OutOfRange {
                offset,
                len: len as u32,
            }),
        }
    }
}

impl<const N: usize> Default for ArrayFlash<N> {
    fn default() -> Self {
        Self::erased()
    }
}

impl<const N: usize> Flash for ArrayFlash<N> {
    fn size(&self) -> u32 {
        N as u32
    }

    fn read(&mut self, offset: u32, buf: &mut [u8]) -> Result<(), FlashError> {
        let range = self.range(offset, buf.len())?;
        buf.copy_from_slice(&self.bytes[range]);
        Ok(())
    }

    fn erase(&mut self, offset: u32, len: u32) -> Result<(), FlashError> {
        let range = self.range(offset, len as usize)?;
        self.bytes[range].fill(0xff);
        Ok(())
    }

    fn write(&mut self, offset: u32, data: &[u8]) -> Result<(), FlashError> {
        let range = self.range(offset, data.len())?;
        for (stored, new) in self.bytes[range].iter_mut().zip(data) {
            *stored &= new;
        }
        Ok(())
    }
}

/// Why the configuration could not be stored or loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PersistError {
    /// A slot (half the region) is smaller than the longest record.
    RegionTooSmall {
        /// Bytes a slot needs.
        needed: u32,
        /// Bytes a slot has.
        available: u32,
    },
    /// The flash failed.
    Flash(FlashError),
    /// The record read back after writing it differs from what was written.
    VerifyFailed {
        /// The slot.
        slot: u8,
    },
}

impl From<FlashError> for PersistError {
    fn from(error: FlashError) -> Self {
        PersistError::Flash(error)
    }
}

/// One stored binding: a function, identified so a different device at
/// the same fabric ID after a reboot is not taken for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredBinding {
    /// The function's fabric ID.
    pub function: Bdf,
    /// Its vendor ID.
    pub vendor_id: u16,
    /// Its device ID.
    pub device_id: u16,
    /// Where it is bound.
    pub binding: Binding,
}

/// The binding configuration as stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoredConfig {
    /// The binding state's generation when it was stored.
    pub generation: Generation,
    /// The NumVFs setting ([`FabricSettings::num_vfs`]), applied before
    /// enumeration so the stored VFs exist again.
    pub num_vfs: u16,
    /// The bindings, in host then slot order.
    pub bindings: Vec<StoredBinding, MAX_STORED_BINDINGS>,
    /// The PFs whose NumVFs changed at run time ([`FabricSettings::pf_vfs`]).
    pub pf_vfs: Vec<PfVfs, MAX_SRIOV_PFS>,
    /// The host ports and their slots ([`FabricSettings::hosts`]); `None`
    /// (a record older than version 3) keeps the settings' own.
    pub hosts: Option<Vec<HostPort, MAX_HOST_PORTS>>,
}

impl StoredConfig {
    /// What a record keeps of `settings` (NumVFs, fabric-wide and per PF,
    /// and the host ports), with no bindings, at generation 0.
    pub fn of_settings(settings: &FabricSettings) -> Self {
        StoredConfig {
            num_vfs: settings.num_vfs,
            pf_vfs: settings.pf_vfs.clone(),
            hosts: Some(settings.hosts.clone()),
            ..StoredConfig::default()
        }
    }

    /// Puts the stored settings (NumVFs, fabric-wide and per PF, and the
    /// host ports if the record has them) into `settings`, before the
    /// manager is built from them.
    pub fn apply_to(&self, settings: &mut FabricSettings) {
        settings.num_vfs = self.num_vfs;
        settings.pf_vfs = self.pf_vfs.clone();
        if let Some(hosts) = &self.hosts {
            settings.hosts = hosts.clone();
        }
    }
}

impl Record for StoredConfig {
    const MAGIC: u32 = RECORD_MAGIC;
    const VERSION: u16 = RECORD_VERSION;
    const OLDEST_VERSION: u16 = 1;
    type Bytes = [u8; MAX_RECORD_LEN];

    fn bytes() -> Self::Bytes {
        [0; MAX_RECORD_LEN]
    }

    fn encode_payload(&self, out: &mut [u8]) -> usize {
        let mut w = Writer { out, at: 0 };
        w.put(&self.generation.0.to_le_bytes());
        w.put(&self.num_vfs.to_le_bytes());
        w.put(&[self.bindings.len() as u8, self.pf_vfs.len() as u8]);
        for b in &self.bindings {
            w.put(&b.function.0.to_le_bytes());
            w.put(&b.vendor_id.to_le_bytes());
            w.put(&b.device_id.to_le_bytes());
            w.put(&b.binding.host.0.to_le_bytes());
            w.put(&[b.binding.slot, 0]);
        }
        for p in &self.pf_vfs {
            w.put(&p.function.0.to_le_bytes());
            w.put(&p.vendor_id.to_le_bytes());
            w.put(&p.device_id.to_le_bytes());
            w.put(&p.num_vfs.to_le_bytes());
        }
        if let Some(hosts) = &self.hosts {
            w.put(&[hosts.len() as u8]);
            for h in hosts {
                w.put(&h.switch.to_le_bytes());
                w.put(&[h.port.0]);
                w.put(&h.host.0.to_le_bytes());
                w.put(&[h.slots]);
            }
        }
        w.at
    }

    fn decode_payload(payload: &[u8]) -> Option<Self> {
        let u16_at = |at: usize| u16::from_le_bytes([payload[at], payload[at + 1]]);
        if payload.len() < FIXED_PAYLOAD_LEN {
            return None;
        }
        let count = usize::from(payload[6]);
        let pfs = usize::from(payload[7]);
        let pfs_at = FIXED_PAYLOAD_LEN + count * BINDING_LEN;
        let hosts_at = pfs_at + pfs * PF_VFS_LEN;
        let hosts = match payload.get(hosts_at) {
            None if payload.len() == hosts_at => None,
            Some(&hosts) if payload.len() == hosts_at + 1 + usize::from(hosts) * HOST_PORT_LEN => {
                Some(usize::from(hosts))
            }
            _ => return None,
        };
        let mut config = StoredConfig {
            generation: Generation(u32::from_le_bytes([
                payload[0], payload[1], payload[2], payload[3],
            ])),
            num_vfs: u16_at(4),
            bindings: Vec::new(),
            pf_vfs: Vec::new(),
            hosts: None,
        };
        for i in 0..count {
            let at = FIXED_PAYLOAD_LEN + i * BINDING_LEN;
            config
                .bindings
                .push(StoredBinding {
                    function: Bdf(u16_at(at)),
                    vendor_id: u16_at(at + 2),
                    device_id: u16_at(at + 4),
                    binding: Binding {
                        host: HostIndex(u16_at(at + 6)),
                        slot: payload[at + 8],
                    },
                })
                .ok()?;
        }
        for i in 0..pfs {
            let at = pfs_at + i * PF_VFS_LEN;
            config
                .pf_vfs
                .push(PfVfs {
                    function: Bdf(u16_at(at)),
                    vendor_id: u16_at(at + 2),
                    device_id: u16_at(at + 4),
                    num_vfs: u16_at(at + 6),
                })
                .ok()?;
        }
        if let Some(hosts) = hosts {
            let mut ports = Vec::new();
            for i in 0..hosts {
                let at = hosts_at + 1 + i * HOST_PORT_LEN;
                let mut switch = [0; 8];
                switch.copy_from_slice(&payload[at..at + 8]);
                ports
                    .push(HostPort {
                        switch: u64::from_le_bytes(switch),
                        port: PortIndex(payload[at + 8]),
                        host: HostIndex(u16_at(at + 9)),
                        slots: payload[at + 11],
                    })
                    .ok()?;
            }
            config.hosts = Some(ports);
        }
        Some(config)
    }
}

/// A value kept in flash as a two-slot record (see the module docs): its
/// magic, its version and its payload's encoding.
pub trait Record: Sized {
    /// The record's first four bytes, telling its kind from others.
    const MAGIC: u32;
    /// The payload layout this code writes; a record of a version from
    /// [`Record::OLDEST_VERSION`] to this one is read, any other is not valid.
    const VERSION: u16;
    /// The oldest payload layout this code still reads: each newer one
    /// only appended what an older one leaves out.
    const OLDEST_VERSION: u16 = Self::VERSION;
    /// A buffer as long as the longest record: [`RECORD_OVERHEAD`] bytes
    /// of header and CRC around the longest payload.
    type Bytes: AsRef<[u8]> + AsMut<[u8]>;

    /// A zeroed buffer.
    fn bytes() -> Self::Bytes;

    /// Writes the payload into `out`, which is as long as the longest
    /// payload; returns its length.
    fn encode_payload(&self, out: &mut [u8]) -> usize;

    /// The value in `payload`, if it is a well-formed one.
    fn decode_payload(payload: &[u8]) -> Option<Self>;
}

/// Bytes of a record that are not payload: the header and the CRC.
pub const RECORD_OVERHEAD: usize = HEADER_LEN + CRC_LEN;

/// `record` with sequence number `sequence` in `out`; returns its length.
fn encode_record<R: Record>(record: &R, sequence: u32, out: &mut [u8]) -> usize {
    let payload_end = out.len() - CRC_LEN;
    let payload_len = record.encode_payload(&mut out[HEADER_LEN..payload_end]);
    let mut w = Writer { out, at: 0 };
    w.put(&R::MAGIC.to_le_bytes());
    w.put(&R::VERSION.to_le_bytes());
    w.put(&(payload_len as u16).to_le_bytes());
    w.put(&sequence.to_le_bytes());
    w.at += payload_len;
    let crc = crc32(&w.out[..w.at]);
    w.put(&crc.to_le_bytes());
    w.at
}

/// The record in `bytes` and its sequence number, if it is a valid one.
fn decode_record<R: Record>(bytes: &[u8]) -> Option<(u32, R)> {
    let u32_at =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
    if bytes.len() < RECORD_OVERHEAD
        || u32_at(0) != R::MAGIC
        || !(R::OLDEST_VERSION..=R::VERSION).contains(&u16_at(4))
    {
        return None;
    }
    let end = HEADER_LEN + usize::from(u16_at(6));
    if end + CRC_LEN > bytes.len() || crc32(&bytes[..end]) != u32_at(end) {
        return None;
    }
    Some((u32_at(8), R::decode_payload(&bytes[HEADER_LEN..end])?))
}

/// Appends bytes to a record buffer that is long enough for any record.
struct Writer<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    fn put(&mut self, bytes: &[u8]) {
        self.out[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
    }
}

/// CRC-32 as IEEE 802.3 computes it (reflected polynomial 0xEDB88320,
/// initial value and final XOR all ones): "123456789" gives 0xCBF43926.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = u32::MAX;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Where slot `slot` starts, after checking each half of the region
/// holds `record_len` bytes.
fn slot_offset<F: Flash + ?Sized>(
    flash: &F,
    slot: u8,
    record_len: usize,
) -> Result<u32, PersistError> {
    let half = flash.size() / 2;
    if (half as usize) < record_len {
        return Err(PersistError::RegionTooSmall {
            needed: record_len as u32,
            available: half,
        });
    }
    Ok(u32::from(slot) * half)
}

/// The valid record of each slot, with its sequence number.
fn read_slots<R: Record, F: Flash + ?Sized>(
    flash: &mut F,
) -> Result<[Option<(u32, R)>; 2], PersistError> {
    let mut slots = [None, None];
    for (slot, found) in slots.iter_mut().enumerate() {
        let mut bytes = R::bytes();
        let bytes = bytes.as_mut();
        let offset = slot_offset(flash, slot as u8, bytes.len())?;
        flash.read(offset, bytes)?;
        *found = decode_record(bytes);
    }
    Ok(slots)
}

/// Whether sequence number `a` was written after `b`, across wrapping.
fn newer(a: u32, b: u32) -> bool {
    a != b && a.wrapping_sub(b) < 1 << 31
}

/// The slot holding the newest valid record, and its sequence number.
fn newest<R>(slots: &[Option<(u32, R)>; 2]) -> Option<(u8, u32)> {
    match (&slots[0], &slots[1]) {
        (Some((a, _)), Some((b, _))) if newer(*b, *a) => Some((1, *b)),
        (Some((a, _)), _) => Some((0, *a)),
        (None, Some((b, _))) => Some((1, *b)),
        (None, None) => None,
    }
}

/// What a region of two-slot records holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Saved<R> {
    /// The newest valid record.
    Record(R),
    /// Neither slot was ever written with a record of this kind (both
    /// erased, or holding something else).
    Empty,
    /// Neither slot holds a valid record, but one starts with the
    /// record's magic: a record was written and is damaged (a torn
    /// write, flash wear, another version of the layout).
    Corrupt,
}

/// The newest valid record in `flash`, or whether there was never one or
/// only a damaged one ([`Saved`]).
pub fn load_saved<R: Record, F: Flash + ?Sized>(flash: &mut F) -> Result<Saved<R>, PersistError> {
    let mut damaged = false;
    let mut slots = [None, None];
    for (slot, found) in slots.iter_mut().enumerate() {
        let mut bytes = R::bytes();
        let bytes = bytes.as_mut();
        let offset = slot_offset(flash, slot as u8, bytes.len())?;
        flash.read(offset, bytes)?;
        *found = decode_record::<R>(bytes);
        damaged |= found.is_none() && bytes[..4] == R::MAGIC.to_le_bytes();
    }
    Ok(match newest(&slots) {
        Some((slot, _)) => slots[usize::from(slot)]
            .take()
            .map_or(Saved::Empty, |(_, record)| Saved::Record(record)),
        None if damaged => Saved::Corrupt,
        None => Saved::Empty,
    })
}

/// The newest valid record in `flash`; `None` when neither slot holds a
/// valid one (a new board, or flash never written).
pub fn load_record<R: Record, F: Flash + ?Sized>(flash: &mut F) -> Result<Option<R>, PersistError> {
    let mut slots = read_slots::<R, F>(flash)?;
    Ok(newest(&slots).and_then(|(slot, _)| slots[usize::from(slot)].take().map(|(_, r)| r)))
}

/// Stores `record` in the slot not holding the newest valid record, with
/// the next sequence number; returns that sequence number. Until the
/// write completes, [`load_record`] returns the previous record.
pub fn save_record<R: Record, F: Flash + ?Sized>(
    flash: &mut F,
    record: &R,
) -> Result<u32, PersistError> {
    let slots = read_slots::<R, F>(flash)?;
    let (slot, sequence) = match newest(&slots) {
        Some((newest_slot, sequence)) => (1 - newest_slot, sequence.wrapping_add(1)),
        None => (0, 0),
    };
    let mut bytes = R::bytes();
    let bytes = bytes.as_mut();
    let offset = slot_offset(flash, slot, bytes.len())?;
    let len = encode_record(record, sequence, bytes);
    flash.erase(offset, flash.size() / 2)?;
    flash.write(offset, &bytes[..len])?;
    let mut back = R::bytes();
    let back = &mut back.as_mut()[..len];
    flash.read(offset, back)?;
    if back != &bytes[..len] {
        return Err(PersistError::VerifyFailed { slot });
    }
    Ok(sequence)
}

/// The newest valid binding configuration in `flash`; `None` when neither
/// slot holds a valid record (a new board, or flash never written).
pub fn load<F: Flash + ?Sized>(flash: &mut F) -> Result<Option<StoredConfig>, PersistError> {
    load_record(flash)
}

/// Stores `config` in the slot not holding the newest valid record, with
/// the next sequence number; returns that sequence number. Until the
/// write completes, [`load`] returns the previous configuration.
pub fn save<F: Flash + ?Sized>(flash: &mut F, config: &StoredConfig) -> Result<u32, PersistError> {
    save_record(flash, config)
}

/// What restoring the stored bindings did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// Bindings restored.
    pub bound: u8,
    /// Bindings not restored (each logged as [`Event::BindingNotRestored`]).
    pub not_restored: u8,
}

impl FabricManager {
    /// The binding configuration to store: every binding, the NumVFs
    /// settings (fabric-wide and per PF), the host ports and the generation.
    pub fn stored_config(&self) -> StoredConfig {
        let mut config = StoredConfig {
            generation: self.generation,
            ..StoredConfig::of_settings(&self.settings)
        };
        for switch in &self.switches {
            for (slot, vdsp) in switch.downstream.iter().enumerate() {
                let Some(function) = vdsp.bound.and_then(|b| self.inventory.function(b.function))
                else {
                    continue;
                };
                // At most one per slot, and the record has room for every slot.
                let _ = config.bindings.push(StoredBinding {
                    function: function.id,
                    vendor_id: function.vendor_id,
                    device_id: function.device_id,
                    binding: Binding {
                        host: switch.host,
                        slot: slot as u8,
                    },
                });
            }
        }
        config
    }

    /// Stores the current binding configuration in `flash`; call after
    /// every change that should survive a reboot.
    pub fn save_config<F: Flash + ?Sized>(&self, flash: &mut F) -> Result<u32, PersistError> {
        save(flash, &self.stored_config())
    }

    /// Re-binds, after [`FabricManager::start`], every stored binding whose
    /// function enumeration found again (same fabric ID, vendor and device
    /// ID); logs each one that is not as [`Event::BindingNotRestored`].
    ///
    /// The generation becomes the stored one when every binding came back,
    /// so a precondition read before the reboot still holds, and the one
    /// after it otherwise. Fails only when the fabric is not started or a
    /// hot-plug MSI cannot be sent; a refused binding is logged and skipped.
    pub fn restore<F, H>(
        &mut self,
        config: &StoredConfig,
        fabric: &mut F,
        host_if: &mut H,
    ) -> Result<Restored, BindError>
    where
        F: Fabric + ?Sized,
        H: HostInterface + ?Sized,
    {
        if !self.ready {
            return Err(BindError::NotReady);
        }
        let mut restored = Restored::default();
        for stored in &config.bindings {
            let found = self.inventory.function(stored.function).is_some_and(|f| {
                (f.vendor_id, f.device_id) == (stored.vendor_id, stored.device_id)
            });
            let binding = stored.binding;
            let reason = if !found {
                Some(NotRestored::FunctionGone)
            } else {
                let result =
                    self.bind_function(stored.function, binding.host, binding.slot, fabric);
                match result {
                    Ok(()) => None,
                    Err(_) if self.binding_of(stored.function) == Some(binding) => None,
                    Err(_) => Some(NotRestored::Refused),
                }
            };
            match reason {
                None => {
                    restored.bound += 1;
                    self.events.record(Event::Bound {
                        function: stored.function,
                        binding,
                        generation: config.generation,
                    });
                }
                Some(reason) => {
                    restored.not_restored += 1;
                    self.events.record(Event::BindingNotRestored {
                        function: stored.function,
                        binding,
                        reason,
                    });
                }
            }
        }
        self.generation = if restored.not_restored == 0 {
            config.generation
        } else {
            config.generation.next()
        };
        for stored in &config.bindings {
            if self.binding_of(stored.function) == Some(stored.binding) {
                self.announce_binding(stored.binding, true, host_if)?;
            }
        }
        Ok(restored)
    }
}

impl FabricManager {
    /// Applies `config` now, to a running fabric: binds every stored
    /// binding that is not in place already, as [`FabricManager::restore`]
    /// does at start (a function gone or a slot taken is logged and
    /// skipped); bindings made since and not stored are kept. The record's
    /// NumVFs are not applied: VFs change at run time by
    /// [`FabricManager::begin_num_vfs`] alone, one PF at a time, and the
    /// settings keep saying what the PFs have, so that the next save
    /// stores it. A binding of a VF that does not exist now is logged as
    /// gone. The generation moves on if anything was bound, never back to
    /// the stored one: clients' preconditions read before must fail.
    pub fn apply_saved<F, H>(
        &mut self,
        config: &StoredConfig,
        fabric: &mut F,
        host_if: &mut H,
    ) -> Result<Restored, BindError>
    where
        F: Fabric + ?Sized,
        H: HostInterface + ?Sized,
    {
        let before = self.generation;
        let mut missing = StoredConfig {
            generation: before.next(),
            bindings: Vec::new(),
            ..config.clone()
        };
        for stored in &config.bindings {
            if self.binding_of(stored.function) != Some(stored.binding) {
                // At most as many as the record holds.
                let _ = missing.bindings.push(*stored);
            }
        }
        let restored = self.restore(&missing, fabric, host_if)?;
        self.generation = if restored == Restored::default() {
            before
        } else {
            before.next()
        };
        Ok(restored)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    #[test]
    fn crc32_is_ieee() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn a_record_decodes_to_what_was_encoded() {
        let mut config = StoredConfig {
            generation: Generation(7),
            num_vfs: 4,
            ..StoredConfig::default()
        };
        let _ = config.bindings.push(StoredBinding {
            function: Bdf::new(5, 0, 1),
            vendor_id: 0x10de,
            device_id: 0x2330,
            binding: Binding {
                host: HostIndex(1),
                slot: 3,
            },
        });
        let mut bytes = [0xffu8; MAX_RECORD_LEN];
        let len = encode_record(&config, 9, &mut bytes);
        assert_eq!(len, HEADER_LEN + FIXED_PAYLOAD_LEN + BINDING_LEN + CRC_LEN);
        // The layout of the module docs: magic, version, payload length, sequence.
        assert_eq!(bytes[..12], *b"WFTB\x03\x00\x12\x00\x09\x00\x00\x00");
        assert_eq!(decode_record(&bytes), Some((9, config.clone())));
        bytes[14] ^= 1;
        assert_eq!(decode_record::<StoredConfig>(&bytes), None);

        // A PF kept with its own NumVFs follows the bindings.
        let _ = config.pf_vfs.push(PfVfs {
            function: Bdf::new(7, 0, 0),
            vendor_id: 0x144d,
            device_id: 0xa824,
            num_vfs: 2,
        });
        let len = encode_record(&config, 10, &mut bytes);
        assert_eq!(
            len,
            HEADER_LEN + FIXED_PAYLOAD_LEN + BINDING_LEN + 8 + CRC_LEN
        );
        assert_eq!(bytes[19], 1);
        assert_eq!(
            bytes[30..38],
            [0x00, 0x07, 0x4d, 0x14, 0x24, 0xa8, 0x02, 0x00]
        );
        assert_eq!(decode_record(&bytes), Some((10, config)));
    }

    #[test]
    fn host_ports_follow_the_pfs_and_decode_to_what_was_encoded() {
        let mut config = StoredConfig {
            generation: Generation(2),
            ..StoredConfig::default()
        };
        let mut hosts = Vec::new();
        for (switch, port, host, slots) in [(0x0257_4546_5401, 0, 0, 4), (0x77, 5, 1, 8)] {
            let _ = hosts.push(HostPort {
                switch,
                port: PortIndex(port),
                host: HostIndex(host),
                slots,
            });
        }
        config.hosts = Some(hosts);
        let mut bytes = [0xffu8; MAX_RECORD_LEN];
        let len = encode_record(&config, 4, &mut bytes);
        assert_eq!(
            len,
            HEADER_LEN + FIXED_PAYLOAD_LEN + 1 + 2 * HOST_PORT_LEN + CRC_LEN
        );
        // The module docs' layout: the count after the (no) PFs, then
        // switch ID, port, host and slots.
        assert_eq!(bytes[20], 2);
        assert_eq!(bytes[33..45], [0x77, 0, 0, 0, 0, 0, 0, 0, 5, 1, 0, 8]);
        assert_eq!(decode_record(&bytes), Some((4, config.clone())));
        // No host ports at all is a configuration too, unlike none stored.
        config.hosts = Some(Vec::new());
        encode_record(&config, 5, &mut bytes);
        assert_eq!(decode_record(&bytes), Some((5, config.clone())));
        // A count that disagrees with the length is not a record.
        config.hosts = None;
        let len = encode_record(&config, 6, &mut bytes);
        let with_count = |count: u8| {
            let mut grown = bytes;
            grown[HEADER_LEN + FIXED_PAYLOAD_LEN] = count;
            grown[6] += 1;
            let crc = crc32(&grown[..len - CRC_LEN + 1]);
            grown[len - CRC_LEN + 1..len + 1].copy_from_slice(&crc.to_le_bytes());
            decode_record::<StoredConfig>(&grown).map(|(_, config)| config.hosts)
        };
        assert_eq!(with_count(0), Some(Some(Vec::new())));
        assert_eq!(with_count(1), None);
    }

    #[test]
    fn host_ports_stored_replace_the_settings_and_none_keeps_them() {
        let mut settings = FabricSettings::DEFAULT;
        let built_in = HostPort {
            switch: 1,
            port: PortIndex(0),
            host: HostIndex(0),
            slots: 4,
        };
        let _ = settings.hosts.push(built_in);
        StoredConfig::default().apply_to(&mut settings);
        assert_eq!(settings.hosts[..], [built_in]);
        let stored = HostPort {
            slots: 2,
            port: PortIndex(3),
            ..built_in
        };
        let mut hosts = Vec::new();
        let _ = hosts.push(stored);
        StoredConfig {
            hosts: Some(hosts),
            ..StoredConfig::default()
        }
        .apply_to(&mut settings);
        assert_eq!(settings.hosts[..], [stored]);
    }

    #[test]
    fn a_version_1_record_reads_without_pfs() {
        // Version 1's layout, built by hand: generation 3, NumVFs 4, one
        // binding (05:00.1, 10de:2330, host 1 slot 3), reserved 0.
        let mut bytes = [0xffu8; MAX_RECORD_LEN];
        let mut record = std::vec::Vec::new();
        record.extend_from_slice(b"WFTB\x01\x00\x12\x00\x05\x00\x00\x00");
        record.extend_from_slice(&[3, 0, 0, 0, 4, 0, 1, 0]);
        record.extend_from_slice(&[0x01, 0x05, 0xde, 0x10, 0x30, 0x23, 1, 0, 3, 0]);
        let crc = crc32(&record);
        record.extend_from_slice(&crc.to_le_bytes());
        bytes[..record.len()].copy_from_slice(&record);
        let (sequence, config) = decode_record::<StoredConfig>(&bytes).expect("valid");
        assert_eq!(sequence, 5);
        assert_eq!((config.generation, config.num_vfs), (Generation(3), 4));
        assert_eq!(config.bindings.len(), 1);
        assert_eq!(config.bindings[0].function, Bdf::new(5, 0, 1));
        assert!(config.pf_vfs.is_empty());
    }
}
