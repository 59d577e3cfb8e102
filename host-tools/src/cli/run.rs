//! Running one command: the client set up from the global options, the
//! requests the command needs, and its answer printed.

use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use weft_proto::{
    AccessWidth, BoundFunctions, Event, EventSeq, FabricId, Generation, HostIndex, OperationId,
    PortAction, PortCounters, PortIndex, Request, ResetScope, Response, SlotIndex, SwitchId,
    UnbindMode, MAX_BIND_FUNCTIONS,
};
use weftctl::client::unexpected;
use weftctl::error::{EXIT_LOCAL, EXIT_USAGE};
use weftctl::firmware::{self, Image, UpdateOptions, UpdateProgress};
use weftctl::key::{KeyError, KeyOrigin, KeySources, KEY_ENV, KEY_FILE_ENV};
use weftctl::parse::show_fabric_id;
use weftctl::rates::{rates, PortRates};
use weftctl::topology::read_topology;
use weftctl::{render, Client, ClientConfig, ClientError};

use super::args::{
    CfgAction, Cli, Command, ConfigAction, CsrAction, FirmwareAction, PortActionArg, Precondition,
    ResetScopeArg, TopologyFormat, UnbindModeArg, WidthArg,
};
use super::output::{write_stdout, Output};

/// The most pages of the event log one `events` command reads without
/// `--follow`.
const MAX_EVENT_PAGES: u32 = 10_000;

/// A command line that cannot work, found after clap accepted it.
#[derive(Debug)]
pub struct Usage(String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// The exit code for a failed command (see the command's long help).
pub fn exit_code(error: &anyhow::Error) -> u8 {
    let code = if let Some(client) = error.downcast_ref::<ClientError>() {
        client.exit_code()
    } else if error.downcast_ref::<KeyError>().is_some() || error.downcast_ref::<Usage>().is_some()
    {
        EXIT_USAGE
    } else {
        EXIT_LOCAL
    };
    u8::try_from(code).unwrap_or(1)
}

/// Runs the command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let out = Output { json: cli.json };
    let mut client = connect(&cli)?;
    match cli.command {
        Command::Ping { count } => ping(&mut client, out, count),
        Command::Identify => {
            let identity = client.identify()?;
            let text = render::identity(&identity);
            out.show(&Response::Identity(identity), || text)
        }
        Command::Topology { format } => {
            let topology = read_topology(&mut client)?;
            out.show(&topology, || match format {
                TopologyFormat::Table => render::topology(&topology),
                TopologyFormat::Dot => render::topology_dot(&topology),
            })
        }
        Command::Vswitch { host } => {
            let request = Request::VirtualSwitch {
                host: HostIndex(host),
            };
            match client.request(&request)? {
                Response::VirtualSwitch(info) => {
                    let text = render::virtual_switch(&info);
                    out.show(&Response::VirtualSwitch(info), || text)
                }
                other => Err(unexpected(&request, &other).into()),
            }
        }
        Command::Bind {
            host,
            slot,
            functions,
            precondition,
        } => bind(&mut client, out, host, slot, &functions, &precondition),
        Command::Unbind {
            host,
            slot,
            mode,
            precondition,
        } => {
            let mode = match mode {
                UnbindModeArg::Graceful => UnbindMode::Graceful,
                UnbindModeArg::Managed => UnbindMode::Managed,
                UnbindModeArg::Surprise => UnbindMode::Surprise,
            };
            let request = Request::Unbind {
                host: HostIndex(host),
                slot: SlotIndex(slot),
                mode,
                if_generation: generation(&precondition),
            };
            act(
                &mut client,
                out,
                &request,
                format!("unbound host {host} slot {slot}"),
            )
        }
        Command::SetVfs { pf, count } => act(
            &mut client,
            out,
            &Request::SetNumVfs {
                endpoint: pf,
                num_vfs: count,
            },
            format!("{} now has {count} VFs", show_fabric_id(pf)),
        ),
        Command::Port { port, action } => {
            let (action, done) = match action {
                PortActionArg::Enable => (PortAction::Enable, "enabled"),
                PortActionArg::Disable => (PortAction::Disable, "disabled"),
                PortActionArg::HotReset => (
                    PortAction::HotReset,
                    "hot reset, functions below programmed again",
                ),
                PortActionArg::Retrain => (PortAction::Retrain, "link retrained"),
            };
            let request = Request::PortControl {
                port: PortIndex(port),
                action,
            };
            act(&mut client, out, &request, format!("port {port}: {done}"))
        }
        Command::Counters { port, clear } => counters(&mut client, out, port, clear),
        Command::Watch {
            ports,
            interval_ms,
            count,
        } => watch(
            &mut client,
            out,
            &ports,
            Duration::from_millis(interval_ms.max(1)),
            count,
        ),
        Command::Events {
            from,
            follow,
            interval_ms,
        } => events(
            &mut client,
            out,
            EventSeq(from),
            follow.then(|| Duration::from_millis(interval_ms)),
        ),
        Command::Config { action } => match action {
            ConfigAction::Save => act(
                &mut client,
                out,
                &Request::SaveConfig,
                "configuration saved to flash".to_owned(),
            ),
            ConfigAction::Restore => act(
                &mut client,
                out,
                &Request::RestoreConfig,
                "configuration restored from flash".to_owned(),
            ),
        },
        Command::Firmware { action } => match action {
            FirmwareAction::Update {
                image,
                resume,
                no_commit,
            } => firmware_update(
                &mut client,
                out,
                &image,
                UpdateOptions { resume, no_commit },
            ),
            FirmwareAction::Status => {
                let status = firmware::status(&mut client)?;
                let text = render::firmware_status(&status);
                out.show(&Response::FirmwareStatus(status), || text)
            }
            FirmwareAction::Commit => {
                let response = firmware::commit(&mut client)?;
                out.show(&response, || {
                    "image committed: the switch boots it on trial\n".to_owned()
                })
            }
            FirmwareAction::Abort => act(
                &mut client,
                out,
                &Request::FirmwareAbort,
                "update abandoned; the running image was never touched".to_owned(),
            ),
        },
        Command::Reset { scope } => reset(&mut client, out, scope),
        Command::Csr { action } => csr(&mut client, out, action),
        Command::Cfg { action } => cfg(&mut client, out, action),
        Command::OpStatus { id, wait } => {
            let op = OperationId(id);
            let report = if wait {
                let spinner = spinner(out);
                let report = client.wait_for(op, &mut |op, percent| {
                    spinner.set_message(format!("operation {}: {percent}%", op.0));
                });
                spinner.finish_and_clear();
                report?
            } else {
                let request = Request::OperationStatus { op };
                match client.request(&request)? {
                    Response::Operation(report) => report,
                    other => return Err(unexpected(&request, &other).into()),
                }
            };
            let text = render::operation(&report);
            out.show(&Response::Operation(report), || text)
        }
    }
}

