//! The window table: one port's address windows, looked up by request address.
//!
//! A window maps a host-domain range to a fabric range (weft-model's
//! `Window`). A request uses the first valid window it overlaps at all; it
//! passes only if it lies wholly inside that window and the window permits
//! it, and then its address becomes `fabric_base + (address - base)`
//! (weft-model's `translate_through_windows`). A window whose translation
//! could misalign an AtomicOp or carry a request across a 4 KiB boundary
//! matches nothing (weft-model's `Window::keeps_requests_well_formed`).
//! The table answers the overlap, the containment, the permissions and the
//! translated address; the ingress stage turns them into a drop reason. On
//! an endpoint port only the windows that serve the requester's owner host
//! take part (weft-model's `PortTables::windows_of`): those tagged with it,
//! and the untagged ones when it is the port's owner.
//!
//! The lookup takes one clock cycle: the request presented before a clock
//! edge is answered after it. Before the edge, each entry compares the
//! request with its range and registers the result; after it, a priority
//! select picks the first entry and one 64-bit adder translates, which
//! splits the logic depth about evenly. Each entry keeps `base + size`
//! (65 bits) and `fabric_base - base` in registers, recomputed every cycle
//! from the programmed values, so the compares need no adder per entry
//! (the request side computes `address + length` once). A CSR write
//! takes effect for lookups presented from the second cycle after it.

use rust_hdl::prelude::*;
use weft_regs::csr::window;

use crate::csr::{CsrTarget, ENTRY_BITS, WORD_BITS};
use crate::tables::front::TableCsr;
use crate::tables::range::{Range, RangeRegisters};

/// Bits of a host index in a window's owner tag.
pub const HOST_BITS: usize = weft_regs::csr::HOST_INDEX_BITS as usize;

/// Bits of a request's length in bytes: 4096, the largest payload
/// (PCIe Base 6.0 §2.2.2), and the largest read request, fit.
pub const LENGTH_BITS: usize = 13;

/// Bytes in a page: no memory request crosses a 4 KiB boundary (PCIe Base 6.0 §2.2.7.1).
const PAGE_BYTES: u32 = 4096;

/// The largest AtomicOp operand, a 128-bit CAS operand, to which its address is aligned (§2.2.7.1).
const LARGEST_ATOMIC_OPERAND_BYTES: u32 = 16;

