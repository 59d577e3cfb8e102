//! The built `weftctl` binary against a fake switch on 127.0.0.1: its text
//! and JSON output, its errors and its exit codes.

mod support;

use std::net::{SocketAddr, UdpSocket};
use std::process::{Command, Output};

use support::{identity, restart_mark, FakeSwitch, Options, KEY_HEX, SWITCH};
use weft_proto::heapless::Vec as HVec;
use weft_proto::*;

/// Runs weftctl with `args`, none of the user's weft variables, and a key
/// only if the arguments give one.
fn weftctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weftctl"))
        .args(args)
        .env_remove("WEFT_KEY")
        .env_remove("WEFT_KEY_FILE")
        .env_remove("WEFT_TARGET")
        .output()
        .expect("weftctl runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn fake() -> FakeSwitch {
    FakeSwitch::start(|request, _| match request {
        Request::Ping => Response::Pong,
        Request::Identify => Response::Identity(identity()),
        Request::ReadCounters { port } => {
            let mut values = HVec::new();
            for (kind, value) in [
                (CounterKind::RxTlps, 12),
                (CounterKind::RxPayloadBytes, 3 << 20),
            ] {
                values.push(CounterValue { kind, value }).expect("room");
            }
            Response::Counters(PortCounters {
                port: *port,
                values,
            })
        }
        Request::ReadEvents { from } => {
            let mut events = HVec::new();
            if from.0 <= 6 {
                for event in fake_events() {
                    events.push(event).expect("room");
                }
            }
            Response::Events(EventPage {
                oldest: EventSeq(5),
                events,
                next: EventSeq(7),
            })
        }
        Request::ConfigRead { target, offset, .. } => Response::Config {
            target: *target,
            offset: *offset,
            value: 0x2330_10de,
        },
        Request::ConfigWrite { target, offset, .. } => {
            Response::Error(Error::FabricOwnedRegister {
                fabric_id: *target,
                offset: *offset,
            })
        }
        _ => Response::Error(Error::Unsupported),
    })
}

/// Events 5 and 6 of the fake switch's log; 0 to 4 were overwritten.
fn fake_events() -> [Event; 2] {
    [
        Event {
            seq: EventSeq(5),
            time_ms: 1_250,
            kind: EventKind::IsolationDrops {
                at: PortRef {
                    switch: SWITCH,
                    port: PortIndex(3),
                },
                check: IsolationCheck::NoWindow,
                count: 12,
            },
        },
        Event {
            seq: EventSeq(6),
            time_ms: 61_000,
            kind: EventKind::HotPlugSignalled {
                host: HostIndex(1),
                slot: SlotIndex(0),
                present: true,
            },
        },
    ]
}

