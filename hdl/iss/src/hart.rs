//! One RV32IM + Zicsr hart in machine mode: fetch, decode, execute, trap,
//! and the per-step retirement record the RTL core is compared against.
//!
//! Decisions the ISA leaves to the implementation, fixed here (and by the
//! reference RTL core, which must agree):
//!
//! - **Misaligned loads and stores trap** (load/store address-misaligned,
//!   `mtval` = the address) instead of being split; Unprivileged 20191213
//!   §2.6 allows either. Alignment is checked before the bus is asked, so a
//!   misaligned access to an unmapped address reports misalignment —
//!   Privileged 20211203 §3.1.15 (Table 3.7) allows that order.
//! - **Branch and jump targets** that are not 4-byte aligned raise
//!   instruction-address-misaligned on the branch or jump itself, with
//!   `mtval` = the target and `rd` not written (Unprivileged §2.5). A branch
//!   that is not taken never traps.
//! - **`ebreak`** writes its own address to `mtval`; `ecall` writes zero;
//!   an illegal instruction writes its bits; access faults write the
//!   address (Privileged §3.1.16).
//! - **`wfi`** retires, then the hart idles ([`Step::Idle`]) until an
//!   interrupt is pending *and enabled in `mie`*, whatever `mstatus.MIE`
//!   says (Privileged §3.3.3); it then resumes after the `wfi`, taking the
//!   interrupt first if `mstatus.MIE` is set.
//! - **`mcycle` counts steps**: one per call to [`Hart::step`], idle steps
//!   and interrupt entries included. The ISS has no timing model; the RTL's
//!   cycle counts are compared as figures, not in lock-step.
//! - **`time`/`timeh` are not implemented** (illegal instruction): the
//!   SoC's `mtime` is memory-mapped (Privileged §3.2.1).

use crate::bus::{Bus, BusFault, HarvardBus, Width};
use crate::csr::{Csrs, MTVEC_VECTORED};
use crate::decode::{decode, Instruction};
use crate::elf::{self, ElfError, LoadedImage};
use crate::trap::{Exception, Interrupt, TrapCause, TrapTaken};

/// A write to an integer register by a retired instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegWrite {
    /// Register number `1..=31` (writes to `x0` are discarded and not
    /// reported).
    pub rd: u8,
    /// The value written.
    pub value: u32,
}

/// A store performed by a retired instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemWrite {
    /// Byte address.
    pub addr: u32,
    /// Store width.
    pub width: Width,
    /// The stored value, masked to `width` (`sb` of `0x1234` is `0x34`).
    pub value: u32,
}

/// What one step of the hart did: the record the RTL core is compared
/// against, field by field, on every step.
///
/// - An instruction that completes has `trap: None` and its register and
///   memory writes.
/// - An instruction that raises an exception has `trap: Some(..)` and no
///   writes: exceptions are precise, so it changed no architectural state
///   besides the trap CSRs and the PC.
/// - An interrupt taken between instructions has `instruction: None`,
///   `pc` = the address of the instruction it preempted (now in `mepc`),
///   and `trap: Some(..)`.
/// - A fetch that faults has `instruction: None` and the fault in `trap`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Retirement {
    /// Address of the instruction (or of the preempted instruction).
    pub pc: u32,
    /// The instruction word, if one was fetched.
    pub instruction: Option<u32>,
    /// The destination register write, if any.
    pub rd_write: Option<RegWrite>,
    /// The memory write, if any.
    pub mem_write: Option<MemWrite>,
    /// The trap taken instead of completing, if any.
    pub trap: Option<TrapTaken>,
}

/// The outcome of [`Hart::step`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// An instruction retired, raised an exception, or an interrupt was
    /// taken.
    Retired(Retirement),
    /// The hart is waiting in `wfi` with no enabled interrupt pending;
    /// nothing but `mcycle` changed.
    Idle,
}

impl Step {
    /// The retirement record, unless the hart idled.
    pub fn retirement(self) -> Option<Retirement> {
        match self {
            Self::Retired(r) => Some(r),
            Self::Idle => None,
        }
    }
}

/// Why [`Hart::run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunStop {
    /// `max_steps` steps were taken.
    StepLimit,
    /// The hart is idle in `wfi`; it will not progress until the embedder
    /// raises an enabled interrupt line.
    Idle,
}

/// Summary of [`Hart::run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RunSummary {
    /// Steps taken (each a retirement, an exception or an interrupt entry).
    pub steps: u64,
    /// Why the run ended.
    pub stop: RunStop,
}

