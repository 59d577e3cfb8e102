//! The interface every endpoint model implements: configuration and memory
//! requests in, TLPs out.
//!
//! A model is driven in two ways, which share one implementation:
//!
//! - **Calls.** The fabric manager's tests call [`Device::config_read`] and
//!   [`Device::config_write`] directly, addressing a function by its routing
//!   ID, and get the completion status back.
//! - **TLPs.** A simulated link hands whole TLPs to [`Device::handle`], which
//!   answers with the TLPs the device sends back (completions). Work the
//!   device starts on its own (DMA, interrupts, queue processing) comes out of
//!   [`Device::poll`], which the owner calls until it returns nothing.
//!
//! Time is the simulated time since the simulation started, passed into
//! every call, so a model has no clock of its own.

use std::time::Duration;

use weft_pcie::split::{split_completion, PayloadSize, Rcb};
use weft_pcie::tlp::{Body, CompletionStatus, ConfigType, Direction, MemoryOp};
use weft_pcie::Bdf;

use crate::packet::{self, Packet, RequestInfo};

/// Why a configuration request was not completed successfully (the status a
/// completer puts in the Cpl, PCIe Base 6.0 §2.2.9.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// No function at that routing ID: Unsupported Request (§2.3.1).
    /// Software sees all ones on a read.
    UnsupportedRequest {
        /// The routing ID addressed.
        target: Bdf,
    },
    /// The device is still initializing after a reset: Request Retry Status,
    /// called Configuration Request Retry Status (CRS) before 6.0
    /// (§2.3.1, §6.6.1). Software retries later.
    Retry {
        /// The routing ID addressed.
        target: Bdf,
        /// When the device will be ready.
        ready_at: Duration,
    },
}

impl ConfigError {
    /// The Completion Status field for this outcome.
    pub const fn status(&self) -> CompletionStatus {
        match self {
            ConfigError::UnsupportedRequest { .. } => CompletionStatus::UnsupportedRequest,
            ConfigError::Retry { .. } => CompletionStatus::RequestRetry,
        }
    }
}

/// Which function accepts a memory request, and what its completions obey.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    /// The function whose BAR holds the address: the Completer ID.
    pub function: Bdf,
    /// That function's programmed Max_Payload_Size, which bounds each
    /// completion's data (§2.2.2).
    pub max_payload: PayloadSize,
}

/// An endpoint model: one PCIe device with one or more functions.
///
/// Models implement the required methods; [`Device::handle`] turns TLPs
/// into those calls and builds the completions, so every model answers the
/// same way on the wire.
pub trait Device {
    /// A Configuration Read of the DW holding byte `offset` of function
    /// `target` (Type 0, §7.3).
    fn config_read(&mut self, now: Duration, target: Bdf, offset: u16) -> Result<u32, ConfigError>;

