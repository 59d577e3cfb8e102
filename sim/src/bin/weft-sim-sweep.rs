//! `weft-sim-sweep`: how fast the simulator runs, and how its wall time
//! grows with the fabric.
//!
//! Measures the built-in reference scenario (wall time, simulated TLPs per
//! wall second), then scenarios generated here with more switches and more
//! endpoints on the transaction-level switch model. Last, the RTL data
//! plane: the shipped `scenarios/rtl_switch.toml` (one GPU behind a switch
//! the RTL carries) run as written and again with the model carrying that
//! switch, and from the RTL's measured rate an estimate of the reference
//! scenario with the RTL on every switch. `--reference-verilated` also
//! runs that: the reference scenario with every switch Verilated (about
//! an hour on 2 CPUs). Prints a table, or with `--json` the same figures
//! with the configuration that produced them.
//!
//! The fabric manager's fixed capacities bound the sweep: at most
//! `weft_fabric::limits::MAX_SWITCHES` switches of
//! `weft_regs::capacity::PORTS` ports each, `MAX_HOST_PORTS` hosts with
//! `MAX_SLOTS_PER_HOST` slots each, `MAX_FUNCTIONS` functions. Generated
//! fabrics stay inside them.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use serde::Serialize;

use weft_fabric::limits::{MAX_FUNCTIONS, MAX_SLOTS_PER_HOST, MAX_SWITCHES};
use weft_regs::capacity::PORTS;
use weft_sim::rtl_plane::RtlSimulator;
use weft_sim::scenario::engine::{run, Report};
use weft_sim::scenario::format::DataPlaneKind;
use weft_sim::scenario::validate::Action;
use weft_sim::scenario::Scenario;

/// Hosts of a generated fabric, on ports 0 and 1 of switch 0.
const HOSTS: usize = 2;
/// Ports of each switch that carry the ring: 6 out to the next switch, 7 in.
const RING_PORTS: [usize; 2] = [6, 7];
/// Bytes of the one GPU copy each generated scenario makes.
const COPY_BYTES: u64 = 1 << 20;

/// One measured run.
#[derive(Serialize)]
struct Row {
    /// The scenario.
    scenario: String,
    /// What carries the TLPs of switches marked `data_plane = "rtl"`.
    data_plane: &'static str,
    /// Switches in the fabric.
    switches: usize,
    /// Endpoints in the fabric: functions a host can be given, each VF
    /// the fabric enables counted as one.
    endpoints: usize,
    /// Endpoints bound to hosts (the rest are only enumerated).
    bound: usize,
    /// Wall-clock time of the whole run, seconds.
    wall_s: f64,
    /// CPU time the process got during the run, seconds (from Linux's
    /// /proc/self/stat, in 10 ms ticks; steadier than wall time on a
    /// shared machine), if known.
    cpu_s: Option<f64>,
    /// Simulated time at the end, seconds.
    simulated_s: f64,
    /// TLPs the links delivered.
    tlps: u64,
    /// TLPs delivered per wall-clock second.
    tlps_per_wall_s: f64,
}

/// The whole `--json` document.
#[derive(Serialize)]
struct Document {
    /// What was varied and what was fixed.
    configuration: Configuration,
    /// The runs, the reference scenario first.
    runs: Vec<Row>,
    /// The RTL data plane's rate in each simulator and what it means for
    /// the reference.
    rtl: Vec<RtlRate>,
}

/// How fast the RTL data plane carried the RTL scenario's switch.
#[derive(Serialize)]
struct RtlRate {
    /// What simulated the RTL: "rust-hdl" or "verilator".
    simulator: &'static str,
    /// TLPs the RTL carried.
    tlps: u64,
    /// Clock cycles it ran.
    cycles: u64,
    /// Wall time spent clocking it, seconds.
    wall_s: f64,
    /// Cycles per wall second.
    cycles_per_s: f64,
    /// TLPs the RTL carried per wall second.
    tlps_per_s: f64,
    /// TLPs the reference scenario's switches took in from their links
    /// (from the reference run above; the native manager's own register
    /// accesses reach the switches without crossing a link and are not
    /// among them).
    reference_switch_tlps: u64,
    /// Estimated RTL time of the reference scenario with every switch on
    /// the RTL in this simulator, seconds: its switch TLPs at the measured
    /// rate, summed over the switches (each switch's RTL runs on a thread
    /// of its own, so the wall time is less where there are CPUs for them).
    reference_estimate_s: f64,
}

