//! The firmware's network setting on the ISS board is kept in the
//! configuration flash: an address typed on the console is the address
//! after a restart (answering ARP and ICMP echo, RFC 826 and RFC 792,
//! there and not at the default), a gateway typed with it is the default
//! route for clients beyond the subnet, and a damaged record (a flipped
//! bit, or a sealed one whose setting cannot be) leaves the default
//! address, which the console says. `ip dhcp` across a restart is
//! in `sim/tests/firmware_dhcp.rs`.

mod firmware_support;

use firmware_support::*;
use smoltcp::wire::{ArpOperation, ArpRepr, EthernetAddress, EthernetProtocol, Ipv4Address};
use weft_drivers::spi_flash::NETWORK;
use weft_fabric::persist::crc32;
use weft_iss::soc::{NorFlash, Timing};
use weft_sim::iss_board::IssBoard;

/// The address the tests type.
const TYPED: Ipv4Address = Ipv4Address::new(192, 168, 70, 9);
/// A router on the subnet, not the host.
const GATEWAY: Ipv4Address = Ipv4Address::new(192, 168, 70, 254);
const GATEWAY_MAC: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0xfe]);
/// A client beyond the subnet, whose packets the router forwards.
const REMOTE: Ipv4Address = Ipv4Address::new(10, 9, 9, 9);

/// The network record in slot 0 of the board's network span, as long as
/// a version 1 record.
fn stored_record(board: &IssBoard) -> Vec<u8> {
    board.flash().contents()[NETWORK.start as usize..][..RECORD_LEN].to_vec()
}

/// Bytes of a version 1 record: weft-fabric's header (magic, version,
/// payload length, sequence number), ten bytes of payload, CRC-32.
const RECORD_LEN: usize = 12 + 10 + 4;

