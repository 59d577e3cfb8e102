//! The five-stage pipeline of weft's RV32IM + Zicsr core: fetch, decode,
//! execute, memory (the commit point), write-back.
//!
//! - **F** holds the address whose word arrives from the instruction port
//!   in this cycle; the static predictor looks at that word and picks the
//!   next fetch address in the same cycle.
//! - **D** decodes, reads the register file (bypassing the write-back
//!   stage's write) and detects the load-use hazard.
//! - **X** forwards from M and W, runs the ALU, resolves branches and
//!   jumps (a misprediction redirects fetch, through a register: three
//!   bubbles) and runs the
//!   multiply/divide unit (stalling F–X while it works).
//! - **M** is the commit point. It takes a pending interrupt instead of
//!   its instruction, raises the instruction's exception, or commits it:
//!   issues the load or store, executes the CSR instruction, `mret` or
//!   `wfi`. A trap or `mret` flushes F–X and redirects fetch (three
//!   bubbles). Nothing younger than M has changed architectural state, so
//!   every exception is precise.
//! - **W** writes the register file (a load's value arrives here from the
//!   data port) and drives the retirement trace.
//!
//! A load or CSR read followed by an instruction that uses its result
//! stalls that instruction one cycle in D (the value is forwarded from W).
//! `wfi` commits, then holds the next instruction in M until an interrupt
//! is pending and enabled in `mie` — the same decision point as the
//! instruction-set simulator's step, so the two agree on which instruction
//! an interrupt preempts given the same interrupt lines.

use rust_hdl::prelude::*;

use super::alu::Alu;
use super::csr::CsrFile;
use super::decode::Decoder;
use super::lsu::{LoadLanes, StoreLanes};
use super::muldiv::MulDiv;
use super::ports::{DataPort, FetchPort, RetireTrace};
use super::predict::StaticPredictor;
use super::regfile::RegisterFile;

