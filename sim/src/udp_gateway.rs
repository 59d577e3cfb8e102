//! `weft-sim firmware --udp`: the firmware's management port reached
//! through a localhost UDP port, without a TAP interface or privileges.
//!
//! The gateway stands in for a host on the firmware's subnet (the
//! subnet's first free address, with a locally administered station
//! address): a datagram a client sends to the gateway's localhost port
//! becomes an Ethernet frame from that host, with the client's port as
//! source port, to the firmware's management port; the firmware's UDP
//! answers to that host go back to the client's port on 127.0.0.1; its
//! ARP requests for the host are answered by the gateway (RFC 826). ARP
//! and IPv4 are built and read with smoltcp's wire module.

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};

use smoltcp::phy::ChecksumCapabilities;
use smoltcp::wire::{
    ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol,
    EthernetRepr, IpAddress, IpProtocol, Ipv4Address, Ipv4Cidr, Ipv4Packet, Ipv4Repr, UdpPacket,
    UdpRepr,
};
use weft_proto::{MANAGEMENT_UDP_PORT, MAX_DATAGRAM};

/// The station address the gateway's host uses: locally administered.
pub const HOST_MAC: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0x01]);

/// Why the gateway could not start.
#[derive(Debug)]
pub enum GatewayError {
    /// Only 127.0.0.1 is served: the firmware's port is not exposed beyond this machine.
    NotLocalhost(SocketAddr),
    /// The UDP port could not be opened.
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// The firmware's subnet has no second address for the gateway's host.
    NoRoomOnSubnet(Ipv4Cidr),
}

impl fmt::Display for GatewayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GatewayError::NotLocalhost(addr) => write!(
                f,
                "{addr} is not on 127.0.0.1; the gateway listens on localhost only \
                 (use --udp 127.0.0.1:PORT)"
            ),
            GatewayError::Bind { addr, source } => write!(
                f,
                "cannot listen on udp {addr}: {source} (choose another port with --udp 127.0.0.1:PORT)"
            ),
            GatewayError::NoRoomOnSubnet(cidr) => write!(
                f,
                "the firmware's subnet {cidr} has no other address for the gateway; give the \
                 firmware a wider prefix with --ip"
            ),
        }
    }
}

impl std::error::Error for GatewayError {}

/// The host side of the firmware's management Ethernet, serving a localhost UDP port.
#[derive(Debug)]
pub struct UdpGateway {
    socket: UdpSocket,
    firmware: Ipv4Address,
    host: Ipv4Address,
}

impl UdpGateway {
    /// Listens on `listen` (on 127.0.0.1) for clients of the firmware at `firmware`.
    pub fn open(listen: SocketAddr, firmware: Ipv4Cidr) -> Result<UdpGateway, GatewayError> {
        if listen.ip() != Ipv4Addr::LOCALHOST {
            return Err(GatewayError::NotLocalhost(listen));
        }
        let host = host_address(firmware).ok_or(GatewayError::NoRoomOnSubnet(firmware))?;
        let socket = UdpSocket::bind(listen).map_err(|source| GatewayError::Bind {
            addr: listen,
            source,
        })?;
        Ok(UdpGateway {
            socket,
            firmware: firmware.address(),
            host,
        })
    }

    /// The address clients send to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// The address of the host the gateway stands in for.
    pub fn host(&self) -> Ipv4Address {
        self.host
    }

    /// A second handle on the socket, for a thread that waits for clients.
    pub fn listener(&self) -> io::Result<UdpSocket> {
        self.socket.try_clone()
    }

