//! A host's request that its endpoint never answers is completed by the
//! switch (PCIe Base 6.0 §2.8; DESIGN.md: no host ever waits forever):
//! with Completer Abort, the completion timeout the fabric manager sets
//! (`weft_fabric::routes::COMPLETION_TIMEOUT_US`, 10 ms) after the request
//! reached the switch, well before the host's own 50 ms timeout; and the
//! switch's outstanding-request entry is free again.

use std::path::Path;
use std::time::Duration;

use weft_fabric::routes::COMPLETION_TIMEOUT_US;
use weft_model::PortIndex;
use weft_pcie::split::{split_read, PayloadSize};
use weft_pcie::tlp::{CompletionStatus, Tag};
use weft_sim::host::access::{MemoryAccessError, COMPLETION_TIMEOUT as HOST_TIMEOUT};
use weft_sim::host::root_complex::Outcome;
use weft_sim::host::Fabric;
use weft_sim::scenario::engine::Engine;
use weft_sim::scenario::Scenario;
use weft_sim::wiring::Place;
use weft_sim::world::World;

/// One switch, a host on port 0 and a GPU on port 1.
const FABRIC: &str = include_str!("scenarios/host_and_gpu.toml");

const HOST: Place = Place::new(0, 0);
const GPU: Place = Place::new(0, 1);

/// The switch's completion timeout, as the fabric manager sets it.
const SWITCH_TIMEOUT: Duration = Duration::from_micros(COMPLETION_TIMEOUT_US as u64);

/// The fabric, enumerated, the GPU bound and the host booted; then the GPU hangs.
fn with_a_hung_gpu() -> World {
    let scenario = Scenario::parse(FABRIC, "host_and_gpu.toml", Path::new(".")).expect("valid");
    let mut engine = Engine::new(&scenario).expect("the fabric builds");
    for step in 0..scenario.steps.len() {
        engine.run_step(step).expect("the step runs");
    }
    let mut world = engine.into_world();
    assert!(world.hang_device(GPU), "the GPU sits on port 1");
    world
}

/// Where the host's GPU driver found the GPU's registers.
fn gpu_registers(world: &mut World) -> u64 {
    world.with_host(HOST, |host, _| {
        let bdf = *host.drivers().keys().next().expect("the GPU driver");
        host.gpu(bdf).expect("a GPU driver").registers
    })
}

/// The host link's one-way latency: each TLP takes at least this, plus
/// its serialization (a few ns for these headers at Gen3 x16).
fn host_link_latency(world: &World) -> Duration {
    let link = world.link_at(HOST).expect("the host is wired");
    Duration::from_nanos(link.latency_ps / 1_000)
}

#[test]
fn a_read_the_endpoint_never_answers_gets_completer_abort_from_the_switch_after_its_timeout() {
    let mut world = with_a_hung_gpu();
    assert!(
        SWITCH_TIMEOUT < HOST_TIMEOUT,
        "the switch must answer before the host gives up"
    );
    assert_eq!(
        world.switch().completion_timeout(),
        SWITCH_TIMEOUT.as_nanos() as u64,
        "the manager set the switch's timeout"
    );
    let registers = gpu_registers(&mut world);
    let counters = |world: &World, port: u8| {
        world
            .switch()
            .counters(PortIndex(port))
            .expect("the port exists")
            .clone()
    };
    let (host_before, gpu_before) = (counters(&world, HOST.port), counters(&world, GPU.port));
    let unexpected_before = world.with_host(HOST, |host, _| {
        host.root().counters().unexpected_completions
    });

    let (result, elapsed) = world.with_host(HOST, |host, link| {
        let mut cpu = host.cpu(link);
        let sent = cpu.now();
        let result = cpu.read_u32(registers);
        (result, cpu.now() - sent)
    });

    // The host saw the switch's Completer Abort, not its own timeout.
    assert_eq!(
        result,
        Err(MemoryAccessError::Status {
            address: registers,
            status: CompletionStatus::CompleterAbort
        })
    );
    // The request crossed the host's link to the switch, waited the
    // switch's timeout there, and the abort crossed the link back.
    let least = SWITCH_TIMEOUT + 2 * host_link_latency(&world);
    assert!(
        (least..least + Duration::from_micros(1)).contains(&elapsed),
        "the abort came {elapsed:?} after the read, not the timeout and two link crossings, {least:?}"
    );
    eprintln!("Completer Abort {elapsed:?} after the read was sent");

    // The switch forwarded the read to the GPU, answered it itself, and
    // holds nothing for it any more; nothing was dropped.
    let (host_after, gpu_after) = (counters(&world, HOST.port), counters(&world, GPU.port));
    assert_eq!(
        gpu_after.egress.non_posted,
        gpu_before.egress.non_posted + 1
    );
    assert_eq!(
        host_after.egress.completions,
        host_before.egress.completions + 1
    );
    assert_eq!(world.switch().outstanding(PortIndex(HOST.port)), 0);
    assert_eq!(
        (host_after.drops, gpu_after.drops),
        (host_before.drops, gpu_before.drops)
    );
    let unexpected = world.with_host(HOST, |host, _| {
        host.root().counters().unexpected_completions
    });
    assert_eq!(unexpected, unexpected_before);
}

#[test]
fn the_switch_times_a_request_out_when_nothing_else_happens() {
    // No host software waits: the read is sent and the world is left to
    // run, so only the switch's own deadline can wake it.
    let mut world = with_a_hung_gpu();
    let registers = gpu_registers(&mut world);
    let (tag, sent) = world.with_host(HOST, |host, link| {
        let chunks = split_read(registers, 4, PayloadSize::B128).expect("one DW");
        let chunk = chunks.into_iter().next().expect("one chunk");
        let tag: Tag = host.root_mut().issue_read(&chunk).expect("a free tag");
        let now = link.now();
        for packet in host.root_mut().poll(now) {
            link.send(packet);
        }
        (tag, now)
    });
    let outstanding = |world: &World| world.switch().outstanding(PortIndex(HOST.port));

    // The read reached the switch after `sent`, so its timeout is later
    // than `sent` plus the timeout.
    world.run_until(sent + SWITCH_TIMEOUT);
    assert_eq!(outstanding(&world), 1, "not timed out before its time");
    let back = sent + SWITCH_TIMEOUT + 2 * host_link_latency(&world) + Duration::from_micros(1);
    world.run_until(back);
    assert_eq!(outstanding(&world), 0, "timed out by its time");
    let outcome = world.with_host(HOST, |host, _| host.root_mut().take_outcome(tag));
    assert!(
        matches!(
            outcome,
            Some(Outcome::Read(Err(CompletionStatus::CompleterAbort)))
        ),
        "{outcome:?}"
    );
}
