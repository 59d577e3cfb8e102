//! Models of the soft core's SoC peripherals at their `weft_regs::soc`
//! addresses: the console [`Uart`], the machine [`Timer`], the [`Gpio`],
//! the [`Watchdog`], the management Ethernet [`Mac`], the [`SpiFlash`]
//! controller with its flash part ([`NorFlash`]) and the [`Mdio`] master
//! with the PHYs on its line ([`ManagedPhy`]).
//!
//! Each model is a handle: clones share one device, so an embedder maps
//! one clone with [`HarvardBus::map_mmio`] and keeps another to read what
//! the firmware transmitted or to advance time. [`Soc::attach`] does both
//! for the reference map, and [`Soc::step`] steps a hart with the timer
//! and MAC interrupt lines wired up.
//!
//! Both follow the SoC window's rules (`weft_regs::soc`): whole-word
//! accesses only (any other width is [`DeviceFault::UnsupportedWidth`]),
//! an offset without a register is [`DeviceFault::NoRegister`], writes to
//! read-only registers are ignored and write-only registers read 0.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use weft_regs::register::Register;
use weft_regs::soc::{gpio, mdio as mdio_regs, timer, uart, watchdog, BLOCK_SIZE};

use crate::bus::{Bus, DeviceFault, HarvardBus, MapError, Mmio, Width};
use crate::hart::{Hart, Step};
use crate::trap::Interrupt;

mod mac;
mod mdio;
mod nor;
mod spi_flash;

pub use mac::{Mac, Reception, MIN_FRAME};
pub use mdio::{ManagedPhy, Mdio};
pub use nor::{Geometry, NorFlash, Timing};
pub use spi_flash::SpiFlash;

/// Which register of `registers` sits at `offset`, after the width check
/// every register of the SoC window shares.
fn register_at(
    registers: &[Register],
    offset: u32,
    width: Width,
) -> Result<&'static str, DeviceFault> {
    let register = registers
        .iter()
        .find(|r| r.offset == offset)
        .ok_or(DeviceFault::NoRegister)?;
    if width != Width::Word {
        return Err(DeviceFault::UnsupportedWidth);
    }
    Ok(register.name)
}

#[derive(Debug, Default)]
struct UartState {
    transmitted: Vec<u8>,
    received: VecDeque<u8>,
    /// `None`: every byte goes out the moment it is written.
    line: Option<Line>,
}

/// The transmitter of a UART paced at its line rate: the byte on the line
/// and the transmit FIFO behind it, as the RTL's.
#[derive(Debug)]
struct Line {
    ticks_per_byte: u64,
    /// The byte being sent and the ticks until its stop bit ends.
    sending: Option<(u8, u64)>,
    fifo: VecDeque<u8>,
}

impl Line {
    /// Lets `ticks` pass: bytes whose stop bit ends meanwhile go to
    /// `transmitted`, and the next byte of the FIFO starts at once.
    fn advance(&mut self, mut ticks: u64, transmitted: &mut Vec<u8>) {
        loop {
            let (byte, left) = match self.sending {
                Some(sending) => sending,
                None => match self.fifo.pop_front() {
                    Some(byte) => (byte, self.ticks_per_byte),
                    None => return,
                },
            };
            if ticks < left {
                self.sending = Some((byte, left - ticks));
                return;
            }
            ticks -= left;
            transmitted.push(byte);
            self.sending = None;
        }
    }

    fn ready(&self) -> bool {
        self.fifo.len() < uart::TX_FIFO_BYTES as usize
    }
}

/// The console UART (`weft_regs::soc::uart`): bytes written to `TX_DATA`
/// are collected for the embedder; bytes the embedder hands to
/// [`Uart::receive`] are read from `RX_DATA`.
///
/// The transmitter is always ready unless [`Uart::pace`] sets a line
/// rate: without one, the model sends a byte the moment it is written, so
/// `STATUS.TX_READY` always reads 1.
#[derive(Clone, Debug, Default)]
pub struct Uart {
    state: Rc<RefCell<UartState>>,
}

