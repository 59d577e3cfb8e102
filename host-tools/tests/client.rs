//! The client against a fake switch on 127.0.0.1: what it sends, how it
//! retries, and what it makes of each answer.

mod support;

use std::net::UdpSocket;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};
use support::{config, identity, key, restart_mark, FakeSwitch, Options, OTHER_KEY_HEX, SWITCH};
use weft_proto::heapless::{String as HString, Vec as HVec};
use weft_proto::*;
use weftctl::firmware::{self, Image, UpdateOptions, UpdateProgress};
use weftctl::topology::read_topology;
use weftctl::{Client, ClientError};

fn bind_request() -> Request {
    let mut functions = HVec::new();
    functions.push(FabricId(0x0300)).expect("room");
    Request::Bind {
        host: HostIndex(1),
        slot: SlotIndex(0),
        functions,
        if_generation: None,
    }
}

fn client_for(fake: &FakeSwitch) -> Client {
    let mut config = config(fake.addr(), key());
    config.target = Some(SWITCH);
    Client::connect(config).expect("client")
}

#[test]
fn ping_and_identify_work_and_identify_learns_the_switch() {
    let fake = FakeSwitch::start(|request, _| match request {
        Request::Ping => Response::Pong,
        Request::Identify => Response::Identity(identity()),
        _ => Response::Done,
    });
    let mut client = Client::connect(config(fake.addr(), key())).expect("client");
    assert_eq!(client.target(), None);

    let rtt = client.ping().expect("pong");
    assert!(rtt < Duration::from_secs(1), "{rtt:?}");
    let who = client.identify().expect("identity");
    assert_eq!(who, identity());
    assert_eq!(client.target(), Some(SWITCH));
    assert_eq!(
        client.request(&Request::SaveConfig).expect("done"),
        Response::Done
    );

    let log = fake.log();
    let targets: Vec<SwitchId> = log.executed.iter().map(|(h, _)| h.switch).collect();
    // Ping and Identify may go to ANY; later requests name the switch.
    assert_eq!(targets, vec![SwitchId::ANY, SwitchId::ANY, SWITCH]);
}

#[test]
fn a_request_before_identify_learns_the_switch_first() {
    let fake = FakeSwitch::start(|request, _| match request {
        Request::Identify => Response::Identity(identity()),
        _ => Response::Done,
    });
    let mut client = Client::connect(config(fake.addr(), key())).expect("client");
    assert_eq!(
        client.request(&Request::SaveConfig).expect("done"),
        Response::Done
    );
    let log = fake.log();
    let executed: Vec<(SwitchId, &Request)> =
        log.executed.iter().map(|(h, r)| (h.switch, r)).collect();
    assert_eq!(
        executed,
        vec![
            (SwitchId::ANY, &Request::Identify),
            (SWITCH, &Request::SaveConfig)
        ]
    );
}

#[test]
fn a_lost_answer_is_recovered_by_resending_identical_bytes_and_runs_once() {
    let fake = FakeSwitch::with(
        Options {
            drop_answers: 1,
            ..Options::default()
        },
        |_, _| Response::Done,
    );
    let mut client = client_for(&fake);
    let exchange = client.exchange(&bind_request(), &[]).expect("answered");
    assert_eq!(exchange.response, Response::Done);
    assert_eq!(exchange.sends, 2);

    let log = fake.log();
    assert_eq!(log.datagrams.len(), 2);
    assert_eq!(
        log.datagrams[0], log.datagrams[1],
        "a retry is the same bytes"
    );
    assert_eq!(log.executed.len(), 1, "the switch ran the bind once");
    assert_eq!(log.resent, 1, "the reply cache answered the repeat");
}

#[test]
fn stray_datagrams_are_ignored_while_waiting() {
    let fake = FakeSwitch::with(
        Options {
            noise: true,
            ..Options::default()
        },
        |_, _| Response::Identity(identity()),
    );
    let mut client = client_for(&fake);
    assert_eq!(client.identify().expect("identity"), identity());
    assert_eq!(fake.log().datagrams.len(), 1, "no resend was needed");
}