/// A synchronous exception raised while executing one instruction, with
/// its `mtval`.
type Raise = (Exception, u32);

/// One machine-mode RV32IM + Zicsr hart and the bus it is attached to.
pub struct Hart<B: Bus = HarvardBus> {
    regs: [u32; 32],
    pc: u32,
    csrs: Csrs,
    waiting: bool,
    bus: B,
}

impl<B: Bus> core::fmt::Debug for Hart<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hart")
            .field("pc", &format_args!("{:#010x}", self.pc))
            .field("regs", &self.regs)
            .field("csrs", &self.csrs)
            .field("waiting", &self.waiting)
            .finish_non_exhaustive()
    }
}

impl<B: Bus> Hart<B> {
    /// A hart with `mhartid` = 0, reset at PC 0, on `bus`.
    pub fn new(bus: B) -> Self {
        Self::with_hart_id(bus, 0)
    }

    /// A hart with the given `mhartid`, reset at PC 0, on `bus`.
    pub fn with_hart_id(bus: B, hart_id: u32) -> Self {
        Self {
            regs: [0; 32],
            pc: 0,
            csrs: Csrs::new(hart_id),
            waiting: false,
            bus,
        }
    }

    /// Resets registers, CSRs and the wait state, and starts at `pc`
    /// (Privileged 20211203 §3.4); memory and interrupt lines are kept.
    pub fn reset(&mut self, pc: u32) {
        let mip = self.csrs.mip;
        self.csrs = Csrs::new(self.csrs.hart_id);
        self.csrs.mip = mip;
        self.regs = [0; 32];
        self.waiting = false;
        self.pc = pc;
    }

    /// Loads a RISC-V ELF image onto the bus and sets the PC to its entry
    /// point; see [`crate::elf::load`].
    pub fn load_elf(&mut self, image: &[u8]) -> Result<LoadedImage, ElfError> {
        let loaded = elf::load(&mut self.bus, image)?;
        self.pc = loaded.entry;
        Ok(loaded)
    }

    /// The address of the next instruction.
    pub fn pc(&self) -> u32 {
        self.pc
    }

    /// Sets the address of the next instruction.
    pub fn set_pc(&mut self, pc: u32) {
        self.pc = pc;
    }

    /// Integer register `r` (`x0` reads zero).
    ///
    /// # Panics
    /// If `r > 31`.
    pub fn reg(&self, r: u8) -> u32 {
        self.regs[usize::from(r)]
    }

    /// Sets integer register `r`; writes to `x0` are ignored.
    ///
    /// # Panics
    /// If `r > 31`.
    pub fn set_reg(&mut self, r: u8, value: u32) {
        if r != 0 {
            self.regs[usize::from(r)] = value;
        }
    }

    /// All 32 integer registers.
    pub fn regs(&self) -> &[u32; 32] {
        &self.regs
    }

    /// The CSR state.
    pub fn csrs(&self) -> &Csrs {
        &self.csrs
    }

    /// The CSR state, writable through [`Csrs::write`]'s rules (for
    /// debuggers and test set-up).
    pub fn csrs_mut(&mut self) -> &mut Csrs {
        &mut self.csrs
    }

    /// The bus.
    pub fn bus(&self) -> &B {
        &self.bus
    }

    /// The bus, mutable (to poke memory or devices between steps).
    pub fn bus_mut(&mut self) -> &mut B {
        &mut self.bus
    }

    /// Whether the hart is waiting in `wfi`.
    pub fn is_waiting(&self) -> bool {
        self.waiting
    }

    /// Drives an interrupt line: `mip`'s bit for `irq` follows `pending`.
    /// The embedder calls this between steps as its timer, software
    /// interrupt register and external interrupt controller change.
    pub fn set_interrupt_pending(&mut self, irq: Interrupt, pending: bool) {
        if pending {
            self.csrs.mip |= irq.mask();
        } else {
            self.csrs.mip &= !irq.mask();
        }
    }

    /// Whether `irq`'s line is asserted.
    pub fn interrupt_pending(&self, irq: Interrupt) -> bool {
        self.csrs.mip & irq.mask() != 0
    }

    /// Runs up to `max_steps` steps, stopping early when the hart idles in
    /// `wfi`. This is the fast path of the system simulator: no records are
    /// kept.
    pub fn run(&mut self, max_steps: u64) -> RunSummary {
        for steps in 0..max_steps {
            if let Step::Idle = self.step_inner() {
                return RunSummary {
                    steps,
                    stop: RunStop::Idle,
                };
            }
        }
        RunSummary {
            steps: max_steps,
            stop: RunStop::StepLimit,
        }
    }

