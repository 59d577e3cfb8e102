//! The firmware ELF on the ISS board, and a host on its management
//! Ethernet that builds and reads frames with smoltcp's wire module
//! (wire formats only: no smoltcp interface runs on this side).
#![allow(dead_code, unused_imports)]

use smoltcp::phy::ChecksumCapabilities;
use smoltcp::wire::{
    ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol,
    EthernetRepr, Icmpv4Packet, Icmpv4Repr, IpAddress, IpProtocol, Ipv4Address, Ipv4Packet,
    Ipv4Repr, UdpPacket, UdpRepr,
};
pub use weft_iss::elf::{boot_loader_image, firmware_image, firmware_path};
pub use weft_iss::programs::banner_image as test_image;
use weft_sim::firmware_board::FirmwareCore;
use weft_sim::iss_board::{Activity, IssBoard, CPU_CLOCK_HZ};
use weft_sim::scenario::Scenario;

/// The firmware's station address and default IPv4 address (its crate docs).
pub const FIRMWARE_MAC: EthernetAddress = EthernetAddress([0x02, 0x57, 0x45, 0x46, 0x54, 0x01]);
/// The firmware's default IPv4 address, weft-proto's default.
pub const FIRMWARE_IP: Ipv4Address = {
    let [a, b, c, d] = weft_proto::DEFAULT_IPV4_ADDRESS;
    Ipv4Address::new(a, b, c, d)
};
/// The switch ID the firmware reports: its station address as a number.
pub const FIRMWARE_SWITCH: u64 = weft_sim::iss_manager::FIRMWARE_SWITCH_ID;
/// The host's side of the link.
pub const HOST_MAC: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0x10]);
/// The host's IPv4 address, on the firmware's default subnet.
pub const HOST_IP: Ipv4Address = Ipv4Address::new(192, 168, 70, 1);
/// The test key, as typed on the console.
pub const TEST_KEY_HEX: &str = "8f14e45fceea167a5a36dedd4bea2543c4ca4238a0b923820dcc509a6f75849b";

/// [`TEST_KEY_HEX`] as a key.
pub fn test_key() -> weft_proto::Key {
    weft_proto::Key::parse_hex(TEST_KEY_HEX).expect("a valid key")
}
/// Steps the firmware gets to answer one frame before the test gives up.
pub const ANSWER_STEPS: u64 = 50_000_000;

/// The room the firmware's stack must keep clear of its statics in every
/// test: what interrupt entry and the paths no test takes may still need.
pub const STACK_MARGIN: u32 = 8 * 1024;

/// Fails unless the firmware's stack on `board` stayed [`STACK_MARGIN`]
/// clear of its statics, and prints how deep it went after `what`: the
/// free memory is what a board of the same image had before it ran.
pub fn assert_stack_clear(board: &IssBoard, image: &[u8], what: &str) {
    let free = IssBoard::new(image)
        .expect("the firmware ELF loads")
        .stack_headroom();
    let headroom = board.stack_headroom();
    eprintln!(
        "{what}: the stack went {} bytes deep, {headroom} of {free} free bytes above the statics untouched",
        free - headroom
    );
    assert!(
        headroom < free,
        "nothing wrote the free memory: the stack is not measured"
    );
    assert!(
        headroom >= STACK_MARGIN,
        "{what}: the stack came within {headroom} bytes of the statics (at least {STACK_MARGIN} must stay clear)"
    );
}

/// The board's flash as a board powered up again finds it: the array
/// only, nothing in progress.
pub fn power_cycled(board: &IssBoard) -> weft_iss::soc::NorFlash {
    let part = board.flash().part();
    weft_iss::soc::NorFlash::with_contents(
        part.geometry(),
        weft_iss::soc::Timing::TYPICAL,
        part.contents(),
    )
}

/// A board that has booted with `console` typed on its UART, waiting for
/// frames; what it printed so far.
pub fn booted(image: &[u8], console: &[&str]) -> (IssBoard, String) {
    boot(
        IssBoard::new(image).expect("the firmware ELF loads"),
        console,
    )
}

