//! A test bench for the core: Rust models of memory on its two ports,
//! interrupt lines, and its retirement trace read back as
//! `weft_iss::Retirement` records, all driven cycle by cycle on the
//! calling thread ([`crate::driver::CycleDriver`]).
//!
//! Memory is any `weft_iss::Bus` — normally the same `HarvardBus` memory
//! map the instruction-set simulator runs on, so the two models see the
//! same RAMs and the same access faults.

use std::fmt;

use rust_hdl::prelude::*;
use weft_iss::{
    Bus, Exception, Interrupt, MemWrite, RegWrite, Retirement, TrapCause, TrapTaken, Width,
};

use super::{Core, DataPort, RetireTrace};
use crate::driver::{CycleDriver, DriveError};

/// Why the test bench could not run or read the core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BenchError {
    /// The cycle driver failed.
    Drive(DriveError),
    /// The trace reported an `mcause` no trap of this core has.
    UnknownCause {
        /// The reported `mcause`.
        mcause: u32,
    },
    /// The trace reported a store width other than byte, halfword, word.
    UnknownWidth {
        /// The reported width code.
        code: u64,
    },
    /// A data port request changed when its `fault` answer was applied:
    /// the port contract (fault depends on the request only) is broken.
    RequestDependsOnFault {
        /// Clock cycle.
        cycle: u64,
    },
    /// The data port wrote memory, and the trace reported no retirement in
    /// the next cycle (a store commits in M and retires from W one cycle
    /// later, so every write has a retirement to answer for it).
    StoreNotRetired {
        /// Clock cycle of the missing retirement.
        cycle: u64,
        /// The write the data port performed.
        store: MemWrite,
    },
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Drive(e) => write!(f, "driving the core failed: {e}"),
            Self::UnknownCause { mcause } => {
                write!(
                    f,
                    "the core reported mcause {mcause:#x}, which it cannot raise"
                )
            }
            Self::UnknownWidth { code } => write!(f, "the core reported store width code {code}"),
            Self::RequestDependsOnFault { cycle } => write!(
                f,
                "cycle {cycle}: the data port request changed with its own fault answer \
                 (a combinational path from data.fault to the request)"
            ),
            Self::StoreNotRetired { cycle, store } => write!(
                f,
                "cycle {cycle}: the data port wrote {store:?} in the cycle before, \
                 and the trace retired nothing"
            ),
        }
    }
}

impl std::error::Error for BenchError {}

impl From<DriveError> for BenchError {
    fn from(e: DriveError) -> Self {
        Self::Drive(e)
    }
}

/// One retirement of the core, with the interrupt lines (as `mip` bits)
/// that the commit stage saw when it decided it and the write its data
/// port performed for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retired {
    /// The retirement record.
    pub retirement: Retirement,
    /// `mip` as the commit decision saw it.
    pub mip: u32,
    /// The write the data port performed in the cycle this retirement
    /// committed in M (one cycle before the trace reports it): what
    /// reached memory, where the record's `mem_write` is what the trace
    /// says was stored.
    pub stored: Option<MemWrite>,
}

impl Retired {
    /// The retirement a bench reports for one cycle: the trace's record
    /// `retirement`, decided under `mip`, answering for `stored`, the data
    /// port's write of the cycle before (`cycle` names this cycle in the
    /// error when a write has no retirement).
    pub fn reported(
        retirement: Option<Retirement>,
        mip: u32,
        stored: Option<MemWrite>,
        cycle: u64,
    ) -> Result<Option<Self>, BenchError> {
        match (retirement, stored) {
            (Some(retirement), stored) => Ok(Some(Self {
                retirement,
                mip,
                stored,
            })),
            (None, Some(store)) => Err(BenchError::StoreNotRetired { cycle, store }),
            (None, None) => Ok(None),
        }
    }
}

/// A core under test, run one clock cycle at a time with its retirement
/// trace read back: what [`Lockstep`](super::Lockstep) compares with the ISS.
pub trait CoreUnderTest {
    /// Runs one clock cycle; returns the retirement the trace reports in it.
    fn cycle(&mut self) -> Result<Option<Retired>, BenchError>;
    /// Clock cycles run, the reset cycle included.
    fn cycles(&self) -> u64;
    /// Whether the data port wrote memory in the last cycle for an
    /// instruction the trace reports only in the next one: the core's
    /// memory then holds one store more than the retirements so far.
    fn store_in_flight(&self) -> bool;
}

