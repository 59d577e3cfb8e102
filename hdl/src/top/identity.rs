//! The data plane's `weft_regs::csr::global` registers: the identity the
//! firmware checks before it writes a table, where the switch's
//! management BAR sits, and the completion timeout.

use rust_hdl::prelude::*;
use weft_regs::capacity;
use weft_regs::csr::global;

use crate::csr::{CsrDecoder, CsrTarget, WORD_BITS};

/// The registers of `weft_regs::csr::global` for a switch of `N` ports
/// with the reference table capacities (`weft_regs::capacity`): the
/// read-only identity, whose writes are ignored, and MANAGEMENT_BAR_LOW
/// and HIGH and COMPLETION_TIMEOUT, which hold what is written within
/// their fields (as weft-model's `CsrWindow` does). The management BAR
/// leaves as its fields, for the ingresses that execute memory requests
/// hitting it against this window ([`crate::top::ManagementBar`]); the
/// completion timeout leaves on `completion_timeout_us`. Reads answer one
/// cycle later (`crate::csr`).
#[derive(LogicBlock)]
pub struct Identity<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Read-back.
    pub csr: CsrTarget,
    /// COMPLETION_TIMEOUT in microseconds, its 0 read as
    /// `global::DEFAULT_COMPLETION_TIMEOUT_US`: never 0, below 2^31.
    pub completion_timeout_us: Signal<Out, Bits<32>>,
    /// MANAGEMENT_BAR_LOW.ENABLE: bit n, port n's management function
    /// decodes the BAR (its Memory Space Enable, PCIe Base 6.0 §7.5.1.1.3).
    pub management_enable: Signal<Out, Bits<8>>,
    /// MANAGEMENT_BAR_LOW.BASE: the BAR's address bits 31:20.
    pub management_base: Signal<Out, Bits<12>>,
    /// MANAGEMENT_BAR_HIGH: the BAR's address bits 63:32.
    pub management_high: Signal<Out, Bits<32>>,
    decoder: CsrDecoder,
    words: [Constant<Bits<WORD_BITS>>; IDENTITY_REGISTERS],
    values: [Constant<Bits<32>>; IDENTITY_REGISTERS],
    bar_low_word: Constant<Bits<WORD_BITS>>,
    bar_high_word: Constant<Bits<WORD_BITS>>,
    bar_low_mask: Constant<Bits<32>>,
    timeout_word: Constant<Bits<WORD_BITS>>,
    timeout_mask: Constant<Bits<32>>,
    default_timeout: Constant<Bits<32>>,
    timeout: DFF<Bits<32>>,
    bar_low: DFF<Bits<32>>,
    bar_high: DFF<Bits<32>>,
    read_data: DFF<Bits<32>>,
    read_valid: DFF<Bit>,
}

// The management BAR's fields as `Identity` slices them.
const _: () = assert!(
    global::MANAGEMENT_ENABLE.mask() == 0xff && global::MANAGEMENT_BASE.mask() == 0xfff0_0000
);

/// The read-only registers of `global`: all but the management BAR's two.
const IDENTITY_REGISTERS: usize = 6;

impl<const N: usize> Default for Identity<N> {
    fn default() -> Self {
        let cap = |n: usize| n as u32;
        let registers = [
            (global::ID, global::MAGIC.encode(global::ID_VALUE)),
            (
                global::VERSION,
                global::MAJOR.encode(global::VERSION_MAJOR)
                    | global::MINOR.encode(global::VERSION_MINOR),
            ),
            (global::PORTS, global::PORT_COUNT.encode(cap(N))),
            (
                global::PORT_TABLES,
                global::WINDOWS.encode(cap(capacity::WINDOWS_PER_PORT))
                    | global::ID_MAP_ENTRIES.encode(cap(capacity::BOUND_FUNCTIONS_PER_HOST)),
            ),
            (
                global::ROUTE_TABLES,
                global::ADDRESS_ROUTES.encode(cap(capacity::ADDRESS_ROUTES))
                    | global::BUS_ROUTES.encode(cap(capacity::BUS_ROUTES)),
            ),
            (
                global::OWNER_TABLES,
                global::FUNCTION_OWNERS.encode(cap(capacity::FUNCTION_OWNERS_PER_PORT)),
            ),
        ];
        assert_eq!(registers.len() + 3, global::BLOCK.registers.len());
        Identity {
            clock: Default::default(),
            csr: Default::default(),
            completion_timeout_us: Default::default(),
            management_enable: Default::default(),
            management_base: Default::default(),
            management_high: Default::default(),
            decoder: CsrDecoder::new(&global::LAYOUT, 0),
            words: registers.map(|(register, _)| Constant::new(register.word().to_bits())),
            values: registers.map(|(_, value)| Constant::new(value.to_bits())),
            bar_low_word: Constant::new(global::MANAGEMENT_BAR_LOW.word().to_bits()),
            bar_high_word: Constant::new(global::MANAGEMENT_BAR_HIGH.word().to_bits()),
            bar_low_mask: Constant::new(global::MANAGEMENT_BAR_LOW.mask().to_bits()),
            timeout_word: Constant::new(global::COMPLETION_TIMEOUT.word().to_bits()),
            timeout_mask: Constant::new(global::COMPLETION_TIMEOUT.mask().to_bits()),
            default_timeout: Constant::new(global::DEFAULT_COMPLETION_TIMEOUT_US.to_bits()),
            timeout: Default::default(),
            bar_low: Default::default(),
            bar_high: Default::default(),
            read_data: Default::default(),
            read_valid: Default::default(),
        }
    }
}

