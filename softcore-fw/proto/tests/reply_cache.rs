//! Retries: a byte-identical repeat of a recently answered request gets the
//! identical answer, is not executed again, and is not refused as a replay.

mod support;

use support::{bind, key, request_datagram, verifier, SWITCH};
use weft_proto::*;

/// A switch with a reply cache of `N` that counts how often it executes.
struct Server<const N: usize> {
    responder: Responder<N>,
    executed: u32,
}

impl<const N: usize> Server<N> {
    fn new() -> Self {
        Server {
            responder: Responder::new(verifier()),
            executed: 0,
        }
    }

    /// Handles one datagram as the firmware does and returns the answer's
    /// bytes, or `None` if the datagram is dropped.
    fn handle(&mut self, datagram: &[u8]) -> Option<std::vec::Vec<u8>> {
        let mut out = [0u8; MAX_DATAGRAM];
        let executed = &mut self.executed;
        let len = self.responder.answer(datagram, &mut out, |_, _| {
            *executed += 1;
            Response::InProgress {
                op: OperationId(*executed),
            }
        });
        (len > 0).then(|| out[..len].to_vec())
    }
}

fn response_of(answer: &[u8], sent: &Header) -> Response {
    decode_response(answer, &key(), sent)
        .expect("an authentic answer")
        .response
}

#[test]
fn a_retry_gets_the_identical_answer_without_running_again() {
    let mut server = Server::<4>::new();
    let sent = Header::request(1, SWITCH, 10);
    let datagram = request_datagram(&sent, &bind(), &[]);
    let first = server.handle(&datagram).expect("answered");
    let retry = server.handle(&datagram).expect("answered");
    let again = server.handle(&datagram).expect("answered");
    assert_eq!(first, retry);
    assert_eq!(first, again);
    assert_eq!(server.executed, 1, "the bind ran once");
    assert_eq!(
        response_of(&retry, &sent),
        Response::InProgress { op: OperationId(1) }
    );
}

#[test]
fn a_retry_of_an_older_request_still_in_the_cache_is_answered_not_refused() {
    let mut server = Server::<4>::new();
    let first_sent = Header::request(1, SWITCH, 10);
    let first = request_datagram(&first_sent, &bind(), &[]);
    let first_answer = server.handle(&first).expect("answered");
    let second = request_datagram(&Header::request(2, SWITCH, 11), &Request::Ping, &[]);
    server.handle(&second).expect("answered");
    // Counter 10 is now older than the last accepted (11), yet the repeat is
    // answered from the cache.
    assert_eq!(server.handle(&first).expect("answered"), first_answer);
    assert_eq!(server.executed, 2);
}

#[test]
fn a_retry_after_its_answer_left_the_cache_is_refused_as_one_that_may_have_run() {
    let mut server = Server::<2>::new();
    let first_sent = Header::request(1, SWITCH, 10);
    let first = request_datagram(&first_sent, &bind(), &[]);
    server.handle(&first).expect("answered");
    for i in 0..2 {
        let newer = request_datagram(
            &Header::request(2 + i, SWITCH, 11 + u64::from(i)),
            &Request::Ping,
            &[],
        );
        server.handle(&newer).expect("answered");
    }
    let answer = server.handle(&first).expect("answered");
    assert_eq!(
        response_of(&answer, &first_sent),
        Response::Error(Error::CounterTooOld {
            accepted_above: 12,
            may_have_run: true
        })
    );
    assert_eq!(server.executed, 3, "not run again");
}

#[test]
fn a_different_request_under_the_same_id_and_counter_is_not_answered_from_the_cache() {
    let mut server = Server::<4>::new();
    let sent = Header::request(1, SWITCH, 10);
    server
        .handle(&request_datagram(&sent, &bind(), &[]))
        .expect("answered");
    // Counter 10 was taken by the bind; this ping never ran, so the switch
    // says which counters it accepts instead of calling it a replay.
    let other = request_datagram(&sent, &Request::Ping, &[]);
    let answer = server.handle(&other).expect("answered");
    assert_eq!(
        response_of(&answer, &sent),
        Response::Error(Error::CounterTooOld {
            accepted_above: 10,
            may_have_run: false
        })
    );
    assert_eq!(server.executed, 1);
}

