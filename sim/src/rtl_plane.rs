//! A switch whose data plane is the RTL: weft-hdl's `SwitchTop`, clocked by
//! its single-thread driver, with weft-model's switch beside it as its
//! checker.
//!
//! Every TLP such a switch routes is carried by the RTL
//! (`weft_hdl::top_harness`), one TLP at a time through an otherwise idle
//! switch, every egress link ready; what leaves its egress ports, what it
//! sends the management CPU and what it drops must be what the model does
//! with the same TLP, byte for byte, or the run counts a disagreement and
//! keeps the first one's description. Every register the manager writes
//! into the switch's CSR window — over the soft core's bus, in-band through
//! the management BAR, through the management function's BAR — is written
//! into the RTL too, before the next TLP (weft-model's
//! `CsrWindow::record_writes`).
//!
//! Each switch's RTL runs on a thread of its own, behind the simulation:
//! the model's answer decides what the simulation does next, so the RTL
//! only has to check it, and it does so in the order the simulation handed
//! it TLPs and register writes, at most `QUEUED_JOBS` behind (the
//! simulation waits beyond that). The switches of a fabric are so checked
//! in parallel, each on a CPU where there are enough. Its summary
//! ([`RtlPlane::summary`]) waits for it to catch up.
//!
//! Host ports' requests take the fabric tags of the RTL's
//! outstanding-request tables, as of the model's; when the manager
//! abandons requests (ABANDON), the RTL runs a whole sweep of its tables
//! and what it sends is held to the completions the model synthesized
//! ([`RtlPlane::synthesized`]).
//!
//! The completion timeout (global COMPLETION_TIMEOUT, which the manager
//! sets to 10 ms; PCIe Base 6.0 §2.8) is the model's alone. The model's
//! clock is simulated time, and the simulator wakes the switch when a
//! request times out; the RTL's outstanding-request tables count
//! microseconds of their own clock, which runs only while the RTL carries
//! (10 ms is 2.5 million cycles at 250 MHz, hours of this driver), so the
//! RTL never times a request out. The model's Completer Aborts are
//! therefore counted, not compared ([`RtlPlane::timed_out`]), and from the
//! first of them on the RTL is no longer held to the model at all: its
//! tables still hold the requests the model completed, which changes the
//! tags it hands out, the late completions it forwards rather than drops
//! and the abandon sweeps' completions. What the model forwards after it
//! is counted as not compared ([`RtlSummary::not_compared`]), never as
//! agreeing.
//!
//! The RTL's mailbox is read out after every TLP, as the CPU reads it,
//! and what it queued is held to what the model delivered to the CPU,
//! TLP for TLP with the port each arrived on; the manager itself reads
//! the model's mailbox.
//!
//! What the CPU injects (`weft_regs::csr::inject`: the TLP's DWs, then
//! SEND) the RTL's injector sends too: the replayed register writes are
//! cut after each SEND, and the RTL runs until the TLP has left
//! (`inject_cycles`), so an injected TLP never mixes with what a
//! carried one does. What left the RTL so is held to what the model's
//! injector sent ([`RtlPlane::injected`], `CsrWindow::take_injected`),
//! TLP for TLP, in order, with the port each left by; the simulator sends
//! the model's copies on. The management BAR's in-band register accesses
//! are executed by the model's window and not offered to the RTL, although
//! the RTL top executes them too (weft-hdl's `ManagementBar`, held to the
//! model in its own tests): the RTL's mailbox is read out after every TLP
//! here, so an in-band read of it would find it empty where the model's
//! holds what the manager has not read yet. The simulated time a TLP spends in the switch stays
//! [`crate::switch::SWITCH_LATENCY`]: the RTL's cycles are the data plane's
//! alone, without the hard IP's PHY and data link layer; they are counted
//! ([`RtlSummary`]).
//!
//! The RTL is weft-hdl's `SimulatorTop`, `SwitchTop` of 8 ports of 128-bit
//! payload: a quarter of the reference payload width, for the simulator's
//! speed, and the reference port count, which any scenario switch fits.
//! [`RtlSimulator`] chooses what simulates it: rust-hdl's simulator, or
//! Verilator's model of the Verilog weft emits for it, built once per
//! machine into [`verilated_cache`] and shared by every switch of a run.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::Serialize;
use weft_drivers::mailbox::{take_head, MAILBOX_BYTES};
use weft_hdl::top_harness::{Carried, CarryError, SimulatorTop, SIMULATOR_SLOT_DW};
use weft_hdl::top_verilated::VerilatedSwitch;
use weft_model::csr_window::CsrWindow;
use weft_model::{Delivery, Destination, DropReason, Forwarding, PortIndex};
use weft_regs::capacity;
use weft_regs::csr::inject;
use weft_regs::driver::CsrBus;

