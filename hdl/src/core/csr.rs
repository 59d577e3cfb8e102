//! The machine-mode CSRs, trap entry and `mret`, and the interrupt
//! decision (Privileged ISA 20211203 Chapter 2 and §3.1–§3.3;
//! Unprivileged ISA 20191213 Chapter 9 for the Zicsr operations and
//! Chapter 10 for the counters).
//!
//! The set of CSRs, their reset values and their WARL rules are those of
//! `weft_iss::csr`, which the differential tests hold this block to.

use rust_hdl::prelude::*;

/// The CSR state of the hart and its update rules.
///
/// The pipeline presents the CSR instruction at its commit stage
/// (`address`, `funct3`, `source`, `writes`) and learns combinationally
/// whether it is `illegal` and what it reads; `commit` performs the write.
/// An access is illegal when no CSR has the address, or when it would
/// write a read-only CSR (address bits \[11:10\] = `0b11`, Privileged §2.1).
///
/// `mcycle` counts clock cycles and `minstret` retired instructions
/// (`retire`). A CSR instruction that writes a counter wins over that
/// cycle's increment (Privileged §3.1.10): the next instruction reads the
/// written value.
#[derive(LogicBlock, Default)]
pub struct CsrFile {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset to the state of Privileged §3.4.
    pub reset: Signal<In, Bit>,
    /// The value `mhartid` reads.
    pub hart_id: Signal<In, Bits<32>>,
    /// Machine software interrupt line (MSIP).
    pub software_irq: Signal<In, Bit>,
    /// Machine timer interrupt line (MTIP).
    pub timer_irq: Signal<In, Bit>,
    /// Machine external interrupt line (MEIP).
    pub external_irq: Signal<In, Bit>,
    /// CSR address of the instruction at the commit stage.
    pub address: Signal<In, Bits<12>>,
    /// The Zicsr operation, funct3\[1:0\]: 1 write, 2 set, 3 clear.
    pub operation: Signal<In, Bits<2>>,
    /// The instruction writes the CSR (see `Decoder::csr_writes`).
    pub writes: Signal<In, Bit>,
    /// The source operand: `rs1`'s value or the zero-extended `uimm`.
    pub source: Signal<In, Bits<32>>,
    /// The CSR instruction commits in this cycle: perform its write.
    pub commit: Signal<In, Bit>,
    /// The value the CSR instruction reads (the old value).
    pub read_data: Signal<Out, Bits<32>>,
    /// The access raises an illegal-instruction exception.
    pub illegal: Signal<Out, Bit>,
    /// An instruction retires in this cycle (`minstret` counts it).
    pub retire: Signal<In, Bit>,
    /// A trap is taken in this cycle.
    pub trap: Signal<In, Bit>,
    /// The trap's `mepc`: the excepting or preempted instruction's address.
    pub trap_pc: Signal<In, Bits<32>>,
    /// The trap's `mcause`.
    pub trap_cause: Signal<In, Bits<32>>,
    /// The trap's `mtval`.
    pub trap_value: Signal<In, Bits<32>>,
    /// An `mret` commits in this cycle.
    pub mret: Signal<In, Bit>,
    /// `mtvec`.
    pub mtvec: Signal<Out, Bits<32>>,
    /// `mepc`.
    pub mepc: Signal<Out, Bits<32>>,
    /// An interrupt is pending and enabled in `mie` (wakes `wfi`, §3.3.3).
    pub wake: Signal<Out, Bit>,
    /// An interrupt is pending, enabled in `mie`, and `mstatus.MIE` is set:
    /// it is taken before the instruction at the commit stage.
    pub interrupt: Signal<Out, Bit>,
    /// `mcause` of the highest-priority such interrupt: MEI, MSI, MTI (§3.1.9).
    pub interrupt_cause: Signal<Out, Bits<32>>,
    mie_global: DFF<Bit>,
    mpie: DFF<Bit>,
    mie: DFF<Bits<32>>,
    mtvec_reg: DFF<Bits<32>>,
    mscratch: DFF<Bits<32>>,
    mepc_reg: DFF<Bits<32>>,
    mcause: DFF<Bits<32>>,
    mtval: DFF<Bits<32>>,
    mcycle_low: DFF<Bits<32>>,
    mcycle_high: DFF<Bits<32>>,
    minstret_low: DFF<Bits<32>>,
    minstret_high: DFF<Bits<32>>,
    mip: Signal<Local, Bits<32>>,
    pending: Signal<Local, Bits<32>>,
    implemented: Signal<Local, Bit>,
    modified: Signal<Local, Bits<32>>,
    write: Signal<Local, Bit>,
}

