//! The RTL host egress stage agrees with weft-model's `Switch` at a host port.
//!
//! Each case draws a host port (enabled, host index, proxy ID, completer
//! ID) and a random ID map, programs the map into the stage over the CSR
//! bus and everything into a model switch whose port 0 is the host port
//! and port 1 a fabric port. The host first sends the model some reads
//! through its windows, which the model gives fabric tags; the test's
//! stand-in for the outstanding-request table answers the stage's tag
//! queries from what the model did (host requester and tag under each
//! fabric tag) and retires a tag when the model does (the table's own
//! retirement is `outstanding_matches_model`'s). Then random
//! fabric TLPs arrive at the fabric port and are routed to the host port
//! (memory requests in and near the host's and other hosts' apertures,
//! completions for tags in flight and not, ID-routed messages for the
//! proxy and others, configuration requests), and both must agree on the
//! header sent to the host and the drop reason. An
//! INTx message goes through the port's virtual wires too, and must go
//! out exactly when the model sends one, as the model's.
//!
//! Then directed tests, one per rule and drop reason, worked out by hand
//! from DESIGN.md and PCIe Base 6.0.

mod common;

use std::collections::BTreeMap;

use common::tlp::{header_bytes, header_dws, reason_code, wire_header, MESSAGES};
use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::csr::{self, CsrTarget};
use weft_hdl::driver::on_big_stack;
use weft_hdl::driver::CycleDriver;
use weft_hdl::translate::{EgressDestination, HostEgress, VirtualWires};
use weft_model::switch::aperture_base;
use weft_model::{
    AddressRoute, Destination, DropReason, HostIndex, IdMapping, Packet, Permissions, PortIndex,
    PortRole, PortTables, RouteTables, Switch, Window,
};
use weft_pcie::tlp::{
    AddressType, Attributes, Body, Completion, CompletionStatus, ConfigRequest, ConfigType,
    Direction, Header, MemoryOp, MemoryRequest, Message, MessageRouting, Tag, TrafficClass,
};
use weft_pcie::Bdf;
use weft_regs::aperture::{HOST_ADDRESS_LIMIT, MAX_HOSTS};
use weft_regs::capacity;
use weft_regs::csr::id_map;

/// Cases: each programs a whole ID map over the bus.
const CASES: u32 = 24;
/// Fabric TLPs offered per case.
const TLPS: usize = 64;
const PORT: u32 = 0;
const HOST_PORT: PortIndex = PortIndex(0);
const FABRIC_PORT: PortIndex = PortIndex(1);
type Stage = HostEgress<{ capacity::BOUND_FUNCTIONS_PER_HOST }>;

/// The host port's registers.
#[derive(Clone, Copy, Debug)]
struct PortConfig {
    enabled: bool,
    host: u16,
    proxy_id: Bdf,
    completer_id: Bdf,
}

fn port_config() -> impl Strategy<Value = PortConfig> {
    (
        prop::bool::weighted(0.9),
        prop_oneof![0u16..4, Just(MAX_HOSTS as u16 - 1), 0..MAX_HOSTS as u16],
        any::<u16>(),
        any::<u16>(),
    )
        .prop_map(|(enabled, host, proxy, completer)| PortConfig {
            enabled,
            host,
            proxy_id: Bdf(proxy),
            completer_id: Bdf(completer),
        })
}

/// An ID map entry and whether it is valid; IDs from a small set, so some repeat.
fn id_entry() -> impl Strategy<Value = (bool, IdMapping)> {
    let id = prop_oneof![3 => (0u16..8).prop_map(|i| i << 8 | 0x10), 1 => any::<u16>()];
    (prop::bool::weighted(0.8), id.clone(), id).prop_map(|(valid, fabric, host)| {
        (
            valid,
            IdMapping {
                fabric: Bdf(fabric),
                host: Bdf(host),
            },
        )
    })
}

