//! The SPI NOR flash controller (`weft_regs::soc::spi_flash`): one flash
//! command per transaction on the four SPI pins, its data bytes through a
//! page-sized buffer in block RAM.
//!
//! Software's side is the soft core's data port ([`DataBus`], block RAM
//! timing: a read's word follows one cycle later, a fault answers in the
//! same cycle). The pins run SPI mode 0: `sclk` idles low, the controller
//! changes `mosi` after each falling edge (the first bit as `cs_n` falls)
//! and samples `miso` with each rising one. Every half period of `sclk` is
//! `CONTROL.DIVISOR + 1` clock cycles.
//!
//! A transaction is a run of bytes, most significant bit first: the
//! opcode, the three address bytes (if `COMMAND.ADDRESS`), then
//! `LENGTH` data bytes. A data byte's buffer word is read into `word`
//! when the transaction reaches it (two cycles: the block RAM's read
//! latency), bytes are sent from `word` or merged into it as they arrive,
//! and a received word is written back when it is full or the data ends,
//! so the bytes of the buffer past `LENGTH` keep their values as the
//! register map says.

use rust_hdl::prelude::*;
use weft_iss::soc::NorFlash;
use weft_regs::soc::spi_flash;

use crate::core::DataBus;

/// Bits of a buffer word index: the buffer's 64 words.
const WORD_INDEX_BITS: usize = 6;
const _: () = assert!(1 << WORD_INDEX_BITS == spi_flash::BUFFER_SIZE / 4);
// The COMMAND fields and the address width the logic below is written for.
const _: () = assert!(spi_flash::OPCODE.lsb == 0 && spi_flash::OPCODE.width == 8);
const _: () = assert!(spi_flash::WITH_ADDRESS.lsb == 8 && spi_flash::WRITE.lsb == 9);
const _: () = assert!(spi_flash::ADDRESS_BITS.width == 24 && spi_flash::BYTES.width == 9);
const _: () = assert!(spi_flash::DIVISOR.width == 8 && spi_flash::BUSY.lsb == 0);
// The buffer is the block after the registers, and both fit 9 address bits.
const _: () = assert!(spi_flash::BUFFER_LAYOUT.base == spi_flash::LAYOUT.base + 0x100);
const _: () = assert!(spi_flash::LAYOUT.base.is_multiple_of(0x200));

/// The controller's states, the values of its `state` register.
mod phase {
    /// No transaction: `cs_n` high (the reset state).
    pub const IDLE: u32 = 0;
    /// Shifting a byte out and in.
    pub const SHIFT: u32 = 1;
    /// A byte has been exchanged: decide what comes next.
    pub const BYTE_DONE: u32 = 2;
    /// The buffer word of the next data byte is being read.
    pub const FETCH: u32 = 3;
    /// The buffer word arrives.
    pub const LOAD: u32 = 4;
    /// The next data byte goes into the shift register.
    pub const STAGE: u32 = 5;
}