#[test]
fn events_print_a_table_warn_of_overwritten_entries_and_json_keeps_them() {
    let fake = fake();
    let switch = fake.addr().to_string();
    let out = weftctl(&[
        "--switch", &switch, "--key", KEY_HEX, "events", "--from", "3",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("5       1.250 s  12 TLPs dropped at port 0x574546540001/3"),
        "{stdout}"
    );
    assert!(
        stdout.contains("6      61.000 s  hot-plug interrupt to host 1 slot 0: device present"),
        "{stdout}"
    );
    assert!(
        text(&out.stderr).contains("events 3 to 4 were overwritten before they were read"),
        "{}",
        text(&out.stderr)
    );

    let json = weftctl(&["--switch", &switch, "--key", KEY_HEX, "--json", "events"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(value["oldest"], 5);
    assert_eq!(value["next"], 7);
    assert_eq!(value["events"][0]["kind"]["IsolationDrops"]["count"], 12);
    assert_eq!(value["events"][1]["time_ms"], 61_000);
}

/// A switch with a device on port 2 and one on port 3 that stopped
/// answering during enumeration, listed and logged so.
fn not_responding_fake() -> FakeSwitch {
    FakeSwitch::start(|request, _| {
        let port = |port, role| PortInfo {
            at: PortRef {
                switch: SWITCH,
                port: PortIndex(port),
            },
            role,
            link: LinkStatus {
                state: LinkState::Up,
                speed: Some(LinkSpeed::Gen3),
                width: 16,
            },
            max_speed: LinkSpeed::Gen4,
            max_width: 16,
        };
        match request {
            Request::Ping => Response::Pong,
            Request::Identify => Response::Identity(identity()),
            Request::Topology { .. } => Response::Topology(TopologyPage {
                generation: Generation(1),
                items: [
                    TopologyItem::Port(port(2, PortRole::Endpoint)),
                    TopologyItem::Port(port(3, PortRole::NotResponding)),
                ]
                .into_iter()
                .collect(),
                next: None,
            }),
            Request::ReadEvents { .. } => Response::Events(EventPage {
                oldest: EventSeq(0),
                events: [
                    Event {
                        seq: EventSeq(0),
                        time_ms: 150,
                        kind: EventKind::PortNotResponding {
                            at: port(3, PortRole::NotResponding).at,
                        },
                    },
                    Event {
                        seq: EventSeq(1),
                        time_ms: 150,
                        kind: EventKind::DeviceNotResponding {
                            at: port(2, PortRole::Endpoint).at,
                            fabric_id: FabricId(0x0500),
                        },
                    },
                ]
                .into_iter()
                .collect(),
                next: EventSeq(2),
            }),
            _ => Response::Error(Error::Unsupported),
        }
    })
}

#[test]
fn a_port_whose_device_stopped_answering_shows_not_responding() {
    let fake = not_responding_fake();
    let switch = fake.addr().to_string();
    let run = |args: &[&str]| {
        let mut all = vec!["--switch", &switch, "--key", KEY_HEX];
        all.extend_from_slice(args);
        weftctl(&all)
    };
    let topology = run(&["topology"]);
    let stdout = text(&topology.stdout);
    assert!(topology.status.success(), "{}", text(&topology.stderr));
    let row = |port: &str| {
        stdout
            .lines()
            .find(|line| line.starts_with(&format!("0x574546540001/{port} ")))
            .unwrap_or_else(|| panic!("port {port} is listed: {stdout}"))
            .to_owned()
    };
    assert!(row("3").contains("not responding"), "{stdout}");
    assert!(!row("2").contains("not responding"), "{stdout}");

    let events = run(&["events"]);
    let stdout = text(&events.stdout);
    assert!(events.status.success(), "{}", text(&events.stderr));
    assert!(
        stdout.contains(
            "0       0.150 s  port 0x574546540001/3: device not responding \
             (its configuration requests timed out during enumeration)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "1       0.150 s  port 0x574546540001/2: device 05:00.0 below a conventional \
             switch not responding (left out; its configuration requests timed out during \
             enumeration)"
        ),
        "{stdout}"
    );
    let json = run(&["--json", "topology"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert!(value.to_string().contains("NotResponding"), "{value}");
}

#[test]
fn cfg_reads_print_the_width_asked_for_and_a_refused_write_says_why() {
    let fake = fake();
    let switch = fake.addr().to_string();
    let read = weftctl(&[
        "--switch", &switch, "--key", KEY_HEX, "cfg", "read", "03:00.0", "0",
    ]);
    assert!(read.status.success(), "{}", text(&read.stderr));
    assert_eq!(text(&read.stdout), "03:00.0 +0x000: 0x233010de\n");
    let json = weftctl(&[
        "--switch", &switch, "--key", KEY_HEX, "--json", "cfg", "read", "03:00.0", "0",
    ]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(value["Config"]["target"], 0x0300);
    assert_eq!(value["Config"]["value"], 0x2330_10de_u32);

    let write = weftctl(&[
        "--switch", &switch, "--key", KEY_HEX, "cfg", "write", "03:00.0", "4", "0", "--width", "2",
    ]);
    assert_eq!(write.status.code(), Some(3), "the switch refused it");
    let stderr = text(&write.stderr);
    assert!(
        stderr.contains("the write to config offset 0x004 of function 0x0300 was refused"),
        "{stderr}"
    );
}

#[test]
fn identify_prints_a_table_for_people() {
    let fake = fake();
    let switch = fake.addr().to_string();
    let out = weftctl(&["--switch", &switch, "--key", KEY_HEX, "identify"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("switch        0x574546540001"), "{stdout}");
    assert!(stdout.contains("board         fake-board"), "{stdout}");
    assert!(stdout.contains("firmware      0.3.1 (abc1234)"), "{stdout}");
    assert!(
        stdout.contains("capabilities  bind, authenticated"),
        "{stdout}"
    );
}

#[test]
fn identify_json_is_the_response() {
    let fake = fake();
    let switch = fake.addr().to_string();
    let out = weftctl(&["--json", "identify", "--switch", &switch, "--key", KEY_HEX]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(value["Identity"]["switch"], SWITCH.0);
    assert_eq!(value["Identity"]["board"], "fake-board");
    assert_eq!(value["Identity"]["ports"], 8);
}

#[test]
fn counters_show_units_and_json_keeps_raw_values() {
    let fake = fake();
    let switch = fake.addr().to_string();
    let human = weftctl(&[
        "--switch",
        &switch,
        "--key",
        KEY_HEX,
        "--switch-id",
        "0x574546540001",
        "counters",
        "2",
    ]);
    let stdout = text(&human.stdout);
    assert!(human.status.success(), "{}", text(&human.stderr));
    assert!(stdout.starts_with("port 2\n"), "{stdout}");
    assert!(stdout.contains("rx payload  3145728  3 MiB"), "{stdout}");

    let json = weftctl(&[
        "--switch", &switch, "--key", KEY_HEX, "--json", "counters", "2",
    ]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(value["Counters"]["port"], 2);
    assert_eq!(value["Counters"]["values"][1]["kind"], "RxPayloadBytes");
    assert_eq!(value["Counters"]["values"][1]["value"], 3 << 20);
}

#[test]
fn ping_prints_the_round_trip() {
    let fake = fake();
    let switch = fake.addr().to_string();
    let out = weftctl(&["--switch", &switch, "--key", KEY_HEX, "ping"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.starts_with(&format!("answer from {switch}: time ")) && stdout.contains(" ms"),
        "{stdout}"
    );
}

#[test]
fn identify_succeeds_at_once_on_a_switch_that_just_restarted() {
    let floor = restart_mark();
    let fake = FakeSwitch::with(
        Options {
            floor,
            ..Options::default()
        },
        |_, _| Response::Identity(identity()),
    );
    let switch = fake.addr().to_string();
    let out = weftctl(&["--switch", &switch, "--key", KEY_HEX, "identify"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("switch        0x574546540001"),
        "{}",
        text(&out.stdout)
    );
    let log = fake.log();
    assert_eq!(log.datagrams.len(), 2, "refused once, then sent as new");
    assert_eq!(log.executed.len(), 1);
    assert_eq!(log.executed[0].0.counter, floor + 1);
}

#[test]
fn insecure_mode_warns() {
    let fake = FakeSwitch::with(
        Options {
            key: Key::insecure_public(),
            ..Options::default()
        },
        |_, _| Response::Pong,
    );
    let switch = fake.addr().to_string();
    let out = weftctl(&["--switch", &switch, "--insecure", "ping"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("warning: --insecure uses the publicly known key"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn no_key_is_a_usage_error_that_says_how_to_give_one() {
    let out = weftctl(&["--switch", "127.0.0.1:9", "ping"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("--key <hex>") && stderr.contains("--insecure"),
        "{stderr}"
    );
}

#[test]
fn a_wrong_key_is_a_refusal() {
    let fake = fake();
    let switch = fake.addr().to_string();
    let other = "22".repeat(32);
    let out = weftctl(&["--switch", &switch, "--key", &other, "ping"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        text(&out.stderr).contains("the switch rejected the MAC: check the key"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_silent_switch_is_unreachable() {
    let silent = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let addr: SocketAddr = silent.local_addr().expect("address");
    let switch = addr.to_string();
    let out = weftctl(&[
        "--switch",
        &switch,
        "--key",
        KEY_HEX,
        "--timeout-ms",
        "50",
        "--retries",
        "1",
        "ping",
    ]);
    assert_eq!(out.status.code(), Some(4));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "no answer from {switch} after 2 tries of 50 ms each"
        )),
        "{stderr}"
    );
}

#[test]
fn the_key_can_come_from_the_environment() {
    let fake = fake();
    let out = Command::new(env!("CARGO_BIN_EXE_weftctl"))
        .args(["--switch", &fake.addr().to_string(), "ping"])
        .env("WEFT_KEY", KEY_HEX)
        .env_remove("WEFT_KEY_FILE")
        .env_remove("WEFT_TARGET")
        .output()
        .expect("weftctl runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn watch_prints_one_json_line_per_interval() {
    let fake = fake();
    let switch = fake.addr().to_string();
    let out = weftctl(&[
        "--switch",
        &switch,
        "--key",
        KEY_HEX,
        "--json",
        "watch",
        "2",
        "3",
        "--interval-ms",
        "20",
        "--count",
        "2",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON value a line"))
        .collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    for line in &lines {
        let ports: Vec<u64> = line["ports"]
            .as_array()
            .expect("ports")
            .iter()
            .map(|p| p["port"].as_u64().expect("port number"))
            .collect();
        // The fake's counters do not move, so every rate is zero.
        assert_eq!(ports, vec![2, 3]);
        assert_eq!(line["ports"][0]["rx_bytes"], 0.0);
    }
}

/// A switch that disables port 3, refuses to disable host port 0, and
/// counts with the kinds of protocol version 3.
fn port_fake() -> FakeSwitch {
    FakeSwitch::start(|request, _| match request {
        Request::Ping => Response::Pong,
        Request::Identify => Response::Identity(identity()),
        Request::PortControl {
            port: PortIndex(3),
            action: PortAction::Disable,
        } => Response::Done,
        Request::PortControl {
            port: PortIndex(0), ..
        } => Response::Error(Error::HostPort {
            port: PortIndex(0),
            host: HostIndex(0),
        }),
        Request::ReadCounters { port } => {
            let mut values = HVec::new();
            for (kind, value) in [
                (CounterKind::TxWireBytes, 2 << 10),
                (CounterKind::DroppedPortDisabled, 4),
            ] {
                values.push(CounterValue { kind, value }).expect("room");
            }
            Response::Counters(PortCounters {
                port: *port,
                values,
            })
        }
        _ => Response::Error(Error::Unsupported),
    })
}

#[test]
fn port_control_says_what_was_done_and_why_a_port_was_kept() {
    let fake = port_fake();
    let switch = fake.addr().to_string();
    let run = |args: &[&str]| {
        let mut all = vec!["--switch", &switch, "--key", KEY_HEX];
        all.extend_from_slice(args);
        weftctl(&all)
    };
    let disabled = run(&["port", "3", "disable"]);
    assert!(disabled.status.success(), "{}", text(&disabled.stderr));
    assert_eq!(text(&disabled.stdout), "port 3: disabled\n");

    let kept = run(&["port", "0", "disable"]);
    assert!(!kept.status.success());
    let stderr = text(&kept.stderr);
    assert!(stderr.contains("port 0 is host 0's link"), "{stderr}");

    let counters = run(&["counters", "3"]);
    let stdout = text(&counters.stdout);
    assert!(counters.status.success(), "{}", text(&counters.stderr));
    assert!(stdout.contains("tx bytes (wire)"), "{stdout}");
    assert!(stdout.contains("2 KiB"), "{stdout}");
    assert!(stdout.contains("dropped: port disabled"), "{stdout}");
    let json = run(&["--json", "counters", "3"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(value["Counters"]["values"][0]["kind"], "TxWireBytes");
    assert_eq!(value["Counters"]["values"][1]["value"], 4);
}

/// A switch that answers a managed unbind of host 0 slot 1 in progress
/// (operation 7, finished when polled) and refuses a graceful one of slot
/// 2, whose unbind already waits for its host.
fn unbind_fake() -> FakeSwitch {
    FakeSwitch::start(|request, _| match request {
        Request::Ping => Response::Pong,
        Request::Identify => Response::Identity(identity()),
        Request::Unbind {
            host: HostIndex(0),
            slot: SlotIndex(1),
            mode: UnbindMode::Managed,
            ..
        } => Response::InProgress { op: OperationId(7) },
        Request::Unbind {
            host: HostIndex(0),
            slot: SlotIndex(2),
            mode: UnbindMode::Graceful,
            ..
        } => Response::Error(Error::UnbindInProgress {
            host: HostIndex(0),
            slot: SlotIndex(2),
            op: OperationId(3),
        }),
        Request::OperationStatus { op } => Response::Operation(OperationReport {
            op: *op,
            state: OperationState::Succeeded,
        }),
        _ => Response::Error(Error::Unsupported),
    })
}

#[test]
fn unbind_sends_the_mode_asked_for_and_follows_the_operation() {
    let fake = unbind_fake();
    let switch = fake.addr().to_string();
    let run = |args: &[&str]| {
        let mut all = vec!["--switch", &switch, "--key", KEY_HEX];
        all.extend_from_slice(args);
        weftctl(&all)
    };
    let managed = run(&["unbind", "0", "1", "--mode", "managed"]);
    assert!(managed.status.success(), "{}", text(&managed.stderr));
    assert_eq!(
        text(&managed.stdout),
        "unbound host 0 slot 1 (operation 7)\n"
    );

    let refused = run(&["unbind", "0", "2"]);
    assert!(!refused.status.success());
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("already being unbound (operation 3)"),
        "{stderr}"
    );
    assert!(stderr.contains("mode surprise"), "{stderr}");

    let unknown = run(&["unbind", "0", "1", "--mode", "eventually"]);
    assert!(!unknown.status.success());
    assert!(text(&unknown.stderr).contains("graceful"));
}
