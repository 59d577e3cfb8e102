//! Measures the management round trips of binding and unbinding: a Bind
//! of a free function to an empty slot, then a surprise Unbind of that
//! slot, over and over through the weftctl client, each request timed
//! from its send to its verified answer, and each pair from the Bind's
//! send to the Unbind's answer.
//!
//! Usage: `bind_unbind_rtt --switch HOST[:PORT] (--key HEX | --insecure) [--count N] [--json]`
//!
//! The unbind is weft-proto's `UnbindMode::Surprise`, which the switch
//! carries out at once and answers `Done`: a graceful or managed unbind
//! waits for the host's hot-plug driver to power the slot off, and would
//! time the host, not the switch. The function is the topology's first
//! with no owner and the slot the first empty one of the lowest host
//! that has one; both are free again after each pair. Point it at
//! `weft-sim serve` (the native firmware build on the reference fabric)
//! or at any switch with a free function. It prints a table of the
//! median, 99th percentile, minimum and maximum of each request and of the
//! pair, and the pairs done a second, or the same as JSON.

mod rtt_support;

use std::process::ExitCode;
use std::time::Instant;

use rtt_support::{Options, RoundTrips, Summary};
use weft_proto::{
    BoundFunctions, FabricId, HostIndex, Request, Response, SlotIndex, SlotState, UnbindMode,
};
use weftctl::client::{unexpected, Client};
use weftctl::error::ClientError;
use weftctl::topology::read_topology;

const USAGE: &str =
    "usage: bind_unbind_rtt --switch HOST[:PORT] (--key HEX | --insecure) [--count N] [--json]";

/// Hosts looked at for an empty slot, from host 0 on.
const MAX_HOSTS: u8 = 16;

/// What a pair binds, and where.
struct Target {
    function: FabricId,
    host: HostIndex,
    slot: SlotIndex,
}

/// The round trips of each request and of the pairs.
#[derive(Default)]
struct Measured {
    bind: RoundTrips,
    unbind: RoundTrips,
    pair: RoundTrips,
}

/// A free function and an empty slot on the switch, or why there are none.
fn target(client: &mut Client) -> Result<Target, String> {
    let topology = read_topology(client).map_err(|e| format!("topology: {e}"))?;
    let function = topology
        .endpoints
        .iter()
        .find(|e| e.owner.is_none())
        .ok_or("every function on the switch is bound; unbind one first")?
        .fabric_id;
    for host in (0..MAX_HOSTS).map(HostIndex) {
        let request = Request::VirtualSwitch { host };
        let info = match client.request(&request) {
            Ok(Response::VirtualSwitch(info)) => info,
            // Past the last host.
            Err(ClientError::Refused(weft_proto::Error::NoSuchHost { .. })) => break,
            Ok(other) => return Err(unexpected(&request, &other).to_string()),
            Err(e) => return Err(format!("host {}'s virtual switch: {e}", host.0)),
        };
        if let Some(slot) = info.slots.iter().find(|s| s.state == SlotState::Empty) {
            return Ok(Target {
                function,
                host,
                slot: slot.slot,
            });
        }
    }
    Err("no host has an empty slot; unbind one first".into())
}

/// Binds and unbinds `target` `count` times; the round trips and the pairs done a second.
fn measure(
    client: &mut Client,
    target: &Target,
    count: usize,
) -> Result<(Measured, f64), ClientError> {
    let mut functions = BoundFunctions::new();
    // One function fits any binding.
    let _ = functions.push(target.function);
    let bind = Request::Bind {
        host: target.host,
        slot: target.slot,
        functions,
        if_generation: None,
    };
    let unbind = Request::Unbind {
        host: target.host,
        slot: target.slot,
        mode: UnbindMode::Surprise,
        if_generation: None,
    };
    let mut measured = Measured::default();
    let per_second = rtt_support::rounds_per_second(count, || {
        let start = Instant::now();
        for (request, round_trips) in [(&bind, &mut measured.bind), (&unbind, &mut measured.unbind)]
        {
            match round_trips.time(client, request)? {
                Response::Done => {}
                other => return Err(unexpected(request, &other)),
            }
        }
        measured.pair.push(start.elapsed());
        Ok(())
    })?;
    Ok((measured, per_second))
}

fn main() -> ExitCode {
    let options: Options = match rtt_support::options() {
        Ok(options) => options,
        Err(why) => {
            eprintln!("bind_unbind_rtt: {why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut client = match rtt_support::connect(&options) {
        Ok(client) => client,
        Err(e) => {
            eprintln!("bind_unbind_rtt: {e}");
            return ExitCode::FAILURE;
        }
    };
    let target = match target(&mut client) {
        Ok(target) => target,
        Err(why) => {
            eprintln!("bind_unbind_rtt: {why}");
            return ExitCode::FAILURE;
        }
    };
    let (measured, per_second) = match measure(&mut client, &target, options.count) {
        Ok(measured) => measured,
        Err(e) => {
            eprintln!("bind_unbind_rtt: {e}");
            return ExitCode::FAILURE;
        }
    };
    let resends = measured.bind.resends + measured.unbind.resends;
    let rows = [
        ("bind", &measured.bind),
        ("unbind", &measured.unbind),
        ("pair", &measured.pair),
    ];
    if options.json {
        let mut report = serde_json::Map::new();
        report.insert("switch".into(), options.switch.to_string().into());
        report.insert("function".into(), target.function.0.into());
        report.insert("host".into(), target.host.0.into());
        report.insert("slot".into(), target.slot.0.into());
        report.insert("unbind_mode".into(), "Surprise".into());
        report.insert("pairs".into(), options.count.into());
        report.insert("resends".into(), resends.into());
        report.insert("pairs_per_second".into(), per_second.into());
        for (name, round_trips) in rows {
            let summary = serde_json::Value::Object(round_trips.summary().json());
            report.insert(name.into(), summary);
        }
        println!("{}", serde_json::Value::Object(report));
    } else {
        println!(
            "Bind then surprise Unbind of function {:#x} at host {} slot {} on {}, \
             {} pairs ({resends} resent), {per_second:.0} pairs/s",
            target.function.0, target.host.0, target.slot.0, options.switch, options.count
        );
        println!("{}", Summary::HEADER);
        for (name, round_trips) in rows {
            println!("{}", round_trips.summary().row(name));
        }
    }
    ExitCode::SUCCESS
}
