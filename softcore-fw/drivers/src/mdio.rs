//! The SoC's MDIO master (`weft_regs::soc::mdio`): reads and writes of an
//! Ethernet PHY's registers over the management interface of IEEE 802.3
//! clause 22 (§22.2.4).
//!
//! Each access is one frame: [`read`] and [`write`] wait for the master to
//! be idle, write `COMMAND` and poll `STATUS.BUSY` until the frame has
//! been clocked out (65 MDC periods, 3 250 core cycles at the reset
//! divisor). A master that stays busy past [`POLL_LIMIT`] polls, far
//! longer than the slowest frame the divisor allows, is an
//! [`MdioError::Timeout`]; a read that no PHY answers (the line stayed
//! high in the turnaround, `STATUS.NO_ANSWER`) is
//! [`MdioError::NoAnswer`].

use weft_regs::soc::mdio;

use crate::CsrBus;

/// PHY and register addresses are 5 bits (§22.2.4.5.5, §22.2.4.5.6).
pub const MAX_ADDRESS: u8 = 31;

/// Polls of `STATUS` before a busy master is given up on: each poll is at
/// least one core cycle, and the slowest frame (`DIVISOR` 255) takes
/// 65 × 2 × 256 = 33 280 cycles.
pub const POLL_LIMIT: u32 = 65 * 2 * 256;

/// Why an MDIO access failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MdioError {
    /// `STATUS.BUSY` did not clear within [`POLL_LIMIT`] polls: the
    /// master is hung (or absent from the SoC).
    Timeout,
    /// No PHY drove the turnaround's 0 of a read (§22.2.4.5.7): nothing
    /// answers at that PHY address.
    NoAnswer {
        /// The PHY address read.
        phy: u8,
        /// The register read.
        register: u8,
    },
    /// A PHY or register address above [`MAX_ADDRESS`].
    Address {
        /// The PHY address asked for.
        phy: u8,
        /// The register asked for.
        register: u8,
    },
}

impl core::fmt::Display for MdioError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Timeout => write!(f, "the MDIO master stayed busy"),
            Self::NoAnswer { phy, register } => {
                write!(
                    f,
                    "no PHY answered a read of register {register} at address {phy}"
                )
            }
            Self::Address { phy, register } => write!(
                f,
                "PHY address {phy} or register {register} is above {MAX_ADDRESS}"
            ),
        }
    }
}

/// Waits until no frame is under way.
fn wait_idle<B: CsrBus>(bus: &mut B) -> Result<u32, MdioError> {
    for _ in 0..POLL_LIMIT {
        let status = bus.read32(mdio::STATUS.address(0, 0));
        if mdio::BUSY.decode(status) == 0 {
            return Ok(status);
        }
    }
    Err(MdioError::Timeout)
}

/// Runs one frame with `COMMAND` = `command` and returns `STATUS` after it.
fn frame<B: CsrBus>(bus: &mut B, phy: u8, register: u8, command: u32) -> Result<u32, MdioError> {
    if phy > MAX_ADDRESS || register > MAX_ADDRESS {
        return Err(MdioError::Address { phy, register });
    }
    wait_idle(bus)?;
    let addressed =
        mdio::PHY.encode(u32::from(phy)) | mdio::REGISTER.encode(u32::from(register)) | command;
    bus.write32(mdio::COMMAND.address(0, 0), addressed);
    wait_idle(bus)
}

/// Reads register `register` of the PHY at address `phy` (a read frame,
/// operation code 10).
pub fn read<B: CsrBus>(bus: &mut B, phy: u8, register: u8) -> Result<u16, MdioError> {
    let status = frame(bus, phy, register, mdio::WRITE.encode(0))?;
    if mdio::NO_ANSWER.decode(status) == 1 {
        return Err(MdioError::NoAnswer { phy, register });
    }
    Ok(mdio::READ_VALUE.decode(bus.read32(mdio::READ_DATA.address(0, 0))) as u16)
}

/// Writes `value` to register `register` of the PHY at address `phy` (a
/// write frame, operation code 01). A write is never answered, so a PHY
/// that is not there goes unnoticed: read back what matters.
pub fn write<B: CsrBus>(bus: &mut B, phy: u8, register: u8, value: u16) -> Result<(), MdioError> {
    let command = mdio::WRITE.encode(1) | mdio::DATA.encode(u32::from(value));
    frame(bus, phy, register, command).map(|_| ())
}
