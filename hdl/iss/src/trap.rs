//! Trap causes: the synchronous exceptions and interrupts of a machine-mode
//! RV32 hart, with their `mcause` codes (Privileged ISA 20211203 §3.1.15,
//! Table 3.6).

use core::fmt;

/// A synchronous exception weft's core can raise, with its exception code
/// (Privileged 20211203 Table 3.6; codes with no cause here — page faults,
/// calls from U/S-mode — cannot occur on a machine-mode-only hart).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Exception {
    /// A taken branch or jump whose target is not 4-byte aligned; raised on
    /// the branch or jump itself (Unprivileged 20191213 §2.5).
    InstructionAddressMisaligned = 0,
    /// Fetch from an address the instruction port does not decode.
    InstructionAccessFault = 1,
    /// An encoding the core does not implement, or a CSR access the CSR's
    /// address rules forbid (Privileged 20211203 §2.1).
    IllegalInstruction = 2,
    /// `ebreak` (Privileged 20211203 §3.3.1).
    Breakpoint = 3,
    /// A load whose address is not a multiple of its width.
    LoadAddressMisaligned = 4,
    /// A load from an address the data port does not decode or may not read.
    LoadAccessFault = 5,
    /// A store whose address is not a multiple of its width.
    StoreAddressMisaligned = 6,
    /// A store to an address the data port does not decode or may not write.
    StoreAccessFault = 7,
    /// `ecall` in machine mode (Privileged 20211203 §3.3.1).
    EnvironmentCallFromMMode = 11,
}

impl Exception {
    /// The exception code, as written to `mcause` with bit 31 clear.
    pub fn code(self) -> u32 {
        self as u32
    }
}

/// An interrupt source of a machine-mode hart, with its interrupt code
/// (Privileged 20211203 Table 3.6) — also its bit in `mip` and `mie`
/// (§3.1.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Interrupt {
    /// Machine software interrupt (MSIP), raised by the SoC's software
    /// interrupt register.
    MachineSoftware = 3,
    /// Machine timer interrupt (MTIP), raised while `mtime >= mtimecmp`.
    MachineTimer = 7,
    /// Machine external interrupt (MEIP), raised by the SoC's peripherals.
    MachineExternal = 11,
}

impl Interrupt {
    /// Every interrupt, highest priority first: "MEI, MSI, MTI"
    /// (Privileged 20211203 §3.1.9).
    pub const BY_PRIORITY: [Interrupt; 3] = [
        Interrupt::MachineExternal,
        Interrupt::MachineSoftware,
        Interrupt::MachineTimer,
    ];

    /// The interrupt code, written to `mcause` with bit 31 set.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// This interrupt's bit in `mip` and `mie`.
    pub fn mask(self) -> u32 {
        1 << self.code()
    }
}

/// What caused a trap: an exception or an interrupt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TrapCause {
    /// A synchronous exception raised by the instruction at `mepc`.
    Exception(Exception),
    /// An interrupt taken before the instruction at `mepc`.
    Interrupt(Interrupt),
}

impl TrapCause {
    /// The value written to `mcause`: the Interrupt bit (bit 31) and the
    /// code (Privileged 20211203 §3.1.15).
    pub fn mcause(self) -> u32 {
        match self {
            Self::Exception(e) => e.code(),
            Self::Interrupt(i) => (1 << 31) | i.code(),
        }
    }
}

impl fmt::Display for TrapCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exception(e) => write!(f, "exception {e:?} (mcause {})", e.code()),
            Self::Interrupt(i) => write!(f, "interrupt {i:?} (mcause {:#x})", self.mcause()),
        }
    }
}

/// A trap the hart took: its cause and the value written to `mtval`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TrapTaken {
    /// Exception or interrupt.
    pub cause: TrapCause,
    /// The value written to `mtval` (Privileged 20211203 §3.1.16): the
    /// faulting address, the illegal instruction's bits, the `ebreak`'s
    /// address, or zero.
    pub tval: u32,
}