/// Stack for building the RTL: a debug build copies the whole block (a
/// few MiB with its tables) on the stack while connecting it.
const BUILD_STACK: usize = 256 << 20;

/// What simulates a switch's RTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtlSimulator {
    /// rust-hdl's simulator, single-threaded (`weft_hdl::driver`).
    RustHdl,
    /// Verilator's model of the Verilog weft emits (`weft_hdl::top_verilated`).
    Verilator,
}

impl RtlSimulator {
    /// Its name in reports: "rust-hdl" or "verilator".
    pub fn name(self) -> &'static str {
        match self {
            RtlSimulator::RustHdl => "rust-hdl",
            RtlSimulator::Verilator => "verilator",
        }
    }
}

/// Why a switch's RTL could not be set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtlError(pub String);

impl std::fmt::Display for RtlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RtlError {}

/// Where Verilated builds are kept: `WEFT_VERILATED_CACHE`, else
/// `$XDG_CACHE_HOME/weft/verilated`, else `~/.cache/weft/verilated`, else
/// the temporary directory's `weft-verilated`.
pub fn verilated_cache() -> PathBuf {
    if let Some(dir) = std::env::var_os("WEFT_VERILATED_CACHE") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")));
    match base {
        Some(base) => base.join("weft").join("verilated"),
        None => std::env::temp_dir().join("weft-verilated"),
    }
}

