//! The MDIO master (`weft_regs::soc::mdio`): the station management
//! entity's side of the management interface of IEEE 802.3 clause 22
//! (§22.2.4), which reads and writes the Ethernet PHY's registers.
//!
//! A frame is 64 bits (§22.2.4.5, Table 22–12): 32 preamble ones
//! (§22.2.4.5.1), the start of frame 01 (§22.2.4.5.2), the operation code
//! (10 read, 01 write, §22.2.4.5.4), the PHY address and the register
//! address, 5 bits each, most significant first (§22.2.4.5.5, .6), the
//! turnaround (§22.2.4.5.7) and 16 data bits, most significant first
//! (§22.2.4.5.8). Bit `k` runs for one MDC period: MDC low for the first
//! half, high for the second. The master drives MDIO as the period starts
//! (MDC falling), so the PHY, which samples on MDC's rising edge, sees it
//! stable for half a period before and after the edge (§22.3.4.1 asks
//! 10 ns of each). In a read the master releases MDIO after the register
//! address; the PHY drives the turnaround's second bit (a 0) and the data,
//! each within 300 ns of the rising edge that ends the bit before
//! (§22.3.4.2), and the master takes each as MDC rises at the end of its
//! period's low half, through a two-flop synchroniser. One more period,
//! MDC low and MDIO released, ends every frame (IDLE), and only then does
//! `STATUS.BUSY` clear.
//!
//! MDC's half period is `CONTROL.DIVISOR + 1` clock cycles; the reset
//! value keeps MDC at most 2.5 MHz (§22.2.2.13: a period of at least
//! 400 ns, high and low for at least 160 ns each). Between frames MDC
//! idles low and MDIO is released: the line's pull-up holds it at the
//! idle level, high impedance (§22.2.4.5). MDIO is open-drain on the
//! board: `mdio_out` is the level the master drives while
//! `mdio_out_enable` is high, and `mdio_in` the line's level, which the
//! board wrapper joins in a bidirectional buffer.

use rust_hdl::prelude::*;
use weft_regs::soc::mdio;

use crate::csr::CsrTarget;

// The COMMAND and STATUS fields and the divisor the logic below is written for.
const _: () = assert!(mdio::DATA.lsb == 0 && mdio::DATA.width == 16);
const _: () = assert!(mdio::REGISTER.lsb == 18 && mdio::PHY.lsb == 23 && mdio::WRITE.lsb == 28);
const _: () = assert!(mdio::BUSY.lsb == 0 && mdio::NO_ANSWER.lsb == 1);
const _: () = assert!(mdio::DIVISOR.lsb == 0 && mdio::DIVISOR.width == 8);
const _: () = assert!(mdio::READ_VALUE.lsb == 0 && mdio::READ_VALUE.width == 16);

/// The preamble: 32 ones (§22.2.4.5.1), the frame's bits 63:32 as the
/// shift register holds them.
const PREAMBLE: u64 = 0xFFFF_FFFF_0000_0000;
/// Start of frame 01 (§22.2.4.5.2), in the frame's bits 31:30.
const START: u32 = 0b01 << 30;
/// A write's operation code 01 (§22.2.4.5.4) and turnaround 10
/// (§22.2.4.5.7), in bits 29:28 and 17:16.
const WRITE_CODE: u32 = 0b01 << 28 | 0b10 << 16;
/// A read's operation code 10 (§22.2.4.5.4); the turnaround and data bits
/// are ones, which the master never drives (it releases MDIO for them).
const READ_CODE: u32 = 0b10 << 28 | 0x3_FFFF;
/// The last bit the master drives in a read: the register address's
/// least significant bit (preamble 32, start 2, code 2, addresses 10).
const LAST_DRIVEN_IN_READ: u64 = 45;
/// The turnaround's second bit, which the addressed PHY drives to 0 in a
/// read (§22.2.4.5.7).
const TURNAROUND_ZERO: u64 = 47;
/// The first data bit, the register's bit 15 (§22.2.4.5.8).
const FIRST_DATA: u64 = 48;
/// The frame's last bit.
const LAST_BIT: u64 = 63;
/// The idle bit after the frame (§22.2.4.5, IDLE): MDC stays low and
/// nobody drives MDIO for one more period, so a PHY that holds a read's
/// last bit up to 300 ns past its rising edge (§22.3.4.2) has let go
/// before the next frame's preamble can start.
const IDLE_BIT: u64 = 64;

