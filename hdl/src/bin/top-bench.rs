//! Benchmarks the whole data plane (`SwitchTop`) in its reference configuration (8 ports, 512-bit payload).
//!
//! Where `switching-bench` measures the switching core alone, this drives
//! the top: every port's ingress pipeline (parse, translate, route), the
//! core and every port's egress, with [`TopHarness`] and the single-thread
//! cycle driver. All ports are fabric ports (nothing is rewritten),
//! address route `k` sends fabric region `k` out of port `k` and bus
//! `k + 1` routes to port `k`, every egress link is ready and every credit
//! given. Measured in cycles:
//! idle latency (ingress sop to egress sop) of a 256-byte posted write and
//! a one-DW completion; throughput of 256-byte writes (4 beats of 512
//! bits) as a fraction of one beat per cycle per port, under permutation,
//! uniform random and 2:1 hotspot traffic, each port offering
//! `--tlps N` writes back to back (default 1024: about 4,000 cycles of
//! full load, as `switching-bench` measures), counted from
//! [`WARMUP_CYCLES`] after the first beat out until the first port has
//! offered its last; and simulation speed: of the uniform run, and of the
//! same programmed top under one held stimulus (every port offering a
//! one-beat write to the next port on every cycle) for [`SPEED_CYCLES`]
//! on the single-thread cycle driver and on rust-hdl's threaded
//! `Simulation` (both must move the same beats), and of weft-model's
//! switch, routed alike, forwarding the uniform run's writes, in TLPs per
//! second. Prints tables, or JSON with `--json`.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use rust_hdl::prelude::*;
use weft_hdl::driver::{on_big_stack, CycleDriver, HALF_PERIOD_PS};
use weft_hdl::emit::REFERENCE_PAYLOAD_BITS as W;
use weft_hdl::switching::figures::{next_random, Figures, SEED};
use weft_hdl::top::SwitchTop;
use weft_hdl::top_harness::{Carried, TopHarness};
use weft_hdl::top_pins::{offer_at, open_egress_of, Beat};
use weft_model::Switch;
use weft_regs::capacity::PORTS as N;
use weft_regs::driver::CsrDataPlane;
use weft_regs::tables::{AddressRoute, DataPlane, Destination, PortIndex, PortRole};

/// Payload DWs of a 256-byte write.
const WRITE_DWS: u32 = 64;
/// Cycles of full load not measured while the arbiter settles.
const WARMUP_CYCLES: u64 = 128;
/// The fewest writes per port that leave full load after the warm-up:
/// twice the warm-up's worth of 4-beat writes.
const MIN_TLPS: u32 = 64;
/// Fabric region `k` (routed out of port `k`) starts at `(k + 1) << REGION_SHIFT`.
const REGION_SHIFT: u32 = 36;
/// Clock cycles the simulation-speed comparison runs on each simulator.
const SPEED_CYCLES: u64 = 200;
/// Payload DWs of the speed comparison's writes: one beat of the bus.
const BEAT_DWS: u32 = W as u32 / 32;

/// A memory write of `dws` payload DWs (4 DW header, PCIe Base 6.0
/// §2.2.4.1) from ingress `from` into region `to`, its address carrying
/// `from` and `n`: its header DWs and payload DWs.
fn write_dws(from: usize, to: usize, n: u32, dws: u32) -> ([u32; 4], Vec<u32>) {
    let address = ((to as u64 + 1) << REGION_SHIFT) | (from as u64) << 24 | u64::from(n) << 8;
    let header = [
        0x6000_0000 | dws,
        0x0100_00ff,
        (address >> 32) as u32,
        address as u32,
    ];
    (header, (0..dws).map(|k| k ^ n).collect())
}

/// A 256-byte memory write from ingress `from` into region `to`
/// ([`write_dws`]), as wire bytes.
fn write(from: usize, to: usize, n: u32) -> Vec<u8> {
    let (header, payload) = write_dws(from, to, n, WRITE_DWS);
    header
        .into_iter()
        .chain(payload)
        .flat_map(u32::to_be_bytes)
        .collect()
}

/// A successful one-DW completion (§2.2.9) to a requester on bus `to + 1`.
fn completion(to: usize) -> Vec<u8> {
    let requester = (to as u32 + 1) << 8;
    [0x4a00_0001, 0x0100_0004, requester << 16, 0x5a5a_5a5a]
        .into_iter()
        .flat_map(u32::to_be_bytes)
        .collect()
}