    /// Executes one step: takes a pending interrupt, or fetches and
    /// executes one instruction, or idles in `wfi`.
    pub fn step(&mut self) -> Step {
        self.step_inner()
    }

    #[inline(always)]
    fn step_inner(&mut self) -> Step {
        let step = self.advance();
        // mcycle counts every step; a CSR write to it by this step wins
        // over the increment (Privileged 20211203 §3.1.10).
        if self.csrs.mcycle_written {
            self.csrs.mcycle_written = false;
        } else {
            self.csrs.mcycle = self.csrs.mcycle.wrapping_add(1);
        }
        step
    }

    #[inline(always)]
    fn advance(&mut self) -> Step {
        // Interrupts are taken between instructions (Privileged §3.1.9).
        let pending = self.csrs.mip & self.csrs.mie;
        if pending != 0 {
            // §3.3.3: wfi resumes when any interrupt is pending and
            // enabled in mie, regardless of the global enable.
            self.waiting = false;
            if self.csrs.mie_global {
                return Step::Retired(self.take_interrupt(pending));
            }
        }
        if self.waiting {
            return Step::Idle;
        }
        Step::Retired(self.execute_one())
    }

    #[cold]
    fn take_interrupt(&mut self, pending: u32) -> Retirement {
        let irq = Interrupt::BY_PRIORITY
            .into_iter()
            .find(|i| pending & i.mask() != 0)
            .expect("pending is non-zero and only holds implemented interrupt bits");
        let pc = self.pc;
        let trap = TrapTaken {
            cause: TrapCause::Interrupt(irq),
            tval: 0,
        };
        self.enter_trap(pc, trap);
        Retirement {
            pc,
            instruction: None,
            rd_write: None,
            mem_write: None,
            trap: Some(trap),
        }
    }

    /// Trap entry (Privileged 20211203 §3.1.6.1, §3.1.7, §3.1.14–§3.1.16):
    /// MPIE ← MIE, MIE ← 0, MPP ← M; `mepc`, `mcause`, `mtval` written; PC
    /// ← BASE, or BASE + 4 × cause for interrupts in vectored mode.
    fn enter_trap(&mut self, pc: u32, trap: TrapTaken) {
        let c = &mut self.csrs;
        c.mepc = pc;
        c.mcause = trap.cause.mcause();
        c.mtval = trap.tval;
        c.mpie = c.mie_global;
        c.mie_global = false;
        let base = c.mtvec & !0b11;
        self.pc = match trap.cause {
            TrapCause::Interrupt(irq) if c.mtvec & 0b11 == MTVEC_VECTORED => {
                base.wrapping_add(4 * irq.code())
            }
            _ => base,
        };
    }

    #[inline(always)]
    fn execute_one(&mut self) -> Retirement {
        let pc = self.pc;
        let mut rec = Retirement {
            pc,
            instruction: None,
            rd_write: None,
            mem_write: None,
            trap: None,
        };
        let fetched = if pc & 0b11 != 0 {
            // Only reachable through set_pc: jumps and trap vectors keep
            // the PC aligned.
            Err((Exception::InstructionAddressMisaligned, pc))
        } else {
            self.bus
                .fetch(pc)
                .map_err(|f| (Exception::InstructionAccessFault, f.addr()))
        };
        let result = fetched.and_then(|word| {
            rec.instruction = Some(word);
            match decode(word) {
                Ok(insn) => self.execute(insn, pc, word, &mut rec),
                Err(_) => Err((Exception::IllegalInstruction, word)),
            }
        });
        match result {
            Ok(next) => {
                self.pc = next;
                if self.csrs.minstret_written {
                    self.csrs.minstret_written = false;
                } else {
                    self.csrs.minstret = self.csrs.minstret.wrapping_add(1);
                }
            }
            Err((exception, tval)) => {
                let trap = TrapTaken {
                    cause: TrapCause::Exception(exception),
                    tval,
                };
                self.enter_trap(pc, trap);
                rec.trap = Some(trap);
            }
        }
        rec
    }

    #[inline(always)]
    fn x(&self, r: u8) -> u32 {
        self.regs[usize::from(r & 31)]
    }

    #[inline(always)]
    fn write_rd(&mut self, rd: u8, value: u32, rec: &mut Retirement) {
        if rd != 0 {
            self.regs[usize::from(rd & 31)] = value;
            rec.rd_write = Some(RegWrite { rd, value });
        }
    }