/// One window: its range, its translation offset, its compares, and its registers' read-back.
#[derive(LogicBlock)]
struct WindowEntry {
    clock: Signal<In, Clock>,
    /// This entry is written at this clock edge.
    write: Signal<In, Bit>,
    /// The register written or read.
    word: Signal<In, Bits<WORD_BITS>>,
    /// The value written.
    data: Signal<In, Bits<32>>,
    /// The register at `word` (defined bits only).
    read_value: Signal<Out, Bits<32>>,
    /// The request's first byte.
    address_high: Signal<In, Bits<32>>,
    address_low: Signal<In, Bits<32>>,
    /// One past the request's last byte, 65 bits: `address + max(length, 1)`.
    end_high: Signal<In, Bits<32>>,
    end_low: Signal<In, Bits<32>>,
    end_carry: Signal<In, Bit>,
    /// Only windows serving `owner_host` take part (an endpoint port's lookup).
    owner_filter: Signal<In, Bit>,
    /// The requester's owner host.
    owner_host: Signal<In, Bits<HOST_BITS>>,
    /// The port has an owner: windows without an owner tag serve it.
    port_owned: Signal<In, Bit>,
    /// The port's owner host.
    port_owner_host: Signal<In, Bits<HOST_BITS>>,
    /// Some byte of the request is inside the window (weft-model's `Window::overlaps`), one cycle later.
    overlaps: Signal<Out, Bit>,
    /// Every byte of the request is inside the window (weft-model's `Window::translate` is `Some`), one cycle later.
    contained: Signal<Out, Bit>,
    /// The window lets reads through.
    permit_read: Signal<Out, Bit>,
    /// The window lets writes through.
    permit_write: Signal<Out, Bit>,
    /// `fabric_base - base`, modulo 2^64: added to an address, it translates.
    delta_high: Signal<Out, Bits<32>>,
    delta_low: Signal<Out, Bits<32>>,
    range: Range,
    fabric_low_reg: DFF<Bits<32>>,
    fabric_high_reg: DFF<Bits<32>>,
    control_reg: DFF<Bits<32>>,
    owner_reg: DFF<Bits<32>>,
    delta_low_reg: DFF<Bits<32>>,
    delta_high_reg: DFF<Bits<32>>,
    /// Valid, non-empty, not starting at the last address (which nothing
    /// can overlap), and translating without deforming requests.
    usable: DFF<Bit>,
    overlaps_reg: DFF<Bit>,
    contained_reg: DFF<Bit>,
    word_fabric_low: Constant<Bits<WORD_BITS>>,
    /// The bits of `FABRIC_BASE_LOW` the map defines (bits 1:0 are reserved).
    defined_fabric_low: Constant<Bits<32>>,
    word_fabric_high: Constant<Bits<WORD_BITS>>,
    word_control: Constant<Bits<WORD_BITS>>,
    control_mask: Constant<Bits<32>>,
    word_owner: Constant<Bits<WORD_BITS>>,
    owner_mask: Constant<Bits<32>>,
    valid_bit: Constant<Bits<8>>,
    read_bit: Constant<Bits<8>>,
    write_bit: Constant<Bits<8>>,
    tagged_bit: Constant<Bits<8>>,
    owner_lsb: Constant<Bits<8>>,
    /// Bytes in a page (§2.2.7.1's 4 KiB boundary).
    page_bytes: Constant<Bits<32>>,
    /// The address bits below a page.
    page_offset_mask: Constant<Bits<32>>,
    /// The address bits below the largest AtomicOp operand, 16 bytes.
    operand_offset_mask: Constant<Bits<32>>,
    /// Bits where `FABRIC_BASE` and `BASE` differ, bits 31:0.
    bases_differ: Signal<Local, Bits<32>>,
    /// The fabric range lies inside one page.
    fabric_in_one_page: Signal<Local, Bit>,
    /// weft-model's `Window::keeps_requests_well_formed`.
    keeps_requests_well_formed: Signal<Local, Bit>,
    serves_owner: Signal<Local, Bit>,
    address_is_last: Signal<Local, Bit>,
    address_below_limit: Signal<Local, Bit>,
    end_above_base: Signal<Local, Bit>,
    address_at_or_above_base: Signal<Local, Bit>,
    end_above_limit: Signal<Local, Bit>,
}

