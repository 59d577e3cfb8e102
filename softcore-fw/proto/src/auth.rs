//! Who may drive a switch: the per-switch key, the MAC over each datagram,
//! and the counter that makes a captured request useless to replay.
//!
//! Every datagram, request or response, carries an HMAC-SHA-256 (RFC 2104,
//! FIPS 180-4) under the switch's [`Key`] over the whole datagram except the
//! tag itself (see [`header`](crate::header) for the layout). Requests carry
//! a counter that must grow: the switch's [`Verifier`] keeps the last counter
//! it accepted and refuses anything not newer, unless it is a byte-identical
//! repeat that the [`ReplyCache`](crate::ReplyCache) answers.
//!
//! # One counter per switch, not per client
//!
//! A verifier keeps a single counter for its key. Per-client counters would
//! need an identity for the client that the MAC covers (a source address can
//! be forged, and a fresh address would come with a fresh counter), and a
//! table that an attacker could fill. Instead, clients derive counters from
//! the wall clock: [`ClientCounter::next`] takes the current time in
//! microseconds since the Unix epoch and never goes backwards, so separate
//! client processes holding the same key stay in order without sharing
//! state, as long as their clocks roughly agree.
//!
//! The last accepted counter lives in RAM. After a restart a switch would
//! accept an old captured request again, so the firmware keeps a high-water
//! mark in flash and starts with [`Verifier::resume`] from it. That mark is
//! ahead of the clients' clocks for a while, and a client's clock may lag
//! another's: a request whose MAC verifies but whose counter is too old is
//! refused with [`Error::CounterTooOld`](crate::Error::CounterTooOld), which
//! names the last accepted counter, and the client moves its own past it
//! with [`ClientCounter::raise_above`] before sending the request again.
//!
//! # Provisioning the key
//!
//! The key is 32 random bytes written as 64 hexadecimal digits
//! ([`Key::parse_hex`]). The firmware takes it from its configuration
//! partition in flash at start, and accepts a new one over the UART console
//! (a local, physical path, so that the network cannot change it); weftctl
//! reads the same digits from a key file. Without a key, a switch may run
//! with [`Key::insecure_public`], whose name is the only way to ask for it:
//! every party knows that key, so it authenticates nothing.

use core::fmt;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::header::{MAC_INPUT_END, TAG_LEN, TAG_OFFSET};
use crate::message::ids::SwitchId;

/// The length of a [`Key`] in bytes: the output size of SHA-256, the
/// smallest key RFC 2104 §3 recommends for HMAC-SHA-256.
pub const KEY_LEN: usize = 32;

/// SHA-256's block size; HMAC pads a shorter key with zeros to this length
/// (RFC 2104 §2).
const BLOCK_LEN: usize = 64;

/// A switch's secret key for HMAC-SHA-256.
///
/// It has no `Display`, and `Debug` prints no key bytes, so it does not end
/// up in a log by accident.
#[derive(Clone)]
pub struct Key([u8; KEY_LEN]);

impl Key {
    /// A key made of these bytes, such as those read from flash.
    pub const fn from_bytes(bytes: [u8; KEY_LEN]) -> Key {
        Key(bytes)
    }

    /// The key's bytes, for keeping it in the switch's flash.
    pub const fn bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    /// The key every weft client and switch knows (all zeros): messages are
    /// still framed and checked for damage, but anyone can forge them. For a
    /// bench network only; a switch using it reports no
    /// [`Capabilities::AUTHENTICATED`](crate::Capabilities::AUTHENTICATED).
    pub const fn insecure_public() -> Key {
        Key([0; KEY_LEN])
    }

    /// Whether this is the key of [`Key::insecure_public`].
    pub fn is_insecure(&self) -> bool {
        self.0 == [0; KEY_LEN]
    }

