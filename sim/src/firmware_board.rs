//! What the firmware runs on, as the management CPU of a simulated fabric
//! needs it: a board with the SoC's peripherals and the data plane's CSR
//! window, run in slices of the SoC's clock and left to sleep while the
//! firmware waits in `wfi`. The same firmware ELF runs on the
//! instruction-set simulator ([`IssBoard`]) or on the RTL soft core
//! ([`RtlBoard`](crate::rtl_board::RtlBoard)), chosen per run
//! ([`FirmwareCore`]); [`crate::iss_manager`] joins either to the world
//! the same way.

use std::fmt;
use std::str::FromStr;

use crate::iss_board::{Activity, IssBoard};

/// Which model of the soft core runs the firmware.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FirmwareCore {
    /// weft-iss's instruction-set simulator ([`IssBoard`]): a step per
    /// tick, fast.
    #[default]
    Iss,
    /// weft-hdl's RTL SoC, cycle by cycle
    /// ([`RtlBoard`](crate::rtl_board::RtlBoard)): the core, memories and
    /// peripherals as the FPGA has them, about a thousand times slower.
    Rtl,
}

impl FirmwareCore {
    /// The name a command line or a scenario gives it.
    pub fn name(self) -> &'static str {
        match self {
            FirmwareCore::Iss => "iss",
            FirmwareCore::Rtl => "rtl",
        }
    }

    /// What a report calls it.
    pub fn description(self) -> &'static str {
        match self {
            FirmwareCore::Iss => "the ISS",
            FirmwareCore::Rtl => "the RTL soft core",
        }
    }
}

impl fmt::Display for FirmwareCore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A firmware core name that is neither `iss` nor `rtl`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownCore(pub String);

impl fmt::Display for UnknownCore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is no firmware core: `iss` (the instruction-set simulator) or `rtl` (the RTL soft core)",
            self.0
        )
    }
}

impl std::error::Error for UnknownCore {}

impl FromStr for FirmwareCore {
    type Err = UnknownCore;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "iss" => Ok(FirmwareCore::Iss),
            "rtl" => Ok(FirmwareCore::Rtl),
            _ => Err(UnknownCore(name.to_owned())),
        }
    }
}

/// A board the firmware runs on, its time in ticks of the SoC's clock at
/// the reference soft core clock ([`crate::iss_board::CPU_CLOCK_HZ`]).
/// Its CSR window is a `weft_iss::data_plane::DataPlaneWindow` the
/// caller keeps a handle on, whose interrupt line the board samples.
pub trait FirmwareBoard {
    /// Which core this is.
    fn core(&self) -> FirmwareCore;

    /// Ticks since the board was built, across watchdog resets.
    fn ticks(&self) -> u64;

    /// Ticks until the firmware's timer alarm (`mtimecmp`), 0 if due.
    fn ticks_to_alarm(&self) -> u64;

    /// Whether an external interrupt line (`mip.MEIP`'s sources) is high.
    fn external_interrupt(&self) -> bool;

    /// Runs the firmware for at most `max_ticks` ticks, or until it waits
    /// in `wfi` with no enabled interrupt pending.
    fn run(&mut self, max_ticks: u64) -> Activity;

    /// Lets `ticks` pass while the firmware sleeps: the timer and the
    /// watchdog count, nothing runs (what wakes it in them runs).
    fn advance_ticks(&mut self, ticks: u64);

    /// What the firmware printed on its console UART since the last take.
    fn take_console(&mut self) -> Vec<u8>;

    /// The board as the ISS board, to reach its MAC and counters.
    fn iss(&self) -> Option<&IssBoard> {
        None
    }
}

impl FirmwareBoard for IssBoard {
    fn core(&self) -> FirmwareCore {
        FirmwareCore::Iss
    }

    fn ticks(&self) -> u64 {
        IssBoard::ticks(self)
    }

    fn ticks_to_alarm(&self) -> u64 {
        IssBoard::ticks_to_alarm(self)
    }

    fn external_interrupt(&self) -> bool {
        IssBoard::external_interrupt(self)
    }

    fn run(&mut self, max_ticks: u64) -> Activity {
        IssBoard::run(self, max_ticks)
    }

    fn advance_ticks(&mut self, ticks: u64) {
        IssBoard::advance_ticks(self, ticks);
    }

    fn take_console(&mut self) -> Vec<u8> {
        self.console().take_transmitted()
    }

    fn iss(&self) -> Option<&IssBoard> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_reads_back_from_its_name_and_a_stranger_is_named_in_the_error() {
        for core in [FirmwareCore::Iss, FirmwareCore::Rtl] {
            assert_eq!(core.name().parse(), Ok(core));
        }
        let parsed = "arm".parse::<FirmwareCore>();
        assert_eq!(parsed, Err(UnknownCore("arm".into())));
        let Err(error) = parsed else {
            return;
        };
        assert!(error.to_string().contains("`arm`"), "{error}");
    }
}
