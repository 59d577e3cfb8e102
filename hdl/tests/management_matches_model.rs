//! The RTL mailbox and TLP injection agree with weft-model's CPU deliveries and `Switch::inject`.
//!
//! Mailbox: random TLPs from a host port and an endpoint port go through
//! a model switch; every TLP the model delivers to the CPU is pushed into
//! the RTL mailbox in order (held back while it is not ready, as ingress
//! does), while the CPU pops at random over the CSR bus. The CPU must read
//! exactly the model's CPU deliveries, in order: source port, header,
//! first payload DW, and whether more payload was cut off.
//!
//! Injection: the CPU writes random TLPs (legal ones with at most one
//! payload DW, and DW0s of no TLP type) with random ports over the CSR
//! bus; the RTL sends exactly what the model's `inject` sends, out of the
//! same port, and refuses exactly what it refuses.

mod common;

use std::collections::VecDeque;

use common::on_big_stack;
use common::tlp::{common, header_dws, packet, request, window_entry};
use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::csr::{self, CsrTarget};
use weft_hdl::driver::CycleDriver;
use weft_hdl::management::{Inject, Mailbox};
use weft_model::{
    AddressRoute, Destination, HostIndex, Owner, Packet, PortIndex, PortRole, PortTables,
    RouteTables, Switch, Window,
};
use weft_pcie::tlp::{Attributes, Body, Completion, CompletionStatus, Header, Tag, TrafficClass};
use weft_pcie::Bdf;
use weft_regs::capacity;
use weft_regs::csr::{inject, mailbox};

type Box8 = Mailbox<{ capacity::MAILBOX_TLPS }>;

/// One mailbox entry as the CPU reads it: port, truncated, data, header DWs.
type Entry = (u32, bool, u32, [u32; 4]);

/// What the mailbox must hold for a TLP delivered to the CPU from `port`.
fn entry(port: PortIndex, packet: &Packet) -> Entry {
    let bytes = packet.to_bytes().expect("the model delivers legal TLPs");
    let data = packet
        .payload
        .get(..4)
        .map_or(0, |b| u32::from_be_bytes(b.try_into().expect("4 bytes")));
    (
        u32::from(port.0),
        packet.payload.len() > 4,
        data,
        header_dws(&bytes, 0),
    )
}

