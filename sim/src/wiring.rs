//! What is connected to what: hosts and endpoints on switch ports, fabric
//! links between switch ports, and the link model of each direction.
//!
//! A [`Place`] is a port of one of the fabric's switches. Behind it sits a
//! node (a host's root port or an endpoint) or, through a fabric link,
//! another switch's port. Each direction of every link is its own
//! [`LinkDirection`], so bandwidth, latency and ordering come from the link
//! model wherever a TLP travels.
//!
//! Each direction is a channel: the link and the TLPs waiting for its
//! receiver's credits (PCIe Base 6.0 §2.6.1), in order. A switch port's
//! receiver advertises [`Credits::SWITCH_PORT`], an endpoint's or a root
//! port's [`Credits::ENDPOINT`]. `Wiring::offer` sends a TLP or queues it;
//! the receiver calls `Wiring::release` when it has taken the TLP in, and
//! the credits come back a link latency (plus the receiver's own delay)
//! later, when `Wiring::drain` sends what waited. `Wiring::carry` is the
//! management CPU's synchronous path, which runs while nothing else moves.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use weft_devices::Device;
use weft_model::{Forwarding, Packet};
use weft_pcie::tlp::{Body, FlowControlClass};

use crate::host::Host;
use crate::link::{CreditCost, Credits, LinkConfig, LinkDirection, Picoseconds};
use crate::waveform::{Side, Waveform};

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
    /// An endpoint that has hung: it takes TLPs in and sends nothing
    /// (`World::hang_device`).
    Hung,
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

/// One direction of a link: which place it leaves and which way.
pub(crate) type ChannelId = (Place, Way);

/// One direction of a link and the TLPs waiting for its credits.
pub(crate) struct Channel {
    link: LinkDirection,
    /// TLPs waiting for credits, in the order offered, each with the time
    /// it was ready to leave.
    waiting: VecDeque<(Duration, Packet)>,
    /// How long the receiver keeps a TLP's buffer after taking it in.
    release_delay: Duration,
}

impl Channel {
    fn new(link: LinkConfig, credits: Credits) -> Self {
        Channel {
            link: LinkDirection::new(link, credits),
            waiting: VecDeque::new(),
            release_delay: Duration::ZERO,
        }
    }
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
    channels: BTreeMap<ChannelId, Channel>,
    /// The waveform every TLP put on a wire is recorded in, if one is.
    pub(crate) waveform: Option<Box<Waveform>>,
    /// Per place whose endpoint hangs partway
    /// ([`World::hang_device_after`](crate::world::World::hang_device_after)),
    /// how many more configuration requests it completes.
    hang_after: BTreeMap<Place, u32>,
}

/// The switch ports at the ends of `channel`: the one sending on it (a
/// [`Way::Down`] channel leaves a switch port) and the one receiving
/// (unless a node receives).
fn ports_of(cables: &BTreeMap<Place, Place>, channel: ChannelId) -> [(Side, Option<Place>); 2] {
    let (place, way) = channel;
    match way {
        Way::Up => [(Side::Tx, None), (Side::Rx, Some(place))],
        Way::Down => [
            (Side::Tx, Some(place)),
            (Side::Rx, cables.get(&place).copied()),
        ],
    }
}

/// Records in `waveform` that `packet`, sent on `channel` of `link`,
/// arrives at `arrival`: the switch ports at its ends send and receive
/// it, and their link's credits are taken as it starts on the wire. The
/// links are the one place every TLP passes, so this is the only place
/// TLPs are recorded.
fn record(
    waveform: &mut Waveform,
    cables: &BTreeMap<Place, Place>,
    channel: ChannelId,
    link: &LinkDirection,
    packet: &Packet,
    arrival: Picoseconds,
) {
    let latency = link.config().latency_ps;
    let end = arrival.saturating_sub(latency);
    let start = end.saturating_sub(link.serialization_ps(packet));
    for (side, port) in ports_of(cables, channel) {
        let Some(port) = port else { continue };
        match side {
            Side::Tx => waveform.tlp(port, side, packet, start, end),
            Side::Rx => waveform.tlp(port, side, packet, start + latency, arrival),
        }
    }
}

/// Records in `waveform` that the receiver on `channel` freed the buffer
/// of a TLP of `class` at `freed`, and that the sender has the header
/// credit back `latency` later (the UpdateFC's trip, §2.6.1.2).
fn record_return(
    waveform: &mut Waveform,
    cables: &BTreeMap<Place, Place>,
    channel: ChannelId,
    class: FlowControlClass,
    freed: Picoseconds,
    latency: Picoseconds,
) {
    for (side, port) in ports_of(cables, channel) {
        match (side, port) {
            (Side::Rx, Some(port)) => waveform.credit_returned(port, side, class, freed),
            (Side::Tx, Some(port)) => waveform.credit_returned(port, side, class, freed + latency),
            (_, None) => {}
        }
    }
}

