//! What the management round-trip examples share: their options, the
//! client they time requests through, and how they summarise and print
//! the round trips (a table, or JSON with `--json`).

// Each example uses a part of this module.
#![allow(dead_code)]

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use weft_proto::{Key, Request, Response, MANAGEMENT_UDP_PORT};
use weftctl::client::{Client, ClientConfig};
use weftctl::error::ClientError;

/// Requests (or pairs of them) timed when `--count` is not given.
pub const DEFAULT_COUNT: usize = 200;

/// The options every round-trip example takes.
pub struct Options {
    /// The switch's management address.
    pub switch: SocketAddr,
    /// The key requests are signed with.
    pub key: Key,
    /// How many requests (or pairs) to time.
    pub count: usize,
    /// Print JSON instead of a table.
    pub json: bool,
}

/// The options on the command line: `--switch HOST[:PORT] (--key HEX |
/// --insecure) [--count N] [--json]`.
pub fn options() -> Result<Options, String> {
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

/// A client for `options`' switch that has learned its identity (and so
/// warmed ARP on the way) before anything is timed.
pub fn connect(options: &Options) -> Result<Client, ClientError> {
    let mut client = Client::connect(ClientConfig::new(options.switch, options.key.clone()))?;
    client.identify()?;
    Ok(client)
}

/// The round trips of one kind of request, as they were timed.
#[derive(Default)]
pub struct RoundTrips {
    times: Vec<Duration>,
    /// Datagrams sent again because no answer came in time.
    pub resends: u32,
}

impl RoundTrips {
    /// Sends `request` through `client` and records its round trip (the
    /// answered send's); its answer.
    pub fn time(
        &mut self,
        client: &mut Client,
        request: &Request,
    ) -> Result<Response, ClientError> {
        let exchange = client.exchange(request, &[])?;
        self.resends += exchange.sends - 1;
        self.times.push(exchange.round_trip);
        Ok(exchange.response)
    }

    /// Records `round_trip`, timed by the caller.
    pub fn push(&mut self, round_trip: Duration) {
        self.times.push(round_trip);
    }

    /// The median, 99th percentile, minimum and maximum (all zero before any round trip).
    pub fn summary(&self) -> Summary {
        let mut sorted = self.times.clone();
        sorted.sort();
        Summary {
            median: percentile(&sorted, 500),
            p99: percentile(&sorted, 990),
            min: sorted.first().copied().unwrap_or_default(),
            max: sorted.last().copied().unwrap_or_default(),
        }
    }
}

/// One kind of request's round trips in brief.
pub struct Summary {
    /// The median.
    pub median: Duration,
    /// The 99th percentile (nearest rank).
    pub p99: Duration,
    /// The fastest.
    pub min: Duration,
    /// The slowest.
    pub max: Duration,
}

impl Summary {
    /// The summary in microseconds, as JSON fields.
    pub fn json(&self) -> serde_json::Map<String, serde_json::Value> {
        [
            ("median_us", self.median),
            ("p99_us", self.p99),
            ("min_us", self.min),
            ("max_us", self.max),
        ]
        .into_iter()
        .map(|(name, d)| (name.to_string(), serde_json::json!(micros(d))))
        .collect()
    }

    /// A table row: `name`, then the median, 99th percentile, minimum and maximum.
    pub fn row(&self, name: &str) -> String {
        let cell = |d: Duration| format!("{:.0} µs", micros(d));
        format!(
            "  {name:<8} {:<9} {:<9} {:<9} {:<9}",
            cell(self.median),
            cell(self.p99),
            cell(self.min),
            cell(self.max)
        )
    }

    /// The table's header line, above [`Summary::row`]s.
    pub const HEADER: &str = "  request  median    p99       min       max";
}

/// Times `count` rounds of `round` and returns how many rounds a second
/// they made, wall clock, with `round`'s first error.
pub fn rounds_per_second(
    count: usize,
    mut round: impl FnMut() -> Result<(), ClientError>,
) -> Result<f64, ClientError> {
    let start = Instant::now();
    for _ in 0..count {
        round()?;
    }
    Ok(count as f64 / start.elapsed().as_secs_f64())
}

/// The `per_mille`-th smallest of `sorted` (nearest rank), zero if it is empty.
fn percentile(sorted: &[Duration], per_mille: usize) -> Duration {
    let rank = (sorted.len() * per_mille).div_ceil(1000).max(1);
    sorted.get(rank - 1).copied().unwrap_or_default()
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
