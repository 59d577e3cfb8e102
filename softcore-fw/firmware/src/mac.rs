//! The management Ethernet MAC driver (`weft_regs::soc::mac`), as
//! smoltcp's [`Device`].
//!
//! Received frames are copied word by word from their slot in the frame
//! buffer into RAM, where smoltcp reads them, and the slot goes straight
//! back to the MAC; a frame smoltcp builds in RAM is copied into the next
//! transmit slot and handed over. Both rings are walked in the MAC's own
//! round-robin order, from slot 0 after reset.

use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
use smoltcp::time::Instant;
use smoltcp::wire::EthernetAddress;
use weft_regs::soc::mac;

use crate::mmio::{read, write};

/// The longest frame smoltcp is given or builds: an Ethernet header and a
/// 1500-byte payload, without the frame check sequence the MAC handles.
pub const MAX_FRAME: usize = 1514;
const _: () = assert!(MAX_FRAME <= mac::SLOT_SIZE as usize);

/// The MAC and the RAM its frames pass through.
pub struct Mac {
    receiver: Receiver,
    transmitter: Transmitter,
}

/// The receive ring: the slot the next frame lands in, and RAM to read it in.
struct Receiver {
    next: u32,
    frame: [u8; MAX_FRAME],
}

/// The transmit ring: the slot the next frame goes out of, and RAM to build it in.
struct Transmitter {
    next: u32,
    frame: [u8; MAX_FRAME],
}

impl Mac {
    /// A driver for the MAC at reset, before [`Mac::start`].
    pub const fn new() -> Self {
        Mac {
            receiver: Receiver {
                next: 0,
                frame: [0; MAX_FRAME],
            },
            transmitter: Transmitter {
                next: 0,
                frame: [0; MAX_FRAME],
            },
        }
    }

    /// Programs the station address, hands every receive slot to the MAC,
    /// enables the receive interrupt and turns receive and transmit on.
    pub fn start(&mut self, address: EthernetAddress) {
        let [a0, a1, a2, a3, a4, a5] = address.0;
        write(
            mac::ADDRESS_LOW.address(0, 0),
            u32::from_le_bytes([a0, a1, a2, a3]),
        );
        write(
            mac::ADDRESS_HIGH.address(0, 0),
            u32::from_le_bytes([a4, a5, 0, 0]),
        );
        for slot in 0..mac::RX_SLOTS {
            write(mac::RX_DESCRIPTOR.address(0, slot), mac::OWN.mask());
        }
        let ring = read(mac::RING.address(0, 0));
        self.receiver.next = mac::RX_NEXT.decode(ring);
        self.transmitter.next = mac::TX_NEXT.decode(ring);
        write(mac::INT_ENABLE.address(0, 0), mac::INT_RX.mask());
        write(
            mac::CONTROL.address(0, 0),
            mac::RX_ENABLE.mask() | mac::TX_ENABLE.mask(),
        );
    }

    /// Clears the events the interrupt line reports, before the ring is
    /// drained, so a frame that lands afterwards raises the line again.
    pub fn acknowledge_interrupt(&mut self) {
        write(mac::INT_STATUS.address(0, 0), mac::INT_STATUS.mask());
    }
}

impl Default for Mac {
    fn default() -> Self {
        Self::new()
    }
}

impl Receiver {
    /// Whether the slot at `next` holds a frame: software owns it again.
    fn ready(&self) -> bool {
        mac::OWN.decode(read(mac::RX_DESCRIPTOR.address(0, self.next))) == 0
    }
}

impl Transmitter {
    /// Whether the slot at `next` is free: the MAC has sent what it held.
    fn ready(&self) -> bool {
        mac::OWN.decode(read(mac::TX_DESCRIPTOR.address(0, self.next))) == 0
    }
}

/// A frame waiting in the receive slot at its ring's `next`.
pub struct RxToken<'a>(&'a mut Receiver);

/// Room in the transmit slot at its ring's `next`.
pub struct TxToken<'a>(&'a mut Transmitter);

impl phy::RxToken for RxToken<'_> {
    fn consume<R, F>(self, f: F) -> R
    where
        F: FnOnce(&[u8]) -> R,
    {
        let receiver = self.0;
        let slot = receiver.next;
        let length = mac::LENGTH.decode(read(mac::RX_DESCRIPTOR.address(0, slot))) as usize;
        // A frame longer than smoltcp takes is cut; its checks then drop it.
        let frame = &mut receiver.frame[..length.min(MAX_FRAME)];
        let base = mac::rx_slot(slot);
        for (word, bytes) in frame.chunks_mut(4).enumerate() {
            let value = read(base + 4 * word as u32).to_le_bytes();
            bytes.copy_from_slice(&value[..bytes.len()]);
        }
        write(mac::RX_DESCRIPTOR.address(0, slot), mac::OWN.mask());
        receiver.next = (slot + 1) % mac::RX_SLOTS;
        f(frame)
    }
}

impl phy::TxToken for TxToken<'_> {
    fn consume<R, F>(self, len: usize, f: F) -> R
    where
        F: FnOnce(&mut [u8]) -> R,
    {
        let transmitter = self.0;
        let frame = &mut transmitter.frame[..len.min(MAX_FRAME)];
        let result = f(frame);
        let slot = transmitter.next;
        let base = mac::tx_slot(slot);
        for (word, bytes) in frame.chunks(4).enumerate() {
            let mut value = [0; 4];
            value[..bytes.len()].copy_from_slice(bytes);
            write(base + 4 * word as u32, u32::from_le_bytes(value));
        }
        write(
            mac::TX_DESCRIPTOR.address(0, slot),
            mac::OWN.mask() | mac::LENGTH.encode(frame.len() as u32),
        );
        transmitter.next = (slot + 1) % mac::TX_SLOTS;
        result
    }
}

impl Device for Mac {
    type RxToken<'a> = RxToken<'a>;
    type TxToken<'a> = TxToken<'a>;

    fn receive(&mut self, _timestamp: Instant) -> Option<(RxToken<'_>, TxToken<'_>)> {
        if !self.receiver.ready() || !self.transmitter.ready() {
            return None;
        }
        Some((RxToken(&mut self.receiver), TxToken(&mut self.transmitter)))
    }

    fn transmit(&mut self, _timestamp: Instant) -> Option<TxToken<'_>> {
        self.transmitter
            .ready()
            .then_some(TxToken(&mut self.transmitter))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut capabilities = DeviceCapabilities::default();
        capabilities.medium = Medium::Ethernet;
        capabilities.max_transmission_unit = MAX_FRAME;
        capabilities
    }
}
