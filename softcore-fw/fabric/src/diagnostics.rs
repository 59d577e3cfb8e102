//! Raw configuration-space access to the fabric's functions, for
//! diagnostics: one read or write of 1, 2 or 4 bytes anywhere in a
//! function's 4 KiB configuration space (PCIe Base 6.0 §7.2.2), sent as one
//! configuration request with the First DW Byte Enables of the bytes
//! accessed (§2.2.7), at the function's fabric ID along its configuration path.
//! The functions reached are those the inventory holds (the endpoints and
//! VFs a topology read lists); the bridges of conventional switches below
//! ports and the weft switches' own functions are not.
//!
//! Writes that would undo what the fabric manager programmed are refused
//! before anything is written ([`owned_by_fabric`]): the Command register
//! (Memory Space and Bus Master, which the manager keeps on; §7.5.1.1.3),
//! the BARs and the Expansion ROM BAR (the fabric addresses the data
//! plane translates to; §7.5.1.2.1, §7.5.1.2.4), the SR-IOV capability
//! (NumVFs, VF Enable, VF BARs; §9.3.3) and ACS Control (§7.7.11.3).
//! So are writes that would reset the function or stop it decoding
//! ([`resetting_byte`]): Initiate Function Level Reset in Device Control
//! (§7.5.3.4; an FLR clears the BARs, Command and VF Enable, §6.6.2) and a
//! Power State other than D0 in the Power Management Control/Status
//! register (§7.5.2.2; a function in D1-D3hot decodes no memory, and one
//! without No_Soft_Reset comes back from D3hot reset). Every other
//! register may be written, among them the Status register's
//! write-1-to-clear error bits and AER's status registers, which are what
//! diagnostics clears.

use weft_pcie::config::cap_id;
use weft_pcie::config::header::{common, type0};
use weft_pcie::config::pcie_cap::{device_control, DEVICE_CONTROL};
use weft_pcie::config::pm::{pmcsr, PMCSR};
use weft_pcie::config::space::{CONFIG_SPACE_SIZE, PCI_COMPATIBLE_SIZE};
use weft_pcie::config::walk::{find_capability, WalkError};
use weft_pcie::Bdf;

use crate::hw::{config_read, config_write, ConfigFault, FabricConfig, FunctionAccess};
use crate::inventory::Function;
use crate::manager::FabricManager;
use crate::virtualize::fabric_owned;

/// How many bytes one access reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// One byte.
    Byte,
    /// Two bytes, aligned to two.
    Word,
    /// Four bytes, aligned to four: one whole DW.
    Dword,
}

impl Width {
    /// The width in bytes.
    pub const fn bytes(self) -> u16 {
        match self {
            Width::Byte => 1,
            Width::Word => 2,
            Width::Dword => 4,
        }
    }
}

/// Why a diagnostic access was refused or failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagnosticError {
    /// The fabric is not enumerated yet, so no function has a fabric ID.
    NotReady,
    /// No function of the inventory has this fabric ID.
    NoSuchFunction(Bdf),
    /// The access reaches past the 4 KiB configuration space (§7.2.2).
    OutOfRange {
        /// The offset given.
        offset: u16,
    },
    /// The offset is not a multiple of the width: a configuration request
    /// carries one DW, so an access may not straddle two (§2.2.7).
    Misaligned {
        /// The offset given.
        offset: u16,
        /// The width asked for.
        width: Width,
    },
    /// The write touches a register the fabric manager owns, or would
    /// reset the function or stop it decoding.
    FabricOwned {
        /// The function.
        function: Bdf,
        /// The first byte of the write that is refused.
        offset: u16,
    },
    /// The configuration request did not complete successfully.
    Config(ConfigFault),
}

/// One access as a configuration request: the DW it addresses and the
/// First DW Byte Enables of its bytes (§2.2.7: bit n enables byte n).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DwAccess {
    /// The offset of the DW.
    pub dword: u16,
    /// The bytes of the DW accessed.
    pub byte_enables: u8,
    /// The bit position of the first byte accessed within the DW.
    pub shift: u32,
}

