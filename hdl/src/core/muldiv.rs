//! The M extension's multiply and divide unit (Unprivileged ISA 20191213
//! Chapter 7), iterative so that it fits beside the pipeline's EX stage.
//!
//! Latency, counted from the cycle the operation enters EX to the cycle
//! its result leaves EX:
//!
//! - `mul`, `mulh`, `mulhsu`, `mulhu`: **2 cycles**. The first registers
//!   four 16 × 16-bit partial products (DSP-sized) and the signedness
//!   correction; the second sums them.
//! - `div`, `divu`, `rem`, `remu`: **34 cycles**: one to take absolute
//!   values, 32 of restoring division (one quotient bit each), one to
//!   restore the signs.

use rust_hdl::prelude::*;

/// Multiplies and divides one operation at a time.
///
/// The pipeline raises `start` with the operands and funct3 (0 `mul`,
/// 1 `mulh`, 2 `mulhsu`, 3 `mulhu`, 4 `div`, 5 `divu`, 6 `rem`, 7 `remu`)
/// while `idle`; `ready` then rises with `result` and stays until `take`.
/// `abort` drops the operation (the instruction was flushed).
///
/// Signed high products use the unsigned product of the same bit
/// patterns, minus `b` if `a` is negative and minus `a` if `b` is negative
/// (mod 2^32), which needs no 64-bit negation. Division by zero and the
/// signed overflow `-2^31 / -1` give Table 7.1's results: the restoring
/// loop already yields an all-ones quotient and the dividend as remainder
/// for a zero divisor, so only the quotient's sign fix is suppressed then.
#[derive(LogicBlock, Default)]
pub struct MulDiv {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Begin the operation `funct3` on `a` and `b` (only while `idle`).
    pub start: Signal<In, Bit>,
    /// The pipeline consumes `result` in this cycle.
    pub take: Signal<In, Bit>,
    /// Drop the operation in progress.
    pub abort: Signal<In, Bit>,
    /// The operation (the M instructions' funct3).
    pub funct3: Signal<In, Bits<3>>,
    /// First operand (`rs1`).
    pub a: Signal<In, Bits<32>>,
    /// Second operand (`rs2`).
    pub b: Signal<In, Bits<32>>,
    /// No operation is in progress.
    pub idle: Signal<Out, Bit>,
    /// `result` holds the finished operation's value.
    pub ready: Signal<Out, Bit>,
    /// The result, valid while `ready`.
    pub result: Signal<Out, Bits<32>>,
    /// 0 idle, 1 multiplied (summing), 2 dividing, 3 divided.
    state: DFF<Bits<2>>,
    op: DFF<Bits<3>>,
    pp_ll: DFF<Bits<32>>,
    pp_lh: DFF<Bits<32>>,
    pp_hl: DFF<Bits<32>>,
    pp_hh: DFF<Bits<32>>,
    correction: DFF<Bits<32>>,
    quotient: DFF<Bits<32>>,
    remainder: DFF<Bits<32>>,
    divisor: DFF<Bits<32>>,
    count: DFF<Bits<5>>,
    negate_quotient: DFF<Bit>,
    negate_remainder: DFF<Bit>,
    mid: Signal<Local, Bits<32>>,
    mid_carry: Signal<Local, Bit>,
    low: Signal<Local, Bits<32>>,
    low_carry: Signal<Local, Bit>,
    high: Signal<Local, Bits<32>>,
    shifted: Signal<Local, Bits<32>>,
    fits: Signal<Local, Bit>,
    signed_div: Signal<Local, Bit>,
}