impl<B: Bus> CoreUnderTest for CoreBench<B> {
    fn cycle(&mut self) -> Result<Option<Retired>, BenchError> {
        CoreBench::cycle(self)
    }

    fn cycles(&self) -> u64 {
        CoreBench::cycles(self)
    }

    fn store_in_flight(&self) -> bool {
        self.issued.is_some()
    }
}

/// The core with memory models and interrupt lines attached.
pub struct CoreBench<B: Bus> {
    driver: CycleDriver<Core>,
    bus: B,
    /// The word the instruction port returns in the next cycle.
    fetched: u32,
    /// The word the data port returns in the next cycle.
    loaded: u32,
    mip: u32,
    /// `mip` during the previous cycle, whose commit decision the trace reports now.
    decided_mip: u32,
    /// The data port's write in the previous cycle, whose retirement the trace reports now.
    issued: Option<MemWrite>,
}

impl<B: Bus> CoreBench<B> {
    /// Builds the core (`mhartid` 0) on `bus` and holds it in reset for one
    /// cycle, so that it starts fetching at `reset_pc`.
    pub fn new(bus: B, reset_pc: u32) -> Result<Self, BenchError> {
        let mut driver = CycleDriver::new(Core::default(), |c| &mut c.clock)?;
        driver.block().reset_vector.next = bits(u64::from(reset_pc));
        driver.block().reset.next = true;
        driver.tick()?;
        driver.block().reset.next = false;
        Ok(Self {
            driver,
            bus,
            fetched: 0,
            loaded: 0,
            mip: 0,
            decided_mip: 0,
            issued: None,
        })
    }

    /// Drives interrupt line `irq`.
    pub fn set_interrupt(&mut self, irq: Interrupt, pending: bool) {
        if pending {
            self.mip |= irq.mask();
        } else {
            self.mip &= !irq.mask();
        }
    }

    /// The interrupt lines as `mip` bits.
    pub fn interrupt_lines(&self) -> u32 {
        self.mip
    }

    /// The memory.
    pub fn bus(&self) -> &B {
        &self.bus
    }

    /// The memory, writable.
    pub fn bus_mut(&mut self) -> &mut B {
        &mut self.bus
    }

    /// Clock cycles run, the reset cycle included.
    pub fn cycles(&self) -> u64 {
        self.driver.cycles()
    }

    /// Integer register `r`.
    ///
    /// # Panics
    /// If `r > 31`.
    pub fn register(&mut self, r: usize) -> u32 {
        self.driver.block().register(r)
    }

    /// Runs one clock cycle: answers the core's memory requests from the
    /// bus, and returns the retirement the trace reports in this cycle.
    pub fn cycle(&mut self) -> Result<Option<Retired>, BenchError> {
        let mip = self.mip;
        let core = self.driver.block();
        core.fetch.data.next = bits(u64::from(self.fetched));
        core.data.read_data.next = bits(u64::from(self.loaded));
        core.software_irq.next = mip & Interrupt::MachineSoftware.mask() != 0;
        core.timer_irq.next = mip & Interrupt::MachineTimer.mask() != 0;
        core.external_irq.next = mip & Interrupt::MachineExternal.mask() != 0;
        core.data.fault.next = false;
        core.fetch.fault.next = false;
        self.driver.settle()?;
        let retired = read_trace(&self.driver.block().retire)?;

        // Data port first: a data fault redirects fetch in the same cycle.
        let request = self.data_request();
        let (fault, loaded) = self.serve_data(request);
        self.loaded = loaded;
        self.driver.block().data.fault.next = fault;
        self.driver.settle()?;
        if fault && self.data_request() != request {
            return Err(BenchError::RequestDependsOnFault {
                cycle: self.driver.cycles(),
            });
        }

        let written = port_write(&self.driver.block().data);

        let address = self.driver.block().fetch.address.val().to_u32();
        let (fault, word) = match self.bus.fetch(address) {
            Ok(word) => (false, word),
            Err(_) => (true, 0),
        };
        self.fetched = word;
        self.driver.block().fetch.fault.next = fault;
        self.driver.tick()?;
        let decided = std::mem::replace(&mut self.decided_mip, mip);
        let stored = std::mem::replace(&mut self.issued, written);
        Retired::reported(retired, decided, stored, self.driver.cycles())
    }

    /// The data port's request: read, write, address, byte enables, data.
    fn data_request(&mut self) -> (bool, bool, u32, u64, u32) {
        let port = &self.driver.block().data;
        (
            port.read.val(),
            port.write.val(),
            port.address.val().to_u32(),
            port.byte_enable.val().to_u64(),
            port.write_data.val().to_u32(),
        )
    }

