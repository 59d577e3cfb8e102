//! Runs a scenario's timeline on its [`World`] and reports what each step
//! showed, in simulated time.
//!
//! Each action does what a user of the real fabric would do, through the
//! same interfaces: the fabric manager binds and unbinds; a booted host
//! then receives the slot interrupt and its hot-plug driver handles it;
//! drivers move data. Checks look at the result from outside — a host's
//! device tree, the manager's bindings, the switches' counters — and fail
//! the run with the step's line when it is not what the file expects.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use serde::{Serialize, Serializer};

use weft_fabric::binding::{UnbindMode, Unbinding};
use weft_fabric::inventory::{Bridge, BridgeKind, FunctionKind, SwitchIndex};
use weft_pcie::tlp::CompletionStatus;
use weft_pcie::Bdf;
use weft_regs::tables::{HostIndex, PortIndex};

use super::build;
use super::format::ReadSpace;
use super::validate::{Action, EndpointModel, EndpointPlan, Step as PlannedStep, Target};
use super::Scenario;
use crate::host::access::{ConfigAccessError, MemoryAccessError};
use crate::host::gpu::GpuError;
use crate::host::{Host, Location};
use crate::iss_board::{IssBoard, CPU_CLOCK_HZ};
use crate::rtl_plane::RtlSummary;
use crate::waveform::{Waveform, WaveformError};
use crate::wiring::Place;
use crate::world::World;
use weft_devices::gpu::regs as gpu_regs;

/// Long enough for the firmware's MSI to cross the switch and its link.
pub const INTERRUPT_DELIVERY: Duration = Duration::from_micros(50);

/// Host-port traffic of starting and finishing one copy: the completions
/// of the status and timer reads, and the MSI — a few hundred bytes.
const CONTROL_BYTES: u64 = 4096;

/// A step failed: which one, and why.
#[derive(Debug)]
pub struct RunError {
    /// The step's line in the scenario file (0: building the fabric).
    pub line: usize,
    /// The step's description.
    pub step: String,
    /// Why.
    pub why: String,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.step, self.why)
        } else {
            write!(
                f,
                "step on line {} ({}): {}",
                self.line, self.step, self.why
            )
        }
    }
}

impl std::error::Error for RunError {}

/// Serializes a duration as whole nanoseconds.
fn nanos<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX))
}

/// One noted result of the run.
#[derive(Clone, Debug, Serialize)]
pub struct Note {
    /// What was done.
    pub what: String,
    /// What it showed.
    pub outcome: String,
    /// Simulated time when it ended.
    #[serde(rename = "at_ns", serialize_with = "nanos")]
    pub at: Duration,
}

/// GPU peer-to-peer figures measured on one host between GPU A and GPU B.
///
/// - Unidirectional: A copies `copy_bytes` from its memory into B's memory
///   BAR; bytes over the time from the CPU writing the doorbell to the CPU
///   seeing the completion MSI.
/// - Bidirectional: A → B and B → A started back to back and running at
///   once; total bytes (both directions) over the time from the first
///   doorbell until the MSIs of both copies have arrived.
/// - Peer read round trip (the P2P latency figure): A's engine reads
///   `latency_bytes` from B's memory BAR; the time from A's read request
///   leaving A to its completion arriving back at A, on A's own clock (its
///   DMA_ELAPSED_NS register).
/// - Host read round trip (the same path through a host, for comparison
///   with a copy through the CPU): A's engine reads as many bytes of the
///   host's memory, timed the same way.
/// - Peer write, doorbell to MSI: A writes as many bytes into B's memory
///   BAR; the time from the CPU writing the doorbell to the CPU seeing the
///   completion MSI, so it includes the host–GPU path both ways.
#[derive(Clone, Debug, Default, Serialize)]
pub struct P2pFigures {
    /// The host measuring.
    pub host: String,
    /// GPU A.
    pub from: String,
    /// GPU B.
    pub to: String,
    /// Bytes per copy and direction.
    pub copy_bytes: u64,
    /// Bytes of the latency transfers.
    pub latency_bytes: u64,
    /// Unidirectional A → B copy, bytes per second.
    #[serde(rename = "unidirectional_bytes_per_s")]
    pub unidirectional: f64,
    /// A → B and B → A at once, total bytes per second.
    #[serde(rename = "bidirectional_bytes_per_s")]
    pub bidirectional: f64,
    /// Peer read round trip on A's clock.
    #[serde(rename = "peer_read_round_trip_ns", serialize_with = "nanos")]
    pub peer_read: Duration,
    /// Read of host memory, round trip on A's clock.
    #[serde(rename = "host_read_round_trip_ns", serialize_with = "nanos")]
    pub host_read: Duration,
    /// Small peer write, doorbell to MSI as the CPU sees it.
    #[serde(rename = "peer_write_doorbell_to_msi_ns", serialize_with = "nanos")]
    pub peer_write: Duration,
    /// Bytes that left a host port during the bandwidth runs beyond a few
    /// control TLPs: none, when peer-to-peer stays inside the fabric.
    pub bytes_through_hosts: u64,
}

/// A host CPU's read of a function's first memory BAR or first
/// configuration DW (a `read` step): the completion it got and when, as
/// the CPU saw it.
#[derive(Clone, Debug, Serialize)]
pub struct ReadFigures {
    /// The host reading.
    pub host: String,
    /// The function read.
    pub endpoint: String,
    /// The space read: `"memory"` or `"configuration"`.
    pub space: &'static str,
    /// The address read: in the host's memory space, or the byte offset
    /// in the function's configuration space.
    pub address: u64,
    /// The completion's status, as its name in PCIe Base 6.0 §2.2.9.1.
    pub status: String,
    /// From the read leaving the CPU to its completion arriving there.
    #[serde(rename = "elapsed_ns", serialize_with = "nanos")]
    pub elapsed: Duration,
}

/// The name PCIe Base 6.0 §2.2.9.1 (Table 2-37) gives `status`.
pub fn status_name(status: CompletionStatus) -> &'static str {
    match status {
        CompletionStatus::Successful => "Successful Completion",
        CompletionStatus::UnsupportedRequest => "Unsupported Request",
        CompletionStatus::RequestRetry => "Request Retry Status",
        CompletionStatus::CompleterAbort => "Completer Abort",
    }
}

