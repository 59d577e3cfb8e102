//! Arbitrary bytes as a datagram to the switch: whatever they are, the
//! switch answers with nothing or with a response datagram that decodes
//! under its key, and never panics (weft-proto's decoder, authentication,
//! replay check and the request handler behind them).

#![no_main]

use libfuzzer_sys::fuzz_target;
use weft_proto::MAX_DATAGRAM;

#[path = "common.rs"]
mod common;

fuzz_target!(|datagram: &[u8]| {
    let mut out = vec![0u8; MAX_DATAGRAM];
    let len = common::with_server(|server| server.answer(datagram, &mut out));
    assert!(len <= MAX_DATAGRAM);
});
