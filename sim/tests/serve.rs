//! `weft-sim serve` end to end: the reference fabric behind a localhost UDP
//! port, driven by weftctl's client library as an operator drives it:
//! topology, bind and unbind, the event log, raw configuration access.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use weft_proto::{
    decode_response, encode_request, heapless, AccessWidth, Capabilities, CounterKind, Error,
    EventKind, EventPage, EventSeq, FabricId, Header, HostIndex, ImageSlot, Key, PortAction,
    PortCounters, PortIndex, PortRole, Request, ResetScope, Response, SlotIndex, SlotState,
    SwitchId, UnbindMode, UpdateState, VirtualSwitchInfo, MAX_CHUNK, MAX_DATAGRAM,
};
use weft_regs::csr::{counter_control, global, port as port_csr};
use weft_sim::serve::{ServeConfig, ServeError, Server};
use weftctl::firmware::{self, Image, UpdateOptions, UpdateProgress};
use weftctl::topology::read_topology;
use weftctl::{Client, ClientConfig, ClientError};

/// Host 2 of the reference experiment (hosts are counted from 0 on the wire).
const HOST2: HostIndex = HostIndex(1);

/// The longest the fabric may take to come up before the test gives up.
const START_DEADLINE: Duration = Duration::from_secs(120);

fn events_from(client: &mut Client, from: EventSeq) -> EventPage {
    match client.request(&Request::ReadEvents { from }) {
        Ok(Response::Events(page)) => page,
        other => panic!("expected an event page, got {other:?}"),
    }
}

fn config_read(target: FabricId, offset: u16) -> Request {
    Request::ConfigRead {
        target,
        offset,
        width: AccessWidth::Dword,
    }
}

fn counters(client: &mut Client, port: PortIndex) -> PortCounters {
    match client.request(&Request::ReadCounters { port }) {
        Ok(Response::Counters(counters)) => counters,
        other => panic!("expected port {}'s counters, got {other:?}", port.0),
    }
}

/// The sum of `kind` over the counters of every port of the manager's switch.
fn total(client: &mut Client, ports: u8, kind: CounterKind) -> u64 {
    (0..ports)
        .map(|port| {
            let counters = counters(client, PortIndex(port));
            counters
                .values
                .iter()
                .find(|c| c.kind == kind)
                .unwrap_or_else(|| panic!("port {port} counts {kind:?}"))
                .value
        })
        .sum()
}

fn vswitch(client: &mut Client, host: HostIndex) -> VirtualSwitchInfo {
    match client.request(&Request::VirtualSwitch { host }) {
        Ok(Response::VirtualSwitch(info)) => info,
        other => panic!("expected a virtual switch, got {other:?}"),
    }
}

/// This machine's clock in microseconds since the Unix epoch, as weftctl
/// counts requests.
fn now_micros() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970");
    u64::try_from(now.as_micros()).expect("fits")
}

/// A `weft-sim serve` board on a port of its own, answering in a thread.
struct Running<T> {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    server: thread::JoinHandle<Result<T, ServeError>>,
}

impl<T> Running<T> {
    /// Stops the board; what the inspection given to [`serve`] found then.
    fn stop(self) -> T {
        self.stop.store(true, Ordering::Relaxed);
        self.server
            .join()
            .expect("the server thread ends")
            .expect("the server ends cleanly")
    }
}

