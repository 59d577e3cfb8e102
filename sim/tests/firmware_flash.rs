//! The firmware ELF on the ISS board keeps its management key and replay
//! high-water mark in the configuration flash: a board restarted with the
//! same flash contents authenticates with the key typed before the
//! restart, and refuses a request captured before it as a replay
//! (weft-proto's `auth` module: a verifier resumes from a mark in flash).
//! A firmware image sent to it lands in the image slot it does not run
//! from, and a commit makes the next start run it on trial and check it in;
//! an upload cut by a restart goes on from its last checkpoint.

mod firmware_support;

use firmware_support::*;
use std::time::Duration;

use sha2::{Digest as _, Sha256};
use weft_fabric::firmware_update::CHECKPOINT_BYTES;
use weft_iss::soc::NorFlash;
use weft_proto::{
    decode_response, encode_request, Digest, Error, FirmwareStatus, Header, ImageSlot, Request,
    Response, SwitchId, UpdateState, MANAGEMENT_UDP_PORT, MAX_CHUNK, MAX_DATAGRAM,
};
use weft_sim::iss_board::IssBoard;

const CLIENT_PORT: u16 = 40_001;

/// The firmware's mark reserve (its `keystore` module): a minute of a
/// client's microsecond clock above the counter that moved the mark.
const MARK_RESERVE: u64 = 60_000_000;

fn datagram(id: u32, counter: u64, request: &Request) -> (Header, Vec<u8>) {
    datagram_with(id, counter, request, &[])
}

