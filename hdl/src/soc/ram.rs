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

    /// The Verilog that initialises `mem` with the non-zero words: an
    /// `initial` block listing them, a `$readmemh` of the init file, or
    /// nothing for an all-zero RAM.
    fn init_text(&self) -> String {
        match &self._init_file {
            _ if self.nonzero_words().next().is_none() => String::new(),
            Some(name) => format!("initial $readmemh(\"{name}\", mem);\n"),
            None => {
                let assignments: String = self
                    .nonzero_words()
                    .map(|(i, w)| format!("   mem[{i}] = 32'h{w:08x};\n"))
                    .collect();
                format!("initial begin\n{assignments}end\n")
            }
        }
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
        self._words[index] = with_lanes(
            old,
            self.write_enable.val().to_u32(),
            self.write_data.val().to_u32(),
        );
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        let top = self.index_bits() + 1;
        let last = self._words.len() - 1;
        let init = self.init_text();
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

/// A simple dual-port block RAM of 32-bit words, addressed by byte: a
/// read port for the core's fetch and a write port, with byte lanes, for
/// its data port. The instruction RAM: the boot loader copies an image in
/// through port B, and nothing reads code back through the data port.
///
/// At a rising edge port A reads the word at `address_a` onto
/// `read_data_a` (its value before this edge's write) while the lanes set
/// in `write_enable_b` take their bytes of `write_data_b` at `address_b`.
/// The word index is bits `[2 + log2(words) - 1 : 2]` of each address.
/// One read and one write port is the simplest mode of FPGA block RAM,
/// and fetch never waits for the data port.
///
/// The Verilog is one inferred memory, initialised as [`BlockRam`]'s is,
/// with one `always` block per port.
#[derive(LogicBlock)]
pub struct DualPortRam {
    /// Clock of both ports.
    pub clock: Signal<In, Clock>,
    /// Port A's byte address.
    pub address_a: Signal<In, Bits<32>>,
    /// The word at port A's previous `address_a`.
    pub read_data_a: Signal<Out, Bits<32>>,
    /// Port B's byte address.
    pub address_b: Signal<In, Bits<32>>,
    /// Byte lanes port B writes at this edge (bit i = byte i).
    pub write_enable_b: Signal<In, Bits<4>>,
    /// Data port B writes on the enabled lanes.
    pub write_data_b: Signal<In, Bits<32>>,
    _memory: BlockRam,
}

impl DualPortRam {
    /// A RAM holding `words`, whose count must be a power of two.
    ///
    /// # Panics
    /// If `words.len()` is not a power of two; the SoC checks sizes before it builds RAMs.
    pub fn new(words: Vec<u32>) -> Self {
        Self {
            clock: Signal::default(),
            address_a: Signal::default(),
            read_data_a: Signal::default(),
            address_b: Signal::default(),
            write_enable_b: Signal::default(),
            write_data_b: Signal::default(),
            _memory: BlockRam::new(words),
        }
    }

    /// As [`BlockRam::init_file`].
    pub fn init_file(mut self, name: &str) -> Self {
        self._memory = self._memory.init_file(name);
        self
    }

    /// As [`BlockRam::hex_image`].
    pub fn hex_image(&self) -> Option<(String, String)> {
        self._memory.hex_image()
    }

    /// The current contents.
    pub fn words(&self) -> &[u32] {
        self._memory.words()
    }
}

impl Logic for DualPortRam {
    fn update(&mut self) {
        if !self.clock.pos_edge() {
            return;
        }
        let words = &mut self._memory._words;
        let a = word_index(self.address_a.val(), words.len());
        let b = word_index(self.address_b.val(), words.len());
        self.read_data_a.next = bits(u64::from(words[a]));
        words[b] = with_lanes(
            words[b],
            self.write_enable_b.val().to_u32(),
            self.write_data_b.val().to_u32(),
        );
    }

    fn connect(&mut self) {
        self.read_data_a.connect();
    }

    fn hdl(&self) -> Verilog {
        let memory = &self._memory;
        let top = memory.index_bits() + 1;
        Verilog::Custom(format!(
            "\
reg [31:0] mem[0:{last}];
wire unused_address_bits = &{{1'b0, {unused}}};

{init}
always @(posedge clock) begin
   read_data_a <= mem[address_a[{top}:2]];
end

always @(posedge clock) begin
   if (write_enable_b[0]) mem[address_b[{top}:2]][7:0] <= write_data_b[7:0];
   if (write_enable_b[1]) mem[address_b[{top}:2]][15:8] <= write_data_b[15:8];
   if (write_enable_b[2]) mem[address_b[{top}:2]][23:16] <= write_data_b[23:16];
   if (write_enable_b[3]) mem[address_b[{top}:2]][31:24] <= write_data_b[31:24];
end
",
            last = memory.words().len() - 1,
            unused = unused_address_bits(top),
            init = memory.init_text(),
        ))
    }
}

/// A read-only block RAM of 32-bit words with two read ports, addressed
/// by byte: the boot ROM, read by the core's fetch (port A) and its data
/// port's loads (port B). It has no write port, so no program can change
/// the boot loader; the bitstream initialises it.
///
/// At a rising edge each port reads the word at its address onto its
/// `read_data`. The Verilog is one inferred memory, initialised as
/// [`BlockRam`]'s is, which synthesis maps onto a dual-port block ROM.
#[derive(LogicBlock)]
pub struct DualPortRom {
    /// Clock of both ports.
    pub clock: Signal<In, Clock>,
    /// Port A's byte address.
    pub address_a: Signal<In, Bits<32>>,
    /// The word at port A's previous `address_a`.
    pub read_data_a: Signal<Out, Bits<32>>,
    /// Port B's byte address.
    pub address_b: Signal<In, Bits<32>>,
    /// The word at port B's previous `address_b`.
    pub read_data_b: Signal<Out, Bits<32>>,
    _memory: BlockRam,
}

impl DualPortRom {
    /// A ROM holding `words`, whose count must be a power of two.
    ///
    /// # Panics
    /// If `words.len()` is not a power of two; the SoC checks sizes before it builds memories.
    pub fn new(words: Vec<u32>) -> Self {
        Self {
            clock: Signal::default(),
            address_a: Signal::default(),
            read_data_a: Signal::default(),
            address_b: Signal::default(),
            read_data_b: Signal::default(),
            _memory: BlockRam::new(words),
        }
    }

    /// As [`BlockRam::init_file`].
    pub fn init_file(mut self, name: &str) -> Self {
        self._memory = self._memory.init_file(name);
        self
    }

    /// As [`BlockRam::hex_image`].
    pub fn hex_image(&self) -> Option<(String, String)> {
        self._memory.hex_image()
    }
}

impl Logic for DualPortRom {
    fn update(&mut self) {
        if !self.clock.pos_edge() {
            return;
        }
        let words = &self._memory._words;
        let a = word_index(self.address_a.val(), words.len());
        let b = word_index(self.address_b.val(), words.len());
        self.read_data_a.next = bits(u64::from(words[a]));
        self.read_data_b.next = bits(u64::from(words[b]));
    }

    fn connect(&mut self) {
        self.read_data_a.connect();
        self.read_data_b.connect();
    }

    fn hdl(&self) -> Verilog {
        let memory = &self._memory;
        let top = memory.index_bits() + 1;
        Verilog::Custom(format!(
            "\
reg [31:0] mem[0:{last}];
wire unused_address_bits = &{{1'b0, {unused}}};

{init}
always @(posedge clock) begin
   read_data_a <= mem[address_a[{top}:2]];
   read_data_b <= mem[address_b[{top}:2]];
end
",
            last = memory.words().len() - 1,
            unused = unused_address_bits(top),
            init = memory.init_text(),
        ))
    }
}

/// The word index of byte address `address` in a memory of `words` words.
fn word_index(address: Bits<32>, words: usize) -> usize {
    (address.to_u32() >> 2) as usize & (words - 1)
}

/// The address bits of ports A and B that a memory whose word index ends
/// at bit `top` does not decode, for the Verilog's `unused_address_bits`.
fn unused_address_bits(top: u32) -> String {
    if top < 31 {
        format!(
            "address_a[31:{0}], address_b[31:{0}], address_a[1:0], address_b[1:0]",
            top + 1
        )
    } else {
        "address_a[1:0], address_b[1:0]".to_owned()
    }
}

/// `old` with the bytes of `data` in the lanes set in `lanes` (bit i = byte i).
fn with_lanes(old: u32, lanes: u32, data: u32) -> u32 {
    let mask = (0..4)
        .filter(|lane| lanes & (1 << lane) != 0)
        .fold(0u32, |mask, lane| mask | 0xFF << (8 * lane));
    (old & !mask) | (data & mask)
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

    #[test]
    fn port_a_reads_the_word_before_port_b_writes_its_lanes() {
        let mut d = CycleDriver::new(DualPortRam::new(vec![0x1122_3344, 5, 6, 7]), |b| {
            &mut b.clock
        })
        .expect("RAM is well formed");
        // Port B writes lanes 0 and 2 of word 0 while port A reads it.
        d.block().address_a.next = bits(0);
        d.block().address_b.next = bits(0);
        d.block().write_enable_b.next = bits(0b0101);
        d.block().write_data_b.next = bits(0xAABB_CCDD);
        d.tick().expect("settles");
        assert_eq!(d.block().read_data_a.val().to_u32(), 0x1122_3344);
        // The next edge: port A sees the write.
        d.block().write_enable_b.next = bits(0);
        d.tick().expect("settles");
        assert_eq!(d.block().read_data_a.val().to_u32(), 0x11BB_33DD);
        assert_eq!(d.block().words(), &[0x11BB_33DD, 5, 6, 7]);
    }

    #[test]
    fn both_rom_ports_read_their_words() {
        let mut d = CycleDriver::new(DualPortRom::new(vec![1, 2, 3, 4]), |b| &mut b.clock)
            .expect("ROM is well formed");
        d.block().address_a.next = bits(4);
        d.block().address_b.next = bits(12);
        d.tick().expect("settles");
        assert_eq!(d.block().read_data_a.val().to_u32(), 2);
        assert_eq!(d.block().read_data_b.val().to_u32(), 4);
    }
}