/// Starts the board with the insecure key, accepting counters above
/// `counter_floor`, and waits until it listens; `inspect` looks at the
/// board once it stops (the board stays in its thread).
fn serve<T: Send + 'static>(
    counter_floor: u64,
    inspect: impl FnOnce(&Server) -> T + Send + 'static,
) -> Running<T> {
    let stop = Arc::new(AtomicBool::new(false));
    let (ready, addr) = mpsc::channel();
    let server = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || -> Result<T, ServeError> {
            let config = ServeConfig {
                listen: "127.0.0.1:0".parse().expect("an address"),
                key: Key::insecure_public(),
                counter_floor,
            };
            let mut server = match Server::start(config).and_then(|s| Ok((s.local_addr()?, s))) {
                Ok((addr, server)) => {
                    let _ = ready.send(Ok(addr));
                    server
                }
                Err(error) => {
                    let _ = ready.send(Err(error.to_string()));
                    return Err(error);
                }
            };
            server.run(&stop)?;
            Ok(inspect(&server))
        })
    };
    let addr = addr
        .recv_timeout(START_DEADLINE)
        .expect("the server starts in time")
        .expect("the reference fabric comes up");
    Running { addr, stop, server }
}

fn client(addr: SocketAddr) -> Client {
    let mut config = ClientConfig::new(addr, Key::insecure_public());
    config.per_try = Duration::from_secs(2);
    config.retries = 2;
    Client::connect(config).expect("a client socket")
}