fn to_ps(time: Duration) -> Picoseconds {
    time.as_nanos() as Picoseconds * 1000
}

fn from_ps(ps: Picoseconds) -> Duration {
    Duration::from_nanos(ps / 1000)
}

impl Wiring {
    /// Puts `node` behind `place` over a link of shape `link`: the switch
    /// port receives with a switch port's credits, the node with an
    /// endpoint's.
    pub(crate) fn attach(&mut self, place: Place, node: Node, link: LinkConfig) {
        self.nodes.insert(place, node);
        self.channels
            .insert((place, Way::Up), Channel::new(link, Credits::SWITCH_PORT));
        self.channels
            .insert((place, Way::Down), Channel::new(link, Credits::ENDPOINT));
    }

    /// Makes the endpoint behind `place` complete `requests` more
    /// configuration requests and hang as the next one reaches it
    /// ([`Wiring::take_config_request`]).
    pub(crate) fn hang_after(&mut self, place: Place, requests: u32) {
        self.hang_after.insert(place, requests);
    }

    /// Counts `packet`, arriving at the node behind `place`, against the
    /// configuration requests that node completes before it hangs
    /// ([`Wiring::hang_after`]): the first past them makes it
    /// [`Node::Hung`] before it is handled, so it gets no completion.
    /// Every other TLP passes uncounted.
    pub(crate) fn take_config_request(&mut self, place: Place, packet: &Packet) {
        if !matches!(packet.header.body, Body::Config(_)) {
            return;
        }
        let Some(left) = self.hang_after.get_mut(&place) else {
            return;
        };
        if let Some(fewer) = left.checked_sub(1) {
            *left = fewer;
            return;
        }
        self.hang_after.remove(&place);
        if let Some(node @ Node::Device(_)) = self.nodes.get_mut(&place) {
            *node = Node::Hung;
        }
    }

    /// Cables `a` to `b` with a fabric link of shape `link`.
    pub(crate) fn cable(&mut self, a: Place, b: Place, link: LinkConfig) {
        self.cables.insert(a, b);
        self.cables.insert(b, a);
        for place in [a, b] {
            self.channels
                .insert((place, Way::Down), Channel::new(link, Credits::SWITCH_PORT));
        }
    }

    /// Sets what the receiver of `channel` advertises and how long it keeps
    /// each TLP's buffer; false if nothing is wired there.
    pub(crate) fn set_receiver(
        &mut self,
        channel: ChannelId,
        credits: Credits,
        release_delay: Duration,
    ) -> bool {
        let Some(found) = self.channels.get_mut(&channel) else {
            return false;
        };
        found.link = LinkDirection::new(found.link.config(), credits);
        found.release_delay = release_delay;
        true
    }

    /// Keeps both directions of the link at `place` idle until `until`
    /// (a retrain or a hot reset, [`crate::link_control`]).
    pub(crate) fn hold_link(&mut self, place: Place, until: Duration) {
        for way in [Way::Up, Way::Down] {
            if let Some(channel) = self.channels.get_mut(&(place, way)) {
                channel.link.hold_until(to_ps(until));
            }
        }
        if let Some(far) = self.cabled_to(place) {
            if let Some(channel) = self.channels.get_mut(&(far, Way::Down)) {
                channel.link.hold_until(to_ps(until));
            }
        }
    }

    /// The shape of the link out of `place`, if anything is wired there.
    pub(crate) fn link_config(&self, place: Place) -> Option<LinkConfig> {
        self.channels
            .get(&(place, Way::Down))
            .map(|c| c.link.config())
    }

    /// Where a TLP sent on `channel` arrives, if anything is wired there.
    pub(crate) fn end_of(&self, channel: ChannelId) -> Option<End> {
        let (place, way) = channel;
        if !self.channels.contains_key(&channel) {
            return None;
        }
        Some(match way {
            Way::Up => End::Switch(place),
            Way::Down => match self.cabled_to(place) {
                Some(far) => End::Switch(far),
                None => End::Node(place),
            },
        })
    }