    /// Executes `insn` fetched from `pc`; returns the next PC, or the
    /// exception it raises before changing any state.
    #[inline(always)]
    fn execute(
        &mut self,
        insn: Instruction,
        pc: u32,
        word: u32,
        rec: &mut Retirement,
    ) -> Result<u32, Raise> {
        use Instruction as I;
        let next = pc.wrapping_add(4);
        let rel = |offset: i32| pc.wrapping_add(offset as u32);
        let value = match insn {
            I::Lui { rd, upper } => (rd, upper << 12),
            I::Auipc { rd, upper } => (rd, pc.wrapping_add(upper << 12)),
            I::Jal { rd, offset } => {
                let target = jump_target(rel(offset))?;
                self.write_rd(rd, next, rec);
                return Ok(target);
            }
            I::Jalr { rd, rs1, offset } => {
                // §2.5.1: target = (rs1 + offset) with bit 0 cleared; rs1
                // is read before rd is written.
                let target = jump_target(self.x(rs1).wrapping_add(offset as u32) & !1)?;
                self.write_rd(rd, next, rec);
                return Ok(target);
            }
            I::Beq { rs1, rs2, offset } => return self.branch(rs1, rs2, offset, pc, |a, b| a == b),
            I::Bne { rs1, rs2, offset } => return self.branch(rs1, rs2, offset, pc, |a, b| a != b),
            I::Blt { rs1, rs2, offset } => {
                return self.branch(rs1, rs2, offset, pc, |a, b| (a as i32) < (b as i32))
            }
            I::Bge { rs1, rs2, offset } => {
                return self.branch(rs1, rs2, offset, pc, |a, b| (a as i32) >= (b as i32))
            }
            I::Bltu { rs1, rs2, offset } => return self.branch(rs1, rs2, offset, pc, |a, b| a < b),
            I::Bgeu { rs1, rs2, offset } => {
                return self.branch(rs1, rs2, offset, pc, |a, b| a >= b)
            }
            I::Lb { rd, rs1, offset } => {
                let v = self.load(rs1, offset, Width::Byte)?;
                (rd, v as u8 as i8 as i32 as u32)
            }
            I::Lh { rd, rs1, offset } => {
                let v = self.load(rs1, offset, Width::Half)?;
                (rd, v as u16 as i16 as i32 as u32)
            }
            I::Lw { rd, rs1, offset } => (rd, self.load(rs1, offset, Width::Word)?),
            I::Lbu { rd, rs1, offset } => (rd, self.load(rs1, offset, Width::Byte)?),
            I::Lhu { rd, rs1, offset } => (rd, self.load(rs1, offset, Width::Half)?),
            I::Sb { rs1, rs2, offset } => {
                self.store(rs1, rs2, offset, Width::Byte, rec)?;
                return Ok(next);
            }
            I::Sh { rs1, rs2, offset } => {
                self.store(rs1, rs2, offset, Width::Half, rec)?;
                return Ok(next);
            }
            I::Sw { rs1, rs2, offset } => {
                self.store(rs1, rs2, offset, Width::Word, rec)?;
                return Ok(next);
            }
            I::Addi { rd, rs1, imm } => (rd, self.x(rs1).wrapping_add(imm as u32)),
            I::Slti { rd, rs1, imm } => (rd, u32::from((self.x(rs1) as i32) < imm)),
            // §2.4.1: the immediate is sign-extended, then compared unsigned.
            I::Sltiu { rd, rs1, imm } => (rd, u32::from(self.x(rs1) < imm as u32)),
            I::Xori { rd, rs1, imm } => (rd, self.x(rs1) ^ imm as u32),
            I::Ori { rd, rs1, imm } => (rd, self.x(rs1) | imm as u32),
            I::Andi { rd, rs1, imm } => (rd, self.x(rs1) & imm as u32),
            I::Slli { rd, rs1, shamt } => (rd, self.x(rs1) << (shamt & 31)),
            I::Srli { rd, rs1, shamt } => (rd, self.x(rs1) >> (shamt & 31)),
            I::Srai { rd, rs1, shamt } => (rd, ((self.x(rs1) as i32) >> (shamt & 31)) as u32),
            I::Add { rd, rs1, rs2 } => (rd, self.x(rs1).wrapping_add(self.x(rs2))),
            I::Sub { rd, rs1, rs2 } => (rd, self.x(rs1).wrapping_sub(self.x(rs2))),
            // §2.4.2: register shifts use the low five bits of rs2.
            I::Sll { rd, rs1, rs2 } => (rd, self.x(rs1) << (self.x(rs2) & 31)),
            I::Slt { rd, rs1, rs2 } => (rd, u32::from((self.x(rs1) as i32) < (self.x(rs2) as i32))),
            I::Sltu { rd, rs1, rs2 } => (rd, u32::from(self.x(rs1) < self.x(rs2))),
            I::Xor { rd, rs1, rs2 } => (rd, self.x(rs1) ^ self.x(rs2)),
            I::Srl { rd, rs1, rs2 } => (rd, self.x(rs1) >> (self.x(rs2) & 31)),
            I::Sra { rd, rs1, rs2 } => (rd, ((self.x(rs1) as i32) >> (self.x(rs2) & 31)) as u32),
            I::Or { rd, rs1, rs2 } => (rd, self.x(rs1) | self.x(rs2)),
            I::And { rd, rs1, rs2 } => (rd, self.x(rs1) & self.x(rs2)),
            I::Mul { rd, rs1, rs2 } => (rd, self.x(rs1).wrapping_mul(self.x(rs2))),
            I::Mulh { rd, rs1, rs2 } => (rd, mulh(self.x(rs1), self.x(rs2))),
            I::Mulhsu { rd, rs1, rs2 } => (rd, mulhsu(self.x(rs1), self.x(rs2))),
            I::Mulhu { rd, rs1, rs2 } => (rd, mulhu(self.x(rs1), self.x(rs2))),
            I::Div { rd, rs1, rs2 } => (rd, div(self.x(rs1), self.x(rs2))),
            I::Divu { rd, rs1, rs2 } => (rd, divu(self.x(rs1), self.x(rs2))),
            I::Rem { rd, rs1, rs2 } => (rd, rem(self.x(rs1), self.x(rs2))),
            I::Remu { rd, rs1, rs2 } => (rd, remu(self.x(rs1), self.x(rs2))),
            // A single in-order hart with no caches: every fence is already
            // satisfied (Unprivileged §2.7, Chapter 3).
            I::Fence { .. } | I::FenceI => return Ok(next),
            I::Ecall => return Err((Exception::EnvironmentCallFromMMode, 0)),
            I::Ebreak => return Err((Exception::Breakpoint, pc)),
            I::Mret => return Ok(self.mret()),
            I::Wfi => {
                self.waiting = true;
                return Ok(next);
            }
            I::Csrrw { rd, rs1, csr } => {
                let v = self.x(rs1);
                (rd, self.csr_op(csr, word, Some(v), |_, s| s)?)
            }
            I::Csrrs { rd, rs1, csr } => {
                let v = (rs1 != 0).then(|| self.x(rs1));
                (rd, self.csr_op(csr, word, v, |old, s| old | s)?)
            }
            I::Csrrc { rd, rs1, csr } => {
                let v = (rs1 != 0).then(|| self.x(rs1));
                (rd, self.csr_op(csr, word, v, |old, s| old & !s)?)
            }
            I::Csrrwi { rd, uimm, csr } => {
                (rd, self.csr_op(csr, word, Some(u32::from(uimm)), |_, s| s)?)
            }
            I::Csrrsi { rd, uimm, csr } => {
                let v = (uimm != 0).then_some(u32::from(uimm));
                (rd, self.csr_op(csr, word, v, |old, s| old | s)?)
            }
            I::Csrrci { rd, uimm, csr } => {
                let v = (uimm != 0).then_some(u32::from(uimm));
                (rd, self.csr_op(csr, word, v, |old, s| old & !s)?)
            }
        };
        self.write_rd(value.0, value.1, rec);
        Ok(next)
    }

