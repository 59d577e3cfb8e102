//! The management Ethernet MAC (`weft_regs::soc::mac`): its registers,
//! descriptors and frame buffer on the SoC's data port, and an MII (IEEE
//! 802.3 clause 22) on the outside.
//!
//! - [`EthernetMac`]: the MAC.
//! - [`FrameRam`]: the frame buffer's dual-port block RAM.
//! - [`Crc32Nibble`]: the frame check sequence, a nibble per step.

pub mod crc;
pub mod ram;

use rust_hdl::prelude::*;
use weft_regs::soc::mac;

pub use crc::Crc32Nibble;
pub use ram::{FrameRam, FRAME_RAM_INDEX_BITS};

use crate::csr::CsrTarget;

/// Nibbles of preamble and start frame delimiter before a frame: 7 bytes
/// of 0x55 then 0xD5 (§4.2.5, §4.2.6), low nibble first: fifteen 0x5, one 0xD.
const PREAMBLE_NIBBLES: u32 = 16;
/// Nibble times of the interpacket gap: 96 bit times, 12 bytes (§4.4.2).
pub const GAP_NIBBLES: u32 = 24;
/// Bytes of the frame check sequence.
const FCS_BYTES: u32 = 4;

// The ring sizes the index registers wrap at, the slot size the word
// index covers and the field positions the logic below is written for.
const _: () = assert!(mac::RX_SLOTS == 8 && mac::TX_SLOTS == 4 && mac::SLOT_SIZE == 2048);
const _: () = assert!(mac::RX_SLOTS * mac::SLOT_SIZE / 4 == 1 << FRAME_RAM_INDEX_BITS);
const _: () = assert!(mac::CONTROL.mask() == 0b111 && mac::INT_STATUS.mask() == 0b111);
const _: () =
    assert!(mac::RX_ENABLE.lsb == 0 && mac::TX_ENABLE.lsb == 1 && mac::PROMISCUOUS.lsb == 2);
const _: () = assert!(mac::INT_RX.lsb == 0 && mac::INT_TX.lsb == 1 && mac::INT_OVERRUN.lsb == 2);
const _: () = assert!(mac::LENGTH.lsb == 0 && mac::LENGTH.width == 12 && mac::OWN.lsb == 31);
const _: () = assert!(mac::RX_NEXT.lsb == 0 && mac::TX_NEXT.lsb == 8);
const _: () = assert!(mac::ADDRESS_HIGH.mask() == 0xFFFF);
// Where the blocks sit: registers and descriptors one 256-byte block each,
// the receive slots a 16 KiB-aligned 16 KiB, the transmit slots an
// 8 KiB-aligned 8 KiB.
const _: () = assert!(mac::RX_DESCRIPTOR_LAYOUT.base == mac::LAYOUT.base + 0x100);
const _: () = assert!(mac::TX_DESCRIPTOR_LAYOUT.base == mac::LAYOUT.base + 0x200);
const _: () = assert!(mac::RX_BUFFER_LAYOUT.base.is_multiple_of(0x4000));
const _: () = assert!(mac::RX_BUFFER_LAYOUT.instance_span() == 0x4000);
const _: () = assert!(mac::TX_BUFFER_LAYOUT.base.is_multiple_of(0x2000));
const _: () = assert!(mac::TX_BUFFER_LAYOUT.instance_span() == 0x2000);

/// The receive engine's states, the values of its `rx_state` register.
mod receive {
    /// Waiting for `rx_dv`.
    pub const IDLE: u32 = 0;
    /// In the preamble, waiting for the start frame delimiter.
    pub const PREAMBLE: u32 = 1;
    /// Taking the frame's nibbles.
    pub const DATA: u32 = 2;
    /// `rx_dv` fell: the frame is judged and lands or is dropped.
    pub const END: u32 = 3;
    /// Not a frame (no preamble): waiting for `rx_dv` to fall.
    pub const DISCARD: u32 = 4;
}

/// The transmit engine's states, the values of its `tx_state` register.
mod transmit {
    /// Waiting for the slot at `TX_NEXT`.
    pub const IDLE: u32 = 0;
    /// Sending the preamble and start frame delimiter.
    pub const PREAMBLE: u32 = 1;
    /// Sending the frame's bytes, then padding.
    pub const DATA: u32 = 2;
    /// Sending the frame check sequence.
    pub const FCS: u32 = 3;
    /// The frame is out: the descriptor goes back to software.
    pub const DONE: u32 = 4;
    /// The interpacket gap.
    pub const GAP: u32 = 5;
}

