//! The RTL mailbox and TLP injection agree with weft-model's `CsrWindow`
//! (the register map's reference) over a model switch.
//!
//! Mailbox: random TLPs from a host port and an endpoint port go through
//! a model switch; every TLP the model delivers to the CPU goes, whole,
//! into both the RTL mailbox (one DW per cycle, as ingress pushes it) and
//! the model's `CsrWindow::queue_for_cpu`, between random CPU accesses:
//! STATUS reads, `mailbox_data` reads (past the TLP's end too), POP, LOST
//! clears and INT_ENABLE writes. Every read must answer as the model does,
//! so the queue's contents, order, LOST on a full queue or an over-long TLP
//! all agree, and the mailbox's interrupt line must be the model's after
//! every TLP and every access.
//!
//! Injection: the CPU writes random TLPs to `inject_data` (legal ones,
//! DW0s of no TLP type, DWORDS off by one or past `inject::TLP_DWORDS`)
//! and sends them to random ports, clearing STATUS and switching the
//! interrupt on and off at random; the RTL sends exactly what the model's
//! injector sends, out of the same port, and its STATUS, INT_PENDING and
//! interrupt line are the model's.

mod common;

use common::tlp::{common, packet, request, window_entry};
use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::csr::{self, CsrTarget};
use weft_hdl::driver::on_big_stack;
use weft_hdl::driver::CycleDriver;
use weft_hdl::management::{Inject, Mailbox};
use weft_model::csr_window::CsrWindow;
use weft_model::{
    AddressRoute, Destination, HostIndex, Owner, Packet, PortIndex, PortRole, PortTables,
    RouteTables, Switch, Window,
};
use weft_pcie::tlp::{Attributes, Body, Completion, CompletionStatus, Header, Tag, TrafficClass};
use weft_pcie::Bdf;
use weft_regs::capacity;
use weft_regs::csr::{inject, inject_data, mailbox, mailbox_data};
use weft_regs::driver::CsrBus;

/// A TLP's bytes as wire-order DWs (a partial last DW padded with zeros).
fn dwords(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|chunk| {
            let mut dw = [0; 4];
            dw[..chunk.len()].copy_from_slice(chunk);
            u32::from_be_bytes(dw)
        })
        .collect()
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