/// The version 1 record with sequence number `sequence` and `payload`
/// (mode, address, prefix length, gateway).
fn record(sequence: u32, payload: [u8; 10]) -> Vec<u8> {
    let mut bytes = b"WFTN".to_vec();
    bytes.extend_from_slice(&1u16.to_le_bytes());
    bytes.extend_from_slice(&10u16.to_le_bytes());
    bytes.extend_from_slice(&sequence.to_le_bytes());
    bytes.extend_from_slice(&payload);
    let crc = crc32(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    bytes
}

/// The firmware's frames answering an echo request from `src` to `dst`.
fn ping(board: &mut IssBoard, src: Ipv4Address, dst: Ipv4Address, seq_no: u16) -> Vec<Vec<u8>> {
    exchange(
        board,
        &echo_request_between(src, dst, 0x5eed, seq_no, b"weft"),
    )
}

/// Whether `frames` is one echo reply from `from` to `to`, with the data
/// sent, in a frame to `mac`.
fn is_echo_reply(
    frames: &[Vec<u8>],
    from: Ipv4Address,
    to: Ipv4Address,
    mac: EthernetAddress,
) -> bool {
    let [frame] = frames else {
        return false;
    };
    if parse_ethernet(frame).0.ethertype != EthernetProtocol::Ipv4 {
        return false;
    }
    let (ethernet, ip, _) = parse_ipv4(frame);
    let (ident, _, data) = parse_echo_reply(frame);
    ethernet.dst_addr == mac
        && ip.src_addr == from
        && ip.dst_addr == to
        && ident == 0x5eed
        && data == b"weft"
}

#[test]
fn a_static_address_typed_on_the_console_is_the_address_after_a_restart() {
    let Some(image) = firmware_image() else {
        return;
    };
    let (board, printed) = booted(&image, &["ip 192.168.70.9/24"]);
    assert!(
        printed.contains("ip: 192.168.70.9/24, no gateway (ARP, ICMP echo)\r\n")
            && printed.contains("ip: stored in flash"),
        "{printed}"
    );
    assert_eq!(
        stored_record(&board),
        record(0, [0, 192, 168, 70, 9, 24, 0, 0, 0, 0]),
        "the record in the network span, as weft_fabric::network_setting's docs lay it out"
    );

    let (mut board, printed) = booted_with_flash(&image, power_cycled(&board), &[]);
    assert!(
        printed.contains("ip: the setting stored in flash\r\n")
            && printed.contains("ip: 192.168.70.9/24, no gateway (ARP, ICMP echo)\r\n"),
        "{printed}"
    );
    assert!(answers_arp(&mut board, TYPED), "ARP at the stored address");
    assert!(
        !answers_arp(&mut board, FIRMWARE_IP),
        "no ARP at the default address"
    );
    let answer = ping(&mut board, HOST_IP, TYPED, 1);
    assert!(
        is_echo_reply(&answer, TYPED, HOST_IP, HOST_MAC),
        "an echo reply from the stored address: {answer:?}"
    );
    assert!(
        ping(&mut board, HOST_IP, FIRMWARE_IP, 2).is_empty(),
        "no echo reply at the default address"
    );
    // Without a gateway there is no route beyond the subnet: nothing is
    // sent, not even an ARP request for a router.
    assert!(
        ping(&mut board, REMOTE, TYPED, 3).is_empty(),
        "no answer to a client beyond the subnet"
    );
    assert_eq!(
        type_line(&mut board, "ip"),
        "ip: 192.168.70.9/24, no gateway (ARP, ICMP echo)\r\n"
    );
}

#[test]
fn a_gateway_typed_with_the_address_routes_answers_beyond_the_subnet_after_a_restart() {
    let Some(image) = firmware_image() else {
        return;
    };
    let (board, printed) = booted(
        &image,
        &[
            "ip 192.168.70.9/24 via 10.0.0.1",
            "ip 192.168.70.9/24 via",
            "ip 192.168.70.9/24 via 192.168.70.254",
        ],
    );
    assert!(
        printed.contains("ip: the gateway must be on the address's subnet"),
        "an off-subnet gateway is refused: {printed}"
    );
    assert!(
        printed.contains("ip: expected an address and prefix length"),
        "`via` without a gateway is refused: {printed}"
    );
    assert!(
        printed.contains("ip: 192.168.70.9/24 via 192.168.70.254 (ARP, ICMP echo)\r\n")
            && printed.contains("ip: stored in flash"),
        "{printed}"
    );

    assert_eq!(
        stored_record(&board),
        record(0, [0, 192, 168, 70, 9, 24, 192, 168, 70, 254]),
        "only the accepted setting was stored"
    );

    let (mut board, printed) = booted_with_flash(&image, power_cycled(&board), &[]);
    assert!(
        printed.contains("ip: 192.168.70.9/24 via 192.168.70.254 (ARP, ICMP echo)\r\n"),
        "{printed}"
    );
    assert_eq!(
        type_line(&mut board, "ip"),
        "ip: 192.168.70.9/24 via 192.168.70.254 (ARP, ICMP echo)\r\n"
    );
    // The reply to a client beyond the subnet goes to the router, which
    // the firmware first looks up (RFC 826) ...
    let sent = ping(&mut board, REMOTE, TYPED, 1);
    let asked: Vec<ArpRepr> = sent
        .iter()
        .filter(|frame| parse_ethernet(frame).0.ethertype == EthernetProtocol::Arp)
        .map(|frame| parse_arp(frame).1)
        .collect();
    assert!(
        matches!(
            asked[..],
            [ArpRepr::EthernetIpv4 {
                operation: ArpOperation::Request,
                target_protocol_addr: GATEWAY,
                source_protocol_addr: TYPED,
                ..
            }]
        ),
        "an ARP request for the gateway: {asked:?}"
    );
    assert!(
        exchange(&mut board, &arp_reply(GATEWAY_MAC, GATEWAY, TYPED)).is_empty(),
        "the router's ARP reply needs no answer"
    );
    // ... and, with the router's station address known, the echo reply
    // goes to it.
    let answer = ping(&mut board, REMOTE, TYPED, 2);
    assert!(
        is_echo_reply(&answer, TYPED, REMOTE, GATEWAY_MAC),
        "an echo reply to the remote client through the gateway: {answer:?}"
    );
    // A client on the subnet is still answered directly.
    assert!(answers_arp(&mut board, TYPED));
    let answer = ping(&mut board, HOST_IP, TYPED, 3);
    assert!(
        is_echo_reply(&answer, TYPED, HOST_IP, HOST_MAC),
        "an echo reply to the host on the subnet: {answer:?}"
    );
}

#[test]
fn a_damaged_record_leaves_the_default_address_and_says_so() {
    let Some(image) = firmware_image() else {
        return;
    };
    let (board, _) = booted(&image, &["ip 192.168.70.9/24"]);
    let part = board.flash().part();
    let mut contents = part.contents().to_vec();
    // A bit of the stored address flips (wear): the magic still says a
    // record was written, the CRC says it is not that record.
    let record = NETWORK.start as usize;
    assert_eq!(contents[record..][..4], *b"WFTN");
    contents[record + 13] ^= 0x01;
    let damaged = NorFlash::with_contents(part.geometry(), Timing::TYPICAL, &contents);

    let (mut board, printed) = booted_with_flash(&image, damaged, &[]);
    assert!(
        printed.contains("ip: the setting stored in flash is damaged; the default address"),
        "{printed}"
    );
    assert!(
        printed.contains("ip: 192.168.70.2/24, no gateway (ARP, ICMP echo)\r\n"),
        "{printed}"
    );
    assert!(answers_arp(&mut board, FIRMWARE_IP), "ARP at the default");
    assert!(!answers_arp(&mut board, TYPED), "not at the damaged one");
    let answer = ping(&mut board, HOST_IP, FIRMWARE_IP, 1);
    assert!(
        is_echo_reply(&answer, FIRMWARE_IP, HOST_IP, HOST_MAC),
        "an echo reply at the default: {answer:?}"
    );
    // The console stores a setting again over the damaged one.
    let printed = type_line(&mut board, "ip 192.168.70.9/24");
    assert!(printed.contains("ip: stored in flash"), "{printed}");
    let (mut board, printed) = booted_with_flash(&image, power_cycled(&board), &[]);
    assert!(!printed.contains("damaged"), "{printed}");
    assert!(answers_arp(&mut board, TYPED));
}

#[test]
fn a_well_sealed_record_with_a_setting_that_cannot_be_leaves_the_default_address() {
    let Some(image) = firmware_image() else {
        return;
    };
    // Each with a valid CRC: the payload itself is what is wrong.
    let impossible: [(&str, [u8; 10]); 5] = [
        (
            "a prefix longer than 32",
            [0, 192, 168, 70, 9, 33, 0, 0, 0, 0],
        ),
        (
            "a gateway off the subnet",
            [0, 192, 168, 70, 9, 24, 10, 0, 0, 1],
        ),
        (
            "the address as its own gateway",
            [0, 192, 168, 70, 9, 24, 192, 168, 70, 9],
        ),
        ("an unknown mode", [2, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        ("DHCP with an address", [1, 192, 168, 70, 9, 24, 0, 0, 0, 0]),
    ];
    for (what, payload) in impossible {
        let blank = NorFlash::reference();
        let mut contents = blank.contents().to_vec();
        let bytes = record(0, payload);
        contents[NETWORK.start as usize..][..bytes.len()].copy_from_slice(&bytes);
        let flash = NorFlash::with_contents(blank.geometry(), Timing::TYPICAL, &contents);

        let (mut board, printed) = booted_with_flash(&image, flash, &[]);
        assert!(
            printed.contains("ip: the setting stored in flash is damaged; the default address")
                && printed.contains("ip: 192.168.70.2/24, no gateway (ARP, ICMP echo)\r\n"),
            "{what}: {printed}"
        );
        assert!(
            answers_arp(&mut board, FIRMWARE_IP),
            "{what}: ARP at the default"
        );
    }
}