/// The shipped scenario with one switch on the RTL data plane.
const RTL_SCENARIO: &str = include_str!("../../scenarios/rtl_switch.toml");

/// What every generated scenario shares.
#[derive(Serialize)]
struct Configuration {
    /// The switch model.
    switch_model: &'static str,
    /// Hosts of a generated fabric.
    hosts: usize,
    /// Bytes of its GPU copy.
    copy_bytes: u64,
    /// The fabric manager's switch capacity.
    max_switches: usize,
    /// Ports of each switch.
    ports_per_switch: usize,
    /// How the fabrics are generated.
    generated: &'static str,
}

/// Endpoint ports of switch `switch`: all but the hosts' and the ring's.
fn endpoint_ports(switch: usize, switches: usize) -> Vec<usize> {
    (0..PORTS)
        .filter(|p| !(switch == 0 && *p < HOSTS))
        .filter(|p| switches == 1 || !RING_PORTS.contains(p))
        .collect()
}

/// Endpoint ports of a generated fabric of `switches` switches.
fn endpoint_port_count(switches: usize) -> usize {
    (0..switches)
        .map(|s| endpoint_ports(s, switches).len())
        .sum()
}

/// Virtual functions each NVMe drive of a generated fabric enables: a drive
/// on one port is `1 + NVME_VFS` endpoints.
const NVME_VFS: usize = 7;

/// The most endpoints a generated fabric of `switches` switches holds: a
/// drive with its VFs on every endpoint port, within the manager's
/// function capacity.
fn capacity(switches: usize) -> usize {
    (endpoint_port_count(switches) * (1 + NVME_VFS)).min(MAX_FUNCTIONS)
}

/// How many of `endpoints` endpoints on `ports` endpoint ports are NVMe
/// drives with [`NVME_VFS`] VFs each: none while every endpoint has a port
/// of its own, else the fewest that fit the rest onto the ports as GPUs.
fn nvme_drives(endpoints: usize, ports: usize) -> usize {
    endpoints.saturating_sub(ports).div_ceil(NVME_VFS)
}