fn model_switch(windows: &[(bool, Window)]) -> Switch {
    let mut switch = Switch::new(3);
    let host = PortTables {
        role: PortRole::Host {
            host: HostIndex(0),
            proxy_id: Bdf(0xf000),
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
    let endpoint = PortTables {
        role: PortRole::Endpoint {
            owner: Some(Owner {
                host: HostIndex(0),
                proxy_id: Bdf(0xf000),
            }),
            buses: (0, 255),
        },
        ..PortTables::default()
    };
    switch
        .set_port(PortIndex(1), endpoint)
        .expect("within capacity");
    let fabric = PortTables {
        role: PortRole::Fabric,
        ..PortTables::default()
    };
    switch
        .set_port(PortIndex(2), fabric)
        .expect("within capacity");
    let mut routes = RouteTables {
        addresses: vec![AddressRoute {
            base: 0,
            size: u64::MAX,
            to: Destination::Port(PortIndex(2)),
        }],
        ..RouteTables::default()
    };
    routes.buses = [Some(Destination::Port(PortIndex(2))); capacity::BUS_ROUTES];
    // The CPU's own bus: completions of its requests come to the mailbox.
    routes.buses[1] = Some(Destination::Cpu);
    switch.set_routes(routes).expect("within capacity");
    switch
}

/// A completion from an endpoint to the CPU's bus 1 (or elsewhere) with 0 to 3 data DWs.
fn completion(to_cpu: bool, data_dw: u16, tag: u16) -> Packet {
    let completion = Completion {
        locked: false,
        traffic_class: TrafficClass::TC0,
        attributes: Attributes::default(),
        completer: Bdf(0x0300),
        status: CompletionStatus::Successful,
        byte_count_modified: false,
        byte_count: (data_dw * 4).max(4),
        requester: Bdf(if to_cpu { 0x0100 } else { 0x0900 }),
        tag: Tag::new(tag).expect("10 bits"),
        lower_address: 0,
        data_dw: (data_dw > 0).then_some(data_dw),
    };
    let header = Header {
        digest_present: false,
        poisoned: false,
        body: Body::Completion(completion),
    };
    Packet::new(
        header,
        (0..data_dw * 4).map(|b| b as u8 ^ tag as u8).collect(),
    )
}

fn mailbox_csr(mailbox: &mut Box8) -> &mut CsrTarget {
    &mut mailbox.csr
}

fn read_mailbox(driver: &mut CycleDriver<Box8>, register: &weft_regs::Register) -> u32 {
    csr::read(driver, mailbox_csr, register.address(0, 0))
        .expect("the mailbox settles")
        .expect("the mailbox answers its registers")
}

/// The CPU takes the head entry, if there is one.
fn pop(driver: &mut CycleDriver<Box8>) -> Option<Entry> {
    let status = read_mailbox(driver, &mailbox::STATUS);
    if status & 1 == 0 {
        return None;
    }
    let source = read_mailbox(driver, &mailbox::SOURCE);
    let data = read_mailbox(driver, &mailbox::DATA);
    let header = mailbox::HEADER.map(|r| read_mailbox(driver, &r));
    csr::write(driver, mailbox_csr, mailbox::POP.address(0, 0), 1).expect("settles");
    Some((source & 0xff, source & 0x100 != 0, data, header))
}

/// Offers `entry` for one cycle; true if the mailbox took it.
fn push(driver: &mut CycleDriver<Box8>, (port, truncated, data, header): &Entry) -> bool {
    let mailbox = driver.block();
    let taken = mailbox.ready.val();
    mailbox.push.next = true;
    mailbox.push_port.next = port.to_bits();
    mailbox.push_truncated.next = *truncated;
    mailbox.push_data.next = data.to_bits();
    mailbox.push_dw0.next = header[0].to_bits();
    mailbox.push_dw1.next = header[1].to_bits();
    mailbox.push_dw2.next = header[2].to_bits();
    mailbox.push_dw3.next = header[3].to_bits();
    driver.tick().expect("the mailbox settles");
    driver.block().push.next = false;
    driver.settle().expect("the mailbox settles");
    taken
}

fn new_mailbox() -> CycleDriver<Box8> {
    CycleDriver::new(Box8::default(), |b| &mut b.clock).expect("well formed")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_cpu_reads_the_models_cpu_deliveries_in_order(
        windows in prop::collection::vec(window_entry(), 2),
        offers in prop::collection::vec(
            (0u8..3, request(), common(), (any::<bool>(), 0u16..4)),
            64,
        ),
        pops in prop::collection::vec(prop::bool::weighted(0.3), 64),
    ) {
        on_big_stack(move || -> Result<(), TestCaseError> {
            let mut model = model_switch(&windows);
            let mut expected: VecDeque<Entry> = VecDeque::new();
            let mut pending: VecDeque<Entry> = VecDeque::new();
            let mut driver = new_mailbox();
            for ((source, request, common, (to_cpu, data_dw)), pop_now) in offers.iter().zip(&pops) {
                let (port, packet) = match source {
                    0 => (PortIndex(0), packet(request, common, &windows)),
                    1 => (PortIndex(1), packet(request, common, &windows)),
                    _ => (PortIndex(1), Some(completion(*to_cpu, *data_dw, common.tag))),
                };
                if let Some(packet) = packet {
                    let out = model
                        .ingress(port, &packet.to_bytes().expect("checked when built"))
                        .expect("tags are free");
                    for delivery in out.deliveries.iter().filter(|d| d.to == Destination::Cpu) {
                        let mail = entry(delivery.from, &delivery.packet);
                        expected.push_back(mail);
                        pending.push_back(mail);
                    }
                }
                if let Some(mail) = pending.front() {
                    if push(&mut driver, mail) {
                        pending.pop_front();
                    }
                }
                if *pop_now {
                    if let Some(read) = pop(&mut driver) {
                        prop_assert_eq!(Some(read), expected.pop_front());
                    }
                }
            }
            while !expected.is_empty() {
                if let Some(mail) = pending.front() {
                    if push(&mut driver, mail) {
                        pending.pop_front();
                    }
                }
                let read = pop(&mut driver);
                prop_assert!(read.is_some(), "the mailbox holds every TLP");
                prop_assert_eq!(read, expected.pop_front());
            }
            prop_assert_eq!(pop(&mut driver), None);
            Ok(())
        })?;
    }
}

fn inject_csr(inject: &mut Inject) -> &mut CsrTarget {
    &mut inject.csr
}

fn new_inject() -> CycleDriver<Inject> {
    CycleDriver::new(Inject::default(), |b| &mut b.clock).expect("well formed")
}

/// What the egress receives: port, header DWs, the payload DW if any.
type Sent = (u32, [u32; 4], Option<u32>);

/// The CPU writes a TLP and sends it out of `port`; `Some` with what the
/// egress then receives, `None` if refused.
fn send(driver: &mut CycleDriver<Inject>, header: [u32; 4], data: u32, port: u32) -> Option<Sent> {
    for (register, value) in inject::HEADER.iter().zip(header) {
        csr::write(driver, inject_csr, register.address(0, 0), value).expect("settles");
    }
    csr::write(driver, inject_csr, inject::DATA.address(0, 0), data).expect("settles");
    csr::write(driver, inject_csr, inject::SEND.address(0, 0), port).expect("settles");
    let status = csr::read(driver, inject_csr, inject::STATUS.address(0, 0))
        .expect("settles")
        .expect("answered");
    let block = driver.block();
    if status & 0b10 != 0 {
        assert!(!block.valid.val(), "a refused TLP is not sent");
        return None;
    }
    assert_eq!(status, 1, "BUSY until the egress takes it");
    assert!(block.valid.val());
    let dws = [&block.dw0, &block.dw1, &block.dw2, &block.dw3].map(|s| s.val().to_u32());
    // Fmt[1]: the TLP has data (§2.2.1).
    let data = (dws[0] & 1 << 30 != 0).then(|| block.data.val().to_u32());
    let sent = (block.port.val().to_u32(), dws, data);
    block.ready.next = true;
    driver.tick().expect("settles");
    driver.block().ready.next = false;
    driver.settle().expect("settles");
    assert!(!driver.block().valid.val(), "taken once");
    Some(sent)
}

/// DW0s the Fmt/Type table leaves without a TLP type (Table 2-3).
const NO_TYPE: [u32; 4] = [0x0300_0001, 0xa000_0001, 0x2200_0001, 0x4100_0001];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn injection_sends_what_the_model_sends(
        request in request(),
        common in common(),
        window in window_entry(),
        no_type in prop::option::weighted(0.15, 0..NO_TYPE.len()),
        port in 0u32..10,
    ) {
        let tlp = match no_type {
            Some(i) => Some((NO_TYPE[i], [0u8; 16].to_vec())),
            None => packet(&request, &common, &[window])
                .filter(|p| p.payload.len() <= 4 && p.digest.is_none())
                .map(|p| (0, p.to_bytes().expect("checked when built"))),
        };
        let Some((dw0, mut bytes)) = tlp else {
            return Ok(());
        };
        if dw0 != 0 {
            bytes[..4].copy_from_slice(&dw0.to_be_bytes());
        }
        let mut model = Switch::new(capacity::PORTS);
        let expected = model.inject(PortIndex(port as u8), &bytes).ok().map(|d| {
            let wire = d.packet.to_bytes().expect("legal");
            let dws = header_dws(&wire, 0);
            let header_len = if dws[0] & 1 << 29 != 0 { 16 } else { 12 };
            let data = wire.get(header_len..header_len + 4).map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")));
            let Destination::Port(out) = d.to else { panic!("inject sends out of a port") };
            (u32::from(out.0), dws, data)
        });
        let dws = header_dws(&bytes, 0);
        let header_len = if dws[0] & 1 << 29 != 0 { 16 } else { 12 };
        let data = bytes
            .get(header_len..header_len + 4)
            .map_or(0, |b| u32::from_be_bytes(b.try_into().expect("4 bytes")));
        let mut driver = new_inject();
        prop_assert_eq!(send(&mut driver, dws, data, port), expected);
    }
}

#[test]
fn a_full_mailbox_holds_tlps_back_and_keeps_their_order() {
    let mut driver = new_mailbox();
    let mail = |n: u32| {
        (
            n % 8,
            n.is_multiple_of(2),
            n,
            [0x0400_0001, n, 0x0100_0000 | n, 0],
        )
    };
    for n in 0..capacity::MAILBOX_TLPS as u32 {
        assert!(push(&mut driver, &mail(n)), "entry {n} fits");
    }
    assert_eq!(
        read_mailbox(&mut driver, &mailbox::STATUS),
        (capacity::MAILBOX_TLPS as u32) << 8 | 1
    );
    assert!(
        !push(&mut driver, &mail(99)),
        "a full mailbox takes nothing"
    );
    assert_eq!(pop(&mut driver), Some(mail(0)));
    assert!(push(&mut driver, &mail(8)));
    for n in 1..=8 {
        assert_eq!(pop(&mut driver), Some(mail(n)));
    }
    assert_eq!(pop(&mut driver), None);
    assert_eq!(read_mailbox(&mut driver, &mailbox::STATUS), 0);
}

#[test]
fn a_send_while_busy_or_to_no_port_is_refused() {
    let mut driver = new_inject();
    // Cpl, UR, from 10:00.0 to 00:00.0 (PCIe Base 6.0 §2.2.9.1).
    let cpl = [0x0a00_0000, 0x1000_2004, 0x0000_0100, 0];
    for (register, value) in inject::HEADER.iter().zip(cpl) {
        csr::write(&mut driver, inject_csr, register.address(0, 0), value).expect("settles");
    }
    let status = |driver: &mut CycleDriver<Inject>| {
        csr::read(driver, inject_csr, inject::STATUS.address(0, 0))
            .expect("settles")
            .expect("answered")
    };
    let send_to = |driver: &mut CycleDriver<Inject>, port: u32| {
        csr::write(driver, inject_csr, inject::SEND.address(0, 0), port).expect("settles")
    };
    send_to(&mut driver, capacity::PORTS as u32);
    assert_eq!(status(&mut driver), 0b10, "no such port");
    send_to(&mut driver, 3);
    assert_eq!(status(&mut driver), 0b01);
    // A header write while busy is ignored; so is a second SEND.
    csr::write(
        &mut driver,
        inject_csr,
        inject::HEADER[1].address(0, 0),
        0xdead_beef,
    )
    .expect("settles");
    send_to(&mut driver, 4);
    assert_eq!(
        status(&mut driver),
        0b11,
        "busy, and the second send refused"
    );
    let block = driver.block();
    assert!(block.valid.val());
    assert_eq!(block.port.val().to_u32(), 3);
    assert_eq!(block.dw1.val().to_u32(), 0x1000_2004);
}
