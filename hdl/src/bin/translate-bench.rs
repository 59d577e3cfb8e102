//! Benchmarks the simulation speed of the edge translation and isolation stages.
//!
//! Each stage, in its reference size (16 windows, 32 ID map entries),
//! is driven by the single-thread cycle driver with one new header per
//! clock cycle, cycling through memory reads and writes (3 and 4 DW),
//! completions and messages, with one table entry programmed over the CSR
//! bus so lookups hit. The error completion is combinational and is
//! settled once per header. The mailbox takes a 3 DW TLP, one DW per
//! cycle, and the CPU pops it; the injection sends a 3 DW TLP (the SEND
//! write, then the egress takes one DW per cycle). Prints headers per wall-clock second
//! as a table, or JSON with `--json`; `--headers N` sets the headers per
//! stage (default 20000).

use std::time::Instant;

use rust_hdl::prelude::*;
use weft_hdl::csr::{self, CsrTarget};
use weft_hdl::driver::{settle, CycleDriver};
use weft_hdl::isolation::{ErrorCompletion, STATUS_UNSUPPORTED_REQUEST};
use weft_hdl::management::{Inject, Mailbox};
use weft_hdl::translate::{EndpointIngress, HostEgress, HostIngress};
use weft_regs::capacity::{BOUND_FUNCTIONS_PER_HOST, WINDOWS_PER_PORT};
use weft_regs::csr::{id_map, inject, inject_data, mailbox, window};

/// Headers offered, by hand (PCIe Base 6.0 §2.2.1): MRd 3 DW, MWr 4 DW
/// into host 3's aperture, CplD to proxy F0:00.0, ERR_COR routed by ID,
/// MRd 4 DW, Assert_INTA (local).
const HEADERS: [[u32; 4]; 6] = [
    [0x0000_0001, 0x0200_110f, 0x9000_0010, 0],
    [0x6000_0004, 0x0200_00ff, 0x8030_0000, 0x1000_0000],
    [0x4a00_0001, 0x0200_0004, 0xf000_0500, 0],
    [0x3200_0000, 0x0200_0030, 0xf000_0000, 0],
    [0x2000_0002, 0x0200_12ff, 0x0000_0001, 0x9000_0100],
    [0x3400_0000, 0x0200_0020, 0, 0],
];

/// The `n`th header offered, its address moved so no two neighbours are equal.
fn header(n: u64) -> [u32; 4] {
    let mut dws = HEADERS[(n % HEADERS.len() as u64) as usize];
    dws[3] ^= ((n & 0xff) as u32) << 2;
    dws
}

/// Anything with a header input, clocked by the cycle driver.
trait HeaderStage: Block {
    fn present(&mut self, dws: [u32; 4]);
}

macro_rules! header_stage {
    ($stage:ty) => {
        impl HeaderStage for $stage {
            fn present(&mut self, dws: [u32; 4]) {
                self.valid.next = true;
                self.dw0.next = dws[0].to_bits();
                self.dw1.next = dws[1].to_bits();
                self.dw2.next = dws[2].to_bits();
                self.dw3.next = dws[3].to_bits();
            }
        }
    };
}

header_stage!(HostIngress<WINDOWS_PER_PORT>);
header_stage!(EndpointIngress<WINDOWS_PER_PORT>);
header_stage!(HostEgress<BOUND_FUNCTIONS_PER_HOST>);

/// Programs window entry 0 of port 0: 4 KiB at 0x9000_0000, read-write.
fn program_window<B: Block>(driver: &mut CycleDriver<B>, target: fn(&mut B) -> &mut CsrTarget) {
    let control = window::VALID.encode(1) | window::READ.encode(1) | window::WRITE.encode(1);
    for (register, value) in [
        (window::BASE_LOW, 0x9000_0000),
        (window::SIZE_LOW, 0x1000),
        (window::FABRIC_BASE_HIGH, 0x40),
        (window::CONTROL, control),
    ] {
        csr::write(driver, target, register.address(0, 0), value).expect("the stage settles");
    }
}

/// Headers per second through a clocked stage.
fn clocked<B: HeaderStage>(mut driver: CycleDriver<B>, headers: u64) -> f64 {
    driver.run(2).expect("the stage settles");
    let started = Instant::now();
    for n in 0..headers {
        driver.block().present(header(n));
        driver.tick().expect("the stage settles");
    }
    headers as f64 / started.elapsed().as_secs_f64()
}

fn host_ingress(headers: u64) -> f64 {
    let stage = HostIngress::<WINDOWS_PER_PORT>::new(0);
    let mut driver = CycleDriver::new(stage, |b| &mut b.clock).expect("well formed");
    program_window(&mut driver, |b| &mut b.csr);
    driver.block().proxy_id.next = 0xf000u32.to_bits();
    clocked(driver, headers)
}

fn endpoint_ingress(headers: u64) -> f64 {
    let stage = EndpointIngress::<WINDOWS_PER_PORT>::new(0);
    let mut driver = CycleDriver::new(stage, |b| &mut b.clock).expect("well formed");
    program_window(&mut driver, |b| &mut b.csr);
    let stage = driver.block();
    stage.enabled.next = true;
    stage.bound.next = true;
    stage.owner_host.next = 3u32.to_bits();
    stage.owner_proxy_id.next = 0xf000u32.to_bits();
    stage.bus_first.next = 2u32.to_bits();
    stage.bus_last.next = 3u32.to_bits();
    clocked(driver, headers)
}

