//! The RTL Ethernet MAC on its MII pins against the ISS's MAC model
//! (`weft_iss::soc::Mac`): the same register programs and the same frames
//! give the same register reads, the same received slot contents, the
//! same transmitted frames and the same interrupt line.
//!
//! A PHY on the pins, written here from IEEE 802.3 clause 22, runs the
//! MII clocks and serialises each frame onto the receive pins as a real
//! one does (preamble, start frame delimiter, nibbles low first, the frame
//! check sequence from the `crc` crate) and deserialises the transmit
//! pins, checking the preamble, the delimiter, the 64-byte minimum and
//! the FCS (again with the `crc` crate) and measuring the interpacket gap.
//! The model takes the same frames whole, without FCS. Each operation
//! runs until the line is quiet (the RTL has a line rate, the model none),
//! then both are compared. Frames with a wrong FCS or `rx_er` go to the
//! RTL only: it must drop them and count them in `RX_ERRORS`, which the
//! model, having no line, leaves at 0.

use std::collections::VecDeque;

use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::driver::CycleDriver;
use weft_hdl::soc::mac::GAP_NIBBLES;
use weft_hdl::soc::{EthernetMac, MemoryImage, Soc, SocBench};
use weft_iss::encode as e;
use weft_iss::soc::{Mac, Reception, MIN_FRAME};
use weft_iss::{Bus, Hart, HarvardBus, Step, Width};
use weft_regs::soc::mac;

/// The Ethernet frame check sequence as the `crc` crate's catalogue
/// names it (CRC-32/ISO-HDLC: reflected, initial and final value all ones).
const ETHERNET: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);

/// Nibble times the transmit line must stay idle, after the receive queue
/// empties, before the MAC counts as quiet: the gap plus the few nibbles a
/// waiting slot takes to start.
const QUIET_NIBBLES: u32 = GAP_NIBBLES + 8;

/// SoC cycles a test may run before the MAC counts as hung.
const MAX_CYCLES: u64 = 2_000_000;

fn register(r: weft_regs::Register) -> u32 {
    r.address(0, 0)
}

/// The frame on the line: the frame, then its FCS, least significant byte first.
fn with_fcs(frame: &[u8]) -> Vec<u8> {
    let mut bytes = frame.to_vec();
    bytes.extend_from_slice(&ETHERNET.checksum(frame).to_le_bytes());
    bytes
}

/// What a frame handed to the PHY suffers on the way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Damage {
    /// None.
    Intact,
    /// One bit flipped, in the frame or its FCS.
    FlippedBit(usize),
    /// `rx_er` during one nibble.
    ReceiveError(usize),
    /// A half byte after the FCS: dribble bits, which the receiver
    /// truncates to whole bytes before the check (§4.2.4.2).
    Dribble(u8),
}

/// One MII nibble time on the receive pins.
#[derive(Clone, Copy, Debug)]
struct RxNibble {
    dv: bool,
    er: bool,
    data: u8,
}

const IDLE: RxNibble = RxNibble {
    dv: false,
    er: false,
    data: 0,
};

/// The transmit pins as the PHY samples them: frames of nibbles and the
/// idle nibble times between them.
#[derive(Default)]
struct TxWire {
    current: Option<Vec<u8>>,
    idle_run: u32,
    sent_before: bool,
    frames: Vec<Vec<u8>>,
    gaps: Vec<u32>,
}

impl TxWire {
    fn sample(&mut self, en: bool, data: u8) {
        if en {
            let current = self.current.get_or_insert_with(Vec::new);
            if current.is_empty() && self.sent_before {
                self.gaps.push(self.idle_run);
            }
            current.push(data);
            self.idle_run = 0;
        } else {
            if let Some(frame) = self.current.take() {
                self.frames.push(frame);
                self.sent_before = true;
            }
            self.idle_run = self.idle_run.saturating_add(1);
        }
    }
}

/// The frame a transmission of `nibbles` carried, without its FCS, after
/// checking what IEEE 802.3 requires of it on the wire.
fn decode(nibbles: &[u8]) -> Vec<u8> {
    assert!(
        nibbles.len() >= 16,
        "{} nibbles: no preamble",
        nibbles.len()
    );
    assert!(
        nibbles[..15].iter().all(|&n| n == 0x5) && nibbles[15] == 0xD,
        "preamble and SFD are 7 x 0x55, 0xD5, low nibble first: {:x?}",
        &nibbles[..16]
    );
    assert_eq!(nibbles.len() % 2, 0, "a whole number of bytes");
    let bytes: Vec<u8> = nibbles[16..]
        .chunks(2)
        .map(|pair| pair[0] | pair[1] << 4)
        .collect();
    assert!(
        bytes.len() >= MIN_FRAME + 4,
        "{} bytes with FCS: below the 64-byte minimum (§4.2.8)",
        bytes.len()
    );
    let (frame, fcs) = bytes.split_at(bytes.len() - 4);
    assert_eq!(
        fcs,
        ETHERNET.checksum(frame).to_le_bytes(),
        "the FCS of a {}-byte frame",
        frame.len()
    );
    frame.to_vec()
}

