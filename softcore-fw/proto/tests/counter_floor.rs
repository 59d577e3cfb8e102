//! The counter floor: a request that carries the switch's MAC but a counter
//! the switch no longer accepts learns the counter to exceed and whether an
//! identical request may have run ([`Error::CounterTooOld`]); a version-1
//! client gets [`Error::Replayed`], and a sender without the key learns
//! nothing but [`Error::Unauthenticated`].

mod support;

use hmac::{Hmac, Mac};
use proptest::prelude::*;
use sha2::Sha256;
use support::{bind, key, request_datagram, KEY_BYTES, SWITCH};
use weft_proto::*;

/// A switch restarted from a mark `floor` kept in flash, with a reply cache
/// of 4, counting how often it runs a request.
struct Restarted {
    responder: Responder<4>,
    executed: u32,
}

impl Restarted {
    fn new(floor: u64) -> Restarted {
        Restarted {
            responder: Responder::new(Verifier::resume(SWITCH, key(), floor)),
            executed: 0,
        }
    }

    /// The answer to `datagram`, or `None` if it is dropped.
    fn handle(&mut self, datagram: &[u8]) -> Option<Vec<u8>> {
        let mut out = [0u8; MAX_DATAGRAM];
        let executed = &mut self.executed;
        let len = self.responder.answer(datagram, &mut out, |_, _| {
            *executed += 1;
            Response::Done
        });
        (len > 0).then(|| out[..len].to_vec())
    }
}

/// Whether `answer`'s tag is HMAC-SHA-256 under `key` over bytes 0..32 and
/// 64.., computed here with RustCrypto rather than through the crate.
fn signed_with(answer: &[u8], key: &[u8; KEY_LEN]) -> bool {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("any key length works for HMAC");
    mac.update(&answer[..32]);
    mac.update(&answer[64..]);
    mac.verify_slice(&answer[32..64]).is_ok()
}

/// Postcard's encoding of `Response::Error(Error::Unauthenticated)`: the
/// Error variant (15) then Unauthenticated (0), as `tests/golden.rs` pins.
const UNAUTHENTICATED_BODY: [u8; 2] = [0x0f, 0x00];

/// Postcard's encoding of `Response::Error(Error::CounterTooOld {
/// accepted_above, may_have_run })`: variant 15, variant 39, the counter as
/// an unsigned LEB128 varint, then the flag as one byte.
fn counter_too_old_body(mut accepted_above: u64, may_have_run: bool) -> Vec<u8> {
    let mut body = vec![0x0f, 0x27];
    loop {
        let low = (accepted_above & 0x7f) as u8;
        accepted_above >>= 7;
        if accepted_above == 0 {
            body.push(low);
            body.push(u8::from(may_have_run));
            return body;
        }
        body.push(low | 0x80);
    }
}

fn too_old(accepted_above: u64, may_have_run: bool) -> Response {
    Response::Error(Error::CounterTooOld {
        accepted_above,
        may_have_run,
    })
}

#[test]
fn after_a_restart_an_old_counter_learns_the_floor_and_a_new_one_runs() {
    let floor = 1_700_000_060_000_000;
    let mut switch = Restarted::new(floor);
    let sent = Header::request(7, SWITCH, 1_700_000_001_000_000);
    let answer = switch
        .handle(&request_datagram(&sent, &bind(), &[]))
        .expect("answered");
    assert!(signed_with(&answer, &KEY_BYTES), "the refusal is authentic");
    assert_eq!(&answer[64..], &counter_too_old_body(floor, false)[..]);
    let reply = decode_response(&answer, &key(), &sent).expect("authentic");
    assert_eq!(reply.response, too_old(floor, false));
    assert_eq!(switch.executed, 0, "the refused request did not run");

    // The same request, sent as a new one above the floor, runs.
    let mut counter = ClientCounter::new();
    counter.raise_above(floor);
    let resent = Header::request(8, SWITCH, counter.next(1_700_000_001_000_001));
    assert_eq!(resent.counter, floor + 1);
    let answer = switch
        .handle(&request_datagram(&resent, &bind(), &[]))
        .expect("answered");
    let reply = decode_response(&answer, &key(), &resent).expect("authentic");
    assert_eq!(reply.response, Response::Done);
    assert_eq!(switch.executed, 1);
}

#[test]
fn a_version_1_request_is_refused_as_a_replay_since_it_cannot_read_the_floor() {
    let mut switch = Restarted::new(1_000);
    let sent = Header {
        version: 1,
        ..Header::request(1, SWITCH, 500)
    };
    let answer = switch
        .handle(&request_datagram(&sent, &Request::Ping, &[]))
        .expect("answered");
    assert_eq!(&answer[64..], &[0x0f, 0x01], "Error::Replayed");
    assert_eq!(switch.executed, 0);
}

