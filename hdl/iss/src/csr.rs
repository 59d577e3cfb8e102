//! The machine-mode control and status registers of weft's core and their
//! read/write rules (Privileged ISA 20211203 Chapter 2 and §3.1;
//! Unprivileged ISA 20191213 Chapter 10 for the counters).
//!
//! Only machine mode exists, so every implemented CSR is accessible and
//! the only access rule left is the read-only one of §2.1: a write to an
//! address whose bits \[11:10\] are `0b11` is an illegal instruction, as is
//! any access to a CSR not listed here.

/// `mstatus` (Privileged §3.1.6).
pub const MSTATUS: u16 = 0x300;
/// `misa` (Privileged §3.1.1).
pub const MISA: u16 = 0x301;
/// `mie` (Privileged §3.1.9).
pub const MIE: u16 = 0x304;
/// `mtvec` (Privileged §3.1.7).
pub const MTVEC: u16 = 0x305;
/// `mstatush`, the upper half of `mstatus` on RV32 (Privileged §3.1.6).
pub const MSTATUSH: u16 = 0x310;
/// `mscratch` (Privileged §3.1.13).
pub const MSCRATCH: u16 = 0x340;
/// `mepc` (Privileged §3.1.14).
pub const MEPC: u16 = 0x341;
/// `mcause` (Privileged §3.1.15).
pub const MCAUSE: u16 = 0x342;
/// `mtval` (Privileged §3.1.16).
pub const MTVAL: u16 = 0x343;
/// `mip` (Privileged §3.1.9).
pub const MIP: u16 = 0x344;
/// `mcycle` (Privileged §3.1.10).
pub const MCYCLE: u16 = 0xB00;
/// `minstret` (Privileged §3.1.10).
pub const MINSTRET: u16 = 0xB02;
/// `mcycleh`, upper 32 bits of `mcycle` (Privileged §3.1.10).
pub const MCYCLEH: u16 = 0xB80;
/// `minstreth`, upper 32 bits of `minstret` (Privileged §3.1.10).
pub const MINSTRETH: u16 = 0xB82;
/// `cycle`, read-only shadow of `mcycle` (Unprivileged §10.1).
pub const CYCLE: u16 = 0xC00;
/// `instret`, read-only shadow of `minstret` (Unprivileged §10.1).
pub const INSTRET: u16 = 0xC02;
/// `cycleh` (Unprivileged §10.1).
pub const CYCLEH: u16 = 0xC80;
/// `instreth` (Unprivileged §10.1).
pub const INSTRETH: u16 = 0xC82;
/// `mvendorid` (Privileged §3.1.2); zero: a non-commercial implementation.
pub const MVENDORID: u16 = 0xF11;
/// `marchid` (Privileged §3.1.3); zero: not allocated.
pub const MARCHID: u16 = 0xF12;
/// `mimpid` (Privileged §3.1.4); zero: not implemented.
pub const MIMPID: u16 = 0xF13;
/// `mhartid` (Privileged §3.1.5).
pub const MHARTID: u16 = 0xF14;

/// `misa` of weft's core: MXL = 1 (32-bit, bits 31:30) and the I (bit 8)
/// and M (bit 12) extensions (Privileged §3.1.1). Writes are ignored, which
/// the WARL field rules allow.
pub const MISA_VALUE: u32 = (1 << 30) | (1 << 8) | (1 << 12);

/// `mstatus.MIE`, the global machine interrupt enable (Privileged §3.1.6.1).
pub const MSTATUS_MIE: u32 = 1 << 3;
/// `mstatus.MPIE`, MIE before the last trap (Privileged §3.1.6.1).
pub const MSTATUS_MPIE: u32 = 1 << 7;
/// `mstatus.MPP`, bits 12:11; fixed to M (`0b11`) because M is the only
/// mode (Privileged §3.1.6.1: "MPP ... may be hardwired to M if M is the
/// only supported mode" — the field is WARL and holds only M).
pub const MSTATUS_MPP: u32 = 0b11 << 11;

/// Bits of `mip`/`mie` that exist: MSI, MTI and MEI (Privileged §3.1.9).
pub const INTERRUPT_BITS: u32 = (1 << 3) | (1 << 7) | (1 << 11);

/// `mtvec.MODE` = 1: vectored; interrupts jump to BASE + 4 × cause
/// (Privileged §3.1.7, Table 3.5).
pub const MTVEC_VECTORED: u32 = 1;

