//! The reference experiment of shared/REFERENCE.md, on a simulated weft
//! fabric, and the published figures its results are compared with.
//!
//! The experiment itself is the built-in scenario
//! `sim/scenarios/reference.toml` ([`crate::scenario::REFERENCE`]): two
//! hosts, four switches in a ring, four GPUs and one NVMe drive with
//! SR-IOV. The GPUs start bound to host 1, which measures GPU peer-to-peer
//! bandwidth across the fabric, one way and both ways at once, and latency
//! ([`P2pFigures`](crate::scenario::engine::P2pFigures) defines each
//! figure); two GPUs are then unbound and bound to host 2, which discovers
//! them through hot-plug with its standard drivers and measures the same;
//! host 1 probes where a moved GPU used to be and gets Unsupported Request;
//! finally one NVMe virtual function is bound to each host, and each host
//! writes and reads it back. Checks close the run: each host sees exactly
//! its functions, and no TLP was lost or dropped beyond the probe.

use serde::Serialize;

/// A published GPU peer-to-peer figure (shared/REFERENCE.md), in decimal
/// GB/s and microseconds; `None` where the source gives none.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Published {
    /// Who published it.
    pub source: &'static str,
    /// The configuration it applies to.
    pub setup: &'static str,
    /// Unidirectional bandwidth, GB/s.
    pub unidirectional_gb_s: Option<f64>,
    /// Bidirectional bandwidth (both directions together), GB/s.
    pub bidirectional_gb_s: Option<f64>,
    /// Bandwidth whose direction the source does not state, GB/s.
    pub direction_not_stated_gb_s: Option<f64>,
    /// Latency, µs.
    pub latency_us: Option<f64>,
}

/// The published figures the report compares with (shared/REFERENCE.md).
pub const PUBLISHED: [Published; 3] = [
    Published {
        source: "Switchtec PAX",
        setup: "four PAX fabric switches, two hosts, M40 GPUs, Gen3 x16, CUDA P2P bandwidth test",
        unidirectional_gb_s: Some(12.8),
        bidirectional_gb_s: Some(24.9),
        direction_not_stated_gb_s: None,
        latency_us: None,
    },
    Published {
        source: "Liqid, P2P",
        setup: "GPUs in a Liqid expansion chassis behind a Dell PowerEdge MX7000, P2P inside the chassis",
        unidirectional_gb_s: None,
        bidirectional_gb_s: None,
        direction_not_stated_gb_s: Some(25.01),
        latency_us: Some(3.1),
    },
    Published {
        source: "Liqid, through the CPU",
        setup: "the same chassis without P2P: traffic crosses the server CPU's root complex",
        unidirectional_gb_s: None,
        bidirectional_gb_s: None,
        direction_not_stated_gb_s: Some(8.59),
        latency_us: Some(33.65),
    },
];
