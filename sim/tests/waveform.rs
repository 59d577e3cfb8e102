//! `--vcd FILE`: the waveform of a run, read back with the `vcd` crate's
//! parser, agrees with the switch models' own counters (TLPs by class,
//! drops and their reasons) and with the link model (a fabric link's
//! latency, its receivers' credits); only the chosen switches are in it;
//! its time only moves forward; a file that cannot be created or a switch
//! that does not exist is a clear error.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

use vcd::{Command, IdCode, Value};
use weft_model::{PortIndex, Traffic};
use weft_sim::link::Credits;
use weft_sim::scenario::engine::Engine;
use weft_sim::scenario::Scenario;
use weft_sim::waveform::{Probe, Waveform, WaveformError};
use weft_sim::wiring::Place;

/// A scenario of two switches: hosts on s0, a GPU and a dumped device on
/// s1's ports 0 and 1, nothing on its port 2, its port 3 cabled to s0; a
/// surprise unbind and a probe make the switches drop TLPs.
fn small() -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/small.toml");
    Scenario::load(&path).expect("the small scenario loads")
}

/// A file of this test's own in the temporary directory.
fn temporary(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("weft-waveform-{}-{name}.vcd", std::process::id()))
}

/// A value as a number; a string or an unknown bit is none.
fn number(values: impl IntoIterator<Item = Value>) -> Option<u64> {
    values.into_iter().try_fold(0u64, |n, v| match v {
        Value::V0 => Some(n << 1),
        Value::V1 => Some(n << 1 | 1),
        _ => None,
    })
}

/// What a waveform file holds: its header and every value change, with its time.
struct Trace {
    header: vcd::Header,
    changes: Vec<(u64, IdCode, Change)>,
    timestamps: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq)]
enum Change {
    Number(u64),
    Text(String),
}

impl Trace {
    fn read(path: &Path) -> Trace {
        let mut parser = vcd::Parser::new(BufReader::new(File::open(path).expect("the waveform")));
        let header = parser.parse_header().expect("a VCD header");
        let mut changes = Vec::new();
        let mut timestamps = Vec::new();
        let mut now = 0;
        for command in parser {
            match command.expect("a well-formed VCD command") {
                Command::Timestamp(t) => {
                    now = t;
                    timestamps.push(t);
                }
                Command::ChangeScalar(id, v) => {
                    let n = number([v]).expect("a 0 or a 1");
                    changes.push((now, id, Change::Number(n)));
                }
                Command::ChangeVector(id, v) => {
                    let n = number(Vec::from(v)).expect("only 0s and 1s");
                    changes.push((now, id, Change::Number(n)));
                }
                Command::ChangeString(id, s) => changes.push((now, id, Change::Text(s))),
                _ => {}
            }
        }
        Trace {
            header,
            changes,
            timestamps,
        }
    }

    fn id(&self, switch: &str, port: u8, signal: &str) -> IdCode {
        let port = format!("port{port}");
        self.header
            .find_var(&[switch, port.as_str(), signal])
            .unwrap_or_else(|| panic!("no {switch}.{port}.{signal} in the waveform"))
            .code
    }

    /// Every change of `switch.portN.signal`, in order.
    fn of(&self, switch: &str, port: u8, signal: &str) -> Vec<(u64, Change)> {
        let id = self.id(switch, port, signal);
        self.changes
            .iter()
            .filter(|(_, i, _)| *i == id)
            .map(|(t, _, c)| (*t, c.clone()))
            .collect()
    }

    /// When `switch.portN.signal`, a count, stepped up.
    fn steps(&self, switch: &str, port: u8, signal: &str) -> Vec<u64> {
        self.of(switch, port, signal)
            .into_iter()
            .filter(|(_, c)| *c != Change::Number(0))
            .map(|(t, _)| t)
            .collect()
    }

    /// The TLPs one direction (`rx` or `tx`) of a port saw: the kind each
    /// had when the direction's count stepped.
    fn tlps(&self, switch: &str, port: u8, side: &str) -> Vec<String> {
        let count_id = self.id(switch, port, &format!("{side}_count"));
        let kind_id = self.id(switch, port, &format!("{side}_kind"));
        let (mut kinds, mut kind, mut counted) = (Vec::new(), String::new(), 0);
        let mut changes = self.changes.iter().peekable();
        while let Some(&&(time, _, _)) = changes.peek() {
            // Every change at one time, then the TLP that started then.
            let mut stepped = false;
            while let Some((_, id, change)) = changes.next_if(|(t, _, _)| *t == time) {
                match change {
                    Change::Number(n) if *id == count_id && *n != counted => {
                        assert_eq!(
                            *n,
                            counted + 1,
                            "{switch}.port{port}.{side}_count at {time} ps: one TLP at a time"
                        );
                        stepped = true;
                        counted = *n;
                    }
                    Change::Text(text) if *id == kind_id => kind = text.clone(),
                    _ => {}
                }
            }
            if stepped {
                kinds.push(kind.clone());
            }
        }
        kinds
    }
}