/// The Verilated build of the simulator's switch, made (or found in
/// [`verilated_cache`]) once per process and shared by every switch of a
/// run. A build that has to run says so on standard error, with its
/// progress: it takes about three minutes on 2 CPUs.
fn verilated_build() -> Result<&'static VerilatedSwitch, String> {
    static BUILD: OnceLock<Result<VerilatedSwitch, String>> = OnceLock::new();
    BUILD
        .get_or_init(|| {
            let cache = verilated_cache();
            let mut announced = false;
            let built = SimulatorTop::build_verilated(&cache, &mut |step: &str| {
                if !announced {
                    eprintln!(
                        "building the Verilated switch into {} (once; about three minutes on 2 CPUs)",
                        cache.display()
                    );
                    announced = true;
                }
                eprintln!("  verilator: {step}");
            });
            built.map_err(|error| error.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// What an RTL data plane did over a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RtlSummary {
    /// What simulated it: "rust-hdl" or "verilator".
    pub simulator: &'static str,
    /// TLPs it carried.
    pub tlps: u64,
    /// Clock cycles it ran, register writes included.
    pub cycles: u64,
    /// TLPs whose fate differed from the model's.
    pub disagreements: u64,
    /// What the first disagreement was.
    pub first_disagreement: Option<String>,
    /// Completer Aborts the model sent for host requests that timed out,
    /// which the RTL does not send ([`RtlPlane::timed_out`]): not compared.
    pub timeouts: u64,
    /// TLPs the model forwarded or synthesized after the first timeout,
    /// which the RTL no longer carried: not compared.
    pub not_compared: u64,
    /// TLPs the CPU injected that were held to what the RTL's injector
    /// sent ([`RtlPlane::injected`]).
    pub injected: u64,
    /// Wall time spent clocking it.
    #[serde(rename = "wall_s", serialize_with = "seconds")]
    pub wall: Duration,
}

fn seconds<S: serde::Serializer>(time: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(time.as_secs_f64())
}

/// Jobs a switch's RTL thread may lag behind the simulation before the
/// simulation waits for it: a few MB of TLPs and model answers.
const QUEUED_JOBS: usize = 4096;

/// The RTL data plane of one switch: a thread of its own (`Checker`)
/// that carries, in order, what the simulation hands it, while the
/// simulation goes on; [`RtlPlane::summary`] waits for it to catch up.
pub struct RtlPlane {
    jobs: Option<SyncSender<Job>>,
    worker: Option<JoinHandle<()>>,
    /// Set when the plane is dropped: the thread stops before its next job.
    stop: Arc<AtomicBool>,
    /// Completer Aborts the model sent for timed-out requests (see
    /// [`RtlPlane::timed_out`]); known here, where the model runs.
    timeouts: u64,
    /// TLPs not compared because a timeout left the RTL behind.
    not_compared: u64,
}

/// What the simulation hands a switch's RTL thread; each job's `writes` are
/// the register writes the model's window took before it.
enum Job {
    /// Carry a TLP that arrived on a port; the model forwarded it so.
    Carry {
        writes: Vec<(u32, u32)>,
        port: usize,
        bytes: Vec<u8>,
        model: Forwarding,
    },
    /// Run a sweep of the outstanding-request tables; the model
    /// synthesized these completions for abandoned requests.
    Sweep {
        writes: Vec<(u32, u32)>,
        synthesized: Vec<Delivery>,
    },
    /// Hold what the injector sent to what the model's sent.
    Injected {
        writes: Vec<(u32, u32)>,
        model: Vec<Delivery>,
    },
    /// Answer with the summary of every job before this one.
    Report(Sender<RtlSummary>),
}

/// Cycles the RTL runs after a SEND of `value` at the least: the
/// injector hands its TLP on one DW a cycle (`inject` TLP_DWORDS at most),
/// and the TLP's first beat has left a few cycles after its last DW; the
/// run goes on until nothing has moved for `QUIET_CYCLES`, so the whole
/// TLP has left.
fn inject_cycles(value: u32) -> u64 {
    u64::from(inject::DWORDS.decode(value)) + 4
}

impl RtlPlane {
    /// The RTL at reset in `simulator`, beside the model behind `window`,
    /// also at reset: from now on every register write `window` takes is
    /// the RTL's too, and the model buffers TLPs no longer than the RTL's
    /// slots.
    pub fn new(window: &mut CsrWindow, simulator: RtlSimulator) -> Result<Self, RtlError> {
        let (jobs, queue) = mpsc::sync_channel(QUEUED_JOBS);
        let (built_tx, built) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let worker = std::thread::Builder::new()
            .name("weft-rtl".into())
            .stack_size(BUILD_STACK)
            .spawn(move || {
                let top = match build_top(simulator) {
                    Ok(top) => top,
                    Err(error) => {
                        let _ = built_tx.send(Err(error));
                        return;
                    }
                };
                let _ = built_tx.send(Ok(()));
                Checker::new(top, simulator).run(&queue, &stopping);
            })
            .expect("the machine can start a thread");
        match built.recv() {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                let _ = worker.join();
                return Err(error);
            }
            // The build panicked: carry the panic on here.
            Err(_) => match worker.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => return Err(RtlError("the RTL's thread ended unbuilt".into())),
            },
        }
        window.record_writes();
        window.switch_mut().set_slot_dw(SIMULATOR_SLOT_DW);
        Ok(RtlPlane {
            jobs: Some(jobs),
            worker: Some(worker),
            stop,
            timeouts: 0,
            not_compared: 0,
        })
    }

    /// What it did so far, once its thread has done every job handed it.
    pub fn summary(&self) -> RtlSummary {
        let (answer, report) = mpsc::channel();
        let done = self
            .jobs
            .as_ref()
            .and_then(|jobs| jobs.send(Job::Report(answer)).ok())
            .and_then(|()| report.recv().ok())
            .expect("the RTL's thread stopped (its panic is printed above)");
        RtlSummary {
            timeouts: self.timeouts,
            not_compared: self.not_compared,
            ..done
        }
    }

    /// Carries `bytes`, which arrived on `port` and which the model
    /// (behind `window`) forwarded as `model`, through the RTL, after the
    /// register writes the window took since the last TLP; counts a
    /// disagreement if the RTL did otherwise.
    pub fn carry(
        &mut self,
        window: &mut CsrWindow,
        port: PortIndex,
        bytes: &[u8],
        model: &Forwarding,
    ) {
        if self.left_behind(window, 1) {
            return;
        }
        self.hand(Job::Carry {
            writes: window.take_written(),
            port: usize::from(port.0),
            bytes: bytes.to_vec(),
            model: model.clone(),
        });
    }

    /// Runs the RTL, after the register writes the window took since the
    /// last TLP, for a whole sweep of its outstanding-request tables and
    /// holds what it sends to `synthesized`: the completions the model
    /// synthesized for the requests a write of ABANDON gave up.
    pub fn synthesized(&mut self, window: &mut CsrWindow, synthesized: &[Delivery]) {
        if self.left_behind(window, synthesized.len() as u64) {
            return;
        }
        self.hand(Job::Sweep {
            writes: window.take_written(),
            synthesized: synthesized.to_vec(),
        });
    }

    /// Counts `completions`, which the model sent for host requests that
    /// timed out, as not compared: the RTL's timer has not run for as long
    /// (see the module's documentation). From now on the RTL is not held
    /// to the model.
    pub fn timed_out(&mut self, completions: &[Delivery]) {
        self.timeouts += completions.len() as u64;
    }

    /// Has the RTL's injector send what the register writes the window
    /// took since the last TLP ask of it, and holds what it sent since the
    /// last call to `model`: the TLPs the model's injector sent
    /// (`CsrWindow::take_injected`), TLP for TLP in order, each out of the
    /// same port with the same bytes; counts a disagreement if not.
    pub fn injected(&mut self, window: &mut CsrWindow, model: &[Delivery]) {
        if self.left_behind(window, model.len() as u64) {
            return;
        }
        self.hand(Job::Injected {
            writes: window.take_written(),
            model: model.to_vec(),
        });
    }

    /// Queues `job` for the RTL's thread, waiting while it is
    /// [`QUEUED_JOBS`] behind; if the thread has stopped, carries its
    /// panic on here.
    fn hand(&mut self, job: Job) {
        let handed = self.jobs.as_ref().map(|jobs| jobs.send(job).is_ok());
        if handed != Some(true) {
            match self.worker.take().map(JoinHandle::join) {
                Some(Err(panic)) => std::panic::resume_unwind(panic),
                _ => panic!("the RTL's thread stopped"),
            }
        }
    }

    /// Whether the RTL was left behind by a timeout, its tables no longer
    /// the model's; if so, counts `tlps` as not compared and drops the
    /// register writes the window took, which the RTL will never need.
    fn left_behind(&mut self, window: &mut CsrWindow, tlps: u64) -> bool {
        if self.timeouts == 0 {
            return false;
        }
        window.take_written();
        self.not_compared += tlps;
        true
    }
}