/// The RV32IM + Zicsr machine-mode core: Harvard memory ports, three
/// interrupt lines, and a retirement trace.
///
/// `reset` (synchronous) restarts fetch at `reset_vector` and resets the
/// CSRs (Privileged 20211203 §3.4); the register file keeps its contents.
/// Hold it for at least one cycle before the first instruction.
#[derive(LogicBlock, Default)]
pub struct Core {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Where fetch starts after reset (tied to a constant by the SoC).
    pub reset_vector: Signal<In, Bits<32>>,
    /// The value of `mhartid` (tied to a constant by the SoC).
    pub hart_id: Signal<In, Bits<32>>,
    /// Instruction fetch port.
    pub fetch: FetchPort,
    /// Data load/store port.
    pub data: DataPort,
    /// Machine software interrupt line (`mip.MSIP`).
    pub software_irq: Signal<In, Bit>,
    /// Machine timer interrupt line (`mip.MTIP`).
    pub timer_irq: Signal<In, Bit>,
    /// Machine external interrupt line (`mip.MEIP`).
    pub external_irq: Signal<In, Bit>,
    /// The retirement trace, one record per retired instruction or trap.
    pub retire: RetireTrace,
    decoder: Decoder,
    predictor: StaticPredictor,
    registers: RegisterFile,
    alu: Alu,
    muldiv: MulDiv,
    csrs: CsrFile,
    store_lanes: StoreLanes,
    load_lanes: LoadLanes,
    waiting: DFF<Bit>,
    // F
    f_pc: DFF<Bits<32>>,
    f_valid: DFF<Bit>,
    f_fault: DFF<Bit>,
    /// X redirected fetch in the last cycle: fetch goes to `redirect_target` now.
    redirect_pending: DFF<Bit>,
    /// Where a redirect from X sends fetch.
    redirect_target: DFF<Bits<32>>,
    // D
    d_valid: DFF<Bit>,
    d_pc: DFF<Bits<32>>,
    d_insn: DFF<Bits<32>>,
    d_fault: DFF<Bit>,
    d_predicted: DFF<Bit>,
    // X
    x_valid: DFF<Bit>,
    x_pc: DFF<Bits<32>>,
    x_insn: DFF<Bits<32>>,
    x_has_insn: DFF<Bit>,
    x_predicted: DFF<Bit>,
    x_rs1: DFF<Bits<5>>,
    x_rs2: DFF<Bits<5>>,
    x_rs1_value: DFF<Bits<32>>,
    x_rs2_value: DFF<Bits<32>>,
    x_rd: DFF<Bits<5>>,
    x_writes_rd: DFF<Bit>,
    x_imm: DFF<Bits<32>>,
    x_funct3: DFF<Bits<3>>,
    x_alu_op: DFF<Bits<4>>,
    x_alu_imm: DFF<Bit>,
    x_alu_pc: DFF<Bit>,
    x_alu_zero: DFF<Bit>,
    x_branch: DFF<Bit>,
    x_jal: DFF<Bit>,
    x_jalr: DFF<Bit>,
    x_load: DFF<Bit>,
    x_store: DFF<Bit>,
    x_muldiv: DFF<Bit>,
    x_csr: DFF<Bit>,
    x_csr_imm: DFF<Bit>,
    x_csr_writes: DFF<Bit>,
    x_mret: DFF<Bit>,
    x_wfi: DFF<Bit>,
    x_exception: DFF<Bit>,
    x_cause: DFF<Bits<4>>,
    // M
    m_valid: DFF<Bit>,
    m_pc: DFF<Bits<32>>,
    m_insn: DFF<Bits<32>>,
    m_has_insn: DFF<Bit>,
    m_rd: DFF<Bits<5>>,
    m_writes_rd: DFF<Bit>,
    m_result: DFF<Bits<32>>,
    m_store_value: DFF<Bits<32>>,
    m_funct3: DFF<Bits<3>>,
    m_load: DFF<Bit>,
    m_store: DFF<Bit>,
    m_csr: DFF<Bit>,
    m_csr_writes: DFF<Bit>,
    m_csr_source: DFF<Bits<32>>,
    m_mret: DFF<Bit>,
    m_wfi: DFF<Bit>,
    m_exception: DFF<Bit>,
    m_cause: DFF<Bits<4>>,
    m_value: DFF<Bits<32>>,
    // W
    w_valid: DFF<Bit>,
    w_pc: DFF<Bits<32>>,
    w_insn: DFF<Bits<32>>,
    w_has_insn: DFF<Bit>,
    w_rd_write: DFF<Bit>,
    w_rd: DFF<Bits<5>>,
    w_result: DFF<Bits<32>>,
    w_load: DFF<Bit>,
    w_funct3: DFF<Bits<3>>,
    w_mem_write: DFF<Bit>,
    w_mem_address: DFF<Bits<32>>,
    w_mem_value: DFF<Bits<32>>,
    w_trap: DFF<Bit>,
    w_cause: DFF<Bits<32>>,
    w_trap_value: DFF<Bits<32>>,
    // Combinational nets.
    w_value: Signal<Local, Bits<32>>,
    rs1_value: Signal<Local, Bits<32>>,
    rs2_value: Signal<Local, Bits<32>>,
    load_use: Signal<Local, Bit>,
    operand_a: Signal<Local, Bits<32>>,
    operand_b: Signal<Local, Bits<32>>,
    condition: Signal<Local, Bit>,
    taken: Signal<Local, Bit>,
    target: Signal<Local, Bits<32>>,
    x_redirect: Signal<Local, Bit>,
    x_stall: Signal<Local, Bit>,
    access: Signal<Local, Bit>,
    misaligned: Signal<Local, Bit>,
    go: Signal<Local, Bit>,
    m_hold: Signal<Local, Bit>,
    interrupt: Signal<Local, Bit>,
    exception: Signal<Local, Bit>,
    cause: Signal<Local, Bits<4>>,
    trap_value: Signal<Local, Bits<32>>,
    trap: Signal<Local, Bit>,
    commit: Signal<Local, Bit>,
    m_redirect: Signal<Local, Bit>,
    m_target: Signal<Local, Bits<32>>,
    hold_x: Signal<Local, Bit>,
    hold_d: Signal<Local, Bit>,
}