/// The flow-control class PCIe Base 6.0 §2.6.1 puts a TLP type in, by its
/// Table 2-3 name: TLPs by class, as weft-model's counters count them.
fn by_class(kinds: &[String]) -> Traffic {
    let mut traffic = Traffic::default();
    for kind in kinds {
        match kind.as_str() {
            "MWr" | "Msg" | "MsgD" => traffic.posted += 1,
            "MRd" | "MRdLk" | "IORd" | "IOWr" | "CfgRd0" | "CfgWr0" | "CfgRd1" | "CfgWr1"
            | "FetchAdd" | "Swap" | "CAS" => traffic.non_posted += 1,
            "Cpl" | "CplD" | "CplLk" | "CplDLk" => traffic.completions += 1,
            other => panic!("{other:?} is no TLP type"),
        }
    }
    traffic
}

/// The TLPs of `traffic` by class, bytes aside.
fn classes(traffic: &Traffic) -> (u64, u64, u64) {
    (traffic.posted, traffic.non_posted, traffic.completions)
}

/// Runs `scenario` recording `switches` into `path`; returns the engine
/// after the run and the TLPs the recorder counted.
fn run_recording<'s>(scenario: &'s Scenario, switches: &[&str], path: &Path) -> (Engine<'s>, u64) {
    let names: Vec<String> = switches.iter().map(|s| s.to_string()).collect();
    let probes = Probe::select(scenario, &names).expect("the scenario's switches");
    let waveform = Waveform::create(path, &probes).expect("a waveform file");
    let mut engine = Engine::new(scenario).expect("the fabric builds");
    engine.record_waveform(waveform);
    engine.run_steps(&mut |_| {}).expect("the scenario passes");
    let tlps = engine
        .finish_waveform()
        .expect("a waveform was recorded")
        .expect("the waveform is written");
    (engine, tlps)
}

#[test]
fn a_recorded_switch_shows_every_tlp_its_counters_count() {
    let scenario = small();
    let path = temporary("s1");
    let (engine, recorded) = run_recording(&scenario, &["s1"], &path);
    let trace = Trace::read(&path);
    std::fs::remove_file(&path).expect("the waveform is removed");

    // Only the chosen switch, every one of its ports.
    assert!(
        trace.header.find_scope(&["s0"]).is_none(),
        "s0 was not chosen"
    );
    for port in 0..4 {
        assert!(trace
            .header
            .find_scope(&["s1", &format!("port{port}")])
            .is_some());
    }
    assert_eq!(trace.header.timescale, Some((1, vcd::TimescaleUnit::PS)));

    // Time only moves forward.
    assert!(
        trace.timestamps.windows(2).all(|w| w[0] < w[1]),
        "timestamps increase"
    );

    let switch = engine.world().switches()[1].model();
    let mut total = 0;
    for port in 0..4u8 {
        let counters = switch
            .counters(PortIndex(port))
            .expect("the port's counters");
        let rx = trace.tlps("s1", port, "rx");
        let tx = trace.tlps("s1", port, "tx");
        total += rx.len() + tx.len();
        // Configuration requests of Type 0 that arrive on a fabric port
        // are for its management function, which answers beside the
        // data plane: the data plane counts neither them nor the answers.
        let for_function = rx
            .iter()
            .filter(|k| *k == "CfgRd0" || *k == "CfgWr0")
            .count() as u64;
        if port == 2 {
            // Nothing is wired to it, so nothing is on its wire (the
            // manager's probes of it are answered inside the fabric).
            assert!(rx.is_empty() && tx.is_empty(), "port 2 carries nothing");
        } else if port == 3 {
            assert!(
                for_function > 0,
                "s0's manager probed s1 over the fabric link"
            );
            assert_eq!(
                rx.len() as u64 - for_function,
                counters.ingress.tlps(),
                "port {port} ingress"
            );
            assert_eq!(
                tx.len() as u64 - for_function,
                counters.egress.tlps(),
                "port {port} egress"
            );
        } else {
            assert!(!rx.is_empty(), "the endpoint on port {port} sent TLPs");
            assert_eq!(
                classes(&by_class(&rx)),
                classes(&counters.ingress),
                "port {port} ingress by class"
            );
            assert_eq!(
                classes(&by_class(&tx)),
                classes(&counters.egress),
                "port {port} egress by class"
            );
        }
        // Each TLP's time on the wire ends: every valid level falls again.
        for side in ["rx", "tx"] {
            let valid = trace.of("s1", port, &format!("{side}_valid"));
            let rises = valid
                .iter()
                .filter(|(_, c)| *c == Change::Number(1))
                .count();
            let falls = valid
                .iter()
                .filter(|(_, c)| *c == Change::Number(0))
                .count();
            // The first value, at time 0, is a 0 of the initial dump.
            assert_eq!(falls, rises + 1, "s1.port{port}.{side}_valid");
        }
    }
    assert_eq!(total as u64, recorded, "the recorder's count of TLPs");

    // Flow control (PCIe Base 6.0 §2.6.1): a port's receive buffer never
    // holds more TLPs of a class than the header credits it advertises,
    // and at the end of the run every buffer is free and every credit back.
    let advertised = Credits::SWITCH_PORT;
    let mut held = 0;
    for port in [0u8, 1, 3] {
        for (class, most) in [
            ("p", advertised.posted.header),
            ("np", advertised.non_posted.header),
            ("cpl", advertised.completion.header),
        ] {
            let most = u64::from(most.expect("a switch port's credits are finite"));
            for side in ["rx", "tx"] {
                let in_use: Vec<u64> = trace
                    .of("s1", port, &format!("{side}_credits_{class}"))
                    .into_iter()
                    .map(|(_, c)| match c {
                        Change::Number(n) => n,
                        Change::Text(t) => panic!("credits are a number, not {t:?}"),
                    })
                    .collect();
                assert_eq!(in_use.last(), Some(&0), "s1.port{port} {side} {class}");
                let peak = in_use.iter().copied().max().unwrap_or(0);
                held = held.max(peak);
                if side == "rx" {
                    assert!(peak <= most, "s1.port{port} holds {peak} {class} TLPs");
                }
            }
        }
    }
    assert!(held > 1, "the copies kept more than one TLP in flight");
}