/// Word reads and writes at SoC addresses.
trait Port {
    fn write(&mut self, address: u32, value: u32);
    fn read(&mut self, address: u32) -> u32;
}

/// The ISS model on a bus.
struct Iss {
    bus: HarvardBus,
    mac: Mac,
}

impl Iss {
    fn new() -> Self {
        let mut bus = HarvardBus::reference();
        let mac = Mac::new();
        mac.attach(&mut bus).expect("the MAC's window is free");
        Iss { bus, mac }
    }
}

impl Port for Iss {
    fn write(&mut self, address: u32, value: u32) {
        self.bus
            .store(address, Width::Word, value)
            .expect("a MAC word");
    }

    fn read(&mut self, address: u32) -> u32 {
        self.bus.load(address, Width::Word).expect("a MAC word")
    }
}

/// The levels a PHY drives on a MAC's MII inputs for one SoC cycle.
struct PhyPins {
    rx_clk: bool,
    rx_dv: bool,
    rx_er: bool,
    rxd: u32,
    tx_clk: bool,
}

/// A PHY on the MII pins, one SoC clock cycle at a time. It changes the
/// receive pins as `rx_clk` rises (the MAC takes them at the next rise)
/// and samples the transmit pins as `tx_clk` rises.
struct Phy {
    /// SoC cycles each MII clock is high, then low.
    high: u32,
    low: u32,
    /// SoC cycles `tx_clk` lags `rx_clk`.
    tx_lag: u32,
    phase: u32,
    rx_queue: VecDeque<RxNibble>,
    rx_now: RxNibble,
    wire: TxWire,
}

impl Phy {
    fn new(high: u32, low: u32, tx_lag: u32) -> Self {
        Phy {
            high,
            low,
            tx_lag,
            phase: 0,
            rx_queue: VecDeque::new(),
            rx_now: IDLE,
            wire: TxWire::default(),
        }
    }

    /// SoC cycles per nibble.
    fn period(&self) -> u32 {
        self.high + self.low
    }

    /// The pins for the next SoC cycle, given the MAC's transmit pins as
    /// they are before it.
    fn cycle(&mut self, tx_en: bool, txd: u32) -> PhyPins {
        let period = self.period();
        let tx_phase = (self.phase + period - self.tx_lag % period) % period;
        if self.phase == 0 {
            self.rx_now = self.rx_queue.pop_front().unwrap_or(IDLE);
        }
        if tx_phase == 0 {
            self.wire.sample(tx_en, txd as u8);
        }
        let pins = PhyPins {
            rx_clk: self.phase < self.high,
            rx_dv: self.rx_now.dv,
            rx_er: self.rx_now.er,
            rxd: u32::from(self.rx_now.data),
            tx_clk: tx_phase < self.high,
        };
        self.phase = (self.phase + 1) % period;
        pins
    }

    /// Queues `frame` with its FCS on the receive pins after `preamble`
    /// 0x5 nibbles and the SFD, damaged as asked, then an interpacket gap.
    fn send(&mut self, frame: &[u8], preamble: usize, damage: Damage) {
        let mut bytes = with_fcs(frame);
        if let Damage::FlippedBit(bit) = damage {
            let bit = bit % (8 * bytes.len());
            bytes[bit / 8] ^= 1 << (bit % 8);
        }
        let data = |data| RxNibble {
            dv: true,
            er: false,
            data,
        };
        let mut nibbles: Vec<RxNibble> = std::iter::repeat_n(data(0x5), preamble).collect();
        nibbles.push(data(0xD));
        let start = nibbles.len();
        nibbles.extend(bytes.iter().flat_map(|b| [data(b & 0xF), data(b >> 4)]));
        match damage {
            Damage::ReceiveError(at) => {
                let at = start + at % (nibbles.len() - start);
                nibbles[at].er = true;
            }
            Damage::Dribble(extra) => nibbles.push(data(extra & 0xF)),
            Damage::Intact | Damage::FlippedBit(_) => {}
        }
        self.rx_queue.extend(nibbles);
        self.rx_queue
            .extend(std::iter::repeat_n(IDLE, GAP_NIBBLES as usize));
    }

