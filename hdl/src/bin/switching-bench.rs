//! Benchmarks the switching core in its reference configuration (8 ports, 512-bit payload).
//!
//! Measured in clock cycles on the RTL, driven by the single-thread cycle
//! driver: idle latency (ingress sop to egress sop) for a posted write and a
//! completion; throughput of 256-byte writes (4 beats of 512 bits, the
//! header beside the first) as a fraction of one beat per cycle per port,
//! under permutation, uniform random and 2:1 hotspot traffic at full load;
//! and simulation speed. Prints a table, or JSON with `--json`.
//! `--cycles N` sets the measured cycles per throughput run (default 4000).

use std::time::Instant;

use weft_hdl::emit::REFERENCE_PAYLOAD_BITS as W;
use weft_hdl::switching::figures::{next_random, Figures, SEED};
use weft_hdl::switching::traffic::{Environment, TestTlp, Traffic};
use weft_hdl::switching::{CLASS_COMPLETION, CLASS_POSTED};
use weft_regs::capacity::PORTS as N;

/// Payload DWs of a 256-byte write.
const WRITE_DWS: u32 = 64;
/// Cycles run before measuring, so queues and pointers reach steady state.
const WARMUP: u64 = 500;
/// TLPs kept waiting at each ingress: full load.
const BACKLOG: usize = 4;

/// A memory write of `dws` payload DWs (3 DW header, PCIe Base 6.0 §2.2.7.1).
fn write(id: u64, egress: usize, dws: u32) -> TestTlp {
    TestTlp {
        id,
        egress,
        class: CLASS_POSTED,
        header: [
            0x4000_0000 | (dws & 0x3ff),
            0x0100_00ff,
            (id as u32) << 12,
            0,
        ],
        payload: (0..dws).map(|k| k ^ id as u32).collect(),
    }
}

/// A completion with `dws` data DWs (§2.2.9.1).
fn completion(id: u64, egress: usize, dws: u32) -> TestTlp {
    TestTlp {
        id,
        egress,
        class: CLASS_COMPLETION,
        header: [
            0x4a00_0000 | (dws & 0x3ff),
            0x0200_0000 | (dws * 4),
            0x0100_0000,
            0,
        ],
        payload: (0..dws).map(|k| k ^ id as u32).collect(),
    }
}

fn new_traffic() -> Traffic<W, N> {
    Traffic::new(Environment::unconstrained()).expect("the reference core is well formed")
}

/// Cycles from ingress sop to egress sop of one TLP through an idle core.
fn idle_latency(tlp: TestTlp) -> u64 {
    let mut traffic = new_traffic();
    let egress = tlp.egress;
    traffic.send(0, tlp);
    traffic
        .run_until_drained(100)
        .expect("one TLP leaves an idle core");
    traffic.departures[egress][0].sop_cycle - traffic.arrivals[0][0].sop_cycle
}

/// Result of one full-load run.
struct Load {
    /// Egress beats per cycle per port.
    throughput: f64,
    /// Per ingress: its share of the beats that left.
    shares: Vec<f64>,
    /// Simulated cycles per wall-clock second.
    cycles_per_second: f64,
}

/// Keeps every ingress in `sources` backlogged with 256-byte writes to
/// `destination(ingress, n)` and measures `cycles` cycles after the warm-up.
fn full_load(
    sources: &[usize],
    cycles: u64,
    mut destination: impl FnMut(usize, u64) -> usize,
) -> Load {
    let mut traffic = new_traffic();
    let mut id = 0;
    let beats_at = |traffic: &Traffic<W, N>| -> Vec<u64> {
        let mut per_ingress = vec![0u64; N];
        let owner = |d: &weft_hdl::switching::traffic::Departure| (d.header[2] >> 12) as u64;
        let mut origin = std::collections::HashMap::new();
        for (i, port) in traffic.arrivals.iter().enumerate() {
            for a in port {
                origin.insert(a.tlp.id, i);
            }
        }
        for d in traffic.departures.iter().flatten() {
            per_ingress[origin[&owner(d)]] += d.payload.len().div_ceil(W / 32) as u64;
        }
        per_ingress
    };
    let mut start = Vec::new();
    let mut started = Instant::now();
    for cycle in 0..WARMUP + cycles {
        if cycle == WARMUP {
            start = beats_at(&traffic);
            started = Instant::now();
        }
        for &ingress in sources {
            while traffic.waiting(ingress) < BACKLOG {
                traffic.send(ingress, write(id, destination(ingress, id), WRITE_DWS));
                id += 1;
            }
        }
        traffic.step().expect("the core keeps the stream protocol");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let end = beats_at(&traffic);
    let moved: Vec<u64> = end.iter().zip(&start).map(|(e, s)| e - s).collect();
    let total: u64 = moved.iter().sum();
    Load {
        throughput: total as f64 / (cycles as f64 * N as f64),
        shares: sources
            .iter()
            .map(|&i| moved[i] as f64 / total.max(1) as f64)
            .collect(),
        cycles_per_second: cycles as f64 / elapsed,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let json = args.iter().any(|a| a == "--json");
    let cycles = args
        .iter()
        .position(|a| a == "--cycles")
        .and_then(|p| args.get(p + 1))
        .map(|v| v.parse().expect("--cycles takes a number"))
        .unwrap_or(4000u64);

    let write_latency = idle_latency(write(1, 5, WRITE_DWS));
    let completion_latency = idle_latency(completion(2, 5, 16));
    let all: Vec<usize> = (0..N).collect();
    let permutation = full_load(&all, cycles, |i, _| (i + 1) % N);
    let mut seed = SEED;
    let uniform = full_load(&all, cycles, |_, _| {
        (next_random(&mut seed) % N as u64) as usize
    });
    // 2:1 hotspot: two ingresses share one egress; each should get half.
    let hotspot = full_load(&[0, 1], cycles, |_, _| 0);
    let hotspot_egress = hotspot.throughput * N as f64;

    let figures = Figures {
        write_latency,
        completion_latency,
        permutation: permutation.throughput,
        uniform: uniform.throughput,
        hotspot_egress,
        hotspot_shares: [hotspot.shares[0], hotspot.shares[1]],
        cycles_per_second: uniform.cycles_per_second,
    };
    if json {
        println!(
            "{}",
            figures.json(&format!(
                "\"ports\":{N},\"payload_bits\":{W},\"write_bytes\":{},\"measured_cycles\":{cycles},\"warmup_cycles\":{WARMUP}",
                WRITE_DWS * 4
            ))
        );
        return;
    }
    print!(
        "{}",
        figures.table(&format!(
            "switching core, {N} ports x {W}-bit payload, single-thread cycle driver"
        ))
    );
    println!("measured {cycles} cycles per load after {WARMUP} warm-up cycles");
}
