//! Scenario files: errors point at the line and column and name the key;
//! a small scenario runs end to end through `weft-sim run`'s engine.

use std::path::Path;

use weft_fabric::inventory::BridgeKind;
use weft_pcie::config::acs::feature;
use weft_regs::tables::PortIndex;
use weft_sim::scenario::engine::{run, Engine, Report};
use weft_sim::scenario::{Scenario, ScenarioError, REFERENCE};
use weft_sim::wiring::Place;

/// A valid scenario's head: one switch, a host and a GPU.
const HEAD: &str = r#"[scenario]
name = "t"
title = "test"

[[switch]]
name = "s0"
id = 1
ports = 4

[[host]]
name = "host1"
slots = 2

[[endpoint]]
name = "gpu1"
kind = "gpu"

[[link]]
ends = ["host1", "s0.0"]
"#;

/// Line, column and message of the error `text` gives.
fn error_of(text: &str) -> (usize, usize, String) {
    match Scenario::parse(text, "test.toml", Path::new(".")) {
        Err(ScenarioError::Invalid {
            origin,
            line,
            column,
            message,
        }) => {
            assert_eq!(origin, "test.toml");
            (line, column, message)
        }
        Err(other) => panic!("not a located error: {other}"),
        Ok(_) => panic!("accepted:\n{text}"),
    }
}

/// What the step described as `what` showed in `report`.
fn outcome_of(report: &Report, what: &str) -> String {
    report
        .steps
        .iter()
        .find(|s| s.what == what)
        .map(|s| s.outcome.clone())
        .unwrap_or_else(|| panic!("no step {what:?} in {:#?}", report.steps))
}

/// Line (from 1) of the first line of `text` equal to `line`, after `after` such lines.
fn line_of(text: &str, line: &str, after: usize) -> usize {
    text.lines()
        .enumerate()
        .filter(|(_, l)| *l == line)
        .nth(after)
        .map(|(n, _)| n + 1)
        .unwrap_or_else(|| panic!("no line {line:?}"))
}

#[test]
fn the_head_with_the_gpus_link_is_valid() {
    let text = format!("{HEAD}[[link]]\nends = [\"gpu1\", \"s0.1\"]\n");
    let scenario = Scenario::parse(&text, "test.toml", Path::new(".")).expect("valid");
    assert_eq!(scenario.hosts[0].place, Place::new(0, 0));
    assert_eq!(scenario.endpoints[0].place.port, 1);
}

#[test]
fn an_unknown_key_is_named_at_its_line() {
    let text = HEAD.replace("slots = 2", "slots = 2\nslot_count = 3");
    let (line, column, message) = error_of(&text);
    assert_eq!(line, line_of(&text, "slot_count = 3", 0));
    assert_eq!(column, 1);
    assert!(message.contains("unknown field `slot_count`"), "{message}");
}

#[test]
fn a_value_of_the_wrong_type_is_named_at_its_line() {
    let text = HEAD.replace("ports = 4", "ports = \"four\"");
    let (line, column, message) = error_of(&text);
    assert_eq!((line, column), (line_of(&text, "ports = \"four\"", 0), 9));
    assert!(
        message.contains("invalid type: string \"four\""),
        "{message}"
    );
}

#[test]
fn an_unknown_key_in_a_step_is_named_at_the_step() {
    let text = format!("{HEAD}[[link]]\nends = [\"gpu1\", \"s0.1\"]\n[[step]]\ndo = \"enumerate\"\nhost = \"host1\"\n");
    let (line, _, message) = error_of(&text);
    // serde buffers an internally tagged action, so toml points at its table.
    let step = line_of(&text, "[[step]]", 0);
    assert!(line == step || line == step + 1, "line {line}");
    assert!(message.contains("unknown field `host`"), "{message}");
}