    /// Frames taken off the transmit pins, checked and without FCS.
    fn transmitted(&self) -> Vec<Vec<u8>> {
        self.wire.frames.iter().map(|n| decode(n)).collect()
    }
}

/// The RTL MAC on the single-thread driver, a PHY on its pins.
struct Rtl {
    driver: CycleDriver<EthernetMac>,
    phy: Phy,
}

impl Rtl {
    fn new(high: u32, low: u32, tx_lag: u32) -> Self {
        let mut driver =
            CycleDriver::new(EthernetMac::new(), |m| &mut m.clock).expect("the MAC connects");
        driver.block().reset.next = true;
        driver.tick().expect("settles");
        driver.block().reset.next = false;
        Rtl {
            driver,
            phy: Phy::new(high, low, tx_lag),
        }
    }

    /// One SoC clock cycle of the MAC and the PHY.
    fn cycle(&mut self) {
        let mac = self.driver.block();
        let pins = self.phy.cycle(mac.tx_en.val(), mac.txd.val().to_u32());
        mac.rx_clk.next = pins.rx_clk;
        mac.rx_dv.next = pins.rx_dv;
        mac.rx_er.next = pins.rx_er;
        mac.rxd.next = pins.rxd.to_bits();
        mac.tx_clk.next = pins.tx_clk;
        self.driver.tick().expect("the MAC settles");
        assert!(
            self.driver.cycles() < MAX_CYCLES,
            "the MAC never went quiet"
        );
    }

    /// Queues `frame` on the receive pins (see [`Phy::send`]).
    fn send_to_mac(&mut self, frame: &[u8], preamble: usize, damage: Damage) {
        self.phy.send(frame, preamble, damage);
    }

    /// Runs until the receive queue is empty and the transmit line has
    /// been idle long enough that no frame is waiting to go.
    fn settle_line(&mut self) {
        let period = u64::from(self.phy.period());
        while !self.phy.rx_queue.is_empty() {
            self.cycle();
        }
        let quiet_from = self.phy.wire.frames.len();
        let mut quiet = 0;
        while quiet < u64::from(QUIET_NIBBLES) * period {
            self.cycle();
            quiet += 1;
            if self.phy.wire.frames.len() != quiet_from || self.phy.wire.current.is_some() {
                return self.settle_line();
            }
        }
    }

    /// Drives one bus access for one cycle; the read's answer.
    fn access(&mut self, address: u32, write: Option<u32>) -> u32 {
        let bus = &mut self.driver.block().bus;
        bus.address.next = address.to_bits();
        bus.read.next = write.is_none();
        bus.write.next = write.is_some();
        bus.write_data.next = write.unwrap_or(0).to_bits();
        self.cycle();
        let bus = &mut self.driver.block().bus;
        bus.read.next = false;
        bus.write.next = false;
        assert_eq!(bus.read_valid.val(), write.is_none(), "answered iff a read");
        bus.read_data.val().to_u32()
    }

    /// Frames the PHY took off the transmit pins, checked and without FCS.
    fn transmitted(&self) -> Vec<Vec<u8>> {
        self.phy.transmitted()
    }
}

impl Port for Rtl {
    fn write(&mut self, address: u32, value: u32) {
        self.access(address, Some(value));
    }

    fn read(&mut self, address: u32) -> u32 {
        self.access(address, None)
    }
}

/// Every register but RX_ERRORS and every descriptor, in address order.
fn snapshot<P: Port>(port: &mut P) -> Vec<u32> {
    let registers = mac::BLOCK
        .registers
        .iter()
        .filter(|r| r.name != mac::RX_ERRORS.name)
        .map(|r| r.address(0, 0));
    let rx = (0..mac::RX_SLOTS).map(|s| mac::RX_DESCRIPTOR.address(0, s));
    let tx = (0..mac::TX_SLOTS).map(|s| mac::TX_DESCRIPTOR.address(0, s));
    registers
        .chain(rx)
        .chain(tx)
        .collect::<Vec<_>>()
        .into_iter()
        .map(|a| port.read(a))
        .collect()
}

/// The first `length` bytes of the slot from `base`.
fn slot_bytes<P: Port>(port: &mut P, base: u32, length: usize) -> Vec<u8> {
    let mut bytes: Vec<u8> = (0..length.div_ceil(4) as u32)
        .flat_map(|w| port.read(base + 4 * w).to_le_bytes())
        .collect();
    bytes.truncate(length);
    bytes
}

