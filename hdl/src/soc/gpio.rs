//! General-purpose I/O (`weft_regs::soc::gpio`): 32 outputs, 32
//! synchronised inputs.

use rust_hdl::prelude::*;
use weft_regs::soc::gpio;

use crate::csr::CsrTarget;

/// `OUTPUT` drives `outputs`; `INPUT` reads `inputs` through two flip-flops
/// (a synchroniser for pins from another clock domain), so a change shows
/// two cycles later. Reset: outputs low.
#[derive(LogicBlock)]
pub struct Gpio {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// The register interface.
    pub bus: CsrTarget,
    /// Output levels (LEDs on the low bits).
    pub outputs: Signal<Out, Bits<32>>,
    /// Input levels, from any clock domain.
    pub inputs: Signal<In, Bits<32>>,
    driven: DFF<Bits<32>>,
    input_meta: DFF<Bits<32>>,
    input_sync: DFF<Bits<32>>,
    read_data: DFF<Bits<32>>,
    read_valid: DFF<Bit>,
    word: Signal<Local, Bits<6>>,
    output_word: Constant<Bits<6>>,
    input_word: Constant<Bits<6>>,
}

impl Gpio {
    /// GPIO; hold `reset` for a cycle before use.
    pub fn new() -> Self {
        Self {
            output_word: Constant::new(bits(u64::from(gpio::OUTPUT.word()))),
            input_word: Constant::new(bits(u64::from(gpio::INPUT.word()))),
            clock: Default::default(),
            reset: Default::default(),
            bus: Default::default(),
            outputs: Default::default(),
            inputs: Default::default(),
            driven: Default::default(),
            input_meta: Default::default(),
            input_sync: Default::default(),
            read_data: Default::default(),
            read_valid: Default::default(),
            word: Default::default(),
        }
    }
}

impl Default for Gpio {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for Gpio {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, driven, input_meta, input_sync, read_data, read_valid);
        self.word.next = self.bus.address.val().get_bits::<6>(2);
        self.input_meta.d.next = self.inputs.val();
        self.input_sync.d.next = self.input_meta.q.val();
        self.outputs.next = self.driven.q.val();
        if self.bus.write.val() && self.word.val() == self.output_word.val() {
            self.driven.d.next = self.bus.write_data.val();
        }
        self.read_valid.d.next = self.bus.read.val();
        self.read_data.d.next = 0.into();
        if self.bus.read.val() && self.word.val() == self.output_word.val() {
            self.read_data.d.next = self.driven.q.val();
        }
        if self.bus.read.val() && self.word.val() == self.input_word.val() {
            self.read_data.d.next = self.input_sync.q.val();
        }
        if self.reset.val() {
            self.driven.d.next = 0.into();
            self.read_valid.d.next = false;
        }
        self.bus.read_data.next = self.read_data.q.val();
        self.bus.read_valid.next = self.read_valid.q.val();
    }
}
