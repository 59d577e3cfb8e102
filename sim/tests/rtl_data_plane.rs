//! A switch whose data plane is the RTL (`data_plane = "rtl"`,
//! `weft_sim::rtl_plane`): the fabric manager enumerates a GPU behind it
//! and binds it, every TLP the switch routes carried by weft-hdl's
//! `SwitchTop` and held to weft-model's switch, with the same outcome as
//! the same fabric on the model alone; and so does the host, moved onto
//! the RTL switch, using its GPU through it.

use std::path::Path;

use weft_sim::scenario::engine::{run, Report};
use weft_sim::scenario::format::DataPlaneKind;
use weft_sim::scenario::Scenario;

/// What each step of a run did, and when.
fn outcomes(report: &Report) -> Vec<(String, String, std::time::Duration)> {
    report
        .steps
        .iter()
        .map(|note| (note.what.clone(), note.outcome.clone(), note.at))
        .collect()
}

fn scenario_file() -> (std::path::PathBuf, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/rtl_switch.toml");
    let text = std::fs::read_to_string(&path).expect("the scenario file");
    (path, text)
}

#[test]
fn the_rtl_carries_a_fabric_enumeration_as_the_model_does() {
    let (path, text) = scenario_file();
    let with_rtl = Scenario::load(&path).expect("valid");
    assert_eq!(
        (
            with_rtl.switches[1].data_plane,
            with_rtl.switches[0].data_plane
        ),
        (DataPlaneKind::Rtl, DataPlaneKind::Model)
    );
    let model_only = Scenario::parse(
        &text.replace("data_plane = \"rtl\"\n", ""),
        "model.toml",
        path.parent().expect("a directory"),
    )
    .expect("valid");
    let rtl_report = run(&with_rtl, &mut |_| {}).expect("every step passes");
    let model_report = run(&model_only, &mut |_| {}).expect("every step passes");

    assert_eq!(outcomes(&rtl_report), outcomes(&model_report));
    assert!(model_report.rtl.is_empty());
    let [(name, summary)] = &rtl_report.rtl[..] else {
        panic!("one RTL switch: {:?}", rtl_report.rtl);
    };
    eprintln!("{name}: {summary:?}");
    assert_eq!(name, "s1");
    // The manager's configuration requests to the GPU and their completions.
    assert!(summary.tlps >= 40, "{summary:?}");
    assert_eq!(summary.disagreements, 0, "{summary:?}");
    // No request timed out, which would have ended the comparison.
    assert_eq!(
        (summary.timeouts, summary.not_compared),
        (0, 0),
        "{summary:?}"
    );
}

#[test]
fn a_host_on_an_rtl_switch_uses_its_gpu_through_it_as_on_the_model() {
    // The host's configuration requests to its virtual switch, its reads
    // and writes of the GPU (under the fabric tags of the RTL's
    // outstanding-request table) and the GPU's completions and DMA all
    // cross the RTL.
    let (path, text) = scenario_file();
    let text = text.replace(r#"ends = ["host1", "s0.0"]"#, r#"ends = ["host1", "s1.1"]"#);
    let base = path.parent().expect("a directory");
    let with_rtl = Scenario::parse(&text, "rtl.toml", base).expect("valid");
    let model_only = Scenario::parse(
        &text.replace("data_plane = \"rtl\"\n", ""),
        "model.toml",
        base,
    )
    .expect("valid");
    let rtl_report = run(&with_rtl, &mut |_| {}).expect("every step passes");
    let model_report = run(&model_only, &mut |_| {}).expect("every step passes");
    assert_eq!(outcomes(&rtl_report), outcomes(&model_report));
    let [(_, summary)] = &rtl_report.rtl[..] else {
        panic!("one RTL switch: {:?}", rtl_report.rtl);
    };
    eprintln!("{summary:?}");
    assert_eq!(summary.disagreements, 0, "{summary:?}");
    // No request timed out, which would have ended the comparison.
    assert_eq!(
        (summary.timeouts, summary.not_compared),
        (0, 0),
        "{summary:?}"
    );
}
