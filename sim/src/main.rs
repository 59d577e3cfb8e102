//! `weft-sim`: a whole weft fabric without hardware.
//!
//! `cargo run --release` at the workspace root runs this binary's default
//! scenario, the reference experiment of `shared/REFERENCE.md`
//! (`sim/scenarios/reference.toml`, built in), and prints what each step
//! showed next to the published figures; `weft-sim --json` prints the same
//! report as JSON. `weft-sim run FILE [--json]` runs any scenario file
//! ([`weft_sim::scenario`]). `weft-sim serve` keeps the reference fabric
//! running as a virtual board managed over UDP ([`weft_sim::serve`]).
//! `weft-sim firmware` runs the soft core's firmware ELF on the ISS with its
//! management MAC bridged to a TAP interface ([`weft_sim::bridge`]).

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use weft_proto::Key;
use weft_sim::bridge::{self, FirmwareOptions};
use weft_sim::iss_board::CPU_CLOCK_HZ;
use weft_sim::scenario::{engine, Scenario};
use weft_sim::serve::{ServeConfig, Server, DEFAULT_LISTEN};

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

const USAGE: &str = "usage: weft-sim [--json]
       weft-sim run FILE [--json]
       weft-sim serve [--help]
       weft-sim firmware [--help]

Runs the reference experiment (shared/REFERENCE.md, the built-in scenario
sim/scenarios/reference.toml) on a simulated fabric and prints its results
table; --json prints the whole report as JSON instead, with the
configuration that produced it and the wall time. `run FILE` runs the
scenario file FILE the same way.";

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
        None => run(&Scenario::reference(), false),
        Some("--json") if args.len() == 1 => run(&Scenario::reference(), true),
        Some(other) => {
            eprintln!("weft-sim: unknown argument {other}\n\n{USAGE}");
            ExitCode::from(2)
        }
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

/// `weft-sim run FILE [--json]`: a scenario file, checked, then run.
fn run_file(args: &[String]) -> ExitCode {
    let (path, json) = match args {
        [path] => (path, false),
        [path, flag] | [flag, path] if flag == "--json" => (path, true),
        _ => {
            eprintln!("weft-sim run: give one scenario file (and optionally --json)\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match Scenario::load(Path::new(path)) {
        Ok(scenario) => run(&scenario, json),
        Err(err) => {
            eprintln!("weft-sim: {err}");
            ExitCode::from(2)
        }
    }
}

/// A bar on stderr naming the running step, when stderr is a terminal
/// (a log or a pipe gets only the report).
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

/// Runs `scenario` and prints its report as a table or as JSON.
fn run(scenario: &Scenario, json: bool) -> ExitCode {
    if !json {
        print!("{}", weft_sim::report::heading(scenario));
    }
    let started = Instant::now();
    let bar = progress_bar(scenario.steps.len());
    let report = engine::run(scenario, &mut |step| {
        if let Some(bar) = &bar {
            bar.set_position(step.index as u64 + 1);
            bar.set_message(step.what.to_string());
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let report = match report {
        Ok(report) => report,
        Err(err) => {
            eprintln!("weft-sim: the scenario failed at {err}");
            return ExitCode::FAILURE;
        }
    };
    let wall = started.elapsed();
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