/// A fabric TLP bound for the host port, before the case's IDs are chosen.
#[derive(Clone, Debug)]
enum Fabric {
    /// A memory request into an aperture: the host's or another's, at an offset.
    Memory {
        op: MemoryOp,
        own_host: bool,
        other_host: u16,
        offset: u64,
        length_dw: u16,
    },
    /// A completion: to the proxy or not, with a fabric tag in flight or any.
    Completion {
        to_proxy: bool,
        tag_in_flight: bool,
        tag: u16,
        data_dw: Option<u16>,
        byte_count: u16,
        lower_address: u8,
    },
    /// An ID-routed message: to the proxy or not, with the code of [`MESSAGES`] entry `code`.
    Message {
        to_proxy: bool,
        code: usize,
        bytes: u64,
    },
    /// A configuration request routed by ID to the host port.
    Config,
}

fn fabric_tlp() -> impl Strategy<Value = Fabric> {
    let op = prop::sample::select(
        &[
            MemoryOp::Read,
            MemoryOp::Write,
            MemoryOp::FetchAdd,
            MemoryOp::CompareAndSwap,
        ][..],
    );
    let offset = prop_oneof![
        2 => 0u64..0x4000,
        2 => (0u64..0x4000).prop_map(|x| (1u64 << 32) - 0x2000 + x),
        2 => (0u64..0x4000).prop_map(|x| HOST_ADDRESS_LIMIT - 0x2000 + x),
        1 => 0..HOST_ADDRESS_LIMIT,
    ];
    prop_oneof![
        4 => (op, prop::bool::weighted(0.85), 0..MAX_HOSTS as u16, offset, 1u16..=16)
            .prop_map(|(op, own_host, other_host, offset, length_dw)| Fabric::Memory {
                op, own_host, other_host, offset, length_dw,
            }),
        4 => (
            prop::bool::weighted(0.85),
            prop::bool::weighted(0.8),
            0u16..=Tag::MAX,
            prop::option::weighted(0.7, 1u16..=16),
            1u16..=4096,
            0u8..128,
        )
            .prop_map(|(to_proxy, tag_in_flight, tag, data_dw, byte_count, lower_address)| {
                Fabric::Completion { to_proxy, tag_in_flight, tag, data_dw, byte_count, lower_address }
            }),
        3 => (prop::bool::weighted(0.85), 0..MESSAGES.len(), any::<u64>())
            .prop_map(|(to_proxy, code, bytes)| Fabric::Message { to_proxy, code, bytes }),
        1 => Just(Fabric::Config),
    ]
}

/// Per TLP: the fabric TLP, its requester (or completer) drawn from the ID
/// map or anywhere, tag, traffic class and whether it carries a digest.
type Offer = (Fabric, (bool, usize, u16), u8, u8, bool);

fn offer() -> impl Strategy<Value = Offer> {
    (
        fabric_tlp(),
        (prop::bool::weighted(0.8), any::<usize>(), any::<u16>()),
        any::<u8>(),
        0u8..8,
        prop::bool::weighted(0.2),
    )
}

/// The host's window through which it reads the fabric: all of its low memory onto fabric 0.
const HOST_WINDOW: Window = Window {
    base: 0,
    size: 1 << 40,
    fabric_base: 0,
    permissions: Permissions::READ_WRITE,
};

fn host_tables(config: &PortConfig, ids: &[(bool, IdMapping)]) -> PortTables {
    PortTables {
        role: PortRole::Host {
            host: HostIndex(config.host),
            proxy_id: config.proxy_id,
        },
        windows: vec![HOST_WINDOW],
        id_map: ids.iter().filter(|(v, _)| *v).map(|(_, m)| *m).collect(),
        completer_id: config.completer_id,
        ..PortTables::default()
    }
}

