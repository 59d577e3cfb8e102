//! The firmware ELF on the ISS board runs the fabric manager against a
//! model switch: its CSR window (`weft_iss::data_plane`) over a weft-model
//! switch with a GPU (weft-devices) on one port's link and a host's root
//! port on another. The firmware enumerates the GPU through the injector
//! and mailbox, lists it in its answer to a weft-proto Topology request
//! over the management MAC, and a Bind request makes the switch's tables
//! grant the host the GPU; a host configuration request that reaches the
//! mailbox while the firmware sleeps wakes it through the data plane's
//! interrupt (`mip.MEIP`) and is answered out of the host port, with no
//! timer alarm on the way and none due within a millisecond.
//!
//! The firmware also serves the board's requests: a CSR read through its
//! window, a write to what the fabric manager owns refused and a counter
//! clear let through, the configuration saved to its flash region and
//! restored, and a two-phase reset that its watchdog carries out.
//!
//! The firmware reports the instructions and cycles (`mtime` ticks, one
//! per step at the reference soft core clock) its enumeration took on the console; the test
//! prints them, and the simulated time and instructions from a host
//! configuration request's arrival to its completion, and the timer wakes
//! and instructions of 100 ms idle with the fabric running. Measured at the
//! earlier 100 MHz clock: 30 us
//! and 3000 instructions to the completion, 5 wakes and 5014 instructions
//! idle; with the 1 ms mailbox alarm the firmware used before the mailbox
//! had an interrupt, 1024 us (the same 3000 instructions, after sleeping
//! to the alarm), 100 wakes and 198867 instructions idle.

mod firmware_support;

use std::time::Duration;

use firmware_support::*;
use weft_devices::gpu::{Gpu, GpuConfig};
use weft_devices::Device;
use weft_iss::data_plane::{DataPlaneWindow, Links};
use weft_model::csr_window::CsrWindow;
use weft_model::isolation::error_completion;
use weft_model::{LinkRequest, Packet, PortIndex, PortRole, Switch};
use weft_pcie::tlp::{
    Body, CompletionStatus, ConfigRequest, ConfigType, Direction, Header as TlpHeader, Tag,
};
use weft_pcie::Bdf;
use weft_proto::{
    BoundFunctions, Error, PortAction, Request, ResetScope, Response, SlotIndex, SwitchId,
    TopologyCursor, TopologyItem,
};
use weft_regs::csr::{counter_control, global, port as port_csr};
use weft_regs::tables::HostIndex;
use weft_sim::iss_board::{Activity, IssBoard};

const CLIENT_PORT: u16 = 40_001;
/// The firmware's built-in host port (its `fabric::HOST_PORTS`).
const HOST_PORT: PortIndex = PortIndex(0);
/// The port the GPU's link is on.
const GPU_PORT: PortIndex = PortIndex(2);
/// Ports of the modelled switch.
const PORTS: usize = 4;
/// Steps the firmware gets to reach its fabric start (100 ms after reset,
/// 12.5 M steps at 125 MHz) and enumerate.
const START_STEPS: u64 = 200_000_000;
/// Steps the board runs between looks for a completion the firmware sent:
/// the resolution of the measured answer time (0.8 us at 125 MHz).
const ANSWER_CHUNK_STEPS: u64 = 100;
/// Milliseconds the firmware is left idle with the fabric running.
const IDLE_MS: u64 = 100;
/// `mtime` ticks in a millisecond at the ISS board's clock.
const ONE_MS_TICKS: u64 = weft_sim::iss_board::CPU_CLOCK_HZ / 1_000;

/// A board whose data plane is a switch with the GPU on [`GPU_PORT`]'s
/// link; every other link is down (UR, PCIe Base 6.0 §2.9.1).
fn board_with_gpu(image: &[u8]) -> IssBoard {
    let mut gpu = Gpu::new(GpuConfig::default()).expect("a valid GPU");
    let links: Links = Box::new(move |port: PortIndex, packet: &Packet| {
        if port == GPU_PORT {
            gpu.handle(Duration::from_secs(1), packet)
                .into_iter()
                .next()
        } else {
            error_completion(
                &packet.header,
                Bdf::default(),
                CompletionStatus::UnsupportedRequest,
            )
        }
    });
    let window = DataPlaneWindow::new(CsrWindow::new(Switch::new(PORTS)), links);
    IssBoard::with_data_plane(image, window).expect("the firmware ELF loads")
}