#[test]
fn busy_is_answered_with_a_new_request_after_the_wait() {
    let mut calls = 0;
    let fake = FakeSwitch::start(move |_, _| {
        calls += 1;
        if calls == 1 {
            Response::Error(Error::Busy { retry_after_ms: 80 })
        } else {
            Response::Done
        }
    });
    let mut client = client_for(&fake);
    let start = Instant::now();
    assert_eq!(
        client.request(&bind_request()).expect("done"),
        Response::Done
    );
    assert!(start.elapsed() >= Duration::from_millis(80), "waited");

    let log = fake.log();
    assert_eq!(log.executed.len(), 2);
    let (first, second) = (log.executed[0].0, log.executed[1].0);
    assert_ne!(first.request_id, second.request_id, "a new request id");
    assert!(second.counter > first.counter, "a new, larger counter");
    assert_eq!(log.resent, 0);
}

#[test]
fn a_switch_that_stays_busy_is_reported_after_the_configured_attempts() {
    let fake = FakeSwitch::start(|_, _| Response::Error(Error::Busy { retry_after_ms: 1 }));
    let mut config = config(fake.addr(), key());
    config.target = Some(SWITCH);
    config.busy_attempts = 3;
    let mut client = Client::connect(config).expect("client");
    let error = client.request(&bind_request()).expect_err("busy");
    assert!(
        matches!(error, ClientError::Busy { attempts: 3, .. }),
        "{error:?}"
    );
    assert_eq!(fake.log().executed.len(), 3);
}

/// The counter in a request datagram's header: bytes 24..32, little-endian
/// (weft-proto's `header` module).
fn counter_of(datagram: &[u8]) -> u64 {
    u64::from_le_bytes(datagram[24..32].try_into().expect("a header"))
}

/// The request id in a request datagram's header: bytes 8..12.
fn request_id_of(datagram: &[u8]) -> u32 {
    u32::from_le_bytes(datagram[8..12].try_into().expect("a header"))
}

#[test]
fn a_restarted_switch_whose_floor_is_ahead_takes_the_request_at_once() {
    let floor = restart_mark();
    let fake = FakeSwitch::with(
        Options {
            floor,
            ..Options::default()
        },
        |_, _| Response::Done,
    );
    let mut client = client_for(&fake);
    assert_eq!(
        client.request(&bind_request()).expect("done"),
        Response::Done
    );
    assert_eq!(
        client.request(&Request::SaveConfig).expect("done"),
        Response::Done
    );

    let log = fake.log();
    assert_eq!(log.datagrams.len(), 3, "one refusal, then two requests run");
    let (refused, resent) = (&log.datagrams[0], &log.datagrams[1]);
    assert!(counter_of(refused) <= floor, "the clock is behind the mark");
    assert_ne!(
        request_id_of(refused),
        request_id_of(resent),
        "a new request"
    );
    assert_eq!(counter_of(resent), floor + 1, "just above the floor");
    assert_eq!(log.resent, 0, "not a repeat of the refused bytes");
    let executed: Vec<(u64, &Request)> = log.executed.iter().map(|(h, r)| (h.counter, r)).collect();
    assert_eq!(
        executed,
        vec![
            (floor + 1, &bind_request()),
            (floor + 2, &Request::SaveConfig)
        ],
        "the bind ran once, and later requests stay above the floor"
    );
}

#[test]
fn a_new_client_behind_a_dropped_answer_gets_through_when_it_sent_once() {
    // The first client's request after the restart runs above the floor
    // and its answer is not kept; a second client, its clock still behind,
    // is told an identical request may have run, but it sent its own once.
    let floor = restart_mark();
    let fake = FakeSwitch::with(
        Options {
            floor,
            keep_answers: false,
            ..Options::default()
        },
        |_, _| Response::Done,
    );
    for _ in 0..2 {
        let mut client = client_for(&fake);
        assert_eq!(
            client.request(&Request::SaveConfig).expect("done"),
            Response::Done
        );
    }
    let log = fake.log();
    let counters: Vec<u64> = log.executed.iter().map(|(h, _)| h.counter).collect();
    assert_eq!(counters, vec![floor + 1, floor + 2]);
    assert_eq!(log.datagrams.len(), 4, "each client was refused once");
}

