//! The firmware ELF on the ISS as the fabric manager of a simulated
//! fabric (`World::hand_manager_to_firmware`, `weft_sim::iss_manager`):
//! it enumerates the world it manages as the native fabric manager
//! (weft-fabric on the host) enumerates an identical world — the same
//! switches, fabric links and functions, at the same fabric IDs and BAR
//! addresses, as a Topology request over its management MAC lists them
//! and as the native manager's answer to the same request does — and
//! writes the same port roles into switch 0's tables. Then each manager
//! binds a GPU to host 0, and the host boots: through the firmware's
//! mailbox and virtual switch it sees the same device tree and binds the
//! same driver as through the native manager's; a second GPU bound while
//! the host runs reaches it by the firmware's hot-plug MSI. Each test prints what the
//! enumeration took on the soft core — instructions, `mtime` ticks and
//! the simulated time at the reference soft core clock
//! (`weft_regs::SOFT_CORE_CLOCK_HZ`) — and the host's boot time.
//!
//! A scenario file selects the firmware with `[fabric] manager =
//! "firmware-iss"` and `firmware = "path"`: it enumerates and boots its
//! host as the native manager's run of the same file does, and a missing
//! ELF or a step the firmware cannot run is an error at its line.
//!
//! The worlds come from scenarios, with switch 0's ID the firmware's own
//! (its identity VSEC must carry it, or a fabric loop leads back to a
//! stranger). The scenario's host ports, slots and NumVFs reach the
//! firmware as a configuration record in its flash
//! (`iss_manager::provisioned_flash`), which it applies at start as a
//! saved configuration: the reference fabric's two hosts, each NVMe PF's
//! VFs enabled.
//!
//! The reference experiment's fabric (`sim/scenarios/reference.toml`) is
//! four switches: the firmware finds its neighbours on the fabric links,
//! gives each one's management function its BAR and writes the other
//! switches' tables in-band (weft-fabric's `inband`): memory requests out
//! of its switch's injector that each switch executes against its CSR
//! window, its reads' completions back in its mailbox. Measured in a
//! debug build: about 3.9 million instructions and 31 ms simulated at
//! 125 MHz for the enumeration, the whole test about 5 s.

mod firmware_support;

use std::time::Duration;

use firmware_support::*;
use weft_fabric::management::{handle, BoardInfo, Hardware, PortLink, PortLinks};
use weft_fabric::readiness::RESET_TO_FIRST_REQUEST_NS;
use weft_pcie::Bdf;
use weft_proto::{
    decode_response, encode_request, BoundFunctions, EndpointInfo, EventKind, Header, HostIndex,
    LinkSpeed, LinkState, LinkStatus, Request, Response, SlotIndex, SwitchId, TopologyCursor,
    TopologyItem, MANAGEMENT_UDP_PORT, MAX_DATAGRAM,
};
use weft_regs::soc::gpio;
use weft_sim::firmware_board::FirmwareCore;
use weft_sim::iss_board::{IssBoard, CPU_CLOCK_HZ};
use weft_sim::iss_manager::{run_to_fabric_start, FabricStart};
use weft_sim::scenario::engine::{self, Report};
use weft_sim::scenario::validate::ManagerPlan;
use weft_sim::scenario::{build, Scenario, ScenarioError};
use weft_sim::world::World;

const CLIENT_PORT: u16 = 40_002;
/// How long the firmware gets to answer one frame.
const ANSWER_TIME: Duration = Duration::from_millis(5);

/// The longest the firmware's main loop sleeps between passes
/// (`weft_firmware::CONSOLE_PERIOD`, which a host build does not have).
const MAIN_LOOP_PERIOD: Duration = Duration::from_millis(20);

/// The reference experiment's endpoints on the firmware's one switch:
/// two host ports, four GPUs and an NVMe drive with two of its VFs on.
const ONE_SWITCH: &str = r#"
[scenario]
name = "firmware-one-switch"
title = "the firmware's switch with a host, four GPUs and an NVMe drive"

[fabric]
vendor_id = 0x1d1d
upstream_device_id = 0x0001
downstream_device_id = 0x0002
num_vfs = 2

