//! weft's management protocol.
//!
//! One UDP datagram per message between `weftctl` (or any client) and the
//! firmware's smoltcp server: a fixed header (magic, version, request id,
//! target switch) and a postcard-encoded request or response. Like the
//! wire layer of a network stack this crate does no I/O; the firmware and
//! the client both depend on it, so they cannot disagree on an encoding.
//!
//! The messages arrive with the management plane; this crate reserves the
//! place for them.
#![no_std]
#![forbid(unsafe_code)]

/// The UDP port a weft switch listens on for management requests.
pub const MANAGEMENT_UDP_PORT: u16 = 7_330;
