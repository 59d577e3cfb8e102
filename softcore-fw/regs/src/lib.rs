//! The one register map of a weft switch.
//!
//! Every address that the RTL decodes, the firmware pokes and the docs list
//! is defined here once: the data plane's control and status registers
//! (tables, counters, port control) and the soft core's SoC peripherals
//! (timer, UART, config mailbox, Ethernet MAC, SPI flash, watchdog, GPIO).
//! The RTL's decoders, the firmware's constants and the register
//! documentation are generated from these definitions.
//!
//! [`driver::CsrDataPlane`] writes the data plane's tables through the
//! CSRs, for the firmware and for host tests alike.
//!
//! The capacities of the data plane's tables live here too: the RTL sizes
//! its memories by them, the transaction-level model and the fabric manager
//! check their indices against them.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(any(test, feature = "build-script"))]
extern crate std;

#[cfg(feature = "build-script")]
pub mod build_script;
pub mod csr;
pub mod driver;
pub mod markdown;
pub mod register;
pub mod soc;
pub mod tables;

pub use markdown::{write_markdown, RegisterMap};
pub use register::{Access, EntryName, Field, Layout, Register, RegisterBlock};

/// Start of the soft core's instruction memory, where the reset vector is.
pub const INSTRUCTION_RAM_BASE: u32 = 0x0000_0000;
/// Size of the instruction memory in the reference configuration (256 KiB):
/// the firmware with the network stack, the management server and the
/// fabric manager takes about 136 KiB of code.
pub const INSTRUCTION_RAM_SIZE: u32 = 256 * 1024;
/// Start of the soft core's data memory.
pub const DATA_RAM_BASE: u32 = 0x1000_0000;
/// Size of the data memory in the reference configuration (256 KiB): the
/// firmware's rodata and statics take about 84 KiB (the fabric manager's
/// state 39 KiB of it, at 16 switches and 128 functions) and its stack
/// went 46 KiB deep on the ISS as the manager of the 4-switch reference
/// fabric, which overran the 44 KiB that 128 KiB left (measured).
pub const DATA_RAM_SIZE: u32 = 256 * 1024;
/// Start of the boot ROM, where the core starts after every reset (the
/// reset vector): the boot loader, which copies the firmware image the
/// boot record picks from the configuration flash into the two RAMs and
/// jumps to it (`weft_fabric::boot_image`). It is a block RAM the
/// bitstream initialises, on the fetch port and readable by data loads
/// (the loader's read-only data lives there), and no store reaches it, so
/// no firmware can break the boot path.
pub const BOOT_ROM_BASE: u32 = 0x0800_0000;
/// Size of the boot ROM (32 KiB): the loader (SPI flash driver, boot
/// record, SHA-256, image copy, console lines) takes 15.8 KiB of it,
/// 12.6 KiB of code and 3.2 KiB of read-only data (`cargo xtask firmware`).
pub const BOOT_ROM_SIZE: u32 = 32 * 1024;
/// Bytes at the top of data memory that the boot loader uses for its
/// stack and statics while it runs: an image may not load anything there
/// (`weft_fabric::boot_image` refuses it), which costs nothing, since a
/// program's stack starts at the top of data memory and is never loaded.
pub const BOOT_LOADER_RAM_SIZE: u32 = 4 * 1024;
/// Start of the boot loader's part of data memory.
pub const BOOT_LOADER_RAM_BASE: u32 = DATA_RAM_BASE + DATA_RAM_SIZE - BOOT_LOADER_RAM_SIZE;
const _: () = assert!(
    BOOT_ROM_BASE.is_multiple_of(BOOT_ROM_SIZE)
        && BOOT_ROM_BASE >= INSTRUCTION_RAM_BASE + INSTRUCTION_RAM_SIZE
        && BOOT_ROM_BASE + BOOT_ROM_SIZE <= DATA_RAM_BASE
);
/// The data plane's clock in the reference configuration, in hertz:
/// 512-bit beats at 250 MHz carry Gen3 x16 or Gen4 x8 at line rate
/// (DESIGN.md, "Data plane").
pub const DATA_PLANE_CLOCK_HZ: u32 = 250_000_000;
/// Data plane clock cycles per soft core clock cycle: the core runs on an
/// integer division of the data plane's clock, so one clock source and a
/// synchronous divider serve both.
///
/// The core's longest register-to-register path (`cargo xtask hardware`,
/// `weft_core`: 26 cells after `synth_xilinx -family xcup`) runs from the
/// data RAM's output through load alignment, operand forwarding and the
/// jump target's adder into the register that redirects fetch in the next
/// cycle: 4 wide multiplexers (a LUT and its MUXF7-F9 stages each), 3 more
/// LUTs and 2 carry chains. At roughly 0.8 ns per wide multiplexer with
/// its route, 0.5 ns per LUT, 0.5 ns per carry chain and 1.3 ns for the
/// block RAM's clock-to-out on UltraScale+, that is about 7 ns, inside
/// the 8 ns of a division by 2 (before the redirect was registered the
/// path went on to the instruction RAM's address, about 9 ns). An
/// estimate, not a timing run: the vendor's timing analysis on a board
/// decides, and a division by 4 is the fallback that needs no change to
/// the firmware's sources.
pub const SOFT_CORE_CLOCK_DIVISOR: u32 = 2;
/// The soft core's clock in the reference configuration, in hertz
/// (125 MHz): the rate of the machine timer's `mtime` ([`soc::timer`]),
/// which counts one tick per core clock cycle, and so the firmware's unit
/// of time.
pub const SOFT_CORE_CLOCK_HZ: u32 = DATA_PLANE_CLOCK_HZ / SOFT_CORE_CLOCK_DIVISOR;

