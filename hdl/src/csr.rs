//! The CSR bus: how the soft core reads and writes the data plane's registers.
//!
//! One master (the soft core's bridge) drives [`CsrBus`]; every block with
//! registers takes a [`CsrTarget`] and answers the addresses of its own
//! range, which it decodes from `weft_regs::csr` with a [`CsrDecoder`].
//!
//! - `address` is a byte address in the soft core's address space
//!   (`weft_regs::csr::CSR_BASE` and up); bits 1:0 are ignored, every
//!   access is a whole 32-bit word.
//! - A write takes one cycle: with `write` high at a rising clock edge, the
//!   register at `address` takes `write_data`.
//! - A read takes two: with `read` high at a rising edge, the target at
//!   `address` drives `read_data` with `read_valid` high for the following
//!   cycle. A target drives both low unless it is answering, so the
//!   responses of several targets on one bus combine by OR; an address no
//!   target decodes gets no `read_valid`, and the bridge reports the error.

use rust_hdl::prelude::*;
use weft_regs::Layout;

use crate::driver::{CycleDriver, DriveError};

pub use interface::{CsrBus, CsrTarget};

/// Bits of an entry index out of a [`CsrDecoder`]: tables of up to 256 entries.
pub const ENTRY_BITS: usize = 8;

/// Bits of a word index within an entry out of a [`CsrDecoder`]: entries of up to 1 KiB.
pub const WORD_BITS: usize = 8;

/// Bytes of one register: the bus moves whole 32-bit words.
pub const WORD_BYTES: u32 = 4;

/// The bus's two sides. rust-hdl's `LogicInterface` derive adds `join`
/// and `link` methods without doc comments, hence the allowance here.
#[allow(missing_docs)]
mod interface {
    use rust_hdl::prelude::*;

    /// The master side: the soft core's bridge.
    #[derive(Clone, Debug, Default, LogicInterface)]
    #[join = "CsrTarget"]
    pub struct CsrBus {
        /// Byte address of the register; bits 1:0 are ignored.
        pub address: Signal<Out, Bits<32>>,
        /// Write `write_data` to the register at `address` at this clock edge.
        pub write: Signal<Out, Bit>,
        /// The value to write.
        pub write_data: Signal<Out, Bits<32>>,
        /// Read the register at `address`; its value follows one cycle later.
        pub read: Signal<Out, Bit>,
        /// The value read, in the cycle after `read`, while `read_valid` is high.
        pub read_data: Signal<In, Bits<32>>,
        /// A target answers the read of the previous cycle.
        pub read_valid: Signal<In, Bit>,
    }

    /// The target side: a block with registers.
    #[derive(Clone, Debug, Default, LogicInterface)]
    #[join = "CsrBus"]
    pub struct CsrTarget {
        /// Byte address of the register; bits 1:0 are ignored.
        pub address: Signal<In, Bits<32>>,
        /// Write `write_data` to the register at `address` at this clock edge.
        pub write: Signal<In, Bit>,
        /// The value to write.
        pub write_data: Signal<In, Bits<32>>,
        /// Read the register at `address`; answer in the next cycle.
        pub read: Signal<In, Bit>,
        /// The value read; zero unless answering.
        pub read_data: Signal<Out, Bits<32>>,
        /// This target answers the read of the previous cycle.
        pub read_valid: Signal<Out, Bit>,
    }
}

/// Splits a CSR address into an entry index and a word within the entry,
/// for one instance of a `weft_regs` block (one port's window table, say).
///
/// The ranges come from the block's [`Layout`] as constants, so the RTL
/// decodes exactly the addresses the firmware and the docs use.
#[derive(LogicBlock)]
pub struct CsrDecoder {
    /// The bus address.
    pub address: Signal<In, Bits<32>>,
    /// The address lies in this instance's entries.
    pub selected: Signal<Out, Bit>,
    /// Which entry (meaningful while `selected`).
    pub entry: Signal<Out, Bits<ENTRY_BITS>>,
    /// Which 32-bit word of the entry: a register's `offset / 4` (meaningful while `selected`).
    pub word: Signal<Out, Bits<WORD_BITS>>,
    base: Constant<Bits<32>>,
    span: Constant<Bits<32>>,
    entry_shift: Constant<Bits<32>>,
    word_mask: Constant<Bits<32>>,
    word_shift: Constant<Bits<32>>,
    offset: Signal<Local, Bits<32>>,
}