/// The reference top, its ports all fabric ports routed as the module says.
fn reference_top() -> TopHarness<W, N> {
    let mut top = TopHarness::new().expect("the reference top is well formed");
    let mut plane = CsrDataPlane::new(&mut top).expect("the top identifies as weft");
    route(&mut plane);
    top
}

/// Makes every port of `plane` a fabric port and routes as the module says.
fn route(plane: &mut impl DataPlane) {
    for k in 0..N {
        let port = PortIndex(k as u8);
        plane
            .set_port_role(port, PortRole::Fabric)
            .expect("the port exists");
        let route = AddressRoute {
            base: (k as u64 + 1) << REGION_SHIFT,
            size: 1 << REGION_SHIFT,
            to: Destination::Port(port),
        };
        plane
            .set_address_route(k, Some(route))
            .expect("the entry exists");
        plane
            .set_bus_route(k as u8 + 1, Some(Destination::Port(port)))
            .expect("the bus exists");
    }
}

/// Cycles from ingress sop to egress sop of one TLP through the idle top.
fn idle_latency(top: &mut TopHarness<W, N>, tlp: &[u8]) -> u64 {
    let carried = top.carry(0, tlp).expect("the top carries a TLP");
    assert_eq!(carried.egress.len(), 1, "one TLP leaves: {carried:?}");
    carried.egress[0].2
}

/// Result of one full-load run.
struct Load {
    /// Egress beats per cycle per egress that received any, while every source had a write waiting.
    throughput: f64,
    /// Per ingress: its share of the first half of what left.
    shares: Vec<f64>,
    /// Simulated cycles per wall-clock second.
    cycles_per_second: f64,
}

