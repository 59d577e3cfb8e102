//! `weft_chip` as a board sees it: the soft core programs the data plane
//! through the clock bridge, and a TLP then crosses the switch.
//!
//! A small program on the chip's SoC makes, over the CSR bus on the core
//! clock (half the data plane's, `weft_regs::SOFT_CORE_CLOCK_DIVISOR`),
//! the register writes the firmware's own driver makes to route bus 5 out
//! of port 1 (recorded from `CsrDataPlane` on weft-model's `CsrWindow`),
//! reads the route back and shows its low byte on the LEDs. A completion
//! for bus 5 offered at port 0's link must then leave port 1's as it came,
//! only once port 1's link partner has completion credit, with what it
//! consumed reported on `egress_consume`. A write of a port's LINK
//! register leaves the chip as one pulse on that port's
//! `link_hot_reset` or `link_retrain`.

use rust_hdl::prelude::*;
use weft_hdl::chip::Chip;
use weft_hdl::driver::{on_big_stack, CycleDriver};
use weft_hdl::soc::MemoryImage;
use weft_iss::encode as e;
use weft_model::csr_window::CsrWindow;
use weft_model::{PortIndex, Switch};
use weft_regs::csr::bus_route;
use weft_regs::driver::{CsrBus, CsrDataPlane};
use weft_regs::soc::gpio;
use weft_regs::tables::{DataPlane, Destination, PortRole};

/// Payload bits and ports of the chip under test: small, for speed.
const W: usize = 128;
const PORTS: usize = 2;
type TestChip = Chip<W, PORTS>;

/// The register writes that make both ports fabric ports and route bus 5
/// out of port 1, as the firmware's driver makes them, and the model's
/// value of the bus route entry read back.
fn route_bus_5_writes() -> (Vec<(u32, u32)>, u32) {
    let mut window = CsrWindow::new(Switch::new(PORTS));
    window.record_writes();
    {
        let mut plane = CsrDataPlane::new(&mut window).expect("the model identifies as weft");
        for port in 0..PORTS as u8 {
            plane
                .set_port_role(PortIndex(port), PortRole::Fabric)
                .expect("a role");
        }
        plane
            .set_bus_route(5, Some(Destination::Port(PortIndex(1))))
            .expect("a route");
    }
    let entry = bus_route::DESTINATION.address(0, 5);
    (window.take_written(), window.read32(entry))
}

/// A program that makes `writes`, then stores the register at `readback`
/// to the GPIO's outputs, then spins.
fn program(writes: &[(u32, u32)], readback: u32) -> Vec<u32> {
    let mut words = Vec::new();
    for &(address, value) in writes {
        words.extend(e::li(1, address));
        words.extend(e::li(2, value));
        words.push(e::sw(2, 1, 0));
    }
    words.extend(e::li(1, readback));
    words.push(e::lw(3, 1, 0));
    words.extend(e::li(1, gpio::OUTPUT.address(0, 0)));
    words.push(e::sw(3, 1, 0));
    words.push(e::jal(0, 0));
    words
}

/// The chip at reset, its soft core about to run [`program`] of `writes`
/// and `readback`, each clock driven as a board's PLL makes them.
fn running(writes: &[(u32, u32)], readback: u32) -> CycleDriver<TestChip> {
    let mut image = MemoryImage::reference();
    let words = program(writes, readback);
    image.instructions[..words.len()].copy_from_slice(&words);
    let chip = TestChip::new(&image, 16, 1).expect("the program fits");
    CycleDriver::new(chip, |c| &mut c.clock)
        .expect("the chip builds")
        .with_divided_clock(
            |c| &mut c.core_clock,
            u64::from(weft_regs::SOFT_CORE_CLOCK_DIVISOR),
        )
}

/// A completion for requester 05:00.0 with one data DW: its header DWs and data.
fn completion() -> ([u32; 3], u32) {
    // Fmt 010b (3 DW, data), Type 01010b (Cpl), Length 1 (PCIe Base 6.0 §2.2.9).
    let dw0 = 0x4a00_0001;
    // Completer 09:00.0, Successful, Byte Count 4.
    let dw1 = 0x0900_0004;
    // Requester 05:00.0, tag 7, Lower Address 0.
    let dw2 = 0x0500_0700;
    ([dw0, dw1, dw2], 0xdead_beef)
}

