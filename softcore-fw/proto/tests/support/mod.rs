//! Helpers for tests that build datagrams by hand: an HMAC computed
//! directly with RustCrypto (not through the crate), so a test can alter a
//! datagram and still give it a valid MAC.

#![allow(dead_code)]

use hmac::{Hmac, Mac};
use sha2::Sha256;
use weft_proto::*;

pub const SWITCH: SwitchId = SwitchId(0x5745_4654_0001);
pub const KEY_BYTES: [u8; KEY_LEN] = [0x42; KEY_LEN];

pub fn key() -> Key {
    Key::from_bytes(KEY_BYTES)
}

pub fn verifier() -> Verifier {
    Verifier::new(SWITCH, key())
}

/// Recomputes the tag of `datagram` (bytes 32..64) under `key`: HMAC-SHA-256
/// over bytes 0..32 and 64.., as the header module documents.
pub fn resign(datagram: &mut [u8], key: &[u8; KEY_LEN]) {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("any key length works for HMAC");
    mac.update(&datagram[..32]);
    mac.update(&datagram[64..]);
    let tag = mac.finalize().into_bytes();
    datagram[32..64].copy_from_slice(&tag);
}

/// A request datagram for `request` under the test key.
pub fn request_datagram(header: &Header, request: &Request, trailing: &[u8]) -> std::vec::Vec<u8> {
    let mut out = [0u8; MAX_DATAGRAM];
    let len = encode_request(header, request, trailing, &key(), &mut out).expect("fits");
    out[..len].to_vec()
}

/// A bind request to the test switch.
pub fn bind() -> Request {
    let mut functions = heapless::Vec::new();
    functions.push(FabricId(0x0300)).expect("room");
    Request::Bind {
        host: HostIndex(1),
        slot: SlotIndex(0),
        functions,
        if_generation: None,
    }
}
