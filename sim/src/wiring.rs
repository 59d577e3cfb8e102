//! What is connected to what: hosts and endpoints on switch ports, fabric
//! links between switch ports, and the link model of each direction.
//!
//! A [`Place`] is a port of one of the fabric's switches. Behind it sits a
//! node (a host's root port or an endpoint) or, through a fabric link,
//! another switch's port. Each direction of every link is its own
//! [`LinkDirection`], so bandwidth, latency and ordering come from the link
//! model wherever a TLP travels. `Wiring::carry` puts a TLP on a link and
//! says when and where it arrives; the caller decides what happens then.

use std::collections::BTreeMap;
use std::time::Duration;

use weft_devices::Device;
use weft_model::Packet;

use crate::host::Host;
use crate::link::{Credits, LinkConfig, LinkDirection, Picoseconds};

/// A port of one of the fabric's switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    /// The switch's index in the simulated fabric (0: the manager's own).
    pub switch: usize,
    /// The port of that switch.
    pub port: u8,
}

impl Place {
    /// Port `port` of switch `switch`.
    pub const fn new(switch: usize, port: u8) -> Self {
        Place { switch, port }
    }
}

/// What sits behind a port, at the end of its link.
pub(crate) enum Node {
    /// A host's root port.
    Host(Box<Host>),
    /// An endpoint.
    Device(Box<dyn Device>),
}

/// Which way a TLP leaves a place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Way {
    /// From the node behind the port into the switch.
    Up,
    /// Out of the switch's port onto its link.
    Down,
}

/// Where a TLP put on a link arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// At the ingress of a switch port.
    Switch(Place),
    /// At the node behind a port.
    Node(Place),
}

/// The nodes, the fabric links and every link direction.
#[derive(Default)]
pub(crate) struct Wiring {
    /// The node behind each place that has one.
    pub(crate) nodes: BTreeMap<Place, Node>,
    /// Both ends of every fabric link: each place to the one it is cabled to.
    cables: BTreeMap<Place, Place>,
    /// Per place: [`Way::Up`] from its node (none for a fabric port),
    /// [`Way::Down`] out of its switch (towards the node or the cabled port).
    links: BTreeMap<(Place, Way), LinkDirection>,
}

fn to_ps(time: Duration) -> Picoseconds {
    time.as_nanos() as Picoseconds * 1000
}

fn from_ps(ps: Picoseconds) -> Duration {
    Duration::from_nanos(ps / 1000)
}

impl Wiring {
    /// Puts `node` behind `place` over a link of shape `link`.
    pub(crate) fn attach(&mut self, place: Place, node: Node, link: LinkConfig) {
        self.nodes.insert(place, node);
        for way in [Way::Up, Way::Down] {
            self.links
                .insert((place, way), LinkDirection::new(link, Credits::INFINITE));
        }
    }

    /// Cables `a` to `b` with a fabric link of shape `link`.
    pub(crate) fn cable(&mut self, a: Place, b: Place, link: LinkConfig) {
        self.cables.insert(a, b);
        self.cables.insert(b, a);
        for place in [a, b] {
            self.links.insert(
                (place, Way::Down),
                LinkDirection::new(link, Credits::INFINITE),
            );
        }
    }

    /// The shape of the link out of `place`, if anything is wired there.
    pub(crate) fn link_config(&self, place: Place) -> Option<LinkConfig> {
        self.links
            .get(&(place, Way::Down))
            .map(LinkDirection::config)
    }

    /// The port `place` is cabled to, if it is a fabric port.
    pub(crate) fn cabled_to(&self, place: Place) -> Option<Place> {
        self.cables.get(&place).copied()
    }

    /// Sends `packet` from `place` the way `way` at `at`: returns when it
    /// arrives and where, or `None` when nothing is wired there.
    pub(crate) fn carry(
        &mut self,
        place: Place,
        way: Way,
        packet: &Packet,
        at: Duration,
    ) -> Option<(Duration, End)> {
        let end = match way {
            Way::Up => End::Switch(place),
            Way::Down => match self.cabled_to(place) {
                Some(far) => End::Switch(far),
                None => End::Node(place),
            },
        };
        let link = self.links.get_mut(&(place, way))?;
        let arrival = match link.send(to_ps(at), packet) {
            Ok(arrival) => from_ps(arrival),
            // Infinite credits: a link never refuses.
            Err(_) => at,
        };
        Some((arrival, end))
    }
}
