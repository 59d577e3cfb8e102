//! `weft-sim`: a whole weft fabric without hardware.
//!
//! `cargo run --release` at the workspace root runs this binary's default
//! scenario, the reference experiment of `shared/REFERENCE.md`
//! ([`weft_sim::reference`]), and prints what each step showed next to the
//! published figures; `weft-sim --json` prints the same report as JSON.
//! `weft-sim serve` keeps the reference fabric running as a virtual board
//! managed over UDP ([`weft_sim::serve`]). `weft-sim firmware` runs the
//! soft core's firmware ELF on the ISS with its management MAC bridged to a
//! TAP interface ([`weft_sim::bridge`]).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde::Serialize;

use weft_proto::Key;
use weft_sim::bridge::{self, FirmwareOptions};
use weft_sim::iss_board::CPU_CLOCK_HZ;
use weft_sim::serve::{ServeConfig, Server, DEFAULT_LISTEN};

use weft_pcie::link::{max_payload_throughput, TlpKind};
use weft_pcie::split::PayloadSize;
use weft_sim::reference::{
    self, micros, Published, ReferenceConfig, Report, LINK, LINK_LATENCY_PS, PUBLISHED, TOPOLOGY,
};
use weft_sim::world::{FIRMWARE_LATENCY, SWITCH_LATENCY};

const SERVE_USAGE: &str = "usage: weft-sim serve [--listen 127.0.0.1:PORT] (--key HEX | --insecure)

Runs the reference fabric as a virtual board: weftctl manages it over UDP
on localhost (default 127.0.0.1:7330). --key takes the switch's key as 64
hexadecimal digits; --insecure uses the publicly known key instead.";

const FIRMWARE_USAGE: &str =
    "usage: weft-sim firmware --elf PATH --tap NAME [--key HEX | --insecure] [--ip A.B.C.D/PREFIX]

Runs the soft core's firmware ELF (cargo xtask firmware) on the instruction-set
simulator at the reference soft core clock, with its management MAC bridged to
the TAP interface NAME (created if missing; needs root or CAP_NET_ADMIN). The
firmware's console is printed here. --key, --insecure and --ip are typed on the
firmware's console at start, as its `key`, `insecure` and `ip` commands.";

const USAGE: &str = "usage: weft-sim [--json]
       weft-sim serve [--help]
       weft-sim firmware [--help]

