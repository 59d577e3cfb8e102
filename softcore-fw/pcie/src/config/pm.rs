//! The PCI Power Management capability (PCIe Base 6.0 §7.5.2).

use super::cap_id;
use super::list::Capability;
use super::space::ConfigSpace;

/// Size of the structure.
pub const SIZE: u16 = 8;
/// Power Management Capabilities (PMC), 16 bits, RO (§7.5.2.1).
pub const PMC: u16 = 0x02;
/// Power Management Control/Status (PMCSR), 16 bits (§7.5.2.2).
pub const PMCSR: u16 = 0x04;
/// Data register, 8 bits, optional (§7.5.2.3).
pub const DATA: u16 = 0x07;

/// PMC fields (§7.5.2.1).
pub mod pmc {
    /// Bits 2:0: Version, 011b for this specification.
    pub const VERSION_3: u16 = 0b011;
    /// Bit 3: PME Clock, hardwired 0 for PCIe.
    pub const PME_CLOCK: u16 = 1 << 3;
    /// Bit 4: Immediate_Readiness_on_Return_to_D0.
    pub const IMMEDIATE_READINESS_ON_D0: u16 = 1 << 4;
    /// Bit 5: Device Specific Initialization.
    pub const DEVICE_SPECIFIC_INITIALIZATION: u16 = 1 << 5;
    /// Bit 9: D1 Support.
    pub const D1_SUPPORT: u16 = 1 << 9;
    /// Bit 10: D2 Support.
    pub const D2_SUPPORT: u16 = 1 << 10;
    /// Bits 15:11: PME_Support, one bit per state D0, D1, D2, D3hot, D3cold.
    pub const PME_SUPPORT_SHIFT: u32 = 11;
}

/// PMCSR fields (§7.5.2.2).
pub mod pmcsr {
    /// Bits 1:0: PowerState, RW: 00b D0, 01b D1, 10b D2, 11b D3hot.
    pub const POWER_STATE_MASK: u16 = 0b11;
    /// Bit 3: No_Soft_Reset, RO: D3hot to D0 keeps the function's state.
    pub const NO_SOFT_RESET: u16 = 1 << 3;
    /// Bit 8: PME_En, RW.
    pub const PME_ENABLE: u16 = 1 << 8;
    /// Bits 12:9: Data_Select (RW only with the Data register).
    pub const DATA_SELECT_MASK: u16 = 0xf << 9;
    /// Bit 15: PME_Status, RW1C.
    pub const PME_STATUS: u16 = 1 << 15;
}

/// Device power states as PowerState encodes them (§7.5.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerState {
    /// Fully on.
    D0 = 0,
    /// Light sleep (optional).
    D1 = 1,
    /// Deeper sleep (optional).
    D2 = 2,
    /// Software-visible off.
    D3Hot = 3,
}

/// A Power Management capability to lay out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PowerManagement {
    /// PMC bits other than the version (see [`pmc`]).
    pub capabilities: u16,
    /// PMCSR No_Soft_Reset.
    pub no_soft_reset: bool,
}

impl PowerManagement {
    /// D0 and D3hot only, no PME, No_Soft_Reset set: what a switch port or a
    /// simple endpoint implements.
    pub const fn minimal() -> Self {
        PowerManagement {
            capabilities: 0,
            no_soft_reset: true,
        }
    }
}

impl Capability for PowerManagement {
    const ID: u8 = cap_id::POWER_MANAGEMENT;

    fn size_bytes(&self) -> u16 {
        SIZE
    }

    fn install(&self, space: &mut ConfigSpace, offset: u16) {
        space.define_u16(
            offset + PMC,
            (self.capabilities & !0b111) | pmc::VERSION_3,
            0,
            0,
        );
        let value = if self.no_soft_reset {
            pmcsr::NO_SOFT_RESET
        } else {
            0
        };
        let pme_supported = self.capabilities >> pmc::PME_SUPPORT_SHIFT != 0;
        let rw = pmcsr::POWER_STATE_MASK | if pme_supported { pmcsr::PME_ENABLE } else { 0 };
        let rw1c = if pme_supported { pmcsr::PME_STATUS } else { 0 };
        space.define_u16(offset + PMCSR, value, rw, rw1c);
        space.define_u16(offset + 6, 0, 0, 0);
    }
}

/// A Power Management capability found in a space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PmCap {
    /// Offset of the capability header.
    pub offset: u16,
}

impl PmCap {
    /// The capability at `offset`.
    pub const fn at(offset: u16) -> Self {
        PmCap { offset }
    }

    /// The PowerState software selected.
    pub const fn power_state(self, space: &ConfigSpace) -> PowerState {
        match space.read_u16(self.offset + PMCSR) & pmcsr::POWER_STATE_MASK {
            0 => PowerState::D0,
            1 => PowerState::D1,
            2 => PowerState::D2,
            _ => PowerState::D3Hot,
        }
    }

    /// The function's hardware signals a PME: sets PME_Status (RW1C).
    pub fn raise_pme(self, space: &mut ConfigSpace) {
        space.set_bits_u16(self.offset + PMCSR, pmcsr::PME_STATUS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pme_status_clears_by_writing_one_and_power_state_is_rw() {
        let mut space = ConfigSpace::new();
        // PME from D0 and D3hot: bits 11 and 14.
        PowerManagement {
            capabilities: 0b01001 << 11,
            no_soft_reset: true,
        }
        .install(&mut space, 0x40);
        assert_eq!(space.read_u16(0x42), 0x4803);
        let cap = PmCap::at(0x40);
        space.write_u16(0x44, 0x0103);
        assert_eq!(cap.power_state(&space), PowerState::D3Hot);
        assert_eq!(space.read_u16(0x44), 0x010b, "PME_En, D3hot, No_Soft_Reset");
        cap.raise_pme(&mut space);
        assert_eq!(space.read_u16(0x44), 0x810b);
        // Writing 1 to PME_Status clears it; the same write keeps D3hot and PME_En.
        space.write_u16(0x44, 0x8103);
        assert_eq!(space.read_u16(0x44), 0x010b);
    }
}
