//! Strategies and helpers shared by the RTL tables' differential tests.
#![allow(dead_code)]

use proptest::prelude::*;

pub mod endpoint;
pub mod tlp;
pub mod top;

/// Where a lookup lands: anywhere near an edge, or near one of a table's entries' start or end.
#[derive(Clone, Debug)]
pub enum Probe {
    /// This address.
    Anywhere(u64),
    /// Entry `e`'s base plus a signed offset.
    NearStart(usize, i64),
    /// Entry `e`'s end plus a signed offset.
    NearEnd(usize, i64),
}

/// Probes biased to entry edges, where first-match and containment bugs live.
pub fn probe(edge_value: impl Strategy<Value = u64> + 'static) -> impl Strategy<Value = Probe> {
    prop_oneof![
        1 => edge_value.prop_map(Probe::Anywhere),
        2 => (any::<usize>(), -0x1100i64..0x1100).prop_map(|(e, d)| Probe::NearStart(e, d)),
        2 => (any::<usize>(), -0x1100i64..0x100).prop_map(|(e, d)| Probe::NearEnd(e, d)),
    ]
}

impl Probe {
    /// The address probed, given the table's (base, size) pairs.
    pub fn address(&self, ranges: &[(u64, u64)]) -> u64 {
        match *self {
            Probe::Anywhere(address) => address,
            Probe::NearStart(entry, delta) => {
                ranges[entry % ranges.len()].0.wrapping_add_signed(delta)
            }
            Probe::NearEnd(entry, delta) => {
                let (base, size) = ranges[entry % ranges.len()];
                base.wrapping_add(size).wrapping_add_signed(delta)
            }
        }
    }
}
