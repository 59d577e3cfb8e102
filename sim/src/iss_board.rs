//! The soft core's firmware on the instruction-set simulator: a board
//! with the reference memory map, the SoC peripherals of `weft_iss::soc`
//! and the data plane's CSR window over a model switch
//! (`weft_iss::data_plane`), whose management MAC an embedder feeds and
//! drains. The data plane's interrupt line (its mailbox's and injector's)
//! joins the MAC's on `mip.MEIP`, a level OR, as on the RTL SoC.
//!
//! Time is the machine timer's `mtime` (and the flash part's clock, so a
//! program or erase takes its datasheet time), one tick per retired step at the
//! reference soft core clock ([`CPU_CLOCK_HZ`]). While the firmware waits
//! in `wfi` the embedder decides how time passes: [`IssBoard::skip_to_alarm`]
//! jumps to the firmware's next timer alarm (tests, deterministic), and
//! [`IssBoard::advance`] moves time on by what the wall clock says (the
//! TAP bridge).
//!
//! When the SoC's watchdog fires, the board resets as the RTL SoC does
//! (`weft_iss::soc::Soc::take_watchdog_reset`): the core starts again at
//! its reset vector (the boot ROM's on a board with the boot loader, the
//! ELF's entry otherwise) with the memories as they were. It does so at
//! the next step after the watchdog fired, within [`IssBoard::run`].

use std::fmt;
use std::time::Duration;

use weft_iss::data_plane::DataPlaneWindow;
use weft_iss::elf::ElfError;
use weft_iss::soc::{Gpio, Mac, NorFlash, Soc, SpiFlash, Uart};
use weft_iss::{Hart, HarvardBus, MapError, RunStop};

/// The clock the ISS board's firmware runs at: the reference soft core
/// clock, which is also the rate of `mtime`.
pub const CPU_CLOCK_HZ: u64 = weft_regs::SOFT_CORE_CLOCK_HZ as u64;

/// Steps the hart runs between looks at its interrupt lines and the
/// timer: 10 µs of core time at [`CPU_CLOCK_HZ`].
const CHUNK_STEPS: u64 = 1_000;

/// The word the board fills the data memory above the firmware's statics
/// with before the firmware starts (stack painting): a word still holding
/// it was never written, so [`IssBoard::stack_headroom`] can say how close
/// the stack, growing down from the top of data memory, ever came to the
/// statics it would overwrite.
const STACK_PAINT: u32 = 0x57AC_5EA1;

/// Where the statics of an ELF linked by riscv-rt end: its `__sheap`, the
/// start of the (empty) heap above `.bss` and `.uninit`. riscv-rt's last
/// loadable segment runs on over the stack to the top of data memory, so
/// the segments alone do not tell; a program without the symbol has its
/// statics end where its segments do.
fn statics_end(elf: &[u8]) -> Option<u64> {
    use object::{Object, ObjectSymbol};
    let file = object::File::parse(elf).ok()?;
    let symbol = file
        .symbols()
        .find(|symbol| symbol.name() == Ok("__sheap"))?;
    Some(symbol.address())
}

/// Why a board could not be built.
#[derive(Debug)]
pub enum BoardError {
    /// The SoC peripherals or the CSR window did not fit the memory map (a bug in weft).
    Map(MapError),
    /// The firmware image is not a loadable RISC-V ELF.
    Elf(ElfError),
    /// The firmware image does not fit the RTL SoC's memories
    /// ([`crate::rtl_board`]).
    Soc(weft_hdl::soc::SocError),
    /// The RTL SoC did not come out of reset (a defect in its logic).
    Bench(weft_hdl::core::BenchError),
}

impl fmt::Display for BoardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoardError::Map(error) => write!(
                f,
                "the SoC peripherals or the CSR window do not map: {error}"
            ),
            BoardError::Elf(error) => write!(
                f,
                "the firmware image does not load: {error:?} (build it with `cargo xtask firmware`)"
            ),
            BoardError::Soc(error) => write!(f, "the RTL SoC: {error}"),
            BoardError::Bench(error) => write!(f, "the RTL SoC does not start: {error}"),
        }
    }
}

impl std::error::Error for BoardError {}

/// Whether the firmware is waiting for an interrupt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// It waits in `wfi` and no enabled interrupt is pending.
    Waiting,
    /// It used up the steps it was given and is still running.
    Running,
}

/// The data plane of a board without a fabric: every link down.
fn unlinked_data_plane() -> DataPlaneWindow {
    DataPlaneWindow::unlinked(weft_regs::capacity::PORTS)
}