#[test]
fn an_unknown_key_in_a_step_with_arguments_is_named() {
    let text = format!("{HEAD}[[link]]\nends = [\"gpu1\", \"s0.1\"]\n[[step]]\ndo = \"boot\"\nhosts = [\"host1\"]\nslot = 1\n");
    let (line, _, message) = error_of(&text);
    let step = line_of(&text, "[[step]]", 0);
    assert!(line == step || line == step + 1, "line {line}");
    assert!(message.contains("unknown field `slot`"), "{message}");
}

#[test]
fn a_link_to_a_port_that_does_not_exist_is_an_error_at_that_end() {
    let text = format!("{HEAD}[[link]]\nends = [\"gpu1\", \"s0.4\"]\n");
    let (line, column, message) = error_of(&text);
    assert_eq!(line, line_of(&text, "ends = [\"gpu1\", \"s0.4\"]", 0));
    assert_eq!(column, 17, "the second end");
    assert_eq!(
        message,
        "link end `s0.4`: switch `s0` has 4 ports (0 to 3), port 4 does not exist"
    );
}

#[test]
fn two_links_on_one_port_name_both_lines() {
    let text = format!("{HEAD}[[link]]\nends = [\"gpu1\", \"s0.0\"]\n");
    let (line, _, message) = error_of(&text);
    assert_eq!(line, line_of(&text, "ends = [\"gpu1\", \"s0.0\"]", 0));
    let first = line_of(&text, "ends = [\"host1\", \"s0.0\"]", 0);
    assert_eq!(
        message,
        format!("link end `s0.0`: that port already has the link on line {first}")
    );
}

#[test]
fn an_endpoint_without_a_link_is_an_error_at_its_table() {
    let (line, _, message) = error_of(HEAD);
    assert_eq!(line, line_of(HEAD, "[[endpoint]]", 0));
    assert_eq!(message, "endpoint `gpu1` has no `[[link]]`");
}

#[test]
fn binding_an_unknown_endpoint_is_an_error_at_its_step() {
    let text = format!(
        "{HEAD}[[link]]\nends = [\"gpu1\", \"s0.1\"]\n[[step]]\ndo = \"enumerate\"\n\
         [[step]]\ndo = \"bind\"\nendpoints = [\"gpu9\"]\nhost = \"host1\"\n"
    );
    let (line, _, message) = error_of(&text);
    assert_eq!(line, line_of(&text, "[[step]]", 1));
    assert_eq!(message, "`endpoints`: no endpoint named `gpu9`");
}

#[test]
fn hanging_an_unknown_endpoint_or_part_of_a_device_is_an_error_at_its_step() {
    let hang = |endpoint: &str| format!("[[step]]\ndo = \"hang\"\nendpoints = [\"{endpoint}\"]\n");
    let text = format!(
        "{HEAD}[[link]]\nends = [\"gpu1\", \"s0.1\"]\n{}",
        hang("gpu9")
    );
    let (line, _, message) = error_of(&text);
    assert_eq!(line, line_of(&text, "[[step]]", 0));
    assert_eq!(message, "`endpoints`: no endpoint named `gpu9`");
    let text = format!(
        "{HEAD}[[link]]\nends = [\"gpu1\", \"s0.1\"]\n{}",
        hang("gpu1.vf1")
    );
    let (_, _, message) = error_of(&text);
    assert_eq!(
        message,
        "`endpoints`: `gpu1.vf1` is a virtual function; a device hangs whole: name `gpu1`"
    );
    // The PCIe switch itself hangs, with what is below it, and a device
    // below it alone.
    for endpoint in ["sw1", "gpu1"] {
        let text = below_switch("sw1.0") + &hang(endpoint);
        Scenario::parse(&text, "test.toml", Path::new(".")).expect("valid");
    }
}

