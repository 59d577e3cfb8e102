//! TLP Prefixes: the 1 DW fields in front of a header with Fmt = 100b (PCIe Base 6.0 §2.2.10).

use super::error::TlpError;
use super::layout::{self, fmt};

/// The most End-End TLP Prefixes a TLP may carry (§2.2.10.4: more is Malformed).
pub const MAX_END_END_PREFIXES: usize = 4;

/// The most Local TLP Prefixes weft-pcie stores. The spec sets no limit;
/// weft's ports define none, so even one is more than they use.
pub const MAX_LOCAL_PREFIXES: usize = 4;

/// The most prefixes of both kinds in one [`Prefixes`].
pub const MAX_PREFIXES: usize = MAX_END_END_PREFIXES + MAX_LOCAL_PREFIXES;

/// Local (consumed by the link partner) or End-End (carried to the completer) (§2.2.10.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrefixScope {
    /// Type\[4\] = 0: Local, L\[3:0\] in Table 2-38. Not covered by ECRC.
    Local,
    /// Type\[4\] = 1: End-End, E\[3:0\] in Table 2-39. Switches forward it.
    EndEnd,
}

/// One TLP Prefix DW as received, byte 0 in bits \[31:24\].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Prefix(u32);

impl Prefix {
    /// Local prefix type MR-IOV (Table 2-38).
    pub const LOCAL_MR_IOV: u8 = 0b0000;
    /// Local prefix type VendPrefixL0 (Table 2-38).
    pub const LOCAL_VENDOR_0: u8 = 0b1110;
    /// Local prefix type VendPrefixL1 (Table 2-38).
    pub const LOCAL_VENDOR_1: u8 = 0b1111;
    /// End-End prefix type TPH (Table 2-39).
    pub const END_END_TPH: u8 = 0b0000;
    /// End-End prefix type PASID (Table 2-39).
    pub const END_END_PASID: u8 = 0b0001;
    /// End-End prefix type IDE (Table 2-39).
    pub const END_END_IDE: u8 = 0b0010;
    /// End-End prefix type VendPrefixE0 (Table 2-39).
    pub const END_END_VENDOR_0: u8 = 0b1110;
    /// End-End prefix type VendPrefixE1 (Table 2-39).
    pub const END_END_VENDOR_1: u8 = 0b1111;

    /// Wraps a DW whose Fmt is 100b.
    pub const fn from_dw(dw: u32) -> Result<Self, TlpError> {
        if layout::FMT.extract(dw) as u8 == fmt::PREFIX {
            Ok(Prefix(dw))
        } else {
            Err(TlpError::NotAPrefix {
                byte0: (dw >> 24) as u8,
            })
        }
    }

    /// Builds a prefix of `scope` and 4-bit `subtype` with `body` in bytes 1–3.
    pub const fn new(scope: PrefixScope, subtype: u8, body: u32) -> Self {
        let end_end = match scope {
            PrefixScope::Local => 0,
            PrefixScope::EndEnd => 1,
        };
        let dw = layout::FMT.insert(0, fmt::PREFIX as u32);
        let dw = layout::PREFIX_END_END.insert(dw, end_end);
        let dw = layout::PREFIX_SUBTYPE.insert(dw, subtype as u32);
        Prefix(dw | (body & 0x00ff_ffff))
    }

    /// The whole DW.
    pub const fn dw(self) -> u32 {
        self.0
    }

    /// Local or End-End.
    pub const fn scope(self) -> PrefixScope {
        if layout::PREFIX_END_END.extract(self.0) != 0 {
            PrefixScope::EndEnd
        } else {
            PrefixScope::Local
        }
    }

    /// L\[3:0\] or E\[3:0\].
    pub const fn subtype(self) -> u8 {
        layout::PREFIX_SUBTYPE.extract(self.0) as u8
    }

    /// Bytes 1–3, whose format depends on the prefix type.
    pub const fn body(self) -> u32 {
        self.0 & 0x00ff_ffff
    }
}

/// The prefixes in front of one header, in wire order, without allocation.
///
/// Keeps the rules of §2.2.10: Local prefixes come before End-End ones, and
/// there are at most [`MAX_END_END_PREFIXES`] End-End prefixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Prefixes {
    items: [Prefix; MAX_PREFIXES],
    len: usize,
}

impl Prefixes {
    /// No prefixes.
    pub const fn new() -> Self {
        Prefixes {
            items: [Prefix(0); MAX_PREFIXES],
            len: 0,
        }
    }