#[test]
fn a_forgery_of_a_cached_request_fails_its_mac_before_the_cache_is_consulted() {
    let mut server = Server::<4>::new();
    let sent = Header::request(1, SWITCH, 10);
    let datagram = request_datagram(&sent, &bind(), &[]);
    server.handle(&datagram).expect("answered");
    // Same header and tag, different body byte: the cache would match on
    // id, counter and tag, but the MAC is checked first.
    let mut forged = datagram.clone();
    let last = forged.len() - 1;
    forged[last] ^= 0x01;
    let answer = server.handle(&forged).expect("answered");
    assert_eq!(
        response_of(&answer, &sent),
        Response::Error(Error::Unauthenticated)
    );
    assert_eq!(server.executed, 1, "the forgery did not run");
}

#[test]
fn a_refused_request_is_not_cached_and_its_retry_gets_the_same_refusal() {
    let mut server = Server::<4>::new();
    let sent = Header::request(1, SwitchId(0x1234), 10);
    let datagram = request_datagram(&sent, &bind(), &[]);
    let first = server.handle(&datagram).expect("answered");
    let retry = server.handle(&datagram).expect("answered");
    assert_eq!(first, retry);
    assert_eq!(
        response_of(&retry, &sent),
        Response::Error(Error::WrongSwitch { ours: SWITCH })
    );
    assert_eq!(server.responder.cached_answers(), 0);
    assert_eq!(server.executed, 0);
}

#[test]
fn new_requests_keep_running_while_retries_are_answered() {
    let mut server = Server::<4>::new();
    let mut counter = ClientCounter::new();
    for i in 0..10u32 {
        let sent = Header::request(i, SWITCH, counter.next(1_000));
        let datagram = request_datagram(&sent, &bind(), &[]);
        let answer = server.handle(&datagram).expect("answered");
        assert_eq!(server.handle(&datagram).expect("answered"), answer);
        assert_eq!(
            response_of(&answer, &sent),
            Response::InProgress {
                op: OperationId(i + 1)
            }
        );
    }
    assert_eq!(server.executed, 10);
    assert_eq!(server.responder.cached_answers(), 4);
}

#[test]
fn a_new_key_keeps_the_counter_and_forgets_the_answers() {
    let mut server = Server::<4>::new();
    let sent = Header::request(1, SWITCH, 10);
    let datagram = request_datagram(&sent, &bind(), &[]);
    server.handle(&datagram).expect("answered");
    let new_key = Key::from_bytes([0x17; KEY_LEN]);
    server.responder.change_key(new_key.clone());
    assert_eq!(server.responder.cached_answers(), 0);
    assert_eq!(server.responder.verifier().last_accepted(), 10);
    // The old datagram no longer verifies: refused under the new key.
    let answer = server.handle(&datagram).expect("answered");
    let refusal = decode_response(&answer, &new_key, &sent).expect("signed with the new key");
    assert_eq!(refusal.response, Response::Error(Error::Unauthenticated));
    // Counter 10 under the new key is still refused, and the bind under it
    // may have run (its answer went with the old key).
    let mut out = [0u8; MAX_DATAGRAM];
    let len = encode_request(&sent, &Request::Ping, &[], &new_key, &mut out).expect("fits");
    let answer = server.handle(&out[..len]).expect("answered");
    let refusal = decode_response(&answer, &new_key, &sent).expect("authentic");
    assert_eq!(
        refusal.response,
        Response::Error(Error::CounterTooOld {
            accepted_above: 10,
            may_have_run: true
        })
    );
    assert_eq!(server.executed, 1);
}
