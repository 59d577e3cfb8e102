//! The management port's IPv4 address: a static one from the
//! configuration, or one leased by DHCP (RFC 2131).
//!
//! The configuration is the console's `ip` command ([`crate::console`]):
//! `ip a.b.c.d/prefix` sets a static address, `ip a.b.c.d/prefix via
//! g.h.i.j` one with a default gateway, `ip dhcp` asks a DHCP server for
//! one (a `weft_fabric::network_setting::NetworkSetting`). The choice is
//! stored in flash ([`crate::netstore`]) and applied again at each start.
//! Until one is stored the address is static,
//! weft-proto's default ([`crate::DEFAULT_ADDRESS`]) without a gateway, so
//! a board fresh from the factory is found at a known address on a bench
//! link with no server to ask.
//!
//! A static address with a gateway gets a default route through it, so
//! clients beyond the subnet are answered through the router; without one
//! only the subnet is reached. The gateway must be on the address's subnet
//! (smoltcp reaches a router by ARP) and not the address itself.
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
use weft_fabric::network_setting::{NetworkSetting, StaticAddress};

/// The interface's address and subnet for `fixed`.
pub fn cidr(fixed: &StaticAddress) -> Ipv4Cidr {
    // A StaticAddress's prefix is at most 32 bits, as Ipv4Cidr::new needs.
    Ipv4Cidr::new(fixed.address(), fixed.prefix_len())
}

/// A DHCP server's lease as applied: the address and the router, if any.
#[derive(Clone, Copy)]
pub struct Lease {
    /// The leased address and subnet.
    pub address: Ipv4Cidr,
    /// The router the server named, if any.
    pub router: Option<Ipv4Address>,
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
    mode: NetworkSetting,
    dhcp: Option<SocketHandle>,
    /// The DHCP client's lease on the interface.
    lease: Option<Lease>,
}

impl Addressing {
    /// Addressing in `mode`, applied to `iface` as [`Addressing::set`] does.
    pub fn start(mode: NetworkSetting, iface: &mut Interface, sockets: &mut SocketSet<'_>) -> Self {
        let mut addressing = Addressing {
            mode,
            dhcp: None,
            lease: None,
        };
        addressing.set(mode, iface, sockets);
        addressing
    }

    /// The mode in use.
    pub fn mode(&self) -> NetworkSetting {
        self.mode
    }

    /// The DHCP client's lease, while it holds one.
    pub fn lease(&self) -> Option<Lease> {
        self.lease
    }

    /// Uses `mode` from now on: a static address (and a default route
    /// through its gateway) at once, or a DHCP client that asks from the
    /// next poll on (afresh if one was already asking, and with the old
    /// address dropped until its lease). `sockets` needs room for the DHCP
    /// client's socket.
    pub fn set(
        &mut self,
        mode: NetworkSetting,
        iface: &mut Interface,
        sockets: &mut SocketSet<'_>,
    ) {
        if let Some(handle) = self.dhcp.take() {
            sockets.remove(handle);
        }
        self.lease = None;
        self.mode = mode;
        iface.routes_mut().remove_default_ipv4_route();
        match mode {
            NetworkSetting::Static(fixed) => {
                set_address(iface, Some(cidr(&fixed)));
                if let Some(router) = fixed.gateway() {
                    // The table holds a default route and one more, so it has room.
                    let _ = iface.routes_mut().add_default_ipv4_route(router);
                }
            }
            NetworkSetting::Dhcp => {
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
                self.lease = Some(Lease {
                    address: config.address,
                    router: config.router,
                });
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
                self.lease.take().map(|_| Change::Lost)
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
