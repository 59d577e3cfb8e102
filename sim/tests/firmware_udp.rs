//! `weft-sim firmware --udp`: the weftctl client reaches the firmware on
//! the ISS through the localhost UDP gateway, without privileges — the
//! gateway answers the firmware's ARP for the host it stands in for, and
//! carries datagrams both ways; the firmware checks each with the key
//! typed on its console.

mod firmware_support;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use firmware_support::{firmware_path, test_key, FIRMWARE_SWITCH, TEST_KEY_HEX};
use weft_proto::{
    decode_response, encode_request, AccessWidth, Capabilities, CounterKind, Error, EventKind,
    EventSeq, FabricId, Header, Key, PortIndex, Request, Response, SwitchId, TopologyCursor,
    TopologyItem, MAX_DATAGRAM,
};
use weft_sim::bridge::{self, AddressChoice, Connected, FirmwareOptions};
use weftctl::client::{Client, ClientConfig};
use weftctl::error::ClientError;

/// The bridge in a thread of its own; dropping it stops the thread.
struct Running {
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<Result<(), String>>>,
    local: SocketAddr,
    /// Where the bridge expects the firmware's address.
    address: AddressChoice,
}

impl Running {
    fn start(console: &[&str]) -> Option<Running> {
        let elf = firmware_path();
        if !elf.is_file() {
            eprintln!(
                "skipped: no firmware ELF at {} (build it with `cargo xtask firmware`)",
                elf.display()
            );
            return None;
        }
        let mut args: Vec<String> = ["--elf", elf.to_str()?, "--udp", "127.0.0.1:0"]
            .map(String::from)
            .to_vec();
        args.extend(console.iter().map(|s| s.to_string()));
        let options = FirmwareOptions::parse(&args).expect("valid options");
        let stop = Arc::new(AtomicBool::new(false));
        let (opened, at) = mpsc::channel();
        let thread = {
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let started = |connected: &Connected, address| {
                    let _ = opened.send((connected.clone(), address));
                };
                bridge::run(&options, &mut std::io::sink(), &stop, started)
                    .map_err(|e| e.to_string())
            })
        };
        let Ok((Connected::Udp { local, .. }, address)) = at.recv_timeout(Duration::from_secs(10))
        else {
            panic!("the gateway did not open: {:?}", thread.join());
        };
        Some(Running {
            stop,
            thread: Some(thread),
            local,
            address,
        })
    }

    fn client(&self, key: Key) -> Client {
        Client::connect(ClientConfig::new(self.local, key)).expect("a UDP socket")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let result = thread.join().expect("the bridge did not panic");
            if !thread::panicking() {
                result.expect("the bridge ran without error");
            }
        }
    }
}

#[test]
fn weftctl_identifies_and_pings_the_firmware_through_the_gateway() {
    let Some(board) = Running::start(&["--key", TEST_KEY_HEX]) else {
        return;
    };
    let mut client = board.client(test_key());
    let identity = client.identify().expect("an identity");
    assert_eq!(identity.switch, SwitchId(FIRMWARE_SWITCH));
    assert_eq!(identity.board.as_str(), "weft-soc");
    assert!(identity.capabilities.contains(Capabilities::AUTHENTICATED));
    assert!(identity
        .capabilities
        .contains(Capabilities::FIRMWARE_UPDATE));
    for _ in 0..3 {
        client.ping().expect("a pong");
    }
    let topology = client.request(&Request::Topology {
        cursor: TopologyCursor(0),
        generation: None,
    });
    // The fabric manager answers (its board's links are all down, so
    // whether or not it has enumerated yet, it lists no endpoint).
    match topology {
        Ok(Response::Topology(page)) => assert!(
            !page
                .items
                .iter()
                .any(|item| matches!(item, TopologyItem::Endpoint(_))),
            "{page:?}"
        ),
        other => panic!("expected a topology page: {other:?}"),
    }
    // The manager's event log and raw config access are served too: with
    // no endpoint found, the log holds none and no function has an ID.
    match client.request(&Request::ReadEvents { from: EventSeq(0) }) {
        Ok(Response::Events(page)) => assert!(
            page.events
                .iter()
                .all(|e| !matches!(e.kind, EventKind::EndpointAdded { .. })),
            "{page:?}"
        ),
        other => panic!("expected an event page: {other:?}"),
    }
    let read = client.request(&Request::ConfigRead {
        target: FabricId(0x0300),
        offset: 0,
        width: AccessWidth::Dword,
    });
    assert!(
        matches!(
            read,
            Err(ClientError::Refused(
                Error::NoSuchEndpoint { .. } | Error::Busy { .. }
            ))
        ),
        "{read:?}"
    );
    // Counters are read from the data plane's CSRs through the firmware's
    // driver (no link is up, so nothing is counted), and cleared there.
    match client.request(&Request::ReadCounters { port: PortIndex(0) }) {
        Ok(Response::Counters(counters)) => {
            assert_eq!(counters.port, PortIndex(0));
            let wire_bytes = counters
                .values
                .iter()
                .find(|c| c.kind == CounterKind::RxWireBytes);
            assert_eq!(wire_bytes.map(|c| c.value), Some(0), "{counters:?}");
        }
        other => panic!("expected port 0's counters: {other:?}"),
    }
    let clear = Request::ClearCounters {
        port: None,
        kind: None,
    };
    assert_eq!(client.request(&clear).expect("cleared"), Response::Done);
    let beyond = PortIndex(identity.ports);
    let read = client.request(&Request::ReadCounters { port: beyond });
    assert!(
        matches!(read, Err(ClientError::Refused(Error::NoSuchPort { port })) if port == beyond),
        "{read:?}"
    );
}