impl Drop for RtlPlane {
    /// Stops the RTL's thread after the job it is on (what it has not
    /// done yet no one will ask about) and waits for it.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.jobs = None;
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// The switch's RTL at reset in `simulator`.
fn build_top(simulator: RtlSimulator) -> Result<Box<SimulatorTop>, RtlError> {
    match simulator {
        RtlSimulator::RustHdl => SimulatorTop::new()
            .map(Box::new)
            .map_err(|error| RtlError(error.to_string())),
        RtlSimulator::Verilator => verilated_build()
            .and_then(|build| SimulatorTop::verilated(build).map_err(|error| error.to_string()))
            .map(Box::new)
            .map_err(RtlError),
    }
}

/// The RTL's side of a switch, on its thread: carries each job on the
/// RTL and holds what the RTL did to what the model did.
struct Checker {
    top: Box<SimulatorTop>,
    summary: RtlSummary,
    /// What the RTL's injector sent since the last [`Job::Injected`] held
    /// it to the model's: (egress port, wire bytes), in order, and how the
    /// run that sent each went otherwise, if not as expected.
    sent: Vec<Result<(usize, Vec<u8>), String>>,
}

impl Checker {
    fn new(top: Box<SimulatorTop>, simulator: RtlSimulator) -> Self {
        Checker {
            top,
            summary: RtlSummary {
                simulator: simulator.name(),
                ..RtlSummary::default()
            },
            sent: Vec::new(),
        }
    }

    /// Does the jobs of `queue` in order until it closes or `stop` is set.
    fn run(mut self, queue: &Receiver<Job>, stop: &AtomicBool) {
        while let Ok(job) = queue.recv() {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let started = std::time::Instant::now();
            let before = self.top.cycles();
            match job {
                Job::Carry {
                    writes,
                    port,
                    bytes,
                    model,
                } => {
                    self.replay(writes);
                    let carried = self.top.carry(port, &bytes);
                    let mailbox = self.take_mailbox();
                    self.summary.tlps += 1;
                    self.judge(carried, &mailbox, &model, || {
                        format!("{bytes:02x?} on port {port}")
                    });
                }
                Job::Sweep {
                    writes,
                    synthesized,
                } => {
                    self.replay(writes);
                    let sent = self.top.idle(capacity::OUTSTANDING_PER_HOST as u64);
                    let mailbox = self.take_mailbox();
                    let model = Forwarding {
                        deliveries: synthesized,
                        dropped: None,
                    };
                    self.judge(sent, &mailbox, &model, || {
                        "completions for abandoned requests".into()
                    });
                }
                Job::Injected { writes, model } => {
                    self.replay(writes);
                    let sent = std::mem::take(&mut self.sent);
                    if !(sent.is_empty() && model.is_empty()) {
                        self.summary.injected += model.len() as u64;
                        if let Some(how) = compare_injected(&model, sent) {
                            self.disagree(how, || "TLPs the CPU injected".into());
                        }
                    }
                }
                Job::Report(answer) => {
                    let _ = answer.send(self.summary.clone());
                    continue;
                }
            }
            self.summary.cycles += self.top.cycles() - before;
            self.summary.wall += started.elapsed();
        }
    }

    /// Counts a disagreement, `how` the RTL differed in `what`; the first
    /// one is kept to be shown.
    fn disagree(&mut self, how: String, what: impl FnOnce() -> String) {
        self.summary.disagreements += 1;
        self.summary
            .first_disagreement
            .get_or_insert_with(|| format!("{}: {how}", what()));
    }