/// The management Ethernet MAC of `weft_regs::soc::mac`: registers,
/// descriptors and frame buffer on a [`CsrTarget`] port, the MII pins
/// outside, and the interrupt line `INT_STATUS & INT_ENABLE != 0`.
///
/// **Bus.** The SoC's decoder sends the MAC the whole-word accesses to
/// its registers, its descriptors and the frame buffer (and faults
/// everything else in its part of the window); a read answers in the next
/// cycle. The buffer is two [`FrameRam`]s, receive slots and transmit
/// slots, whose second port belongs to the line engines, so the soft core
/// never waits. Register and descriptor events of the engines (a frame
/// landing or dropped, a slot sent) happen in a cycle without a bus write,
/// so a write and an event never meet in one cycle.
///
/// **MII.** The MAC runs on the SoC clock only. `rx_clk` and `tx_clk`
/// pass through two-flop synchronisers (and the receive pins with them,
/// one flop further), and the MAC acts on the rising edges it detects: it
/// takes the receive pins as they were one SoC cycle before it saw
/// `rx_clk` rise (data the PHY set up after the previous rising edge,
/// §22.3), and drives `tx_en` and `txd` from flip-flops three SoC
/// cycles after `tx_clk` rose, for the PHY to sample at the next rising
/// edge (§22.3). Each level of both clocks must last at least two SoC
/// cycles and the outputs must settle before the next rising edge: the
/// SoC clock must run at least **4 times** the MII clock (100 MHz for
/// 100 Mb/s MII's 25 MHz; the reference 125 MHz soft core clock,
/// `weft_regs::SOFT_CORE_CLOCK_HZ`, gives 5, which also leaves the PHY's
/// 10 ns setup time).
///
/// **Receive.** After the preamble (any number of 0x5 nibbles) and the
/// start frame delimiter (0xD), nibbles are assembled into bytes, low
/// nibble first, and written into the slot at `RING.RX_NEXT` as they
/// arrive, if the MAC owned that slot when the frame started, up to the
/// slot's end; the frame check sequence is written after the frame
/// (bytes of a slot past `LENGTH` are undefined), and a trailing half byte
/// is dropped (§4.2.4.2). When `rx_dv` falls the
/// frame is judged, as the register map says and `weft_iss::soc::Mac`
/// does for a frame handed to it: while `RX_ENABLE` is clear it is
/// ignored; with a wrong FCS, `rx_er` during it or fewer than 4 bytes it
/// is counted in `RX_ERRORS`; then the address filter, `RX_OVERSIZE` for
/// more than a slot, `RX_OVERRUNS` when the MAC does not own the slot (or
/// did not when the frame started), else it lands. A nibble sequence
/// that does not start with the preamble is ignored until `rx_dv` falls.
///
/// **Transmit.** While `TX_ENABLE` is set and the MAC owns the slot at
/// `RING.TX_NEXT`, the slot is sent: preamble and start frame delimiter,
/// the frame padded with zeros to 60 bytes (§4.2.8), and the complement
/// of its CRC-32, least significant bit first (§3.2.9); then the
/// descriptor's `OWN` clears, `TX_FRAMES` counts, `INT_STATUS.TX` rises,
/// `TX_NEXT` moves on, and the next frame waits out the 12-byte
/// interpacket gap (§4.4.2). A `LENGTH` of 0 or above a slot is sent as
/// nothing, at once. Clearing `TX_ENABLE` during a frame lets it finish.
///
/// Unlike the ISS model, which has no line rate, a slot handed over is
/// sent (and its `OWN` cleared) a frame's time later, and a frame lands
/// a few cycles after its last nibble; between frames the two agree
/// register for register.
///
/// `reset` (synchronous) clears every register, descriptor and counter,
/// as at power-on; the frame buffer keeps its contents.
#[derive(LogicBlock)]
pub struct EthernetMac {
    /// Clock: the SoC's.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// The register interface: full SoC addresses of the MAC's registers,
    /// descriptors and frame buffer, whole words.
    pub bus: CsrTarget,
    /// The interrupt line (`mip.MEIP`): `INT_STATUS & INT_ENABLE != 0`.
    pub irq: Signal<Out, Bit>,
    /// MII receive clock from the PHY.
    pub rx_clk: Signal<In, Bit>,
    /// MII receive data valid.
    pub rx_dv: Signal<In, Bit>,
    /// MII receive error.
    pub rx_er: Signal<In, Bit>,
    /// MII receive data, a nibble per `rx_clk`.
    pub rxd: Signal<In, Bits<4>>,
    /// MII transmit clock from the PHY.
    pub tx_clk: Signal<In, Bit>,
    /// MII transmit enable.
    pub tx_en: Signal<Out, Bit>,
    /// MII transmit data, a nibble per `tx_clk`.
    pub txd: Signal<Out, Bits<4>>,
    rx_ram: FrameRam,
    tx_ram: FrameRam,
    rx_crc_low: Crc32Nibble,
    rx_crc_step: Crc32Nibble,
    tx_crc_step: Crc32Nibble,
    // Registers.
    control: DFF<Bits<3>>,
    int_enable: DFF<Bits<3>>,
    int_status: DFF<Bits<3>>,
    address_low: DFF<Bits<32>>,
    address_high: DFF<Bits<16>>,
    rx_next: DFF<Bits<3>>,
    tx_next: DFF<Bits<2>>,
    rx_frames: DFF<Bits<32>>,
    rx_overruns: DFF<Bits<32>>,
    rx_oversize: DFF<Bits<32>>,
    tx_frames: DFF<Bits<32>>,
    rx_errors: DFF<Bits<32>>,
    rx_descriptor: [DFF<Bits<32>>; 8],
    tx_descriptor: [DFF<Bits<32>>; 4],
    descriptor_mask: Constant<Bits<32>>,
    length_mask: Constant<Bits<32>>,
    // The bus's read answer, one cycle after the read.
    read_data: DFF<Bits<32>>,
    read_valid: DFF<Bit>,
    read_rx_ram: DFF<Bit>,
    read_tx_ram: DFF<Bit>,
    // Decoding.
    block: Signal<Local, Bits<24>>,
    word: Signal<Local, Bits<6>>,
    slot: Signal<Local, Bits<3>>,
    in_registers: Signal<Local, Bit>,
    in_rx_descriptors: Signal<Local, Bit>,
    in_tx_descriptors: Signal<Local, Bit>,
    in_rx_buffer: Signal<Local, Bit>,
    in_tx_buffer: Signal<Local, Bit>,
    register_value: Signal<Local, Bits<32>>,
    status_clear: Signal<Local, Bits<3>>,
    rx_raise: Signal<Local, Bits<3>>,
    tx_raise: Signal<Local, Bits<3>>,
    registers_block: Constant<Bits<24>>,
    rx_descriptors_block: Constant<Bits<24>>,
    tx_descriptors_block: Constant<Bits<24>>,
    rx_buffer_block: Constant<Bits<18>>,
    tx_buffer_block: Constant<Bits<19>>,
    word_control: Constant<Bits<6>>,
    word_int_enable: Constant<Bits<6>>,
    word_int_status: Constant<Bits<6>>,
    word_address_low: Constant<Bits<6>>,
    word_address_high: Constant<Bits<6>>,
    word_ring: Constant<Bits<6>>,
    word_rx_frames: Constant<Bits<6>>,
    word_rx_overruns: Constant<Bits<6>>,
    word_rx_oversize: Constant<Bits<6>>,
    word_tx_frames: Constant<Bits<6>>,
    word_rx_errors: Constant<Bits<6>>,
    // Receive: the synchroniser (bit 0 rx_clk, 1 rx_dv, 2 rx_er, 6:3 rxd).
    rx_sync_first: DFF<Bits<7>>,
    rx_sync_second: DFF<Bits<7>>,
    rx_sync_third: DFF<Bits<7>>,
    rx_edge: Signal<Local, Bit>,
    rx_valid: Signal<Local, Bit>,
    rx_error: Signal<Local, Bit>,
    rx_nibble: Signal<Local, Bits<4>>,
    // Receive: the frame.
    rx_state: DFF<Bits<3>>,
    rx_high_nibble: DFF<Bit>,
    rx_low_nibble: DFF<Bits<4>>,
    rx_count: DFF<Bits<16>>,
    rx_word: DFF<Bits<32>>,
    rx_crc: DFF<Bits<32>>,
    rx_errored: DFF<Bit>,
    rx_owned: DFF<Bit>,
    destination_low: DFF<Bits<32>>,
    destination_high: DFF<Bits<16>>,
    rx_byte: Signal<Local, Bits<8>>,
    rx_lane: Signal<Local, Bits<2>>,
    rx_merged: Signal<Local, Bits<32>>,
    rx_frame_length: Signal<Local, Bits<16>>,
    rx_intact: Signal<Local, Bit>,
    rx_accepted: Signal<Local, Bit>,
    rx_slot_owned: Signal<Local, Bit>,
    rx_next_owned: Signal<Local, Bit>,
    rx_idle: Constant<Bits<3>>,
    rx_preamble: Constant<Bits<3>>,
    rx_data: Constant<Bits<3>>,
    rx_end: Constant<Bits<3>>,
    rx_discard: Constant<Bits<3>>,
    // Transmit: the synchroniser.
    tx_sync_first: DFF<Bit>,
    tx_sync_second: DFF<Bit>,
    tx_sync_third: DFF<Bit>,
    tx_edge: Signal<Local, Bit>,
    // Transmit: the frame.
    tx_state: DFF<Bits<3>>,
    tx_frame_length: DFF<Bits<12>>,
    tx_sent: DFF<Bit>,
    tx_index: DFF<Bits<12>>,
    tx_high_nibble: DFF<Bit>,
    tx_count: DFF<Bits<5>>,
    tx_crc: DFF<Bits<32>>,
    tx_fcs: DFF<Bits<32>>,
    tx_enable_pin: DFF<Bit>,
    tx_data_pin: DFF<Bits<4>>,
    tx_next_owned: Signal<Local, Bit>,
    tx_next_length: Signal<Local, Bits<12>>,
    tx_lane: Signal<Local, Bits<2>>,
    tx_slot_byte: Signal<Local, Bits<8>>,
    tx_byte: Signal<Local, Bits<8>>,
    tx_nibble: Signal<Local, Bits<4>>,
    tx_padded_length: Signal<Local, Bits<12>>,
    tx_idle: Constant<Bits<3>>,
    tx_preamble: Constant<Bits<3>>,
    tx_data: Constant<Bits<3>>,
    tx_fcs_state: Constant<Bits<3>>,
    tx_done: Constant<Bits<3>>,
    tx_gap: Constant<Bits<3>>,
    // Frame constants.
    crc_initial: Constant<Bits<32>>,
    crc_residue: Constant<Bits<32>>,
    all_ones: Constant<Bits<32>>,
    fcs_bytes: Constant<Bits<16>>,
    address_bytes: Constant<Bits<16>>,
    slot_bytes: Constant<Bits<16>>,
    slot_length: Constant<Bits<12>>,
    min_frame: Constant<Bits<12>>,
    last_preamble_nibble: Constant<Bits<5>>,
    gap_nibbles: Constant<Bits<5>>,
}

