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

use common::tlp::{
    common, header_bytes, header_dws, packet, program_window, reason_code, request, window_entry,
    wire_header, without_tag, Request,
};
use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::csr::CsrTarget;
use weft_hdl::driver::on_big_stack;
use weft_hdl::driver::CycleDriver;
use weft_hdl::translate::{HostIngress, IngressDestination};
use weft_model::{
    AddressRoute, Destination, HostIndex, PortIndex, PortRole, PortTables, RouteTables, Switch,
    Window,
};
use weft_pcie::tlp::MemoryOp;
use weft_pcie::Bdf;
use weft_regs::capacity;

/// Cases: each programs a whole window table over the bus, not cheap in debug builds.
const CASES: u32 = 16;
/// TLPs offered per programmed table.
const TLPS: usize = 64;
const PORT: u32 = 0;
type Stage = HostIngress<{ capacity::WINDOWS_PER_PORT }>;

/// What happened to a TLP: forwarded with this header, to the CPU with this header, or dropped.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Forward(Vec<u8>),
    Cpu(Vec<u8>),
    Drop(u32),
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
    let header = wire_header(&wire);
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

fn rtl_outcome(
    driver: &mut CycleDriver<Stage>,
    bytes: &[u8],
    beyond_header: u32,
    proxy_id: Bdf,
) -> Outcome {
    let dws = header_dws(bytes, beyond_header);
    let stage = driver.block();
    stage.valid.next = true;
    stage.dw0.next = dws[0].to_bits();
    stage.dw1.next = dws[1].to_bits();
    stage.dw2.next = dws[2].to_bits();
    stage.dw3.next = dws[3].to_bits();
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
            for (entry, window) in windows.iter().enumerate() {
                program_window(&mut driver, rtl_csr, PORT, entry, window, None);
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