/// Everything a run measured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// The scenario's name.
    pub scenario: String,
    /// What each step showed, in order.
    pub steps: Vec<Note>,
    /// GPU peer-to-peer figures, one per `p2p` step.
    pub p2p: Vec<P2pFigures>,
    /// What each `read` step's read got, in order.
    pub reads: Vec<ReadFigures>,
    /// Checks that passed (`sees`, `check_bindings`, `check_traffic`,
    /// `probe`, `nvme`, `read`).
    pub checks_passed: usize,
    /// TLPs the links delivered over the run.
    pub tlps_delivered: u64,
    /// TLPs the switches took in over the run, once at every switch crossed.
    pub switch_tlps: u64,
    /// Each host's device tree at the end, as `lspci -tv` would print it.
    pub trees: Vec<(String, String)>,
    /// What each switch with an RTL data plane did, by switch name.
    pub rtl: Vec<(String, RtlSummary)>,
}

/// What the progress display is told when a step starts.
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// The step's index, from 0.
    pub index: usize,
    /// Steps in the timeline.
    pub total: usize,
    /// The step's description.
    pub what: &'a str,
}

/// A scenario's world and the run's state.
pub struct Engine<'s> {
    scenario: &'s Scenario,
    world: World,
    booted: Vec<bool>,
    /// The BAR address each host last had for each function it saw.
    addresses: BTreeMap<(usize, Target), u64>,
    /// Requests the isolation probes made that a switch answered with UR.
    probes: u64,
    /// Per host, the isolation probes its root complex answered with UR:
    /// a GPU's read that, outside its owner's peer windows, is DMA into
    /// its own host where nothing is.
    probes_rejected_by_hosts: Vec<u64>,
    report: Report,
}

fn failed(step: &PlannedStep, what: &str, why: impl Into<String>) -> RunError {
    RunError {
        line: step.line,
        step: what.to_string(),
        why: why.into(),
    }
}