#[test]
fn every_switch_shows_its_drops_and_its_fabric_links_latency() {
    let scenario = small();
    let path = temporary("all");
    let (engine, _) = run_recording(&scenario, &[], &path);
    let trace = Trace::read(&path);
    std::fs::remove_file(&path).expect("the waveform is removed");

    // s0.3 and s1.3 are the two ends of one fabric link: each TLP one
    // sends starts arriving at the other one link latency later.
    let latency = engine
        .world()
        .link_at(Place::new(0, 3))
        .expect("the fabric link")
        .latency_ps;
    for (from, to) in [("s0", "s1"), ("s1", "s0")] {
        let sent: Vec<u64> = trace
            .steps(from, 3, "tx_count")
            .into_iter()
            .map(|t| t + latency)
            .collect();
        assert!(!sent.is_empty(), "{from} sent over the fabric link");
        assert_eq!(sent, trace.steps(to, 3, "rx_count"), "{from} -> {to}");
    }

    let mut counted = 0;
    let mut reasons = BTreeMap::new();
    for (index, plan) in scenario.switches.iter().enumerate() {
        let switch = engine.world().switches()[index].model();
        for port in 0..plan.ports {
            let counters = switch
                .counters(PortIndex(port))
                .expect("the port's counters");
            counted += counters.drops.values().sum::<u64>();
            for (reason, n) in &counters.drops {
                *reasons.entry(format!("{reason:?}")).or_insert(0) += n;
            }
        }
    }
    assert!(counted > 0, "the probe of an unbound GPU is dropped");
    let mut shown = 0;
    let mut shown_reasons = BTreeMap::new();
    for plan in &scenario.switches {
        for port in 0..plan.ports {
            let drops = trace.of(&plan.name, port, "drop_count");
            let reason = trace.of(&plan.name, port, "drop_reason");
            if let Some((_, Change::Number(n))) = drops.last() {
                shown += n;
            }
            for (time, change) in &reason {
                if let Change::Text(text) = change {
                    if text != "none" {
                        // Each reason is shown with a step of the count.
                        assert!(drops.iter().any(|(t, _)| t == time));
                        *shown_reasons.entry(text.clone()).or_insert(0) += 1;
                    }
                }
            }
        }
    }
    assert_eq!(shown, counted, "drops in the waveform and the counters");
    assert_eq!(
        shown_reasons.keys().collect::<Vec<_>>(),
        reasons.keys().collect::<Vec<_>>(),
        "the reasons the counters count"
    );
}

#[test]
fn a_file_that_cannot_be_created_is_a_clear_error() {
    let scenario = small();
    let probes = Probe::select(&scenario, &[]).expect("every switch");
    let path = Path::new("/nonexistent-directory/run.vcd");
    let err = Waveform::create(path, &probes).expect_err("no such directory");
    assert!(matches!(err, WaveformError::Create { .. }));
    let message = err.to_string();
    assert!(
        message.contains("/nonexistent-directory/run.vcd"),
        "{message}"
    );

    let err = Probe::select(&scenario, &["s7".to_string()]).expect_err("no switch s7");
    assert_eq!(
        err.to_string(),
        "no switch `s7` to record (the scenario's switches: s0, s1)"
    );

    // The command line says so and runs nothing.
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/small.toml");
    let output = Process::new(env!("CARGO_BIN_EXE_weft-sim"))
        .arg("run")
        .arg(&file)
        .args(["--vcd", "/nonexistent-directory/run.vcd"])
        .output()
        .expect("weft-sim runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot create the waveform /nonexistent-directory/run.vcd"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty(), "nothing ran");
    let output = Process::new(env!("CARGO_BIN_EXE_weft-sim"))
        .args(["--vcd-switch", "s0"])
        .output()
        .expect("weft-sim runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("give --vcd FILE"));
}
