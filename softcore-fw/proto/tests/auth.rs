//! Authentication and replay: a request is executed only if it carries this
//! switch's MAC, names this switch, speaks a version it knows and has a new
//! counter; each refusal is typed and says nothing more.

mod support;

use proptest::prelude::*;
use support::{bind, key, request_datagram, verifier, SWITCH};
use weft_proto::*;

/// The refusal of a request whose counter is too old, as `decode_request`
/// gives it: with no reply cache, any such request may have run.
fn too_old(accepted_above: u64) -> Error {
    Error::CounterTooOld {
        accepted_above,
        may_have_run: true,
    }
}

fn refusal_of(datagram: &[u8], verifier: &mut Verifier) -> Error {
    let err = decode_request(datagram, verifier).expect_err("refused");
    let (header, error) = err.refusal(SWITCH).expect("answerable");
    assert_eq!(
        header.switch, SWITCH,
        "a refusal names the switch that refused"
    );
    assert_eq!(header.version, PROTOCOL_VERSION);
    error
}

#[test]
fn a_request_under_another_key_is_refused_as_unauthenticated_only() {
    let header = Header::request(1, SWITCH, 10);
    let mut out = [0u8; MAX_DATAGRAM];
    let other = Key::from_bytes([0x43; KEY_LEN]);
    let len = encode_request(&header, &bind(), &[], &other, &mut out).expect("fits");
    let mut v = verifier();
    assert_eq!(refusal_of(&out[..len], &mut v), Error::Unauthenticated);
    assert_eq!(
        v.last_accepted(),
        0,
        "the counter of an unauthenticated request is not taken"
    );
}

#[test]
fn an_unauthenticated_request_learns_nothing_even_if_it_is_wrong_in_other_ways() {
    // Wrong switch and a version from the future: a sender without the key
    // is still told only that it is unauthenticated.
    let header = Header {
        version: PROTOCOL_VERSION + 5,
        request_id: 1,
        switch: SwitchId(0xbad),
        counter: 10,
    };
    let mut out = [0u8; MAX_DATAGRAM];
    let len =
        encode_request(&header, &bind(), &[], &Key::insecure_public(), &mut out).expect("fits");
    assert_eq!(
        refusal_of(&out[..len], &mut verifier()),
        Error::Unauthenticated
    );
}

#[test]
fn the_same_datagram_twice_is_a_replay_without_a_cache() {
    let datagram = request_datagram(&Header::request(1, SWITCH, 10), &bind(), &[]);
    let mut v = verifier();
    decode_request(&datagram, &mut v).expect("first time accepted");
    assert_eq!(refusal_of(&datagram, &mut v), too_old(10));
    assert_eq!(v.last_accepted(), 10);
}

#[test]
fn an_older_counter_is_a_replay_even_with_a_new_request_id() {
    let mut v = verifier();
    decode_request(
        &request_datagram(&Header::request(1, SWITCH, 10), &bind(), &[]),
        &mut v,
    )
    .expect("accepted");
    let older = request_datagram(&Header::request(2, SWITCH, 9), &Request::Ping, &[]);
    assert_eq!(refusal_of(&older, &mut v), too_old(10));
    let equal = request_datagram(&Header::request(3, SWITCH, 10), &Request::Ping, &[]);
    assert_eq!(refusal_of(&equal, &mut v), too_old(10));
    let newer = request_datagram(&Header::request(4, SWITCH, 11), &Request::Ping, &[]);
    decode_request(&newer, &mut v).expect("a newer counter is accepted");
}

#[test]
fn counter_zero_is_never_accepted() {
    let datagram = request_datagram(&Header::request(1, SWITCH, 0), &Request::Ping, &[]);
    assert_eq!(
        refusal_of(&datagram, &mut verifier()),
        Error::CounterTooOld {
            accepted_above: 0,
            may_have_run: false
        },
        "counter 0 never ran"
    );
}

#[test]
fn a_resumed_verifier_refuses_counters_from_before_the_restart() {
    let mut v = Verifier::resume(SWITCH, key(), 1_000);
    let old = request_datagram(&Header::request(1, SWITCH, 1_000), &Request::Ping, &[]);
    assert_eq!(refusal_of(&old, &mut v), too_old(1_000));
    let new = request_datagram(&Header::request(1, SWITCH, 1_001), &Request::Ping, &[]);
    decode_request(&new, &mut v).expect("accepted");
}

#[test]
fn a_request_for_another_switch_is_refused_with_our_identity() {
    let datagram = request_datagram(&Header::request(1, SwitchId(0x1234), 10), &bind(), &[]);
    let mut v = verifier();
    assert_eq!(
        refusal_of(&datagram, &mut v),
        Error::WrongSwitch { ours: SWITCH }
    );
    assert_eq!(
        v.last_accepted(),
        0,
        "a refused request does not use up its counter"
    );
}

