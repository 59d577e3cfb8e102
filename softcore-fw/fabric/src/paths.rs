//! Loop-free shortest paths between the weft switches of the fabric.
//!
//! Fabric links route non-hierarchically (DESIGN.md, "Domains and
//! translation"): each switch's bus and address tables send a destination
//! out of one port, so the paths are chosen per destination. For every
//! destination switch, a breadth-first search over the links gives each
//! switch its hop count to it; a switch's next hop is then a neighbour one
//! hop closer. Every hop strictly lowers the distance, so no path loops,
//! and every path is a shortest one by hop count. Among several neighbours
//! one hop closer, the one with the lowest switch ID wins, then (for
//! parallel links) the lowest port index, so the result does not depend on
//! discovery order.

use weft_regs::capacity;
use weft_regs::tables::PortIndex;

use crate::inventory::{FabricSwitch, PortKind, SwitchIndex};
use crate::limits::MAX_SWITCHES;

/// The first hop from every switch to every other, and the hop counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct NextHops {
    /// `hops[from][to]`: the port of `from` that leads towards `to`.
    hops: [[Option<PortIndex>; MAX_SWITCHES]; MAX_SWITCHES],
    /// `distance[from][to]`: links between them; `None` if unreachable.
    distance: [[Option<u8>; MAX_SWITCHES]; MAX_SWITCHES],
}

impl NextHops {
    /// No paths: before discovery.
    pub const EMPTY: NextHops = NextHops {
        hops: [[None; MAX_SWITCHES]; MAX_SWITCHES],
        distance: [[None; MAX_SWITCHES]; MAX_SWITCHES],
    };

    /// The port of `from` a TLP for switch `to` leaves by; `None` for
    /// `from` itself and for unreachable switches.
    pub fn next_hop(&self, from: SwitchIndex, to: SwitchIndex) -> Option<PortIndex> {
        *self.hops.get(usize::from(from.0))?.get(usize::from(to.0))?
    }

    /// Links between `from` and `to` on the chosen path.
    pub fn distance(&self, from: SwitchIndex, to: SwitchIndex) -> Option<u8> {
        *self
            .distance
            .get(usize::from(from.0))?
            .get(usize::from(to.0))?
    }

    /// The switches a TLP from `from` to `to` passes, `from` and `to`
    /// included, and the number of them; `None` if `to` is unreachable.
    pub fn path(
        &self,
        switches: &[FabricSwitch],
        from: SwitchIndex,
        to: SwitchIndex,
    ) -> Option<([SwitchIndex; MAX_SWITCHES], usize)> {
        let mut path = [SwitchIndex::LOCAL; MAX_SWITCHES];
        let mut at = from;
        for (len, slot) in path.iter_mut().enumerate() {
            *slot = at;
            if at == to {
                return Some((path, len + 1));
            }
            let port = self.next_hop(at, to)?;
            at = neighbour(switches, at, port)?.0;
        }
        None
    }
}

/// The switch (and its port) at the other end of `port` of `switch`, if a
/// fabric link is there.
pub fn neighbour(
    switches: &[FabricSwitch],
    switch: SwitchIndex,
    port: PortIndex,
) -> Option<(SwitchIndex, PortIndex)> {
    match switches.get(usize::from(switch.0))?.port(port) {
        PortKind::Fabric { switch_id, port } => switches
            .iter()
            .position(|s| s.id == switch_id)
            .map(|i| (SwitchIndex(i as u8), port)),
        _ => None,
    }
}

/// Computes the next hops between every pair of `switches` over the fabric
/// links their ports record.
pub fn shortest_paths(switches: &[FabricSwitch]) -> NextHops {
    let count = switches.len().min(MAX_SWITCHES);
    let mut result = NextHops::default();
    for to in 0..count {
        // Breadth first from the destination: hop counts towards it.
        let mut distance = [None::<u8>; MAX_SWITCHES];
        let mut queue = [0usize; MAX_SWITCHES];
        let (mut head, mut tail) = (0, 1);
        queue[0] = to;
        distance[to] = Some(0);
        while head < tail {
            let at = queue[head];
            head += 1;
            let here = distance[at].unwrap_or(0);
            for port in 0..capacity::PORTS {
                let Some((next, _)) =
                    neighbour(switches, SwitchIndex(at as u8), PortIndex(port as u8))
                else {
                    continue;
                };
                let next = usize::from(next.0);
                if next < count && distance[next].is_none() {
                    distance[next] = Some(here + 1);
                    queue[tail] = next;
                    tail += 1;
                }
            }
        }
        for from in 0..count {
            result.distance[from][to] = distance[from];
            let Some(here) = distance[from] else {
                continue;
            };
            if here == 0 {
                continue;
            }
            // One hop closer; lowest neighbour switch ID, then lowest port.
            let mut best: Option<(u64, PortIndex)> = None;
            for port in 0..capacity::PORTS {
                let port = PortIndex(port as u8);
                let Some((next, _)) = neighbour(switches, SwitchIndex(from as u8), port) else {
                    continue;
                };
                let next_index = usize::from(next.0);
                if next_index >= count || distance[next_index] != Some(here - 1) {
                    continue;
                }
                let key = (switches[next_index].id, port);
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
            result.hops[from][to] = best.map(|b| b.1);
        }
    }
    result
}
