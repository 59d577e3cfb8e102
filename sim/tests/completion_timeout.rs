//! A host's request that its endpoint never answers is completed by the
//! switch (PCIe Base 6.0 §2.8; DESIGN.md: no host ever waits forever):
//! with Completer Abort, the completion timeout the fabric manager sets
//! (`weft_fabric::routes::COMPLETION_TIMEOUT_US`, 10 ms) after the request
//! reached the switch, well before the host's own 50 ms timeout; and the
//! switch's outstanding-request entry is free again.
//!
//! The scenario `scenarios/hung_gpu.toml` shows it with its `hang` and
//! `read` steps: these tests run it and hold its figures to the timeout.
//!
//! A host's configuration read of a hung bound device
//! (`scenarios/hung_gpu_config.toml`) is forwarded by the fabric manager,
//! which waits for the device no longer than the switch's completion
//! timeout and completes the read with Completer Abort itself, again well
//! before the host's own timeout; the other GPU keeps answering.
//!
//! The fabric manager's own configuration requests to a device hung
//! before enumeration (`scenarios/hung_before_enumeration.toml`) time out
//! after the manager's completion timeout; it reports the device as not
//! responding and enumerates, binds and serves the rest. So does a device
//! that hangs partway through enumeration
//! (`scenarios/hung_during_enumeration.toml`): what the manager had given
//! it is released and goes to the next port's device.

use std::path::Path;
use std::time::Duration;

use weft_fabric::address::DEFAULT_POOL32_BASE;
use weft_fabric::events::Event;
use weft_fabric::inventory::{PortKind, SwitchIndex};
use weft_fabric::routes::COMPLETION_TIMEOUT_US;
use weft_model::PortIndex;
use weft_pcie::split::{split_read, PayloadSize};
use weft_pcie::tlp::{CompletionStatus, Tag};
use weft_sim::host::access::COMPLETION_TIMEOUT as HOST_TIMEOUT;
use weft_sim::host::root_complex::Outcome;
use weft_sim::host::Fabric;
use weft_sim::manager_config::MANAGER_COMPLETION_TIMEOUT;
use weft_sim::scenario::engine::{status_name, Engine};
use weft_sim::scenario::Scenario;
use weft_sim::wiring::Place;
use weft_sim::world::{World, FIRMWARE_LATENCY};

/// One switch, a host on port 0 and a GPU on port 1, the GPU bound and
/// the host booted; the GPU hangs and the host reads it.
const HUNG_GPU: &str = include_str!("scenarios/hung_gpu.toml");

/// One switch, a host on port 0 and GPUs on ports 1 and 2, both bound,
/// the host booted; gpu1 hangs and the host reads the configuration
/// space of both.
const HUNG_GPU_CONFIG: &str = include_str!("scenarios/hung_gpu_config.toml");

/// One switch, a host on port 0 and GPUs on ports 1 and 2; gpu2 hangs
/// before the manager enumerates, gpu1 is bound and used.
const HUNG_BEFORE_ENUMERATION: &str = include_str!("scenarios/hung_before_enumeration.toml");

/// One switch, a host on port 0, an NVMe drive with SR-IOV on port 1 and a
/// GPU on port 2; the drive hangs after 60 configuration requests, while
/// the manager sets up its SR-IOV; the GPU is bound and read.
const HUNG_DURING_ENUMERATION: &str = include_str!("scenarios/hung_during_enumeration.toml");

/// A GPU below a conventional PCIe switch hangs partway through
/// enumeration; the GPU on the switch's other downstream port is bound.
const HUNG_BELOW_PCIE_SWITCH: &str = include_str!("scenarios/hung_below_pcie_switch.toml");

const HOST: Place = Place::new(0, 0);

/// The switch's completion timeout, as the fabric manager sets it.
const SWITCH_TIMEOUT: Duration = Duration::from_micros(COMPLETION_TIMEOUT_US as u64);

fn scenario() -> Scenario {
    parsed(HUNG_GPU, "hung_gpu.toml")
}

/// The scenario file `text`, named `name`.
fn parsed(text: &str, name: &str) -> Scenario {
    Scenario::parse(text, name, Path::new(".")).expect("valid")
}

