//! The conventional PCIe switch as a root port sees it, driven with TLPs:
//! Type 1 requests routed by the bus numbers written into its bridges and
//! turned into Type 0 only at the bridge whose secondary bus is the target
//! (PCIe Base 6.0 §7.3.1, §7.3.3), memory requests by the bridges' windows
//! (§7.5.1.3.8), completions by bus, and ACS-capable downstream ports.

use weft_devices::conventional::ConventionalSwitch;
use weft_devices::gpu::{Gpu, GpuConfig};
use weft_devices::packet::{config_read, config_write, read_chunk, Packet};
use weft_devices::pcie::config::acs::feature;
use weft_devices::pcie::config::ext_cap_id;
use weft_devices::pcie::config::header::{command, type1};
use weft_devices::pcie::config::FunctionIdentity;
use weft_devices::pcie::split::{split_read, PayloadSize};
use weft_devices::pcie::tlp::{Body, CompletionStatus, ConfigType, Tag};
use weft_devices::pcie::Bdf;
use weft_devices::Device;

use std::time::Duration;

const ROOT: Bdf = Bdf::new(0, 0, 0);
/// The upstream port, on the root port's secondary bus.
const UPSTREAM: Bdf = Bdf::new(1, 0, 0);
/// The switch's internal bus, and the GPUs below its two downstream ports.
const INTERNAL: u8 = 2;
const GPU0: Bdf = Bdf::new(3, 0, 0);
const GPU1: Bdf = Bdf::new(4, 0, 0);
const LATER: Duration = Duration::from_secs(2);

fn gpu() -> Option<Box<dyn Device>> {
    let config = GpuConfig {
        memory_size: 1 << 20,
        ..GpuConfig::default()
    };
    Some(Box::new(Gpu::new(config).expect("valid GPU")))
}

fn switch(devices: Vec<Option<Box<dyn Device>>>) -> ConventionalSwitch {
    let identity = FunctionIdentity {
        vendor_id: 0x10b5,
        device_id: 0x8747,
        revision_id: 0,
        class_code: 0x06_04_00,
    };
    ConventionalSwitch::new(identity, devices).expect("ports fit")
}

fn with_type(mut packet: Packet, config_type: ConfigType) -> Packet {
    if let Body::Config(request) = &mut packet.header.body {
        request.config_type = config_type;
    }
    packet
}

/// The status and data of the one completion `packet` gets.
fn ask(switch: &mut ConventionalSwitch, packet: Packet) -> (CompletionStatus, Option<u32>) {
    let replies = switch.handle(LATER, &packet);
    assert_eq!(replies.len(), 1, "one completion: {replies:?}");
    let Body::Completion(completion) = replies[0].header.body else {
        panic!("not a completion: {:?}", replies[0]);
    };
    let data = (replies[0].payload.len() >= 4)
        .then(|| u32::from_le_bytes(replies[0].payload[..4].try_into().expect("a DW")));
    (completion.status, data)
}

fn read(
    switch: &mut ConventionalSwitch,
    kind: ConfigType,
    target: Bdf,
    offset: u16,
) -> (CompletionStatus, Option<u32>) {
    let request = config_read(ROOT, Tag::from_8bit(1), target, offset);
    ask(switch, with_type(request, kind))
}

fn write(switch: &mut ConventionalSwitch, kind: ConfigType, target: Bdf, offset: u16, value: u32) {
    let request = config_write(ROOT, Tag::from_8bit(2), target, offset, value, 0xf);
    let (status, _) = ask(switch, with_type(request, kind));
    assert_eq!(
        status,
        CompletionStatus::Successful,
        "write {target:?} {offset:#x}"
    );
}

/// A 1 DW Memory Read of `address` with `tag`.
fn one_dw_read(address: u64, tag: u8) -> Packet {
    let mut chunks = split_read(address, 4, PayloadSize::B128).expect("one chunk");
    let chunk = chunks.next().expect("one chunk");
    read_chunk(ROOT, Tag::from_8bit(tag), &chunk)
}

/// Buses as an enumerator numbers them: the upstream port 1 → 2..=4,
/// downstream port n → 3 + n.
fn numbered(devices: Vec<Option<Box<dyn Device>>>) -> ConventionalSwitch {
    let mut switch = switch(devices);
    let buses = |primary: u32, secondary: u32, subordinate: u32| {
        primary | secondary << 8 | subordinate << 16
    };
    write(
        &mut switch,
        ConfigType::Type0,
        UPSTREAM,
        type1::PRIMARY_BUS,
        buses(1, 2, 4),
    );
    for port in 0..2u8 {
        let bus = 3 + u32::from(port);
        let id = Bdf::new(INTERNAL, port, 0);
        write(
            &mut switch,
            ConfigType::Type1,
            id,
            type1::PRIMARY_BUS,
            buses(2, bus, bus),
        );
    }
    switch
}