/// A model switch, and the host's requests in flight: fabric tag → (host requester, host tag).
fn model_switch(
    config: &PortConfig,
    ids: &[(bool, IdMapping)],
    reads: &[(u16, u16)],
) -> (Switch, BTreeMap<u16, (u16, u16)>) {
    let mut switch = Switch::new(2);
    switch
        .set_port(HOST_PORT, host_tables(config, ids))
        .expect("within capacity");
    let fabric = PortTables {
        role: PortRole::Fabric,
        ..PortTables::default()
    };
    switch
        .set_port(FABRIC_PORT, fabric)
        .expect("within capacity");
    // Below the apertures into the fabric; the apertures and every bus to the host port.
    let mut routes = RouteTables {
        addresses: vec![
            AddressRoute {
                base: 0,
                size: 1 << 63,
                to: Destination::Port(FABRIC_PORT),
            },
            AddressRoute {
                base: 1 << 63,
                size: u64::MAX - (1 << 63),
                to: Destination::Port(HOST_PORT),
            },
        ],
        ..RouteTables::default()
    };
    routes.buses = [Some(Destination::Port(HOST_PORT)); capacity::BUS_ROUTES];
    switch.set_routes(routes).expect("within capacity");
    let mut in_flight = BTreeMap::new();
    for (requester, tag) in reads {
        let read = memory(MemoryOp::Read, Bdf(*requester), *tag, 0x1000, 1);
        let out = switch
            .ingress(HOST_PORT, &wire(&Packet::new(read, Vec::new())))
            .expect("tags are free");
        let sent = out.deliveries[0].packet.memory().expect("the read goes on");
        in_flight.insert(sent.tag.get(), (*requester, *tag));
    }
    if !config.enabled {
        let disabled = PortTables {
            role: PortRole::Disabled,
            ..host_tables(config, ids)
        };
        switch
            .set_port(HOST_PORT, disabled)
            .expect("within capacity");
    }
    (switch, in_flight)
}

fn memory(op: MemoryOp, requester: Bdf, tag: u16, address: u64, length_dw: u16) -> Header {
    let atomic = matches!(
        op,
        MemoryOp::FetchAdd | MemoryOp::Swap | MemoryOp::CompareAndSwap
    );
    Header {
        digest_present: false,
        poisoned: false,
        body: Body::Memory(MemoryRequest {
            op,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            address_type: AddressType::Untranslated,
            requester,
            tag: Tag::new(tag).expect("tag fits 10 bits"),
            address,
            length_dw,
            first_be: if atomic { 0 } else { 0xf },
            last_be: if atomic || length_dw == 1 { 0 } else { 0xf },
            processing_hint: None,
        }),
    }
}

fn wire(packet: &Packet) -> Vec<u8> {
    packet.to_bytes().expect("a legal TLP")
}

/// The fabric TLP of an offer; `None` if weft-pcie refuses it.
fn fabric_packet(
    offer: &Offer,
    config: &PortConfig,
    ids: &[(bool, IdMapping)],
    in_flight: &BTreeMap<u16, (u16, u16)>,
) -> Option<Packet> {
    let (tlp, (mapped, index, any_id), tag, class, digest) = offer;
    let id = if *mapped {
        ids[index % ids.len()].1.fabric
    } else {
        Bdf(*any_id)
    };
    let tag = u16::from(*tag);
    let body = match tlp {
        Fabric::Memory {
            op,
            own_host,
            other_host,
            offset,
            length_dw,
        } => {
            let (length_dw, align) = match op {
                MemoryOp::FetchAdd => (1 + length_dw % 2, 4 * u64::from(1 + length_dw % 2)),
                MemoryOp::CompareAndSwap => (2 << (length_dw % 3), 4 << (length_dw % 3)),
                _ => (*length_dw, 4),
            };
            let offset = offset & !(align - 1);
            let room = ((0x1000 - (offset & 0xfff)) / 4) as u16;
            let host = if *own_host { config.host } else { *other_host };
            let address = aperture_base(HostIndex(host)) | offset;
            let tag = if *op == MemoryOp::Write {
                tag & 0xff
            } else {
                tag
            };
            memory(*op, id, tag, address, length_dw.min(room)).body
        }
        Fabric::Completion {
            to_proxy,
            tag_in_flight,
            tag: any_tag,
            data_dw,
            byte_count,
            lower_address,
        } => {
            let tag = match in_flight
                .keys()
                .nth(usize::from(*any_tag) % in_flight.len().max(1))
            {
                Some(fabric_tag) if *tag_in_flight => *fabric_tag,
                _ => *any_tag,
            };
            Body::Completion(Completion {
                locked: false,
                traffic_class: TrafficClass::from_bits(*class),
                attributes: Attributes::default(),
                completer: id,
                status: if data_dw.is_some() {
                    CompletionStatus::Successful
                } else {
                    CompletionStatus::CompleterAbort
                },
                byte_count_modified: false,
                byte_count: *byte_count,
                requester: if *to_proxy {
                    config.proxy_id
                } else {
                    Bdf(*any_id)
                },
                tag: Tag::new(tag).expect("10 bits"),
                lower_address: *lower_address,
                data_dw: *data_dw,
            })
        }
        Fabric::Message {
            to_proxy,
            code,
            bytes,
        } => {
            let target = if *to_proxy {
                config.proxy_id
            } else {
                Bdf(*any_id)
            };
            let message = Message {
                tag: tag as u8,
                bytes_8_to_15: bytes.to_be_bytes(),
                ..Message::new(id, MESSAGES[*code].0, MessageRouting::ById)
            };
            Body::Message(message.with_target(target))
        }
        Fabric::Config => Body::Config(ConfigRequest {
            direction: Direction::Read,
            config_type: ConfigType::Type0,
            requester: id,
            tag: Tag::new(tag).expect("10 bits"),
            target: config.proxy_id,
            register_number: 0,
            extended_register_number: 0,
            first_be: 0xf,
        }),
    };
    let payload_dw = match &body {
        Body::Memory(m) if m.op != MemoryOp::Read => m.length_dw,
        Body::Completion(c) => c.data_dw.unwrap_or(0),
        _ => 0,
    };
    let header = Header {
        digest_present: false,
        poisoned: false,
        body,
    };
    let mut packet = Packet::new(header, vec![0x3c; usize::from(payload_dw) * 4]);
    packet.digest = digest.then_some(0xdead_beef);
    packet.to_bytes().ok().map(|_| packet)
}

