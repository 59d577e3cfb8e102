//! The CPU's synchronous view of the hierarchy: configuration and memory
//! accesses that issue TLPs through the root complex and let the fabric run
//! until they complete, as a load or store instruction stalls the CPU.

use std::time::Duration;

use weft_pcie::config::{ConfigRead, ConfigWrite};
use weft_pcie::split::{split_read, PayloadSize};
use weft_pcie::tlp::{CompletionStatus, Tag};
use weft_pcie::Bdf;

use super::fabric::Fabric;
use super::interrupts::{Vector, MSI_WINDOW};
use super::root_complex::{Outcome, RootComplex};

/// How long a request may stay without its completion before the root
/// complex reports a Completion Timeout: 50 ms, the top of the default
/// range (PCIe Base 6.0 §2.8, §7.5.3.16).
pub const COMPLETION_TIMEOUT: Duration = Duration::from_millis(50);
/// How long the root complex keeps re-issuing a configuration request that
/// completes with Request Retry Status when software does not see RRS
/// (§2.3.2): 1 s, the longest a function may take after a reset (§6.6.1).
pub const RETRY_LIMIT: Duration = Duration::from_secs(1);
/// The pause between two hardware re-issues of a retried request.
const RETRY_INTERVAL: Duration = Duration::from_millis(1);
/// The largest read the CPU issues as one request.
const CPU_READ_REQUEST: PayloadSize = PayloadSize::B512;
/// Vendor ID reported for a Vendor ID read that completed with RRS while
/// CRS Software Visibility is enabled (§2.3.2); the upper half reads FFFFh.
pub const RRS_VENDOR_ID: u32 = 0xffff_0001;

/// Why a configuration access failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigAccessError {
    /// The completion carried an error status (UR: nothing there).
    Status {
        /// The function addressed.
        target: Bdf,
        /// The byte offset.
        offset: u16,
        /// The status received.
        status: CompletionStatus,
    },
    /// No completion arrived within [`COMPLETION_TIMEOUT`].
    Timeout {
        /// The function addressed.
        target: Bdf,
        /// The byte offset.
        offset: u16,
    },
    /// The function kept answering with Request Retry Status for longer
    /// than [`RETRY_LIMIT`].
    StillRetrying {
        /// The function addressed.
        target: Bdf,
    },
    /// Every tag was in use.
    NoFreeTag,
}

/// Why a memory access failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryAccessError {
    /// A read completed with an error status (UR, CA).
    Status {
        /// The address read.
        address: u64,
        /// The status received.
        status: CompletionStatus,
    },
    /// No completion arrived within [`COMPLETION_TIMEOUT`].
    Timeout {
        /// The address read.
        address: u64,
    },
    /// The read or write crosses no memory or device the CPU can reach.
    Unreachable {
        /// The address.
        address: u64,
    },
    /// Every tag was in use.
    NoFreeTag,
}

/// A condition waited for did not hold in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitTimeout {
    /// How long was waited.
    pub waited: Duration,
}

/// The CPU: the root complex it issues through and the fabric beyond.
pub struct Cpu<'a> {
    rc: &'a mut RootComplex,
    fabric: &'a mut dyn Fabric,
}

impl<'a> Cpu<'a> {
    /// A CPU issuing through `rc` into `fabric`.
    pub fn new(rc: &'a mut RootComplex, fabric: &'a mut dyn Fabric) -> Self {
        Cpu { rc, fabric }
    }

    /// The simulated time.
    pub fn now(&self) -> Duration {
        self.fabric.now()
    }

    /// The root complex.
    pub fn root(&self) -> &RootComplex {
        self.rc
    }

    /// The root complex, mutably.
    pub fn root_mut(&mut self) -> &mut RootComplex {
        self.rc
    }

    /// Sends what the root complex queued and handles what arrives, until
    /// `deadline` or until something arrived (then returns true).
    fn step(&mut self, deadline: Duration) -> bool {
        let now = self.fabric.now();
        for packet in self.rc.poll(now) {
            self.fabric.send(packet);
        }
        let arrived = self.fabric.run(deadline);
        let any = !arrived.is_empty();
        for packet in arrived {
            let now = self.fabric.now();
            for response in self.rc.handle(now, packet) {
                self.fabric.send(response);
            }
        }
        let now = self.fabric.now();
        for packet in self.rc.poll(now) {
            self.fabric.send(packet);
        }
        any
    }

    /// Lets everything already in flight settle without moving time on.
    pub fn settle(&mut self) {
        let now = self.now();
        while self.step(now) {}
    }