/// As [`booted`], on a board whose flash holds `flash`: a restart with
/// what an earlier run stored.
pub fn booted_with_flash(
    image: &[u8],
    flash: weft_iss::soc::NorFlash,
    console: &[&str],
) -> (IssBoard, String) {
    let board = IssBoard::with_flash(image, flash).expect("the firmware ELF loads");
    boot(board, console)
}

/// As [`booted_with_flash`], on a board that starts in its boot ROM,
/// which holds the boot loader `boot`, with the ELF `bitstream` as the
/// image the bitstream carries.
pub fn booted_by_loader(
    boot: &[u8],
    bitstream: &[u8],
    flash: weft_iss::soc::NorFlash,
    console: &[&str],
) -> (IssBoard, String) {
    let board = IssBoard::with_boot_loader(boot, bitstream, flash)
        .expect("the boot and firmware ELFs load");
    self::boot(board, console)
}

/// As [`booted`], with the console's UART sending at its line rate, as
/// the RTL's does ([`weft_iss::soc::Uart::pace`]): 115 200 baud, a byte
/// every [`CONSOLE_TICKS_PER_BYTE`] ticks. What it printed so far is what
/// has left on the line.
pub fn booted_at_line_rate(image: &[u8], console: &[&str]) -> (IssBoard, String) {
    let board = IssBoard::new(image).expect("the firmware ELF loads");
    board.console().pace(CONSOLE_TICKS_PER_BYTE);
    boot(board, console)
}

/// Soft core clock ticks a byte of the console's serial line takes: a
/// start bit, eight data bits and a stop bit.
pub const CONSOLE_TICKS_PER_BYTE: u64 =
    (weft_regs::soc::uart::BITS_PER_BYTE * weft_regs::CONSOLE_CYCLES_PER_BIT) as u64;

fn boot(mut board: IssBoard, console: &[&str]) -> (IssBoard, String) {
    for line in console {
        board.console().receive(format!("{line}\r").as_bytes());
    }
    let printed = settle(&mut board);
    (board, printed)
}

/// Lets `board` run until it waits for the line or the console again
/// (time having moved on, say); what it printed meanwhile.
pub fn settle(board: &mut IssBoard) -> String {
    wait_out(board, "the firmware runs and waits");
    String::from_utf8_lossy(&board.console().take_transmitted()).into_owned()
}

/// Types `line` on the board's console and lets the firmware read it at
/// its next look at the console (the UART has no interrupt: the
/// firmware's `CONSOLE_PERIOD` of 20 ms); what it printed meanwhile.
pub fn type_line(board: &mut IssBoard, line: &str) -> String {
    board.console().receive(format!("{line}\r").as_bytes());
    pass_time(board, std::time::Duration::from_millis(25));
    String::from_utf8_lossy(&board.console().take_transmitted()).into_owned()
}

/// Hands `frame` to the firmware's MAC, lets the firmware run until it
/// waits again, and returns the frames it sent.
pub fn exchange(board: &mut IssBoard, frame: &[u8]) -> Vec<Vec<u8>> {
    let reception = board.mac().receive(frame);
    assert!(
        matches!(reception, weft_iss::soc::Reception::Landed { .. }),
        "the MAC took the frame: {reception:?}"
    );
    wait_out(board, "the firmware answers and waits again");
    board.mac().take_transmitted()
}

/// Lets `elapsed` pass on the board's clock, the firmware running at each
/// of its alarms on the way as it would, and then until it waits; the
/// frames it sends meanwhile stay in the MAC.
pub fn pass_time(board: &mut IssBoard, elapsed: std::time::Duration) {
    let ticks = elapsed.as_micros() * u128::from(CPU_CLOCK_HZ) / 1_000_000;
    let end = board.mtime() + u64::try_from(ticks).expect("a test's span of time");
    loop {
        let now = board.mtime();
        if now + board.ticks_to_alarm() >= end {
            // A flash write waited out on the way may have run past the end.
            board.advance_ticks(end.saturating_sub(now));
            wait_out(board, "the firmware runs at the end of the time passed");
            return;
        }
        board.skip_to_alarm();
        wait_out(board, "the firmware runs at its alarm");
    }
}

