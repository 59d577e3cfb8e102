//! Truncated, corrupted, oversized and foreign datagrams get a typed error,
//! never a panic, and change nothing.

mod strategies;
mod support;

use proptest::prelude::*;
use support::{bind, key, request_datagram, resign, verifier, KEY_BYTES, SWITCH};
use weft_proto::*;

fn valid() -> std::vec::Vec<u8> {
    request_datagram(&Header::request(9, SWITCH, 100), &bind(), &[])
}

#[test]
fn a_datagram_shorter_than_the_header_is_truncated() {
    let datagram = valid();
    for len in 0..HEADER_LEN {
        let mut v = verifier();
        assert_eq!(
            decode_request(&datagram[..len], &mut v),
            Err(DecodeError::Truncated { len })
        );
        assert_eq!(v.last_accepted(), 0);
    }
}

#[test]
fn a_datagram_cut_after_the_header_fails_its_mac() {
    // The MAC covers every byte, so a cut anywhere is caught before the
    // lengths are even looked at.
    let datagram = valid();
    for len in HEADER_LEN..datagram.len() {
        let mut v = verifier();
        let err = decode_request(&datagram[..len], &mut v).expect_err("cut");
        assert!(
            matches!(err, DecodeError::BadMac { .. }),
            "cut at {len}: {err:?}"
        );
    }
}

#[test]
fn a_datagram_over_the_maximum_is_dropped() {
    let mut datagram = valid();
    datagram.resize(MAX_DATAGRAM + 1, 0);
    let err = decode_request(&datagram, &mut verifier()).expect_err("too large");
    assert_eq!(
        err,
        DecodeError::TooLarge {
            len: MAX_DATAGRAM + 1
        }
    );
    assert_eq!(err.refusal(SWITCH), None, "not answered");
}

#[test]
fn every_single_bit_flip_is_refused() {
    let datagram = valid();
    for byte in 0..datagram.len() {
        for bit in 0..8 {
            let mut flipped = datagram.clone();
            flipped[byte] ^= 1 << bit;
            let mut v = verifier();
            let err = decode_request(&flipped, &mut v).expect_err("a flipped bit");
            let expected_kind = match byte {
                0..=3 => matches!(err, DecodeError::BadMagic { .. }),
                6 => matches!(
                    err,
                    DecodeError::UnknownKind { .. } | DecodeError::WrongKind { .. }
                ),
                _ => matches!(err, DecodeError::BadMac { .. }),
            };
            assert!(expected_kind, "byte {byte} bit {bit}: {err:?}");
            assert_eq!(v.last_accepted(), 0, "nothing was accepted");
        }
    }
}

#[test]
fn foreign_and_wrong_kind_datagrams_are_dropped_unanswered() {
    let mut foreign = valid();
    foreign[..4].copy_from_slice(b"HTTP");
    let err = decode_request(&foreign, &mut verifier()).expect_err("foreign");
    assert_eq!(err, DecodeError::BadMagic { found: *b"HTTP" });
    assert_eq!(err.refusal(SWITCH), None);

    // A response sent to the server port is not a request, even with a
    // valid MAC: answering it could start a loop between two switches.
    let mut out = [0u8; MAX_DATAGRAM];
    let header = Header::request(9, SWITCH, 100).reply(SWITCH);
    let len = encode_response(&header, &Response::Pong, &[], &key(), &mut out).expect("fits");
    let err = decode_request(&out[..len], &mut verifier()).expect_err("a response");
    assert_eq!(
        err,
        DecodeError::WrongKind {
            found: Kind::Response
        }
    );
    assert_eq!(err.refusal(SWITCH), None);
}

#[test]
fn lengths_that_do_not_add_up_are_malformed_even_under_a_valid_mac() {
    let mut datagram = valid();
    datagram[20] += 1; // body length one more than the body
    resign(&mut datagram, &KEY_BYTES);
    let err = decode_request(&datagram, &mut verifier()).expect_err("bad lengths");
    let DecodeError::Malformed { cause, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        *cause,
        Malformation::LengthMismatch {
            declared: datagram.len() + 1,
            actual: datagram.len()
        }
    );
    assert_eq!(err.refusal(SWITCH).map(|(_, e)| e), Some(Error::Malformed));
}