    /// Counts a disagreement, described by `what` and how, if the RTL's
    /// `carried`, with the TLPs it queued in its `mailbox`, is not the
    /// model's `model`.
    fn judge(
        &mut self,
        carried: Result<Carried, CarryError>,
        mailbox: &[(usize, Vec<u8>)],
        model: &Forwarding,
        what: impl FnOnce() -> String,
    ) {
        let disagreement = match carried {
            Ok(carried) => compare(model, &carried, mailbox),
            Err(CarryError::Stuck) => Some("the RTL did not take it or never went quiet".into()),
            Err(error) => Some(format!("the RTL could not carry it: {error:?}")),
        };
        if let Some(how) = disagreement {
            self.disagree(how, what);
        }
    }

    /// Reads every TLP out of the RTL's mailbox, as the CPU does
    /// (`weft_drivers::mailbox::take_head`), with the port it arrived on.
    /// The RTL's queue is empty after each TLP it carries, so the manager's
    /// own POP writes to the model's mailbox, replayed into the RTL, find
    /// it empty.
    fn take_mailbox(&mut self) -> Vec<(usize, Vec<u8>)> {
        let mut queued = Vec::new();
        let mut tlp = [0; MAILBOX_BYTES];
        while let Some((port, len)) = take_head(&mut *self.top, &mut tlp) {
            queued.push((usize::from(port.0), tlp[..len].to_vec()));
        }
        queued
    }

