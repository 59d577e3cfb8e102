//! `weft-sim firmware`: the firmware ELF on the ISS board
//! ([`crate::iss_board`]) with its management MAC bridged to a Linux TAP
//! interface ([`crate::tap`]), so the kernel's own tools (`ping`,
//! `weftctl`) reach the firmware's network stack as they would a board.
//!
//! Time on the board follows the wall clock while the firmware waits:
//! when it sleeps in `wfi`, the bridge waits for a frame from the TAP or
//! for the firmware's timer alarm, whichever comes first, and moves
//! `mtime` on by the time that passed at [`CPU_CLOCK_HZ`]. While the
//! firmware runs, `mtime` counts its steps, so a busy board's clock runs
//! at the ISS's speed, which may be below the stated clock.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::thread;
use std::time::{Duration, Instant};

use crate::iss_board::{Activity, IssBoard, CPU_CLOCK_HZ};
use crate::tap::Tap;

/// Steps the firmware runs before the bridge looks at the line again:
/// 1 ms of core time at [`CPU_CLOCK_HZ`].
pub const RUN_SLICE_STEPS: u64 = CPU_CLOCK_HZ / 1_000;

/// The longest the bridge waits for a frame while the firmware sleeps
/// before it looks at its stop flag.
pub const MAX_WAIT: Duration = Duration::from_millis(50);

/// Why the bridge stopped.
#[derive(Debug)]
pub enum BridgeError {
    /// Reading frames from the TAP interface failed.
    Receive(io::Error),
    /// Writing a frame to the TAP interface failed.
    Send(io::Error),
    /// Writing the firmware's console output failed.
    Console(io::Error),
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BridgeError::Receive(e) => write!(f, "reading a frame from the TAP interface: {e}"),
            BridgeError::Send(e) => write!(f, "sending a frame to the TAP interface: {e}"),
            BridgeError::Console(e) => write!(f, "writing the firmware's console: {e}"),
        }
    }
}

impl std::error::Error for BridgeError {}

/// Runs `board` with its MAC bridged to `tap` until `stop` is set,
/// copying the firmware's console output to `console`.
pub fn run_on_tap(
    board: &mut IssBoard,
    tap: &Tap,
    console: &mut impl Write,
    stop: &AtomicBool,
) -> Result<(), BridgeError> {
    let mut reader = tap.reader().map_err(BridgeError::Receive)?;
    let (frames, incoming) = mpsc::channel();
    // The reader blocks in read(2); it ends when the process does, or when
    // the bridge has gone and its next frame has nowhere to go.
    thread::spawn(move || loop {
        let frame = reader.next_frame();
        let failed = frame.is_err();
        if frames.send(frame).is_err() || failed {
            return;
        }
    });
    while !stop.load(Ordering::Relaxed) {
        let activity = board.run(RUN_SLICE_STEPS);
        forward(board, tap, console)?;
        match activity {
            Activity::Running => deliver_waiting(board, &incoming)?,
            Activity::Waiting => {
                let alarm = IssBoard::duration_of(board.ticks_to_alarm());
                let started = Instant::now();
                let next = incoming.recv_timeout(alarm.min(MAX_WAIT));
                board.advance(started.elapsed());
                match next {
                    Ok(frame) => {
                        board.mac().receive(&frame.map_err(BridgeError::Receive)?);
                        deliver_waiting(board, &incoming)?;
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(BridgeError::Receive(reader_gone()));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Hands every frame already read from the TAP to the MAC.
fn deliver_waiting(
    board: &IssBoard,
    incoming: &Receiver<io::Result<Vec<u8>>>,
) -> Result<(), BridgeError> {
    loop {
        match incoming.try_recv() {
            Ok(frame) => {
                // A frame the MAC drops (ring full, not for it) is lost on
                // the line too, as on a board.
                board.mac().receive(&frame.map_err(BridgeError::Receive)?);
            }
            Err(TryRecvError::Empty) => return Ok(()),
            Err(TryRecvError::Disconnected) => return Err(BridgeError::Receive(reader_gone())),
        }
    }
}

/// Sends the frames the firmware transmitted and prints what it wrote on its console.
fn forward(board: &IssBoard, tap: &Tap, console: &mut impl Write) -> Result<(), BridgeError> {
    for frame in board.mac().take_transmitted() {
        tap.send(&frame).map_err(BridgeError::Send)?;
    }
    let printed = board.console().take_transmitted();
    if !printed.is_empty() {
        console.write_all(&printed).map_err(BridgeError::Console)?;
        console.flush().map_err(BridgeError::Console)?;
    }
    Ok(())
}

fn reader_gone() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the TAP reader stopped")
}