#[test]
fn a_hang_after_config_requests_needs_one_or_more_that_fit() {
    let hang = |after: &str| {
        format!(
            "{HEAD}[[link]]\nends = [\"gpu1\", \"s0.1\"]\n\
             [[step]]\ndo = \"hang\"\nendpoints = [\"gpu1\"]\nafter_config_requests = {after}\n"
        )
    };
    for bad in ["0", "-1"] {
        let text = hang(bad);
        let (line, _, message) = error_of(&text);
        assert_eq!(line, line_of(&text, "[[step]]", 0));
        assert_eq!(
            message,
            format!(
                "`after_config_requests` = {bad}: the configuration requests the endpoints \
                 complete before they hang, 1 or more; leave it out to hang them at once"
            )
        );
    }
    let (_, _, message) = error_of(&hang("4294967296"));
    assert_eq!(
        message,
        "`after_config_requests` = 4294967296: at most 4294967295"
    );
    Scenario::parse(&hang("12"), "test.toml", Path::new(".")).expect("valid");
}

#[test]
fn a_read_names_a_known_host_and_endpoint_and_a_completion_status() {
    let read = |host: &str, endpoint: &str, expect: &str| {
        format!(
            "{HEAD}[[link]]\nends = [\"gpu1\", \"s0.1\"]\n[[step]]\ndo = \"read\"\n\
             host = \"{host}\"\nendpoint = \"{endpoint}\"\nexpect = \"{expect}\"\n"
        )
    };
    Scenario::parse(
        &read("host1", "gpu1", "completer_abort"),
        "t",
        Path::new("."),
    )
    .expect("valid");
    let (_, _, message) = error_of(&read("host1", "gpu9", "successful"));
    assert_eq!(message, "`endpoint`: no endpoint named `gpu9`");
    let (_, _, message) = error_of(&read("host9", "gpu1", "successful"));
    assert_eq!(message, "`host`: no host named `host9`");
    let (_, _, message) = error_of(&read("host1", "gpu1", "timeout"));
    assert!(message.contains("unknown variant `timeout`"), "{message}");
}

#[test]
fn a_vf_beyond_those_enabled_is_an_error() {
    let text = format!(
        "{HEAD}[[link]]\nends = [\"gpu1\", \"s0.1\"]\n[[step]]\ndo = \"unbind\"\nendpoints = [\"gpu1.vf1\"]\n"
    );
    let (_, _, message) = error_of(&text);
    assert_eq!(
        message,
        "`gpu1.vf1`: the endpoint has 0 VFs and the fabric enables 0 (`[fabric] num_vfs`)"
    );
}

#[test]
fn the_built_in_reference_scenario_is_valid() {
    let scenario = Scenario::parse(REFERENCE, "reference.toml", Path::new(".")).expect("valid");
    assert_eq!(scenario.switches.len(), 4);
    assert_eq!(scenario.endpoints.len(), 5);
    // The shipped file is the built-in one.
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/reference.toml");
    assert_eq!(
        std::fs::read_to_string(shipped).expect("shipped"),
        REFERENCE
    );
}

#[test]
fn a_small_scenario_runs_end_to_end() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/small.toml");
    let scenario = Scenario::load(&path).expect("valid");
    let report = run(&scenario, &mut |_| {}).expect("every step and check passes");
    let outcome = |what: &str| outcome_of(&report, what);
    assert_eq!(
        outcome("fabric manager enumerates the fabric"),
        "2 GPUs, 1 function from dumps"
    );
    assert_eq!(outcome("host1 boots and enumerates"), "2 drivers bound");
    // The dumped device has no driver, but its host sees it.
    assert_eq!(outcome("host2 boots and enumerates"), "0 drivers bound");
    assert_eq!(outcome("host2 sees exactly disk"), "yes");
    assert_eq!(outcome("unbind gpu2"), "host1 handled 1 slot event");
    assert!(outcome("host1 probes gpu2, bound elsewhere").ends_with("answered with UR"));
    assert_eq!(report.p2p.len(), 1);
    assert_eq!(report.p2p[0].bytes_through_hosts, 0);
    assert_eq!(report.checks_passed, 5);
}

#[test]
fn capacities_of_the_fabric_are_errors_at_their_table() {
    let text = HEAD.replace("slots = 2", "slots = 9");
    let (line, _, message) = error_of(&text);
    assert_eq!(line, line_of(&text, "[[host]]", 0));
    assert_eq!(message, "`slots` = 9: a host has 1 to 8 slots");
    let text = HEAD.replace("ports = 4", "ports = 9");
    let (_, _, message) = error_of(&text);
    assert_eq!(message, "`ports` = 9: a weft switch has 1 to 8 ports");
}

