//! What the board gives the management requests beyond the fabric: raw
//! access to the data plane's CSR window, the flash region the
//! configuration is saved in, and a reset of the switch.
//!
//! The firmware implements [`Board`] with the soft core's CSR bus, its
//! SPI flash and the SoC's watchdog; the simulator and the tests with a
//! model of the window, flash in memory and a reset they record. What a
//! board cannot do it says ([`BoardFault::Unsupported`]), and the request
//! is answered `Unsupported`.

use weft_proto::ResetScope;

use crate::persist::Flash;

/// Why the board could not carry out an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoardFault {
    /// This board has no such facility (a simulated window that does not
    /// model the register, a board without configuration flash).
    Unsupported,
}

/// The board's side of the management requests that are not the fabric
/// manager's state: CSR diagnostics, saved configuration and reset.
pub trait Board {
    /// Reads the 32-bit CSR at byte address `address` of the data plane's
    /// window (`weft_regs::csr`). The caller has checked that a register
    /// of the map is there, on a port the switch has.
    fn read_csr(&mut self, address: u32) -> Result<u32, BoardFault>;

    /// Writes `value` to the 32-bit CSR at byte address `address`; the
    /// caller has checked that the fabric manager does not own it.
    fn write_csr(&mut self, address: u32, value: u32) -> Result<(), BoardFault>;

    /// The flash region that holds the saved configuration, two slots of
    /// `crate::persist` records; `None` on a board without one.
    fn config_flash(&mut self) -> Option<&mut dyn Flash>;

    /// Whether the board can reset `scope`: a reset is armed only if so.
    fn resets(&self, scope: ResetScope) -> bool;

    /// Resets `scope` once the answer to the request now being handled
    /// has been sent: the caller sends it, then resets. Called only for a
    /// scope [`Board::resets`] accepts.
    fn schedule_reset(&mut self, scope: ResetScope);
}