/// Why a CSR instruction is illegal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CsrError {
    /// No CSR at this address on weft's core.
    Unimplemented {
        /// The CSR address.
        csr: u16,
    },
    /// A write to a read-only CSR (address bits \[11:10\] = `0b11`,
    /// Privileged §2.1).
    ReadOnly {
        /// The CSR address.
        csr: u16,
    },
}

/// The CSR state of the hart.
///
/// Fields hold architectural state; the WARL/read-only rules are applied in
/// [`Csrs::read`] and [`Csrs::write`], which CSR instructions use. Trap
/// entry and `mret` change `mstatus`, `mepc`, `mcause` and `mtval` through
/// the `pub(crate)` fields directly, as hardware does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Csrs {
    pub(crate) mie_global: bool,
    pub(crate) mpie: bool,
    pub(crate) mie: u32,
    /// Pending interrupts, driven by the embedder's interrupt lines; CSR
    /// writes cannot change it because MSIP, MTIP and MEIP are read-only
    /// in `mip` on a machine-only hart (Privileged §3.1.9).
    pub(crate) mip: u32,
    pub(crate) mtvec: u32,
    pub(crate) mscratch: u32,
    pub(crate) mepc: u32,
    pub(crate) mcause: u32,
    pub(crate) mtval: u32,
    pub(crate) mcycle: u64,
    pub(crate) minstret: u64,
    /// Set by a CSR write to `mcycle`/`mcycleh`: that instruction's own
    /// cycle is not counted, so the next instruction reads what was written.
    pub(crate) mcycle_written: bool,
    /// Same for `minstret`/`minstreth`: "if an instruction writes instret,
    /// the write takes precedence over the increment" by the writing
    /// instruction's retirement (Privileged §3.1.10 / Unprivileged §10.1).
    pub(crate) minstret_written: bool,
    pub(crate) hart_id: u32,
}

impl Csrs {
    /// Reset state (Privileged §3.4): MIE = 0, MPP = M, `mcause` = 0 (no
    /// reset cause distinguished), counters at zero; `mtvec` resets to 0.
    pub fn new(hart_id: u32) -> Self {
        Self {
            mie_global: false,
            mpie: false,
            mie: 0,
            mip: 0,
            mtvec: 0,
            mscratch: 0,
            mepc: 0,
            mcause: 0,
            mtval: 0,
            mcycle: 0,
            minstret: 0,
            mcycle_written: false,
            minstret_written: false,
            hart_id,
        }
    }

    /// The current value of `mstatus`.
    pub fn mstatus(&self) -> u32 {
        let mut v = MSTATUS_MPP;
        if self.mie_global {
            v |= MSTATUS_MIE;
        }
        if self.mpie {
            v |= MSTATUS_MPIE;
        }
        v
    }

    /// `mie`: which interrupts are enabled.
    pub fn mie(&self) -> u32 {
        self.mie
    }

    /// `mip`: which interrupts are pending.
    pub fn mip(&self) -> u32 {
        self.mip
    }

    /// `mtvec`: trap vector base and mode.
    pub fn mtvec(&self) -> u32 {
        self.mtvec
    }

    /// `mepc`: where the last trap was taken.
    pub fn mepc(&self) -> u32 {
        self.mepc
    }

    /// `mcause`: the last trap's cause.
    pub fn mcause(&self) -> u32 {
        self.mcause
    }

    /// `mtval`: the last trap's value.
    pub fn mtval(&self) -> u32 {
        self.mtval
    }

    /// `mscratch`.
    pub fn mscratch(&self) -> u32 {
        self.mscratch
    }

    /// `mcycle`, 64 bits.
    pub fn mcycle(&self) -> u64 {
        self.mcycle
    }

    /// `minstret`, 64 bits.
    pub fn minstret(&self) -> u64 {
        self.minstret
    }

    /// Reads a CSR as a CSR instruction does.
    pub fn read(&self, csr: u16) -> Result<u32, CsrError> {
        Ok(match csr {
            MSTATUS => self.mstatus(),
            MSTATUSH => 0,
            MISA => MISA_VALUE,
            MIE => self.mie,
            MIP => self.mip,
            MTVEC => self.mtvec,
            MSCRATCH => self.mscratch,
            MEPC => self.mepc,
            MCAUSE => self.mcause,
            MTVAL => self.mtval,
            MCYCLE | CYCLE => self.mcycle as u32,
            MCYCLEH | CYCLEH => (self.mcycle >> 32) as u32,
            MINSTRET | INSTRET => self.minstret as u32,
            MINSTRETH | INSTRETH => (self.minstret >> 32) as u32,
            MVENDORID | MARCHID | MIMPID => 0,
            MHARTID => self.hart_id,
            _ => return Err(CsrError::Unimplemented { csr }),
        })
    }