    /// Appends a prefix after those already present.
    pub fn push(&mut self, prefix: Prefix) -> Result<(), TlpError> {
        let end_end = self.count(PrefixScope::EndEnd);
        match prefix.scope() {
            PrefixScope::Local if end_end > 0 => return Err(TlpError::LocalPrefixAfterEndEnd),
            PrefixScope::Local if self.count(PrefixScope::Local) >= MAX_LOCAL_PREFIXES => {
                return Err(TlpError::TooManyLocalPrefixes {
                    max: MAX_LOCAL_PREFIXES,
                })
            }
            PrefixScope::EndEnd if end_end >= MAX_END_END_PREFIXES => {
                return Err(TlpError::TooManyEndEndPrefixes {
                    max: MAX_END_END_PREFIXES,
                })
            }
            _ => {}
        }
        let slot = self
            .items
            .get_mut(self.len)
            .ok_or(TlpError::TooManyLocalPrefixes {
                max: MAX_LOCAL_PREFIXES,
            })?;
        *slot = prefix;
        self.len += 1;
        Ok(())
    }

    /// The prefixes in wire order.
    pub fn as_slice(&self) -> &[Prefix] {
        &self.items[..self.len]
    }

    /// How many prefixes there are.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many prefixes of `scope` there are.
    pub fn count(&self, scope: PrefixScope) -> usize {
        self.as_slice()
            .iter()
            .filter(|prefix| prefix.scope() == scope)
            .count()
    }

    /// Reads the prefixes at the start of `bytes`: every DW whose Fmt is
    /// 100b, up to the first that is not (§2.3). Returns them and the bytes
    /// they occupy. A buffer that ends inside the prefixes, or right after
    /// them, is [`TlpError::Truncated`]: a prefix must be followed by a
    /// header (§2.2.10.1).
    pub fn decode(bytes: &[u8]) -> Result<(Self, usize), TlpError> {
        let mut prefixes = Prefixes::new();
        let mut offset = 0;
        loop {
            let Some(&byte0) = bytes.get(offset) else {
                return Err(TlpError::Truncated {
                    needed: offset + 4,
                    got: bytes.len(),
                });
            };
            if byte0 >> 5 != fmt::PREFIX {
                return Ok((prefixes, offset));
            }
            let chunk = bytes.get(offset..offset + 4).ok_or(TlpError::Truncated {
                needed: offset + 4,
                got: bytes.len(),
            })?;
            let dw = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            prefixes.push(Prefix::from_dw(dw)?)?;
            offset += 4;
        }
    }

    /// Writes the prefixes to the start of `out`; returns the bytes written.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, TlpError> {
        let len = self.len * 4;
        let got = out.len();
        let out = out
            .get_mut(..len)
            .ok_or(TlpError::BufferTooSmall { needed: len, got })?;
        for (chunk, prefix) in out.chunks_exact_mut(4).zip(self.as_slice()) {
            chunk.copy_from_slice(&prefix.dw().to_be_bytes());
        }
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_comes_from_type_bit_4() {
        // Fmt 100b, Type 1_0001b: End-End PASID. Byte 0 = 100_10001b = 0x91.
        let pasid = Prefix::from_dw(0x9100_1234).expect("Fmt is 100b");
        assert_eq!(pasid.scope(), PrefixScope::EndEnd);
        assert_eq!(pasid.subtype(), Prefix::END_END_PASID);
        assert_eq!(pasid.body(), 0x1234);
        // Fmt 100b, Type 0_1110b: VendPrefixL0. Byte 0 = 100_01110b = 0x8e.
        let vendor = Prefix::from_dw(0x8e00_0000).expect("Fmt is 100b");
        assert_eq!(vendor.scope(), PrefixScope::Local);
        assert_eq!(vendor.subtype(), Prefix::LOCAL_VENDOR_0);
        assert_eq!(Prefix::new(PrefixScope::EndEnd, 1, 0x1234), pasid);
        assert_eq!(
            Prefix::from_dw(0x4000_0000),
            Err(TlpError::NotAPrefix { byte0: 0x40 })
        );
    }

    #[test]
    fn local_prefixes_must_come_first() {
        let mut prefixes = Prefixes::new();
        prefixes
            .push(Prefix::new(PrefixScope::EndEnd, 1, 0))
            .expect("first prefix");
        assert_eq!(
            prefixes.push(Prefix::new(PrefixScope::Local, 0xe, 0)),
            Err(TlpError::LocalPrefixAfterEndEnd)
        );
    }

    #[test]
    fn at_most_four_end_end_prefixes() {
        let mut prefixes = Prefixes::new();
        for _ in 0..4 {
            prefixes
                .push(Prefix::new(PrefixScope::EndEnd, 0xe, 0))
                .expect("four are allowed");
        }
        assert_eq!(
            prefixes.push(Prefix::new(PrefixScope::EndEnd, 0xe, 0)),
            Err(TlpError::TooManyEndEndPrefixes { max: 4 })
        );
    }

    #[test]
    fn a_prefix_without_a_header_is_truncated() {
        assert_eq!(
            Prefixes::decode(&[0x91, 0, 0, 0]),
            Err(TlpError::Truncated { needed: 8, got: 4 })
        );
        assert_eq!(
            Prefixes::decode(&[0x91, 0]),
            Err(TlpError::Truncated { needed: 4, got: 2 })
        );
    }
}
