//! The firmware's console at its line rate: printing never holds up the
//! main loop, and nothing printed is lost.
//!
//! The console's UART sends 115 200 baud, about 87 µs a byte, through a
//! FIFO of 16 bytes (`weft_regs::soc::uart`). The ISS's UART is paced here
//! as the RTL's is ([`booted_at_line_rate`]). The firmware queues what it
//! prints and its main loop moves it to the FIFO as the FIFO empties, so a
//! long answer on the console (`help`, about 1 100 bytes, 97 ms on the line)
//! still leaves the loop free to answer a management request at once. Text
//! beyond the queue waits for the line rather than being dropped, and a
//! requested reset waits until the queue has left. On each board, what
//! left on the line is compared with what the same firmware prints on a
//! UART that never makes it wait.

mod firmware_support;

use std::time::Duration;

use firmware_support::*;
use weft_proto::{Request, ResetScope, Response};
use weft_sim::iss_board::{IssBoard, CPU_CLOCK_HZ};

/// The management client's UDP port.
const CLIENT_PORT: u16 = 40_000;

/// Long enough for all a test prints to leave on the line: twelve helps.
const DRAIN: Duration = Duration::from_millis(1500);

/// What the firmware prints for `help`, on a UART that is always ready.
fn help_text(image: &[u8]) -> String {
    let (mut board, _) = booted(image, &[]);
    type_line(&mut board, "help")
}

/// Lets everything queued leave on the line; what left.
fn drained(board: &mut IssBoard) -> String {
    pass_time(board, DRAIN);
    String::from_utf8_lossy(&board.console().take_transmitted()).into_owned()
}

#[test]
fn the_start_says_the_same_at_the_line_rate_as_on_a_uart_that_never_waits() {
    let Some(image) = firmware_image() else {
        return;
    };
    // Through the fabric's start, 100 ms after reset, and its report.
    let (mut board, mut instant) = booted(&image, &[]);
    instant.push_str(&drained(&mut board));
    let (mut board, mut paced) = booted_at_line_rate(&image, &[]);
    paced.push_str(&drained(&mut board));
    assert!(instant.contains("ready"), "{instant}");
    assert!(instant.contains("enumerated"), "{instant}");
    assert_eq!(paced, instant);
}

#[test]
fn a_management_request_is_answered_while_the_console_prints_a_long_answer() {
    let Some(image) = firmware_image() else {
        return;
    };
    let help = help_text(&image);
    assert!(help.len() > 800, "help is long: {help}");
    let (mut board, _) = booted_at_line_rate(&image, &[&format!("key {TEST_KEY_HEX}")]);
    drained(&mut board);
    exchange(&mut board, &arp_request(FIRMWARE_IP));

    // The line and the request arrive together: the main loop reads the
    // line first and prints the answer, 1 100 bytes for the line, then
    // answers the request.
    board.console().receive(b"help\r");
    let asked = board.ticks();
    let answer = ask_firmware(&mut board, CLIENT_PORT, 1, &Request::Ping, &test_key());
    let took = board.ticks() - asked;
    assert_eq!(answer, Response::Pong);
    let mut printed = String::from_utf8_lossy(&board.console().take_transmitted()).into_owned();
    let line_time = help.len() as u64 * CONSOLE_TICKS_PER_BYTE;
    eprintln!(
        "a Ping that arrived with `help` ({} bytes, {:?} on the line): answered in {:?}, \
         {} bytes of help sent by then",
        help.len(),
        IssBoard::duration_of(line_time),
        IssBoard::duration_of(took),
        printed.len()
    );
    assert!(
        took < line_time / 20,
        "the Ping waited {:?} for the console",
        IssBoard::duration_of(took)
    );
    assert!(
        printed.len() < help.len() / 10 && help.starts_with(&printed),
        "answered while help was on its way out: {printed:?}"
    );

    printed.push_str(&drained(&mut board));
    assert_eq!(printed, help, "all of help left on the line, in order");
}

#[test]
fn text_beyond_the_queue_waits_for_the_line_and_none_is_lost() {
    let Some(image) = firmware_image() else {
        return;
    };
    // Twelve helps typed at once are answered in one pass of the main
    // loop: more than the firmware's queue (12 KiB) holds.
    const TIMES: usize = 12;
    let help = help_text(&image);
    assert!(help.len() * TIMES > 12 * 1024);
    let (mut board, _) = booted_at_line_rate(&image, &[]);
    drained(&mut board);
    board.console().receive("help\r".repeat(TIMES).as_bytes());
    assert_eq!(drained(&mut board), help.repeat(TIMES));
}

#[test]
fn a_requested_reset_waits_until_the_console_has_sent_what_it_queued() {
    let Some(image) = firmware_image() else {
        return;
    };
    let help = help_text(&image);
    let key = test_key();
    let (mut board, _) = booted_at_line_rate(&image, &[&format!("key {TEST_KEY_HEX}")]);
    drained(&mut board);
    exchange(&mut board, &arp_request(FIRMWARE_IP));
    let Response::ResetArmed { token, .. } = ask_firmware(
        &mut board,
        CLIENT_PORT,
        1,
        &Request::ResetArm {
            scope: ResetScope::Firmware,
        },
        &key,
    ) else {
        panic!("an armed reset");
    };
    // `help` goes into the queue, 97 ms on the line, and the reset is
    // triggered at once.
    board.console().receive(b"help\r");
    let asked = board.ticks();
    let answer = ask_firmware(
        &mut board,
        CLIENT_PORT,
        2,
        &Request::ResetTrigger { token },
        &key,
    );
    assert_eq!(answer, Response::Done);
    run_while(&mut board, 2 * CPU_CLOCK_HZ, |b| b.watchdog_resets() == 0);
    assert_eq!(
        board.watchdog_resets(),
        1,
        "the watchdog reset the SoC within 2 s"
    );
    let waited = board.ticks() - asked;
    let line_time = help.len() as u64 * CONSOLE_TICKS_PER_BYTE;
    eprintln!(
        "a reset triggered with help ({:?} on the line) queued: the watchdog fired after {:?}",
        IssBoard::duration_of(line_time),
        IssBoard::duration_of(waited)
    );
    // Everything help printed left before the restarted firmware's banner.
    run_while(&mut board, CPU_CLOCK_HZ / 2, |_| true);
    let printed = String::from_utf8_lossy(&board.console().take_transmitted()).into_owned();
    assert!(
        printed.starts_with(&help),
        "help whole before the restart: {printed:?}"
    );
    assert!(printed.len() > help.len(), "the firmware started again");
}
