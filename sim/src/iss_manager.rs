//! The firmware as the management CPU of a simulated fabric: a board
//! ([`FirmwareBoard`]: the [`IssBoard`] on the instruction-set simulator,
//! or the [`RtlBoard`] on the RTL soft core,
//! chosen per run by [`FirmwareCore`]) whose CSR window
//! (`weft_iss::data_plane`) is switch 0 of a [`World`], in place of the
//! native fabric manager ([`World::hand_manager_to_firmware`]).
//!
//! The world runs the board in its event loop, as one more thing that
//! happens in simulated time: the board's ticks at the reference soft
//! core clock ([`CPU_CLOCK_HZ`]: ISS steps or RTL clock cycles) are the
//! world's clock. While the firmware runs, it gets slices of at most
//! [`SLICE_STEPS`] ticks that end by the world's next event, so it sees
//! what the world sends it when it happens (to within a slice); while it
//! sleeps in `wfi`, nothing runs it until its timer alarm, a completion
//! due back, or a TLP in its mailbox. Switch 0's data plane belongs to the
//! world between slices and is lent to the board's CSR window while the
//! firmware runs, so the tables the firmware writes are the world's.
//!
//! What the firmware sends through the injector leaves switch 0 as the
//! native manager's requests and completions do:
//!
//! - a configuration request goes the native manager's way
//!   ([`crate::manager_config`]): on the port's link, below it, or routed
//!   by bus through the fabric links, each hop through the switch and link
//!   models; its completion reaches switch 0's mailbox when the links say
//!   it is back, so the firmware waits for it as it would on a board;
//! - anything else (a completion for a host, an MSI, a memory request to
//!   another switch's management BAR, which writes or reads its tables)
//!   goes onto the port's link in the world's event queue; a read's
//!   completion comes back to switch 0's mailbox through the switches.
//!
//! What switch 0 routes to its CPU (a host's configuration request, an
//! error message) goes into its mailbox at once, and wakes the firmware
//! through the data plane's interrupt.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use weft_drivers::spi_flash::Span;
use weft_fabric::persist::{self, ArrayFlash, StoredConfig};
use weft_fabric::settings::FabricSettings;
use weft_iss::data_plane::{DataPlaneWindow, Links};
use weft_iss::soc::{Geometry, NorFlash, Timing};
use weft_model::csr_window::CsrWindow;
use weft_model::{Destination, Packet, PortIndex, Switch};

use crate::firmware_board::{FirmwareBoard, FirmwareCore};
use crate::iss_board::{Activity, BoardError, IssBoard, CPU_CLOCK_HZ};
use crate::rtl_board::RtlBoard;
use crate::world::World;

/// The flash of a board provisioned for `settings`: the configuration
/// region (`weft_drivers::spi_flash::CONFIG`) holds a configuration record
/// (weft-fabric's `persist`) with their host ports and NumVFs and no
/// bindings, which the firmware applies at start in place of its
/// built-in settings, as it would a saved configuration; the rest erased.
pub fn provisioned_flash(settings: &FabricSettings) -> NorFlash {
    const CONFIG: Span = weft_drivers::spi_flash::CONFIG;
    let config = StoredConfig::of_settings(settings);
    let mut region = ArrayFlash::<{ CONFIG.size as usize }>::erased();
    persist::save(&mut region, &config).expect("a configuration record fits its region");
    let geometry = Geometry::W25Q32;
    let mut contents = vec![0xff; geometry.capacity()];
    let start = CONFIG.start as usize;
    contents[start..start + region.bytes().len()].copy_from_slice(region.bytes());
    NorFlash::with_contents(geometry, Timing::TYPICAL, &contents)
}
/// The vendor ID and the upstream and downstream device IDs of the
/// firmware's virtual switch ports (its `fabric::settings`).
pub const FIRMWARE_BRIDGE_IDS: (u16, u16, u16) = (0x1d1d, 0x0001, 0x0002);

/// The firmware's switch ID: its management port's station address,
/// 02-57-45-46-54-01, as a 48-bit number (the firmware's `SWITCH_ID`).
pub const FIRMWARE_SWITCH_ID: u64 = 0x0257_4546_5401;

/// Ticks (ISS steps, RTL cycles) the firmware runs before the world looks
/// at what it sent: about half a microsecond at the reference soft core
/// clock.
pub const SLICE_STEPS: u64 = 64;

