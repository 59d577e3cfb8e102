//! The integer register file: 32 registers of 32 bits, two combinational
//! read ports and one write port.

use rust_hdl::prelude::*;

/// `x0`–`x31`, with `x0` hard-wired to zero (Unprivileged 20191213 §2.1).
///
/// Reads are combinational, so the decode stage reads its operands in the
/// cycle the instruction arrives; the write takes effect at the rising
/// edge, so a read of the register being written in the same cycle sees
/// the old value (the pipeline bypasses it). On an FPGA the Verilog maps to
/// distributed (LUT) RAM. The simulation model keeps the registers in a
/// plain array instead of rust-hdl signals, which keeps the cost per
/// simulated cycle independent of the register count.
#[derive(LogicBlock, Default)]
pub struct RegisterFile {
    /// Write clock.
    pub clock: Signal<In, Clock>,
    /// Register read on port A.
    pub read_address_a: Signal<In, Bits<5>>,
    /// Value of `read_address_a`.
    pub read_data_a: Signal<Out, Bits<32>>,
    /// Register read on port B.
    pub read_address_b: Signal<In, Bits<5>>,
    /// Value of `read_address_b`.
    pub read_data_b: Signal<Out, Bits<32>>,
    /// Write `write_data` to `write_address` at the rising edge.
    pub write_enable: Signal<In, Bit>,
    /// Register written.
    pub write_address: Signal<In, Bits<5>>,
    /// Value written.
    pub write_data: Signal<In, Bits<32>>,
    _registers: Box<[u32; 32]>,
}

impl RegisterFile {
    /// The current value of register `r` (for tests and debuggers).
    ///
    /// # Panics
    /// If `r > 31`.
    pub fn register(&self, r: usize) -> u32 {
        self._registers[r]
    }
}

impl Logic for RegisterFile {
    fn update(&mut self) {
        if self.clock.pos_edge() && self.write_enable.val() {
            let rd = self.write_address.val().index();
            if rd != 0 {
                self._registers[rd] = self.write_data.val().to_u32();
            }
        }
        self.read_data_a.next = bits(u64::from(
            self._registers[self.read_address_a.val().index()],
        ));
        self.read_data_b.next = bits(u64::from(
            self._registers[self.read_address_b.val().index()],
        ));
    }

    fn connect(&mut self) {
        self.read_data_a.connect();
        self.read_data_b.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "\
reg [31:0] storage[31:0];
integer i;

initial begin
   for (i = 0; i < 32; i = i + 1) storage[i] = 32'h0;
end

always @(*) begin
   read_data_a = (read_address_a == 5'd0) ? 32'h0 : storage[read_address_a];
   read_data_b = (read_address_b == 5'd0) ? 32'h0 : storage[read_address_b];
end

always @(posedge clock) begin
   if (write_enable && write_address != 5'd0) begin
      storage[write_address] <= write_data;
   end
end
"
            .into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::CycleDriver;

    #[test]
    fn x0_reads_zero_and_writes_land_at_the_edge() {
        let mut d = CycleDriver::new(RegisterFile::default(), |b| &mut b.clock)
            .expect("register file is well formed");
        let b = d.block();
        b.write_enable.next = true;
        b.write_address.next = 0.into();
        b.write_data.next = bits(0xdead_beef);
        d.tick().expect("settles");
        let b = d.block();
        b.write_address.next = 7.into();
        b.write_data.next = bits(0x1234_5678);
        b.read_address_a.next = 7.into();
        b.read_address_b.next = 0.into();
        d.settle().expect("settles");
        // Before the edge: the old value; x0 ignored its write.
        assert_eq!(d.block().read_data_a.val().to_u32(), 0);
        assert_eq!(d.block().read_data_b.val().to_u32(), 0);
        d.tick().expect("settles");
        d.block().write_enable.next = false;
        d.settle().expect("settles");
        assert_eq!(d.block().read_data_a.val().to_u32(), 0x1234_5678);
        assert_eq!(d.block().read_data_b.val().to_u32(), 0);
        assert_eq!(d.block().register(7), 0x1234_5678);
    }
}
