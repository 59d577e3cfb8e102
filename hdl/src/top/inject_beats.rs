//! The injector's TLP, one DW per cycle, gathered into beats of the TLP stream for its egress.
//!
//! [`crate::management::Inject`] sends the TLP the CPU wrote one DW per
//! cycle in wire order (PCIe Base 6.0 §2.2.1). [`InjectBeats`] gathers its
//! header DWs (3 or 4, by Fmt) and then up to `W / 32` payload DWs per
//! beat, first DW most significant (`crate::stream`), and offers each beat
//! once it is full or the TLP's last DW is in, with the egress port the
//! TLP was sent to. It takes no DW while a beat waits, so the injector
//! holds back; the port is kept from the TLP's first DW, so a new SEND
//! cannot redirect a TLP still leaving.

use rust_hdl::prelude::*;

use crate::management::PORT_BITS;
use crate::stream::{TlpSource, EMPTY_BITS};

/// Bits of a DW position in the injected TLP (at most `inject::TLP_DWORDS`).
const POSITION_BITS: usize = 8;

/// Bits of a payload DW's bit offset in the beat, `32 × DW`: up to 992 for
/// a 1024-bit bus, past what a position holds (a DW offset of 15 shifted
/// by 5 in 8 bits wrapped to 224 on the 512-bit bus).
const SHIFT_BITS: usize = 16;

/// Gathers a TLP arriving one DW per cycle into `W`-bit beats.
#[derive(LogicBlock)]
pub struct InjectBeats<const W: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// A DW is offered (`Inject::valid`).
    pub valid: Signal<In, Bit>,
    /// It is taken at this clock edge.
    pub ready: Signal<Out, Bit>,
    /// The DW, in wire order.
    pub dw: Signal<In, Bits<32>>,
    /// It is the TLP's last.
    pub last: Signal<In, Bit>,
    /// The TLP's egress port (`Inject::port`), taken with its first DW.
    pub port_in: Signal<In, Bits<PORT_BITS>>,
    /// The TLP's beats.
    pub beats: TlpSource<W>,
    /// The egress port of the TLP on `beats`.
    pub port: Signal<Out, Bits<PORT_BITS>>,
    dw0: DFF<Bits<32>>,
    dw1: DFF<Bits<32>>,
    dw2: DFF<Bits<32>>,
    dw3: DFF<Bits<32>>,
    payload: DFF<Bits<W>>,
    position: DFF<Bits<POSITION_BITS>>,
    fill: DFF<Bits<POSITION_BITS>>,
    four_dw: DFF<Bit>,
    full: DFF<Bit>,
    first: DFF<Bit>,
    final_beat: DFF<Bit>,
    port_reg: DFF<Bits<PORT_BITS>>,
    beat_dws: Constant<Bits<POSITION_BITS>>,
    last_dw: Constant<Bits<POSITION_BITS>>,
    accept: Signal<Local, Bit>,
    header: Signal<Local, Bit>,
}

impl<const W: usize> Default for InjectBeats<W> {
    fn default() -> Self {
        assert!(
            W.is_multiple_of(32) && W / 32 < 1 << EMPTY_BITS,
            "a payload bus of whole DWs"
        );
        InjectBeats {
            clock: Default::default(),
            valid: Default::default(),
            ready: Default::default(),
            dw: Default::default(),
            last: Default::default(),
            port_in: Default::default(),
            beats: Default::default(),
            port: Default::default(),
            dw0: Default::default(),
            dw1: Default::default(),
            dw2: Default::default(),
            dw3: Default::default(),
            payload: Default::default(),
            position: Default::default(),
            fill: Default::default(),
            four_dw: Default::default(),
            full: Default::default(),
            first: Default::default(),
            final_beat: Default::default(),
            port_reg: Default::default(),
            beat_dws: Constant::new((W / 32).to_bits()),
            last_dw: Constant::new((W / 32 - 1).to_bits()),
            accept: Default::default(),
            header: Default::default(),
        }
    }
}

