//! The soft core's firmware on the RTL SoC: weft-hdl's `Soc` (the RV32IM
//! core, its block RAMs, UART, timer, watchdog, GPIO, SPI flash
//! controller and Ethernet MAC) run cycle by cycle on the calling thread
//! by `weft_hdl::soc::SocBench`, at the reference soft core clock
//! ([`CPU_CLOCK_HZ`]): one tick is one clock cycle, and `mtime` counts
//! them.
//!
//! Its outside is what the ISS board has ([`crate::iss_board`]):
//!
//! - the CSR master port is answered by the data plane's CSR window
//!   (`weft_iss::data_plane::DataPlaneWindow`), a transaction per cycle
//!   it is asserted, a read's data in the next cycle, and the window's
//!   interrupt line drives the SoC's `data_plane_irq` every cycle;
//! - a serial NOR part (`weft_iss::soc::NorFlash`, the ISS's flash model)
//!   sits on the SPI flash pins;
//! - the UART's transmitted bytes are the console;
//! - the MII pins are still (no receive clock, no transmit clock): the MAC
//!   is idle, and the firmware's network is not joined to anything.
//!
//! While the firmware waits in `wfi`, time passes without simulating each
//! cycle (`SocBench::skip_idle`): the timer and watchdog count and the
//! flash part's clock moves, up to the cycle something would change.
//!
//! Speed, on a 2-CPU machine busy with another build: about 2 000
//! simulated cycles a wall-clock second in a release build, 1 200 in a
//! debug one (weft-hdl and rust-hdl-core are built at opt-level 2 there
//! too). The firmware's banner (67 500 cycles into the boot) takes 34 s
//! in release, 55 to 125 s in debug; its fabric start in a one-switch
//! fabric with one GPU (an enumeration of 574 000 cycles and 476 000
//! instructions, where the ISS retires 456 000) takes 6.5 to 7 minutes
//! in release, where the ISS takes 0.1 s; a host's configuration request
//! through the fabric then takes about 1.5 s, and the host's whole boot
//! through the firmware's virtual switch 230 s (the ISS: 0.1 s)
//! (`sim/tests/firmware_rtl_core.rs` prints the figures).

use weft_hdl::soc::{MemoryImage, Soc, SocBench};
use weft_iss::data_plane::DataPlaneWindow;
use weft_iss::soc::NorFlash;

use crate::firmware_board::{FirmwareBoard, FirmwareCore};
#[cfg(doc)]
use crate::iss_board::CPU_CLOCK_HZ;
use crate::iss_board::{Activity, BoardError};

/// The firmware on the RTL SoC with its outside.
pub struct RtlBoard {
    bench: SocBench,
    data_plane: DataPlaneWindow,
    /// The bench's cycle count at the end of power-on reset: tick 0.
    reset_cycles: u64,
    /// Console bytes already taken.
    console_taken: usize,
    /// Ticks to the timer alarm, as of the end of the last run or advance
    /// (only the firmware changes `mtimecmp`, only time `mtime`).
    to_alarm: u64,
}

impl RtlBoard {
    /// The SoC at reset with its memories holding `elf`, `flash` on its
    /// flash pins and `data_plane` answering its CSR master port.
    ///
    /// In an unoptimised build, building the SoC deep in a world's
    /// construction takes more stack than a test thread's 2 MiB; tests
    /// build it under `weft_hdl::driver::on_big_stack`.
    pub fn new(
        elf: &[u8],
        flash: NorFlash,
        data_plane: DataPlaneWindow,
    ) -> Result<RtlBoard, BoardError> {
        let memory = MemoryImage::reference_from_elf(elf).map_err(BoardError::Soc)?;
        let soc = Soc::new(&memory).map_err(BoardError::Soc)?;
        let mut bench = SocBench::new(soc).map_err(BoardError::Bench)?;
        bench.attach_flash(flash);
        bench.map_csr(Box::new(data_plane.clone()));
        let mut board = RtlBoard {
            reset_cycles: bench.cycles(),
            bench,
            data_plane,
            console_taken: 0,
            to_alarm: 0,
        };
        board.note_alarm();
        Ok(board)
    }

    /// Records how far the timer alarm is now.
    fn note_alarm(&mut self) {
        self.to_alarm = self.bench.mtimecmp().saturating_sub(self.bench.mtime());
    }

    /// The data plane's interrupt line onto the SoC's `data_plane_irq`.
    fn drive_interrupt(&mut self) {
        let level = self.data_plane.interrupt_pending();
        self.bench.set_data_plane_interrupt(level);
    }

    /// Whether the core waits in `wfi` with nothing to wake it.
    fn waiting(&mut self) -> bool {
        self.bench
            .waiting_for_interrupt()
            .unwrap_or_else(|why| panic!("the RTL SoC's logic: {why}"))
    }

    /// One clock cycle.
    fn cycle(&mut self) {
        self.drive_interrupt();
        if let Err(why) = self.bench.cycle() {
            panic!("the RTL SoC's logic: {why}");
        }
    }
}

impl FirmwareBoard for RtlBoard {
    fn core(&self) -> FirmwareCore {
        FirmwareCore::Rtl
    }

    fn ticks(&self) -> u64 {
        self.bench.cycles() - self.reset_cycles
    }

    fn ticks_to_alarm(&self) -> u64 {
        self.to_alarm
    }

    fn external_interrupt(&self) -> bool {
        // The MAC is idle: the data plane's is the only line that rises.
        self.data_plane.interrupt_pending()
    }

    fn run(&mut self, max_ticks: u64) -> Activity {
        self.drive_interrupt();
        let mut activity = Activity::Running;
        if self.waiting() {
            activity = Activity::Waiting;
        }
        let mut ran = 0;
        while activity == Activity::Running && ran < max_ticks {
            self.cycle();
            ran += 1;
            // The cycle ended settled with this cycle's interrupt line: look
            // again with the line as the window drives it now only when
            // the core looks asleep.
            if self.bench.soc().core.waiting_for_interrupt() {
                self.drive_interrupt();
                if self.waiting() {
                    activity = Activity::Waiting;
                }
            }
        }
        self.note_alarm();
        activity
    }

    fn advance_ticks(&mut self, ticks: u64) {
        let mut left = ticks;
        while left > 0 {
            self.drive_interrupt();
            let skipped = self
                .bench
                .skip_idle(left)
                .unwrap_or_else(|why| panic!("the RTL SoC's logic: {why}"));
            if skipped == 0 {
                self.cycle();
                left -= 1;
            } else {
                left -= skipped;
            }
        }
        self.note_alarm();
    }

    fn take_console(&mut self) -> Vec<u8> {
        let sent = self.bench.transmitted();
        let new = sent[self.console_taken..].to_vec();
        self.console_taken = sent.len();
        new
    }
}