impl EthernetMac {
    /// A MAC; hold `reset` for a cycle before use.
    pub fn new() -> Self {
        let word = |r: weft_regs::Register| Constant::new(r.word().to_bits());
        let state = |s: u32| Constant::new(s.to_bits());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            bus: Default::default(),
            irq: Default::default(),
            rx_clk: Default::default(),
            rx_dv: Default::default(),
            rx_er: Default::default(),
            rxd: Default::default(),
            tx_clk: Default::default(),
            tx_en: Default::default(),
            txd: Default::default(),
            rx_ram: FrameRam::new((mac::RX_SLOTS * mac::SLOT_SIZE / 4) as usize),
            tx_ram: FrameRam::new((mac::TX_SLOTS * mac::SLOT_SIZE / 4) as usize),
            rx_crc_low: Default::default(),
            rx_crc_step: Default::default(),
            tx_crc_step: Default::default(),
            control: Default::default(),
            int_enable: Default::default(),
            int_status: Default::default(),
            address_low: Default::default(),
            address_high: Default::default(),
            rx_next: Default::default(),
            tx_next: Default::default(),
            rx_frames: Default::default(),
            rx_overruns: Default::default(),
            rx_oversize: Default::default(),
            tx_frames: Default::default(),
            rx_errors: Default::default(),
            rx_descriptor: Default::default(),
            tx_descriptor: Default::default(),
            descriptor_mask: Constant::new(mac::RX_DESCRIPTOR.mask().to_bits()),
            length_mask: Constant::new(mac::LENGTH.mask().to_bits()),
            read_data: Default::default(),
            read_valid: Default::default(),
            read_rx_ram: Default::default(),
            read_tx_ram: Default::default(),
            block: Default::default(),
            word: Default::default(),
            slot: Default::default(),
            in_registers: Default::default(),
            in_rx_descriptors: Default::default(),
            in_tx_descriptors: Default::default(),
            in_rx_buffer: Default::default(),
            in_tx_buffer: Default::default(),
            register_value: Default::default(),
            status_clear: Default::default(),
            rx_raise: Default::default(),
            tx_raise: Default::default(),
            registers_block: Constant::new((mac::LAYOUT.base >> 8).to_bits()),
            rx_descriptors_block: Constant::new((mac::RX_DESCRIPTOR_LAYOUT.base >> 8).to_bits()),
            tx_descriptors_block: Constant::new((mac::TX_DESCRIPTOR_LAYOUT.base >> 8).to_bits()),
            rx_buffer_block: Constant::new((mac::RX_BUFFER_LAYOUT.base >> 14).to_bits()),
            tx_buffer_block: Constant::new((mac::TX_BUFFER_LAYOUT.base >> 13).to_bits()),
            word_control: word(mac::CONTROL),
            word_int_enable: word(mac::INT_ENABLE),
            word_int_status: word(mac::INT_STATUS),
            word_address_low: word(mac::ADDRESS_LOW),
            word_address_high: word(mac::ADDRESS_HIGH),
            word_ring: word(mac::RING),
            word_rx_frames: word(mac::RX_FRAMES),
            word_rx_overruns: word(mac::RX_OVERRUNS),
            word_rx_oversize: word(mac::RX_OVERSIZE),
            word_tx_frames: word(mac::TX_FRAMES),
            word_rx_errors: word(mac::RX_ERRORS),
            rx_sync_first: Default::default(),
            rx_sync_second: Default::default(),
            rx_sync_third: Default::default(),
            rx_edge: Default::default(),
            rx_valid: Default::default(),
            rx_error: Default::default(),
            rx_nibble: Default::default(),
            rx_state: Default::default(),
            rx_high_nibble: Default::default(),
            rx_low_nibble: Default::default(),
            rx_count: Default::default(),
            rx_word: Default::default(),
            rx_crc: Default::default(),
            rx_errored: Default::default(),
            rx_owned: Default::default(),
            destination_low: Default::default(),
            destination_high: Default::default(),
            rx_byte: Default::default(),
            rx_lane: Default::default(),
            rx_merged: Default::default(),
            rx_frame_length: Default::default(),
            rx_intact: Default::default(),
            rx_accepted: Default::default(),
            rx_slot_owned: Default::default(),
            rx_next_owned: Default::default(),
            rx_idle: state(receive::IDLE),
            rx_preamble: state(receive::PREAMBLE),
            rx_data: state(receive::DATA),
            rx_end: state(receive::END),
            rx_discard: state(receive::DISCARD),
            tx_sync_first: Default::default(),
            tx_sync_second: Default::default(),
            tx_sync_third: Default::default(),
            tx_edge: Default::default(),
            tx_state: Default::default(),
            tx_frame_length: Default::default(),
            tx_sent: Default::default(),
            tx_index: Default::default(),
            tx_high_nibble: Default::default(),
            tx_count: Default::default(),
            tx_crc: Default::default(),
            tx_fcs: Default::default(),
            tx_enable_pin: Default::default(),
            tx_data_pin: Default::default(),
            tx_next_owned: Default::default(),
            tx_next_length: Default::default(),
            tx_lane: Default::default(),
            tx_slot_byte: Default::default(),
            tx_byte: Default::default(),
            tx_nibble: Default::default(),
            tx_padded_length: Default::default(),
            tx_idle: state(transmit::IDLE),
            tx_preamble: state(transmit::PREAMBLE),
            tx_data: state(transmit::DATA),
            tx_fcs_state: state(transmit::FCS),
            tx_done: state(transmit::DONE),
            tx_gap: state(transmit::GAP),
            crc_initial: Constant::new(crc::INITIAL.to_bits()),
            crc_residue: Constant::new(crc::RESIDUE.to_bits()),
            all_ones: Constant::new(u32::MAX.to_bits()),
            fcs_bytes: Constant::new(FCS_BYTES.to_bits()),
            address_bytes: Constant::new(6u32.to_bits()),
            slot_bytes: Constant::new(mac::SLOT_SIZE.to_bits()),
            slot_length: Constant::new(mac::SLOT_SIZE.to_bits()),
            min_frame: Constant::new((weft_iss::soc::MIN_FRAME as u32).to_bits()),
            last_preamble_nibble: Constant::new((PREAMBLE_NIBBLES - 1).to_bits()),
            gap_nibbles: Constant::new(GAP_NIBBLES.to_bits()),
        }
    }

    /// The receive slots' words as they are now, slot 0's first.
    pub fn rx_buffer(&self) -> &[u32] {
        self.rx_ram.words()
    }
}