/// A completion on its way back to switch 0's mailbox.
struct Returning {
    /// When it is back at the CPU.
    at: Duration,
    /// The port it comes back by.
    port: PortIndex,
    /// The TLP.
    bytes: Vec<u8>,
}

/// The firmware on its board, as switch 0's management CPU.
pub(crate) struct FirmwareCpu {
    board: Box<dyn FirmwareBoard>,
    /// The board's CSR window.
    data_plane: DataPlaneWindow,
    /// World time at the board's reset (`mtime` 0).
    reset_at: Duration,
    /// How the last slice ended.
    activity: Activity,
    /// Whether the external interrupt line was already high when the
    /// firmware went to sleep (so it does not wake it: masked in `mie`).
    slept_through_line: bool,
    /// The configuration requests the firmware sent in the current slice,
    /// each with the port it left by.
    sent: Rc<RefCell<Vec<(PortIndex, Packet)>>>,
    /// Completions on their way back, in no particular order.
    returning: Vec<Returning>,
}

impl FirmwareCpu {
    /// The firmware `elf` on `core` at reset at `now`, with a CSR window
    /// for a switch of `ports` ports (the world lends it switch 0 to run)
    /// and `flash` on its flash controller.
    pub(crate) fn new(
        elf: &[u8],
        core: FirmwareCore,
        ports: usize,
        now: Duration,
        flash: NorFlash,
    ) -> Result<Self, BoardError> {
        let sent = Rc::new(RefCell::new(Vec::new()));
        let collect = Rc::clone(&sent);
        // The world carries them after the slice: see `exchange`.
        let links: Links = Box::new(move |port, packet| {
            collect.borrow_mut().push((port, packet.clone()));
            None
        });
        let data_plane = DataPlaneWindow::new(CsrWindow::new(Switch::new(ports)), links);
        let board: Box<dyn FirmwareBoard> = match core {
            FirmwareCore::Iss => Box::new(IssBoard::with_parts(elf, flash, data_plane.clone())?),
            FirmwareCore::Rtl => Box::new(RtlBoard::new(elf, flash, data_plane.clone())?),
        };
        Ok(FirmwareCpu {
            board,
            data_plane,
            reset_at: now,
            activity: Activity::Running,
            slept_through_line: false,
            sent,
            returning: Vec::new(),
        })
    }

    /// The board.
    pub(crate) fn board(&self) -> &dyn FirmwareBoard {
        self.board.as_ref()
    }

    /// The board, to take its console.
    pub(crate) fn board_mut(&mut self) -> &mut dyn FirmwareBoard {
        self.board.as_mut()
    }

    /// The board's time in the world.
    fn now(&self) -> Duration {
        self.reset_at + IssBoard::duration_of(self.board.ticks())
    }

    /// When the firmware next has something to do: now while it runs or
    /// an external interrupt (a TLP in its mailbox, a frame on its MAC)
    /// has been raised since it went to sleep, else at its timer alarm or
    /// when a completion is back, whichever is first.
    pub(crate) fn wakes_at(&self) -> Duration {
        let now = self.now();
        let raised = self.board.external_interrupt() && !self.slept_through_line;
        if self.activity == Activity::Running || raised {
            return now;
        }
        let alarm = now + IssBoard::duration_of(self.board.ticks_to_alarm());
        self.returning
            .iter()
            .map(|r| r.at)
            .fold(alarm, Duration::min)
    }

    /// Puts `packet`, which switch 0 routed to its CPU from `port`, into the mailbox.
    pub(crate) fn deliver(&mut self, port: PortIndex, packet: &Packet) {
        let bytes = packet
            .to_bytes()
            .expect("the switch delivers well-formed TLPs");
        self.data_plane.window().queue_for_cpu(port, &bytes);
    }

