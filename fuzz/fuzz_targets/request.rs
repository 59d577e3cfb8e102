//! Arbitrary bytes decoded as a request (postcard), signed with the
//! switch's key and a fresh counter, so every input reaches the request
//! handler: each is answered, the answer is authenticated and decodes as
//! the response to that request, and nothing panics. Bytes after the
//! request travel as its trailing data when it takes some.

#![no_main]

use std::sync::atomic::{AtomicU64, Ordering};

use libfuzzer_sys::fuzz_target;
use weft_proto::{decode_response, encode_request, Header, Request, MAX_DATAGRAM};

#[path = "common.rs"]
mod common;

fuzz_target!(|bytes: &[u8]| {
    let Ok((request, rest)) = postcard::take_from_bytes::<Request>(bytes) else {
        return;
    };
    let trailing = if request.takes_trailing() { rest } else { &[] };
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let counter = COUNTER.fetch_add(1, Ordering::Relaxed);
    let header = Header::request(counter as u32, common::with_server(|s| s.switch()), counter);
    let key = common::key();
    let mut datagram = vec![0u8; MAX_DATAGRAM];
    let Ok(len) = encode_request(&header, &request, trailing, &key, &mut datagram) else {
        return;
    };
    let mut out = vec![0u8; MAX_DATAGRAM];
    let answered = common::with_server(|server| server.answer(&datagram[..len], &mut out));
    assert!(answered > 0, "no answer to {request:?}");
    if let Err(error) = decode_response(&out[..answered], &key, &header) {
        panic!("the answer to {request:?} does not decode: {error:?}");
    }
});