/// Runs the board, moving time to each alarm it sets, until its console
/// says how the fabric's start went; returns that line.
fn run_to_fabric_start(board: &mut IssBoard) -> String {
    let mut printed = String::new();
    while board.steps() < START_STEPS {
        if board.run(START_STEPS) == Activity::Waiting {
            board.skip_to_alarm();
        }
        printed.push_str(&String::from_utf8_lossy(
            &board.console().take_transmitted(),
        ));
        if let Some(line) = printed
            .lines()
            .find(|line| line.starts_with("fabric: ") && line.contains("enumerated"))
        {
            return line.to_owned();
        }
        assert!(
            !printed.contains("start failed"),
            "the fabric did not start: {printed}"
        );
    }
    panic!("no fabric start within {START_STEPS} steps: {printed}");
}

/// Sends `request` under the test key and decodes the one answer.
fn ask(board: &mut IssBoard, id: u32, request: &Request) -> Response {
    ask_firmware(board, CLIENT_PORT, id, request, &test_key())
}

/// A host's Type 0 read of DW 0 of `target` with `tag`, as its root port sends it.
fn host_config_read(target: Bdf, tag: u16) -> Vec<u8> {
    let request = ConfigRequest {
        direction: Direction::Read,
        config_type: ConfigType::Type0,
        requester: Bdf::new(0, 0, 0),
        tag: Tag::new(tag).expect("tag fits"),
        target,
        register_number: 0,
        extended_register_number: 0,
        first_be: 0xf,
    };
    let header = TlpHeader {
        digest_present: false,
        poisoned: false,
        body: Body::Config(request),
    };
    Packet::new(header, Vec::new())
        .to_bytes()
        .expect("a well-formed TLP")
}