/// A conventional switch `sw1` on `s0.1` with `gpu1` below its port 0.
fn below_switch(gpu_below: &str) -> String {
    HEAD.replace(
        "[[endpoint]]\nname = \"gpu1\"\nkind = \"gpu\"\n",
        &format!(
            "[[endpoint]]\nname = \"sw1\"\nkind = \"pcie_switch\"\ndownstream_ports = 2\n\n\
             [[endpoint]]\nname = \"gpu1\"\nkind = \"gpu\"\nbelow = \"{gpu_below}\"\n"
        ),
    ) + "[[link]]\nends = [\"sw1\", \"s0.1\"]\n"
}

#[test]
fn an_endpoint_below_a_pcie_switch_is_placed_by_its_path() {
    let text = below_switch("sw1.1");
    let scenario = Scenario::parse(&text, "test.toml", Path::new(".")).expect("valid");
    let gpu = &scenario.endpoints[1];
    assert_eq!(gpu.place.port, 1);
    assert_eq!(gpu.path, vec![1]);
    assert_eq!(gpu.below, Some((0, 1)));
}

#[test]
fn below_errors_point_at_the_value() {
    let text = below_switch("sw1.2");
    let (line, column, message) = error_of(&text);
    assert_eq!((line, column), (line_of(&text, "below = \"sw1.2\"", 0), 9));
    assert_eq!(
        message,
        "`below`: `sw1` has 2 downstream ports (0 to 1), `2` is none of them"
    );
    let (_, _, message) = error_of(&below_switch("host1.0"));
    assert_eq!(message, "`below`: no endpoint named `host1`");
    // An endpoint below a switch has no link of its own.
    let text = below_switch("sw1.0") + "[[link]]\nends = [\"gpu1\", \"s0.2\"]\n";
    let (line, _, message) = error_of(&text);
    assert_eq!(line, line_of(&text, "below = \"sw1.0\"", 0));
    assert_eq!(
        message,
        format!(
            "`below`: the endpoint is below `sw1` and also has the link on line {}",
            line_of(&text, "ends = [\"gpu1\", \"s0.2\"]", 0)
        )
    );
    // Only a PCIe switch has endpoints below it.
    let text = below_switch("sw1.0").replace(
        "[[link]]\nends = [\"sw1\"",
        "[[endpoint]]\nname = \"gpu2\"\nkind = \"gpu\"\nbelow = \"gpu1.0\"\n[[link]]\nends = [\"sw1\"",
    );
    let (_, _, message) = error_of(&text);
    assert_eq!(
        message,
        "`below`: `gpu1` is not a kind = \"pcie_switch\" endpoint"
    );
    // A switch's ports stay with the fabric.
    let text = below_switch("sw1.0")
        + "[[step]]\ndo = \"bind\"\nendpoints = [\"sw1\"]\nhost = \"host1\"\n";
    let (line, _, message) = error_of(&text);
    assert_eq!(line, line_of(&text, "[[step]]", 0));
    assert!(message.starts_with("`sw1` is a PCIe switch"), "{message}");
    let text = below_switch("sw1.0").replace("downstream_ports = 2\n", "");
    let (line, _, message) = error_of(&text);
    assert_eq!(line, line_of(&text, "[[endpoint]]", 0));
    assert_eq!(message, "kind = \"pcie_switch\" needs `downstream_ports`");
}

