//! The management Ethernet MAC (`weft_regs::soc::mac`): frames the
//! embedder injects land in the receive slots, frames the firmware hands
//! over in the transmit slots are collected for the embedder.
//!
//! The model has no line rate: a frame handed to [`Mac::receive`] lands at
//! once (or is dropped, as the register map says), and a transmit slot is
//! sent the moment the MAC owns it and `CONTROL.TX_ENABLE` is set. Nor
//! has it a line: frames come and go without a frame check sequence, so
//! none fails one and `RX_ERRORS` stays 0.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use weft_regs::soc::{mac, BLOCK_SIZE};

use super::register_at;
use crate::bus::{DeviceFault, HarvardBus, MapError, Mmio, Width};

/// The shortest frame the MAC puts on the wire without its frame check
/// sequence: a shorter one is padded with zeros (IEEE 802.3 §4.2.8,
/// minFrameSize 64 bytes less the 4-byte FCS).
pub const MIN_FRAME: usize = 60;

/// Bytes of an Ethernet header's destination address, which the address
/// filter reads.
const ADDRESS_LEN: usize = 6;

/// What became of a frame handed to [`Mac::receive`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reception {
    /// The frame landed in this receive slot.
    Landed {
        /// The slot.
        slot: u32,
    },
    /// `CONTROL.RX_ENABLE` is clear: the frame was ignored.
    Disabled,
    /// The address filter refused the frame: it is addressed to neither the
    /// station address nor broadcast (or is too short to have an address)
    /// and the MAC is not promiscuous.
    Filtered,
    /// The MAC does not own the next receive slot: the ring is full, the
    /// frame was dropped and counted in `RX_OVERRUNS`.
    Overrun,
    /// The frame is longer than a slot: dropped and counted in `RX_OVERSIZE`.
    Oversize,
}

#[derive(Debug)]
struct MacState {
    control: u32,
    int_enable: u32,
    int_status: u32,
    address_low: u32,
    address_high: u32,
    rx_next: u32,
    tx_next: u32,
    rx_frames: u32,
    rx_overruns: u32,
    rx_oversize: u32,
    tx_frames: u32,
    rx_descriptors: [u32; mac::RX_SLOTS as usize],
    tx_descriptors: [u32; mac::TX_SLOTS as usize],
    buffer: Vec<u8>,
    transmitted: VecDeque<Vec<u8>>,
}

impl MacState {
    /// Every register, descriptor and counter 0, the buffer zeroed, nothing sent.
    fn at_reset() -> Self {
        MacState {
            control: 0,
            int_enable: 0,
            int_status: 0,
            address_low: 0,
            address_high: 0,
            rx_next: 0,
            tx_next: 0,
            rx_frames: 0,
            rx_overruns: 0,
            rx_oversize: 0,
            tx_frames: 0,
            rx_descriptors: [0; mac::RX_SLOTS as usize],
            tx_descriptors: [0; mac::TX_SLOTS as usize],
            buffer: vec![0; mac::BUFFER_SIZE as usize],
            transmitted: VecDeque::new(),
        }
    }

    fn station_address(&self) -> [u8; ADDRESS_LEN] {
        let low = self.address_low.to_le_bytes();
        let high = self.address_high.to_le_bytes();
        [low[0], low[1], low[2], low[3], high[0], high[1]]
    }

    fn accepts(&self, frame: &[u8]) -> bool {
        if mac::PROMISCUOUS.decode(self.control) != 0 {
            return true;
        }
        let Some(destination) = frame.get(..ADDRESS_LEN) else {
            return false;
        };
        destination == [0xFF; ADDRESS_LEN] || destination == self.station_address()
    }

