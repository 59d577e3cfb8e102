//! The firmware ELF on the ISS board, with frames from a host sent straight
//! into its management MAC model: it answers ARP (RFC 826) and ICMP echo
//! (RFC 792) for its address, and weft-proto requests on UDP 7330 checked
//! with the key typed on its console (answered by the fabric manager),
//! refusing what fails a check with the protocol's typed error.

mod firmware_support;

use firmware_support::*;
use smoltcp::wire::{ArpOperation, ArpRepr};
use weft_proto::{
    decode_response, encode_request, BoundFunctions, Capabilities, Error, FabricId, Header,
    HostIndex, Key, Request, Response, SlotIndex, SwitchId, TopologyCursor, MANAGEMENT_UDP_PORT,
    MAX_DATAGRAM,
};
use weft_sim::iss_board::IssBoard;

const CLIENT_PORT: u16 = 40_000;

/// A booted board with the test key, that has answered the host's ARP
/// request, as a Linux host's first exchange with it is.
fn keyed_board(image: &[u8]) -> IssBoard {
    let (mut board, printed) = booted(image, &[&format!("key {TEST_KEY_HEX}")]);
    assert!(printed.contains("key: set"), "{printed}");
    let answers = exchange(&mut board, &arp_request(FIRMWARE_IP));
    assert_eq!(answers.len(), 1, "one ARP reply");
    board
}

/// Sends `request` with `header` under `key` and returns the one datagram
/// that came back, if any.
fn ask(board: &mut IssBoard, header: &Header, request: &Request, key: &Key) -> Option<Vec<u8>> {
    let mut datagram = [0u8; MAX_DATAGRAM];
    let len = encode_request(header, request, &[], key, &mut datagram).expect("fits");
    send_datagram(board, &datagram[..len])
}

fn send_datagram(board: &mut IssBoard, datagram: &[u8]) -> Option<Vec<u8>> {
    let sent = exchange(board, &udp(CLIENT_PORT, MANAGEMENT_UDP_PORT, datagram));
    assert!(sent.len() <= 1, "at most one answer: {} frames", sent.len());
    let frame = sent.into_iter().next()?;
    let (ethernet, ip, udp, data) = parse_udp(&frame);
    assert_eq!(ethernet.dst_addr, HOST_MAC);
    assert_eq!(ethernet.src_addr, FIRMWARE_MAC);
    assert_eq!((ip.src_addr, ip.dst_addr), (FIRMWARE_IP, HOST_IP));
    assert_eq!(
        (udp.src_port, udp.dst_port),
        (MANAGEMENT_UDP_PORT, CLIENT_PORT)
    );
    Some(data)
}

fn response(answer: &[u8], sent: &Header) -> Response {
    decode_response(answer, &test_key(), sent)
        .expect("an answer authenticated under the test key, to this request")
        .response
}

#[test]
fn an_arp_request_for_the_firmware_is_answered_with_its_station_address() {
    let Some(image) = firmware_image() else {
        return;
    };
    let (mut board, printed) = booted(&image, &[]);
    assert!(printed.contains("ip: 192.168.70.2/24"), "{printed}");
    // RFC 826: a request for someone else's address gets no reply.
    let other = exchange(&mut board, &arp_request(HOST_IP));
    assert!(other.is_empty(), "{other:?}");
    let sent = exchange(&mut board, &arp_request(FIRMWARE_IP));
    assert_eq!(sent.len(), 1);
    let (ethernet, arp) = parse_arp(&sent[0]);
    assert_eq!(
        (ethernet.src_addr, ethernet.dst_addr),
        (FIRMWARE_MAC, HOST_MAC)
    );
    assert_eq!(
        arp,
        ArpRepr::EthernetIpv4 {
            operation: ArpOperation::Reply,
            source_hardware_addr: FIRMWARE_MAC,
            source_protocol_addr: FIRMWARE_IP,
            target_hardware_addr: HOST_MAC,
            target_protocol_addr: HOST_IP,
        }
    );
    assert_eq!(board.mac().station_address(), FIRMWARE_MAC.0);
}

#[test]
fn an_icmp_echo_request_is_answered_with_its_data() {
    let Some(image) = firmware_image() else {
        return;
    };
    let mut board = keyed_board(&image);
    for seq_no in 1..=3 {
        let data: Vec<u8> = (0..56).map(|i| i ^ seq_no as u8).collect();
        let sent = exchange(&mut board, &echo_request(0x77, seq_no, &data));
        assert_eq!(sent.len(), 1, "one echo reply");
        let (ethernet, ip, _) = parse_ipv4(&sent[0]);
        assert_eq!(ethernet.dst_addr, HOST_MAC);
        assert_eq!((ip.src_addr, ip.dst_addr), (FIRMWARE_IP, HOST_IP));
        assert_eq!(parse_echo_reply(&sent[0]), (0x77, seq_no, data));
    }
}

