//! `weft-sim`: a whole weft fabric without hardware.
//!
//! `cargo run --release` at the workspace root runs this binary's default
//! scenario, the reference experiment of `shared/REFERENCE.md`
//! (`sim/scenarios/reference.toml`, built in), and prints what each step
//! showed next to the published figures; `weft-sim --json` prints the same
//! report as JSON. `weft-sim run FILE [--json]` runs any scenario file
//! ([`weft_sim::scenario`]). Either records a waveform of the switches'
//! ports with `--vcd FILE` (`--vcd-switch NAME` to choose them,
//! [`weft_sim::waveform`]). `weft-sim serve` keeps the reference fabric
//! running as a virtual board managed over UDP ([`weft_sim::serve`]).
//! `weft-sim firmware` runs the soft core's firmware ELF on the ISS with its
//! management MAC bridged to a TAP interface ([`weft_sim::bridge`]).

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use weft_proto::Key;
use weft_sim::bridge::{self, FirmwareOptions};
use weft_sim::firmware_board::FirmwareCore;
use weft_sim::iss_board::CPU_CLOCK_HZ;
use weft_sim::scenario::engine::Engine;
use weft_sim::scenario::format::DataPlaneKind;
use weft_sim::scenario::validate::ManagerPlan;
use weft_sim::scenario::Scenario;
use weft_sim::serve::{ServeConfig, Server, DEFAULT_LISTEN};
use weft_sim::waveform::{Probe, Waveform};

const SERVE_USAGE: &str =
    "usage: weft-sim serve [--listen 127.0.0.1:PORT] (--key HEX | --insecure) [--counter-floor N]

Runs the reference fabric as a virtual board: weftctl manages it over UDP
on localhost (default 127.0.0.1:7330). --key takes the switch's key as 64
hexadecimal digits; --insecure uses the publicly known key instead.
--counter-floor starts the replay counter at N (microseconds since the Unix
epoch, as clients count), as a switch restarted from its flash does: only
requests with counters above N are accepted, and weftctl is told so.";

const FIRMWARE_USAGE: &str =
    "usage: weft-sim firmware --elf PATH --tap NAME [--key HEX | --insecure] [--ip A.B.C.D/PREFIX | --dhcp] [--flash FILE | --fabric SCENARIO]

Runs the soft core's firmware ELF (cargo xtask firmware) on the instruction-set
simulator at the reference soft core clock, with its management MAC bridged to
the TAP interface NAME (created if missing; needs root or CAP_NET_ADMIN). The
firmware's console is printed here. --key, --insecure, --ip and --dhcp are typed
on the firmware's console at start, as its `key`, `insecure`, `ip A.B.C.D/PREFIX`
and `ip dhcp` commands; with --dhcp the address is leased by a DHCP server on the
TAP's network (the firmware prints the lease).
--flash keeps the board's configuration flash (the key and the address setting,
among others) in FILE across runs: the firmware stores --ip and --dhcp, and a
later run on the same FILE without either starts at that address (the UDP
gateway reads it from FILE too). --fabric makes the firmware the fabric manager of the scenario
SCENARIO (`manager = \"firmware-iss\"`, such as sim/scenarios/firmware.toml):
its steps run, then the fabric runs on, and its hosts' hot-plug events are
printed here.";

const USAGE: &str = "usage: weft-sim [--json] [--vcd FILE [--vcd-switch NAME]...] [--data-plane KIND]
       weft-sim run FILE [--json] [--vcd FILE [--vcd-switch NAME]...] [--data-plane KIND] [--firmware-core iss|rtl]
       weft-sim serve [--help]
       weft-sim firmware [--help]

Runs the reference experiment (shared/REFERENCE.md, the built-in scenario
sim/scenarios/reference.toml) on a simulated fabric and prints its results
table; --json prints the whole report as JSON instead, with the
configuration that produced it and the wall time. `run FILE` runs the
scenario file FILE the same way.

--vcd FILE records a waveform (Value Change Dump, 1 ps timescale) of the
switches' ports while the scenario runs: per port and direction (rx, tx) a
valid level for each TLP's time on the wire, a TLP count, the TLP's kind
(MRd, MWr, CplD, CfgRd0, Msg, ...), Fmt/Type byte, length in DW, requester
ID, tag and address bits, header credits in use by class, and per port the
drops and the last drop's reason. --vcd-switch NAME (repeatable) records
only the switches named so in the scenario file (s0 to s3 in the
reference); without it, every switch.