#[test]
fn a_second_counter_refusal_in_a_row_is_reported_rather_than_chased() {
    let floor = restart_mark();
    let fake = FakeSwitch::with(
        Options {
            floor,
            floor_moves_after_refusal: 5_000_000,
            ..Options::default()
        },
        |_, _| Response::Done,
    );
    let mut client = client_for(&fake);
    let error = client.request(&bind_request()).expect_err("refused twice");
    match &error {
        ClientError::CounterStillTooOld {
            request,
            sent,
            accepted_above,
        } => {
            assert_eq!(*request, "bind");
            assert_eq!(*sent, floor + 1, "just above the first floor");
            assert_eq!(*accepted_above, floor + 5_000_000, "the floor moved on");
        }
        other => panic!("expected CounterStillTooOld, got {other:?}"),
    }
    assert_eq!(error.exit_code(), weftctl::error::EXIT_REFUSED);
    assert!(error.to_string().contains("twice in a row"), "{error}");
    let log = fake.log();
    assert_eq!(log.datagrams.len(), 2, "the request was sent again once");
    assert!(log.executed.is_empty(), "nothing ran");
}

#[test]
fn a_resent_request_that_may_have_run_is_reported_as_an_answer_lost_not_sent_again() {
    let fake = FakeSwitch::with(
        Options {
            drop_answers: 1,
            keep_answers: false,
            ..Options::default()
        },
        |_, _| Response::Done,
    );
    let mut client = client_for(&fake);
    let error = client.request(&bind_request()).expect_err("answer lost");
    assert!(
        matches!(error, ClientError::AnswerLost { request: "bind" }),
        "{error:?}"
    );
    let log = fake.log();
    assert_eq!(log.datagrams.len(), 2, "the lost answer's retry, no more");
    assert_eq!(log.datagrams[0], log.datagrams[1]);
    assert_eq!(log.executed.len(), 1, "the bind ran once");
}

#[test]
fn in_progress_is_polled_until_the_operation_succeeds() {
    let mut polls = 0u8;
    let fake = FakeSwitch::start(move |request, _| match request {
        Request::Bind { .. } => Response::InProgress { op: OperationId(7) },
        Request::OperationStatus { op } => {
            polls += 1;
            let state = match polls {
                1 => OperationState::Running { percent: 30 },
                2 => OperationState::Running { percent: 60 },
                _ => OperationState::Succeeded,
            };
            Response::Operation(OperationReport { op: *op, state })
        }
        _ => Response::Error(Error::Unsupported),
    });
    let mut client = client_for(&fake);
    let mut seen = Vec::new();
    let response = client
        .request_to_completion_with(&bind_request(), &mut |op, percent| seen.push((op, percent)))
        .expect("completed");
    assert_eq!(
        response,
        Response::Operation(OperationReport {
            op: OperationId(7),
            state: OperationState::Succeeded
        })
    );
    assert_eq!(seen, vec![(OperationId(7), 30), (OperationId(7), 60)]);
    let log = fake.log();
    let polled = log
        .executed
        .iter()
        .filter(|(_, r)| matches!(r, Request::OperationStatus { op: OperationId(7) }))
        .count();
    assert_eq!(polled, 3);
}

#[test]
fn a_failed_operation_carries_the_switchs_reason() {
    let fake = FakeSwitch::start(|request, _| match request {
        Request::OperationStatus { op } => Response::Operation(OperationReport {
            op: *op,
            state: OperationState::Failed {
                reason: Error::HostLinkDown { host: HostIndex(1) },
            },
        }),
        _ => Response::InProgress { op: OperationId(3) },
    });
    let mut client = client_for(&fake);
    let error = client
        .request_to_completion(&bind_request())
        .expect_err("failed");
    assert!(
        matches!(
            error,
            ClientError::OperationFailed {
                op: OperationId(3),
                reason: Error::HostLinkDown { .. }
            }
        ),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("host 1's link is down"),
        "{error}"
    );
}

