//! Each port's traffic, stall and drop counters (`weft_regs::csr::counter`)
//! and the register that clears them (`weft_regs::csr::counter_control`).
//!
//! A [`PortCounters`] counts one port's events, 21 counters of 64 bits in
//! the register map's entry order, and answers their CSR reads;
//! [`CounterControl`] decodes the one `CLEAR` register and drives each
//! port's `clear`. This is weft-model's `PortCounters` with the reading of
//! its `CsrWindow`:
//!
//! - **Events.** In one cycle a port may receive a TLP, send one, drop one
//!   at its ingress and one at its egress, and stall its egress, all at
//!   once, and every one is counted at that cycle's clock edge: a TLP
//!   counts one in its class's TLP counter and its bytes as on the wire in
//!   the direction's byte counter (weft-model's `Traffic::count`); a drop
//!   counts one under its reason (two drops of one reason in one cycle
//!   count two); a drop reason code with no counter (12 and up) counts
//!   nothing. A received TLP that is dropped raises both `received` and a
//!   drop, except a malformed one, which is only a drop, as the model counts.
//! - **Reads.** A read of `VALUE_LOW` answers bits 31:0 as they stood
//!   before the clock edge of the read, and at that same edge captures bits
//!   63:32 into that counter's `VALUE_HIGH`; a read of `VALUE_HIGH`
//!   answers the capture (0 before the first). So LOW then HIGH is one
//!   consistent 64-bit value even while the port counts, and as in the
//!   model each counter keeps its own capture: reads of other counters in
//!   between do not disturb it.
//! - **Clears.** `clear` sets every counter of the port to zero at the
//!   clock edge, and the events of that same cycle are counted after the
//!   clear: the counter then holds exactly them. A read in the clear's
//!   cycle sees the counts from before that edge and the next read sees
//!   the counts after it, so an event counted before the clear would show
//!   in no read at all; weft-model's `Switch::clear_counters` likewise
//!   zeroes the counters between TLPs and every TLP is counted before or
//!   after it. A clear leaves the captured `VALUE_HIGH` halves alone, as
//!   the model's `CsrWindow` does.
//! - **Width.** A count wraps at 2^64 (`DataPlane::read_counter`).
//!
//! Every count is kept as two 32-bit halves (rust-hdl computes on signals
//! of up to 32 bits in machine words): the low half adds the increment,
//! and the high half adds the carry out of it.

use rust_hdl::prelude::*;
use weft_regs::capacity;
use weft_regs::csr::{counter, counter_control};

use crate::csr::{CsrDecoder, CsrTarget, WORD_BITS};
use crate::switching::{CLASS_COMPLETION, CLASS_NON_POSTED, CLASS_POSTED};
use crate::translate::host_ingress::DROP_REASON_BITS;

/// Counters of one port: every entry of `weft_regs::csr::counter`.
pub const COUNTERS: usize = counter::NAMES.len();

/// Drop reasons with a counter: weft-model's `DropReason::ALL`.
pub const DROP_COUNTERS: usize = COUNTERS - counter::FIRST_DROP as usize;

/// Ports whose counters [`CounterControl`] clears: one bit each in `CLEAR`.
pub const PORTS: usize = capacity::PORTS;

pub use crate::header_decode::WIRE_BYTES_BITS;

// The counter loops below index the entries by these positions, and take
// the traffic counters' order within a direction from the class codes.
const _: () = assert!(
    counter::TLPS_IN_POSTED == 0
        && counter::TLPS_IN_NON_POSTED == 1
        && counter::TLPS_IN_COMPLETION == 2
        && counter::BYTES_IN == 3
        && counter::TLPS_OUT_POSTED == 4
        && counter::TLPS_OUT_NON_POSTED == 5
        && counter::TLPS_OUT_COMPLETION == 6
        && counter::BYTES_OUT == 7
        && counter::STALL_CYCLES == 8
        && counter::FIRST_DROP == 9
        && DROP_COUNTERS == 12
);
const _: () = assert!(CLASS_POSTED == 0 && CLASS_NON_POSTED == 1 && CLASS_COMPLETION == 2);
const _: () = assert!(DROP_COUNTERS <= 1 << DROP_REASON_BITS);
const _: () = assert!(counter_control::CLEAR_PORTS.width as usize == PORTS);

/// One 64-bit count in two 32-bit halves, with the high half captured for reads.
#[derive(LogicBlock, Default)]
pub struct WideCounter {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Added to the count at the clock edge.
    pub increment: Signal<In, Bits<32>>,
    /// The count restarts at zero: it becomes this cycle's `increment`.
    pub clear: Signal<In, Bit>,
    /// Bits 63:32 of the count go into `captured_high` at the clock edge.
    pub capture: Signal<In, Bit>,
    /// Bits 31:0 of the count.
    pub low: Signal<Out, Bits<32>>,
    /// Bits 63:32 of the count as of the last `capture`.
    pub captured_high: Signal<Out, Bits<32>>,
    low_half: DFF<Bits<32>>,
    high_half: DFF<Bits<32>>,
    captured: DFF<Bits<32>>,
    /// The increment's complement: the most the low half may hold without a carry.
    headroom: Signal<Local, Bits<32>>,
    carry: Signal<Local, Bit>,
}

