//! The fixed header at the front of every datagram, and its byte layout.
//!
//! Unlike the body, the header is not postcard: its fields are fixed-width
//! and little-endian at fixed offsets, and the layout below is frozen for
//! every protocol version, so any client can read the version, request id
//! and counter of any answer, including a `WrongVersion` refusal from a
//! switch newer or older than itself.
//!
//! | offset | size | field |
//! |-------:|-----:|-------|
//! | 0  | 4  | magic, `b"WEFT"` |
//! | 4  | 2  | protocol version, u16 LE |
//! | 6  | 1  | kind: 1 = request, 2 = response |
//! | 7  | 1  | flags: 0; no meaning yet, covered by the MAC |
//! | 8  | 4  | request id, u32 LE (a response echoes it) |
//! | 12 | 8  | switch id, u64 LE (request: the target; response: the responder) |
//! | 20 | 2  | body length in bytes, u16 LE |
//! | 22 | 2  | trailing length in bytes, u16 LE |
//! | 24 | 8  | counter, u64 LE (a response echoes it) — auth block |
//! | 32 | 32 | HMAC-SHA-256 tag — auth block |
//! | 64 | body length | body: the postcard-encoded request or response |
//! | 64 + body length | trailing length | trailing bulk bytes |
//!
//! The tag is the HMAC-SHA-256 (RFC 2104, FIPS 180-4) of bytes 0..32 followed
//! by every byte from 64 to the end, that is everything but the tag itself.

use crate::codec::DecodeError;
use crate::message::ids::SwitchId;

/// The first four bytes of every weft datagram.
pub const MAGIC: [u8; 4] = *b"WEFT";

/// The protocol version this crate speaks: the body schema in use. It goes
/// up when a request or response variant is appended, so a switch can tell
/// an older client from a newer one.
///
/// - 1: the first published schema.
/// - 2: [`Error::FabricOwnedRegister`](crate::Error::FabricOwnedRegister)
///   and [`Error::CounterTooOld`](crate::Error::CounterTooOld); the event
///   kinds `PortLinkUp`, `PortLinkDown`, `HotPlugSignalled`,
///   `BindingNotRestored` and `IsolationDrops` of
///   [`EventKind`](crate::EventKind).
/// - 3: the data plane's own counters as [`CounterKind`](crate::CounterKind)s
///   (`TxPosted` to `DroppedOutsideAperture`), the event kind `PortControlled`,
///   and the errors [`Error::HostPort`](crate::Error::HostPort) and
///   [`Error::PortDisabled`](crate::Error::PortDisabled).
/// - 4: the errors [`Error::UnbindInProgress`](crate::Error::UnbindInProgress),
///   the refusal of an unbind of a slot whose unbind waits for its host, and
///   [`Error::FabricOwnedCsr`](crate::Error::FabricOwnedCsr), the refusal of a
///   CSR write to a register the fabric manager programs.
/// - 5: the event kind `FirmwareCheckedIn` of [`EventKind`](crate::EventKind).
/// - 6: a port whose device stopped answering during enumeration: the port
///   role [`PortRole::NotResponding`](crate::PortRole::NotResponding) (an
///   older client is told `Unused`) and the event kind `PortNotResponding`.
/// - 7: the event kind `DeviceNotResponding`: a device on a conventional
///   switch's downstream port stopped answering during enumeration.
pub const PROTOCOL_VERSION: u16 = 7;

/// The oldest protocol version this crate still accepts. Because variants
/// are only appended, every body an older client can send still decodes.
pub const OLDEST_PROTOCOL_VERSION: u16 = 1;

/// The size of the fixed header in bytes.
pub const HEADER_LEN: usize = 64;

/// The largest datagram: an Ethernet MTU of 1500 bytes less 20 of IPv4
/// header (RFC 791, no options) and 8 of UDP header (RFC 768), so that a
/// message never needs IP fragmentation.
pub const MAX_DATAGRAM: usize = 1500 - 20 - 8;

/// The most bytes of body and trailing data together.
pub const MAX_PAYLOAD: usize = MAX_DATAGRAM - HEADER_LEN;

pub(crate) const MAC_INPUT_END: usize = 32;
pub(crate) const TAG_OFFSET: usize = 32;
pub(crate) const TAG_LEN: usize = 32;

/// Whether a datagram is a request or a response. The kind is covered by the
/// MAC, so a request can never be reflected back as a valid response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Client to switch.
    Request = 1,
    /// Switch to client.
    Response = 2,
}

/// The header fields that a sender chooses and a receiver acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The protocol version of the body.
    pub version: u16,
    /// Chosen by the client, echoed in the response; a retry keeps it.
    pub request_id: u32,
    /// In a request, the switch it is meant for; in a response, the switch
    /// that answered.
    pub switch: SwitchId,
    /// In a request, a number greater than any the client used before with
    /// this switch's key; in a response, the counter of the request it
    /// answers.
    pub counter: u64,
}

impl Header {
    /// The header of a request at this crate's protocol version.
    pub const fn request(request_id: u32, switch: SwitchId, counter: u64) -> Header {
        Header {
            version: PROTOCOL_VERSION,
            request_id,
            switch,
            counter,
        }
    }

    /// The header of the response to the request with this header: the same
    /// request id and counter, this crate's version, and the responder's
    /// identity.
    pub const fn reply(&self, responder: SwitchId) -> Header {
        Header {
            version: PROTOCOL_VERSION,
            request_id: self.request_id,
            switch: responder,
            counter: self.counter,
        }
    }
}