    #[inline(always)]
    fn branch(
        &self,
        rs1: u8,
        rs2: u8,
        offset: i32,
        pc: u32,
        taken: impl Fn(u32, u32) -> bool,
    ) -> Result<u32, Raise> {
        if taken(self.x(rs1), self.x(rs2)) {
            jump_target(pc.wrapping_add(offset as u32))
        } else {
            Ok(pc.wrapping_add(4))
        }
    }

    #[inline(always)]
    fn load(&mut self, rs1: u8, offset: i32, width: Width) -> Result<u32, Raise> {
        let addr = self.x(rs1).wrapping_add(offset as u32);
        if addr & (width.bytes() - 1) != 0 {
            return Err((Exception::LoadAddressMisaligned, addr));
        }
        self.bus
            .load(addr, width)
            .map_err(|f: BusFault| (Exception::LoadAccessFault, f.addr()))
    }

    #[inline(always)]
    fn store(
        &mut self,
        rs1: u8,
        rs2: u8,
        offset: i32,
        width: Width,
        rec: &mut Retirement,
    ) -> Result<(), Raise> {
        let addr = self.x(rs1).wrapping_add(offset as u32);
        if addr & (width.bytes() - 1) != 0 {
            return Err((Exception::StoreAddressMisaligned, addr));
        }
        let value = match width {
            Width::Byte => self.x(rs2) & 0xff,
            Width::Half => self.x(rs2) & 0xffff,
            Width::Word => self.x(rs2),
        };
        self.bus
            .store(addr, width, value)
            .map_err(|f| (Exception::StoreAccessFault, f.addr()))?;
        rec.mem_write = Some(MemWrite { addr, width, value });
        Ok(())
    }