#[test]
fn any_switch_answers_ping_and_identify_but_nothing_else() {
    let mut v = verifier();
    let ping = request_datagram(&Header::request(1, SwitchId::ANY, 1), &Request::Ping, &[]);
    assert_eq!(
        decode_request(&ping, &mut v).expect("accepted").request,
        Request::Ping
    );
    let identify = request_datagram(
        &Header::request(2, SwitchId::ANY, 2),
        &Request::Identify,
        &[],
    );
    assert_eq!(
        decode_request(&identify, &mut v).expect("accepted").request,
        Request::Identify
    );
    let bind = request_datagram(&Header::request(3, SwitchId::ANY, 3), &bind(), &[]);
    assert_eq!(
        refusal_of(&bind, &mut v),
        Error::WrongSwitch { ours: SWITCH }
    );
}

#[test]
fn a_version_from_the_future_or_too_old_is_refused_with_ours() {
    for version in [PROTOCOL_VERSION + 1, u16::MAX, OLDEST_PROTOCOL_VERSION - 1] {
        let header = Header {
            version,
            request_id: 1,
            switch: SWITCH,
            counter: 10,
        };
        let datagram = request_datagram(&header, &Request::Ping, &[]);
        let mut v = verifier();
        assert_eq!(
            refusal_of(&datagram, &mut v),
            Error::WrongVersion {
                ours: PROTOCOL_VERSION,
                oldest: OLDEST_PROTOCOL_VERSION
            },
            "version {version}"
        );
        assert_eq!(v.last_accepted(), 0);
    }
}

#[test]
fn a_refusal_is_an_authenticated_answer_to_the_request() {
    let sent = Header::request(77, SwitchId(0x1234), 10);
    let datagram = request_datagram(&sent, &bind(), &[]);
    let err = decode_request(&datagram, &mut verifier()).expect_err("wrong switch");
    let (header, error) = err.refusal(SWITCH).expect("answerable");
    let mut out = [0u8; MAX_DATAGRAM];
    let len =
        encode_response(&header, &Response::Error(error), &[], &key(), &mut out).expect("fits");
    let reply = decode_response(&out[..len], &key(), &sent).expect("the client reads the refusal");
    assert_eq!(
        reply.response,
        Response::Error(Error::WrongSwitch { ours: SWITCH })
    );
    assert_eq!(reply.header.request_id, 77);
    assert_eq!(reply.header.counter, 10);
}

#[test]
fn a_client_checks_the_response_mac_id_and_counter() {
    let sent = Header::request(5, SWITCH, 50);
    let mut out = [0u8; MAX_DATAGRAM];
    let len =
        encode_response(&sent.reply(SWITCH), &Response::Done, &[], &key(), &mut out).expect("fits");
    let good = out[..len].to_vec();
    decode_response(&good, &key(), &sent).expect("the right answer");

    let other_key = Key::from_bytes([1; KEY_LEN]);
    assert!(matches!(
        decode_response(&good, &other_key, &sent),
        Err(DecodeError::BadMac { .. })
    ));

    // The answer to an earlier request (another id, or the same id with an
    // older counter) is not taken for the answer to this one.
    let earlier_id = Header::request(4, SWITCH, 50);
    assert!(matches!(
        decode_response(&good, &key(), &earlier_id),
        Err(DecodeError::Unrelated { .. })
    ));
    let newer_counter = Header::request(5, SWITCH, 51);
    assert!(matches!(
        decode_response(&good, &key(), &newer_counter),
        Err(DecodeError::Unrelated { .. })
    ));

    // A request reflected back at the client is not a response.
    let request = request_datagram(&sent, &Request::Ping, &[]);
    assert_eq!(
        decode_response(&request, &key(), &sent),
        Err(DecodeError::WrongKind {
            found: Kind::Request
        })
    );
}

#[test]
fn insecure_mode_works_only_when_both_sides_ask_for_it() {
    let header = Header::request(1, SWITCH, 10);
    let mut out = [0u8; MAX_DATAGRAM];
    let len = encode_request(
        &header,
        &Request::Identify,
        &[],
        &Key::insecure_public(),
        &mut out,
    )
    .expect("fits");
    let mut insecure = Verifier::new(SWITCH, Key::insecure_public());
    decode_request(&out[..len], &mut insecure).expect("an insecure switch accepts it");
    assert_eq!(
        refusal_of(&out[..len], &mut verifier()),
        Error::Unauthenticated
    );
    assert!(Key::insecure_public().is_insecure());
    assert!(!key().is_insecure());
}

proptest! {
    #[test]
    fn counters_are_accepted_exactly_when_they_exceed_every_earlier_one(
        counters in proptest::collection::vec(0u64..50, 1..40),
    ) {
        let mut v = verifier();
        let mut highest = 0;
        for (i, counter) in counters.into_iter().enumerate() {
            let datagram = request_datagram(&Header::request(i as u32, SWITCH, counter), &Request::Ping, &[]);
            let accepted = decode_request(&datagram, &mut v).is_ok();
            prop_assert_eq!(accepted, counter > highest, "counter {} after {}", counter, highest);
            highest = highest.max(counter);
            prop_assert_eq!(v.last_accepted(), highest);
        }
    }

    #[test]
    fn client_counters_always_grow_whatever_the_clock_does(clock in proptest::collection::vec(any::<u64>(), 1..50)) {
        let mut counter = ClientCounter::new();
        let mut last = 0;
        for now in clock {
            let next = counter.next(now.min(u64::MAX - 100));
            prop_assert!(next > last);
            last = next;
        }
    }
}