[[switch]]
name = "s0"
id = 0x0257_4546_5401
ports = 8
roles = { "0" = "host", "1" = "host" }

[[host]]
name = "host1"
slots = 4

[[host]]
name = "host2"
slots = 2

[[endpoint]]
name = "gpu1"
kind = "gpu"

[[endpoint]]
name = "gpu2"
kind = "gpu"

[[endpoint]]
name = "gpu3"
kind = "gpu"

[[endpoint]]
name = "gpu4"
kind = "gpu"

[[endpoint]]
name = "nvme"
kind = "nvme"
vfs = 4

[[link]]
ends = ["host1", "s0.0"]
[[link]]
ends = ["host2", "s0.1"]
[[link]]
ends = ["gpu1", "s0.2"]
[[link]]
ends = ["gpu2", "s0.3"]
[[link]]
ends = ["gpu3", "s0.4"]
[[link]]
ends = ["gpu4", "s0.5"]
[[link]]
ends = ["nvme", "s0.6"]

[[step]]
do = "enumerate"
"#;

/// `scenario` with the firmware `image` as its manager and its own
/// switch ID; the scenario's host ports and NumVFs reach the firmware
/// through its provisioned flash.
fn for_firmware(mut scenario: Scenario, image: &[u8]) -> Scenario {
    scenario.switches[0].id = FIRMWARE_SWITCH;
    scenario.manager = ManagerPlan::Firmware {
        path: firmware_path(),
        elf: image.to_vec(),
        core: FirmwareCore::Iss,
    };
    scenario
}

/// `scenario` with the native manager.
fn natively(scenario: &Scenario) -> Scenario {
    Scenario {
        manager: ManagerPlan::Native,
        ..scenario.clone()
    }
}

/// A world of `scenario` enumerated by the native manager, and the
/// simulated time its enumeration took after the 100 ms its start waits
/// for the links to be out of reset (its requests' time on the links; the
/// native manager's own computing takes none).
fn native_world(scenario: &Scenario) -> (World, Duration) {
    let mut world = build::world(&natively(scenario)).expect("the scenario builds");
    let before = world.now();
    world.start_manager().expect("the native manager starts");
    let waited = Duration::from_nanos(RESET_TO_FIRST_REQUEST_NS);
    let took = (world.now() - before).saturating_sub(waited);
    (world, took)
}

/// Every port's link down: the topology items compared here (switches,
/// link ends, functions) do not depend on link status.
struct LinksUnknown;

impl PortLinks for LinksUnknown {
    fn link(&mut self, _switch_id: u64, _port: u8) -> PortLink {
        PortLink {
            status: LinkStatus {
                state: LinkState::Down,
                speed: None,
                width: 0,
            },
            max_speed: LinkSpeed::Gen3,
            max_width: 16,
        }
    }
}

/// Every item of the native manager's topology, page by page.
fn native_topology(world: &mut World) -> Vec<TopologyItem> {
    pages(|request| native_ask(world, request))
}

/// Every item of a topology, asking for page after page with `ask`.
fn pages(mut ask: impl FnMut(&Request) -> Response) -> Vec<TopologyItem> {
    let mut items = Vec::new();
    let mut cursor = TopologyCursor(0);
    loop {
        let request = Request::Topology {
            cursor,
            generation: None,
        };
        let Response::Topology(page) = ask(&request) else {
            panic!("expected a topology page");
        };
        items.extend(page.items);
        match page.next {
            Some(next) => cursor = next,
            None => return items,
        }
    }
}

/// What a topology says enumeration found: its switches (ID, ports,
/// whether the manager's), its fabric links (both ends) and its
/// functions (everything the manager knows of each), each sorted.
type Found = (Vec<(u64, u8, bool)>, Vec<String>, Vec<EndpointInfo>);

