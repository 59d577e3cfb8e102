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
//! 99th percentile, minimum and maximum, or the same as JSON.

use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::time::Duration;

use weft_proto::{Key, Request, MANAGEMENT_UDP_PORT};
use weftctl::client::{Client, ClientConfig};

const USAGE: &str =
    "usage: identify_rtt --switch HOST[:PORT] (--key HEX | --insecure) [--count N] [--json]";

/// Identify requests timed when --count is not given.
const DEFAULT_COUNT: usize = 200;

struct Options {
    switch: SocketAddr,
    key: Key,
    count: usize,
    json: bool,
}

fn options() -> Result<Options, String> {
    let (mut switch, mut key, mut count, mut json) = (None, None, DEFAULT_COUNT, false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--switch" => {
                let text = value()?;
                let with_port = if text.contains(':') {
                    text.clone()
                } else {
                    format!("{text}:{MANAGEMENT_UDP_PORT}")
                };
                switch = with_port
                    .to_socket_addrs()
                    .map_err(|e| format!("--switch {text}: {e}"))?
                    .next();
            }
            "--key" => key = Some(Key::parse_hex(&value()?).map_err(|e| format!("--key: {e}"))?),
            "--insecure" => key = Some(Key::insecure_public()),
            "--count" => {
                count = value()?.parse().map_err(|e| format!("--count: {e}"))?;
            }
            "--json" => json = true,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(Options {
        switch: switch.ok_or("give the switch with --switch HOST[:PORT]")?,
        key: key.ok_or("give the key with --key HEX, or --insecure")?,
        count: count.max(1),
        json,
    })
}

/// The `per_mille`-th smallest of `sorted` (nearest rank).
fn percentile(sorted: &[Duration], per_mille: usize) -> Duration {
    let rank = (sorted.len() * per_mille).div_ceil(1000).max(1);
    sorted[rank - 1]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(why) => {
            eprintln!("identify_rtt: {why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut client = match Client::connect(ClientConfig::new(options.switch, options.key)) {
        Ok(client) => client,
        Err(e) => {
            eprintln!("identify_rtt: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The first exchange learns the switch's identity (and warms ARP).
    if let Err(e) = client.identify() {
        eprintln!("identify_rtt: {e}");
        return ExitCode::FAILURE;
    }
    let mut round_trips = Vec::with_capacity(options.count);
    let mut resends = 0;
    for _ in 0..options.count {
        match client.exchange(&Request::Identify, &[]) {
            Ok(exchange) => {
                resends += exchange.sends - 1;
                round_trips.push(exchange.round_trip);
            }
            Err(e) => {
                eprintln!("identify_rtt: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    round_trips.sort();
    let median = percentile(&round_trips, 500);
    let p99 = percentile(&round_trips, 990);
    let (min, max) = (round_trips[0], round_trips[round_trips.len() - 1]);
    if options.json {
        let report = serde_json::json!({
            "switch": options.switch.to_string(),
            "request": "Identify",
            "requests": options.count,
            "resends": resends,
            "median_us": micros(median),
            "p99_us": micros(p99),
            "min_us": micros(min),
            "max_us": micros(max),
        });
        println!("{report}");
    } else {
        println!(
            "Identify round trip to {}, {} requests ({resends} resent)",
            options.switch, options.count
        );
        println!("  median    p99       min       max");
        println!(
            "  {:<9} {:<9} {:<9} {:<9}",
            format!("{:.0} µs", micros(median)),
            format!("{:.0} µs", micros(p99)),
            format!("{:.0} µs", micros(min)),
            format!("{:.0} µs", micros(max))
        );
    }
    ExitCode::SUCCESS
}
