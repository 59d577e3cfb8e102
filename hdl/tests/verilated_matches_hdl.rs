//! The switch top's emitted Verilog, built by Verilator, does what
//! rust-hdl's simulation of the block does, cycle for cycle.
//!
//! Two copies of a 2-port `SwitchTop` (128-bit payload), one in rust-hdl's
//! simulator and one Verilated from the Verilog `weft-verilog` would emit,
//! are programmed alike through the firmware's driver: port 0 a host port
//! with a window, port 1 a fabric port, bus and address routes out of
//! either. Random TLPs, well formed and not (any Fmt/Type, lengths that
//! disagree with the payload, payloads past a switching slot), are
//! carried through both; each must leave the same ports with the same
//! bytes in the same cycles, reach the CPU and be dropped alike. The
//! mailbox, emptied over the CSR bus, and every counter of both ports must
//! then read the same. A Verilog construct that Verilator evaluates
//! otherwise than rust-hdl's simulator (an ordering of blocking
//! assignments, a width, a latch) shows as a difference here.

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use weft_hdl::driver::on_big_stack;
use weft_hdl::top_harness::{Harness, TopHarness};
use weft_hdl::top_verilated::{VerilatedPins, VerilatedSwitch};
use weft_model::PortIndex;
use weft_pcie::Bdf;
use weft_regs::csr::counter;
use weft_regs::driver::{CsrBus, CsrDataPlane};
use weft_regs::tables::{
    AddressRoute, DataPlane, Destination, HostIndex, Permissions, PortRole, Window,
};

mod common;
use common::top::empty_mailbox;

const W: usize = 128;
const PORTS: usize = 2;

/// A new instance of the Verilated top, built once per test binary
/// (and cached across runs under the target directory).
fn verilated() -> Harness<VerilatedPins> {
    static BUILT: OnceLock<VerilatedSwitch> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("verilated");
        VerilatedSwitch::build::<W, PORTS>(&cache, &mut |step: &str| {
            eprintln!("verilated switch: {step}")
        })
        .unwrap_or_else(|error| panic!("{error}"))
    });
    Harness::on(Box::new(
        built.instance().unwrap_or_else(|error| panic!("{error}")),
    ))
}

/// Port 0 a host port whose window 0 maps 0x1_0000_0000.. onto fabric
/// 0x40_0000_0000 (64 KiB); port 1 fabric. Bus 1 routes to port 0, bus 2
/// to port 1; fabric 0x40_0000_0000.. (1 MiB) to port 1, 0x50_0000_0000..
/// to port 0.
fn program(bus: &mut impl CsrBus) {
    let mut plane = CsrDataPlane::new(bus).expect("a weft data plane");
    plane
        .set_port_role(
            PortIndex(0),
            PortRole::Host {
                host: HostIndex(0),
                proxy_id: Bdf::new(1, 0, 0),
            },
        )
        .expect("exists");
    plane
        .set_port_role(PortIndex(1), PortRole::Fabric)
        .expect("exists");
    plane
        .set_window(
            PortIndex(0),
            0,
            Window {
                base: 0x1_0000_0000,
                size: 0x1_0000,
                fabric_base: 0x40_0000_0000,
                permissions: Permissions::READ_WRITE,
            },
        )
        .expect("a window");
    for (bus, port) in [(1, 0), (2, 1)] {
        plane
            .set_bus_route(bus, Some(Destination::Port(PortIndex(port))))
            .expect("a route");
    }
    for (entry, base, port) in [(0, 0x40_0000_0000u64, 1u8), (1, 0x50_0000_0000, 0)] {
        plane
            .set_address_route(
                entry,
                Some(AddressRoute {
                    base,
                    size: 0x10_0000,
                    to: Destination::Port(PortIndex(port)),
                }),
            )
            .expect("a route");
    }
}

/// A TLP's wire bytes: a header of `fmt_type` and the rest of DW0 from
/// `dw0`, DWs 1–3 as given, and `payload_dws` DWs after it, which may
/// disagree with the Length field.
fn tlp(fmt_type: u8, dw0: u32, rest: [u32; 3], payload_dws: usize) -> Vec<u8> {
    let dw0 = u32::from(fmt_type) << 24 | dw0 & 0x00ff_ffff;
    let header_dws = if fmt_type & 0x20 != 0 { 4 } else { 3 };
    std::iter::once(dw0)
        .chain(rest.into_iter().take(header_dws - 1))
        .chain((0..payload_dws as u32).map(|k| k.wrapping_mul(0x0101_0101) ^ dw0))
        .flat_map(u32::to_be_bytes)
        .collect()
}