fn found(items: &[TopologyItem]) -> Found {
    let mut switches = Vec::new();
    let mut links = Vec::new();
    let mut endpoints = Vec::new();
    for item in items {
        match item {
            TopologyItem::Switch(s) => switches.push((s.id.0, s.ports, s.manager)),
            TopologyItem::Link(link) => links.push(format!("{:?} - {:?}", link.a, link.b)),
            TopologyItem::Endpoint(endpoint) => endpoints.push(endpoint.clone()),
            TopologyItem::Port(_) => {}
        }
    }
    switches.sort_unstable();
    links.sort_unstable();
    endpoints.sort_by_key(|e| e.fabric_id.0);
    (switches, links, endpoints)
}

/// `scenario`'s world with the firmware as its manager, started: the key
/// typed on its console, run until it says how its fabric start went.
fn firmware_started(scenario: &Scenario) -> (World, FabricStart) {
    let mut world = build::world(scenario).expect("the scenario builds");
    board(&world)
        .console()
        .receive(format!("key {TEST_KEY_HEX}\r").as_bytes());
    match run_to_fabric_start(&mut world) {
        Ok(started) => (world, started),
        Err(why) => panic!("{why}"),
    }
}

/// The firmware's board in `world`.
fn board(world: &World) -> &IssBoard {
    world.firmware().expect("the firmware manages the world")
}

/// Hands `frame` to the firmware's MAC and returns what it sent within
/// [`ANSWER_TIME`].
fn exchange(world: &mut World, frame: &[u8]) -> Vec<Vec<u8>> {
    let reception = board(world).mac().receive(frame);
    assert!(
        matches!(reception, weft_iss::soc::Reception::Landed { .. }),
        "the MAC took the frame: {reception:?}"
    );
    let until = world.now() + ANSWER_TIME;
    world.run_until(until);
    board(world).mac().take_transmitted()
}

/// Sends `request` over the firmware's MAC, the `id`th under the test key,
/// and decodes the one answer.
fn ask_firmware(world: &mut World, id: u32, request: &Request) -> Response {
    let key = test_key();
    let header = Header::request(id, SwitchId(FIRMWARE_SWITCH), 10 + u64::from(id));
    let mut datagram = [0u8; MAX_DATAGRAM];
    let len = encode_request(&header, request, &[], &key, &mut datagram).expect("fits");
    let sent = exchange(
        world,
        &udp(CLIENT_PORT, MANAGEMENT_UDP_PORT, &datagram[..len]),
    );
    assert_eq!(sent.len(), 1, "one answer");
    let (_, _, _, data) = parse_udp(&sent[0]);
    decode_response(&data, &key, &header)
        .expect("an answer authenticated under the test key")
        .response
}

/// Every item of the firmware's topology, page by page over its MAC,
/// asking from request `first_id` on.
fn firmware_topology(world: &mut World, first_id: u32) -> Vec<TopologyItem> {
    let mut id = first_id;
    pages(|request| {
        id += 1;
        ask_firmware(world, id, request)
    })
}