/// Writes `frame` into the transmit slot at `TX_NEXT` and hands it over with `length`.
fn send<P: Port>(port: &mut P, frame: &[u8], length: u32) {
    let slot = mac::TX_NEXT.decode(port.read(register(mac::RING)));
    send_in(port, slot, frame, length);
}

/// Writes `frame` into transmit slot `slot` and hands it over with `length`.
fn send_in<P: Port>(port: &mut P, slot: u32, frame: &[u8], length: u32) {
    for (w, chunk) in frame.chunks(4).enumerate() {
        let mut word = [0; 4];
        word[..chunk.len()].copy_from_slice(chunk);
        port.write(mac::tx_slot(slot) + 4 * w as u32, u32::from_le_bytes(word));
    }
    port.write(
        mac::TX_DESCRIPTOR.address(0, slot),
        mac::OWN.mask() | mac::LENGTH.encode(length),
    );
}

/// A frame's destination.
#[derive(Clone, Copy, Debug)]
enum To {
    Station,
    Broadcast,
    Other([u8; 6]),
}

/// A register-level operation, or a frame from the line.
#[derive(Clone, Debug)]
enum Op {
    Control(u32),
    IntEnable(u32),
    ClearStatus(u32),
    Station([u8; 6]),
    /// Writes a receive slot's descriptor.
    GiveRx(u32, u32),
    /// Hands every receive slot to the MAC.
    GiveAllRx,
    /// Reads a receive slot's frame if one landed there, and hands it back.
    TakeRx(u32),
    /// A frame into the transmit slot at TX_NEXT, with this LENGTH
    /// (the frame's own, or one the MAC sends as nothing).
    Send(Vec<u8>, u32),
    /// A frame from the line, this many preamble nibbles before the SFD.
    Receive {
        to: To,
        frame: Vec<u8>,
        preamble: usize,
        damage: Damage,
    },
}

/// The two sides and what the test knows of them.
struct Pair {
    iss: Iss,
    rtl: Rtl,
    station: [u8; 6],
    control: u32,
    line_errors: u32,
    /// Receive slots a frame landed in since software last wrote their
    /// descriptor: the only ones whose bytes the register map defines.
    landed: [bool; mac::RX_SLOTS as usize],
}

impl Pair {
    fn new(rtl: Rtl) -> Self {
        Pair {
            iss: Iss::new(),
            rtl,
            station: [0; 6],
            control: 0,
            line_errors: 0,
            landed: [false; mac::RX_SLOTS as usize],
        }
    }

    fn write(&mut self, address: u32, value: u32) {
        self.iss.write(address, value);
        self.rtl.write(address, value);
    }

    fn run(&mut self, op: &Op) {
        match op {
            Op::Control(v) => {
                self.control = v & mac::CONTROL.mask();
                self.write(register(mac::CONTROL), *v);
            }
            Op::IntEnable(v) => self.write(register(mac::INT_ENABLE), *v),
            Op::ClearStatus(v) => self.write(register(mac::INT_STATUS), *v),
            Op::Station(a) => {
                self.station = *a;
                self.write(
                    register(mac::ADDRESS_LOW),
                    u32::from_le_bytes([a[0], a[1], a[2], a[3]]),
                );
                self.write(
                    register(mac::ADDRESS_HIGH),
                    u32::from_le_bytes([a[4], a[5], 0xA5, 0x5A]),
                );
            }
            Op::GiveRx(slot, v) => {
                self.landed[*slot as usize] = false;
                self.write(mac::RX_DESCRIPTOR.address(0, *slot), *v);
            }
            Op::GiveAllRx => {
                self.landed = [false; mac::RX_SLOTS as usize];
                for slot in 0..mac::RX_SLOTS {
                    self.write(mac::RX_DESCRIPTOR.address(0, slot), mac::OWN.mask());
                }
            }
            Op::TakeRx(slot) => {
                let address = mac::RX_DESCRIPTOR.address(0, *slot);
                let descriptor = self.iss.read(address);
                assert_eq!(self.rtl.read(address), descriptor, "RX descriptor {slot}");
                if self.landed[*slot as usize] {
                    self.landed[*slot as usize] = false;
                    let length = mac::LENGTH.decode(descriptor) as usize;
                    let base = mac::rx_slot(*slot);
                    assert_eq!(
                        slot_bytes(&mut self.rtl, base, length),
                        slot_bytes(&mut self.iss, base, length),
                        "the frame in RX slot {slot}"
                    );
                    self.write(address, mac::OWN.mask());
                }
            }
            Op::Send(frame, length) => {
                let slot = mac::TX_NEXT.decode(self.iss.read(register(mac::RING)));
                assert_eq!(
                    mac::TX_NEXT.decode(self.rtl.read(register(mac::RING))),
                    slot,
                    "TX_NEXT"
                );
                send(&mut self.iss, frame, *length);
                send(&mut self.rtl, frame, *length);
            }
            Op::Receive {
                to,
                frame,
                preamble,
                damage,
            } => {
                let mut frame = frame.clone();
                let destination = match *to {
                    To::Station => self.station,
                    To::Broadcast => [0xFF; 6],
                    To::Other(a) => a,
                };
                let n = frame.len().min(6);
                frame[..n].copy_from_slice(&destination[..n]);
                self.rtl.send_to_mac(&frame, *preamble, *damage);
                if matches!(damage, Damage::Intact | Damage::Dribble(_)) {
                    if let Reception::Landed { slot } = self.iss.mac.receive(&frame) {
                        self.landed[slot as usize] = true;
                    }
                } else if mac::RX_ENABLE.decode(self.control) != 0 {
                    self.line_errors += 1;
                }
            }
        }
        self.rtl.settle_line();
    }