/// The console's serial line: 115 200 baud, 8N1, on the SoC's UART.
pub const CONSOLE_BAUD: u32 = 115_200;
/// Soft core clock cycles a bit of the console's serial line, which the
/// SoC's UART and a board's console bridge both count.
pub const CONSOLE_CYCLES_PER_BIT: u32 = SOFT_CORE_CLOCK_HZ / CONSOLE_BAUD;

/// The soft core's memories as riscv-rt's `memory.x` linker script wants
/// them, for the build scripts of the programs that run on it: code in the
/// instruction memory, everything loads read (rodata included: the core
/// is Harvard, its instruction memory is not readable by loads) and the
/// stack in the data memory.
pub struct LinkerMemoryMap;

impl core::fmt::Display for LinkerMemoryMap {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "/* Generated from weft-regs by the build script: do not edit. */\n\
             MEMORY\n{{\n  \
               IRAM : ORIGIN = {INSTRUCTION_RAM_BASE:#010x}, LENGTH = {INSTRUCTION_RAM_SIZE:#x}\n  \
               DRAM : ORIGIN = {DATA_RAM_BASE:#010x}, LENGTH = {DATA_RAM_SIZE:#x}\n\
             }}\n\
             REGION_ALIAS(\"REGION_TEXT\", IRAM);\n\
             REGION_ALIAS(\"REGION_RODATA\", DRAM);\n\
             REGION_ALIAS(\"REGION_DATA\", DRAM);\n\
             REGION_ALIAS(\"REGION_BSS\", DRAM);\n\
             REGION_ALIAS(\"REGION_HEAP\", DRAM);\n\
             REGION_ALIAS(\"REGION_STACK\", DRAM);\n\
             /* Unwinding tables: the soft core aborts on panic and never unwinds,\n   \
                so they would only take data memory. */\n\
             SECTIONS\n{{\n  /DISCARD/ : {{ *(.eh_frame) *(.eh_frame_hdr) }}\n}}\n"
        )
    }
}

/// The boot loader's memories as riscv-rt's `memory.x` wants them: code
/// and read-only data in the boot ROM, statics (initialised from the ROM
/// by riscv-rt's start-up code) and the stack in the top
/// [`BOOT_LOADER_RAM_SIZE`] bytes of data memory.
pub struct BootLoaderMemoryMap;

