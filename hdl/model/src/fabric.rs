//! Several switches cabled into one fabric: how a TLP travels from port to
//! port until it leaves the fabric or reaches a management CPU.
//!
//! [`carry`] walks TLPs hop by hop through the switches' ingress and out of
//! the ports they are forwarded to, by these rules:
//!
//! - A TLP leaving a port cabled to another switch enters that switch's
//!   ingress, except a configuration request: a Type 1 request crosses
//!   while it leaves fabric ports (it is routed by bus), and a Type 0
//!   request is for the function on the link, the neighbour's management
//!   function.
//! - A configuration request leaving by any other port is delivered on its
//!   link as [`delivered`] says, and the function there answers it; the
//!   completion enters that port's ingress. A function that sends none (a
//!   hung device) leaves the requester to its completion timeout (PCIe
//!   Base 6.0 §2.8).
//! - Any other TLP leaving by a port with no switch behind it has left the
//!   fabric ([`Cabling::leave`]).
//! - What a switch delivers to its CPU goes to [`Cabling::to_cpu`], except
//!   switch 0's, the management CPU's, which [`carry`] returns.
//!
//! The fabric itself — which port is cabled to which, the functions on the
//! links, and how long each hop takes — is the caller's ([`Cabling`]): the
//! fabric manager's tests and the simulator share these rules and keep
//! their own links.

use std::collections::VecDeque;

use weft_pcie::tlp::{Body, ConfigType};

use crate::packet::Packet;
use crate::switch::Forwarding;
use crate::tables::{Destination, PortRole};

/// A port of one of the fabric's switches: (switch index, port).
pub type Place = (usize, u8);

/// A step of a TLP through the fabric.
#[derive(Clone, Debug)]
pub enum Hop {
    /// Leaves the switch port onto its link.
    Out(Place, Packet),
    /// Enters the ingress of the switch port.
    In(Place, Packet),
}

/// The fabric [`carry`] walks.
pub trait Cabling {
    /// Offers `packet` to the ingress of `place`'s switch port; `None` if
    /// the switch does not take it (no such port, a malformed TLP).
    fn ingress(&mut self, place: Place, packet: &Packet) -> Option<Forwarding>;

    /// The role `place`'s port has in its switch's tables.
    fn role(&self, place: Place) -> Option<PortRole>;

    /// Carries `packet` over the link of `place` if another switch's port
    /// is behind it, and returns that port; `None` if no switch is.
    fn cross(&mut self, place: Place, packet: &Packet) -> Option<Place>;

    /// The completion the function on `place`'s link sends for the
    /// configuration request `packet`, as [`delivered`] made it; `None`
    /// if it sends none (a hung device), which leaves the requester to
    /// its completion timeout (PCIe Base 6.0 §2.8).
    fn answer(&mut self, place: Place, packet: &Packet) -> Option<Packet>;

    /// `packet` left the fabric by `place` to the node on its link.
    fn leave(&mut self, place: Place, packet: Packet);

    /// Switch `switch` (not the manager's, 0) delivered `packet` to its CPU.
    fn to_cpu(&mut self, switch: usize, packet: Packet);
}

/// A configuration request as port `role` delivers it on its link: an
/// endpoint port keeps Type 1 only for a bus of its range past the first
/// (the link's), which the bridges below route; the bridge whose secondary
/// bus is the target's turns Type 1 into Type 0 (PCIe Base 6.0 §7.3.1,
/// §7.3.3). On any other port it is for the function on the link, Type 0.
pub fn delivered(role: Option<PortRole>, mut packet: Packet) -> Packet {
    let first_bus = match role {
        Some(PortRole::Endpoint { buses, .. }) => Some(buses.0),
        _ => None,
    };
    if let Body::Config(request) = &mut packet.header.body {
        if first_bus.is_none_or(|first| request.target.bus() == first) {
            request.config_type = ConfigType::Type0;
        }
    }
    packet
}