/// The host link's one-way latency: each TLP takes at least this, plus
/// its serialization (a few ns for these headers at Gen3 x16).
fn host_link_latency(world: &World) -> Duration {
    let link = world.link_at(HOST).expect("the host is wired");
    Duration::from_nanos(link.latency_ps / 1_000)
}

#[test]
fn a_read_the_endpoint_never_answers_gets_completer_abort_from_the_switch_after_its_timeout() {
    assert!(
        SWITCH_TIMEOUT < HOST_TIMEOUT,
        "the switch must answer before the host gives up"
    );
    let scenario = scenario();
    let mut engine = Engine::new(&scenario).expect("the fabric builds");
    // The file's `check_traffic` step holds the run to no TLP lost,
    // dropped or unexpected, the timed-out read included.
    engine.run_steps(&mut |_| {}).expect("every step passes");
    let world = engine.world();
    assert_eq!(
        world.switch().completion_timeout(),
        SWITCH_TIMEOUT.as_nanos() as u64,
        "the manager set the switch's timeout"
    );
    // The switch holds nothing for the read any more.
    assert_eq!(world.switch().outstanding(PortIndex(HOST.port)), 0);
    let least = SWITCH_TIMEOUT + 2 * host_link_latency(world);
    let report = engine.finish();

    // The read before the hang succeeded; the one after it got the
    // switch's Completer Abort, not the host's own timeout.
    let [before, after] = &report.reads[..] else {
        panic!("two reads: {:?}", report.reads);
    };
    assert_eq!(before.status, status_name(CompletionStatus::Successful));
    assert_eq!(after.status, status_name(CompletionStatus::CompleterAbort));
    // The request crossed the host's link to the switch, waited the
    // switch's timeout there, and the abort crossed the link back.
    assert!(
        (least..least + Duration::from_micros(1)).contains(&after.elapsed),
        "the abort came {:?} after the read, not the timeout and two link crossings, {least:?}",
        after.elapsed
    );
    eprintln!(
        "Completer Abort {:?} after the read was sent",
        after.elapsed
    );
}

