//! A host enumerates the real switch on the reference board's top level:
//! its configuration requests go from the card edge P-tile's model through
//! the generated adapters into the emitted `weft_chip`, where the firmware
//! on the soft core answers them as the virtual switch's upstream and
//! downstream ports, and the completions come back out through the TX
//! credit, gate and shim to the host. The cable connectors' links stay
//! down. The host asks from the start, while the firmware still boots: the
//! data plane must ask it to retry (Request Retry Status, §2.3.1, §6.6.1)
//! until the firmware opens its port, and no request may go unanswered.
//!
//! What the host must see is the PCIe Base 6.0 configuration header of a
//! switch (§7.5.1) with the identity and slots the firmware is built with
//! (`softcore-fw/firmware/src/fabric.rs`: vendor 1d1d, the upstream port
//! device 1, each downstream port device 2, four slots on host port 0).

use std::path::PathBuf;

use weft_boards::chip_sim::{self, HostRun};
use weft_boards::lint::verilator_available;
use weft_boards::load;
use weft_boards::sim::{RunConfig, SimTlp};
use weft_pcie::tlp::{
    Attributes, Body, Completion, CompletionStatus, ConfigRequest, ConfigType, Direction, Header,
    Tag, TrafficClass,
};
use weft_pcie::Bdf;

/// The virtual switch's vendor ID (`VIRTUAL_SWITCH_VENDOR`).
const VENDOR: u32 = 0x1d1d;
/// Device IDs of its upstream and downstream ports.
const UPSTREAM_DEVICE: u32 = 1;
const DOWNSTREAM_DEVICE: u32 = 2;
/// Downstream ports (slots) of host port 0.
const SLOTS: u8 = 4;
/// Class code of a PCI-to-PCI bridge (06h, 04h, 00h) in the Class Code
/// and Revision ID register, revision 0.
const BRIDGE_CLASS: u32 = 0x0604_0000;

/// The host's root port, the requester of every request.
const ROOT_PORT: Bdf = Bdf::new(0, 0, 0);
/// The bus the host's root port gives the switch's upstream port, and the
/// secondary and subordinate buses the host then gives the switch.
const UPSTREAM_BUS: u8 = 1;
const SWITCH_BUS: u8 = 2;
const SUBORDINATE_BUS: u8 = 3;
/// Those three as the upstream port's Primary, Secondary and Subordinate
/// Bus Number bytes (§7.5.1.3.3).
const BUS_NUMBERS: u32 =
    UPSTREAM_BUS as u32 | (SWITCH_BUS as u32) << 8 | (SUBORDINATE_BUS as u32) << 16;

/// The reference board's clocks: its P-tiles' 250 MHz application clock,
/// weft's 250 MHz data plane.
const CLOCKS: RunConfig = RunConfig {
    hip_half_ps: 2000,
    weft_half_ps: 2000,
    seed: 1,
};

/// What one request is, and what its completion must carry.
struct Step {
    request: ConfigRequest,
    /// The Completer ID: the function that answers, with the bus number
    /// the upstream port has captured by then (§2.2.6.2: from the Type 0
    /// writes it completes; 0 before the first). An Unsupported Request is
    /// the upstream port's.
    completer: Bdf,
    status: CompletionStatus,
    /// The data DW of a successful read; `None` for a write or an error.
    data: Option<u32>,
}

fn request(
    config_type: ConfigType,
    direction: Direction,
    target: Bdf,
    offset: u16,
    tag: usize,
) -> ConfigRequest {
    ConfigRequest {
        direction,
        config_type,
        requester: ROOT_PORT,
        tag: Tag::new(tag as u16).expect("tag"),
        target,
        register_number: 0,
        extended_register_number: 0,
        first_be: 0xf,
    }
    .with_byte_offset(offset)
}

/// The host's enumeration, one request at a time.
fn steps() -> Vec<Step> {
    let upstream = Bdf::new(UPSTREAM_BUS, 0, 0);
    // Requests before the upstream port's first Type 0 write.
    let uncaptured = 4;
    let mut plan = vec![
        // The upstream port: a bridge (Type 1 header, single function).
        (
            ConfigType::Type0,
            Direction::Read,
            upstream,
            0x00,
            Some(UPSTREAM_DEVICE << 16 | VENDOR),
        ),
        (
            ConfigType::Type0,
            Direction::Read,
            upstream,
            0x08,
            Some(BRIDGE_CLASS),
        ),
        (
            ConfigType::Type0,
            Direction::Read,
            upstream,
            0x0c,
            Some(0x0001_0000),
        ),
        // Function 1 of a single-function device does not exist (§7.5.1.1.9).
        (
            ConfigType::Type0,
            Direction::Read,
            Bdf::new(UPSTREAM_BUS, 0, 1),
            0x00,
            None,
        ),
        // Its bus numbers (§7.5.1.3.3), written and read back.
        (ConfigType::Type0, Direction::Write, upstream, 0x18, None),
        (
            ConfigType::Type0,
            Direction::Read,
            upstream,
            0x18,
            Some(BUS_NUMBERS),
        ),
    ];
    // Its secondary bus holds a downstream port per slot, and nothing more.
    for device in 0..=SLOTS {
        let data = (device < SLOTS).then_some(DOWNSTREAM_DEVICE << 16 | VENDOR);
        plan.push((
            ConfigType::Type1,
            Direction::Read,
            Bdf::new(SWITCH_BUS, device, 0),
            0x00,
            data,
        ));
    }
    plan.extend([
        (
            ConfigType::Type1,
            Direction::Read,
            Bdf::new(SWITCH_BUS, 0, 0),
            0x08,
            Some(BRIDGE_CLASS),
        ),
        (
            ConfigType::Type1,
            Direction::Read,
            Bdf::new(SWITCH_BUS, 0, 0),
            0x0c,
            Some(0x0001_0000),
        ),
        // A bus below the switch that no downstream port claims yet.
        (
            ConfigType::Type1,
            Direction::Read,
            Bdf::new(SUBORDINATE_BUS, 0, 0),
            0x00,
            None,
        ),
    ]);
    plan.into_iter()
        .enumerate()
        .map(|(tag, (config_type, direction, target, offset, data))| {
            let upstream_id = if tag < uncaptured {
                Bdf::new(0, 0, 0)
            } else {
                upstream
            };
            let (status, completer) = if direction == Direction::Write || data.is_some() {
                let answering = if target == upstream {
                    upstream_id
                } else {
                    target
                };
                (CompletionStatus::Successful, answering)
            } else {
                (CompletionStatus::UnsupportedRequest, upstream_id)
            };
            Step {
                request: request(config_type, direction, target, offset, tag),
                completer,
                status,
                data,
            }
        })
        .collect()
}

