//! The address route table: fabric address ranges to the port (or CPU) that leads there.
//!
//! An address-routed TLP goes where the first valid entry with
//! `base <= address < base + size` says (weft-model's
//! `RouteTables::by_address`); with none, it has no route. The lookup
//! takes one clock cycle: each entry compares the address presented before
//! a clock edge and registers the result, and after the edge a priority
//! select picks the first entry. Each entry keeps `base + size` (65 bits)
//! in registers, recomputed every cycle, so a CSR write takes effect for
//! lookups presented from the second cycle after it.

use rust_hdl::prelude::*;
use weft_regs::csr::{address_route, destination};

use crate::csr::{CsrTarget, WORD_BITS};
use crate::tables::front::TableCsr;
use crate::tables::range::{Range, RangeRegisters};

/// Bits of a port index in a destination.
pub const PORT_BITS: usize = 8;
const _: () = assert!(destination::PORT.width as usize == PORT_BITS);

/// One route: its range, its destination, its compare and its registers' read-back.
#[derive(LogicBlock)]
struct RouteEntry {
    clock: Signal<In, Clock>,
    /// This entry is written at this clock edge.
    write: Signal<In, Bit>,
    /// The register written or read.
    word: Signal<In, Bits<WORD_BITS>>,
    /// The value written.
    data: Signal<In, Bits<32>>,
    /// The register at `word` (defined bits only).
    read_value: Signal<Out, Bits<32>>,
    address_high: Signal<In, Bits<32>>,
    address_low: Signal<In, Bits<32>>,
    /// The address presented before the last clock edge lies in the range and the entry is valid.
    hit: Signal<Out, Bit>,
    /// The destination register.
    destination: Signal<Out, Bits<32>>,
    range: Range,
    destination_reg: DFF<Bits<32>>,
    hit_reg: DFF<Bit>,
    word_destination: Constant<Bits<WORD_BITS>>,
    destination_mask: Constant<Bits<32>>,
    valid_bit: Constant<Bits<8>>,
}

impl RouteEntry {
    fn new() -> Self {
        RouteEntry {
            clock: Default::default(),
            write: Default::default(),
            word: Default::default(),
            data: Default::default(),
            read_value: Default::default(),
            address_high: Default::default(),
            address_low: Default::default(),
            hit: Default::default(),
            destination: Default::default(),
            range: Range::new(&RangeRegisters {
                base_low: address_route::BASE_LOW,
                base_high: address_route::BASE_HIGH,
                size_low: address_route::SIZE_LOW,
                size_high: address_route::SIZE_HIGH,
            }),
            destination_reg: Default::default(),
            hit_reg: Default::default(),
            word_destination: Constant::new(address_route::DESTINATION.word().to_bits()),
            destination_mask: Constant::new(address_route::DESTINATION.mask().to_bits()),
            valid_bit: Constant::new(destination::VALID.lsb.to_bits()),
        }
    }
}

impl Logic for RouteEntry {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, destination_reg, hit_reg);
        self.range.clock.next = self.clock.val();
        self.range.write.next = self.write.val();
        self.range.word.next = self.word.val();
        self.range.data.next = self.data.val();
        self.read_value.next = self.range.read_value.val();
        if self.word.val() == self.word_destination.val() {
            self.read_value.next = self.destination_reg.q.val() & self.destination_mask.val();
            if self.write.val() {
                self.destination_reg.d.next = self.data.val();
            }
        }
        self.destination.next = self.destination_reg.q.val();
        // `address - base` exists (address >= base) and is below size: base <= address < limit.
        self.hit_reg.d.next = self
            .destination_reg
            .q
            .val()
            .get_bit(self.valid_bit.val().index())
            && self.range.nonempty.val()
            && ((self.address_high.val() > self.range.base_high.val())
                || ((self.address_high.val() == self.range.base_high.val())
                    && (self.address_low.val() >= self.range.base_low.val())))
            && (self.range.limit_carry.val()
                || (self.address_high.val() < self.range.limit_high.val())
                || ((self.address_high.val() == self.range.limit_high.val())
                    && (self.address_low.val() < self.range.limit_low.val())));
        self.hit.next = self.hit_reg.q.val();
    }
}

/// The switch's address route table of `N` entries, programmed over the CSR bus.
///
/// Entry `e` is `weft_regs::csr::address_route` entry `e` (held in slot
/// `N - 1 - e`, see [`TableCsr`]).
#[derive(LogicBlock)]
pub struct AddressRouteTable<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Programming and read-back.
    pub csr: CsrTarget,
    /// The fabric address, bits 63:32.
    pub address_high: Signal<In, Bits<32>>,
    /// The fabric address, bits 31:0.
    pub address_low: Signal<In, Bits<32>>,
    /// No valid entry holds the address presented before the last clock edge: the TLP has no route.
    pub miss: Signal<Out, Bit>,
    /// The first matching entry sends the TLP to the management CPU.
    pub cpu: Signal<Out, Bit>,
    /// The first matching entry's egress port (meaningful unless `miss` or `cpu`).
    pub port: Signal<Out, Bits<PORT_BITS>>,
    front: TableCsr,
    entries: [RouteEntry; N],
    cpu_bit: Constant<Bits<8>>,
    port_lsb: Constant<Bits<8>>,
}

impl<const N: usize> AddressRouteTable<N> {
    /// The switch's address route table.
    ///
    /// # Panics
    ///
    /// If `N` is zero or more than the register map's entries.
    pub fn new() -> Self {
        AddressRouteTable {
            clock: Default::default(),
            csr: Default::default(),
            address_high: Default::default(),
            address_low: Default::default(),
            miss: Default::default(),
            cpu: Default::default(),
            port: Default::default(),
            front: TableCsr::new(&address_route::LAYOUT, 0, N),
            entries: std::array::from_fn(|_| RouteEntry::new()),
            cpu_bit: Constant::new(destination::CPU.lsb.to_bits()),
            port_lsb: Constant::new(destination::PORT.lsb.to_bits()),
        }
    }
}

impl<const N: usize> Default for AddressRouteTable<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Logic for AddressRouteTable<N> {
    #[hdl_gen]
    fn update(&mut self) {
        self.front.clock.next = self.clock.val();
        CsrTarget::link(&mut self.csr, &mut self.front.csr);
        self.front.read_value.next = bits::<32>(0);
        self.miss.next = true;
        self.cpu.next = false;
        self.port.next = bits::<PORT_BITS>(0);
        for i in 0..N {
            self.entries[i].clock.next = self.clock.val();
            self.entries[i].write.next =
                self.front.writing.val() && (self.front.slot.val().index() == i);
            self.entries[i].word.next = self.front.word.val();
            self.entries[i].data.next = self.front.data.val();
            if self.front.slot.val().index() == i {
                self.front.read_value.next = self.entries[i].read_value.val();
            }
            self.entries[i].address_high.next = self.address_high.val();
            self.entries[i].address_low.next = self.address_low.val();
            // The priority select over the registered compares.
            if self.entries[i].hit.val() {
                self.miss.next = false;
                self.cpu.next = self.entries[i]
                    .destination
                    .val()
                    .get_bit(self.cpu_bit.val().index());
                self.port.next = self.entries[i]
                    .destination
                    .val()
                    .get_bits::<PORT_BITS>(self.port_lsb.val().index());
            }
        }
    }
}
