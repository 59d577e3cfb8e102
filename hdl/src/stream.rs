//! The TLP stream: the one interface every data plane block speaks.
//!
//! One beat per clock when `valid` and `ready` are both high. The first beat
//! of a TLP (`sop`) carries its header as four 32-bit DWs beside the
//! payload, in wire order (DW0 holds Fmt/Type); the header DWs of other
//! beats are don't-care. The payload is one bus of `W` bits holding
//! `W / 32` DWs, the first DW in the most significant 32 bits (wire
//! order again); the last beat (`eop`) says how many of its DWs at the
//! least significant end are empty. A header-only TLP is one beat with
//! `sop`, `eop` and every payload DW empty. A last beat may also say
//! `nullify`: the TLP is void, and its receiver discards all of it, as a
//! link partner discards a nullified TLP (ended with EDB and an inverted
//! LCRC: a switch in cut-through mode voids so a TLP found bad after its
//! first beats left, PCIe Base 6.0 §3.6, Data Integrity Mechanisms).
//!
//! Header fields travel as separate 32-bit signals, which rust-hdl computes
//! on in machine words; the payload, which blocks only move, stays one wide
//! bus (DESIGN.md, "Data plane").

use rust_hdl::prelude::*;

/// Bits of the empty-DW count: enough for a payload bus of up to 1024 bits (32 DWs).
pub const EMPTY_BITS: usize = 5;

pub use interface::{TlpSink, TlpSource};

/// The stream's two sides. rust-hdl's `LogicInterface` derive adds `join`
/// and `link` methods without doc comments, hence the allowance here.
#[allow(missing_docs)]
mod interface {
    use super::EMPTY_BITS;
    use rust_hdl::prelude::*;

    /// The producing side of a TLP stream.
    #[derive(Clone, Debug, Default, LogicInterface)]
    #[join = "TlpSink"]
    pub struct TlpSource<const W: usize> {
        /// A beat is offered.
        pub valid: Signal<Out, Bit>,
        /// The consumer takes the beat offered in this cycle.
        pub ready: Signal<In, Bit>,
        /// First beat of a TLP: the header DWs are meaningful.
        pub sop: Signal<Out, Bit>,
        /// Last beat of a TLP.
        pub eop: Signal<Out, Bit>,
        /// On the last beat: payload DWs at the least significant end that carry nothing.
        pub empty: Signal<Out, Bits<EMPTY_BITS>>,
        /// On the last beat: the TLP is void, to be discarded whole.
        pub nullify: Signal<Out, Bit>,
        /// Header DW0 (Fmt, Type, TC, attributes, Length).
        pub dw0: Signal<Out, Bits<32>>,
        /// Header DW1.
        pub dw1: Signal<Out, Bits<32>>,
        /// Header DW2.
        pub dw2: Signal<Out, Bits<32>>,
        /// Header DW3 (meaningful for 4 DW headers).
        pub dw3: Signal<Out, Bits<32>>,
        /// Payload, first DW most significant.
        pub payload: Signal<Out, Bits<W>>,
    }

    /// The consuming side of a TLP stream.
    #[derive(Clone, Debug, Default, LogicInterface)]
    #[join = "TlpSource"]
    pub struct TlpSink<const W: usize> {
        /// A beat is offered.
        pub valid: Signal<In, Bit>,
        /// This block takes the beat offered in this cycle.
        pub ready: Signal<Out, Bit>,
        /// First beat of a TLP.
        pub sop: Signal<In, Bit>,
        /// Last beat of a TLP.
        pub eop: Signal<In, Bit>,
        /// On the last beat: empty payload DWs at the least significant end.
        pub empty: Signal<In, Bits<EMPTY_BITS>>,
        /// On the last beat: the TLP is void, to be discarded whole.
        pub nullify: Signal<In, Bit>,
        /// Header DW0.
        pub dw0: Signal<In, Bits<32>>,
        /// Header DW1.
        pub dw1: Signal<In, Bits<32>>,
        /// Header DW2.
        pub dw2: Signal<In, Bits<32>>,
        /// Header DW3.
        pub dw3: Signal<In, Bits<32>>,
        /// Payload, first DW most significant.
        pub payload: Signal<In, Bits<W>>,
    }
}