/// Carries `first` and everything that follows from it through `cabling`
/// for at most `max_hops` hops (a routing loop ends there); returns what
/// reached switch 0's CPU, in order.
pub fn carry(cabling: &mut impl Cabling, first: Hop, max_hops: usize) -> Vec<Packet> {
    let mut hops = VecDeque::from([first]);
    let mut to_manager = Vec::new();
    for _ in 0..max_hops {
        let Some(hop) = hops.pop_front() else {
            break;
        };
        match hop {
            Hop::In(place, packet) => {
                let Some(forwarding) = cabling.ingress(place, &packet) else {
                    continue;
                };
                for delivery in forwarding.deliveries {
                    match delivery.to {
                        Destination::Cpu if place.0 == 0 => to_manager.push(delivery.packet),
                        Destination::Cpu => cabling.to_cpu(place.0, delivery.packet),
                        Destination::Port(out) => {
                            hops.push_back(Hop::Out((place.0, out.0), delivery.packet))
                        }
                    }
                }
            }
            Hop::Out(place, packet) => {
                let config_type = match packet.header.body {
                    Body::Config(request) => Some(request.config_type),
                    _ => None,
                };
                let routed_on = match config_type {
                    None => true,
                    Some(ConfigType::Type1) => cabling.role(place) == Some(PortRole::Fabric),
                    Some(ConfigType::Type0) => false,
                };
                if routed_on {
                    if let Some(far) = cabling.cross(place, &packet) {
                        hops.push_back(Hop::In(far, packet));
                        continue;
                    }
                }
                if config_type.is_some() {
                    let packet = delivered(cabling.role(place), packet);
                    if let Some(reply) = cabling.answer(place, &packet) {
                        hops.push_back(Hop::In(place, reply));
                    }
                } else {
                    cabling.leave(place, packet);
                }
            }
        }
    }
    to_manager
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_pcie::tlp::{ConfigRequest, Direction, Header, Tag};
    use weft_pcie::Bdf;

    fn type1_to(bus: u8) -> Packet {
        let request = ConfigRequest {
            direction: Direction::Read,
            config_type: ConfigType::Type1,
            requester: Bdf::new(0, 0, 0),
            tag: Tag::from_8bit(1),
            target: Bdf::new(bus, 0, 0),
            register_number: 0,
            extended_register_number: 0,
            first_be: 0xf,
        };
        Packet::new(
            Header {
                digest_present: false,
                poisoned: false,
                body: Body::Config(request),
            },
            Vec::new(),
        )
    }

    fn type_of(packet: &Packet) -> ConfigType {
        match packet.header.body {
            Body::Config(request) => request.config_type,
            _ => panic!("not a configuration request"),
        }
    }

    /// One switch whose ports hand every TLP to the manager's CPU, and a
    /// function on every link that completes with `reply`, or not at all.
    struct OneSwitch {
        reply: Option<Packet>,
        answered: usize,
    }

    impl Cabling for OneSwitch {
        fn ingress(&mut self, place: Place, packet: &Packet) -> Option<Forwarding> {
            Some(Forwarding {
                deliveries: vec![crate::switch::Delivery {
                    to: Destination::Cpu,
                    from: crate::tables::PortIndex(place.1),
                    packet: packet.clone(),
                }],
                dropped: None,
            })
        }

        fn role(&self, _place: Place) -> Option<PortRole> {
            None
        }

        fn cross(&mut self, _place: Place, _packet: &Packet) -> Option<Place> {
            None
        }

        fn answer(&mut self, _place: Place, _packet: &Packet) -> Option<Packet> {
            self.answered += 1;
            self.reply.clone()
        }

        fn leave(&mut self, _place: Place, _packet: Packet) {}

        fn to_cpu(&mut self, _switch: usize, _packet: Packet) {}
    }

    #[test]
    fn a_request_the_function_never_completes_brings_nothing_back() {
        let completion = type1_to(7);
        let mut answering = OneSwitch {
            reply: Some(completion.clone()),
            answered: 0,
        };
        let back = carry(&mut answering, Hop::Out((0, 1), type1_to(2)), 8);
        assert_eq!((back, answering.answered), (vec![completion], 1));
        let mut hung = OneSwitch {
            reply: None,
            answered: 0,
        };
        let back = carry(&mut hung, Hop::Out((0, 1), type1_to(2)), 8);
        assert_eq!((back, hung.answered), (Vec::new(), 1));
    }

    #[test]
    fn only_the_link_bus_of_an_endpoint_port_gets_type_0() {
        let role = Some(PortRole::Endpoint {
            owner: None,
            buses: (5, 9),
        });
        assert_eq!(type_of(&delivered(role, type1_to(5))), ConfigType::Type0);
        for bus in [6, 9] {
            assert_eq!(type_of(&delivered(role, type1_to(bus))), ConfigType::Type1);
        }
        // Any other port's link has one function, its own.
        for role in [None, Some(PortRole::Fabric), Some(PortRole::Disabled)] {
            assert_eq!(type_of(&delivered(role, type1_to(6))), ConfigType::Type0);
        }
    }
}
