//! The data plane's identity registers (`weft_regs::csr::global`): what the firmware checks before it writes a table.

use rust_hdl::prelude::*;
use weft_regs::capacity;
use weft_regs::csr::global;

use crate::csr::{CsrDecoder, CsrTarget, WORD_BITS};

/// The read-only registers of `weft_regs::csr::global` for a switch of `N`
/// ports with the reference table capacities (`weft_regs::capacity`).
/// Writes are ignored; reads answer one cycle later (`crate::csr`).
#[derive(LogicBlock)]
pub struct Identity<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Read-back.
    pub csr: CsrTarget,
    decoder: CsrDecoder,
    words: [Constant<Bits<WORD_BITS>>; 6],
    values: [Constant<Bits<32>>; 6],
    read_data: DFF<Bits<32>>,
    read_valid: DFF<Bit>,
}

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
        assert_eq!(registers.len(), global::BLOCK.registers.len());
        Identity {
            clock: Default::default(),
            csr: Default::default(),
            decoder: CsrDecoder::new(&global::LAYOUT, 0),
            words: registers.map(|(register, _)| Constant::new(register.word().to_bits())),
            values: registers.map(|(_, value)| Constant::new(value.to_bits())),
            read_data: Default::default(),
            read_valid: Default::default(),
        }
    }
}

impl<const N: usize> Logic for Identity<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, read_data, read_valid);
        self.decoder.address.next = self.csr.address.val();
        self.read_valid.d.next = false;
        self.read_data.d.next = bits::<32>(0);
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