/// The client, configured from the global options and the environment.
fn connect(cli: &Cli) -> anyhow::Result<Client> {
    let sources = KeySources {
        key: cli.key.clone(),
        key_file: cli.key_file.clone(),
        insecure: cli.insecure,
        env_key: std::env::var(KEY_ENV).ok(),
        env_key_file: std::env::var_os(KEY_FILE_ENV).map(PathBuf::from),
    };
    let (key, origin) = sources.resolve()?;
    if origin == KeyOrigin::Insecure {
        eprintln!(
            "weftctl: warning: --insecure uses the publicly known key: anyone on the network \
             can read and forge these requests and answers"
        );
    }
    let mut config = ClientConfig::new(cli.switch, key);
    config.target = cli.switch_id.map(SwitchId);
    config.per_try = Duration::from_millis(cli.timeout_ms.max(1));
    config.retries = cli.retries;
    config.operation_deadline = Duration::from_millis(cli.op_timeout_ms);
    Ok(Client::connect(config)?)
}

fn generation(precondition: &Precondition) -> Option<Generation> {
    precondition.if_generation.map(Generation)
}

/// A spinner on stderr for a background operation; hidden for JSON output
/// and when stderr is not a terminal.
fn spinner(out: Output) -> ProgressBar {
    if out.json {
        return ProgressBar::hidden();
    }
    let spinner = ProgressBar::new_spinner();
    spinner.enable_steady_tick(Duration::from_millis(120));
    spinner
}

