//! The watchdog (`weft_regs::soc::watchdog`): requests a reset of the SoC
//! when the firmware stops kicking it.

use rust_hdl::prelude::*;
use weft_regs::soc::watchdog;

use crate::csr::CsrTarget;

const _: () = assert!(watchdog::ENABLE.lsb == 0 && watchdog::FIRED.lsb == 0);

/// `COUNT` goes down one per cycle while enabled; a cycle that finds it
/// at 0 fires: `reset_request` is high for the next cycle, `STATUS.FIRED`
/// sets and `CONTROL.ENABLE` clears. A kick or enabling reloads `COUNT`
/// from `LOAD` in the cycle of the write, which counts too (as
/// `weft_iss::soc::Watchdog` does after a store and one step).
///
/// `reset` is the power-on reset: it alone clears `STATUS.FIRED` and
/// restores `LOAD`, so both survive the reset the watchdog requests.
#[derive(LogicBlock)]
pub struct Watchdog {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Power-on reset (synchronous).
    pub reset: Signal<In, Bit>,
    /// The register interface.
    pub bus: CsrTarget,
    /// High for one cycle after the watchdog fired: reset the SoC.
    pub reset_request: Signal<Out, Bit>,
    load: DFF<Bits<32>>,
    count: DFF<Bits<32>>,
    enabled: DFF<Bit>,
    fired: DFF<Bit>,
    request: DFF<Bit>,
    read_data: DFF<Bits<32>>,
    read_valid: DFF<Bit>,
    word: Signal<Local, Bits<6>>,
    reloaded: Signal<Local, Bits<32>>,
    enable: Signal<Local, Bit>,
    load_reset: Constant<Bits<32>>,
    kick_key: Constant<Bits<32>>,
    load_word: Constant<Bits<6>>,
    kick_word: Constant<Bits<6>>,
    control_word: Constant<Bits<6>>,
    count_word: Constant<Bits<6>>,
    status_word: Constant<Bits<6>>,
}

impl Watchdog {
    /// A watchdog; hold `reset` for a cycle before use.
    pub fn new() -> Self {
        let word = |r: weft_regs::Register| Constant::new(bits(u64::from(r.word())));
        Self {
            load_reset: Constant::new(bits(u64::from(watchdog::LOAD_RESET))),
            kick_key: Constant::new(bits(u64::from(watchdog::KICK_KEY))),
            load_word: word(watchdog::LOAD),
            kick_word: word(watchdog::KICK),
            control_word: word(watchdog::CONTROL),
            count_word: word(watchdog::COUNT),
            status_word: word(watchdog::STATUS),
            clock: Default::default(),
            reset: Default::default(),
            bus: Default::default(),
            reset_request: Default::default(),
            load: Default::default(),
            count: Default::default(),
            enabled: Default::default(),
            fired: Default::default(),
            request: Default::default(),
            read_data: Default::default(),
            read_valid: Default::default(),
            word: Default::default(),
            reloaded: Default::default(),
            enable: Default::default(),
        }
    }
}

impl Watchdog {
    /// Cycles the watchdog can let pass without a kick and not fire: its
    /// count while enabled (it fires in the cycle after the count reaches
    /// 0), `None` while disabled.
    pub(crate) fn cycles_before_firing(&self) -> Option<u64> {
        self.enabled
            .q
            .val()
            .then(|| u64::from(self.count.q.val().to_u32()))
    }

    /// Counts `cycles` down between two clock edges, as that many cycles
    /// without a write would, at most [`Watchdog::cycles_before_firing`]:
    /// for a bench skipping idle cycles. The owner settles the logic after.
    pub(crate) fn skip(&mut self, cycles: u64) {
        if let Some(left) = self.cycles_before_firing() {
            let count = left.saturating_sub(cycles);
            self.count.q.next = bits(count);
        }
    }
}

impl Default for Watchdog {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for Watchdog {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, load, count, enabled, fired, request, read_data, read_valid);
        self.word.next = self.bus.address.val().get_bits::<6>(2);
        self.reset_request.next = self.request.q.val();
        // This cycle's write first.
        self.reloaded.next = self.count.q.val();
        self.enable.next = self.enabled.q.val();
        if self.bus.write.val() && self.word.val() == self.load_word.val() {
            self.load.d.next = self.bus.write_data.val();
        }
        if self.bus.write.val()
            && self.word.val() == self.kick_word.val()
            && self.bus.write_data.val() == self.kick_key.val()
        {
            self.reloaded.next = self.load.q.val();
        }
        if self.bus.write.val() && self.word.val() == self.control_word.val() {
            self.enable.next = self.bus.write_data.val().get_bit(0);
            if self.bus.write_data.val().get_bit(0) && !self.enabled.q.val() {
                self.reloaded.next = self.load.q.val();
            }
        }
        if self.bus.write.val()
            && self.word.val() == self.status_word.val()
            && self.bus.write_data.val().get_bit(0)
        {
            self.fired.d.next = false;
        }
        // Then this cycle's count.
        self.count.d.next = self.reloaded.val();
        self.enabled.d.next = self.enable.val();
        self.request.d.next = false;
        if self.enable.val() {
            if self.reloaded.val() == 0 {
                self.enabled.d.next = false;
                self.fired.d.next = true;
                self.request.d.next = true;
            } else {
                self.count.d.next = self.reloaded.val() - 1;
            }
        }
        self.read_valid.d.next = self.bus.read.val();
        self.read_data.d.next = 0.into();
        if self.bus.read.val() {
            if self.word.val() == self.load_word.val() {
                self.read_data.d.next = self.load.q.val();
            }
            if self.word.val() == self.control_word.val() {
                self.read_data.d.next = bit_cast::<32, 1>(self.enabled.q.val().into());
            }
            if self.word.val() == self.count_word.val() {
                self.read_data.d.next = self.count.q.val();
            }
            if self.word.val() == self.status_word.val() {
                self.read_data.d.next = bit_cast::<32, 1>(self.fired.q.val().into());
            }
        }
        if self.reset.val() {
            self.load.d.next = self.load_reset.val();
            self.count.d.next = 0.into();
            self.enabled.d.next = false;
            self.fired.d.next = false;
            self.request.d.next = false;
            self.read_valid.d.next = false;
        }
        self.bus.read_data.next = self.read_data.q.val();
        self.bus.read_valid.next = self.read_valid.q.val();
    }
}