    /// Writes a CSR as a CSR instruction does, applying each field's
    /// WARL/read-only rule; fails for read-only or missing CSRs.
    ///
    /// Written between steps (by a debugger or test set-up), a counter
    /// takes the value and keeps counting from it on the next step.
    pub fn write(&mut self, csr: u16, value: u32) -> Result<(), CsrError> {
        // Privileged §2.1: bits [11:10] = 0b11 mark a read-only CSR.
        if csr >> 10 == 0b11 {
            return match self.read(csr) {
                Ok(_) => Err(CsrError::ReadOnly { csr }),
                Err(e) => Err(e),
            };
        }
        match csr {
            MSTATUS => {
                self.mie_global = value & MSTATUS_MIE != 0;
                self.mpie = value & MSTATUS_MPIE != 0;
            }
            // mstatush: MBE/SBE are zero (little-endian only); nothing writable.
            MSTATUSH | MISA => {}
            MIE => self.mie = value & INTERRUPT_BITS,
            // MSIP, MTIP, MEIP are read-only in mip (Privileged §3.1.9).
            MIP => {}
            // MODE values >= 2 are reserved; MODE is WARL, so keep bit 0 only
            // (Privileged §3.1.7).
            MTVEC => self.mtvec = value & !0b10,
            MSCRATCH => self.mscratch = value,
            // IALIGN = 32: mepc[1:0] are always zero (Privileged §3.1.14).
            MEPC => self.mepc = value & !0b11,
            MCAUSE => self.mcause = value,
            MTVAL => self.mtval = value,
            MCYCLE => self.mcycle = (self.mcycle & !0xffff_ffff) | u64::from(value),
            MCYCLEH => self.mcycle = (self.mcycle & 0xffff_ffff) | u64::from(value) << 32,
            MINSTRET => self.minstret = (self.minstret & !0xffff_ffff) | u64::from(value),
            MINSTRETH => self.minstret = (self.minstret & 0xffff_ffff) | u64::from(value) << 32,
            _ => return Err(CsrError::Unimplemented { csr }),
        }
        Ok(())
    }

    /// Records that the executing CSR instruction wrote `csr`, so that if
    /// it is a counter, the write wins over this step's increment.
    pub(crate) fn note_instruction_write(&mut self, csr: u16) {
        match csr {
            MCYCLE | MCYCLEH => self.mcycle_written = true,
            MINSTRET | MINSTRETH => self.minstret_written = true,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_and_missing_csrs_refuse_writes() {
        let mut c = Csrs::new(0);
        assert_eq!(c.write(CYCLE, 1), Err(CsrError::ReadOnly { csr: CYCLE }));
        assert_eq!(
            c.write(MHARTID, 1),
            Err(CsrError::ReadOnly { csr: MHARTID })
        );
        // Read-only address range, but no CSR there.
        assert_eq!(
            c.write(0xC01, 1),
            Err(CsrError::Unimplemented { csr: 0xC01 })
        );
        assert_eq!(
            c.write(0x7C0, 1),
            Err(CsrError::Unimplemented { csr: 0x7C0 })
        );
        assert_eq!(c.read(0x7C0), Err(CsrError::Unimplemented { csr: 0x7C0 }));
    }

    #[test]
    fn counter_halves_combine_into_64_bits() {
        let mut c = Csrs::new(0);
        c.write(MINSTRETH, 0x1234).unwrap();
        c.write(MINSTRET, 0x5678).unwrap();
        assert_eq!(c.minstret(), 0x1234_0000_5678);
        assert_eq!(c.read(INSTRETH), Ok(0x1234));
        assert_eq!(c.read(INSTRET), Ok(0x5678));
        c.write(MCYCLEH, 7).unwrap();
        assert_eq!(c.read(CYCLEH), Ok(7));
        // A write from outside an instruction does not suppress counting.
        assert!(!c.minstret_written && !c.mcycle_written);
    }
}
