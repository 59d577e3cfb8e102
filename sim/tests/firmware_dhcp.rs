//! The firmware's DHCP client (the console's `ip dhcp`) on the ISS board,
//! against a DHCP server the test plays with smoltcp's wire formats,
//! following RFC 2131 §3.1: the client broadcasts a DISCOVER, takes the
//! server's OFFER with a REQUEST, and on the ACK uses the address, which
//! then answers ARP; a lease that runs out without a renewal leaves the
//! port without an address, and the client starts asking again.
//! `ip dhcp` is kept in flash: a restarted board asks a server again
//! rather than taking the default address.
//!
//! `sim/tests/firmware_tap.rs` has the same client leased an address by
//! Linux's dnsmasq through a TAP.

mod firmware_support;

use std::time::Duration;

use firmware_support::{
    answers_arp, booted, booted_with_flash, exchange, firmware_image, parse_udp, pass_time,
    power_cycled, udp_to, FIRMWARE_MAC, HOST_IP,
};
use smoltcp::wire::{
    DhcpMessageType, DhcpPacket, DhcpRepr, EthernetProtocol, Ipv4Address, DHCP_CLIENT_PORT,
    DHCP_SERVER_PORT,
};

/// The address the test's server leases.
const LEASED: Ipv4Address = Ipv4Address::new(192, 168, 70, 50);
/// The lease's length: short, so that it runs out within the test.
const LEASE_SECONDS: u32 = 8;

/// The DHCP messages among `frames` (sent by the firmware), checked to be
/// from the firmware's station address to the server's port, and a
/// DISCOVER to be broadcast (RFC 2131 §4.1).
fn dhcp_messages(frames: &[Vec<u8>]) -> Vec<(DhcpMessageType, u32, Option<Ipv4Address>)> {
    frames
        .iter()
        .filter(|frame| parse_ethernet_type(frame) == EthernetProtocol::Ipv4)
        .filter_map(|frame| {
            let (ethernet, ip, udp, payload) = parse_udp(frame);
            if udp.dst_port != DHCP_SERVER_PORT {
                return None;
            }
            assert_eq!(ethernet.src_addr, FIRMWARE_MAC);
            assert_eq!(udp.src_port, DHCP_CLIENT_PORT);
            let packet = DhcpPacket::new_checked(&payload[..]).expect("a DHCP message");
            let repr = DhcpRepr::parse(&packet).expect("a valid DHCP message");
            assert_eq!(repr.client_hardware_address, FIRMWARE_MAC);
            if repr.message_type == DhcpMessageType::Discover {
                assert_eq!(ip.dst_addr, Ipv4Address::BROADCAST);
            }
            Some((repr.message_type, repr.transaction_id, repr.requested_ip))
        })
        .collect()
}

fn parse_ethernet_type(frame: &[u8]) -> EthernetProtocol {
    firmware_support::parse_ethernet(frame).0.ethertype
}

/// The server's answer of `message_type` to transaction `xid`, leasing [`LEASED`].
fn server_message(message_type: DhcpMessageType, xid: u32) -> Vec<u8> {
    let repr = DhcpRepr {
        message_type,
        transaction_id: xid,
        secs: 0,
        client_hardware_address: FIRMWARE_MAC,
        client_ip: Ipv4Address::UNSPECIFIED,
        your_ip: LEASED,
        server_ip: HOST_IP,
        router: Some(HOST_IP),
        subnet_mask: Some(Ipv4Address::new(255, 255, 255, 0)),
        relay_agent_ip: Ipv4Address::UNSPECIFIED,
        broadcast: false,
        requested_ip: None,
        client_identifier: None,
        server_identifier: Some(HOST_IP),
        parameter_request_list: None,
        dns_servers: None,
        max_size: None,
        lease_duration: Some(LEASE_SECONDS),
        renew_duration: None,
        rebind_duration: None,
        additional_options: &[],
    };
    let mut message = vec![0; repr.buffer_len()];
    repr.emit(&mut DhcpPacket::new_unchecked(&mut message[..]))
        .expect("room for the message");
    udp_to(LEASED, DHCP_SERVER_PORT, DHCP_CLIENT_PORT, &message)
}