/// Fmt/Type bytes of the kinds the switch tells apart (PCIe Base 6.0
/// Table 2-3), and reserved encodings.
const KINDS: [u8; 16] = [
    0x00, 0x20, 0x40, 0x60, // MRd, MWr (3 and 4 DW)
    0x04, 0x44, 0x05, 0x45, // CfgRd0/CfgWr0, CfgRd1/CfgWr1
    0x0a, 0x4a, // Cpl, CplD
    0x30, 0x34, 0x70, // Msg routed to root, local; MsgD
    0x02, 0x1f, 0x9b, // I/O read, reserved types
];

fn arbitrary_tlp() -> impl Strategy<Value = (usize, Vec<u8>)> {
    (
        0..PORTS,
        prop::sample::select(KINDS.to_vec()),
        any::<u32>(),
        // Requester/completer bus 1 or 2 mostly, so completions route.
        (prop::sample::select(vec![1u32, 2, 7]), any::<u32>()),
        // Addresses inside the window, the routes, or nowhere.
        prop::sample::select(vec![
            0x1_0000_0000u64,
            0x1_0000_fff0,
            0x40_0000_0100,
            0x50_0000_0000,
            0x60_0000_0000,
        ]),
        any::<bool>(),
        0usize..80,
    )
        .prop_map(|(port, kind, dw0, (bus, low), address, agree, payload)| {
            let length = (dw0 & 0x3ff) % 72;
            let data = kind & 0x40 != 0;
            let payload_dws = match (data, agree) {
                (true, true) => length.max(1) as usize,
                (false, true) => 0,
                (_, false) => payload,
            };
            let dw0 = dw0 & !0x3ff | if data && agree { length.max(1) } else { length };
            // DW1: requester (bus in bits 31:24) and tag and byte enables;
            // DW2/DW3: address (for a completion, requester ID and tag).
            let dw1 = bus << 24 | low & 0x00ff_ffff;
            let (dw2, dw3) = if kind & 0x20 != 0 {
                ((address >> 32) as u32, address as u32 & !3)
            } else if kind & 0x1f == 0x0a {
                (bus << 24 | low >> 8 & 0xffff, 0)
            } else {
                (address as u32 & !3, 0)
            };
            (port, tlp(kind, dw0, [dw1, dw2, dw3], payload_dws))
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, ..ProptestConfig::default() })]

    #[test]
    fn verilated_switch_carries_every_tlp_as_rust_hdl_does(
        tlps in prop::collection::vec(arbitrary_tlp(), 1..24)
    ) {
        let (hdl, verilated) = on_big_stack(move || {
            let mut hdl: TopHarness<W, PORTS> = TopHarness::new().expect("well formed");
            let mut verilated = verilated();
            program(&mut hdl);
            program(&mut verilated);
            let mut outcomes = (Vec::new(), Vec::new());
            for (port, bytes) in &tlps {
                outcomes.0.push(hdl.carry(*port, bytes).map_err(|e| format!("{e:?}")));
                outcomes.1.push(verilated.carry(*port, bytes).map_err(|e| format!("{e:?}")));
            }
            let hdl_state = read_out(&mut hdl);
            let verilated_state = read_out(&mut verilated);
            ((outcomes.0, hdl_state, hdl.cycles()), (outcomes.1, verilated_state, verilated.cycles()))
        });
        prop_assert_eq!(&verilated.0, &hdl.0, "what each TLP did");
        prop_assert_eq!(&verilated.1, &hdl.1, "mailbox and counters");
        prop_assert_eq!(verilated.2, hdl.2, "cycles");
    }
}

/// Empties the mailbox and reads every counter of both ports.
fn read_out(bus: &mut impl CsrBus) -> (common::top::Mailboxed, Vec<u64>) {
    let mailbox = empty_mailbox(bus);
    let mut plane = CsrDataPlane::new(bus).expect("a weft data plane");
    let counters = (0..PORTS as u8)
        .flat_map(|p| (0..counter::NAMES.len() as u32).map(move |e| (p, e)))
        .map(|(p, e)| plane.read_counter(PortIndex(p), e).expect("a counter"))
        .collect();
    (mailbox, counters)
}