impl core::fmt::Display for BootLoaderMemoryMap {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "/* Generated from weft-regs by the build script: do not edit. */\n\
             MEMORY\n{{\n  \
               BOOTROM : ORIGIN = {BOOT_ROM_BASE:#010x}, LENGTH = {BOOT_ROM_SIZE:#x}\n  \
               BOOTRAM : ORIGIN = {BOOT_LOADER_RAM_BASE:#010x}, LENGTH = {BOOT_LOADER_RAM_SIZE:#x}\n\
             }}\n\
             REGION_ALIAS(\"REGION_TEXT\", BOOTROM);\n\
             REGION_ALIAS(\"REGION_RODATA\", BOOTROM);\n\
             REGION_ALIAS(\"REGION_DATA\", BOOTRAM);\n\
             REGION_ALIAS(\"REGION_BSS\", BOOTRAM);\n\
             REGION_ALIAS(\"REGION_HEAP\", BOOTRAM);\n\
             REGION_ALIAS(\"REGION_STACK\", BOOTRAM);\n\
             SECTIONS\n{{\n  /DISCARD/ : {{ *(.eh_frame) *(.eh_frame_hdr) }}\n}}\n"
        )
    }
}

/// Capacities of the data plane's tables, shared by the RTL, the model and the fabric manager.
pub mod capacity {
    /// Ports of the reference switch top.
    pub const PORTS: usize = 8;
    /// Address windows per host or endpoint port (host BAR windows, peer windows).
    pub const WINDOWS_PER_PORT: usize = 16;
    /// Function owner entries per endpoint port: functions below one port
    /// bound one by one (SR-IOV VFs of one drive to several hosts). The
    /// reference drive's four VFs fit twice over.
    pub const FUNCTION_OWNERS_PER_PORT: usize = 8;
    /// Functions bound to one host whose IDs the host egress rewrites.
    pub const BOUND_FUNCTIONS_PER_HOST: usize = 32;
    /// Fabric address ranges in the switch's address routing table.
    pub const ADDRESS_ROUTES: usize = 64;
    /// Entries of the bus routing table: one per bus number, indexed directly.
    pub const BUS_ROUTES: usize = 256;
    /// Outstanding non-posted requests tracked per host port: the whole
    /// 10-bit tag space of the port's proxy requester ID (PCIe Base 6.0 §2.2.6.2).
    pub const OUTSTANDING_PER_HOST: usize = 1024;
    /// TLPs each ingress port of the switching core buffers, shared by its
    /// virtual output queues (the link layer's receive credits come from it).
    /// 32 slots of 16 beats make a 512-entry buffer, which takes no more
    /// block RAM than 256 entries of the same 512-bit width (a RAMB36 is
    /// 512 entries of 72 bits), and give the matcher fuller queues to
    /// choose from: 256-byte writes to uniformly random egresses moved
    /// 0.946 beats per cycle per port under plain iSLIP, against 0.921 with 16
    /// (`switching-bench`; the simulation ran 6% slower). 64 slots moved
    /// 0.955, but the queues' slot links doubled and the simulation ran
    /// 31% slower.
    pub const INGRESS_TLP_SLOTS: usize = 32;
    /// Payload beats one buffered TLP may take: the longest TLP the switching
    /// core forwards (1 KiB of payload on the reference 512-bit bus), which
    /// bounds the Max_Payload_Size the firmware may program.
    pub const TLP_SLOT_BEATS: usize = 16;
    /// TLPs the management CPU's mailbox (`csr::mailbox`) queues; a TLP for
    /// the CPU arriving while it is full is lost (STATUS.LOST).
    pub const MAILBOX_TLPS: usize = 16;
}

/// Where each host's memory sits in the fabric address space.
///
/// Host `h`'s address `a` is fabric address
/// `HOST_APERTURE_BASE | h << HOST_APERTURE_SHIFT | a`; endpoint BARs are
/// placed below `HOST_APERTURE_BASE`, so the two never overlap.
pub mod aperture {
    /// Bit position of the host index in a fabric address.
    pub const HOST_APERTURE_SHIFT: u32 = 52;
    /// The fabric address of host 0's address 0.
    pub const HOST_APERTURE_BASE: u64 = 1 << 63;
    /// Host addresses at or above this do not fit an aperture.
    pub const HOST_ADDRESS_LIMIT: u64 = 1 << HOST_APERTURE_SHIFT;
    /// Hosts that fit between the aperture base and the top of the address space.
    pub const MAX_HOSTS: usize = 1 << (63 - HOST_APERTURE_SHIFT);
}
