//! The server's memory of recent answers, so that a retried request is
//! answered again instead of executed again.
//!
//! A client that times out resends the very same bytes: the same request id,
//! the same counter and so the same tag. The switch must not bind twice or
//! count a chunk twice, and it must not refuse the retry as a replay either,
//! since the first answer may simply have been lost. So it keeps the encoded
//! answers to its last `N` requests, keyed by [`Fingerprint`] (request id,
//! counter and the request's MAC tag); a request whose MAC verifies and whose
//! fingerprint matches gets the identical stored bytes back, without being
//! executed and without its counter being checked again. The tag stands for
//! the whole datagram: two different datagrams with the same tag under the
//! same key would be an HMAC forgery.
//!
//! The cache keeps only the newest `N` answers. A retry that arrives after `N`
//! newer requests were answered is refused as
//! [`CounterTooOld`](crate::Error::CounterTooOld) that may have run
//! ([`Replayed`](crate::Error::Replayed) at protocol version 1), which a
//! client that sent it more than once sees as "the request may have been
//! handled, but its answer is gone";
//! four entries cover one client with one request in flight and a few
//! others. Each entry holds up to [`MAX_DATAGRAM`] bytes, so `N` costs about
//! 1.5 KiB of RAM.
//!
//! # What the cache knows was not run
//!
//! Counters are accepted in increasing order and every request run has its
//! answer stored, so the cache also remembers the newest counter whose
//! answer it dropped ([`ReplyCache::dropped_through`]: evicted, cleared, or
//! [`forget`](ReplyCache::forget)-ten because it could not be stored). A
//! request that verifies, is not in the cache and is not newer than the
//! verifier's last counter is refused as
//! [`CounterTooOld`](crate::Error::CounterTooOld), which tells the key
//! holder the counter to exceed, and whether the request
//!
//! - may have run since the cache was made, with its answer gone: its
//!   counter is at or below `dropped_through`;
//! - or certainly did not: any other counter.
//!
//! A cache starts empty with a switch, so a request run before a restart and
//! retried after it counts as not run: the restart lost its answer as
//! surely as a lost datagram would have.
//!
//! Only answers to requests that passed every check and were executed go in
//! the cache; refusals are not cached because they are stateless and a
//! retry of one gets the same refusal again.

use heapless::{Deque, Vec};

use crate::header::{Header, MAX_DATAGRAM, TAG_LEN};

/// What identifies one request datagram: its request id, counter and MAC
/// tag. The codec hands it out with every request that verifies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    request_id: u32,
    counter: u64,
    tag: [u8; TAG_LEN],
}

impl Fingerprint {
    pub(crate) const fn new(header: &Header, tag: [u8; TAG_LEN]) -> Fingerprint {
        Fingerprint {
            request_id: header.request_id,
            counter: header.counter,
            tag,
        }
    }

    /// The request id of the request.
    pub const fn request_id(&self) -> u32 {
        self.request_id
    }

    /// The counter of the request.
    pub const fn counter(&self) -> u64 {
        self.counter
    }
}

/// Why an answer was not stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheError {
    /// The answer is longer than a datagram, so it cannot have been sent.
    TooLong {
        /// Its length.
        len: usize,
    },
}

impl core::fmt::Display for CacheError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CacheError::TooLong { len } => {
                write!(
                    f,
                    "a {len}-byte answer is longer than a datagram and was not stored"
                )
            }
        }
    }
}

impl core::error::Error for CacheError {}

struct Entry {
    fingerprint: Fingerprint,
    response: Vec<u8, MAX_DATAGRAM>,
}

/// The encoded answers to the last `N` requests (see the module docs); `N`
/// is at least 1.
pub struct ReplyCache<const N: usize> {
    entries: Deque<Entry, N>,
    dropped_through: u64,
}

impl<const N: usize> ReplyCache<N> {
    /// An empty cache.
    pub const fn new() -> Self {
        ReplyCache {
            entries: Deque::new(),
            dropped_through: 0,
        }
    }

    /// The stored answer to the request with this fingerprint, if it is one
    /// of the last `N` answered.
    pub fn lookup(&self, fingerprint: &Fingerprint) -> Option<&[u8]> {
        self.entries
            .iter()
            .find(|e| e.fingerprint == *fingerprint)
            .map(|e| e.response.as_slice())
    }

    /// Stores the encoded answer to the request with this fingerprint,
    /// forgetting the oldest answer if the cache is full.
    pub fn insert(&mut self, fingerprint: Fingerprint, response: &[u8]) -> Result<(), CacheError> {
        let response = Vec::from_slice(response).map_err(|()| CacheError::TooLong {
            len: response.len(),
        })?;
        if let Some(entry) = self
            .entries
            .iter_mut()
            .find(|e| e.fingerprint == fingerprint)
        {
            entry.response = response;
            return Ok(());
        }
        if self.entries.is_full() {
            if let Some(oldest) = self.entries.pop_front() {
                self.forget(oldest.fingerprint);
            }
        }
        // Not full: either it had room or the oldest entry was just removed.
        let _ = self.entries.push_back(Entry {
            fingerprint,
            response,
        });
        Ok(())
    }