    /// Lets `duration` of simulated time pass, handling whatever arrives.
    pub fn sleep(&mut self, duration: Duration) {
        let deadline = self.now().saturating_add(duration);
        while self.now() < deadline {
            self.step(deadline);
        }
        self.settle();
    }

    /// Runs until `condition` holds on the root complex, or `timeout`.
    pub fn wait_until(
        &mut self,
        timeout: Duration,
        mut condition: impl FnMut(&RootComplex) -> bool,
    ) -> Result<(), WaitTimeout> {
        let start = self.now();
        let deadline = start.saturating_add(timeout);
        loop {
            if condition(self.rc) {
                return Ok(());
            }
            if self.now() >= deadline {
                self.settle();
                if condition(self.rc) {
                    return Ok(());
                }
                return Err(WaitTimeout {
                    waited: self.now().saturating_sub(start),
                });
            }
            self.step(deadline);
        }
    }

    /// Waits until `vector` fires, then takes it (returning how often it
    /// fired).
    pub fn wait_interrupt(
        &mut self,
        vector: Vector,
        timeout: Duration,
    ) -> Result<u32, WaitTimeout> {
        self.wait_until(timeout, |rc| rc.interrupts().is_pending(vector))?;
        Ok(self.rc.interrupts_mut().take(vector))
    }

    fn wait_tag(&mut self, tag: Tag) -> Option<Outcome> {
        let finished = self.wait_until(COMPLETION_TIMEOUT, |rc| {
            // Peek without taking: the tag is finished when take succeeds.
            rc.has_outcome(tag)
        });
        match finished {
            Ok(()) => self.rc.take_outcome(tag),
            Err(_) => {
                self.rc.abandon(tag);
                None
            }
        }
    }

    /// One Configuration Request, as the root complex completes it. A
    /// Vendor ID read answered with RRS reads [`RRS_VENDOR_ID`] while CRS
    /// Software Visibility is on (§2.3.2); other RRS completions are
    /// returned as errors.
    pub fn config_request(
        &mut self,
        target: Bdf,
        offset: u16,
        value: Option<(u32, u8)>,
    ) -> Result<u32, ConfigAccessError> {
        let tag = self
            .rc
            .issue_config(target, offset, value)
            .ok_or(ConfigAccessError::NoFreeTag)?;
        match self.wait_tag(tag) {
            Some(Outcome::Config(Ok(data))) => Ok(data.unwrap_or(0)),
            Some(Outcome::Config(Err(CompletionStatus::RequestRetry)))
                if value.is_none() && offset & !3 == 0 && self.rc.crs_visible() =>
            {
                Ok(RRS_VENDOR_ID)
            }
            Some(Outcome::Config(Err(status))) | Some(Outcome::Read(Err(status))) => {
                Err(ConfigAccessError::Status {
                    target,
                    offset,
                    status,
                })
            }
            Some(Outcome::Read(Ok(_))) | None => Err(ConfigAccessError::Timeout { target, offset }),
        }
    }

    /// A configuration access the way the root complex finishes it for
    /// software: RRS completions other than a visible Vendor ID read are
    /// re-issued by hardware until [`RETRY_LIMIT`] (§2.3.2).
    fn config_retrying(
        &mut self,
        target: Bdf,
        offset: u16,
        value: Option<(u32, u8)>,
    ) -> Result<u32, ConfigAccessError> {
        let start = self.now();
        loop {
            match self.config_request(target, offset, value) {
                Err(ConfigAccessError::Status {
                    status: CompletionStatus::RequestRetry,
                    ..
                }) => {
                    if self.now().saturating_sub(start) >= RETRY_LIMIT {
                        return Err(ConfigAccessError::StillRetrying { target });
                    }
                    self.sleep(RETRY_INTERVAL);
                }
                other => return other,
            }
        }
    }

    /// Reads the configuration DW holding byte `offset` of `target`.
    pub fn config_read(&mut self, target: Bdf, offset: u16) -> Result<u32, ConfigAccessError> {
        self.config_retrying(target, offset, None)
    }

    /// Reads the configuration DW, all ones if the access failed, as a
    /// PCI configuration read instruction returns it.
    pub fn config_read_or_ones(&mut self, target: Bdf, offset: u16) -> u32 {
        self.config_read(target, offset).unwrap_or(u32::MAX)
    }