/// A scenario of `switches` switches in a ring (a single link for two),
/// two hosts on switch 0 and `endpoints` endpoints spread over the
/// switches, the first on switch 1: GPUs, and where there are more
/// endpoints than ports, NVMe drives whose VFs make up the rest (placed
/// after the GPUs). As many GPUs as the hosts have slots are bound (host 1
/// first), both hosts boot, host 1 copies between its first two GPUs, and
/// the bindings and traffic are checked.
fn generated(switches: usize, endpoints: usize) -> (String, usize) {
    let drives = nvme_drives(endpoints, endpoint_port_count(switches));
    let gpus = endpoints - drives * (1 + NVME_VFS);
    let mut text =
        format!("[scenario]\nname = \"sweep-{switches}x{endpoints}\"\ntitle = \"generated\"\n\n");
    if drives > 0 {
        text += &format!("[fabric]\nnum_vfs = {NVME_VFS}\n\n");
    }
    for s in 0..switches {
        text += &format!(
            "[[switch]]\nname = \"s{s}\"\nid = {}\nports = {PORTS}\n",
            0x100 + s
        );
    }
    for h in 0..HOSTS {
        text += &format!("[[host]]\nname = \"host{h}\"\nslots = {MAX_SLOTS_PER_HOST}\n");
        text += &format!("[[link]]\nends = [\"host{h}\", \"s0.{h}\"]\n");
    }
    let links = match switches {
        1 => 0,
        2 => 1,
        n => n,
    };
    for s in 0..links {
        text += &format!(
            "[[link]]\nends = [\"s{s}.{}\", \"s{}.{}\"]\n",
            RING_PORTS[0],
            (s + 1) % switches,
            RING_PORTS[1]
        );
    }
    let mut free: Vec<Vec<usize>> = (0..switches).map(|s| endpoint_ports(s, switches)).collect();
    for e in 0..gpus + drives {
        // Round-robin from switch 1, so the copy crosses the fabric.
        let mut switch = (e + 1) % switches;
        while free[switch].is_empty() {
            switch = (switch + 1) % switches;
        }
        let port = free[switch].remove(0);
        let name = if e < gpus {
            text += &format!("[[endpoint]]\nname = \"gpu{e}\"\nkind = \"gpu\"\n");
            format!("gpu{e}")
        } else {
            let d = e - gpus;
            text +=
                &format!("[[endpoint]]\nname = \"nvme{d}\"\nkind = \"nvme\"\nvfs = {NVME_VFS}\n");
            format!("nvme{d}")
        };
        text += &format!("[[link]]\nends = [\"{name}\", \"s{switch}.{port}\"]\n");
    }
    text += "[[step]]\ndo = \"enumerate\"\n";
    let bound = gpus.min(HOSTS * MAX_SLOTS_PER_HOST);
    for h in 0..HOSTS {
        let mine: Vec<String> = (h * MAX_SLOTS_PER_HOST..bound.min((h + 1) * MAX_SLOTS_PER_HOST))
            .map(|e| format!("\"gpu{e}\""))
            .collect();
        if !mine.is_empty() {
            text += &format!(
                "[[step]]\ndo = \"bind\"\nhost = \"host{h}\"\nendpoints = [{}]\n",
                mine.join(", ")
            );
        }
    }
    text += "[[step]]\ndo = \"boot\"\nhosts = [\"host0\", \"host1\"]\n";
    if bound >= 2 {
        text += &format!(
            "[[step]]\ndo = \"p2p\"\nhost = \"host0\"\nfrom = \"gpu0\"\nto = \"gpu1\"\n\
             copy_bytes = {COPY_BYTES}\nlatency_bytes = 64\n"
        );
    }
    text += "[[step]]\ndo = \"check_bindings\"\n[[step]]\ndo = \"check_traffic\"\n";
    (text, bound)
}

/// CPU time (user and system) this process has had, seconds, where Linux
/// tells it: fields 14 and 15 of /proc/self/stat, in USER_HZ ticks (100 per
/// second in Linux's user ABI).
fn process_cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces; the fields after it start at 3.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some((user + system) as f64 / 100.0)
}

/// Runs `scenario` and measures it.
fn measure(scenario: &Scenario, switches: usize, bound: usize) -> Result<(Row, Report), String> {
    let cpu_before = process_cpu_s();
    let started = Instant::now();
    let report = run(scenario, &mut |_| {}).map_err(|e| format!("{}: {e}", scenario.name))?;
    let wall = started.elapsed().as_secs_f64();
    let cpu = process_cpu_s()
        .zip(cpu_before)
        .map(|(after, before)| after - before);
    let simulated = report.steps.last().map_or(0.0, |s| s.at.as_secs_f64());
    let row = Row {
        scenario: scenario.name.clone(),
        data_plane: plane_name(scenario),
        switches,
        endpoints: scenario
            .endpoints
            .iter()
            .map(|e| 1 + usize::from(e.model.total_vfs().min(scenario.fabric.num_vfs)))
            .sum(),
        bound,
        wall_s: wall,
        cpu_s: cpu,
        simulated_s: simulated,
        tlps: report.tlps_delivered,
        tlps_per_wall_s: report.tlps_delivered as f64 / wall,
    };
    Ok((row, report))
}

