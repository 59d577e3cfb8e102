//! Messages to datagrams and back: framing, authentication and the order of
//! the checks a receiver makes.
//!
//! A switch checks a request datagram in this order, and stops at the first
//! failure:
//!
//! 1. no longer than [`MAX_DATAGRAM`], at least a header long, the magic,
//!    and the kind (request). Failures here are not answered: the datagram
//!    is not a weft request, and nothing identifies whom to answer;
//! 2. the MAC under the switch's key, refused as
//!    [`Error::Unauthenticated`] and nothing else;
//! 3. the lengths in the header against the datagram's length;
//! 4. the reply cache: a byte-identical repeat of a recently answered request
//!    is answered with the stored bytes ([`receive_request`] only);
//! 5. the protocol version, refused as [`Error::WrongVersion`];
//! 6. the body, refused as [`Error::Malformed`];
//! 7. the target switch, refused as [`Error::WrongSwitch`];
//! 8. the counter, refused as [`Error::CounterTooOld`] with the counter to
//!    exceed and whether an identical request may have run (its counter is
//!    at or below one whose answer the cache dropped; [`crate::cache`] has
//!    the reasoning). A request at a protocol version before the one that
//!    introduced `CounterTooOld` ([`Error::introduced_in`]) gets
//!    [`Error::Replayed`] instead.
//!
//! The counter is accepted last, so a request that is refused for any reason
//! does not use up its counter, and its retry gets the same refusal again.
//! Only a request whose MAC verified learns the counter floor.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::auth::{Key, Verifier};
use crate::cache::{Fingerprint, ReplyCache};
use crate::header::{
    Header, Kind, WireHeader, HEADER_LEN, MAX_DATAGRAM, OLDEST_PROTOCOL_VERSION, PROTOCOL_VERSION,
    TAG_LEN, TAG_OFFSET,
};
use crate::message::error::Error;
use crate::message::ids::SwitchId;
use crate::message::request::Request;
use crate::message::response::Response;

/// Why a message could not be encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// The datagram would be longer than [`MAX_DATAGRAM`].
    TooLarge {
        /// Its length.
        len: usize,
    },
    /// The output buffer is shorter than the datagram.
    BufferTooSmall {
        /// The datagram's length.
        need: usize,
    },
    /// Trailing bytes were given for a message that takes none.
    UnexpectedTrailing {
        /// How many.
        len: usize,
    },
    /// Postcard could not encode the body (a bug in a message type).
    Body(postcard::Error),
}

/// How a datagram with a valid MAC failed to make sense.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Malformation {
    /// The header's lengths do not add up to the datagram's length.
    LengthMismatch {
        /// Header, body and trailing lengths as the header states them.
        declared: usize,
        /// The datagram's length.
        actual: usize,
    },
    /// The body is not a postcard encoding of a known message.
    Body(postcard::Error),
    /// The body has bytes left over after the message.
    LeftoverBody {
        /// How many.
        len: usize,
    },
    /// Trailing bytes came with a message that takes none.
    UnexpectedTrailing {
        /// How many.
        len: usize,
    },
}

/// Why a datagram was not accepted.
///
/// The first variants mean the datagram is not a readable weft message and
/// is dropped silently; the others carry the header that was read, and
/// [`DecodeError::refusal`] turns them into the typed answer to send back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Shorter than the header.
    Truncated {
        /// The datagram's length.
        len: usize,
    },
    /// Longer than [`MAX_DATAGRAM`].
    TooLarge {
        /// The datagram's length.
        len: usize,
    },
    /// Not a weft datagram.
    BadMagic {
        /// The first four bytes.
        found: [u8; 4],
    },
    /// The kind byte is neither request nor response.
    UnknownKind {
        /// Its value.
        found: u8,
    },
    /// A response where a request was expected, or the reverse.
    WrongKind {
        /// What arrived.
        found: Kind,
    },
    /// The MAC does not verify under the key: the sender does not hold the
    /// key, or the datagram was altered.
    BadMac {
        /// The header as read (unauthenticated).
        header: Header,
    },
    /// The lengths or the body do not make sense.
    Malformed {
        /// The header.
        header: Header,
        /// What is wrong.
        cause: Malformation,
    },
    /// A request at a protocol version this crate does not speak.
    WrongVersion {
        /// The header.
        header: Header,
    },
    /// A request meant for another switch.
    WrongSwitch {
        /// The header.
        header: Header,
    },
    /// A request whose counter is not newer than the last accepted (and,
    /// with a reply cache, not a repeat of a kept answer).
    CounterTooOld {
        /// The header.
        header: Header,
        /// The last counter accepted: only counters above it are.
        accepted_above: u64,
        /// Whether an identical datagram may have run: its counter is at
        /// or below one whose answer is no longer kept (always so without
        /// a reply cache).
        may_have_run: bool,
    },
    /// A response, but not to the request that was sent (another request id
    /// or counter): a late answer to an earlier request.
    Unrelated {
        /// The header.
        header: Header,
    },
}

