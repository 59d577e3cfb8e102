//! The TI DP83867 Gigabit Ethernet PHY (datasheet SNLS504), as the
//! VCU118 wires it: SGMII to the FPGA, managed over MDIO ([`crate::mdio`]).
//!
//! Registers 0x00 to 0x1F are clause 22's (IEEE 802.3 §22.2.4); the
//! DP83867's extended registers above 0x1F are reached through the
//! indirect window of REGCR (0x0D) and ADDAR (0x0E) (SNLS504, "Extended
//! Register Space Access", the MMD access of IEEE 802.3 §22.2.4.3.11 and
//! §22.2.4.3.12 with DEVAD 0x1F): REGCR = 0x001F, ADDAR = the address,
//! REGCR = 0x401F (data, no post increment), then ADDAR is the register.
//!
//! The PHY gives the FPGA its 625 MHz SGMII clock, which the PCS/PMA runs
//! from, only in 6-wire SGMII mode, and 4-wire is its default (SNLS504,
//! "SGMII"): [`configure_sgmii_10_100`] sets it, with the rest of the
//! set-up verilog-ethernet's VCU118 design makes, and stops the PHY
//! advertising 1000BASE-T, since weft's MAC carries 10 and 100 Mb/s only
//! and a gigabit link partner would otherwise bring the link up at a
//! speed the MII cannot carry.

use crate::mdio::{self, MdioError};
use crate::CsrBus;

/// BMCR, the basic mode control register (IEEE 802.3 §22.2.4.1).
pub const BMCR: u8 = 0x00;
/// BMCR bit 12: auto-negotiation enable (§22.2.4.1.4).
pub const BMCR_AUTO_NEGOTIATION: u16 = 1 << 12;
/// BMCR bit 9: restart auto-negotiation, self-clearing (§22.2.4.1.7).
pub const BMCR_RESTART_AUTO_NEGOTIATION: u16 = 1 << 9;
/// PHYIDR1: the organizationally unique identifier's bits 3 to 18
/// (§22.2.4.3.1).
pub const PHYIDR1: u8 = 0x02;
/// PHYIDR2: the identifier's bits 19 to 24, the model and the revision
/// (§22.2.4.3.1).
pub const PHYIDR2: u8 = 0x03;
/// CFG1, the 1000BASE-T control register (IEEE 802.3 §40.5.1.1, register 9).
pub const CFG1: u8 = 0x09;
/// CFG1 bits 9 and 8: advertise 1000BASE-T full and half duplex.
pub const CFG1_ADVERTISE_1000BASE_T: u16 = 0b11 << 8;
/// REGCR, the extended-register window's control (SNLS504).
pub const REGCR: u8 = 0x0D;
/// ADDAR, the extended-register window's address and data (SNLS504).
pub const ADDAR: u8 = 0x0E;
/// REGCR's DEVAD for the DP83867's extended registers.
const REGCR_DEVAD: u16 = 0x1F;
/// REGCR function 01 (bits 15:14): ADDAR carries data, no post increment.
const REGCR_DATA: u16 = 0b01 << 14;

/// CFG4 (extended 0x0031): written 0x0070, which sets the SGMII
/// auto-negotiation timer to 11 ms, as verilog-ethernet's VCU118 design does.
pub const CFG4: u16 = 0x0031;
/// SGMIICTL1 (extended 0x00D3): 0x4000 selects 6-wire SGMII, which puts
/// out the SGMII clock the PCS/PMA's clocking needs.
pub const SGMIICTL1: u16 = 0x00D3;
/// 10M_SGMII_CFG (extended 0x016F): 0x0015 enables 10 Mb/s over SGMII.
pub const TEN_M_SGMII_CFG: u16 = 0x016F;

/// The extended-register writes of the SGMII set-up, in order (SNLS504's
/// register maps; the values verilog-ethernet's VCU118 design writes).
pub const SGMII_SETUP: [(u16, u16); 3] = [
    (CFG4, 0x0070),
    (SGMIICTL1, 0x4000),
    (TEN_M_SGMII_CFG, 0x0015),
];