impl WindowEntry {
    fn new() -> Self {
        let word = |register: &weft_regs::Register| Constant::new(register.word().to_bits());
        let bit = |field: &weft_regs::Field| Constant::new(field.lsb.to_bits());
        WindowEntry {
            clock: Default::default(),
            write: Default::default(),
            word: Default::default(),
            data: Default::default(),
            read_value: Default::default(),
            address_high: Default::default(),
            address_low: Default::default(),
            end_high: Default::default(),
            end_low: Default::default(),
            end_carry: Default::default(),
            owner_filter: Default::default(),
            owner_host: Default::default(),
            port_owned: Default::default(),
            port_owner_host: Default::default(),
            overlaps: Default::default(),
            contained: Default::default(),
            permit_read: Default::default(),
            permit_write: Default::default(),
            delta_high: Default::default(),
            delta_low: Default::default(),
            range: Range::new(&RangeRegisters {
                base_low: window::BASE_LOW,
                base_high: window::BASE_HIGH,
                size_low: window::SIZE_LOW,
                size_high: window::SIZE_HIGH,
            }),
            fabric_low_reg: Default::default(),
            fabric_high_reg: Default::default(),
            control_reg: Default::default(),
            owner_reg: Default::default(),
            delta_low_reg: Default::default(),
            delta_high_reg: Default::default(),
            usable: Default::default(),
            overlaps_reg: Default::default(),
            contained_reg: Default::default(),
            word_fabric_low: word(&window::FABRIC_BASE_LOW),
            defined_fabric_low: Constant::new(window::FABRIC_BASE_LOW.mask().to_bits()),
            word_fabric_high: word(&window::FABRIC_BASE_HIGH),
            word_control: word(&window::CONTROL),
            control_mask: Constant::new(window::CONTROL.mask().to_bits()),
            word_owner: word(&window::OWNER),
            owner_mask: Constant::new(window::OWNER.mask().to_bits()),
            valid_bit: bit(&window::VALID),
            read_bit: bit(&window::READ),
            write_bit: bit(&window::WRITE),
            tagged_bit: bit(&window::OWNER_TAGGED),
            owner_lsb: bit(&window::OWNER_HOST_INDEX),
            page_bytes: Constant::new(PAGE_BYTES.to_bits()),
            page_offset_mask: Constant::new((PAGE_BYTES - 1).to_bits()),
            operand_offset_mask: Constant::new((LARGEST_ATOMIC_OPERAND_BYTES - 1).to_bits()),
            bases_differ: Default::default(),
            fabric_in_one_page: Default::default(),
            keeps_requests_well_formed: Default::default(),
            serves_owner: Default::default(),
            address_is_last: Default::default(),
            address_below_limit: Default::default(),
            end_above_base: Default::default(),
            address_at_or_above_base: Default::default(),
            end_above_limit: Default::default(),
        }
    }
}

