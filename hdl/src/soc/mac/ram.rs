//! The MAC's frame buffer memory: block RAM with two independent ports,
//! one for the soft core's data port and one for the MAC's line engine.

use rust_hdl::prelude::*;

/// Bits of a [`FrameRam`] word index: room for the larger buffer's 4096 words.
pub const FRAME_RAM_INDEX_BITS: usize = 12;

/// A true dual-port block RAM of 32-bit words, addressed by word.
///
/// At a rising edge each port reads the word at its `address` onto its
/// `read_data` (the value before this edge's writes) and, with `write`,
/// writes `write_data` there. Both ports may write the same word at the
/// same edge; port B's word is kept. The word index is the low
/// `log2(words)` bits of `address`. Two ports are what FPGA block RAM
/// offers, and they let the line engine move bytes in the cycles the soft
/// core uses the buffer too, so the core's accesses never wait.
///
/// The simulation keeps the contents in a plain vector. The Verilog is
/// one inferred memory written and read from one `always` block, which
/// synthesis maps onto true dual-port block RAM. The contents start at
/// zero, as FPGA block RAM without an initial value does.
#[derive(LogicBlock)]
pub struct FrameRam {
    /// Clock of both ports.
    pub clock: Signal<In, Clock>,
    /// Port A's word index.
    pub address_a: Signal<In, Bits<FRAME_RAM_INDEX_BITS>>,
    /// Port A writes `write_data_a` at this edge.
    pub write_a: Signal<In, Bit>,
    /// Port A's word to write.
    pub write_data_a: Signal<In, Bits<32>>,
    /// The word at port A's previous `address_a`.
    pub read_data_a: Signal<Out, Bits<32>>,
    /// Port B's word index.
    pub address_b: Signal<In, Bits<FRAME_RAM_INDEX_BITS>>,
    /// Port B writes `write_data_b` at this edge.
    pub write_b: Signal<In, Bit>,
    /// Port B's word to write.
    pub write_data_b: Signal<In, Bits<32>>,
    /// The word at port B's previous `address_b`.
    pub read_data_b: Signal<Out, Bits<32>>,
    _words: Vec<u32>,
}

impl FrameRam {
    /// A RAM of `words` zero words, a power of two up to `2^FRAME_RAM_INDEX_BITS`.
    ///
    /// # Panics
    /// If `words` is not such a power of two.
    pub fn new(words: usize) -> Self {
        assert!(
            words.is_power_of_two() && words <= 1 << FRAME_RAM_INDEX_BITS,
            "a frame RAM has a power-of-two number of words up to {}, not {words}",
            1 << FRAME_RAM_INDEX_BITS
        );
        Self {
            clock: Signal::default(),
            address_a: Signal::default(),
            write_a: Signal::default(),
            write_data_a: Signal::default(),
            read_data_a: Signal::default(),
            address_b: Signal::default(),
            write_b: Signal::default(),
            write_data_b: Signal::default(),
            read_data_b: Signal::default(),
            _words: vec![0; words],
        }
    }

    /// The current contents.
    pub fn words(&self) -> &[u32] {
        &self._words
    }
}

impl Logic for FrameRam {
    fn update(&mut self) {
        if !self.clock.pos_edge() {
            return;
        }
        let mask = self._words.len() - 1;
        let a = self.address_a.val().index() & mask;
        let b = self.address_b.val().index() & mask;
        self.read_data_a.next = bits(u64::from(self._words[a]));
        self.read_data_b.next = bits(u64::from(self._words[b]));
        if self.write_a.val() {
            self._words[a] = self.write_data_a.val().to_u32();
        }
        if self.write_b.val() {
            self._words[b] = self.write_data_b.val().to_u32();
        }
    }

    fn connect(&mut self) {
        self.read_data_a.connect();
        self.read_data_b.connect();
    }

    fn hdl(&self) -> Verilog {
        let index_bits = self._words.len().trailing_zeros() as usize;
        let top = index_bits.saturating_sub(1);
        let last = self._words.len() - 1;
        let unused = if index_bits < FRAME_RAM_INDEX_BITS {
            let high = FRAME_RAM_INDEX_BITS - 1;
            format!(
                "wire unused_address_bits = &{{1'b0, address_a[{high}:{index_bits}], \
                 address_b[{high}:{index_bits}]}};\n"
            )
        } else {
            String::new()
        };
        Verilog::Custom(format!(
            "\
reg [31:0] mem[0:{last}];
{unused}
always @(posedge clock) begin
   if (write_a) mem[address_a[{top}:0]] <= write_data_a;
   if (write_b) mem[address_b[{top}:0]] <= write_data_b;
   read_data_a <= mem[address_a[{top}:0]];
   read_data_b <= mem[address_b[{top}:0]];
end
"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::CycleDriver;

    #[test]
    fn both_ports_read_the_word_before_the_edge_and_port_b_wins_a_tie() {
        let mut d = CycleDriver::new(FrameRam::new(4), |r| &mut r.clock).expect("RAM connects");
        d.block().address_a.next = bits(1);
        d.block().write_a.next = true;
        d.block().write_data_a.next = bits(0x1111);
        d.block().address_b.next = bits(2);
        d.block().write_b.next = true;
        d.block().write_data_b.next = bits(0x2222);
        d.tick().expect("settles");
        assert_eq!(
            d.block().read_data_a.val().to_u32(),
            0,
            "read before the write"
        );
        assert_eq!(d.block().words(), &[0, 0x1111, 0x2222, 0]);
        // Both ports on word 3: B's word stays. Index 7 wraps to 3.
        d.block().address_a.next = bits(3);
        d.block().address_b.next = bits(7);
        d.tick().expect("settles");
        d.block().write_a.next = false;
        d.block().write_b.next = false;
        d.block().address_a.next = bits(2);
        d.tick().expect("settles");
        assert_eq!(d.block().words()[3], 0x2222);
        assert_eq!(d.block().read_data_a.val().to_u32(), 0x2222);
        assert_eq!(d.block().read_data_b.val().to_u32(), 0x2222);
    }
}