Runs the reference experiment (shared/REFERENCE.md) on a simulated fabric
and prints its results table; --json prints the whole report as JSON
instead, with the configuration that produced it and the wall time.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => serve(&args[1..]),
        Some("firmware") => firmware(&args[1..]),
        Some("--help" | "-h") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        None => reference_run(false),
        Some("--json") if args.len() == 1 => reference_run(true),
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
            other => return Err(format!("unknown option {other}")),
        }
    }
    let key = match (key, insecure) {
        (Some(key), false) => key,
        (None, true) => Key::insecure_public(),
        (Some(_), true) => return Err("--key and --insecure exclude each other".into()),
        (None, false) => return Err("give the switch's key with --key HEX, or --insecure".into()),
    };
    Ok(ServeConfig { listen, key })
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
    let started = |line: &bridge::Connected| {
        eprintln!(
            "weft-sim firmware: {} on the ISS at {} MHz, management port {} on {line}; Ctrl-C stops",
            options.elf,
            CPU_CLOCK_HZ / 1_000_000,
            options.address,
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

/// What produced a report: the scenario, its fixed parameters and the
/// run's configuration.
#[derive(Serialize)]
struct Configuration {
    /// The scenario run.
    scenario: &'static str,
    /// Where everything sits and which links the GPU copies cross.
    topology: [&'static str; 2],
    /// Every link's generation and width.
    link: String,
    /// Every link's fixed latency, ns.
    link_latency_ns: u64,
    /// A switch's traversal latency, ns.
    switch_latency_ns: u64,
    /// The management CPU's answer time for a configuration request, ns.
    firmware_latency_ns: u64,
    /// The switch model.
    switch_model: &'static str,
    /// How the fabric manager runs.
    firmware: &'static str,
    /// What this run varied.
    run: ReferenceConfig,
}

/// The link model's best payload rate, the ceiling for the copies.
#[derive(Serialize)]
struct LinkMaximum {
    /// Max_Payload_Size the figure assumes, bytes.
    max_payload_size: u16,
    /// One direction, bytes per second (weft-pcie's model, with DLLP and
    /// SKP overhead).
    unidirectional_bytes_per_s: f64,
    /// Both directions together: twice one direction.
    bidirectional_bytes_per_s: f64,
}

/// The whole `--json` document.
#[derive(Serialize)]
struct JsonReport<'a> {
    /// What produced the report.
    configuration: Configuration,
    /// What the run measured.
    report: &'a Report,
    /// The link model's maximum.
    link_maximum: LinkMaximum,
    /// Published figures to compare with.
    published: &'a [Published],
    /// Wall-clock time of the run, seconds.
    wall_time_s: f64,
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// The link model's maximum for the experiment's links.
fn link_maximum() -> LinkMaximum {
    let budget = max_payload_throughput(LINK, PayloadSize::B256, TlpKind::MemWrite64);
    LinkMaximum {
        max_payload_size: PayloadSize::B256.bytes(),
        unidirectional_bytes_per_s: budget.with_link_overhead,
        bidirectional_bytes_per_s: 2.0 * budget.with_link_overhead,
    }
}

/// The reference experiment, with its report as a table or as JSON.
fn reference_run(json: bool) -> ExitCode {
    let config = ReferenceConfig::default();
    if !json {
        println!("weft-sim: the reference experiment (shared/REFERENCE.md) on a simulated fabric");
        println!(
            "two hosts, four weft switches, four GPUs and an NVMe drive with SR-IOV, every link {LINK}"
        );
        for line in TOPOLOGY {
            println!("  {line}");
        }
        println!();
    }
    let started = Instant::now();
    let report = match reference::run(config) {
        Ok(report) => report,
        Err(err) => {
            eprintln!("weft-sim: the experiment failed at {err}");
            return ExitCode::FAILURE;
        }
    };
    let wall = started.elapsed();
    if json {
        let document = JsonReport {
            configuration: Configuration {
                scenario: "reference",
                topology: TOPOLOGY,
                link: LINK.to_string(),
                link_latency_ns: LINK_LATENCY_PS / 1000,
                switch_latency_ns: nanos(SWITCH_LATENCY),
                firmware_latency_ns: nanos(FIRMWARE_LATENCY),
                switch_model: "transaction-level (weft-model)",
                firmware: "fabric manager running natively",
                run: config,
            },
            report: &report,
            link_maximum: link_maximum(),
            published: &PUBLISHED,
            wall_time_s: wall.as_secs_f64(),
        };
        return match serde_json::to_string_pretty(&document) {
            Ok(text) => {
                println!("{text}");
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("weft-sim: cannot write the report as JSON: {err}");
                ExitCode::FAILURE
            }
        };
    }
    print_table(&report, wall);
    ExitCode::SUCCESS
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

/// The human report: steps, results next to published figures, trees.
fn print_table(report: &Report, wall: Duration) {
    println!("{:>12}  {:<52} result", "sim time", "step");
    for step in &report.steps {
        println!(
            "{:>9.3} ms  {:<52} {}",
            step.at.as_secs_f64() * 1e3,
            step.what,
            step.outcome
        );
    }
    println!();
    let small = report.config.latency_bytes;
    println!(
        "GPU peer-to-peer, {} MiB per copy and direction ({} bytes of it crossed a host port); GB/s = 1e9 B/s",
        report.config.copy_bytes >> 20,
        report.p2p_bytes_through_hosts
    );
    println!(
        "  {:<38} {:>8} {:>8} {:>10}  latency is",
        "", "uni GB/s", "bi GB/s", "latency"
    );
    let row = |name: &str, uni: String, bi: String, latency: String, note: &str| {
        let line = format!("  {name:<38} {uni:>8} {bi:>8} {latency:>10}  {note}");
        println!("{}", line.trim_end());
    };
    for figures in &report.p2p {
        row(
            &format!("weft (simulated), {}", figures.host),
            gb(Some(figures.unidirectional / 1e9)),
            gb(Some(figures.bidirectional / 1e9)),
            micros(figures.peer_read),
            &format!("{small} B peer read, round trip"),
        );
    }
    for figures in &report.p2p {
        row(
            &format!("  the same through {}'s memory", figures.host),
            "-".into(),
            "-".into(),
            micros(figures.host_read),
            &format!("{small} B read of host memory, round trip"),
        );
    }
    let maximum = link_maximum();
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
    for line in LEGEND {
        println!("  {line}");
    }
    for figures in &report.p2p {
        println!(
            "  {}: {small} B peer write, doorbell to MSI (host to GPU and back included): {}",
            figures.host,
            micros(figures.peer_write)
        );
    }
    println!();
    println!("wall time {:.2} s", wall.as_secs_f64());
    for (name, tree) in &report.trees {
        println!();
        println!("{name}: lspci -tv");
        print!("{tree}");
    }
}