impl<const W: usize> Logic for InjectBeats<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, dw0, dw1, dw2, dw3, payload, position, fill, four_dw, full, first,
            final_beat, port_reg
        );
        self.ready.next = !self.full.q.val();
        self.accept.next = self.valid.val() & !self.full.q.val();
        // Fmt[0] (DW0 bit 29): a 4 DW header.
        self.header.next =
            (self.position.q.val() < 3) | ((self.position.q.val() == 3) & self.four_dw.q.val());
        if self.accept.val() {
            self.position.d.next = self.position.q.val() + 1;
            if self.position.q.val() == 0 {
                self.dw0.d.next = self.dw.val();
                self.dw1.d.next = bits::<32>(0);
                self.dw2.d.next = bits::<32>(0);
                self.dw3.d.next = bits::<32>(0);
                self.four_dw.d.next = self.dw.val().get_bit(29);
                self.port_reg.d.next = self.port_in.val();
                self.first.d.next = true;
            }
            if self.position.q.val() == 1 {
                self.dw1.d.next = self.dw.val();
            }
            if self.position.q.val() == 2 {
                self.dw2.d.next = self.dw.val();
            }
            if (self.position.q.val() == 3) & self.four_dw.q.val() {
                self.dw3.d.next = self.dw.val();
            }
            if !self.header.val() {
                self.payload.d.next = self.payload.q.val()
                    | (bit_cast::<W, 32>(self.dw.val())
                        << (bit_cast::<SHIFT_BITS, POSITION_BITS>(
                            self.last_dw.val() - self.fill.q.val(),
                        ) << 5));
                self.fill.d.next = self.fill.q.val() + 1;
                if self.fill.q.val() == self.last_dw.val() {
                    self.full.d.next = true;
                }
            }
            if self.last.val() {
                self.full.d.next = true;
                self.final_beat.d.next = true;
                self.position.d.next = bits::<POSITION_BITS>(0);
            }
        }

        // The beat gathered, until the egress takes it.
        self.beats.valid.next = self.full.q.val();
        self.beats.sop.next = self.first.q.val();
        self.beats.eop.next = self.final_beat.q.val();
        self.beats.empty.next = bits::<EMPTY_BITS>(0);
        self.beats.nullify.next = false;
        if self.final_beat.q.val() {
            self.beats.empty.next =
                bit_cast::<EMPTY_BITS, POSITION_BITS>(self.beat_dws.val() - self.fill.q.val());
        }
        self.beats.dw0.next = self.dw0.q.val();
        self.beats.dw1.next = self.dw1.q.val();
        self.beats.dw2.next = self.dw2.q.val();
        self.beats.dw3.next = self.dw3.q.val();
        self.beats.payload.next = self.payload.q.val();
        self.port.next = self.port_reg.q.val();
        if self.full.q.val() & self.beats.ready.val() {
            self.full.d.next = false;
            self.first.d.next = false;
            self.final_beat.d.next = false;
            self.fill.d.next = bits::<POSITION_BITS>(0);
            self.payload.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::CycleDriver;

    /// The payload DWs of the one beat a TLP of `payload_dws` DWs makes on
    /// a `W`-bit bus, in wire order, as the beat's `empty` says.
    fn gathered<const W: usize>(payload_dws: u32) -> Vec<u32> {
        let mut d = CycleDriver::new(InjectBeats::<W>::default(), |b| &mut b.clock)
            .expect("the gatherer builds");
        // A completion with data (Fmt 010b, Type 01010b), then its payload.
        let header = [0x4a00_0000 | payload_dws, 0x0000_0004, 0];
        let payload: Vec<u32> = (0..payload_dws).map(|i| 0xd000_0000 | i).collect();
        let words: Vec<u32> = header.iter().chain(&payload).copied().collect();
        d.block().beats.ready.next = false;
        for (i, &word) in words.iter().enumerate() {
            d.block().valid.next = true;
            d.block().dw.next = bits(u64::from(word));
            d.block().last.next = i + 1 == words.len();
            d.tick().expect("settles");
        }
        d.block().valid.next = false;
        d.settle().expect("settles");
        let beats = &d.block_ref().beats;
        assert!(beats.valid.val() && beats.sop.val() && beats.eop.val());
        let used = W / 32 - beats.empty.val().index();
        (0..used)
            .map(|dw| {
                let at = W - 32 * (dw + 1);
                (0..32).fold(0u32, |v, b| {
                    v | u32::from(beats.payload.val().get_bit(at + b)) << b
                })
            })
            .collect()
    }

    #[test]
    fn payload_dws_take_their_wire_order_places_on_every_bus_width() {
        let expected = |n: u32| (0..n).map(|i| 0xd000_0000 | i).collect::<Vec<_>>();
        assert_eq!(gathered::<128>(4), expected(4));
        assert_eq!(gathered::<256>(8), expected(8));
        // On the reference 512-bit bus the first DW's offset (480) did not
        // fit the 8-bit position it was shifted in, and landed at 224.
        assert_eq!(gathered::<512>(1), expected(1));
        assert_eq!(gathered::<512>(16), expected(16));
    }
}