impl Logic for MulDiv {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            op,
            pp_ll,
            pp_lh,
            pp_hl,
            pp_hh,
            correction,
            quotient,
            remainder,
            divisor,
            count,
            negate_quotient,
            negate_remainder
        );
        // Summing the partial products (Unprivileged §7.1).
        self.mid.next = self.pp_lh.q.val() + self.pp_hl.q.val();
        self.mid_carry.next = self.mid.val() < self.pp_lh.q.val();
        self.low.next = self.pp_ll.q.val() + (self.mid.val() << 16);
        self.low_carry.next = self.low.val() < self.pp_ll.q.val();
        self.high.next = self.pp_hh.q.val()
            + (self.mid.val() >> 16)
            + (bit_cast::<32, 1>((self.mid_carry.val()).into()) << 16)
            + bit_cast::<32, 1>((self.low_carry.val()).into())
            - self.correction.q.val();
        // One step of restoring division; `fits` is the quotient bit. The
        // remainder's bit 31 shifted out makes the shifted value >= 2^32 > divisor.
        self.shifted.next = (self.remainder.q.val() << 1)
            | bit_cast::<32, 1>(self.quotient.q.val().get_bits::<1>(31));
        self.fits.next =
            self.remainder.q.val().get_bit(31) || (self.shifted.val() >= self.divisor.q.val());
        self.signed_div.next = !self.funct3.val().get_bit(0);

        self.idle.next = self.state.q.val() == 0;
        self.ready.next = self.state.q.val() == 1 || self.state.q.val() == 3;
        self.result.next = self.high.val();
        if self.op.q.val() == 0 {
            self.result.next = self.low.val();
        }
        if self.op.q.val().get_bit(2) {
            if self.op.q.val().get_bit(1) {
                self.result.next = self.remainder.q.val();
                if self.negate_remainder.q.val() {
                    self.result.next = !self.remainder.q.val() + 1;
                }
            } else {
                self.result.next = self.quotient.q.val();
                if self.negate_quotient.q.val() {
                    self.result.next = !self.quotient.q.val() + 1;
                }
            }
        }

        if self.state.q.val() == 2 {
            self.remainder.d.next = self.shifted.val();
            if self.fits.val() {
                self.remainder.d.next = self.shifted.val() - self.divisor.q.val();
            }
            self.quotient.d.next =
                (self.quotient.q.val() << 1) | bit_cast::<32, 1>((self.fits.val()).into());
            self.count.d.next = self.count.q.val() + 1;
            if self.count.q.val().all() {
                self.state.d.next = bits::<2>(3);
            }
        }
        if self.start.val() && self.state.q.val() == 0 {
            self.op.d.next = self.funct3.val();
            if self.funct3.val().get_bit(2) {
                self.state.d.next = bits::<2>(2);
                self.count.d.next = bits::<5>(0);
                self.remainder.d.next = bits::<32>(0);
                self.quotient.d.next = self.a.val();
                if self.signed_div.val() && self.a.val().get_bit(31) {
                    self.quotient.d.next = !self.a.val() + 1;
                }
                self.divisor.d.next = self.b.val();
                if self.signed_div.val() && self.b.val().get_bit(31) {
                    self.divisor.d.next = !self.b.val() + 1;
                }
                self.negate_quotient.d.next = self.signed_div.val()
                    && (self.a.val().get_bit(31) != self.b.val().get_bit(31))
                    && self.b.val().any();
                self.negate_remainder.d.next = self.signed_div.val() && self.a.val().get_bit(31);
            } else {
                self.state.d.next = bits::<2>(1);
                self.pp_ll.d.next = self.a.val().get_bits::<16>(0) * self.b.val().get_bits::<16>(0);
                self.pp_lh.d.next =
                    self.a.val().get_bits::<16>(0) * self.b.val().get_bits::<16>(16);
                self.pp_hl.d.next =
                    self.a.val().get_bits::<16>(16) * self.b.val().get_bits::<16>(0);
                self.pp_hh.d.next =
                    self.a.val().get_bits::<16>(16) * self.b.val().get_bits::<16>(16);
                // mulh: both operands signed; mulhsu: only a.
                self.correction.d.next = bits::<32>(0);
                if self.a.val().get_bit(31) && (self.funct3.val() == 1 || self.funct3.val() == 2) {
                    self.correction.d.next = self.b.val();
                    if self.b.val().get_bit(31) && self.funct3.val() == 1 {
                        self.correction.d.next = self.a.val() + self.b.val();
                    }
                } else if self.b.val().get_bit(31) && self.funct3.val() == 1 {
                    self.correction.d.next = self.a.val();
                }
            }
        }
        if self.take.val() {
            self.state.d.next = bits::<2>(0);
        }
        if self.abort.val() {
            self.state.d.next = bits::<2>(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::driver::CycleDriver;

    /// The M instructions' results, from Unprivileged 20191213 §7.1–§7.2
    /// and Table 7.1, computed with host arithmetic.
    fn reference(funct3: u32, a: u32, b: u32) -> u32 {
        let (sa, sb) = (i64::from(a as i32), i64::from(b as i32));
        let (ua, ub) = (u64::from(a), u64::from(b));
        match funct3 {
            0 => a.wrapping_mul(b),
            1 => ((sa * sb) >> 32) as u32,
            2 => ((sa * ub as i64) >> 32) as u32,
            3 => ((ua * ub) >> 32) as u32,
            4 if b == 0 => u32::MAX,
            4 => (a as i32).wrapping_div(b as i32) as u32,
            5 => a.checked_div(b).unwrap_or(u32::MAX),
            6 if b == 0 => a,
            6 => (a as i32).wrapping_rem(b as i32) as u32,
            _ => a.checked_rem(b).unwrap_or(a),
        }
    }

    /// Runs one operation; returns the result and the cycles from `start`
    /// to `ready`.
    fn run(d: &mut CycleDriver<MulDiv>, funct3: u32, a: u32, b: u32) -> (u32, u32) {
        let m = d.block();
        m.funct3.next = bits(u64::from(funct3));
        m.a.next = bits(u64::from(a));
        m.b.next = bits(u64::from(b));
        m.start.next = true;
        d.tick().expect("settles");
        d.block().start.next = false;
        let mut cycles = 1;
        d.settle().expect("settles");
        while !d.block().ready.val() {
            d.tick().expect("settles");
            cycles += 1;
        }
        let result = d.block().result.val().to_u32();
        d.block().take.next = true;
        d.tick().expect("settles");
        d.block().take.next = false;
        (result, cycles)
    }

    #[test]
    fn table_7_1_corner_cases_and_latency() {
        let mut d = CycleDriver::new(MulDiv::default(), |m| &mut m.clock).expect("well formed");
        let min = 0x8000_0000;
        for (f3, a, b) in [
            (4, 7, 0),
            (5, 7, 0),
            (6, 7, 0),
            (7, 7, 0),
            (4, min, u32::MAX),
            (6, min, u32::MAX),
            (1, min, min),
            (2, u32::MAX, u32::MAX),
        ] {
            assert_eq!(
                run(&mut d, f3, a, b).0,
                reference(f3, a, b),
                "funct3 {f3} {a:#x} {b:#x}"
            );
        }
        // The documented latencies: result ready 1 cycle after start for
        // multiplies, 33 for divides (2 and 34 cycles in EX).
        assert_eq!(run(&mut d, 0, 3, 5), (15, 1));
        assert_eq!(run(&mut d, 5, 100, 7), (14, 33));
    }

    proptest! {
        #[test]
        fn results_match_the_isa(ops in prop::collection::vec((0u32..8, any::<u32>(), any::<u32>()), 1..16)) {
            let mut d = CycleDriver::new(MulDiv::default(), |m| &mut m.clock).expect("well formed");
            for (f3, a, b) in ops {
                prop_assert_eq!(run(&mut d, f3, a, b).0, reference(f3, a, b), "funct3 {} {:#x} {:#x}", f3, a, b);
            }
        }
    }
}
