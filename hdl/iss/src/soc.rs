//! Models of the soft core's SoC peripherals at their `weft_regs::soc`
//! addresses: the console [`Uart`], the machine [`Timer`] and the
//! management Ethernet [`Mac`].
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
use weft_regs::soc::{timer, uart, BLOCK_SIZE};

use crate::bus::{Bus, DeviceFault, HarvardBus, MapError, Mmio, Width};
use crate::hart::{Hart, Step};
use crate::trap::Interrupt;

mod mac;

pub use mac::{Mac, Reception, MIN_FRAME};

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
}

/// The console UART (`weft_regs::soc::uart`): bytes written to `TX_DATA`
/// are collected for the embedder; bytes the embedder hands to
/// [`Uart::receive`] are read from `RX_DATA`.
///
/// The transmitter is always ready: the model sends a byte the moment it
/// is written, so `STATUS.TX_READY` always reads 1.
#[derive(Clone, Debug, Default)]
pub struct Uart {
    state: Rc<RefCell<UartState>>,
}

impl Uart {
    /// A UART that has sent and received nothing.
    pub fn new() -> Self {
        Self::default()
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
        let rx_valid = !self.state.borrow().received.is_empty();
        uart::TX_READY.encode(1) | uart::RX_VALID.encode(u32::from(rx_valid))
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
            self.state.borrow_mut().transmitted.push(byte);
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

/// The SoC peripherals of the reference map, each mapped at its
/// `weft_regs::soc` block.
#[derive(Clone, Debug, Default)]
pub struct Soc {
    /// The console UART.
    pub uart: Uart,
    /// The machine timer.
    pub timer: Timer,
    /// The management Ethernet MAC.
    pub mac: Mac,
}

impl Soc {
    /// Maps a fresh UART, timer and MAC into `bus` at their
    /// `weft_regs::soc` addresses and returns handles to them.
    pub fn attach(bus: &mut HarvardBus) -> Result<Self, MapError> {
        let soc = Self::default();
        bus.map_mmio(uart::LAYOUT.base, BLOCK_SIZE, Box::new(soc.uart.clone()))?;
        bus.map_mmio(timer::LAYOUT.base, BLOCK_SIZE, Box::new(soc.timer.clone()))?;
        soc.mac.attach(bus)?;
        Ok(soc)
    }

    /// Drives `hart`'s interrupt lines from the peripherals: the timer's
    /// compare to `mip.MTIP`, the MAC's interrupt to `mip.MEIP`.
    pub fn drive_interrupts<B: Bus>(&self, hart: &mut Hart<B>) {
        hart.set_interrupt_pending(Interrupt::MachineTimer, self.timer.interrupt_pending());
        hart.set_interrupt_pending(Interrupt::MachineExternal, self.mac.interrupt_pending());
    }

    /// One step of `hart` with the timer wired to its machine timer
    /// interrupt line and the MAC to its machine external one; `mtime`
    /// then advances by one.
    pub fn step<B: Bus>(&self, hart: &mut Hart<B>) -> Step {
        self.drive_interrupts(hart);
        let step = hart.step();
        self.timer.advance(1);
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::{Access, BusFault};
    use crate::encode as e;

    const UART: u32 = 0x2000_0000;
    const TIMER: u32 = 0x2000_1000;

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