impl Uart {
    /// A UART that has sent and received nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends at the line rate from now on, a byte every `ticks_per_byte`
    /// ticks of [`Soc::advance`], as the RTL does: a byte written goes
    /// into a FIFO of `weft_regs::soc::uart::TX_FIFO_BYTES` bytes behind
    /// the byte on the line, `STATUS.TX_READY` is clear while the FIFO is
    /// full, and a byte counts as transmitted when its stop bit ends.
    pub fn pace(&self, ticks_per_byte: u64) {
        self.state.borrow_mut().line = Some(Line {
            ticks_per_byte: ticks_per_byte.max(1),
            sending: None,
            fifo: VecDeque::new(),
        });
    }

    /// Lets `ticks` of the SoC's clock pass on a paced line.
    fn advance(&self, ticks: u64) {
        let state = &mut *self.state.borrow_mut();
        if let Some(line) = &mut state.line {
            line.advance(ticks, &mut state.transmitted);
        }
    }

    /// Every byte transmitted so far, oldest first.
    pub fn transmitted(&self) -> Vec<u8> {
        self.state.borrow().transmitted.clone()
    }

    /// Takes the bytes transmitted since the last call.
    pub fn take_transmitted(&self) -> Vec<u8> {
        std::mem::take(&mut self.state.borrow_mut().transmitted)
    }

    /// Queues `bytes` as received on the line, for `RX_DATA` to return.
    pub fn receive(&self, bytes: &[u8]) {
        self.state.borrow_mut().received.extend(bytes);
    }

    fn status(&self) -> u32 {
        let state = self.state.borrow();
        let rx_valid = !state.received.is_empty();
        let tx_ready = state.line.as_ref().is_none_or(Line::ready);
        uart::TX_READY.encode(u32::from(tx_ready)) | uart::RX_VALID.encode(u32::from(rx_valid))
    }
}

impl Mmio for Uart {
    fn read(&mut self, offset: u32, width: Width) -> Result<u32, DeviceFault> {
        let name = register_at(uart::BLOCK.registers, offset, width)?;
        Ok(if name == uart::STATUS.name {
            self.status()
        } else if name == uart::RX_DATA.name {
            let byte = self.state.borrow_mut().received.pop_front();
            byte.map_or(0, |b| uart::RX_BYTE.encode(u32::from(b)))
        } else {
            0
        })
    }

    fn write(&mut self, offset: u32, width: Width, value: u32) -> Result<(), DeviceFault> {
        let name = register_at(uart::BLOCK.registers, offset, width)?;
        if name == uart::TX_DATA.name {
            let byte = uart::TX_BYTE.decode(value) as u8;
            let state = &mut *self.state.borrow_mut();
            match &mut state.line {
                None => state.transmitted.push(byte),
                // A write while the FIFO is full is dropped (TX_BYTE).
                Some(line) if line.ready() => line.fifo.push_back(byte),
                Some(_) => {}
            }
        }
        Ok(())
    }
}

#[derive(Debug)]
struct TimerState {
    mtime: u64,
    mtimecmp: u64,
}

/// The machine timer (`weft_regs::soc::timer`; Privileged 20211203
/// §3.2.1): `mtime` advances when the embedder says
/// ([`Timer::advance`]), and the machine timer interrupt is pending while
/// `mtime >= mtimecmp`.
///
/// The RTL's `mtime` counts clock cycles; the ISS has no clock, so an
/// embedder picks the rate — [`Soc::step`] advances it one per step.
#[derive(Clone, Debug)]
pub struct Timer {
    state: Rc<RefCell<TimerState>>,
}

impl Default for Timer {
    fn default() -> Self {
        Self::new()
    }
}

impl Timer {
    /// A timer at reset: `mtime` 0, `mtimecmp` all ones.
    pub fn new() -> Self {
        Self {
            state: Rc::new(RefCell::new(TimerState {
                mtime: 0,
                mtimecmp: timer::MTIMECMP_RESET,
            })),
        }
    }