    /// Reads a key written as 64 hexadecimal digits (either case), as kept in
    /// a key file or typed on the UART console. Leading and trailing
    /// whitespace, such as a file's final newline, is ignored. The all-zero
    /// key is refused: ask for it by name with [`Key::insecure_public`].
    pub fn parse_hex(text: &str) -> Result<Key, KeyParseError> {
        let digits = text.trim().as_bytes();
        if digits.len() != 2 * KEY_LEN {
            return Err(KeyParseError::WrongLength {
                digits: digits.len(),
            });
        }
        let mut key = [0; KEY_LEN];
        for (i, (byte, pair)) in key.iter_mut().zip(digits.chunks_exact(2)).enumerate() {
            let hi = hex_value(pair[0]).ok_or(KeyParseError::NotHex { at: 2 * i })?;
            let lo = hex_value(pair[1]).ok_or(KeyParseError::NotHex { at: 2 * i + 1 })?;
            *byte = (hi << 4) | lo;
        }
        let key = Key(key);
        if key.is_insecure() {
            return Err(KeyParseError::AllZero);
        }
        Ok(key)
    }

    /// The HMAC-SHA-256 of the concatenated `parts` under this key.
    pub(crate) fn mac(&self, parts: &[&[u8]]) -> [u8; TAG_LEN] {
        let mut mac = self.hmac();
        for part in parts {
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
    }

    /// Whether `tag` is the MAC of `datagram` (everything but its tag),
    /// compared in constant time so that timing reveals nothing about the
    /// right tag.
    pub(crate) fn verify_datagram(&self, datagram: &[u8], tag: &[u8; TAG_LEN]) -> bool {
        let mut mac = self.hmac();
        let (covered_head, rest) = datagram.split_at(MAC_INPUT_END.min(datagram.len()));
        mac.update(covered_head);
        mac.update(
            rest.get(TAG_OFFSET + TAG_LEN - MAC_INPUT_END..)
                .unwrap_or(&[]),
        );
        mac.verify_slice(tag).is_ok()
    }

    /// The MAC of `datagram` (everything but its tag).
    pub(crate) fn mac_datagram(&self, datagram: &[u8]) -> [u8; TAG_LEN] {
        let (covered_head, rest) = datagram.split_at(MAC_INPUT_END.min(datagram.len()));
        self.mac(&[
            covered_head,
            rest.get(TAG_OFFSET + TAG_LEN - MAC_INPUT_END..)
                .unwrap_or(&[]),
        ])
    }

    fn hmac(&self) -> Hmac<Sha256> {
        // A 32-byte key padded with zeros to the 64-byte block is exactly the
        // key HMAC uses (RFC 2104 §2), and the fixed-size constructor cannot
        // fail, unlike the slice one.
        let mut block = [0; BLOCK_LEN];
        block[..KEY_LEN].copy_from_slice(&self.0);
        <Hmac<Sha256> as hmac::digest::KeyInit>::new(&block.into())
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_insecure() {
            f.write_str("Key(insecure public key)")
        } else {
            f.write_str("Key(..)")
        }
    }
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

/// Why text is not a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyParseError {
    /// A key is 64 hexadecimal digits; this many were given.
    WrongLength {
        /// How many characters were given, whitespace around them excluded.
        digits: usize,
    },
    /// This character (counted from 0, after leading whitespace) is not a
    /// hexadecimal digit.
    NotHex {
        /// Its position.
        at: usize,
    },
    /// All zeros is the insecure public key; it must be asked for by name.
    AllZero,
}

impl fmt::Display for KeyParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyParseError::WrongLength { digits } => write!(
                f,
                "a weft key is 64 hexadecimal digits, but {digits} characters were given; \
                 generate one with `openssl rand -hex 32`"
            ),
            KeyParseError::NotHex { at } => {
                write!(
                    f,
                    "character {at} of the key is not a hexadecimal digit (0-9, a-f)"
                )
            }
            KeyParseError::AllZero => f.write_str(
                "the all-zero key is the insecure public key; choose a random key, \
                 or ask for insecure mode explicitly",
            ),
        }
    }
}