impl Default for EthernetMac {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for EthernetMac {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            control,
            int_enable,
            int_status,
            address_low,
            address_high,
            rx_next,
            tx_next,
            rx_frames,
            rx_overruns,
            rx_oversize,
            tx_frames,
            rx_errors,
            read_data,
            read_valid,
            read_rx_ram,
            read_tx_ram,
            rx_sync_first,
            rx_sync_second,
            rx_sync_third,
            rx_state,
            rx_high_nibble,
            rx_low_nibble,
            rx_count,
            rx_word,
            rx_crc,
            rx_errored,
            rx_owned,
            destination_low,
            destination_high,
            tx_sync_first,
            tx_sync_second,
            tx_sync_third,
            tx_state,
            tx_frame_length,
            tx_sent,
            tx_index,
            tx_high_nibble,
            tx_count,
            tx_crc,
            tx_fcs,
            tx_enable_pin,
            tx_data_pin
        );
        clock!(self, clock, rx_ram, tx_ram);
        for s in 0..8 {
            self.rx_descriptor[s].clock.next = self.clock.val();
            self.rx_descriptor[s].d.next = self.rx_descriptor[s].q.val();
        }
        for s in 0..4 {
            self.tx_descriptor[s].clock.next = self.clock.val();
            self.tx_descriptor[s].d.next = self.tx_descriptor[s].q.val();
        }