#[test]
fn a_request_at_or_below_a_dropped_answer_may_have_run_and_one_above_did_not() {
    let mut switch = Restarted::new(100);
    let first = Header::request(1, SWITCH, 200);
    let first_datagram = request_datagram(&first, &bind(), &[]);
    switch.handle(&first_datagram).expect("answered");
    // Four newer requests push the first answer out of the cache.
    for i in 0..4u32 {
        let newer = Header::request(10 + i, SWITCH, 300 + u64::from(i));
        switch
            .handle(&request_datagram(&newer, &Request::Ping, &[]))
            .expect("answered");
    }
    assert_eq!(switch.executed, 5);
    let retry = switch.handle(&first_datagram).expect("answered");
    let reply = decode_response(&retry, &key(), &first).expect("authentic");
    assert_eq!(
        reply.response,
        too_old(303, true),
        "it ran, and its answer is gone"
    );
    // Counter 250 is below the last accepted (303) but above every dropped
    // answer (200): it never ran.
    let between = Header::request(20, SWITCH, 250);
    let answer = switch
        .handle(&request_datagram(&between, &Request::Ping, &[]))
        .expect("answered");
    let reply = decode_response(&answer, &key(), &between).expect("authentic");
    assert_eq!(reply.response, too_old(303, false));
    // Below the dropped answer, a request that never ran cannot be told
    // from one that did.
    let below = Header::request(21, SWITCH, 150);
    let answer = switch
        .handle(&request_datagram(&below, &Request::Ping, &[]))
        .expect("answered");
    let reply = decode_response(&answer, &key(), &below).expect("authentic");
    assert_eq!(reply.response, too_old(303, true));
    assert_eq!(switch.executed, 5, "no refused request ran");
}

#[test]
fn a_request_whose_answer_could_not_be_kept_may_have_run_on_retry() {
    let mut switch = Restarted::new(0);
    let sent = Header::request(1, SWITCH, 10);
    let datagram = request_datagram(&sent, &bind(), &[]);
    let executed = &mut switch.executed;
    let mut too_short = [0u8; HEADER_LEN];
    let len = switch.responder.answer(&datagram, &mut too_short, |_, _| {
        *executed += 1;
        Response::Done
    });
    assert_eq!(len, 0, "no room for the answer");
    assert_eq!(switch.executed, 1);
    let retry = switch.handle(&datagram).expect("answered");
    let reply = decode_response(&retry, &key(), &sent).expect("authentic");
    assert_eq!(reply.response, too_old(10, true));
    assert_eq!(switch.executed, 1, "the retry did not run it again");
}

