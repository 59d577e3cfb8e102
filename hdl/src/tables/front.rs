//! The CSR side of a table: which entry and register a bus access is for,
//! and the read answer one cycle later.
//!
//! First-match tables keep entry `e` of the register map in slot
//! `N - 1 - e`: rust-hdl's priority select is a loop in which the last
//! assignment wins, so the highest slot that matches, the lowest entry
//! index, wins, as the model's first-match search.

use rust_hdl::prelude::*;
use weft_regs::Layout;

use crate::csr::{CsrDecoder, CsrTarget, ENTRY_BITS, WORD_BITS};

/// Decodes one table instance's CSR accesses into slot, word and write strobe.
#[derive(LogicBlock)]
pub struct TableCsr {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The bus.
    pub csr: CsrTarget,
    /// The slot accessed, `N - 1 - entry` (meaningful with `writing`, and for `read_value`).
    pub slot: Signal<Out, Bits<ENTRY_BITS>>,
    /// The register accessed: its word index within the entry.
    pub word: Signal<Out, Bits<WORD_BITS>>,
    /// The value written.
    pub data: Signal<Out, Bits<32>>,
    /// A write to this table at this clock edge.
    pub writing: Signal<Out, Bit>,
    /// The table's value of the register at `slot` and `word` (defined bits only), answered to reads.
    pub read_value: Signal<In, Bits<32>>,
    decoder: CsrDecoder,
    read_data: DFF<Bits<32>>,
    read_valid: DFF<Bit>,
    last: Constant<Bits<ENTRY_BITS>>,
    reading: Signal<Local, Bit>,
}

impl TableCsr {
    /// The CSR side of instance `instance` of a table laid out as `layout`, holding `entries` entries.
    ///
    /// # Panics
    ///
    /// If `entries` is zero or more than the layout holds.
    pub fn new(layout: &Layout, instance: u32, entries: usize) -> Self {
        assert!(entries >= 1 && entries <= layout.entries as usize);
        TableCsr {
            clock: Default::default(),
            csr: Default::default(),
            slot: Default::default(),
            word: Default::default(),
            data: Default::default(),
            writing: Default::default(),
            read_value: Default::default(),
            decoder: CsrDecoder::new(layout, instance),
            read_data: Default::default(),
            read_valid: Default::default(),
            last: Constant::new((entries - 1).to_bits()),
            reading: Default::default(),
        }
    }
}

impl Logic for TableCsr {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, read_data, read_valid);
        self.decoder.address.next = self.csr.address.val();
        // Entries past the table's size wrap to slots above `last`, which no entry answers.
        self.slot.next = self.last.val() - self.decoder.entry.val();
        self.word.next = self.decoder.word.val();
        self.data.next = self.csr.write_data.val();
        self.writing.next = self.csr.write.val() && self.decoder.selected.val();
        self.reading.next = self.csr.read.val() && self.decoder.selected.val();
        self.read_valid.d.next = self.reading.val();
        self.read_data.d.next = bits::<32>(0);
        if self.reading.val() {
            self.read_data.d.next = self.read_value.val();
        }
        self.csr.read_data.next = self.read_data.q.val();
        self.csr.read_valid.next = self.read_valid.q.val();
    }
}