    /// Performs a request on the bus; returns its fault and the word a
    /// load puts on the read lanes.
    fn serve_data(&mut self, request: (bool, bool, u32, u64, u32)) -> (bool, u32) {
        let (read, write, address, byte_enable, write_data) = request;
        let (width, shift) = lanes(address, byte_enable);
        if write {
            let fault = self
                .bus
                .store(address, width, (write_data >> shift) & width_mask(width))
                .is_err();
            (fault, 0)
        } else if read {
            match self.bus.load(address, width) {
                Ok(value) => (false, value << shift),
                Err(_) => (true, 0),
            }
        } else {
            (false, 0)
        }
    }
}

/// The width of an access on byte lanes `byte_enable` at `address`, and
/// the shift from its lanes down to bit 0.
fn lanes(address: u32, byte_enable: u64) -> (Width, u32) {
    let width = match byte_enable.count_ones() {
        1 => Width::Byte,
        2 => Width::Half,
        _ => Width::Word,
    };
    (width, 8 * (address & 3))
}

/// The bits of a value of `width`.
fn width_mask(width: Width) -> u32 {
    match width {
        Width::Byte => 0xff,
        Width::Half => 0xffff,
        Width::Word => u32::MAX,
    }
}

/// The write the settled data port `port` performs at this edge, if any:
/// a request to write that does not fault, as the store of its enabled
/// lanes (for every bench that holds a core).
pub fn port_write(port: &DataPort) -> Option<MemWrite> {
    if !port.write.val() || port.fault.val() {
        return None;
    }
    let addr = port.address.val().to_u32();
    let (width, shift) = lanes(addr, port.byte_enable.val().to_u64());
    Some(MemWrite {
        addr,
        width,
        value: (port.write_data.val().to_u32() >> shift) & width_mask(width),
    })
}

/// The retirement the trace outputs `t` report in this cycle, if any: a
/// core's trace read back as the ISS's record, for every bench that holds a core.
pub fn read_trace(t: &RetireTrace) -> Result<Option<Retirement>, BenchError> {
    if !t.valid.val() {
        return Ok(None);
    }
    let rd = u8::try_from(t.rd.val().to_u64()).expect("rd is a 5-bit field");
    let mut record = Retirement {
        pc: t.pc.val().to_u32(),
        instruction: t
            .has_instruction
            .val()
            .then(|| t.instruction.val().to_u32()),
        rd_write: t.rd_write.val().then(|| RegWrite {
            rd,
            value: t.rd_value.val().to_u32(),
        }),
        mem_write: None,
        trap: None,
    };
    if t.mem_write.val() {
        let width = match t.mem_width.val().to_u64() {
            0 => Width::Byte,
            1 => Width::Half,
            2 => Width::Word,
            code => return Err(BenchError::UnknownWidth { code }),
        };
        record.mem_write = Some(MemWrite {
            addr: t.mem_address.val().to_u32(),
            width,
            value: t.mem_value.val().to_u32(),
        });
    }
    if t.trap.val() {
        record.trap = Some(trap_taken(
            t.trap_cause.val().to_u32(),
            t.trap_value.val().to_u32(),
        )?);
    }
    Ok(Some(record))
}

/// The trap an `mcause`/`mtval` pair describes (Privileged 20211203
/// §3.1.15, Table 3.6).
fn trap_taken(mcause: u32, tval: u32) -> Result<TrapTaken, BenchError> {
    let unknown = BenchError::UnknownCause { mcause };
    let cause = if mcause & (1 << 31) != 0 {
        let code = mcause & !(1 << 31);
        let irq = Interrupt::BY_PRIORITY
            .into_iter()
            .find(|i| i.code() == code)
            .ok_or(unknown)?;
        TrapCause::Interrupt(irq)
    } else {
        use Exception as E;
        let exception = [
            E::InstructionAddressMisaligned,
            E::InstructionAccessFault,
            E::IllegalInstruction,
            E::Breakpoint,
            E::LoadAddressMisaligned,
            E::LoadAccessFault,
            E::StoreAddressMisaligned,
            E::StoreAccessFault,
            E::EnvironmentCallFromMMode,
        ]
        .into_iter()
        .find(|e| e.code() == mcause)
        .ok_or(unknown)?;
        TrapCause::Exception(exception)
    };
    Ok(TrapTaken { cause, tval })
}
