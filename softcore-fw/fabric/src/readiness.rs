//! Waiting for a function to become ready for configuration requests
//! (PCIe Base 6.0 §6.6.1).
//!
//! After a Conventional Reset software waits 100 ms before its first
//! Configuration Request to a device. A function that is still initializing
//! completes configuration requests with Request Retry Status (RRS, called
//! CRS before 6.0); software retries, and may treat a function that still
//! answers RRS 1.0 s after the reset as broken. The same 100 ms wait applies
//! after setting VF Enable before the new VFs are accessed (§9.3.3.3.1).

use weft_pcie::Bdf;

use crate::hw::{config_read, ConfigFault, ConfigPath, FabricConfig, Timer};

/// The wait after a Conventional Reset (or VF Enable) before the first
/// Configuration Request (§6.6.1, §9.3.3.3.1).
pub const RESET_TO_FIRST_REQUEST_NS: u64 = 100_000_000;

/// How long a function may keep answering Request Retry Status before it
/// is treated as broken (§6.6.1: 1.0 s after the reset).
pub const READINESS_TIMEOUT_NS: u64 = 1_000_000_000;

/// The first pause between retries; each later pause doubles, up to
/// [`MAX_RETRY_INTERVAL_NS`].
pub const FIRST_RETRY_INTERVAL_NS: u64 = 1_000_000;

/// The longest pause between retries.
pub const MAX_RETRY_INTERVAL_NS: u64 = 64_000_000;

/// Why a function could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadinessError {
    /// It still answered Request Retry Status when the deadline passed.
    NotReady {
        /// How it was reached.
        path: ConfigPath,
        /// The function.
        id: Bdf,
        /// When it was last asked, in timer nanoseconds.
        gave_up_at_ns: u64,
    },
    /// Another failure than UR or RRS.
    Fault {
        /// How it was reached.
        path: ConfigPath,
        /// The function.
        id: Bdf,
        /// What the completion said.
        fault: ConfigFault,
    },
}

/// Reads the DW at `offset` of `id`, retrying while the function answers
/// Request Retry Status until `deadline_ns`. `Ok(None)` when no function is
/// there (Unsupported Request).
pub fn read_when_ready<C: FabricConfig + ?Sized, T: Timer + ?Sized>(
    config: &mut C,
    timer: &mut T,
    path: ConfigPath,
    id: Bdf,
    offset: u16,
    deadline_ns: u64,
) -> Result<Option<u32>, ReadinessError> {
    let mut interval = FIRST_RETRY_INTERVAL_NS;
    loop {
        match config_read(config, path, id, offset) {
            Ok(value) => return Ok(Some(value)),
            Err(ConfigFault::UnsupportedRequest) => return Ok(None),
            Err(ConfigFault::RequestRetry) => {
                let now = timer.now_ns();
                if now >= deadline_ns {
                    return Err(ReadinessError::NotReady {
                        path,
                        id,
                        gave_up_at_ns: now,
                    });
                }
                timer.wait_until_ns(now.saturating_add(interval).min(deadline_ns));
                interval = (interval * 2).min(MAX_RETRY_INTERVAL_NS);
            }
            Err(fault) => return Err(ReadinessError::Fault { path, id, fault }),
        }
    }
}
