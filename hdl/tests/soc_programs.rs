//! Small programs on the all-RTL SoC that reach its peripherals through
//! the core: the timer's interrupt wakes the core from `wfi` in lock-step
//! with the ISS, the data plane's interrupt line (`mip.MEIP`) wakes it too;
//! loads and stores cross the CSR master port to a Rust model (narrow ones
//! fault) in lock-step too, and the watchdog resets the SoC, which the
//! program then reads from the watchdog's status.

use std::collections::HashMap;

use weft_hdl::core::Lockstep;
use weft_hdl::soc::{MemoryImage, Soc, SocBench};
use weft_iss::encode as e;
use weft_iss::{DeviceFault, Hart, HarvardBus, Mmio, Width};
use weft_regs::csr::{CSR_BASE, CSR_SIZE};
use weft_regs::soc::{gpio, timer, watchdog};

/// The reference memories with `program` at the reset vector.
fn image(program: &[u32]) -> MemoryImage {
    let mut memory = MemoryImage::reference();
    memory.instructions[..program.len()].copy_from_slice(program);
    memory
}

fn soc(program: &[u32]) -> SocBench {
    SocBench::new(Soc::new(&image(program)).expect("reference memories fit"))
        .expect("the SoC builds")
}

/// `mie.MTIE` (Privileged 20211203 §3.1.9).
const MTIE: i32 = 1 << 7;
const MIE: u16 = 0x304;

#[test]
fn the_timer_wakes_the_core_from_wfi_in_lockstep_with_the_iss() {
    let compare = 200;
    let program = [
        e::lui(1, timer::LAYOUT.base >> 12),
        // mtimecmp = compare, high half first so it never passes below mtime.
        e::sw(0, 1, timer::MTIMECMP_HIGH.offset as i32),
        e::addi(2, 0, compare),
        e::sw(2, 1, timer::MTIMECMP_LOW.offset as i32),
        e::addi(3, 0, MTIE),
        e::csrrs(0, MIE, 3),
        e::wfi(),
        // Woken (mstatus.MIE is clear, so no trap): mark it, stop waiting for the timer, rest.
        e::addi(4, 0, 1),
        e::csrrc(0, MIE, 3),
        e::wfi(),
    ];
    let mut bus = HarvardBus::reference();
    weft_iss::soc::Soc::attach(&mut bus).expect("the SoC window is free");
    bus.write_words(0, &program)
        .expect("instruction RAM is at 0");
    let mut l = Lockstep::pair(soc(&program), Hart::new(bus));
    while l.iss().reg(4) == 0 {
        l.cycle().unwrap_or_else(|d| panic!("{d}"));
        assert!(l.rtl().cycles() < 2_000, "the timer never woke the core");
    }
    assert_eq!(l.rtl().register(4), 1);
    assert!(
        l.rtl().cycles() > compare as u64,
        "woken at cycle {}, before mtime reached {compare}",
        l.rtl().cycles()
    );
}

/// `mie.MEIE` (Privileged 20211203 §3.1.9): 0x800, one above an addi immediate.
const MEIE_UPPER: u32 = 1;
const MEIE_SHIFT: u8 = 1;

#[test]
fn the_data_plane_interrupt_wakes_the_core_from_wfi() {
    let program = [
        // x3 = mie.MEIE = (1 << 12) >> 1.
        e::lui(3, MEIE_UPPER),
        e::srli(3, 3, MEIE_SHIFT),
        e::csrrs(0, MIE, 3),
        e::wfi(),
        // Woken (mstatus.MIE is clear, so no trap): mark it, rest.
        e::addi(4, 0, 1),
        e::csrrc(0, MIE, 3),
        e::wfi(),
    ];
    let mut bench = soc(&program);
    let raise_at = 300;
    while bench.cycles() < raise_at {
        bench.cycle().expect("the SoC runs");
    }
    assert_eq!(
        bench.register(4),
        0,
        "asleep until the data plane interrupts"
    );
    bench.set_data_plane_interrupt(true);
    while bench.register(4) == 0 {
        bench.cycle().expect("the SoC runs");
        assert!(
            bench.cycles() < raise_at + 50,
            "the data plane's interrupt never woke the core"
        );
    }
}