/// A full-throughput register slice for the TLP stream (a skid buffer).
///
/// It registers every output and `ready`, so long paths can be cut between
/// blocks without losing a cycle per beat: while the consumer stalls, one
/// beat already accepted waits in the skid register.
#[derive(LogicBlock, Default)]
pub struct TlpRegisterSlice<const W: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Beats in.
    pub upstream: TlpSink<W>,
    /// Beats out, one cycle later at the earliest.
    pub downstream: TlpSource<W>,
    main_valid: DFF<Bit>,
    main_sop: DFF<Bit>,
    main_eop: DFF<Bit>,
    main_empty: DFF<Bits<EMPTY_BITS>>,
    main_nullify: DFF<Bit>,
    main_dw0: DFF<Bits<32>>,
    main_dw1: DFF<Bits<32>>,
    main_dw2: DFF<Bits<32>>,
    main_dw3: DFF<Bits<32>>,
    main_payload: DFF<Bits<W>>,
    skid_valid: DFF<Bit>,
    skid_sop: DFF<Bit>,
    skid_eop: DFF<Bit>,
    skid_empty: DFF<Bits<EMPTY_BITS>>,
    skid_nullify: DFF<Bit>,
    skid_dw0: DFF<Bits<32>>,
    skid_dw1: DFF<Bits<32>>,
    skid_dw2: DFF<Bits<32>>,
    skid_dw3: DFF<Bits<32>>,
    skid_payload: DFF<Bits<W>>,
    main_advances: Signal<Local, Bit>,
}

impl<const W: usize> Logic for TlpRegisterSlice<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            main_valid,
            main_sop,
            main_eop,
            main_empty,
            main_nullify,
            main_dw0,
            main_dw1,
            main_dw2,
            main_dw3,
            main_payload,
            skid_valid,
            skid_sop,
            skid_eop,
            skid_empty,
            skid_nullify,
            skid_dw0,
            skid_dw1,
            skid_dw2,
            skid_dw3,
            skid_payload
        );
        // The input is taken whenever the skid register is free.
        self.upstream.ready.next = !self.skid_valid.q.val();
        self.downstream.valid.next = self.main_valid.q.val();
        self.downstream.sop.next = self.main_sop.q.val();
        self.downstream.eop.next = self.main_eop.q.val();
        self.downstream.empty.next = self.main_empty.q.val();
        self.downstream.nullify.next = self.main_nullify.q.val();
        self.downstream.dw0.next = self.main_dw0.q.val();
        self.downstream.dw1.next = self.main_dw1.q.val();
        self.downstream.dw2.next = self.main_dw2.q.val();
        self.downstream.dw3.next = self.main_dw3.q.val();
        self.downstream.payload.next = self.main_payload.q.val();

        // The main register advances when its beat leaves or it holds none,
        // taking the skid register's beat first, else the input's.
        self.main_advances.next = self.downstream.ready.val() | !self.main_valid.q.val();
        if self.main_advances.val() {
            if self.skid_valid.q.val() {
                self.main_valid.d.next = true;
                self.main_sop.d.next = self.skid_sop.q.val();
                self.main_eop.d.next = self.skid_eop.q.val();
                self.main_empty.d.next = self.skid_empty.q.val();
                self.main_nullify.d.next = self.skid_nullify.q.val();
                self.main_dw0.d.next = self.skid_dw0.q.val();
                self.main_dw1.d.next = self.skid_dw1.q.val();
                self.main_dw2.d.next = self.skid_dw2.q.val();
                self.main_dw3.d.next = self.skid_dw3.q.val();
                self.main_payload.d.next = self.skid_payload.q.val();
                self.skid_valid.d.next = false;
            } else {
                self.main_valid.d.next = self.upstream.valid.val();
                self.main_sop.d.next = self.upstream.sop.val();
                self.main_eop.d.next = self.upstream.eop.val();
                self.main_empty.d.next = self.upstream.empty.val();
                self.main_nullify.d.next = self.upstream.nullify.val();
                self.main_dw0.d.next = self.upstream.dw0.val();
                self.main_dw1.d.next = self.upstream.dw1.val();
                self.main_dw2.d.next = self.upstream.dw2.val();
                self.main_dw3.d.next = self.upstream.dw3.val();
                self.main_payload.d.next = self.upstream.payload.val();
            }
        } else if !self.skid_valid.q.val() {
            // Stalled with the skid register free: it catches the accepted beat.
            self.skid_valid.d.next = self.upstream.valid.val();
            self.skid_sop.d.next = self.upstream.sop.val();
            self.skid_eop.d.next = self.upstream.eop.val();
            self.skid_empty.d.next = self.upstream.empty.val();
            self.skid_nullify.d.next = self.upstream.nullify.val();
            self.skid_dw0.d.next = self.upstream.dw0.val();
            self.skid_dw1.d.next = self.upstream.dw1.val();
            self.skid_dw2.d.next = self.upstream.dw2.val();
            self.skid_dw3.d.next = self.upstream.dw3.val();
            self.skid_payload.d.next = self.upstream.payload.val();
        }
    }
}

