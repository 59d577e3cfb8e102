//! The Access Control Services extended capability (PCIe Base 6.0 §7.7.11).
//!
//! A switch downstream port's ACS controls decide whether peer-to-peer
//! requests go straight across or up to the root; weft honours the controls
//! a host sets on its virtual downstream ports.

use super::ext_cap_id;
use super::list::ExtendedCapability;
use super::space::{ConfigRegisters, ConfigSpace};

/// Capability version.
pub const VERSION: u8 = 1;
/// ACS Capability register, 16 bits, RO (§7.7.11.2).
pub const CAPABILITY: u16 = 0x04;
/// ACS Control register, 16 bits, RW for implemented features (§7.7.11.3).
pub const CONTROL: u16 = 0x06;
/// Egress Control Vector, present with P2P Egress Control (§7.7.11.4).
pub const EGRESS_CONTROL_VECTOR: u16 = 0x08;

/// Feature bits: the same position in the Capability register (supported)
/// and the Control register (enabled) (§7.7.11.2, §7.7.11.3).
pub mod feature {
    /// Bit 0: ACS Source Validation.
    pub const SOURCE_VALIDATION: u16 = 1 << 0;
    /// Bit 1: ACS Translation Blocking.
    pub const TRANSLATION_BLOCKING: u16 = 1 << 1;
    /// Bit 2: ACS P2P Request Redirect.
    pub const P2P_REQUEST_REDIRECT: u16 = 1 << 2;
    /// Bit 3: ACS P2P Completion Redirect.
    pub const P2P_COMPLETION_REDIRECT: u16 = 1 << 3;
    /// Bit 4: ACS Upstream Forwarding.
    pub const UPSTREAM_FORWARDING: u16 = 1 << 4;
    /// Bit 5: ACS P2P Egress Control.
    pub const P2P_EGRESS_CONTROL: u16 = 1 << 5;
    /// Bit 6: ACS Direct Translated P2P.
    pub const DIRECT_TRANSLATED_P2P: u16 = 1 << 6;
    /// The features a switch downstream port must implement if it has ACS
    /// at all: Source Validation, Translation Blocking, both redirects and
    /// Upstream Forwarding (§6.12.1).
    pub const DOWNSTREAM_PORT_REQUIRED: u16 = SOURCE_VALIDATION
        | TRANSLATION_BLOCKING
        | P2P_REQUEST_REDIRECT
        | P2P_COMPLETION_REDIRECT
        | UPSTREAM_FORWARDING;
}

/// Bits 15:8 of the Capability register: Egress Control Vector Size.
pub const EGRESS_VECTOR_SIZE_SHIFT: u32 = 8;

/// An ACS capability to lay out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acs {
    /// The features implemented (see [`feature`]).
    pub features: u16,
    /// Egress Control Vector Size in bits (1..=32 here) when P2P Egress
    /// Control is implemented.
    pub egress_vector_bits: u8,
}

impl Acs {
    fn has_egress_vector(&self) -> bool {
        self.features & feature::P2P_EGRESS_CONTROL != 0
    }
}

impl ExtendedCapability for Acs {
    const ID: u16 = ext_cap_id::ACS;
    const VERSION: u8 = VERSION;

    fn size_bytes(&self) -> u16 {
        if self.has_egress_vector() {
            0x0c
        } else {
            0x08
        }
    }

    fn install(&self, space: &mut ConfigSpace, offset: u16) {
        let features = self.features & 0x7f;
        let vector_bits = if self.has_egress_vector() {
            self.egress_vector_bits.clamp(1, 32)
        } else {
            0
        };
        // The field encodes the size with 0 meaning 256 bits; sizes 1..=255 are literal.
        let capability = features | u16::from(vector_bits) << EGRESS_VECTOR_SIZE_SHIFT;
        space.define_u16(offset + CAPABILITY, capability, 0, 0);
        space.define_u16(offset + CONTROL, 0, features, 0);
        if self.has_egress_vector() {
            let vector_rw = if vector_bits == 32 {
                u32::MAX
            } else {
                (1u32 << vector_bits) - 1
            };
            space.define_u32(offset + EGRESS_CONTROL_VECTOR, 0, vector_rw, 0);
        }
    }
}

/// An ACS capability found in a space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AcsCap {
    /// Offset of the capability header.
    pub offset: u16,
}

impl AcsCap {
    /// The capability at `offset`.
    pub const fn at(offset: u16) -> Self {
        AcsCap { offset }
    }

    /// The implemented features.
    pub fn supported(self, space: &impl ConfigRegisters) -> u16 {
        space.read_u16(self.offset + CAPABILITY) & 0x7f
    }

    /// The features software enabled.
    pub fn enabled(self, space: &impl ConfigRegisters) -> u16 {
        space.read_u16(self.offset + CONTROL)
    }

    /// Whether peer-to-peer requests must be redirected upstream.
    pub fn p2p_request_redirect(self, space: &impl ConfigRegisters) -> bool {
        self.enabled(space) & feature::P2P_REQUEST_REDIRECT != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_takes_only_implemented_features() {
        let mut space = ConfigSpace::new();
        let acs = Acs {
            features: feature::DOWNSTREAM_PORT_REQUIRED,
            egress_vector_bits: 0,
        };
        acs.install(&mut space, 0x140);
        assert_eq!(acs.size_bytes(), 8);
        assert_eq!(space.read_u16(0x144), 0x001f);
        space.write_u16(0x146, 0xffff);
        assert_eq!(space.read_u16(0x146), 0x001f);
        assert!(AcsCap::at(0x140).p2p_request_redirect(&space));
    }

    #[test]
    fn egress_control_adds_a_vector() {
        let mut space = ConfigSpace::new();
        let acs = Acs {
            features: feature::P2P_EGRESS_CONTROL | feature::DIRECT_TRANSLATED_P2P,
            egress_vector_bits: 8,
        };
        acs.install(&mut space, 0x140);
        assert_eq!(acs.size_bytes(), 12);
        // Vector size 8 in bits 15:8, features 5 and 6.
        assert_eq!(space.read_u16(0x144), 0x0860);
        space.write_u32(0x148, 0xffff_ffff);
        assert_eq!(space.read(0x148), 0xff);
    }
}