#[test]
fn identify_and_ping_are_answered_and_authenticated_with_the_console_key() {
    let Some(image) = firmware_image() else {
        return;
    };
    let mut board = keyed_board(&image);
    let sent = Header::request(1, SwitchId::ANY, 1_000);
    let answer = ask(&mut board, &sent, &Request::Identify, &test_key()).expect("answered");
    let Response::Identity(identity) = response(&answer, &sent) else {
        panic!("expected an identity");
    };
    assert_eq!(identity.switch, SwitchId(FIRMWARE_SWITCH));
    assert_eq!(identity.board.as_str(), "weft-soc");
    assert_eq!(
        (
            identity.firmware.major,
            identity.firmware.minor,
            identity.firmware.patch
        ),
        (0, 1, 0),
        "the workspace's version, {}",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(identity.ports, 8);
    assert!(identity.capabilities.contains(Capabilities::AUTHENTICATED));
    // The fabric manager answers, with what it can do.
    assert!(identity.capabilities.contains(Capabilities::BIND));
    // The boot record was read at start: the update is served.
    assert!(identity
        .capabilities
        .contains(Capabilities::FIRMWARE_UPDATE));

    let sent = Header::request(2, SwitchId(FIRMWARE_SWITCH), 1_001);
    let answer = ask(&mut board, &sent, &Request::Ping, &test_key()).expect("answered");
    assert_eq!(response(&answer, &sent), Response::Pong);
}

#[test]
fn requests_the_fabric_manager_does_not_carry_out_are_refused_as_unsupported() {
    let Some(image) = firmware_image() else {
        return;
    };
    let mut board = keyed_board(&image);
    // A slot holds one function in the manager's virtual switches.
    let sent = Header::request(1, SwitchId(FIRMWARE_SWITCH), 5);
    let mut functions = BoundFunctions::new();
    for function in [FabricId(0x0300), FabricId(0x0301)] {
        functions.push(function).expect("room for two");
    }
    let two_functions = Request::Bind {
        host: HostIndex(0),
        slot: SlotIndex(0),
        functions,
        if_generation: None,
    };
    let answer = ask(&mut board, &sent, &two_functions, &test_key()).expect("answered");
    assert_eq!(
        response(&answer, &sent),
        Response::Error(Error::Unsupported)
    );
    // Saving before the fabric is enumerated would save no bindings: the
    // client is told to try again.
    let sent = Header::request(2, SwitchId(FIRMWARE_SWITCH), 6);
    let answer = ask(&mut board, &sent, &Request::SaveConfig, &test_key()).expect("answered");
    assert!(matches!(
        response(&answer, &sent),
        Response::Error(Error::Busy { retry_after_ms }) if retry_after_ms > 0
    ));
    // Before the fabric is enumerated its listing is empty.
    let sent = Header::request(3, SwitchId(FIRMWARE_SWITCH), 7);
    let topology = Request::Topology {
        cursor: TopologyCursor(0),
        generation: None,
    };
    let answer = ask(&mut board, &sent, &topology, &test_key()).expect("answered");
    let Response::Topology(page) = response(&answer, &sent) else {
        panic!("expected a topology page");
    };
    assert!(page.items.is_empty(), "{page:?}");
}

#[test]
fn wrong_key_replayed_and_wrong_target_requests_get_typed_refusals() {
    let Some(image) = firmware_image() else {
        return;
    };
    let mut board = keyed_board(&image);
    let ours = SwitchId(FIRMWARE_SWITCH);

    // Another key: the MAC fails.
    let wrong_key = Key::from_bytes([0x11; 32]);
    let sent = Header::request(1, ours, 100);
    let answer = ask(&mut board, &sent, &Request::Ping, &wrong_key).expect("answered");
    assert_eq!(
        response(&answer, &sent),
        Response::Error(Error::Unauthenticated)
    );

    // Another switch named as the target.
    let sent = Header::request(2, SwitchId(0x1234), 101);
    let answer = ask(&mut board, &sent, &Request::Ping, &test_key()).expect("answered");
    assert_eq!(
        response(&answer, &sent),
        Response::Error(Error::WrongSwitch { ours })
    );

    // A request runs; the same bytes again are a retry and get the same
    // answer; a different request with a counter not above it did not run,
    // and learns the counter to exceed.
    let sent = Header::request(3, ours, 200);
    let mut datagram = [0u8; MAX_DATAGRAM];
    let len = encode_request(&sent, &Request::Ping, &[], &test_key(), &mut datagram).expect("fits");
    let first = send_datagram(&mut board, &datagram[..len]).expect("answered");
    let retry = send_datagram(&mut board, &datagram[..len]).expect("answered");
    assert_eq!(first, retry, "a retry gets the identical answer");
    assert_eq!(response(&first, &sent), Response::Pong);
    for (id, counter) in [(4, 200), (5, 150)] {
        let too_old = Header::request(id, ours, counter);
        let answer = ask(&mut board, &too_old, &Request::Identify, &test_key()).expect("answered");
        assert_eq!(
            response(&answer, &too_old),
            Response::Error(Error::CounterTooOld {
                accepted_above: 200,
                may_have_run: false
            }),
            "counter {counter}"
        );
    }
    // Once four newer requests push its answer out of the reply cache, the
    // first ping's retry is refused as a request that may have run.
    for i in 0..4u32 {
        let newer = Header::request(10 + i, ours, 300 + u64::from(i));
        let answer = ask(&mut board, &newer, &Request::Ping, &test_key()).expect("answered");
        assert_eq!(response(&answer, &newer), Response::Pong);
    }
    let retry = send_datagram(&mut board, &datagram[..len]).expect("answered");
    assert_eq!(
        response(&retry, &sent),
        Response::Error(Error::CounterTooOld {
            accepted_above: 303,
            may_have_run: true
        })
    );
}

#[test]
fn without_a_key_no_request_is_answered_until_one_is_typed() {
    let Some(image) = firmware_image() else {
        return;
    };
    let (mut board, printed) = booted(&image, &[]);
    assert!(printed.contains("no key yet"), "{printed}");
    exchange(&mut board, &arp_request(FIRMWARE_IP));
    let sent = Header::request(1, SwitchId::ANY, 1);
    assert_eq!(
        ask(
            &mut board,
            &sent,
            &Request::Identify,
            &Key::insecure_public()
        ),
        None,
        "no key: dropped, not even the insecure one is assumed"
    );
    // `insecure` asks for the public key by name; the console is read at
    // the next timer alarm.
    board.console().receive(b"insecure\r");
    board.skip_to_alarm();
    board.run(ANSWER_STEPS);
    let printed = String::from_utf8_lossy(&board.console().take_transmitted()).into_owned();
    assert!(printed.contains("insecure public key"), "{printed}");
    let sent = Header::request(2, SwitchId::ANY, 2);
    let answer = ask(
        &mut board,
        &sent,
        &Request::Identify,
        &Key::insecure_public(),
    )
    .expect("answered");
    let reply = decode_response(&answer, &Key::insecure_public(), &sent).expect("authentic");
    let Response::Identity(identity) = reply.response else {
        panic!("expected an identity, got {:?}", reply.response);
    };
    assert!(!identity.capabilities.contains(Capabilities::AUTHENTICATED));
}

#[test]
fn the_console_sets_the_address_and_says_what_is_wrong_with_a_bad_line() {
    let Some(image) = firmware_image() else {
        return;
    };
    let (mut board, printed) = booted(
        &image,
        &[
            "ip 192.168.70.9/24",
            "key 1234",
            "ip 300.1.2.3/24",
            "frobnicate",
        ],
    );
    assert!(
        printed.contains("ip: 192.168.70.9/24, no gateway (ARP, ICMP echo)\r\n"),
        "{printed}"
    );
    assert!(
        printed.contains("key: a weft key is 64 hexadecimal digits, but 4 characters were given"),
        "{printed}"
    );
    assert!(
        printed.contains("ip: expected an address and prefix length"),
        "{printed}"
    );
    assert!(
        printed.contains("unknown command; type `help`"),
        "{printed}"
    );
    let new = smoltcp::wire::Ipv4Address::new(192, 168, 70, 9);
    assert!(
        exchange(&mut board, &arp_request(FIRMWARE_IP)).is_empty(),
        "the old address is gone"
    );
    let sent = exchange(&mut board, &arp_request(new));
    assert_eq!(sent.len(), 1);
    let (_, arp) = parse_arp(&sent[0]);
    let ArpRepr::EthernetIpv4 {
        source_protocol_addr,
        ..
    } = arp
    else {
        panic!("an Ethernet/IPv4 ARP reply");
    };
    assert_eq!(source_protocol_addr, new);
}
