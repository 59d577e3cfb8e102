//! weft's management protocol.
//!
//! One UDP datagram per message between `weftctl` (or any client) and the
//! firmware's smoltcp server, to [`MANAGEMENT_UDP_PORT`]. Like the wire layer
//! of a network stack this crate does no I/O and holds no state beyond what
//! a caller gives it; the firmware and the client both depend on it, so they
//! cannot disagree on an encoding. It is `no_std` and never allocates: every
//! capacity is a named constant.
//!
//! # A datagram
//!
//! A datagram is at most [`MAX_DATAGRAM`] (1472) bytes: a fixed 64-byte
//! header (magic, protocol version, kind, request id, target switch, lengths,
//! and the auth block of counter and HMAC tag; the byte layout is in
//! [`header`]), then the body, a [`Request`] or [`Response`] encoded with
//! postcard 1.x, then optional trailing bulk bytes (a firmware chunk). The
//! header is fixed-width little-endian rather than postcard so that its
//! layout never depends on the version it announces.
//!
//! # Versioning rules
//!
//! - The header layout and the MAC construction never change.
//! - Enum variants in messages are only **appended**, never reordered or
//!   removed, and fields of a variant never change: postcard encodes a
//!   variant by its position and a struct by its field order. A change
//!   appends a new variant instead.
//! - Every such addition bumps [`PROTOCOL_VERSION`]. A switch accepts
//!   requests from [`OLDEST_PROTOCOL_VERSION`] to its own version (an older
//!   client's bodies still decode, since nothing it knows has moved); a
//!   request from outside that range is answered with
//!   [`Error::WrongVersion`] carrying the switch's versions, which any
//!   client can read because the header and that error never move.
//! - A switch answers only with variants known at the request's version.
//! - `tests/golden.rs` pins the bytes of every variant of [`Request`],
//!   [`Response`] and [`Error`], and of whole datagrams. Those bytes are never
//!   changed; a new variant gets a new vector.
//!
//! # Authentication and replay
//!
//! Every datagram carries an HMAC-SHA-256 under the switch's [`Key`] over
//! everything but the tag, and every request a counter that must exceed the
//! last one the switch's [`Verifier`] accepted. A response echoes the
//! request's id and counter under the same MAC, so a client can tell its
//! answer from a replayed old one. A request whose MAC fails is answered
//! only with [`Error::Unauthenticated`]. A request that verifies but whose
//! counter is too old is answered with [`Error::CounterTooOld`], naming the
//! counter to exceed and whether the request may have run, so that a client
//! whose clock is behind the switch's floor (after a restart, the floor
//! resumes from a mark above the last accepted counter) sends it again as a
//! new request instead of waiting for its clock to catch up. Insecure mode
//! is the publicly known [`Key::insecure_public`] and exists only when
//! asked for by that name. The
//! [`auth`] module documents the counter policy and how the key is
//! provisioned.
//!
//! # Retries
//!
//! A client that hears nothing resends the same bytes: same request id, same
//! counter. The switch answers a repeat of one of its last few requests from
//! its [`ReplyCache`] with the identical bytes, without executing it again
//! and without refusing it as a replay ([`cache`] has the details). On
//! [`Error::Busy`] a client waits `retry_after_ms` and sends a *new* request
//! (new id and counter), since the busy answer is the stored answer to the
//! old one. On [`Error::CounterTooOld`] a client raises its counter above
//! the one named ([`ClientCounter::raise_above`]) and sends a new request
//! once, unless it sent the request more than once and is told that it may
//! have run. Actions that must not run twice (firmware commit, reset) are
//! two-phase: an arm request returns a [`Token`] that the trigger presents.
//! Long operations answer [`Response::InProgress`] and are polled with
//! [`Request::OperationStatus`].
//!
//! # Example
//!
//! ```
//! use weft_proto::{
//!     decode_response, encode_request, encode_response, receive_request, FabricId, Header, HostIndex, Incoming,
//!     Key, OperationId, ReplyCache, Request, Response, SlotIndex, SwitchId, Verifier, MAX_DATAGRAM,
//! };
//!
//! let key = Key::parse_hex("8f14e45fceea167a5a36dedd4bea2543c4ca4238a0b923820dcc509a6f75849b")?;
//! let switch = SwitchId(0x5745_4654_0001);
//!
//! // The client: bind one GPU function to host 1, slot 0.
//! let mut functions = weft_proto::heapless::Vec::new();
//! functions.push(FabricId::from(weft_pcie::Bdf::new(3, 0, 0))).expect("room for one");
//! let request = Request::Bind { host: HostIndex(1), slot: SlotIndex(0), functions, if_generation: None };
//! let sent = Header::request(7, switch, 1_700_000_000_000_000);
//! let mut datagram = [0u8; MAX_DATAGRAM];
//! let len = encode_request(&sent, &request, &[], &key, &mut datagram)?;
//!
//! // The switch: check, run, answer, and remember the answer.
//! let mut verifier = Verifier::new(switch, key.clone());
//! let mut cache = ReplyCache::<4>::new();
//! let mut answer = [0u8; MAX_DATAGRAM];
//! let answer_len = match receive_request(&datagram[..len], &mut verifier, &cache) {
//!     Ok(Incoming::Execute(received)) => {
//!         assert_eq!(received.request, request);
//!         let response = Response::InProgress { op: OperationId(42) };
//!         let n = encode_response(&received.header.reply(switch), &response, &[], verifier.key(), &mut answer)?;
//!         cache.insert(received.fingerprint, &answer[..n]).expect("a datagram fits");
//!         n
//!     }
//!     Ok(Incoming::Resend(_)) => unreachable!("first time"),
//!     Err(refused) => match refused.refusal(switch) {
//!         Some((header, error)) => encode_response(&header, &Response::Error(error), &[], &key, &mut answer)?,
//!         None => 0, // not a weft request: drop it
//!     },
//! };
//!
//! // The client reads its answer.
//! let reply = decode_response(&answer[..answer_len], &key, &sent)?;
//! assert_eq!(reply.response, Response::InProgress { op: OperationId(42) });
//!
//! // The answer was lost and the client resends the same bytes: the switch
//! // sends the same answer again instead of binding twice.
//! match receive_request(&datagram[..len], &mut verifier, &cache) {
//!     Ok(Incoming::Resend(bytes)) => assert_eq!(bytes, &answer[..answer_len]),
//!     other => panic!("expected a resend, got {other:?}"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![no_std]
#![forbid(unsafe_code)]