    /// Offers `packet`, ready at `at`, to `channel`: returns it with its
    /// arrival time if it leaves now, or `None` if it waits for credits
    /// (behind any TLP already waiting, so order is kept).
    pub(crate) fn offer(
        &mut self,
        channel: ChannelId,
        packet: Packet,
        at: Duration,
    ) -> Option<(Duration, Packet)> {
        let found = self.channels.get_mut(&channel)?;
        if found.waiting.is_empty() {
            if let Ok(arrival) = found.link.send(to_ps(at), &packet) {
                if let Some(waveform) = self.waveform.as_deref_mut() {
                    record(
                        waveform,
                        &self.cables,
                        channel,
                        &found.link,
                        &packet,
                        arrival,
                    );
                }
                return Some((from_ps(arrival), packet));
            }
        }
        found.waiting.push_back((at, packet));
        None
    }

    /// The receiver of `channel` took in a TLP that cost `cost` at `now`;
    /// returns when the sender sees the credits again.
    pub(crate) fn release(
        &mut self,
        channel: ChannelId,
        now: Duration,
        cost: CreditCost,
    ) -> Option<Duration> {
        let found = self.channels.get_mut(&channel)?;
        let freed = now + found.release_delay;
        found.link.release(to_ps(freed), cost);
        let latency = found.link.config().latency_ps;
        if let Some(waveform) = self.waveform.as_deref_mut() {
            record_return(
                waveform,
                &self.cables,
                channel,
                cost.class,
                to_ps(freed),
                latency,
            );
        }
        Some(freed + from_ps(latency))
    }

    /// Sends, at `now`, the TLPs waiting on `channel` that the credits
    /// returned by then allow, in order; each with its arrival time.
    pub(crate) fn drain(&mut self, channel: ChannelId, now: Duration) -> Vec<(Duration, Packet)> {
        let mut sent = Vec::new();
        let Some(found) = self.channels.get_mut(&channel) else {
            return sent;
        };
        while let Some((ready, packet)) = found.waiting.front() {
            let at = now.max(*ready);
            match found.link.send(to_ps(at), packet) {
                Ok(arrival) => {
                    let (_, packet) = found.waiting.pop_front().expect("checked just above");
                    if let Some(waveform) = self.waveform.as_deref_mut() {
                        record(
                            waveform,
                            &self.cables,
                            channel,
                            &found.link,
                            &packet,
                            arrival,
                        );
                    }
                    sent.push((from_ps(arrival), packet));
                }
                Err(_) => break,
            }
        }
        sent
    }

    /// TLPs waiting for credits on every channel.
    pub(crate) fn waiting(&self) -> usize {
        self.channels.values().map(|c| c.waiting.len()).sum()
    }

    /// Records in the waveform, if one is recorded, that the switch
    /// dropped a TLP that came in on `place` at `at`, when `forwarding`
    /// says it did.
    pub(crate) fn note_forwarding(&mut self, place: Place, at: Duration, forwarding: &Forwarding) {
        if let (Some(waveform), Some(reason)) = (self.waveform.as_deref_mut(), forwarding.dropped) {
            waveform.dropped(place, to_ps(at), reason);
        }
    }

    /// Writes the waveform's changes before `now`, if one is recorded.
    pub(crate) fn advance_waveform(&mut self, now: Duration) {
        if let Some(waveform) = self.waveform.as_deref_mut() {
            waveform.advance(to_ps(now));
        }
    }

    /// The port `place` is cabled to, if it is a fabric port.
    pub(crate) fn cabled_to(&self, place: Place) -> Option<Place> {
        self.cables.get(&place).copied()
    }

    /// Sends `packet` from `place` the way `way` at `at` for the management
    /// CPU's synchronous path: it leaves when credits allow, the receiver
    /// answers it on arrival and frees its buffer then. Returns when it
    /// arrives and where, or `None` when nothing is wired there.
    pub(crate) fn carry(
        &mut self,
        place: Place,
        way: Way,
        packet: &Packet,
        at: Duration,
    ) -> Option<(Duration, End)> {
        let end = self.end_of((place, way))?;
        let channel = self.channels.get_mut(&(place, way))?;
        let arrival = channel.link.send_when_credited(to_ps(at), packet);
        if let Some(waveform) = self.waveform.as_deref_mut() {
            record(
                waveform,
                &self.cables,
                (place, way),
                &channel.link,
                packet,
                arrival,
            );
        }
        let freed = arrival + to_ps(channel.release_delay);
        channel.link.release(freed, CreditCost::of(packet));
        if let Some(waveform) = self.waveform.as_deref_mut() {
            let latency = channel.link.config().latency_ps;
            let class = packet.header.flow_control_class();
            record_return(waveform, &self.cables, (place, way), class, freed, latency);
        }
        Some((from_ps(arrival), end))
    }
}