/// Sends a request that changes something, follows its background
/// operation, and prints `done` (or the response as JSON).
fn act(client: &mut Client, out: Output, request: &Request, done: String) -> anyhow::Result<()> {
    let spinner = spinner(out);
    let response = client.request_to_completion_with(request, &mut |op, percent| {
        spinner.set_message(format!("operation {}: {percent}%", op.0));
    });
    spinner.finish_and_clear();
    let response = response?;
    let text = match &response {
        Response::Done => format!("{done}\n"),
        Response::Operation(report) => format!("{done} (operation {})\n", report.op.0),
        other => return Err(unexpected(request, other).into()),
    };
    out.show(&response, || text)
}

/// The JSON form of `ping`.
#[derive(Serialize)]
struct PingReport {
    /// The address pinged.
    switch: String,
    /// The switch's identity, if it was known.
    switch_id: Option<SwitchId>,
    /// Each ping's round trip, in microseconds.
    round_trip_us: Vec<u64>,
}

fn ping(client: &mut Client, out: Output, count: u32) -> anyhow::Result<()> {
    let addr = client.config().switch;
    let mut report = PingReport {
        switch: addr.to_string(),
        switch_id: client.target(),
        round_trip_us: Vec::new(),
    };
    for i in 0..count.max(1) {
        if i > 0 {
            thread::sleep(Duration::from_secs(1));
        }
        let rtt = client.ping()?;
        report
            .round_trip_us
            .push(u64::try_from(rtt.as_micros()).unwrap_or(u64::MAX));
        if !out.json {
            write_stdout(&format!(
                "answer from {addr}: time {}\n",
                render::millis(rtt)
            ))?;
        }
    }
    if out.json {
        out.show(&report, String::new)?;
    }
    Ok(())
}

fn bind(
    client: &mut Client,
    out: Output,
    host: u8,
    slot: u8,
    functions: &[FabricId],
    precondition: &Precondition,
) -> anyhow::Result<()> {
    let mut list = BoundFunctions::new();
    for f in functions {
        list.push(*f).map_err(|_| {
            Usage(format!(
                "a bind takes at most {MAX_BIND_FUNCTIONS} functions (one device)"
            ))
        })?;
    }
    let names: Vec<String> = functions.iter().map(|f| show_fabric_id(*f)).collect();
    let request = Request::Bind {
        host: HostIndex(host),
        slot: SlotIndex(slot),
        functions: list,
        if_generation: generation(precondition),
    };
    act(
        client,
        out,
        &request,
        format!("bound {} to host {host} slot {slot}", names.join(" ")),
    )
}

fn counters(client: &mut Client, out: Output, port: u8, clear: bool) -> anyhow::Result<()> {
    let request = Request::ReadCounters {
        port: PortIndex(port),
    };
    let counters = match client.request(&request)? {
        Response::Counters(counters) => counters,
        other => return Err(unexpected(&request, &other).into()),
    };
    let mut text = render::counters(&counters);
    if clear {
        let request = Request::ClearCounters {
            port: Some(PortIndex(port)),
            kind: None,
        };
        match client.request_to_completion(&request)? {
            Response::Done | Response::Operation(_) => {
                text.push_str("(cleared after reading)\n");
            }
            other => return Err(unexpected(&request, &other).into()),
        }
    }
    out.show(&Response::Counters(counters), || text)
}

/// One `watch` table in JSON.
#[derive(Serialize)]
struct WatchSample {
    /// Milliseconds since the first reading.
    elapsed_ms: u64,
    /// Each port's rates since the previous reading.
    ports: Vec<PortRates>,
}

fn read_counters(client: &mut Client, port: PortIndex) -> anyhow::Result<PortCounters> {
    let request = Request::ReadCounters { port };
    match client.request(&request)? {
        Response::Counters(counters) => Ok(counters),
        other => Err(unexpected(&request, &other).into()),
    }
}