    /// A Zicsr read-modify-write (Unprivileged 20191213 §9.1, Table 9.1):
    /// `source` is `None` when the instruction does not write (CSRRS/CSRRC
    /// with `rs1 = x0`, CSRRSI/CSRRCI with `uimm = 0`), which also makes a
    /// read-only CSR legal. The CSR is read even when `rd = x0`: reads have
    /// no side effects on this core, and an unimplemented CSR is illegal
    /// either way (Privileged §2.1). Returns the old value for `rd`.
    fn csr_op(
        &mut self,
        csr: u16,
        word: u32,
        source: Option<u32>,
        modify: impl Fn(u32, u32) -> u32,
    ) -> Result<u32, Raise> {
        let illegal = |_| (Exception::IllegalInstruction, word);
        let old = self.csrs.read(csr).map_err(illegal)?;
        if let Some(s) = source {
            self.csrs.write(csr, modify(old, s)).map_err(illegal)?;
            self.csrs.note_instruction_write(csr);
        }
        Ok(old)
    }

    /// `mret` (Privileged 20211203 §3.3.2): MIE ← MPIE, MPIE ← 1, MPP ← M
    /// (the least-privileged mode, and the only one), PC ← `mepc`.
    fn mret(&mut self) -> u32 {
        let c = &mut self.csrs;
        c.mie_global = c.mpie;
        c.mpie = true;
        c.mepc
    }
}

/// A jump or taken-branch target, or instruction-address-misaligned with
/// `mtval` = the target (Unprivileged 20191213 §2.5: IALIGN = 32 without C).
#[inline(always)]
fn jump_target(target: u32) -> Result<u32, Raise> {
    if target & 0b11 != 0 {
        Err((Exception::InstructionAddressMisaligned, target))
    } else {
        Ok(target)
    }
}

/// High word of signed × signed (Unprivileged 20191213 §7.1).
fn mulh(a: u32, b: u32) -> u32 {
    ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32
}

/// High word of signed × unsigned (§7.1); |product| < 2^63, so i64 holds it.
fn mulhsu(a: u32, b: u32) -> u32 {
    ((i64::from(a as i32) * i64::from(b)) >> 32) as u32
}

/// High word of unsigned × unsigned (§7.1).
fn mulhu(a: u32, b: u32) -> u32 {
    ((u64::from(a) * u64::from(b)) >> 32) as u32
}

/// Signed division (Unprivileged 20191213 §7.2, Table 7.1): x / 0 = −1;
/// −2^31 / −1 = −2^31 (overflow); otherwise rounds towards zero.
fn div(a: u32, b: u32) -> u32 {
    let (a, b) = (a as i32, b as i32);
    if b == 0 {
        u32::MAX
    } else {
        a.wrapping_div(b) as u32
    }
}

/// Unsigned division (§7.2, Table 7.1): x / 0 = 2^32 − 1.
fn divu(a: u32, b: u32) -> u32 {
    a.checked_div(b).unwrap_or(u32::MAX)
}

/// Signed remainder (§7.2, Table 7.1): x % 0 = x; −2^31 % −1 = 0; the sign
/// follows the dividend.
fn rem(a: u32, b: u32) -> u32 {
    let (a, b) = (a as i32, b as i32);
    if b == 0 {
        a as u32
    } else {
        a.wrapping_rem(b) as u32
    }
}

/// Unsigned remainder (§7.2, Table 7.1): x % 0 = x.
fn remu(a: u32, b: u32) -> u32 {
    a.checked_rem(b).unwrap_or(a)
}

#[cfg(test)]
mod tests;