/// What carries the TLPs of `scenario`'s switches that are not on the
/// model: "model" if none is.
fn plane_name(scenario: &Scenario) -> &'static str {
    let kinds: BTreeSet<&'static str> = scenario
        .switches
        .iter()
        .filter(|s| s.data_plane != DataPlaneKind::Model)
        .map(|s| s.data_plane.name())
        .collect();
    match kinds.len() {
        0 => "model",
        1 => kinds.into_iter().next().unwrap_or("model"),
        _ => "mixed",
    }
}

/// Binds in `scenario`'s steps: how many endpoints it gives to hosts.
fn bound_endpoints(scenario: &Scenario) -> usize {
    let mut bound = BTreeSet::new();
    for step in &scenario.steps {
        if let Action::Bind { targets, .. } = &step.action {
            bound.extend(targets.iter().copied());
        }
    }
    bound.len()
}

/// Runs the sweep; with `reference_verilated`, the reference scenario on
/// Verilated switches too (its row second).
fn sweep(reference_verilated: bool) -> Result<(Vec<Row>, Vec<RtlRate>), String> {
    let reference = Scenario::reference();
    let (row, reference_report) = measure(
        &reference,
        reference.switches.len(),
        bound_endpoints(&reference),
    )?;
    let mut rows = vec![row];
    if reference_verilated {
        let verilated = reference.on_data_plane(DataPlaneKind::Verilated);
        let (row, report) = measure(
            &verilated,
            verilated.switches.len(),
            bound_endpoints(&verilated),
        )?;
        if let Some((switch, rtl)) = report.rtl.iter().find(|(_, rtl)| rtl.disagreements > 0) {
            return Err(format!(
                "the reference on Verilated switches: {switch} did otherwise than the model: {}",
                rtl.first_disagreement.as_deref().unwrap_or("")
            ));
        }
        rows.push(row);
    }
    let mut shapes: Vec<(usize, usize)> = (1..=MAX_SWITCHES).map(|s| (s, 4)).collect();
    let most = capacity(MAX_SWITCHES);
    let mut endpoints = 2;
    while endpoints < most {
        if !shapes.contains(&(MAX_SWITCHES, endpoints)) {
            shapes.push((MAX_SWITCHES, endpoints));
        }
        endpoints *= 2;
    }
    shapes.push((MAX_SWITCHES, most));
    for (switches, endpoints) in shapes {
        let (text, bound) = generated(switches, endpoints);
        let scenario = Scenario::parse(&text, "generated", Path::new("."))
            .map_err(|e| format!("generated scenario {switches}x{endpoints}: {e}"))?;
        rows.push(measure(&scenario, switches, bound)?.0);
    }
    let on_rtl = Scenario::parse(RTL_SCENARIO, "rtl_switch.toml", Path::new("."))
        .map_err(|e| format!("rtl_switch.toml: {e}"))?;
    let on_model = on_rtl.on_data_plane(DataPlaneKind::Model);
    rows.push(
        measure(
            &on_model,
            on_model.switches.len(),
            bound_endpoints(&on_model),
        )?
        .0,
    );
    let mut on_verilator = on_rtl.clone();
    for switch in &mut on_verilator.switches {
        if switch.data_plane == DataPlaneKind::Rtl {
            switch.data_plane = DataPlaneKind::Verilated;
        }
    }
    let mut rates = Vec::new();
    for (simulator, scenario) in [
        (RtlSimulator::RustHdl, &on_rtl),
        (RtlSimulator::Verilator, &on_verilator),
    ] {
        let (row, report) = measure(scenario, scenario.switches.len(), bound_endpoints(scenario))?;
        rows.push(row);
        rates.push(rtl_rate(
            simulator.name(),
            &report,
            reference_report.switch_tlps,
        ));
    }
    Ok((rows, rates))
}