        // Decoding: the SoC's decoder has checked the address; this picks the part.
        self.block.next = self.bus.address.val().get_bits::<24>(8);
        self.word.next = self.bus.address.val().get_bits::<6>(2);
        self.slot.next = self.bus.address.val().get_bits::<3>(2);
        self.in_registers.next = self.block.val() == self.registers_block.val();
        self.in_rx_descriptors.next = self.block.val() == self.rx_descriptors_block.val();
        self.in_tx_descriptors.next = self.block.val() == self.tx_descriptors_block.val();
        self.in_rx_buffer.next =
            self.bus.address.val().get_bits::<18>(14) == self.rx_buffer_block.val();
        self.in_tx_buffer.next =
            self.bus.address.val().get_bits::<19>(13) == self.tx_buffer_block.val();

        // Bus reads: a register or descriptor next cycle, or a buffer word from its RAM.
        self.register_value.next = bits::<32>(0);
        if self.in_registers.val() {
            if self.word.val() == self.word_control.val() {
                self.register_value.next = bit_cast::<32, 3>(self.control.q.val());
            }
            if self.word.val() == self.word_int_enable.val() {
                self.register_value.next = bit_cast::<32, 3>(self.int_enable.q.val());
            }
            if self.word.val() == self.word_int_status.val() {
                self.register_value.next = bit_cast::<32, 3>(self.int_status.q.val());
            }
            if self.word.val() == self.word_address_low.val() {
                self.register_value.next = self.address_low.q.val();
            }
            if self.word.val() == self.word_address_high.val() {
                self.register_value.next = bit_cast::<32, 16>(self.address_high.q.val());
            }
            if self.word.val() == self.word_ring.val() {
                self.register_value.next = bit_cast::<32, 3>(self.rx_next.q.val())
                    | (bit_cast::<32, 2>(self.tx_next.q.val()) << 8);
            }
            if self.word.val() == self.word_rx_frames.val() {
                self.register_value.next = self.rx_frames.q.val();
            }
            if self.word.val() == self.word_rx_overruns.val() {
                self.register_value.next = self.rx_overruns.q.val();
            }
            if self.word.val() == self.word_rx_oversize.val() {
                self.register_value.next = self.rx_oversize.q.val();
            }
            if self.word.val() == self.word_tx_frames.val() {
                self.register_value.next = self.tx_frames.q.val();
            }
            if self.word.val() == self.word_rx_errors.val() {
                self.register_value.next = self.rx_errors.q.val();
            }
        }
        for s in 0..8 {
            if self.in_rx_descriptors.val() && self.slot.val().index() == s {
                self.register_value.next = self.rx_descriptor[s].q.val();
            }
        }
        for s in 0..4 {
            if self.in_tx_descriptors.val() && self.slot.val().index() == s {
                self.register_value.next = self.tx_descriptor[s].q.val();
            }
        }
        self.read_valid.d.next = self.bus.read.val();
        self.read_data.d.next = bits::<32>(0);
        if self.bus.read.val() {
            self.read_data.d.next = self.register_value.val();
        }
        self.read_rx_ram.d.next = self.bus.read.val() && self.in_rx_buffer.val();
        self.read_tx_ram.d.next = self.bus.read.val() && self.in_tx_buffer.val();
        self.bus.read_data.next = self.read_data.q.val();
        if self.read_rx_ram.q.val() {
            self.bus.read_data.next = self.rx_ram.read_data_a.val();
        }
        if self.read_tx_ram.q.val() {
            self.bus.read_data.next = self.tx_ram.read_data_a.val();
        }
        self.bus.read_valid.next = self.read_valid.q.val();

        // Bus writes. Port A of each RAM is the bus's.
        self.rx_ram.address_a.next = self.bus.address.val().get_bits::<12>(2);
        self.rx_ram.write_data_a.next = self.bus.write_data.val();
        self.rx_ram.write_a.next = self.bus.write.val() && self.in_rx_buffer.val();
        self.tx_ram.address_a.next = self.bus.address.val().get_bits::<12>(2);
        self.tx_ram.write_data_a.next = self.bus.write_data.val();
        self.tx_ram.write_a.next = self.bus.write.val() && self.in_tx_buffer.val();
        self.status_clear.next = bits::<3>(0);
        if self.bus.write.val() && self.in_registers.val() {
            if self.word.val() == self.word_control.val() {
                self.control.d.next = self.bus.write_data.val().get_bits::<3>(0);
            }
            if self.word.val() == self.word_int_enable.val() {
                self.int_enable.d.next = self.bus.write_data.val().get_bits::<3>(0);
            }
            if self.word.val() == self.word_int_status.val() {
                self.status_clear.next = self.bus.write_data.val().get_bits::<3>(0);
            }
            if self.word.val() == self.word_address_low.val() {
                self.address_low.d.next = self.bus.write_data.val();
            }
            if self.word.val() == self.word_address_high.val() {
                self.address_high.d.next = self.bus.write_data.val().get_bits::<16>(0);
            }
        }
        for s in 0..8 {
            if self.bus.write.val() && self.in_rx_descriptors.val() && self.slot.val().index() == s
            {
                self.rx_descriptor[s].d.next =
                    self.bus.write_data.val() & self.descriptor_mask.val();
            }
        }
        for s in 0..4 {
            if self.bus.write.val() && self.in_tx_descriptors.val() && self.slot.val().index() == s
            {
                self.tx_descriptor[s].d.next =
                    self.bus.write_data.val() & self.descriptor_mask.val();
            }
        }