#[test]
fn gpus_below_a_conventional_switch_serve_two_hosts() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/conventional.toml");
    let scenario = Scenario::load(&path).expect("valid");
    let mut engine = Engine::new(&scenario).expect("built");
    for index in 0..scenario.steps.len() {
        engine.run_step(index).expect("every step and check passes");
    }
    // The manager found the switch's three ports, and has the downstream
    // ones send peer requests and completions up to the weft port (ACS,
    // PCIe Base 6.0 §6.12), whose tables translate and isolate them.
    let inventory = engine.world().manager().inventory();
    let kinds: Vec<BridgeKind> = inventory.bridges.iter().map(|b| b.kind).collect();
    assert_eq!(
        kinds,
        [
            BridgeKind::SwitchUpstream,
            BridgeKind::SwitchDownstream,
            BridgeKind::SwitchDownstream
        ]
    );
    for bridge in inventory.bridges.iter().skip(1) {
        let redirect = feature::P2P_REQUEST_REDIRECT | feature::P2P_COMPLETION_REDIRECT;
        assert_eq!(bridge.acs_enabled & redirect, redirect, "{bridge:?}");
    }
    // Both GPUs below the switch are functions below its downstream ports.
    let below: Vec<_> = inventory
        .functions
        .iter()
        .filter_map(|f| f.bridge)
        .collect();
    assert_eq!(below, [inventory.bridges[1].id, inventory.bridges[2].id]);
    let report = engine.finish();
    let outcome = |what: &str| outcome_of(&report, what);
    assert_eq!(outcome("fabric manager enumerates the fabric"), "3 GPUs");
    assert_eq!(outcome("host1 boots and enumerates"), "3 drivers bound");
    assert_eq!(outcome("host2 sees exactly gpu3"), "yes");
    assert!(outcome("host1 probes gpu3, bound elsewhere").ends_with("answered with UR"));
    // The copy out of the GPU below the switch is DMA through it.
    assert_eq!(report.p2p.len(), 1);
    assert_eq!(report.p2p[0].bytes_through_hosts, 0);
    assert_eq!(report.checks_passed, 5);
}

#[test]
fn a_gpu_below_a_conventional_switch_on_a_remote_weft_switch_is_reached() {
    // The manager reaches the conventional switch with routed Type 1
    // requests; s1's port delivers them as Type 0 only for its first bus
    // and passes the buses after it on as Type 1 (PCIe Base 6.0 §7.3.1).
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/remote_conventional.toml");
    let scenario = Scenario::load(&path).expect("valid");
    let report = run(&scenario, &mut |_| {}).expect("every step and check passes");
    assert_eq!(report.steps[0].outcome, "1 GPUs");
    assert_eq!(report.steps[2].outcome, "1 driver bound");
    assert_eq!(report.checks_passed, 2);
}

#[test]
fn a_host_bound_to_a_whole_sriov_drive_uses_it_with_its_standard_driver() {
    // The PF's SR-IOV capability is hidden from the host, so its walk
    // never sizes VF BARs whose writes the fabric drops.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/nvme_pf.toml");
    let scenario = Scenario::load(&path).expect("valid");
    let report = run(&scenario, &mut |_| {}).expect("every step and check passes");
    assert_eq!(
        outcome_of(&report, "host1 boots and enumerates"),
        "1 driver bound"
    );
    assert_eq!(report.checks_passed, 2);
}