    /// Compares everything the register map shows.
    fn compare(&mut self, after: &str) {
        assert_eq!(
            snapshot(&mut self.rtl),
            snapshot(&mut self.iss),
            "registers and descriptors after {after}"
        );
        assert_eq!(
            self.rtl.read(register(mac::RX_ERRORS)),
            self.line_errors,
            "RX_ERRORS after {after}"
        );
        assert_eq!(
            self.rtl.driver.block().irq.val(),
            self.iss.mac.interrupt_pending(),
            "the interrupt line after {after}"
        );
    }

    /// The final comparison: frames sent and every frame software owns.
    fn finish(&mut self) {
        assert_eq!(
            self.rtl.transmitted(),
            self.iss.mac.take_transmitted(),
            "transmitted frames"
        );
        assert!(
            self.rtl.phy.wire.gaps.iter().all(|&g| g >= GAP_NIBBLES),
            "interpacket gaps {:?} (§4.4.2: 96 bit times)",
            self.rtl.phy.wire.gaps
        );
        for slot in 0..mac::RX_SLOTS {
            self.run(&Op::TakeRx(slot));
        }
    }
}

fn check(ops: &[Op], rtl: Rtl) {
    let mut pair = Pair::new(rtl);
    for (i, op) in ops.iter().enumerate() {
        pair.run(op);
        pair.compare(&format!("op {i} {op:?}"));
    }
    pair.finish();
}

const STATION: [u8; 6] = [0x02, 0x57, 0x45, 0x46, 0x54, 0x01];

/// A frame from the station to `to`: header, then bytes counting from `seed`.
fn frame(to: [u8; 6], len: usize, seed: u8) -> Vec<u8> {
    let mut f = to.to_vec();
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x99, 0x08, 0x00]);
    f.extend((0..len.saturating_sub(f.len())).map(|i| seed.wrapping_add(i as u8)));
    f.truncate(len);
    f
}

/// A PHY at the minimum clock ratio: 4 SoC cycles per nibble.
fn fastest() -> Rtl {
    Rtl::new(2, 2, 0)
}

#[test]
fn the_fcs_on_the_wire_is_the_ieee_crc_32() {
    let mut rtl = fastest();
    rtl.write(register(mac::CONTROL), mac::TX_ENABLE.mask());
    let sent = frame([0xFF; 6], 64, 0x30);
    send(&mut rtl, &sent, 64);
    rtl.settle_line();
    // The raw nibbles, decoded here without `decode`'s help.
    let nibbles = &rtl.phy.wire.frames[0];
    assert_eq!(nibbles.len(), 16 + 2 * (64 + 4));
    let bytes: Vec<u8> = nibbles
        .chunks(2)
        .map(|pair| pair[0] | pair[1] << 4)
        .collect();
    assert_eq!(bytes[..8], [0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0xD5]);
    assert_eq!(bytes[8..72], sent[..]);
    let fcs = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC).checksum(&sent);
    assert_eq!(bytes[72..], fcs.to_le_bytes(), "FCS {fcs:#010x}");
    assert_eq!(rtl.read(register(mac::TX_FRAMES)), 1);
    assert_eq!(
        rtl.read(mac::TX_DESCRIPTOR.address(0, 0)),
        64,
        "OWN cleared"
    );
}

