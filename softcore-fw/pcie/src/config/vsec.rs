//! weft's switch identity, carried in a Vendor-Specific Extended Capability
//! (PCIe Base 6.0 §7.9.5).
//!
//! Every port of a weft switch exposes this structure in its configuration
//! space. When the fabric manager enumerates a link and finds a function
//! carrying it, the function is a port of a neighbouring weft switch, not an
//! endpoint: the structure says which switch (a 64-bit ID), how many ports it
//! has, which of them is being looked through, and that port's role.
//!
//! # Layout (weft's own format, version 1)
//!
//! | offset | bits  | field |
//! |--------|-------|-------|
//! | +0x00  | 31:0  | Extended Capability Header: ID 0x000B, version 1, next offset |
//! | +0x04  | 15:0  | VSEC ID = [`WEFT_VSEC_ID`] |
//! |        | 19:16 | VSEC Rev = [`WEFT_VSEC_REV`] |
//! |        | 31:20 | VSEC Length = 0x018 bytes (the whole structure) |
//! | +0x08  | 31:0  | signature: the bytes `W`, `E`, `F`, `T` ([`SIGNATURE`]) |
//! | +0x0C  | 7:0   | layout version ([`LAYOUT_VERSION`]) |
//! |        | 15:8  | port count |
//! |        | 23:16 | index of this port |
//! |        | 31:24 | this port's role ([`PortRole`]) |
//! | +0x10  | 31:0  | switch ID, bits 31:0 |
//! | +0x14  | 31:0  | switch ID, bits 63:32 |
//!
//! A VSEC ID means something only together with the function's Vendor ID
//! (§7.9.5.2); weft's switches may carry another vendor's ID on some
//! boards, so the signature is what identifies the structure. Later
//! versions only append fields, grow VSEC Length and raise the layout
//! version; readers accept any version from 1 and read the fields they
//! know. Every register is read-only.

use super::ext_cap_id;
use super::function::{FunctionIdentity, Type0Function};
use super::list::{CapabilityList, CapabilityListError, ExtendedCapability};
use super::space::{ConfigRead, ConfigSpace};
use super::walk::{ExtendedCapabilities, WalkError};

/// Device ID of a weft switch port's management function.
pub const MANAGEMENT_DEVICE_ID: u16 = 0x00ff;

/// Class code of the management function: other system peripheral (PCI
/// Code and ID Assignment, base class 08h, sub-class 80h).
pub const MANAGEMENT_CLASS: u32 = 0x08_80_00;

/// The function a weft switch port presents on its link, which the
/// fabric manager probes with Type 0 requests: a header Type 0 function of
/// `vendor_id` ([`MANAGEMENT_DEVICE_ID`], [`MANAGEMENT_CLASS`]) carrying
/// `identity`. Its BAR0/BAR1 (the switch's management BAR, a 64-bit memory
/// BAR over the switch's CSR window) and Command's Memory Space Enable are
/// not kept in this space: the port's configuration logic backs them with
/// the data plane's register (`weft_regs::csr::global::MANAGEMENT_BAR_LOW`),
/// one per switch, so the space built here holds no BARs.
pub fn management_function(
    vendor_id: u16,
    identity: &WeftIdentity,
) -> Result<ConfigSpace, CapabilityListError> {
    let header = Type0Function::new(FunctionIdentity {
        vendor_id,
        device_id: MANAGEMENT_DEVICE_ID,
        revision_id: 0,
        class_code: MANAGEMENT_CLASS,
    });
    let mut space = ConfigSpace::new();
    // Without BARs the header always fits.
    let _ = header.install(&mut space);
    CapabilityList::new(&mut space)?.push_extended(identity)?;
    Ok(space)
}

/// Capability version of the extended capability header (§7.9.5.1).
pub const VERSION: u8 = 1;
/// VSEC Header register: VSEC ID, revision and length (§7.9.5.2).
pub const VSEC_HEADER: u16 = 0x04;
/// weft's VSEC ID ("WF").
pub const WEFT_VSEC_ID: u16 = 0x5746;
/// weft's VSEC revision.
pub const WEFT_VSEC_REV: u8 = 1;
/// Offset of the signature.
pub const SIGNATURE_OFFSET: u16 = 0x08;
/// The bytes `W`, `E`, `F`, `T` as a little-endian DW.
pub const SIGNATURE: u32 = u32::from_le_bytes(*b"WEFT");
/// Offset of the DW holding layout version, port count, port index and role.
pub const PORT_INFO: u16 = 0x0c;
/// Offset of the switch ID's low DW.
pub const SWITCH_ID_LOW: u16 = 0x10;
/// Offset of the switch ID's high DW.
pub const SWITCH_ID_HIGH: u16 = 0x14;
/// The structure's size for layout version 1: the VSEC Length.
pub const LENGTH_V1: u16 = 0x18;
/// The layout version this crate writes.
pub const LAYOUT_VERSION: u8 = 1;

