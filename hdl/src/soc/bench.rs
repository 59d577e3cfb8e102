//! A test bench for the whole SoC: Rust models on its outside (a UART
//! line, GPIO pins, a serial NOR flash part, an MDIO line with no PHY, a
//! CSR target) and the core's retirement trace read
//! back, driven cycle by cycle on the calling thread.

use std::collections::VecDeque;

use rust_hdl::prelude::*;
use weft_iss::soc::NorFlash;
use weft_iss::{Interrupt, MemWrite, Mmio, Width};
use weft_regs::csr::CSR_BASE;

use super::Soc;
use crate::core::testbench::{port_write, read_trace};
use crate::core::{BenchError, CoreUnderTest, Retired};
use crate::driver::CycleDriver;
use crate::spi_flash::FlashOnPins;

/// The SoC with its outside modelled in Rust.
///
/// The UART's transmitter is always drained (one byte per cycle at most),
/// bytes handed to [`SocBench::receive`] are offered to its receiver one
/// per cycle, a serial NOR part sits on the flash pins (the erased
/// reference part, `NorFlash::reference()`, as `weft_iss::soc::Soc::attach`
/// has it, unless [`SocBench::attach_flash`] puts another there), MDIO is
/// a pulled-up line no PHY answers on (as `weft_iss::soc::Mdio` has it
/// with no PHY attached), and a
/// `weft_iss::Mmio` device mapped with
/// [`SocBench::map_csr`] answers the CSR master port at offsets from
/// `CSR_BASE` (unmapped, the port answers nothing and loads read 0).
pub struct SocBench {
    driver: CycleDriver<Soc>,
    transmitted: Vec<u8>,
    to_receive: VecDeque<u8>,
    flash: FlashOnPins,
    csr: Option<Box<dyn Mmio>>,
    /// The CSR target's answer to the previous cycle's read.
    csr_answer: Option<u32>,
    /// `mip` during the previous cycle, whose commit decision the trace reports now.
    decided_mip: u32,
    /// The core's data port write in the previous cycle, whose retirement the trace reports now.
    issued: Option<MemWrite>,
    resets_requested: u64,
    /// Cycles let pass by [`SocBench::skip_idle`] without evaluating the logic.
    skipped: u64,
}

impl SocBench {
    /// Builds the bench around `soc` and holds it in power-on reset for one
    /// cycle, so that the core starts at its reset vector.
    pub fn new(soc: Soc) -> Result<Self, BenchError> {
        let mut driver = CycleDriver::new(soc, |s| &mut s.clock)?;
        driver.block().reset.next = true;
        driver.tick()?;
        driver.block().reset.next = false;
        Ok(Self {
            driver,
            transmitted: Vec::new(),
            to_receive: VecDeque::new(),
            flash: FlashOnPins::new(NorFlash::reference()),
            csr: None,
            csr_answer: None,
            decided_mip: 0,
            issued: None,
            resets_requested: 0,
            skipped: 0,
        })
    }

    /// Answers the CSR master port with `device`.
    pub fn map_csr(&mut self, device: Box<dyn Mmio>) {
        self.csr = Some(device);
    }

    /// Puts `part` on the flash pins in place of the one there: a flash
    /// that kept its contents from an earlier run, or one of other timing.
    pub fn attach_flash(&mut self, part: NorFlash) {
        self.flash = FlashOnPins::new(part);
    }

    /// The flash part on the pins, its array and status as they are now.
    pub fn flash(&self) -> &NorFlash {
        self.flash.part()
    }

    /// Queues `bytes` for the UART's receiver.
    pub fn receive(&mut self, bytes: &[u8]) {
        self.to_receive.extend(bytes);
    }

    /// Every byte the UART sent so far.
    pub fn transmitted(&self) -> &[u8] {
        &self.transmitted
    }

    /// Drives the data plane's interrupt line.
    pub fn set_data_plane_interrupt(&mut self, level: bool) {
        self.driver.block().data_plane_irq.next = level;
    }

    /// Drives the GPIO inputs.
    pub fn set_gpio_inputs(&mut self, levels: u32) {
        self.driver.block().gpio_inputs.next = bits(u64::from(levels));
    }

    /// The GPIO output levels.
    pub fn gpio_outputs(&mut self) -> u32 {
        self.driver.block().gpio_outputs.val().to_u32()
    }

    /// The SoC itself, to drive and read the pins the bench does not
    /// model (the Ethernet MAC's MII) before a [`SocBench::cycle`].
    pub fn soc(&mut self) -> &mut Soc {
        self.driver.block()
    }

    /// Resets the watchdog has requested so far.
    pub fn resets_requested(&self) -> u64 {
        self.resets_requested
    }

    /// Integer register `r` of the core.
    ///
    /// # Panics
    /// If `r > 31`.
    pub fn register(&mut self, r: usize) -> u32 {
        self.driver.block().core.register(r)
    }

    /// Data RAM now, as bytes from `DATA_RAM_BASE`.
    pub fn data_ram(&mut self) -> Vec<u8> {
        self.driver.block().data_ram()
    }

    /// Clock cycles run, the reset cycle included, and those skipped
    /// ([`SocBench::skip_idle`]).
    pub fn cycles(&self) -> u64 {
        self.driver.cycles() + self.skipped
    }