    fn receive(&mut self, frame: &[u8]) -> Reception {
        if mac::RX_ENABLE.decode(self.control) == 0 {
            return Reception::Disabled;
        }
        if !self.accepts(frame) {
            return Reception::Filtered;
        }
        if frame.len() > mac::SLOT_SIZE as usize {
            self.rx_oversize = self.rx_oversize.wrapping_add(1);
            return Reception::Oversize;
        }
        let slot = self.rx_next;
        let descriptor = &mut self.rx_descriptors[slot as usize];
        if mac::OWN.decode(*descriptor) == 0 {
            self.rx_overruns = self.rx_overruns.wrapping_add(1);
            self.int_status |= mac::INT_OVERRUN.mask();
            return Reception::Overrun;
        }
        // The frame first, then the descriptor that hands it to software.
        let start = (mac::rx_slot(slot) - mac::BUFFER_BASE) as usize;
        self.buffer[start..start + frame.len()].copy_from_slice(frame);
        *descriptor = mac::LENGTH.encode(frame.len() as u32);
        self.rx_frames = self.rx_frames.wrapping_add(1);
        self.int_status |= mac::INT_RX.mask();
        self.rx_next = (slot + 1) % mac::RX_SLOTS;
        Reception::Landed { slot }
    }

    /// Sends every slot the MAC owns from `TX_NEXT` on, in ring order.
    fn transmit(&mut self) {
        while mac::TX_ENABLE.decode(self.control) != 0 {
            let slot = self.tx_next;
            let descriptor = self.tx_descriptors[slot as usize];
            if mac::OWN.decode(descriptor) == 0 {
                return;
            }
            let length = mac::LENGTH.decode(descriptor) as usize;
            if (1..=mac::SLOT_SIZE as usize).contains(&length) {
                let start = (mac::tx_slot(slot) - mac::BUFFER_BASE) as usize;
                let mut frame = self.buffer[start..start + length].to_vec();
                if frame.len() < MIN_FRAME {
                    frame.resize(MIN_FRAME, 0);
                }
                self.transmitted.push_back(frame);
                self.tx_frames = self.tx_frames.wrapping_add(1);
            }
            self.tx_descriptors[slot as usize] = mac::LENGTH.encode(length as u32);
            self.int_status |= mac::INT_TX.mask();
            self.tx_next = (slot + 1) % mac::TX_SLOTS;
        }
    }
}

/// The management Ethernet MAC (`weft_regs::soc::mac`).
///
/// Clones share one device: [`Mac::attach`] maps clones of it, and the
/// embedder keeps another to inject received frames ([`Mac::receive`]),
/// take transmitted ones ([`Mac::take_transmitted`]) and drive the core's
/// machine external interrupt line from [`Mac::interrupt_pending`].
#[derive(Clone, Debug)]
pub struct Mac {
    state: Rc<RefCell<MacState>>,
}

impl Default for Mac {
    fn default() -> Self {
        Self::new()
    }
}

impl Mac {
    /// A MAC at reset: disabled, every register, descriptor and counter 0.
    pub fn new() -> Self {
        Self {
            state: Rc::new(RefCell::new(MacState::at_reset())),
        }
    }

    /// The reset the watchdog requests (as the RTL's `reset`): every
    /// register, descriptor and counter back to 0, the frame buffer (a
    /// memory) and the frames already on the line kept.
    pub fn reset(&self) {
        let mut s = self.state.borrow_mut();
        let buffer = std::mem::take(&mut s.buffer);
        let transmitted = std::mem::take(&mut s.transmitted);
        *s = MacState {
            buffer,
            transmitted,
            ..MacState::at_reset()
        };
    }

    /// Maps the MAC's registers, descriptors and frame buffer into `bus`
    /// at their `weft_regs::soc::mac` addresses.
    pub fn attach(&self, bus: &mut HarvardBus) -> Result<(), MapError> {
        let registers = mac::LAYOUT.base;
        let span = mac::TX_DESCRIPTOR_LAYOUT.base + BLOCK_SIZE - registers;
        bus.map_mmio(registers, span, Box::new(Registers(self.clone())))?;
        bus.map_mmio(
            mac::BUFFER_BASE,
            mac::BUFFER_SIZE,
            Box::new(Buffer(self.clone())),
        )
    }

    /// A frame arrives from the line (destination address to end of
    /// payload, no frame check sequence): it lands in a receive slot or is
    /// dropped, as the register map says.
    pub fn receive(&self, frame: &[u8]) -> Reception {
        self.state.borrow_mut().receive(frame)
    }