        // Receive: the pins one flop behind rx_clk's synchroniser, an edge
        // when rx_clk is seen high after low.
        self.rx_sync_first.d.next = bit_cast::<7, 1>(self.rx_clk.val().into())
            | (bit_cast::<7, 1>(self.rx_dv.val().into()) << 1)
            | (bit_cast::<7, 1>(self.rx_er.val().into()) << 2)
            | (bit_cast::<7, 4>(self.rxd.val()) << 3);
        self.rx_sync_second.d.next = self.rx_sync_first.q.val();
        self.rx_sync_third.d.next = self.rx_sync_second.q.val();
        self.rx_edge.next =
            self.rx_sync_second.q.val().get_bit(0) && !self.rx_sync_third.q.val().get_bit(0);
        self.rx_valid.next = self.rx_sync_third.q.val().get_bit(1);
        self.rx_error.next = self.rx_sync_third.q.val().get_bit(2);
        self.rx_nibble.next = self.rx_sync_third.q.val().get_bits::<4>(3);
        self.rx_next_owned.next = false;
        for s in 0..8 {
            if self.rx_next.q.val().index() == s {
                self.rx_next_owned.next = self.rx_descriptor[s].q.val().get_bit(31);
            }
        }
        // The CRC takes whole bytes, so a frame ending in half a byte is
        // checked without it (§4.2.4.2).
        self.rx_crc_low.crc.next = self.rx_crc.q.val();
        self.rx_crc_low.nibble.next = self.rx_low_nibble.q.val();
        self.rx_crc_step.crc.next = self.rx_crc_low.updated.val();
        self.rx_crc_step.nibble.next = self.rx_nibble.val();

        // The byte this nibble completes, merged into its word of the slot.
        self.rx_byte.next = (bit_cast::<8, 4>(self.rx_nibble.val()) << 4)
            | bit_cast::<8, 4>(self.rx_low_nibble.q.val());
        self.rx_lane.next = self.rx_count.q.val().get_bits::<2>(0);
        self.rx_merged.next =
            (self.rx_word.q.val() & !bits::<32>(0xFF)) | bit_cast::<32, 8>(self.rx_byte.val());
        if self.rx_lane.val() == 1 {
            self.rx_merged.next = (self.rx_word.q.val() & !(bits::<32>(0xFF) << 8))
                | (bit_cast::<32, 8>(self.rx_byte.val()) << 8);
        }
        if self.rx_lane.val() == 2 {
            self.rx_merged.next = (self.rx_word.q.val() & !(bits::<32>(0xFF) << 16))
                | (bit_cast::<32, 8>(self.rx_byte.val()) << 16);
        }
        if self.rx_lane.val() == 3 {
            self.rx_merged.next = (self.rx_word.q.val() & !(bits::<32>(0xFF) << 24))
                | (bit_cast::<32, 8>(self.rx_byte.val()) << 24);
        }
        // Port B of the receive RAM: each completed byte's word, within the slot.
        self.rx_ram.address_b.next = (bit_cast::<12, 3>(self.rx_next.q.val()) << 9)
            | bit_cast::<12, 9>(self.rx_count.q.val().get_bits::<9>(2));
        self.rx_ram.write_data_b.next = self.rx_merged.val();
        self.rx_ram.write_b.next = self.rx_edge.val()
            && self.rx_state.q.val() == self.rx_data.val()
            && self.rx_valid.val()
            && self.rx_high_nibble.q.val()
            && self.rx_owned.q.val()
            && self.rx_count.q.val() < self.slot_bytes.val();

        if self.rx_edge.val() {
            if self.rx_state.q.val() == self.rx_idle.val() && self.rx_valid.val() {
                self.rx_errored.d.next = self.rx_error.val();
                self.rx_state.d.next = self.rx_discard.val();
                if self.rx_nibble.val() == 5 {
                    self.rx_state.d.next = self.rx_preamble.val();
                }
            }
            if self.rx_state.q.val() == self.rx_preamble.val() {
                self.rx_errored.d.next = self.rx_errored.q.val() || self.rx_error.val();
                if !self.rx_valid.val() {
                    self.rx_state.d.next = self.rx_idle.val();
                } else if self.rx_nibble.val() == 0xD {
                    // The start frame delimiter: the frame begins.
                    self.rx_state.d.next = self.rx_data.val();
                    self.rx_count.d.next = bits::<16>(0);
                    self.rx_high_nibble.d.next = false;
                    self.rx_crc.d.next = self.crc_initial.val();
                    self.rx_owned.d.next = self.rx_next_owned.val();
                } else if self.rx_nibble.val() != 5 {
                    self.rx_state.d.next = self.rx_discard.val();
                }
            }
            if self.rx_state.q.val() == self.rx_data.val() {
                if !self.rx_valid.val() {
                    self.rx_state.d.next = self.rx_end.val();
                } else {
                    self.rx_errored.d.next = self.rx_errored.q.val() || self.rx_error.val();
                    self.rx_high_nibble.d.next = !self.rx_high_nibble.q.val();
                    self.rx_low_nibble.d.next = self.rx_nibble.val();
                    if self.rx_high_nibble.q.val() {
                        self.rx_crc.d.next = self.rx_crc_step.updated.val();
                        self.rx_word.d.next = self.rx_merged.val();
                        if self.rx_count.q.val() == 3 {
                            self.destination_low.d.next = self.rx_merged.val();
                        }
                        if self.rx_count.q.val() == 5 {
                            self.destination_high.d.next = self.rx_merged.val().get_bits::<16>(0);
                        }
                        if self.rx_count.q.val() != 0xFFFF {
                            self.rx_count.d.next = self.rx_count.q.val() + 1;
                        }
                    }
                }
            }
            if self.rx_state.q.val() == self.rx_discard.val() && !self.rx_valid.val() {
                self.rx_state.d.next = self.rx_idle.val();
            }
        }