/// What happened to a fabric TLP at the host port.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Sent to the host with this header.
    Forward(Vec<u8>),
    /// An INTx message for the virtual-wire stage, with the header it would send.
    VirtualWire(Vec<u8>),
    /// Dropped for this reason.
    Drop(u32),
}

/// The model's outcome (an INTx message that changes no pin comes back as
/// `None`), and whether it retired the fabric tag of a completion.
fn model_outcome(switch: &mut Switch, bytes: &[u8]) -> (Option<Outcome>, bool) {
    let before = switch.outstanding(HOST_PORT);
    let out = switch.ingress(FABRIC_PORT, bytes).expect("the port exists");
    let retired = switch.outstanding(HOST_PORT) < before;
    if let Some(reason) = out.dropped {
        return (Some(Outcome::Drop(reason_code(reason))), retired);
    }
    let Some(delivery) = out.deliveries.first() else {
        return (None, retired);
    };
    assert_eq!(delivery.to, Destination::Port(HOST_PORT), "{out:?}");
    let header = wire_header(&wire(&delivery.packet));
    let outcome = match &delivery.packet.header.body {
        Body::Message(m) if m.routing == MessageRouting::Local => Outcome::VirtualWire(header),
        _ => Outcome::Forward(header),
    };
    (Some(outcome), retired)
}

fn rtl_csr(stage: &mut Stage) -> &mut CsrTarget {
    &mut stage.csr
}

fn program_id(driver: &mut CycleDriver<Stage>, entry: usize, (valid, m): &(bool, IdMapping)) {
    for (register, value) in [
        (id_map::FABRIC_ID, u32::from(m.fabric.0)),
        (id_map::HOST_ID, u32::from(m.host.0)),
        (id_map::CONTROL, id_map::VALID.encode((*valid).into())),
    ] {
        csr::write(driver, rtl_csr, register.address(PORT, entry as u32), value)
            .expect("the stage settles");
    }
}

fn configure(driver: &mut CycleDriver<Stage>, config: &PortConfig) {
    let stage = driver.block();
    stage.enabled.next = config.enabled;
    stage.host_index.next = u32::from(config.host).to_bits();
    stage.proxy_id.next = u32::from(config.proxy_id.0).to_bits();
    stage.completer_id.next = u32::from(config.completer_id.0).to_bits();
}