/// The board starts as a switch that has just restarted: its counter floor
/// a minute ahead of weftctl's clock, as the firmware resumes from its mark.
#[test]
fn weftctl_binds_and_unbinds_a_vf_on_the_simulated_board() {
    let counter_floor = now_micros() + 60_000_000;
    let running = serve(counter_floor, |_| ());
    let addr = running.addr;

    // A request from a clock behind the floor learns the floor, under the
    // switch's key, and nothing has run.
    let sent = Header::request(1, SwitchId::ANY, 1);
    let mut datagram = [0u8; MAX_DATAGRAM];
    let len = encode_request(
        &sent,
        &Request::Ping,
        &[],
        &Key::insecure_public(),
        &mut datagram,
    )
    .expect("fits");
    let socket = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    socket.send_to(&datagram[..len], addr).expect("sent");
    let mut answer = [0u8; MAX_DATAGRAM];
    let (n, _) = socket.recv_from(&mut answer).expect("an answer");
    let reply = decode_response(&answer[..n], &Key::insecure_public(), &sent).expect("authentic");
    assert_eq!(
        reply.response,
        Response::Error(Error::CounterTooOld {
            accepted_above: counter_floor,
            may_have_run: false
        })
    );

    let mut client = client(addr);

    // Refused below the floor, then sent again above it: answered at once.
    let identity = client.identify().expect("identify");
    assert_eq!(identity.board.as_str(), "weft-sim");
    assert_eq!(identity.ports, 8);
    // The simulated board keeps image slots and serves the update.
    assert!(identity
        .capabilities
        .contains(Capabilities::FIRMWARE_UPDATE));

    // Four switches in a ring, four GPUs bound to host 1, the NVMe PF and
    // its four VFs free.
    let topology = read_topology(&mut client).expect("topology");
    assert_eq!(topology.switches.len(), 4);
    assert_eq!(topology.links.len(), 4);
    assert_eq!(topology.endpoints.len(), 4 + 1 + 4);
    let bound_to_host1 = topology
        .endpoints
        .iter()
        .filter(|e| e.owner.is_some_and(|o| o.host == HostIndex(0)))
        .count();
    assert_eq!(bound_to_host1, 4);
    let vf = topology
        .endpoints
        .iter()
        .find(|e| e.physical_function.is_some() && e.owner.is_none())
        .expect("a free VF")
        .fabric_id;

    // Enumeration logged every function it found.
    let enumerated = events_from(&mut client, EventSeq(0));
    let added = enumerated
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::EndpointAdded { .. }))
        .count();
    assert_eq!(added, topology.endpoints.len());
    // No function is asked anything for 100 ms after its link leaves reset
    // (PCIe Base 6.0 §6.6.1), so enumeration logged them later than that.
    assert!(enumerated.events.iter().all(|e| e.time_ms >= 100));

    let mut functions = heapless::Vec::new();
    functions.push(vf).expect("room for one");
    let bind = Request::Bind {
        host: HOST2,
        slot: SlotIndex(0),
        functions: functions.clone(),
        if_generation: Some(topology.generation),
    };
    assert_eq!(client.request(&bind).expect("bind"), Response::Done);
    let info = vswitch(&mut client, HOST2);
    assert_eq!(info.slots[0].state, SlotState::Bound { functions });
    // The bind is in the event log after what was read before it, and the
    // hot-plug interrupt host 2's driver enabled (Presence Detect Changed).
    let after_bind = events_from(&mut client, enumerated.next);
    let bound: Vec<EventKind> = after_bind.events.iter().map(|e| e.kind).collect();
    assert_eq!(
        bound,
        [
            EventKind::Bound {
                host: HOST2,
                slot: SlotIndex(0),
                fabric_id: vf
            },
            EventKind::HotPlugSignalled {
                host: HOST2,
                slot: SlotIndex(0),
                present: true
            }
        ]
    );

    let last_read = enumerated.events.last().expect("events").time_ms;
    assert!(after_bind.events.iter().all(|e| e.time_ms >= last_read));

    // The configuration reads below go out of the manager's switch and
    // their completions come back in: its counters see them.
    let completions_before = total(&mut client, identity.ports, CounterKind::RxCompletions);

    // Raw configuration reads see the function itself: a VF's own Vendor
    // and Device ID read all ones (PCIe Base 6.0 §9.3.4.1.1-2); its PF's
    // are what the topology lists.
    let pf = topology
        .endpoints
        .iter()
        .find(|e| e.sriov.is_some())
        .expect("the NVMe PF");
    assert_eq!(
        client
            .request(&config_read(pf.fabric_id, 0))
            .expect("config read"),
        Response::Config {
            target: pf.fabric_id,
            offset: 0,
            value: u32::from(pf.device_id) << 16 | u32::from(pf.vendor_id),
        }
    );
    assert_eq!(
        client.request(&config_read(vf, 0)).expect("config read"),
        Response::Config {
            target: vf,
            offset: 0,
            value: 0xffff_ffff,
        }
    );
    // The fabric keeps the PF's Command register (decode and mastering on).
    let command = Request::ConfigWrite {
        target: pf.fabric_id,
        offset: 0x04,
        width: AccessWidth::Word,
        value: 0,
    };
    let refused = client.request(&command);
    assert!(
        matches!(
            refused,
            Err(ClientError::Refused(
                weft_proto::Error::FabricOwnedRegister { offset: 0x04, .. }
            ))
        ),
        "{refused:?}"
    );

    // A managed unbind: the switch presses the slot's Attention Button,
    // host 2's hot-plug driver releases the VF and powers the slot off,
    // and the operation weftctl polls then ends.
    let unbind = Request::Unbind {
        host: HOST2,
        slot: SlotIndex(0),
        mode: UnbindMode::Managed,
        if_generation: Some(info.generation),
    };
    let Response::InProgress { op } = client.request(&unbind).expect("unbind") else {
        panic!("a managed unbind waits for the host");
    };
    let report = client
        .wait_for(op, &mut |_, _| {})
        .expect("the host released it");
    assert_eq!(report.state, weft_proto::OperationState::Succeeded);
    assert_eq!(vswitch(&mut client, HOST2).slots[0].state, SlotState::Empty);

    // Counters: the data plane's, as weftctl shows them; cleared by request.
    let completions = total(&mut client, identity.ports, CounterKind::RxCompletions);
    assert!(
        completions >= completions_before + 2,
        "two configuration reads completed: {completions_before} then {completions}"
    );
    let table = weftctl::render::counters(&counters(&mut client, PortIndex(0)));
    assert!(table.contains("rx completions"), "{table}");
    let clear = Request::ClearCounters {
        port: None,
        kind: None,
    };
    assert_eq!(client.request(&clear).expect("clear"), Response::Done);
    let cleared = total(&mut client, identity.ports, CounterKind::RxCompletions);
    assert!(
        cleared < completions,
        "{completions} then {cleared} after a clear"
    );

    // Port control: a port with nothing behind it is disabled and enabled
    // again; a fabric link that bindings run over and a host's port are
    // refused.
    let manager = topology
        .switches
        .iter()
        .find(|s| s.manager)
        .expect("the manager's switch")
        .id;
    let topology = read_topology(&mut client).expect("topology");
    let local_ports = || topology.ports.iter().filter(|p| p.at.switch == manager);
    let free = local_ports()
        .find(|p| p.role == PortRole::Unused)
        .expect("an unused port")
        .at
        .port;
    let link = local_ports()
        .find(|p| p.role == PortRole::Fabric)
        .expect("a fabric link")
        .at
        .port;
    let host_port = local_ports()
        .find(|p| matches!(p.role, PortRole::Host { .. }))
        .expect("a host port")
        .at
        .port;
    let control = |port, action| Request::PortControl { port, action };
    let logged = events_from(&mut client, EventSeq(0)).next;
    for action in [PortAction::Disable, PortAction::Enable] {
        assert_eq!(
            client
                .request(&control(free, action))
                .expect("port control"),
            Response::Done
        );
    }
    let controlled: Vec<EventKind> = events_from(&mut client, logged)
        .events
        .iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        controlled,
        [
            EventKind::PortControlled {
                port: free,
                action: PortAction::Disable
            },
            EventKind::PortControlled {
                port: free,
                action: PortAction::Enable
            },
        ]
    );
    // The GPUs bound to host 1 are on other switches.
    let refused = client.request(&control(link, PortAction::Disable));
    let Err(ClientError::Refused(weft_proto::Error::EndpointBusy { fabric_id, owner })) = refused
    else {
        panic!(
            "disabling fabric port {} was not refused: {refused:?}",
            link.0
        );
    };
    let named = topology
        .endpoints
        .iter()
        .find(|e| e.fabric_id == fabric_id)
        .expect("the bound function named");
    assert_ne!(named.at.switch, manager);
    assert_eq!(named.owner, Some(owner));
    let refused = client.request(&control(host_port, PortAction::Disable));
    assert!(
        matches!(
            refused,
            Err(ClientError::Refused(weft_proto::Error::HostPort { port, .. })) if port == host_port
        ),
        "{refused:?}"
    );

    running.stop();
}