#[test]
fn a_short_frame_is_padded_to_60_bytes_before_its_fcs() {
    let mut rtl = fastest();
    rtl.write(register(mac::CONTROL), mac::TX_ENABLE.mask());
    let short = frame(STATION, 17, 1);
    send(&mut rtl, &short, 17);
    rtl.settle_line();
    assert_eq!(
        rtl.phy.wire.frames[0].len(),
        16 + 2 * 64,
        "60 bytes and the FCS"
    );
    let mut padded = short.clone();
    padded.resize(60, 0);
    assert_eq!(rtl.transmitted(), [padded]);
}

#[test]
fn back_to_back_frames_keep_exactly_the_interpacket_gap() {
    let mut rtl = Rtl::new(3, 4, 2);
    for slot in 0..3 {
        let length = 60 + slot;
        send_in(
            &mut rtl,
            slot,
            &frame(STATION, length as usize, slot as u8),
            length,
        );
    }
    rtl.write(register(mac::CONTROL), mac::TX_ENABLE.mask());
    rtl.settle_line();
    assert_eq!(rtl.transmitted().len(), 3);
    assert_eq!(
        rtl.phy.wire.gaps, [GAP_NIBBLES; 2],
        "12 byte times, no more"
    );
}

#[test]
fn a_corrupted_fcs_or_rx_er_drops_the_frame_and_counts_it() {
    let mut rtl = fastest();
    rtl.write(register(mac::ADDRESS_LOW), 0x4645_5702);
    rtl.write(register(mac::ADDRESS_HIGH), 0x0154);
    rtl.write(mac::RX_DESCRIPTOR.address(0, 0), mac::OWN.mask());
    rtl.write(register(mac::CONTROL), mac::RX_ENABLE.mask());
    let good = frame(STATION, 80, 7);
    // A bit of the FCS itself, then one of the frame.
    rtl.send_to_mac(&good, 15, Damage::FlippedBit(8 * 80 + 3));
    rtl.send_to_mac(&good, 15, Damage::FlippedBit(100));
    rtl.send_to_mac(&good, 15, Damage::ReceiveError(40));
    rtl.settle_line();
    assert_eq!(rtl.read(register(mac::RX_ERRORS)), 3);
    assert_eq!(rtl.read(register(mac::RX_FRAMES)), 0);
    assert_eq!(rtl.read(register(mac::INT_STATUS)), 0, "no event");
    assert_eq!(
        rtl.read(mac::RX_DESCRIPTOR.address(0, 0)),
        mac::OWN.mask(),
        "the slot is still the MAC's"
    );
    // The same frame intact lands, with the shortest preamble a PHY may
    // leave, and so does it with a dribble nibble after its FCS.
    rtl.send_to_mac(&good, 1, Damage::Intact);
    rtl.settle_line();
    assert_eq!(rtl.read(register(mac::RX_FRAMES)), 1);
    assert_eq!(rtl.read(mac::RX_DESCRIPTOR.address(0, 0)), 80);
    assert_eq!(slot_bytes(&mut rtl, mac::rx_slot(0), 80), good);
    rtl.write(mac::RX_DESCRIPTOR.address(0, 1), mac::OWN.mask());
    rtl.send_to_mac(&good, 15, Damage::Dribble(0xA));
    rtl.settle_line();
    assert_eq!(rtl.read(register(mac::RX_FRAMES)), 2);
    assert_eq!(rtl.read(register(mac::RX_ERRORS)), 3);
}

#[test]
fn a_slot_handed_over_during_a_frame_waits_for_the_next() {
    // Not in the model, which has no line time: ownership is judged at
    // the frame's start and end, so the frame is an overrun.
    let mut rtl = fastest();
    rtl.write(
        register(mac::CONTROL),
        mac::RX_ENABLE.mask() | mac::PROMISCUOUS.mask(),
    );
    rtl.send_to_mac(&frame(STATION, 200, 0), 15, Damage::Intact);
    for _ in 0..400 {
        rtl.cycle();
    }
    rtl.write(mac::RX_DESCRIPTOR.address(0, 0), mac::OWN.mask());
    rtl.settle_line();
    assert_eq!(rtl.read(register(mac::RX_OVERRUNS)), 1);
    rtl.send_to_mac(&frame(STATION, 200, 0), 15, Damage::Intact);
    rtl.settle_line();
    assert_eq!(rtl.read(register(mac::RX_FRAMES)), 1);
}