/// Presents a header; `in_flight` answers a cycle later, as the
/// outstanding-request table does, for the fabric tag of a completion
/// (decoded by weft-pcie, §2.2.6.2).
fn rtl_outcome(
    driver: &mut CycleDriver<Stage>,
    dws: [u32; 4],
    in_flight: &BTreeMap<u16, (u16, u16)>,
) -> Outcome {
    let stage = driver.block();
    stage.valid.next = true;
    stage.dw0.next = dws[0].to_bits();
    stage.dw1.next = dws[1].to_bits();
    stage.dw2.next = dws[2].to_bits();
    stage.dw3.next = dws[3].to_bits();
    driver.settle().expect("the stage settles");
    driver.tick().expect("the stage settles");
    let answer = match Header::decode_dws(&dws).map(|header| header.body) {
        Ok(Body::Completion(c)) => in_flight.get(&c.tag.get()).copied(),
        _ => None,
    };
    let stage = driver.block();
    stage.tag_found.next = answer.is_some();
    let (requester, tag) = answer.unwrap_or((0, 0));
    stage.tag_requester.next = u32::from(requester).to_bits();
    stage.tag_host_tag.next = u32::from(tag).to_bits();
    driver.settle().expect("the stage settles");
    let stage = driver.block();
    assert!(stage.answer_valid.val());
    let out = [
        &stage.header_dw0,
        &stage.header_dw1,
        &stage.header_dw2,
        &stage.header_dw3,
    ]
    .map(|s| s.val().to_u32());
    let destination = EgressDestination::from_code(stage.destination.val().to_u32())
        .expect("a defined destination code");
    let reason = stage.drop_reason.val().to_u32();
    match destination {
        EgressDestination::Forward => Outcome::Forward(header_bytes(out)),
        EgressDestination::VirtualWire => Outcome::VirtualWire(header_bytes(out)),
        EgressDestination::Drop => Outcome::Drop(reason),
    }
}

type Wires = VirtualWires<{ capacity::BOUND_FUNCTIONS_PER_HOST }>;

/// Offers the INTx message with header `dws` to the virtual wires; whether it goes out.
fn collapse(wires: &mut CycleDriver<Wires>, dws: [u32; 4]) -> bool {
    let block = wires.block();
    block.valid.next = true;
    // §2.2.8: requester ID in DW1[31:16], Message Code in DW1[7:0].
    block.requester.next = (dws[1] >> 16).to_bits();
    block.code.next = (dws[1] & 0b111).to_bits();
    wires.settle().expect("the wires settle");
    let send = wires.block().send.val();
    wires.tick().expect("the wires settle");
    wires.block().valid.next = false;
    send
}

fn new_stage() -> CycleDriver<Stage> {
    CycleDriver::new(Stage::new(PORT), |b| &mut b.clock).expect("the stage is well formed")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn host_egress_translates_as_the_model(
        config in port_config(),
        ids in prop::collection::vec(id_entry(), capacity::BOUND_FUNCTIONS_PER_HOST),
        reads in prop::collection::vec((any::<u16>(), 0u16..=Tag::MAX), 0..24),
        offers in prop::collection::vec(offer(), TLPS),
    ) {
        on_big_stack(move || -> Result<(), TestCaseError> {
            let mut driver = new_stage();
            let mut wires = CycleDriver::new(Wires::default(), |b| &mut b.clock)
                .expect("the virtual wires are well formed");
            for (entry, id) in ids.iter().enumerate() {
                program_id(&mut driver, entry, id);
            }
            configure(&mut driver, &config);
            driver.run(2).expect("the stage settles");
            let (mut model, mut in_flight) = model_switch(&config, &ids, &reads);
            let mut compared = 0;
            for offer in &offers {
                let Some(packet) = fabric_packet(offer, &config, &ids, &in_flight) else {
                    continue;
                };
                let bytes = wire(&packet);
                let (expected, retired) = model_outcome(&mut model, &bytes);
                let dws = header_dws(&bytes, 0x5a5a_5a5a);
                let rtl = rtl_outcome(&mut driver, dws, &in_flight);
                if retired {
                    in_flight.remove(&packet.completion().expect("only a completion retires a tag").tag.get());
                }
                // An INTx message for the host goes out only if the virtual wires say so.
                let rtl = match rtl {
                    Outcome::VirtualWire(header) => {
                        collapse(&mut wires, dws).then_some(Outcome::VirtualWire(header))
                    }
                    other => Some(other),
                };
                prop_assert_eq!(rtl, expected, "{:?} {:?} as {:02x?}", config, offer, &bytes[..16.min(bytes.len())]);
                compared += 1;
            }
            prop_assert!(compared >= TLPS / 2, "only {} of {} TLPs were legal", compared, TLPS);
            Ok(())
        })?;
    }
}

