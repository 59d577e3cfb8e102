//! Small programs on the all-RTL SoC that reach its peripherals through
//! the core: the timer's interrupt wakes the core from `wfi` in lock-step
//! with the ISS, the data plane's interrupt line (`mip.MEIP`) wakes it too;
//! loads and stores cross the CSR master port to a Rust model (narrow ones
//! fault) in lock-step too, and the watchdog resets the SoC, which the
//! program then reads from the watchdog's status, as on the ISS's SoC
//! (`weft_iss::soc::Soc::take_watchdog_reset`). A program drives the
//! SPI flash controller to a serial NOR part on the SoC's pins in
//! lock-step with the ISS's controller model and its part.

use std::collections::HashMap;

use weft_hdl::core::Lockstep;
use weft_hdl::soc::{MemoryImage, Soc, SocBench};
use weft_iss::encode as e;
use weft_iss::soc::Timing;
use weft_iss::{DeviceFault, Hart, HarvardBus, Mmio, Width};
use weft_regs::csr::{CSR_BASE, CSR_SIZE};
use weft_regs::soc::spi_flash::{self, opcode};
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

    // The ISS's SoC carries out the same reset: the core starts again at
    // the reset vector, the watchdog's STATUS kept, and ends where the RTL did.
    let (iss, hart, resets) = iss_run(&program, 200);
    assert_eq!(u64::from(resets), bench.resets_requested());
    assert_eq!(iss.gpio.output(), bench.gpio_outputs());
    assert_eq!(
        hart.reg(5),
        watchdog::FIRED.encode(1),
        "x5 read FIRED after the reset"
    );
    assert!(!iss.watchdog.enabled(), "firing stopped the watchdog");
}

#[test]
fn the_watchdogs_reset_restarts_the_timer_and_drops_the_gpio_outputs_on_rtl_and_iss() {
    let program = [
        /* 0 */ e::lui(1, watchdog::LAYOUT.base >> 12),
        /* 4 */ e::lw(5, 1, watchdog::STATUS.offset as i32),
        /* 8 */ e::lui(6, gpio::LAYOUT.base >> 12),
        /* 12 */ e::lw(7, 6, gpio::OUTPUT.offset as i32),
        /* 16 */ e::lui(3, timer::LAYOUT.base >> 12),
        /* 20 */ e::bne(5, 0, 24),
        // From power-on: drive the LEDs, move mtime far on, arm the
        // watchdog with 20 cycles and hang.
        /* 24 */
        e::addi(2, 0, 0x5A),
        /* 28 */ e::sw(2, 6, gpio::OUTPUT.offset as i32),
        /* 32 */ e::sw(2, 3, timer::MTIME_HIGH.offset as i32),
        /* 36 */ e::addi(2, 0, 20),
        /* 40 */ e::jal(0, 16),
        // After the watchdog's reset: x7 holds the outputs as the reset
        // left them, x8 mtime's high half; rest.
        /* 44 */
        e::lw(8, 3, timer::MTIME_HIGH.offset as i32),
        /* 48 */ e::wfi(),
        /* 52 */ e::jal(0, -4),
        /* 56 */ e::sw(2, 1, watchdog::LOAD.offset as i32),
        /* 60 */ e::addi(4, 0, 1),
        /* 64 */ e::sw(4, 1, watchdog::CONTROL.offset as i32),
        /* 68 */ e::jal(0, 0),
    ];
    let mut bench = soc(&program);
    for _ in 0..300 {
        bench.cycle().expect("the SoC runs");
    }
    let (_, hart, resets) = iss_run(&program, 300);
    assert_eq!(bench.resets_requested(), 1);
    assert_eq!(resets, 1);
    for r in [5u8, 7, 8] {
        assert_eq!(hart.reg(r), bench.register(usize::from(r)), "x{r}");
    }
    assert_eq!(hart.reg(5), watchdog::FIRED.encode(1));
    assert_eq!(hart.reg(7), 0, "the reset dropped the outputs");
    assert_eq!(hart.reg(8), 0, "the reset restarted mtime");
}