/// PHYIDR1 of a DP83867: TI's OUI bits 3 to 18.
pub const ID1: u16 = 0x2000;
/// PHYIDR2 of a DP83867 without its revision (bits 3:0): the OUI's last
/// bits and model 0x23.
pub const ID2: u16 = 0xA230;

/// Whether the PHY at `phy` is a DP83867 (PHYIDR1 and PHYIDR2, the
/// revision aside). A read nobody answers is `Ok(false)`: no PHY there.
pub fn identify<B: CsrBus>(bus: &mut B, phy: u8) -> Result<bool, MdioError> {
    match mdio::read(bus, phy, PHYIDR1) {
        Ok(ID1) => Ok(mdio::read(bus, phy, PHYIDR2)? & 0xFFF0 == ID2),
        Ok(_) | Err(MdioError::NoAnswer { .. }) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Points the extended-register window at `register`, for data.
fn select<B: CsrBus>(bus: &mut B, phy: u8, register: u16) -> Result<(), MdioError> {
    mdio::write(bus, phy, REGCR, REGCR_DEVAD)?;
    mdio::write(bus, phy, ADDAR, register)?;
    mdio::write(bus, phy, REGCR, REGCR_DATA | REGCR_DEVAD)
}

/// Reads extended register `register` through REGCR and ADDAR.
pub fn read_extended<B: CsrBus>(bus: &mut B, phy: u8, register: u16) -> Result<u16, MdioError> {
    select(bus, phy, register)?;
    mdio::read(bus, phy, ADDAR)
}

/// Writes `value` to extended register `register` through REGCR and ADDAR.
pub fn write_extended<B: CsrBus>(
    bus: &mut B,
    phy: u8,
    register: u16,
    value: u16,
) -> Result<(), MdioError> {
    select(bus, phy, register)?;
    mdio::write(bus, phy, ADDAR, value)
}

/// Sets the DP83867 at `phy` up for weft's 10/100 MAC over SGMII: the
/// [`SGMII_SETUP`] writes (6-wire SGMII with its clock, the SGMII
/// auto-negotiation timer, 10 Mb/s over SGMII), each read back, then
/// 1000BASE-T no longer advertised in CFG1 and auto-negotiation restarted
/// so the link partner hears it (IEEE 802.3 §22.2.4.1.7).
pub fn configure_sgmii_10_100<B: CsrBus>(bus: &mut B, phy: u8) -> Result<(), SetupError> {
    for (register, value) in SGMII_SETUP {
        write_extended(bus, phy, register, value)?;
        let read = read_extended(bus, phy, register)?;
        if read != value {
            return Err(SetupError::ReadBack {
                register,
                wrote: value,
                read,
            });
        }
    }
    let cfg1 = mdio::read(bus, phy, CFG1)?;
    mdio::write(bus, phy, CFG1, cfg1 & !CFG1_ADVERTISE_1000BASE_T)?;
    let bmcr = mdio::read(bus, phy, BMCR)?;
    mdio::write(
        bus,
        phy,
        BMCR,
        bmcr | BMCR_AUTO_NEGOTIATION | BMCR_RESTART_AUTO_NEGOTIATION,
    )?;
    Ok(())
}

/// Why the DP83867's set-up failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetupError {
    /// An MDIO access failed.
    Mdio(MdioError),
    /// An extended register read back other than written.
    ReadBack {
        /// The extended register.
        register: u16,
        /// What was written.
        wrote: u16,
        /// What it read.
        read: u16,
    },
}

impl From<MdioError> for SetupError {
    fn from(e: MdioError) -> Self {
        Self::Mdio(e)
    }
}

impl core::fmt::Display for SetupError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Mdio(e) => e.fmt(f),
            Self::ReadBack {
                register,
                wrote,
                read,
            } => write!(
                f,
                "extended register {register:#06x} read {read:#06x} after {wrote:#06x} was written"
            ),
        }
    }
}