    /// Writes `writes` into the RTL's registers, in order; after each
    /// SEND to the injector, runs the RTL until the injected TLP has left
    /// and keeps what left for the next [`Job::Injected`].
    fn replay(&mut self, writes: Vec<(u32, u32)>) {
        let send = inject::SEND.address(0, 0);
        for (address, value) in writes {
            self.top.write32(address, value);
            if address == send {
                let sent = self.top.idle(inject_cycles(value));
                self.sent.extend(injector_output(sent));
            }
        }
    }
}

/// What left the RTL in a run after a SEND: each TLP that left whole,
/// and anything else (a TLP left void, a drop, a header for the CPU, a
/// run that never went quiet) as what it was.
fn injector_output(sent: Result<Carried, CarryError>) -> Vec<Result<(usize, Vec<u8>), String>> {
    let carried = match sent {
        Ok(carried) => carried,
        Err(error) => return vec![Err(format!("the RTL's injector run failed: {error:?}"))],
    };
    let mut out: Vec<_> = carried
        .egress
        .into_iter()
        .map(|(port, bytes, _)| Ok((port, bytes)))
        .collect();
    out.extend(
        carried
            .nullified
            .iter()
            .map(|(port, bytes, _)| Err(format!("left void out of port {port}: {bytes:02x?}"))),
    );
    out.extend(
        carried
            .drops
            .iter()
            .map(|(port, reason)| Err(format!("dropped on port {port}, reason {reason}"))),
    );
    out.extend(
        carried
            .to_cpu
            .iter()
            .map(|(port, header)| Err(format!("sent the CPU {header:08x?} from port {port}"))),
    );
    out
}

/// How what the RTL's injector sent differs from what the model's sent,
/// if it does: TLP for TLP in order, egress port and wire bytes.
fn compare_injected(
    model: &[Delivery],
    rtl: Vec<Result<(usize, Vec<u8>), String>>,
) -> Option<String> {
    let (expected, to_cpu) = match split_deliveries(model) {
        Ok(split) => split,
        Err(error) => return Some(format!("the model injected a bad TLP: {error}")),
    };
    if !to_cpu.is_empty() {
        return Some("the model injected a TLP to the CPU".into());
    }
    let mut rtl_sent = Vec::new();
    for sent in rtl {
        match sent {
            Ok(tlp) => rtl_sent.push(tlp),
            Err(what) => return Some(what),
        }
    }
    (rtl_sent != expected)
        .then(|| format!("the RTL sent {rtl_sent:02x?}, the model {expected:02x?}"))
}

/// A TLP's wire bytes with the port it left by or arrived on.
type PortTlp = (usize, Vec<u8>);

/// TLPs as wire bytes, as they went: those out of a port as (egress port,
/// bytes), those to the CPU as (arrival port, bytes), in order; or the
/// error of one the model could not encode.
fn split_deliveries(deliveries: &[Delivery]) -> Result<(Vec<PortTlp>, Vec<PortTlp>), String> {
    let mut out = Vec::new();
    let mut cpu = Vec::new();
    for delivery in deliveries {
        let bytes = delivery
            .packet
            .to_bytes()
            .map_err(|error| format!("{error:?}"))?;
        match delivery.to {
            Destination::Port(port) => out.push((usize::from(port.0), bytes)),
            Destination::Cpu => cpu.push((usize::from(delivery.from.0), bytes)),
        }
    }
    Ok((out, cpu))
}

/// How what the RTL did differs from what the model did, if it does:
/// the TLPs out of each egress port as multisets of wire bytes, the TLPs
/// in its mailbox (with the port each arrived on) as a multiset of those
/// the model delivered to the CPU, and the drop reasons.
fn compare(model: &Forwarding, rtl: &Carried, mailbox: &[(usize, Vec<u8>)]) -> Option<String> {
    let (mut model_out, mut model_cpu) = match split_deliveries(&model.deliveries) {
        Ok(split) => split,
        Err(error) => return Some(format!("the model delivered a bad TLP: {error}")),
    };
    let mut rtl_out: Vec<(usize, Vec<u8>)> = rtl
        .egress
        .iter()
        .map(|(port, bytes, _)| (*port, bytes.clone()))
        .collect();
    model_out.sort();
    rtl_out.sort();
    if model_out != rtl_out {
        return Some(format!(
            "left as {rtl_out:02x?}, the model sent {model_out:02x?}"
        ));
    }
    let mut rtl_cpu = mailbox.to_vec();
    model_cpu.sort();
    rtl_cpu.sort();
    if rtl_cpu != model_cpu {
        return Some(format!(
            "queued {rtl_cpu:02x?} for the CPU, the model {model_cpu:02x?}"
        ));
    }
    let model_drop = model
        .dropped
        .and_then(|reason| DropReason::ALL.iter().position(|r| *r == reason))
        .map(|index| index as u32);
    let rtl_drop = rtl.drops.first().map(|(_, reason)| *reason);
    if rtl.drops.len() > 1 || rtl_drop != model_drop {
        let named =
            |index: Option<u32>| index.and_then(|i| DropReason::ALL.get(i as usize).copied());
        return Some(format!(
            "dropped as {:?}, the model as {:?}",
            named(rtl_drop),
            named(model_drop)
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use weft_model::{Packet, Switch};
    use weft_pcie::tlp::{AddressType, MemoryOp, MemoryRequest};
    use weft_pcie::tlp::{
        Attributes, Body, Completion, CompletionStatus, Header, Message, MessageCode,
        MessageRouting, Tag, TrafficClass,
    };
    use weft_pcie::Bdf;
    use weft_regs::driver::CsrDataPlane;
    use weft_regs::tables::{
        AddressRoute, DataPlane, Destination as Route, HostIndex, Permissions, PortRole, Window,
    };

    use super::*;
    use crate::switch::WeftSwitch;

    /// A completion for requester bus 5, which the bus table routes.
    fn completion() -> Vec<u8> {
        let completion = Completion {
            locked: false,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            completer: Bdf::new(9, 0, 0),
            status: CompletionStatus::Successful,
            byte_count_modified: false,
            byte_count: 4,
            requester: Bdf::new(5, 0, 0),
            tag: Tag::from_8bit(7),
            lower_address: 0,
            data_dw: Some(1),
        };
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Completion(completion),
        };
        Packet::new(header, vec![1, 2, 3, 4])
            .to_bytes()
            .expect("a well-formed completion")
    }

    /// A local message (routing 100b, §2.2.8): it ends at the switch, with
    /// its CPU.
    fn local_message(code: MessageCode) -> Vec<u8> {
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Message(Message::new(Bdf::new(5, 0, 0), code, MessageRouting::Local)),
        };
        Packet::new(header, Vec::new())
            .to_bytes()
            .expect("a well-formed message")
    }

    fn route_bus_5(window: &mut CsrWindow, to: u8) {
        let mut plane = CsrDataPlane::new(window).expect("a weft data plane");
        plane
            .set_bus_route(5, Some(Route::Port(PortIndex(to))))
            .expect("a bus route");
    }

    /// The RTL carries a TLP as the model does while it holds the same
    /// tables, and the check catches it when a register write reaches the
    /// model only.
    #[test]
    fn the_rtl_carries_as_the_model_and_a_table_it_missed_shows() {
        let mut window = CsrWindow::new(Switch::new(4));
        let mut rtl = RtlPlane::new(&mut window, RtlSimulator::RustHdl).expect("the RTL builds");
        {
            let mut plane = CsrDataPlane::new(&mut window).expect("a weft data plane");
            for port in 0..3 {
                plane
                    .set_port_role(PortIndex(port), PortRole::Fabric)
                    .expect("a role");
            }
        }
        route_bus_5(&mut window, 1);
        let bytes = completion();
        let forwarding = window.forward(PortIndex(0), &bytes).expect("taken");
        assert_eq!(forwarding.deliveries.len(), 1);
        rtl.carry(&mut window, PortIndex(0), &bytes, &forwarding);
        assert_eq!(rtl.summary().tlps, 1);
        assert_eq!(rtl.summary().disagreements, 0, "{:?}", rtl.summary());

        // The model routes bus 5 to port 2 now; the RTL never hears of it.
        route_bus_5(&mut window, 2);
        window.take_written();
        let forwarding = window.forward(PortIndex(0), &bytes).expect("taken");
        rtl.carry(&mut window, PortIndex(0), &bytes, &forwarding);
        assert_eq!(rtl.summary().disagreements, 1);
        let first = rtl.summary().first_disagreement.unwrap_or_default();
        assert!(first.contains("the model sent [(02,"), "{first}");
    }

    /// What the RTL queues for the CPU is held to what the model delivers
    /// there, TLP for TLP: one the model delivers otherwise is a disagreement.
    #[test]
    fn the_rtl_queues_for_the_cpu_what_the_model_delivers_and_another_shows() {
        let mut window = CsrWindow::new(Switch::new(4));
        let mut rtl = RtlPlane::new(&mut window, RtlSimulator::RustHdl).expect("the RTL builds");
        CsrDataPlane::new(&mut window)
            .expect("a weft data plane")
            .set_port_role(PortIndex(0), PortRole::Fabric)
            .expect("a role");
        let bytes = local_message(MessageCode::PmPme);
        let forwarding = window.forward(PortIndex(0), &bytes).expect("taken");
        assert_eq!(forwarding.deliveries[0].to, Destination::Cpu);
        rtl.carry(&mut window, PortIndex(0), &bytes, &forwarding);
        assert_eq!(rtl.summary().disagreements, 0, "{:?}", rtl.summary());

        // The model's copy says PME_Turn_Off; the RTL's, PM_PME.
        let mut forwarding = window.forward(PortIndex(0), &bytes).expect("taken");
        forwarding.deliveries[0].packet =
            Packet::parse(&local_message(MessageCode::PmeTurnOff)).expect("a well-formed message");
        rtl.carry(&mut window, PortIndex(0), &bytes, &forwarding);
        assert_eq!(rtl.summary().disagreements, 1);
        let first = rtl.summary().first_disagreement.unwrap_or_default();
        assert!(first.contains("for the CPU, the model"), "{first}");
    }

    /// Writes `bytes` into the injector through `window`, as the CPU
    /// does (`weft_drivers::mailbox`), and sends them out of `port`.
    fn inject(window: &mut CsrWindow, port: u8, bytes: &[u8]) {
        use weft_regs::csr::inject_data;
        for (n, dw) in bytes.chunks_exact(4).enumerate() {
            let dw = u32::from_be_bytes([dw[0], dw[1], dw[2], dw[3]]);
            window.write32(inject_data::DATA.address(0, n as u32), dw);
        }
        let dwords = (bytes.len() / 4) as u32;
        let send = inject::PORT.encode(u32::from(port)) | inject::DWORDS.encode(dwords);
        window.write32(inject::SEND.address(0, 0), send);
    }

    /// What the CPU injects the RTL's injector sends too, held TLP for
    /// TLP to what the model's sent; a TLP the model sends otherwise (a
    /// mutated copy) or out of another port is a disagreement, and a
    /// carried TLP after it is not mistaken for an injected one.
    #[test]
    fn the_rtls_injector_sends_what_the_model_does_and_another_tlp_shows() {
        let mut window = CsrWindow::new(Switch::new(4));
        let mut rtl = RtlPlane::new(&mut window, RtlSimulator::RustHdl).expect("the RTL builds");
        route_bus_5(&mut window, 1);
        inject(&mut window, 2, &completion());
        let sent = window.take_injected();
        assert_eq!(sent.len(), 1);
        rtl.injected(&mut window, &sent);
        assert_eq!(rtl.summary().injected, 1);
        assert_eq!(rtl.summary().disagreements, 0, "{:?}", rtl.summary());
        // Injected, then a TLP carried: each is held to its own.
        inject(&mut window, 3, &local_message(MessageCode::PmPme));
        let bytes = completion();
        let forwarding = window.forward(PortIndex(0), &bytes).expect("taken");
        rtl.carry(&mut window, PortIndex(0), &bytes, &forwarding);
        let sent = window.take_injected();
        rtl.injected(&mut window, &sent);
        assert_eq!(rtl.summary().disagreements, 0, "{:?}", rtl.summary());

        // The model's copy says PME_Turn_Off; the RTL sent PM_PME.
        inject(&mut window, 3, &local_message(MessageCode::PmPme));
        let mut sent = window.take_injected();
        sent[0].packet =
            Packet::parse(&local_message(MessageCode::PmeTurnOff)).expect("a well-formed message");
        rtl.injected(&mut window, &sent);
        assert_eq!(rtl.summary().disagreements, 1);
        let first = rtl.summary().first_disagreement.unwrap_or_default();
        assert!(
            first.starts_with("TLPs the CPU injected: the RTL sent [(03,"),
            "{first}"
        );
        // Out of another port than the model's.
        inject(&mut window, 2, &completion());
        let mut sent = window.take_injected();
        sent[0].to = Destination::Port(PortIndex(1));
        rtl.injected(&mut window, &sent);
        assert_eq!(rtl.summary().disagreements, 2);
        assert_eq!(rtl.summary().injected, 4);
    }

    /// A host's proxy fabric ID, on bus 0xf0.
    const PROXY: Bdf = Bdf::new(0xf0, 0, 0);
    /// An endpoint's BAR, in the host's domain and in the fabric.
    const BAR_HOST: u64 = 0x9000_0000;
    const BAR_FABRIC: u64 = 0x40_0000_0000;

    /// A switch on the RTL with a host on port 0 and an endpoint on port
    /// 1 (fabric bus 2) behind a window of the host's.
    fn host_and_endpoint() -> WeftSwitch {
        let mut switch = WeftSwitch::new(1, 4, 0x1d1d);
        switch
            .use_rtl(RtlSimulator::RustHdl)
            .expect("the RTL builds");
        let mut plane = CsrDataPlane::new(switch.csr_window()).expect("a weft data plane");
        let host = PortRole::Host {
            host: HostIndex(0),
            proxy_id: PROXY,
        };
        plane.set_port_role(PortIndex(0), host).expect("a role");
        let endpoint = PortRole::Endpoint {
            owner: None,
            buses: (2, 2),
        };
        plane.set_port_role(PortIndex(1), endpoint).expect("a role");
        let window = Window {
            base: BAR_HOST,
            size: 1 << 20,
            fabric_base: BAR_FABRIC,
            permissions: Permissions::READ_WRITE,
        };
        plane.set_window(PortIndex(0), 0, window).expect("a window");
        let route = AddressRoute {
            base: BAR_FABRIC,
            size: 1 << 20,
            to: Route::Port(PortIndex(1)),
        };
        plane.set_address_route(0, Some(route)).expect("a route");
        plane
            .set_bus_route(PROXY.bus(), Some(Route::Port(PortIndex(0))))
            .expect("a bus route");
        switch
    }

    fn host_read() -> Vec<u8> {
        let request = MemoryRequest {
            op: MemoryOp::Read,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            address_type: AddressType::default(),
            requester: Bdf::new(0, 0, 0),
            tag: Tag::from_8bit(5),
            address: BAR_HOST,
            length_dw: 1,
            first_be: 0xf,
            last_be: 0,
            processing_hint: None,
        };
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Memory(request),
        };
        Packet::new(header, Vec::new())
            .to_bytes()
            .expect("a well-formed read")
    }

    /// The model's Completer Abort for a timed-out request has no RTL
    /// counterpart, and the RTL still holds the request: from then on
    /// nothing is compared, neither counted as agreeing nor as differing.
    #[test]
    fn after_a_model_timeout_the_rtl_is_not_compared() {
        let mut switch = host_and_endpoint();
        let read = switch.forward(PortIndex(0), &host_read()).expect("taken");
        let Body::Memory(sent) = read.deliveries[0].packet.header.body else {
            panic!("the read goes on: {read:?}");
        };
        let summary = switch.rtl_summary().expect("an RTL").clone();
        assert_eq!((summary.tlps, summary.disagreements), (1, 0), "{summary:?}");

        let due = switch.next_timeout().expect("the read is in flight");
        let timed_out = switch.advance_to(due);
        assert_eq!(timed_out.len(), 1);
        assert_eq!(switch.rtl_summary().map(|s| s.timeouts), Some(1));

        // The endpoint's late answer: the model drops it, its request
        // being over; the RTL, still holding the request, would forward
        // it to the host, which compared would be a false disagreement.
        let mut late = Packet::parse(&completion()).expect("a completion");
        if let Body::Completion(c) = &mut late.header.body {
            (c.completer, c.requester, c.tag) = (Bdf::new(2, 0, 0), PROXY, sent.tag);
        }
        let late = late.to_bytes().expect("a well-formed completion");
        let forwarding = switch.forward(PortIndex(1), &late).expect("taken");
        assert_eq!(forwarding.dropped, Some(DropReason::UnexpectedCompletion));
        let summary = switch.rtl_summary().expect("an RTL");
        assert_eq!(
            (summary.tlps, summary.disagreements, summary.not_compared),
            (1, 0, 1),
            "{summary:?}"
        );
    }
}