/// `weftctl firmware update` against the board: a transfer cut short and
/// started again resumes where the board says, the image lands in slot B
/// (the board runs slot A, which is never written) verified, and the
/// commit makes B the next start's trial until an abort takes it back.
#[test]
fn weftctl_updates_the_firmware_of_the_simulated_board() {
    // The image slots as the board's flash holds them when it stops.
    let running = serve(0, |board| {
        let firmware = board.firmware();
        [ImageSlot::A, ImageSlot::B].map(|slot| firmware.image_flash(slot).contents().to_vec())
    });
    let mut client = client(running.addr);
    let before = firmware::status(&mut client).expect("a status");
    assert_eq!(before.state, UpdateState::Idle);
    assert_eq!(
        (before.running, before.next_boot),
        (ImageSlot::A, ImageSlot::A)
    );

    let bytes: Vec<u8> = (0..3 * MAX_CHUNK + 17)
        .map(|i| (i * 7 + i / 251) as u8)
        .collect();
    let image = Image::new(bytes.clone()).expect("an image");
    // A first transfer stops after two chunks.
    let prepare = Request::FirmwarePrepare {
        size: image.size(),
        digest: image.digest(),
    };
    assert_eq!(client.request(&prepare).expect("prepared"), Response::Done);
    for offset in [0, MAX_CHUNK] {
        let chunk = Request::FirmwareChunk {
            offset: offset as u32,
        };
        let exchange = client
            .exchange(&chunk, &bytes[offset..offset + MAX_CHUNK])
            .expect("a chunk");
        assert_eq!(
            exchange.response,
            Response::ChunkAccepted {
                next_offset: (offset + MAX_CHUNK) as u32
            }
        );
    }
    // Started again from the top: the board names where to resume.
    let options = UpdateOptions {
        resume: false,
        no_commit: true,
    };
    let mut resumed_at = Vec::new();
    let report = firmware::update(&mut client, &image, options, &mut |step| {
        if let UpdateProgress::Resumed { at } = step {
            resumed_at.push(at);
        }
    })
    .expect("the update goes through");
    assert_eq!(resumed_at, [2 * MAX_CHUNK as u32]);
    assert_eq!(report.status.state, UpdateState::Verified);
    assert_eq!(report.status.received, image.size());
    assert!(!report.committed);

    assert_eq!(
        firmware::commit(&mut client).expect("committed"),
        Response::Done
    );
    let committed = firmware::status(&mut client).expect("a status");
    assert_eq!(
        (committed.running, committed.next_boot),
        (ImageSlot::A, ImageSlot::B)
    );
    // Committed: another image waits for an abort, which keeps slot A.
    let refused = client.request(&prepare);
    assert!(
        matches!(refused, Err(ClientError::Refused(Error::UpdateInProgress))),
        "{refused:?}"
    );
    assert_eq!(
        client.request(&Request::FirmwareAbort).expect("aborted"),
        Response::Done
    );
    let aborted = firmware::status(&mut client).expect("a status");
    assert_eq!(aborted.next_boot, ImageSlot::A);

    let [slot_a, slot_b] = running.stop();
    assert_eq!(&slot_b[..bytes.len()], &bytes[..]);
    assert!(slot_a.iter().all(|&b| b == 0xFF), "slot A was written");
}