impl DecodeError {
    /// For a request that is answerable, the header and error of the
    /// refusal to send back (encode it with [`encode_response`] as
    /// [`Response::Error`]); `None` for a datagram that is dropped.
    pub fn refusal(&self, ours: SwitchId) -> Option<(Header, Error)> {
        let (header, error) = match self {
            DecodeError::Truncated { .. }
            | DecodeError::TooLarge { .. }
            | DecodeError::BadMagic { .. }
            | DecodeError::UnknownKind { .. }
            | DecodeError::WrongKind { .. }
            | DecodeError::Unrelated { .. } => return None,
            DecodeError::BadMac { header } => (header, Error::Unauthenticated),
            DecodeError::Malformed { header, .. } => (header, Error::Malformed),
            DecodeError::WrongVersion { header } => (
                header,
                Error::WrongVersion {
                    ours: PROTOCOL_VERSION,
                    oldest: OLDEST_PROTOCOL_VERSION,
                },
            ),
            DecodeError::WrongSwitch { header } => (header, Error::WrongSwitch { ours }),
            DecodeError::CounterTooOld {
                header,
                accepted_above,
                may_have_run,
            } => {
                let error = Error::CounterTooOld {
                    accepted_above: *accepted_above,
                    may_have_run: *may_have_run,
                };
                if header.version >= error.introduced_in() {
                    (header, error)
                } else {
                    (header, Error::Replayed)
                }
            }
        };
        Some((header.reply(ours), error))
    }
}

/// A request that passed every check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received<'d> {
    /// Its header.
    pub header: Header,
    /// The request.
    pub request: Request,
    /// The bulk bytes that trailed it (empty unless the request takes some).
    pub trailing: &'d [u8],
    /// What identifies it in the [`ReplyCache`].
    pub fingerprint: Fingerprint,
}

/// What a switch does with a request datagram that was accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incoming<'d, 'c> {
    /// A new request: execute it, encode the answer, store the answer in the
    /// reply cache under the request's fingerprint, and send it. An answer
    /// that cannot be stored is [`ReplyCache::forget`]-ed instead, so a
    /// retry is refused as possibly run.
    Execute(Received<'d>),
    /// A repeat of a request answered recently: send these bytes again.
    Resend(&'c [u8]),
}

/// A response that passed every check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply<'d> {
    /// Its header: the request's id and counter, and the switch that
    /// answered.
    pub header: Header,
    /// The response.
    pub response: Response,
    /// The bulk bytes that trailed it.
    pub trailing: &'d [u8],
}

/// Encodes a request into `out` and returns the datagram's length.
///
/// The same header (request id and counter) and request always give the
/// same bytes, so a retry can also re-encode instead of keeping the bytes.
pub fn encode_request(
    header: &Header,
    request: &Request,
    trailing: &[u8],
    key: &Key,
    out: &mut [u8],
) -> Result<usize, EncodeError> {
    if !trailing.is_empty() && !request.takes_trailing() {
        return Err(EncodeError::UnexpectedTrailing {
            len: trailing.len(),
        });
    }
    encode(Kind::Request, header, request, trailing, key, out)
}

/// Encodes a response into `out` and returns the datagram's length.
/// `header` is the request's header [`reply`](Header::reply)-ed.
pub fn encode_response(
    header: &Header,
    response: &Response,
    trailing: &[u8],
    key: &Key,
    out: &mut [u8],
) -> Result<usize, EncodeError> {
    if !trailing.is_empty() && !response.takes_trailing() {
        return Err(EncodeError::UnexpectedTrailing {
            len: trailing.len(),
        });
    }
    encode(Kind::Response, header, response, trailing, key, out)
}

/// Checks and decodes a request datagram (steps 1–3 and 5–8 of the module
/// docs): without a reply cache nothing tells what ran, so a counter not
/// newer than the last accepted is refused as
/// [`DecodeError::CounterTooOld`] that may have run. A server uses
/// [`receive_request`].
pub fn decode_request<'d>(
    datagram: &'d [u8],
    verifier: &mut Verifier,
) -> Result<Received<'d>, DecodeError> {
    let (wire, body, trailing) = open(datagram, Kind::Request, verifier.key())?;
    let dropped_through = verifier.last_accepted();
    accept_request(wire, body, trailing, verifier, dropped_through)
}