    /// Runs the firmware from the world's time for at most a slice, ending
    /// by `next_event` (the world's next event), with switch 0's data
    /// plane lent to its CSR window; then sends what it sent into `world`.
    pub(crate) fn run_slice(&mut self, world: &mut World, next_event: Option<Duration>) {
        // Asleep until now: its clock catches up with the world's.
        let behind = world.now().saturating_sub(self.now());
        self.board.advance_ticks(ticks_in(behind));
        self.release_returned();
        let until = next_event.map_or(u64::MAX, |at| ticks_in(at.saturating_sub(self.now())));
        let window = self.data_plane.clone();
        world.swap_manager_switch(window.window().switch_mut());
        self.activity = self.board.run(until.clamp(1, SLICE_STEPS));
        self.slept_through_line =
            self.activity == Activity::Waiting && self.board.external_interrupt();
        world.swap_manager_switch(window.window().switch_mut());
        let now = self.now();
        // A hot reset written in the slice reaches the device before the
        // firmware's next request does (it waits 100 ms first).
        world.carry_link_requests(now);
        for (port, packet) in std::mem::take(&mut *self.sent.borrow_mut()) {
            if let Some((reply, at)) = world.carry_cpu_request(port, packet, now) {
                let bytes = reply
                    .to_bytes()
                    .expect("a function's completion is a well-formed TLP");
                self.returning.push(Returning { at, port, bytes });
            }
        }
        for delivery in window.window().take_injected() {
            if let Destination::Port(port) = delivery.to {
                world.send_from_port(port, delivery.packet, now);
            }
        }
        // An unbind's table writes abandon requests: their completions leave.
        world.flush_synthesized();
        self.release_returned();
    }

    /// Puts the completions that are back by now into the mailbox, in the
    /// order they came back.
    fn release_returned(&mut self) {
        let now = self.now();
        let (mut back, on_the_way): (Vec<_>, Vec<_>) = std::mem::take(&mut self.returning)
            .into_iter()
            .partition(|r| r.at <= now);
        self.returning = on_the_way;
        back.sort_by_key(|r| r.at);
        let mut window = self.data_plane.window();
        for returned in back {
            window.queue_for_cpu(returned.port, &returned.bytes);
        }
    }
}

/// `mtime` ticks in `time`, rounded up.
fn ticks_in(time: Duration) -> u64 {
    let ticks = (time.as_nanos() * u128::from(CPU_CLOCK_HZ)).div_ceil(1_000_000_000);
    u64::try_from(ticks).unwrap_or(u64::MAX)
}

/// Simulated time the firmware gets to start the fabric: its start is
/// due 100 ms after reset (PCIe Base 6.0 §6.6.1).
pub const START_DEADLINE: Duration = Duration::from_secs(2);

/// How often [`run_to_fabric_start`] reads the console: the resolution
/// of the world's time when it returns.
const CONSOLE_LOOK: Duration = Duration::from_micros(100);

/// What the firmware said on its console of its fabric start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricStart {
    /// Functions it enumerated.
    pub functions: u64,
    /// Instructions the start retired (`minstret`).
    pub instructions: u64,
    /// `mtime` ticks (soft core cycles) the start took.
    pub cycles: u64,
    /// Everything it printed up to and including that line.
    pub console: String,
}

/// Runs `world`, whose manager is the firmware, until the firmware says
/// on its console how its fabric start went (within [`START_DEADLINE`] of
/// its reset); `Err` with what it printed if the start failed or never
/// came.
pub fn run_to_fabric_start(world: &mut World) -> Result<FabricStart, String> {
    let mut console = String::new();
    let deadline = world.now() + START_DEADLINE;
    while world.now() < deadline {
        let next = world.now() + CONSOLE_LOOK;
        world.run_until(next);
        let printed = world
            .take_firmware_console()
            .ok_or("the world's manager is not the firmware")?;
        console.push_str(&String::from_utf8_lossy(&printed));
        // Whole lines only: the UART may be part way through one.
        if let Some(line) = console
            .split_inclusive('\n')
            .filter(|line| line.ends_with('\n'))
            .find(|line| line.starts_with("fabric: ") && line.contains(" enumerated in "))
        {
            let line = line.trim_end();
            // "fabric: N functions enumerated in I instructions, C cycles"
            let numbers: Vec<u64> = line
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|word| word.parse().ok())
                .collect();
            let &[functions, instructions, cycles] = numbers.as_slice() else {
                return Err(format!(
                    "the firmware's start line is not understood: {line}"
                ));
            };
            return Ok(FabricStart {
                functions,
                instructions,
                cycles,
                console,
            });
        }
        if console.contains("start failed") {
            return Err(format!("the firmware's fabric start failed: {console}"));
        }
    }
    Err(format!(
        "the firmware did not start the fabric within {START_DEADLINE:?}: {console}"
    ))
}