/// The firmware on the ISS with its peripherals.
pub struct IssBoard {
    hart: Hart<HarvardBus>,
    soc: Soc,
    data_plane: DataPlaneWindow,
    steps: u64,
    reset_vector: u32,
    watchdog_resets: u64,
    ticks_before_reset: u64,
    /// The first word above the firmware's statics, where the painted
    /// free memory begins.
    statics_end: u32,
}

impl IssBoard {
    /// A board at reset with `elf` loaded, about to run its first
    /// instruction, its configuration flash erased and its data plane a
    /// switch of `weft_regs::capacity::PORTS` ports with every link down.
    pub fn new(elf: &[u8]) -> Result<IssBoard, BoardError> {
        IssBoard::with_parts(elf, NorFlash::reference(), unlinked_data_plane())
    }

    /// A board at reset with `elf` loaded and `data_plane` as its CSR window.
    pub fn with_data_plane(
        elf: &[u8],
        data_plane: DataPlaneWindow,
    ) -> Result<IssBoard, BoardError> {
        IssBoard::with_parts(elf, NorFlash::reference(), data_plane)
    }

    /// A board at reset with `elf` loaded and `flash` on its flash
    /// controller: a board restarted with what an earlier run stored
    /// ([`IssBoard::flash`]`.part()`).
    pub fn with_flash(elf: &[u8], flash: NorFlash) -> Result<IssBoard, BoardError> {
        IssBoard::with_parts(elf, flash, unlinked_data_plane())
    }

    /// A board at reset with `elf` loaded, `flash` on its flash controller
    /// and `data_plane` as its CSR window.
    pub fn with_parts(
        elf: &[u8],
        flash: NorFlash,
        data_plane: DataPlaneWindow,
    ) -> Result<IssBoard, BoardError> {
        let mut bus = HarvardBus::reference();
        let soc = Soc::attach_with_flash(&mut bus, flash).map_err(BoardError::Map)?;
        data_plane.attach(&mut bus).map_err(BoardError::Map)?;
        let mut hart = Hart::new(bus);
        let loaded = hart.load_elf(elf).map_err(BoardError::Elf)?;
        let data_ram = hart.bus_mut().data_ram_mut();
        let statics = statics_end(elf)
            .unwrap_or(loaded.end)
            .saturating_sub(u64::from(weft_regs::DATA_RAM_BASE))
            .next_multiple_of(4)
            .min(data_ram.len() as u64) as usize;
        for word in data_ram[statics..].chunks_exact_mut(4) {
            word.copy_from_slice(&STACK_PAINT.to_le_bytes());
        }
        Ok(IssBoard {
            reset_vector: hart.pc(),
            hart,
            soc,
            data_plane,
            steps: 0,
            watchdog_resets: 0,
            ticks_before_reset: 0,
            statics_end: weft_regs::DATA_RAM_BASE + statics as u32,
        })
    }

    /// A board at reset whose boot ROM holds the boot loader's ELF `boot`
    /// and whose RAMs hold the ELF `bitstream` (the image the bitstream
    /// carries), with `flash` on its flash controller: it starts in the
    /// loader, which runs the image the boot record picks from the flash.
    pub fn with_boot_loader(
        boot: &[u8],
        bitstream: &[u8],
        flash: NorFlash,
    ) -> Result<IssBoard, BoardError> {
        let mut board = IssBoard::with_parts(bitstream, flash, unlinked_data_plane())?;
        board.reset_vector = board.hart.load_elf(boot).map_err(BoardError::Elf)?.entry;
        Ok(board)
    }

    /// The bytes between the end of the firmware's statics and the deepest
    /// its stack has gone since the board was built (the lowest word of
    /// the painted free memory anything wrote): 0 means the stack reached
    /// the statics and may have overwritten them. A board started in its
    /// boot loader measures against the bitstream image's statics.
    pub fn stack_headroom(&self) -> u32 {
        let start = (self.statics_end - weft_regs::DATA_RAM_BASE) as usize;
        let untouched = self.hart.bus().data_ram()[start..]
            .chunks_exact(4)
            .take_while(|word| *word == STACK_PAINT.to_le_bytes())
            .count();
        4 * untouched as u32
    }

    /// The data plane's CSR window, to reach its switch.
    pub fn data_plane(&self) -> &DataPlaneWindow {
        &self.data_plane
    }

    /// Instructions the hart retired since reset (`minstret`).
    pub fn instructions(&self) -> u64 {
        self.hart.csrs().minstret()
    }

