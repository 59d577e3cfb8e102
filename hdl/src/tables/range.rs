//! One programmed address range: base and size registers and their 65-bit end.
//!
//! Window and address route entries both hold a range. The end,
//! `base + size`, is computed from the programmed values into registers
//! every cycle, so lookups compare against it without an adder; it follows
//! a CSR write one cycle later.

use rust_hdl::prelude::*;
use weft_regs::Register;

use crate::csr::WORD_BITS;

/// A range's registers and its end, `limit = base + size` (65 bits: `limit_carry` is bit 64).
#[derive(LogicBlock)]
pub struct Range {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// This entry is written at this clock edge.
    pub write: Signal<In, Bit>,
    /// The register written or read, as a word index within the entry.
    pub word: Signal<In, Bits<WORD_BITS>>,
    /// The value written.
    pub data: Signal<In, Bits<32>>,
    /// The register at `word`, if it is one of the range's, else 0.
    pub read_value: Signal<Out, Bits<32>>,
    /// The base, bits 31:0.
    pub base_low: Signal<Out, Bits<32>>,
    /// The base, bits 63:32.
    pub base_high: Signal<Out, Bits<32>>,
    /// The size, bits 31:0.
    pub size_low: Signal<Out, Bits<32>>,
    /// The size, bits 63:32.
    pub size_high: Signal<Out, Bits<32>>,
    /// The size is not zero.
    pub nonempty: Signal<Out, Bit>,
    /// `base + size`, bits 31:0.
    pub limit_low: Signal<Out, Bits<32>>,
    /// `base + size`, bits 63:32.
    pub limit_high: Signal<Out, Bits<32>>,
    /// `base + size`, bit 64.
    pub limit_carry: Signal<Out, Bit>,
    base_low_reg: DFF<Bits<32>>,
    base_high_reg: DFF<Bits<32>>,
    size_low_reg: DFF<Bits<32>>,
    size_high_reg: DFF<Bits<32>>,
    limit_low_reg: DFF<Bits<32>>,
    limit_high_reg: DFF<Bits<32>>,
    limit_carry_reg: DFF<Bit>,
    word_base_low: Constant<Bits<WORD_BITS>>,
    word_base_high: Constant<Bits<WORD_BITS>>,
    word_size_low: Constant<Bits<WORD_BITS>>,
    word_size_high: Constant<Bits<WORD_BITS>>,
    /// The bits of `BASE_LOW` the map defines (bits 1:0 are reserved).
    defined_base_low: Constant<Bits<32>>,
    /// The bits of `SIZE_LOW` the map defines (bits 1:0 are reserved).
    defined_size_low: Constant<Bits<32>>,
    sum_low: Signal<Local, Bits<32>>,
    sum_high: Signal<Local, Bits<32>>,
    carry_low: Signal<Local, Bit>,
}

/// The registers of a range in a table entry: base bits 31:0 and 63:32, size bits 31:0 and 63:32.
pub struct RangeRegisters {
    /// Base, bits 31:0.
    pub base_low: Register,
    /// Base, bits 63:32.
    pub base_high: Register,
    /// Size, bits 31:0.
    pub size_low: Register,
    /// Size, bits 63:32.
    pub size_high: Register,
}

impl Range {
    /// A range answering the given registers of its entry.
    pub fn new(registers: &RangeRegisters) -> Self {
        let word = |register: &Register| Constant::new(register.word().to_bits());
        Range {
            clock: Default::default(),
            write: Default::default(),
            word: Default::default(),
            data: Default::default(),
            read_value: Default::default(),
            base_low: Default::default(),
            base_high: Default::default(),
            size_low: Default::default(),
            size_high: Default::default(),
            nonempty: Default::default(),
            limit_low: Default::default(),
            limit_high: Default::default(),
            limit_carry: Default::default(),
            base_low_reg: Default::default(),
            base_high_reg: Default::default(),
            size_low_reg: Default::default(),
            size_high_reg: Default::default(),
            limit_low_reg: Default::default(),
            limit_high_reg: Default::default(),
            limit_carry_reg: Default::default(),
            word_base_low: word(&registers.base_low),
            word_base_high: word(&registers.base_high),
            word_size_low: word(&registers.size_low),
            word_size_high: word(&registers.size_high),
            defined_base_low: Constant::new(registers.base_low.mask().to_bits()),
            defined_size_low: Constant::new(registers.size_low.mask().to_bits()),
            sum_low: Default::default(),
            sum_high: Default::default(),
            carry_low: Default::default(),
        }
    }
}

impl Logic for Range {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            base_low_reg,
            base_high_reg,
            size_low_reg,
            size_high_reg,
            limit_low_reg,
            limit_high_reg,
            limit_carry_reg
        );
        self.read_value.next = bits::<32>(0);
        if self.word.val() == self.word_base_low.val() {
            self.read_value.next = self.base_low_reg.q.val();
            if self.write.val() {
                self.base_low_reg.d.next = self.data.val() & self.defined_base_low.val();
            }
        }
        if self.word.val() == self.word_base_high.val() {
            self.read_value.next = self.base_high_reg.q.val();
            if self.write.val() {
                self.base_high_reg.d.next = self.data.val();
            }
        }
        if self.word.val() == self.word_size_low.val() {
            self.read_value.next = self.size_low_reg.q.val();
            if self.write.val() {
                self.size_low_reg.d.next = self.data.val() & self.defined_size_low.val();
            }
        }
        if self.word.val() == self.word_size_high.val() {
            self.read_value.next = self.size_high_reg.q.val();
            if self.write.val() {
                self.size_high_reg.d.next = self.data.val();
            }
        }
        self.base_low.next = self.base_low_reg.q.val();
        self.base_high.next = self.base_high_reg.q.val();
        self.size_low.next = self.size_low_reg.q.val();
        self.size_high.next = self.size_high_reg.q.val();
        self.nonempty.next = self.size_low_reg.q.val().any() || self.size_high_reg.q.val().any();
        // 64-bit add in two halves; the carry out of the high half is bit 64.
        self.sum_low.next = self.base_low_reg.q.val() + self.size_low_reg.q.val();
        self.carry_low.next = self.sum_low.val() < self.base_low_reg.q.val();
        self.sum_high.next =
            self.base_high_reg.q.val() + self.size_high_reg.q.val() + self.carry_low.val();
        self.limit_low_reg.d.next = self.sum_low.val();
        self.limit_high_reg.d.next = self.sum_high.val();
        self.limit_carry_reg.d.next = (self.sum_high.val() < self.base_high_reg.q.val())
            || (self.carry_low.val() && (self.sum_high.val() == self.base_high_reg.q.val()));
        self.limit_low.next = self.limit_low_reg.q.val();
        self.limit_high.next = self.limit_high_reg.q.val();
        self.limit_carry.next = self.limit_carry_reg.q.val();
    }
}