#[test]
fn a_dhcp_lease_sets_the_address_and_its_end_drops_it_while_the_client_asks_again() {
    let Some(image) = firmware_image() else {
        return;
    };
    let (mut board, printed) = booted(&image, &["insecure", "ip dhcp"]);
    assert!(
        printed.contains("ip: no address until a DHCP server leases one\r\n"),
        "{printed}"
    );
    let sent = board.mac().take_transmitted();
    let discover = dhcp_messages(&sent);
    let Some(&(DhcpMessageType::Discover, xid, _)) = discover.first() else {
        panic!("expected a DISCOVER first, the firmware sent {discover:?}");
    };
    // The static default went with `ip dhcp`.
    assert!(!answers_arp(&mut board, firmware_support::FIRMWARE_IP));
    let sent = exchange(&mut board, &server_message(DhcpMessageType::Offer, xid));
    let request = dhcp_messages(&sent);
    // smoltcp draws a new transaction ID for each message; the server
    // answers the REQUEST's.
    let [(DhcpMessageType::Request, xid, Some(LEASED))] = request[..] else {
        panic!("expected a REQUEST for the offered address, got {request:?}");
    };
    exchange(&mut board, &server_message(DhcpMessageType::Ack, xid));
    let printed = String::from_utf8_lossy(&board.console().take_transmitted()).into_owned();
    assert!(
        printed.contains("ip: 192.168.70.50/24 leased from 192.168.70.1, router 192.168.70.1"),
        "{printed}"
    );
    assert!(
        answers_arp(&mut board, LEASED),
        "the leased address answers ARP"
    );
    assert_eq!(
        firmware_support::type_line(&mut board, "ip"),
        "ip: dhcp, 192.168.70.50/24 leased, router 192.168.70.1\r\n"
    );

    // No server answers the renewal (RFC 2131 §4.4.5: T1 at half the
    // lease, T2 at seven eighths) or the rebinding: the lease ends.
    pass_time(
        &mut board,
        Duration::from_secs(u64::from(LEASE_SECONDS) + 1),
    );
    let printed = String::from_utf8_lossy(&board.console().take_transmitted()).into_owned();
    assert!(
        printed.contains("ip: the DHCP lease ended; no address, asking again\r\n"),
        "{printed}"
    );
    let sent = board.mac().take_transmitted();
    let asked: Vec<DhcpMessageType> = dhcp_messages(&sent).iter().map(|m| m.0).collect();
    assert!(
        asked.contains(&DhcpMessageType::Request),
        "the client tried to renew: {asked:?}"
    );
    assert_eq!(
        asked.last(),
        Some(&DhcpMessageType::Discover),
        "then asks again: {asked:?}"
    );
    assert!(
        !answers_arp(&mut board, LEASED),
        "the address went with the lease"
    );
}

#[test]
fn ip_dhcp_is_kept_across_a_restart_which_starts_the_client_again() {
    let Some(image) = firmware_image() else {
        return;
    };
    let (board, printed) = booted(&image, &["ip dhcp"]);
    assert!(printed.contains("ip: stored in flash"), "{printed}");

    let (mut board, printed) = booted_with_flash(&image, power_cycled(&board), &[]);
    assert!(
        printed.contains("ip: the setting stored in flash\r\n")
            && printed.contains("ip: no address until a DHCP server leases one\r\n"),
        "{printed}"
    );
    let sent = board.mac().take_transmitted();
    let asked: Vec<DhcpMessageType> = dhcp_messages(&sent).iter().map(|m| m.0).collect();
    assert_eq!(
        asked.first(),
        Some(&DhcpMessageType::Discover),
        "the restarted board asks a server: {asked:?}"
    );
    assert!(
        !answers_arp(&mut board, firmware_support::FIRMWARE_IP),
        "and does not take the default address"
    );
    assert_eq!(
        firmware_support::type_line(&mut board, "ip"),
        "ip: dhcp, no lease yet\r\n"
    );
}