    /// Advances `mtime` by `ticks` (wrapping, as a 64-bit counter does).
    pub fn advance(&self, ticks: u64) {
        let mut s = self.state.borrow_mut();
        s.mtime = s.mtime.wrapping_add(ticks);
    }

    /// The reset the watchdog requests: `mtime` 0, `mtimecmp` all ones,
    /// as at power-on.
    pub fn reset(&self) {
        *self.state.borrow_mut() = TimerState {
            mtime: 0,
            mtimecmp: timer::MTIMECMP_RESET,
        };
    }

    /// The current `mtime`.
    pub fn mtime(&self) -> u64 {
        self.state.borrow().mtime
    }

    /// The current `mtimecmp`.
    pub fn mtimecmp(&self) -> u64 {
        self.state.borrow().mtimecmp
    }

    /// The interrupt line: `mtime >= mtimecmp`, unsigned (Privileged §3.2.1).
    pub fn interrupt_pending(&self) -> bool {
        let s = self.state.borrow();
        s.mtime >= s.mtimecmp
    }
}

/// Replaces bits 31:0 (`high` false) or 63:32 of `wide` with `half`.
fn with_half(wide: u64, high: bool, half: u32) -> u64 {
    if high {
        (wide & 0xFFFF_FFFF) | u64::from(half) << 32
    } else {
        (wide & !0xFFFF_FFFF) | u64::from(half)
    }
}

/// Bits 31:0 (`high` false) or 63:32 of `wide`.
fn half_of(wide: u64, high: bool) -> u32 {
    if high {
        (wide >> 32) as u32
    } else {
        wide as u32
    }
}

impl Mmio for Timer {
    fn read(&mut self, offset: u32, width: Width) -> Result<u32, DeviceFault> {
        let name = register_at(timer::BLOCK.registers, offset, width)?;
        let s = self.state.borrow();
        Ok(match name {
            n if n == timer::MTIME_LOW.name => half_of(s.mtime, false),
            n if n == timer::MTIME_HIGH.name => half_of(s.mtime, true),
            n if n == timer::MTIMECMP_LOW.name => half_of(s.mtimecmp, false),
            _ => half_of(s.mtimecmp, true),
        })
    }

    fn write(&mut self, offset: u32, width: Width, value: u32) -> Result<(), DeviceFault> {
        let name = register_at(timer::BLOCK.registers, offset, width)?;
        let mut s = self.state.borrow_mut();
        match name {
            n if n == timer::MTIME_LOW.name => s.mtime = with_half(s.mtime, false, value),
            n if n == timer::MTIME_HIGH.name => s.mtime = with_half(s.mtime, true, value),
            n if n == timer::MTIMECMP_LOW.name => {
                s.mtimecmp = with_half(s.mtimecmp, false, value);
            }
            _ => s.mtimecmp = with_half(s.mtimecmp, true, value),
        }
        Ok(())
    }
}

#[derive(Debug, Default)]
struct GpioState {
    output: u32,
    input: u32,
}

/// The general-purpose I/O (`weft_regs::soc::gpio`): `OUTPUT` holds what
/// the firmware drives, `INPUT` reads what the embedder sets with
/// [`Gpio::set_input`]. The model has no synchroniser: an input change
/// shows at once, where the RTL shows it two clock cycles later.
#[derive(Clone, Debug, Default)]
pub struct Gpio {
    state: Rc<RefCell<GpioState>>,
}

impl Gpio {
    /// GPIO at reset: outputs low, inputs low.
    pub fn new() -> Self {
        Self::default()
    }

    /// The reset the watchdog requests: outputs low; the inputs are the
    /// pins' levels, which the reset does not change.
    pub fn reset(&self) {
        self.state.borrow_mut().output = 0;
    }

    /// The levels the firmware drives on the outputs.
    pub fn output(&self) -> u32 {
        self.state.borrow().output
    }

    /// Sets the levels on the inputs.
    pub fn set_input(&self, levels: u32) {
        self.state.borrow_mut().input = levels;
    }
}