--data-plane KIND makes KIND carry every switch's TLPs, whatever the
scenario says: model (weft-model's transaction-level switch), rtl
(weft-hdl's switch in rust-hdl's simulator, tens of cycles a second) or
verilated (the same switch's Verilog run by Verilator, thousands; built
once into $WEFT_VERILATED_CACHE or ~/.cache/weft/verilated, about three
minutes, and needing verilator and g++). Either RTL is held to the model
TLP for TLP, and the report says how it went.

--firmware-core chooses what runs the firmware of a scenario whose fabric
manager is the firmware (`manager = \"firmware-iss\"` or `\"firmware-rtl\"`):
iss, the instruction-set simulator, or rtl, the RTL soft core (weft-hdl's
SoC, cycle by cycle; its management MAC idle).";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => serve(&args[1..]),
        Some("run") => run_file(&args[1..]),
        Some("firmware") => firmware(&args[1..]),
        Some("--help" | "-h") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => match RunOptions::parse(&args) {
            Ok(options) if options.firmware_core.is_some() => {
                eprintln!("weft-sim: --firmware-core is for `run FILE` with a firmware-managed scenario: the reference experiment's manager is the native one\n\n{USAGE}");
                ExitCode::from(2)
            }
            Ok(options) if options.file.is_none() => run(&Scenario::reference(), &options),
            Ok(options) => {
                let file = options.file.unwrap_or_default();
                eprintln!("weft-sim: unknown argument {file} (`weft-sim run {file}` runs a scenario file)\n\n{USAGE}");
                ExitCode::from(2)
            }
            Err(why) => {
                eprintln!("weft-sim: {why}\n\n{USAGE}");
                ExitCode::from(2)
            }
        },
    }
}

/// How to run a scenario: its file (for `run`), the report's form and
/// the waveform to record.
#[derive(Debug, Default)]
struct RunOptions {
    /// The scenario file, the one argument that is not an option.
    file: Option<String>,
    /// The report as JSON rather than a table.
    json: bool,
    /// Where to write the waveform, if one is recorded.
    vcd: Option<PathBuf>,
    /// The switches whose ports are recorded; every switch if empty.
    vcd_switches: Vec<String>,
    /// What runs the firmware, in place of the scenario's choice.
    firmware_core: Option<FirmwareCore>,
    /// What carries every switch's TLPs, in place of the scenario's choice.
    data_plane: Option<DataPlaneKind>,
}

impl RunOptions {
    /// The options in `args`, or a message saying what is wrong.
    fn parse(args: &[String]) -> Result<RunOptions, String> {
        let mut options = RunOptions::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--json" => options.json = true,
                "--vcd" => {
                    let file = args.next().ok_or("--vcd needs a file to write")?;
                    options.vcd = Some(PathBuf::from(file));
                }
                "--firmware-core" => {
                    let name = args.next().ok_or("--firmware-core needs iss or rtl")?;
                    let core = name.parse().map_err(|e| format!("--firmware-core: {e}"))?;
                    options.firmware_core = Some(core);
                }
                "--data-plane" => {
                    let kind = args
                        .next()
                        .ok_or("--data-plane needs model, rtl or verilated")?;
                    let kind = kind.parse().map_err(|e| format!("--data-plane {e}"))?;
                    options.data_plane = Some(kind);
                }
                "--vcd-switch" => {
                    let name = args.next().ok_or("--vcd-switch needs a switch's name")?;
                    options.vcd_switches.push(name.clone());
                }
                other if other.starts_with('-') || options.file.is_some() => {
                    return Err(format!("unknown argument {other}"))
                }
                file => options.file = Some(file.to_string()),
            }
        }
        if options.vcd.is_none() && !options.vcd_switches.is_empty() {
            return Err("--vcd-switch chooses what --vcd FILE records; give --vcd FILE".into());
        }
        Ok(options)
    }
}

/// The options of `weft-sim serve`, or a message saying what is wrong.
fn serve_config(args: &[String]) -> Result<ServeConfig, String> {
    let mut listen = DEFAULT_LISTEN;
    let mut key: Option<Key> = None;
    let mut insecure = false;
    let mut counter_floor = 0;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--listen" => {
                let value = args.next().ok_or("--listen needs an address")?;
                listen = value
                    .parse::<SocketAddr>()
                    .map_err(|e| format!("--listen {value}: {e} (expected 127.0.0.1:PORT)"))?;
            }
            "--key" => {
                let value = args.next().ok_or("--key needs 64 hexadecimal digits")?;
                key = Some(Key::parse_hex(value).map_err(|e| format!("--key: {e}"))?);
            }
            "--insecure" => insecure = true,
            "--counter-floor" => {
                let value = args.next().ok_or("--counter-floor needs a counter")?;
                counter_floor = value.parse::<u64>().map_err(|e| {
                    format!("--counter-floor {value}: {e} (expected microseconds since 1970)")
                })?;
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    let key = match (key, insecure) {
        (Some(key), false) => key,
        (None, true) => Key::insecure_public(),
        (Some(_), true) => return Err("--key and --insecure exclude each other".into()),
        (None, false) => return Err("give the switch's key with --key HEX, or --insecure".into()),
    };
    Ok(ServeConfig {
        listen,
        key,
        counter_floor,
    })
}