/// A completion from an endpoint to the CPU's bus 1 (or elsewhere) with `data_dw` data DWs.
fn completion(to_cpu: bool, data_dw: u16, tag: u16) -> Packet {
    let completion = Completion {
        locked: false,
        traffic_class: TrafficClass::TC0,
        attributes: Attributes::default(),
        completer: Bdf(0x0300),
        status: CompletionStatus::Successful,
        byte_count_modified: false,
        byte_count: (data_dw * 4).clamp(4, 4095),
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

fn mailbox_csr(mailbox: &mut Mailbox) -> &mut CsrTarget {
    &mut mailbox.csr
}

fn new_mailbox() -> CycleDriver<Mailbox> {
    CycleDriver::new(Mailbox::default(), |b| &mut b.clock).expect("well formed")
}

fn rtl_read<B: Block>(
    driver: &mut CycleDriver<B>,
    csr: fn(&mut B) -> &mut CsrTarget,
    address: u32,
) -> u32 {
    csr::read(driver, csr, address)
        .expect("the block settles")
        .expect("the block answers its registers")
}

/// Pushes a whole TLP from `port`, one DW per cycle, as ingress does.
fn push(driver: &mut CycleDriver<Mailbox>, port: PortIndex, bytes: &[u8]) {
    let words = dwords(bytes);
    for (n, dw) in words.iter().enumerate() {
        let block = driver.block();
        block.push.next = true;
        block.push_first.next = n == 0;
        block.push_last.next = n + 1 == words.len();
        block.push_dw.next = dw.to_bits();
        block.push_port.next = u32::from(port.0).to_bits();
        driver.tick().expect("the mailbox settles");
    }
    driver.block().push.next = false;
    driver.settle().expect("the mailbox settles");
}

/// One CPU access to the mailbox.
#[derive(Clone, Debug)]
enum MailboxAccess {
    Status,
    Data(u32),
    Pop,
    ClearLost,
    InterruptEnable(u32),
}

fn mailbox_access() -> impl Strategy<Value = MailboxAccess> {
    prop_oneof![
        3 => Just(MailboxAccess::Status),
        3 => (0..mailbox::TLP_DWORDS).prop_map(MailboxAccess::Data),
        2 => Just(MailboxAccess::Pop),
        1 => Just(MailboxAccess::ClearLost),
        1 => prop_oneof![Just(0u32), Just(1), any::<u32>()].prop_map(MailboxAccess::InterruptEnable),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_cpu_reads_the_mailbox_as_the_models_csr_window(
        windows in prop::collection::vec(window_entry(), 2),
        offers in prop::collection::vec(
            (0u8..3, request(), common(), (any::<bool>(), prop_oneof![0u16..4, 60u16..68])),
            48,
        ),
        accesses in prop::collection::vec(prop::collection::vec(mailbox_access(), 0..4), 48),
    ) {
        on_big_stack(move || -> Result<(), TestCaseError> {
            let mut switch = model_switch(&windows);
            let mut model = CsrWindow::new(Switch::new(1));
            let mut driver = new_mailbox();
            for ((source, request, common, (to_cpu, data_dw)), accesses) in offers.iter().zip(&accesses) {
                let (port, packet) = match source {
                    0 => (PortIndex(0), packet(request, common, &windows)),
                    1 => (PortIndex(1), packet(request, common, &windows)),
                    _ => (PortIndex(1), Some(completion(*to_cpu, *data_dw, common.tag))),
                };
                if let Some(packet) = packet {
                    let out = switch
                        .ingress(port, &packet.to_bytes().expect("checked when built"))
                        .expect("tags are free");
                    for delivery in out.deliveries.iter().filter(|d| d.to == Destination::Cpu) {
                        let bytes = delivery.packet.to_bytes().expect("legal");
                        model.queue_for_cpu(delivery.from, &bytes);
                        push(&mut driver, delivery.from, &bytes);
                        prop_assert_eq!(driver.block().irq.val(), model.interrupt());
                    }
                }
                for access in accesses {
                    let address = match access {
                        MailboxAccess::Status => mailbox::STATUS.address(0, 0),
                        MailboxAccess::Data(n) => mailbox_data::DATA.address(0, *n),
                        MailboxAccess::Pop => {
                            let pop = mailbox::DONE.encode(1);
                            model.write32(mailbox::POP.address(0, 0), pop);
                            csr::write(&mut driver, mailbox_csr, mailbox::POP.address(0, 0), pop)
                                .expect("settles");
                            mailbox::STATUS.address(0, 0)
                        }
                        MailboxAccess::ClearLost => {
                            let clear = mailbox::LOST.mask();
                            model.write32(mailbox::STATUS.address(0, 0), clear);
                            csr::write(&mut driver, mailbox_csr, mailbox::STATUS.address(0, 0), clear)
                                .expect("settles");
                            mailbox::STATUS.address(0, 0)
                        }
                        MailboxAccess::InterruptEnable(value) => {
                            let enable = mailbox::INT_ENABLE.address(0, 0);
                            model.write32(enable, *value);
                            csr::write(&mut driver, mailbox_csr, enable, *value).expect("settles");
                            mailbox::INT_PENDING.address(0, 0)
                        }
                    };
                    prop_assert_eq!(
                        rtl_read(&mut driver, mailbox_csr, address),
                        model.read32(address),
                        "{:?}", access
                    );
                    driver.settle().expect("settles");
                    prop_assert_eq!(driver.block().irq.val(), model.interrupt(), "{:?}", access);
                }
            }
            // Drain: every TLP the model still holds, DW by DW.
            loop {
                let status = model.read32(mailbox::STATUS.address(0, 0));
                prop_assert_eq!(rtl_read(&mut driver, mailbox_csr, mailbox::STATUS.address(0, 0)), status);
                if mailbox::PENDING.decode(status) == 0 {
                    break;
                }
                for n in 0..=mailbox::DWORDS.decode(status).min(mailbox::TLP_DWORDS - 1) {
                    let address = mailbox_data::DATA.address(0, n);
                    prop_assert_eq!(rtl_read(&mut driver, mailbox_csr, address), model.read32(address));
                }
                model.write32(mailbox::POP.address(0, 0), 1);
                csr::write(&mut driver, mailbox_csr, mailbox::POP.address(0, 0), 1).expect("settles");
            }
            Ok(())
        })?;
    }
}

#[test]
fn a_full_mailbox_loses_tlps_and_says_so() {
    let mut driver = new_mailbox();
    let mut model = CsrWindow::new(Switch::new(1));
    let tlp = completion(true, 1, 7).to_bytes().expect("legal");
    for _ in 0..=capacity::MAILBOX_TLPS {
        model.queue_for_cpu(PortIndex(2), &tlp);
        push(&mut driver, PortIndex(2), &tlp);
    }
    let status = rtl_read(&mut driver, mailbox_csr, mailbox::STATUS.address(0, 0));
    assert_eq!(
        mailbox::LOST.decode(status),
        1,
        "the one past capacity is lost"
    );
    assert_eq!(mailbox::PENDING.decode(status), 1);
    assert_eq!(mailbox::PORT.decode(status), 2);
    assert_eq!(mailbox::DWORDS.decode(status), 4);
    assert_eq!(status, model.read32(mailbox::STATUS.address(0, 0)));
    for _ in 0..capacity::MAILBOX_TLPS {
        csr::write(&mut driver, mailbox_csr, mailbox::POP.address(0, 0), 1).expect("settles");
    }
    let status = rtl_read(&mut driver, mailbox_csr, mailbox::STATUS.address(0, 0));
    assert_eq!(
        status,
        mailbox::LOST.mask(),
        "empty, LOST kept until cleared"
    );
}

fn inject_csr(inject: &mut Inject) -> &mut CsrTarget {
    &mut inject.csr
}

fn new_inject() -> CycleDriver<Inject> {
    let mut driver = CycleDriver::new(Inject::default(), |b| &mut b.clock).expect("well formed");
    driver.block().ready.next = true;
    driver
}

/// The TLP leaving the RTL injector, if one leaves: its port and DWs.
fn drain(driver: &mut CycleDriver<Inject>) -> Option<(u32, Vec<u32>)> {
    driver.settle().expect("settles");
    if !driver.block().valid.val() {
        return None;
    }
    let port = driver.block().port.val().to_u32();
    let mut words = Vec::new();
    loop {
        let block = driver.block();
        assert!(block.valid.val(), "a TLP leaves without gaps");
        assert_eq!(block.port.val().to_u32(), port);
        words.push(block.dw.val().to_u32());
        let last = block.last.val();
        driver.tick().expect("settles");
        if last {
            break;
        }
        assert!(words.len() <= inject::TLP_DWORDS as usize, "a TLP ends");
    }
    driver.settle().expect("settles");
    assert!(!driver.block().valid.val(), "sent once");
    Some((port, words))
}

/// DW0s the Fmt/Type table leaves without a TLP type (Table 2-3).
const NO_TYPE: [u32; 4] = [0x0300_0001, 0xa000_0001, 0x2200_0001, 0x4100_0001];

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn injection_sends_what_the_models_csr_window_sends(
        sends in prop::collection::vec(
            (
                request(),
                common(),
                window_entry(),
                prop::option::weighted(0.15, 0..NO_TYPE.len()),
                prop_oneof![6 => Just(0i32), 1 => Just(-1i32), 1 => Just(1i32), 1 => 64i32..200],
                0u32..10,
                any::<bool>(),
                any::<bool>(),
            ),
            1..6,
        ),
    ) {
        let mut model = CsrWindow::new(Switch::new(capacity::PORTS));
        let mut driver = new_inject();
        for (request, common, window, no_type, skew, port, clear, enable) in &sends {
            let enable_address = inject::INT_ENABLE.address(0, 0);
            let enable = inject::ON_DROPPED.encode(u32::from(*enable));
            model.write32(enable_address, enable);
            csr::write(&mut driver, inject_csr, enable_address, enable).expect("settles");
            let bytes = match no_type {
                Some(i) => {
                    let mut bytes = vec![0u8; 16];
                    bytes[..4].copy_from_slice(&NO_TYPE[*i].to_be_bytes());
                    bytes
                }
                None => match packet(request, common, &[*window]) {
                    Some(packet) => packet.to_bytes().expect("checked when built"),
                    None => continue,
                },
            };
            let words = dwords(&bytes);
            let count = if *skew >= 64 { *skew } else { words.len() as i32 + skew };
            let Ok(count) = u32::try_from(count) else { continue };
            if count > 255 {
                continue;
            }
            for (n, dw) in words.iter().take(inject::TLP_DWORDS as usize).enumerate() {
                let address = inject_data::DATA.address(0, n as u32);
                model.write32(address, *dw);
                csr::write(&mut driver, inject_csr, address, *dw).expect("settles");
            }
            let send = inject::PORT.encode(*port) | inject::DWORDS.encode(count);
            model.write32(inject::SEND.address(0, 0), send);
            csr::write(&mut driver, inject_csr, inject::SEND.address(0, 0), send).expect("settles");
            let expected = model.take_injected().into_iter().map(|d| {
                let Destination::Port(out) = d.to else { panic!("inject sends out of a port") };
                (u32::from(out.0), dwords(&d.packet.to_bytes().expect("legal")))
            }).next();
            prop_assert_eq!(drain(&mut driver), expected);
            let status = inject::STATUS.address(0, 0);
            prop_assert_eq!(rtl_read(&mut driver, inject_csr, status), model.read32(status));
            if *clear {
                let bits = inject::MALFORMED.mask() | inject::NO_SUCH_PORT.mask();
                model.write32(status, bits);
                csr::write(&mut driver, inject_csr, status, bits).expect("settles");
                prop_assert_eq!(rtl_read(&mut driver, inject_csr, status), model.read32(status));
            }
            let pending = inject::INT_PENDING.address(0, 0);
            prop_assert_eq!(rtl_read(&mut driver, inject_csr, pending), model.read32(pending));
            driver.settle().expect("settles");
            prop_assert_eq!(driver.block().irq.val(), model.interrupt());
        }
    }
}

#[test]
fn a_send_while_a_tlp_leaves_is_ignored() {
    let mut driver = new_inject();
    driver.block().ready.next = false;
    // Cpl, UR, from 10:00.0 to 00:00.0 (PCIe Base 6.0 §2.2.9.1).
    let cpl = [0x0a00_0000, 0x1000_2004, 0x0000_0100];
    for (n, dw) in cpl.iter().enumerate() {
        csr::write(
            &mut driver,
            inject_csr,
            inject_data::DATA.address(0, n as u32),
            *dw,
        )
        .expect("settles");
    }
    let status = |driver: &mut CycleDriver<Inject>| {
        rtl_read(driver, inject_csr, inject::STATUS.address(0, 0))
    };
    let send_to = |driver: &mut CycleDriver<Inject>, port: u32| {
        let send = inject::PORT.encode(port) | inject::DWORDS.encode(3);
        csr::write(driver, inject_csr, inject::SEND.address(0, 0), send).expect("settles")
    };
    assert_eq!(status(&mut driver), inject::READY.mask());
    send_to(&mut driver, capacity::PORTS as u32);
    assert_eq!(
        status(&mut driver),
        inject::READY.mask() | inject::NO_SUCH_PORT.mask()
    );
    send_to(&mut driver, 3);
    assert_eq!(
        status(&mut driver),
        inject::NO_SUCH_PORT.mask(),
        "not READY while it leaves"
    );
    // A data write and a second SEND while it leaves are ignored.
    csr::write(
        &mut driver,
        inject_csr,
        inject_data::DATA.address(0, 1),
        0xdead_beef,
    )
    .expect("settles");
    send_to(&mut driver, 4);
    driver.block().ready.next = true;
    assert_eq!(drain(&mut driver), Some((3, cpl.to_vec())));
    assert_eq!(drain(&mut driver), None);
    assert_eq!(
        status(&mut driver),
        inject::READY.mask() | inject::NO_SUCH_PORT.mask()
    );
}