impl Mmio for Gpio {
    fn read(&mut self, offset: u32, width: Width) -> Result<u32, DeviceFault> {
        let name = register_at(gpio::BLOCK.registers, offset, width)?;
        let s = self.state.borrow();
        Ok(if name == gpio::OUTPUT.name {
            s.output
        } else {
            s.input
        })
    }

    fn write(&mut self, offset: u32, width: Width, value: u32) -> Result<(), DeviceFault> {
        let name = register_at(gpio::BLOCK.registers, offset, width)?;
        if name == gpio::OUTPUT.name {
            self.state.borrow_mut().output = value;
        }
        Ok(())
    }
}

#[derive(Debug)]
struct WatchdogState {
    load: u32,
    count: u32,
    enabled: bool,
    fired: bool,
    reset_requested: bool,
}

/// The watchdog (`weft_regs::soc::watchdog`): counts down while enabled
/// as the embedder advances time ([`Watchdog::advance`]) and, on firing,
/// latches a reset request for the embedder ([`Watchdog::take_reset_request`]).
///
/// As in the RTL, a write and the tick of the same cycle both apply, the
/// write first: kick, then [`Watchdog::advance`] by one leaves `LOAD - 1`.
#[derive(Clone, Debug)]
pub struct Watchdog {
    state: Rc<RefCell<WatchdogState>>,
}

impl Default for Watchdog {
    fn default() -> Self {
        Self::new()
    }
}

impl Watchdog {
    /// A watchdog at power-on: disabled, `LOAD` at its reset value, not fired.
    pub fn new() -> Self {
        Self {
            state: Rc::new(RefCell::new(WatchdogState {
                load: watchdog::LOAD_RESET,
                count: 0,
                enabled: false,
                fired: false,
                reset_requested: false,
            })),
        }
    }

    /// Runs `ticks` clock cycles: while enabled, a cycle that finds the
    /// count at 0 fires the watchdog, any other takes one off the count.
    pub fn advance(&self, ticks: u64) {
        let mut s = self.state.borrow_mut();
        if !s.enabled || ticks == 0 {
            return;
        }
        if ticks > u64::from(s.count) {
            s.enabled = false;
            s.fired = true;
            s.reset_requested = true;
        } else {
            s.count -= ticks as u32;
        }
    }

    /// Whether the watchdog has fired since the last call: the reset
    /// the embedder owes the SoC.
    pub fn take_reset_request(&self) -> bool {
        std::mem::take(&mut self.state.borrow_mut().reset_requested)
    }

    /// Cycles left before firing, less one (`COUNT`).
    pub fn count(&self) -> u32 {
        self.state.borrow().count
    }

    /// Whether it counts down (`CONTROL.ENABLE`).
    pub fn enabled(&self) -> bool {
        self.state.borrow().enabled
    }
}

impl Mmio for Watchdog {
    fn read(&mut self, offset: u32, width: Width) -> Result<u32, DeviceFault> {
        let name = register_at(watchdog::BLOCK.registers, offset, width)?;
        let s = self.state.borrow();
        Ok(match name {
            n if n == watchdog::LOAD.name => s.load,
            n if n == watchdog::CONTROL.name => watchdog::ENABLE.encode(u32::from(s.enabled)),
            n if n == watchdog::COUNT.name => s.count,
            n if n == watchdog::STATUS.name => watchdog::FIRED.encode(u32::from(s.fired)),
            _ => 0,
        })
    }

    fn write(&mut self, offset: u32, width: Width, value: u32) -> Result<(), DeviceFault> {
        let name = register_at(watchdog::BLOCK.registers, offset, width)?;
        let mut s = self.state.borrow_mut();
        match name {
            n if n == watchdog::LOAD.name => s.load = value,
            n if n == watchdog::KICK.name && value == watchdog::KICK_KEY => s.count = s.load,
            n if n == watchdog::CONTROL.name => {
                let enable = watchdog::ENABLE.decode(value) != 0;
                if enable && !s.enabled {
                    s.count = s.load;
                }
                s.enabled = enable;
            }
            n if n == watchdog::STATUS.name && watchdog::FIRED.decode(value) != 0 => {
                s.fired = false;
            }
            _ => {}
        }
        Ok(())
    }
}