impl CsrDecoder {
    /// Decodes instance `instance` of the block laid out as `layout`.
    ///
    /// # Panics
    ///
    /// If the instance does not exist, or the entries or their words do not
    /// fit [`ENTRY_BITS`] and [`WORD_BITS`] (a bug in the register map).
    pub fn new(layout: &Layout, instance: u32) -> Self {
        assert!(layout.entries <= 1 << ENTRY_BITS, "entry index too wide");
        assert!(
            layout.entry_stride / WORD_BYTES <= 1 << WORD_BITS,
            "word index too wide"
        );
        CsrDecoder {
            address: Default::default(),
            selected: Default::default(),
            entry: Default::default(),
            word: Default::default(),
            base: Constant::new(layout.instance_base(instance).to_bits()),
            span: Constant::new(layout.instance_span().to_bits()),
            entry_shift: Constant::new(layout.entry_stride.trailing_zeros().to_bits()),
            word_mask: Constant::new((layout.entry_stride - 1).to_bits()),
            word_shift: Constant::new(WORD_BYTES.trailing_zeros().to_bits()),
            offset: Default::default(),
        }
    }
}

impl Logic for CsrDecoder {
    #[hdl_gen]
    fn update(&mut self) {
        // An address below the base wraps to an offset above 2^32 - base,
        // beyond any span that fits the address space, so one compare suffices.
        self.offset.next = self.address.val() - self.base.val();
        self.selected.next = self.offset.val() < self.span.val();
        self.entry.next = bit_cast::<ENTRY_BITS, 32>(self.offset.val() >> self.entry_shift.val());
        self.word.next = bit_cast::<WORD_BITS, 32>(
            (self.offset.val() & self.word_mask.val()) >> self.word_shift.val(),
        );
    }
}

/// Writes `value` to the register at `address` through a block's CSR
/// target, as the soft core's bridge does: one clock cycle.
pub fn write<B: Block>(
    driver: &mut CycleDriver<B>,
    target: fn(&mut B) -> &mut CsrTarget,
    address: u32,
    value: u32,
) -> Result<(), DriveError> {
    let csr = target(driver.block());
    csr.address.next = address.to_bits();
    csr.write_data.next = value.to_bits();
    csr.write.next = true;
    csr.read.next = false;
    driver.tick()?;
    target(driver.block()).write.next = false;
    Ok(())
}

/// Reads the register at `address` through a block's CSR target: one
/// clock cycle with `read` high, then the answer is sampled. `None` when
/// the block does not answer the address.
pub fn read<B: Block>(
    driver: &mut CycleDriver<B>,
    target: fn(&mut B) -> &mut CsrTarget,
    address: u32,
) -> Result<Option<u32>, DriveError> {
    let csr = target(driver.block());
    csr.address.next = address.to_bits();
    csr.write.next = false;
    csr.read.next = true;
    driver.tick()?;
    target(driver.block()).read.next = false;
    driver.settle()?;
    let csr = target(driver.block());
    Ok(csr.read_valid.val().then(|| csr.read_data.val().to_u32()))
}

#[cfg(test)]
mod tests {
    use weft_regs::csr::{bus_route, window};

    use super::*;
    use crate::driver::settle;

    fn decode(decoder: &mut CsrDecoder, address: u32) -> Option<(u32, u32)> {
        decoder.address.next = address.to_bits();
        settle(decoder).expect("combinational");
        decoder
            .selected
            .val()
            .then(|| (decoder.entry.val().to_u32(), decoder.word.val().to_u32()))
    }

    #[test]
    fn decodes_the_registers_of_one_instance_only() {
        let mut decoder = CsrDecoder::new(&window::LAYOUT, 3);
        decoder.connect_all();
        for entry in [0, 7, 15] {
            for register in window::BLOCK.registers {
                assert_eq!(
                    decode(&mut decoder, register.address(3, entry)),
                    Some((entry, register.offset / 4)),
                    "{} of entry {entry}",
                    register.name
                );
            }
        }
        // Bits 1:0 are ignored.
        assert_eq!(
            decode(&mut decoder, window::CONTROL.address(3, 2) + 3),
            Some((2, window::CONTROL.offset / 4))
        );
        for other in [2, 4] {
            assert_eq!(
                decode(&mut decoder, window::BASE_LOW.address(other, 0)),
                None
            );
        }
        assert_eq!(decode(&mut decoder, window::CONTROL.address(2, 15)), None);
        assert_eq!(decode(&mut decoder, 0), None);
        assert_eq!(decode(&mut decoder, u32::MAX), None);
    }

    #[test]
    fn decodes_every_entry_of_a_word_per_entry_table() {
        let mut decoder = CsrDecoder::new(&bus_route::LAYOUT, 0);
        decoder.connect_all();
        for bus in 0..256 {
            assert_eq!(
                decode(&mut decoder, bus_route::DESTINATION.address(0, bus)),
                Some((bus, 0))
            );
        }
        assert_eq!(decode(&mut decoder, bus_route::LAYOUT.base + 0x400), None);
        assert_eq!(decode(&mut decoder, bus_route::LAYOUT.base - 4), None);
    }
}
