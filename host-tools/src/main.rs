//! `weftctl`: manage a weft PCIe fabric switch over Ethernet.
//!
//! It speaks `weft-proto` over UDP to the firmware of a real switch or of a
//! simulated one, which the simulator exposes on a localhost port. The
//! protocol work lives in the `weftctl` library; this binary parses the
//! command line, runs one command and prints its answer.
#![forbid(unsafe_code)]

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::args::Cli::parse();
    match cli::run::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("weftctl: {error:#}");
            ExitCode::from(cli::run::exit_code(&error))
        }
    }
}