impl core::error::Error for KeyParseError {}

/// A switch's check of incoming requests: its identity, its key and the
/// last counter it accepted.
#[derive(Clone, Debug)]
pub struct Verifier {
    switch: SwitchId,
    key: Key,
    last_accepted: u64,
}

impl Verifier {
    /// A verifier for the switch `switch` that has accepted nothing yet: the
    /// first request may have any counter above 0.
    pub const fn new(switch: SwitchId, key: Key) -> Verifier {
        Verifier {
            switch,
            key,
            last_accepted: 0,
        }
    }

    /// A verifier that continues after a restart from a counter kept in
    /// flash: only counters above `last_accepted` are accepted.
    pub const fn resume(switch: SwitchId, key: Key, last_accepted: u64) -> Verifier {
        Verifier {
            switch,
            key,
            last_accepted,
        }
    }

    /// The switch whose requests this verifier accepts.
    pub const fn switch(&self) -> SwitchId {
        self.switch
    }

    /// The key, for authenticating the responses.
    pub const fn key(&self) -> &Key {
        &self.key
    }

    /// The last counter accepted, for the firmware to persist.
    pub const fn last_accepted(&self) -> u64 {
        self.last_accepted
    }

    /// Accepts `counter` if it is newer than every one accepted before.
    pub(crate) fn accept_counter(&mut self, counter: u64) -> bool {
        if counter > self.last_accepted {
            self.last_accepted = counter;
            true
        } else {
            false
        }
    }
}

/// A client's source of request counters: increasing, and close to the wall
/// clock so that separate client processes agree (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientCounter {
    last: u64,
}

impl ClientCounter {
    /// A source that has issued nothing.
    pub const fn new() -> ClientCounter {
        ClientCounter { last: 0 }
    }

    /// The counter for a new request: the current time in microseconds
    /// since the Unix epoch, or one more than the last counter issued if the
    /// clock has not moved on (or went backwards).
    pub fn next(&mut self, now_micros: u64) -> u64 {
        self.last = now_micros.max(self.last.saturating_add(1));
        self.last
    }

