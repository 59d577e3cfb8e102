//! The management port's IPv4 address: a static one from the
//! configuration, or one leased by DHCP (RFC 2131).
//!
//! The configuration is the console's `ip` command ([`crate::console`]):
//! `ip a.b.c.d/prefix` sets a static address, `ip dhcp` asks a DHCP
//! server for one. Until either is typed the address is static, weft-proto's
//! default ([`crate::DEFAULT_ADDRESS`]), so a board fresh from the factory
//! is found at a known address on a bench link with no server to ask. The
//! choice lasts until the next restart, as the console's other settings
//! besides the key do.
//!
//! DHCP is smoltcp's client socket, which runs inside the interface's
//! poll: discovering, requesting and renewing happen as the main loop
//! polls, with the socket's retry times among the deadlines the loop sleeps
//! towards, so no part of the loop waits for a server and the hosts'
//! configuration requests are answered meanwhile. [`Addressing::poll`]
//! applies what the socket found after each poll: on a lease the leased
//! address and the router (a default route), on the loss of one
//! (expired, refused or not renewed) no address and no route, while the
//! socket goes on asking.

use smoltcp::iface::{Interface, SocketHandle, SocketSet};
use smoltcp::socket::dhcpv4;
use smoltcp::wire::{IpCidr, Ipv4Address, Ipv4Cidr};

/// Where the management port's address comes from.
#[derive(Clone, Copy)]
pub enum AddressMode {
    /// This address and subnet.
    Static(Ipv4Cidr),
    /// A DHCP server's lease.
    Dhcp,
}

/// What changed in the address, for the console.
pub enum Change {
    /// A DHCP server leased `address`, with `router` as the default route.
    Leased {
        /// The leased address and subnet.
        address: Ipv4Cidr,
        /// The router the server named, if any.
        router: Option<Ipv4Address>,
        /// The server that leased it.
        server: Ipv4Address,
    },
    /// The lease ended without a renewal; the port has no address until
    /// the next lease.
    Lost,
}

/// The management port's address mode, and the DHCP client while it asks or holds a lease.
pub struct Addressing {
    dhcp: Option<SocketHandle>,
    /// Whether the DHCP client's address is on the interface.
    leased: bool,
}

impl Default for Addressing {
    fn default() -> Self {
        Self::new()
    }
}

impl Addressing {
    /// Static addressing with no address applied yet; [`Addressing::set`] applies one.
    pub const fn new() -> Self {
        Addressing {
            dhcp: None,
            leased: false,
        }
    }

    /// Uses `mode` from now on: a static address at once, or a DHCP client
    /// that asks from the next poll on (afresh if one was already asking,
    /// and with the old address dropped until its lease). `sockets` needs
    /// room for the DHCP client's socket.
    pub fn set(&mut self, mode: AddressMode, iface: &mut Interface, sockets: &mut SocketSet<'_>) {
        if let Some(handle) = self.dhcp.take() {
            sockets.remove(handle);
        }
        self.leased = false;
        iface.routes_mut().remove_default_ipv4_route();
        match mode {
            AddressMode::Static(cidr) => set_address(iface, Some(cidr)),
            AddressMode::Dhcp => {
                set_address(iface, None);
                self.dhcp = Some(sockets.add(dhcpv4::Socket::new()));
            }
        }
    }

    /// Applies what the DHCP client found since the last call, if it is
    /// running; call after each poll of the interface.
    pub fn poll(&mut self, iface: &mut Interface, sockets: &mut SocketSet<'_>) -> Option<Change> {
        let handle = self.dhcp?;
        match sockets.get_mut::<dhcpv4::Socket>(handle).poll()? {
            dhcpv4::Event::Configured(config) => {
                set_address(iface, Some(config.address));
                let routes = iface.routes_mut();
                match config.router {
                    // The table holds a default route and one more, so it has room.
                    Some(router) => {
                        let _ = routes.add_default_ipv4_route(router);
                    }
                    None => {
                        routes.remove_default_ipv4_route();
                    }
                }
                self.leased = true;
                Some(Change::Leased {
                    address: config.address,
                    router: config.router,
                    server: config.server.identifier,
                })
            }
            // The client's first event is this one too, before any lease.
            dhcpv4::Event::Deconfigured => {
                set_address(iface, None);
                iface.routes_mut().remove_default_ipv4_route();
                core::mem::take(&mut self.leased).then_some(Change::Lost)
            }
        }
    }
}

/// Makes `cidr` the interface's one address, or leaves it none.
fn set_address(iface: &mut Interface, cidr: Option<Ipv4Cidr>) {
    iface.update_ip_addrs(|addresses| {
        addresses.clear();
        if let Some(cidr) = cidr {
            // The list was just emptied, so one address fits.
            let _ = addresses.push(IpCidr::Ipv4(cidr));
        }
    });
}