impl DwAccess {
    /// The configuration request for `width` bytes at `offset`, if they
    /// lie inside configuration space and within one DW.
    pub fn new(offset: u16, width: Width) -> Result<DwAccess, DiagnosticError> {
        let bytes = width.bytes();
        if usize::from(offset) + usize::from(bytes) > CONFIG_SPACE_SIZE {
            return Err(DiagnosticError::OutOfRange { offset });
        }
        if !offset.is_multiple_of(bytes) {
            return Err(DiagnosticError::Misaligned { offset, width });
        }
        let lane = offset & 3;
        Ok(DwAccess {
            dword: offset & !3,
            byte_enables: (((1u16 << bytes) - 1) << lane) as u8,
            shift: u32::from(lane) * 8,
        })
    }

    /// The bytes accessed, by offset.
    fn offsets(self) -> impl Iterator<Item = u16> {
        (0..4)
            .filter(move |lane| self.byte_enables >> lane & 1 == 1)
            .map(move |lane| self.dword + lane)
    }

    /// The value of the bytes accessed, from the DW read.
    fn extract(self, dword: u32) -> u32 {
        let bits = self.byte_enables.count_ones() * 8;
        let mask = if bits == 32 {
            u32::MAX
        } else {
            (1 << bits) - 1
        };
        dword >> self.shift & mask
    }
}

/// The first byte of `access` that the fabric owns on `function`, if any:
/// Command, the BARs, the Expansion ROM BAR, the SR-IOV capability and ACS
/// Control (see the module documentation).
pub fn owned_by_fabric(function: &Function, access: DwAccess) -> Option<u16> {
    const COMMAND: core::ops::Range<u16> = common::COMMAND..common::STATUS;
    const BARS: core::ops::Range<u16> = type0::BAR0..type0::CARDBUS_CIS_POINTER;
    const ROM: core::ops::Range<u16> = type0::EXPANSION_ROM_BASE..common::CAPABILITIES_POINTER;
    access.offsets().find(|&byte| {
        COMMAND.contains(&byte)
            || BARS.contains(&byte)
            || ROM.contains(&byte)
            || fabric_owned(function, byte)
    })
}

/// The first byte of a write of `data` (placed in its DW) by `access` to
/// the function reached by `function` that would reset the function or
/// stop it decoding: Initiate FLR set in Device Control (§7.5.3.4), or a
/// Power State other than D0 in PMCSR (§7.5.2.2). Only a write into the
/// PCI-compatible capabilities (40h-FFh) can; for one there, the
/// function's capability list is walked to find those registers.
pub fn resetting_byte<C: FabricConfig + ?Sized>(
    function: &mut FunctionAccess<'_, C>,
    access: DwAccess,
    data: u32,
) -> Result<Option<u16>, DiagnosticError> {
    if !(common::HEADER_END..PCI_COMPATIBLE_SIZE).contains(&access.dword) {
        return Ok(None);
    }
    // Capabilities start on a DW (§7.5: the pointer's low two bits are
    // reserved), so each 16-bit register checked is the low half of its DW.
    let mut register = |id| -> Result<Option<u16>, DiagnosticError> {
        match find_capability(&mut *function, id) {
            Ok(found) => Ok(found),
            Err(WalkError::Access(fault)) => Err(DiagnosticError::Config(fault)),
            // A list that cannot be walked has no register to find.
            Err(_) => Ok(None),
        }
    };
    let writes = |offset: u16, bits: u16| {
        let lanes = if bits & 0xff != 0 { 0b01 } else { 0 } | if bits >> 8 != 0 { 0b10 } else { 0 };
        access.dword == offset && access.byte_enables & lanes != 0 && data & u32::from(bits) != 0
    };
    if let Some(pcie) = register(cap_id::PCI_EXPRESS)? {
        let control = pcie + DEVICE_CONTROL;
        if writes(control, device_control::INITIATE_FLR) {
            return Ok(Some(control + 1));
        }
    }
    if let Some(pm) = register(cap_id::POWER_MANAGEMENT)? {
        if writes(pm + PMCSR, pmcsr::POWER_STATE_MASK) {
            return Ok(Some(pm + PMCSR));
        }
    }
    Ok(None)
}