fn switch_item(n: u64) -> TopologyItem {
    TopologyItem::Switch(SwitchInfo {
        id: SwitchId(n),
        board: HString::try_from("fake-board").expect("fits"),
        ports: 8,
        manager: n == 1,
    })
}

/// A topology of `total` switch items served in pages of `per_page`; the
/// generation for each request comes from `generation_for`.
fn paged_topology(
    total: u32,
    per_page: u32,
    mut generation_for: impl FnMut(&Option<Generation>) -> Result<Generation, Error> + Send + 'static,
) -> impl FnMut(&Request, &[u8]) -> Response + Send + 'static {
    move |request, _| match request {
        Request::Topology { cursor, generation } => {
            let generation = match generation_for(generation) {
                Ok(g) => g,
                Err(e) => return Response::Error(e),
            };
            let end = (cursor.0 + per_page).min(total);
            let items = (cursor.0..end)
                .map(|i| switch_item(u64::from(i) + 1))
                .collect::<HVec<_, TOPOLOGY_PAGE_ITEMS>>();
            Response::Topology(TopologyPage {
                generation,
                items,
                next: (end < total).then_some(TopologyCursor(end)),
            })
        }
        _ => Response::Error(Error::Unsupported),
    }
}

#[test]
fn topology_paging_follows_the_cursors_and_pins_the_generation() {
    let fake = FakeSwitch::start(paged_topology(14, 6, |_| Ok(Generation(5))));
    let mut client = client_for(&fake);
    let topology = read_topology(&mut client).expect("topology");
    assert_eq!(topology.generation, Generation(5));
    assert_eq!(topology.switches.len(), 14);
    assert_eq!(topology.switches[13].id, SwitchId(14));
    assert_eq!((topology.pages, topology.walks), (3, 1));

    let log = fake.log();
    let asked: Vec<Request> = log.executed.iter().map(|(_, r)| r.clone()).collect();
    assert_eq!(
        asked,
        vec![
            Request::Topology {
                cursor: TopologyCursor(0),
                generation: None
            },
            Request::Topology {
                cursor: TopologyCursor(6),
                generation: Some(Generation(5))
            },
            Request::Topology {
                cursor: TopologyCursor(12),
                generation: Some(Generation(5))
            },
        ]
    );
}

#[test]
fn a_stale_generation_restarts_the_walk() {
    // The fabric changes after the first page: the switch refuses the
    // second page's precondition, and the next walk sees generation 2.
    let mut pages = 0;
    let fake = FakeSwitch::start(paged_topology(8, 6, move |pinned| {
        pages += 1;
        let current = if pages == 1 { 1 } else { 2 };
        match pinned {
            Some(g) if g.0 != current => Err(Error::StaleGeneration {
                current: Generation(current),
            }),
            _ => Ok(Generation(current)),
        }
    }));
    let mut client = client_for(&fake);
    let topology = read_topology(&mut client).expect("topology");
    assert_eq!(topology.generation, Generation(2));
    assert_eq!(topology.switches.len(), 8);
    assert_eq!(topology.walks, 2);
}

#[test]
fn a_page_of_another_generation_restarts_the_walk_too() {
    // A switch that reports the change in the page instead of refusing it.
    let mut pages = 0;
    let fake = FakeSwitch::start(paged_topology(8, 6, move |_| {
        pages += 1;
        Ok(Generation(if pages == 1 { 1 } else { 2 }))
    }));
    let mut client = client_for(&fake);
    let topology = read_topology(&mut client).expect("topology");
    assert_eq!(topology.generation, Generation(2));
    assert_eq!(topology.switches.len(), 8, "no page of generation 1 kept");
    assert_eq!(topology.walks, 2);
}

/// The fake's firmware receiver: what a switch keeps of an update.
#[derive(Default)]
struct Receiver {
    size: u32,
    digest: Option<Digest>,
    image: Vec<u8>,
    offsets: Vec<u32>,
    refused_once: bool,
    committed_with: Option<Token>,
}