/// Checks a request datagram and tells the server what to do with it: run a
/// new request, or resend the stored answer to a repeat (steps 1–8 of the
/// module docs).
pub fn receive_request<'d, 'c, const N: usize>(
    datagram: &'d [u8],
    verifier: &mut Verifier,
    cache: &'c ReplyCache<N>,
) -> Result<Incoming<'d, 'c>, DecodeError> {
    let (wire, body, trailing) = open(datagram, Kind::Request, verifier.key())?;
    if let Some(stored) = cache.lookup(&Fingerprint::new(&wire.header, wire.tag)) {
        return Ok(Incoming::Resend(stored));
    }
    accept_request(wire, body, trailing, verifier, cache.dropped_through()).map(Incoming::Execute)
}

/// Checks and decodes a response datagram to the request that was sent with
/// header `sent`. The response's version is not checked: variants are only
/// appended, and a switch answers with the variants of the request's version.
pub fn decode_response<'d>(
    datagram: &'d [u8],
    key: &Key,
    sent: &Header,
) -> Result<Reply<'d>, DecodeError> {
    let (wire, body, trailing) = open(datagram, Kind::Response, key)?;
    let header = wire.header;
    if header.request_id != sent.request_id || header.counter != sent.counter {
        return Err(DecodeError::Unrelated { header });
    }
    let response: Response = decode_body(&header, body)?;
    if !trailing.is_empty() && !response.takes_trailing() {
        return Err(DecodeError::Malformed {
            header,
            cause: Malformation::UnexpectedTrailing {
                len: trailing.len(),
            },
        });
    }
    Ok(Reply {
        header,
        response,
        trailing,
    })
}

fn encode<T: Serialize>(
    kind: Kind,
    header: &Header,
    body: &T,
    trailing: &[u8],
    key: &Key,
    out: &mut [u8],
) -> Result<usize, EncodeError> {
    let body_len = postcard::serialize_with_flavor(body, postcard::ser_flavors::Size::default())
        .map_err(EncodeError::Body)?;
    let len = HEADER_LEN + body_len + trailing.len();
    if len > MAX_DATAGRAM {
        return Err(EncodeError::TooLarge { len });
    }
    let Some(datagram) = out.get_mut(..len) else {
        return Err(EncodeError::BufferTooSmall { need: len });
    };
    let (head, payload) = datagram.split_at_mut(HEADER_LEN);
    let (body_out, trailing_out) = payload.split_at_mut(body_len);
    postcard::to_slice(body, body_out).map_err(EncodeError::Body)?;
    trailing_out.copy_from_slice(trailing);
    let wire = WireHeader {
        header: *header,
        kind,
        body_len,
        trailing_len: trailing.len(),
        tag: [0; TAG_LEN],
    };
    if let Some(head) = head.first_chunk_mut::<HEADER_LEN>() {
        wire.write(head);
    }
    let tag = key.mac_datagram(datagram);
    datagram[TAG_OFFSET..TAG_OFFSET + TAG_LEN].copy_from_slice(&tag);
    Ok(len)
}

/// Steps 1–3: reads the header, verifies the MAC and splits the payload.
fn open<'d>(
    datagram: &'d [u8],
    expected: Kind,
    key: &Key,
) -> Result<(WireHeader, &'d [u8], &'d [u8]), DecodeError> {
    if datagram.len() > MAX_DATAGRAM {
        return Err(DecodeError::TooLarge {
            len: datagram.len(),
        });
    }
    let wire = WireHeader::parse(datagram)?;
    if wire.kind != expected {
        return Err(DecodeError::WrongKind { found: wire.kind });
    }
    let header = wire.header;
    if !key.verify_datagram(datagram, &wire.tag) {
        return Err(DecodeError::BadMac { header });
    }
    let declared = HEADER_LEN + wire.body_len + wire.trailing_len;
    if declared != datagram.len() {
        return Err(DecodeError::Malformed {
            header,
            cause: Malformation::LengthMismatch {
                declared,
                actual: datagram.len(),
            },
        });
    }
    let (body, trailing) = datagram[HEADER_LEN..].split_at(wire.body_len);
    Ok((wire, body, trailing))
}