    /// A Configuration Write into the DW holding byte `offset`; byte lane n
    /// of `value` is written if bit n of `byte_enables` is set (§2.2.7).
    fn config_write(
        &mut self,
        now: Duration,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigError>;

    /// The function whose enabled memory BAR holds `address`, if any. A BAR
    /// decodes only while its function's Memory Space Enable is set
    /// (§7.5.1.1.3), or for a VF while the PF's VF MSE is set (§9.3.3.3).
    fn claim(&self, address: u64) -> Option<Claim>;

    /// Reads `out.len()` bytes at `address`, which [`Device::claim`] accepted.
    fn memory_read(&mut self, now: Duration, address: u64, out: &mut [u8]);

    /// Writes `data` at `address`, which [`Device::claim`] accepted.
    fn memory_write(&mut self, now: Duration, address: u64, data: &[u8]);

    /// A completion for a request this device sent (a DMA read).
    fn receive_completion(&mut self, now: Duration, completion: &Packet);

    /// Autonomous work: the TLPs the device sends now (DMA, interrupts).
    /// Callers call it again until it returns an empty batch; each batch is
    /// bounded so a large transfer interleaves with other traffic.
    fn poll(&mut self, now: Duration) -> Vec<Packet>;

    /// Whether `id` is one of the device's functions at present (the PF and
    /// any enabled VFs): completions to `id` belong to this device.
    fn owns(&self, id: Bdf) -> bool;

    /// A Conventional Reset: every function returns to its reset state and
    /// the device answers configuration requests with Request Retry Status
    /// until it has booted again (§6.6.1).
    fn reset(&mut self, now: Duration);

    /// Handles one TLP and returns what the device sends in response.
    ///
    /// - Configuration Type 0 requests complete with the status of
    ///   [`Device::config_read`] / [`Device::config_write`]; Type 1 requests
    ///   are Unsupported Requests, an endpoint is not a bridge (§7.3.3).
    /// - Memory reads that a BAR claims complete with data split at the
    ///   function's Max_Payload_Size and the 128-byte Read Completion
    ///   Boundary (§2.3.1.1); unclaimed reads and other non-posted requests
    ///   complete with UR. Unclaimed posted writes are dropped.
    /// - Completions go to [`Device::receive_completion`]; messages are
    ///   ignored.
    fn handle(&mut self, now: Duration, packet: &Packet) -> Vec<Packet> {
        let info = RequestInfo::of(&packet.header);
        match &packet.header.body {
            Body::Config(request) => {
                let target = request.target;
                let offset = request.byte_offset();
                if request.config_type == ConfigType::Type1 {
                    return vec![unsupported(&info, target)];
                }
                let result = match request.direction {
                    Direction::Read => self.config_read(now, target, offset).map(Some),
                    Direction::Write => {
                        let mut lanes = [0u8; 4];
                        let n = packet.payload.len().min(4);
                        lanes[..n].copy_from_slice(&packet.payload[..n]);
                        let value = u32::from_le_bytes(lanes);
                        self.config_write(now, target, offset, value, request.first_be)
                            .map(|()| None)
                    }
                };
                let response = match result {
                    Ok(data) => packet::completion_for(
                        &info,
                        target,
                        CompletionStatus::Successful,
                        4,
                        0,
                        data.map(|value| value.to_le_bytes().to_vec()),
                    ),
                    Err(error) => packet::completion_for(&info, target, error.status(), 4, 0, None),
                };
                vec![response]
            }
            Body::Memory(request) => match request.op {
                MemoryOp::Write => {
                    if let Some(_claim) = self.claim(request.address) {
                        write_enabled_bytes(self, now, packet);
                    }
                    Vec::new()
                }
                MemoryOp::Read => match self.claim(request.address) {
                    Some(claim) => complete_read(self, now, packet, claim),
                    None => vec![unsupported(&info, self.completer_for_unclaimed())],
                },
                // Locked reads and AtomicOps are not supported by these
                // endpoints: UR (§6.5, §6.15).
                _ => vec![unsupported(&info, self.completer_for_unclaimed())],
            },
            Body::Io(_) => vec![unsupported(&info, self.completer_for_unclaimed())],
            Body::Completion(_) => {
                self.receive_completion(now, packet);
                Vec::new()
            }
            Body::Message(_) => Vec::new(),
        }
    }

    /// The Completer ID for requests no function claims: the device's
    /// function 0 as last addressed.
    fn completer_for_unclaimed(&self) -> Bdf;
}

/// A Cpl with UR status.
fn unsupported(info: &RequestInfo, completer: Bdf) -> Packet {
    packet::completion_for(
        info,
        completer,
        CompletionStatus::UnsupportedRequest,
        4,
        0,
        None,
    )
}

/// Applies a Memory Write's enabled bytes, one contiguous run at a time
/// (byte enables may leave holes in a 1 DW write, §2.2.5).
fn write_enabled_bytes<D: Device + ?Sized>(device: &mut D, now: Duration, packet: &Packet) {
    let Some(request) = packet.memory() else {
        return;
    };
    let length = usize::from(request.length_dw) * 4;
    let payload = &packet.payload[..length.min(packet.payload.len())];
    let enabled = |index: usize| -> bool {
        let last_dw = usize::from(request.length_dw.max(1)) - 1;
        let dw = index / 4;
        let lane = index % 4;
        let mask = if dw == 0 {
            request.first_be
        } else if dw == last_dw {
            request.last_be
        } else {
            0b1111
        };
        mask & (1 << lane) != 0
    };
    let mut index = 0;
    while index < payload.len() {
        if !enabled(index) {
            index += 1;
            continue;
        }
        let start = index;
        while index < payload.len() && enabled(index) {
            index += 1;
        }
        device.memory_write(
            now,
            request.address.wrapping_add(start as u64),
            &payload[start..index],
        );
    }
}

/// Reads the bytes a Memory Read asks for and splits them into completions
/// (§2.3.1.1).
fn complete_read<D: Device + ?Sized>(
    device: &mut D,
    now: Duration,
    packet: &Packet,
    claim: Claim,
) -> Vec<Packet> {
    let info = RequestInfo::of(&packet.header);
    let Some(request) = packet.memory() else {
        return Vec::new();
    };
    let (first_be, _) = request.effective_byte_enables();
    let skipped = if first_be == 0 {
        0
    } else {
        first_be.trailing_zeros()
    };
    let first_byte = request.address + u64::from(skipped);
    let byte_count = u64::from(request.completion_byte_count().unwrap_or(4));
    let span = usize::from(request.length_dw) * 4;
    let mut data = vec![0; span];
    device.memory_read(now, request.address, &mut data);
    let chunks = match split_completion(first_byte, byte_count, claim.max_payload, Rcb::NON_ROOT) {
        Ok(chunks) => chunks,
        Err(_) => {
            return vec![packet::completion_for(
                &info,
                claim.function,
                CompletionStatus::CompleterAbort,
                4,
                0,
                None,
            )]
        }
    };
    chunks
        .map(|chunk| {
            let start = ((chunk.address & !3) - request.address) as usize;
            let end = (start + usize::from(chunk.length_dw) * 4).min(span);
            let mut dws = data[start.min(end)..end].to_vec();
            dws.resize(usize::from(chunk.length_dw) * 4, 0);
            packet::completion_chunk(&info, claim.function, &chunk, dws)
        })
        .collect()
}

/// How long a device takes to boot after a reset, and when it was last
/// reset: the window in which it answers configuration requests with
/// Request Retry Status (PCIe Base 6.0 §6.6.1; at most 1 s for a
/// conventional reset unless Readiness Notifications say otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Readiness {
    /// The time of the last reset.
    pub reset_at: Duration,
    /// How long the device answers with RRS after it.
    pub boot_time: Duration,
}

