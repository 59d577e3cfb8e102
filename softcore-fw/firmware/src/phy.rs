//! The management Ethernet PHY's set-up over MDIO, on the boards whose
//! PHY needs one before the MAC's frames can pass.
//!
//! The VCU118's DP83867 sits at PHY address [`VCU118_PHY_ADDRESS`] and
//! reaches the FPGA over SGMII; it puts out the SGMII clock the wrapper's
//! PCS/PMA runs from only once it is set to 6-wire SGMII over MDIO
//! (`weft_drivers::dp83867`, boards/README.md "Management Ethernet"). The
//! firmware image is the same for every board, so the set-up runs where a
//! DP83867 answers at that address and nowhere else: on the Intel kits the
//! wrapper holds MDIO idle, and on the ISS no PHY is on the line, so the
//! read of its identifier finds nobody and nothing is said or written.

use core::fmt::Write;

use weft_drivers::dp83867;

use crate::mmio::Mmio;
use crate::uart::Uart;

/// The DP83867's PHY address on the VCU118 (its strap pins; UG1224's
/// Ethernet section, as verilog-ethernet's VCU118 design addresses it).
pub const VCU118_PHY_ADDRESS: u8 = 3;

/// Sets up the management PHY if this board has one that needs it, and
/// says so on the console; run before the MAC is started.
pub fn bring_up(uart: &mut Uart) {
    let phy = VCU118_PHY_ADDRESS;
    let _ = match dp83867::identify(&mut Mmio, phy) {
        Ok(false) => Ok(()),
        Ok(true) => match dp83867::configure_sgmii_10_100(&mut Mmio, phy) {
            Ok(()) => write!(
                uart,
                "phy: DP83867 at {phy}: 6-wire SGMII, 10/100 Mb/s advertised\r\n"
            ),
            Err(error) => write!(uart, "phy: DP83867 at {phy} not set up: {error}\r\n"),
        },
        Err(error) => write!(uart, "phy: {error}\r\n"),
    };
}