#[test]
fn an_unknown_request_variant_is_malformed() {
    // A newer client at the same version would not send one, but a damaged
    // or hostile one might: discriminant 0x7f is no request.
    let mut datagram = valid();
    datagram.truncate(HEADER_LEN);
    datagram.push(0x7f);
    datagram[20..22].copy_from_slice(&1u16.to_le_bytes());
    resign(&mut datagram, &KEY_BYTES);
    let mut v = verifier();
    let err = decode_request(&datagram, &mut v).expect_err("unknown variant");
    assert!(
        matches!(
            err,
            DecodeError::Malformed {
                cause: Malformation::Body(_),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        v.last_accepted(),
        0,
        "a refused request does not use up its counter"
    );
}

#[test]
fn leftover_body_bytes_are_malformed() {
    let mut datagram = request_datagram(&Header::request(9, SWITCH, 100), &Request::Ping, &[]);
    datagram.push(0);
    datagram[20..22].copy_from_slice(&2u16.to_le_bytes());
    resign(&mut datagram, &KEY_BYTES);
    let err = decode_request(&datagram, &mut verifier()).expect_err("leftover");
    assert!(
        matches!(
            err,
            DecodeError::Malformed {
                cause: Malformation::LeftoverBody { len: 1 },
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn trailing_bytes_on_a_request_that_takes_none_are_refused() {
    let header = Header::request(9, SWITCH, 100);
    let mut out = [0u8; MAX_DATAGRAM];
    assert_eq!(
        encode_request(&header, &Request::Ping, b"extra", &key(), &mut out),
        Err(EncodeError::UnexpectedTrailing { len: 5 })
    );
    let mut datagram = request_datagram(&header, &Request::Ping, &[]);
    datagram.extend_from_slice(b"extra");
    datagram[22..24].copy_from_slice(&5u16.to_le_bytes());
    resign(&mut datagram, &KEY_BYTES);
    let err = decode_request(&datagram, &mut verifier()).expect_err("trailing");
    assert!(
        matches!(
            err,
            DecodeError::Malformed {
                cause: Malformation::UnexpectedTrailing { len: 5 },
                ..
            }
        ),
        "{err:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn arbitrary_bytes_never_panic_the_decoders(bytes in proptest::collection::vec(any::<u8>(), 0..1600)) {
        let mut v = verifier();
        prop_assert!(decode_request(&bytes, &mut v).is_err());
        prop_assert_eq!(v.last_accepted(), 0);
        let sent = Header::request(1, SWITCH, 1);
        prop_assert!(decode_response(&bytes, &key(), &sent).is_err());
    }

    #[test]
    fn arbitrary_bytes_behind_a_valid_header_never_panic(
        version in any::<u16>(),
        kind in 0u8..4,
        body in proptest::collection::vec(any::<u8>(), 0..200),
        trailing in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        // A datagram whose header and MAC are right, so that the body decoder
        // sees arbitrary bytes.
        let mut datagram = vec![0u8; HEADER_LEN];
        datagram[..4].copy_from_slice(&MAGIC);
        datagram[4..6].copy_from_slice(&version.to_le_bytes());
        datagram[6] = kind;
        datagram[12..20].copy_from_slice(&SWITCH.0.to_le_bytes());
        datagram[20..22].copy_from_slice(&(body.len() as u16).to_le_bytes());
        datagram[22..24].copy_from_slice(&(trailing.len() as u16).to_le_bytes());
        datagram[24..32].copy_from_slice(&5u64.to_le_bytes());
        datagram.extend_from_slice(&body);
        datagram.extend_from_slice(&trailing);
        resign(&mut datagram, &KEY_BYTES);
        let mut v = verifier();
        match decode_request(&datagram, &mut v) {
            Ok(received) => {
                prop_assert_eq!(kind, 1);
                prop_assert_eq!(v.last_accepted(), 5);
                prop_assert_eq!(received.trailing, &trailing[..]);
            }
            Err(e) => prop_assert_eq!(v.last_accepted(), 0, "{:?}", e),
        }
        let _ = decode_response(&datagram, &key(), &Header::request(0, SWITCH, 5));
    }

    #[test]
    fn any_valid_request_cut_short_or_altered_is_refused(
        request in strategies::request().prop_filter("no trailing", |r| !r.takes_trailing()),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        mask in 1u8..,
    ) {
        let datagram = request_datagram(&Header::request(3, SWITCH, 7), &request, &[]);
        let short = &datagram[..cut.index(datagram.len())];
        prop_assert!(decode_request(short, &mut verifier()).is_err());
        let mut altered = datagram.clone();
        altered[flip.index(datagram.len())] ^= mask;
        prop_assert!(decode_request(&altered, &mut verifier()).is_err());
    }
}