impl WideCounter {
    /// Sets the count to `count` in simulation, without a clock edge.
    fn preset(&mut self, count: u64) {
        self.low_half.q.next = (count as u32).to_bits();
        self.high_half.q.next = ((count >> 32) as u32).to_bits();
    }
}

impl Logic for WideCounter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, low_half, high_half, captured);
        // low + increment carries out of bit 31 exactly when low exceeds
        // 2^32 - 1 - increment; the compare runs beside the adder, not after it.
        self.headroom.next = !self.increment.val();
        self.carry.next = self.low_half.q.val() > self.headroom.val();
        self.low_half.d.next = self.low_half.q.val() + self.increment.val();
        if self.carry.val() {
            self.high_half.d.next = self.high_half.q.val() + 1;
        }
        if self.clear.val() {
            self.low_half.d.next = self.increment.val();
            self.high_half.d.next = 0.into();
        }
        if self.capture.val() {
            self.captured.d.next = self.high_half.q.val();
        }
        self.low.next = self.low_half.q.val();
        self.captured_high.next = self.captured.q.val();
    }
}

/// One port's counters and their CSR reads (`weft_regs::csr::counter`, one instance).
#[derive(LogicBlock)]
pub struct PortCounters {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Reads of `VALUE_LOW` and `VALUE_HIGH`; the registers are read-only and writes do nothing.
    pub csr: CsrTarget,
    /// A TLP was received this cycle (not a malformed one, which is only a drop).
    pub received: Signal<In, Bit>,
    /// Its flow-control class: `CLASS_POSTED`, `CLASS_NON_POSTED` or `CLASS_COMPLETION` of [`crate::switching`].
    pub received_class: Signal<In, Bits<2>>,
    /// Its bytes on the wire: prefixes, header, payload and digest.
    pub received_bytes: Signal<In, Bits<WIRE_BYTES_BITS>>,
    /// A TLP was sent this cycle.
    pub sent: Signal<In, Bit>,
    /// Its flow-control class.
    pub sent_class: Signal<In, Bits<2>>,
    /// Its bytes on the wire.
    pub sent_bytes: Signal<In, Bits<WIRE_BYTES_BITS>>,
    /// The port's ingress dropped a TLP this cycle.
    pub ingress_drop: Signal<In, Bit>,
    /// Why: the ingress stages' `drop_reason`, an index into weft-model's `DropReason::ALL`.
    pub ingress_drop_reason: Signal<In, Bits<DROP_REASON_BITS>>,
    /// The port's egress dropped a TLP this cycle.
    pub egress_drop: Signal<In, Bit>,
    /// Why: the egress stage's `drop_reason`.
    pub egress_drop_reason: Signal<In, Bits<DROP_REASON_BITS>>,
    /// The egress had a beat to send and the link partner could not take it.
    pub stall: Signal<In, Bit>,
    /// Zero every counter at this clock edge, before this cycle's events: [`CounterControl::clear`]'s bit of the port.
    pub clear: Signal<In, Bit>,
    decoder: CsrDecoder,
    counters: [WideCounter; COUNTERS],
    read_data: DFF<Bits<32>>,
    read_valid: DFF<Bit>,
    word_low: Constant<Bits<WORD_BITS>>,
    word_high: Constant<Bits<WORD_BITS>>,
    reading: Signal<Local, Bit>,
}

impl PortCounters {
    /// The counters of port `port`, all zero, answering that port's instance of the counter block.
    ///
    /// # Panics
    ///
    /// If the register map has no such port.
    pub fn new(port: u32) -> Self {
        assert!((port as usize) < PORTS, "port {port} has no counters");
        let word = |register: &weft_regs::Register| Constant::new(register.word().to_bits());
        PortCounters {
            clock: Default::default(),
            csr: Default::default(),
            received: Default::default(),
            received_class: Default::default(),
            received_bytes: Default::default(),
            sent: Default::default(),
            sent_class: Default::default(),
            sent_bytes: Default::default(),
            ingress_drop: Default::default(),
            ingress_drop_reason: Default::default(),
            egress_drop: Default::default(),
            egress_drop_reason: Default::default(),
            stall: Default::default(),
            clear: Default::default(),
            decoder: CsrDecoder::new(&counter::LAYOUT, port),
            counters: std::array::from_fn(|_| WideCounter::default()),
            read_data: Default::default(),
            read_valid: Default::default(),
            word_low: word(&counter::VALUE_LOW),
            word_high: word(&counter::VALUE_HIGH),
            reading: Default::default(),
        }
    }