    /// Makes every later counter greater than `accepted_above`, the
    /// switch's last accepted counter from
    /// [`Error::CounterTooOld`](crate::Error::CounterTooOld); counters
    /// follow the clock again once it passes that.
    pub fn raise_above(&mut self, accepted_above: u64) {
        self.last = self.last.max(accepted_above);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::format;

    #[test]
    fn hmac_matches_rfc_4231_test_case_1() {
        // RFC 4231 §4.2: Key = 0x0b * 20, Data = "Hi There". HMAC pads the
        // key with zeros to the block, so padding it to 32 first changes
        // nothing.
        let mut bytes = [0; KEY_LEN];
        bytes[..20].fill(0x0b);
        let tag = Key::from_bytes(bytes).mac(&[b"Hi ", b"There"]);
        let expected = [
            0xb0, 0x34, 0x4c, 0x61, 0xd8, 0xdb, 0x38, 0x53, 0x5c, 0xa8, 0xaf, 0xce, 0xaf, 0x0b,
            0xf1, 0x2b, 0x88, 0x1d, 0xc2, 0x00, 0xc9, 0x83, 0x3d, 0xa7, 0x26, 0xe9, 0x37, 0x6c,
            0x2e, 0x32, 0xcf, 0xf7,
        ];
        assert_eq!(tag, expected);
    }

    #[test]
    fn hmac_matches_rfc_4231_test_case_2() {
        // RFC 4231 §4.3: Key = "Jefe", Data = "what do ya want for nothing?".
        let mut bytes = [0; KEY_LEN];
        bytes[..4].copy_from_slice(b"Jefe");
        let tag = Key::from_bytes(bytes).mac(&[b"what do ya want for nothing?"]);
        let expected = [
            0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04, 0x24, 0x26, 0x08, 0x95,
            0x75, 0xc7, 0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27, 0x39, 0x83, 0x9d, 0xec, 0x58, 0xb9,
            0x64, 0xec, 0x38, 0x43,
        ];
        assert_eq!(tag, expected);
    }

    #[test]
    fn datagram_mac_skips_exactly_the_tag() {
        let key = Key::from_bytes([7; KEY_LEN]);
        let mut datagram = [0u8; 80];
        for (i, b) in datagram.iter_mut().enumerate() {
            *b = i as u8;
        }
        let tag = key.mac_datagram(&datagram);
        assert_eq!(tag, key.mac(&[&datagram[..32], &datagram[64..]]));
        // Changing the tag bytes does not change the MAC; changing any
        // other byte does.
        let mut other = datagram;
        other[40] ^= 1;
        assert_eq!(key.mac_datagram(&other), tag);
        other[70] ^= 1;
        assert_ne!(key.mac_datagram(&other), tag);
        assert!(key.verify_datagram(&datagram, &tag));
        assert!(!key.verify_datagram(&other, &tag));
    }

    #[test]
    fn parse_hex_reads_64_digits_and_ignores_surrounding_whitespace() {
        let text = "  000102030405060708090a0B0c0D0e0F101112131415161718191a1b1c1d1e1f\n";
        let key = Key::parse_hex(text).expect("valid key");
        let mut expected = [0; KEY_LEN];
        for (i, b) in expected.iter_mut().enumerate() {
            *b = i as u8;
        }
        assert_eq!(key.0, expected);
    }

    #[test]
    fn parse_hex_says_what_is_wrong() {
        assert_eq!(
            Key::parse_hex("abcd").map(|_| ()),
            Err(KeyParseError::WrongLength { digits: 4 })
        );
        let mut bad = [b'1'; 64];
        bad[9] = b'g';
        let bad = core::str::from_utf8(&bad).expect("ascii");
        assert_eq!(
            Key::parse_hex(bad).map(|_| ()),
            Err(KeyParseError::NotHex { at: 9 })
        );
        let zeros = "0".repeat(64);
        assert_eq!(
            Key::parse_hex(&zeros).map(|_| ()),
            Err(KeyParseError::AllZero)
        );
    }

    #[test]
    fn debug_never_prints_key_bytes() {
        let key = Key::from_bytes([0xab; KEY_LEN]);
        let shown = format!("{key:?}");
        assert!(!shown.contains("ab") && !shown.contains("171"), "{shown}");
        assert_eq!(
            format!("{:?}", Key::insecure_public()),
            "Key(insecure public key)"
        );
    }

    #[test]
    fn verifier_accepts_only_growing_counters() {
        let mut v = Verifier::new(SwitchId(1), Key::insecure_public());
        assert!(!v.accept_counter(0));
        assert!(v.accept_counter(5));
        assert!(!v.accept_counter(5));
        assert!(!v.accept_counter(4));
        assert!(v.accept_counter(9));
        assert_eq!(v.last_accepted(), 9);
        let mut resumed = Verifier::resume(SwitchId(1), Key::insecure_public(), 100);
        assert!(!resumed.accept_counter(100));
        assert!(resumed.accept_counter(101));
    }

    #[test]
    fn client_counter_follows_the_clock_but_never_repeats() {
        let mut c = ClientCounter::new();
        assert_eq!(c.next(1_000), 1_000);
        assert_eq!(c.next(1_000), 1_001);
        assert_eq!(c.next(500), 1_002);
        assert_eq!(c.next(5_000), 5_000);
    }

    #[test]
    fn a_raised_client_counter_passes_the_switch_then_follows_the_clock() {
        let mut c = ClientCounter::new();
        assert_eq!(c.next(1_000), 1_000);
        c.raise_above(60_000);
        assert_eq!(c.next(2_000), 60_001);
        c.raise_above(10);
        assert_eq!(c.next(3_000), 60_002, "a lower floor changes nothing");
        assert_eq!(c.next(70_000), 70_000);
    }
}