/// The SoC peripherals of the reference map, each mapped at its
/// `weft_regs::soc` block.
#[derive(Clone, Debug)]
pub struct Soc {
    /// The console UART.
    pub uart: Uart,
    /// The machine timer.
    pub timer: Timer,
    /// The general-purpose I/O.
    pub gpio: Gpio,
    /// The watchdog.
    pub watchdog: Watchdog,
    /// The management Ethernet MAC.
    pub mac: Mac,
    /// The SPI flash controller and its flash part.
    pub spi_flash: SpiFlash,
    /// The MDIO master, no PHY on its line until one is attached.
    pub mdio: Mdio,
}

impl Soc {
    /// Maps a fresh UART, timer, GPIO, watchdog, MAC and MDIO master, and a flash
    /// controller with the erased reference part ([`NorFlash::reference`]),
    /// into `bus` at their `weft_regs::soc` addresses and returns handles
    /// to them.
    pub fn attach(bus: &mut HarvardBus) -> Result<Self, MapError> {
        Self::attach_with_flash(bus, NorFlash::reference())
    }

    /// As [`Soc::attach`], with `part` on the flash controller's pins: the
    /// flash a board kept from an earlier run.
    pub fn attach_with_flash(bus: &mut HarvardBus, part: NorFlash) -> Result<Self, MapError> {
        let soc = Soc {
            uart: Uart::new(),
            timer: Timer::new(),
            gpio: Gpio::new(),
            watchdog: Watchdog::new(),
            mac: Mac::new(),
            spi_flash: SpiFlash::new(part),
            mdio: Mdio::new(),
        };
        bus.map_mmio(uart::LAYOUT.base, BLOCK_SIZE, Box::new(soc.uart.clone()))?;
        bus.map_mmio(timer::LAYOUT.base, BLOCK_SIZE, Box::new(soc.timer.clone()))?;
        bus.map_mmio(gpio::LAYOUT.base, BLOCK_SIZE, Box::new(soc.gpio.clone()))?;
        bus.map_mmio(
            watchdog::LAYOUT.base,
            BLOCK_SIZE,
            Box::new(soc.watchdog.clone()),
        )?;
        soc.mac.attach(bus)?;
        soc.spi_flash.attach(bus)?;
        bus.map_mmio(
            mdio_regs::LAYOUT.base,
            BLOCK_SIZE,
            Box::new(soc.mdio.clone()),
        )?;
        Ok(soc)
    }

    /// Drives `hart`'s interrupt lines from the peripherals: the timer's
    /// compare to `mip.MTIP`, the MAC's interrupt to `mip.MEIP`.
    pub fn drive_interrupts<B: Bus>(&self, hart: &mut Hart<B>) {
        self.drive_interrupts_with(hart, false);
    }

    /// As [`Soc::drive_interrupts`], with `external` the level of the
    /// external interrupt sources outside the SoC window (the data plane's
    /// line, `DataPlaneWindow::interrupt_pending`): `mip.MEIP` is the level
    /// OR of the MAC's interrupt and `external`, as the RTL SoC ORs its
    /// sources. weft has no platform-level interrupt controller
    /// (Privileged 20211203 §3.1.9 leaves MEIP to the platform), so the
    /// firmware tells the sources apart by their own pending registers.
    pub fn drive_interrupts_with<B: Bus>(&self, hart: &mut Hart<B>, external: bool) {
        hart.set_interrupt_pending(Interrupt::MachineTimer, self.timer.interrupt_pending());
        hart.set_interrupt_pending(
            Interrupt::MachineExternal,
            self.mac.interrupt_pending() || external,
        );
    }

    /// One step of `hart` with the timer wired to its machine timer
    /// interrupt line and the MAC to its machine external one; `mtime`,
    /// the watchdog and the flash part's clock then advance by one. A reset
    /// the watchdog requests is for the embedder to take
    /// ([`Watchdog::take_reset_request`]).
    pub fn step<B: Bus>(&self, hart: &mut Hart<B>) -> Step {
        self.drive_interrupts(hart);
        let step = hart.step();
        self.advance(1);
        step
    }

