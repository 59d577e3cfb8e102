//! An asynchronous serial line (8 data bits, no parity, 1 stop bit: "8N1")
//! for the UART's byte streams: a board puts a [`SerialTransmitter`] after
//! the SoC's `tx_*` stream and a [`SerialReceiver`] before its `rx_*`.
//!
//! A frame is a start bit (0), the eight data bits least significant
//! first, and a stop bit (1); the idle line is 1. Each bit lasts
//! `cycles_per_bit` clock cycles, the clock frequency divided by the baud
//! rate, fixed when the block is built.

use rust_hdl::prelude::*;

/// Sends each byte of a valid/ready stream as an 8N1 frame on `txd`.
#[derive(LogicBlock)]
pub struct SerialTransmitter {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// The byte to send.
    pub data: Signal<In, Bits<8>>,
    /// `data` holds a byte.
    pub valid: Signal<In, Bit>,
    /// The transmitter takes `data` at this edge (it is idle).
    pub ready: Signal<Out, Bit>,
    /// The serial line.
    pub txd: Signal<Out, Bit>,
    busy: DFF<Bit>,
    frame: DFF<Bits<10>>,
    bits_left: DFF<Bits<4>>,
    count: DFF<Bits<16>>,
    last_count: Constant<Bits<16>>,
    stop_bit: Constant<Bits<10>>,
}

/// `cycles_per_bit - 1` as the counters' reload value.
///
/// # Panics
/// If `cycles_per_bit` is 0 or above 65 536.
fn reload(cycles_per_bit: u32) -> Constant<Bits<16>> {
    assert!(
        (1..=1 << 16).contains(&cycles_per_bit),
        "a bit lasts 1 to 65536 clock cycles, not {cycles_per_bit}"
    );
    Constant::new(bits(u64::from(cycles_per_bit - 1)))
}

impl SerialTransmitter {
    /// A transmitter whose bits last `cycles_per_bit` clock cycles.
    ///
    /// # Panics
    /// If `cycles_per_bit` is 0 or above 65 536.
    pub fn new(cycles_per_bit: u32) -> Self {
        Self {
            clock: Default::default(),
            data: Default::default(),
            valid: Default::default(),
            ready: Default::default(),
            txd: Default::default(),
            busy: Default::default(),
            frame: Default::default(),
            bits_left: Default::default(),
            count: Default::default(),
            last_count: reload(cycles_per_bit),
            stop_bit: Constant::new(bits(1 << 9)),
        }
    }
}

impl Logic for SerialTransmitter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, frame, bits_left, count);
        self.ready.next = !self.busy.q.val();
        self.txd.next = true;
        if self.busy.q.val() {
            self.txd.next = self.frame.q.val().get_bit(0);
            if self.count.q.val() == 0 {
                self.count.d.next = self.last_count.val();
                self.frame.d.next = self.frame.q.val() >> 1;
                self.bits_left.d.next = self.bits_left.q.val() - 1;
                if self.bits_left.q.val() == 0 {
                    self.busy.d.next = false;
                }
            } else {
                self.count.d.next = self.count.q.val() - 1;
            }
        } else if self.valid.val() {
            // Stop bit, data, start bit (0), sent from bit 0 up.
            self.frame.d.next = self.stop_bit.val() | (bit_cast::<10, 8>(self.data.val()) << 1);
            self.bits_left.d.next = 9.into();
            self.count.d.next = self.last_count.val();
            self.busy.d.next = true;
        }
    }
}

