//! What the board benches' tests share.

use std::path::PathBuf;

use weft_boards::generate::File;
use weft_boards::sim::SimError;

/// Whether a bench ran and passed: `false`, after saying so, where no
/// simulator is installed; a failure panics with the bench's report.
pub fn ran(result: Result<(), SimError>) -> bool {
    match result {
        Ok(()) => true,
        Err(SimError::NoSimulator) => {
            eprintln!("skipped: iverilog is not installed (`cargo xtask setup` installs it)");
            false
        }
        Err(err) => panic!("{err}"),
    }
}

/// Checks that a bench run on files changed to `to` failed with a report
/// that says `expected`.
pub fn noticed(result: Result<(), SimError>, to: &str, expected: &str) {
    match result {
        Err(SimError::Failed { report }) => {
            assert!(report.contains(expected), "`{to}`: {report}")
        }
        other => panic!("`{to}` went unnoticed: {other:?}"),
    }
}

/// An empty scratch directory for `suite`'s run `name`, under the system's
/// temporary directory, apart for each test process.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir is writable");
    dir
}

/// Makes the first `from` in the bench file `name` of `files` read `to`:
/// a change the bench must notice. The file must be there and hold `from`.
pub fn change(files: &mut [File], name: &str, from: &str, to: &str) {
    let Some(file) = files.iter_mut().find(|f| f.name == name) else {
        panic!("the bench has no file {name}");
    };
    assert!(file.text.contains(from), "{name} has `{from}`");
    file.text = file.text.replacen(from, to, 1);
}