/// Offers `tlps` writes at each ingress in `sources`, to `destination(ingress, n)`.
fn full_load(
    tlps: u32,
    sources: &[usize],
    mut destination: impl FnMut(usize, u32) -> usize,
) -> Load {
    let mut top = reference_top();
    let mut offers = vec![Vec::new(); N];
    for &from in sources {
        offers[from] = (0..tlps)
            .map(|n| write(from, destination(from, n), n))
            .collect();
    }
    let before = top.cycles();
    let started = Instant::now();
    let carried: Carried = top.carry_all(&offers).expect("the top carries the load");
    let elapsed = started.elapsed().as_secs_f64();
    let sent = sources.len() * tlps as usize;
    assert_eq!(carried.egress.len(), sent, "every write leaves");
    let beats_per_write = u64::from(WRITE_DWS).div_ceil(W as u64 / 32);
    // Full load: from the first beat out until the first source runs dry,
    // every source has a write waiting; the first WARMUP_CYCLES of it are
    // not counted, while the arbiter settles. A write's beats leave back
    // to back (every egress is ready), so those in the window are counted
    // from its first beat's cycle.
    let first_out = carried.egress.iter().map(|e| e.2).min().unwrap_or(0);
    let loaded_until = sources
        .iter()
        .map(|&s| carried.offered_until[s])
        .min()
        .unwrap_or(0);
    let from = first_out + WARMUP_CYCLES;
    assert!(
        loaded_until > from,
        "--tlps too few for a window after the warm-up"
    );
    let beats_before =
        |cycle: u64, started: u64| cycle.saturating_sub(started).min(beats_per_write);
    let beats_in_window: u64 = carried
        .egress
        .iter()
        .map(|e| beats_before(loaded_until, e.2) - beats_before(from, e.2))
        .sum();
    let window = loaded_until - from;
    let egresses = {
        let mut used: Vec<usize> = carried.egress.iter().map(|e| e.0).collect();
        used.sort_unstable();
        used.dedup();
        used.len()
    };
    // The ingress a write came from is in its address (bits 31:24 of DW3).
    let origin = |bytes: &[u8]| usize::from(bytes[12]);
    let half = &carried.egress[..sent / 2];
    Load {
        throughput: beats_in_window as f64 / (window * egresses as u64) as f64,
        shares: sources
            .iter()
            .map(|&i| half.iter().filter(|e| origin(&e.1) == i).count() as f64 / half.len() as f64)
            .collect(),
        cycles_per_second: (top.cycles() - before) as f64 / elapsed,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let json = args.iter().any(|a| a == "--json");
    let tlps = args
        .iter()
        .position(|a| a == "--tlps")
        .and_then(|p| args.get(p + 1))
        .map(|v| v.parse().expect("--tlps takes a number"))
        .unwrap_or(1024u32);
    if tlps < MIN_TLPS {
        eprintln!("top-bench: --tlps {tlps} leaves no full load after the warm-up; give at least {MIN_TLPS}");
        std::process::exit(2);
    }
    on_big_stack(move || report(tlps, json));
}

fn report(tlps: u32, json: bool) {
    let mut top = reference_top();
    let write_latency = idle_latency(&mut top, &write(0, 5, 0));
    let completion_latency = idle_latency(&mut top, &completion(5));
    let all: Vec<usize> = (0..N).collect();
    let permutation = full_load(tlps, &all, |i, _| (i + 1) % N);
    // Uniformly among the other ports: a fabric port sends nothing back where it came from.
    let uniform_destination = || {
        let mut seed = SEED;
        move |i: usize, _| (i + 1 + (next_random(&mut seed) % (N as u64 - 1)) as usize) % N
    };
    let uniform = full_load(tlps, &all, uniform_destination());
    // 2:1 hotspot: two ingresses share one egress; each should get half.
    let hotspot = full_load(tlps, &[0, 1], |_, _| 2);
    let speed = Speed::measure(tlps, uniform.cycles_per_second, uniform_destination());

    let figures = Figures {
        write_latency,
        completion_latency,
        permutation: permutation.throughput,
        uniform: uniform.throughput,
        hotspot_egress: hotspot.throughput,
        hotspot_shares: [hotspot.shares[0], hotspot.shares[1]],
        cycles_per_second: uniform.cycles_per_second,
    };
    if json {
        println!(
            "{{\"switching\":{},\"simulation_speed\":{}}}",
            figures.json(&format!(
                "\"ports\":{N},\"payload_bits\":{W},\"write_bytes\":{},\"writes_per_port\":{tlps}",
                WRITE_DWS * 4
            )),
            speed.json()
        );
        return;
    }
    print!(
        "{}",
        figures.table(&format!(
            "whole data plane (SwitchTop), {N} fabric ports x {W}-bit payload, single-thread cycle driver"
        ))
    );
    println!("{tlps} writes offered back to back per ingress; throughput while every source has one waiting");
    println!();
    print!("{}", speed.table());
}

/// How fast each simulator runs the top, and the model its TLPs.
struct Speed {
    /// The single-thread cycle driver in the uniform run, cycles per second.
    uniform_run: f64,
    /// The single-thread cycle driver under the held stimulus, cycles per second.
    cycle_driver: f64,
    /// rust-hdl's `Simulation` under the same stimulus, cycles per second.
    simulation: f64,
    /// Egress beats both moved under it (they must agree).
    beats: u64,
    /// weft-model's switch forwarding the uniform run's writes, TLPs per second.
    model: f64,
}

impl Speed {
    /// Measures both simulators on the held stimulus and the model on
    /// `tlps` writes per port to `destination`; `uniform_run` is the
    /// uniform run's cycles per second. Panics if the two simulators moved
    /// different beats, or the model did not forward a write.
    fn measure(
        tlps: u32,
        uniform_run: f64,
        mut destination: impl FnMut(usize, u32) -> usize,
    ) -> Speed {
        let (cycle_driver, driven_beats) = on_cycle_driver(reference_top().into_top());
        let (simulation, simulated_beats) = on_simulation(reference_top().into_top());
        assert_eq!(
            driven_beats, simulated_beats,
            "the cycle driver and rust-hdl's Simulation moved different beats on the same stimulus"
        );
        let writes: Vec<(usize, Vec<u8>)> = (0..N)
            .flat_map(|from| (0..tlps).map(move |n| (from, n)))
            .map(|(from, n)| (from, write(from, destination(from, n), n)))
            .collect();
        Speed {
            uniform_run,
            cycle_driver,
            simulation,
            beats: driven_beats,
            model: on_model(&writes),
        }
    }

    fn table(&self) -> String {
        let row = |measure: &str, value: String| format!("{measure:<48} {value:>10}\n");
        let mut out = format!(
            "simulation speed (held stimulus: {SPEED_CYCLES} cycles, every port a one-beat write to the next)\n"
        );
        out += &row(
            "cycle driver, uniform run (cycles/s)",
            format!("{:.1}", self.uniform_run),
        );
        out += &row(
            "cycle driver, held stimulus (cycles/s)",
            format!("{:.1}", self.cycle_driver),
        );
        out += &row(
            "rust-hdl Simulation, held stimulus (cycles/s)",
            format!("{:.1}", self.simulation),
        );
        out += &row(
            "ratio, cycle driver / Simulation",
            format!("{:.2}", self.cycle_driver / self.simulation),
        );
        out += &row("egress beats each moved", self.beats.to_string());
        out += &row(
            "weft-model, the uniform run's writes (TLPs/s)",
            format!("{:.0}", self.model),
        );
        out
    }

    fn json(&self) -> String {
        format!(
            "{{\"uniform_run_cycles_per_second\":{:.1},\"held_stimulus_cycles\":{SPEED_CYCLES},\
\"cycle_driver_cycles_per_second\":{:.1},\"simulation_cycles_per_second\":{:.1},\
\"egress_beats\":{},\"model_tlps_per_second\":{:.0}}}",
            self.uniform_run, self.cycle_driver, self.simulation, self.beats, self.model
        )
    }
}

/// Sets the held stimulus on `top`: every egress open, and every ingress
/// `k` offering a one-beat write to port `k + 1` (a new one each time
/// it takes one, since the offer never changes).
fn hold_stimulus(top: &mut SwitchTop<W, N>) {
    open_egress_of(top);
    for from in 0..N {
        let (header, payload) = write_dws(from, (from + 1) % N, 0, BEAT_DWS);
        let beat = Beat {
            header,
            payload: &payload,
            sop: true,
            eop: true,
            empty: 0,
        };
        offer_at(top, from, Some(&beat));
    }
}

/// Egress beats `top` offers this cycle (every egress is ready).
fn egress_beats(top: &SwitchTop<W, N>) -> u64 {
    top.egress
        .iter()
        .filter(|egress| egress.valid.val())
        .count() as u64
}

/// Runs `top` under the held stimulus on the single-thread cycle driver:
/// cycles per second, and the egress beats counted after each period.
fn on_cycle_driver(top: SwitchTop<W, N>) -> (f64, u64) {
    let mut driver = CycleDriver::new(top, |b| &mut b.clock).expect("the top is well formed");
    hold_stimulus(driver.block());
    let mut beats = 0;
    let started = Instant::now();
    for _ in 0..SPEED_CYCLES {
        driver.tick().expect("the top settles");
        beats += egress_beats(driver.block_ref());
    }
    (SPEED_CYCLES as f64 / started.elapsed().as_secs_f64(), beats)
}

/// Runs `top` under the held stimulus in rust-hdl's `Simulation` (a clock
/// thread and a testbench thread): cycles per second, and the egress beats
/// counted after each period (the rising, then the falling edge).
fn on_simulation(top: SwitchTop<W, N>) -> (f64, u64) {
    let counted = Arc::new(Mutex::new(0));
    let count = Arc::clone(&counted);
    let mut sim: Simulation<SwitchTop<W, N>> = Simulation::new();
    sim.add_clock(HALF_PERIOD_PS, |x: &mut Box<SwitchTop<W, N>>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<SwitchTop<W, N>>| {
        let mut x = sim.init()?;
        hold_stimulus(&mut x);
        for _ in 0..SPEED_CYCLES {
            x = sim.watch(|x| x.clock.val().clk, x)?;
            x = sim.watch(|x| !x.clock.val().clk, x)?;
            *count.lock().expect("only the testbench counts") += egress_beats(&x);
        }
        sim.done(x)
    });
    let started = Instant::now();
    sim.run(Box::new(top), 4 * HALF_PERIOD_PS * (SPEED_CYCLES + 2))
        .expect("the simulation runs its cycles");
    let elapsed = started.elapsed().as_secs_f64();
    let beats = *counted.lock().expect("the simulation has ended");
    (SPEED_CYCLES as f64 / elapsed, beats)
}

/// Forwards `writes` (ingress port, wire bytes) through weft-model's
/// switch routed as the top: TLPs per second.
fn on_model(writes: &[(usize, Vec<u8>)]) -> f64 {
    let mut model = Switch::new(N);
    route(&mut model);
    let started = Instant::now();
    for (from, bytes) in writes {
        let forwarding = model
            .ingress(PortIndex(*from as u8), bytes)
            .expect("the model takes a well-formed write");
        assert_eq!(
            forwarding.deliveries.len(),
            1,
            "the model forwards every write"
        );
    }
    writes.len() as f64 / started.elapsed().as_secs_f64()
}
