//! A switch whose data plane is the RTL (`data_plane = "rtl"`,
//! `weft_sim::rtl_plane`): the fabric manager enumerates a GPU behind it
//! and binds it, every TLP the switch routes carried by weft-hdl's
//! `SwitchTop` and held to weft-model's switch, with the same outcome as
//! the same fabric on the model alone. A host port on such a switch is an
//! error at its line: the RTL has no outstanding-request table yet.

use std::path::Path;

use weft_sim::scenario::engine::run;
use weft_sim::scenario::{Scenario, ScenarioError};

fn scenario_file() -> (std::path::PathBuf, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/rtl_switch.toml");
    let text = std::fs::read_to_string(&path).expect("the scenario file");
    (path, text)
}

#[test]
fn the_rtl_carries_a_fabric_enumeration_as_the_model_does() {
    let (path, text) = scenario_file();
    let with_rtl = Scenario::load(&path).expect("valid");
    assert!(with_rtl.switches[1].rtl && !with_rtl.switches[0].rtl);
    let model_only = Scenario::parse(
        &text.replace("data_plane = \"rtl\"\n", ""),
        "model.toml",
        path.parent().expect("a directory"),
    )
    .expect("valid");
    let rtl_report = run(&with_rtl, &mut |_| {}).expect("every step passes");
    let model_report = run(&model_only, &mut |_| {}).expect("every step passes");

    let outcomes = |report: &weft_sim::scenario::engine::Report| {
        report
            .steps
            .iter()
            .map(|note| (note.what.clone(), note.outcome.clone(), note.at))
            .collect::<Vec<_>>()
    };
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
}

#[test]
fn a_host_on_an_rtl_switch_is_an_error_at_its_data_plane() {
    let (path, text) = scenario_file();
    let text = text.replace(r#"ends = ["host1", "s0.0"]"#, r#"ends = ["host1", "s1.1"]"#);
    match Scenario::parse(&text, "rtl.toml", path.parent().expect("a directory")) {
        Err(ScenarioError::Invalid { line, message, .. }) => {
            let expected = 1 + text
                .lines()
                .position(|l| l == r#"data_plane = "rtl""#)
                .expect("the key");
            assert_eq!(line, expected, "{message}");
            assert!(
                message.contains("host `host1` is on this switch"),
                "{message}"
            );
        }
        other => panic!("expected an error, got {other:?}"),
    }
}