/// Runs the firmware as the manager of `scenario`'s world and checks its
/// topology against the native manager's on an identical world; prints
/// the figures.
fn enumerates_as_the_native_manager(scenario: &Scenario) {
    let (mut native, native_took) = native_world(scenario);
    let expected = found(&native_topology(&mut native));
    let (mut firmware, started) = firmware_started(scenario);
    let FabricStart {
        instructions,
        cycles: ticks,
        ..
    } = started;
    let (switches, links, endpoints) = &expected;
    eprintln!(
        "{}: the firmware on the ISS enumerated {} switches, {} fabric links and {} functions \
         in {instructions} instructions and {ticks} mtime ticks, {:.3} ms at {:.1} MHz \
         (the native manager's: {:.3} ms of link time)",
        scenario.name,
        switches.len(),
        links.len(),
        endpoints.len(),
        IssBoard::duration_of(ticks).as_secs_f64() * 1e3,
        CPU_CLOCK_HZ as f64 / 1e6,
        native_took.as_secs_f64() * 1e3,
    );
    assert_eq!(started.functions, endpoints.len() as u64, "{started:?}");
    // Topology over the management MAC: the native manager's switches,
    // links and functions, at the same fabric IDs and BAR addresses.
    let answers = exchange(&mut firmware, &arp_request(FIRMWARE_IP));
    assert_eq!(answers.len(), 1, "one ARP reply");
    assert_eq!(found(&firmware_topology(&mut firmware, 0)), expected);
    // The tables the firmware wrote are the world's: every port of its
    // switch has the role the native manager gave it.
    for port in 0..native.switch().ports() {
        let role = |world: &World| {
            world
                .switch()
                .port_tables(weft_model::PortIndex(port as u8))
                .map(|tables| tables.role)
        };
        assert_eq!(role(&firmware), role(&native), "port {port}");
    }

    // The first GPU bound to host 0's first slot by each manager: the
    // host, booting through the firmware's virtual switch (its mailbox,
    // configuration requests forwarded to the GPU through the world),
    // sees what it sees through the native manager's. The firmware's bind
    // is typed on its console, as on a board without a management port.
    let gpu = endpoints
        .iter()
        .find(|e| e.class_code.0 >> 16 == 0x03)
        .expect("a GPU (display controller) in the fabric");
    let gpu_id = Bdf::from(gpu.fabric_id);
    let said = type_on_console(&mut firmware, "bind 7f:1f.7 0 0");
    assert!(
        said.contains("bind: ") && !said.contains("done"),
        "a function the fabric lacks is refused: {said}"
    );
    let said = type_on_console(&mut firmware, &format!("bind {gpu_id} 0 0"));
    assert_eq!(said, "bind: done\r\n");
    let said = type_on_console(&mut firmware, "functions");
    let line = said
        .lines()
        .find(|line| line.starts_with(&gpu_id.to_string()))
        .unwrap_or_else(|| panic!("the GPU is listed: {said}"));
    assert!(line.ends_with(": host 0 slot 0"), "{line}");
    assert_eq!(said.lines().count(), endpoints.len(), "{said}");
    let mut functions = BoundFunctions::new();
    functions.push(gpu.fabric_id).expect("room for one");
    let bind = Request::Bind {
        host: HostIndex(0),
        slot: SlotIndex(0),
        functions,
        if_generation: None,
    };
    assert_eq!(native_ask(&mut native, &bind), Response::Done);
    let host_place = scenario.hosts[0].place;
    let boot = |world: &mut World| {
        let from = world.now();
        let drivers = world
            .with_host(host_place, |host, link| {
                host.boot(link)
                    .map(|drivers| (drivers, host.tree().clone()))
            })
            .expect("the host boots");
        (drivers, world.now() - from)
    };
    let ((native_drivers, native_tree), native_took) = boot(&mut native);
    let host_requests = |world: &World| {
        let port = weft_model::PortIndex(host_place.port);
        world
            .switch()
            .counters(port)
            .map_or(0, |c| c.ingress.non_posted)
    };
    let (instructions, requests) = (board(&firmware).instructions(), host_requests(&firmware));
    let ((drivers, tree), took) = boot(&mut firmware);
    let instructions = board(&firmware).instructions() - instructions;
    let requests = host_requests(&firmware) - requests;
    eprintln!(
        "{}: host 0 booted through the firmware in {:.3} ms simulated ({requests} non-posted \
         requests from the host, {instructions} instructions of the firmware, {} a request), \
         through the native manager (its {} us a request) in {:.3} ms",
        scenario.name,
        took.as_secs_f64() * 1e3,
        instructions / requests.max(1),
        weft_sim::world::FIRMWARE_LATENCY.as_micros(),
        native_took.as_secs_f64() * 1e3,
    );
    // The native manager's per-request latency stands for the firmware's:
    // the same boot must take about as long through either.
    let ratio = took.as_secs_f64() / native_took.as_secs_f64();
    assert!(
        (0.5..=2.0).contains(&ratio),
        "the host's boot took {ratio:.2}x as long through the firmware as through the native \
         manager: FIRMWARE_LATENCY no longer stands for the firmware"
    );
    assert_eq!(drivers.len(), 1, "the GPU's driver bound: {drivers:?}");
    assert_eq!(drivers, native_drivers);
    assert_eq!(tree, native_tree);

    // A second GPU bound to slot 1 of the running host: the firmware sets
    // the slot's presence and sends the MSI the host programmed, out of
    // the host port through the world, and the host's hot-plug driver
    // scans the slot and loads the GPU's driver, as with the native manager.
    let second = endpoints
        .iter()
        .filter(|e| e.class_code.0 >> 16 == 0x03)
        .nth(1)
        .expect("a second GPU in the fabric");
    let mut functions = BoundFunctions::new();
    functions.push(second.fabric_id).expect("room for one");
    let bind = Request::Bind {
        host: HostIndex(0),
        slot: SlotIndex(1),
        functions,
        if_generation: None,
    };
    assert_eq!(ask_firmware(&mut firmware, 101, &bind), Response::Done);
    assert_eq!(native_ask(&mut native, &bind), Response::Done);
    let hot_plug = |world: &mut World| {
        engine::let_interrupts_arrive(world);
        world
            .with_host(host_place, |host, link| {
                host.service_interrupts(link).map(|events| {
                    let drivers: Vec<_> = host.drivers().keys().copied().collect();
                    (events, host.tree().clone(), drivers)
                })
            })
            .expect("the host handles the hot-plug interrupt")
    };
    let (events, tree, drivers) = hot_plug(&mut firmware);
    assert_eq!(events.len(), 1, "the firmware's MSI reached the host");
    assert_eq!(drivers.len(), 2, "both GPUs' drivers: {drivers:?}");
    assert_eq!((events, tree, drivers), hot_plug(&mut native));

    // The second GPU unbound on the console, at once (surprise).
    let said = type_on_console(&mut firmware, "unbind 0");
    assert!(said.starts_with("unbind: expected"), "{said}");
    let said = type_on_console(&mut firmware, "unbind 0 1 surprise");
    assert_eq!(said, "unbind: done\r\n");
    let said = type_on_console(&mut firmware, "functions");
    let second_id = Bdf::from(second.fabric_id).to_string();
    let line = said
        .lines()
        .find(|line| line.starts_with(&second_id))
        .unwrap_or_else(|| panic!("the second GPU is listed: {said}"));
    assert!(line.ends_with(": unbound"), "{line}");

    let ManagerPlan::Firmware { elf, .. } = &scenario.manager else {
        panic!("{}: the firmware manages this scenario", scenario.name)
    };
    assert_stack_clear(
        board(&firmware),
        elf,
        &format!(
            "{}: enumeration, two binds, a host's boot and an unbind",
            scenario.name
        ),
    );
}