    /// Takes the frames sent since the last call, oldest first, each padded
    /// to [`MIN_FRAME`] bytes.
    pub fn take_transmitted(&self) -> Vec<Vec<u8>> {
        self.state.borrow_mut().transmitted.drain(..).collect()
    }

    /// The interrupt line, the core's `mip.MEIP`: any bit set in both
    /// `INT_STATUS` and `INT_ENABLE`.
    pub fn interrupt_pending(&self) -> bool {
        let s = self.state.borrow();
        s.int_status & s.int_enable != 0
    }

    /// The station address the firmware programmed.
    pub fn station_address(&self) -> [u8; 6] {
        self.state.borrow().station_address()
    }
}

/// The registers and both descriptor blocks, one region from `mac::LAYOUT`'s base.
struct Registers(Mac);

impl Registers {
    /// Which descriptor, receive (`true`) or transmit, `offset` selects.
    fn descriptor(offset: u32, width: Width) -> Result<(bool, usize), DeviceFault> {
        let address = mac::LAYOUT.base + offset;
        for (rx, layout) in [
            (true, mac::RX_DESCRIPTOR_LAYOUT),
            (false, mac::TX_DESCRIPTOR_LAYOUT),
        ] {
            let span = layout.base..layout.base + layout.instance_span();
            if span.contains(&address) {
                if width != Width::Word {
                    return Err(DeviceFault::UnsupportedWidth);
                }
                return Ok((rx, ((address - layout.base) / layout.entry_stride) as usize));
            }
        }
        Err(DeviceFault::NoRegister)
    }
}

impl Mmio for Registers {
    fn read(&mut self, offset: u32, width: Width) -> Result<u32, DeviceFault> {
        let s = self.0.state.borrow();
        if offset >= BLOCK_SIZE {
            let (rx, slot) = Self::descriptor(offset, width)?;
            return Ok(if rx {
                s.rx_descriptors[slot]
            } else {
                s.tx_descriptors[slot]
            });
        }
        let name = register_at(mac::BLOCK.registers, offset, width)?;
        Ok(match name {
            n if n == mac::CONTROL.name => s.control,
            n if n == mac::INT_ENABLE.name => s.int_enable,
            n if n == mac::INT_STATUS.name => s.int_status,
            n if n == mac::ADDRESS_LOW.name => s.address_low,
            n if n == mac::ADDRESS_HIGH.name => s.address_high,
            n if n == mac::RING.name => {
                mac::RX_NEXT.encode(s.rx_next) | mac::TX_NEXT.encode(s.tx_next)
            }
            n if n == mac::RX_FRAMES.name => s.rx_frames,
            n if n == mac::RX_OVERRUNS.name => s.rx_overruns,
            n if n == mac::RX_OVERSIZE.name => s.rx_oversize,
            n if n == mac::TX_FRAMES.name => s.tx_frames,
            // Frames reach the model without a frame check sequence or a
            // line to fail on: it drops none for a line error.
            _ => 0,
        })
    }

    fn write(&mut self, offset: u32, width: Width, value: u32) -> Result<(), DeviceFault> {
        let mut s = self.0.state.borrow_mut();
        if offset >= BLOCK_SIZE {
            let (rx, slot) = Self::descriptor(offset, width)?;
            let value = value & mac::RX_DESCRIPTOR.mask();
            if rx {
                s.rx_descriptors[slot] = value;
            } else {
                s.tx_descriptors[slot] = value;
                s.transmit();
            }
            return Ok(());
        }
        let name = register_at(mac::BLOCK.registers, offset, width)?;
        match name {
            n if n == mac::CONTROL.name => {
                s.control = value & mac::CONTROL.mask();
                s.transmit();
            }
            n if n == mac::INT_ENABLE.name => s.int_enable = value & mac::INT_ENABLE.mask(),
            n if n == mac::INT_STATUS.name => s.int_status &= !value,
            n if n == mac::ADDRESS_LOW.name => s.address_low = value,
            n if n == mac::ADDRESS_HIGH.name => s.address_high = value & mac::ADDRESS_HIGH.mask(),
            // The ring position and the counters are read-only.
            _ => {}
        }
        Ok(())
    }
}