#[test]
fn type_1_becomes_type_0_only_at_the_bridge_of_the_target_bus() {
    let mut switch = numbered(vec![gpu(), None]);
    // The upstream port is the Type 0 function on its link.
    let (status, id) = read(&mut switch, ConfigType::Type0, UPSTREAM, 0);
    assert_eq!(
        (status, id),
        (CompletionStatus::Successful, Some(0x8747_10b5))
    );
    // The downstream ports are on the internal bus, one per device number.
    let (status, _) = read(&mut switch, ConfigType::Type1, Bdf::new(INTERNAL, 1, 0), 0);
    assert_eq!(status, CompletionStatus::Successful);
    let (status, _) = read(&mut switch, ConfigType::Type1, Bdf::new(INTERNAL, 2, 0), 0);
    assert_eq!(status, CompletionStatus::UnsupportedRequest);
    // The GPU takes only Type 0, so reading it proves the conversion.
    let (status, id) = read(&mut switch, ConfigType::Type1, GPU0, 0);
    assert_eq!(status, CompletionStatus::Successful);
    assert_eq!(id.map(|id| id & 0xffff), Some(0x10de));
    // Device 1 on a downstream port's secondary bus: no ARI forwarding.
    let (status, _) = read(&mut switch, ConfigType::Type1, Bdf::new(3, 1, 0), 0);
    assert_eq!(status, CompletionStatus::UnsupportedRequest);
    // An empty port, and a bus no bridge forwards.
    let (status, _) = read(&mut switch, ConfigType::Type1, GPU1, 0);
    assert_eq!(status, CompletionStatus::UnsupportedRequest);
    let (status, _) = read(&mut switch, ConfigType::Type1, Bdf::new(5, 0, 0), 0);
    assert_eq!(status, CompletionStatus::UnsupportedRequest);
    // A Type 0 request for another device number on the link is not the switch's.
    let (status, _) = read(&mut switch, ConfigType::Type0, Bdf::new(1, 1, 0), 0);
    assert_eq!(status, CompletionStatus::UnsupportedRequest);
}

#[test]
fn memory_reads_go_down_the_port_whose_window_holds_them() {
    let mut switch = numbered(vec![None, gpu()]);
    // GPU1's 16 MiB register BAR at 0xe000_0000, in port 1's window.
    let bar = 0xe000_0000u32;
    write(&mut switch, ConfigType::Type1, GPU1, 0x10, bar);
    let enable = u32::from(command::MEMORY_SPACE | command::BUS_MASTER);
    write(&mut switch, ConfigType::Type1, GPU1, 0x04, enable);
    let window = (bar >> 16) | ((bar + (16 << 20) - 1) >> 16 & 0xfff0) << 16;
    write(
        &mut switch,
        ConfigType::Type1,
        Bdf::new(INTERNAL, 1, 0),
        type1::MEMORY_BASE,
        window,
    );
    write(
        &mut switch,
        ConfigType::Type0,
        UPSTREAM,
        type1::MEMORY_BASE,
        window,
    );
    let request = one_dw_read(u64::from(bar), 9);
    // The bridges decode only with Memory Space Enable (§7.5.1.1.3).
    let (status, _) = ask(&mut switch, request.clone());
    assert_eq!(status, CompletionStatus::UnsupportedRequest);
    write(
        &mut switch,
        ConfigType::Type1,
        Bdf::new(INTERNAL, 1, 0),
        0x04,
        enable,
    );
    write(&mut switch, ConfigType::Type0, UPSTREAM, 0x04, enable);
    let replies = switch.handle(LATER, &request);
    let Body::Completion(completion) = replies[0].header.body else {
        panic!("not a completion: {replies:?}");
    };
    assert_eq!(completion.status, CompletionStatus::Successful);
    assert_eq!(completion.completer, GPU1, "the GPU completes it");
    // Outside every window: Unsupported Request from the switch.
    let outside = one_dw_read(0xd000_0000, 10);
    let (status, _) = ask(&mut switch, outside);
    assert_eq!(status, CompletionStatus::UnsupportedRequest);
    assert!(switch.owns(GPU1) && !switch.owns(Bdf::new(5, 0, 0)));
}

#[test]
fn downstream_ports_offer_acs_redirect_and_the_upstream_port_none() {
    let mut switch = numbered(vec![gpu(), gpu()]);
    let extended = |switch: &mut ConventionalSwitch, kind, id| {
        let (_, header) = read(switch, kind, id, 0x100);
        header.expect("a header") & 0xffff
    };
    assert_ne!(
        extended(&mut switch, ConfigType::Type0, UPSTREAM),
        u32::from(ext_cap_id::ACS)
    );
    let port = Bdf::new(INTERNAL, 0, 0);
    assert_eq!(
        extended(&mut switch, ConfigType::Type1, port),
        u32::from(ext_cap_id::ACS)
    );
    let (_, capability) = read(&mut switch, ConfigType::Type1, port, 0x104);
    let supported = capability.expect("data") as u16;
    let wanted = feature::P2P_REQUEST_REDIRECT | feature::P2P_COMPLETION_REDIRECT;
    assert_eq!(supported & wanted, wanted);
}