impl Core {
    /// Register `r` of the register file (for tests and debuggers).
    ///
    /// # Panics
    /// If `r > 31`.
    pub fn register(&self, r: usize) -> u32 {
        self.registers.register(r)
    }

    /// Whether the core waits in `wfi` with no enabled interrupt pending
    /// (Privileged 20211203 §3.3.3), as the settled logic says now: it
    /// retires nothing and touches no port until an interrupt line or
    /// `mie` changes, so a bench may let time pass around it.
    pub fn waiting_for_interrupt(&self) -> bool {
        self.waiting.q.val() && !self.csrs.wake.val()
    }
}

impl Logic for Core {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            waiting,
            f_pc,
            f_valid,
            f_fault,
            redirect_pending,
            redirect_target,
            d_valid,
            d_pc,
            d_insn,
            d_fault,
            d_predicted,
            x_valid,
            x_pc,
            x_insn,
            x_has_insn,
            x_predicted,
            x_rs1,
            x_rs2,
            x_rs1_value,
            x_rs2_value,
            x_rd,
            x_writes_rd,
            x_imm,
            x_funct3,
            x_alu_op,
            x_alu_imm,
            x_alu_pc,
            x_alu_zero,
            x_branch,
            x_jal,
            x_jalr,
            x_load,
            x_store,
            x_muldiv,
            x_csr,
            x_csr_imm,
            x_csr_writes,
            x_mret,
            x_wfi,
            x_exception,
            x_cause,
            m_valid,
            m_pc,
            m_insn,
            m_has_insn,
            m_rd,
            m_writes_rd,
            m_result,
            m_store_value,
            m_funct3,
            m_load,
            m_store,
            m_csr,
            m_csr_writes,
            m_csr_source,
            m_mret,
            m_wfi,
            m_exception,
            m_cause,
            m_value,
            w_valid,
            w_pc,
            w_insn,
            w_has_insn,
            w_rd_write,
            w_rd,
            w_result,
            w_load,
            w_funct3,
            w_mem_write,
            w_mem_address,
            w_mem_value,
            w_trap,
            w_cause,
            w_trap_value
        );
        self.registers.clock.next = self.clock.val();
        self.muldiv.clock.next = self.clock.val();
        self.csrs.clock.next = self.clock.val();
        self.csrs.reset.next = self.reset.val();
        self.csrs.hart_id.next = self.hart_id.val();
        self.csrs.software_irq.next = self.software_irq.val();
        self.csrs.timer_irq.next = self.timer_irq.val();
        self.csrs.external_irq.next = self.external_irq.val();

        // ---------------------------------------------------------------- W
        self.load_lanes.word.next = self.data.read_data.val();
        self.load_lanes.offset.next = self.w_result.q.val().get_bits::<2>(0);
        self.load_lanes.funct3.next = self.w_funct3.q.val();
        self.w_value.next = self.w_result.q.val();
        if self.w_load.q.val() {
            self.w_value.next = self.load_lanes.value.val();
        }
        self.registers.write_enable.next = self.w_rd_write.q.val();
        self.registers.write_address.next = self.w_rd.q.val();
        self.registers.write_data.next = self.w_value.val();
        self.retire.valid.next = self.w_valid.q.val();
        self.retire.pc.next = self.w_pc.q.val();
        self.retire.has_instruction.next = self.w_has_insn.q.val();
        self.retire.instruction.next = self.w_insn.q.val();
        self.retire.rd_write.next = self.w_rd_write.q.val();
        self.retire.rd.next = self.w_rd.q.val();
        self.retire.rd_value.next = self.w_value.val();
        self.retire.mem_write.next = self.w_mem_write.q.val();
        self.retire.mem_address.next = self.w_mem_address.q.val();
        self.retire.mem_value.next = self.w_mem_value.q.val();
        self.retire.mem_width.next = self.w_funct3.q.val().get_bits::<2>(0);
        self.retire.trap.next = self.w_trap.q.val();
        self.retire.trap_cause.next = self.w_cause.q.val();
        self.retire.trap_value.next = self.w_trap_value.q.val();

        // ---------------------------------------------------------------- M
        self.store_lanes.offset.next = self.m_result.q.val().get_bits::<2>(0);
        self.store_lanes.width.next = self.m_funct3.q.val().get_bits::<2>(0);
        self.store_lanes.value.next = self.m_store_value.q.val();
        self.access.next = self.m_load.q.val() || self.m_store.q.val();
        self.misaligned.next = self.access.val() && self.store_lanes.misaligned.val();
        self.csrs.address.next = self.m_insn.q.val().get_bits::<12>(20);
        self.csrs.operation.next = self.m_funct3.q.val().get_bits::<2>(0);
        self.csrs.writes.next = self.m_csr_writes.q.val();
        self.csrs.source.next = self.m_csr_source.q.val();
        // The step of the instruction-set simulator: an instruction in M
        // either waits (after wfi, until an enabled interrupt is pending),
        // or is preempted by an interrupt, or raises, or commits.
        self.m_hold.next = self.m_valid.q.val() && self.waiting.q.val() && !self.csrs.wake.val();
        self.go.next = self.m_valid.q.val()
            && !self.reset.val()
            && (!self.waiting.q.val() || self.csrs.wake.val());
        self.interrupt.next = self.go.val() && self.csrs.interrupt.val();
        // Exception priority within one instruction: earlier stages first,
        // then misalignment before access faults (Privileged 20211203
        // §3.1.15, Table 3.7), then the CSR access check.
        self.exception.next = self.m_exception.q.val()
            || self.misaligned.val()
            || (self.access.val() && self.data.fault.val())
            || (self.m_csr.q.val() && self.csrs.illegal.val());
        self.cause.next = self.m_cause.q.val();
        self.trap_value.next = self.m_value.q.val();
        if !self.m_exception.q.val() {
            if self.m_csr.q.val() {
                self.cause.next = bits::<4>(2);
                self.trap_value.next = self.m_insn.q.val();
            }
            if self.access.val() {
                self.trap_value.next = self.m_result.q.val();
                // Load: 4 misaligned, 5 access fault; store: 6, 7.
                self.cause.next = bits::<4>(5);
                if self.misaligned.val() {
                    self.cause.next = bits::<4>(4);
                }
                if self.m_store.q.val() {
                    self.cause.next = bits::<4>(7);
                    if self.misaligned.val() {
                        self.cause.next = bits::<4>(6);
                    }
                }
            }
        }
        self.trap.next = self.go.val() && (self.interrupt.val() || self.exception.val());
        self.commit.next = self.go.val() && !self.interrupt.val() && !self.exception.val();
        self.data.address.next = self.m_result.q.val();
        self.data.byte_enable.next = self.store_lanes.byte_enable.val();
        self.data.write_data.next = self.store_lanes.write_data.val();
        self.data.read.next = self.go.val()
            && !self.interrupt.val()
            && !self.m_exception.q.val()
            && !self.misaligned.val()
            && self.m_load.q.val();
        self.data.write.next = self.go.val()
            && !self.interrupt.val()
            && !self.m_exception.q.val()
            && !self.misaligned.val()
            && self.m_store.q.val();
        self.csrs.commit.next = self.commit.val() && self.m_csr.q.val();
        self.csrs.retire.next = self.commit.val();
        self.csrs.trap.next = self.trap.val();
        self.csrs.trap_pc.next = self.m_pc.q.val();
        self.csrs.trap_cause.next = bit_cast::<32, 4>(self.cause.val());
        self.csrs.trap_value.next = self.trap_value.val();
        if self.interrupt.val() {
            self.csrs.trap_cause.next = self.csrs.interrupt_cause.val();
            self.csrs.trap_value.next = bits::<32>(0);
        }
        self.csrs.mret.next = self.commit.val() && self.m_mret.q.val();
        // Trap vector (Privileged §3.1.7): BASE, or BASE + 4 × cause for
        // interrupts in vectored mode; mret returns to mepc (§3.3.2).
        self.m_redirect.next = self.trap.val() || (self.commit.val() && self.m_mret.q.val());
        self.m_target.next = self.csrs.mepc.val();
        if self.trap.val() {
            self.m_target.next = self.csrs.mtvec.val() & !bits::<32>(3);
            if self.interrupt.val() && self.csrs.mtvec.val().get_bit(0) {
                self.m_target.next = (self.csrs.mtvec.val() & !bits::<32>(3))
                    + (bit_cast::<32, 4>(self.csrs.interrupt_cause.val().get_bits::<4>(0)) << 2);
            }
        }
        if self.go.val() && self.waiting.q.val() {
            self.waiting.d.next = false;
        }
        if self.commit.val() && self.m_wfi.q.val() {
            self.waiting.d.next = true;
        }
        // M → W.
        self.w_valid.d.next = self.go.val();
        self.w_pc.d.next = self.m_pc.q.val();
        self.w_insn.d.next = self.m_insn.q.val();
        self.w_has_insn.d.next = self.m_has_insn.q.val() && !self.interrupt.val();
        self.w_rd_write.d.next = self.commit.val() && self.m_writes_rd.q.val();
        self.w_rd.d.next = self.m_rd.q.val();
        self.w_result.d.next = self.m_result.q.val();
        if self.m_csr.q.val() {
            self.w_result.d.next = self.csrs.read_data.val();
        }
        self.w_load.d.next = self.m_load.q.val();
        self.w_funct3.d.next = self.m_funct3.q.val();
        self.w_mem_write.d.next = self.commit.val() && self.m_store.q.val();
        self.w_mem_address.d.next = self.m_result.q.val();
        self.w_mem_value.d.next = self.store_lanes.stored.val();
        self.w_trap.d.next = self.trap.val();
        self.w_cause.d.next = self.csrs.trap_cause.val();
        self.w_trap_value.d.next = self.csrs.trap_value.val();

        // ---------------------------------------------------------------- X
        // Forwarding: M's result (loads and CSR reads never reach here,
        // the load-use stall holds their users back), then W's value.
        self.operand_a.next = self.x_rs1_value.q.val();
        if self.w_rd_write.q.val() && self.w_rd.q.val() == self.x_rs1.q.val() {
            self.operand_a.next = self.w_value.val();
        }
        if self.m_valid.q.val()
            && self.m_writes_rd.q.val()
            && self.m_rd.q.val() == self.x_rs1.q.val()
        {
            self.operand_a.next = self.m_result.q.val();
        }
        self.operand_b.next = self.x_rs2_value.q.val();
        if self.w_rd_write.q.val() && self.w_rd.q.val() == self.x_rs2.q.val() {
            self.operand_b.next = self.w_value.val();
        }
        if self.m_valid.q.val()
            && self.m_writes_rd.q.val()
            && self.m_rd.q.val() == self.x_rs2.q.val()
        {
            self.operand_b.next = self.m_result.q.val();
        }
        self.alu.op.next = self.x_alu_op.q.val();
        self.alu.a.next = self.operand_a.val();
        if self.x_alu_pc.q.val() {
            self.alu.a.next = self.x_pc.q.val();
        }
        if self.x_alu_zero.q.val() {
            self.alu.a.next = bits::<32>(0);
        }
        self.alu.b.next = self.operand_b.val();
        if self.x_alu_imm.q.val() {
            self.alu.b.next = self.x_imm.q.val();
        }
        // Branch conditions (Unprivileged §2.5.2): funct3[2:1] picks
        // equal / signed less / unsigned less, funct3[0] negates.
        self.condition.next =
            (self.operand_a.val() == self.operand_b.val()) != self.x_funct3.q.val().get_bit(0);
        if self.x_funct3.q.val().get_bit(2) {
            self.condition.next =
                (self.operand_a.val() < self.operand_b.val()) != self.x_funct3.q.val().get_bit(0);
            if !self.x_funct3.q.val().get_bit(1)
                && (self.operand_a.val().get_bit(31) != self.operand_b.val().get_bit(31))
            {
                self.condition.next =
                    self.operand_a.val().get_bit(31) != self.x_funct3.q.val().get_bit(0);
            }
        }
        self.taken.next = self.x_jal.q.val()
            || self.x_jalr.q.val()
            || (self.x_branch.q.val() && self.condition.val());
        // §2.5.1: jalr clears bit 0 of rs1 + offset.
        self.target.next = self.x_pc.q.val() + self.x_imm.q.val();
        if self.x_jalr.q.val() {
            self.target.next = self.alu.result.val() & !bits::<32>(1);
        }
        self.muldiv.funct3.next = self.x_funct3.q.val();
        self.muldiv.a.next = self.operand_a.val();
        self.muldiv.b.next = self.operand_b.val();
        self.muldiv.start.next = self.x_valid.q.val()
            && self.x_muldiv.q.val()
            && !self.x_exception.q.val()
            && self.muldiv.idle.val();
        self.x_stall.next = self.x_valid.q.val()
            && self.x_muldiv.q.val()
            && !self.x_exception.q.val()
            && !self.muldiv.ready.val();
        self.muldiv.take.next = self.x_valid.q.val()
            && self.x_muldiv.q.val()
            && self.muldiv.ready.val()
            && !self.m_hold.val();
        self.muldiv.abort.next = self.m_redirect.val() || self.reset.val();
        // A misaligned target traps in M (no redirect); a prediction that
        // was wrong, or any taken jalr, redirects fetch.
        self.x_redirect.next = self.x_valid.q.val()
            && !self.x_exception.q.val()
            && !self.m_hold.val()
            && ((self.taken.val()
                && !self.target.val().get_bit(1)
                && (self.x_jalr.q.val() || !self.x_predicted.q.val()))
                || (self.x_predicted.q.val() && !self.taken.val()));
        // The redirect reaches fetch through a register, so the path from
        // the operands (a load's value among them) through the branch
        // compare ends here rather than at the instruction RAM's address.
        self.redirect_pending.d.next = self.x_redirect.val() && !self.m_redirect.val();
        self.redirect_target.d.next = self.x_pc.q.val() + 4;
        if self.taken.val() {
            self.redirect_target.d.next = self.target.val();
        }
        // X → M.
        if !self.m_hold.val() {
            self.m_valid.d.next =
                self.x_valid.q.val() && !self.x_stall.val() && !self.m_redirect.val();
            self.m_pc.d.next = self.x_pc.q.val();
            self.m_insn.d.next = self.x_insn.q.val();
            self.m_has_insn.d.next = self.x_has_insn.q.val();
            self.m_rd.d.next = self.x_rd.q.val();
            self.m_writes_rd.d.next = self.x_writes_rd.q.val();
            self.m_result.d.next = self.alu.result.val();
            if self.x_muldiv.q.val() {
                self.m_result.d.next = self.muldiv.result.val();
            }
            if self.x_jal.q.val() || self.x_jalr.q.val() {
                self.m_result.d.next = self.x_pc.q.val() + 4;
            }
            self.m_store_value.d.next = self.operand_b.val();
            self.m_funct3.d.next = self.x_funct3.q.val();
            self.m_load.d.next = self.x_load.q.val();
            self.m_store.d.next = self.x_store.q.val();
            self.m_csr.d.next = self.x_csr.q.val();
            self.m_csr_writes.d.next = self.x_csr_writes.q.val();
            self.m_csr_source.d.next = self.operand_a.val();
            if self.x_csr_imm.q.val() {
                self.m_csr_source.d.next = bit_cast::<32, 5>(self.x_rs1.q.val());
            }
            self.m_mret.d.next = self.x_mret.q.val();
            self.m_wfi.d.next = self.x_wfi.q.val();
            self.m_exception.d.next =
                self.x_exception.q.val() || (self.taken.val() && self.target.val().get_bit(1));
            // mtval (Privileged §3.1.16): the target of a misaligned jump,
            // the fetch address, the illegal word, ebreak's own address.
            self.m_cause.d.next = bits::<4>(0);
            self.m_value.d.next = self.target.val();
            if self.x_exception.q.val() {
                self.m_cause.d.next = self.x_cause.q.val();
                self.m_value.d.next = bits::<32>(0);
                if self.x_cause.q.val() == 1 || self.x_cause.q.val() == 3 {
                    self.m_value.d.next = self.x_pc.q.val();
                }
                if self.x_cause.q.val() == 2 {
                    self.m_value.d.next = self.x_insn.q.val();
                }
            }
        }

        // ---------------------------------------------------------------- D
        self.decoder.insn.next = self.d_insn.q.val();
        self.registers.read_address_a.next = self.d_insn.q.val().get_bits::<5>(15);
        self.registers.read_address_b.next = self.d_insn.q.val().get_bits::<5>(20);
        self.rs1_value.next = self.registers.read_data_a.val();
        if self.w_rd_write.q.val() && self.w_rd.q.val() == self.d_insn.q.val().get_bits::<5>(15) {
            self.rs1_value.next = self.w_value.val();
        }
        self.rs2_value.next = self.registers.read_data_b.val();
        if self.w_rd_write.q.val() && self.w_rd.q.val() == self.d_insn.q.val().get_bits::<5>(20) {
            self.rs2_value.next = self.w_value.val();
        }
        self.load_use.next = self.d_valid.q.val()
            && self.x_valid.q.val()
            && (self.x_load.q.val() || self.x_csr.q.val())
            && self.x_writes_rd.q.val()
            && ((self.decoder.uses_rs1.val() && self.decoder.rs1.val() == self.x_rd.q.val())
                || (self.decoder.uses_rs2.val() && self.decoder.rs2.val() == self.x_rd.q.val()));
        self.hold_x.next = self.x_stall.val() || self.m_hold.val();
        self.hold_d.next = self.hold_x.val() || self.load_use.val();
        // D → X.
        if self.hold_x.val() {
            // Keep the held instruction's operands current: their producers
            // move on to W and the register file meanwhile.
            self.x_rs1_value.d.next = self.operand_a.val();
            self.x_rs2_value.d.next = self.operand_b.val();
        } else {
            self.x_valid.d.next =
                self.d_valid.q.val() && !self.load_use.val() && !self.x_redirect.val();
            self.x_pc.d.next = self.d_pc.q.val();
            self.x_insn.d.next = self.d_insn.q.val();
            self.x_has_insn.d.next = !self.d_fault.q.val();
            self.x_predicted.d.next = self.d_predicted.q.val();
            self.x_rs1.d.next = self.decoder.rs1.val();
            self.x_rs2.d.next = self.decoder.rs2.val();
            self.x_rs1_value.d.next = self.rs1_value.val();
            self.x_rs2_value.d.next = self.rs2_value.val();
            self.x_rd.d.next = self.decoder.rd.val();
            self.x_writes_rd.d.next = self.decoder.writes_rd.val();
            self.x_imm.d.next = self.decoder.imm.val();
            self.x_funct3.d.next = self.decoder.funct3.val();
            self.x_alu_op.d.next = self.decoder.alu_op.val();
            self.x_alu_imm.d.next = self.decoder.alu_imm.val();
            self.x_alu_pc.d.next = self.decoder.alu_pc.val();
            self.x_alu_zero.d.next = self.decoder.alu_zero.val();
            self.x_branch.d.next = self.decoder.cond_branch.val();
            self.x_jal.d.next = self.decoder.jal.val();
            self.x_jalr.d.next = self.decoder.jalr.val();
            self.x_load.d.next = self.decoder.load.val();
            self.x_store.d.next = self.decoder.store.val();
            self.x_muldiv.d.next = self.decoder.muldiv.val();
            self.x_csr.d.next = self.decoder.csr.val();
            self.x_csr_imm.d.next = self.decoder.csr_imm.val();
            self.x_csr_writes.d.next = self.decoder.csr_writes.val();
            self.x_mret.d.next = self.decoder.mret.val();
            self.x_wfi.d.next = self.decoder.wfi.val();
            // Exceptions found by F and D ride along to M: fetch access
            // fault 1, illegal instruction 2, breakpoint 3, ecall 11.
            self.x_exception.d.next = self.d_fault.q.val()
                || self.decoder.illegal.val()
                || self.decoder.ecall.val()
                || self.decoder.ebreak.val();
            self.x_cause.d.next = bits::<4>(11);
            if self.decoder.ebreak.val() {
                self.x_cause.d.next = bits::<4>(3);
            }
            if self.decoder.illegal.val() {
                self.x_cause.d.next = bits::<4>(2);
            }
            if self.d_fault.q.val() {
                self.x_cause.d.next = bits::<4>(1);
            }
        }
        if self.m_redirect.val() {
            self.x_valid.d.next = false;
        }

        // ---------------------------------------------------------------- F
        self.predictor.valid.next = self.f_valid.q.val() && !self.f_fault.q.val();
        self.predictor.pc.next = self.f_pc.q.val();
        self.predictor.word.next = self.fetch.data.val();
        // F → D.
        if !self.hold_d.val() {
            self.d_valid.d.next = self.f_valid.q.val();
            self.d_pc.d.next = self.f_pc.q.val();
            self.d_insn.d.next = self.fetch.data.val();
            self.d_fault.d.next = self.f_fault.q.val();
            self.d_predicted.d.next = self.predictor.taken.val();
        }
        if self.m_redirect.val() || self.x_redirect.val() {
            self.d_valid.d.next = false;
        }
        // Next fetch address, most senior redirect first.
        self.fetch.address.next = self.f_pc.q.val() + 4;
        if self.predictor.taken.val() {
            self.fetch.address.next = self.predictor.target.val();
        }
        if self.hold_d.val() || !self.f_valid.q.val() {
            self.fetch.address.next = self.f_pc.q.val();
        }
        if self.redirect_pending.q.val() {
            self.fetch.address.next = self.redirect_target.q.val();
        }
        if self.m_redirect.val() {
            self.fetch.address.next = self.m_target.val();
        }
        self.f_pc.d.next = self.fetch.address.val();
        // The word fetched while X redirects is off the path.
        self.f_valid.d.next = !self.x_redirect.val();
        self.f_fault.d.next = self.fetch.fault.val();

        if self.reset.val() {
            self.waiting.d.next = false;
            self.f_pc.d.next = self.reset_vector.val();
            self.f_valid.d.next = false;
            self.redirect_pending.d.next = false;
            self.d_valid.d.next = false;
            self.x_valid.d.next = false;
            self.m_valid.d.next = false;
            self.w_valid.d.next = false;
            self.w_rd_write.d.next = false;
            self.w_mem_write.d.next = false;
        }
    }
}