/// The SPI NOR flash controller of the register map's `spi_flash` and
/// `spi_flash_buffer` blocks.
#[derive(LogicBlock)]
pub struct SpiFlashController {
    /// The soft core's clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every register 0 and no transaction (`cs_n`
    /// high next cycle); the page buffer keeps its bytes, as block RAM does.
    pub reset: Signal<In, Bit>,
    /// The soft core's data port, for the controller's 512 bytes
    /// (registers, then buffer); an access elsewhere faults.
    pub bus: DataBus,
    /// Serial clock to the flash.
    pub sclk: Signal<Out, Bit>,
    /// Chip select to the flash, active low.
    pub cs_n: Signal<Out, Bit>,
    /// Data to the flash.
    pub mosi: Signal<Out, Bit>,
    /// Data from the flash.
    pub miso: Signal<In, Bit>,
    buffer: RAM<Bits<32>, WORD_INDEX_BITS>,
    // Where the controller sits and its registers' word indices, from weft-regs.
    block: Constant<Bits<23>>,
    word_control: Constant<Bits<7>>,
    word_address: Constant<Bits<7>>,
    word_length: Constant<Bits<7>>,
    word_command: Constant<Bits<7>>,
    word_status: Constant<Bits<7>>,
    buffer_bytes: Constant<Bits<9>>,
    // Registers.
    divisor: DFF<Bits<8>>,
    address: DFF<Bits<24>>,
    length: DFF<Bits<9>>,
    // The transaction.
    state: DFF<Bits<3>>,
    idle: Constant<Bits<3>>,
    shift: Constant<Bits<3>>,
    byte_done: Constant<Bits<3>>,
    fetch: Constant<Bits<3>>,
    load: Constant<Bits<3>>,
    stage: Constant<Bits<3>>,
    writing: DFF<Bit>,
    header_left: DFF<Bits<3>>,
    data_left: DFF<Bits<9>>,
    data_index: DFF<Bits<9>>,
    tick: DFF<Bits<8>>,
    serial_clock: DFF<Bit>,
    bit_count: DFF<Bits<3>>,
    out_shift: DFF<Bits<32>>,
    in_byte: DFF<Bits<8>>,
    word: DFF<Bits<32>>,
    // The bus's read answer, one cycle after the read.
    read_register: DFF<Bits<32>>,
    read_buffer: DFF<Bit>,
    // Decoding and the data path.
    offset: Signal<Local, Bits<9>>,
    in_block: Signal<Local, Bit>,
    in_buffer: Signal<Local, Bit>,
    register: Signal<Local, Bits<7>>,
    known: Signal<Local, Bit>,
    access: Signal<Local, Bit>,
    busy: Signal<Local, Bit>,
    lane: Signal<Local, Bits<2>>,
    lane_byte: Signal<Local, Bits<8>>,
    merged: Signal<Local, Bits<32>>,
    register_value: Signal<Local, Bits<32>>,
}

impl Default for SpiFlashController {
    fn default() -> Self {
        let word = |register: weft_regs::Register| Constant::new(register.word().to_bits());
        SpiFlashController {
            clock: Default::default(),
            reset: Default::default(),
            bus: Default::default(),
            sclk: Default::default(),
            cs_n: Default::default(),
            mosi: Default::default(),
            miso: Default::default(),
            buffer: Default::default(),
            block: Constant::new((spi_flash::LAYOUT.base >> 9).to_bits()),
            word_control: word(spi_flash::CONTROL),
            word_address: word(spi_flash::ADDRESS),
            word_length: word(spi_flash::LENGTH),
            word_command: word(spi_flash::COMMAND),
            word_status: word(spi_flash::STATUS),
            buffer_bytes: Constant::new(spi_flash::BUFFER_SIZE.to_bits()),
            divisor: Default::default(),
            address: Default::default(),
            length: Default::default(),
            state: Default::default(),
            idle: Constant::new(phase::IDLE.to_bits()),
            shift: Constant::new(phase::SHIFT.to_bits()),
            byte_done: Constant::new(phase::BYTE_DONE.to_bits()),
            fetch: Constant::new(phase::FETCH.to_bits()),
            load: Constant::new(phase::LOAD.to_bits()),
            stage: Constant::new(phase::STAGE.to_bits()),
            writing: Default::default(),
            header_left: Default::default(),
            data_left: Default::default(),
            data_index: Default::default(),
            tick: Default::default(),
            serial_clock: Default::default(),
            bit_count: Default::default(),
            out_shift: Default::default(),
            in_byte: Default::default(),
            word: Default::default(),
            read_register: Default::default(),
            read_buffer: Default::default(),
            offset: Default::default(),
            in_block: Default::default(),
            in_buffer: Default::default(),
            register: Default::default(),
            known: Default::default(),
            access: Default::default(),
            busy: Default::default(),
            lane: Default::default(),
            lane_byte: Default::default(),
            merged: Default::default(),
            register_value: Default::default(),
        }
    }
}

