//! Per-port throughput from two readings of the port's counters.

use std::time::Duration;

use serde::Serialize;
use weft_proto::{CounterKind, PortCounters, PortIndex};

/// The kinds whose sum is a port's drop count: every reason the switch
/// discards a TLP, each once (the isolation checks' own kinds are parts of
/// `DroppedIsolation`).
const DROPS: [CounterKind; 9] = [
    CounterKind::DroppedNoRoute,
    CounterKind::DroppedIsolation,
    CounterKind::DroppedMalformed,
    CounterKind::DroppedPoisoned,
    CounterKind::DroppedPortDisabled,
    CounterKind::DroppedUnsupportedType,
    CounterKind::DroppedRoutesToIngress,
    CounterKind::DroppedUnexpectedCompletion,
    CounterKind::DroppedUnknownFunction,
];

/// A port's traffic per second between two readings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PortRates {
    /// The port.
    pub port: PortIndex,
    /// TLPs received per second.
    pub rx_tlps: f64,
    /// TLPs sent per second.
    pub tx_tlps: f64,
    /// Payload bytes received per second.
    pub rx_bytes: f64,
    /// Payload bytes sent per second.
    pub tx_bytes: f64,
    /// Bytes received per second as on the wire (headers and all).
    pub rx_wire_bytes: f64,
    /// Bytes sent per second as on the wire.
    pub tx_wire_bytes: f64,
    /// TLPs dropped per second, for any reason.
    pub dropped: f64,
}

/// The rates between `before` and `after`, read `elapsed` apart. A counter
/// that went down (it was cleared in between) counts from zero.
pub fn rates(before: &PortCounters, after: &PortCounters, elapsed: Duration) -> PortRates {
    let seconds = elapsed.as_secs_f64().max(1e-9);
    let delta = |kind: CounterKind| {
        let now = value(after, kind);
        let then = value(before, kind);
        let grown = if now >= then { now - then } else { now };
        grown as f64 / seconds
    };
    PortRates {
        port: after.port,
        rx_tlps: delta(CounterKind::RxTlps),
        tx_tlps: delta(CounterKind::TxTlps),
        rx_bytes: delta(CounterKind::RxPayloadBytes),
        tx_bytes: delta(CounterKind::TxPayloadBytes),
        rx_wire_bytes: delta(CounterKind::RxWireBytes),
        tx_wire_bytes: delta(CounterKind::TxWireBytes),
        dropped: DROPS.iter().map(|k| delta(*k)).sum(),
    }
}

fn value(counters: &PortCounters, kind: CounterKind) -> u64 {
    counters
        .values
        .iter()
        .find(|c| c.kind == kind)
        .map_or(0, |c| c.value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_proto::heapless::Vec;
    use weft_proto::CounterValue;

    fn reading(pairs: &[(CounterKind, u64)]) -> PortCounters {
        let mut values = Vec::new();
        for &(kind, value) in pairs {
            values.push(CounterValue { kind, value }).expect("room");
        }
        PortCounters {
            port: PortIndex(3),
            values,
        }
    }

    #[test]
    fn rates_are_growth_over_time_and_drops_add_up() {
        let before = reading(&[
            (CounterKind::RxPayloadBytes, 1_000),
            (CounterKind::DroppedNoRoute, 1),
        ]);
        let after = reading(&[
            (CounterKind::RxPayloadBytes, 5_000),
            (CounterKind::DroppedNoRoute, 3),
            (CounterKind::DroppedIsolation, 2),
        ]);
        let r = rates(&before, &after, Duration::from_millis(500));
        assert_eq!(r.port, PortIndex(3));
        assert_eq!(r.rx_bytes, 8_000.0);
        assert_eq!(r.dropped, 8.0);
        assert_eq!(r.tx_tlps, 0.0);
    }

    #[test]
    fn a_cleared_counter_counts_from_zero() {
        let before = reading(&[(CounterKind::RxTlps, 900)]);
        let after = reading(&[(CounterKind::RxTlps, 10)]);
        assert_eq!(rates(&before, &after, Duration::from_secs(1)).rx_tlps, 10.0);
    }
}
