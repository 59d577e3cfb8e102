//! The firmware on the instruction-set simulator as the management CPU of
//! a simulated fabric: an [`IssBoard`] whose CSR window
//! (`weft_iss::data_plane`) is switch 0 of a [`World`], in place of the
//! native fabric manager.
//!
//! The board and the world take turns in slices of simulated time, the
//! board's `mtime` at the reference soft core clock
//! ([`CPU_CLOCK_HZ`](crate::iss_board::CPU_CLOCK_HZ)) being the world's
//! clock. Switch 0's data plane belongs to the world between slices and is
//! lent to the board's CSR window while the firmware runs, so the tables
//! the firmware writes are the world's.
//!
//! What the firmware sends through the injector leaves switch 0 as the
//! native manager's requests and completions do:
//!
//! - a configuration request goes the native manager's way
//!   ([`crate::manager_config`]): on the port's link, below it, or routed
//!   by bus through the fabric links, each hop through the switch and link
//!   models; its completion reaches switch 0's mailbox when the links say
//!   it is back, so the firmware waits for it as it would on a board;
//! - anything else (a host's completion, an MSI) goes onto the port's link
//!   in the world's event queue.
//!
//! What switch 0 routes to its CPU (a host's configuration request, an
//! error message) waits in its mailbox for the firmware, and wakes it
//! through the data plane's interrupt.
//!
//! A slice is at most [`SLICE_STEPS`] steps, which bounds how late the
//! world sees a TLP the firmware sent; while the firmware sleeps in `wfi`,
//! time jumps to the earliest of its timer alarm, the world's next event
//! and the next completion due back.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use weft_iss::data_plane::{DataPlaneWindow, Links};
use weft_model::csr_window::CsrWindow;
use weft_model::{Destination, Packet, PortIndex, Switch};

use crate::iss_board::{Activity, BoardError, IssBoard};
use crate::world::World;

/// Steps the firmware runs before the world looks at what it sent: 1 µs
/// at the reference soft core clock, about a link's round trip.
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

/// A [`World`] whose switch 0 is managed by the firmware on an [`IssBoard`].
pub struct IssManagedWorld {
    world: World,
    board: IssBoard,
    /// The configuration requests the firmware sent in the current slice,
    /// each with the port it left by.
    sent: Rc<RefCell<Vec<(PortIndex, Packet)>>>,
    /// Completions on their way back, in no particular order.
    returning: Vec<Returning>,
}

impl IssManagedWorld {
    /// `world` with the firmware `elf` at reset as switch 0's management
    /// CPU; the world's native manager has no part in it from now on.
    /// Switch 0's ID must be the firmware's own (its identity VSEC, which
    /// the firmware reads back through a fabric loop, carries it).
    pub fn new(mut world: World, elf: &[u8]) -> Result<Self, BoardError> {
        let sent = Rc::new(RefCell::new(Vec::new()));
        let collect = Rc::clone(&sent);
        // The world carries them after the slice: see `exchange`.
        let links: Links = Box::new(move |port, packet| {
            collect.borrow_mut().push((port, packet.clone()));
            None
        });
        let window =
            DataPlaneWindow::new(CsrWindow::new(Switch::new(world.switch().ports())), links);
        world.hand_cpu_to_embedder();
        let board = IssBoard::with_data_plane(elf, window)?;
        Ok(IssManagedWorld {
            world,
            board,
            sent,
            returning: Vec::new(),
        })
    }

    /// The world, its switch 0 with the tables the firmware wrote.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The board: its console, its management MAC, its counters.
    pub fn board(&self) -> &IssBoard {
        &self.board
    }

    /// Simulated time since reset: the board's `mtime` at its clock.
    pub fn now(&self) -> Duration {
        IssBoard::duration_of(self.board.mtime())
    }

    /// Runs the firmware and the world until `deadline`.
    pub fn run_until(&mut self, deadline: Duration) {
        while self.now() < deadline {
            let until = self.next_return().map_or(deadline, |at| at.min(deadline));
            let steps = self.ticks_until(until).clamp(1, SLICE_STEPS);
            if self.slice(steps) == Activity::Waiting {
                // Asleep: nothing happens on the board before its alarm,
                // the world's next event or a completion's return.
                let alarm = self.now() + IssBoard::duration_of(self.board.ticks_to_alarm());
                let wake = [Some(alarm), self.world.next_event_at(), Some(until)]
                    .into_iter()
                    .flatten()
                    .min()
                    .unwrap_or(deadline);
                self.board.advance_ticks(self.ticks_until(wake));
                self.exchange();
            }
        }
    }

    /// `mtime` ticks from now until `at`, rounded up (0 if it is past).
    fn ticks_until(&self, at: Duration) -> u64 {
        let tick_ns = 1_000_000_000 / crate::iss_board::CPU_CLOCK_HZ;
        let left = at.saturating_sub(self.now()).as_nanos() as u64;
        left.div_ceil(tick_ns)
    }

    /// When the next completion is back at the CPU.
    fn next_return(&self) -> Option<Duration> {
        self.returning.iter().map(|r| r.at).min()
    }

    /// Runs the firmware for at most `steps` steps with switch 0's data
    /// plane lent to its CSR window, then lets the world catch up.
    fn slice(&mut self, steps: u64) -> Activity {
        let window = self.board.data_plane().clone();
        self.world.swap_manager_switch(window.window().switch_mut());
        let activity = self.board.run(steps);
        self.world.swap_manager_switch(window.window().switch_mut());
        self.exchange();
        activity
    }

    /// Sends into the world what the firmware sent, moves the world to
    /// the board's time, and puts into the mailbox what reached the CPU.
    fn exchange(&mut self) {
        let now = self.now();
        let window = self.board.data_plane().clone();
        for (port, packet) in std::mem::take(&mut *self.sent.borrow_mut()) {
            if let Some((reply, at)) = self.world.carry_cpu_request(port, packet, now) {
                let bytes = reply
                    .to_bytes()
                    .expect("a function's completion is a well-formed TLP");
                self.returning.push(Returning { at, port, bytes });
            }
        }
        for delivery in window.window().take_injected() {
            if let Destination::Port(port) = delivery.to {
                self.world.send_from_port(port, delivery.packet, now);
            }
        }
        self.world.run_until(now);
        let mut window = window.window();
        for (port, packet) in self.world.take_for_cpu() {
            let bytes = packet
                .to_bytes()
                .expect("the switch delivers well-formed TLPs");
            window.queue_for_cpu(port, &bytes);
        }
        let (back, on_the_way) = std::mem::take(&mut self.returning)
            .into_iter()
            .partition::<Vec<_>, _>(|r| r.at <= now);
        self.returning = on_the_way;
        let mut back = back;
        back.sort_by_key(|r| r.at);
        for returned in back {
            window.queue_for_cpu(returned.port, &returned.bytes);
        }
    }
}
