//! The soft core's own peripherals: the SoC register window.
//!
//! The peripherals answer on a 1 MiB window from [`SOC_BASE`], between the
//! data memory and the data plane's CSR window ([`crate::csr::CSR_BASE`]),
//! on the core's data port: 32-bit registers on 4-byte aligned byte
//! addresses, whole-word accesses only. A byte or halfword access, or an
//! access to an address in the window where no register is, raises a load
//! or store access fault. The window holds, in address order:
//!
//! - [`uart`]: the console, a byte-wide transmitter and receiver;
//! - [`timer`]: the machine timer, `mtime` and `mtimecmp` of the RISC-V
//!   privileged architecture (Privileged 20211203 §3.2.1), whose compare
//!   drives the core's machine timer interrupt (`mip.MTIP`);
//! - [`gpio`]: general-purpose outputs (the board's LEDs) and inputs;
//! - [`watchdog`]: resets the SoC when the firmware stops kicking it.
//!
//! Spec references are to *The RISC-V Instruction Set Manual, Volume II:
//! Privileged Architecture*, version 20211203 ("Privileged").

use crate::markdown::RegisterMap;
use crate::register::{Access, Field, Layout, Register, RegisterBlock};

/// First address of the SoC peripheral window in the soft core's address space.
pub const SOC_BASE: u32 = 0x2000_0000;
/// Size of the SoC peripheral window: 1 MiB.
pub const SOC_SIZE: u32 = 0x10_0000;
const _: () = assert!(SOC_BASE >= crate::DATA_RAM_BASE + crate::DATA_RAM_SIZE);
const _: () = assert!(SOC_BASE + SOC_SIZE <= crate::csr::CSR_BASE);

/// Bytes one peripheral's registers are decoded in: the span an address
/// decoder gives each block of [`BLOCKS`].
pub const BLOCK_SIZE: u32 = 0x100;

/// Every block, in address order.
pub const BLOCKS: &[RegisterBlock] = &[uart::BLOCK, timer::BLOCK, gpio::BLOCK, watchdog::BLOCK];

/// One peripheral at `base`: a single instance of a single entry.
const fn single(base: u32) -> Layout {
    Layout {
        base,
        instances: 1,
        stride: BLOCK_SIZE,
        entries: 1,
        entry_stride: BLOCK_SIZE,
    }
}

/// The console UART: bytes out through [`TX_DATA`](uart::TX_DATA), bytes
/// in through [`RX_DATA`](uart::RX_DATA), both gated by [`STATUS`](uart::STATUS).
pub mod uart {
    use super::*;

    /// One instance at the bottom of the window.
    pub const LAYOUT: Layout = single(SOC_BASE);

    /// The byte a write to [`TX_DATA`] sends.
    pub const TX_BYTE: Field = Field::new(
        "DATA",
        0,
        8,
        "The byte to send. A write while STATUS.TX_READY is clear is dropped.",
    );
    /// Queues one byte for transmission.
    pub const TX_DATA: Register = LAYOUT.register(
        "TX_DATA",
        0x00,
        Access::WriteOnly,
        "Queues one byte for transmission.",
        &[TX_BYTE],
    );

    /// [`TX_DATA`] accepts a byte.
    pub const TX_READY: Field = Field::new(
        "TX_READY",
        0,
        1,
        "TX_DATA accepts a byte: the transmit FIFO has room.",
    );
    /// [`RX_DATA`] holds a received byte.
    pub const RX_VALID: Field = Field::new(
        "RX_VALID",
        1,
        1,
        "RX_DATA holds a received byte: the receive FIFO is not empty.",
    );
    /// Whether the transmitter and receiver can be served.
    pub const STATUS: Register = LAYOUT.register(
        "STATUS",
        0x04,
        Access::ReadOnly,
        "Whether the transmitter takes a byte and the receiver has one.",
        &[TX_READY, RX_VALID],
    );