impl Logic for SpiFlashController {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            divisor,
            address,
            length,
            state,
            writing,
            header_left,
            data_left,
            data_index,
            tick,
            serial_clock,
            bit_count,
            out_shift,
            in_byte,
            word,
            read_register,
            read_buffer
        );
        self.buffer.read_clock.next = self.clock.val();
        self.buffer.write_clock.next = self.clock.val();

        // Decoding: bits 31:9 pick the controller, 8 the buffer, 7:2 the word.
        self.offset.next = self.bus.address.val().get_bits::<9>(0);
        self.in_block.next = self.bus.address.val().get_bits::<23>(9) == self.block.val();
        self.in_buffer.next = self.offset.val().get_bit(8);
        self.register.next = self.offset.val().get_bits::<7>(2);
        self.known.next = self.in_buffer.val()
            || self.register.val() == self.word_control.val()
            || self.register.val() == self.word_address.val()
            || self.register.val() == self.word_length.val()
            || self.register.val() == self.word_command.val()
            || self.register.val() == self.word_status.val();
        self.access.next = self.bus.read.val() || self.bus.write.val();
        self.bus.fault.next = self.access.val()
            && (!self.in_block.val()
                || !self.known.val()
                || self.bus.byte_enable.val() != 15
                || self.offset.val().get_bits::<2>(0) != 0);
        self.busy.next = self.state.q.val() != self.idle.val();

        // The data byte in flight and its place in `word`.
        self.lane.next = self.data_index.q.val().get_bits::<2>(0);
        self.lane_byte.next = self.word.q.val().get_bits::<8>(0);
        self.merged.next =
            (self.word.q.val() & !bits::<32>(0xFF)) | bit_cast::<32, 8>(self.in_byte.q.val());
        if self.lane.val() == 1 {
            self.lane_byte.next = self.word.q.val().get_bits::<8>(8);
            self.merged.next = (self.word.q.val() & !(bits::<32>(0xFF) << 8))
                | (bit_cast::<32, 8>(self.in_byte.q.val()) << 8);
        }
        if self.lane.val() == 2 {
            self.lane_byte.next = self.word.q.val().get_bits::<8>(16);
            self.merged.next = (self.word.q.val() & !(bits::<32>(0xFF) << 16))
                | (bit_cast::<32, 8>(self.in_byte.q.val()) << 16);
        }
        if self.lane.val() == 3 {
            self.lane_byte.next = self.word.q.val().get_bits::<8>(24);
            self.merged.next = (self.word.q.val() & !(bits::<32>(0xFF) << 24))
                | (bit_cast::<32, 8>(self.in_byte.q.val()) << 24);
        }

        // The buffer: the transaction's while busy, the bus's otherwise.
        self.buffer.read_address.next = self.bus.address.val().get_bits::<6>(2);
        self.buffer.write_address.next = self.bus.address.val().get_bits::<6>(2);
        self.buffer.write_data.next = self.bus.write_data.val();
        self.buffer.write_enable.next = self.bus.write.val()
            && !self.bus.fault.val()
            && self.in_buffer.val()
            && !self.busy.val();
        if self.busy.val() {
            self.buffer.read_address.next = self.data_index.q.val().get_bits::<6>(2);
            self.buffer.write_address.next = self.data_index.q.val().get_bits::<6>(2);
            self.buffer.write_data.next = self.merged.val();
        }

        // Bus reads: the register's value, or the buffer's word, next cycle.
        self.register_value.next = bits::<32>(0);
        if self.register.val() == self.word_control.val() {
            self.register_value.next = bit_cast::<32, 8>(self.divisor.q.val());
        }
        if self.register.val() == self.word_address.val() {
            self.register_value.next = bit_cast::<32, 24>(self.address.q.val());
        }
        if self.register.val() == self.word_length.val() {
            self.register_value.next = bit_cast::<32, 9>(self.length.q.val());
        }
        if self.register.val() == self.word_status.val() {
            self.register_value.next = bit_cast::<32, 1>(self.busy.val().into());
        }
        self.read_register.d.next = self.register_value.val();
        self.read_buffer.d.next = self.in_buffer.val() && !self.busy.val();
        if self.in_buffer.val() {
            // While busy the buffer reads 0.
            self.read_register.d.next = bits::<32>(0);
        }
        self.bus.read_data.next = self.read_register.q.val();
        if self.read_buffer.q.val() {
            self.bus.read_data.next = self.buffer.read_data.val();
        }

        // Register writes.
        if self.bus.write.val() && !self.bus.fault.val() && !self.in_buffer.val() {
            if self.register.val() == self.word_control.val() {
                self.divisor.d.next = self.bus.write_data.val().get_bits::<8>(0);
            }
            if self.register.val() == self.word_address.val() {
                self.address.d.next = self.bus.write_data.val().get_bits::<24>(0);
            }
            if self.register.val() == self.word_length.val() {
                self.length.d.next = self.bus.write_data.val().get_bits::<9>(0);
            }
        }

        // The pins.
        self.cs_n.next = !self.busy.val();
        self.sclk.next = self.serial_clock.q.val();
        self.mosi.next = self.out_shift.q.val().get_bit(31);

        // The transaction.
        self.tick.d.next = bits::<8>(0);
        if self.state.q.val() == self.idle.val()
            && self.bus.write.val()
            && !self.bus.fault.val()
            && !self.in_buffer.val()
            && self.register.val() == self.word_command.val()
        {
            self.state.d.next = self.shift.val();
            self.writing.d.next = self.bus.write_data.val().get_bit(9);
            self.out_shift.d.next =
                (self.bus.write_data.val() << 24) | bit_cast::<32, 24>(self.address.q.val());
            self.header_left.d.next = bits::<3>(1);
            if self.bus.write_data.val().get_bit(8) {
                self.header_left.d.next = bits::<3>(4);
            }
            self.data_left.d.next = self.length.q.val();
            if self.length.q.val() > self.buffer_bytes.val() {
                self.data_left.d.next = self.buffer_bytes.val();
            }
            self.data_index.d.next = bits::<9>(0);
            self.bit_count.d.next = bits::<3>(0);
        }
        if self.state.q.val() == self.shift.val() {
            self.tick.d.next = self.tick.q.val() + 1;
            if self.tick.q.val() == self.divisor.q.val() {
                self.tick.d.next = bits::<8>(0);
                self.serial_clock.d.next = !self.serial_clock.q.val();
                if self.serial_clock.q.val() {
                    // Falling edge: the next bit goes out.
                    self.out_shift.d.next = self.out_shift.q.val() << 1;
                    self.bit_count.d.next = self.bit_count.q.val() + 1;
                    if self.bit_count.q.val() == 7 {
                        self.state.d.next = self.byte_done.val();
                    }
                } else {
                    // Rising edge: the flash's bit comes in.
                    self.in_byte.d.next =
                        (self.in_byte.q.val() << 1) | bit_cast::<8, 1>(self.miso.val().into());
                }
            }
        }
        if self.state.q.val() == self.byte_done.val() {
            if self.header_left.q.val() != 0 {
                self.header_left.d.next = self.header_left.q.val() - 1;
                self.state.d.next = self.shift.val();
                if self.header_left.q.val() == 1 {
                    self.state.d.next = self.fetch.val();
                    if self.data_left.q.val() == 0 {
                        self.state.d.next = self.idle.val();
                    }
                }
            } else {
                if !self.writing.q.val() {
                    self.word.d.next = self.merged.val();
                    self.buffer.write_enable.next =
                        self.lane.val() == 3 || self.data_left.q.val() == 1;
                }
                self.data_index.d.next = self.data_index.q.val() + 1;
                self.data_left.d.next = self.data_left.q.val() - 1;
                self.state.d.next = self.stage.val();
                if self.lane.val() == 3 {
                    self.state.d.next = self.fetch.val();
                }
                if self.data_left.q.val() == 1 {
                    self.state.d.next = self.idle.val();
                }
            }
        }
        if self.state.q.val() == self.fetch.val() {
            self.state.d.next = self.load.val();
        }
        if self.state.q.val() == self.load.val() {
            self.word.d.next = self.buffer.read_data.val();
            self.state.d.next = self.stage.val();
        }
        if self.state.q.val() == self.stage.val() {
            self.out_shift.d.next = bits::<32>(0);
            if self.writing.q.val() {
                self.out_shift.d.next = bit_cast::<32, 8>(self.lane_byte.val()) << 24;
            }
            self.state.d.next = self.shift.val();
        }
        if self.reset.val() {
            self.divisor.d.next = bits::<8>(0);
            self.address.d.next = bits::<24>(0);
            self.length.d.next = bits::<9>(0);
            self.state.d.next = self.idle.val();
            self.writing.d.next = false;
            self.header_left.d.next = bits::<3>(0);
            self.data_left.d.next = bits::<9>(0);
            self.data_index.d.next = bits::<9>(0);
            self.tick.d.next = bits::<8>(0);
            self.serial_clock.d.next = false;
            self.bit_count.d.next = bits::<3>(0);
            self.out_shift.d.next = bits::<32>(0);
            self.in_byte.d.next = bits::<8>(0);
            self.word.d.next = bits::<32>(0);
            self.read_buffer.d.next = false;
        }
    }
}

