//! An owned TLP: what the model keeps of a packet while it moves through the switch.

use weft_pcie::tlp::{Body, Completion, Header, MemoryRequest, Prefixes, Tlp, TlpError};

/// A TLP with its payload, in the terms of whichever domain it is in.
///
/// A translated TLP loses its digest (TD cleared): ECRC covers the requester
/// ID, tag and address that the edge rewrites (PCIe Base 6.0 §2.7.1), and
/// weft does not regenerate it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// TLP prefixes, passed through unchanged.
    pub prefixes: Prefixes,
    /// The decoded header.
    pub header: Header,
    /// The payload bytes.
    pub payload: Vec<u8>,
    /// The ECRC digest, if present and not invalidated by translation.
    pub digest: Option<u32>,
}

impl Packet {
    /// Parses a whole TLP in wire order; a malformed one is an error.
    pub fn parse(bytes: &[u8]) -> Result<Self, TlpError> {
        let tlp = Tlp::parse(bytes)?;
        Ok(Packet {
            prefixes: tlp.prefixes,
            header: tlp.header,
            payload: tlp.payload.to_vec(),
            digest: tlp.digest,
        })
    }

    /// A TLP without prefixes or digest.
    pub fn new(header: Header, payload: Vec<u8>) -> Self {
        Packet {
            prefixes: Prefixes::default(),
            header,
            payload,
            digest: None,
        }
    }

    /// The TLP in wire order.
    pub fn to_bytes(&self) -> Result<Vec<u8>, TlpError> {
        let tlp = self.as_tlp();
        let mut out = vec![0; tlp.wire_len()];
        let len = tlp.emit(&mut out)?;
        out.truncate(len);
        Ok(out)
    }

    /// Bytes on the wire: prefixes, header, payload and digest.
    pub fn wire_len(&self) -> usize {
        self.as_tlp().wire_len()
    }

    fn as_tlp(&self) -> Tlp<'_> {
        let mut header = self.header;
        header.digest_present = self.digest.is_some();
        Tlp {
            prefixes: self.prefixes,
            header,
            payload: &self.payload,
            digest: self.digest,
        }
    }

    /// The memory request in this packet, if it is one.
    pub fn memory(&self) -> Option<&MemoryRequest> {
        match &self.header.body {
            Body::Memory(request) => Some(request),
            _ => None,
        }
    }

    /// The completion in this packet, if it is one.
    pub fn completion(&self) -> Option<&Completion> {
        match &self.header.body {
            Body::Completion(completion) => Some(completion),
            _ => None,
        }
    }

    /// Marks the TLP as rewritten by the edge: its digest no longer holds.
    pub(crate) fn invalidate_digest(&mut self) {
        self.digest = None;
        self.header.digest_present = false;
    }
}