impl Readiness {
    /// A device that left reset at `reset_at` and needs `boot_time`.
    pub const fn new(reset_at: Duration, boot_time: Duration) -> Self {
        Readiness {
            reset_at,
            boot_time,
        }
    }

    /// When configuration requests start completing normally.
    pub fn ready_at(&self) -> Duration {
        self.reset_at.saturating_add(self.boot_time)
    }

    /// `Ok` once booted, else the RRS outcome for a request to `target`.
    pub fn check(&self, now: Duration, target: Bdf) -> Result<(), ConfigError> {
        let ready_at = self.ready_at();
        if now < ready_at {
            Err(ConfigError::Retry { target, ready_at })
        } else {
            Ok(())
        }
    }
}

/// The bus number a device captured from Configuration Writes, and the
/// routing ID of its function 0.
///
/// Functions capture their Bus and Device Numbers from every Type 0
/// Configuration Write they complete and use them in the Requester ID of
/// what they send (PCIe Base 6.0 §2.2.6.2). An endpoint below a downstream
/// port is device 0 (or an ARI device, whose function number spans the
/// device field, §6.13), so the captured bus determines every function's
/// routing ID, VFs included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BusCapture {
    bus: Option<u8>,
}

impl BusCapture {
    /// The captured bus; `None` before the first write.
    pub const fn bus(&self) -> Option<u8> {
        self.bus
    }

    /// Function 0's routing ID: the captured bus, else the bus of `target`.
    pub const fn base(&self, target: Bdf) -> Bdf {
        match self.bus {
            Some(bus) => Bdf::new_ari(bus, 0),
            None => Bdf::new_ari(target.bus(), 0),
        }
    }

    /// The function number relative to function 0 (ARI numbering, and past
    /// 255 onto the next buses as VFs may go, §9.3.3.9) that `target`
    /// addresses; `None` if it is below function 0.
    pub const fn index(&self, target: Bdf) -> Option<u16> {
        let base = self.base(target).0;
        if target.0 >= base {
            Some(target.0 - base)
        } else {
            None
        }
    }

    /// Records the bus of a Type 0 Configuration Write to function 0.
    pub fn capture(&mut self, target: Bdf) {
        self.bus = Some(target.bus());
    }

    /// Forgets the bus (a reset clears the captured numbers).
    pub fn clear(&mut self) {
        self.bus = None;
    }
}
