//! A whole TLP in a buffer: prefixes, header, payload and digest, with its length checked
//! (PCIe Base 6.0 §2.1.2, §2.2.2, §2.2.3).

use super::classify::DIGEST_LEN;
use super::error::TlpError;
use super::header::Header;
use super::prefix::Prefixes;

/// One TLP, borrowing its payload from the buffer it was parsed from or will be written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tlp<'a> {
    /// The TLP Prefixes ahead of the header.
    pub prefixes: Prefixes,
    /// The header.
    pub header: Header,
    /// The data payload, `header.payload_len()` bytes.
    pub payload: &'a [u8],
    /// The TLP Digest (ECRC) DW, present exactly when the header's TD is set.
    /// Its value is not checked here.
    pub digest: Option<u32>,
}

impl<'a> Tlp<'a> {
    /// Parses a buffer that holds exactly one TLP, and checks that its length
    /// matches what Fmt, Type, Length and TD announce (§2.2.2, §2.2.3: a
    /// mismatch is a Malformed TLP).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, TlpError> {
        let (prefixes, prefix_len) = Prefixes::decode(bytes)?;
        let rest = &bytes[prefix_len..];
        let header = Header::decode(rest)?;
        let expected = header.total_len(prefixes.len());
        if bytes.len() != expected {
            return Err(TlpError::LengthMismatch {
                expected,
                got: bytes.len(),
            });
        }
        let payload_start = header.header_len();
        let payload_end = payload_start + header.payload_len();
        let payload = &rest[payload_start..payload_end];
        let digest = header.digest_present.then(|| {
            let d = &rest[payload_end..payload_end + DIGEST_LEN];
            u32::from_be_bytes([d[0], d[1], d[2], d[3]])
        });
        Ok(Tlp {
            prefixes,
            header,
            payload,
            digest,
        })
    }

    /// Bytes the TLP occupies on the wire: prefixes, header, payload and digest.
    pub const fn wire_len(&self) -> usize {
        self.header.total_len(self.prefixes.len())
    }

    /// Writes the TLP to the start of `out`, returning its length. The payload
    /// and digest must agree with the header's Length and TD.
    pub fn emit(&self, out: &mut [u8]) -> Result<usize, TlpError> {
        let expected = self.header.payload_len();
        if self.payload.len() != expected {
            return Err(TlpError::PayloadLengthMismatch {
                expected,
                got: self.payload.len(),
            });
        }
        if self.digest.is_some() != self.header.digest_present {
            return Err(TlpError::DigestMismatch {
                digest_present_in_header: self.header.digest_present,
                digest_supplied: self.digest.is_some(),
            });
        }
        let len = self.wire_len();
        if out.len() < len {
            return Err(TlpError::BufferTooSmall {
                needed: len,
                got: out.len(),
            });
        }
        let mut offset = self.prefixes.encode(out)?;
        offset += self.header.encode(&mut out[offset..])?;
        out[offset..offset + self.payload.len()].copy_from_slice(self.payload);
        offset += self.payload.len();
        if let Some(digest) = self.digest {
            out[offset..offset + DIGEST_LEN].copy_from_slice(&digest.to_be_bytes());
            offset += DIGEST_LEN;
        }
        Ok(offset)
    }
}