    /// How many answers are stored.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no answer is stored.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Forgets every answer (for example when the key changes).
    pub fn clear(&mut self) {
        while let Some(entry) = self.entries.pop_front() {
            self.forget(entry.fingerprint);
        }
    }

    /// Records that the request with this fingerprint was run but its
    /// answer is not kept (it could not be encoded or stored), so that a
    /// retry of it is refused as one that may have run.
    pub fn forget(&mut self, fingerprint: Fingerprint) {
        self.dropped_through = self.dropped_through.max(fingerprint.counter);
    }

    /// The newest counter of a request whose answer this cache dropped, 0
    /// if none: a request at or below it that is not in the cache may have
    /// been run (see the module docs).
    pub const fn dropped_through(&self) -> u64 {
        self.dropped_through
    }
}

impl<const N: usize> Default for ReplyCache<N> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ids::SwitchId;

    fn fp(request_id: u32, counter: u64, tag: u8) -> Fingerprint {
        Fingerprint::new(
            &Header::request(request_id, SwitchId(1), counter),
            [tag; TAG_LEN],
        )
    }

    #[test]
    fn a_stored_answer_is_found_only_by_its_exact_fingerprint() {
        let mut cache = ReplyCache::<4>::new();
        cache.insert(fp(1, 10, 0xaa), b"answer one").expect("fits");
        assert_eq!(cache.lookup(&fp(1, 10, 0xaa)), Some(&b"answer one"[..]));
        assert_eq!(cache.lookup(&fp(1, 11, 0xaa)), None, "other counter");
        assert_eq!(cache.lookup(&fp(2, 10, 0xaa)), None, "other request id");
        assert_eq!(cache.lookup(&fp(1, 10, 0xab)), None, "other datagram");
    }

    #[test]
    fn the_oldest_answer_is_forgotten_first() {
        let mut cache = ReplyCache::<2>::new();
        cache.insert(fp(1, 1, 1), b"1").expect("fits");
        cache.insert(fp(2, 2, 2), b"2").expect("fits");
        cache.insert(fp(3, 3, 3), b"3").expect("fits");
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.lookup(&fp(1, 1, 1)), None);
        assert_eq!(cache.lookup(&fp(2, 2, 2)), Some(&b"2"[..]));
        assert_eq!(cache.lookup(&fp(3, 3, 3)), Some(&b"3"[..]));
    }

    #[test]
    fn storing_the_same_fingerprint_again_replaces_its_answer() {
        let mut cache = ReplyCache::<2>::new();
        cache.insert(fp(1, 1, 1), b"first").expect("fits");
        cache.insert(fp(1, 1, 1), b"second").expect("fits");
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.lookup(&fp(1, 1, 1)), Some(&b"second"[..]));
    }

    #[test]
    fn the_newest_dropped_counter_is_remembered() {
        let mut cache = ReplyCache::<2>::new();
        assert_eq!(cache.dropped_through(), 0);
        cache.insert(fp(1, 10, 1), b"1").expect("fits");
        cache.insert(fp(2, 20, 2), b"2").expect("fits");
        cache.insert(fp(2, 20, 2), b"2 again").expect("fits");
        assert_eq!(cache.dropped_through(), 0, "a replaced answer is kept");
        cache.insert(fp(3, 30, 3), b"3").expect("fits");
        assert_eq!(cache.dropped_through(), 10, "request 1 was evicted");
        cache.forget(fp(4, 40, 4));
        assert_eq!(cache.dropped_through(), 40);
        cache.clear();
        assert_eq!(cache.dropped_through(), 40, "clearing drops 20 and 30");
        cache.insert(fp(5, 50, 5), b"5").expect("fits");
        cache.clear();
        assert_eq!(cache.dropped_through(), 50);
    }

    #[test]
    fn an_answer_longer_than_a_datagram_is_refused() {
        let mut cache = ReplyCache::<2>::new();
        let long = [0u8; MAX_DATAGRAM + 1];
        assert_eq!(
            cache.insert(fp(1, 1, 1), &long),
            Err(CacheError::TooLong {
                len: MAX_DATAGRAM + 1
            })
        );
        assert!(cache.is_empty());
        cache
            .insert(fp(1, 1, 1), &long[..MAX_DATAGRAM])
            .expect("a full datagram fits");
        cache.clear();
        assert!(cache.is_empty());
    }
}
