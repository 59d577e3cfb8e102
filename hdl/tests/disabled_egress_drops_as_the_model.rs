//! A port that passes no traffic drops at its egress what is routed to it, as weft-model does.
//!
//! The model decides: a fabric port 0 routes memory writes to port 1,
//! whose role is disabled; the model's `Switch` must deliver nothing and
//! count one drop per TLP at port 1, for the reason it gives. Then the RTL
//! egress of port 1 (`PortEgress`), with ENABLE clear or role disabled,
//! gets the same TLPs back to back from the switching core while its link
//! takes beats or not at random: it must take every beat from the core,
//! send nothing on the link (so it never stalls it either), and pulse
//! `dropped` once per TLP with the model's reason.

mod common;

use common::tlp::reason_code;
use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::driver::on_big_stack;
use weft_hdl::driver::CycleDriver;
use weft_hdl::port::PortEgress;
use weft_model::{AddressRoute, Destination, PortIndex, PortRole, Switch};
use weft_regs::csr::port;
use weft_regs::tables::DataPlane;

/// Payload bits of the egress.
const W: usize = 128;
/// Payload DWs per beat.
const DWS_PER_BEAT: usize = W / 32;
/// Where the writes go, and the route that takes them to port 1.
const ROUTED_BASE: u64 = 0x1000_0000;

/// A 32-bit memory write of `dws` DWs (at least 2, all bytes enabled) into the routed range.
fn memory_write(dws: usize, seed: u32) -> ([u32; 4], Vec<u32>) {
    // §2.2.1: Fmt 010b, Type 0_0000b; §2.2.5: first and last DW BE all set.
    let header = [
        0x4000_0000 | dws as u32,
        0x0100_00ff | (seed & 0xff) << 8,
        ROUTED_BASE as u32 + (seed & 0xff) * 0x100,
        0,
    ];
    let payload = (0..dws as u32).map(|k| seed.wrapping_mul(k + 1)).collect();
    (header, payload)
}

/// One beat from the core.
#[derive(Clone)]
struct Beat {
    sop: bool,
    eop: bool,
    empty: usize,
    header: [u32; 4],
    chunk: Vec<u32>,
}

fn bytes(header: [u32; 4], payload: &[u32]) -> Vec<u8> {
    header[..3]
        .iter()
        .chain(payload)
        .flat_map(|dw| dw.to_be_bytes())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn a_disabled_port_takes_and_drops_what_is_routed_to_it(
        tlps in prop::collection::vec((2usize..13, any::<u32>()), 1..6),
        enable_clear in any::<bool>(),
        ready_seed in any::<u64>(),
    ) {
        on_big_stack(move || -> Result<(), TestCaseError> {
            let tlps: Vec<_> = tlps.iter().map(|&(dws, seed)| memory_write(dws, seed)).collect();

            // The model: what becomes of them, and where it is counted.
            let mut switch = Switch::new(2);
            switch.set_port_role(PortIndex(0), PortRole::Fabric).expect("legal");
            switch.set_port_role(PortIndex(1), PortRole::Disabled).expect("legal");
            switch
                .set_address_route(0, Some(AddressRoute {
                    base: ROUTED_BASE,
                    size: ROUTED_BASE,
                    to: Destination::Port(PortIndex(1)),
                }))
                .expect("legal");
            let mut reasons = Vec::new();
            for (header, payload) in &tlps {
                let forwarding = switch.ingress(PortIndex(0), &bytes(*header, payload)).expect("the port exists");
                prop_assert!(forwarding.deliveries.is_empty(), "the model delivers nothing");
                reasons.push(reason_code(forwarding.dropped.expect("the model drops it")));
            }
            let counted: u64 = weft_model::DropReason::ALL
                .iter()
                .map(|r| switch.counters(PortIndex(1)).expect("exists").drops_for(*r))
                .sum();
            prop_assert_eq!(counted, tlps.len() as u64, "the model counts the drops at port 1");

            // The RTL egress of port 1.
            let mut rtl = CycleDriver::new(PortEgress::<W>::new(1), |b| &mut b.clock).expect("well formed");
            {
                let egress = rtl.block();
                egress.enable.next = !enable_clear;
                egress.role.next = if enable_clear { port::ROLE_FABRIC } else { port::ROLE_DISABLED }.to_bits();
            }
            let mut beats = Vec::new();
            for (header, payload) in &tlps {
                let chunks: Vec<&[u32]> = payload.chunks(DWS_PER_BEAT).collect();
                for (k, chunk) in chunks.iter().enumerate() {
                    beats.push(Beat {
                        sop: k == 0,
                        eop: k + 1 == chunks.len(),
                        empty: DWS_PER_BEAT - chunk.len(),
                        header: *header,
                        chunk: chunk.to_vec(),
                    });
                }
            }
            let mut dropped = Vec::new();
            let mut next = 0;
            for cycle in 0u64..1000 {
                if next == beats.len() {
                    break;
                }
                let Beat { sop, eop, empty, header, chunk } = beats[next].clone();
                let egress = rtl.block();
                egress.link.ready.next = (cycle ^ ready_seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 63 == 1;
                egress.core.valid.next = true;
                egress.core.sop.next = sop;
                egress.core.eop.next = eop;
                egress.core.empty.next = (empty as u64).into();
                egress.core.dw0.next = header[0].to_bits();
                egress.core.dw1.next = header[1].to_bits();
                egress.core.dw2.next = header[2].to_bits();
                egress.core.dw3.next = header[3].to_bits();
                let mut bus = Bits::<W>::default();
                for (k, dw) in chunk.iter().enumerate() {
                    bus.set_bits::<32>(W - 32 * (k + 1), u64::from(*dw).into());
                }
                egress.core.payload.next = bus;
                rtl.settle().expect("settles");
                let egress = rtl.block();
                prop_assert!(!egress.link.valid.val(), "cycle {}: a disabled port sends nothing", cycle);
                prop_assert!(!egress.sent.val() && !egress.stall.val(), "cycle {}: nor stalls its link", cycle);
                if egress.dropped.val() {
                    prop_assert!(sop, "cycle {}: a drop is pulsed on a TLP's first beat", cycle);
                    dropped.push(egress.drop_reason.val().to_u32());
                }
                if egress.core.ready.val() {
                    next += 1;
                }
                rtl.tick().expect("settles");
            }
            prop_assert_eq!(next, beats.len(), "every beat is taken from the core");
            prop_assert_eq!(dropped, reasons, "one drop per TLP, for the model's reason");
            Ok(())
        })?;
    }
}