pub mod auth;
pub mod cache;
pub mod codec;
pub mod header;
pub mod message;
pub mod server;

/// The `heapless` crate the messages' bounded strings and lists come from,
/// so that a client builds them with the same version.
pub use heapless;

pub use auth::{ClientCounter, Key, KeyParseError, Verifier, KEY_LEN};
pub use cache::{CacheError, Fingerprint, ReplyCache};
pub use codec::{
    decode_request, decode_response, encode_request, encode_response, receive_request, DecodeError,
    EncodeError, Incoming, Malformation, Received, Reply,
};
pub use header::{
    Header, Kind, HEADER_LEN, MAGIC, MAX_DATAGRAM, MAX_PAYLOAD, OLDEST_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
};
pub use message::error::{CompletionStatus, Error, FlashOp};
pub use message::fabric::*;
pub use message::ids::*;
pub use message::ops::*;
pub use message::request::Request;
pub use message::response::Response;
pub use server::Responder;

/// The UDP port a weft switch listens on for management requests.
pub const MANAGEMENT_UDP_PORT: u16 = 7_330;

/// The IPv4 address a switch's management port has until one is configured
/// (the firmware's console `ip` command): 192.168.70.2, a private address
/// (RFC 1918) that a bench host reaches as 192.168.70.1.
pub const DEFAULT_IPV4_ADDRESS: [u8; 4] = [192, 168, 70, 2];

/// The prefix length of [`DEFAULT_IPV4_ADDRESS`]'s subnet: a /24.
pub const DEFAULT_IPV4_PREFIX_LEN: u8 = 24;
