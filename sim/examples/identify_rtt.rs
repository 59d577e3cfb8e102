//! Measures the management round trip of a weft switch: Identify requests
//! one after another through the weftctl client, each timed from its send
//! to its verified answer.
//!
//! Usage: `identify_rtt --switch HOST[:PORT] (--key HEX | --insecure) [--count N] [--json]`
//!
//! Point it at a board, at `weft-sim serve`, or at the firmware on the ISS
//! behind `weft-sim firmware --tap` (run it inside the TAP's network
//! namespace: `ip netns exec NAME cargo run --release -p weft-sim --example
//! identify_rtt -- ...`). It prints a table of the round trip's median,
//! 99th percentile, minimum and maximum and the requests answered per
//! second, or the same as JSON. `bind_unbind_rtt` times binds and unbinds
//! the same way.

mod rtt_support;

use std::process::ExitCode;

use rtt_support::{Options, RoundTrips, Summary};
use weft_proto::Request;
use weftctl::error::ClientError;

const USAGE: &str =
    "usage: identify_rtt --switch HOST[:PORT] (--key HEX | --insecure) [--count N] [--json]";

/// Times `options.count` Identify requests; their round trips and how
/// many were answered a second.
fn measure(options: &Options) -> Result<(RoundTrips, f64), ClientError> {
    let mut client = rtt_support::connect(options)?;
    let mut identify = RoundTrips::default();
    let per_second = rtt_support::rounds_per_second(options.count, || {
        identify.time(&mut client, &Request::Identify).map(drop)
    })?;
    Ok((identify, per_second))
}

fn main() -> ExitCode {
    let options = match rtt_support::options() {
        Ok(options) => options,
        Err(why) => {
            eprintln!("identify_rtt: {why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let (identify, per_second) = match measure(&options) {
        Ok(measured) => measured,
        Err(e) => {
            eprintln!("identify_rtt: {e}");
            return ExitCode::FAILURE;
        }
    };
    let summary = identify.summary();
    let resends = identify.resends;
    if options.json {
        let mut report = summary.json();
        report.insert("switch".into(), options.switch.to_string().into());
        report.insert("request".into(), "Identify".into());
        report.insert("requests".into(), options.count.into());
        report.insert("resends".into(), resends.into());
        report.insert("requests_per_second".into(), per_second.into());
        println!("{}", serde_json::Value::Object(report));
    } else {
        println!(
            "Identify round trip to {}, {} requests ({resends} resent), {per_second:.0} requests/s",
            options.switch, options.count
        );
        println!("{}", Summary::HEADER);
        println!("{}", summary.row("identify"));
    }
    ExitCode::SUCCESS
}