fn host_egress(headers: u64) -> f64 {
    let stage = HostEgress::<BOUND_FUNCTIONS_PER_HOST>::new(0);
    let mut driver = CycleDriver::new(stage, |b| &mut b.clock).expect("well formed");
    for (register, value) in [
        (id_map::FABRIC_ID, 0x0200),
        (id_map::HOST_ID, 0x1300),
        (id_map::CONTROL, id_map::VALID.encode(1)),
    ] {
        csr::write(&mut driver, |b| &mut b.csr, register.address(0, 0), value)
            .expect("the stage settles");
    }
    let stage = driver.block();
    stage.enabled.next = true;
    stage.host_index.next = 3u32.to_bits();
    stage.proxy_id.next = 0xf000u32.to_bits();
    stage.completer_id.next = 0x1000u32.to_bits();
    stage.tag_found.next = true;
    clocked(driver, headers)
}

fn error_completion(headers: u64) -> f64 {
    let mut block = ErrorCompletion::default();
    block.connect_all();
    block.dropped.next = true;
    block.completer_id.next = 0x0100u32.to_bits();
    block.status.next = STATUS_UNSUPPORTED_REQUEST.to_bits();
    let started = Instant::now();
    for n in 0..headers {
        let dws = header(n);
        block.dw0.next = dws[0].to_bits();
        block.dw1.next = dws[1].to_bits();
        block.dw2.next = dws[2].to_bits();
        block.dw3.next = dws[3].to_bits();
        settle(&mut block).expect("the block is combinational");
    }
    headers as f64 / started.elapsed().as_secs_f64()
}

fn mailbox(headers: u64) -> f64 {
    let mut driver = CycleDriver::new(Mailbox::default(), |b| &mut b.clock).expect("well formed");
    let started = Instant::now();
    for n in 0..headers {
        // The 3 DW headers (no payload) arrive one DW per cycle, then the CPU pops.
        let dws = header(n);
        for (i, dw) in dws[..3].iter().enumerate() {
            let block = driver.block();
            block.push.next = true;
            block.push_first.next = i == 0;
            block.push_last.next = i == 2;
            block.push_dw.next = dw.to_bits();
            driver.tick().expect("the mailbox settles");
        }
        driver.block().push.next = false;
        csr::write(&mut driver, |b| &mut b.csr, mailbox::POP.address(0, 0), 1)
            .expect("the mailbox settles");
    }
    headers as f64 / started.elapsed().as_secs_f64()
}

fn injection(headers: u64) -> f64 {
    let mut driver = CycleDriver::new(Inject::default(), |b| &mut b.clock).expect("well formed");
    for (n, value) in HEADERS[0][..3].iter().enumerate() {
        csr::write(
            &mut driver,
            |b| &mut b.csr,
            inject_data::DATA.address(0, n as u32),
            *value,
        )
        .expect("the injection settles");
    }
    driver.block().ready.next = true;
    let started = Instant::now();
    for n in 0..headers {
        let send = inject::PORT.encode((n % 8) as u32) | inject::DWORDS.encode(3);
        csr::write(
            &mut driver,
            |b| &mut b.csr,
            inject::SEND.address(0, 0),
            send,
        )
        .expect("the injection settles");
        for _ in 0..3 {
            driver.tick().expect("the injection settles");
        }
    }
    headers as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let json = args.iter().any(|a| a == "--json");
    let headers = args
        .iter()
        .position(|a| a == "--headers")
        .and_then(|p| args.get(p + 1))
        .map(|v| v.parse().expect("--headers takes a number"))
        .unwrap_or(20_000u64);
    let results = [
        ("host_ingress", "cycles", host_ingress(headers)),
        ("endpoint_ingress", "cycles", endpoint_ingress(headers)),
        ("host_egress", "cycles", host_egress(headers)),
        ("error_completion", "settles", error_completion(headers)),
        ("mailbox", "4 cycles", mailbox(headers)),
        ("inject", "4 cycles", injection(headers)),
    ];
    if json {
        let stages: Vec<String> = results
            .iter()
            .map(|(name, unit, rate)| {
                format!(
                    "{{\"stage\":\"{name}\",\"unit\":\"{unit}\",\"headers_per_second\":{rate:.0}}}"
                )
            })
            .collect();
        println!(
            "{{\"config\":{{\"windows\":{WINDOWS_PER_PORT},\"id_map_entries\":{BOUND_FUNCTIONS_PER_HOST},\"headers\":{headers}}},\"stages\":[{}]}}",
            stages.join(",")
        );
        return;
    }
    println!(
        "translation stages, {WINDOWS_PER_PORT} windows, {BOUND_FUNCTIONS_PER_HOST} ID map entries, \
         single-thread cycle driver, {headers} headers per stage"
    );
    println!("{:<20} {:>18} {:>10}", "stage", "headers/s", "per");
    for (name, unit, rate) in results {
        println!("{name:<20} {rate:>18.0} {unit:>10}");
    }
}