/// The host port of the directed tests: host 3, proxy ID F0:00.0, its
/// virtual upstream port 10:00.0; the host knows fabric function 02:00.0
/// as 13:00.0, and an invalid entry maps 03:00.0. In flight: fabric tag
/// 0x005 for the host's request from 00:01.0 with tag 0x2a5.
fn directed(enabled: bool) -> (CycleDriver<Stage>, BTreeMap<u16, (u16, u16)>) {
    let mut driver = new_stage();
    let map = |fabric, host| IdMapping {
        fabric: Bdf(fabric),
        host: Bdf(host),
    };
    program_id(&mut driver, 0, &(true, map(0x0200, 0x1300)));
    program_id(&mut driver, 1, &(false, map(0x0300, 0x1400)));
    configure(
        &mut driver,
        &PortConfig {
            enabled,
            host: 3,
            proxy_id: Bdf(0xf000),
            completer_id: Bdf(0x1000),
        },
    );
    driver.run(2).expect("the stage settles");
    (driver, BTreeMap::from([(0x005, (0x0008, 0x2a5))]))
}

fn dropped(reason: DropReason) -> Outcome {
    Outcome::Drop(reason_code(reason))
}

// Headers by hand (PCIe Base 6.0 §2.2.1): DW0 byte 0 is Fmt[2:0] Type[4:0];
// MWr 3 DW = 0x40, MWr 4 DW = 0x60, MRd 4 DW = 0x20, CplD = 0x4a, Cpl = 0x0a,
// Msg = 0x30 | r[2:0], CfgRd0 = 0x04. Host 3's aperture starts at
// 1 << 63 | 3 << 52 = 0x8030_0000_0000_0000.

#[test]
fn dma_leaves_the_aperture_as_a_host_address_from_the_hosts_id() {
    let (mut driver, in_flight) = directed(true);
    // MWr 1 DW, TD set, from 02:00.0 to 0x8030_0000_1000_0000: host address
    // 0x1000_0000, below 4 GiB, so 3 DW (§2.2.4.1); requester 13:00.0; TD clear.
    assert_eq!(
        rtl_outcome(
            &mut driver,
            [0x6000_8001, 0x0200_000f, 0x8030_0000, 0x1000_0000],
            &in_flight
        ),
        Outcome::Forward(header_bytes([0x4000_0001, 0x1300_000f, 0x1000_0000, 0]))
    );
    // MRd at host address 0x1_0000_0008: stays 4 DW.
    assert_eq!(
        rtl_outcome(
            &mut driver,
            [0x2000_0001, 0x0200_070f, 0x8030_0001, 0x0000_0008],
            &in_flight
        ),
        Outcome::Forward(header_bytes([
            0x2000_0001,
            0x1300_070f,
            0x0000_0001,
            0x0000_0008
        ]))
    );
}

#[test]
fn dma_outside_the_aperture_or_from_an_unknown_function_is_dropped() {
    let (mut driver, in_flight) = directed(true);
    // Host 4's aperture, and a 3 DW (below 4 GiB) fabric address.
    for dws in [
        [0x6000_0001, 0x0200_000f, 0x8040_0000, 0x1000_0000],
        [0x4000_0001, 0x0200_000f, 0x1000_0000, 0],
    ] {
        assert_eq!(
            rtl_outcome(&mut driver, dws, &in_flight),
            dropped(DropReason::OutsideAperture)
        );
    }
    // 03:00.0's entry is not valid.
    assert_eq!(
        rtl_outcome(
            &mut driver,
            [0x6000_0001, 0x0300_000f, 0x8030_0000, 0x1000_0000],
            &in_flight
        ),
        dropped(DropReason::UnknownFunction)
    );
}