/// The frame buffer: receive slots, then transmit slots, whole words only.
struct Buffer(Mac);

impl Mmio for Buffer {
    fn read(&mut self, offset: u32, width: Width) -> Result<u32, DeviceFault> {
        if width != Width::Word {
            return Err(DeviceFault::UnsupportedWidth);
        }
        let s = self.0.state.borrow();
        let at = offset as usize;
        let word = s.buffer.get(at..at + 4).ok_or(DeviceFault::NoRegister)?;
        Ok(u32::from_le_bytes([word[0], word[1], word[2], word[3]]))
    }

    fn write(&mut self, offset: u32, width: Width, value: u32) -> Result<(), DeviceFault> {
        if width != Width::Word {
            return Err(DeviceFault::UnsupportedWidth);
        }
        let mut s = self.0.state.borrow_mut();
        let at = offset as usize;
        let word = s
            .buffer
            .get_mut(at..at + 4)
            .ok_or(DeviceFault::NoRegister)?;
        word.copy_from_slice(&value.to_le_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::{Access, Bus, BusFault};
    use crate::soc::Soc;

    // Addresses worked out by hand from docs/registers.md.
    const CONTROL: u32 = 0x2000_4000;
    const INT_ENABLE: u32 = 0x2000_4004;
    const INT_STATUS: u32 = 0x2000_4008;
    const ADDRESS_LOW: u32 = 0x2000_400C;
    const ADDRESS_HIGH: u32 = 0x2000_4010;
    const RING: u32 = 0x2000_4014;
    const RX_FRAMES: u32 = 0x2000_4018;
    const RX_OVERRUNS: u32 = 0x2000_401C;
    const RX_OVERSIZE: u32 = 0x2000_4020;
    const TX_FRAMES: u32 = 0x2000_4024;
    const RX_ERRORS: u32 = 0x2000_4028;
    const RX_DESCRIPTOR: u32 = 0x2000_4100;
    const TX_DESCRIPTOR: u32 = 0x2000_4200;
    const RX_SLOT: u32 = 0x2001_0000;
    const TX_SLOT: u32 = 0x2001_4000;
    const SLOT: u32 = 0x800;
    const OWN: u32 = 1 << 31;

    const STATION: [u8; 6] = [0x02, 0x57, 0x45, 0x46, 0x54, 0x01];

    fn mac() -> (HarvardBus, Mac) {
        let mut bus = HarvardBus::reference();
        let soc = Soc::attach(&mut bus).unwrap();
        // Station address 02:57:45:46:54:01, byte 0 in bits 7:0.
        bus.store(ADDRESS_LOW, Width::Word, 0x4645_5702).unwrap();
        bus.store(ADDRESS_HIGH, Width::Word, 0x0154).unwrap();
        (bus, soc.mac)
    }

    fn load(bus: &mut HarvardBus, addr: u32) -> u32 {
        bus.load(addr, Width::Word).unwrap()
    }

    fn store(bus: &mut HarvardBus, addr: u32, value: u32) {
        bus.store(addr, Width::Word, value).unwrap();
    }

    /// A frame to `destination` whose bytes after the header count up from `seed`.
    fn frame(destination: [u8; 6], len: usize, seed: u8) -> Vec<u8> {
        let mut f = destination.to_vec();
        f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x99, 0x08, 0x00]);
        f.extend((0..len - f.len()).map(|i| seed.wrapping_add(i as u8)));
        f
    }

    fn slot_bytes(bus: &mut HarvardBus, base: u32, len: usize) -> Vec<u8> {
        let words = len.div_ceil(4) as u32;
        let mut bytes: Vec<u8> = (0..words)
            .flat_map(|w| load(bus, base + 4 * w).to_le_bytes())
            .collect();
        bytes.truncate(len);
        bytes
    }

