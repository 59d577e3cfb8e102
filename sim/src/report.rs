//! A run's results for people (a table) and for machines (JSON), next to
//! the link model's maximum and the published figures of
//! [`reference`](crate::reference).

use std::time::Duration;

use serde::Serialize;

use weft_pcie::link::{max_payload_throughput, Link, TlpKind};
use weft_pcie::split::PayloadSize;

use crate::reference::{Published, PUBLISHED};
use crate::scenario::engine::{micros, size, Report};
use crate::scenario::Scenario;
use crate::world::{FIRMWARE_LATENCY, SWITCH_LATENCY};

/// What produced a report: the scenario and the simulator's fixed parameters.
#[derive(Serialize)]
pub struct Configuration<'a> {
    /// The scenario run.
    pub scenario: &'a str,
    /// What it says about itself.
    pub description: &'a [String],
    /// A switch's traversal latency, ns.
    pub switch_latency_ns: u64,
    /// The management CPU's answer time for a configuration request, ns.
    pub firmware_latency_ns: u64,
    /// The switch model.
    pub switch_model: &'static str,
    /// How the fabric manager runs.
    pub firmware: &'static str,
}

/// The link model's best payload rate on one link, the ceiling for copies.
#[derive(Serialize)]
pub struct LinkMaximum {
    /// The link.
    pub link: String,
    /// Max_Payload_Size the figure assumes, bytes.
    pub max_payload_size: u16,
    /// One direction, bytes per second (weft-pcie's model, with DLLP and
    /// SKP overhead).
    pub unidirectional_bytes_per_s: f64,
    /// Both directions together: twice one direction.
    pub bidirectional_bytes_per_s: f64,
}

/// The whole `--json` document.
#[derive(Serialize)]
pub struct JsonReport<'a> {
    /// What produced the report.
    pub configuration: Configuration<'a>,
    /// What the run measured.
    pub report: &'a Report,
    /// The link model's maximum on the first GPU copy's link, if any.
    pub link_maximum: Option<LinkMaximum>,
    /// Published figures to compare with.
    pub published: &'a [Published],
    /// Wall-clock time of the run, seconds.
    pub wall_time_s: f64,
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// The link model's maximum on `link` at MPS 256.
pub fn link_maximum(link: Link) -> LinkMaximum {
    let budget = max_payload_throughput(link, PayloadSize::B256, TlpKind::MemWrite64);
    LinkMaximum {
        link: link.to_string(),
        max_payload_size: PayloadSize::B256.bytes(),
        unidirectional_bytes_per_s: budget.with_link_overhead,
        bidirectional_bytes_per_s: 2.0 * budget.with_link_overhead,
    }
}

/// The link GPU A of the first copy sits on: the ceiling for its figures.
fn copy_link(scenario: &Scenario, report: &Report) -> Option<Link> {
    let first = report.p2p.first()?;
    scenario
        .endpoints
        .iter()
        .find(|e| e.name == first.from)
        .map(|e| e.link.link)
}

/// The `--json` document of a run.
pub fn json<'a>(scenario: &'a Scenario, report: &'a Report, wall: Duration) -> JsonReport<'a> {
    JsonReport {
        configuration: Configuration {
            scenario: &scenario.name,
            description: &scenario.description,
            switch_latency_ns: nanos(SWITCH_LATENCY),
            firmware_latency_ns: nanos(FIRMWARE_LATENCY),
            switch_model: "transaction-level (weft-model)",
            firmware: "fabric manager running natively",
        },
        report,
        link_maximum: copy_link(scenario, report).map(link_maximum),
        published: &PUBLISHED,
        wall_time_s: wall.as_secs_f64(),
    }
}

/// What the results table's figures are.
const LEGEND: [&str; 7] = [
    "published figures: shared/REFERENCE.md; Switchtec PAX: four PAX switches, Gen3 x16;",
    "Liqid: a PCIe expansion chassis behind a Dell PowerEdge MX7000",
    "uni: GPU A -> B, doorbell to MSI; bi: A -> B and B -> A at once, both directions' bytes",
    "over the time from the first doorbell to the last MSI",
    "round trip: from GPU A's read request leaving A to its completion arriving back, on A's",
    "clock (the host model answers reads of its memory at once: no DRAM or root-complex",
    "latency)",
];