/// Steps 5–8 for a request whose MAC verified; a request at or below
/// `dropped_through` may have run with its answer gone.
fn accept_request<'d>(
    wire: WireHeader,
    body: &[u8],
    trailing: &'d [u8],
    verifier: &mut Verifier,
    dropped_through: u64,
) -> Result<Received<'d>, DecodeError> {
    let header = wire.header;
    if !(OLDEST_PROTOCOL_VERSION..=PROTOCOL_VERSION).contains(&header.version) {
        return Err(DecodeError::WrongVersion { header });
    }
    let request: Request = decode_body(&header, body)?;
    if !trailing.is_empty() && !request.takes_trailing() {
        return Err(DecodeError::Malformed {
            header,
            cause: Malformation::UnexpectedTrailing {
                len: trailing.len(),
            },
        });
    }
    let for_us = header.switch == verifier.switch()
        || (header.switch == SwitchId::ANY && request.allows_any_switch());
    if !for_us {
        return Err(DecodeError::WrongSwitch { header });
    }
    if !verifier.accept_counter(header.counter) {
        return Err(DecodeError::CounterTooOld {
            header,
            accepted_above: verifier.last_accepted(),
            // Counter 0 is never accepted, so it never ran.
            may_have_run: (1..=dropped_through).contains(&header.counter),
        });
    }
    Ok(Received {
        header,
        request,
        trailing,
        fingerprint: Fingerprint::new(&header, wire.tag),
    })
}

fn decode_body<T: DeserializeOwned>(header: &Header, body: &[u8]) -> Result<T, DecodeError> {
    match postcard::take_from_bytes::<T>(body) {
        Ok((value, [])) => Ok(value),
        Ok((_, rest)) => Err(DecodeError::Malformed {
            header: *header,
            cause: Malformation::LeftoverBody { len: rest.len() },
        }),
        Err(e) => Err(DecodeError::Malformed {
            header: *header,
            cause: Malformation::Body(e),
        }),
    }
}

impl core::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            EncodeError::TooLarge { len } => write!(
                f,
                "the message would take {len} bytes, more than one {MAX_DATAGRAM}-byte datagram; \
                 send less trailing data"
            ),
            EncodeError::BufferTooSmall { need } => {
                write!(
                    f,
                    "the output buffer is too small: the datagram needs {need} bytes"
                )
            }
            EncodeError::UnexpectedTrailing { len } => {
                write!(
                    f,
                    "{len} trailing bytes were given for a message that takes none"
                )
            }
            EncodeError::Body(e) => write!(f, "the message body could not be encoded: {e}"),
        }
    }
}

impl core::error::Error for EncodeError {}

impl core::fmt::Display for Malformation {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Malformation::LengthMismatch { declared, actual } => {
                write!(
                    f,
                    "the header announces {declared} bytes but the datagram has {actual}"
                )
            }
            Malformation::Body(e) => write!(f, "the body does not decode ({e})"),
            Malformation::LeftoverBody { len } => {
                write!(f, "{len} bytes are left over after the body")
            }
            Malformation::UnexpectedTrailing { len } => {
                write!(
                    f,
                    "{len} trailing bytes came with a message that takes none"
                )
            }
        }
    }
}

impl core::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DecodeError::Truncated { len } => {
                write!(f, "a {len}-byte datagram is shorter than the {HEADER_LEN}-byte weft header")
            }
            DecodeError::TooLarge { len } => {
                write!(f, "a {len}-byte datagram is longer than the {MAX_DATAGRAM} bytes weft allows")
            }
            DecodeError::BadMagic { found } => {
                write!(f, "not a weft datagram (it starts with {found:02x?}); is something else on this port?")
            }
            DecodeError::UnknownKind { found } => write!(f, "unknown message kind {found}"),
            DecodeError::WrongKind { found } => write!(f, "a {found:?} arrived where the other kind was expected"),
            DecodeError::BadMac { .. } => f.write_str(
                "the message failed authentication: the key differs from the switch's \
                 (check the key file, or whether the switch runs in insecure mode)",
            ),
            DecodeError::Malformed { cause, .. } => write!(f, "malformed message: {cause}"),
            DecodeError::WrongVersion { header } => write!(
                f,
                "protocol version {} is not between {OLDEST_PROTOCOL_VERSION} and {PROTOCOL_VERSION}",
                header.version
            ),
            DecodeError::WrongSwitch { header } => {
                write!(f, "the request is meant for switch {:#x}", header.switch.0)
            }
            DecodeError::CounterTooOld {
                header,
                accepted_above,
                may_have_run,
            } => {
                write!(
                    f,
                    "counter {} is not above {accepted_above}, the last accepted; a client's \
                     clock may be behind, or the switch restarted",
                    header.counter
                )?;
                if *may_have_run {
                    f.write_str(" (an identical request may have run, its answer gone)")?;
                }
                Ok(())
            }
            DecodeError::Unrelated { header } => write!(
                f,
                "a response to another request (id {}, counter {}) arrived; it is ignored",
                header.request_id, header.counter
            ),
        }
    }
}

impl core::error::Error for DecodeError {}