impl Logic for WindowEntry {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            fabric_low_reg,
            fabric_high_reg,
            control_reg,
            owner_reg,
            delta_low_reg,
            delta_high_reg,
            usable,
            overlaps_reg,
            contained_reg
        );
        self.range.clock.next = self.clock.val();
        self.range.write.next = self.write.val();
        self.range.word.next = self.word.val();
        self.range.data.next = self.data.val();
        self.read_value.next = self.range.read_value.val();
        if self.word.val() == self.word_fabric_low.val() {
            self.read_value.next = self.fabric_low_reg.q.val();
            if self.write.val() {
                self.fabric_low_reg.d.next = self.data.val() & self.defined_fabric_low.val();
            }
        }
        if self.word.val() == self.word_fabric_high.val() {
            self.read_value.next = self.fabric_high_reg.q.val();
            if self.write.val() {
                self.fabric_high_reg.d.next = self.data.val();
            }
        }
        if self.word.val() == self.word_control.val() {
            self.read_value.next = self.control_reg.q.val() & self.control_mask.val();
            if self.write.val() {
                self.control_reg.d.next = self.data.val();
            }
        }
        if self.word.val() == self.word_owner.val() {
            self.read_value.next = self.owner_reg.q.val() & self.owner_mask.val();
            if self.write.val() {
                self.owner_reg.d.next = self.data.val();
            }
        }
        self.permit_read.next = self
            .control_reg
            .q
            .val()
            .get_bit(self.read_bit.val().index());
        self.permit_write.next = self
            .control_reg
            .q
            .val()
            .get_bit(self.write_bit.val().index());

        // delta = fabric_base - base, modulo 2^64, precomputed from the programmed values.
        self.delta_low_reg.d.next = self.fabric_low_reg.q.val() - self.range.base_low.val();
        self.delta_high_reg.d.next = self.fabric_high_reg.q.val() - self.range.base_high.val();
        if self.fabric_low_reg.q.val() < self.range.base_low.val() {
            self.delta_high_reg.d.next =
                self.fabric_high_reg.q.val() - self.range.base_high.val() - 1;
        }
        // Translation keeps AtomicOps aligned and requests inside a page
        // (§2.2.7.1): the bases agree modulo 16, and modulo 4 KiB unless
        // the fabric range lies in one page (weft-model's `Window::keeps_requests_well_formed`).
        self.bases_differ.next = self.fabric_low_reg.q.val() ^ self.range.base_low.val();
        self.fabric_in_one_page.next = !self.range.size_high.val().any()
            && (self.range.size_low.val()
                <= self.page_bytes.val()
                    - (self.fabric_low_reg.q.val() & self.page_offset_mask.val()));
        self.keeps_requests_well_formed.next =
            !(self.bases_differ.val() & self.operand_offset_mask.val()).any()
                && (!(self.bases_differ.val() & self.page_offset_mask.val()).any()
                    || self.fabric_in_one_page.val());
        self.usable.d.next = self
            .control_reg
            .q
            .val()
            .get_bit(self.valid_bit.val().index())
            && self.range.nonempty.val()
            && !(self.range.base_low.val().all() && self.range.base_high.val().all())
            && self.keeps_requests_well_formed.val();
        self.delta_low.next = self.delta_low_reg.q.val();
        self.delta_high.next = self.delta_high_reg.q.val();

        // The lookup. weft-model's `overlaps` saturates both ends at the last
        // address: `address < min(limit, MAX)` and `min(end, MAX) > base`.
        // Exactly: address < limit and address != MAX; end > base and
        // base != MAX (the last is in `usable`).
        self.address_is_last.next = self.address_low.val().all() && self.address_high.val().all();
        self.address_below_limit.next = self.range.limit_carry.val()
            || (self.address_high.val() < self.range.limit_high.val())
            || ((self.address_high.val() == self.range.limit_high.val())
                && (self.address_low.val() < self.range.limit_low.val()));
        self.end_above_base.next = self.end_carry.val()
            || (self.end_high.val() > self.range.base_high.val())
            || ((self.end_high.val() == self.range.base_high.val())
                && (self.end_low.val() > self.range.base_low.val()));
        // weft-model's `PortTables::windows_of`: the window's tag, else the port's owner.
        self.serves_owner.next =
            self.port_owned.val() && (self.port_owner_host.val() == self.owner_host.val());
        if self
            .owner_reg
            .q
            .val()
            .get_bit(self.tagged_bit.val().index())
        {
            self.serves_owner.next = self
                .owner_reg
                .q
                .val()
                .get_bits::<HOST_BITS>(self.owner_lsb.val().index())
                == self.owner_host.val();
        }
        self.overlaps_reg.d.next = self.usable.q.val()
            && (self.serves_owner.val() || !self.owner_filter.val())
            && self.address_below_limit.val()
            && !self.address_is_last.val()
            && self.end_above_base.val();
        self.overlaps.next = self.overlaps_reg.q.val();
        // `translate`: base <= address and end <= limit, both 65-bit exact.
        self.address_at_or_above_base.next = (self.address_high.val() > self.range.base_high.val())
            || ((self.address_high.val() == self.range.base_high.val())
                && (self.address_low.val() >= self.range.base_low.val()));
        self.end_above_limit.next = (self.end_carry.val() && !self.range.limit_carry.val())
            || ((self.end_carry.val() == self.range.limit_carry.val())
                && ((self.end_high.val() > self.range.limit_high.val())
                    || ((self.end_high.val() == self.range.limit_high.val())
                        && (self.end_low.val() > self.range.limit_low.val()))));
        self.contained_reg.d.next =
            self.address_at_or_above_base.val() && !self.end_above_limit.val();
        self.contained.next = self.contained_reg.q.val();
    }
}

