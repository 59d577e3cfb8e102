//! INTx virtual wires of a host port: every function's Assert/Deassert_INTx collapsed per pin.
//!
//! PCIe Base 6.0 §2.2.8.1: a switch's upstream port sends an
//! Assert_INTx or Deassert_INTx message only when the collapsed state of
//! the virtual wire changes, the wire being asserted while any function
//! below asserts it. weft's host egress turns every INTx message for the
//! host into the port's own local message
//! ([`crate::translate::HostEgress`], destination VirtualWire); this block
//! decides whether it goes out, as weft-model's `Switch::egress` does with
//! its per-pin sets of asserting functions.
//!
//! The block remembers up to `N` functions with at least one wire
//! asserted, each with its four pins. A function's Assert is recorded in
//! its slot, or in a free one; with every slot taken by other
//! functions it still asserts the pin but is not remembered, so its
//! Deassert changes nothing (the fabric manager binds at most
//! `capacity::BOUND_FUNCTIONS_PER_HOST` functions to a host, so a
//! table of that size never fills). A Deassert from a function that did
//! not assert the pin changes nothing.
//!
//! The decision is combinational, for the message presented; the wires
//! change at the clock edge that takes it (`valid`).

use rust_hdl::prelude::*;

use crate::tables::id_map::ID_BITS;

/// The virtual wires of one host port, remembering `N` asserting functions.
#[derive(LogicBlock)]
pub struct VirtualWires<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// An INTx message for the host is taken at this clock edge.
    pub valid: Signal<In, Bit>,
    /// Its requester: the fabric ID of the function.
    pub requester: Signal<In, Bits<ID_BITS>>,
    /// Its Message Code\[2:0\]: Deassert in bit 2, the pin (INTA..INTD) in
    /// bits 1:0 (Assert_INTx 0010_00xxb, Deassert_INTx 0010_01xxb, §2.2.8.1).
    pub code: Signal<In, Bits<3>>,
    /// The pin's collapsed state changes: the message goes out to the host.
    pub send: Signal<Out, Bit>,
    ids: [DFF<Bits<ID_BITS>>; N],
    pins: [DFF<Bits<4>>; N],
    pin_bit: Signal<Local, Bits<4>>,
    deassert: Signal<Local, Bit>,
    found: Signal<Local, Bit>,
    free: Signal<Local, Bit>,
    asserted: Signal<Local, Bit>,
    asserted_by_others: Signal<Local, Bit>,
    matched: Signal<Local, Bits<8>>,
    free_slot: Signal<Local, Bits<8>>,
}

impl<const N: usize> Default for VirtualWires<N> {
    fn default() -> Self {
        assert!(N >= 1 && N < 256, "virtual wire slots out of range");
        VirtualWires {
            clock: Default::default(),
            valid: Default::default(),
            requester: Default::default(),
            code: Default::default(),
            send: Default::default(),
            ids: std::array::from_fn(|_| Default::default()),
            pins: std::array::from_fn(|_| Default::default()),
            pin_bit: Default::default(),
            deassert: Default::default(),
            found: Default::default(),
            free: Default::default(),
            asserted: Default::default(),
            asserted_by_others: Default::default(),
            matched: Default::default(),
            free_slot: Default::default(),
        }
    }
}

impl<const N: usize> Logic for VirtualWires<N> {
    #[hdl_gen]
    fn update(&mut self) {
        self.deassert.next = self.code.val().get_bit(2);
        self.pin_bit.next = bits::<4>(1) << bit_cast::<4, 2>(self.code.val().get_bits::<2>(0));

        // The slot holding the function (a slot with no pin asserted is
        // free), a free slot (any will do: the last), and who asserts the pin.
        self.found.next = false;
        self.free.next = false;
        self.matched.next = bits::<8>(0);
        self.free_slot.next = bits::<8>(0);
        self.asserted.next = false;
        for i in 0..N {
            self.ids[i].clock.next = self.clock.val();
            self.pins[i].clock.next = self.clock.val();
            self.ids[i].d.next = self.ids[i].q.val();
            self.pins[i].d.next = self.pins[i].q.val();
            if self.pins[i].q.val().any() && (self.ids[i].q.val() == self.requester.val()) {
                self.found.next = true;
                self.matched.next = i.to_bits::<8>();
            }
            if !self.pins[i].q.val().any() {
                self.free.next = true;
                self.free_slot.next = i.to_bits::<8>();
            }
            if (self.pins[i].q.val() & self.pin_bit.val()).any() {
                self.asserted.next = true;
            }
        }
        self.asserted_by_others.next = false;
        for i in 0..N {
            if (self.pins[i].q.val() & self.pin_bit.val()).any()
                && !(self.found.val() && (self.matched.val().index() == i))
            {
                self.asserted_by_others.next = true;
            }
        }

        // Assert: the wire goes up if it was down. Deassert: it goes down
        // if this function held it and no other does.
        self.send.next = !self.asserted.val();
        if self.deassert.val() {
            self.send.next =
                self.found.val() && self.asserted.val() && !self.asserted_by_others.val();
        }

        for i in 0..N {
            if self.valid.val() {
                if self.found.val() && (self.matched.val().index() == i) {
                    self.pins[i].d.next = self.pins[i].q.val() | self.pin_bit.val();
                    if self.deassert.val() {
                        self.pins[i].d.next = self.pins[i].q.val() & !self.pin_bit.val();
                    }
                }
                if !self.found.val()
                    && !self.deassert.val()
                    && self.free.val()
                    && (self.free_slot.val().index() == i)
                {
                    self.ids[i].d.next = self.requester.val();
                    self.pins[i].d.next = self.pin_bit.val();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::CycleDriver;

    /// Assert_INTA..D and Deassert_INTA..D, Message Code[2:0] (§2.2.8.1).
    const ASSERT_A: u32 = 0b000;
    const ASSERT_B: u32 = 0b001;
    const DEASSERT_A: u32 = 0b100;

    /// Offers one message; whether it goes out.
    fn offer(wires: &mut CycleDriver<VirtualWires<2>>, function: u32, code: u32) -> bool {
        let block = wires.block();
        block.valid.next = true;
        block.requester.next = function.to_bits();
        block.code.next = code.to_bits();
        wires.settle().expect("settles");
        let send = wires.block().send.val();
        wires.tick().expect("settles");
        wires.block().valid.next = false;
        send
    }

    #[test]
    fn only_changes_of_the_collapsed_wire_go_out() {
        let mut wires =
            CycleDriver::new(VirtualWires::<2>::default(), |b| &mut b.clock).expect("well formed");
        let (a, b, c) = (0x0200, 0x0300, 0x0400);
        assert!(offer(&mut wires, a, ASSERT_A), "INTA goes up");
        assert!(!offer(&mut wires, b, ASSERT_A), "already up");
        assert!(!offer(&mut wires, a, ASSERT_A), "a repeat changes nothing");
        assert!(offer(&mut wires, a, ASSERT_B), "each pin is its own wire");
        assert!(!offer(&mut wires, a, DEASSERT_A), "b still holds INTA");
        assert!(!offer(&mut wires, c, DEASSERT_A), "c never asserted it");
        assert!(offer(&mut wires, b, DEASSERT_A), "the last holder lets go");
        assert!(!offer(&mut wires, b, DEASSERT_A), "already down");
        // Both slots are free again but for a's INTB; a new function fits.
        assert!(offer(&mut wires, c, ASSERT_A));
        assert!(offer(&mut wires, c, DEASSERT_A));
    }
}