    /// The console UART: type on it with [`Uart::receive`], read what the
    /// firmware printed with [`Uart::take_transmitted`].
    pub fn console(&self) -> &Uart {
        &self.soc.uart
    }

    /// The management MAC: inject frames from the line, take the sent ones.
    pub fn mac(&self) -> &Mac {
        &self.soc.mac
    }

    /// The GPIO: set the levels on its inputs, as a board drives them
    /// (`weft_chip` shows its ports' links there: `weft_regs::soc::gpio`).
    pub fn gpio(&self) -> &Gpio {
        &self.soc.gpio
    }

    /// The configuration flash's controller and part.
    pub fn flash(&self) -> &SpiFlash {
        &self.soc.spi_flash
    }

    /// Steps retired (or idled) since reset.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// `mtime` now: ticks since the last reset, the watchdog's included.
    pub fn mtime(&self) -> u64 {
        self.soc.timer.mtime()
    }

    /// Ticks of the SoC's clock since the board was built: `mtime` with the
    /// ticks before each watchdog reset (which restarts `mtime`) added.
    pub fn ticks(&self) -> u64 {
        self.ticks_before_reset + self.soc.timer.mtime()
    }

    /// Runs the firmware until it waits for an interrupt, or for at most
    /// about `max_steps` steps. `mtime` advances one tick per step.
    pub fn run(&mut self, max_steps: u64) -> Activity {
        let mut left = max_steps;
        loop {
            self.reset_if_fired();
            self.drive_interrupts();
            let summary = self.hart.run(left.min(CHUNK_STEPS));
            self.soc.advance(summary.steps);
            self.steps += summary.steps;
            self.reset_if_fired();
            left = left.saturating_sub(summary.steps);
            if summary.stop == RunStop::Idle {
                // Idle with the lines as they were: look again with the
                // lines the peripherals drive now.
                self.drive_interrupts();
                if self.hart.step() == weft_iss::Step::Idle {
                    return Activity::Waiting;
                }
                self.steps += 1;
                self.soc.advance(1);
            }
            if left == 0 {
                return Activity::Running;
            }
        }
    }

    /// Resets the watchdog carried out since the board was built.
    pub fn watchdog_resets(&self) -> u64 {
        self.watchdog_resets
    }

    /// Carries out the reset the watchdog requested, if it fired.
    fn reset_if_fired(&mut self) {
        let mtime = self.soc.timer.mtime();
        if self
            .soc
            .take_watchdog_reset(&mut self.hart, self.reset_vector)
        {
            self.watchdog_resets += 1;
            self.ticks_before_reset += mtime;
        }
    }

    /// Whether an external interrupt line is high: the MAC's or the data
    /// plane's (`mip.MEIP`). A firmware waiting in `wfi` with the line
    /// enabled wakes on it at its next [`IssBoard::run`].
    pub fn external_interrupt(&self) -> bool {
        self.soc.mac.interrupt_pending() || self.data_plane.interrupt_pending()
    }

    /// The hart's interrupt lines as the peripherals and the data plane
    /// drive them now: the data plane's line joins the MAC's on `mip.MEIP`.
    fn drive_interrupts(&mut self) {
        let data_plane = self.data_plane.interrupt_pending();
        self.soc.drive_interrupts_with(&mut self.hart, data_plane);
    }

    /// Ticks from now until the firmware's timer alarm (`mtimecmp`), 0 if
    /// it is already due.
    pub fn ticks_to_alarm(&self) -> u64 {
        self.soc
            .timer
            .mtimecmp()
            .saturating_sub(self.soc.timer.mtime())
    }

    /// Moves time straight to the firmware's timer alarm.
    pub fn skip_to_alarm(&mut self) {
        self.soc.advance(self.ticks_to_alarm());
    }

    /// Moves time on by `ticks` of `mtime`.
    pub fn advance_ticks(&mut self, ticks: u64) {
        self.soc.advance(ticks);
    }

    /// Moves time on by `elapsed` at [`CPU_CLOCK_HZ`].
    pub fn advance(&mut self, elapsed: Duration) {
        let ticks = elapsed.as_nanos() * u128::from(CPU_CLOCK_HZ) / 1_000_000_000;
        self.soc.advance(u64::try_from(ticks).unwrap_or(u64::MAX));
    }

    /// How long `ticks` of `mtime` take at [`CPU_CLOCK_HZ`].
    pub fn duration_of(ticks: u64) -> Duration {
        let nanos = u128::from(ticks) * 1_000_000_000 / u128::from(CPU_CLOCK_HZ);
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }
}