/// Sends `request` from the host's UDP port `client_port` under `key`
/// with request id `id` (and counter `10 + id`), and decodes the one answer.
pub fn ask_firmware(
    board: &mut IssBoard,
    client_port: u16,
    id: u32,
    request: &weft_proto::Request,
    key: &weft_proto::Key,
) -> weft_proto::Response {
    let header = weft_proto::Header::request(
        id,
        weft_proto::SwitchId(FIRMWARE_SWITCH),
        10 + u64::from(id),
    );
    let mut datagram = [0u8; weft_proto::MAX_DATAGRAM];
    let len = weft_proto::encode_request(&header, request, &[], key, &mut datagram).expect("fits");
    let sent = exchange(
        board,
        &udp(
            client_port,
            weft_proto::MANAGEMENT_UDP_PORT,
            &datagram[..len],
        ),
    );
    assert_eq!(sent.len(), 1, "one answer");
    let (_, _, _, data) = parse_udp(&sent[0]);
    weft_proto::decode_response(&data, key, &header)
        .expect("an answer authenticated under the key")
        .response
}

/// Ticks within which a firmware alarm may be a flash poll: the
/// firmware's `flash::POLL_PERIOD` of 100 µs at the core clock.
const FLASH_POLL_TICKS: u64 = 10_000;

/// Runs the firmware until it waits for the line or the console, not for
/// the flash: while it sleeps between polls of a program or erase (the
/// part is busy, or it has just finished and the poll alarm is near),
/// time skips to its alarm.
fn wait_out(board: &mut IssBoard, what: &str) {
    for _ in 0..100_000 {
        assert_eq!(board.run(ANSWER_STEPS), Activity::Waiting, "{what}");
        if !board.flash().busy() && board.ticks_to_alarm() > FLASH_POLL_TICKS {
            return;
        }
        board.skip_to_alarm();
    }
    panic!("{what}: the firmware kept waiting for the flash");
}

fn ethernet(
    src: EthernetAddress,
    dst: EthernetAddress,
    ethertype: EthernetProtocol,
    payload_len: usize,
) -> Vec<u8> {
    let mut frame = vec![0; EthernetFrame::<&[u8]>::header_len() + payload_len];
    EthernetRepr {
        src_addr: src,
        dst_addr: dst,
        ethertype,
    }
    .emit(&mut EthernetFrame::new_unchecked(&mut frame[..]));
    frame
}

/// A broadcast ARP request from the host for `target`.
pub fn arp_request(target: Ipv4Address) -> Vec<u8> {
    let repr = ArpRepr::EthernetIpv4 {
        operation: ArpOperation::Request,
        source_hardware_addr: HOST_MAC,
        source_protocol_addr: HOST_IP,
        target_hardware_addr: EthernetAddress([0; 6]),
        target_protocol_addr: target,
    };
    let mut frame = ethernet(
        HOST_MAC,
        EthernetAddress::BROADCAST,
        EthernetProtocol::Arp,
        repr.buffer_len(),
    );
    repr.emit(&mut ArpPacket::new_unchecked(&mut frame[14..]));
    frame
}

/// An ARP reply to the firmware at `firmware_ip` from the station `mac`
/// at `ip`, as a router on the link answers the firmware's request.
pub fn arp_reply(mac: EthernetAddress, ip: Ipv4Address, firmware_ip: Ipv4Address) -> Vec<u8> {
    let repr = ArpRepr::EthernetIpv4 {
        operation: ArpOperation::Reply,
        source_hardware_addr: mac,
        source_protocol_addr: ip,
        target_hardware_addr: FIRMWARE_MAC,
        target_protocol_addr: firmware_ip,
    };
    let mut frame = ethernet(mac, FIRMWARE_MAC, EthernetProtocol::Arp, repr.buffer_len());
    repr.emit(&mut ArpPacket::new_unchecked(&mut frame[14..]));
    frame
}