#[test]
fn the_firmware_enumerates_lists_and_binds_an_endpoint_of_the_model_switch() {
    let Some(image) = firmware_image() else {
        return;
    };
    let mut board = board_with_gpu(&image);
    board
        .console()
        .receive(format!("key {TEST_KEY_HEX}\r").as_bytes());
    let started = run_to_fabric_start(&mut board);
    eprintln!(
        "firmware on the ISS at {} MHz: {started}",
        weft_sim::iss_board::CPU_CLOCK_HZ as f64 / 1e6
    );
    assert!(
        started.contains("fabric: 1 functions enumerated"),
        "{started}"
    );
    // The first datagram after the start: ARP first, as a host does.
    let answers = exchange(&mut board, &arp_request(FIRMWARE_IP));
    assert_eq!(answers.len(), 1, "one ARP reply");

    // Topology lists the GPU at its port, with its IDs.
    let mut endpoints = Vec::new();
    let mut cursor = TopologyCursor(0);
    let generation = loop {
        let request = Request::Topology {
            cursor,
            generation: None,
        };
        let Response::Topology(page) = ask(&mut board, 1 + cursor.0, &request) else {
            panic!("expected a topology page");
        };
        endpoints.extend(page.items.into_iter().filter_map(|item| match item {
            TopologyItem::Endpoint(endpoint) => Some(endpoint),
            _ => None,
        }));
        match page.next {
            Some(next) => cursor = next,
            None => break page.generation,
        }
    };
    assert_eq!(endpoints.len(), 1, "{endpoints:?}");
    let gpu = &endpoints[0];
    let expected = GpuConfig::default();
    assert_eq!(
        (gpu.vendor_id, gpu.device_id),
        (expected.vendor_id, expected.device_id)
    );
    assert_eq!(gpu.at.switch, SwitchId(FIRMWARE_SWITCH));
    assert_eq!(gpu.at.port.0, GPU_PORT.0);
    assert_eq!(gpu.owner, None);

    // Bind it to host 0's slot 0: the switch's tables give the host the GPU.
    let gpu_id = Bdf(gpu.fabric_id.0);
    let unbound = board
        .data_plane()
        .window()
        .switch()
        .port_tables(GPU_PORT)
        .map(|t| t.ownership(gpu_id).owner);
    assert_eq!(unbound, Some(None), "free before the bind");
    let mut functions = BoundFunctions::new();
    functions.push(gpu.fabric_id).expect("room for one");
    let bind = Request::Bind {
        host: weft_proto::HostIndex(0),
        slot: SlotIndex(0),
        functions,
        if_generation: Some(generation),
    };
    assert_eq!(ask(&mut board, 100, &bind), Response::Done);
    let window = board.data_plane().window();
    let tables = window
        .switch()
        .port_tables(GPU_PORT)
        .expect("the port exists");
    let owner = tables.ownership(gpu_id).owner.expect("bound to a host");
    assert_eq!(owner.host, HostIndex(0));
    let host_tables = window
        .switch()
        .port_tables(HOST_PORT)
        .expect("the port exists");
    let PortRole::Host { proxy_id, .. } = host_tables.role else {
        panic!("port 0 is the host's: {:?}", host_tables.role);
    };
    assert_eq!(owner.proxy_id, proxy_id, "the host's proxy owns it");
    drop(window);

    // A host's configuration read of its virtual upstream port (bus 0,
    // device 0 below its root port) reaches the mailbox while the firmware
    // sleeps in `wfi`: the mailbox's interrupt wakes it, and the read is
    // answered out of the host port before the firmware's timer alarm.
    assert_eq!(
        board.run(START_STEPS),
        Activity::Waiting,
        "the firmware sleeps"
    );
    let alarm = board.ticks_to_alarm();
    board
        .data_plane()
        .window()
        .ingress(HOST_PORT, &host_config_read(Bdf::new(1, 0, 0), 7))
        .expect("the port exists");
    let (before, arrived) = (board.instructions(), board.mtime());
    let mut answered = Vec::new();
    let mut alarms = 0;
    while alarms < 4 {
        let activity = board.run(ANSWER_CHUNK_STEPS);
        answered = board.data_plane().window().take_injected();
        if !answered.is_empty() {
            break;
        }
        if activity == Activity::Waiting {
            board.skip_to_alarm();
            alarms += 1;
        }
    }
    let latency = IssBoard::duration_of(board.mtime() - arrived);
    let spent = board.instructions() - before;
    assert_eq!(answered.len(), 1, "one completion");
    assert_eq!(answered[0].from, HOST_PORT);
    let Body::Completion(completion) = answered[0].packet.header.body else {
        panic!("a completion: {:?}", answered[0].packet.header);
    };
    assert_eq!(completion.status, CompletionStatus::Successful);
    assert_eq!(completion.tag, Tag::new(7).expect("tag fits"));
    eprintln!(
        "firmware on the ISS: one host configuration read answered {:.1} us after it \
         reached the sleeping firmware's mailbox (to within {:.0} us), in {spent} \
         instructions; the firmware's alarm was {:.1} us away; woken by {alarms} timer alarms",
        latency.as_secs_f64() * 1e6,
        IssBoard::duration_of(ANSWER_CHUNK_STEPS).as_secs_f64() * 1e6,
        IssBoard::duration_of(alarm).as_secs_f64() * 1e6,
    );
    assert_eq!(
        alarms, 0,
        "the mailbox's interrupt woke the firmware, not its timer"
    );
    assert!(
        alarm > ONE_MS_TICKS,
        "asleep with the fabric running, the firmware sets no 1 ms polling alarm"
    );

    // Idle with the fabric running, the firmware wakes for its own alarms
    // only (the console's, smoltcp's), not every millisecond.
    let (idle_from, idle_instructions) = (board.mtime(), board.instructions());
    let mut wakes = 0;
    while board.mtime() - idle_from < IDLE_MS * ONE_MS_TICKS {
        if board.run(START_STEPS) == Activity::Waiting {
            board.skip_to_alarm();
            wakes += 1;
        }
    }
    eprintln!(
        "firmware on the ISS: {wakes} timer wakes and {} instructions in {IDLE_MS} ms idle \
         with the fabric running",
        board.instructions() - idle_instructions
    );
    assert!(
        wakes < IDLE_MS / 2,
        "{wakes} wakes in {IDLE_MS} ms: the firmware polls"
    );

    // Retraining the GPU's link is a write of the port's LINK register,
    // which the switch takes as a request of its link (§7.5.3.7).
    let retrain = Request::PortControl {
        port: weft_proto::PortIndex(GPU_PORT.0),
        action: PortAction::Retrain,
    };
    assert_eq!(ask(&mut board, 200, &retrain), Response::Done);
    assert_eq!(
        board
            .data_plane()
            .window()
            .switch_mut()
            .take_link_requests(),
        [(GPU_PORT, LinkRequest::Retrain)]
    );
}