#[test]
fn a_firmware_update_resumes_where_the_switch_asks_after_a_bad_chunk() {
    let image: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
    let state = Arc::new(Mutex::new(Receiver::default()));
    let fake = {
        let state = Arc::clone(&state);
        FakeSwitch::start(move |request, trailing| {
            let mut s = state.lock().expect("not poisoned");
            match request {
                Request::FirmwarePrepare { size, digest } => {
                    s.size = *size;
                    s.digest = Some(*digest);
                    Response::Done
                }
                Request::FirmwareChunk { offset } => {
                    s.offsets.push(*offset);
                    // The switch "loses" the chunk at 1024 the first time the
                    // chunk at 2048 arrives, and asks to resume at 1024.
                    if *offset == 2048 && !s.refused_once {
                        s.refused_once = true;
                        s.image.truncate(1024);
                        return Response::Error(Error::BadChunk { resume_at: 1024 });
                    }
                    if *offset as usize != s.image.len() {
                        let resume_at = s.image.len() as u32;
                        return Response::Error(Error::BadChunk { resume_at });
                    }
                    s.image.extend_from_slice(trailing);
                    Response::ChunkAccepted {
                        next_offset: s.image.len() as u32,
                    }
                }
                Request::FirmwareStatus => {
                    let complete = s.image.len() as u32 == s.size;
                    let matches = s.digest == Some(Digest(Sha256::digest(&s.image).into()));
                    Response::FirmwareStatus(FirmwareStatus {
                        state: if complete && matches {
                            UpdateState::Verified
                        } else {
                            UpdateState::Receiving
                        },
                        size: s.size,
                        received: s.image.len() as u32,
                        running: ImageSlot::A,
                        next_boot: ImageSlot::A,
                    })
                }
                Request::FirmwarePrepareCommit => Response::CommitPrepared { token: Token(99) },
                Request::FirmwareCommit { token } => {
                    s.committed_with = Some(*token);
                    Response::Done
                }
                _ => Response::Error(Error::Unsupported),
            }
        })
    };
    let mut client = client_for(&fake);
    let file = Image::new(image.clone()).expect("image");
    let mut resumed_at = Vec::new();
    let report = firmware::update(&mut client, &file, UpdateOptions::default(), &mut |step| {
        if let UpdateProgress::Resumed { at } = step {
            resumed_at.push(at);
        }
    })
    .expect("updated");

    assert_eq!(resumed_at, vec![1024]);
    assert_eq!(report.resumes, 1);
    assert!(report.committed);
    assert_eq!(report.size, 3000);
    let s = state.lock().expect("not poisoned");
    assert_eq!(s.offsets, vec![0, 1024, 2048, 1024, 2048]);
    assert_eq!(s.image, image, "the switch holds the file's bytes");
    assert_eq!(s.committed_with, Some(Token(99)));
}

