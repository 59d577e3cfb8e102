//! Block RAM for the soft core's memories: one read/write port, byte-lane
//! writes, contents given at construction.

use rust_hdl::prelude::*;

/// A single-port block RAM of 32-bit words, addressed by byte.
///
/// At a rising edge the word at `address` is read onto `read_data` (its
/// value before this edge's write) and the lanes set in `write_enable` take
/// their bytes of `write_data`. The word index is `address` bits
/// `[2 + log2(words) - 1 : 2]`; the decoder in front of the RAM checks the
/// rest. The simulation keeps the contents in a plain vector, so a
/// simulated cycle costs the same for any size.
///
/// The Verilog is one inferred memory, initialised with the non-zero
/// words of the image, which synthesis turns into block RAM
/// initialisation; the other words start at zero as FPGA block RAM without
/// an initial value does (and Verilator's default). The words are listed
/// in an `initial` block, or, with [`BlockRam::init_file`], read by
/// `$readmemh` from a file beside the Verilog ([`BlockRam::hex_image`]):
/// yosys reads 17 k listed words in about 3 CPU-minutes but the same
/// words from a file in 1.5 CPU-seconds (measured, the firmware's
/// instruction RAM), and an explicit zero fill of all 32 Ki words did not
/// finish in ten minutes.
#[derive(LogicBlock)]
pub struct BlockRam {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Byte address of the word read and written at this edge.
    pub address: Signal<In, Bits<32>>,
    /// Byte lanes written at this edge (bit i = byte i).
    pub write_enable: Signal<In, Bits<4>>,
    /// Data written on the enabled lanes.
    pub write_data: Signal<In, Bits<32>>,
    /// The word at the previous edge's `address`.
    pub read_data: Signal<Out, Bits<32>>,
    _words: Vec<u32>,
    _init_file: Option<String>,
}

impl BlockRam {
    /// A RAM holding `words`, whose count must be a power of two.
    ///
    /// # Panics
    /// If `words.len()` is not a power of two; the SoC checks sizes before it builds RAMs.
    pub fn new(words: Vec<u32>) -> Self {
        assert!(
            words.len().is_power_of_two(),
            "a block RAM has a power-of-two number of words, not {}",
            words.len()
        );
        Self {
            clock: Signal::default(),
            address: Signal::default(),
            write_enable: Signal::default(),
            write_data: Signal::default(),
            read_data: Signal::default(),
            _words: words,
            _init_file: None,
        }
    }

    /// Makes the Verilog read the initial contents from the file `name`
    /// (relative to the Verilog file) with `$readmemh`, instead of listing
    /// them; the file's text is [`BlockRam::hex_image`].
    pub fn init_file(mut self, name: &str) -> Self {
        self._init_file = Some(name.to_owned());
        self
    }

    /// The file `init_file` names, if any, and its text: the non-zero words
    /// as `$readmemh` reads them, each `@index` then the word in hex.
    pub fn hex_image(&self) -> Option<(String, String)> {
        let name = self._init_file.clone()?;
        let text = self
            .nonzero_words()
            .map(|(i, w)| format!("@{i:x} {w:08x}\n"))
            .collect();
        Some((name, text))
    }

    /// The index and value of every non-zero word.
    fn nonzero_words(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self._words
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, w)| w != 0)
    }

    /// The current contents.
    pub fn words(&self) -> &[u32] {
        &self._words
    }

    /// Bits of the word index.
    fn index_bits(&self) -> u32 {
        self._words.len().trailing_zeros()
    }
}

impl Logic for BlockRam {
    fn update(&mut self) {
        if !self.clock.pos_edge() {
            return;
        }
        let index = (self.address.val().to_u32() >> 2) as usize & (self._words.len() - 1);
        let old = self._words[index];
        self.read_data.next = bits(u64::from(old));
        let lanes = self.write_enable.val().to_u32();
        if lanes != 0 {
            let mask = (0..4)
                .filter(|lane| lanes & (1 << lane) != 0)
                .fold(0u32, |mask, lane| mask | 0xFF << (8 * lane));
            self._words[index] = (old & !mask) | (self.write_data.val().to_u32() & mask);
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        let top = self.index_bits() + 1;
        let last = self._words.len() - 1;
        let init = match &self._init_file {
            _ if self.nonzero_words().next().is_none() => String::new(),
            Some(name) => format!("initial $readmemh(\"{name}\", mem);\n"),
            None => {
                let assignments: String = self
                    .nonzero_words()
                    .map(|(i, w)| format!("   mem[{i}] = 32'h{w:08x};\n"))
                    .collect();
                format!("initial begin\n{assignments}end\n")
            }
        };
        let unused_high = if top < 31 {
            format!("address[31:{}], ", top + 1)
        } else {
            String::new()
        };
        Verilog::Custom(format!(
            "\
reg [31:0] mem[0:{last}];
wire unused_address_bits = &{{1'b0, {unused_high}address[1:0]}};

{init}
always @(posedge clock) begin
   if (write_enable[0]) mem[address[{top}:2]][7:0] <= write_data[7:0];
   if (write_enable[1]) mem[address[{top}:2]][15:8] <= write_data[15:8];
   if (write_enable[2]) mem[address[{top}:2]][23:16] <= write_data[23:16];
   if (write_enable[3]) mem[address[{top}:2]][31:24] <= write_data[31:24];
   read_data <= mem[address[{top}:2]];
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
    fn reads_lag_one_edge_and_writes_take_only_their_lanes() {
        let mut d = CycleDriver::new(BlockRam::new(vec![0x1122_3344, 0, 0, 7]), |b| &mut b.clock)
            .expect("RAM is well formed");
        d.block().address.next = bits(12);
        d.tick().expect("settles");
        assert_eq!(d.block().read_data.val().to_u32(), 7);
        // Lanes 1 and 3 of word 0; the read at the same edge sees the old word.
        d.block().address.next = bits(0);
        d.block().write_enable.next = bits(0b1010);
        d.block().write_data.next = bits(0xAABB_CCDD);
        d.tick().expect("settles");
        assert_eq!(d.block().read_data.val().to_u32(), 0x1122_3344);
        d.block().write_enable.next = bits(0);
        d.tick().expect("settles");
        assert_eq!(d.block().read_data.val().to_u32(), 0xAA22_CC44);
        // Addresses wrap at the RAM's size: byte 16 is word 0 again.
        d.block().address.next = bits(16);
        d.tick().expect("settles");
        assert_eq!(d.block().read_data.val().to_u32(), 0xAA22_CC44);
        assert_eq!(d.block().words(), &[0xAA22_CC44, 0, 0, 7]);
    }
}