    /// The oldest byte received.
    pub const RX_BYTE: Field = Field::new(
        "DATA",
        0,
        8,
        "The oldest byte received; reads 0 while STATUS.RX_VALID is clear.",
    );
    /// Takes the oldest received byte.
    pub const RX_DATA: Register = LAYOUT.register(
        "RX_DATA",
        0x08,
        Access::ReadOnly,
        "The oldest received byte. Reading it removes the byte from the receive FIFO.",
        &[RX_BYTE],
    );

    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "uart",
        doc: "The console UART. Software polls STATUS.TX_READY before each write to \
              TX_DATA and STATUS.RX_VALID before each read of RX_DATA.",
        layout: LAYOUT,
        registers: &[TX_DATA, STATUS, RX_DATA],
        entry_names: &[],
    };
}

/// The machine timer: `mtime` and `mtimecmp` (Privileged 20211203 §3.2.1).
///
/// `mtime` counts up at the SoC's constant timebase from 0 at reset; the
/// machine timer interrupt is pending (`mip.MTIP`) while
/// `mtime >= mtimecmp`, compared as unsigned 64-bit numbers, and writing
/// `mtimecmp` is how software clears it. `mtimecmp` resets to all ones, so
/// no timer interrupt is pending until software programs one.
pub mod timer {
    use super::*;

    /// One instance, one block above the UART.
    pub const LAYOUT: Layout = single(SOC_BASE + 0x1000);

    /// The value of `mtimecmp` at reset: the interrupt is never pending.
    pub const MTIMECMP_RESET: u64 = u64::MAX;

    /// Bits 31:0 of `mtime`.
    pub const MTIME_LOW: Register = LAYOUT.register(
        "MTIME_LOW",
        0x00,
        Access::ReadWrite,
        "`mtime` bits 31:0. On RV32 read HIGH, LOW, HIGH and retry if HIGH changed, \
         since the count carries between the two reads.",
        &[Field::new("VALUE", 0, 32, "Bits 31:0 of mtime.")],
    );
    /// Bits 63:32 of `mtime`.
    pub const MTIME_HIGH: Register = LAYOUT.register(
        "MTIME_HIGH",
        0x04,
        Access::ReadWrite,
        "`mtime` bits 63:32.",
        &[Field::new("VALUE", 0, 32, "Bits 63:32 of mtime.")],
    );
    /// Bits 31:0 of `mtimecmp`.
    pub const MTIMECMP_LOW: Register = LAYOUT.register(
        "MTIMECMP_LOW",
        0x08,
        Access::ReadWrite,
        "`mtimecmp` bits 31:0. To move the compare without a spurious interrupt, write \
         LOW = all ones, then HIGH, then LOW (Privileged 20211203 §3.2.1).",
        &[Field::new("VALUE", 0, 32, "Bits 31:0 of mtimecmp.")],
    );
    /// Bits 63:32 of `mtimecmp`.
    pub const MTIMECMP_HIGH: Register = LAYOUT.register(
        "MTIMECMP_HIGH",
        0x0C,
        Access::ReadWrite,
        "`mtimecmp` bits 63:32.",
        &[Field::new("VALUE", 0, 32, "Bits 63:32 of mtimecmp.")],
    );

    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "timer",
        doc: "The machine timer of the RISC-V privileged architecture (Privileged 20211203 \
              §3.2.1). `mtime` counts up from 0 at reset, one tick per soft core clock \
              cycle; the machine timer interrupt (`mip.MTIP`) is pending while \
              `mtime >= mtimecmp` as unsigned 64-bit numbers. `mtimecmp` resets to all \
              ones, so no timer interrupt is pending until software sets it.",
        layout: LAYOUT,
        registers: &[MTIME_LOW, MTIME_HIGH, MTIMECMP_LOW, MTIMECMP_HIGH],
        entry_names: &[],
    };
}

/// General-purpose I/O: output levels (the board's LEDs) and input levels.
pub mod gpio {
    use super::*;

    /// One instance, one block above the timer.
    pub const LAYOUT: Layout = single(SOC_BASE + 0x2000);

