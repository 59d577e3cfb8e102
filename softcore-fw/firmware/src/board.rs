//! The board's side of the management requests (weft-fabric's
//! [`Board`]): the data plane's CSR window through the soft core's
//! loads and stores, the configuration flash region ([`CONFIG_REGION`]),
//! and a firmware reset by the SoC's watchdog.
//!
//! A reset is the watchdog's (`weft_regs::soc::watchdog`): nothing else
//! in the SoC resets the core. [`SocBoard::schedule_reset`] arms it with
//! [`RESET_DELAY_MS`] (`weft_drivers::watchdog::arm`, which also restarts
//! the count of a watchdog the boot loader armed for a trial), and as long
//! again as the console needs to send what it has queued (up to 12 KiB,
//! 1.1 s at 115 200 baud: [`crate::uart::time_to_send`]); the firmware
//! never kicks it, so it fires that long after the trigger, time enough for the main loop to
//! hand the answer to the MAC and the MAC to send it, and nothing printed
//! is lost. The watchdog resets
//! the SoC only, and the data plane keeps forwarding by the tables it
//! holds until the restarted fabric manager writes them again: so
//! `ResetScope::Firmware` is served, and `ResetScope::Switch`, which
//! needs the data plane reset too, is not (the register map has no reset
//! of the data plane).

use weft_drivers::watchdog;
use weft_fabric::board::{Board, BoardFault};
use weft_fabric::persist::Flash;
use weft_proto::ResetScope;

use crate::flash::{Region, CONFIG_REGION};
use crate::mmio::{read, write, Mmio};

/// How long after a reset trigger the watchdog fires: a datagram leaves
/// the 100 Mb/s MAC in about 120 µs, and a pass of the main loop takes
/// well under a millisecond.
pub const RESET_DELAY_MS: u32 = 10;

/// The soft core's board.
pub struct SocBoard {
    config: Region,
}

impl SocBoard {
    /// The board with its configuration flash region.
    pub const fn new() -> Self {
        SocBoard {
            config: CONFIG_REGION,
        }
    }
}

impl Default for SocBoard {
    fn default() -> Self {
        Self::new()
    }
}

impl Board for SocBoard {
    fn read_csr(&mut self, address: u32) -> Result<u32, BoardFault> {
        Ok(read(address))
    }

    fn write_csr(&mut self, address: u32, value: u32) -> Result<(), BoardFault> {
        write(address, value);
        Ok(())
    }

    fn config_flash(&mut self) -> Option<&mut dyn Flash> {
        Some(&mut self.config)
    }

    fn resets(&self, scope: ResetScope) -> bool {
        scope == ResetScope::Firmware
    }

    fn schedule_reset(&mut self, _scope: ResetScope) {
        let console_ms = crate::uart::time_to_send().total_millis() as u32 + 1;
        watchdog::arm(
            &mut Mmio,
            watchdog::load_for_ms(RESET_DELAY_MS + console_ms),
        );
    }
}