    #[test]
    fn nothing_is_received_until_enabled_and_slots_are_handed_over() {
        let (mut bus, mac) = mac();
        assert_eq!(mac.station_address(), STATION);
        assert_eq!(mac.receive(&frame(STATION, 64, 0)), Reception::Disabled);
        assert_eq!(load(&mut bus, RX_OVERRUNS), 0, "ignored, not counted");
        store(&mut bus, CONTROL, 0b001);
        // Every descriptor resets to 0: software owns every slot.
        assert_eq!(mac.receive(&frame(STATION, 64, 0)), Reception::Overrun);
        assert_eq!(load(&mut bus, RX_OVERRUNS), 1);
        assert_eq!(load(&mut bus, RX_FRAMES), 0);
        assert_eq!(load(&mut bus, INT_STATUS), 0b100);
    }

    #[test]
    fn frames_land_round_robin_in_owned_slots() {
        let (mut bus, mac) = mac();
        for slot in 0..8 {
            store(&mut bus, RX_DESCRIPTOR + 4 * slot, OWN);
        }
        store(&mut bus, CONTROL, 0b001);
        for n in 0..10u32 {
            let len = 60 + n as usize * 7;
            let sent = frame(STATION, len, n as u8);
            let slot = n % 8;
            assert_eq!(mac.receive(&sent), Reception::Landed { slot });
            assert_eq!(load(&mut bus, RX_DESCRIPTOR + 4 * slot), len as u32);
            assert_eq!(slot_bytes(&mut bus, RX_SLOT + SLOT * slot, len), sent);
            assert_eq!(load(&mut bus, RING) & 0xFF, (slot + 1) % 8);
            // Software takes the frame and hands the slot back.
            store(&mut bus, RX_DESCRIPTOR + 4 * slot, OWN);
        }
        assert_eq!(load(&mut bus, RX_FRAMES), 10);
        assert_eq!(load(&mut bus, INT_STATUS), 0b001);
        // Byte 0 is bits 7:0 of the slot's first word.
        let first = load(&mut bus, RX_SLOT + SLOT * 2);
        assert_eq!(first.to_le_bytes()[..4], STATION[..4]);
    }

    #[test]
    fn a_full_ring_drops_and_counts_and_rx_next_stays() {
        let (mut bus, mac) = mac();
        store(&mut bus, RX_DESCRIPTOR, OWN);
        store(&mut bus, RX_DESCRIPTOR + 4, OWN);
        store(&mut bus, CONTROL, 0b001);
        assert_eq!(
            mac.receive(&frame(STATION, 60, 1)),
            Reception::Landed { slot: 0 }
        );
        assert_eq!(
            mac.receive(&frame(STATION, 60, 2)),
            Reception::Landed { slot: 1 }
        );
        // Slot 2 is software's: the ring is full.
        assert_eq!(mac.receive(&frame(STATION, 60, 3)), Reception::Overrun);
        assert_eq!(mac.receive(&frame(STATION, 60, 4)), Reception::Overrun);
        assert_eq!(load(&mut bus, RX_OVERRUNS), 2);
        assert_eq!(load(&mut bus, RING) & 0xFF, 2, "RX_NEXT stays");
        assert_eq!(load(&mut bus, INT_STATUS), 0b101);
        // Handing slot 2 over lets the next frame land there, not in slot 0.
        store(&mut bus, RX_DESCRIPTOR + 8, OWN);
        assert_eq!(
            mac.receive(&frame(STATION, 60, 5)),
            Reception::Landed { slot: 2 }
        );
        assert_eq!(load(&mut bus, RX_FRAMES), 3);
        assert_eq!(
            load(&mut bus, RX_DESCRIPTOR),
            60,
            "slot 0 still holds its frame"
        );
    }