#[test]
fn a_wrong_key_is_reported_as_a_rejected_mac() {
    let fake = FakeSwitch::start(|_, _| Response::Pong);
    let mut config = config(fake.addr(), Key::parse_hex(OTHER_KEY_HEX).expect("valid"));
    config.target = Some(SWITCH);
    let mut client = Client::connect(config).expect("client");
    let start = Instant::now();
    let error = client.ping().expect_err("refused");
    assert!(matches!(error, ClientError::BadMac { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .contains("the switch rejected the MAC: check the key"),
        "{error}"
    );
    assert!(
        start.elapsed() < Duration::from_millis(200),
        "reported at once, without waiting out the retries"
    );
    assert!(fake.log().executed.is_empty());
}

#[test]
fn a_silent_address_times_out_after_the_configured_tries() {
    let silent = UdpSocket::bind("127.0.0.1:0").expect("bind");
    silent
        .set_read_timeout(Some(Duration::from_millis(50)))
        .expect("timeout");
    let addr = silent.local_addr().expect("address");
    let mut config = config(addr, key());
    config.per_try = Duration::from_millis(60);
    config.retries = 2;
    let mut client = Client::connect(config).expect("client");
    let start = Instant::now();
    let error = client.ping().expect_err("no answer");
    let elapsed = start.elapsed();
    assert!(
        matches!(error, ClientError::Timeout { tries: 3, .. }),
        "{error:?}"
    );
    assert!(elapsed >= Duration::from_millis(180), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    let text = error.to_string();
    assert!(
        text.contains(&addr.to_string()) && text.contains("3 tries"),
        "{text}"
    );

    let mut copies = Vec::new();
    let mut buf = [0u8; MAX_DATAGRAM];
    for _ in 0..10 {
        match silent.recv(&mut buf) {
            Ok(n) => copies.push(buf[..n].to_vec()),
            Err(_) => break,
        }
    }
    assert_eq!(copies.len(), 3, "one send and two retries");
    assert!(copies.iter().all(|c| *c == copies[0]), "all the same bytes");
}

#[test]
fn a_wrong_version_names_both_versions() {
    let fake =
        FakeSwitch::start(|_, _| Response::Error(Error::WrongVersion { ours: 4, oldest: 2 }));
    let mut client = client_for(&fake);
    let error = client.ping().expect_err("refused");
    let text = error.to_string();
    assert!(
        text.contains("versions 2 to 4") && text.contains(&format!("version {PROTOCOL_VERSION}")),
        "{text}"
    );
}

#[test]
fn another_switch_at_the_address_is_named() {
    let fake = FakeSwitch::start(|_, _| Response::Done);
    let mut config = config(fake.addr(), key());
    config.target = Some(SwitchId(0x99));
    let mut client = Client::connect(config).expect("client");
    let error = client.request(&Request::SaveConfig).expect_err("refused");
    assert!(
        matches!(
            error,
            ClientError::WrongSwitch {
                asked: SwitchId(0x99),
                actual: SWITCH,
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn a_refusal_is_typed_and_says_what_to_do() {
    let fake = FakeSwitch::start(|_, _| {
        Response::Error(Error::SlotOccupied {
            host: HostIndex(1),
            slot: SlotIndex(0),
            bound: FabricId(0x0400),
        })
    });
    let mut client = client_for(&fake);
    let error = client.request(&bind_request()).expect_err("refused");
    assert!(
        matches!(error.refusal(), Some(Error::SlotOccupied { .. })),
        "{error:?}"
    );
    assert_eq!(error.exit_code(), weftctl::error::EXIT_REFUSED);
    assert!(error
        .to_string()
        .contains("unbind it or choose another slot"));
}

#[test]
fn an_older_switch_is_spoken_to_at_its_own_version() {
    let fake = FakeSwitch::with(
        Options {
            newest_version: OLDEST_PROTOCOL_VERSION,
            ..Options::default()
        },
        |_, _| Response::Done,
    );
    let mut client = client_for(&fake);
    assert_eq!(
        client.request(&bind_request()).expect("done"),
        Response::Done
    );
    assert_eq!(
        client.request(&Request::SaveConfig).expect("done"),
        Response::Done
    );
    let log = fake.log();
    let versions: Vec<u16> = log
        .datagrams
        .iter()
        .map(|d| u16::from_le_bytes([d[4], d[5]]))
        .collect();
    assert_eq!(
        versions,
        vec![
            PROTOCOL_VERSION,
            OLDEST_PROTOCOL_VERSION,
            OLDEST_PROTOCOL_VERSION
        ],
        "refused once at ours, then the switch's version from then on"
    );
    let executed: Vec<&Request> = log.executed.iter().map(|(_, r)| r).collect();
    assert_eq!(
        executed,
        vec![&bind_request(), &Request::SaveConfig],
        "each ran once"
    );
}

#[test]
fn a_switch_that_speaks_no_version_we_do_is_reported() {
    // A switch that speaks nothing we still speak: version 0.
    let fake = FakeSwitch::with(
        Options {
            newest_version: OLDEST_PROTOCOL_VERSION - 1,
            ..Options::default()
        },
        |_, _| Response::Done,
    );
    let mut client = client_for(&fake);
    let error = client.request(&bind_request()).expect_err("refused");
    assert!(
        matches!(
            error,
            ClientError::WrongVersion {
                switch_newest: 0,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(fake.log().executed.is_empty(), "nothing ran");
}