#[test]
fn the_iss_model_s_own_scenarios_agree() {
    // The ISS model's own directed scenarios, replayed on both.
    let other = [0x02, 0x57, 0x45, 0x46, 0x54, 0x02];
    let receive = |to, len, seed| Op::Receive {
        to,
        frame: frame([0; 6], len, seed),
        preamble: 15,
        damage: Damage::Intact,
    };
    check(
        &[
            Op::Station(STATION),
            receive(To::Station, 64, 0),
            Op::Control(0b001),
            receive(To::Station, 64, 0),
            Op::GiveRx(0, mac::OWN.mask()),
            Op::GiveRx(1, mac::OWN.mask()),
            receive(To::Station, 60, 1),
            receive(To::Other(other), 60, 1),
            receive(To::Broadcast, 61, 2),
            receive(To::Station, 62, 3),
            Op::IntEnable(0b111),
            Op::TakeRx(0),
            Op::ClearStatus(0b101),
            Op::Control(0b111),
            Op::Send(frame([0xFF; 6], 300, 9), 300),
            Op::Send(frame(STATION, 42, 1), 42),
            Op::Send(frame(STATION, 42, 1), 0),
            Op::Send(frame(STATION, 42, 1), 3000),
            Op::Send(frame(STATION, 60, 2), 60),
            receive(To::Other(other), 5, 5),
        ],
        fastest(),
    );
}

/// The MAC on the SoC: a program hands a receive slot over, enables the
/// receive interrupt and `mie.MEIE` and waits in `wfi`; a broadcast frame
/// on the MII pins wakes it through `mip.MEIP`, and it reads the frame's
/// descriptor, `RX_FRAMES` and first word, then sends that word back in a
/// padded frame. The ISS runs the same program with its model attached,
/// given the same frame while the hart waits: the same values read, the
/// same frame sent.
#[test]
fn a_frame_on_the_soc_s_pins_wakes_the_core_as_on_the_iss() {
    let base = mac::LAYOUT.base;
    let word = |r: weft_regs::Register| (r.address(0, 0) - base) as i32;
    let program = [
        e::lui(1, base >> 12),
        e::lui(2, mac::OWN.mask() >> 12),
        e::sw(2, 1, (mac::RX_DESCRIPTOR.address(0, 0) - base) as i32),
        e::addi(3, 0, mac::INT_RX.mask() as i32),
        e::sw(3, 1, word(mac::INT_ENABLE)),
        e::sw(3, 1, word(mac::CONTROL)),
        // mie.MEIE, bit 11 (Privileged 20211203 §3.1.9).
        e::lui(4, 1),
        e::addi(4, 4, -0x800),
        e::csrrs(0, 0x304, 4),
        e::wfi(),
        e::addi(5, 0, 1),
        e::lw(6, 1, (mac::RX_DESCRIPTOR.address(0, 0) - base) as i32),
        e::lw(7, 1, word(mac::RX_FRAMES)),
        e::lui(8, mac::rx_slot(0) >> 12),
        e::lw(9, 8, 0),
        e::lui(10, mac::tx_slot(0) >> 12),
        e::sw(9, 10, 0),
        e::addi(11, 0, 4),
        e::or_(11, 11, 2),
        e::sw(11, 1, (mac::TX_DESCRIPTOR.address(0, 0) - base) as i32),
        e::addi(
            12,
            0,
            (mac::RX_ENABLE.mask() | mac::TX_ENABLE.mask()) as i32,
        ),
        e::sw(12, 1, word(mac::CONTROL)),
        e::jal(0, 0),
    ];
    let sent = frame([0xFF; 6], 90, 3);

    let mut bus = HarvardBus::reference();
    let iss_soc = weft_iss::soc::Soc::attach(&mut bus).expect("the SoC window is free");
    bus.write_words(0, &program)
        .expect("instruction RAM is at 0");
    let mut hart = Hart::new(bus);
    let mut idle = 0;
    while idle < 10 {
        if iss_soc.step(&mut hart) == Step::Idle {
            idle += 1;
        }
    }
    assert_eq!(hart.reg(5), 0, "the ISS waits");
    assert_eq!(iss_soc.mac.receive(&sent), Reception::Landed { slot: 0 });
    for _ in 0..40 {
        iss_soc.step(&mut hart);
    }

    let mut memory = MemoryImage::reference();
    memory.instructions[..program.len()].copy_from_slice(&program);
    let mut bench =
        SocBench::new(Soc::new(&memory).expect("reference memories fit")).expect("the SoC builds");
    let mut phy = Phy::new(2, 3, 1);
    let cycle = |bench: &mut SocBench, phy: &mut Phy| {
        let soc = bench.soc();
        let pins = phy.cycle(soc.mii_tx_en.val(), soc.mii_txd.val().to_u32());
        soc.mii_rx_clk.next = pins.rx_clk;
        soc.mii_rx_dv.next = pins.rx_dv;
        soc.mii_rx_er.next = pins.rx_er;
        soc.mii_rxd.next = pins.rxd.to_bits();
        soc.mii_tx_clk.next = pins.tx_clk;
        bench.cycle().expect("the SoC runs");
    };
    for _ in 0..300 {
        cycle(&mut bench, &mut phy);
    }
    assert_eq!(bench.register(5), 0, "the SoC waits");
    phy.send(&sent, 15, Damage::Intact);
    while phy.wire.frames.is_empty() {
        cycle(&mut bench, &mut phy);
        assert!(bench.cycles() < 20_000, "no frame from the SoC");
    }
    for r in [5u8, 6, 7, 9] {
        assert_eq!(bench.register(r.into()), hart.reg(r), "x{r}");
    }
    assert_eq!(hart.reg(6), 90, "LENGTH, OWN clear");
    assert_eq!(phy.transmitted(), iss_soc.mac.take_transmitted());
}