/// Whether the firmware answers the host's ARP request for `address`
/// with its station address.
pub fn answers_arp(board: &mut IssBoard, address: Ipv4Address) -> bool {
    exchange(board, &arp_request(address)).iter().any(|frame| {
        parse_ethernet(frame).0.ethertype == EthernetProtocol::Arp
            && matches!(
                parse_arp(frame).1,
                ArpRepr::EthernetIpv4 {
                    operation: ArpOperation::Reply,
                    source_protocol_addr,
                    source_hardware_addr,
                    ..
                } if source_protocol_addr == address && source_hardware_addr == FIRMWARE_MAC
            )
    })
}

/// An IPv4 packet from `src`, in a frame from the host to the firmware's
/// station address, to `dst` carrying `payload_len` bytes of `protocol`,
/// filled by `fill`.
fn ipv4(
    src: Ipv4Address,
    dst: Ipv4Address,
    protocol: IpProtocol,
    payload_len: usize,
    fill: impl FnOnce(&mut [u8]),
) -> Vec<u8> {
    let repr = Ipv4Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: protocol,
        payload_len,
        hop_limit: 64,
    };
    let mut frame = ethernet(
        HOST_MAC,
        FIRMWARE_MAC,
        EthernetProtocol::Ipv4,
        repr.buffer_len() + payload_len,
    );
    let mut packet = Ipv4Packet::new_unchecked(&mut frame[14..]);
    repr.emit(&mut packet, &ChecksumCapabilities::default());
    fill(packet.payload_mut());
    frame
}

/// An ICMP echo request from the host to the firmware.
pub fn echo_request(ident: u16, seq_no: u16, data: &[u8]) -> Vec<u8> {
    echo_request_between(HOST_IP, FIRMWARE_IP, ident, seq_no, data)
}

/// An ICMP echo request from `src` to the firmware at `dst`, in a frame
/// from the host's station address (a router's, when `src` is off the
/// subnet).
pub fn echo_request_between(
    src: Ipv4Address,
    dst: Ipv4Address,
    ident: u16,
    seq_no: u16,
    data: &[u8],
) -> Vec<u8> {
    let repr = Icmpv4Repr::EchoRequest {
        ident,
        seq_no,
        data,
    };
    ipv4(src, dst, IpProtocol::Icmp, repr.buffer_len(), |payload| {
        repr.emit(
            &mut Icmpv4Packet::new_unchecked(payload),
            &ChecksumCapabilities::default(),
        );
    })
}

/// A UDP datagram from the host's `src_port` to the firmware's `dst_port`.
pub fn udp(src_port: u16, dst_port: u16, data: &[u8]) -> Vec<u8> {
    udp_to(FIRMWARE_IP, src_port, dst_port, data)
}

/// A UDP datagram from the host's `src_port` to `dst_port` at `dst`, in
/// a frame to the firmware's station address.
pub fn udp_to(dst: Ipv4Address, src_port: u16, dst_port: u16, data: &[u8]) -> Vec<u8> {
    let repr = UdpRepr { src_port, dst_port };
    ipv4(
        HOST_IP,
        dst,
        IpProtocol::Udp,
        repr.header_len() + data.len(),
        |payload| {
            repr.emit(
                &mut UdpPacket::new_unchecked(payload),
                &IpAddress::Ipv4(HOST_IP),
                &IpAddress::Ipv4(dst),
                data.len(),
                |out| out.copy_from_slice(data),
                &ChecksumCapabilities::default(),
            );
        },
    )
}

/// The Ethernet header of a frame the firmware sent, and its payload.
pub fn parse_ethernet(frame: &[u8]) -> (EthernetRepr, &[u8]) {
    let frame = EthernetFrame::new_checked(frame).expect("an Ethernet frame");
    let repr = EthernetRepr::parse(&frame).expect("a valid Ethernet header");
    let payload = &frame.into_inner()[14..];
    (repr, payload)
}

/// The ARP packet in a frame the firmware sent.
pub fn parse_arp(frame: &[u8]) -> (EthernetRepr, ArpRepr) {
    let (ethernet, payload) = parse_ethernet(frame);
    assert_eq!(ethernet.ethertype, EthernetProtocol::Arp);
    let arp = ArpRepr::parse(&ArpPacket::new_checked(payload).expect("an ARP packet"))
        .expect("a valid ARP packet");
    (ethernet, arp)
}

