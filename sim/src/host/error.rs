//! Why the host's enumeration, hot-plug handling or drivers failed.

use weft_pcie::config::bar::{BarAssignError, BarDecodeError};
use weft_pcie::config::WalkError;
use weft_pcie::Bdf;

use super::access::{ConfigAccessError, MemoryAccessError, WaitTimeout};
use super::interrupts::InterruptError;

/// Why the host could not finish an operation on its hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostError {
    /// A configuration access failed where software cannot carry on.
    Config(ConfigAccessError),
    /// A memory access failed.
    Memory(MemoryAccessError),
    /// BAR sizing found a malformed BAR.
    BarSizing {
        /// The function.
        bdf: Bdf,
        /// What was wrong.
        error: BarDecodeError<ConfigAccessError>,
    },
    /// A BAR could not be written.
    BarAssignment {
        /// The function.
        bdf: Bdf,
        /// What was wrong.
        error: BarAssignError<ConfigAccessError>,
    },
    /// A capability list is malformed.
    CapabilityWalk {
        /// The function.
        bdf: Bdf,
        /// What was wrong.
        error: WalkError<ConfigAccessError>,
    },
    /// No bus number was left for a bridge's secondary bus.
    BusNumbersExhausted {
        /// The bridge.
        bridge: Bdf,
        /// The highest bus number available to it.
        limit: u8,
    },
    /// The resources below a bridge (or the host's MMIO range) do not fit
    /// the window they must go in.
    WindowTooSmall {
        /// The bridge, `None` for the host's own range.
        bridge: Option<Bdf>,
        /// Which window.
        prefetchable: bool,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// No interrupt vector was left.
    Interrupts(InterruptError),
    /// The host ran out of RAM for DMA buffers.
    OutOfDmaMemory {
        /// Bytes asked for.
        requested: u64,
    },
    /// No function at that routing ID.
    NoSuchFunction {
        /// The routing ID.
        bdf: Bdf,
    },
    /// The function has no SR-IOV capability.
    NotSriovCapable {
        /// The function.
        bdf: Bdf,
    },
    /// More VFs asked for than TotalVFs.
    TooManyVfs {
        /// The PF.
        bdf: Bdf,
        /// VFs asked for.
        requested: u16,
        /// TotalVFs.
        total: u16,
    },
    /// The VFs would need bus numbers beyond the bridge above the PF.
    VfBusOutOfRange {
        /// The PF.
        bdf: Bdf,
        /// The last VF's bus.
        bus: u8,
        /// The bridge's subordinate bus.
        subordinate: u8,
    },
    /// The function has no driver bound of the kind asked for.
    NoDriver {
        /// The function.
        bdf: Bdf,
    },
    /// Waiting for a device timed out.
    Timeout(WaitTimeout),
    /// A hot-plug command (a Slot Control write) did not complete within
    /// [`super::hotplug::COMMAND_TIMEOUT`] (§6.7.3.2).
    HotPlugCommandTimeout {
        /// The downstream port.
        port: Bdf,
    },
    /// The port has no hot-plug slot with a power controller to turn off.
    NoPowerController {
        /// The port.
        port: Bdf,
    },
}

impl From<ConfigAccessError> for HostError {
    fn from(error: ConfigAccessError) -> Self {
        HostError::Config(error)
    }
}

impl From<MemoryAccessError> for HostError {
    fn from(error: MemoryAccessError) -> Self {
        HostError::Memory(error)
    }
}

impl From<InterruptError> for HostError {
    fn from(error: InterruptError) -> Self {
        HostError::Interrupts(error)
    }
}

impl From<WaitTimeout> for HostError {
    fn from(error: WaitTimeout) -> Self {
        HostError::Timeout(error)
    }
}