/// Where the firmware keeps the saved configuration in the flash part:
/// the two sectors after the key's (its `flash::CONFIG_REGION`).
const CONFIG_AT: usize = 0x2000;

#[test]
fn the_firmware_serves_csr_diagnostics_a_saved_configuration_and_a_reset() {
    let Some(image) = firmware_image() else {
        return;
    };
    let mut board = board_with_gpu(&image);
    board
        .console()
        .receive(format!("key {TEST_KEY_HEX}\r").as_bytes());
    run_to_fabric_start(&mut board);
    let answers = exchange(&mut board, &arp_request(FIRMWARE_IP));
    assert_eq!(answers.len(), 1, "one ARP reply");

    // The data plane's identity register, read through the CSR window.
    let id = global::ID.address(0, 0);
    assert_eq!(
        ask(&mut board, 1, &Request::CsrRead { addr: id }),
        Response::Csr {
            addr: id,
            value: u32::from_be_bytes(*b"WEFT")
        }
    );
    // The GPU port's role is the fabric manager's: refused, unchanged.
    let role = |board: &IssBoard| {
        board
            .data_plane()
            .window()
            .switch()
            .port_tables(GPU_PORT)
            .map(|t| t.role)
    };
    let before = role(&board);
    let control = port_csr::CONTROL.address(u32::from(GPU_PORT.0), 0);
    assert_eq!(
        ask(
            &mut board,
            2,
            &Request::CsrWrite {
                addr: control,
                value: 0
            }
        ),
        Response::Error(Error::FabricOwnedCsr { addr: control })
    );
    assert_eq!(role(&board), before);
    assert_eq!(
        ask(
            &mut board,
            3,
            &Request::CsrWrite {
                addr: counter_control::CLEAR.address(0, 0),
                value: 1 << GPU_PORT.0
            }
        ),
        Response::Done
    );

    // Nothing saved yet; then a record in the configuration region.
    assert_eq!(
        ask(&mut board, 4, &Request::RestoreConfig),
        Response::Error(Error::NoSavedConfig)
    );
    assert_eq!(ask(&mut board, 5, &Request::SaveConfig), Response::Done);
    assert_eq!(board.flash().contents()[CONFIG_AT..CONFIG_AT + 4], *b"WFTB");
    assert_eq!(ask(&mut board, 6, &Request::RestoreConfig), Response::Done);

    // The switch scope needs a data plane reset the board does not have.
    assert_eq!(
        ask(
            &mut board,
            7,
            &Request::ResetArm {
                scope: ResetScope::Switch
            }
        ),
        Response::Error(Error::Unsupported)
    );
    let Response::ResetArmed { token, .. } = ask(
        &mut board,
        8,
        &Request::ResetArm {
            scope: ResetScope::Firmware,
        },
    ) else {
        panic!("expected an armed reset");
    };
    assert_eq!(board.watchdog_resets(), 0);
    assert_eq!(
        ask(&mut board, 9, &Request::ResetTrigger { token }),
        Response::Done
    );
    // The answer went out first; the watchdog fires 10 ms after it, and
    // after the time the console needs for what it holds (here its 16-byte
    // FIFO at most, 1.5 ms).
    run_while(&mut board, 20 * ONE_MS_TICKS, |_| true);
    assert_eq!(board.watchdog_resets(), 1, "the watchdog reset the SoC");
}