/// Types `line` on the firmware's console in `world` and lets its main
/// loop read it and answer; what it printed meanwhile.
fn type_on_console(world: &mut World, line: &str) -> String {
    let console = board(world).console();
    console.take_transmitted();
    console.receive(format!("{line}\r").as_bytes());
    let until = world.now() + MAIN_LOOP_PERIOD + ANSWER_TIME;
    world.run_until(until);
    String::from_utf8_lossy(&board(world).console().take_transmitted()).into_owned()
}

/// `request` answered by the native manager of `world`.
fn native_ask(world: &mut World, request: &Request) -> Response {
    let board = board_info(world);
    world.with_manager(|manager, config, planes, hosts| {
        let mut sim_board = weft_sim::serve::SimBoard::new();
        let mut board_on = sim_board.on(planes);
        let hardware = Hardware {
            config,
            fabric: planes,
            hosts,
            links: &mut LinksUnknown,
            firmware: None,
            timer: None,
            board: &mut board_on,
        };
        handle(manager, &board, request, &[], hardware)
    })
}

/// What the native manager says of its board.
fn board_info(world: &World) -> BoardInfo {
    BoardInfo {
        board: "weft-sim",
        version: (0, 1, 0),
        build: "",
        ports: u8::try_from(world.switch().ports()).expect("ports fit"),
        authenticated: true,
    }
}

/// The [`ONE_SWITCH`] scenario.
fn one_switch() -> Scenario {
    Scenario::parse(ONE_SWITCH, "firmware_reference_fabric.rs", ".".as_ref())
        .expect("the scenario parses")
}

#[test]
fn the_firmware_enumerates_a_one_switch_fabric_as_the_native_manager_does() {
    let Some(image) = firmware_image() else {
        return;
    };
    enumerates_as_the_native_manager(&for_firmware(one_switch(), &image));
}