/// `weft-sim serve`: the reference fabric managed over UDP until interrupted.
fn serve(args: &[String]) -> ExitCode {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{SERVE_USAGE}");
        return ExitCode::SUCCESS;
    }
    let config = match serve_config(args) {
        Ok(config) => config,
        Err(why) => {
            eprintln!("weft-sim serve: {why}\n\n{SERVE_USAGE}");
            return ExitCode::from(2);
        }
    };
    println!("weft-sim serve: bringing up the reference fabric (enumerate, bind GPUs to host 1, boot hosts)");
    let mut server = match Server::start(config) {
        Ok(server) => server,
        Err(err) => {
            eprintln!("weft-sim serve: {err}");
            return ExitCode::FAILURE;
        }
    };
    let addr = match server.local_addr() {
        Ok(addr) => addr,
        Err(err) => {
            eprintln!("weft-sim serve: {err}");
            return ExitCode::FAILURE;
        }
    };
    let mode = if server.is_insecure() {
        "insecure: the publicly known key (weftctl --insecure)"
    } else {
        "authenticated: the key given with --key (weftctl --key-file FILE)"
    };
    println!(
        "weft-sim serve: switch {:#x} listening on udp {addr}",
        server.switch().0
    );
    println!("weft-sim serve: key mode {mode}");
    let key_option = if server.is_insecure() {
        "--insecure"
    } else {
        "--key-file FILE"
    };
    println!("weft-sim serve: try `weftctl --switch {addr} {key_option} topology`; Ctrl-C stops");
    let never = AtomicBool::new(false);
    match server.run(&never) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("weft-sim serve: {err}");
            ExitCode::FAILURE
        }
    }
}

/// `weft-sim firmware`: the firmware on the ISS, on a TAP or a UDP port, until interrupted.
fn firmware(args: &[String]) -> ExitCode {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{FIRMWARE_USAGE}");
        return ExitCode::SUCCESS;
    }
    let options = match FirmwareOptions::parse(args) {
        Ok(options) => options,
        Err(why) => {
            eprintln!("weft-sim firmware: {why}\n\n{FIRMWARE_USAGE}");
            return ExitCode::from(2);
        }
    };
    let started = |line: &bridge::Connected, address: bridge::AddressChoice| {
        eprintln!(
            "weft-sim firmware: {} on the ISS at {} MHz, management port {} on {line}; Ctrl-C stops",
            options.elf,
            CPU_CLOCK_HZ as f64 / 1e6,
            address,
        );
    };
    let never = AtomicBool::new(false);
    match bridge::run(&options, &mut std::io::stdout(), &never, started) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("weft-sim firmware: {err}");
            ExitCode::FAILURE
        }
    }
}

