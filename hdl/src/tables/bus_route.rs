//! The bus route table: one destination per fabric bus number, in block RAM.
//!
//! An ID-routed TLP goes where the entry of its target's bus number says
//! (weft-model's `RouteTables::by_id`); an entry without VALID means no
//! route. The 256 entries sit in two copies of a 256 × 16-bit block RAM,
//! both written by the CSR bus: one answers lookups, the other CSR reads,
//! so neither waits for the other. A block RAM reads synchronously: the
//! destination of the bus number presented before a clock edge appears
//! after it (one cycle of latency), and a CSR write reaches lookups from
//! the next edge.

use rust_hdl::prelude::*;
use rust_hdl::widgets::prelude::RAM;
use weft_regs::capacity;
use weft_regs::csr::{bus_route, destination};

use crate::csr::{CsrDecoder, CsrTarget, ENTRY_BITS, WORD_BITS};
use crate::tables::address_route::PORT_BITS;

/// Bits of a bus number, the table's index.
pub const BUS_BITS: usize = 8;
const _: () = assert!(1 << BUS_BITS == capacity::BUS_ROUTES);
const _: () = assert!(BUS_BITS == ENTRY_BITS);

/// Bits of a stored entry: every defined bit of the destination register.
const STORED_BITS: usize = 16;
const _: () = assert!(bus_route::DESTINATION.mask() >> STORED_BITS == 0);

/// The switch's bus route table, programmed over the CSR bus.
#[derive(LogicBlock)]
pub struct BusRouteTable {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Programming and read-back.
    pub csr: CsrTarget,
    /// The target's bus number.
    pub bus: Signal<In, Bits<BUS_BITS>>,
    /// One cycle after `bus`: its entry is not valid, the TLP has no route.
    pub miss: Signal<Out, Bit>,
    /// One cycle after `bus`: the TLP goes to the management CPU.
    pub cpu: Signal<Out, Bit>,
    /// One cycle after `bus`: the egress port (meaningful unless `miss` or `cpu`).
    pub port: Signal<Out, Bits<PORT_BITS>>,
    decoder: CsrDecoder,
    lookup: RAM<Bits<STORED_BITS>, BUS_BITS>,
    readback: RAM<Bits<STORED_BITS>, BUS_BITS>,
    read_valid: DFF<Bit>,
    word_destination: Constant<Bits<WORD_BITS>>,
    destination_mask: Constant<Bits<32>>,
    valid_bit: Constant<Bits<8>>,
    cpu_bit: Constant<Bits<8>>,
    port_lsb: Constant<Bits<8>>,
    writing: Signal<Local, Bit>,
    reading: Signal<Local, Bit>,
}

impl BusRouteTable {
    /// The switch's bus route table, every entry invalid.
    pub fn new() -> Self {
        let empty = || RAM::from(std::iter::repeat_n(Bits::default(), capacity::BUS_ROUTES));
        let bit = |field: &weft_regs::Field| Constant::new(field.lsb.to_bits());
        BusRouteTable {
            clock: Default::default(),
            csr: Default::default(),
            bus: Default::default(),
            miss: Default::default(),
            cpu: Default::default(),
            port: Default::default(),
            decoder: CsrDecoder::new(&bus_route::LAYOUT, 0),
            lookup: empty(),
            readback: empty(),
            read_valid: Default::default(),
            word_destination: Constant::new(bus_route::DESTINATION.word().to_bits()),
            destination_mask: Constant::new(bus_route::DESTINATION.mask().to_bits()),
            valid_bit: bit(&destination::VALID),
            cpu_bit: bit(&destination::CPU),
            port_lsb: bit(&destination::PORT),
            writing: Default::default(),
            reading: Default::default(),
        }
    }
}

impl Default for BusRouteTable {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for BusRouteTable {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, read_valid);
        self.decoder.address.next = self.csr.address.val();
        self.writing.next = self.csr.write.val()
            && self.decoder.selected.val()
            && (self.decoder.word.val() == self.word_destination.val());
        self.reading.next = self.csr.read.val()
            && self.decoder.selected.val()
            && (self.decoder.word.val() == self.word_destination.val());
        self.read_valid.d.next = self.reading.val();

        self.lookup.read_clock.next = self.clock.val();
        self.lookup.write_clock.next = self.clock.val();
        self.lookup.read_address.next = self.bus.val();
        self.lookup.write_address.next = self.decoder.entry.val();
        self.lookup.write_data.next =
            bit_cast::<STORED_BITS, 32>(self.csr.write_data.val() & self.destination_mask.val());
        self.lookup.write_enable.next = self.writing.val();
        self.readback.read_clock.next = self.clock.val();
        self.readback.write_clock.next = self.clock.val();
        self.readback.read_address.next = self.decoder.entry.val();
        self.readback.write_address.next = self.decoder.entry.val();
        self.readback.write_data.next =
            bit_cast::<STORED_BITS, 32>(self.csr.write_data.val() & self.destination_mask.val());
        self.readback.write_enable.next = self.writing.val();

        self.miss.next = !self
            .lookup
            .read_data
            .val()
            .get_bit(self.valid_bit.val().index());
        self.cpu.next = self
            .lookup
            .read_data
            .val()
            .get_bit(self.cpu_bit.val().index());
        self.port.next = self
            .lookup
            .read_data
            .val()
            .get_bits::<PORT_BITS>(self.port_lsb.val().index());
        self.csr.read_valid.next = self.read_valid.q.val();
        self.csr.read_data.next = bits::<32>(0);
        if self.read_valid.q.val() {
            self.csr.read_data.next = bit_cast::<32, STORED_BITS>(self.readback.read_data.val());
        }
    }
}