#[test]
fn gpus_below_one_conventional_switch_do_peer_to_peer_for_one_host() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/conventional_p2p.toml");
    let scenario = Scenario::load(&path).expect("valid");
    let mut engine = Engine::new(&scenario).expect("built");
    for index in 0..scenario.steps.len() {
        engine.run_step(index).expect("every step and check passes");
    }
    // Both downstream ports redirect peer traffic up to s0.2 (ACS, PCIe
    // Base 6.0 §6.12.1.1), so s0.2 sends it back down after translation.
    let tables = engine
        .world()
        .switch()
        .port_tables(PortIndex(2))
        .expect("s0.2");
    assert!(tables.return_to_ingress);
    let report = engine.finish();
    let outcome = |what: &str| outcome_of(&report, what);
    // The GPU driver's peer test: both ways, the data reads back equal,
    // and none of it crossed a host port: the copies turned at s0.2.
    assert!(
        outcome("host1: GPU A -> B copy of 64 KiB").ends_with(", read back equal"),
        "{}",
        outcome("host1: GPU A -> B copy of 64 KiB")
    );
    assert_eq!(report.p2p.len(), 1);
    assert_eq!(report.p2p[0].bytes_through_hosts, 0);
    assert!(report.p2p[0].peer_read > std::time::Duration::ZERO);
    // Once gpu3 is host2's, gpu1 reading where it was is DMA into host1,
    // refused there with UR; the weft port never returns it to gpu3.
    assert!(
        outcome("host1 has gpu1 read gpu3, bound elsewhere")
            .ends_with("answered with UR by host1's root complex"),
        "{}",
        outcome("host1 has gpu1 read gpu3, bound elsewhere")
    );
    // The UR fails gpu1's copy at once, signalled by its MSI: no driver
    // waits out its copy timeout.
    let at = |what: &str| {
        report
            .steps
            .iter()
            .find(|s| s.what == what)
            .map(|s| s.at)
            .expect("the step")
    };
    let waited = at("host1 has gpu1 read gpu3, bound elsewhere") - at("host2 sees exactly gpu3");
    assert!(waited < std::time::Duration::from_millis(1), "{waited:?}");
    assert!(outcome("host1 probes gpu3, bound elsewhere").ends_with("answered with UR"));
    assert_eq!(report.checks_passed, 6);
}

#[test]
fn a_probe_is_made_by_a_gpu_only() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/conventional_p2p.toml"),
    )
    .expect("the scenario");
    let text = text.replace("by = \"gpu1\"", "by = \"sw1\"");
    let (line, _, message) = error_of(&text);
    assert_eq!(message, "`by`: `sw1` is not a GPU");
    assert_eq!(
        line,
        line_of(&text, "[[step]]", 8),
        "the probe by gpu1 is the ninth step"
    );
}

/// Managed hot-remove (PCIe Base 6.0 §6.7.1.5) as Linux's pciehp answers
/// it: the switch presses the slot's Attention Button, host1's driver
/// blinks through the 5 s abort window, quiesces the GPU's driver, removes
/// it and powers the slot off, waiting 1 s after; only then is the GPU
/// unbound, and host2 gets it. A graceful unbind then waits for host2's
/// operator, who powers the slot off without the window; host1 powers its
/// slot, which it left off, on again when the GPU comes back.
#[test]
fn a_gpu_its_host_released_binds_elsewhere() {
    use weft_fabric::binding::UnbindMode;
    use weft_fabric::events::Event;
    use weft_sim::host::hotplug::{ABORT_WINDOW, POWER_OFF_WAIT};

    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/managed_unbind.toml");
    let scenario = Scenario::load(&path).expect("valid");
    let mut engine = Engine::new(&scenario).expect("built");
    for index in 0..scenario.steps.len() {
        engine.run_step(index).expect("every step and check passes");
    }
    let modes: Vec<UnbindMode> = engine
        .world()
        .manager()
        .events()
        .since(0)
        .filter_map(|e| match e.event {
            Event::Unbound { mode, .. } => Some(mode),
            _ => None,
        })
        .collect();
    assert_eq!(modes, [UnbindMode::Managed, UnbindMode::Graceful]);
    let report = engine.finish();
    let notes = &report.steps;
    let unbinds: Vec<usize> = (0..notes.len())
        .filter(|&i| notes[i].what == "unbind gpu1")
        .collect();
    assert_eq!(unbinds.len(), 2, "{notes:#?}");
    let (managed, graceful) = (&notes[unbinds[0]], &notes[unbinds[1]]);
    assert_eq!(managed.outcome, "host1 released and powered off 1 slot");
    assert_eq!(graceful.outcome, "host2 released and powered off 1 slot");
    let took = |i: usize| notes[i].at - notes[i - 1].at;
    assert!(
        took(unbinds[0]) >= ABORT_WINDOW + POWER_OFF_WAIT,
        "the managed unbind took {:?}",
        took(unbinds[0])
    );
    assert!(
        took(unbinds[1]) >= POWER_OFF_WAIT && took(unbinds[1]) < ABORT_WINDOW,
        "the graceful unbind took {:?}",
        took(unbinds[1])
    );
    let rebound = notes
        .iter()
        .rfind(|n| n.what == "bind gpu1 to host1")
        .expect("the bind back");
    assert!(
        rebound.outcome.ends_with("1 of 1 present with drivers"),
        "{}",
        rebound.outcome
    );
    assert_eq!(report.checks_passed, 6);
}