    /// Carries out the reset the watchdog requested, if it did since the
    /// last call, as the RTL SoC does on the watchdog's `reset_request`:
    /// `hart` starts again at `reset_vector` (the boot ROM's, or the
    /// image's entry on a board without one) with its registers and CSRs
    /// reset, and the timer, GPIO, MAC, flash controller and MDIO master
    /// reset as at power-on. The memories (the RAMs, the MAC's frame buffer, the flash
    /// controller's data buffer), the UART's queues, the flash part and the
    /// watchdog's `LOAD` and `STATUS` are kept; the watchdog itself stopped
    /// when it fired. Whether it reset.
    pub fn take_watchdog_reset<B: Bus>(&self, hart: &mut Hart<B>, reset_vector: u32) -> bool {
        if !self.watchdog.take_reset_request() {
            return false;
        }
        hart.reset(reset_vector);
        self.timer.reset();
        self.gpio.reset();
        self.mac.reset();
        self.spi_flash.reset();
        self.mdio.reset();
        true
    }

    /// Lets `ticks` of the SoC's clock pass: `mtime` counts them, the
    /// watchdog counts down, a paced UART sends, and a flash program or
    /// erase under way gets nearer its end.
    pub fn advance(&self, ticks: u64) {
        self.timer.advance(ticks);
        self.uart.advance(ticks);
        self.watchdog.advance(ticks);
        self.spi_flash.advance(ticks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::{Access, BusFault};
    use crate::encode as e;

    const UART: u32 = 0x2000_0000;
    const TIMER: u32 = 0x2000_1000;
    const GPIO: u32 = 0x2000_2000;
    const WATCHDOG: u32 = 0x2000_3000;

    #[test]
    fn gpio_outputs_hold_writes_and_inputs_read_the_pins() {
        let mut bus = HarvardBus::reference();
        let soc = Soc::attach(&mut bus).unwrap();
        bus.store(GPIO, Width::Word, 0xA5).unwrap();
        assert_eq!(soc.gpio.output(), 0xA5);
        assert_eq!(bus.load(GPIO, Width::Word), Ok(0xA5));
        soc.gpio.set_input(0x8000_0001);
        assert_eq!(bus.load(GPIO + 4, Width::Word), Ok(0x8000_0001));
        bus.store(GPIO + 4, Width::Word, 0).unwrap();
        assert_eq!(
            bus.load(GPIO + 4, Width::Word),
            Ok(0x8000_0001),
            "INPUT is RO"
        );
        assert!(bus.load(GPIO + 8, Width::Word).is_err());
    }

    #[test]
    fn the_watchdog_fires_load_plus_one_cycles_after_a_kick() {
        let mut bus = HarvardBus::reference();
        let soc = Soc::attach(&mut bus).unwrap();
        bus.store(WATCHDOG, Width::Word, 9).unwrap();
        bus.store(WATCHDOG + 8, Width::Word, 1).unwrap();
        assert_eq!(bus.load(WATCHDOG + 0xC, Width::Word), Ok(9));
        soc.watchdog.advance(5);
        assert_eq!(soc.watchdog.count(), 4);
        // A wrong key does nothing; the right one reloads.
        bus.store(WATCHDOG + 4, Width::Word, 0).unwrap();
        assert_eq!(soc.watchdog.count(), 4);
        bus.store(WATCHDOG + 4, Width::Word, 0x4B49_434B).unwrap();
        assert_eq!(soc.watchdog.count(), 9);
        soc.watchdog.advance(9);
        assert!(
            !soc.watchdog.take_reset_request(),
            "COUNT is 0, not yet fired"
        );
        assert_eq!(bus.load(WATCHDOG + 0x10, Width::Word), Ok(0));
        soc.watchdog.advance(1);
        assert!(soc.watchdog.take_reset_request());
        assert!(!soc.watchdog.take_reset_request(), "one request per firing");
        assert_eq!(
            bus.load(WATCHDOG + 8, Width::Word),
            Ok(0),
            "firing disables"
        );
        assert_eq!(bus.load(WATCHDOG + 0x10, Width::Word), Ok(1), "FIRED");
        bus.store(WATCHDOG + 0x10, Width::Word, 1).unwrap();
        assert_eq!(bus.load(WATCHDOG + 0x10, Width::Word), Ok(0), "W1C");
        assert_eq!(bus.load(WATCHDOG + 4, Width::Word), Ok(0), "KICK is WO");
    }

    #[test]
    fn the_uart_collects_transmitted_bytes() {
        let mut bus = HarvardBus::reference();
        let soc = Soc::attach(&mut bus).unwrap();
        for &b in b"ok\n" {
            bus.store(UART, Width::Word, 0xFFFF_FF00 | u32::from(b))
                .unwrap();
        }
        assert_eq!(soc.uart.transmitted(), b"ok\n");
        assert_eq!(soc.uart.take_transmitted(), b"ok\n");
        assert!(soc.uart.transmitted().is_empty());
    }

    #[test]
    fn a_paced_uart_sends_at_its_line_rate_and_holds_a_fifo_of_bytes() {
        let mut bus = HarvardBus::reference();
        let soc = Soc::attach(&mut bus).unwrap();
        soc.uart.pace(100);
        let fifo = weft_regs::soc::uart::TX_FIFO_BYTES as usize;
        let text: Vec<u8> = (b'a'..).take(fifo).collect();
        for &b in &text {
            assert_eq!(bus.load(UART + 4, Width::Word), Ok(0b01), "room for {b}");
            bus.store(UART, Width::Word, u32::from(b)).unwrap();
        }
        assert_eq!(
            bus.load(UART + 4, Width::Word),
            Ok(0b00),
            "the FIFO is full"
        );
        // Dropped, as a write while TX_READY is clear is.
        bus.store(UART, Width::Word, u32::from(b'X')).unwrap();
        soc.advance(99);
        assert!(
            soc.uart.transmitted().is_empty(),
            "the first stop bit has not ended"
        );
        assert_eq!(
            bus.load(UART + 4, Width::Word),
            Ok(0b01),
            "the first byte left the FIFO"
        );
        soc.advance(1);
        assert_eq!(soc.uart.transmitted(), b"a");
        soc.advance(100 * fifo as u64);
        assert_eq!(soc.uart.take_transmitted(), text);
    }

    #[test]
    fn the_uart_status_reports_ready_and_received_bytes() {
        let mut bus = HarvardBus::reference();
        let soc = Soc::attach(&mut bus).unwrap();
        assert_eq!(bus.load(UART + 4, Width::Word), Ok(0b01));
        soc.uart.receive(b"hi");
        assert_eq!(bus.load(UART + 4, Width::Word), Ok(0b11));
        assert_eq!(bus.load(UART + 8, Width::Word), Ok(u32::from(b'h')));
        assert_eq!(bus.load(UART + 8, Width::Word), Ok(u32::from(b'i')));
        assert_eq!(bus.load(UART + 4, Width::Word), Ok(0b01));
        assert_eq!(bus.load(UART + 8, Width::Word), Ok(0), "empty FIFO reads 0");
        // TX_DATA is write-only, STATUS read-only.
        assert_eq!(bus.load(UART, Width::Word), Ok(0));
        bus.store(UART + 4, Width::Word, 0).unwrap();
        assert!(soc.uart.transmitted().is_empty());
    }

    #[test]
    fn narrow_accesses_and_holes_fault() {
        let mut bus = HarvardBus::reference();
        Soc::attach(&mut bus).unwrap();
        assert_eq!(
            bus.store(UART, Width::Byte, 0x41),
            Err(BusFault::Device {
                addr: UART,
                access: Access::Store,
                fault: DeviceFault::UnsupportedWidth
            })
        );
        assert_eq!(
            bus.load(UART + 0xC, Width::Word),
            Err(BusFault::Device {
                addr: UART + 0xC,
                access: Access::Load,
                fault: DeviceFault::NoRegister
            })
        );
        assert!(matches!(
            bus.load(TIMER + 0x100, Width::Word),
            Err(BusFault::Unmapped { .. })
        ));
    }

    #[test]
    fn the_flash_controller_answers_at_its_block_and_keeps_time_with_the_soc() {
        let mut bus = HarvardBus::reference();
        let soc = Soc::attach(&mut bus).unwrap();
        // Read JEDEC ID (0x9F), 3 bytes, no address: COMMAND at +0xC,
        // LENGTH at +0x8, the buffer at +0x100.
        bus.store(0x2000_5008, Width::Word, 3).unwrap();
        bus.store(0x2000_500C, Width::Word, 0x9F).unwrap();
        assert_eq!(bus.load(0x2000_5100, Width::Word), Ok(0x0016_40EF));
        // Write Enable, then Sector Erase of sector 0: WIP for tSE.
        bus.store(0x2000_5008, Width::Word, 0).unwrap();
        bus.store(0x2000_500C, Width::Word, 0x06).unwrap();
        bus.store(0x2000_500C, Width::Word, 0x120).unwrap();
        assert!(soc.spi_flash.busy());
        soc.advance(Timing::TYPICAL.sector_erase - 1);
        assert!(soc.spi_flash.busy());
        soc.advance(1);
        assert!(!soc.spi_flash.busy());
        assert_eq!(soc.timer.mtime(), Timing::TYPICAL.sector_erase);
    }

    #[test]
    fn the_timer_interrupts_when_mtime_reaches_mtimecmp() {
        let mut bus = HarvardBus::reference();
        let soc = Soc::attach(&mut bus).unwrap();
        assert_eq!(soc.timer.mtimecmp(), u64::MAX, "reset value");
        assert!(!soc.timer.interrupt_pending());
        // mtimecmp = 0x1_0000_0002, written as Privileged §3.2.1 suggests.
        bus.store(TIMER + 8, Width::Word, u32::MAX).unwrap();
        bus.store(TIMER + 0xC, Width::Word, 1).unwrap();
        bus.store(TIMER + 8, Width::Word, 2).unwrap();
        assert_eq!(soc.timer.mtimecmp(), 0x1_0000_0002);
        // mtime = 0x1_0000_0000: the low half carried into the high one.
        bus.store(TIMER, Width::Word, u32::MAX).unwrap();
        soc.timer.advance(1);
        assert_eq!(bus.load(TIMER, Width::Word), Ok(0));
        assert_eq!(bus.load(TIMER + 4, Width::Word), Ok(1));
        soc.timer.advance(1);
        assert!(!soc.timer.interrupt_pending(), "mtime < mtimecmp");
        soc.timer.advance(1);
        assert!(soc.timer.interrupt_pending(), "mtime == mtimecmp");
        soc.timer.advance(100);
        assert!(soc.timer.interrupt_pending(), "mtime > mtimecmp");
        bus.store(TIMER + 0xC, Width::Word, 2).unwrap();
        assert!(!soc.timer.interrupt_pending(), "writing mtimecmp clears it");
    }

    #[test]
    fn a_hart_wakes_from_wfi_on_the_timer() {
        let mut bus = HarvardBus::reference();
        let soc = Soc::attach(&mut bus).unwrap();
        // mtimecmp = 10 (high half first, so it never passes below mtime),
        // enable MTIE (mie bit 7), then wait.
        let program = [
            e::lui(1, TIMER >> 12),
            e::sw(0, 1, 0xC),
            e::addi(2, 0, 10),
            e::sw(2, 1, 8),
            e::addi(3, 0, 0x80),
            e::csrrs(0, 0x304, 3),
            e::wfi(),
            e::addi(4, 0, 1),
        ];
        let mut hart = Hart::new(bus);
        hart.bus_mut().write_words(0, &program).unwrap();
        let mut idle = 0;
        while hart.reg(4) == 0 {
            if soc.step(&mut hart) == Step::Idle {
                idle += 1;
            }
            assert!(soc.timer.mtime() < 100, "the timer never woke the hart");
        }
        assert!(idle > 0, "the hart waited");
        assert!(soc.timer.mtime() >= 10);
    }
}