/// Receives 8N1 frames from `rxd` into a byte stream: each good frame's
/// byte is on `data` with `valid` high for one cycle, after the middle of
/// its stop bit.
///
/// `rxd` passes a two-flop synchroniser. A start bit is checked at its
/// middle (a shorter glitch is ignored) and each data bit sampled at its
/// middle; a frame whose stop bit reads 0 (a framing error, or a break) is
/// dropped. There is no back-pressure: a serial line cannot wait, so a
/// byte the UART's full receive FIFO cannot take is lost.
#[derive(LogicBlock)]
pub struct SerialReceiver {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// The serial line.
    pub rxd: Signal<In, Bit>,
    /// The byte received.
    pub data: Signal<Out, Bits<8>>,
    /// `data` holds a new byte in this cycle.
    pub valid: Signal<Out, Bit>,
    meta: DFF<Bit>,
    line: DFF<Bit>,
    busy: DFF<Bit>,
    shift: DFF<Bits<8>>,
    bits_seen: DFF<Bits<4>>,
    count: DFF<Bits<16>>,
    received: DFF<Bit>,
    last_count: Constant<Bits<16>>,
    half_count: Constant<Bits<16>>,
}

impl SerialReceiver {
    /// A receiver for bits of `cycles_per_bit` clock cycles.
    ///
    /// # Panics
    /// If `cycles_per_bit` is 0 or above 65 536.
    pub fn new(cycles_per_bit: u32) -> Self {
        Self {
            clock: Default::default(),
            rxd: Default::default(),
            data: Default::default(),
            valid: Default::default(),
            meta: Default::default(),
            line: Default::default(),
            busy: Default::default(),
            shift: Default::default(),
            bits_seen: Default::default(),
            count: Default::default(),
            received: Default::default(),
            last_count: reload(cycles_per_bit),
            half_count: Constant::new(bits(u64::from((cycles_per_bit - 1) / 2))),
        }
    }
}

