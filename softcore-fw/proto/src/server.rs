//! A switch's side of the exchange: one datagram in, the answer's bytes out.
//!
//! Every transport that serves weft requests — the firmware's smoltcp
//! server, the simulator's UDP port — does the same with a datagram: check
//! it with [`receive_request`] (MAC, replay counter, target switch,
//! version), answer a repeat from the [`ReplyCache`] without running it
//! again, run a new request and remember its answer, and refuse anything
//! else with the typed [`Error`](crate::Error) the checks produced.
//! [`Responder`] is that sequence once, so the transports cannot drift
//! apart; what running a request means is the caller's closure.

use crate::auth::{Key, Verifier};
use crate::cache::ReplyCache;
use crate::codec::{encode_response, receive_request, Incoming};
use crate::message::ids::SwitchId;
use crate::message::request::Request;
use crate::message::response::Response;

/// A switch's request checker and memory of recent answers; `N` answers
/// are kept for retried requests (see [`crate::cache`] for the cost).
pub struct Responder<const N: usize> {
    verifier: Verifier,
    cache: ReplyCache<N>,
}

impl<const N: usize> Responder<N> {
    /// A responder checking requests with `verifier`, with no answers kept yet.
    pub const fn new(verifier: Verifier) -> Self {
        Responder {
            verifier,
            cache: ReplyCache::new(),
        }
    }

    /// The verifier: the switch's identity, its key and the last counter accepted.
    pub const fn verifier(&self) -> &Verifier {
        &self.verifier
    }

    /// The switch whose requests are answered.
    pub const fn switch(&self) -> SwitchId {
        self.verifier.switch()
    }

    /// How many answers are kept for retries.
    pub fn cached_answers(&self) -> usize {
        self.cache.len()
    }

    /// Checks from now on with `key` (a key provisioned at run time). The
    /// last accepted counter is kept, so a request captured under the old
    /// key stays a replay; answers kept under the old key are forgotten.
    pub fn change_key(&mut self, key: Key) {
        self.verifier = Verifier::resume(self.switch(), key, self.verifier.last_accepted());
        self.cache.clear();
    }

    /// Writes the answer to `datagram` into `out` and returns its length,
    /// or 0 for a datagram that gets none (not a weft request, or `out` is
    /// too short for the answer).
    ///
    /// A new request that passes every check is run by `execute` (given
    /// the request and its trailing bulk bytes) and its encoded answer is
    /// kept, in the form the request's protocol version decodes
    /// ([`Response::downgrade_for`]); a byte-identical repeat of a recent
    /// request gets the kept bytes; a refused request gets
    /// [`Response::Error`] with the reason, under the switch's key. A
    /// request whose MAC verified but whose counter is too old learns the
    /// counter to exceed and whether it may have run already
    /// ([`Error::CounterTooOld`](crate::Error::CounterTooOld);
    /// [`crate::cache`] explains which).
    pub fn answer(
        &mut self,
        datagram: &[u8],
        out: &mut [u8],
        execute: impl FnOnce(&Request, &[u8]) -> Response,
    ) -> usize {
        let switch = self.verifier.switch();
        match receive_request(datagram, &mut self.verifier, &self.cache) {
            Ok(Incoming::Resend(bytes)) => copy(bytes, out),
            Ok(Incoming::Execute(received)) => {
                let mut response = execute(&received.request, received.trailing);
                // Only what the request's version knows (crate docs, versioning rules).
                response.downgrade_for(received.header.version);
                let header = received.header.reply(switch);
                let stored = encode_response(&header, &response, &[], self.verifier.key(), out)
                    .map_err(|_| ())
                    .and_then(|n| {
                        self.cache
                            .insert(received.fingerprint, &out[..n])
                            .map(|()| n)
                            .map_err(|_| ())
                    });
                stored.unwrap_or_else(|()| {
                    self.cache.forget(received.fingerprint);
                    0
                })
            }
            Err(refused) => match refused.refusal(switch) {
                Some((header, error)) => encode_response(
                    &header,
                    &Response::Error(error),
                    &[],
                    self.verifier.key(),
                    out,
                )
                .unwrap_or(0),
                None => 0,
            },
        }
    }
}

/// Copies `bytes` into `out` if they fit; their length, or 0.
fn copy(bytes: &[u8], out: &mut [u8]) -> usize {
    match out.get_mut(..bytes.len()) {
        Some(into) => {
            into.copy_from_slice(bytes);
            bytes.len()
        }
        None => 0,
    }
}