/// Link control on the reference board, whose manager's switch has the
/// hosts on ports 0 and 1, fabric links on 6 and 7 and nothing on 2 to 5:
/// a fabric link retrains (its Data Link Layer stays up, PCIe Base 6.0
/// §7.5.3.7) but is not hot reset, a host's link is neither (it is the
/// switch's upstream side of it), an empty port takes a hot reset with
/// nothing to bring back; each done is logged.
#[test]
fn weftctl_retrains_and_hot_resets_links_where_that_makes_sense() {
    let running = serve(0, |_| ());
    let mut client = client(running.addr);
    let logged = events_from(&mut client, EventSeq(0)).next;
    let port = |port: u8, action: PortAction| Request::PortControl {
        port: PortIndex(port),
        action,
    };
    let answers = [
        port(6, PortAction::Retrain),
        port(6, PortAction::HotReset),
        port(0, PortAction::Retrain),
        port(1, PortAction::HotReset),
        port(3, PortAction::HotReset),
    ]
    .map(|request| match client.request(&request) {
        Ok(response) => response,
        Err(ClientError::Refused(error)) => Response::Error(error),
        Err(error) => panic!("no answer to {request:?}: {error}"),
    });
    assert_eq!(
        answers,
        [
            Response::Done,
            Response::Error(Error::Unsupported),
            Response::Error(Error::HostPort {
                port: PortIndex(0),
                host: HostIndex(0)
            }),
            Response::Error(Error::HostPort {
                port: PortIndex(1),
                host: HOST2
            }),
            Response::Done,
        ]
    );
    let kinds: Vec<EventKind> = events_from(&mut client, logged)
        .events
        .iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            EventKind::PortControlled {
                port: PortIndex(6),
                action: PortAction::Retrain
            },
            EventKind::PortControlled {
                port: PortIndex(3),
                action: PortAction::HotReset
            },
        ]
    );
    running.stop();
}

/// The NVMe drive's VFs as the topology lists them.
fn nvme_vfs(client: &mut Client) -> Vec<FabricId> {
    let topology = read_topology(client).expect("topology");
    topology
        .endpoints
        .iter()
        .filter(|e| e.physical_function.is_some())
        .map(|e| e.fabric_id)
        .collect()
}