/// How long each step of `report` took in simulated time, by its description.
fn step_durations(report: &Report) -> Vec<(String, std::time::Duration)> {
    let mut last = std::time::Duration::ZERO;
    report
        .steps
        .iter()
        .map(|note| {
            let took = note.at - last;
            last = note.at;
            (note.what.clone(), took)
        })
        .collect()
}

/// Hosts on switches other than the manager's: the manager reads their
/// configuration requests out of those switches' mailboxes and answers
/// through their injectors in-band, so the same fabric with its hosts on
/// the manager's switch boots the same hierarchies sooner: a remote request
/// waits for the manager's poll and costs in-band register accesses (one
/// fabric hop away for host1 on s1, two for host2 on s2).
#[test]
fn hosts_on_other_switches_boot_and_use_their_endpoints() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/remote_hosts.toml");
    let text = std::fs::read_to_string(&path).expect("the scenario file");
    let remote = Scenario::load(&path).expect("valid");
    assert_eq!(remote.hosts[0].place, Place::new(1, 0));
    assert_eq!(remote.hosts[1].place, Place::new(2, 0));
    let remote_report = run(&remote, &mut |_| {}).expect("every step and check passes");
    let outcome = |what: &str| outcome_of(&remote_report, what);
    assert_eq!(outcome("host1 boots and enumerates"), "2 drivers bound");
    assert_eq!(outcome("host2 boots and enumerates"), "1 driver bound");
    assert_eq!(outcome("host1 sees exactly gpu1, gpu2"), "yes");
    assert!(outcome("host1: GPU A -> B copy of 64 KiB").ends_with("read back equal"));
    assert!(outcome("host2: NVMe write + read of 64 KiB on nvme.vf1").ends_with("intact"));
    assert!(outcome("host1 probes gpu2, bound elsewhere").ends_with("answered with UR"));
    // The hot-add's MSI left through s2's injector, and host2 scanned the slot.
    assert_eq!(
        outcome("bind gpu2 to host2"),
        "host2 handled 1 slot event, 1 of 1 present with drivers"
    );
    assert_eq!(outcome("host2 sees exactly gpu2, nvme.vf1"), "yes");
    assert_eq!(remote_report.checks_passed, 6);

    let local_text = text
        .replace(r#"ends = ["host1", "s1.0"]"#, r#"ends = ["host1", "s0.1"]"#)
        .replace(r#"ends = ["host2", "s2.0"]"#, r#"ends = ["host2", "s0.2"]"#)
        .replace(r#""0" = "host", "1" = "endpoint""#, r#""1" = "endpoint""#);
    let local = Scenario::parse(
        &local_text,
        "local.toml",
        path.parent().expect("a directory"),
    )
    .expect("valid");
    let local_report = run(&local, &mut |_| {}).expect("every step and check passes");
    assert_eq!(
        local_report.trees, remote_report.trees,
        "the same hierarchies"
    );
    let remote_steps = step_durations(&remote_report);
    let local_steps = step_durations(&local_report);
    for host in ["host1", "host2"] {
        let boot = format!("{host} boots and enumerates");
        let took = |steps: &[(String, std::time::Duration)]| {
            steps
                .iter()
                .find(|(what, _)| *what == boot)
                .expect("a boot step")
                .1
        };
        let (far, near) = (took(&remote_steps), took(&local_steps));
        assert!(
            far > near + near / 10,
            "{host}'s boot through in-band mailbox reads ({far:?}) costs more than on the manager's switch ({near:?})"
        );
    }
}