/// One port's window table of `N` entries, programmed over the CSR bus.
///
/// Entry `e` is `weft_regs::csr::window` entry `e` of the port given to
/// [`WindowTable::new`] (held in slot `N - 1 - e`, see [`TableCsr`]).
#[derive(LogicBlock)]
pub struct WindowTable<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Programming and read-back.
    pub csr: CsrTarget,
    /// The request's address, bits 63:32.
    pub address_high: Signal<In, Bits<32>>,
    /// The request's address, bits 31:0.
    pub address_low: Signal<In, Bits<32>>,
    /// The request's length in bytes; 0 counts as 1, as in the model.
    pub length: Signal<In, Bits<LENGTH_BITS>>,
    /// Only the windows serving `owner_host` take part (an endpoint port's
    /// lookup, weft-model's `PortTables::windows_of`); clear, every window does.
    pub owner_filter: Signal<In, Bit>,
    /// The requester's owner host.
    pub owner_host: Signal<In, Bits<HOST_BITS>>,
    /// The port has an owner, which windows without an owner tag serve.
    pub port_owned: Signal<In, Bit>,
    /// The port's owner host.
    pub port_owner_host: Signal<In, Bits<HOST_BITS>>,
    /// The request presented before the last clock edge overlaps a valid window.
    pub hit: Signal<Out, Bit>,
    /// The request lies wholly inside the first window it overlaps (meaningful with `hit`).
    pub contained: Signal<Out, Bit>,
    /// That window lets reads through.
    pub permit_read: Signal<Out, Bit>,
    /// That window lets writes through.
    pub permit_write: Signal<Out, Bit>,
    /// The translated fabric address, bits 63:32 (meaningful with `hit` and `contained`).
    pub fabric_high: Signal<Out, Bits<32>>,
    /// The translated fabric address, bits 31:0.
    pub fabric_low: Signal<Out, Bits<32>>,
    /// The entry index of that window.
    pub index: Signal<Out, Bits<ENTRY_BITS>>,
    front: TableCsr,
    entries: [WindowEntry; N],
    looked_up_high: DFF<Bits<32>>,
    looked_up_low: DFF<Bits<32>>,
    last: Constant<Bits<ENTRY_BITS>>,
    length_bytes: Signal<Local, Bits<32>>,
    end_low: Signal<Local, Bits<32>>,
    end_high: Signal<Local, Bits<32>>,
    end_carry_low: Signal<Local, Bit>,
    end_carry: Signal<Local, Bit>,
    delta_low: Signal<Local, Bits<32>>,
    delta_high: Signal<Local, Bits<32>>,
    translated_low: Signal<Local, Bits<32>>,
}

impl<const N: usize> WindowTable<N> {
    /// The window table of port `port`, answering that port's window registers.
    ///
    /// # Panics
    ///
    /// If `N` is zero or more than the register map's entries per port, or the port does not exist.
    pub fn new(port: u32) -> Self {
        WindowTable {
            clock: Default::default(),
            csr: Default::default(),
            address_high: Default::default(),
            address_low: Default::default(),
            length: Default::default(),
            owner_filter: Default::default(),
            owner_host: Default::default(),
            port_owned: Default::default(),
            port_owner_host: Default::default(),
            hit: Default::default(),
            contained: Default::default(),
            permit_read: Default::default(),
            permit_write: Default::default(),
            fabric_high: Default::default(),
            fabric_low: Default::default(),
            index: Default::default(),
            front: TableCsr::new(&window::LAYOUT, port, N),
            entries: std::array::from_fn(|_| WindowEntry::new()),
            looked_up_high: Default::default(),
            looked_up_low: Default::default(),
            last: Constant::new((N - 1).to_bits()),
            length_bytes: Default::default(),
            end_low: Default::default(),
            end_high: Default::default(),
            end_carry_low: Default::default(),
            end_carry: Default::default(),
            delta_low: Default::default(),
            delta_high: Default::default(),
            translated_low: Default::default(),
        }
    }
}