/// A GB/s cell: two decimals, or a dash.
fn gb(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

/// The lines printed before a run: the scenario's title and description.
pub fn heading(scenario: &Scenario) -> String {
    let mut out = format!("weft-sim: {}\n", scenario.title);
    for line in &scenario.description {
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// The human report: steps, GPU figures next to the link maximum and the
/// published figures, wall time, device trees.
pub fn table(scenario: &Scenario, report: &Report, wall: Duration) -> String {
    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(format!("{:>12}  {:<52} result", "sim time", "step"));
    for step in &report.steps {
        line(format!(
            "{:>9.3} ms  {:<52} {}",
            step.at.as_secs_f64() * 1e3,
            step.what,
            step.outcome
        ));
    }
    line(String::new());
    if let (Some(first), Some(link)) = (report.p2p.first(), copy_link(scenario, report)) {
        let through: u64 = report.p2p.iter().map(|f| f.bytes_through_hosts).sum();
        line(format!(
            "GPU peer-to-peer, {} per copy and direction ({through} bytes of it crossed a host port); GB/s = 1e9 B/s",
            size(first.copy_bytes)
        ));
        let mut row = |name: &str, uni: String, bi: String, latency: String, note: &str| {
            line(format!(
                "  {name:<38} {uni:>8} {bi:>8} {latency:>10}  {note}"
            ));
        };
        row(
            "",
            "uni GB/s".into(),
            "bi GB/s".into(),
            "latency".into(),
            "latency is",
        );
        for figures in &report.p2p {
            row(
                &format!("weft (simulated), {}", figures.host),
                gb(Some(figures.unidirectional / 1e9)),
                gb(Some(figures.bidirectional / 1e9)),
                micros(figures.peer_read),
                &format!("{} B peer read, round trip", figures.latency_bytes),
            );
        }
        for figures in &report.p2p {
            row(
                &format!("  the same through {}'s memory", figures.host),
                "-".into(),
                "-".into(),
                micros(figures.host_read),
                &format!(
                    "{} B read of host memory, round trip",
                    figures.latency_bytes
                ),
            );
        }
        let maximum = link_maximum(link);
        row(
            &format!("link model maximum, MPS {}", maximum.max_payload_size),
            gb(Some(maximum.unidirectional_bytes_per_s / 1e9)),
            gb(Some(maximum.bidirectional_bytes_per_s / 1e9)),
            "-".into(),
            "weft-pcie, with DLLP/SKP overhead; bi = 2 x uni",
        );
        for published in &PUBLISHED {
            let note = match published.direction_not_stated_gb_s {
                Some(rate) => format!("{rate:.2} GB/s, direction not stated"),
                None => String::new(),
            };
            row(
                &format!("{}, published", published.source),
                gb(published.unidirectional_gb_s),
                gb(published.bidirectional_gb_s),
                published
                    .latency_us
                    .map_or_else(|| "-".into(), |us| format!("{us:.2} µs")),
                &note,
            );
        }
        for legend in LEGEND {
            line(format!("  {legend}"));
        }
        for figures in &report.p2p {
            line(format!(
                "  {}: {} B peer write, doorbell to MSI (host to GPU and back included): {}",
                figures.host,
                figures.latency_bytes,
                micros(figures.peer_write)
            ));
        }
        line(String::new());
    }
    line(format!(
        "{} checks passed; {} TLPs delivered",
        report.checks_passed, report.tlps_delivered
    ));
    line(format!("wall time {:.2} s", wall.as_secs_f64()));
    for (name, rtl) in &report.rtl {
        let agreed = match &rtl.first_disagreement {
            None => "each as the model did".to_owned(),
            Some(first) => format!("{} unlike the model, first: {first}", rtl.disagreements),
        };
        // The RTL's timer runs only while it carries (crate::rtl_plane).
        let timeouts = match rtl.timeouts {
            0 => String::new(),
            n => format!(
                "; not compared: the model's {n} completion timeouts and the {} TLPs after the first",
                rtl.not_compared
            ),
        };
        let injected = match rtl.injected {
            0 => String::new(),
            n => format!(" and its injector sent {n} the CPU injected"),
        };
        line(format!(
            "{name}: the RTL ({}) carried {} TLPs{injected} in {} cycles ({:.0} cycles/s, {:.1} s), {agreed}{timeouts}",
            rtl.simulator,
            rtl.tlps,
            rtl.cycles,
            rtl.cycles as f64 / rtl.wall.as_secs_f64().max(1e-9),
            rtl.wall.as_secs_f64()
        ));
    }
    for (name, tree) in &report.trees {
        line(String::new());
        line(format!("{name}: lspci -tv"));
        for row in tree.lines() {
            line(row.to_string());
        }
    }
    out
}
