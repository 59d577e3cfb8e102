//! The README's output block is what `cargo run --release` prints.
//!
//! Runs the built-in reference scenario and compares its heading and table
//! with the README's `text` block, the wall time aside. With
//! `WEFT_BLESS_README=1` the test rewrites the block instead of failing.
//! The full experiment takes minutes unoptimized, so the test runs with
//! `cargo test --release -p weft-sim --test readme`.

use std::path::Path;
use std::time::Duration;

use weft_sim::report::{heading, table};
use weft_sim::scenario::engine::run;
use weft_sim::scenario::Scenario;

const BLOCK_START: &str = "```text\nweft-sim: ";
const BLOCK_END: &str = "```\n";

/// The line giving the wall time, which differs from run to run.
fn is_wall_time(line: &str) -> bool {
    line.starts_with("wall time ")
}

fn comparable(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !is_wall_time(l)).collect()
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "runs the full reference experiment: cargo test --release -p weft-sim --test readme"
)]
fn the_readme_shows_what_the_default_run_prints() {
    let scenario = Scenario::reference();
    let report = run(&scenario, &mut |_| {}).expect("the reference experiment passes");
    let printed = heading(&scenario) + &table(&scenario, &report, Duration::ZERO);

    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(&path).expect("the README");
    let start = readme.find(BLOCK_START).expect("the README's output block") + "```text\n".len();
    let end = start + readme[start..].find(BLOCK_END).expect("the block's end");
    let shown = &readme[start..end];
    if comparable(shown) == comparable(&printed) {
        return;
    }
    if std::env::var_os("WEFT_BLESS_README").is_some() {
        // Keep the README's wall time: it is a real run's.
        let wall = shown
            .lines()
            .find(|l| is_wall_time(l))
            .unwrap_or("wall time -");
        let block: String = printed
            .lines()
            .map(|l| if is_wall_time(l) { wall } else { l })
            .map(|l| format!("{l}\n"))
            .collect();
        let updated = format!("{}{block}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, updated).expect("the README is writable");
        return;
    }
    let diff: Vec<String> = comparable(shown)
        .iter()
        .zip(comparable(&printed))
        .filter(|(a, b)| *a != b)
        .map(|(a, b)| format!("README: {a}\nprints: {b}"))
        .collect();
    panic!(
        "the README's output block is stale; rerun with WEFT_BLESS_README=1 to update it\n{}",
        diff.join("\n")
    );
}