    #[test]
    fn the_filter_takes_the_station_and_broadcast_unless_promiscuous() {
        let (mut bus, mac) = mac();
        for slot in 0..8 {
            store(&mut bus, RX_DESCRIPTOR + 4 * slot, OWN);
        }
        store(&mut bus, CONTROL, 0b001);
        let other = [0x02, 0x57, 0x45, 0x46, 0x54, 0x02];
        let multicast = [0x01, 0x00, 0x5E, 0x00, 0x00, 0x01];
        assert_eq!(mac.receive(&frame(other, 60, 0)), Reception::Filtered);
        assert_eq!(mac.receive(&frame(multicast, 60, 0)), Reception::Filtered);
        assert_eq!(mac.receive(&[0xFF; 4]), Reception::Filtered, "no address");
        assert_eq!(
            mac.receive(&frame([0xFF; 6], 60, 0)),
            Reception::Landed { slot: 0 }
        );
        assert_eq!(
            mac.receive(&frame(STATION, 60, 0)),
            Reception::Landed { slot: 1 }
        );
        assert_eq!(
            load(&mut bus, RX_FRAMES),
            2,
            "filtered frames are not counted"
        );
        store(&mut bus, CONTROL, 0b101);
        assert_eq!(
            mac.receive(&frame(other, 60, 0)),
            Reception::Landed { slot: 2 }
        );
        assert_eq!(
            mac.receive(&frame(multicast, 60, 0)),
            Reception::Landed { slot: 3 }
        );
    }

    #[test]
    fn a_frame_longer_than_a_slot_is_dropped_and_counted() {
        let (mut bus, mac) = mac();
        store(&mut bus, RX_DESCRIPTOR, OWN);
        store(&mut bus, CONTROL, 0b001);
        assert_eq!(mac.receive(&frame(STATION, 2049, 0)), Reception::Oversize);
        assert_eq!(load(&mut bus, RX_OVERSIZE), 1);
        assert_eq!(
            mac.receive(&frame(STATION, 2048, 0)),
            Reception::Landed { slot: 0 }
        );
        assert_eq!(load(&mut bus, RX_DESCRIPTOR), 2048);
    }

    #[test]
    fn owned_transmit_slots_are_sent_in_ring_order_and_padded() {
        let (mut bus, mac) = mac();
        let long = frame([0xFF; 6], 1514, 9);
        for (w, chunk) in long.chunks(4).enumerate() {
            let mut word = [0; 4];
            word[..chunk.len()].copy_from_slice(chunk);
            store(&mut bus, TX_SLOT + 4 * w as u32, u32::from_le_bytes(word));
        }
        let short = frame(STATION, 42, 1);
        for (w, chunk) in short.chunks(4).enumerate() {
            let mut word = [0; 4];
            word[..chunk.len()].copy_from_slice(chunk);
            store(
                &mut bus,
                TX_SLOT + SLOT + 4 * w as u32,
                u32::from_le_bytes(word),
            );
        }
        // Handed over while TX_ENABLE is clear: the slots wait.
        store(&mut bus, TX_DESCRIPTOR, OWN | 1514);
        store(&mut bus, TX_DESCRIPTOR + 4, OWN | 42);
        assert!(mac.take_transmitted().is_empty());
        assert_eq!(load(&mut bus, TX_DESCRIPTOR) & OWN, OWN);
        store(&mut bus, CONTROL, 0b010);
        let sent = mac.take_transmitted();
        let mut padded = short.clone();
        padded.resize(60, 0);
        assert_eq!(sent, vec![long, padded]);
        assert_eq!(load(&mut bus, TX_DESCRIPTOR), 1514, "OWN cleared");
        assert_eq!(load(&mut bus, TX_DESCRIPTOR + 4), 42);
        assert_eq!(load(&mut bus, TX_FRAMES), 2);
        assert_eq!(load(&mut bus, RING) >> 8 & 0xFF, 2);
        assert_eq!(load(&mut bus, INT_STATUS), 0b010);
        // Slot 3 handed over before slot 2 waits for slot 2.
        store(&mut bus, TX_DESCRIPTOR + 12, OWN | 60);
        assert!(mac.take_transmitted().is_empty());
        store(&mut bus, TX_DESCRIPTOR + 8, OWN | 60);
        assert_eq!(mac.take_transmitted().len(), 2);
        assert_eq!(load(&mut bus, RING) >> 8 & 0xFF, 0, "wrapped");
    }