    /// Sets counter `entry` to `count` in simulation, as if that many had
    /// been counted; settle the block before reading it. Counting to a
    /// carry out of bit 31, let alone to the wrap at 2^64, takes longer
    /// than any test runs, so tests start from counts near them. There is
    /// no such path in the hardware.
    ///
    /// # Panics
    ///
    /// If `entry` is not a counter.
    pub fn preset(&mut self, entry: usize, count: u64) {
        self.counters[entry].preset(count);
    }
}

impl Logic for PortCounters {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, read_data, read_valid);
        self.decoder.address.next = self.csr.address.val();
        self.reading.next = self.csr.read.val() && self.decoder.selected.val();
        self.read_valid.d.next = self.reading.val();
        self.read_data.d.next = 0.into();
        for i in 0..COUNTERS {
            self.counters[i].clock.next = self.clock.val();
            self.counters[i].clear.next = self.clear.val();
            self.counters[i].increment.next = 0.into();
            self.counters[i].capture.next = false;
            if self.reading.val() && (self.decoder.entry.val().index() == i) {
                if self.decoder.word.val() == self.word_low.val() {
                    self.counters[i].capture.next = true;
                    self.read_data.d.next = self.counters[i].low.val();
                }
                if self.decoder.word.val() == self.word_high.val() {
                    self.read_data.d.next = self.counters[i].captured_high.val();
                }
            }
        }
        // Entries 0..=2 and 4..=6: TLPs in and out, in class code order.
        for i in 0..3 {
            if self.received.val() && (self.received_class.val().index() == i) {
                self.counters[i].increment.next = 1.into();
            }
            if self.sent.val() && (self.sent_class.val().index() == i) {
                self.counters[i + 4].increment.next = 1.into();
            }
        }
        // Entries 3 and 7: bytes in and out.
        if self.received.val() {
            self.counters[3].increment.next =
                bit_cast::<32, WIRE_BYTES_BITS>(self.received_bytes.val());
        }
        if self.sent.val() {
            self.counters[7].increment.next =
                bit_cast::<32, WIRE_BYTES_BITS>(self.sent_bytes.val());
        }
        // Entry 8: stall cycles.
        if self.stall.val() {
            self.counters[8].increment.next = 1.into();
        }
        // Entries 9 and up: drops by reason, from the ingress and the egress alike.
        for r in 0..DROP_COUNTERS {
            if self.ingress_drop.val() && (self.ingress_drop_reason.val().index() == r) {
                self.counters[r + 9].increment.next = 1.into();
                if self.egress_drop.val() && (self.egress_drop_reason.val().index() == r) {
                    self.counters[r + 9].increment.next = 2.into();
                }
            } else if self.egress_drop.val() && (self.egress_drop_reason.val().index() == r) {
                self.counters[r + 9].increment.next = 1.into();
            }
        }
        self.csr.read_data.next = self.read_data.q.val();
        self.csr.read_valid.next = self.read_valid.q.val();
    }
}

/// The `CLEAR` register (`weft_regs::csr::counter_control`): one write
/// clears the counters of every port whose bit is set.
///
/// One block for all ports, beside one [`PortCounters`] per port: the
/// register is one word for the whole switch, so one decoder answers it
/// and its reads, and each port's counters take a plain `clear` bit and
/// know nothing of the other ports. The clear is combinational from the
/// write: a write at a clock edge clears at that same edge, as every CSR
/// write takes effect (`crate::csr`), so a read right after the write
/// already reads zero.
#[derive(LogicBlock)]
pub struct CounterControl {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Writes of `CLEAR`; reads answer 0 (it is write-only).
    pub csr: CsrTarget,
    /// Bit `p`: clear port `p`'s counters at this clock edge (its [`PortCounters::clear`]).
    pub clear: Signal<Out, Bits<PORTS>>,
    decoder: CsrDecoder,
    read_valid: DFF<Bit>,
    word_clear: Constant<Bits<WORD_BITS>>,
    ports_lsb: Constant<Bits<8>>,
    addressed: Signal<Local, Bit>,
}

impl CounterControl {
    /// The register, no clear under way.
    pub fn new() -> Self {
        CounterControl {
            clock: Default::default(),
            csr: Default::default(),
            clear: Default::default(),
            decoder: CsrDecoder::new(&counter_control::LAYOUT, 0),
            read_valid: Default::default(),
            word_clear: Constant::new(counter_control::CLEAR.word().to_bits()),
            ports_lsb: Constant::new(counter_control::CLEAR_PORTS.lsb.to_bits()),
            addressed: Default::default(),
        }
    }
}

impl Default for CounterControl {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for CounterControl {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, read_valid);
        self.decoder.address.next = self.csr.address.val();
        self.addressed.next =
            self.decoder.selected.val() && (self.decoder.word.val() == self.word_clear.val());
        self.clear.next = 0.into();
        if self.csr.write.val() && self.addressed.val() {
            self.clear.next = self
                .csr
                .write_data
                .val()
                .get_bits::<PORTS>(self.ports_lsb.val().index());
        }
        self.read_valid.d.next = self.csr.read.val() && self.addressed.val();
        self.csr.read_valid.next = self.read_valid.q.val();
        self.csr.read_data.next = 0.into();
    }
}
