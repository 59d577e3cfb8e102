//! The conventional PCIe switch as a root port sees it, driven with TLPs:
//! Type 1 requests routed by the bus numbers written into its bridges and
//! turned into Type 0 only at the bridge whose secondary bus is the target
//! (PCIe Base 6.0 §7.3.1, §7.3.3), memory requests by the bridges' windows
//! (§7.5.1.3.8), completions by bus, and ACS-capable downstream ports.

use weft_devices::conventional::ConventionalSwitch;
use weft_devices::gpu::{Gpu, GpuConfig};
use weft_devices::packet::{config_read, config_write, read_chunk, write_chunk, Packet};
use weft_devices::pcie::config::acs::feature;
use weft_devices::pcie::config::ext_cap_id;
use weft_devices::pcie::config::header::{command, type1};
use weft_devices::pcie::config::FunctionIdentity;
use weft_devices::pcie::split::{split_read, split_write, PayloadSize};
use weft_devices::pcie::tlp::{Body, CompletionStatus, ConfigType, Tag};
use weft_devices::pcie::Bdf;
use weft_devices::{Claim, ConfigError, Device};

use std::cell::RefCell;
use std::rc::Rc;
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

/// A device below a downstream port that sends what it is given and keeps
/// what reaches it: the two ends of peer traffic.
#[derive(Default)]
struct Peer {
    to_send: Queue,
    received: Queue,
}

/// TLPs shared between a [`Peer`] inside the switch and the test.
type Queue = Rc<RefCell<Vec<Packet>>>;

impl Device for Peer {
    fn config_read(
        &mut self,
        _now: Duration,
        target: Bdf,
        _offset: u16,
    ) -> Result<u32, ConfigError> {
        Err(ConfigError::UnsupportedRequest { target })
    }

    fn config_write(
        &mut self,
        _now: Duration,
        target: Bdf,
        _offset: u16,
        _value: u32,
        _byte_enables: u8,
    ) -> Result<(), ConfigError> {
        Err(ConfigError::UnsupportedRequest { target })
    }

    fn claim(&self, _address: u64) -> Option<Claim> {
        None
    }

    fn memory_read(&mut self, _now: Duration, _address: u64, _out: &mut [u8]) {}

    fn memory_write(&mut self, _now: Duration, _address: u64, _data: &[u8]) {}

    fn receive_completion(&mut self, _now: Duration, _completion: &Packet) {}

    fn poll(&mut self, _now: Duration) -> Vec<Packet> {
        std::mem::take(&mut *self.to_send.borrow_mut())
    }

    fn owns(&self, _id: Bdf) -> bool {
        false
    }

    fn reset(&mut self, _now: Duration) {}

    fn handle(&mut self, _now: Duration, packet: &Packet) -> Vec<Packet> {
        self.received.borrow_mut().push(packet.clone());
        Vec::new()
    }

    fn completer_for_unclaimed(&self) -> Bdf {
        GPU0
    }
}

#[test]
fn peer_writes_cross_below_the_switch_unless_acs_redirects_them_upstream() {
    // Port 1's window holds 0xe000_0000..=0xe00f_ffff.
    let peer_address = 0xe000_0010;
    let write_to_peer = || {
        let mut chunks = split_write(peer_address, 4, PayloadSize::B128).expect("one chunk");
        write_chunk(GPU0, &chunks.next().expect("one chunk"), &[1, 2, 3, 4])
    };
    let sender = Peer::default();
    let to_send = sender.to_send.clone();
    let receiver = Peer::default();
    let received = receiver.received.clone();
    let mut switch = numbered(vec![Some(Box::new(sender)), Some(Box::new(receiver))]);
    let port0 = Bdf::new(INTERNAL, 0, 0);
    let port1 = Bdf::new(INTERNAL, 1, 0);
    let window = 0xe000 | 0xe000 << 16;
    write(
        &mut switch,
        ConfigType::Type1,
        port1,
        type1::MEMORY_BASE,
        window,
    );
    let enable = u32::from(command::MEMORY_SPACE | command::BUS_MASTER);
    for port in [port0, port1] {
        write(&mut switch, ConfigType::Type1, port, 0x04, enable);
    }
    write(&mut switch, ConfigType::Type0, UPSTREAM, 0x04, enable);

    // The device on port 0 sends a write into port 1's window: it crosses.
    // What the switch sends upstream when port 0's device sends `packet`.
    let sent = |switch: &mut ConventionalSwitch, packet: Packet| {
        to_send.borrow_mut().push(packet);
        switch.poll(LATER)
    };
    let up = sent(&mut switch, write_to_peer());
    assert!(up.is_empty(), "nothing goes upstream: {up:?}");
    assert_eq!(received.borrow().len(), 1);

    // With P2P Request Redirect on port 0 it goes upstream instead (§6.12.3).
    let acs = 0x100;
    let (_, header) = read(&mut switch, ConfigType::Type1, port0, acs);
    assert_eq!(header.map(|h| h & 0xffff), Some(u32::from(ext_cap_id::ACS)));
    let redirect = u32::from(feature::P2P_REQUEST_REDIRECT) << 16;
    let request = config_write(ROOT, Tag::from_8bit(3), port0, acs + 4, redirect, 0b1100);
    let (status, _) = ask(&mut switch, with_type(request, ConfigType::Type1));
    assert_eq!(status, CompletionStatus::Successful);
    let up = sent(&mut switch, write_to_peer());
    assert_eq!(up.len(), 1, "redirected upstream");
    assert_eq!(received.borrow().len(), 1, "the peer saw no more");

    // Without Bus Master Enable on port 0 it goes nowhere (§7.5.1.1.3).
    write(
        &mut switch,
        ConfigType::Type1,
        port0,
        0x04,
        u32::from(command::MEMORY_SPACE),
    );
    assert!(sent(&mut switch, write_to_peer()).is_empty());
    assert_eq!(received.borrow().len(), 1);
}
