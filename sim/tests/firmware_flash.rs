//! The firmware ELF on the ISS board keeps its management key and replay
//! high-water mark in the configuration flash: a board restarted with the
//! same flash contents authenticates with the key typed before the
//! restart, and refuses a request captured before it as a replay
//! (weft-proto's `auth` module: a verifier resumes from a mark in flash).

mod firmware_support;

use firmware_support::*;
use weft_iss::soc::{NorFlash, Timing};
use weft_proto::{
    decode_response, encode_request, Error, Header, Key, Request, Response, SwitchId,
    MANAGEMENT_UDP_PORT, MAX_DATAGRAM,
};
use weft_sim::iss_board::IssBoard;

const CLIENT_PORT: u16 = 40_001;

/// The firmware's mark reserve (its `keystore` module): a minute of a
/// client's microsecond clock above the counter that moved the mark.
const MARK_RESERVE: u64 = 60_000_000;

fn test_key() -> Key {
    Key::parse_hex(TEST_KEY_HEX).expect("a valid key")
}

fn datagram(id: u32, counter: u64, request: &Request) -> (Header, Vec<u8>) {
    let header = Header::request(id, SwitchId(FIRMWARE_SWITCH), counter);
    let mut bytes = [0u8; MAX_DATAGRAM];
    let len = encode_request(&header, request, &[], &test_key(), &mut bytes).expect("fits");
    (header, bytes[..len].to_vec())
}

/// The answer to `datagram`, authenticated under the test key.
fn answer(board: &mut IssBoard, header: &Header, datagram: &[u8]) -> Response {
    let sent = exchange(board, &udp(CLIENT_PORT, MANAGEMENT_UDP_PORT, datagram));
    assert_eq!(sent.len(), 1, "one answer");
    let (_, _, _, data) = parse_udp(&sent[0]);
    decode_response(&data, &test_key(), header)
        .expect("an answer authenticated under the test key, to this request")
        .response
}

/// The board's flash as a board powered up again finds it: the array
/// only, nothing in progress.
fn power_cycled(board: &IssBoard) -> NorFlash {
    let part = board.flash().part();
    NorFlash::with_contents(part.geometry(), Timing::TYPICAL, part.contents())
}

#[test]
fn a_restart_keeps_the_key_and_refuses_requests_from_before_it() {
    let Some(image) = firmware_image() else {
        return;
    };
    let (mut board, printed) = booted(&image, &[&format!("key {TEST_KEY_HEX}")]);
    assert!(
        printed.contains("key: set and stored in flash"),
        "{printed}"
    );
    assert!(
        board.flash().contents()[..4] == *b"WFTK",
        "the key record is at the start of the flash"
    );
    exchange(&mut board, &arp_request(FIRMWARE_IP));

    // One request below the stored mark, one above it (which moves it).
    let (early, early_bytes) = datagram(1, 1_000, &Request::Ping);
    assert_eq!(answer(&mut board, &early, &early_bytes), Response::Pong);
    let (late, late_bytes) = datagram(2, 2 * MARK_RESERVE, &Request::Identify);
    assert!(matches!(
        answer(&mut board, &late, &late_bytes),
        Response::Identity(_)
    ));

    let (mut board, printed) = booted_with_flash(&image, power_cycled(&board), &[]);
    assert!(printed.contains("key from flash"), "{printed}");
    exchange(&mut board, &arp_request(FIRMWARE_IP));
    // Both captured datagrams, byte for byte, are refused, though the reply
    // cache that would have recognised them went with the restart: their
    // counters are below the stored mark (a minute above the late one),
    // which the refusal names to the key holder, and the restarted switch
    // has run nothing.
    for (header, bytes) in [(&early, &early_bytes), (&late, &late_bytes)] {
        assert_eq!(
            answer(&mut board, header, bytes),
            Response::Error(Error::CounterTooOld {
                accepted_above: 3 * MARK_RESERVE,
                may_have_run: false
            }),
            "counter {}",
            header.counter
        );
    }
    // A new request past the mark is authenticated with the stored key.
    let (next, next_bytes) = datagram(3, 3 * MARK_RESERVE + 1, &Request::Ping);
    assert_eq!(answer(&mut board, &next, &next_bytes), Response::Pong);
}

#[test]
fn the_insecure_key_is_not_kept_across_a_restart() {
    let Some(image) = firmware_image() else {
        return;
    };
    let (board, printed) = booted(&image, &["insecure"]);
    assert!(printed.contains("until the next restart"), "{printed}");
    let (_, printed) = booted_with_flash(&image, power_cycled(&board), &[]);
    assert!(printed.contains("no key yet"), "{printed}");
}