/// `program` run `steps` steps on the ISS's SoC, which carries out the
/// watchdog's resets as the RTL SoC does (the core back at address 0):
/// the SoC, the hart and how many resets there were.
fn iss_run(program: &[u32], steps: usize) -> (weft_iss::soc::Soc, Hart<HarvardBus>, u32) {
    let mut bus = HarvardBus::reference();
    let iss = weft_iss::soc::Soc::attach(&mut bus).expect("the SoC window is free");
    bus.write_words(0, program)
        .expect("instruction RAM is at 0");
    let mut hart = Hart::new(bus);
    let mut resets = 0;
    for _ in 0..steps {
        iss.step(&mut hart);
        resets += u32::from(iss.take_watchdog_reset(&mut hart, 0));
    }
    (iss, hart, resets)
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

/// Registers of the flash program below.
const FLASH: u8 = 1;
const SCRATCH: u8 = 3;
const STATUS: u8 = 4;
const COUNT: u8 = 5;

/// Instructions that run one flash command: `ADDRESS`, `LENGTH` and
/// `COMMAND`, then a fixed wait of at least `wait_cycles` (a loop of two
/// instructions, each retiring in a cycle or more), then a load of
/// `STATUS`. The wait is fixed rather than a poll of `BUSY` so that the
/// program retires the same instructions on the core, whose controller
/// clocks the bytes out, and on the ISS, whose model finishes at once:
/// the lock-step compares the `STATUS` load, so a controller still busy
/// after the wait fails the test.
fn flash_command(
    op: u8,
    address: Option<u32>,
    length: u32,
    write: bool,
    wait_cycles: u32,
) -> Vec<u32> {
    let command = spi_flash::OPCODE.encode(u32::from(op))
        | spi_flash::WITH_ADDRESS.encode(u32::from(address.is_some()))
        | spi_flash::WRITE.encode(u32::from(write));
    let offset = |r: weft_regs::Register| (r.address(0, 0) - spi_flash::LAYOUT.base) as i32;
    let mut code = Vec::new();
    code.extend(e::li(SCRATCH, address.unwrap_or(0)));
    code.push(e::sw(SCRATCH, FLASH, offset(spi_flash::ADDRESS)));
    code.extend(e::li(SCRATCH, length));
    code.push(e::sw(SCRATCH, FLASH, offset(spi_flash::LENGTH)));
    code.extend(e::li(SCRATCH, command));
    code.push(e::sw(SCRATCH, FLASH, offset(spi_flash::COMMAND)));
    code.extend(e::li(COUNT, wait_cycles.div_ceil(2)));
    code.push(e::addi(COUNT, COUNT, -1));
    code.push(e::bne(COUNT, 0, -4));
    code.push(e::lw(STATUS, FLASH, offset(spi_flash::STATUS)));
    code
}

/// Clock cycles a transaction of `bytes` (opcode and address included)
/// takes at most at `CONTROL.DIVISOR` 0: 16 per byte, and a margin for
/// the controller's steps between bytes.
fn transaction_cycles(bytes: u32) -> u32 {
    24 * bytes + 16
}

/// `rd` = the page buffer's word at byte `at`.
fn load_buffer(rd: u8, at: u32) -> u32 {
    e::lw(
        rd,
        FLASH,
        (spi_flash::buffer_word(at) - spi_flash::LAYOUT.base) as i32,
    )
}

#[test]
fn a_program_reads_the_id_and_programs_a_page_of_the_flash_on_the_soc_pins_as_on_the_iss() {
    // Eight words programmed at a flash address inside a page, read back
    // with a word of erased flash either side.
    let at = 0x1004;
    let words: Vec<u32> = (1..=8).map(|i| 0x1357_9BDF_u32.wrapping_mul(i)).collect();
    let length = 4 * words.len() as u32;
    let page_program = u32::try_from(Timing::TYPICAL.page_program).expect("a short time");

    let mut program = e::li(FLASH, spi_flash::LAYOUT.base).to_vec();
    // x10 = the JEDEC ID.
    program.extend(flash_command(
        opcode::READ_JEDEC_ID,
        None,
        3,
        false,
        transaction_cycles(4),
    ));
    program.push(load_buffer(10, 0));
    // x11 = the status after Write Enable.
    program.extend(flash_command(
        opcode::WRITE_ENABLE,
        None,
        0,
        false,
        transaction_cycles(1),
    ));
    program.extend(flash_command(
        opcode::READ_STATUS,
        None,
        1,
        false,
        transaction_cycles(2),
    ));
    program.push(load_buffer(11, 0));
    // Page Program from the buffer, then wait out tPP; x12 = the status after it.
    for (i, word) in words.iter().enumerate() {
        program.extend(e::li(SCRATCH, *word));
        program.push(e::sw(
            SCRATCH,
            FLASH,
            (spi_flash::buffer_word(4 * i as u32) - spi_flash::LAYOUT.base) as i32,
        ));
    }
    program.extend(flash_command(
        opcode::PAGE_PROGRAM,
        Some(at),
        length,
        true,
        transaction_cycles(4 + length) + page_program,
    ));
    program.extend(flash_command(
        opcode::READ_STATUS,
        None,
        1,
        false,
        transaction_cycles(2),
    ));
    program.push(load_buffer(12, 0));
    // x13.. = the page read back, from a word below to a word above.
    program.extend(flash_command(
        opcode::READ_DATA,
        Some(at - 4),
        length + 8,
        false,
        transaction_cycles(4 + length + 8),
    ));
    let first_read = 13;
    for i in 0..words.len() as u8 + 2 {
        program.push(load_buffer(first_read + i, 4 * u32::from(i)));
    }
    program.push(e::wfi());

    let mut bus = HarvardBus::reference();
    let iss_soc = weft_iss::soc::Soc::attach(&mut bus).expect("the SoC window is free");
    bus.write_words(0, &program)
        .expect("instruction RAM is at 0");
    let mut l = Lockstep::pair(soc(&program), Hart::new(bus));
    let max_cycles = 4 * page_program as u64;
    while !l.iss().is_waiting() {
        l.cycle().unwrap_or_else(|d| panic!("{d}"));
        // The ISS's part counts the SoC's clock cycles, as the one on the pins does.
        iss_soc.advance(1);
        assert!(l.rtl().cycles() < max_cycles, "the program did not finish");
    }
    // The values the lock-step compared, against the datasheet and the program.
    let reg = |l: &mut Lockstep<SocBench>, r: u8| l.rtl().register(usize::from(r));
    assert_eq!(reg(&mut l, 10), 0x0016_40EF, "W25Q32JV: EF 40 16");
    // Read Status fills the buffer's byte 0; the bytes above keep the ID's.
    assert_eq!(
        reg(&mut l, 11) & 0xFF,
        u32::from(opcode::STATUS_WEL),
        "Write Enable sets WEL"
    );
    assert_eq!(
        reg(&mut l, 12) & 0xFF,
        0,
        "the program ended: WIP and WEL clear"
    );
    let read: Vec<u32> = (0..words.len() as u8 + 2)
        .map(|i| reg(&mut l, first_read + i))
        .collect();
    let mut expected = vec![u32::MAX];
    expected.extend(&words);
    expected.push(u32::MAX);
    assert_eq!(read, expected, "the page reads back between erased words");
    assert!(
        l.rtl().flash().contents() == iss_soc.spi_flash.contents().as_slice(),
        "the flash contents differ from the ISS's"
    );
    let programmed: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(
        l.rtl().flash().contents()[at as usize..(at + length) as usize],
        programmed
    );
}