/// What a weft switch port connects to. The discriminants are the wire
/// encoding in the identity structure; new roles are only ever appended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortRole {
    /// A host's root port: the port presents a virtual switch to that host.
    Host = 0,
    /// An endpoint (GPU, NVMe drive) that the fabric manager binds to hosts.
    Endpoint = 1,
    /// A link to another weft switch, carrying fabric-domain TLPs.
    Fabric = 2,
    /// The port through which the fabric manager itself reaches the fabric.
    Management = 3,
}

impl PortRole {
    /// Decodes the wire encoding; `None` for a role this version does not know.
    pub const fn from_wire(value: u8) -> Option<Self> {
        Some(match value {
            0 => PortRole::Host,
            1 => PortRole::Endpoint,
            2 => PortRole::Fabric,
            3 => PortRole::Management,
            _ => return None,
        })
    }
}

/// The identity of one weft switch port, as its VSEC carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WeftIdentity {
    /// The switch's 64-bit ID, unique in the fabric.
    pub switch_id: u64,
    /// How many ports the switch has.
    pub port_count: u8,
    /// Which port this structure is seen through (0-based).
    pub port_index: u8,
    /// That port's role.
    pub port_role: PortRole,
}

impl ExtendedCapability for WeftIdentity {
    const ID: u16 = ext_cap_id::VENDOR_SPECIFIC;
    const VERSION: u8 = VERSION;

    fn size_bytes(&self) -> u16 {
        LENGTH_V1
    }

    fn install(&self, space: &mut ConfigSpace, offset: u16) {
        let header =
            u32::from(LENGTH_V1) << 20 | u32::from(WEFT_VSEC_REV) << 16 | u32::from(WEFT_VSEC_ID);
        space.define_u32(offset + VSEC_HEADER, header, 0, 0);
        space.define_u32(offset + SIGNATURE_OFFSET, SIGNATURE, 0, 0);
        let info = u32::from(LAYOUT_VERSION)
            | u32::from(self.port_count) << 8
            | u32::from(self.port_index) << 16
            | (self.port_role as u32) << 24;
        space.define_u32(offset + PORT_INFO, info, 0, 0);
        space.define_u32(offset + SWITCH_ID_LOW, self.switch_id as u32, 0, 0);
        space.define_u32(offset + SWITCH_ID_HIGH, (self.switch_id >> 32) as u32, 0, 0);
    }
}

/// Why a weft identity structure could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VsecError<E> {
    /// Walking the extended capability list failed (including read errors).
    Walk(WalkError<E>),
    /// VSEC Length shorter than layout version 1 needs.
    TooShort {
        /// Offset of the capability.
        offset: u16,
        /// The VSEC Length found.
        length: u16,
    },
    /// Layout version 0, which weft never wrote.
    UnknownLayoutVersion {
        /// Offset of the capability.
        offset: u16,
        /// The version found.
        version: u8,
    },
    /// A port role this version does not know.
    UnknownPortRole {
        /// Offset of the capability.
        offset: u16,
        /// The encoding found.
        role: u8,
    },
    /// The port index is not below the port count.
    PortIndexOutOfRange {
        /// The index found.
        port_index: u8,
        /// The port count found.
        port_count: u8,
    },
}

impl<E> From<E> for VsecError<E> {
    fn from(error: E) -> Self {
        VsecError::Walk(WalkError::Access(error))
    }
}

/// Reads the weft identity of a function, through any configuration reader
/// (a space held locally, or Configuration Requests to a neighbour).
/// `Ok(None)` if the function carries no weft identity.
pub fn read_weft_identity<R: ConfigRead>(
    reader: R,
) -> Result<Option<WeftIdentity>, VsecError<R::Error>> {
    let mut walk = ExtendedCapabilities::new(reader);
    loop {
        let Some(entry) = walk.next() else {
            return Ok(None);
        };
        let entry = entry.map_err(VsecError::Walk)?;
        if entry.id == ext_cap_id::VENDOR_SPECIFIC {
            if let Some(identity) = decode_at(walk.reader_mut(), entry.offset)? {
                return Ok(Some(identity));
            }
        }
    }
}