impl<const N: usize> Logic for WindowTable<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, looked_up_high, looked_up_low);
        self.front.clock.next = self.clock.val();
        CsrTarget::link(&mut self.csr, &mut self.front.csr);
        self.looked_up_high.d.next = self.address_high.val();
        self.looked_up_low.d.next = self.address_low.val();

        // Cycle 1: one past the request's last byte, 65 bits.
        self.length_bytes.next = bit_cast::<32, LENGTH_BITS>(self.length.val());
        if !self.length.val().any() {
            self.length_bytes.next = bits::<32>(1);
        }
        self.end_low.next = self.address_low.val() + self.length_bytes.val();
        self.end_carry_low.next = self.end_low.val() < self.address_low.val();
        self.end_high.next = self.address_high.val() + self.end_carry_low.val();
        self.end_carry.next = self.end_carry_low.val() && self.address_high.val().all();

        self.front.read_value.next = bits::<32>(0);
        self.hit.next = false;
        self.contained.next = false;
        self.permit_read.next = false;
        self.permit_write.next = false;
        self.index.next = bits::<ENTRY_BITS>(0);
        self.delta_low.next = bits::<32>(0);
        self.delta_high.next = bits::<32>(0);
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
            self.entries[i].end_high.next = self.end_high.val();
            self.entries[i].end_low.next = self.end_low.val();
            self.entries[i].end_carry.next = self.end_carry.val();
            self.entries[i].owner_filter.next = self.owner_filter.val();
            self.entries[i].owner_host.next = self.owner_host.val();
            self.entries[i].port_owned.next = self.port_owned.val();
            self.entries[i].port_owner_host.next = self.port_owner_host.val();
            // Cycle 2: the priority select over the registered compares.
            if self.entries[i].overlaps.val() {
                self.hit.next = true;
                self.contained.next = self.entries[i].contained.val();
                self.permit_read.next = self.entries[i].permit_read.val();
                self.permit_write.next = self.entries[i].permit_write.val();
                self.delta_low.next = self.entries[i].delta_low.val();
                self.delta_high.next = self.entries[i].delta_high.val();
                self.index.next = self.last.val() - i.to_bits::<ENTRY_BITS>();
            }
        }
        // Cycle 2: the translation, address + (fabric_base - base) of the winning window.
        self.translated_low.next = self.looked_up_low.q.val() + self.delta_low.val();
        self.fabric_low.next = self.translated_low.val();
        self.fabric_high.next = self.looked_up_high.q.val()
            + self.delta_high.val()
            + (self.translated_low.val() < self.looked_up_low.q.val());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csr;
    use crate::driver::CycleDriver;

    type Table = WindowTable<4>;

    fn target(table: &mut Table) -> &mut CsrTarget {
        &mut table.csr
    }

    /// Programs entry 0 of `port` as a valid read-write window of 4 KiB at 0x9000_0000.
    fn program(driver: &mut CycleDriver<Table>, port: u32) {
        let control = window::VALID.encode(1) | window::READ.encode(1) | window::WRITE.encode(1);
        for (register, value) in [
            (window::BASE_LOW, 0x9000_0000),
            (window::SIZE_LOW, 0x1000),
            (window::FABRIC_BASE_HIGH, 0x40),
            (window::CONTROL, control),
        ] {
            csr::write(driver, target, register.address(port, 0), value).expect("settles");
        }
    }

    fn look_up(driver: &mut CycleDriver<Table>, address: u32) -> Option<u64> {
        let table = driver.block();
        table.address_low.next = address.to_bits();
        table.length.next = 4usize.to_bits();
        driver.tick().expect("settles");
        let table = driver.block();
        (table.hit.val() && table.contained.val())
            .then(|| table.fabric_high.val().to_u64() << 32 | table.fabric_low.val().to_u64())
    }

    #[test]
    fn answers_its_own_port_only_and_from_the_second_cycle_after_a_write() {
        let mut driver = CycleDriver::new(Table::new(1), |b| &mut b.clock).expect("well formed");
        program(&mut driver, 0);
        program(&mut driver, 2);
        driver.run(2).expect("settles");
        assert_eq!(
            look_up(&mut driver, 0x9000_0010),
            None,
            "other ports' windows"
        );
        assert_eq!(
            csr::read(&mut driver, target, window::CONTROL.address(0, 0)).expect("settles"),
            None,
            "another port's register is not answered"
        );
        program(&mut driver, 1);
        // The lookup presented in the cycle right after the last write still
        // sees the old end of the range; the next one sees the window.
        assert_eq!(look_up(&mut driver, 0x9000_0010), None);
        assert_eq!(look_up(&mut driver, 0x9000_0010), Some(0x40_0000_0010));
    }
}
