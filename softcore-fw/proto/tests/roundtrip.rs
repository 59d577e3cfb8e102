//! Every request and response survives encoding and decoding unchanged, and
//! every one fits a datagram.

mod strategies;

use proptest::prelude::*;
use strategies::{request, request_header, response};
use weft_proto::*;

fn key() -> Key {
    Key::from_bytes([0x5a; KEY_LEN])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_request_decodes_to_what_was_encoded(header in request_header(), request in request()) {
        let trailing: &[u8] = if request.takes_trailing() { b"firmware bytes" } else { &[] };
        let mut out = [0u8; MAX_DATAGRAM];
        let len = encode_request(&header, &request, trailing, &key(), &mut out).expect("every request fits");
        let mut verifier = Verifier::new(header.switch, key());
        let received = decode_request(&out[..len], &mut verifier).expect("accepted");
        prop_assert_eq!(received.header, header);
        prop_assert_eq!(received.request, request);
        prop_assert_eq!(received.trailing, trailing);
        prop_assert_eq!(verifier.last_accepted(), header.counter);
    }

    #[test]
    fn a_response_decodes_to_what_was_encoded(
        sent in request_header(),
        responder in any::<u64>(),
        response in response(),
    ) {
        let header = sent.reply(SwitchId(responder));
        let mut out = [0u8; MAX_DATAGRAM];
        let len = encode_response(&header, &response, &[], &key(), &mut out)
            .expect("every response fits a datagram");
        prop_assert!(len <= MAX_DATAGRAM);
        let reply = decode_response(&out[..len], &key(), &sent).expect("accepted");
        prop_assert_eq!(reply.header, header);
        prop_assert_eq!(reply.response, response);
        prop_assert!(reply.trailing.is_empty());
    }

    #[test]
    fn encoding_is_deterministic_so_a_retry_resends_the_same_bytes(
        header in request_header(),
        request in request().prop_filter("no trailing", |r| !r.takes_trailing()),
    ) {
        let mut first = [0u8; MAX_DATAGRAM];
        let mut second = [0u8; MAX_DATAGRAM];
        let a = encode_request(&header, &request, &[], &key(), &mut first).expect("fits");
        let b = encode_request(&header, &request, &[], &key(), &mut second).expect("fits");
        prop_assert_eq!(&first[..a], &second[..b]);
    }

    #[test]
    fn a_firmware_chunk_of_any_size_up_to_the_maximum_round_trips(
        header in request_header(),
        offset in any::<u32>(),
        chunk in proptest::collection::vec(any::<u8>(), 0..=MAX_CHUNK),
    ) {
        let request = Request::FirmwareChunk { offset };
        let mut out = [0u8; MAX_DATAGRAM];
        let len = encode_request(&header, &request, &chunk, &key(), &mut out).expect("a full chunk fits");
        let mut verifier = Verifier::new(header.switch, key());
        let received = decode_request(&out[..len], &mut verifier).expect("accepted");
        prop_assert_eq!(received.request, request);
        prop_assert_eq!(received.trailing, &chunk[..]);
    }
}