fn watch(
    client: &mut Client,
    out: Output,
    ports: &[u8],
    interval: Duration,
    count: Option<u32>,
) -> anyhow::Result<()> {
    let ports: Vec<PortIndex> = if ports.is_empty() {
        (0..client.identify()?.ports).map(PortIndex).collect()
    } else {
        ports.iter().copied().map(PortIndex).collect()
    };
    let start = Instant::now();
    let read_all = |client: &mut Client| -> anyhow::Result<(Vec<PortCounters>, Instant)> {
        let readings = ports
            .iter()
            .map(|p| read_counters(client, *p))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok((readings, Instant::now()))
    };
    let (mut before, mut at) = read_all(client)?;
    let mut tables = 0u32;
    while count.is_none_or(|c| tables < c) {
        thread::sleep(interval);
        let (after, now) = read_all(client)?;
        let sample = WatchSample {
            elapsed_ms: u64::try_from(now.duration_since(start).as_millis()).unwrap_or(u64::MAX),
            ports: before
                .iter()
                .zip(&after)
                .map(|(b, a)| rates(b, a, now.duration_since(at)))
                .collect(),
        };
        out.stream(&sample, || {
            let mut text = if tables > 0 {
                "\n".to_owned()
            } else {
                String::new()
            };
            text.push_str(&render::rates(&sample.ports));
            text
        })?;
        (before, at) = (after, now);
        tables += 1;
    }
    Ok(())
}

/// The JSON form of `events` without `--follow`.
#[derive(Serialize)]
struct EventLog {
    /// The oldest entry the log held.
    oldest: EventSeq,
    /// The entries read.
    events: Vec<Event>,
    /// The number to ask for next time.
    next: EventSeq,
}

fn events(
    client: &mut Client,
    out: Output,
    from: EventSeq,
    follow: Option<Duration>,
) -> anyhow::Result<()> {
    let mut next = from;
    let mut log = EventLog {
        oldest: from,
        events: Vec::new(),
        next: from,
    };
    let mut pages = 0u32;
    if follow.is_some() && !out.json {
        write_stdout(&render::events_header())?;
    }
    loop {
        let request = Request::ReadEvents { from: next };
        let page = match client.request(&request)? {
            Response::Events(page) => page,
            other => return Err(unexpected(&request, &other).into()),
        };
        if pages == 0 {
            log.oldest = page.oldest;
        }
        if page.oldest > next && next.0 != 0 {
            eprintln!(
                "weftctl: events {} to {} were overwritten before they were read",
                next.0,
                page.oldest.0 - 1
            );
        }
        pages += 1;
        let got = page.events.len();
        let advanced = page.next > next;
        if advanced {
            next = page.next;
        }
        match follow {
            Some(interval) => {
                for event in &page.events {
                    out.stream(event, || render::event_line(event))?;
                }
                if got == 0 || !advanced {
                    thread::sleep(interval);
                }
            }
            None => {
                log.events.extend(page.events.iter().copied());
                if got == 0 || !advanced || pages >= MAX_EVENT_PAGES {
                    break;
                }
            }
        }
    }
    log.next = next;
    out.show(&log, || {
        if log.events.is_empty() {
            format!("no events from {} on\n", from.0)
        } else {
            render::events(&log.events)
        }
    })
}

/// The JSON form of `firmware update`.
#[derive(Serialize)]
struct UpdateJson<'a> {
    /// The image file.
    image: &'a Path,
    /// What the update did.
    #[serde(flatten)]
    report: &'a firmware::UpdateReport,
}

fn firmware_update(
    client: &mut Client,
    out: Output,
    path: &Path,
    options: UpdateOptions,
) -> anyhow::Result<()> {
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "could not read the firmware image {}; check the path",
            path.display()
        )
    })?;
    firmware::check_format(&bytes)?;
    let image = Image::new(bytes)?;
    let bar = if out.json {
        ProgressBar::hidden()
    } else {
        eprintln!(
            "image {}: {} ({} bytes), sha256 {}",
            path.display(),
            render::bytes(u64::from(image.size())),
            image.size(),
            firmware::digest_hex(&image.digest())
        );
        let style = ProgressStyle::with_template(
            "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        ProgressBar::new(u64::from(image.size())).with_style(style)
    };
    let result = firmware::update(client, &image, options, &mut |step| match step {
        UpdateProgress::Sent { offset, .. } => bar.set_position(u64::from(offset)),
        UpdateProgress::Resumed { at } => {
            bar.println(format!("the switch asked to resume at offset {at}"));
        }
        UpdateProgress::Verifying => bar.set_message("verifying"),
        UpdateProgress::Committing => bar.set_message("committing"),
    });
    bar.finish_and_clear();
    let report = result?;
    let resumes = match report.resumes {
        0 => String::new(),
        1 => ", 1 resume".to_owned(),
        n => format!(", {n} resumes"),
    };
    let text = format!(
        "sent {} in {} chunks{resumes}; the switch verified the image\n{}",
        render::bytes(u64::from(report.size)),
        report.chunks,
        if report.committed {
            format!(
                "committed: the switch boots it on trial, and boots partition {:?} again if it \
                 does not check in\n",
                report.status.running
            )
        } else {
            "not committed: run `weftctl firmware commit` to boot it\n".to_owned()
        }
    );
    out.show(
        &UpdateJson {
            image: path,
            report: &report,
        },
        || text,
    )
}