proptest! {
    /// A verified request at or below the floor learns exactly the floor,
    /// under the switch's MAC, and does not run; one above it runs.
    #[test]
    fn an_authentic_request_learns_exactly_the_floor(
        floor in 1u64..=u64::MAX - 1,
        below in any::<u64>(),
        id in any::<u32>(),
    ) {
        let mut switch = Restarted::new(floor);
        let counter = below % (floor + 1);
        let sent = Header::request(id, SWITCH, counter);
        let answer = switch.handle(&request_datagram(&sent, &Request::Ping, &[])).expect("answered");
        prop_assert!(signed_with(&answer, &KEY_BYTES));
        prop_assert_eq!(&answer[64..], &counter_too_old_body(floor, false)[..]);
        prop_assert_eq!(switch.executed, 0);
        prop_assert_eq!(switch.responder.verifier().last_accepted(), floor);

        let above = Header::request(id.wrapping_add(1), SWITCH, floor + 1);
        let answer = switch.handle(&request_datagram(&above, &Request::Ping, &[])).expect("answered");
        let reply = decode_response(&answer, &key(), &above).expect("authentic");
        prop_assert_eq!(reply.response, Response::Done);
        prop_assert_eq!(switch.executed, 1);
    }

    /// Under another key, an old counter is refused as unauthenticated and
    /// nothing else: the floor is not revealed.
    #[test]
    fn a_request_under_another_key_never_learns_the_floor(
        floor in 1u64..,
        counter in any::<u64>(),
        other in prop::array::uniform32(any::<u8>()),
    ) {
        prop_assume!(other != KEY_BYTES);
        let mut switch = Restarted::new(floor);
        let sent = Header::request(1, SWITCH, counter);
        let mut out = [0u8; MAX_DATAGRAM];
        let len = encode_request(&sent, &Request::Ping, &[], &Key::from_bytes(other), &mut out)
            .expect("fits");
        let answer = switch.handle(&out[..len]).expect("answered");
        prop_assert!(signed_with(&answer, &KEY_BYTES));
        prop_assert_eq!(&answer[64..], &UNAUTHENTICATED_BODY[..]);
        prop_assert_eq!(switch.executed, 0);
    }

    /// An authentic datagram with an old counter, damaged anywhere, is
    /// dropped or refused as unauthenticated; it never learns the floor and
    /// never runs.
    #[test]
    fn a_damaged_request_never_learns_the_floor(
        at in any::<prop::sample::Index>(),
        flip in 1u8..,
        truncate in any::<bool>(),
    ) {
        let floor = 1_000_000;
        let mut switch = Restarted::new(floor);
        let sent = Header::request(3, SWITCH, floor / 2);
        let mut datagram = request_datagram(&sent, &bind(), &[]);
        let at = at.index(datagram.len());
        if truncate {
            datagram.truncate(at);
        } else {
            datagram[at] ^= flip;
        }
        if let Some(answer) = switch.handle(&datagram) {
            prop_assert!(signed_with(&answer, &KEY_BYTES));
            prop_assert_eq!(&answer[64..], &UNAUTHENTICATED_BODY[..]);
        }
        prop_assert_eq!(switch.executed, 0);
        prop_assert_eq!(switch.responder.verifier().last_accepted(), floor);
    }

    /// Arbitrary bytes never learn the floor.
    #[test]
    fn arbitrary_bytes_never_learn_the_floor(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut switch = Restarted::new(1_000_000);
        if let Some(answer) = switch.handle(&bytes) {
            prop_assert_eq!(&answer[64..], &UNAUTHENTICATED_BODY[..]);
        }
        prop_assert_eq!(switch.executed, 0);
    }
}

/// One step of a client population: a request with a new, higher counter;
/// a byte-identical retry of an earlier datagram; or a new request (new id)
/// with a counter below the newest, as from a client whose clock is behind.
#[derive(Clone, Debug)]
enum Step {
    Newer(u64),
    Retry(prop::sample::Index),
    Behind(u64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1u64..20).prop_map(Step::Newer),
        any::<prop::sample::Index>().prop_map(Step::Retry),
        (0u64..40).prop_map(Step::Behind),
    ]
}

proptest! {
    /// Against a model that remembers every datagram that ran: nothing runs
    /// twice, a refusal names the newest counter accepted, and a refusal
    /// that says `may_have_run: false` is only ever given to a datagram
    /// that never ran.
    #[test]
    fn a_request_told_it_did_not_run_never_ran(steps in prop::collection::vec(step(), 1..80)) {
        let mut switch = Restarted::new(0);
        let mut sent: Vec<(Header, Vec<u8>)> = Vec::new();
        let mut ran: Vec<Vec<u8>> = Vec::new();
        let mut newest = 0u64;
        let mut next_id = 0u32;
        for step in steps {
            let step = match step {
                Step::Retry(_) if sent.is_empty() => Step::Newer(1),
                step => step,
            };
            let (header, datagram) = match step {
                Step::Retry(pick) => sent[pick.index(sent.len())].clone(),
                Step::Newer(by) => new_ping(&mut next_id, newest + by),
                Step::Behind(by) => new_ping(&mut next_id, newest.saturating_sub(by)),
            };
            let before = switch.executed;
            let answer = switch.handle(&datagram).expect("answered");
            let response = decode_response(&answer, &key(), &header).expect("authentic").response;
            if switch.executed > before {
                prop_assert!(!ran.contains(&datagram), "a datagram ran twice");
                prop_assert!(header.counter > newest);
                newest = header.counter;
                ran.push(datagram.clone());
            } else if let Response::Error(Error::CounterTooOld { accepted_above, may_have_run }) = response {
                prop_assert_eq!(accepted_above, newest);
                prop_assert!(header.counter <= newest);
                if !may_have_run {
                    prop_assert!(!ran.contains(&datagram), "told it did not run, but it ran");
                }
            } else {
                // Not run, not refused: a retry answered from the cache.
                prop_assert!(ran.contains(&datagram), "{:?}", response);
            }
            sent.push((header, datagram));
        }
    }
}

/// A ping with the next request id and this counter.
fn new_ping(next_id: &mut u32, counter: u64) -> (Header, Vec<u8>) {
    *next_id += 1;
    let header = Header::request(*next_id, SWITCH, counter);
    (header, request_datagram(&header, &Request::Ping, &[]))
}