impl Logic for SerialReceiver {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, meta, line, busy, shift, bits_seen, count, received);
        self.meta.d.next = self.rxd.val();
        self.line.d.next = self.meta.q.val();
        self.data.next = self.shift.q.val();
        self.valid.next = self.received.q.val();
        self.received.d.next = false;
        if !self.busy.q.val() {
            // The falling edge of a start bit: wait half a bit to its middle.
            if !self.line.q.val() {
                self.busy.d.next = true;
                self.bits_seen.d.next = 0.into();
                self.count.d.next = self.half_count.val();
            }
        } else if self.count.q.val() == 0 {
            // The middle of a bit: 0 the start bit, 1–8 data, 9 the stop bit.
            self.count.d.next = self.last_count.val();
            self.bits_seen.d.next = self.bits_seen.q.val() + 1;
            if self.bits_seen.q.val() == 0 {
                if self.line.q.val() {
                    self.busy.d.next = false;
                }
            } else if self.bits_seen.q.val() == 9 {
                self.busy.d.next = false;
                self.received.d.next = self.line.q.val();
            } else {
                self.shift.d.next =
                    (self.shift.q.val() >> 1) | (bit_cast::<8, 1>(self.line.q.val().into()) << 7);
            }
        } else {
            self.count.d.next = self.count.q.val() - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::CycleDriver;

    /// The line levels of an 8N1 frame of `byte`, one per bit, from the
    /// definition: start 0, data least significant bit first, stop 1.
    fn frame_bits(byte: u8) -> Vec<bool> {
        std::iter::once(false)
            .chain((0..8).map(|i| byte >> i & 1 == 1))
            .chain(std::iter::once(true))
            .collect()
    }

    #[test]
    fn the_transmitter_sends_start_data_lsb_first_and_stop_bits() {
        let cycles_per_bit = 5;
        let mut d = CycleDriver::new(SerialTransmitter::new(cycles_per_bit), |t| &mut t.clock)
            .expect("transmitter builds");
        d.settle().expect("settles");
        assert!(d.block().txd.val(), "the idle line is 1");
        d.block().data.next = bits(0xA6);
        d.block().valid.next = true;
        d.tick().expect("settles");
        d.block().valid.next = false;
        let mut line = Vec::new();
        for _ in 0..10 * cycles_per_bit {
            d.settle().expect("settles");
            line.push(d.block().txd.val());
            assert!(!d.block().ready.val(), "busy for the whole frame");
            d.tick().expect("settles");
        }
        let expected: Vec<bool> = frame_bits(0xA6)
            .into_iter()
            .flat_map(|b| std::iter::repeat_n(b, cycles_per_bit as usize))
            .collect();
        assert_eq!(line, expected);
        d.settle().expect("settles");
        assert!(d.block().ready.val() && d.block().txd.val(), "idle again");
    }

    /// Bytes through a transmitter into a receiver; returns what arrived.
    fn loop_back(bytes: &[u8], cycles_per_bit: u32) -> Vec<u8> {
        let mut tx = CycleDriver::new(SerialTransmitter::new(cycles_per_bit), |t| &mut t.clock)
            .expect("transmitter builds");
        let mut rx = CycleDriver::new(SerialReceiver::new(cycles_per_bit), |r| &mut r.clock)
            .expect("receiver builds");
        let mut pending = bytes.iter().copied().peekable();
        let mut got = Vec::new();
        let total = (bytes.len() as u32 + 2) * 11 * cycles_per_bit + 20;
        for _ in 0..total {
            tx.block().valid.next = pending.peek().is_some();
            tx.block().data.next = bits(u64::from(pending.peek().copied().unwrap_or(0)));
            tx.settle().expect("settles");
            if tx.block().ready.val() && pending.peek().is_some() {
                pending.next();
            }
            rx.block().rxd.next = tx.block().txd.val();
            rx.settle().expect("settles");
            if rx.block().valid.val() {
                got.push(rx.block().data.val().to_u32() as u8);
            }
            tx.tick().expect("settles");
            rx.tick().expect("settles");
        }
        got
    }

    #[test]
    fn bytes_loop_back_through_transmitter_and_receiver() {
        let bytes: Vec<u8> = (0..=255).step_by(7).chain([0x00, 0xFF, 0x55]).collect();
        for cycles_per_bit in [3, 8, 17] {
            assert_eq!(
                loop_back(&bytes, cycles_per_bit),
                bytes,
                "{cycles_per_bit} cycles/bit"
            );
        }
    }

    /// The bytes a receiver makes of the line levels `line`, one per cycle.
    fn receive(line: &[bool], cycles_per_bit: u32) -> Vec<u8> {
        let mut rx = CycleDriver::new(SerialReceiver::new(cycles_per_bit), |r| &mut r.clock)
            .expect("receiver builds");
        let mut got = Vec::new();
        for &level in line {
            rx.block().rxd.next = level;
            rx.settle().expect("settles");
            if rx.block().valid.val() {
                got.push(rx.block().data.val().to_u32() as u8);
            }
            rx.tick().expect("settles");
        }
        got
    }

    /// Line levels: idle, the frame bits given, idle.
    fn line(frame: &[bool], cycles_per_bit: u32) -> Vec<bool> {
        let idle = std::iter::repeat_n(true, 3 * cycles_per_bit as usize);
        idle.clone()
            .chain(
                frame
                    .iter()
                    .flat_map(|&b| std::iter::repeat_n(b, cycles_per_bit as usize)),
            )
            .chain(idle)
            .collect()
    }

    #[test]
    fn a_glitch_shorter_than_half_a_bit_is_not_a_start_bit() {
        let mut levels = line(&frame_bits(0x3C), 16);
        levels[5] = false;
        assert_eq!(
            receive(&levels, 16),
            [0x3C],
            "the glitch made no byte, the frame one"
        );
    }

    #[test]
    fn a_frame_whose_stop_bit_is_0_is_dropped() {
        let mut bad = frame_bits(0x3C);
        bad[9] = false;
        let mut levels = line(&bad, 8);
        levels.extend(line(&frame_bits(0x81), 8));
        assert_eq!(receive(&levels, 8), [0x81]);
    }
}