/// The firmware refuses the request as unauthenticated, under its own key,
/// which this client cannot verify: it reports the MAC failure.
#[test]
fn a_client_with_another_key_is_refused() {
    let Some(board) = Running::start(&["--key", TEST_KEY_HEX]) else {
        return;
    };
    let mut client = board.client(Key::from_bytes([0x33; 32]));
    let refused = client.identify();
    assert!(
        matches!(refused, Err(ClientError::BadMac { .. })),
        "{refused:?}"
    );
}

/// `--flash FILE`: the key typed on one run's console is in the flash file
/// the next run starts from, which then authenticates with it untyped.
#[test]
fn the_flash_file_carries_the_key_to_the_next_run() {
    let file = std::env::temp_dir().join(format!("weft-flash-{}.bin", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let flash = file.to_str().expect("a UTF-8 temporary path");
    {
        let Some(board) = Running::start(&["--key", TEST_KEY_HEX, "--flash", flash]) else {
            return;
        };
        board.client(test_key()).ping().expect("a pong");
    }
    let stored = std::fs::read(&file).expect("the flash file was written");
    assert_eq!(stored[..4], *b"WFTK", "the key record leads the flash");

    let board = Running::start(&["--flash", flash]).expect("the firmware ELF is there");
    // weftctl's counter, its clock, is still below the mark the ping moved
    // (a minute above it): the firmware's refusal names the mark, and
    // weftctl sends the identify again above it at once.
    let identity = board
        .client(test_key())
        .identify()
        .expect("an identity at once, from a restarted switch");
    assert!(identity.capabilities.contains(Capabilities::AUTHENTICATED));
    // A request from a clock past the mark is authenticated with the key
    // from the flash file.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_micros() as u64;
    let header = Header::request(7, SwitchId(FIRMWARE_SWITCH), now + 120_000_000);
    let mut datagram = [0u8; MAX_DATAGRAM];
    let len =
        encode_request(&header, &Request::Identify, &[], &test_key(), &mut datagram).expect("fits");
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    socket.send_to(&datagram[..len], board.local).expect("sent");
    let mut answer = [0u8; MAX_DATAGRAM];
    let (n, _) = socket.recv_from(&mut answer).expect("an answer");
    let response = decode_response(&answer[..n], &test_key(), &header)
        .expect("authenticated under the key from the flash file")
        .response;
    let Response::Identity(identity) = response else {
        panic!("expected an identity: {response:?}");
    };
    assert!(identity.capabilities.contains(Capabilities::AUTHENTICATED));
    drop(board);
    std::fs::remove_file(&file).expect("the flash file is removed");
}

#[test]
fn the_flash_file_carries_the_address_to_the_next_run_and_the_gateway_follows_it() {
    let file = std::env::temp_dir().join(format!("weft-flash-ip-{}.bin", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let flash = file.to_str().expect("a UTF-8 temporary path");
    let typed: smoltcp::wire::Ipv4Cidr = "192.168.70.77/24".parse().expect("a CIDR");
    {
        let Some(board) =
            Running::start(&["--insecure", "--ip", "192.168.70.77/24", "--flash", flash])
        else {
            return;
        };
        assert_eq!(board.address, AddressChoice::Static(typed));
        board.client(Key::insecure_public()).ping().expect("a pong");
    }

    // No --ip: the firmware starts at the stored address, and the bridge
    // reads it from the same file, so the gateway's datagrams reach it.
    let board =
        Running::start(&["--insecure", "--flash", flash]).expect("the firmware ELF is there");
    assert_eq!(board.address, AddressChoice::Static(typed));
    board
        .client(Key::insecure_public())
        .ping()
        .expect("a pong at the stored address");
    drop(board);
    std::fs::remove_file(&file).expect("the flash file is removed");
}