/// A request with `trailing` bulk bytes after it (a firmware chunk's).
fn datagram_with(id: u32, counter: u64, request: &Request, trailing: &[u8]) -> (Header, Vec<u8>) {
    let header = Header::request(id, SwitchId(FIRMWARE_SWITCH), counter);
    let mut bytes = [0u8; MAX_DATAGRAM];
    let len = encode_request(&header, request, trailing, &test_key(), &mut bytes).expect("fits");
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

/// A client of one board, counting its requests.
struct Client {
    board: IssBoard,
    counter: u64,
}

impl Client {
    fn ask(&mut self, request: &Request, trailing: &[u8]) -> Response {
        self.counter += 1;
        let (header, bytes) = datagram_with(self.counter as u32, self.counter, request, trailing);
        answer(&mut self.board, &header, &bytes)
    }
}

/// Commits the verified image in two phases, as a client does.
fn commit(client: &mut Client) {
    let Response::CommitPrepared { token } = client.ask(&Request::FirmwarePrepareCommit, &[])
    else {
        panic!("expected a token");
    };
    assert_eq!(
        client.ask(&Request::FirmwareCommit { token }, &[]),
        Response::Done
    );
}

fn status(client: &mut Client) -> FirmwareStatus {
    match client.ask(&Request::FirmwareStatus, &[]) {
        Response::FirmwareStatus(status) => status,
        other => panic!("expected a status, got {other:?}"),
    }
}

/// Where the firmware's flash layout (its `flash` module) puts image slot B
/// and the boot record.
const IMAGE_B_START: usize = 0x20_0000;
const BOOT_RECORD_START: usize = 0x0F_E000;

#[test]
fn an_image_lands_in_the_slot_not_running_and_boots_on_trial_once_committed_or_back_if_it_never_checks_in(
) {
    let Some(firmware) = firmware_image() else {
        return;
    };
    let (mut board, printed) = booted(&firmware, &[&format!("key {TEST_KEY_HEX}")]);
    assert!(printed.contains("firmware: slot A\r\n"), "{printed}");
    exchange(&mut board, &arp_request(FIRMWARE_IP));
    let mut client = Client { board, counter: 0 };

    let image: Vec<u8> = (0..2 * MAX_CHUNK + 100).map(|i| (i % 251) as u8).collect();
    let prepare = Request::FirmwarePrepare {
        size: image.len() as u32,
        digest: Digest(Sha256::digest(&image).into()),
    };
    assert_eq!(client.ask(&prepare, &[]), Response::Done);
    // A chunk ahead of the transfer is refused, naming where it stands.
    assert_eq!(
        client.ask(
            &Request::FirmwareChunk {
                offset: MAX_CHUNK as u32
            },
            &image[MAX_CHUNK..2 * MAX_CHUNK]
        ),
        Response::Error(Error::BadChunk { resume_at: 0 })
    );
    send_chunks(&mut client, &image, 0, image.len());
    assert_eq!(
        status(&mut client),
        FirmwareStatus {
            state: UpdateState::Verified,
            size: image.len() as u32,
            received: image.len() as u32,
            running: ImageSlot::A,
            next_boot: ImageSlot::A,
        }
    );
    commit(&mut client);
    assert_eq!(status(&mut client).next_boot, ImageSlot::B);
    let board = client.board;
    let flash = board.flash().contents();
    assert_eq!(
        &flash[IMAGE_B_START..IMAGE_B_START + image.len()],
        &image[..]
    );
    assert_eq!(&flash[BOOT_RECORD_START..BOOT_RECORD_START + 4], b"WFTF");

    // The next start runs slot B on trial, and it checks in once it is
    // up: its fabric's start (100 ms after reset) is over.
    let (mut board, printed) = booted_with_flash(&firmware, power_cycled(&board), &[]);
    assert!(printed.contains("firmware: slot B on trial"), "{printed}");
    assert!(!printed.contains("checked in"), "{printed}");
    // Restarted before it checked in (hung, the watchdog fired): slot A again.
    let (_, printed) = booted_with_flash(&firmware, power_cycled(&board), &[]);
    assert!(
        printed.contains("firmware: slot A again: the trial never checked in"),
        "{printed}"
    );
    board.advance(Duration::from_millis(150));
    exchange(&mut board, &arp_request(FIRMWARE_IP));
    let printed = String::from_utf8_lossy(&board.console().take_transmitted()).into_owned();
    assert!(printed.contains("firmware: slot B checked in"), "{printed}");
    let (_, printed) = booted_with_flash(&firmware, power_cycled(&board), &[]);
    assert!(printed.contains("firmware: slot B\r\n"), "{printed}");
}

/// `weftctl firmware update`'s requests on a board that starts in its
/// boot loader: a new board runs the image its bitstream carries (no
/// slot holds one), the image sent lands in slot B, and after the commit
/// and a restart the loader runs it; it never checks in, so the restart
/// after that goes back.
#[test]
fn an_image_sent_and_committed_runs_after_a_restart_through_the_boot_loader() {
    let (Some(boot), Some(firmware)) = (boot_loader_image(), firmware_image()) else {
        return;
    };
    let key = format!("key {TEST_KEY_HEX}");
    let (mut board, printed) = booted_by_loader(&boot, &firmware, NorFlash::reference(), &[&key]);
    assert!(
        printed.starts_with(
            "boot: slot A: no image\r\nboot: slot B: no image\r\nboot: the bitstream's image\r\n"
        ),
        "{printed}"
    );
    assert!(
        printed.contains("firmware: the bitstream's image: neither slot holds a valid one"),
        "{printed}"
    );
    exchange(&mut board, &arp_request(FIRMWARE_IP));
    let mut client = Client { board, counter: 0 };

    let image = test_image(b'N');
    let prepare = Request::FirmwarePrepare {
        size: image.len() as u32,
        digest: Digest(Sha256::digest(&image).into()),
    };
    assert_eq!(client.ask(&prepare, &[]), Response::Done);
    send_chunks(&mut client, &image, 0, image.len());
    commit(&mut client);
    assert_eq!(
        (status(&mut client).running, status(&mut client).next_boot),
        (ImageSlot::A, ImageSlot::B)
    );

    let (board, printed) = booted_by_loader(&boot, &firmware, power_cycled(&client.board), &[]);
    assert_eq!(printed, "boot: slot B\r\nimage N in slot B\r\n");
    let (_, printed) = booted_by_loader(&boot, &firmware, power_cycled(&board), &[]);
    assert!(
        printed.starts_with("boot: slot A: no image\r\nboot: the bitstream's image\r\n"),
        "{printed}"
    );
}

/// Sends `image`'s chunks from `from` up to `to`, each accepted.
fn send_chunks(client: &mut Client, image: &[u8], from: usize, to: usize) {
    let mut start = from;
    while start < to {
        let end = (start + MAX_CHUNK).min(to);
        let chunk = Request::FirmwareChunk {
            offset: start as u32,
        };
        assert_eq!(
            client.ask(&chunk, &image[start..end]),
            Response::ChunkAccepted {
                next_offset: end as u32
            }
        );
        start = end;
    }
}

#[test]
fn an_upload_cut_by_a_restart_resumes_from_its_checkpoint_and_commits() {
    let Some(firmware) = firmware_image() else {
        return;
    };
    let (mut board, _) = booted(&firmware, &[&format!("key {TEST_KEY_HEX}")]);
    exchange(&mut board, &arp_request(FIRMWARE_IP));
    let mut client = Client { board, counter: 0 };
    let checkpoint = CHECKPOINT_BYTES as usize;
    let image: Vec<u8> = (0..checkpoint + 2 * MAX_CHUNK)
        .map(|i| (i % 253) as u8)
        .collect();
    let prepare = Request::FirmwarePrepare {
        size: image.len() as u32,
        digest: Digest(Sha256::digest(&image).into()),
    };
    assert_eq!(client.ask(&prepare, &[]), Response::Done);
    send_chunks(&mut client, &image, 0, checkpoint + MAX_CHUNK);

    // The switch restarts; the client comes back with newer counters.
    let (mut board, printed) = booted_with_flash(&firmware, power_cycled(&client.board), &[]);
    assert!(printed.contains("firmware: slot A\r\n"), "{printed}");
    exchange(&mut board, &arp_request(FIRMWARE_IP));
    let mut client = Client {
        board,
        counter: 10 * MARK_RESERVE,
    };
    assert_eq!(
        status(&mut client),
        FirmwareStatus {
            state: UpdateState::Receiving,
            size: image.len() as u32,
            received: CHECKPOINT_BYTES,
            running: ImageSlot::A,
            next_boot: ImageSlot::A,
        }
    );
    assert_eq!(client.ask(&prepare, &[]), Response::Done, "resumed");
    assert_eq!(
        client.ask(&Request::FirmwareChunk { offset: 0 }, &image[..MAX_CHUNK]),
        Response::Error(Error::BadChunk {
            resume_at: CHECKPOINT_BYTES
        })
    );
    send_chunks(&mut client, &image, checkpoint, image.len());
    assert_eq!(status(&mut client).state, UpdateState::Verified);
    commit(&mut client);
    assert_eq!(status(&mut client).next_boot, ImageSlot::B);
    let flash = client.board.flash().contents();
    assert_eq!(
        &flash[IMAGE_B_START..IMAGE_B_START + image.len()],
        &image[..]
    );
}

#[test]
fn host_ports_set_on_the_console_are_stored_and_presented_from_the_next_start() {
    let Some(image) = firmware_image() else {
        return;
    };
    let (board, printed) = booted(
        &image,
        &[
            &format!("key {TEST_KEY_HEX}"),
            "hosts",
            "host 3 2",
            "host 9 2",
            "host 3 0",
            "host 0000000000ab:1 2",
            "host remove 5",
            "host 3",
        ],
    );
    let own = format!("switch {FIRMWARE_SWITCH:012x}");
    // The built-in host port, then the one added with the next free index.
    for line in [
        "hosts: 1 host port(s)".to_owned(),
        format!("host 0: {own} port 0, 4 slots"),
        "hosts: 2 host port(s)".to_owned(),
        format!("host 1: {own} port 3, 2 slots"),
        // Refused, each leaving the stored ports as they were.
        "ports 0 to 7, not 9; nothing changed".to_owned(),
        "1 to 8 slots, not 0; nothing changed".to_owned(),
        "the fabric's last start found no switch 0000000000ab; nothing changed".to_owned(),
        "port 5 is no host port; nothing changed".to_owned(),
        "host: expected `host [<switch>:]<port> <slots>".to_owned(),
    ] {
        assert!(printed.contains(&line), "{line:?} in {printed}");
    }
    assert_eq!(printed.matches("hosts: 2 host port(s)").count(), 1);

    // From the next start the manager presents both virtual switches.
    let (mut board, printed) = booted_with_flash(&image, power_cycled(&board), &["hosts"]);
    assert!(printed.contains("hosts: 2 host port(s)"), "{printed}");
    pass_time(&mut board, Duration::from_millis(150));
    exchange(&mut board, &arp_request(FIRMWARE_IP));
    // Past the replay mark the key's record was stored with.
    let mut client = Client {
        board,
        counter: MARK_RESERVE,
    };
    for (host, slots) in [(0, 4), (1, 2)] {
        match client.ask(
            &Request::VirtualSwitch {
                host: weft_proto::HostIndex(host),
            },
            &[],
        ) {
            Response::VirtualSwitch(info) => assert_eq!(info.slots.len(), slots, "host {host}"),
            other => panic!("host {host}: {other:?}"),
        }
    }
}

#[test]
fn a_board_without_a_flash_runs_on_built_in_settings_and_refuses_to_store_at_once() {
    // A board whose flash no user logic reaches holds the data line low
    // (weft-boards' `access = "absent"`): the part reads all 0, so Write
    // Enable never latches and every store fails at its first step. Each
    // answer comes within the console's 25 ms, where a part that read busy
    // would be waited on for a second per write.
    let Some(image) = firmware_image() else {
        return;
    };
    let (mut board, printed) = booted_with_flash(&image, NorFlash::absent(), &[]);
    assert!(printed.contains("ready"), "the firmware starts: {printed}");
    let said = type_line(&mut board, &format!("key {TEST_KEY_HEX}"));
    assert!(said.contains("key: set, but not stored in flash"), "{said}");
    // The key typed holds until the next start: a request is answered.
    exchange(&mut board, &arp_request(FIRMWARE_IP));
    let (ping, bytes) = datagram(1, 1_000, &Request::Ping);
    assert_eq!(answer(&mut board, &ping, &bytes), Response::Pong);
    let said = type_line(&mut board, "host 3 2");
    assert!(said.contains("nothing changed"), "{said}");
    let said = type_line(&mut board, "hosts");
    assert!(
        said.contains("hosts: 1 host port(s)"),
        "the built-in host port: {said}"
    );
    // An address is used at once, and said not to be kept.
    let said = type_line(&mut board, "ip 10.0.0.2/24");
    assert!(said.contains("ip: not stored in flash"), "{said}");
}