impl Logic for CsrFile {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            mie_global,
            mpie,
            mie,
            mtvec_reg,
            mscratch,
            mepc_reg,
            mcause,
            mtval,
            mcycle_low,
            mcycle_high,
            minstret_low,
            minstret_high
        );
        // mip: MSIP bit 3, MTIP bit 7, MEIP bit 11, read-only lines (§3.1.9).
        self.mip.next = (bit_cast::<32, 1>((self.software_irq.val()).into()) << 3)
            | (bit_cast::<32, 1>((self.timer_irq.val()).into()) << 7)
            | (bit_cast::<32, 1>((self.external_irq.val()).into()) << 11);
        self.pending.next = self.mip.val() & self.mie.q.val();
        self.wake.next = self.pending.val().any();
        self.interrupt.next = self.pending.val().any() && self.mie_global.q.val();
        // Priority MEI > MSI > MTI (§3.1.9); bit 31 marks an interrupt (§3.1.15).
        self.interrupt_cause.next = bits::<32>(7).replace_bit(31, true);
        if self.pending.val().get_bit(3) {
            self.interrupt_cause.next = bits::<32>(3).replace_bit(31, true);
        }
        if self.pending.val().get_bit(11) {
            self.interrupt_cause.next = bits::<32>(11).replace_bit(31, true);
        }
        self.mtvec.next = self.mtvec_reg.q.val();
        self.mepc.next = self.mepc_reg.q.val();

        // Reads (§2.2, Table 2.5; weft_iss::csr for the values).
        self.implemented.next = true;
        self.read_data.next = bits::<32>(0);
        if self.address.val() == 0x300 {
            // mstatus: MPP hard-wired to M (bits 12:11), MPIE bit 7, MIE bit 3.
            self.read_data.next = bits::<32>(0x1800)
                | (bit_cast::<32, 1>((self.mpie.q.val()).into()) << 7)
                | (bit_cast::<32, 1>((self.mie_global.q.val()).into()) << 3);
        } else if self.address.val() == 0x301 {
            // misa: MXL = 1, extensions I and M.
            self.read_data.next = bits::<32>(0x4000_1100);
        } else if self.address.val() == 0x304 {
            self.read_data.next = self.mie.q.val();
        } else if self.address.val() == 0x305 {
            self.read_data.next = self.mtvec_reg.q.val();
        } else if self.address.val() == 0x310 {
            // mstatush: little-endian only, nothing set.
            self.read_data.next = bits::<32>(0);
        } else if self.address.val() == 0x340 {
            self.read_data.next = self.mscratch.q.val();
        } else if self.address.val() == 0x341 {
            self.read_data.next = self.mepc_reg.q.val();
        } else if self.address.val() == 0x342 {
            self.read_data.next = self.mcause.q.val();
        } else if self.address.val() == 0x343 {
            self.read_data.next = self.mtval.q.val();
        } else if self.address.val() == 0x344 {
            self.read_data.next = self.mip.val();
        } else if self.address.val() == 0xb00 || self.address.val() == 0xc00 {
            self.read_data.next = self.mcycle_low.q.val();
        } else if self.address.val() == 0xb80 || self.address.val() == 0xc80 {
            self.read_data.next = self.mcycle_high.q.val();
        } else if self.address.val() == 0xb02 || self.address.val() == 0xc02 {
            self.read_data.next = self.minstret_low.q.val();
        } else if self.address.val() == 0xb82 || self.address.val() == 0xc82 {
            self.read_data.next = self.minstret_high.q.val();
        } else if self.address.val() == 0xf11
            || self.address.val() == 0xf12
            || self.address.val() == 0xf13
        {
            // mvendorid, marchid, mimpid: zero.
            self.read_data.next = bits::<32>(0);
        } else if self.address.val() == 0xf14 {
            self.read_data.next = self.hart_id.val();
        } else {
            self.implemented.next = false;
        }
        self.illegal.next = !self.implemented.val()
            || (self.writes.val() && self.address.val().get_bits::<2>(10) == 3);

        // Read-modify-write (Unprivileged §9.1).
        self.modified.next = self.source.val();
        if self.operation.val() == 2 {
            self.modified.next = self.read_data.val() | self.source.val();
        }
        if self.operation.val() == 3 {
            self.modified.next = self.read_data.val() & !self.source.val();
        }
        self.write.next = self.commit.val() && self.writes.val() && !self.illegal.val();

        // Counters: every cycle, every retirement (§3.1.10).
        self.mcycle_low.d.next = self.mcycle_low.q.val() + 1;
        self.mcycle_high.d.next =
            self.mcycle_high.q.val() + bit_cast::<32, 1>((self.mcycle_low.q.val().all()).into());
        if self.retire.val() {
            self.minstret_low.d.next = self.minstret_low.q.val() + 1;
            self.minstret_high.d.next = self.minstret_high.q.val()
                + bit_cast::<32, 1>((self.minstret_low.q.val().all()).into());
        }

        if self.write.val() {
            if self.address.val() == 0x300 {
                self.mie_global.d.next = self.modified.val().get_bit(3);
                self.mpie.d.next = self.modified.val().get_bit(7);
            }
            if self.address.val() == 0x304 {
                // Only MSIE, MTIE, MEIE exist.
                self.mie.d.next = self.modified.val() & 0x888;
            }
            if self.address.val() == 0x305 {
                // MODE >= 2 is reserved: keep bit 0 only (§3.1.7).
                self.mtvec_reg.d.next = self.modified.val() & !bits::<32>(2);
            }
            if self.address.val() == 0x340 {
                self.mscratch.d.next = self.modified.val();
            }
            if self.address.val() == 0x341 {
                // IALIGN = 32: mepc[1:0] are zero (§3.1.14).
                self.mepc_reg.d.next = self.modified.val() & !bits::<32>(3);
            }
            if self.address.val() == 0x342 {
                self.mcause.d.next = self.modified.val();
            }
            if self.address.val() == 0x343 {
                self.mtval.d.next = self.modified.val();
            }
            if self.address.val() == 0xb00 {
                self.mcycle_low.d.next = self.modified.val();
                self.mcycle_high.d.next = self.mcycle_high.q.val();
            }
            if self.address.val() == 0xb80 {
                self.mcycle_low.d.next = self.mcycle_low.q.val();
                self.mcycle_high.d.next = self.modified.val();
            }
            if self.address.val() == 0xb02 {
                self.minstret_low.d.next = self.modified.val();
                self.minstret_high.d.next = self.minstret_high.q.val();
            }
            if self.address.val() == 0xb82 {
                self.minstret_low.d.next = self.minstret_low.q.val();
                self.minstret_high.d.next = self.modified.val();
            }
        }

        // Trap entry (§3.1.6.1, §3.1.14–§3.1.16) and mret (§3.3.2).
        if self.trap.val() {
            self.mepc_reg.d.next = self.trap_pc.val();
            self.mcause.d.next = self.trap_cause.val();
            self.mtval.d.next = self.trap_value.val();
            self.mpie.d.next = self.mie_global.q.val();
            self.mie_global.d.next = false;
        }
        if self.mret.val() {
            self.mie_global.d.next = self.mpie.q.val();
            self.mpie.d.next = true;
        }

        if self.reset.val() {
            self.mie_global.d.next = false;
            self.mpie.d.next = false;
            self.mie.d.next = bits::<32>(0);
            self.mtvec_reg.d.next = bits::<32>(0);
            self.mscratch.d.next = bits::<32>(0);
            self.mepc_reg.d.next = bits::<32>(0);
            self.mcause.d.next = bits::<32>(0);
            self.mtval.d.next = bits::<32>(0);
            self.mcycle_low.d.next = bits::<32>(0);
            self.mcycle_high.d.next = bits::<32>(0);
            self.minstret_low.d.next = bits::<32>(0);
            self.minstret_high.d.next = bits::<32>(0);
        }
    }
}
