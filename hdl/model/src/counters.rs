//! Per-port traffic and drop counters, as the data plane's CSRs expose them.

use std::collections::BTreeMap;

use weft_pcie::tlp::FlowControlClass;
use weft_regs::csr::counter;

use crate::isolation::DropReason;

/// TLPs and bytes of one direction, by flow-control class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Posted TLPs.
    pub posted: u64,
    /// Non-posted TLPs.
    pub non_posted: u64,
    /// Completions.
    pub completions: u64,
    /// Bytes of all TLPs, as on the wire (prefixes, header, payload, digest).
    pub bytes: u64,
}

impl Traffic {
    /// Counts one TLP.
    pub fn count(&mut self, class: FlowControlClass, wire_bytes: usize) {
        match class {
            FlowControlClass::Posted => self.posted += 1,
            FlowControlClass::NonPosted => self.non_posted += 1,
            FlowControlClass::Completion => self.completions += 1,
        }
        self.bytes += wire_bytes as u64;
    }

    /// TLPs of every class.
    pub fn tlps(&self) -> u64 {
        self.posted + self.non_posted + self.completions
    }
}

/// Everything counted for one port.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// TLPs received on the port (malformed ones only under drops).
    pub ingress: Traffic,
    /// TLPs sent out of the port.
    pub egress: Traffic,
    /// TLPs dropped at this port's ingress or egress, by reason.
    pub drops: BTreeMap<DropReason, u64>,
    /// Cycles the egress had a beat to send and the link partner could not
    /// take it. The transaction-level switch never waits for a link
    /// partner, so it leaves this 0; a cycle-level switch counts it.
    pub stall_cycles: u64,
}

impl PortCounters {
    /// Counts one dropped TLP.
    pub fn drop(&mut self, reason: DropReason) {
        *self.drops.entry(reason).or_default() += 1;
    }

    /// Drops counted for one reason.
    pub fn drops_for(&self, reason: DropReason) -> u64 {
        self.drops.get(&reason).copied().unwrap_or(0)
    }

    /// The count of entry `entry` of `weft_regs::csr::counter`, in its
    /// entry order: traffic by direction and class, bytes, stall cycles,
    /// then one drop counter per reason in [`DropReason::ALL`] order.
    /// `None` beyond the last entry.
    pub fn entry(&self, entry: u32) -> Option<u64> {
        Some(match entry {
            counter::TLPS_IN_POSTED => self.ingress.posted,
            counter::TLPS_IN_NON_POSTED => self.ingress.non_posted,
            counter::TLPS_IN_COMPLETION => self.ingress.completions,
            counter::BYTES_IN => self.ingress.bytes,
            counter::TLPS_OUT_POSTED => self.egress.posted,
            counter::TLPS_OUT_NON_POSTED => self.egress.non_posted,
            counter::TLPS_OUT_COMPLETION => self.egress.completions,
            counter::BYTES_OUT => self.egress.bytes,
            counter::STALL_CYCLES => self.stall_cycles,
            drop => self
                .drops_for(*DropReason::ALL.get(drop.checked_sub(counter::FIRST_DROP)? as usize)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_follow_the_register_map_and_end_with_it() {
        let mut counters = PortCounters {
            stall_cycles: 7,
            ..PortCounters::default()
        };
        counters.drop(DropReason::UnknownFunction);
        counters.egress.count(FlowControlClass::NonPosted, 24);
        assert_eq!(counters.entry(counter::STALL_CYCLES), Some(7));
        assert_eq!(counters.entry(counter::TLPS_OUT_NON_POSTED), Some(1));
        assert_eq!(counters.entry(counter::BYTES_OUT), Some(24));
        let last = counter::NAMES.len() as u32 - 1;
        assert_eq!(counter::NAMES[last as usize].name, "DROP_UNKNOWN_FUNCTION");
        assert_eq!(counters.entry(last), Some(1));
        assert_eq!(counters.entry(last + 1), None);
    }
}