#[test]
fn weftctl_changes_num_vfs_saves_restores_and_resets_the_simulated_board() {
    let running = serve(0, |board| board.resets().to_vec());
    let mut client = client(running.addr);

    // The reference drive's four VFs go to two and come back: the change
    // waits 100 ms for its VFs (§9.3.3.3.1) and weftctl polls it.
    let vfs = nvme_vfs(&mut client);
    assert_eq!(vfs.len(), 4);
    let topology = read_topology(&mut client).expect("topology");
    let pf = topology
        .endpoints
        .iter()
        .find(|e| e.sriov.is_some())
        .expect("the NVMe PF")
        .fabric_id;
    for (num_vfs, listed) in [(2, &vfs[..2]), (4, &vfs[..])] {
        let done = client
            .request_to_completion(&Request::SetNumVfs {
                endpoint: pf,
                num_vfs,
            })
            .expect("NumVFs changed");
        assert!(matches!(done, Response::Operation(_)), "{done:?}");
        assert_eq!(nvme_vfs(&mut client), listed);
    }

    // Bind a VF, save, unbind, restore: the binding is back.
    let mut functions = heapless::Vec::new();
    functions.push(vfs[0]).expect("room for one");
    let bind = Request::Bind {
        host: HOST2,
        slot: SlotIndex(0),
        functions: functions.clone(),
        if_generation: None,
    };
    assert_eq!(client.request(&bind).expect("bind"), Response::Done);
    assert!(matches!(
        client.request(&Request::SetNumVfs {
            endpoint: pf,
            num_vfs: 1
        }),
        Err(ClientError::Refused(Error::VfBound { .. }))
    ));
    assert_eq!(
        client.request(&Request::SaveConfig).expect("save"),
        Response::Done
    );
    let unbind = Request::Unbind {
        host: HOST2,
        slot: SlotIndex(0),
        mode: UnbindMode::Surprise,
        if_generation: None,
    };
    assert_eq!(client.request(&unbind).expect("unbind"), Response::Done);
    assert_eq!(
        client.request(&Request::RestoreConfig).expect("restore"),
        Response::Done
    );
    assert_eq!(
        vswitch(&mut client, HOST2).slots[0].state,
        SlotState::Bound { functions }
    );

    // The manager's switch's CSR window: its identity register reads
    // "WEFT", a port's role is the fabric manager's, and a port's
    // counters may be cleared.
    let id = global::ID.address(0, 0);
    assert_eq!(
        client
            .request(&Request::CsrRead { addr: id })
            .expect("read"),
        Response::Csr {
            addr: id,
            value: u32::from_be_bytes(*b"WEFT")
        }
    );
    let control = port_csr::CONTROL.address(0, 0);
    assert!(matches!(
        client.request(&Request::CsrWrite { addr: control, value: 0 }),
        Err(ClientError::Refused(Error::FabricOwnedCsr { addr })) if addr == control
    ));
    assert_eq!(
        client
            .request(&Request::CsrWrite {
                addr: counter_control::CLEAR.address(0, 0),
                value: 1,
            })
            .expect("clear"),
        Response::Done
    );
    let port0 = counters(&mut client, PortIndex(0));
    let rx = port0
        .values
        .iter()
        .find(|c| c.kind == CounterKind::RxTlps)
        .expect("port 0 counts TLPs");
    assert_eq!(rx.value, 0, "cleared through the CSR");

    // A reset: armed, then triggered with the token.
    let token = match client
        .request(&Request::ResetArm {
            scope: ResetScope::Firmware,
        })
        .expect("armed")
    {
        Response::ResetArmed { token, .. } => token,
        other => panic!("expected a token, got {other:?}"),
    };
    assert_eq!(
        client
            .request(&Request::ResetTrigger { token })
            .expect("triggered"),
        Response::Done
    );
    assert_eq!(running.stop(), [ResetScope::Firmware]);
}
