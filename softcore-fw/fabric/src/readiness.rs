//! Waiting for a function to become ready for configuration requests
//! (PCIe Base 6.0 §6.6.1).
//!
//! After a Conventional Reset software waits 100 ms before its first
//! Configuration Request to a device. A function that is still initializing
//! completes configuration requests with Request Retry Status (RRS, called
//! CRS before 6.0); software retries, and may treat a function that still
//! answers RRS 1.0 s after the reset as broken. The same 100 ms wait applies
//! after setting VF Enable before the new VFs are accessed (§9.3.3.3.1).
//!
//! Below a Downstream Port that supports speeds above 5.0 GT/s the 100 ms
//! count from when Link training completes, not from the reset (§6.6.1),
//! and a link may train well after the reset. Where the board reports its
//! ports' links, [`LinkSettling`] tells the fabric's start when the links
//! it has seen come up have had their 100 ms.

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

/// Ports whose links [`LinkSettling`] follows: one bit each in a `u32`.
pub const SETTLING_PORTS: usize = 32;

/// When the fabric's start may send its first configuration requests, from
/// the ports' links as the board reports them (PCIe Base 6.0 §6.6.1):
/// [`RESET_TO_FIRST_REQUEST_NS`] after the reset, and as long after the
/// latest link seen coming up. A port whose link is down is not waited for:
/// the start finds nothing there. The wait ends
/// [`READINESS_TIMEOUT_NS`] after the reset whatever the links do, by when
/// every device must complete configuration requests (§6.6.1), so a link
/// that keeps going down and up cannot hold the start, and the hosts, up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkSettling {
    /// Per port, when its link was first seen up since it was last seen
    /// down, in timer nanoseconds.
    up_since: [Option<u64>; SETTLING_PORTS],
}

impl LinkSettling {
    /// No link seen yet.
    pub const NEW: LinkSettling = LinkSettling {
        up_since: [None; SETTLING_PORTS],
    };

    /// Takes in the links as seen at `now_ns`: bit p of `up` set while
    /// port p's link is up. A link seen up for the first time (or again
    /// after being seen down) counts as up since `now_ns`, so a board
    /// looked at every few milliseconds waits at most that much longer
    /// than the spec asks, never less.
    pub fn observe(&mut self, now_ns: u64, up: u32) {
        for (port, since) in self.up_since.iter_mut().enumerate() {
            if up >> port & 1 == 0 {
                *since = None;
            } else if since.is_none() {
                *since = Some(now_ns);
            }
        }
    }

    /// The earliest time the start may send configuration requests, the
    /// ports' links having left Conventional Reset at `reset_at_ns`.
    pub fn start_at_ns(&self, reset_at_ns: u64) -> u64 {
        let after_reset = reset_at_ns.saturating_add(RESET_TO_FIRST_REQUEST_NS);
        let after_links = self
            .up_since
            .iter()
            .flatten()
            .map(|since| since.saturating_add(RESET_TO_FIRST_REQUEST_NS))
            .max()
            .unwrap_or(0);
        let latest = reset_at_ns.saturating_add(READINESS_TIMEOUT_NS);
        after_reset.max(after_links.min(latest))
    }
}

impl Default for LinkSettling {
    fn default() -> Self {
        LinkSettling::NEW
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn with_no_link_up_the_start_waits_100_ms_after_the_reset() {
        let mut links = LinkSettling::NEW;
        assert_eq!(links.start_at_ns(0), 100 * MS);
        links.observe(5 * MS, 0);
        assert_eq!(links.start_at_ns(0), 100 * MS);
        assert_eq!(links.start_at_ns(20 * MS), 120 * MS);
    }

    #[test]
    fn a_link_seen_up_is_given_100_ms_from_when_it_was_first_seen() {
        let mut links = LinkSettling::NEW;
        // Up at the first look: 100 ms from that look, not from the reset.
        links.observe(2 * MS, 0b001);
        assert_eq!(links.start_at_ns(0), 102 * MS);
        // Port 2 comes up at 150 ms: the start moves to 250 ms; looking
        // again changes nothing for links already seen up.
        links.observe(150 * MS, 0b101);
        links.observe(160 * MS, 0b101);
        assert_eq!(links.start_at_ns(0), 250 * MS);
    }

    #[test]
    fn a_link_that_went_down_is_not_waited_for_and_coming_back_counts_anew() {
        let mut links = LinkSettling::NEW;
        links.observe(150 * MS, 0b10);
        links.observe(160 * MS, 0b00);
        assert_eq!(links.start_at_ns(0), 100 * MS);
        links.observe(300 * MS, 0b10);
        assert_eq!(links.start_at_ns(0), 400 * MS);
    }

    #[test]
    fn links_coming_up_late_hold_the_start_no_later_than_1_s_after_the_reset() {
        let mut links = LinkSettling::NEW;
        links.observe(950 * MS, 1 << 31);
        assert_eq!(links.start_at_ns(0), 1_000 * MS);
        assert_eq!(links.start_at_ns(10 * MS), 1_010 * MS);
    }
}