impl FabricManager {
    /// Reads `width` bytes at `offset` of the configuration space of
    /// function `id`, through `config`.
    pub fn diagnostic_read<C: FabricConfig + ?Sized>(
        &self,
        id: Bdf,
        offset: u16,
        width: Width,
        config: &mut C,
    ) -> Result<u32, DiagnosticError> {
        let function = self.diagnostic_target(id)?;
        let access = DwAccess::new(offset, width)?;
        let path = self.inventory.path_to(function);
        let dword = config_read(config, path, id, access.dword).map_err(DiagnosticError::Config)?;
        Ok(access.extract(dword))
    }

    /// Writes the low `width` bytes of `value` at `offset` of the
    /// configuration space of function `id`, through `config`, unless the
    /// fabric owns one of them or the write would reset the function.
    pub fn diagnostic_write<C: FabricConfig + ?Sized>(
        &self,
        id: Bdf,
        offset: u16,
        width: Width,
        value: u32,
        config: &mut C,
    ) -> Result<(), DiagnosticError> {
        let function = self.diagnostic_target(id)?;
        let access = DwAccess::new(offset, width)?;
        if let Some(offset) = owned_by_fabric(function, access) {
            return Err(DiagnosticError::FabricOwned {
                function: id,
                offset,
            });
        }
        let path = self.inventory.path_to(function);
        // Byte n of the request's data is byte n of the DW (§7.2).
        let data = value << access.shift;
        let mut target = FunctionAccess {
            config,
            path,
            target: id,
        };
        if let Some(offset) = resetting_byte(&mut target, access, data)? {
            return Err(DiagnosticError::FabricOwned {
                function: id,
                offset,
            });
        }
        config_write(config, path, id, access.dword, data, access.byte_enables)
            .map_err(DiagnosticError::Config)
    }

    fn diagnostic_target(&self, id: Bdf) -> Result<&Function, DiagnosticError> {
        if !self.ready {
            return Err(DiagnosticError::NotReady);
        }
        self.inventory
            .function(id)
            .ok_or(DiagnosticError::NoSuchFunction(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_access_is_one_dw_with_the_byte_enables_of_its_bytes() {
        // §2.2.7: First DW BE bit n enables byte n of the DW addressed.
        assert_eq!(
            DwAccess::new(0x0e, Width::Byte),
            Ok(DwAccess {
                dword: 0x0c,
                byte_enables: 0b0100,
                shift: 16
            })
        );
        assert_eq!(
            DwAccess::new(0x06, Width::Word),
            Ok(DwAccess {
                dword: 0x04,
                byte_enables: 0b1100,
                shift: 16
            })
        );
        assert_eq!(
            DwAccess::new(0xffc, Width::Dword),
            Ok(DwAccess {
                dword: 0xffc,
                byte_enables: 0b1111,
                shift: 0
            })
        );
        assert_eq!(
            DwAccess::new(0x06, Width::Word).map(|a| a.extract(0xabcd_1234)),
            Ok(0xabcd)
        );
    }

    #[test]
    fn an_access_stays_inside_one_dw_of_the_4_kib_space() {
        assert_eq!(
            DwAccess::new(0x1000, Width::Byte),
            Err(DiagnosticError::OutOfRange { offset: 0x1000 })
        );
        assert_eq!(
            DwAccess::new(0xffe, Width::Dword),
            Err(DiagnosticError::OutOfRange { offset: 0xffe })
        );
        assert_eq!(
            DwAccess::new(0x102, Width::Dword),
            Err(DiagnosticError::Misaligned {
                offset: 0x102,
                width: Width::Dword
            })
        );
        assert_eq!(
            DwAccess::new(0x03, Width::Word),
            Err(DiagnosticError::Misaligned {
                offset: 0x03,
                width: Width::Word
            })
        );
        assert!(DwAccess::new(0xfff, Width::Byte).is_ok());
    }
}