/// The RTL's rate in `report`, run with `simulator`, and the reference
/// scenario's wall time estimated from it for its `reference_switch_tlps`.
fn rtl_rate(simulator: &'static str, report: &Report, reference_switch_tlps: u64) -> RtlRate {
    let (tlps, cycles, wall) = report.rtl.iter().fold((0, 0, 0.0), |(t, c, w), (_, rtl)| {
        (t + rtl.tlps, c + rtl.cycles, w + rtl.wall.as_secs_f64())
    });
    let tlps_per_s = tlps as f64 / f64::max(wall, 1e-9);
    RtlRate {
        simulator,
        tlps,
        cycles,
        wall_s: wall,
        cycles_per_s: cycles as f64 / f64::max(wall, 1e-9),
        tlps_per_s,
        reference_switch_tlps,
        reference_estimate_s: reference_switch_tlps as f64 / tlps_per_s.max(1e-9),
    }
}

fn main() -> ExitCode {
    let (mut json, mut reference_verilated) = (false, false);
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--json" => json = true,
            "--reference-verilated" => reference_verilated = true,
            other => {
                eprintln!(
                    "usage: weft-sim-sweep [--json] [--reference-verilated]\nunknown argument {other}"
                );
                return ExitCode::from(2);
            }
        }
    }
    let (rows, rtl) = match sweep(reference_verilated) {
        Ok(measured) => measured,
        Err(why) => {
            eprintln!("weft-sim-sweep: {why}");
            return ExitCode::FAILURE;
        }
    };
    if json {
        let document = Document {
            configuration: Configuration {
                switch_model: "transaction-level (weft-model)",
                hosts: HOSTS,
                copy_bytes: COPY_BYTES,
                max_switches: MAX_SWITCHES,
                ports_per_switch: PORTS,
                generated: "ring of switches, hosts on s0, GPUs round-robin from s1, then \
                            NVMe drives with 7 VFs where endpoints outnumber ports; \
                            bind, boot, one copy, check bindings and traffic",
            },
            runs: rows,
            rtl,
        };
        return match serde_json::to_string_pretty(&document) {
            Ok(text) => {
                println!("{text}");
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("weft-sim-sweep: {err}");
                ExitCode::FAILURE
            }
        };
    }
    println!(
        "{:<16} {:>9} {:>8} {:>9} {:>5} {:>8} {:>7} {:>9} {:>10} {:>12}",
        "scenario",
        "plane",
        "switches",
        "endpoints",
        "bound",
        "wall s",
        "cpu s",
        "sim ms",
        "TLPs",
        "TLPs/wall s"
    );
    for row in &rows {
        println!(
            "{:<16} {:>9} {:>8} {:>9} {:>5} {:>8.2} {:>7} {:>9.3} {:>10} {:>12.0}",
            row.scenario,
            row.data_plane,
            row.switches,
            row.endpoints,
            row.bound,
            row.wall_s,
            row.cpu_s.map_or_else(|| "-".into(), |s| format!("{s:.2}")),
            row.simulated_s * 1e3,
            row.tlps,
            row.tlps_per_wall_s
        );
    }
    println!(
        "transaction-level switch model; generated fabrics: a ring of switches, {HOSTS} hosts on s0, \
         {} MiB GPU copy; at most {MAX_SWITCHES} switches of {PORTS} ports (the fabric manager's capacities)",
        COPY_BYTES >> 20
    );
    for rate in &rtl {
        println!(
            "RTL data plane in {} (weft-hdl SwitchTop, {} cycles in {:.1} s): {:.0} cycles/s, \
             {:.1} TLPs/s; the reference scenario's {} switch TLPs would take about {:.1} h \
             of RTL time with every switch on it (estimated from that rate; each switch's \
             RTL runs on a thread of its own, so spread over the CPUs there are)",
            rate.simulator,
            rate.cycles,
            rate.wall_s,
            rate.cycles_per_s,
            rate.tlps_per_s,
            rate.reference_switch_tlps,
            rate.reference_estimate_s / 3600.0
        );
    }
    ExitCode::SUCCESS
}