        // The frame is judged in a cycle without a bus write.
        self.rx_frame_length.next = self.rx_count.q.val() - self.fcs_bytes.val();
        self.rx_intact.next = self.rx_crc.q.val() == self.crc_residue.val()
            && !self.rx_errored.q.val()
            && self.rx_count.q.val() >= self.fcs_bytes.val();
        self.rx_accepted.next = self.control.q.val().get_bit(2)
            || (self.rx_frame_length.val() >= self.address_bytes.val()
                && ((self.destination_low.q.val() == self.address_low.q.val()
                    && self.destination_high.q.val() == self.address_high.q.val())
                    || (self.destination_low.q.val() == self.all_ones.val()
                        && self.destination_high.q.val() == 0xFFFF)));
        self.rx_slot_owned.next = self.rx_owned.q.val() && self.rx_next_owned.val();
        self.rx_raise.next = bits::<3>(0);
        if self.rx_state.q.val() == self.rx_end.val() && !self.bus.write.val() {
            self.rx_state.d.next = self.rx_idle.val();
            if self.control.q.val().get_bit(0) {
                if !self.rx_intact.val() {
                    self.rx_errors.d.next = self.rx_errors.q.val() + 1;
                } else if self.rx_accepted.val() {
                    if self.rx_frame_length.val() > self.slot_bytes.val() {
                        self.rx_oversize.d.next = self.rx_oversize.q.val() + 1;
                    } else if !self.rx_slot_owned.val() {
                        self.rx_overruns.d.next = self.rx_overruns.q.val() + 1;
                        self.rx_raise.next = bits::<3>(4);
                    } else {
                        // LENGTH, OWN clear: the slot is software's.
                        for s in 0..8 {
                            if self.rx_next.q.val().index() == s {
                                self.rx_descriptor[s].d.next =
                                    bit_cast::<32, 16>(self.rx_frame_length.val());
                            }
                        }
                        self.rx_frames.d.next = self.rx_frames.q.val() + 1;
                        self.rx_raise.next = bits::<3>(1);
                        self.rx_next.d.next = self.rx_next.q.val() + 1;
                    }
                }
            }
        }

        // Transmit: an edge when tx_clk is seen high after low.
        self.tx_sync_first.d.next = self.tx_clk.val();
        self.tx_sync_second.d.next = self.tx_sync_first.q.val();
        self.tx_sync_third.d.next = self.tx_sync_second.q.val();
        self.tx_edge.next = self.tx_sync_second.q.val() && !self.tx_sync_third.q.val();
        self.tx_en.next = self.tx_enable_pin.q.val();
        self.txd.next = self.tx_data_pin.q.val();

        // The byte being sent: from the slot (port B, read a cycle after
        // its index moves), zero past the frame.
        self.tx_ram.address_b.next = (bit_cast::<12, 2>(self.tx_next.q.val()) << 9)
            | bit_cast::<12, 9>(self.tx_index.q.val().get_bits::<9>(2));
        self.tx_ram.write_b.next = false;
        self.tx_ram.write_data_b.next = bits::<32>(0);
        self.tx_lane.next = self.tx_index.q.val().get_bits::<2>(0);
        self.tx_slot_byte.next = self.tx_ram.read_data_b.val().get_bits::<8>(0);
        if self.tx_lane.val() == 1 {
            self.tx_slot_byte.next = self.tx_ram.read_data_b.val().get_bits::<8>(8);
        }
        if self.tx_lane.val() == 2 {
            self.tx_slot_byte.next = self.tx_ram.read_data_b.val().get_bits::<8>(16);
        }
        if self.tx_lane.val() == 3 {
            self.tx_slot_byte.next = self.tx_ram.read_data_b.val().get_bits::<8>(24);
        }
        self.tx_byte.next = bits::<8>(0);
        if self.tx_index.q.val() < self.tx_frame_length.q.val() {
            self.tx_byte.next = self.tx_slot_byte.val();
        }
        self.tx_nibble.next = self.tx_byte.val().get_bits::<4>(0);
        if self.tx_high_nibble.q.val() {
            self.tx_nibble.next = self.tx_byte.val().get_bits::<4>(4);
        }
        self.tx_padded_length.next = self.tx_frame_length.q.val();
        if self.tx_frame_length.q.val() < self.min_frame.val() {
            self.tx_padded_length.next = self.min_frame.val();
        }
        self.tx_crc_step.crc.next = self.tx_crc.q.val();
        self.tx_crc_step.nibble.next = self.tx_nibble.val();
        self.tx_next_owned.next = false;
        self.tx_next_length.next = bits::<12>(0);
        for s in 0..4 {
            if self.tx_next.q.val().index() == s {
                self.tx_next_owned.next = self.tx_descriptor[s].q.val().get_bit(31);
                self.tx_next_length.next = self.tx_descriptor[s].q.val().get_bits::<12>(0);
            }
        }

