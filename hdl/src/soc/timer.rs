//! The machine timer (`weft_regs::soc::timer`; Privileged 20211203
//! §3.2.1): `mtime`, `mtimecmp` and the machine timer interrupt.

use rust_hdl::prelude::*;
use weft_regs::soc::timer;

use crate::csr::CsrTarget;

const _: () = assert!(timer::MTIMECMP_RESET == u64::MAX);

/// `mtime` and `mtimecmp` as 32-bit halves, and `interrupt` = `mtime >=
/// mtimecmp` unsigned (Privileged 20211203 §3.2.1).
///
/// `mtime` counts one per clock cycle. A write to one of its halves and
/// the cycle's count both apply, the write first: the cycle after writing
/// `v` it reads `v + 1`, which is what `weft_iss::soc::Timer` shows after a
/// store and one step. `interrupt` is compared from the registers, so it
/// follows a write of `mtimecmp` in the next cycle. Reset: `mtime` 0,
/// `mtimecmp` all ones (no interrupt until software sets it).
#[derive(LogicBlock)]
pub struct Timer {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// The register interface.
    pub bus: CsrTarget,
    /// The machine timer interrupt line (`mip.MTIP`).
    pub interrupt: Signal<Out, Bit>,
    mtime_low: DFF<Bits<32>>,
    mtime_high: DFF<Bits<32>>,
    mtimecmp_low: DFF<Bits<32>>,
    mtimecmp_high: DFF<Bits<32>>,
    read_data: DFF<Bits<32>>,
    read_valid: DFF<Bit>,
    word: Signal<Local, Bits<6>>,
    written_low: Signal<Local, Bits<32>>,
    written_high: Signal<Local, Bits<32>>,
    all_ones: Constant<Bits<32>>,
    mtime_low_word: Constant<Bits<6>>,
    mtime_high_word: Constant<Bits<6>>,
    mtimecmp_low_word: Constant<Bits<6>>,
    mtimecmp_high_word: Constant<Bits<6>>,
}

impl Timer {
    /// A timer; hold `reset` for a cycle before use.
    pub fn new() -> Self {
        let word = |r: weft_regs::Register| Constant::new(bits(u64::from(r.word())));
        Self {
            all_ones: Constant::new(bits(u64::from(u32::MAX))),
            mtime_low_word: word(timer::MTIME_LOW),
            mtime_high_word: word(timer::MTIME_HIGH),
            mtimecmp_low_word: word(timer::MTIMECMP_LOW),
            mtimecmp_high_word: word(timer::MTIMECMP_HIGH),
            clock: Default::default(),
            reset: Default::default(),
            bus: Default::default(),
            interrupt: Default::default(),
            mtime_low: Default::default(),
            mtime_high: Default::default(),
            mtimecmp_low: Default::default(),
            mtimecmp_high: Default::default(),
            read_data: Default::default(),
            read_valid: Default::default(),
            word: Default::default(),
            written_low: Default::default(),
            written_high: Default::default(),
        }
    }
}

impl Timer {
    /// `mtime` now.
    pub(crate) fn mtime(&self) -> u64 {
        u64::from(self.mtime_high.q.val().to_u32()) << 32
            | u64::from(self.mtime_low.q.val().to_u32())
    }

    /// `mtimecmp` now.
    pub(crate) fn mtimecmp(&self) -> u64 {
        u64::from(self.mtimecmp_high.q.val().to_u32()) << 32
            | u64::from(self.mtimecmp_low.q.val().to_u32())
    }

    /// Moves `mtime` on by `cycles` between two clock edges, as that many
    /// cycles without a write would: for a bench skipping idle cycles.
    /// The owner settles the logic after.
    pub(crate) fn skip(&mut self, cycles: u64) {
        let mtime = self.mtime().wrapping_add(cycles);
        self.mtime_low.q.next = bits(mtime & u64::from(u32::MAX));
        self.mtime_high.q.next = bits(mtime >> 32);
    }
}

impl Default for Timer {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for Timer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            mtime_low,
            mtime_high,
            mtimecmp_low,
            mtimecmp_high,
            read_data,
            read_valid
        );
        self.word.next = self.bus.address.val().get_bits::<6>(2);
        self.interrupt.next = (self.mtime_high.q.val() > self.mtimecmp_high.q.val())
            || (self.mtime_high.q.val() == self.mtimecmp_high.q.val()
                && self.mtime_low.q.val() >= self.mtimecmp_low.q.val());
        // mtime: this cycle's write, then this cycle's count.
        self.written_low.next = self.mtime_low.q.val();
        self.written_high.next = self.mtime_high.q.val();
        if self.bus.write.val() && self.word.val() == self.mtime_low_word.val() {
            self.written_low.next = self.bus.write_data.val();
        }
        if self.bus.write.val() && self.word.val() == self.mtime_high_word.val() {
            self.written_high.next = self.bus.write_data.val();
        }
        self.mtime_low.d.next = self.written_low.val() + 1;
        if self.written_low.val() == self.all_ones.val() {
            self.mtime_high.d.next = self.written_high.val() + 1;
        } else {
            self.mtime_high.d.next = self.written_high.val();
        }
        if self.bus.write.val() && self.word.val() == self.mtimecmp_low_word.val() {
            self.mtimecmp_low.d.next = self.bus.write_data.val();
        }
        if self.bus.write.val() && self.word.val() == self.mtimecmp_high_word.val() {
            self.mtimecmp_high.d.next = self.bus.write_data.val();
        }
        // Reads answer in the next cycle and drive zero otherwise.
        self.read_valid.d.next = self.bus.read.val();
        self.read_data.d.next = 0.into();
        if self.bus.read.val() {
            if self.word.val() == self.mtime_low_word.val() {
                self.read_data.d.next = self.mtime_low.q.val();
            }
            if self.word.val() == self.mtime_high_word.val() {
                self.read_data.d.next = self.mtime_high.q.val();
            }
            if self.word.val() == self.mtimecmp_low_word.val() {
                self.read_data.d.next = self.mtimecmp_low.q.val();
            }
            if self.word.val() == self.mtimecmp_high_word.val() {
                self.read_data.d.next = self.mtimecmp_high.q.val();
            }
        }
        if self.reset.val() {
            self.mtime_low.d.next = 0.into();
            self.mtime_high.d.next = 0.into();
            self.mtimecmp_low.d.next = self.all_ones.val();
            self.mtimecmp_high.d.next = self.all_ones.val();
            self.read_valid.d.next = false;
        }
        self.bus.read_data.next = self.read_data.q.val();
        self.bus.read_valid.next = self.read_valid.q.val();
    }
}