impl<const N: usize> Logic for Identity<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, timeout, bar_low, bar_high, read_data, read_valid);
        self.decoder.address.next = self.csr.address.val();
        if self.csr.write.val() & self.decoder.selected.val() {
            if self.decoder.word.val() == self.bar_low_word.val() {
                self.bar_low.d.next = self.csr.write_data.val() & self.bar_low_mask.val();
            }
            if self.decoder.word.val() == self.bar_high_word.val() {
                self.bar_high.d.next = self.csr.write_data.val();
            }
            if self.decoder.word.val() == self.timeout_word.val() {
                self.timeout.d.next = self.csr.write_data.val() & self.timeout_mask.val();
            }
        }
        self.completion_timeout_us.next = self.timeout.q.val();
        self.management_enable.next = self.bar_low.q.val().get_bits::<8>(0);
        self.management_base.next = self.bar_low.q.val().get_bits::<12>(20);
        self.management_high.next = self.bar_high.q.val();
        if !self.timeout.q.val().any() {
            self.completion_timeout_us.next = self.default_timeout.val();
        }
        self.read_valid.d.next = false;
        self.read_data.d.next = bits::<32>(0);
        if self.csr.read.val() & self.decoder.selected.val() {
            if self.decoder.word.val() == self.bar_low_word.val() {
                self.read_valid.d.next = true;
                self.read_data.d.next = self.bar_low.q.val();
            }
            if self.decoder.word.val() == self.bar_high_word.val() {
                self.read_valid.d.next = true;
                self.read_data.d.next = self.bar_high.q.val();
            }
            if self.decoder.word.val() == self.timeout_word.val() {
                self.read_valid.d.next = true;
                self.read_data.d.next = self.timeout.q.val();
            }
        }
        // IDENTITY_REGISTERS: a literal, as the bound becomes Verilog.
        for k in 0..6 {
            if self.csr.read.val()
                & self.decoder.selected.val()
                & (self.decoder.word.val() == self.words[k].val())
            {
                self.read_valid.d.next = true;
                self.read_data.d.next = self.values[k].val();
            }
        }
        self.csr.read_valid.next = self.read_valid.q.val();
        self.csr.read_data.next = self.read_data.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csr::{read, write};
    use crate::driver::CycleDriver;
    use weft_model::csr_window::CsrWindow;
    use weft_model::Switch;
    use weft_regs::driver::CsrBus;

    #[test]
    fn writable_registers_read_back_as_the_model_and_the_timeout_leaves_with_its_default() {
        let mut rtl =
            CycleDriver::new(Identity::<4>::default(), |b| &mut b.clock).expect("well formed");
        let mut model = CsrWindow::new(Switch::new(4));
        let registers = [
            global::COMPLETION_TIMEOUT,
            global::MANAGEMENT_BAR_LOW,
            global::MANAGEMENT_BAR_HIGH,
        ];
        for value in [200, 0, 0xffff_ffff, 0x8000_0000, 0x7fff_ffff, 0x0123_4567] {
            for register in registers {
                let address = register.address(0, 0);
                write(&mut rtl, |b| &mut b.csr, address, value).expect("settles");
                model.write32(address, value);
                let got = read(&mut rtl, |b| &mut b.csr, address).expect("settles");
                assert_eq!(
                    got,
                    Some(model.read32(address)),
                    "{} after {value:#x}",
                    register.name
                );
            }
            // Only the field's 31 bits are kept, and 0 is the default (50 ms).
            let expected = match value & 0x7fff_ffff {
                0 => 50_000,
                us => us,
            };
            assert_eq!(rtl.block().completion_timeout_us.val().to_u32(), expected);
        }
    }
}