#[test]
fn the_switch_times_a_request_out_when_nothing_else_happens() {
    // No host software waits: the read is sent and the world is left to
    // run, so only the switch's own deadline can wake it.
    let scenario = scenario();
    let mut engine = Engine::new(&scenario).expect("the fabric builds");
    engine.run_steps(&mut |_| {}).expect("every step passes");
    // The hung GPU's registers, which the scenario read last.
    let address = engine.report().reads[1].address;
    let mut world = engine.into_world();
    let (tag, sent) = world.with_host(HOST, |host, link| {
        let chunks = split_read(address, 4, PayloadSize::B128).expect("one DW");
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

#[test]
fn a_config_read_of_a_hung_bound_device_gets_completer_abort_from_the_manager_after_the_switch_timeout(
) {
    let scenario = parsed(HUNG_GPU_CONFIG, "hung_gpu_config.toml");
    let mut engine = Engine::new(&scenario).expect("the fabric builds");
    // The file's `check_traffic` step holds the run to no TLP lost,
    // dropped or unexpected: the manager's forwarded read, which gpu1
    // took in and never answered, included.
    engine.run_steps(&mut |_| {}).expect("every step passes");
    let least = SWITCH_TIMEOUT + 2 * host_link_latency(engine.world());
    let report = engine.finish();
    let reads: Vec<_> = report
        .reads
        .iter()
        .map(|r| (r.endpoint.as_str(), r.space, r.status.as_str()))
        .collect();
    let (ok, abort) = (
        status_name(CompletionStatus::Successful),
        status_name(CompletionStatus::CompleterAbort),
    );
    assert_eq!(
        reads,
        [
            ("gpu1", "configuration", ok),
            ("gpu1", "configuration", abort),
            ("gpu2", "configuration", ok),
            ("gpu2", "memory", ok),
        ]
    );
    // The request crossed the host's link to the switch and reached the
    // manager, which waited the switch's timeout for gpu1 and answered
    // after its firmware latency; the abort crossed the link back.
    let after = &report.reads[1];
    let most = least + FIRMWARE_LATENCY + Duration::from_micros(1);
    assert!(
        (least..most).contains(&after.elapsed),
        "the abort came {:?} after the read, not the switch's timeout, the firmware's latency \
         and two link crossings, {least:?} to {most:?}",
        after.elapsed
    );
    assert!(after.elapsed < HOST_TIMEOUT);
    eprintln!(
        "Completer Abort {:?} after the configuration read was sent",
        after.elapsed
    );
}

/// `scenario` run to its end, each of its steps passing: the hung
/// devices' neighbours bound, seen and read, nothing lost, dropped or
/// unexpected.
fn every_step_passes(scenario: &Scenario) -> Engine<'_> {
    let mut engine = Engine::new(scenario).expect("the fabric builds");
    engine.run_steps(&mut |_| {}).expect("every step passes");
    engine
}

#[test]
fn a_device_hung_before_enumeration_is_reported_not_responding_and_the_rest_is_served() {
    // gpu1 is bound, seen, read; nothing lost, dropped or unexpected.
    let scenario = parsed(HUNG_BEFORE_ENUMERATION, "hung_before_enumeration.toml");
    let engine = every_step_passes(&scenario);
    let report = engine.report();
    let enumerated = &report.steps[1];
    assert_eq!(enumerated.what, "fabric manager enumerates the fabric");
    assert_eq!(
        enumerated.outcome,
        "1 GPUs; not responding: gpu2 (a configuration request of the manager got no completion)"
    );
    // §6.6.1's 100 ms after reset, then the manager's wait for gpu2's
    // first read; the rest takes a few µs.
    let least = Duration::from_millis(100) + MANAGER_COMPLETION_TIMEOUT;
    assert!(
        (least..least + Duration::from_millis(1)).contains(&enumerated.at),
        "enumeration ended at {:?}, not once the manager's timeout ({MANAGER_COMPLETION_TIMEOUT:?}) had passed",
        enumerated.at
    );
    eprintln!("enumeration with a hung GPU ended at {:?}", enumerated.at);
    let world = engine.world();
    let inventory = world.manager().inventory();
    let local = &inventory.switches[0];
    assert!(local.not_responding(PortIndex(2)), "gpu2's port");
    assert!(!local.not_responding(PortIndex(1)), "gpu1's port");
    let gpu1 = inventory
        .functions
        .iter()
        .find(|f| f.port == PortIndex(1))
        .expect("gpu1 enumerated");
    assert!(gpu1.binding.is_some(), "gpu1 bound");
    assert!(
        inventory.functions.iter().all(|f| f.port != PortIndex(2)),
        "nothing of gpu2"
    );

    // Binding gpu2 fails, saying why.
    let text = format!(
        "{HUNG_BEFORE_ENUMERATION}\n[[step]]\ndo = \"bind\"\nendpoints = [\"gpu2\"]\nhost = \"host1\"\n"
    );
    let scenario = parsed(&text, "bind_hung.toml");
    let mut engine = Engine::new(&scenario).expect("the fabric builds");
    let error = engine.run_steps(&mut |_| {}).expect_err("gpu2 cannot bind");
    assert_eq!(
        error.why,
        "gpu2 is not in the fabric (the fabric manager found it not responding when it \
         enumerated the fabric)"
    );
}

#[test]
fn a_device_hung_during_enumeration_is_released_and_the_next_port_gets_what_it_had() {
    // gpu1 is bound, seen, read; nothing lost, dropped or unexpected.
    let scenario = parsed(HUNG_DURING_ENUMERATION, "hung_during_enumeration.toml");
    let engine = every_step_passes(&scenario);
    let report = engine.report();
    assert_eq!(
        report.steps[0].outcome,
        "links up; after 60 configuration requests completed, every TLP taken in, nothing sent back"
    );
    let enumerated = &report.steps[1];
    assert_eq!(
        enumerated.outcome,
        "1 GPUs; not responding: drive (a configuration request of the manager got no completion)"
    );
    // §6.6.1's 100 ms after reset, then the manager's wait for the
    // request the drive never completed (before VF Enable, so no 100 ms
    // wait for VFs); the rest takes a few µs.
    let least = Duration::from_millis(100) + MANAGER_COMPLETION_TIMEOUT;
    assert!(
        (least..least + Duration::from_millis(1)).contains(&enumerated.at),
        "enumeration ended at {:?}, not once the manager's timeout ({MANAGER_COMPLETION_TIMEOUT:?}) had passed",
        enumerated.at
    );
    eprintln!(
        "enumeration with a drive hung in its SR-IOV set-up ended at {:?}",
        enumerated.at
    );
    let manager = engine.world().manager();
    let inventory = manager.inventory();
    let local = &inventory.switches[0];
    assert!(local.not_responding(PortIndex(1)), "the drive's port");
    assert_eq!(local.port(PortIndex(1)), PortKind::Empty);
    // Nothing of the drive is left (its PF, VFs or BARs), and gpu1 got
    // the bus and the address the drive had been given: the first
    // endpoint bus after the host's proxy, the pool's first address.
    let functions: Vec<_> = inventory.functions.iter().map(|f| (f.id, f.port)).collect();
    assert_eq!(functions, [(weft_pcie::Bdf::new(2, 0, 0), PortIndex(2))]);
    assert_eq!(
        local.port(PortIndex(2)),
        PortKind::Endpoint { buses: (2, 2) }
    );
    assert_eq!(
        inventory.functions[0].bars[0].fabric_address(),
        Some(DEFAULT_POOL32_BASE)
    );
    assert!(inventory.functions[0].binding.is_some(), "gpu1 bound");
    // The event log names the drive's port once.
    let logged: Vec<_> = manager
        .events()
        .since(0)
        .filter(|logged| matches!(logged.event, Event::NotResponding { .. }))
        .map(|logged| logged.event)
        .collect();
    assert_eq!(
        logged,
        [Event::NotResponding {
            switch: SwitchIndex::LOCAL,
            port: PortIndex(1)
        }]
    );
}

#[test]
fn a_device_hung_below_a_pcie_switch_is_left_out_and_its_sibling_bound() {
    // gpu2 and gpu3 are bound, seen, read; nothing lost, dropped or unexpected.
    let scenario = parsed(HUNG_BELOW_PCIE_SWITCH, "hung_below_pcie_switch.toml");
    let engine = every_step_passes(&scenario);
    let report = engine.report();
    let enumerated = &report.steps[1];
    assert_eq!(
        enumerated.outcome,
        "2 GPUs; not responding: gpu1 (a configuration request of the manager got no completion)"
    );
    // §6.6.1's 100 ms after reset, then the manager's wait for the request
    // gpu1 never completed, and no other: a function that stopped
    // answering gets no Command write at the end of BAR sizing.
    let least = Duration::from_millis(100) + MANAGER_COMPLETION_TIMEOUT;
    assert!(
        (least..least + Duration::from_millis(1)).contains(&enumerated.at),
        "enumeration ended at {:?}",
        enumerated.at
    );
    let manager = engine.world().manager();
    let inventory = manager.inventory();
    let local = &inventory.switches[0];
    // The PCIe switch's port stays in use: bus 2 its upstream port's link,
    // 3 its internal bus, 4 and 5 its downstream ports' links (§7.5.1.3).
    assert!(!local.not_responding(PortIndex(1)));
    assert_eq!(
        local.port(PortIndex(1)),
        PortKind::Endpoint { buses: (2, 5) }
    );
    let functions: Vec<_> = inventory.functions.iter().map(|f| (f.id, f.port)).collect();
    assert_eq!(
        functions,
        [
            (weft_pcie::Bdf::new(5, 0, 0), PortIndex(1)),
            (weft_pcie::Bdf::new(6, 0, 0), PortIndex(2))
        ]
    );
    let hung_port = inventory
        .bridges
        .iter()
        .find(|b| b.buses == (4, 4))
        .expect("the first downstream port, its link bus 4 alone");
    assert!(hung_port.device_not_responding);
    assert_eq!((hung_port.memory, hung_port.prefetchable), (None, None));
    let logged: Vec<_> = manager
        .events()
        .since(0)
        .filter(|logged| {
            matches!(
                logged.event,
                Event::NotResponding { .. } | Event::DeviceNotResponding { .. }
            )
        })
        .map(|logged| logged.event)
        .collect();
    assert_eq!(
        logged,
        [Event::DeviceNotResponding {
            device: weft_pcie::Bdf::new(4, 0, 0),
            switch: SwitchIndex::LOCAL,
            port: PortIndex(1)
        }]
    );
}