#[test]
fn a_slot_s_worth_lands_and_one_byte_more_is_oversize() {
    let receive = |len| Op::Receive {
        to: To::Broadcast,
        frame: frame([0; 6], len, 4),
        preamble: 15,
        damage: Damage::Intact,
    };
    check(
        &[
            Op::GiveRx(0, mac::OWN.mask()),
            Op::Control(0b001),
            receive(mac::SLOT_SIZE as usize + 1),
            receive(mac::SLOT_SIZE as usize),
            Op::TakeRx(0),
        ],
        fastest(),
    );
}

fn destination() -> impl Strategy<Value = To> {
    prop_oneof![
        3 => Just(To::Station),
        1 => Just(To::Broadcast),
        1 => any::<[u8; 6]>().prop_map(To::Other),
    ]
}

/// Frame lengths without FCS: mostly short, some runts. A slot's edge
/// costs 16 k cycles a frame, so the directed scenarios take it.
fn frame_length() -> impl Strategy<Value = usize> {
    prop_oneof![
        6 => 14usize..90,
        1 => 0usize..14,
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let frame = frame_length().prop_flat_map(|n| proptest::collection::vec(any::<u8>(), n));
    prop_oneof![
        2 => (0u32..8, any::<u32>()).prop_map(|(c, high)| Op::Control(c | high << 3)),
        1 => any::<u32>().prop_map(Op::IntEnable),
        1 => any::<u32>().prop_map(Op::ClearStatus),
        1 => any::<[u8; 6]>().prop_map(Op::Station),
        2 => (0..mac::RX_SLOTS, prop_oneof![Just(mac::OWN.mask()), any::<u32>()])
            .prop_map(|(s, v)| Op::GiveRx(s, v)),
        1 => Just(Op::GiveAllRx),
        2 => (0..mac::RX_SLOTS).prop_map(Op::TakeRx),
        3 => (proptest::collection::vec(any::<u8>(), 1..100), prop_oneof![
                8 => Just(None),
                1 => Just(Some(0)),
                1 => (2049u32..4096).prop_map(Some),
            ])
            .prop_map(|(f, length)| {
                let l = length.unwrap_or(f.len() as u32);
                Op::Send(f, l)
            }),
        8 => (destination(), frame, 1usize..=15, prop_oneof![
                8 => Just(Damage::Intact),
                1 => any::<usize>().prop_map(Damage::FlippedBit),
                1 => any::<usize>().prop_map(Damage::ReceiveError),
                1 => any::<u8>().prop_map(Damage::Dribble),
            ])
            .prop_map(|(to, frame, preamble, damage)| Op::Receive { to, frame, preamble, damage }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn any_program_and_any_frames_agree(
        ops in proptest::collection::vec(op(), 1..16),
        start in 0..3,
    ) {
        // A third of the programs start as the firmware's driver does, a
        // third with two receive slots and every interrupt, promiscuous,
        // so the ring fills; the rest from reset.
        let mut all = match start {
            0 => vec![Op::Station(STATION), Op::GiveAllRx, Op::IntEnable(1), Op::Control(0b011)],
            1 => vec![
                Op::GiveRx(0, mac::OWN.mask()),
                Op::GiveRx(1, mac::OWN.mask()),
                Op::IntEnable(0b111),
                Op::Control(0b111),
            ],
            _ => Vec::new(),
        };
        all.extend(ops);
        check(&all, fastest());
    }
}