    /// `mtime` now (the timer counts clock cycles, `weft_regs::soc::timer`).
    pub fn mtime(&mut self) -> u64 {
        self.driver.block().timer.mtime()
    }

    /// `mtimecmp` now.
    pub fn mtimecmp(&mut self) -> u64 {
        self.driver.block().timer.mtimecmp()
    }

    /// Whether the core waits in `wfi` with no enabled interrupt pending,
    /// with the inputs set so far.
    pub fn waiting_for_interrupt(&mut self) -> Result<bool, BenchError> {
        self.driver.settle()?;
        Ok(self.driver.block().core.waiting_for_interrupt())
    }

    /// Lets up to `cycles` clock cycles pass without evaluating the logic,
    /// when in each of them nothing but the SoC's counters would change:
    /// the core waits in `wfi` with no enabled interrupt pending, the UART
    /// has no byte to send, the flash is deselected and no MDIO frame runs. The timer's
    /// `mtime` and the watchdog's count move on, and the flash part's
    /// clock (a program or erase in progress finishes). It stops where
    /// the timer's interrupt line would rise (`mtime` reaching
    /// `mtimecmp`) or the watchdog would fire, so that the cycles which
    /// change something run in [`SocBench::cycle`]; the MII pins are
    /// taken as still (the MAC idle). Returns the cycles skipped, 0 when
    /// the SoC is not idle. This is how a system simulator gives a
    /// sleeping firmware milliseconds without simulating each cycle.
    pub fn skip_idle(&mut self, cycles: u64) -> Result<u64, BenchError> {
        self.driver.settle()?;
        let soc = self.driver.block();
        let idle = soc.core.waiting_for_interrupt()
            && !soc.tx_valid.val()
            && soc.flash_cs_n.val()
            && !soc.mdio.busy();
        if !idle {
            return Ok(0);
        }
        let (mtime, mtimecmp) = (soc.timer.mtime(), soc.timer.mtimecmp());
        let to_alarm = if mtime < mtimecmp {
            mtimecmp - mtime
        } else {
            u64::MAX
        };
        let before_firing = soc.watchdog.cycles_before_firing().unwrap_or(u64::MAX);
        let skip = cycles.min(to_alarm).min(before_firing);
        soc.timer.skip(skip);
        soc.watchdog.skip(skip);
        self.flash.idle(skip);
        self.skipped += skip;
        self.driver.settle()?;
        Ok(skip)
    }

    /// Runs one clock cycle: serves the SoC's outside and returns the
    /// retirement the core's trace reports in this cycle.
    pub fn cycle(&mut self) -> Result<Option<Retired>, BenchError> {
        let rx = self.to_receive.front().copied();
        let answer = self.csr_answer.take();
        let soc = self.driver.block();
        soc.tx_ready.next = true;
        soc.rx_valid.next = rx.is_some();
        soc.rx_data.next = bits(u64::from(rx.unwrap_or(0)));
        soc.csr.read_valid.next = answer.is_some();
        soc.csr.read_data.next = bits(u64::from(answer.unwrap_or(0)));
        self.driver.settle()?;
        let soc = self.driver.block();
        let retired = read_trace(&soc.core.retire)?;
        let mip = [
            (soc.core.timer_irq.val(), Interrupt::MachineTimer),
            (soc.core.external_irq.val(), Interrupt::MachineExternal),
        ]
        .into_iter()
        .filter(|(pending, _)| *pending)
        .fold(0, |mip, (_, interrupt)| mip | interrupt.mask());
        let written = port_write(&soc.core.data);
        if soc.tx_valid.val() {
            self.transmitted.push(soc.tx_data.val().to_u32() as u8);
        }
        if rx.is_some() && soc.rx_ready.val() {
            self.to_receive.pop_front();
        }
        if soc.reset_request.val() {
            self.resets_requested += 1;
        }
        // The part sees the pins as they are before the edge, as the
        // controller samples `miso` driven in the cycle before.
        soc.flash_miso.next = self.flash.cycle(
            soc.flash_cs_n.val(),
            soc.flash_sclk.val(),
            soc.flash_mosi.val(),
        );
        // MDIO with no PHY: the pull-up's high unless the master drives it.
        soc.mdio_in.next = !soc.mdio_out_enable.val() || soc.mdio_out.val();
        let (read, write) = (soc.csr.read.val(), soc.csr.write.val());
        let offset = soc.csr.address.val().to_u32().wrapping_sub(CSR_BASE);
        let value = soc.csr.write_data.val().to_u32();
        if let Some(device) = self.csr.as_mut() {
            if write {
                // A refused write is dropped, as a CSR target ignores an address it does not decode.
                let _ = device.write(offset, Width::Word, value);
            }
            if read {
                self.csr_answer = device.read(offset, Width::Word).ok();
            }
        }
        self.driver.tick()?;
        let decided = std::mem::replace(&mut self.decided_mip, mip);
        let stored = std::mem::replace(&mut self.issued, written);
        Retired::reported(retired, decided, stored, self.cycles())
    }
}

impl CoreUnderTest for SocBench {
    fn cycle(&mut self) -> Result<Option<Retired>, BenchError> {
        SocBench::cycle(self)
    }

    fn cycles(&self) -> u64 {
        SocBench::cycles(self)
    }

    fn store_in_flight(&self) -> bool {
        self.issued.is_some()
    }
}