#[test]
fn the_firmware_enumerates_the_reference_fabric_as_the_native_manager_does() {
    let Some(image) = firmware_image() else {
        return;
    };
    enumerates_as_the_native_manager(&for_firmware(Scenario::reference(), &image));
}

/// The one-switch scenario with `manager` (and `firmware`) lines in its
/// `[fabric]` table, and a host boot after the enumeration.
fn one_switch_file(fabric_lines: &str) -> String {
    let text = ONE_SWITCH.replace("num_vfs = 2\n", &format!("num_vfs = 2\n{fabric_lines}"));
    format!("{text}\n[[step]]\ndo = \"boot\"\nhosts = [\"host1\"]\n")
}

/// The line and message of `text`'s error as a scenario.
fn error_of(text: &str) -> (usize, String) {
    match Scenario::parse(text, "test", ".".as_ref()) {
        Err(ScenarioError::Invalid { line, message, .. }) => (line, message),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// Line (from 1) of the first line of `text` that starts with `start`.
fn line_of(text: &str, start: &str) -> usize {
    1 + text
        .lines()
        .position(|line| line.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting {start:?}"))
}

/// A report's outcome of the step that says `what`.
fn outcome_of(report: &Report, what: &str) -> String {
    report
        .steps
        .iter()
        .find(|note| note.what.contains(what))
        .map(|note| note.outcome.clone())
        .unwrap_or_else(|| panic!("no step {what:?} in {:#?}", report.steps))
}

#[test]
fn a_scenario_file_runs_with_the_firmware_as_its_manager() {
    let Some(_) = firmware_image() else {
        return;
    };
    let path = firmware_path();
    let firmware = one_switch_file(&format!(
        "manager = \"firmware-iss\"\nfirmware = {:?}\n",
        path.display().to_string()
    ));
    let native = one_switch_file("");
    let run = |text: &str| {
        let scenario = Scenario::parse(text, "test", ".".as_ref()).expect("the scenario parses");
        engine::run(&scenario, &mut |_| {}).expect("the scenario runs")
    };
    let (firmware, native) = (run(&firmware), run(&native));
    let enumerated = outcome_of(&firmware, "enumerate");
    eprintln!("firmware-iss scenario: {enumerated}");
    // Four GPUs, the NVMe PF and the two VFs the provisioned NumVFs enable.
    assert!(
        enumerated.starts_with("7 functions by the firmware on the ISS"),
        "{enumerated}"
    );
    // The hosts booted through the firmware see what they see through the
    // native manager: each its virtual switch with its own slots, empty.
    assert_eq!(firmware.trees, native.trees);
    assert_eq!(native.trees.len(), 2, "{:?}", native.trees);
    assert!(native.trees[0].1.contains("1d1d"), "{:?}", native.trees);
}

#[test]
fn a_firmware_elf_that_is_not_there_is_an_error_at_its_line() {
    let text =
        one_switch_file("manager = \"firmware-iss\"\nfirmware = \"no/such/weft-firmware.elf\"\n");
    let (line, message) = error_of(&text);
    assert_eq!(line, line_of(&text, "firmware = "));
    assert!(
        message.contains("no/such/weft-firmware.elf") && message.contains("cargo xtask firmware"),
        "{message}"
    );
}

#[test]
fn the_firmware_leaves_out_a_device_hung_below_a_pcie_switch_alone() {
    let Some(image) = firmware_image() else {
        return;
    };
    // The scenario up to its bind: the firmware runs hang, enumerate and
    // boot steps only.
    let text = include_str!("scenarios/hung_below_pcie_switch.toml");
    let text = &text[..text.find("[[step]]\ndo = \"bind\"").expect("a bind step")];
    let text = format!("{text}[[step]]\ndo = \"boot\"\nhosts = [\"host1\"]\n");
    let scenario = Scenario::parse(&text, "hung_below_pcie_switch.toml", ".".as_ref())
        .expect("the scenario parses");
    let run = |scenario: &Scenario| engine::run(scenario, &mut |_| {}).expect("the scenario runs");
    let firmware = run(&for_firmware(scenario.clone(), &image));
    let enumerated = outcome_of(&firmware, "enumerate");
    eprintln!("firmware-iss, gpu1 hung below sw1: {enumerated}");
    // gpu2 beside it and gpu3 on its own port: the PCIe switch's weft port
    // was not given up.
    assert!(
        enumerated.starts_with("2 functions by the firmware on the ISS"),
        "{enumerated}"
    );
    assert_eq!(firmware.trees, run(&scenario).trees);
}

#[test]
fn with_the_firmware_as_manager_the_first_switch_has_the_firmwares_id() {
    let Some(_) = firmware_image() else {
        return;
    };
    let text = one_switch_file(&format!(
        "manager = \"firmware-iss\"\nfirmware = {:?}\n",
        firmware_path().display().to_string()
    ))
    .replace("id = 0x0257_4546_5401", "id = 1");
    let (line, message) = error_of(&text);
    assert_eq!(line, line_of(&text, "[[switch]]"));
    assert_eq!(
        message,
        "switch `s0`: with the firmware as its manager, the first switch is the firmware's, \
         whose switch ID is 0x25745465401 (its station address): `id` must be that"
    );
}

/// A file that is there, by its absolute path.
const ANY_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");

#[test]
fn with_the_firmware_as_manager_a_step_that_needs_the_native_one_is_an_error() {
    // Any readable file passes for the ELF here: the steps are checked
    // before the image is loaded.
    let text = one_switch_file(&format!(
        "manager = \"firmware-iss\"\nfirmware = {ANY_FILE:?}\n"
    ))
    .replace(
        "[[step]]\ndo = \"boot\"",
        "[[step]]\ndo = \"bind\"\nendpoints = [\"gpu1\"]\nhost = \"host1\"\n\n[[step]]\ndo = \"boot\"",
    );
    let (line, message) = error_of(&text);
    let bind = line_of(&text, "do = \"bind\"");
    assert!(line == bind || line == bind - 1, "line {line}: {message}");
    assert!(message.contains("native fabric manager"), "{message}");
}

/// Two switches, a host on each, a GPU on the far one: host1's root port is
/// on s1, whose mailbox the manager on s0 reads in-band.
const REMOTE_HOST: &str = r#"[scenario]
name = "remote-host"
title = "a host on the switch next to the manager's"

[[switch]]
name = "s0"
id = 0xa0
ports = 4

[[switch]]
name = "s1"
id = 0xb0
ports = 4

[[host]]
name = "host1"
slots = 2

[[host]]
name = "host2"
slots = 3

[[endpoint]]
name = "gpu1"
kind = "gpu"

[[link]]
ends = ["s0.3", "s1.3"]
[[link]]
ends = ["host1", "s1.0"]
[[link]]
ends = ["host2", "s0.0"]
[[link]]
ends = ["gpu1", "s1.1"]

[[step]]
do = "enumerate"

[[step]]
do = "boot"
hosts = ["host1", "host2"]
"#;

#[test]
fn a_host_on_another_switch_boots_through_the_firmware_as_through_the_native_manager() {
    let Some(image) = firmware_image() else {
        return;
    };
    let scenario = Scenario::parse(REMOTE_HOST, "remote-host", ".".as_ref()).expect("parses");
    let firmware = for_firmware(scenario, &image);
    let run = |scenario: &Scenario| engine::run(scenario, &mut |_| {}).expect("the scenario runs");
    let (through_firmware, native) = (run(&firmware), run(&natively(&firmware)));
    for report in [&through_firmware, &native] {
        eprintln!(
            "host1 on s1: {}; host2 on s0: {}",
            outcome_of(report, "host1 boots"),
            outcome_of(report, "host2 boots")
        );
    }
    // Each host sees its own virtual switch, host1's two slots and host2's
    // three, whichever manager answered it and however far away.
    assert_eq!(through_firmware.trees, native.trees);
    let bridges = |tree: &str| tree.matches("1d1d:").count();
    assert_eq!(bridges(&native.trees[0].1), 3, "{}", native.trees[0].1);
    assert_eq!(bridges(&native.trees[1].1), 4, "{}", native.trees[1].1);

    // The console takes a host port on the switch the start found next
    // door, by its switch ID, and refuses a port that switch lacks.
    let mut engine = engine::Engine::new(&firmware).expect("builds");
    engine.run_step(0).expect("the firmware enumerates");
    let mut world = engine.into_world();
    let mut type_line = |line: &str| {
        let board = world.firmware().expect("the firmware manages");
        board.console().take_transmitted();
        board.console().receive(format!("{line}\r").as_bytes());
        // The console's next look (every 20 ms) and the answer's time on the UART.
        world.run_until(world.now() + Duration::from_millis(50));
        let board = world.firmware().expect("the firmware manages");
        String::from_utf8_lossy(&board.console().take_transmitted()).into_owned()
    };
    let printed = type_line("host b0:2 1");
    assert!(
        printed.contains("host 2: switch 0000000000b0 port 2, 1 slots"),
        "{printed}"
    );
    let printed = type_line("host b0:4 1");
    assert!(
        printed.contains("the switch has ports 0 to 3, not 4; nothing changed"),
        "{printed}"
    );
}

/// The ports of the firmware's own switch that `items` show with their
/// link up.
fn ports_up(items: &[TopologyItem]) -> Vec<u8> {
    items
        .iter()
        .filter_map(|item| match item {
            TopologyItem::Port(p)
                if p.at.switch == SwitchId(FIRMWARE_SWITCH) && p.link.state == LinkState::Up =>
            {
                Some(p.at.port.0)
            }
            _ => None,
        })
        .collect()
}

#[test]
fn the_firmware_reports_the_ports_links_as_the_board_shows_them_and_lights_their_leds() {
    let Some(image) = firmware_image() else {
        return;
    };
    let (mut world, _) = firmware_started(&for_firmware(one_switch(), &image));
    let answers = exchange(&mut world, &arp_request(FIRMWARE_IP));
    assert_eq!(answers.len(), 1, "one ARP reply");
    // Nothing drives the GPIO inputs here: a port is up where enumeration
    // found a host or an endpoint on it.
    let found = ports_up(&firmware_topology(&mut world, 0));
    assert!(
        found.len() > 1,
        "enumeration found the hosts and endpoints: {found:?}"
    );
    assert_eq!(board(&world).gpio().output(), 0, "the LEDs stay dark");
    // A board that reports its links (weft_chip's GPIO inputs, LINKS_REPORTED
    // set): first those ports' links up, then port 0's alone. Each change
    // shows within a pass of the main loop.
    let show = |world: &mut World, up: u32| {
        board(world)
            .gpio()
            .set_input(gpio::INPUT_LINKS_REPORTED.encode(1) | gpio::INPUT_LINK_UP.encode(up));
        let until = world.now() + 2 * MAIN_LOOP_PERIOD;
        world.run_until(until);
    };
    let found_mask = found.iter().fold(0, |up, &port| up | 1 << port);
    show(&mut world, found_mask);
    // LED n (GPIO output n) lights while port n's link is up.
    assert_eq!(board(&world).gpio().output(), found_mask);
    show(&mut world, 1);
    assert_eq!(board(&world).gpio().output(), 1);
    assert_eq!(ports_up(&firmware_topology(&mut world, 1000)), vec![0]);
    // The event log has a link going down for each of the others, and no
    // link coming up: the links the first look found are not logged.
    let Response::Events(page) = ask_firmware(
        &mut world,
        2000,
        &Request::ReadEvents {
            from: weft_proto::EventSeq(0),
        },
    ) else {
        panic!("an event page");
    };
    let (mut down, mut up) = (0, 0);
    for event in &page.events {
        match event.kind {
            EventKind::HostLinkDown { .. }
            | EventKind::PortLinkDown { .. }
            | EventKind::FabricLinkDown { .. } => down += 1,
            EventKind::HostLinkUp { .. }
            | EventKind::PortLinkUp { .. }
            | EventKind::FabricLinkUp { .. } => up += 1,
            _ => {}
        }
    }
    assert_eq!((down, up), (found.len() - 1, 0), "{:?}", page.events);
}