    #[test]
    fn the_interrupt_is_status_and_enable_and_status_is_write_one_to_clear() {
        let (mut bus, mac) = mac();
        store(&mut bus, RX_DESCRIPTOR, OWN);
        store(&mut bus, CONTROL, 0b001);
        mac.receive(&frame(STATION, 60, 0));
        mac.receive(&frame(STATION, 60, 0));
        assert_eq!(load(&mut bus, INT_STATUS), 0b101);
        assert!(!mac.interrupt_pending(), "nothing enabled");
        store(&mut bus, INT_ENABLE, 0b010);
        assert!(!mac.interrupt_pending(), "TX did not happen");
        store(&mut bus, INT_ENABLE, 0xFFFF_FFFF);
        assert_eq!(load(&mut bus, INT_ENABLE), 0b111, "reserved bits read 0");
        assert!(mac.interrupt_pending());
        store(&mut bus, INT_STATUS, 0b001);
        assert_eq!(
            load(&mut bus, INT_STATUS),
            0b100,
            "writing 1 clears only that bit"
        );
        assert!(mac.interrupt_pending());
        store(&mut bus, INT_STATUS, 0b100);
        assert!(!mac.interrupt_pending());
    }

    #[test]
    fn read_only_registers_ignore_writes_and_narrow_accesses_and_holes_fault() {
        let (mut bus, mac) = mac();
        store(&mut bus, RX_DESCRIPTOR, OWN);
        store(&mut bus, CONTROL, 0b001);
        mac.receive(&frame(STATION, 60, 0));
        store(&mut bus, RX_FRAMES, 0);
        store(&mut bus, RING, 0);
        assert_eq!(load(&mut bus, RX_FRAMES), 1);
        assert_eq!(load(&mut bus, RX_ERRORS), 0, "the model has no line errors");
        assert_eq!(load(&mut bus, RING), 1);
        let device = |addr, access, fault| BusFault::Device {
            addr,
            access,
            fault,
        };
        assert_eq!(
            bus.load(RX_SLOT, Width::Byte),
            Err(device(RX_SLOT, Access::Load, DeviceFault::UnsupportedWidth))
        );
        assert_eq!(
            bus.store(CONTROL, Width::Half, 1),
            Err(device(
                CONTROL,
                Access::Store,
                DeviceFault::UnsupportedWidth
            ))
        );
        // After the last register, past the eighth RX and fourth TX descriptor.
        for hole in [0x2000_402C, 0x2000_4120, 0x2000_4210] {
            assert_eq!(
                bus.load(hole, Width::Word),
                Err(device(hole, Access::Load, DeviceFault::NoRegister))
            );
        }
        assert!(matches!(
            bus.load(0x2001_6000, Width::Word),
            Err(BusFault::Unmapped { .. })
        ));
    }

    #[test]
    fn a_hart_wakes_from_wfi_on_a_received_frame() {
        use crate::encode as e;
        use crate::hart::{Hart, Step};
        let mut bus = HarvardBus::reference();
        let soc = Soc::attach(&mut bus).unwrap();
        // Broadcast accepted, slot 0 owned, INT_ENABLE.RX; MEIE (mie bit 11); wait.
        let program = [
            e::lui(1, CONTROL >> 12),
            e::lui(2, OWN >> 12),
            e::sw(2, 1, 0x100),
            e::addi(3, 0, 1),
            e::sw(3, 1, 0x4),
            e::sw(3, 1, 0x0),
            e::lui(4, 1),
            e::addi(4, 4, -0x800),
            e::csrrs(0, 0x304, 4),
            e::wfi(),
            e::addi(5, 0, 1),
        ];
        let mut hart = Hart::new(bus);
        hart.bus_mut().write_words(0, &program).unwrap();
        let mut idle = 0;
        while idle < 10 {
            if soc.step(&mut hart) == Step::Idle {
                idle += 1;
            }
        }
        assert_eq!(hart.reg(5), 0, "still waiting");
        assert_eq!(
            soc.mac.receive(&frame([0xFF; 6], 60, 0)),
            Reception::Landed { slot: 0 }
        );
        for _ in 0..3 {
            soc.step(&mut hart);
        }
        assert_eq!(hart.reg(5), 1, "the frame woke the hart");
    }
}