/// A pipeline register for the TLP stream: one beat, one cycle of latency.
///
/// It takes a beat whenever it holds none or its beat leaves in the same
/// cycle, so a chain of them streams a beat per cycle; unlike
/// [`TlpRegisterSlice`], `ready` passes back combinationally. A block that
/// computes on a beat while it is held here (a pipeline stage beside the
/// stream) loads that computation when `upstream.ready` says the register
/// loads.
#[derive(LogicBlock, Default)]
pub struct TlpPipelineRegister<const W: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Beats in.
    pub upstream: TlpSink<W>,
    /// Beats out, one cycle later.
    pub downstream: TlpSource<W>,
    valid: DFF<Bit>,
    sop: DFF<Bit>,
    eop: DFF<Bit>,
    empty: DFF<Bits<EMPTY_BITS>>,
    nullify: DFF<Bit>,
    dw0: DFF<Bits<32>>,
    dw1: DFF<Bits<32>>,
    dw2: DFF<Bits<32>>,
    dw3: DFF<Bits<32>>,
    payload: DFF<Bits<W>>,
}

impl<const W: usize> Logic for TlpPipelineRegister<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, valid, sop, eop, empty, nullify, dw0, dw1, dw2, dw3, payload);
        self.upstream.ready.next = !self.valid.q.val() | self.downstream.ready.val();
        if self.upstream.ready.val() {
            self.valid.d.next = self.upstream.valid.val();
            self.sop.d.next = self.upstream.sop.val();
            self.eop.d.next = self.upstream.eop.val();
            self.empty.d.next = self.upstream.empty.val();
            self.nullify.d.next = self.upstream.nullify.val();
            self.dw0.d.next = self.upstream.dw0.val();
            self.dw1.d.next = self.upstream.dw1.val();
            self.dw2.d.next = self.upstream.dw2.val();
            self.dw3.d.next = self.upstream.dw3.val();
            self.payload.d.next = self.upstream.payload.val();
        }
        self.downstream.valid.next = self.valid.q.val();
        self.downstream.sop.next = self.sop.q.val();
        self.downstream.eop.next = self.eop.q.val();
        self.downstream.empty.next = self.empty.q.val();
        self.downstream.nullify.next = self.nullify.q.val();
        self.downstream.dw0.next = self.dw0.q.val();
        self.downstream.dw1.next = self.dw1.q.val();
        self.downstream.dw2.next = self.dw2.q.val();
        self.downstream.dw3.next = self.dw3.q.val();
        self.downstream.payload.next = self.payload.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::CycleDriver;

    /// One beat's contents, enough to tell beats apart.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Beat {
        sop: bool,
        eop: bool,
        nullify: bool,
        dw0: u64,
        payload: u64,
    }

    fn beat(n: u64) -> Beat {
        Beat {
            sop: n.is_multiple_of(3),
            eop: n % 3 == 2,
            nullify: n % 7 == 2,
            dw0: n,
            payload: n.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        }
    }

    /// The two register blocks, for tests that run either.
    trait Stage: Block + Default {
        fn clock(&mut self) -> &mut Signal<In, Clock>;
        fn ends(&mut self) -> (&mut TlpSink<64>, &mut TlpSource<64>);
    }

    impl Stage for TlpRegisterSlice<64> {
        fn clock(&mut self) -> &mut Signal<In, Clock> {
            &mut self.clock
        }
        fn ends(&mut self) -> (&mut TlpSink<64>, &mut TlpSource<64>) {
            (&mut self.upstream, &mut self.downstream)
        }
    }

    impl Stage for TlpPipelineRegister<64> {
        fn clock(&mut self) -> &mut Signal<In, Clock> {
            &mut self.clock
        }
        fn ends(&mut self) -> (&mut TlpSink<64>, &mut TlpSource<64>) {
            (&mut self.upstream, &mut self.downstream)
        }
    }

    /// Runs `beats` beats through a `S` with the given stall patterns and
    /// returns what came out and the cycles it took.
    fn run<S: Stage>(
        beats: u64,
        offer: impl Fn(u64) -> bool,
        accept: impl Fn(u64) -> bool,
    ) -> (Vec<Beat>, u64) {
        let mut driver = CycleDriver::new(S::default(), S::clock).expect("well formed");
        let (mut sent, mut received) = (0, Vec::new());
        let mut cycle = 0;
        while (received.len() as u64) < beats {
            assert!(
                cycle < 20 * beats + 100,
                "stream stalled: {} of {beats} beats out",
                received.len()
            );
            let (upstream, downstream) = driver.block().ends();
            let next = beat(sent);
            upstream.valid.next = sent < beats && offer(cycle);
            upstream.sop.next = next.sop;
            upstream.eop.next = next.eop;
            upstream.nullify.next = next.nullify;
            upstream.dw0.next = next.dw0.into();
            upstream.payload.next = next.payload.into();
            downstream.ready.next = accept(cycle);
            driver.settle().expect("settles");
            let (upstream, downstream) = driver.block().ends();
            if upstream.valid.val() && upstream.ready.val() {
                sent += 1;
            }
            if downstream.valid.val() && downstream.ready.val() {
                received.push(Beat {
                    sop: downstream.sop.val(),
                    eop: downstream.eop.val(),
                    nullify: downstream.nullify.val(),
                    dw0: downstream.dw0.val().to_u64(),
                    payload: downstream.payload.val().to_u64(),
                });
            }
            driver.tick().expect("settles");
            cycle += 1;
        }
        (received, cycle)
    }

    /// Both blocks stream a beat per cycle after one cycle of latency.
    fn streams_one_beat_per_cycle_when_nothing_stalls<S: Stage>() {
        let (received, cycles) = run::<S>(100, |_| true, |_| true);
        assert_eq!(received, (0..100).map(beat).collect::<Vec<_>>());
        assert_eq!(cycles, 101, "one cycle of latency, then a beat every cycle");
    }

    /// Both blocks pass every beat once, in order, whoever stalls.
    fn loses_and_repeats_nothing_under_random_stalls<S: Stage>() {
        let noise = |seed: u64| {
            move |cycle: u64| {
                (cycle.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ seed).rotate_left(17) % 5 > 1
            }
        };
        for seed in [1, 7, 1234, 99_991] {
            let (received, _) = run::<S>(300, noise(seed), noise(seed.wrapping_mul(31)));
            assert_eq!(
                received,
                (0..300).map(beat).collect::<Vec<_>>(),
                "seed {seed}"
            );
        }
    }

    #[test]
    fn a_register_slice_streams_one_beat_per_cycle_when_nothing_stalls() {
        streams_one_beat_per_cycle_when_nothing_stalls::<TlpRegisterSlice<64>>();
    }

    #[test]
    fn a_register_slice_loses_and_repeats_nothing_under_random_stalls() {
        loses_and_repeats_nothing_under_random_stalls::<TlpRegisterSlice<64>>();
    }

    #[test]
    fn a_pipeline_register_streams_one_beat_per_cycle_when_nothing_stalls() {
        streams_one_beat_per_cycle_when_nothing_stalls::<TlpPipelineRegister<64>>();
    }

    #[test]
    fn a_pipeline_register_loses_and_repeats_nothing_under_random_stalls() {
        loses_and_repeats_nothing_under_random_stalls::<TlpPipelineRegister<64>>();
    }

    #[test]
    fn a_pipeline_register_takes_no_beat_while_a_full_one_stalls() {
        let mut driver = CycleDriver::new(TlpPipelineRegister::<64>::default(), |b| &mut b.clock)
            .expect("well formed");
        let (upstream, downstream) = driver.block().ends();
        upstream.valid.next = true;
        downstream.ready.next = false;
        driver.settle().expect("settles");
        assert!(
            driver.block().upstream.ready.val(),
            "an empty register takes a beat"
        );
        driver.tick().expect("settles");
        assert!(
            !driver.block().upstream.ready.val(),
            "a full, stalled one takes none"
        );
        driver.block().downstream.ready.next = true;
        driver.settle().expect("settles");
        assert!(
            driver.block().upstream.ready.val(),
            "one whose beat leaves takes the next"
        );
    }
}
