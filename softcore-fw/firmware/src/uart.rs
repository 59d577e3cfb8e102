//! The console UART driver: transmission through a queue the main loop
//! drains, and polled reception, through the registers of
//! `weft_regs::soc::uart`.
//!
//! At 115 200 baud a byte takes 87 µs on the line, and the UART's FIFO
//! holds [`uart::TX_FIFO_BYTES`] of them. Written straight to it, the 1 100 bytes of
//! `help` held the main loop for 97 ms, while hosts' configuration requests
//! waited in the mailbox longer than a host may wait for a completion
//! (PCIe Base 6.0 §7.5.3.16: 50 µs to 50 ms by default). Once the main
//! loop runs ([`Uart::send_in_background`]), text goes into a queue of
//! [`TX_QUEUE_BYTES`] instead, and the main loop moves it to the FIFO as
//! the FIFO empties ([`Uart::pump`], [`Uart::refill_after`]). Only text
//! beyond the queue waits for the line, so nothing is dropped; the panic
//! handler sends what is queued ([`flush`]) before the core halts, and a
//! requested reset waits until it has left ([`time_to_send`]). A watchdog
//! reset of a hung main loop loses what is still queued, as it loses
//! everything in memory. The start, before the main loop, waits for the line as it
//! prints, so a start that hangs has said everything it printed.

use core::cell::RefCell;
use core::fmt;

use critical_section::Mutex;
use smoltcp::time::Duration;
use weft_drivers::uart::{put, ready};
use weft_proto::heapless::Deque;
use weft_regs::soc::uart;
use weft_regs::CONSOLE_BAUD;

use crate::mmio::{read, Mmio};

/// `STATUS` of the one console UART.
const STATUS: u32 = uart::STATUS.address(0, 0);
/// `RX_DATA` of the one console UART.
const RX_DATA: u32 = uart::RX_DATA.address(0, 0);

/// Text waiting for the UART's FIFO: room for any one answer of the
/// console whole (the longest, `functions` of a fabric of weft-fabric's
/// `MAX_FUNCTIONS`, about 9 KiB, is checked where it is printed), so no
/// command waits for the line.
pub const TX_QUEUE_BYTES: usize = 12 * 1024;

/// How long `bytes` take on the line at [`CONSOLE_BAUD`], rounded up to
/// the microsecond.
const fn line_time(bytes: u64) -> Duration {
    Duration::from_micros(
        (bytes * uart::BITS_PER_BYTE as u64 * 1_000_000).div_ceil(CONSOLE_BAUD as u64),
    )
}

/// How long the UART's full FIFO takes to empty on the line: when the
/// main loop refills it while text is queued.
const FIFO_TIME: Duration = line_time(uart::TX_FIFO_BYTES as u64);

/// The transmitter's state: one, in a static so that the panic handler
/// reaches it.
static TRANSMIT: Mutex<RefCell<Transmit>> = Mutex::new(RefCell::new(Transmit {
    queue: Deque::new(),
    in_background: false,
}));

/// Text not yet in the UART's FIFO, and whether the main loop moves it.
struct Transmit {
    queue: Deque<u8, TX_QUEUE_BYTES>,
    /// Set by [`Uart::send_in_background`]: a write returns with text
    /// still queued. Until then each write waits until its text is in the
    /// FIFO, as nothing else would move it.
    in_background: bool,
}

/// Moves bytes of `queue` to the UART's FIFO while it has room.
fn pump_queue(queue: &mut Deque<u8, TX_QUEUE_BYTES>) {
    while !queue.is_empty() && ready(&mut Mmio) {
        if let Some(byte) = queue.pop_front() {
            put(&mut Mmio, byte);
        }
    }
}

/// Moves all of `queue` to the UART's FIFO, waiting for the line.
fn drain_queue(queue: &mut Deque<u8, TX_QUEUE_BYTES>) {
    while !queue.is_empty() {
        pump_queue(queue);
    }
}

/// Sends everything queued, waiting for the line: for the panic handler,
/// so a halted core's last words still go out. Nothing, if the panic came
/// while the queue was in use.
pub fn flush() {
    critical_section::with(|cs| {
        if let Ok(mut transmit) = TRANSMIT.borrow(cs).try_borrow_mut() {
            drain_queue(&mut transmit.queue);
        }
    });
}

/// How long the line takes to send what is queued, with what the FIFO and
/// the transmitter hold: a reset scheduled that far ahead loses none of it
/// ([`crate::board::SocBoard`]).
pub fn time_to_send() -> Duration {
    let queued = critical_section::with(|cs| TRANSMIT.borrow_ref(cs).queue.len());
    line_time(queued as u64 + uart::TX_FIFO_BYTES as u64 + 1)
}

/// The console UART.
///
/// Any number of handles may exist: they share the one queue, and the
/// core is a single hart with no interrupt handler.
pub struct Uart {
    _registers: (),
}

impl Uart {
    /// A handle on the console UART.
    pub const fn console() -> Self {
        Self { _registers: () }
    }

    /// Queues `bytes` to be sent in order, moving what the UART's FIFO
    /// takes at once. A full queue waits for the line to take its oldest
    /// byte, so nothing is dropped. Before [`Uart::send_in_background`],
    /// waits until all of `bytes` is in the FIFO.
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        critical_section::with(|cs| {
            let transmit = &mut *TRANSMIT.borrow_ref_mut(cs);
            let queue = &mut transmit.queue;
            for &byte in bytes {
                while queue.is_full() {
                    pump_queue(queue);
                }
                // Not full: the pump above took a byte if it was.
                let _ = queue.push_back(byte);
            }
            if transmit.in_background {
                pump_queue(queue);
            } else {
                drain_queue(queue);
            }
        });
    }

    /// From now on a write returns with its text queued, and the main loop
    /// moves it ([`Uart::pump`] at least every [`Uart::refill_after`]).
    /// The start prints before it: what it printed is out, or in the
    /// FIFO, should the start hang.
    pub fn send_in_background(&mut self) {
        critical_section::with(|cs| TRANSMIT.borrow_ref_mut(cs).in_background = true);
    }

    /// Moves queued bytes to the UART's FIFO while it has room.
    pub fn pump(&mut self) {
        critical_section::with(|cs| pump_queue(&mut TRANSMIT.borrow_ref_mut(cs).queue));
    }

    /// While bytes are queued, when the main loop should [`Uart::pump`]
    /// again: once the FIFO it just filled has gone out.
    pub fn refill_after(&self) -> Option<Duration> {
        critical_section::with(|cs| !TRANSMIT.borrow_ref(cs).queue.is_empty()).then_some(FIFO_TIME)
    }

    /// The oldest received byte, if `STATUS.RX_VALID` says there is one.
    pub fn read_byte(&mut self) -> Option<u8> {
        if uart::RX_VALID.decode(read(STATUS)) == 0 {
            return None;
        }
        Some(uart::RX_BYTE.decode(read(RX_DATA)) as u8)
    }
}

impl fmt::Write for Uart {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.write_bytes(text.as_bytes());
        Ok(())
    }
}