/// Decodes the VSEC at `offset` if it is weft's; `Ok(None)` if it is another's.
fn decode_at<R: ConfigRead>(
    reader: &mut R,
    offset: u16,
) -> Result<Option<WeftIdentity>, VsecError<R::Error>> {
    let header = reader.read_dword(offset + VSEC_HEADER)?;
    if header as u16 != WEFT_VSEC_ID || reader.read_dword(offset + SIGNATURE_OFFSET)? != SIGNATURE {
        return Ok(None);
    }
    let length = (header >> 20) as u16;
    if length < LENGTH_V1 {
        return Err(VsecError::TooShort { offset, length });
    }
    let info = reader.read_dword(offset + PORT_INFO)?;
    let version = info as u8;
    if version == 0 {
        return Err(VsecError::UnknownLayoutVersion { offset, version });
    }
    let role = (info >> 24) as u8;
    let port_role = PortRole::from_wire(role).ok_or(VsecError::UnknownPortRole { offset, role })?;
    let port_count = (info >> 8) as u8;
    let port_index = (info >> 16) as u8;
    if port_index >= port_count {
        return Err(VsecError::PortIndexOutOfRange {
            port_index,
            port_count,
        });
    }
    let low = reader.read_dword(offset + SWITCH_ID_LOW)?;
    let high = reader.read_dword(offset + SWITCH_ID_HIGH)?;
    Ok(Some(WeftIdentity {
        switch_id: u64::from(high) << 32 | u64::from(low),
        port_count,
        port_index,
        port_role,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::list::CapabilityList;

    const IDENTITY: WeftIdentity = WeftIdentity {
        switch_id: 0x0123_4567_89ab_cdef,
        port_count: 24,
        port_index: 5,
        port_role: PortRole::Fabric,
    };

    /// Pins layout version 1 byte for byte. Do not change this test: a
    /// change here breaks discovery between switches running different
    /// firmware. Add fields by appending, and add a test for the new version.
    #[test]
    fn golden_bytes_of_layout_version_1() {
        let mut space = ConfigSpace::new();
        CapabilityList::new(&mut space)
            .expect("empty space")
            .push_extended(&IDENTITY)
            .expect("room at 0x100");
        let bytes = space.to_bytes();
        assert_eq!(
            &bytes[0x100..0x118],
            &[
                0x0b, 0x00, 0x01, 0x00, // ID 0x000B, version 1, next 0
                0x46, 0x57, 0x81, 0x01, // VSEC ID 0x5746, rev 1, length 0x018
                b'W', b'E', b'F', b'T', // signature
                0x01, 24, 5, 2, // layout 1, 24 ports, port 5, fabric
                0xef, 0xcd, 0xab, 0x89, // switch ID low
                0x67, 0x45, 0x23, 0x01, // switch ID high
            ]
        );
    }

    #[test]
    fn round_trips_behind_other_vsecs() {
        let mut space = ConfigSpace::new();
        let mut list = CapabilityList::new(&mut space).expect("empty space");
        // Someone else's VSEC first.
        struct Other;
        impl ExtendedCapability for Other {
            const ID: u16 = ext_cap_id::VENDOR_SPECIFIC;
            const VERSION: u8 = 1;
            fn size_bytes(&self) -> u16 {
                0x0c
            }
            fn install(&self, space: &mut ConfigSpace, offset: u16) {
                space.define_u32(offset + 4, 0x00c0_0001, 0, 0);
            }
        }
        list.push_extended(&Other).expect("room");
        list.push_extended(&IDENTITY).expect("room");
        assert_eq!(read_weft_identity(&space), Ok(Some(IDENTITY)));
        assert_eq!(read_weft_identity(&ConfigSpace::new()), Ok(None));
    }

    #[test]
    fn unknown_roles_and_bad_indices_are_reported() {
        let mut space = ConfigSpace::new();
        CapabilityList::new(&mut space)
            .expect("empty")
            .push_extended(&IDENTITY)
            .expect("room");
        space.set_u32(0x10c, 0x0905_1801);
        assert_eq!(
            read_weft_identity(&space),
            Err(VsecError::UnknownPortRole {
                offset: 0x100,
                role: 9
            })
        );
        space.set_u32(0x10c, 0x0218_1801);
        assert_eq!(
            read_weft_identity(&space),
            Err(VsecError::PortIndexOutOfRange {
                port_index: 0x18,
                port_count: 0x18
            })
        );
    }
}
