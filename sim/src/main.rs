//! `weft-sim`: a whole weft fabric without hardware.
//!
//! `cargo run --release` at the workspace root runs this binary's default
//! scenario, the reference experiment of `shared/REFERENCE.md`
//! ([`weft_sim::reference`]), and prints what each step showed next to the
//! published figures. `weft-sim serve` keeps the reference fabric running
//! as a virtual board managed over UDP ([`weft_sim::serve`]).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use weft_proto::Key;
use weft_sim::serve::{ServeConfig, Server, DEFAULT_LISTEN};

use weft_pcie::link::{max_payload_throughput, TlpKind};
use weft_pcie::split::PayloadSize;
use weft_sim::reference::{self, ReferenceConfig, LINK, TOPOLOGY};

const SERVE_USAGE: &str = "usage: weft-sim serve [--listen 127.0.0.1:PORT] (--key HEX | --insecure)

Runs the reference fabric as a virtual board: weftctl manages it over UDP
on localhost (default 127.0.0.1:7330). --key takes the switch's key as 64
hexadecimal digits; --insecure uses the publicly known key instead.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => serve(&args[1..]),
        _ => reference_run(),
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

/// The reference experiment, with its report.
fn reference_run() -> ExitCode {
    println!("weft-sim: the reference experiment (shared/REFERENCE.md) on a simulated fabric");
    println!(
        "two hosts, four weft switches, four GPUs and an NVMe drive with SR-IOV, every link {LINK}"
    );
    for line in TOPOLOGY {
        println!("  {line}");
    }
    println!();
    let report = match reference::run(ReferenceConfig::default()) {
        Ok(report) => report,
        Err(err) => {
            eprintln!("weft-sim: the experiment failed at {err}");
            return ExitCode::FAILURE;
        }
    };
    println!("{:>12}  {:<48} result", "sim time", "step");
    for step in &report.steps {
        println!(
            "{:>9.3} ms  {:<48} {}",
            step.at.as_secs_f64() * 1e3,
            step.what,
            step.outcome
        );
    }
    println!();
    let budget = max_payload_throughput(LINK, PayloadSize::B256, TlpKind::MemWrite64);
    println!(
        "GPU peer-to-peer, {} MiB per copy, unidirectional ({} bytes of it crossed a host port):",
        report.copy_bytes >> 20,
        report.p2p_bytes_through_hosts
    );
    println!(
        "  weft (simulated), host 1     {:>6.2} GB/s",
        report.p2p_host1 / 1e9
    );
    println!(
        "  weft (simulated), host 2     {:>6.2} GB/s",
        report.p2p_host2 / 1e9
    );
    println!(
        "  link budget, MPS 256         {:>6.2} GB/s (weft-pcie link model, with DLLP/SKP overhead)",
        budget.with_link_overhead / 1e9
    );
    println!(
        "  Switchtec PAX, published     {:>6.2} GB/s (shared/REFERENCE.md)",
        12.8
    );
    for (name, tree) in &report.trees {
        println!();
        println!("{name}: lspci -tv");
        print!("{tree}");
    }
    ExitCode::SUCCESS
}