    /// Writes the bytes of `value` selected by `byte_enables`.
    pub fn config_write(
        &mut self,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigAccessError> {
        self.config_retrying(target, offset, Some((value, byte_enables)))
            .map(|_| ())
    }

    /// Reads a 16-bit configuration register.
    pub fn config_read_u16(&mut self, target: Bdf, offset: u16) -> Result<u16, ConfigAccessError> {
        let dw = self.config_read(target, offset)?;
        Ok((dw >> (8 * u32::from(offset & 2))) as u16)
    }

    /// Writes a 16-bit configuration register (two byte enables, so the
    /// other half of the DW, possibly RW1C, is left alone).
    pub fn config_write_u16(
        &mut self,
        target: Bdf,
        offset: u16,
        value: u16,
    ) -> Result<(), ConfigAccessError> {
        let shift = 8 * u32::from(offset & 2);
        let enables = 0b11 << (offset & 2);
        self.config_write(target, offset, u32::from(value) << shift, enables)
    }

    /// Writes an 8-bit configuration register.
    pub fn config_write_u8(
        &mut self,
        target: Bdf,
        offset: u16,
        value: u8,
    ) -> Result<(), ConfigAccessError> {
        let shift = 8 * u32::from(offset & 3);
        self.config_write(target, offset, u32::from(value) << shift, 1 << (offset & 3))
    }

    /// A configuration-space accessor for one function, for weft-pcie's
    /// sizing helpers and capability walkers.
    pub fn function(&mut self, target: Bdf) -> FunctionConfig<'_, 'a> {
        FunctionConfig { cpu: self, target }
    }

    /// Reads `len` bytes at `address`: through the root port if it
    /// forwards the address, else from host memory.
    pub fn read(&mut self, address: u64, len: u64) -> Result<Vec<u8>, MemoryAccessError> {
        if !self.rc.forwards_down(address) {
            if MSI_WINDOW.contains(&address) {
                return Err(MemoryAccessError::Unreachable { address });
            }
            return Ok(self.rc.memory().read(address, len as usize));
        }
        let chunks = split_read(address, len, CPU_READ_REQUEST)
            .map_err(|_| MemoryAccessError::Unreachable { address })?;
        let mut out = Vec::with_capacity(len as usize);
        for chunk in chunks {
            let tag = self
                .rc
                .issue_read(&chunk)
                .ok_or(MemoryAccessError::NoFreeTag)?;
            match self.wait_tag(tag) {
                Some(Outcome::Read(Ok(data))) => out.extend(data),
                Some(Outcome::Read(Err(status))) | Some(Outcome::Config(Err(status))) => {
                    return Err(MemoryAccessError::Status {
                        address: chunk.address,
                        status,
                    })
                }
                _ => {
                    return Err(MemoryAccessError::Timeout {
                        address: chunk.address,
                    })
                }
            }
        }
        Ok(out)
    }

    /// Writes `data` at `address`: posted Memory Writes through the root
    /// port if it forwards the address, else host memory.
    pub fn write(&mut self, address: u64, data: &[u8]) -> Result<(), MemoryAccessError> {
        if self.rc.forwards_down(address) {
            self.rc.issue_write(address, data);
            self.settle();
            return Ok(());
        }
        if MSI_WINDOW.contains(&address) {
            return Err(MemoryAccessError::Unreachable { address });
        }
        self.rc.memory_mut().write(address, data);
        Ok(())
    }

    /// Reads a little-endian DW.
    pub fn read_u32(&mut self, address: u64) -> Result<u32, MemoryAccessError> {
        let bytes = self.read(address, 4)?;
        let mut lanes = [0u8; 4];
        lanes.copy_from_slice(&bytes[..4]);
        Ok(u32::from_le_bytes(lanes))
    }

    /// Writes a little-endian DW.
    pub fn write_u32(&mut self, address: u64, value: u32) -> Result<(), MemoryAccessError> {
        self.write(address, &value.to_le_bytes())
    }

    /// Writes a little-endian QW as two DW writes, low half first, as
    /// drivers write 64-bit registers on 32-bit-access devices.
    pub fn write_u64(&mut self, address: u64, value: u64) -> Result<(), MemoryAccessError> {
        self.write_u32(address, value as u32)?;
        self.write_u32(address + 4, (value >> 32) as u32)
    }
}

/// One function's configuration space through the CPU.
pub struct FunctionConfig<'c, 'a> {
    cpu: &'c mut Cpu<'a>,
    target: Bdf,
}

impl ConfigRead for FunctionConfig<'_, '_> {
    type Error = ConfigAccessError;

    fn read_dword(&mut self, offset: u16) -> Result<u32, Self::Error> {
        self.cpu.config_read(self.target, offset)
    }
}

impl ConfigWrite for FunctionConfig<'_, '_> {
    fn write_dword(
        &mut self,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), Self::Error> {
        self.cpu
            .config_write(self.target, offset, value, byte_enables)
    }
}