    /// The levels driven on the outputs.
    pub const OUTPUT: Register = LAYOUT.register(
        "OUTPUT",
        0x00,
        Access::ReadWrite,
        "Levels driven on the GPIO outputs; bit i drives output i (LEDs on the low bits). \
         Resets to 0.",
        &[Field::new(
            "VALUE",
            0,
            32,
            "Output levels, bit i for output i.",
        )],
    );
    /// The levels on the inputs.
    pub const INPUT: Register = LAYOUT.register(
        "INPUT",
        0x04,
        Access::ReadOnly,
        "Levels on the GPIO inputs, bit i for input i, passed through a two-flop \
         synchroniser: a change shows two clock cycles later.",
        &[Field::new(
            "VALUE",
            0,
            32,
            "Input levels, bit i for input i.",
        )],
    );

    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "gpio",
        doc: "General-purpose I/O: 32 outputs (the board's LEDs on the low bits) and 32 \
              synchronised inputs.",
        layout: LAYOUT,
        registers: &[OUTPUT, INPUT],
        entry_names: &[],
    };
}

/// The watchdog: resets the SoC unless the firmware kicks it in time.
///
/// While enabled, `COUNT` goes down by one per soft core clock cycle; a
/// cycle that finds it at 0 *fires* the watchdog: it requests a reset of
/// the SoC, sets `STATUS.FIRED` and clears `CONTROL.ENABLE`. A kick, or
/// enabling it, reloads `COUNT` from `LOAD` in the cycle of the write, which
/// counts too, so the watchdog fires `LOAD + 1` cycles after the last
/// reload. The reset it requests leaves `LOAD` and `STATUS` alone, so the
/// firmware reads after the reset that the watchdog caused it.
pub mod watchdog {
    use super::*;

    /// One instance, one block above the GPIO.
    pub const LAYOUT: Layout = single(SOC_BASE + 0x3000);

    /// The value of `LOAD` at power-on: the longest timeout.
    pub const LOAD_RESET: u32 = u32::MAX;
    /// The value a write to [`KICK`] must carry to reload the count
    /// (ASCII "KICK"), so that a stray store does not keep a hung
    /// firmware alive.
    pub const KICK_KEY: u32 = 0x4B49_434B;

    /// The reload value.
    pub const LOAD: Register = LAYOUT.register(
        "LOAD",
        0x00,
        Access::ReadWrite,
        "The value COUNT is reloaded with by a kick or by enabling the watchdog: the \
         watchdog fires LOAD + 1 clock cycles after the reload. Writing it does not \
         change COUNT.",
        &[Field::new("VALUE", 0, 32, "Reload value, in clock cycles.")],
    );
    /// Kicks the watchdog.
    pub const KICK: Register = LAYOUT.register(
        "KICK",
        0x04,
        Access::WriteOnly,
        "Writing KICK_KEY (0x4B49434B, \"KICK\") reloads COUNT from LOAD; any other \
         value is ignored.",
        &[Field::new("KEY", 0, 32, "Must be KICK_KEY.")],
    );
    /// The watchdog counts down.
    pub const ENABLE: Field = Field::new(
        "ENABLE",
        0,
        1,
        "The watchdog counts down and fires at 0. Setting it while clear reloads COUNT \
         from LOAD; firing clears it.",
    );
    /// Whether the watchdog runs.
    pub const CONTROL: Register = LAYOUT.register(
        "CONTROL",
        0x08,
        Access::ReadWrite,
        "Whether the watchdog runs. Resets to 0, by power-on and by the watchdog's own reset.",
        &[ENABLE],
    );
    /// Cycles left.
    pub const COUNT: Register = LAYOUT.register(
        "COUNT",
        0x0C,
        Access::ReadOnly,
        "Clock cycles left before the watchdog fires, less one.",
        &[Field::new("VALUE", 0, 32, "The count.")],
    );
    /// The watchdog caused the last reset.
    pub const FIRED: Field = Field::new(
        "FIRED",
        0,
        1,
        "The watchdog has fired since power-on or since software last cleared this bit: \
         the last reset was the watchdog's.",
    );
    /// What the watchdog did.
    pub const STATUS: Register = LAYOUT.register(
        "STATUS",
        0x10,
        Access::WriteOneToClear,
        "Whether the watchdog fired. Survives the reset the watchdog requests; cleared \
         by power-on or by writing 1.",
        &[FIRED],
    );

    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "watchdog",
        doc: "The watchdog. While CONTROL.ENABLE is set, COUNT goes down by one per clock \
              cycle; a cycle that finds it at 0 requests a reset of the SoC, sets \
              STATUS.FIRED and clears CONTROL.ENABLE. Writing KICK_KEY to KICK, or setting \
              CONTROL.ENABLE, reloads COUNT from LOAD.",
        layout: LAYOUT,
        registers: &[LOAD, KICK, CONTROL, COUNT, STATUS],
        entry_names: &[],
    };
}

