//! The RTL host ingress stage agrees with weft-model's `Switch` at a host port.
//!
//! Each case programs random windows into the stage over the CSR bus, as
//! the firmware does, and the same windows into a model switch whose one
//! host port is port 0 and whose routes send every fabric address out of
//! fabric port 1, so routing never decides. Then random TLPs built with
//! weft-pcie (memory reads, writes and AtomicOps with 3 and 4 DW headers
//! and addresses near the windows' edges and the 4 GiB boundary; I/O,
//! configuration requests and messages) go through both: the RTL's
//! translated header must equal the header bytes of the model's
//! forwarded TLP, or both send the TLP to the CPU, or both drop it for the
//! same reason. The stage leaves tag allocation to a later stage, so the
//! tag of a non-posted request is not compared.

mod common;

use common::{on_big_stack, probe, Probe};
use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::csr::{self, CsrTarget};
use weft_hdl::driver::CycleDriver;
use weft_hdl::translate::{HostIngress, IngressDestination};
use weft_model::{
    AddressRoute, Destination, DropReason, HostIndex, Packet, Permissions, PortIndex, PortRole,
    PortTables, RouteTables, Switch, Window,
};
use weft_pcie::tlp::{
    AddressType, Attributes, Body, ConfigRequest, ConfigType, Direction, Header, IntxPin,
    IoRequest, MemoryOp, MemoryRequest, Message, MessageCode, MessageRouting, ProcessingHint, Tag,
    TrafficClass,
};
use weft_pcie::Bdf;
use weft_regs::capacity;
use weft_regs::csr::window;

/// Cases: each programs a whole window table over the bus, not cheap in debug builds.
const CASES: u32 = 16;
/// TLPs offered per programmed table.
const TLPS: usize = 64;
const PORT: u32 = 0;
type Stage = HostIngress<{ capacity::WINDOWS_PER_PORT }>;

/// A 64-bit value near zero, the top, or 4 GiB, or anywhere.
fn edge_value() -> impl Strategy<Value = u64> {
    prop_oneof![
        2 => 0u64..0x4000,
        1 => (0u64..0x4000).prop_map(|x| u64::MAX - x),
        3 => (0u64..0x4000).prop_map(|x| (1u64 << 32) - 0x2000 + x),
        2 => any::<u64>(),
    ]
}

/// A window and whether its entry is valid. The fabric base keeps the
/// base's offset in its 4 KiB page, as page-granular BARs do, so a
/// translated request crosses no page boundary (§2.2.7.1) and weft-pcie
/// can encode the model's result.
fn window_entry() -> impl Strategy<Value = (bool, Window)> {
    (
        prop::bool::weighted(0.8),
        edge_value(),
        prop_oneof![3 => 1u64..0x3000, 1 => (0u32..64).prop_map(|s| 1u64 << s), 1 => edge_value()],
        edge_value(),
        any::<(bool, bool)>(),
    )
        .prop_map(|(valid, base, size, fabric, (read, write))| {
            let window = Window {
                base,
                size,
                fabric_base: (fabric & !0xfff) | (base & 0xfff),
                permissions: Permissions { read, write },
            };
            (valid, window)
        })
}

/// One TLP a host might send, before its address is placed.
#[derive(Clone, Debug)]
enum Request {
    Memory {
        op: MemoryOp,
        probe: Probe,
        length_dw: u16,
        hint: Option<u8>,
    },
    Io(Direction),
    Config(Direction, ConfigType),
    Message(usize),
}

fn request() -> impl Strategy<Value = Request> {
    let op = prop::sample::select(
        &[
            MemoryOp::Read,
            MemoryOp::Write,
            MemoryOp::ReadLocked,
            MemoryOp::FetchAdd,
            MemoryOp::Swap,
            MemoryOp::CompareAndSwap,
        ][..],
    );
    let direction = prop::sample::select(&[Direction::Read, Direction::Write][..]);
    prop_oneof![
        12 => (op, probe(edge_value()), prop_oneof![3 => 1u16..=16, 1 => 1u16..=1024], prop::option::weighted(0.2, 0u8..4))
            .prop_map(|(op, probe, length_dw, hint)| Request::Memory { op, probe, length_dw, hint }),
        1 => direction.clone().prop_map(Request::Io),
        1 => (direction, prop::sample::select(&[ConfigType::Type0, ConfigType::Type1][..]))
            .prop_map(|(d, t)| Request::Config(d, t)),
        1 => (0usize..3).prop_map(Request::Message),
    ]
}