#[test]
fn the_soft_core_programs_the_data_plane_through_the_bridge_and_a_tlp_crosses() {
    on_big_stack(|| {
        let (writes, entry) = route_bus_5_writes();
        let readback = bus_route::DESTINATION.address(0, 5);
        let mut chip = running(&writes, readback);
        let shown = (entry & 0xff) as u64;
        assert_ne!(shown, 0, "a valid route shows on the LEDs");
        let mut cycles = 0;
        while chip.block().led.val().to_u64() != shown {
            chip.tick().expect("the chip settles");
            cycles += 1;
            assert!(cycles < 20_000, "the program never showed the route");
        }

        let (header, data) = completion();
        let c = chip.block();
        let port = &mut c.ingress[0];
        port.valid.next = true;
        port.sop.next = true;
        port.eop.next = true;
        port.empty.next = ((W / 32 - 1) as u64).into();
        port.dw0.next = u64::from(header[0]).into();
        port.dw1.next = u64::from(header[1]).into();
        port.dw2.next = u64::from(header[2]).into();
        port.dw3.next = 0u64.into();
        let mut payload = Bits::<W>::default();
        payload.set_bits::<32>(W - 32, u64::from(data).into());
        port.payload.next = payload;
        for egress in c.egress.iter_mut() {
            egress.ready.next = true;
        }
        // Port 1's link partner has credit for every class but completions,
        // for the first 32 cycles.
        c.egress_credit_posted.next = Bits::<PORTS>::mask();
        c.egress_credit_non_posted.next = Bits::<PORTS>::mask();
        c.egress_credit_completion.next = 0b01u64.into();
        let mut left = None;
        let mut consumed = Vec::new();
        for cycle in 0..96 {
            if cycle == 32 {
                assert_eq!(left, None, "no completion leaves without completion credit");
                chip.block().egress_credit_completion.next = Bits::<PORTS>::mask();
            }
            chip.settle().expect("the chip settles");
            let c = chip.block();
            let taken = c.ingress[0].valid.val() && c.ingress[0].ready.val();
            assert!(!c.egress[0].valid.val(), "nothing leaves where it came in");
            for (port, consume) in c.egress_consume.iter().enumerate() {
                if consume.val().any() {
                    consumed.push((
                        port,
                        consume.val().to_u64(),
                        c.egress_consume_dws[port].val().to_u64(),
                    ));
                }
            }
            let out = &c.egress[1];
            if out.valid.val() {
                left = Some((
                    [out.dw0.val(), out.dw1.val(), out.dw2.val()].map(|dw| dw.to_u32()),
                    out.payload.val().get_bits::<32>(W - 32).to_u32(),
                    (out.sop.val(), out.eop.val(), out.empty.val().to_u64()),
                ));
            }
            chip.tick().expect("the chip settles");
            if taken {
                chip.block().ingress[0].valid.next = false;
            }
        }
        assert_eq!(
            left,
            Some((header, data, (true, true, (W / 32 - 1) as u64))),
            "the completion leaves port 1 as it came"
        );
        // Its credit, once: one completion header (bit 2) and one DW of data.
        assert_eq!(
            consumed,
            vec![(1, 0b100, 1)],
            "what the completion consumed"
        );
    });
}

#[test]
fn a_link_register_write_leaves_the_chip_as_one_pulse_on_its_port() {
    on_big_stack(|| {
        use weft_regs::csr::{global, port};
        // Port 1's LINK: HOT_RESET, then RETRAIN, then both at once, which
        // is a hot reset alone (the link trains again after it anyway:
        // `PortRegisters`); then the identity register, read back to the
        // LEDs once the writes are through.
        let link = port::LINK.address(1, 0);
        let hot = port::LINK_HOT_RESET.encode(1);
        let retrain = port::LINK_RETRAIN.encode(1);
        let writes = [(link, hot), (link, retrain), (link, hot | retrain)];
        let readback = global::ID.address(0, 0);
        let mut chip = running(&writes, readback);
        let shown = u64::from(global::ID_VALUE & 0xff);
        let mut hot_resets = [0; PORTS];
        let mut retrains = [0; PORTS];
        let mut cycles = 0;
        let mut after = 0;
        // Until the readback shows, and a while after, counting data plane
        // cycles in which each pin is high.
        while after < 64 {
            chip.settle().expect("the chip settles");
            let c = chip.block();
            for p in 0..PORTS {
                hot_resets[p] += usize::from(c.link_hot_reset[p].val());
                retrains[p] += usize::from(c.link_retrain[p].val());
            }
            if c.led.val().to_u64() == shown {
                after += 1;
            }
            chip.tick().expect("the chip settles");
            cycles += 1;
            assert!(cycles < 20_000, "the program never finished");
        }
        assert_eq!(
            hot_resets,
            [0, 2],
            "one data plane cycle per HOT_RESET written, port 1 only"
        );
        assert_eq!(
            retrains,
            [0, 1],
            "one data plane cycle per RETRAIN written without HOT_RESET, port 1 only"
        );
    })
}

#[test]
fn the_ports_links_reach_the_soft_core_on_its_gpio_inputs() {
    on_big_stack(|| {
        // Port 1's link up, port 0's down; the program copies the GPIO
        // inputs, as the firmware reads them, to the GPIO outputs.
        let mut chip = running(&[], gpio::INPUT.address(0, 0));
        chip.block().link_up.next = 0b10u64.into();
        let expected =
            u64::from(gpio::INPUT_LINKS_REPORTED.encode(1) | gpio::INPUT_LINK_UP.encode(0b10));
        let mut cycles = 0;
        while chip.block().soc.gpio_outputs.val().to_u64() != expected {
            chip.tick().expect("the chip settles");
            cycles += 1;
            assert!(
                cycles < 20_000,
                "the inputs read {:#x}, not {expected:#x}",
                chip.block().soc.gpio_outputs.val().to_u64()
            );
        }
    });
}