/// The SoC peripheral map, as docs/registers.md shows it after the data plane's.
pub const MAP: RegisterMap = RegisterMap {
    title: "weft soft core peripheral registers",
    doc: "The soft core's own peripherals, on its data port: 32-bit registers at 4-byte \
          aligned byte addresses, accessed as whole words; any other width, or an address \
          in the window where no register is, raises an access fault. Reserved bits read 0 \
          and are ignored on writes. Every address here comes from the Rust definitions in \
          `weft_regs::soc`, which the RTL, the instruction-set simulator and the firmware \
          use too.",
    base: SOC_BASE,
    size: SOC_SIZE,
    blocks: BLOCKS,
    companions: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_disjoint_and_inside_the_window_in_address_order() {
        assert_eq!(BLOCKS[0].layout.base, SOC_BASE);
        for pair in BLOCKS.windows(2) {
            assert!(pair[0].end() <= pair[1].layout.base);
        }
        for block in BLOCKS {
            assert_eq!(
                block.end() - block.layout.base,
                BLOCK_SIZE,
                "{}",
                block.name
            );
            assert_eq!(block.layout.base % BLOCK_SIZE, 0, "{}", block.name);
            for register in block.registers {
                assert!(register.offset + 4 <= BLOCK_SIZE);
                assert_eq!(register.offset % 4, 0);
            }
        }
        let last = BLOCKS.last().expect("the map has blocks");
        assert!(last.end() <= SOC_BASE + SOC_SIZE);
    }

    #[test]
    fn addresses_are_the_documented_ones() {
        // Worked out by hand from the layouts above.
        assert_eq!(uart::TX_DATA.address(0, 0), 0x2000_0000);
        assert_eq!(uart::STATUS.address(0, 0), 0x2000_0004);
        assert_eq!(uart::RX_DATA.address(0, 0), 0x2000_0008);
        assert_eq!(timer::MTIME_LOW.address(0, 0), 0x2000_1000);
        assert_eq!(timer::MTIME_HIGH.address(0, 0), 0x2000_1004);
        assert_eq!(timer::MTIMECMP_LOW.address(0, 0), 0x2000_1008);
        assert_eq!(timer::MTIMECMP_HIGH.address(0, 0), 0x2000_100C);
        assert_eq!(gpio::OUTPUT.address(0, 0), 0x2000_2000);
        assert_eq!(gpio::INPUT.address(0, 0), 0x2000_2004);
        assert_eq!(watchdog::LOAD.address(0, 0), 0x2000_3000);
        assert_eq!(watchdog::KICK.address(0, 0), 0x2000_3004);
        assert_eq!(watchdog::CONTROL.address(0, 0), 0x2000_3008);
        assert_eq!(watchdog::COUNT.address(0, 0), 0x2000_300C);
        assert_eq!(watchdog::STATUS.address(0, 0), 0x2000_3010);
        assert_eq!(&watchdog::KICK_KEY.to_be_bytes(), b"KICK");
    }

    #[test]
    fn status_bits_are_distinct() {
        assert_eq!(uart::TX_READY.mask(), 0b01);
        assert_eq!(uart::RX_VALID.mask(), 0b10);
        assert_eq!(uart::STATUS.mask(), 0b11);
        assert_eq!(uart::TX_BYTE.encode(0x1_41), 0x41);
    }
}