/// A header as read from the wire, with the parts the codec checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WireHeader {
    pub header: Header,
    pub kind: Kind,
    pub body_len: usize,
    pub trailing_len: usize,
    pub tag: [u8; TAG_LEN],
}

impl WireHeader {
    /// Writes the header with a zero tag; the codec fills the tag in last.
    pub(crate) fn write(&self, out: &mut [u8; HEADER_LEN]) {
        let h = &self.header;
        out[0..4].copy_from_slice(&MAGIC);
        out[4..6].copy_from_slice(&h.version.to_le_bytes());
        out[6] = self.kind as u8;
        out[7] = 0;
        out[8..12].copy_from_slice(&h.request_id.to_le_bytes());
        out[12..20].copy_from_slice(&h.switch.0.to_le_bytes());
        // The codec only builds headers for payloads within MAX_PAYLOAD, so
        // both lengths fit 16 bits.
        out[20..22].copy_from_slice(&(self.body_len as u16).to_le_bytes());
        out[22..24].copy_from_slice(&(self.trailing_len as u16).to_le_bytes());
        out[24..32].copy_from_slice(&h.counter.to_le_bytes());
        out[TAG_OFFSET..TAG_OFFSET + TAG_LEN].copy_from_slice(&self.tag);
    }

    /// Reads the header at the front of `datagram`, checking only what is
    /// needed to read it (length, magic, kind); the codec checks the rest.
    pub(crate) fn parse(datagram: &[u8]) -> Result<WireHeader, DecodeError> {
        let Some(bytes) = datagram.first_chunk::<HEADER_LEN>() else {
            return Err(DecodeError::Truncated {
                len: datagram.len(),
            });
        };
        let magic = field::<4>(bytes, 0);
        if magic != MAGIC {
            return Err(DecodeError::BadMagic { found: magic });
        }
        let kind = match bytes[6] {
            1 => Kind::Request,
            2 => Kind::Response,
            found => return Err(DecodeError::UnknownKind { found }),
        };
        Ok(WireHeader {
            header: Header {
                version: u16::from_le_bytes(field(bytes, 4)),
                request_id: u32::from_le_bytes(field(bytes, 8)),
                switch: SwitchId(u64::from_le_bytes(field(bytes, 12))),
                counter: u64::from_le_bytes(field(bytes, 24)),
            },
            kind,
            body_len: usize::from(u16::from_le_bytes(field(bytes, 20))),
            trailing_len: usize::from(u16::from_le_bytes(field(bytes, 22))),
            tag: field(bytes, TAG_OFFSET),
        })
    }
}

/// The `N` bytes at offset `at` of a header; every call names a field that
/// lies inside the header, so the range is always in bounds.
fn field<const N: usize>(bytes: &[u8; HEADER_LEN], at: usize) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[at..at + N]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> WireHeader {
        WireHeader {
            header: Header {
                version: 0x0102,
                request_id: 0x0304_0506,
                switch: SwitchId(0x0708_090a_0b0c_0d0e),
                counter: 0x1112_1314_1516_1718,
            },
            kind: Kind::Response,
            body_len: 0x191a,
            trailing_len: 0x1b1c,
            tag: [0xee; TAG_LEN],
        }
    }

    #[test]
    fn fields_sit_at_the_documented_offsets_little_endian() {
        let mut out = [0; HEADER_LEN];
        sample().write(&mut out);
        assert_eq!(&out[0..4], b"WEFT");
        assert_eq!(&out[4..6], &[0x02, 0x01]);
        assert_eq!(out[6], 2);
        assert_eq!(out[7], 0);
        assert_eq!(&out[8..12], &[0x06, 0x05, 0x04, 0x03]);
        assert_eq!(
            &out[12..20],
            &[0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08, 0x07]
        );
        assert_eq!(&out[20..22], &[0x1a, 0x19]);
        assert_eq!(&out[22..24], &[0x1c, 0x1b]);
        assert_eq!(
            &out[24..32],
            &[0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11]
        );
        assert_eq!(&out[32..64], &[0xee; 32]);
    }

    #[test]
    fn parse_reads_back_what_write_wrote() {
        let mut out = [0; HEADER_LEN];
        sample().write(&mut out);
        assert_eq!(WireHeader::parse(&out), Ok(sample()));
    }

    #[test]
    fn parse_refuses_short_foreign_and_unknown_kinds() {
        let mut out = [0; HEADER_LEN];
        sample().write(&mut out);
        assert_eq!(
            WireHeader::parse(&out[..63]),
            Err(DecodeError::Truncated { len: 63 })
        );
        let mut foreign = out;
        foreign[0] = b'X';
        assert_eq!(
            WireHeader::parse(&foreign),
            Err(DecodeError::BadMagic { found: *b"XEFT" })
        );
        let mut odd = out;
        odd[6] = 7;
        assert_eq!(
            WireHeader::parse(&odd),
            Err(DecodeError::UnknownKind { found: 7 })
        );
    }

    #[test]
    fn max_datagram_is_the_ethernet_mtu_less_ip_and_udp() {
        assert_eq!(MAX_DATAGRAM, 1472);
        assert_eq!(MAX_PAYLOAD, 1408);
    }
}