/// The MDIO master of the register map's `mdio` block.
#[derive(LogicBlock)]
pub struct MdioMaster {
    /// The soft core's clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no frame, MDC low, MDIO released, `DIVISOR` at
    /// its reset value.
    pub reset: Signal<In, Bit>,
    /// The register interface.
    pub bus: CsrTarget,
    /// The management data clock to the PHY (§22.2.2.13).
    pub mdc: Signal<Out, Bit>,
    /// The level the master drives on MDIO while `mdio_out_enable` is high.
    pub mdio_out: Signal<Out, Bit>,
    /// The master drives MDIO; low, it releases the line.
    pub mdio_out_enable: Signal<Out, Bit>,
    /// MDIO's level, from the PHY's clock-free domain.
    pub mdio_in: Signal<In, Bit>,
    divisor: DFF<Bits<8>>,
    busy: DFF<Bit>,
    writing: DFF<Bit>,
    frame: DFF<Bits<64>>,
    bit_index: DFF<Bits<7>>,
    tick: DFF<Bits<8>>,
    second_half: DFF<Bit>,
    clock_high: DFF<Bit>,
    driving: DFF<Bit>,
    in_meta: DFF<Bit>,
    in_sync: DFF<Bit>,
    read_shift: DFF<Bits<16>>,
    read_value: DFF<Bits<16>>,
    no_answer: DFF<Bit>,
    read_data: DFF<Bits<32>>,
    read_valid: DFF<Bit>,
    word: Signal<Local, Bits<6>>,
    after_preamble: Signal<Local, Bits<32>>,
    control_word: Constant<Bits<6>>,
    command_word: Constant<Bits<6>>,
    status_word: Constant<Bits<6>>,
    read_data_word: Constant<Bits<6>>,
    divisor_reset: Constant<Bits<8>>,
    preamble: Constant<Bits<64>>,
    start: Constant<Bits<32>>,
    write_code: Constant<Bits<32>>,
    read_code: Constant<Bits<32>>,
    address_mask: Constant<Bits<32>>,
    data_mask: Constant<Bits<32>>,
    last_driven_in_read: Constant<Bits<7>>,
    turnaround_zero: Constant<Bits<7>>,
    first_data: Constant<Bits<7>>,
    last_bit: Constant<Bits<7>>,
    idle_bit: Constant<Bits<7>>,
}

impl MdioMaster {
    /// An MDIO master; hold `reset` for a cycle before use.
    pub fn new() -> Self {
        let word = |r: weft_regs::Register| Constant::new(bits(u64::from(r.word())));
        let word32 = |v: u32| Constant::new(bits(u64::from(v)));
        Self {
            clock: Default::default(),
            reset: Default::default(),
            bus: Default::default(),
            mdc: Default::default(),
            mdio_out: Default::default(),
            mdio_out_enable: Default::default(),
            mdio_in: Default::default(),
            divisor: Default::default(),
            busy: Default::default(),
            writing: Default::default(),
            frame: Default::default(),
            bit_index: Default::default(),
            tick: Default::default(),
            second_half: Default::default(),
            clock_high: Default::default(),
            driving: Default::default(),
            in_meta: Default::default(),
            in_sync: Default::default(),
            read_shift: Default::default(),
            read_value: Default::default(),
            no_answer: Default::default(),
            read_data: Default::default(),
            read_valid: Default::default(),
            word: Default::default(),
            after_preamble: Default::default(),
            control_word: word(mdio::CONTROL),
            command_word: word(mdio::COMMAND),
            status_word: word(mdio::STATUS),
            read_data_word: word(mdio::READ_DATA),
            divisor_reset: Constant::new(bits(u64::from(mdio::DIVISOR_RESET))),
            preamble: Constant::new(bits(PREAMBLE)),
            start: word32(START),
            write_code: word32(WRITE_CODE),
            read_code: word32(READ_CODE),
            address_mask: word32(mdio::PHY.mask() | mdio::REGISTER.mask()),
            data_mask: word32(mdio::DATA.mask()),
            last_driven_in_read: Constant::new(bits(LAST_DRIVEN_IN_READ)),
            turnaround_zero: Constant::new(bits(TURNAROUND_ZERO)),
            first_data: Constant::new(bits(FIRST_DATA)),
            last_bit: Constant::new(bits(LAST_BIT)),
            idle_bit: Constant::new(bits(IDLE_BIT)),
        }
    }

    /// Whether a frame is under way (the SoC's test bench does not skip
    /// cycles then).
    pub fn busy(&self) -> bool {
        self.busy.q.val()
    }
}