/// The fields every request shares, drawn once per TLP.
#[derive(Clone, Debug)]
struct Common {
    requester: u16,
    tag: u16,
    traffic_class: u8,
    attributes: u8,
    digest: Option<u32>,
    /// What the stream carries in DW3's place after a 3 DW header.
    beyond_header: u32,
}

fn common() -> impl Strategy<Value = Common> {
    (
        any::<u16>(),
        0u16..=Tag::MAX,
        0u8..8,
        0u8..8,
        prop::option::of(any::<u32>()),
        any::<u32>(),
    )
        .prop_map(
            |(requester, tag, traffic_class, attributes, digest, beyond_header)| Common {
                requester,
                tag,
                traffic_class,
                attributes,
                digest,
                beyond_header,
            },
        )
}

/// The request as a weft-pcie packet, its address placed against `windows`;
/// `None` if weft-pcie refuses it (an illegal combination drawn).
fn packet(request: &Request, common: &Common, windows: &[(bool, Window)]) -> Option<Packet> {
    let requester = Bdf(common.requester);
    let tag = Tag::new(common.tag).expect("drawn within 10 bits");
    let (body, payload_dw) = match request {
        Request::Memory {
            op,
            probe,
            length_dw,
            hint,
        } => {
            let (length_dw, align) = match op {
                // Table 2-15: operand sizes, and natural alignment to them.
                MemoryOp::FetchAdd | MemoryOp::Swap => {
                    let dw = 1 + length_dw % 2;
                    (dw, u64::from(dw) * 4)
                }
                MemoryOp::CompareAndSwap => {
                    let dw = 2 << (length_dw % 3);
                    (dw, u64::from(dw) * 2)
                }
                _ => (*length_dw, 4),
            };
            let ranges: Vec<(u64, u64)> = windows.iter().map(|(_, w)| (w.base, w.size)).collect();
            let address = probe.address(&ranges) & !(align - 1);
            // §2.2.7.1: no request crosses a 4 KiB boundary.
            let room = ((0x1000 - (address & 0xfff)) / 4) as u16;
            let length_dw = length_dw.min(room);
            let atomic = matches!(
                op,
                MemoryOp::FetchAdd | MemoryOp::Swap | MemoryOp::CompareAndSwap
            );
            let (first_be, last_be) = match (atomic, length_dw) {
                (true, _) => (0, 0),
                (false, 1) => (0xf, 0),
                (false, _) => (0xf, 0xf),
            };
            let with_data = *op != MemoryOp::Read && *op != MemoryOp::ReadLocked;
            let request = MemoryRequest {
                op: *op,
                traffic_class: TrafficClass::from_bits(common.traffic_class),
                attributes: attributes(common.attributes),
                address_type: AddressType::Untranslated,
                requester,
                tag: if *op == MemoryOp::Write {
                    Tag::from_8bit(tag.low())
                } else {
                    tag
                },
                address,
                length_dw,
                first_be,
                last_be,
                processing_hint: hint.map(ProcessingHint::from_bits),
            };
            (Body::Memory(request), if with_data { length_dw } else { 0 })
        }
        Request::Io(direction) => (
            Body::Io(IoRequest {
                direction: *direction,
                requester,
                tag,
                address: (common.tag as u32) << 2,
                first_be: 0xf,
            }),
            u16::from(*direction == Direction::Write),
        ),
        Request::Config(direction, config_type) => (
            Body::Config(ConfigRequest {
                direction: *direction,
                config_type: *config_type,
                requester,
                tag,
                target: Bdf(common.requester.rotate_left(8)),
                register_number: (common.tag & 0x3f) as u8,
                extended_register_number: (common.tag >> 6 & 0xf) as u8,
                first_be: 0xf,
            }),
            u16::from(*direction == Direction::Write),
        ),
        Request::Message(which) => {
            let (code, routing) = [
                (MessageCode::AssertIntx(IntxPin::B), MessageRouting::Local),
                (MessageCode::ErrFatal, MessageRouting::ToRootComplex),
                (MessageCode::PmeTurnOff, MessageRouting::BroadcastFromRoot),
            ][*which];
            (Body::Message(Message::new(requester, code, routing)), 0)
        }
    };
    let header = Header {
        digest_present: false,
        poisoned: false,
        body,
    };
    let mut packet = Packet::new(header, vec![0x5a; usize::from(payload_dw) * 4]);
    packet.digest = common.digest;
    packet.to_bytes().ok().map(|_| packet)
}

