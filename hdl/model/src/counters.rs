//! Per-port traffic and drop counters, as the data plane's CSRs expose them.

use std::collections::BTreeMap;

use weft_pcie::tlp::FlowControlClass;

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
}