fn reset(client: &mut Client, out: Output, scope: ResetScopeArg) -> anyhow::Result<()> {
    let scope = match scope {
        ResetScopeArg::Firmware => ResetScope::Firmware,
        ResetScopeArg::Switch => ResetScope::Switch,
    };
    let arm = Request::ResetArm { scope };
    let token = match client.request(&arm)? {
        Response::ResetArmed { token, .. } => token,
        other => return Err(unexpected(&arm, &other).into()),
    };
    let trigger = Request::ResetTrigger { token };
    let response = match client.request(&trigger) {
        Ok(response) => response,
        Err(error @ ClientError::Timeout { .. }) => {
            return Err(anyhow::Error::new(error).context(
                "the reset trigger was not answered: the switch may already be restarting; \
                 check with `weftctl ping` in a few seconds",
            ))
        }
        Err(error) => return Err(error.into()),
    };
    let text = match (&response, scope) {
        (Response::Done, ResetScope::Firmware) => {
            "the switch is restarting its firmware; the data plane keeps forwarding\n"
        }
        (Response::Done, ResetScope::Switch) => {
            "the switch is resetting: every link drops and retrains\n"
        }
        (other, _) => return Err(unexpected(&trigger, other).into()),
    };
    out.show(&response, || text.to_owned())
}

fn csr(client: &mut Client, out: Output, action: CsrAction) -> anyhow::Result<()> {
    match action {
        CsrAction::Read { addr } => {
            let request = Request::CsrRead { addr };
            match client.request(&request)? {
                Response::Csr { addr, value } => out.show(&Response::Csr { addr, value }, || {
                    format!("{addr:#010x}: {value:#010x}\n")
                }),
                other => Err(unexpected(&request, &other).into()),
            }
        }
        CsrAction::Write { addr, value } => act(
            client,
            out,
            &Request::CsrWrite { addr, value },
            format!("wrote {value:#010x} to CSR {addr:#010x}"),
        ),
    }
}

/// The protocol's width, and the hex digits and mask of a value that wide.
fn access_width(width: WidthArg) -> (AccessWidth, usize, u32) {
    match width {
        WidthArg::Byte => (AccessWidth::Byte, 2, 0xff),
        WidthArg::Word => (AccessWidth::Word, 4, 0xffff),
        WidthArg::Dword => (AccessWidth::Dword, 8, u32::MAX),
    }
}

fn cfg(client: &mut Client, out: Output, action: CfgAction) -> anyhow::Result<()> {
    match action {
        CfgAction::Read {
            function,
            offset,
            width,
        } => {
            let (width, digits, mask) = access_width(width);
            let request = Request::ConfigRead {
                target: function,
                offset,
                width,
            };
            match client.request(&request)? {
                response @ Response::Config { .. } => {
                    let text = match &response {
                        Response::Config {
                            target,
                            offset,
                            value,
                        } => format!(
                            "{} +{offset:#05x}: {:#0w$x}\n",
                            show_fabric_id(*target),
                            value & mask,
                            w = digits + 2
                        ),
                        _ => String::new(),
                    };
                    out.show(&response, || text)
                }
                other => Err(unexpected(&request, &other).into()),
            }
        }
        CfgAction::Write {
            function,
            offset,
            value,
            width,
        } => {
            let (width, digits, mask) = access_width(width);
            if value & !mask != 0 {
                return Err(Usage(format!(
                    "value {value:#x} does not fit a {}-byte access; give a smaller value or a \
                     wider --width",
                    digits / 2
                ))
                .into());
            }
            act(
                client,
                out,
                &Request::ConfigWrite {
                    target: function,
                    offset,
                    width,
                    value,
                },
                format!(
                    "wrote {value:#0w$x} to {} +{offset:#05x}",
                    show_fabric_id(function),
                    w = digits + 2
                ),
            )
        }
    }
}