fn attributes(bits: u8) -> Attributes {
    Attributes {
        relaxed_ordering: bits & 0b010 != 0,
        no_snoop: bits & 0b001 != 0,
        id_based_ordering: bits & 0b100 != 0,
    }
}

/// A header's DWs as wire bytes: 3 DW or 4 DW by Fmt\[0\] (§2.2.1).
fn header_bytes(dws: [u32; 4]) -> Vec<u8> {
    let count = if dws[0] & 1 << 29 != 0 { 4 } else { 3 };
    dws[..count]
        .iter()
        .flat_map(|dw| dw.to_be_bytes())
        .collect()
}

/// Clears the tag of a non-posted request: T9 (byte 1 bit 7), T8 (byte 1 bit 3), Tag\[7:0\] (byte 6).
fn without_tag(mut header: Vec<u8>) -> Vec<u8> {
    header[1] &= !0x88;
    header[6] = 0;
    header
}

/// What happened to a TLP: forwarded with this header, to the CPU with this header, or dropped.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Forward(Vec<u8>),
    Cpu(Vec<u8>),
    Drop(u32),
}

fn reason_code(reason: DropReason) -> u32 {
    DropReason::ALL
        .iter()
        .position(|r| *r == reason)
        .expect("ALL lists every reason") as u32
}

fn model_switch(windows: &[(bool, Window)], proxy_id: Bdf) -> Switch {
    let mut switch = Switch::new(2);
    let host = PortTables {
        role: PortRole::Host {
            host: HostIndex(0),
            proxy_id,
        },
        windows: windows
            .iter()
            .filter(|(v, _)| *v)
            .map(|(_, w)| *w)
            .collect(),
        ..PortTables::default()
    };
    switch
        .set_port(PortIndex(0), host)
        .expect("within capacity");
    let fabric = PortTables {
        role: PortRole::Fabric,
        ..PortTables::default()
    };
    switch
        .set_port(PortIndex(1), fabric)
        .expect("within capacity");
    // Every DW-aligned fabric address (the last is u64::MAX - 3) routes to port 1.
    let routes = RouteTables {
        addresses: vec![AddressRoute {
            base: 0,
            size: u64::MAX,
            to: Destination::Port(PortIndex(1)),
        }],
        ..RouteTables::default()
    };
    switch.set_routes(routes).expect("within capacity");
    switch
}

fn model_outcome(switch: &Switch, bytes: &[u8]) -> Outcome {
    let forwarding = switch
        .clone()
        .ingress(PortIndex(0), bytes)
        .expect("a fresh switch has tags free");
    if let Some(reason) = forwarding.dropped {
        return Outcome::Drop(reason_code(reason));
    }
    let delivery = &forwarding.deliveries[0];
    let wire = delivery
        .packet
        .to_bytes()
        .expect("the model forwards legal TLPs");
    let header = wire[..if wire[0] & 0x20 != 0 { 16 } else { 12 }].to_vec();
    match delivery.to {
        Destination::Cpu => Outcome::Cpu(header),
        Destination::Port(port) => {
            assert_eq!(port, PortIndex(1), "every address routes to port 1");
            Outcome::Forward(header)
        }
    }
}

fn rtl_csr(stage: &mut Stage) -> &mut CsrTarget {
    &mut stage.csr
}