/// `n` and `thing`, plural unless `n` is 1.
fn count(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// `bytes` in MiB or KiB, whichever is whole.
pub fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

/// `duration` in microseconds, with two decimals and the unit.
pub fn micros(duration: Duration) -> String {
    format!("{:.2} µs", duration.as_secs_f64() * 1e6)
}

/// Runs the whole of `scenario`, telling `progress` as each step starts.
pub fn run(
    scenario: &Scenario,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Report, RunError> {
    let mut engine = Engine::new(scenario)?;
    engine.run_steps(progress)?;
    Ok(engine.finish())
}

impl<'s> Engine<'s> {
    /// The scenario's fabric, built, before any step.
    pub fn new(scenario: &'s Scenario) -> Result<Self, RunError> {
        let world = build::world(scenario).map_err(|err| RunError {
            line: 0,
            step: "build the fabric".into(),
            why: err.to_string(),
        })?;
        Ok(Engine {
            scenario,
            world,
            booted: vec![false; scenario.hosts.len()],
            addresses: BTreeMap::new(),
            probes: 0,
            probes_rejected_by_hosts: vec![0; scenario.hosts.len()],
            report: Report {
                scenario: scenario.name.clone(),
                ..Report::default()
            },
        })
    }

    /// Runs every step of the timeline in order, telling `progress` as each starts.
    pub fn run_steps(&mut self, progress: &mut dyn FnMut(Progress<'_>)) -> Result<(), RunError> {
        let total = self.scenario.steps.len();
        for index in 0..total {
            let what = self.describe(&self.scenario.steps[index]);
            progress(Progress {
                index,
                total,
                what: &what,
            });
            self.run_step(index)?;
        }
        Ok(())
    }

    /// Records the ports of `waveform`'s switches while the steps run
    /// ([`World::record_waveform`]).
    pub fn record_waveform(&mut self, waveform: Waveform) {
        self.world.record_waveform(waveform);
    }

    /// Writes the rest of the waveform being recorded, if one is, and
    /// returns the TLPs it recorded ([`World::finish_waveform`]).
    pub fn finish_waveform(&mut self) -> Option<Result<u64, WaveformError>> {
        self.world.finish_waveform()
    }

    /// The simulated fabric.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// What the steps run so far showed (the trees and totals come with
    /// [`Engine::finish`]).
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The simulated fabric, to keep running after the timeline.
    pub fn into_world(self) -> World {
        self.world
    }

    /// The report with each host's device tree, at the end of the run.
    pub fn finish(mut self) -> Report {
        for (index, host) in self.scenario.hosts.iter().enumerate() {
            let place = self.scenario.hosts[index].place;
            let tree = self
                .world
                .with_host(place, |host, _| host.tree().lspci_tree());
            self.report.trees.push((host.name.clone(), tree));
        }
        self.report.tlps_delivered = self.world.tlps_delivered();
        self.report.switch_tlps = self.world.tlps_forwarded();
        for (plan, switch) in self.scenario.switches.iter().zip(self.world.switches()) {
            if let Some(summary) = switch.rtl_summary() {
                self.report.rtl.push((plan.name.clone(), summary));
            }
        }
        self.report
    }

    /// How the report names `target`: the endpoint's name, `.vfN` for a VF.
    fn name(&self, target: Target) -> String {
        let endpoint = &self.scenario.endpoints[target.endpoint].name;
        match target.vf {
            Some(vf) => format!("{endpoint}.vf{vf}"),
            None => endpoint.clone(),
        }
    }

    fn names(&self, targets: &[Target]) -> String {
        targets
            .iter()
            .map(|t| self.name(*t))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn host_name(&self, host: usize) -> &str {
        &self.scenario.hosts[host].name
    }

    /// The report's description of `step`: its label, or one made from the action.
    pub fn describe(&self, step: &PlannedStep) -> String {
        if let Some(label) = &step.label {
            return label.clone();
        }
        match &step.action {
            Action::Enumerate => "fabric manager enumerates the fabric".into(),
            Action::Boot { hosts } => format!(
                "{} boot and enumerate",
                hosts
                    .iter()
                    .map(|h| self.host_name(*h))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Action::Bind { targets, host, .. } => {
                format!("bind {} to {}", self.names(targets), self.host_name(*host))
            }
            Action::Unbind { targets, .. } => format!("unbind {}", self.names(targets)),
            Action::P2p { host, from, to, .. } => format!(
                "{}: GPU peer-to-peer {} <-> {}",
                self.host_name(*host),
                self.scenario.endpoints[*from].name,
                self.scenario.endpoints[*to].name
            ),
            Action::Nvme {
                host,
                target,
                bytes,
            } => format!(
                "{}: NVMe write + read of {} on {}",
                self.host_name(*host),
                size(*bytes),
                self.name(*target)
            ),
            Action::Sees { host, targets } => format!(
                "{} sees exactly {}",
                self.host_name(*host),
                if targets.is_empty() {
                    "nothing".into()
                } else {
                    self.names(targets)
                }
            ),
            Action::Hang {
                endpoints,
                after_config_requests,
            } => {
                let names: Vec<&str> = endpoints
                    .iter()
                    .map(|e| self.scenario.endpoints[*e].name.as_str())
                    .collect();
                let verb = if names.len() == 1 { "hangs" } else { "hang" };
                let after = after_config_requests.map_or(String::new(), |requests| {
                    format!(
                        " after {}",
                        count(requests as usize, "configuration request")
                    )
                });
                format!("{} {verb}{after}", names.join(", "))
            }
            Action::Read { host, target, .. } => {
                format!("{} reads {}", self.host_name(*host), self.name(*target))
            }
            Action::CheckBindings => "every bound function visible to its host only".into(),
            Action::CheckTraffic => "no TLP lost, dropped or unexpected".into(),
            Action::Probe {
                host,
                target,
                by: None,
            } => format!(
                "{} probes {}, bound elsewhere",
                self.host_name(*host),
                self.name(*target)
            ),
            Action::Probe {
                host,
                target,
                by: Some(gpu),
            } => format!(
                "{} has {} read {}, bound elsewhere",
                self.host_name(*host),
                self.scenario.endpoints[*gpu].name,
                self.name(*target)
            ),
        }
    }

    fn note(&mut self, what: String, outcome: String) {
        self.report.steps.push(Note {
            what,
            outcome,
            at: self.world.now(),
        });
    }

    /// Runs step `index` of the timeline.
    pub fn run_step(&mut self, index: usize) -> Result<(), RunError> {
        let scenario = self.scenario;
        let step = &scenario.steps[index];
        let what = self.describe(step);
        match &step.action {
            Action::Enumerate => self.enumerate(step, what)?,
            Action::Boot { hosts } => self.boot(step, hosts, what)?,
            Action::Bind {
                targets,
                host,
                slot,
            } => self.bind(step, targets, *host, *slot, what)?,
            Action::Unbind { targets, mode } => self.unbind(step, targets, *mode, what)?,
            Action::P2p {
                host,
                from,
                to,
                copy_bytes,
                latency_bytes,
                verify,
            } => {
                let transfer = Transfer {
                    len: *copy_bytes,
                    small: *latency_bytes,
                    verify: *verify,
                };
                self.p2p(step, *host, *from, *to, transfer)?
            }
            Action::Nvme {
                host,
                target,
                bytes,
            } => {
                let bdf = self.host_function(*host, *target).ok_or_else(|| {
                    failed(
                        step,
                        &what,
                        format!(
                            "{} does not see {}",
                            self.host_name(*host),
                            self.name(*target)
                        ),
                    )
                })?;
                let pattern: Vec<u8> = (0..*bytes as usize)
                    .map(|i| (i * 7 + *host) as u8)
                    .collect();
                let place = scenario.hosts[*host].place;
                let read = self.world.with_host(place, |host, link| {
                    if host.nvme(bdf).is_none() {
                        return Err(format!("no NVMe driver bound to {bdf}"));
                    }
                    host.nvme_write(link, bdf, 0, &pattern)
                        .map_err(|e| format!("write: {e:?}"))?;
                    host.nvme_read(link, bdf, 0, pattern.len() as u64)
                        .map_err(|e| format!("read: {e:?}"))
                });
                let read = read.map_err(|why| failed(step, &what, why))?;
                if read != pattern {
                    return Err(failed(
                        step,
                        &what,
                        "the data read back differs from the data written",
                    ));
                }
                self.report.checks_passed += 1;
                self.note(
                    what,
                    format!("{} written and read back intact", size(*bytes)),
                );
            }
            Action::Sees { host, targets } => {
                let seen = self
                    .visible(*host)
                    .map_err(|why| failed(step, &what, why))?;
                let expected: BTreeSet<Target> = targets.iter().copied().collect();
                if seen != expected {
                    let list = |set: &BTreeSet<Target>| {
                        self.names(&set.iter().copied().collect::<Vec<_>>())
                    };
                    return Err(failed(
                        step,
                        &what,
                        format!("it sees [{}], expected [{}]", list(&seen), list(&expected)),
                    ));
                }
                self.report.checks_passed += 1;
                self.note(what, "yes".into());
            }
            Action::Hang {
                endpoints,
                after_config_requests,
            } => {
                for endpoint in endpoints {
                    let plan = &scenario.endpoints[*endpoint];
                    let hung = match *after_config_requests {
                        _ if plan.below.is_some() => self.world.hang_nested_device(
                            plan.place,
                            &plan.path,
                            *after_config_requests,
                        ),
                        Some(requests) => self.world.hang_device_after(plan.place, requests),
                        None => self.world.hang_device(plan.place),
                    };
                    if !hung {
                        return Err(failed(
                            step,
                            &what,
                            format!("`{}` has hung already", plan.name),
                        ));
                    }
                }
                let outcome = match after_config_requests {
                    Some(requests) => format!(
                        "links up; after {} completed, every TLP taken in, nothing sent back",
                        count(*requests as usize, "configuration request")
                    ),
                    None => "links up, every TLP taken in, nothing sent back".into(),
                };
                self.note(what, outcome);
            }
            Action::Read {
                host,
                target,
                space,
                expect,
            } => {
                let outcome = self
                    .read(*host, *target, *space, *expect)
                    .map_err(|why| failed(step, &what, why))?;
                self.report.checks_passed += 1;
                self.note(what, outcome);
            }
            Action::CheckBindings => {
                let checked = self
                    .check_bindings()
                    .map_err(|why| failed(step, &what, why))?;
                self.report.checks_passed += 1;
                self.note(
                    what,
                    format!(
                        "{}, each on its host only",
                        count(checked, "bound function")
                    ),
                );
            }
            Action::CheckTraffic => {
                let outcome = self
                    .check_traffic()
                    .map_err(|why| failed(step, &what, why))?;
                self.report.checks_passed += 1;
                self.note(what, outcome);
            }
            Action::Probe { host, target, by } => {
                let outcome = self
                    .probe(*host, *target, *by)
                    .map_err(|why| failed(step, &what, why))?;
                self.report.checks_passed += 1;
                self.note(what, outcome);
            }
        }
        self.remember_addresses();
        Ok(())
    }

    fn enumerate(&mut self, step: &PlannedStep, what: String) -> Result<(), RunError> {
        if let Some(core) = self.world.firmware_core() {
            let started = crate::iss_manager::run_to_fabric_start(&mut self.world)
                .map_err(|why| failed(step, &what, why))?;
            let outcome = format!(
                "{} functions by the firmware on {}, in {} instructions and {} cycles \
                 ({:.3} ms at {:.1} MHz)",
                started.functions,
                core.description(),
                started.instructions,
                started.cycles,
                IssBoard::duration_of(started.cycles).as_secs_f64() * 1e3,
                CPU_CLOCK_HZ as f64 / 1e6,
            );
            self.note(what, outcome);
            return Ok(());
        }
        self.world
            .start_manager()
            .map_err(|e| failed(step, &what, format!("{e:?}")))?;
        let mut counts: Vec<String> = Vec::new();
        let gpus = self.count_functions(|m| matches!(m, EndpointModel::Gpu(_)));
        if gpus.0 > 0 {
            counts.push(format!("{} GPUs", gpus.0));
        }
        let nvme = self.count_functions(|m| matches!(m, EndpointModel::Nvme(_)));
        if nvme.0 > 0 {
            counts.push(format!("{} NVMe PF with {} VFs", nvme.0, nvme.1));
        }
        let dumps = self.count_functions(|m| matches!(m, EndpointModel::Dump { .. }));
        if dumps.0 > 0 {
            counts.push(format!("{} from dumps", count(dumps.0, "function")));
        }
        let mut outcome = if counts.is_empty() {
            "no endpoints".into()
        } else {
            counts.join(", ")
        };
        let silent: Vec<&str> = self
            .scenario
            .endpoints
            .iter()
            .filter(|e| self.not_responding(e))
            .map(|e| e.name.as_str())
            .collect();
        if !silent.is_empty() {
            outcome += &format!(
                "; not responding: {} (a configuration request of the manager got no completion)",
                silent.join(", ")
            );
        }
        self.note(what, outcome);
        Ok(())
    }

    /// Whether `endpoint` stopped completing the manager's configuration
    /// requests during enumeration: for one with a link of its own, its
    /// port is not responding
    /// (`weft_fabric::inventory::FabricSwitch::not_responding`); for one on
    /// a conventional switch's downstream port, that port says so
    /// (`weft_fabric::inventory::Bridge::device_not_responding`).
    fn not_responding(&self, endpoint: &EndpointPlan) -> bool {
        if endpoint.below.is_some() {
            return self
                .downstream_port(endpoint)
                .flatten()
                .is_some_and(|port| port.device_not_responding);
        }
        let inventory = self.world.manager().inventory();
        self.manager_switch(endpoint.place)
            .and_then(|index| inventory.switches.get(usize::from(index.0)))
            .is_some_and(|s| s.not_responding(PortIndex(endpoint.place.port)))
    }

    /// Physical and virtual functions the manager found on endpoints of a model.
    fn count_functions(&self, model: impl Fn(&EndpointModel) -> bool) -> (usize, usize) {
        let (mut pfs, mut vfs) = (0, 0);
        for endpoint in self.scenario.endpoints.iter().filter(|e| model(&e.model)) {
            let (p, v) = self.functions_of(endpoint);
            pfs += p.len();
            vfs += v.len();
        }
        (pfs, vfs)
    }

    fn boot(&mut self, step: &PlannedStep, hosts: &[usize], what: String) -> Result<(), RunError> {
        for host in hosts {
            let place = self.scenario.hosts[*host].place;
            let bound = self
                .world
                .with_host(place, |h, link| h.boot(link))
                .map_err(|e| {
                    failed(
                        step,
                        &what,
                        format!("{} failed to boot: {e:?}", self.host_name(*host)),
                    )
                })?;
            self.booted[*host] = true;
            // Each host's boot is its own line of the report.
            let line = match &step.label {
                Some(label) if hosts.len() == 1 => label.clone(),
                _ => format!("{} boots and enumerates", self.host_name(*host)),
            };
            self.note(line, format!("{} bound", count(bound.len(), "driver")));
        }
        Ok(())
    }

    fn bind(
        &mut self,
        step: &PlannedStep,
        targets: &[Target],
        host: usize,
        slot: Option<u8>,
        what: String,
    ) -> Result<(), RunError> {
        let mut used: BTreeSet<u8> = self
            .world
            .manager()
            .inventory()
            .functions
            .iter()
            .filter_map(|f| f.binding)
            .filter(|b| usize::from(b.host.0) == host)
            .map(|b| b.slot)
            .collect();
        for (offset, target) in targets.iter().enumerate() {
            let id = self.fabric_id(*target).ok_or_else(|| {
                let why = if self.not_responding(&self.scenario.endpoints[target.endpoint]) {
                    "the fabric manager found it not responding when it enumerated the fabric"
                } else {
                    "has it been enumerated?"
                };
                failed(
                    step,
                    &what,
                    format!("{} is not in the fabric ({why})", self.name(*target)),
                )
            })?;
            let chosen = match slot {
                Some(first) => first + offset as u8,
                None => (0..self.scenario.hosts[host].slots)
                    .find(|s| !used.contains(s))
                    .ok_or_else(|| {
                        failed(
                            step,
                            &what,
                            format!("{} has no free slot", self.host_name(host)),
                        )
                    })?,
            };
            used.insert(chosen);
            self.world
                .with_manager(|m, _, s, h| m.bind(id, HostIndex(host as u16), chosen, s, h))
                .map_err(|e| failed(step, &what, format!("{}: {e:?}", self.name(*target))))?;
        }
        let outcome = if self.booted[host] {
            let events = self.let_hosts_see(step, &what, &BTreeSet::from([host]))?;
            let seen = self.visible(host).map_err(|why| failed(step, &what, why))?;
            let arrived = targets.iter().filter(|t| seen.contains(t)).count();
            format!(
                "{events}, {arrived} of {} present with drivers",
                targets.len()
            )
        } else {
            format!("{} slots set up before it boots", self.host_name(host))
        };
        self.note(what, outcome);
        Ok(())
    }

    /// Lets slot interrupts reach `hosts` and their hot-plug drivers run;
    /// says how many slot events each handled.
    /// Unbinds `targets` in `mode`. A graceful unbind waits for the host:
    /// an operator on it powers the slot off (its hot-plug driver releases
    /// the device first); a managed one has the host's driver answer the
    /// slot's Attention Button. Either must have taken effect when the
    /// hosts are done, or the step fails.
    fn unbind(
        &mut self,
        step: &PlannedStep,
        targets: &[Target],
        mode: UnbindMode,
        what: String,
    ) -> Result<(), RunError> {
        let mut hosts = BTreeSet::new();
        let mut ids = Vec::new();
        for target in targets {
            let id = self.fabric_id(*target).ok_or_else(|| {
                failed(
                    step,
                    &what,
                    format!("{} is not in the fabric", self.name(*target)),
                )
            })?;
            let binding = self.world.manager().binding_of(id);
            if let Some(binding) = binding {
                hosts.insert(usize::from(binding.host.0));
            }
            // The port the host sees the function below, for its operator.
            let port = match binding {
                Some(binding) if mode == UnbindMode::Graceful => {
                    let host = usize::from(binding.host.0);
                    Some((host, self.slot_port(host, *target)))
                }
                _ => None,
            };
            let unbinding = self
                .world
                .with_manager(|m, _, s, h| m.unbind(id, mode, s, h))
                .map_err(|e| failed(step, &what, format!("{e:?}")))?;
            if let (Unbinding::Waiting(_), Some((host, port))) = (unbinding, port) {
                let port = port.ok_or_else(|| {
                    failed(
                        step,
                        &what,
                        format!(
                            "{} does not see {}, so it cannot give it up (unbind it by surprise)",
                            self.host_name(host),
                            self.name(*target)
                        ),
                    )
                })?;
                let host_place = self.scenario.hosts[host].place;
                self.world
                    .with_host(host_place, |h, link| h.power_off_slot(link, port))
                    .map_err(|e| {
                        failed(
                            step,
                            &what,
                            format!("{}'s hot-plug driver: {e:?}", self.host_name(host)),
                        )
                    })?;
            }
            ids.push((*target, id, binding.map(|b| usize::from(b.host.0))));
        }
        let events = self.let_hosts_see(step, &what, &hosts)?;
        for &(target, id, _) in &ids {
            if let Some(binding) = self.world.manager().binding_of(id) {
                return Err(failed(
                    step,
                    &what,
                    format!(
                        "{} never released {}: its slot is still powered (unbind it by surprise)",
                        self.host_name(usize::from(binding.host.0)),
                        self.name(target)
                    ),
                ));
            }
        }
        let outcome = match mode {
            UnbindMode::Surprise => events,
            UnbindMode::Graceful | UnbindMode::Managed => hosts
                .iter()
                .map(|host| {
                    let released = ids.iter().filter(|(_, _, h)| *h == Some(*host)).count();
                    format!(
                        "{} released and powered off {}",
                        self.host_name(*host),
                        count(released, "slot")
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
        };
        self.note(what, outcome);
        Ok(())
    }

    /// The downstream port `host` sees `target` below, if it sees it.
    fn slot_port(&mut self, host: usize, target: Target) -> Option<Bdf> {
        let bdf = self.host_function(host, target)?;
        let place = self.scenario.hosts[host].place;
        self.world
            .with_host(place, |h, _| h.tree().get(bdf).and_then(|f| f.parent))
    }

    fn let_hosts_see(
        &mut self,
        step: &PlannedStep,
        what: &str,
        hosts: &BTreeSet<usize>,
    ) -> Result<String, RunError> {
        let_interrupts_arrive(&mut self.world);
        let mut handled = Vec::new();
        for host in hosts.iter().filter(|h| self.booted[**h]) {
            let place = self.scenario.hosts[*host].place;
            let events = self
                .world
                .with_host(place, |h, link| h.service_interrupts(link))
                .map_err(|e| {
                    failed(
                        step,
                        what,
                        format!("{}'s hot-plug driver: {e:?}", self.host_name(*host)),
                    )
                })?;
            handled.push(format!(
                "{} handled {}",
                self.host_name(*host),
                count(events.len(), "slot event")
            ));
        }
        Ok(if handled.is_empty() {
            "no booted host affected".into()
        } else {
            handled.join("; ")
        })
    }

    /// The manager's index of the switch `place` is on: the manager numbers
    /// switches in discovery order, the world by index.
    fn manager_switch(&self, place: Place) -> Option<SwitchIndex> {
        let inventory = self.world.manager().inventory();
        self.world
            .switches()
            .get(place.switch)
            .and_then(|s| inventory.switch_index(s.id()))
    }

    /// The conventional switch downstream port `endpoint` is on, as the
    /// manager enumerated it: `Some(None)` for an endpoint on its weft
    /// port's link, `None` where the manager found no such port.
    fn downstream_port(&self, endpoint: &EndpointPlan) -> Option<Option<Bridge>> {
        let place = endpoint.place;
        let inventory = self.world.manager().inventory();
        let switch = self.manager_switch(place);
        let on_port =
            |bridge: &Bridge| Some(bridge.switch) == switch && bridge.port == PortIndex(place.port);
        // Down the path: each conventional switch's upstream port below
        // the bridge before, then its downstream port at that device number.
        let mut above: Option<Bridge> = None;
        for port in &endpoint.path {
            let parent = above.map(|bridge| bridge.id);
            let upstream = inventory.bridges.iter().find(|b| {
                on_port(b) && b.parent == parent && b.kind == BridgeKind::SwitchUpstream
            })?;
            let downstream = inventory.bridges.iter().find(|b| {
                b.parent == Some(upstream.id)
                    && b.kind == BridgeKind::SwitchDownstream
                    && b.id.device() == *port
            })?;
            above = Some(*downstream);
        }
        Some(above)
    }

    /// Fabric IDs of `endpoint`'s physical functions, and of its VFs: the
    /// functions below its weft switch port and, for one below conventional
    /// switches, below the downstream port its path leads to.
    fn functions_of(&self, endpoint: &EndpointPlan) -> (Vec<Bdf>, Vec<Bdf>) {
        let place = endpoint.place;
        let inventory = self.world.manager().inventory();
        let switch = self.manager_switch(place);
        let Some(above) = self.downstream_port(endpoint) else {
            return (Vec::new(), Vec::new());
        };
        let above = above.map(|bridge| bridge.id);
        let on_port = inventory.functions.iter().filter(|f| {
            Some(f.switch) == switch && f.port == PortIndex(place.port) && f.bridge == above
        });
        let (mut pfs, mut vfs) = (Vec::new(), Vec::new());
        for function in on_port {
            match function.kind {
                FunctionKind::Physical => pfs.push(function.id),
                FunctionKind::Virtual { .. } => vfs.push(function.id),
            }
        }
        (pfs, vfs)
    }

    /// The fabric ID of `target`, once the fabric is enumerated.
    fn fabric_id(&self, target: Target) -> Option<Bdf> {
        let (pfs, vfs) = self.functions_of(&self.scenario.endpoints[target.endpoint]);
        match target.vf {
            None => pfs.first().copied(),
            Some(vf) => vfs.get(usize::from(vf) - 1).copied(),
        }
    }

    /// The function `fabric_id` is, if the scenario has it.
    fn target_of(&self, fabric_id: Bdf) -> Option<Target> {
        self.scenario
            .endpoints
            .iter()
            .enumerate()
            .find_map(|(index, endpoint)| {
                let (pfs, vfs) = self.functions_of(endpoint);
                if pfs.first() == Some(&fabric_id) {
                    return Some(Target {
                        endpoint: index,
                        vf: None,
                    });
                }
                let vf = vfs.iter().position(|v| *v == fabric_id)?;
                Some(Target {
                    endpoint: index,
                    vf: Some(vf as u16 + 1),
                })
            })
    }

    /// The functions below `host`'s virtual switch slots, as its own
    /// enumeration found them, each with the slot it sits behind.
    fn host_endpoints(&mut self, host: usize) -> Vec<(Bdf, u8, Option<u64>)> {
        let place = self.scenario.hosts[host].place;
        self.world.with_host(place, |h, _| {
            let tree = h.tree();
            tree.iter()
                .filter(|f| f.bridge.is_none() && f.parent.is_some())
                .filter_map(|f| {
                    let parent = tree.get(f.parent?)?;
                    let slot = parent.bridge.as_ref()?.slot?;
                    // Physical Slot Numbers: the host index above bit 5, the slot + 1 below.
                    let number = u8::try_from(slot.physical & 0x1f).ok()?.checked_sub(1)?;
                    let address = f.bars.iter().find_map(|b| b.address);
                    Some((f.bdf, number, address))
                })
                .collect()
        })
    }

    /// What `host` sees below its slots, as scenario functions: each slot
    /// it has a function behind is matched with the manager's binding of it.
    fn visible(&mut self, host: usize) -> Result<BTreeSet<Target>, String> {
        let mut seen = BTreeSet::new();
        for (bdf, slot, _) in self.host_endpoints(host) {
            seen.insert(self.bound_at(host, slot).ok_or_else(|| {
                format!(
                    "{} has {bdf} behind slot {slot}, which the manager has bound nothing to",
                    self.host_name(host)
                )
            })?);
        }
        Ok(seen)
    }

    /// The function the manager has bound to `host`'s `slot`.
    fn bound_at(&self, host: usize, slot: u8) -> Option<Target> {
        let function = self
            .world
            .manager()
            .inventory()
            .functions
            .iter()
            .find(|f| {
                f.binding
                    .is_some_and(|b| usize::from(b.host.0) == host && b.slot == slot)
            })?;
        self.target_of(function.id)
    }

    /// The host's function for `target` and the address of its first
    /// memory BAR, if the host sees it.
    fn host_view(&mut self, host: usize, target: Target) -> Option<(Bdf, Option<u64>)> {
        self.host_endpoints(host)
            .into_iter()
            .find(|(_, slot, _)| self.bound_at(host, *slot) == Some(target))
            .map(|(bdf, _, address)| (bdf, address))
    }

    /// The host's function for `target`, if the host sees it.
    fn host_function(&mut self, host: usize, target: Target) -> Option<Bdf> {
        self.host_view(host, target).map(|(bdf, _)| bdf)
    }

    /// Has `host`'s CPU read the first DW of `target`'s first memory BAR,
    /// or of its configuration space, which must complete with `expect`;
    /// says what it got and how long after it was sent. A read the host's
    /// own completion timeout ends fails the step: no switch answered it.
    fn read(
        &mut self,
        host: usize,
        target: Target,
        space: ReadSpace,
        expect: CompletionStatus,
    ) -> Result<String, String> {
        let (name, reader) = (self.name(target), self.host_name(host).to_string());
        let Some((bdf, bar)) = self.host_view(host, target) else {
            return Err(format!("{reader} does not see {name}"));
        };
        let (read, address) = match (space, bar) {
            (ReadSpace::Memory, Some(address)) => (format!("read of {address:#x}"), address),
            (ReadSpace::Memory, None) => {
                return Err(format!("{reader}'s {bdf} ({name}) has no memory BAR"))
            }
            (ReadSpace::Config, _) => (format!("configuration read of {bdf}'s Vendor ID"), 0),
        };
        let place = self.scenario.hosts[host].place;
        let (result, elapsed) = self.world.with_host(place, |h, link| {
            let mut cpu = h.cpu(link);
            let sent = cpu.now();
            let result = match space {
                ReadSpace::Memory => match cpu.read_u32(address) {
                    Ok(_) => Ok(CompletionStatus::Successful),
                    Err(MemoryAccessError::Status { status, .. }) => Ok(status),
                    Err(other) => Err(format!("{other:?}")),
                },
                ReadSpace::Config => match cpu.config_read(bdf, 0) {
                    Ok(_) => Ok(CompletionStatus::Successful),
                    Err(ConfigAccessError::Status { status, .. }) => Ok(status),
                    Err(other) => Err(format!("{other:?}")),
                },
            };
            (result, cpu.now() - sent)
        });
        let status = result.map_err(|other| {
            format!(
                "{read} got no completion: {other} after {}",
                micros(elapsed)
            )
        })?;
        let got = format!(
            "{read} answered with {} after {}",
            status_name(status),
            micros(elapsed)
        );
        if status != expect {
            return Err(format!("{got}, expected {}", status_name(expect)));
        }
        self.report.reads.push(ReadFigures {
            host: reader,
            endpoint: name,
            space: match space {
                ReadSpace::Memory => "memory",
                ReadSpace::Config => "configuration",
            },
            address,
            status: status_name(status).into(),
            elapsed,
        });
        Ok(got)
    }

    /// Records the BAR address each booted host has for each function it sees.
    fn remember_addresses(&mut self) {
        for host in 0..self.scenario.hosts.len() {
            if !self.booted[host] {
                continue;
            }
            for (_, slot, address) in self.host_endpoints(host) {
                if let (Some(target), Some(address)) = (self.bound_at(host, slot), address) {
                    self.addresses.insert((host, target), address);
                }
            }
        }
    }

    fn check_bindings(&mut self) -> Result<usize, String> {
        let mut bound = Vec::new();
        for function in &self.world.manager().inventory().functions {
            if let (Some(binding), Some(target)) = (function.binding, self.target_of(function.id)) {
                bound.push((target, usize::from(binding.host.0)));
            }
        }
        let mut views = Vec::new();
        for host in 0..self.scenario.hosts.len() {
            views.push(self.visible(host)?);
        }
        for (target, owner) in &bound {
            if !self.booted[*owner] {
                return Err(format!(
                    "{} is bound to {}, which has not booted",
                    self.name(*target),
                    self.host_name(*owner)
                ));
            }
            for (host, view) in views.iter().enumerate() {
                match (host == *owner, view.contains(target)) {
                    (true, false) => {
                        return Err(format!(
                            "{} does not see {}, bound to it",
                            self.host_name(host),
                            self.name(*target)
                        ))
                    }
                    (false, true) => {
                        return Err(format!(
                            "{} sees {}, bound to {}",
                            self.host_name(host),
                            self.name(*target),
                            self.host_name(*owner)
                        ))
                    }
                    _ => {}
                }
            }
        }
        Ok(bound.len())
    }

    fn check_traffic(&mut self) -> Result<String, String> {
        // Whatever is still on the links arrives first.
        let_interrupts_arrive(&mut self.world);
        let lost = self.world.tlps_lost();
        if lost > 0 {
            return Err(format!("{lost} TLPs were sent where nothing is wired"));
        }
        let in_flight = self.world.tlps_in_flight();
        if in_flight > 0 {
            return Err(format!(
                "{in_flight} TLPs are still in flight after {INTERRUPT_DELIVERY:?} of quiet"
            ));
        }
        let dropped = switch_drops(&self.world);
        if dropped != self.probes {
            return Err(format!(
                "the switches dropped {dropped} TLPs, but the isolation probes account for {}",
                self.probes
            ));
        }
        for (index, plan) in self.scenario.hosts.iter().enumerate() {
            let counters = self.world.with_host(plan.place, |h, _| h.root().counters());
            let probed = self.probes_rejected_by_hosts[index];
            if counters.unexpected_completions > 0 || counters.rejected != probed {
                return Err(format!(
                    "{} received {} unexpected completions and rejected {} requests, \
                     {probed} of them isolation probes",
                    self.host_name(index),
                    counters.unexpected_completions,
                    counters.rejected
                ));
            }
        }
        Ok(format!(
            "{} TLPs delivered, none lost; {dropped} dropped, all isolation probes",
            self.world.tlps_delivered()
        ))
    }

    fn probe(&mut self, host: usize, target: Target, by: Option<usize>) -> Result<String, String> {
        if self.visible(host)?.contains(&target) {
            return Err(format!(
                "{} sees {}: a probe needs a function bound to another host",
                self.host_name(host),
                self.name(target)
            ));
        }
        let address = *self.addresses.get(&(host, target)).ok_or_else(|| {
            format!(
                "{} never had an address for {}: probe a function the host once had",
                self.host_name(host),
                self.name(target)
            )
        })?;
        let place = self.scenario.hosts[host].place;
        if let Some(gpu) = by {
            return self.probe_by_gpu(host, gpu, address);
        }
        let read = self
            .world
            .with_host(place, |h, link| h.cpu(link).read_u32(address));
        self.probes += 1;
        match read {
            Err(MemoryAccessError::Status {
                status: CompletionStatus::UnsupportedRequest,
                ..
            }) => Ok(format!("read of {address:#x} answered with UR")),
            other => Err(format!(
                "read of {address:#x} gave {other:?}, expected Unsupported Request"
            )),
        }
    }

    /// Has `gpu`, driven by `host`, read `address` peer to peer with its
    /// DMA engine: the read must fail with a completion error, answered
    /// with UR by a switch or by `host`'s root complex (the read, outside
    /// the peer windows of the GPU's owner, is DMA into that host), and
    /// never reach the function now at that address for another host.
    fn probe_by_gpu(&mut self, host: usize, gpu: usize, address: u64) -> Result<String, String> {
        let name = self.scenario.endpoints[gpu].name.clone();
        let bdf = self
            .host_function(
                host,
                Target {
                    endpoint: gpu,
                    vf: None,
                },
            )
            .ok_or_else(|| format!("{} does not see {name}", self.host_name(host)))?;
        let place = self.scenario.hosts[host].place;
        let rejected =
            |world: &mut World| world.with_host(place, |h, _| h.root().counters().rejected);
        let (drops_before, rejected_before) =
            (switch_drops(&self.world), rejected(&mut self.world));
        let copy = self.world.with_host(place, |h, link| {
            h.gpu_copy(link, bdf, Location::Bus(address), Location::Local(0), 64)
        });
        let by_switch = switch_drops(&self.world) - drops_before;
        let by_host = rejected(&mut self.world) - rejected_before;
        self.probes += by_switch;
        self.probes_rejected_by_hosts[host] += by_host;
        let answered = match (by_switch, by_host) {
            (1, 0) => "a switch".to_string(),
            (0, 1) => format!("{}'s root complex", self.host_name(host)),
            _ => {
                return Err(format!(
                    "{name}'s read of {address:#x} was refused {by_switch} times by switches \
                     and {by_host} times by hosts, expected once"
                ))
            }
        };
        match copy {
            Err(GpuError::Engine { code, .. }) if code == gpu_regs::error::COMPLETION_ERROR => Ok(
                format!("{name}'s read of {address:#x} answered with UR by {answered}"),
            ),
            other => Err(format!(
                "{name}'s read of {address:#x} gave {other:?}, expected a completion error"
            )),
        }
    }

    fn p2p(
        &mut self,
        step: &PlannedStep,
        host: usize,
        from: usize,
        to: usize,
        transfer: Transfer,
    ) -> Result<(), RunError> {
        let Transfer { len, small, verify } = transfer;
        let what = self.describe(step);
        let name = self.host_name(host).to_string();
        let fail = |why: String| failed(step, &what, why);
        let gpu = |engine: &mut Self, endpoint: usize| {
            let target = Target { endpoint, vf: None };
            engine
                .host_function(host, target)
                .ok_or_else(|| fail(format!("{name} does not see {}", engine.name(target))))
        };
        let (a, b) = (gpu(self, from)?, gpu(self, to)?);
        let host_places: Vec<Place> = self.scenario.hosts.iter().map(|h| h.place).collect();
        let host_egress = |world: &World| -> u64 {
            host_places
                .iter()
                .filter_map(|p| {
                    world.switches()[p.switch]
                        .model()
                        .counters(PortIndex(p.port))
                })
                .map(|c| c.egress.bytes)
                .sum()
        };
        let place = self.scenario.hosts[host].place;
        let driver = |host: &Host, bdf: Bdf| {
            host.gpu(bdf)
                .copied()
                .ok_or_else(|| format!("no GPU driver on {bdf}"))
        };
        let peer = |host: &Host, bdf: Bdf, offset: u64| {
            driver(host, bdf).map(|gpu| gpu.peer_address(offset))
        };
        // With `verify`, each GPU's source is a pattern the CPU puts there
        // through its BAR first.
        let pattern = |seed: u8| -> Vec<u8> {
            (0..len)
                .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
                .collect()
        };
        let sources = verify.then(|| [(a, pattern(0xa5)), (b, pattern(0x5a))]);
        if let Some(sources) = &sources {
            self.world
                .with_host(place, |host, link| {
                    for (bdf, data) in sources {
                        let gpu = driver(host, *bdf)?;
                        let mut cpu = host.cpu(link);
                        gpu.upload(&mut cpu, 0, data)
                            .map_err(|e| format!("{e:?}"))?;
                        // A read does not pass the posted writes ahead of
                        // it (PCIe Base 6.0 §2.4.1): once it completes, the
                        // pattern is in place and off the links the copies use.
                        gpu.download(&mut cpu, 0, 4).map_err(|e| format!("{e:?}"))?;
                    }
                    Ok::<_, String>(())
                })
                .map_err(fail)?;
        }
        let before = host_egress(&self.world);
        let mut figures = self
            .world
            .with_host(place, |host, link| {
                // A's memory from 0 is the source of A's copies, B's likewise;
                // each copy lands at `len` in the other GPU.
                let (a_in, b_in) = (peer(host, a, len)?, peer(host, b, len)?);
                let err = |e| format!("{e:?}");
                let uni = host
                    .gpu_copy(link, a, Location::Local(0), Location::Bus(b_in), len)
                    .map_err(err)?;
                let forth = host
                    .gpu_copy_start(link, a, Location::Local(0), Location::Bus(b_in), len)
                    .map_err(err)?;
                let back = host
                    .gpu_copy_start(link, b, Location::Local(0), Location::Bus(a_in), len)
                    .map_err(err)?;
                let (done, _) = host
                    .gpu_copy_finish_all(link, &[forth, back])
                    .map_err(err)?;
                let both = done.saturating_sub(forth.started.min(back.started));
                Ok::<_, String>(P2pFigures {
                    unidirectional: uni.bytes_per_second(),
                    bidirectional: if both.is_zero() {
                        f64::INFINITY
                    } else {
                        (2 * len) as f64 / both.as_secs_f64()
                    },
                    ..P2pFigures::default()
                })
            })
            .map_err(fail)?;
        // Register accesses and the completion MSIs cross the host port; the
        // copied data must not. Count only what exceeds a few control TLPs.
        let through_hosts = host_egress(&self.world) - before;
        figures.bytes_through_hosts = if through_hosts > 3 * CONTROL_BYTES {
            through_hosts
        } else {
            0
        };
        // The GPU driver's peer test: what each GPU copied reads back equal
        // from its peer, at `len`, through the peer's BAR.
        if let Some([(_, a_data), (_, b_data)]) = &sources {
            self.world
                .with_host(place, |host, link| {
                    for (peer_gpu, sent, from) in [(b, a_data, "A"), (a, b_data, "B")] {
                        let landed = driver(host, peer_gpu)?
                            .download(&mut host.cpu(link), len, len)
                            .map_err(|e| format!("{e:?}"))?;
                        if landed != *sent {
                            return Err(format!(
                                "GPU {from}'s {} did not land intact in its peer",
                                size(len)
                            ));
                        }
                    }
                    Ok(())
                })
                .map_err(fail)?;
        }
        self.world
            .with_host(place, |host, link| {
                let err = |e| format!("{e:?}");
                let scratch = 2 * len;
                let b_memory = peer(host, b, 0)?;
                let read = host
                    .gpu_copy(
                        link,
                        a,
                        Location::Bus(b_memory),
                        Location::Local(scratch),
                        small,
                    )
                    .map_err(err)?;
                let buffer = host.allocate_dma(small).map_err(|e| format!("{e:?}"))?;
                let host_read = host
                    .gpu_copy(
                        link,
                        a,
                        Location::Bus(buffer),
                        Location::Local(scratch),
                        small,
                    )
                    .map_err(err)?;
                let write = host
                    .gpu_copy(
                        link,
                        a,
                        Location::Local(scratch),
                        Location::Bus(b_memory + scratch),
                        small,
                    )
                    .map_err(err)?;
                figures.peer_read = read.engine;
                figures.host_read = host_read.engine;
                figures.peer_write = write.elapsed;
                Ok::<_, String>(())
            })
            .map_err(fail)?;
        let copy = size(len);
        self.note(
            format!("{name}: GPU A -> B copy of {copy}"),
            format!(
                "{:.2} GB/s{}",
                figures.unidirectional / 1e9,
                if verify { ", read back equal" } else { "" }
            ),
        );
        self.note(
            format!("{name}: GPU A -> B and B -> A at once, {copy} each"),
            format!("{:.2} GB/s total", figures.bidirectional / 1e9),
        );
        self.note(
            format!("{name}: {small} B peer read / host read / peer write"),
            format!(
                "{} / {} round trip, {} doorbell to MSI",
                micros(figures.peer_read),
                micros(figures.host_read),
                micros(figures.peer_write)
            ),
        );
        self.report.p2p.push(P2pFigures {
            host: name,
            from: self.scenario.endpoints[from].name.clone(),
            to: self.scenario.endpoints[to].name.clone(),
            copy_bytes: len,
            latency_bytes: small,
            ..figures
        });
        Ok(())
    }
}

/// TLPs the switches of `world` dropped, every port and reason.
fn switch_drops(world: &World) -> u64 {
    world
        .switches()
        .iter()
        .map(|switch| {
            let model = switch.model();
            (0..model.ports())
                .filter_map(|port| model.counters(PortIndex(port as u8)))
                .map(|counters| counters.drops.values().sum::<u64>())
                .sum::<u64>()
        })
        .sum()
}

/// What a `p2p` step moves.
#[derive(Clone, Copy, Debug)]
struct Transfer {
    /// Bytes per copy and direction.
    len: u64,
    /// Bytes of the latency transfers.
    small: u64,
    /// Whether the copied data is read back and compared.
    verify: bool,
}

/// Lets slot interrupts reach the hosts, as time passes between a
/// management command and the host's interrupt handler.
pub fn let_interrupts_arrive(world: &mut World) {
    world.run_until(world.now() + INTERRUPT_DELIVERY);
}
