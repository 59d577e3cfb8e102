//! The `weftctl` command: its arguments, how each command runs, and how the
//! answers are printed.

pub mod args;
pub mod output;
pub mod run;
