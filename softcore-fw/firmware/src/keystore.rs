//! The management key and the replay counter's high-water mark, kept in
//! flash ([`crate::flash::KEY_REGION`]) as a weft-fabric two-slot record,
//! so a restart keeps the key and still refuses requests captured before
//! it (weft-proto's `auth` module: a verifier resumes from a mark in flash).
//!
//! The mark is not the last counter accepted but a ceiling above it: when
//! an accepted counter passes the stored mark, the mark is moved to that
//! counter plus [`MARK_RESERVE`]. Counters are the clients' clocks in
//! microseconds, so under steady traffic the flash is written at most once
//! per [`MARK_RESERVE`] of client time rather than once per request: one
//! 4 KiB sector erase (45 ms typical, during which the loop answers
//! nothing) per minute, and, at the 100 000 erase cycles typical parts
//! guarantee per sector, two sectors that last about 138 days of
//! uninterrupted traffic. The price: after a restart, requests whose
//! counters are still below the mark — a client clock less than
//! [`MARK_RESERVE`] past the last move — are refused. The refusal is
//! weft-proto's `CounterTooOld`, which names the mark to a client holding
//! the key, and such a client sends the request again at once above it;
//! the first request accepted above the mark moves the stored mark on
//! (one flash write). Each restart can so put the counters up to
//! [`MARK_RESERVE`] ahead of the clients' clocks, which costs each new
//! client process one refused round trip until the clocks catch up.
//!
//! The mark is stored after a request is answered but before the answer
//! is sent, so a power cut in between loses a mark for a request whose
//! answer nobody saw; a request that changes state is carried out before
//! that and could be replayed once after such a cut.
//!
//! Record payload, [`KEY_RECORD_VERSION`] 1, magic "WFTK" (after
//! weft-fabric's record header):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 32 | the key |
//! | 32 | 8 | the high-water mark, little-endian |

use weft_fabric::persist::{self, Flash, PersistError, Record, RECORD_OVERHEAD};
use weft_proto::{Key, KEY_LEN};

/// How far above an accepted counter the stored mark is set: a minute
/// of a client's microsecond clock.
pub const MARK_RESERVE: u64 = 60_000_000;

/// The record layout this code writes and reads.
pub const KEY_RECORD_VERSION: u16 = 1;

const PAYLOAD_LEN: usize = KEY_LEN + 8;

/// The key and mark as stored.
pub struct KeyRecord {
    /// The management key.
    pub key: Key,
    /// No counter at or below it is accepted after a restart.
    pub mark: u64,
}

impl Record for KeyRecord {
    const MAGIC: u32 = u32::from_le_bytes(*b"WFTK");
    const VERSION: u16 = KEY_RECORD_VERSION;
    type Bytes = [u8; RECORD_OVERHEAD + PAYLOAD_LEN];

    fn bytes() -> Self::Bytes {
        [0; RECORD_OVERHEAD + PAYLOAD_LEN]
    }

    fn encode_payload(&self, out: &mut [u8]) -> usize {
        out[..KEY_LEN].copy_from_slice(self.key.bytes());
        out[KEY_LEN..PAYLOAD_LEN].copy_from_slice(&self.mark.to_le_bytes());
        PAYLOAD_LEN
    }

    fn decode_payload(payload: &[u8]) -> Option<Self> {
        let payload: &[u8; PAYLOAD_LEN] = payload.try_into().ok()?;
        let (key, mark) = payload.split_at(KEY_LEN);
        Some(KeyRecord {
            key: Key::from_bytes(key.try_into().ok()?),
            mark: u64::from_le_bytes(mark.try_into().ok()?),
        })
    }
}

/// The stored key and mark, if any.
pub fn load<F: Flash>(flash: &mut F) -> Result<Option<KeyRecord>, PersistError> {
    persist::load_record(flash)
}

/// Stores `key` with a mark [`MARK_RESERVE`] above `accepted`; returns the mark.
pub fn store<F: Flash>(flash: &mut F, key: &Key, accepted: u64) -> Result<u64, PersistError> {
    let mark = accepted.saturating_add(MARK_RESERVE);
    let record = KeyRecord {
        key: key.clone(),
        mark,
    };
    persist::save_record(flash, &record)?;
    Ok(mark)
}
