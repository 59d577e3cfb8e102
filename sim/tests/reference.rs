//! The reference experiment end to end: what shared/REFERENCE.md describes
//! must happen, with numbers inside what the links allow.

use std::time::Duration;

use weft_pcie::link::{max_payload_throughput, TlpKind};
use weft_pcie::split::PayloadSize;
use weft_sim::reference::{run, ReferenceConfig, LINK};

#[test]
fn reference_experiment_runs_end_to_end() {
    let report = run(ReferenceConfig {
        copy_bytes: 256 << 10,
        latency_bytes: 64,
    })
    .expect("the experiment completes");
    let outcome = |what: &str| {
        report
            .steps
            .iter()
            .find(|step| step.what.contains(what))
            .map(|step| step.outcome.clone())
            .unwrap_or_else(|| panic!("no step {what:?} in {:#?}", report.steps))
    };
    assert_eq!(
        outcome("enumerates the fabric"),
        "4 GPUs, 1 NVMe PF with 4 VFs"
    );
    assert_eq!(outcome("host 1 boots"), "4 drivers bound");
    assert!(outcome("bind them to host 2").contains("has 2 GPUs"));
    // One VF of the drive on each host, both below the drive's one port.
    for host in ["host 1", "host 2"] {
        assert_eq!(
            outcome(&format!("{host}: bind NVMe VF")),
            "64 KiB written and read back intact"
        );
    }
    // Peer-to-peer stays in the fabric: no copied data crosses a host port.
    assert_eq!(report.p2p_bytes_through_hosts, 0);
    // A 256 KiB copy runs below the link's MPS-256 budget and not far from it
    // (the copy's start and finish cost a few microseconds); both
    // directions at once use both directions of the links.
    let budget =
        max_payload_throughput(LINK, PayloadSize::B256, TlpKind::MemWrite64).with_link_overhead;
    assert_eq!(report.p2p.len(), 2);
    for figures in &report.p2p {
        let (uni, bi) = (figures.unidirectional, figures.bidirectional);
        assert!(uni <= budget, "{uni} exceeds the link budget {budget}");
        assert!(
            uni > 0.8 * budget,
            "{uni} is far below the link budget {budget}"
        );
        assert!(
            bi >= 1.6 * uni && bi <= 2.0 * uni,
            "bidirectional {bi} is not 1.6 to 2 times unidirectional {uni}"
        );
        assert!(
            bi < 2.0 * budget,
            "bidirectional {bi} exceeds twice the link budget {budget}"
        );
        for latency in [figures.peer_read, figures.host_read, figures.peer_write] {
            assert!(
                latency > Duration::ZERO && latency < Duration::from_micros(10),
                "latency {latency:?} of {} is not within (0, 10 µs)",
                figures.host
            );
        }
    }
    // Host 2's GPUs are two fabric links apart, host 1's one.
    assert!(report.p2p[1].peer_read > report.p2p[0].peer_read);
    assert_eq!(report.trees.len(), 2);
}