fn program(driver: &mut CycleDriver<Stage>, entry: usize, valid: bool, w: &Window) {
    let control = window::VALID.encode(valid.into())
        | window::READ.encode(w.permissions.read.into())
        | window::WRITE.encode(w.permissions.write.into());
    for (register, value) in [
        (window::BASE_LOW, w.base as u32),
        (window::BASE_HIGH, (w.base >> 32) as u32),
        (window::SIZE_LOW, w.size as u32),
        (window::SIZE_HIGH, (w.size >> 32) as u32),
        (window::FABRIC_BASE_LOW, w.fabric_base as u32),
        (window::FABRIC_BASE_HIGH, (w.fabric_base >> 32) as u32),
        (window::CONTROL, control),
    ] {
        csr::write(driver, rtl_csr, register.address(PORT, entry as u32), value)
            .expect("the stage settles");
    }
}

fn rtl_outcome(
    driver: &mut CycleDriver<Stage>,
    bytes: &[u8],
    beyond_header: u32,
    proxy_id: Bdf,
) -> Outcome {
    let dw = |i: usize| u32::from_be_bytes(bytes[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
    let four_dw = bytes[0] & 0x20 != 0;
    let stage = driver.block();
    stage.valid.next = true;
    stage.dw0.next = dw(0).to_bits();
    stage.dw1.next = dw(1).to_bits();
    stage.dw2.next = dw(2).to_bits();
    stage.dw3.next = if four_dw { dw(3) } else { beyond_header }.to_bits();
    stage.proxy_id.next = u32::from(proxy_id.0).to_bits();
    // The answer follows one clock edge later.
    driver.tick().expect("the stage settles");
    let stage = driver.block();
    assert!(stage.answer_valid.val());
    let dws = [
        &stage.header_dw0,
        &stage.header_dw1,
        &stage.header_dw2,
        &stage.header_dw3,
    ]
    .map(|s| s.val().to_u64() as u32);
    let destination = IngressDestination::from_code(stage.destination.val().to_u64() as u32)
        .expect("a defined destination code");
    match destination {
        IngressDestination::Forward => Outcome::Forward(header_bytes(dws)),
        IngressDestination::Cpu => Outcome::Cpu(header_bytes(dws)),
        IngressDestination::Drop => Outcome::Drop(stage.drop_reason.val().to_u64() as u32),
        IngressDestination::Completion => panic!("no completion was offered"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn host_ingress_translates_as_the_model(
        windows in prop::collection::vec(window_entry(), capacity::WINDOWS_PER_PORT),
        proxy_id in any::<u16>().prop_map(Bdf),
        requests in prop::collection::vec((request(), common()), TLPS),
    ) {
        on_big_stack(move || -> Result<(), TestCaseError> {
            let mut driver = CycleDriver::new(Stage::new(PORT), |b| &mut b.clock)
                .expect("the stage is well formed");
            for (entry, (valid, window)) in windows.iter().enumerate() {
                program(&mut driver, entry, *valid, window);
            }
            // A window write takes effect from the second cycle after it.
            driver.run(2).expect("the stage settles");
            let model = model_switch(&windows, proxy_id);
            let mut compared = 0;
            for (request, common) in &requests {
                let Some(packet) = packet(request, common, &windows) else {
                    continue;
                };
                let bytes = packet.to_bytes().expect("checked when built");
                let expected = model_outcome(&model, &bytes);
                let rtl = rtl_outcome(&mut driver, &bytes, common.beyond_header, proxy_id);
                let non_posted = matches!(request, Request::Memory { op, .. } if *op != MemoryOp::Write);
                let (rtl, expected) = match (rtl, expected) {
                    (Outcome::Forward(r), Outcome::Forward(e)) if non_posted => {
                        (Outcome::Forward(without_tag(r)), Outcome::Forward(without_tag(e)))
                    }
                    pair => pair,
                };
                prop_assert_eq!(rtl, expected, "{:?} {:?} as {:02x?}", request, common, &bytes[..16.min(bytes.len())]);
                compared += 1;
            }
            prop_assert!(compared >= TLPS / 2, "only {} of {} TLPs were legal", compared, TLPS);
            Ok(())
        })?;
    }
}