#[test]
fn the_watchdog_resets_the_soc_and_the_program_reads_why() {
    let status = watchdog::STATUS.offset as i32;
    let program = [
        /* 0 */ e::lui(1, watchdog::LAYOUT.base >> 12),
        /* 4 */ e::lw(5, 1, status),
        /* 8 */ e::beq(5, 0, 20),
        // After the watchdog's reset: show it on the LEDs, clear it, rest.
        /* 12 */
        e::lui(6, gpio::LAYOUT.base >> 12),
        /* 16 */ e::sw(5, 6, gpio::OUTPUT.offset as i32),
        /* 20 */ e::sw(5, 1, status),
        /* 24 */ e::wfi(),
        // From power-on: arm the watchdog with 20 cycles and hang.
        /* 28 */
        e::addi(2, 0, 20),
        /* 32 */ e::sw(2, 1, watchdog::LOAD.offset as i32),
        /* 36 */ e::addi(3, 0, 1),
        /* 40 */ e::sw(3, 1, watchdog::CONTROL.offset as i32),
        /* 44 */ e::jal(0, 0),
    ];
    let mut bench = soc(&program);
    for _ in 0..200 {
        bench.cycle().expect("the SoC runs");
    }
    assert_eq!(
        bench.resets_requested(),
        1,
        "one reset, then no more: STATUS was read and cleared"
    );
    assert_eq!(
        bench.gpio_outputs(),
        watchdog::FIRED.encode(1),
        "the program saw FIRED after the reset"
    );
}

/// A CSR target for the tests: a word written at an offset reads back;
/// an offset never written reads as itself with a marker in the high half.
#[derive(Default)]
struct ScratchRegisters(HashMap<u32, u32>);

impl Mmio for ScratchRegisters {
    fn read(&mut self, offset: u32, width: Width) -> Result<u32, DeviceFault> {
        if width != Width::Word {
            return Err(DeviceFault::UnsupportedWidth);
        }
        Ok(self.0.get(&offset).copied().unwrap_or(0xC5A0_0000 | offset))
    }
    fn write(&mut self, offset: u32, width: Width, value: u32) -> Result<(), DeviceFault> {
        if width != Width::Word {
            return Err(DeviceFault::UnsupportedWidth);
        }
        self.0.insert(offset, value);
        Ok(())
    }
}

const MTVEC: u16 = 0x305;
const MCAUSE: u16 = 0x342;

#[test]
fn loads_and_stores_cross_the_csr_port_and_narrow_ones_fault_as_on_the_iss() {
    let program = [
        /* 0 */ e::lui(1, CSR_BASE >> 12),
        /* 4 */ e::addi(2, 0, 0x5A),
        /* 8 */ e::sw(2, 1, 0x10),
        /* 12 */ e::lw(3, 1, 0x10),
        /* 16 */ e::lw(4, 1, 0x14),
        /* 20 */ e::addi(5, 0, 36),
        /* 24 */ e::csrrw(0, MTVEC, 5),
        // A byte store to the CSR window: a store access fault.
        /* 28 */
        e::sb(2, 1, 0),
        /* 32 */ e::wfi(),
        // The trap handler: note the cause, rest.
        /* 36 */ e::csrrs(6, MCAUSE, 0),
        /* 40 */ e::wfi(),
    ];
    let mut bus = HarvardBus::reference();
    weft_iss::soc::Soc::attach(&mut bus).expect("the SoC window is free");
    bus.map_mmio(CSR_BASE, CSR_SIZE, Box::<ScratchRegisters>::default())
        .expect("the CSR window is free");
    bus.write_words(0, &program)
        .expect("instruction RAM is at 0");
    let mut rtl = soc(&program);
    rtl.map_csr(Box::<ScratchRegisters>::default());
    let mut l = Lockstep::pair(rtl, Hart::new(bus));
    let idle = l.run_to_wfi(1_000).unwrap_or_else(|d| panic!("{d}"));
    assert!(idle, "the program did not reach its handler's wfi");
    assert_eq!(
        l.rtl().register(3),
        0x5A,
        "the store reached the CSR target"
    );
    assert_eq!(
        l.rtl().register(4),
        0xC5A0_0014,
        "the load read the CSR target"
    );
    assert_eq!(
        l.rtl().register(6),
        7,
        "store access fault (Privileged §3.1.15)"
    );
}