impl Default for MdioMaster {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for MdioMaster {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            divisor,
            busy,
            writing,
            frame,
            bit_index,
            tick,
            second_half,
            clock_high,
            driving,
            in_meta,
            in_sync,
            read_shift,
            read_value,
            no_answer,
            read_data,
            read_valid
        );
        self.word.next = self.bus.address.val().get_bits::<6>(2);
        self.in_meta.d.next = self.mdio_in.val();
        self.in_sync.d.next = self.in_meta.q.val();
        self.mdc.next = self.clock_high.q.val();
        self.mdio_out.next = self.frame.q.val().get_bit(63);
        self.mdio_out_enable.next = self.driving.q.val();
        // The frame after the preamble: start, code, the addresses from
        // COMMAND where Table 22-12 puts them, and a write's data.
        self.after_preamble.next = self.start.val()
            | (self.bus.write_data.val() & self.address_mask.val())
            | self.read_code.val();
        if self.bus.write_data.val().get_bit(28) {
            self.after_preamble.next = self.start.val()
                | (self.bus.write_data.val() & self.address_mask.val())
                | self.write_code.val()
                | (self.bus.write_data.val() & self.data_mask.val());
        }
        if self.busy.q.val() {
            self.tick.d.next = self.tick.q.val() - 1;
            if self.tick.q.val() == 0 {
                self.tick.d.next = self.divisor.q.val();
                self.second_half.d.next = !self.second_half.q.val();
                if !self.second_half.q.val() {
                    // MDC rises (but in the idle bit): the PHY takes the
                    // master's bit, the master the PHY's (§22.3.4.2).
                    self.clock_high.d.next = self.bit_index.q.val() != self.idle_bit.val();
                    if !self.writing.q.val() && self.bit_index.q.val() == self.turnaround_zero.val()
                    {
                        self.no_answer.d.next = self.in_sync.q.val();
                    }
                    if !self.writing.q.val()
                        && self.bit_index.q.val() >= self.first_data.val()
                        && self.bit_index.q.val() <= self.last_bit.val()
                    {
                        self.read_shift.d.next = (self.read_shift.q.val() << 1)
                            | bit_cast::<16, 1>(self.in_sync.q.val().into());
                    }
                } else {
                    // MDC falls: the next bit goes out.
                    self.clock_high.d.next = false;
                    self.frame.d.next = self.frame.q.val() << 1;
                    self.bit_index.d.next = self.bit_index.q.val() + 1;
                    if !self.writing.q.val()
                        && self.bit_index.q.val() == self.last_driven_in_read.val()
                    {
                        // The turnaround's first bit: nobody drives (§22.2.4.5.7).
                        self.driving.d.next = false;
                    }
                    if self.bit_index.q.val() == self.last_bit.val() {
                        self.driving.d.next = false;
                    }
                    if self.bit_index.q.val() == self.idle_bit.val() {
                        self.busy.d.next = false;
                        if !self.writing.q.val() {
                            self.read_value.d.next = self.read_shift.q.val();
                        }
                    }
                }
            }
        }
        if self.bus.write.val() && !self.busy.q.val() {
            if self.word.val() == self.control_word.val() {
                self.divisor.d.next = self.bus.write_data.val().get_bits::<8>(0);
            }
            if self.word.val() == self.command_word.val() {
                self.busy.d.next = true;
                self.writing.d.next = self.bus.write_data.val().get_bit(28);
                self.frame.d.next =
                    self.preamble.val() | bit_cast::<64, 32>(self.after_preamble.val());
                self.bit_index.d.next = 0.into();
                self.tick.d.next = self.divisor.q.val();
                self.second_half.d.next = false;
                self.clock_high.d.next = false;
                self.driving.d.next = true;
                self.no_answer.d.next = false;
            }
        }
        self.read_valid.d.next = self.bus.read.val();
        self.read_data.d.next = 0.into();
        if self.bus.read.val() && self.word.val() == self.control_word.val() {
            self.read_data.d.next = bit_cast::<32, 8>(self.divisor.q.val());
        }
        if self.bus.read.val() && self.word.val() == self.status_word.val() {
            self.read_data.d.next = bit_cast::<32, 1>(self.busy.q.val().into())
                | (bit_cast::<32, 1>(self.no_answer.q.val().into()) << 1);
        }
        if self.bus.read.val() && self.word.val() == self.read_data_word.val() {
            self.read_data.d.next = bit_cast::<32, 16>(self.read_value.q.val());
        }
        if self.reset.val() {
            self.divisor.d.next = self.divisor_reset.val();
            self.busy.d.next = false;
            self.second_half.d.next = false;
            self.clock_high.d.next = false;
            self.driving.d.next = false;
            self.no_answer.d.next = false;
            self.read_value.d.next = 0.into();
            self.read_valid.d.next = false;
        }
        self.bus.read_data.next = self.read_data.q.val();
        self.bus.read_valid.next = self.read_valid.q.val();
    }
}
