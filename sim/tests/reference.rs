//! The reference experiment end to end: what shared/REFERENCE.md describes
//! must happen, with numbers inside what the links allow.

use weft_pcie::link::{max_payload_throughput, TlpKind};
use weft_pcie::split::PayloadSize;
use weft_sim::reference::{run, ReferenceConfig, LINK};

#[test]
fn reference_experiment_runs_end_to_end() {
    let report = run(ReferenceConfig {
        copy_bytes: 1 << 20,
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
    // A 1 MiB copy runs below the link's MPS-256 budget and not far from it
    // (the copy's start and finish cost a few microseconds).
    let budget =
        max_payload_throughput(LINK, PayloadSize::B256, TlpKind::MemWrite64).with_link_overhead;
    for rate in [report.p2p_host1, report.p2p_host2] {
        assert!(rate <= budget, "{rate} exceeds the link budget {budget}");
        assert!(
            rate > 0.8 * budget,
            "{rate} is far below the link budget {budget}"
        );
    }
    assert_eq!(report.trees.len(), 2);
}