    /// Waits on `listener` for a client's datagram.
    pub fn next_datagram(listener: &UdpSocket) -> io::Result<(SocketAddr, Vec<u8>)> {
        let mut datagram = vec![0; MAX_DATAGRAM + 1];
        loop {
            match listener.recv_from(&mut datagram) {
                Ok((len, from)) => {
                    datagram.truncate(len);
                    return Ok((from, datagram));
                }
                // An ICMP port unreachable from an earlier answer's client.
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The frame carrying a client's `datagram` to the firmware's management
    /// port at `station`, from the client's port on the gateway's host.
    pub fn frame_for(&self, from: SocketAddr, datagram: &[u8], station: [u8; 6]) -> Vec<u8> {
        let udp = UdpRepr {
            src_port: from.port(),
            dst_port: MANAGEMENT_UDP_PORT,
        };
        let ip = Ipv4Repr {
            src_addr: self.host,
            dst_addr: self.firmware,
            next_header: IpProtocol::Udp,
            payload_len: udp.header_len() + datagram.len(),
            hop_limit: 64,
        };
        let mut frame = ethernet(
            EthernetAddress(station),
            EthernetProtocol::Ipv4,
            ip.buffer_len() + ip.payload_len,
        );
        let mut packet = Ipv4Packet::new_unchecked(&mut frame[ETHERNET_HEADER..]);
        ip.emit(&mut packet, &ChecksumCapabilities::default());
        udp.emit(
            &mut UdpPacket::new_unchecked(packet.payload_mut()),
            &IpAddress::Ipv4(self.host),
            &IpAddress::Ipv4(self.firmware),
            datagram.len(),
            |payload| payload.copy_from_slice(datagram),
            &ChecksumCapabilities::default(),
        );
        frame
    }

    /// Takes a frame the firmware sent: an answer to a client goes to the
    /// client; an ARP request for the gateway's host is answered with the
    /// returned frame, for the firmware's MAC; anything else is dropped.
    pub fn take_frame(&self, frame: &[u8]) -> io::Result<Option<Vec<u8>>> {
        let Ok(ethernet_frame) = EthernetFrame::new_checked(frame) else {
            return Ok(None);
        };
        let Ok(ethernet_repr) = EthernetRepr::parse(&ethernet_frame) else {
            return Ok(None);
        };
        let payload = ethernet_frame.payload();
        match ethernet_repr.ethertype {
            EthernetProtocol::Arp => Ok(self.arp_reply(payload)),
            EthernetProtocol::Ipv4 => {
                self.forward_answer(payload)?;
                Ok(None)
            }
            _ => Ok(None),
        }
    }

    /// The reply to an ARP request for the gateway's host, if `packet` is one.
    fn arp_reply(&self, packet: &[u8]) -> Option<Vec<u8>> {
        let packet = ArpPacket::new_checked(packet).ok()?;
        let ArpRepr::EthernetIpv4 {
            operation: ArpOperation::Request,
            source_hardware_addr,
            source_protocol_addr,
            target_protocol_addr,
            ..
        } = ArpRepr::parse(&packet).ok()?
        else {
            return None;
        };
        if target_protocol_addr != self.host {
            return None;
        }
        let reply = ArpRepr::EthernetIpv4 {
            operation: ArpOperation::Reply,
            source_hardware_addr: HOST_MAC,
            source_protocol_addr: self.host,
            target_hardware_addr: source_hardware_addr,
            target_protocol_addr: source_protocol_addr,
        };
        let mut frame = ethernet(
            source_hardware_addr,
            EthernetProtocol::Arp,
            reply.buffer_len(),
        );
        reply.emit(&mut ArpPacket::new_unchecked(&mut frame[ETHERNET_HEADER..]));
        Some(frame)
    }

    /// Sends the payload of a UDP datagram from the firmware's management
    /// port to the gateway's host on to the client's port on 127.0.0.1.
    fn forward_answer(&self, packet: &[u8]) -> io::Result<()> {
        let checksums = ChecksumCapabilities::default();
        let Ok(packet) = Ipv4Packet::new_checked(packet) else {
            return Ok(());
        };
        let Ok(ip) = Ipv4Repr::parse(&packet, &checksums) else {
            return Ok(());
        };
        if ip.next_header != IpProtocol::Udp || ip.dst_addr != self.host {
            return Ok(());
        }
        let Ok(datagram) = UdpPacket::new_checked(&packet.payload()[..ip.payload_len]) else {
            return Ok(());
        };
        let from = IpAddress::Ipv4(ip.src_addr);
        let to = IpAddress::Ipv4(ip.dst_addr);
        let Ok(udp) = UdpRepr::parse(&datagram, &from, &to, &checksums) else {
            return Ok(());
        };
        if udp.src_port != MANAGEMENT_UDP_PORT {
            return Ok(());
        }
        let client = SocketAddrV4::new(Ipv4Addr::LOCALHOST, udp.dst_port);
        // A client that has gone is the client's loss, as on a network.
        let _ = self.socket.send_to(datagram.payload(), client);
        Ok(())
    }
}

/// Bytes of an Ethernet header.
const ETHERNET_HEADER: usize = 14;

/// An Ethernet frame from the gateway's host to `dst` with room for `payload_len` bytes.
fn ethernet(dst: EthernetAddress, ethertype: EthernetProtocol, payload_len: usize) -> Vec<u8> {
    let mut frame = vec![0; ETHERNET_HEADER + payload_len];
    EthernetRepr {
        src_addr: HOST_MAC,
        dst_addr: dst,
        ethertype,
    }
    .emit(&mut EthernetFrame::new_unchecked(&mut frame[..]));
    frame
}

/// The subnet's first host address that is not the firmware's.
fn host_address(firmware: Ipv4Cidr) -> Option<Ipv4Address> {
    let network = u32::from(firmware.network().address());
    let size = 1u64 << (32 - u32::from(firmware.prefix_len()));
    // Without a network and a broadcast address a subnet needs at least 4.
    (1..size.checked_sub(1)?)
        .map(|offset| Ipv4Address::from(network + offset as u32))
        .find(|&candidate| candidate != firmware.address())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_takes_the_first_free_address_of_the_subnet() {
        let cidr = |a, b, c, d, len| Ipv4Cidr::new(Ipv4Address::new(a, b, c, d), len);
        assert_eq!(
            host_address(cidr(192, 168, 70, 2, 24)),
            Some(Ipv4Address::new(192, 168, 70, 1))
        );
        assert_eq!(
            host_address(cidr(10, 0, 0, 1, 8)),
            Some(Ipv4Address::new(10, 0, 0, 2))
        );
        assert_eq!(
            host_address(cidr(10, 0, 0, 1, 30)),
            Some(Ipv4Address::new(10, 0, 0, 2))
        );
        assert_eq!(host_address(cidr(10, 0, 0, 1, 31)), None);
        assert_eq!(host_address(cidr(10, 0, 0, 1, 32)), None);
    }
}
