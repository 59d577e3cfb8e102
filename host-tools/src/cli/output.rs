//! Where answers go: text for people or JSON for programs, on stdout.

use std::io::{self, Write};

use anyhow::Context as _;
use serde::Serialize;

/// Prints answers as text or as JSON.
#[derive(Clone, Copy, Debug)]
pub struct Output {
    /// JSON instead of text.
    pub json: bool,
}

impl Output {
    /// Prints `value` as pretty JSON, or the text `human` makes of it.
    pub fn show<T: Serialize>(
        &self,
        value: &T,
        human: impl FnOnce() -> String,
    ) -> anyhow::Result<()> {
        if self.json {
            let mut text = serde_json::to_string_pretty(value)
                .context("could not write the answer as JSON")?;
            text.push('\n');
            write_stdout(&text)
        } else {
            write_stdout(&human())
        }
    }

    /// Prints `value` as one line of JSON (for a stream of values), or the
    /// text `human` makes of it.
    pub fn stream<T: Serialize>(
        &self,
        value: &T,
        human: impl FnOnce() -> String,
    ) -> anyhow::Result<()> {
        if self.json {
            let mut text =
                serde_json::to_string(value).context("could not write the answer as JSON")?;
            text.push('\n');
            write_stdout(&text)
        } else {
            write_stdout(&human())
        }
    }
}

/// Writes to stdout; a reader that went away (`weftctl … | head`) is not an
/// error.
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("could not write to stdout"),
    }
}