/// `weft-sim run FILE [--json] [--vcd FILE ...]`: a scenario file, checked, then run.
fn run_file(args: &[String]) -> ExitCode {
    let options = match RunOptions::parse(args) {
        Ok(options) => options,
        Err(why) => {
            eprintln!("weft-sim run: {why}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let Some(path) = &options.file else {
        eprintln!("weft-sim run: give one scenario file\n\n{USAGE}");
        return ExitCode::from(2);
    };
    match Scenario::load(Path::new(path)) {
        Ok(mut scenario) => {
            if let Some(chosen) = options.firmware_core {
                let ManagerPlan::Firmware { core, .. } = &mut scenario.manager else {
                    eprintln!(
                        "weft-sim run: --firmware-core is for a scenario whose manager is the \
                         firmware (`manager = \"firmware-iss\"`); {path}'s is the native one"
                    );
                    return ExitCode::from(2);
                };
                *core = chosen;
            }
            run(&scenario, &options)
        }
        Err(err) => {
            eprintln!("weft-sim: {err}");
            ExitCode::from(2)
        }
    }
}

/// Wall time after which, without a terminal, each step's start is printed.
const PROGRESS_LINE_EVERY: Duration = Duration::from_secs(10);

/// Wall time after which, without a terminal, a step still going on is
/// said to be (a 16 MiB copy through RTL switches takes tens of minutes).
const STILL_GOING_EVERY: Duration = Duration::from_secs(60);

/// Prints a run's progress on standard error for a log: the start of each
/// step received on `steps` once the run has gone on for
/// [`PROGRESS_LINE_EVERY`] since the last line, and the step still going
/// on after [`STILL_GOING_EVERY`] without a line. Ends when `steps` closes.
fn progress_lines(started: Instant, steps: Receiver<String>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut last_line = started;
        let mut current = None;
        let say = |what: &str| {
            eprintln!(
                "weft-sim: [{:.0} s] {what}",
                started.elapsed().as_secs_f64()
            );
        };
        loop {
            match steps.recv_timeout(STILL_GOING_EVERY.saturating_sub(last_line.elapsed())) {
                Ok(step) => {
                    if last_line.elapsed() >= PROGRESS_LINE_EVERY {
                        say(&step);
                        last_line = Instant::now();
                    }
                    current = Some(step);
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Some(step) = &current {
                        say(&format!("still in {step}"));
                    }
                    last_line = Instant::now();
                }
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    })
}

/// A bar on stderr naming the running step, when stderr is a terminal
/// (a log or a pipe gets the report, and a line per step on long runs).
fn progress_bar(steps: usize) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(steps as u64).with_style(
        ProgressStyle::with_template("{spinner} [{elapsed}] step {pos}/{len}: {wide_msg}")
            .expect("a valid template"),
    );
    // A long step (a 16 MiB copy) still shows that time passes.
    bar.enable_steady_tick(Duration::from_millis(200));
    Some(bar)
}

/// The waveform `options` ask for, its file created and its header
/// written, or a message saying why it cannot be.
fn waveform(scenario: &Scenario, options: &RunOptions) -> Result<Option<Waveform>, String> {
    let Some(path) = &options.vcd else {
        return Ok(None);
    };
    let probes = Probe::select(scenario, &options.vcd_switches).map_err(|e| e.to_string())?;
    Waveform::create(path, &probes)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// Runs `scenario` and prints its report as a table or as JSON; records
/// its waveform if `options` ask for one.
fn run(scenario: &Scenario, options: &RunOptions) -> ExitCode {
    let scenario = &match options.data_plane {
        Some(kind) => scenario.on_data_plane(kind),
        None => scenario.clone(),
    };
    let waveform = match waveform(scenario, options) {
        Ok(waveform) => waveform,
        Err(why) => {
            eprintln!("weft-sim: {why}");
            return ExitCode::from(2);
        }
    };
    let json = options.json;
    if !json {
        print!("{}", weft_sim::report::heading(scenario));
    }
    let started = Instant::now();
    let mut engine = match Engine::new(scenario) {
        Ok(engine) => engine,
        Err(err) => {
            eprintln!("weft-sim: the scenario failed at {err}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(waveform) = waveform {
        engine.record_waveform(waveform);
    }
    let bar = progress_bar(scenario.steps.len());
    // Without a terminal for the bar, lines once a run has been going for
    // a while (a run on the RTL takes hours), so a log shows it.
    let (steps, begun) = mpsc::channel();
    let lines = bar.is_none().then(|| progress_lines(started, begun));
    let ran = engine.run_steps(&mut |step| {
        if let Some(bar) = &bar {
            bar.set_position(step.index as u64 + 1);
            bar.set_message(step.what.to_string());
        } else {
            let _ = steps.send(format!(
                "step {}/{}: {}",
                step.index + 1,
                scenario.steps.len(),
                step.what
            ));
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    // The waveform is written to the end even when a step failed: it shows how.
    let recorded = engine.finish_waveform();
    if let Err(err) = ran {
        eprintln!("weft-sim: the scenario failed at {err}");
        return ExitCode::FAILURE;
    }
    if scenario
        .switches
        .iter()
        .any(|switch| switch.data_plane != DataPlaneKind::Model)
    {
        let _ = steps.send("the report: the RTL switches check what they were handed".into());
    }
    let report = engine.finish();
    drop(steps);
    if let Some(lines) = lines {
        let _ = lines.join();
    }
    let wall = started.elapsed();
    match (recorded, &options.vcd) {
        (Some(Ok(tlps)), Some(path)) => {
            let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
            eprintln!(
                "weft-sim: waveform {}: {tlps} TLPs at switch ports, {:.1} MiB",
                path.display(),
                bytes as f64 / f64::from(1 << 20)
            );
        }
        (Some(Err(err)), _) => {
            eprintln!("weft-sim: {err}");
            return ExitCode::FAILURE;
        }
        _ => {}
    }
    if !json {
        print!("{}", weft_sim::report::table(scenario, &report, wall));
        return ExitCode::SUCCESS;
    }
    match serde_json::to_string_pretty(&weft_sim::report::json(scenario, &report, wall)) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("weft-sim: cannot write the report as JSON: {err}");
            ExitCode::FAILURE
        }
    }
}