/// The IPv4 header and payload of a frame the firmware sent, checksums checked.
pub fn parse_ipv4(frame: &[u8]) -> (EthernetRepr, Ipv4Repr, Vec<u8>) {
    let (ethernet, payload) = parse_ethernet(frame);
    assert_eq!(ethernet.ethertype, EthernetProtocol::Ipv4);
    let packet = Ipv4Packet::new_checked(payload).expect("an IPv4 packet");
    let repr = Ipv4Repr::parse(&packet, &ChecksumCapabilities::default())
        .expect("a valid IPv4 header and checksum");
    (
        ethernet,
        repr,
        packet.payload()[..repr.payload_len].to_vec(),
    )
}

/// The ICMP message of a frame the firmware sent: echo reply ident, sequence and data.
pub fn parse_echo_reply(frame: &[u8]) -> (u16, u16, Vec<u8>) {
    let (_, ip, payload) = parse_ipv4(frame);
    assert_eq!(ip.next_header, IpProtocol::Icmp);
    let packet = Icmpv4Packet::new_checked(&payload[..]).expect("an ICMP packet");
    match Icmpv4Repr::parse(&packet, &ChecksumCapabilities::default()).expect("valid ICMP") {
        Icmpv4Repr::EchoReply {
            ident,
            seq_no,
            data,
        } => (ident, seq_no, data.to_vec()),
        other => panic!("expected an echo reply, got {other:?}"),
    }
}

/// The UDP ports and data of a frame the firmware sent, checksum checked.
pub fn parse_udp(frame: &[u8]) -> (EthernetRepr, Ipv4Repr, UdpRepr, Vec<u8>) {
    let (ethernet, ip, payload) = parse_ipv4(frame);
    assert_eq!(ip.next_header, IpProtocol::Udp);
    let packet = UdpPacket::new_checked(&payload[..]).expect("a UDP datagram");
    let repr = UdpRepr::parse(
        &packet,
        &IpAddress::Ipv4(ip.src_addr),
        &IpAddress::Ipv4(ip.dst_addr),
        &ChecksumCapabilities::default(),
    )
    .expect("a valid UDP header and checksum");
    (ethernet, ip, repr, packet.payload().to_vec())
}

/// The firmware's own switch (its switch ID, four ports) with one host on
/// port 0, managed by the firmware on `MANAGER`: enumerated, then what
/// the test adds after it.
const FIRMWARE_SWITCH_WITH_HOST: &str = r#"
[scenario]
name = "firmware-switch-with-host"
title = "the firmware's switch with a host"

[fabric]
manager = "MANAGER"
vendor_id = 0x1d1d
upstream_device_id = 0x0001
downstream_device_id = 0x0002
num_vfs = 0

[[switch]]
name = "s0"
id = 0x0257_4546_5401
ports = 4
roles = { "0" = "host" }

[[host]]
name = "host1"
slots = 4

[[link]]
ends = ["host1", "s0.0"]

[[step]]
do = "enumerate"
"#;

/// [`FIRMWARE_SWITCH_WITH_HOST`] with the firmware on `core` as manager
/// and the scenario lines `more` (endpoints and their links) added.
pub fn firmware_switch_with_host(core: FirmwareCore, more: &str) -> Scenario {
    let text = FIRMWARE_SWITCH_WITH_HOST.replace("MANAGER", &format!("firmware-{core}")) + more;
    Scenario::parse(&text, "firmware_support", ".".as_ref()).expect("the scenario is valid")
}

/// Runs `board` while `go_on` holds, for at most `ticks` of its clock,
/// whatever the firmware does meanwhile (a reset, a start printing at the
/// line's pace).
pub fn run_while(board: &mut IssBoard, ticks: u64, go_on: impl Fn(&IssBoard) -> bool) {
    let end = board.ticks() + ticks;
    while go_on(board) && board.ticks() < end {
        let steps = (end - board.ticks()).min(CPU_CLOCK_HZ / 1_000);
        if board.run(steps) == Activity::Waiting {
            board.skip_to_alarm();
        }
    }
}
