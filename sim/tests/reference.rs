//! The reference experiment end to end: what shared/REFERENCE.md describes
//! must happen, with numbers inside what the links allow, and the checks
//! the scenario ends with must hold.

use std::time::Duration;

use weft_pcie::link::{max_payload_throughput, Link, LinkSpeed, LinkWidth, TlpKind};
use weft_pcie::split::PayloadSize;
use weft_sim::scenario::engine::{run, Report, RunError};
use weft_sim::scenario::validate::Action;
use weft_sim::scenario::Scenario;

/// The built-in reference scenario with 256 KiB copies, to run fast.
fn reference() -> Scenario {
    let mut scenario = Scenario::reference();
    for step in &mut scenario.steps {
        if let Action::P2p { copy_bytes, .. } = &mut step.action {
            *copy_bytes = 256 << 10;
        }
    }
    scenario
}

fn outcome<'r>(report: &'r Report, what: &str) -> &'r str {
    report
        .steps
        .iter()
        .find(|step| step.what.contains(what))
        .map(|step| step.outcome.as_str())
        .unwrap_or_else(|| panic!("no step {what:?} in {:#?}", report.steps))
}

#[test]
fn reference_experiment_runs_end_to_end() {
    let report = run(&reference(), &mut |_| {}).expect("the experiment and its checks pass");
    assert_eq!(
        outcome(&report, "enumerates the fabric"),
        "4 GPUs, 1 NVMe PF with 4 VFs"
    );
    assert_eq!(outcome(&report, "host1 boots"), "4 drivers bound");
    // Hot-remove and hot-add, seen by the hosts' hot-plug drivers.
    assert_eq!(
        outcome(&report, "unbind gpu3, gpu4"),
        "host1 released and powered off 2 slots"
    );
    assert_eq!(
        outcome(&report, "bind gpu3, gpu4 to host2"),
        "host2 handled 2 slot events, 2 of 2 present with drivers"
    );
    // One VF of the drive on each host, both below the drive's one port.
    for (host, vf) in [("host1", "nvme.vf1"), ("host2", "nvme.vf2")] {
        assert_eq!(
            outcome(
                &report,
                &format!("{host}: NVMe write + read of 64 KiB on {vf}")
            ),
            "64 KiB written and read back intact"
        );
    }
    // Host 1's stale mapping of GPU 3 reaches nothing: Unsupported Request.
    assert!(outcome(&report, "host1 probes gpu3").ends_with("answered with UR"));
    // Three `sees`, two NVMe checks, the probe, bindings and traffic.
    assert_eq!(report.checks_passed, 8);
    assert!(outcome(&report, "no TLP lost").contains("none lost; 1 dropped"));

    // Peer-to-peer stays in the fabric: no copied data crosses a host port.
    assert!(report.p2p.iter().all(|f| f.bytes_through_hosts == 0));
    // A 256 KiB copy runs below the link's MPS-256 budget and not far from
    // it (the copy's start and finish cost a few microseconds); both
    // directions at once use both directions of the links.
    let link = Link::new(LinkSpeed::Gen3, LinkWidth::X16);
    let budget =
        max_payload_throughput(link, PayloadSize::B256, TlpKind::MemWrite64).with_link_overhead;
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

/// Replaces the `sees` step for `host` after the rebind with `endpoints`.
fn expecting(host: usize, endpoints: &[&str]) -> Result<Report, RunError> {
    let mut scenario = reference();
    let names: Vec<String> = scenario.endpoints.iter().map(|e| e.name.clone()).collect();
    let last = scenario
        .steps
        .iter_mut()
        .rev()
        .find(|s| matches!(s.action, Action::Sees { host: h, .. } if h == host))
        .expect("the scenario checks what each host sees");
    let Action::Sees { targets, .. } = &mut last.action else {
        unreachable!("found as a `sees` step")
    };
    targets.retain(|t| endpoints.contains(&names[t.endpoint].as_str()) && t.vf.is_none());
    run(&scenario, &mut |_| {})
}

#[test]
fn a_host_seeing_other_than_expected_fails_the_run_at_its_line() {
    // Host 2 sees gpu3, gpu4 and nvme.vf2; expecting only gpu3 must fail.
    let err = expecting(1, &["gpu3"]).expect_err("host2 also sees gpu4 and its VF");
    assert!(
        err.why
            .contains("it sees [gpu3, gpu4, nvme.vf2], expected [gpu3]"),
        "{err}"
    );
    let text = weft_sim::scenario::REFERENCE;
    let line = text.lines().nth(err.line - 1).expect("the line exists");
    assert_eq!(line, "[[step]]", "{err}");
    assert!(text
        .lines()
        .skip(err.line)
        .take(3)
        .any(|l| l == "host = \"host2\""));
}