fn requests(steps: &[Step]) -> Vec<SimTlp> {
    steps
        .iter()
        .map(|step| SimTlp {
            header: Header {
                digest_present: false,
                poisoned: false,
                body: Body::Config(step.request),
            }
            .encode_dws()
            .expect("a configuration request encodes"),
            payload: match step.request.direction {
                Direction::Write => vec![BUS_NUMBERS.swap_bytes()],
                Direction::Read => vec![],
            },
        })
        .collect()
}

/// The completion `step`'s request must get (§2.2.9: a configuration
/// request's Byte Count is 4, its Lower Address 0).
fn expected(step: &Step) -> Completion {
    Completion {
        locked: false,
        traffic_class: TrafficClass::default(),
        attributes: Attributes::default(),
        completer: step.completer,
        status: step.status,
        byte_count_modified: false,
        byte_count: 4,
        requester: ROOT_PORT,
        tag: step.request.tag,
        lower_address: 0,
        data_dw: step.data.map(|_| 1),
    }
}

/// The directory `cargo xtask verilog` emits the chip into.
fn design_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/verilog")
}

/// The host's run and its directory, kept until the checks pass.
fn run(steps: &[Step]) -> Option<(HostRun, PathBuf)> {
    if !verilator_available() {
        eprintln!("skipped: verilator is not installed (`cargo xtask setup` installs it)");
        return None;
    }
    let board = load::by_name("stratix10-dx-devkit").expect("reference board loads");
    let design = design_dir();
    let files = chip_sim::files(&board, &design).unwrap_or_else(|e| {
        panic!(
            "{e}: the host's run needs the emitted chip in {} (`cargo xtask verilog`, which \
             `cargo xtask test` runs first)",
            design.display()
        )
    });
    let dir = std::env::temp_dir().join(format!("weft-host-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = chip_sim::run(&board, &dir, &files, &requests(steps), CLOCKS)
        .unwrap_or_else(|e| panic!("{e}"));
    Some((run, dir))
}

#[test]
fn a_host_enumerates_the_switch_through_the_reference_boards_top_level() {
    let steps = steps();
    let Some((run, dir)) = run(&steps) else {
        return;
    };
    eprintln!(
        "the host's {} requests: {} retries ({:?} before its port opened), {} timeouts; \
         the console said:\n{}",
        steps.len(),
        run.retries,
        run.retries_before_open,
        run.timeouts,
        run.console
    );
    assert_eq!(run.timeouts, 0, "a request went unanswered");
    // The host asked while the firmware booted: the data plane told it to
    // retry (§2.3.1, §6.6.1) until the firmware opened its port.
    assert!(
        run.retries_before_open.is_some_and(|n| n > 0),
        "no retry before the host's port opened: {:?}",
        run.retries_before_open
    );
    assert_eq!(
        run.completions.len(),
        steps.len(),
        "a completion per request"
    );
    for (i, (step, got)) in steps.iter().zip(&run.completions).enumerate() {
        let header = Header::decode_dws(&got.header)
            .unwrap_or_else(|e| panic!("completion {i}: does not decode: {e:?}"));
        assert_eq!(
            header.body,
            Body::Completion(expected(step)),
            "completion {i}, for {:?}",
            step.request
        );
        let data: Vec<u32> = got.payload.iter().map(|dw| dw.swap_bytes()).collect();
        assert_eq!(data, Vec::from_iter(step.data), "completion {i}'s data");
    }
    assert!(
        run.console.contains("boot: "),
        "the boot loader spoke on the console:\n{}",
        run.console
    );
    // The kit's console runs over JTAG: what the chip said reached the
    // host through the wrapper's console module, byte for byte (the
    // module takes a byte at its stop bit's middle, as the testbench's
    // decoder does, so a run may end with the last one in neither).
    let jtag = run
        .jtag_console
        .as_deref()
        .expect("the reference kit's console runs over JTAG");
    let untaken = run.console.strip_prefix(jtag).map(str::len);
    assert!(
        untaken.is_some_and(|n| n <= 1),
        "over JTAG the host read:\n{jtag}\nthe chip said:\n{}",
        run.console
    );
    let _ = std::fs::remove_dir_all(&dir);
}