        // A slot the MAC owns at TX_NEXT starts, in a cycle without a bus write.
        if self.tx_state.q.val() == self.tx_idle.val()
            && !self.bus.write.val()
            && self.control.q.val().get_bit(1)
            && self.tx_next_owned.val()
        {
            self.tx_frame_length.d.next = self.tx_next_length.val();
            self.tx_count.d.next = bits::<5>(0);
            self.tx_index.d.next = bits::<12>(0);
            if self.tx_next_length.val() != 0 && self.tx_next_length.val() <= self.slot_length.val()
            {
                self.tx_state.d.next = self.tx_preamble.val();
                self.tx_sent.d.next = true;
            } else {
                // Sent as nothing: straight back to software, no gap.
                self.tx_state.d.next = self.tx_done.val();
                self.tx_sent.d.next = false;
            }
        }
        if self.tx_edge.val() {
            self.tx_enable_pin.d.next = false;
            self.tx_data_pin.d.next = bits::<4>(0);
            if self.tx_state.q.val() == self.tx_preamble.val() {
                self.tx_enable_pin.d.next = true;
                self.tx_data_pin.d.next = bits::<4>(5);
                self.tx_count.d.next = self.tx_count.q.val() + 1;
                if self.tx_count.q.val() == self.last_preamble_nibble.val() {
                    self.tx_data_pin.d.next = bits::<4>(0xD);
                    self.tx_state.d.next = self.tx_data.val();
                    self.tx_index.d.next = bits::<12>(0);
                    self.tx_high_nibble.d.next = false;
                    self.tx_crc.d.next = self.crc_initial.val();
                }
            }
            if self.tx_state.q.val() == self.tx_data.val() {
                self.tx_enable_pin.d.next = true;
                self.tx_data_pin.d.next = self.tx_nibble.val();
                self.tx_crc.d.next = self.tx_crc_step.updated.val();
                self.tx_high_nibble.d.next = !self.tx_high_nibble.q.val();
                if self.tx_high_nibble.q.val() {
                    self.tx_index.d.next = self.tx_index.q.val() + 1;
                    if self.tx_index.q.val() + 1 == self.tx_padded_length.val() {
                        // The FCS: the complemented register, least significant bit first.
                        self.tx_state.d.next = self.tx_fcs_state.val();
                        self.tx_fcs.d.next = !self.tx_crc_step.updated.val();
                        self.tx_count.d.next = bits::<5>(0);
                    }
                }
            }
            if self.tx_state.q.val() == self.tx_fcs_state.val() {
                self.tx_enable_pin.d.next = true;
                self.tx_data_pin.d.next = self.tx_fcs.q.val().get_bits::<4>(0);
                self.tx_fcs.d.next = self.tx_fcs.q.val() >> 4;
                self.tx_count.d.next = self.tx_count.q.val() + 1;
                if self.tx_count.q.val() == 7 {
                    self.tx_state.d.next = self.tx_done.val();
                    self.tx_count.d.next = self.gap_nibbles.val();
                }
            }
            if (self.tx_state.q.val() == self.tx_done.val()
                || self.tx_state.q.val() == self.tx_gap.val())
                && self.tx_count.q.val() != 0
            {
                self.tx_count.d.next = self.tx_count.q.val() - 1;
            }
        }
        self.tx_raise.next = bits::<3>(0);
        if self.tx_state.q.val() == self.tx_done.val() && !self.bus.write.val() {
            for s in 0..4 {
                if self.tx_next.q.val().index() == s {
                    self.tx_descriptor[s].d.next =
                        self.tx_descriptor[s].q.val() & self.length_mask.val();
                }
            }
            if self.tx_sent.q.val() {
                self.tx_frames.d.next = self.tx_frames.q.val() + 1;
            }
            self.tx_raise.next = bits::<3>(2);
            self.tx_next.d.next = self.tx_next.q.val() + 1;
            self.tx_state.d.next = self.tx_gap.val();
        }
        if self.tx_state.q.val() == self.tx_gap.val() && self.tx_count.q.val() == 0 {
            self.tx_state.d.next = self.tx_idle.val();
        }

        // The interrupt: events raise INT_STATUS bits, writing 1 clears them.
        self.int_status.d.next = (self.int_status.q.val() & !self.status_clear.val())
            | self.rx_raise.val()
            | self.tx_raise.val();
        self.irq.next = (self.int_status.q.val() & self.int_enable.q.val()) != 0;

        if self.reset.val() {
            self.control.d.next = bits::<3>(0);
            self.int_enable.d.next = bits::<3>(0);
            self.int_status.d.next = bits::<3>(0);
            self.address_low.d.next = bits::<32>(0);
            self.address_high.d.next = bits::<16>(0);
            self.rx_next.d.next = bits::<3>(0);
            self.tx_next.d.next = bits::<2>(0);
            self.rx_frames.d.next = bits::<32>(0);
            self.rx_overruns.d.next = bits::<32>(0);
            self.rx_oversize.d.next = bits::<32>(0);
            self.tx_frames.d.next = bits::<32>(0);
            self.rx_errors.d.next = bits::<32>(0);
            for s in 0..8 {
                self.rx_descriptor[s].d.next = bits::<32>(0);
            }
            for s in 0..4 {
                self.tx_descriptor[s].d.next = bits::<32>(0);
            }
            self.read_valid.d.next = false;
            self.rx_state.d.next = self.rx_idle.val();
            self.tx_state.d.next = self.tx_idle.val();
            self.tx_enable_pin.d.next = false;
            self.tx_data_pin.d.next = bits::<4>(0);
        }
    }
}
