//! `weft-sim`: a whole weft fabric without hardware.
//!
//! `cargo run --release` at the workspace root runs this binary's default
//! scenario, the reference experiment of `shared/REFERENCE.md`
//! ([`weft_sim::reference`]), and prints what each step showed next to the
//! published figures.

use std::process::ExitCode;

use weft_pcie::link::{max_payload_throughput, TlpKind};
use weft_pcie::split::PayloadSize;
use weft_sim::reference::{self, ReferenceConfig, LINK, TOPOLOGY};

fn main() -> ExitCode {
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