/// A serial NOR flash part (`weft_iss::soc::NorFlash`) on the
/// controller's pins, for simulation: it watches `cs_n`, `sclk` and
/// `mosi` once per clock cycle and drives `miso` as a part in SPI mode 0
/// does (input sampled on the rising edge of `sclk`, output changed on
/// the falling one).
pub struct FlashOnPins {
    part: NorFlash,
    selected: bool,
    sclk: bool,
    in_byte: u8,
    bits_in: u8,
    out_byte: u8,
    bits_out: u8,
    next_out: Option<u8>,
}

impl FlashOnPins {
    /// `part` with `cs_n` high.
    pub fn new(part: NorFlash) -> Self {
        FlashOnPins {
            part,
            selected: false,
            sclk: false,
            in_byte: 0,
            bits_in: 0,
            out_byte: 0xFF,
            bits_out: 0,
            next_out: None,
        }
    }

    /// The part, its array and status.
    pub fn part(&self) -> &NorFlash {
        &self.part
    }

    /// `cycles` clock cycles of a deselected part (`cs_n` high and the
    /// pins still): a program or erase in progress moves on.
    pub fn idle(&mut self, cycles: u64) {
        self.part.advance(cycles);
    }

    /// One clock cycle of the part with the pins at these levels; the
    /// level it drives on `miso` for the next cycle (high while
    /// deselected: the line is pulled up).
    ///
    /// # Panics
    ///
    /// If `cs_n` rises in the middle of a byte: the controller only ends
    /// transactions on byte boundaries.
    pub fn cycle(&mut self, cs_n: bool, sclk: bool, mosi: bool) -> bool {
        self.part.advance(1);
        if cs_n {
            if self.selected {
                assert_eq!(self.bits_in, 0, "cs_n rose in the middle of a byte");
                self.part.deselect();
                self.selected = false;
            }
            self.sclk = sclk;
            return true;
        }
        if !self.selected {
            self.part.select();
            self.selected = true;
            self.bits_in = 0;
            self.bits_out = 0;
            self.out_byte = self.part.output();
            self.next_out = None;
        }
        if sclk && !self.sclk {
            self.in_byte = self.in_byte << 1 | u8::from(mosi);
            self.bits_in += 1;
            if self.bits_in == 8 {
                self.bits_in = 0;
                self.part.exchange(self.in_byte);
                self.next_out = Some(self.part.output());
            }
        }
        if !sclk && self.sclk {
            match self.next_out.take() {
                Some(next) => {
                    self.out_byte = next;
                    self.bits_out = 0;
                }
                None => self.bits_out += 1,
            }
        }
        self.sclk = sclk;
        self.out_byte >> (7 - self.bits_out.min(7)) & 1 != 0
    }
}