#[test]
fn completions_get_the_hosts_requester_tag_and_completer_back() {
    let (mut driver, mut in_flight) = directed(true);
    // CplD, 1 DW, Byte Count 8, from 02:00.0 to F0:00.0 under fabric tag
    // 0x005: 4 of 8 bytes, not the last (§2.3.1.1).
    // Host tag 0x2a5: T9 (DW0 bit 23) set, T8 clear, Tag[7:0] 0xa5 in DW2[15:8].
    assert_eq!(
        rtl_outcome(
            &mut driver,
            [0x4a00_0001, 0x0200_0008, 0xf000_0500, 0],
            &in_flight
        ),
        Outcome::Forward(header_bytes([0x4a80_0001, 0x1300_0008, 0x0008_a500, 0]))
    );
    // The last 4 bytes, from a completer the host does not know (the
    // switch's own 01:00.0): the port's completer ID 10:00.0.
    assert_eq!(
        rtl_outcome(
            &mut driver,
            [0x4a00_8001, 0x0100_0004, 0xf000_0504, 0],
            &in_flight
        ),
        Outcome::Forward(header_bytes([0x4a80_0001, 0x1000_0004, 0x0008_a504, 0]))
    );
    // Once the table no longer has tag 0x005 in flight, its completion is unexpected.
    in_flight.remove(&0x005);
    assert_eq!(
        rtl_outcome(
            &mut driver,
            [0x0a00_0000, 0x0200_2004, 0xf000_0500, 0],
            &in_flight
        ),
        dropped(DropReason::UnexpectedCompletion)
    );
}

#[test]
fn completions_for_anyone_but_the_proxy_are_unexpected() {
    let (mut driver, in_flight) = directed(true);
    assert_eq!(
        rtl_outcome(
            &mut driver,
            [0x4a00_0001, 0x0200_0004, 0xf100_0500, 0],
            &in_flight
        ),
        dropped(DropReason::UnexpectedCompletion)
    );
}

#[test]
fn messages_for_the_proxy_reach_the_host_as_an_upstream_port_sends_them() {
    let (mut driver, in_flight) = directed(true);
    // ERR_FATAL (0x33) routed by ID to F0:00.0: routed to the root complex
    // (r = 000b), from 13:00.0, bytes 8–15 zero (§2.2.8.3).
    assert_eq!(
        rtl_outcome(
            &mut driver,
            [0x3200_0000, 0x0200_0033, 0xf000_1234, 0x5678_9abc],
            &in_flight
        ),
        Outcome::Forward(header_bytes([0x3000_0000, 0x1300_0033, 0, 0]))
    );
    // Assert_INTA (0x20): a local message from the port itself (§2.2.8.1), for the virtual wire.
    assert_eq!(
        rtl_outcome(
            &mut driver,
            [0x3200_8000, 0x0200_0020, 0xf000_0000, 0],
            &in_flight
        ),
        Outcome::VirtualWire(header_bytes([0x3400_0000, 0x1000_0020, 0, 0]))
    );
    // From a function the host does not know.
    assert_eq!(
        rtl_outcome(
            &mut driver,
            [0x3200_0000, 0x0300_0030, 0xf000_0000, 0],
            &in_flight
        ),
        dropped(DropReason::UnknownFunction)
    );
}

#[test]
fn everything_else_is_unsupported_malformed_or_dropped_at_a_disabled_port() {
    let (mut driver, in_flight) = directed(true);
    for dws in [
        // ERR_COR routed by ID to another host's proxy F1:00.0.
        [0x3200_0000, 0x0200_0030, 0xf100_0000, 0],
        // ERR_COR routed to the root complex: not for a host's egress.
        [0x3000_0000, 0x0200_0030, 0, 0],
        // CfgRd0.
        [0x0400_0001, 0x0200_010f, 0xf000_0000, 0],
    ] {
        assert_eq!(
            rtl_outcome(&mut driver, dws, &in_flight),
            dropped(DropReason::Unsupported)
        );
    }
    // Type 0_0011b is reserved (Table 2-3).
    assert_eq!(
        rtl_outcome(&mut driver, [0x0300_0001, 0, 0, 0], &in_flight),
        dropped(DropReason::Malformed)
    );
    let (mut driver, in_flight) = directed(false);
    assert_eq!(
        rtl_outcome(
            &mut driver,
            [0x6000_0001, 0x0200_000f, 0x8030_0000, 0x1000_0000],
            &in_flight
        ),
        dropped(DropReason::PortDisabled)
    );
}
