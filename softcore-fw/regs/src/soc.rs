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
//! - [`watchdog`]: resets the SoC when the firmware stops kicking it;
//! - [`mac`]: the management Ethernet MAC: its registers, one descriptor
//!   per receive and transmit slot, and the slots themselves, a frame
//!   buffer in block RAM higher up the window; its interrupt is the core's
//!   machine external interrupt (`mip.MEIP`), shared with the data plane's
//!   (`crate::csr`: the line is pending while either is);
//! - [`spi_flash`]: the SPI NOR flash controller, which carries one
//!   flash command per transaction to the configuration flash, with a
//!   page-sized data buffer;
//! - [`mdio`]: the MDIO master, which runs one IEEE 802.3 clause 22
//!   management frame at a time to the Ethernet PHY's registers.
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
pub const BLOCKS: &[RegisterBlock] = &[
    uart::BLOCK,
    timer::BLOCK,
    gpio::BLOCK,
    watchdog::BLOCK,
    mac::BLOCK,
    mac::RX_DESCRIPTORS,
    mac::TX_DESCRIPTORS,
    spi_flash::BLOCK,
    spi_flash::BUFFER,
    mdio::BLOCK,
    mac::RX_BUFFER,
    mac::TX_BUFFER,
];

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

    /// Bytes the transmit FIFO holds: [`TX_READY`] stays set until this
    /// many wait behind the byte on the line.
    pub const TX_FIFO_BYTES: u32 = 16;

    /// Bits on the line for each byte: a start bit, eight data bits and a
    /// stop bit (8N1).
    pub const BITS_PER_BYTE: u32 = 10;

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
    /// [`INPUT`]'s LINK_UP field, as `weft_chip` drives the inputs.
    pub const INPUT_LINK_UP: Field = Field::new(
        "LINK_UP",
        0,
        31,
        "In `weft_chip`: bit p is high while switch port p's link is up, its flow control \
         initialized, as the board's hard IP adapter reports it (PCIe Base 6.0 §2.6.1.1, \
         DL_Up); meaningful only while LINKS_REPORTED is set.",
    );
    /// [`INPUT`]'s LINKS_REPORTED field, as `weft_chip` drives the inputs.
    pub const INPUT_LINKS_REPORTED: Field = Field::new(
        "LINKS_REPORTED",
        31,
        1,
        "In `weft_chip`: high, LINK_UP reports each port's link. A SoC whose inputs nothing \
         drives (the simulator's boards) reads 0 here, and its LINK_UP means nothing.",
    );
    /// The ports whose links are up, bit p for port p, from a value of
    /// [`INPUT`] as `weft_chip` drives it; `None` while LINKS_REPORTED is
    /// clear (nothing reports links).
    pub const fn links_up(inputs: u32) -> Option<u32> {
        if INPUT_LINKS_REPORTED.decode(inputs) == 1 {
            Some(INPUT_LINK_UP.decode(inputs))
        } else {
            None
        }
    }
    /// The levels on the inputs.
    pub const INPUT: Register = LAYOUT.register(
        "INPUT",
        0x04,
        Access::ReadOnly,
        "Levels on the GPIO inputs, bit i for input i, passed through a two-flop \
         synchroniser: a change shows two clock cycles later. `weft_chip` drives them \
         with its ports' link state.",
        &[INPUT_LINK_UP, INPUT_LINKS_REPORTED],
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

/// The management Ethernet MAC: frames in and out through slots of block
/// RAM, each slot handed between software and the MAC by its descriptor.
///
/// The MAC has [`RX_SLOTS`](mac::RX_SLOTS) receive and [`TX_SLOTS`](mac::TX_SLOTS) transmit slots of
/// [`SLOT_SIZE`](mac::SLOT_SIZE) bytes each, in the frame buffer ([`RX_BUFFER`](mac::RX_BUFFER),
/// [`TX_BUFFER`](mac::TX_BUFFER)), which software reads and writes a word at a time like
/// the rest of the window; a frame's first byte is bits 7:0 of its slot's
/// first word (little-endian, as the core loads it). Frames in the slots
/// are Ethernet frames from the destination address to the end of the
/// payload: no preamble, no frame check sequence (the MAC checks and
/// strips it on receive, computes and appends it on transmit, and pads a
/// short frame to the 60-byte minimum — IEEE 802.3 §3.1.1, §4.2.8).
///
/// Each slot has a descriptor, [`RX_DESCRIPTOR`](mac::RX_DESCRIPTOR) or [`TX_DESCRIPTOR`](mac::TX_DESCRIPTOR):
/// its `OWN` bit says who may touch the slot (1: the MAC) and its
/// `LENGTH` the frame's bytes. Both rings are walked round robin, slot 0
/// after the last, by the MAC and by software alike; [`RING`](mac::RING) shows where
/// the MAC is.
///
/// - Receive: software hands an empty slot to the MAC by writing its
///   descriptor with `OWN` set. A frame the address filter accepts lands
///   in the slot at `RING.RX_NEXT` if the MAC owns it: the MAC writes the
///   frame, then the descriptor with the length and `OWN` clear, counts it
///   in [`RX_FRAMES`](mac::RX_FRAMES), raises `INT_STATUS.RX` and moves `RX_NEXT` on. If
///   the MAC does not own that slot, the ring is full: the frame is dropped
///   and counted in [`RX_OVERRUNS`](mac::RX_OVERRUNS), `INT_STATUS.OVERRUN` is raised and
///   `RX_NEXT` stays. A frame longer than a slot is dropped and counted in
///   [`RX_OVERSIZE`](mac::RX_OVERSIZE); one with a wrong frame check sequence or a receive
///   error from the PHY is dropped before the filter and counted in
///   [`RX_ERRORS`](mac::RX_ERRORS). All descriptors reset to 0, so nothing is received
///   until software hands slots over.
/// - Transmit: software writes a frame into the slot at `RING.TX_NEXT`,
///   then its descriptor with the length and `OWN` set. The MAC sends the
///   slot at `TX_NEXT` once it owns it, clears `OWN`, counts the frame in
///   [`TX_FRAMES`](mac::TX_FRAMES), raises `INT_STATUS.TX` and moves `TX_NEXT` on.
///
/// The MAC's interrupt, the core's machine external interrupt
/// (`mip.MEIP`, Privileged 20211203 §3.1.9), is pending while any bit is
/// set in both [`INT_STATUS`](mac::INT_STATUS) and [`INT_ENABLE`](mac::INT_ENABLE).
/// The data plane's interrupt ([`crate::csr`]) shares `mip.MEIP`: it is the
/// level OR of the two.
pub mod mac {
    use super::*;

    /// Receive slots in the frame buffer.
    pub const RX_SLOTS: u32 = 8;
    /// Transmit slots in the frame buffer.
    pub const TX_SLOTS: u32 = 4;
    /// Bytes of one slot: room for the longest Ethernet frame (1514 bytes
    /// without the frame check sequence, 1518 with a VLAN tag).
    pub const SLOT_SIZE: u32 = 2048;
    /// Bytes of the frame buffer, receive slots then transmit slots.
    pub const BUFFER_SIZE: u32 = (RX_SLOTS + TX_SLOTS) * SLOT_SIZE;
    /// First address of the frame buffer in the SoC window.
    pub const BUFFER_BASE: u32 = SOC_BASE + 0x1_0000;
    const _: () = assert!(BUFFER_BASE + BUFFER_SIZE <= SOC_BASE + SOC_SIZE);

    /// The MAC's registers, one block above the watchdog's.
    pub const LAYOUT: Layout = single(SOC_BASE + 0x4000);

    /// Frames are received into the slots the MAC owns.
    pub const RX_ENABLE: Field = Field::new(
        "RX_ENABLE",
        0,
        1,
        "Receive: while clear, every frame from the line is ignored (not counted).",
    );
    /// Owned transmit slots are sent.
    pub const TX_ENABLE: Field = Field::new(
        "TX_ENABLE",
        1,
        1,
        "Transmit: while clear, slots handed to the MAC wait and are not sent.",
    );
    /// Every frame is accepted, whatever its destination address.
    pub const PROMISCUOUS: Field = Field::new(
        "PROMISCUOUS",
        2,
        1,
        "Accept every frame. While clear, the filter accepts frames to the station \
         address and to the broadcast address only.",
    );
    /// What the MAC does.
    pub const CONTROL: Register = LAYOUT.register(
        "CONTROL",
        0x00,
        Access::ReadWrite,
        "Enables receive and transmit and picks the address filter; resets to 0.",
        &[RX_ENABLE, TX_ENABLE, PROMISCUOUS],
    );

    /// A frame landed in a receive slot.
    pub const INT_RX: Field = Field::new("RX", 0, 1, "A received frame landed in a slot.");
    /// A frame was sent from a transmit slot.
    pub const INT_TX: Field = Field::new("TX", 1, 1, "A frame was sent and its slot returned.");
    /// A received frame was dropped because the ring was full.
    pub const INT_OVERRUN: Field = Field::new(
        "OVERRUN",
        2,
        1,
        "A received frame was dropped: the MAC did not own the next receive slot.",
    );
    /// Which interrupt causes reach `mip.MEIP`.
    pub const INT_ENABLE: Register = LAYOUT.register(
        "INT_ENABLE",
        0x04,
        Access::ReadWrite,
        "Which INT_STATUS bits raise the machine external interrupt; resets to 0.",
        &[INT_RX, INT_TX, INT_OVERRUN],
    );
    /// The interrupt causes that happened.
    pub const INT_STATUS: Register = LAYOUT.register(
        "INT_STATUS",
        0x08,
        Access::WriteOneToClear,
        "Events since software last cleared them, whether enabled or not; write 1 to \
         clear a bit. The interrupt is pending while INT_STATUS & INT_ENABLE is not 0.",
        &[INT_RX, INT_TX, INT_OVERRUN],
    );

    /// Station address bytes 0 to 3.
    pub const ADDRESS_LOW: Register = LAYOUT.register(
        "ADDRESS_LOW",
        0x0C,
        Access::ReadWrite,
        "Station address, its first four bytes in transmission order: byte 0 (the \
         first on the wire, with the group bit) in bits 7:0. Resets to 0.",
        &[Field::new(
            "BYTES_0_3",
            0,
            32,
            "Station address bytes 0..=3.",
        )],
    );
    /// Station address bytes 4 and 5.
    pub const ADDRESS_HIGH: Register = LAYOUT.register(
        "ADDRESS_HIGH",
        0x10,
        Access::ReadWrite,
        "Station address, its last two bytes: byte 4 in bits 7:0, byte 5 in bits 15:8.",
        &[Field::new(
            "BYTES_4_5",
            0,
            16,
            "Station address bytes 4 and 5.",
        )],
    );

    /// The receive slot the MAC fills next.
    pub const RX_NEXT: Field = Field::new(
        "RX_NEXT",
        0,
        8,
        "The receive slot the next accepted frame lands in (0 at reset).",
    );
    /// The transmit slot the MAC sends next.
    pub const TX_NEXT: Field = Field::new(
        "TX_NEXT",
        8,
        8,
        "The transmit slot the MAC sends once it owns it (0 at reset).",
    );
    /// Where the MAC is in both rings.
    pub const RING: Register = LAYOUT.register(
        "RING",
        0x14,
        Access::ReadOnly,
        "The MAC's position in the receive and transmit rings.",
        &[RX_NEXT, TX_NEXT],
    );

    /// A counter's value.
    pub const COUNT: Field = Field::new("COUNT", 0, 32, "The count, wrapping at 2^32.");
    const fn counter(name: &'static str, offset: u32, doc: &'static str) -> Register {
        LAYOUT.register(name, offset, Access::ReadOnly, doc, &[COUNT])
    }
    /// Frames received into a slot.
    pub const RX_FRAMES: Register = counter(
        "RX_FRAMES",
        0x18,
        "Frames the filter accepted and the MAC wrote into a slot.",
    );
    /// Frames dropped for want of a slot.
    pub const RX_OVERRUNS: Register = counter(
        "RX_OVERRUNS",
        0x1C,
        "Accepted frames dropped because the MAC did not own the next receive slot.",
    );
    /// Frames dropped for being longer than a slot.
    pub const RX_OVERSIZE: Register = counter(
        "RX_OVERSIZE",
        0x20,
        "Accepted frames dropped because they were longer than a slot.",
    );
    /// Frames sent.
    pub const TX_FRAMES: Register = counter("TX_FRAMES", 0x24, "Frames sent from a slot.");
    /// Frames dropped for a line error.
    pub const RX_ERRORS: Register = counter(
        "RX_ERRORS",
        0x28,
        "Frames dropped, while RX_ENABLE was set, because their frame check sequence was \
         wrong or the PHY signalled a receive error (rx_er) during them (IEEE 802.3 \
         §3.2.9; RX_ER of clause 22), whatever their address. Such a frame reaches neither the \
         filter nor a slot.",
    );

    /// The registers' block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "mac",
        doc: "The management Ethernet MAC's control, interrupt, address, ring position and \
              counters. Frames move through slots of the frame buffer (mac_rx_buffer, \
              mac_tx_buffer), each handed between software and the MAC by its descriptor \
              (mac_rx_descriptors, mac_tx_descriptors); both rings are walked round robin. \
              The MAC's interrupt is the machine external interrupt (`mip.MEIP`), ORed \
              with the data plane's (`csr`).",
        layout: LAYOUT,
        registers: &[
            CONTROL,
            INT_ENABLE,
            INT_STATUS,
            ADDRESS_LOW,
            ADDRESS_HIGH,
            RING,
            RX_FRAMES,
            RX_OVERRUNS,
            RX_OVERSIZE,
            TX_FRAMES,
            RX_ERRORS,
        ],
        entry_names: &[],
    };

    /// One word per slot, `slots` of them from `base`.
    const fn descriptors(base: u32, slots: u32) -> Layout {
        Layout {
            base,
            instances: 1,
            stride: BLOCK_SIZE,
            entries: slots,
            entry_stride: 4,
        }
    }
    /// The receive descriptors, one block above the registers.
    pub const RX_DESCRIPTOR_LAYOUT: Layout = descriptors(SOC_BASE + 0x4100, RX_SLOTS);
    /// The transmit descriptors, one block above the receive descriptors.
    pub const TX_DESCRIPTOR_LAYOUT: Layout = descriptors(SOC_BASE + 0x4200, TX_SLOTS);

    /// The frame's bytes in a slot.
    pub const LENGTH: Field = Field::new(
        "LENGTH",
        0,
        12,
        "The frame's bytes in the slot, destination address to end of payload.",
    );
    /// Who may touch the slot: 1 the MAC, 0 software.
    pub const OWN: Field = Field::new("OWN", 31, 1, "1: the MAC owns the slot; 0: software does.");
    /// A receive slot's descriptor.
    pub const RX_DESCRIPTOR: Register = RX_DESCRIPTOR_LAYOUT.register(
        "DESCRIPTOR",
        0x00,
        Access::ReadWrite,
        "Software writes OWN = 1 to hand the empty slot to the MAC; the MAC writes the \
         received frame's LENGTH with OWN = 0 when the frame has landed.",
        &[LENGTH, OWN],
    );
    /// A transmit slot's descriptor.
    pub const TX_DESCRIPTOR: Register = TX_DESCRIPTOR_LAYOUT.register(
        "DESCRIPTOR",
        0x00,
        Access::ReadWrite,
        "Software writes the frame's LENGTH with OWN = 1 to have the slot sent; the MAC \
         clears OWN once it is. A LENGTH of 0 or above the slot's size is sent as nothing.",
        &[LENGTH, OWN],
    );
    /// The receive descriptors' block.
    pub const RX_DESCRIPTORS: RegisterBlock = RegisterBlock {
        name: "mac_rx_descriptors",
        doc: "One descriptor per receive slot, in slot order; all reset to 0, so nothing is \
              received until software hands slots to the MAC by writing OWN = 1. An accepted \
              frame lands in slot RING.RX_NEXT if the MAC owns it: the MAC writes the frame, \
              then the descriptor (LENGTH, OWN = 0), counts RX_FRAMES, sets INT_STATUS.RX \
              and moves RX_NEXT on (round robin). If the MAC does not own that slot the ring \
              is full: the frame is dropped, RX_OVERRUNS counts it, INT_STATUS.OVERRUN is \
              set and RX_NEXT stays. A frame longer than a slot is dropped and counted in \
              RX_OVERSIZE.",
        layout: RX_DESCRIPTOR_LAYOUT,
        registers: &[RX_DESCRIPTOR],
        entry_names: &[],
    };
    /// The transmit descriptors' block.
    pub const TX_DESCRIPTORS: RegisterBlock = RegisterBlock {
        name: "mac_tx_descriptors",
        doc: "One descriptor per transmit slot, in slot order. Software fills slot \
              RING.TX_NEXT, then writes its descriptor (LENGTH, OWN = 1); while \
              CONTROL.TX_ENABLE is set the MAC sends the slot at TX_NEXT once it owns it, \
              clears OWN, counts TX_FRAMES, sets INT_STATUS.TX and moves TX_NEXT on (round \
              robin).",
        layout: TX_DESCRIPTOR_LAYOUT,
        registers: &[TX_DESCRIPTOR],
        entry_names: &[],
    };

    /// The slots from `base`: a buffer of `slots` entries, no registers.
    const fn slots(base: u32, slots: u32) -> Layout {
        Layout {
            base,
            instances: 1,
            stride: slots * SLOT_SIZE,
            entries: slots,
            entry_stride: SLOT_SIZE,
        }
    }
    /// The receive slots, at the bottom of the frame buffer.
    pub const RX_BUFFER_LAYOUT: Layout = slots(BUFFER_BASE, RX_SLOTS);
    /// The transmit slots, after the receive slots.
    pub const TX_BUFFER_LAYOUT: Layout = slots(BUFFER_BASE + RX_SLOTS * SLOT_SIZE, TX_SLOTS);
    /// The receive slots.
    pub const RX_BUFFER: RegisterBlock = RegisterBlock {
        name: "mac_rx_buffer",
        doc: "The receive slots: block RAM, read and written as whole words; a frame's \
              byte n is bits 8(n mod 4)+7:8(n mod 4) of the slot's word n/4. A frame runs \
              from its destination address to the end of its payload: the MAC checks and \
              strips the frame check sequence on receive, and appends it (padding a short \
              frame to 60 bytes) on transmit (IEEE 802.3 §3.1.1, §4.2.8).",
        layout: RX_BUFFER_LAYOUT,
        registers: &[],
        entry_names: &[],
    };
    /// The transmit slots.
    pub const TX_BUFFER: RegisterBlock = RegisterBlock {
        name: "mac_tx_buffer",
        doc: "The transmit slots, laid out like the receive slots.",
        layout: TX_BUFFER_LAYOUT,
        registers: &[],
        entry_names: &[],
    };

    /// First address of receive slot `slot`.
    ///
    /// # Panics
    ///
    /// If `slot` is not below [`RX_SLOTS`].
    pub const fn rx_slot(slot: u32) -> u32 {
        RX_BUFFER_LAYOUT.entry_address(0, slot)
    }

    /// First address of transmit slot `slot`.
    ///
    /// # Panics
    ///
    /// If `slot` is not below [`TX_SLOTS`].
    pub const fn tx_slot(slot: u32) -> u32 {
        TX_BUFFER_LAYOUT.entry_address(0, slot)
    }
}

/// The SPI NOR flash controller: one flash command per transaction, its
/// data bytes through a page-sized buffer.
///
/// The configuration flash is a serial NOR part on the four SPI pins
/// (`sclk`, `cs_n`, `mosi`, `miso`; SPI mode 0: data is driven on the
/// falling edge of `sclk` and sampled on the rising one). The controller
/// knows no command by name: software writes [`ADDRESS`](spi_flash::ADDRESS) and
/// [`LENGTH`](spi_flash::LENGTH), fills [`BUFFER`](spi_flash::BUFFER) for a command that sends data,
/// then writes [`COMMAND`](spi_flash::COMMAND). The controller lowers `cs_n`, sends the
/// opcode, the 24-bit address (most significant byte first) if asked for,
/// then `LENGTH` data bytes out of the buffer or into it, and raises
/// `cs_n`; [`STATUS`](spi_flash::STATUS)`.BUSY` is set meanwhile.
///
/// The commands firmware uses are the JEDEC-style basic set every serial
/// NOR part implements with 3-byte addresses, listed in [`opcode`](spi_flash::opcode); the
/// part's own busy flag (status register bit 0, WIP) is a separate thing
/// from the controller's `BUSY`: a Page Program or Sector Erase
/// transaction ends when its bytes are sent, and the part then programs or
/// erases for up to milliseconds, during which software polls Read Status
/// until WIP clears (JESD216, the basic flash parameter table's status
/// register polling: bit 0 of the 0x05 status byte is "device busy").
pub mod spi_flash {
    use super::*;

    /// One instance, one block above the MAC's registers and descriptors.
    pub const LAYOUT: Layout = single(SOC_BASE + 0x5000);

    /// Bytes in the data buffer: one program page of the flash.
    pub const BUFFER_SIZE: u32 = 256;
    /// Bytes one Page Program writes at most: a page; bytes beyond the page's
    /// end wrap to its start on a real part.
    pub const PAGE_SIZE: u32 = 256;
    /// Bytes one Sector Erase (0x20) sets to 0xFF: 4 KiB, the smallest erase
    /// JESD216's basic flash parameter table describes (its "4 KiB erase").
    pub const SECTOR_SIZE: u32 = 4096;
    const _: () = assert!(BUFFER_SIZE == PAGE_SIZE);

    /// Bytes of each of the two firmware image slots the configuration
    /// flash keeps (A/B partitions; `weft_fabric::firmware_update`): 1 MiB,
    /// room for the soft core's whole instruction and data memories and
    /// for the firmware's ELF (296 KiB measured) with margin.
    pub const IMAGE_SLOT_SIZE: u32 = 1024 * 1024;
    const _: () = assert!(IMAGE_SLOT_SIZE.is_multiple_of(SECTOR_SIZE));

    /// The fastest serial clock typical parts accept for Read Data (0x03):
    /// fR = 50 MHz on the W25Q32JV.
    pub const READ_DATA_MAX_HZ: u32 = 50_000_000;

    /// The smallest [`DIVISOR`] whose serial clock, f_core / (2 (DIVISOR + 1)),
    /// is at most `max_hz` with the core at `core_hz`.
    pub const fn divisor_for(core_hz: u32, max_hz: u32) -> u32 {
        core_hz.div_ceil(2 * max_hz).saturating_sub(1)
    }

    /// The serial clock's half period, in soft core clock cycles, less one.
    pub const DIVISOR: Field = Field::new(
        "DIVISOR",
        0,
        8,
        "The serial clock's half period in core clock cycles, less one: f_SCLK = f_core / \
         (2 (DIVISOR + 1)). Resets to 0 (f_core / 2); the firmware sets it from \
         divisor_for(SOFT_CORE_CLOCK_HZ, READ_DATA_MAX_HZ): 1, 31.25 MHz, at the reference \
         125 MHz core clock.",
    );
    /// How the controller drives the pins.
    pub const CONTROL: Register = LAYOUT.register(
        "CONTROL",
        0x00,
        Access::ReadWrite,
        "The serial clock's rate; written while STATUS.BUSY is clear.",
        &[DIVISOR],
    );

    /// The flash address a command sends.
    pub const ADDRESS_BITS: Field = Field::new(
        "ADDRESS",
        0,
        24,
        "The flash byte address the address phase sends, most significant byte first.",
    );
    /// The address phase's value.
    pub const ADDRESS: Register = LAYOUT.register(
        "ADDRESS",
        0x04,
        Access::ReadWrite,
        "The 24-bit flash address sent after the opcode when COMMAND.ADDRESS is set.",
        &[ADDRESS_BITS],
    );

    /// Data bytes of the next command.
    pub const BYTES: Field = Field::new(
        "BYTES",
        0,
        9,
        "Data bytes of the transaction, 0 to 256; a larger value transfers 256.",
    );
    /// The data phase's length.
    pub const LENGTH: Register = LAYOUT.register(
        "LENGTH",
        0x08,
        Access::ReadWrite,
        "How many data bytes follow the opcode and address.",
        &[BYTES],
    );

    /// The command's opcode.
    pub const OPCODE: Field = Field::new("OPCODE", 0, 8, "The command byte sent first.");
    /// The command has an address phase.
    pub const WITH_ADDRESS: Field = Field::new(
        "ADDRESS",
        8,
        1,
        "Send ADDRESS (3 bytes, most significant first) after the opcode.",
    );
    /// The data bytes go to the flash.
    pub const WRITE: Field = Field::new(
        "WRITE",
        9,
        1,
        "1: the data bytes are sent from BUFFER; 0: they are received into BUFFER.",
    );
    /// Starts a transaction.
    pub const COMMAND: Register = LAYOUT.register(
        "COMMAND",
        0x0C,
        Access::WriteOnly,
        "Starts a transaction: cs_n falls, the opcode, the address if asked for and LENGTH \
         data bytes are exchanged, and cs_n rises. Ignored while STATUS.BUSY is set.",
        &[OPCODE, WITH_ADDRESS, WRITE],
    );

    /// A transaction is under way.
    pub const BUSY: Field = Field::new(
        "BUSY",
        0,
        1,
        "A transaction is under way: COMMAND is ignored and BUFFER reads 0 and ignores \
         writes until it clears.",
    );
    /// Whether the controller is idle.
    pub const STATUS: Register = LAYOUT.register(
        "STATUS",
        0x10,
        Access::ReadOnly,
        "Whether a transaction is under way (not whether the flash is programming: that \
         is the flash's own status register, read with opcode::READ_STATUS).",
        &[BUSY],
    );

    /// The registers' block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "spi_flash",
        doc: "The SPI NOR flash controller (SPI mode 0). Software sets ADDRESS and LENGTH, \
              fills spi_flash_buffer for a command that sends data, writes COMMAND and \
              polls STATUS.BUSY; received data is then in spi_flash_buffer. One command \
              per transaction: Write Enable (0x06) and Page Program (0x02) are two. A \
              Page Program or Sector Erase goes on inside the flash after its \
              transaction: poll Read Status (0x05) until bit 0 (WIP) clears (JESD216).",
        layout: LAYOUT,
        registers: &[CONTROL, ADDRESS, LENGTH, COMMAND, STATUS],
        entry_names: &[],
    };

    /// The data buffer, one block above the registers: a word per entry.
    pub const BUFFER_LAYOUT: Layout = Layout {
        base: SOC_BASE + 0x5100,
        instances: 1,
        stride: BLOCK_SIZE,
        entries: BUFFER_SIZE / 4,
        entry_stride: 4,
    };
    /// Four data bytes.
    pub const WORD: Field = Field::new(
        "BYTES",
        0,
        32,
        "Data bytes 4n to 4n+3 of entry n: byte 4n in bits 7:0 (little-endian, as the \
         core loads it).",
    );
    /// One word of the buffer.
    pub const DATA: Register = BUFFER_LAYOUT.register(
        "DATA",
        0x00,
        Access::ReadWrite,
        "Four bytes of the transaction's data phase, byte 4n + i in bits 8i+7:8i.",
        &[WORD],
    );
    /// The buffer's block.
    pub const BUFFER: RegisterBlock = RegisterBlock {
        name: "spi_flash_buffer",
        doc: "The transaction's data bytes: sent from here by a command with COMMAND.WRITE \
              set, received here otherwise (byte n of the data phase is byte n of the \
              buffer). Bytes past LENGTH are left as they were.",
        layout: BUFFER_LAYOUT,
        registers: &[DATA],
        entry_names: &[],
    };

    /// Address of the buffer word holding data byte `byte`.
    ///
    /// # Panics
    ///
    /// If `byte` is not below [`BUFFER_SIZE`].
    pub const fn buffer_word(byte: u32) -> u32 {
        DATA.address(0, byte / 4)
    }

    /// The JEDEC-style serial NOR commands (3-byte addressing) that weft
    /// uses, with the status bits and IDs they carry. Every serial NOR part
    /// implements these as the basic command set; JESD216's basic flash
    /// parameter table names the erase and status-polling ones.
    pub mod opcode {
        /// Write Enable: sets the status register's WEL. A Page Program or
        /// Sector Erase without WEL set is ignored by the part, and WEL
        /// clears when one finishes.
        pub const WRITE_ENABLE: u8 = 0x06;
        /// Write Disable: clears WEL.
        pub const WRITE_DISABLE: u8 = 0x04;
        /// Read Status Register (-1): the status byte, repeated while
        /// `cs_n` stays low.
        pub const READ_STATUS: u8 = 0x05;
        /// Read Data: 3 address bytes, then bytes from there on for as long
        /// as `cs_n` stays low, wrapping at the end of the array.
        pub const READ_DATA: u8 = 0x03;
        /// Page Program: 3 address bytes, then 1 to 256 bytes, each ANDed
        /// into the array (programming only clears bits); addresses wrap
        /// inside the 256-byte page. Takes effect when `cs_n` rises after
        /// whole bytes.
        pub const PAGE_PROGRAM: u8 = 0x02;
        /// Sector Erase: 3 address bytes; the 4 KiB sector holding the
        /// address becomes 0xFF. Takes effect when `cs_n` rises right after
        /// the address.
        pub const SECTOR_ERASE: u8 = 0x20;
        /// Read JEDEC ID: manufacturer (JEP106), memory type, capacity.
        pub const READ_JEDEC_ID: u8 = 0x9F;

        /// Status bit 0, Write In Progress: the part is programming or
        /// erasing and ignores every command but Read Status.
        pub const STATUS_WIP: u8 = 1 << 0;
        /// Status bit 1, Write Enable Latch.
        pub const STATUS_WEL: u8 = 1 << 1;
    }
}

/// The MDIO master: the station management entity's side of the
/// management interface of IEEE 802.3 clause 22 (§22.2.4), which reads
/// and writes the Ethernet PHY's 16-bit registers.
///
/// Software writes [`COMMAND`](mdio::COMMAND) with the PHY address, the
/// register address and, for a write, the data; the master then clocks one
/// management frame out on `mdc`/`mdio` (§22.2.4.5, Table 22–12): 32
/// preamble ones, the start of frame 01, the operation code (10 read, 01
/// write), the PHY and register addresses (5 bits each, most significant
/// first), the turnaround and 16 data bits, most significant first.
/// [`STATUS`](mdio::STATUS)`.BUSY` is set until the frame's last bit has
/// been clocked; a read's data is then in [`READ_DATA`](mdio::READ_DATA).
///
/// COMMAND's fields sit where the frame's last 32 bits carry them, so the
/// word is the frame after the preamble with the start of frame, the
/// operation code and the turnaround filled in by the master.
pub mod mdio {
    use super::*;

    /// One instance, one block above the SPI flash controller's buffer.
    pub const LAYOUT: Layout = single(SOC_BASE + 0x6000);

    /// MDC's highest frequency: a period of at least 400 ns, high and low
    /// for at least 160 ns each (IEEE 802.3 §22.2.2.13).
    pub const MDC_MAX_HZ: u32 = 2_500_000;

    /// [`DIVISOR`]'s value at reset: the fastest MDC at most
    /// [`MDC_MAX_HZ`] at the reference soft core clock (24: 2.5 MHz at
    /// 125 MHz), the same half-period divider as the SPI flash's serial
    /// clock ([`spi_flash::divisor_for`]).
    pub const DIVISOR_RESET: u32 = spi_flash::divisor_for(crate::SOFT_CORE_CLOCK_HZ, MDC_MAX_HZ);
    const _: () = assert!(
        crate::SOFT_CORE_CLOCK_HZ / (2 * (DIVISOR_RESET + 1)) <= MDC_MAX_HZ
            && DIVISOR_RESET <= 0xFF
    );

    /// MDC's half period, in soft core clock cycles, less one.
    pub const DIVISOR: Field = Field::new(
        "DIVISOR",
        0,
        8,
        "MDC's half period in core clock cycles, less one: f_MDC = f_core / (2 (DIVISOR + \
         1)). Resets to DIVISOR_RESET, 24: 2.5 MHz at the reference 125 MHz core clock, \
         the most IEEE 802.3 §22.2.2.13 allows.",
    );
    /// How fast MDC runs.
    pub const CONTROL: Register = LAYOUT.register(
        "CONTROL",
        0x00,
        Access::ReadWrite,
        "MDC's rate; written while STATUS.BUSY is clear.",
        &[DIVISOR],
    );

    /// The data a write frame carries.
    pub const DATA: Field = Field::new(
        "DATA",
        0,
        16,
        "The 16 bits a write frame sends, most significant first; ignored by a read.",
    );
    /// The register address.
    pub const REGISTER: Field = Field::new(
        "REGISTER",
        18,
        5,
        "The PHY register address (REGAD, IEEE 802.3 §22.2.4.5.6).",
    );
    /// The PHY address.
    pub const PHY: Field = Field::new(
        "PHY",
        23,
        5,
        "The PHY address (PHYAD, IEEE 802.3 §22.2.4.5.5).",
    );
    /// Write rather than read.
    pub const WRITE: Field = Field::new(
        "WRITE",
        28,
        1,
        "1: a write frame (operation code 01); 0: a read frame (operation code 10), IEEE \
         802.3 §22.2.4.5.4.",
    );
    /// Starts a frame.
    pub const COMMAND: Register = LAYOUT.register(
        "COMMAND",
        0x04,
        Access::WriteOnly,
        "Starts a management frame (IEEE 802.3 §22.2.4.5): the preamble, start of frame, \
         operation code, PHY and register addresses, turnaround and 16 data bits. The \
         fields sit at the frame's bit positions after the preamble. Ignored while \
         STATUS.BUSY is set.",
        &[DATA, REGISTER, PHY, WRITE],
    );

    /// A frame is under way.
    pub const BUSY: Field = Field::new(
        "BUSY",
        0,
        1,
        "A frame is being clocked out: COMMAND is ignored until it clears.",
    );
    /// No PHY answered the last read.
    pub const NO_ANSWER: Field = Field::new(
        "NO_ANSWER",
        1,
        1,
        "The last read frame found MDIO high in the turnaround's second bit, where the \
         addressed PHY drives a 0 (IEEE 802.3 §22.2.4.5.7): no PHY answers at that \
         address. Cleared by the next COMMAND.",
    );
    /// Whether the master is idle.
    pub const STATUS: Register = LAYOUT.register(
        "STATUS",
        0x08,
        Access::ReadOnly,
        "Whether a frame is under way, and whether the last read was answered.",
        &[BUSY, NO_ANSWER],
    );

    /// The data the last read frame carried.
    pub const READ_VALUE: Field = Field::new(
        "DATA",
        0,
        16,
        "The 16 data bits of the last read frame, the first received in bit 15.",
    );
    /// The last read's data.
    pub const READ_DATA: Register = LAYOUT.register(
        "READ_DATA",
        0x0C,
        Access::ReadOnly,
        "The data of the last read frame, valid once STATUS.BUSY has cleared; 0 after \
         reset.",
        &[READ_VALUE],
    );

    /// The block.
    pub const BLOCK: RegisterBlock = RegisterBlock {
        name: "mdio",
        doc: "The MDIO master of IEEE 802.3 clause 22 (§22.2.4): software writes COMMAND \
              (PHY, REGISTER, WRITE and, for a write, DATA), polls STATUS.BUSY until it \
              clears, and reads a read's result from READ_DATA. MDC idles low and MDIO is \
              released between frames; the master drives MDIO after MDC falls, and \
              samples the PHY's bits as MDC rises.",
        layout: LAYOUT,
        registers: &[CONTROL, COMMAND, STATUS, READ_DATA],
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
            assert_eq!(block.layout.base % BLOCK_SIZE, 0, "{}", block.name);
            if block.registers.is_empty() {
                // A frame buffer: whole slots, after every register block.
                assert_eq!(block.layout.entry_stride, mac::SLOT_SIZE, "{}", block.name);
                assert!(block.layout.base >= mac::BUFFER_BASE, "{}", block.name);
                continue;
            }
            // A register block is decoded within one BLOCK_SIZE span.
            assert!(
                block.end() - block.layout.base <= BLOCK_SIZE,
                "{}",
                block.name
            );
            for register in block.registers {
                assert!(register.offset + 4 <= block.layout.entry_stride.min(BLOCK_SIZE));
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
        assert_eq!(mac::CONTROL.address(0, 0), 0x2000_4000);
        assert_eq!(mac::INT_STATUS.address(0, 0), 0x2000_4008);
        assert_eq!(mac::ADDRESS_HIGH.address(0, 0), 0x2000_4010);
        assert_eq!(mac::TX_FRAMES.address(0, 0), 0x2000_4024);
        assert_eq!(mac::RX_ERRORS.address(0, 0), 0x2000_4028);
        assert_eq!(mac::RX_DESCRIPTOR.address(0, 0), 0x2000_4100);
        assert_eq!(mac::RX_DESCRIPTOR.address(0, 7), 0x2000_411C);
        assert_eq!(mac::TX_DESCRIPTOR.address(0, 3), 0x2000_420C);
        assert_eq!(mac::rx_slot(0), 0x2001_0000);
        assert_eq!(mac::rx_slot(7), 0x2001_3800);
        assert_eq!(mac::tx_slot(0), 0x2001_4000);
        assert_eq!(mac::tx_slot(3), 0x2001_5800);
        assert_eq!(mac::TX_BUFFER.end(), 0x2001_6000);
        assert_eq!(spi_flash::CONTROL.address(0, 0), 0x2000_5000);
        assert_eq!(spi_flash::ADDRESS.address(0, 0), 0x2000_5004);
        assert_eq!(spi_flash::LENGTH.address(0, 0), 0x2000_5008);
        assert_eq!(spi_flash::COMMAND.address(0, 0), 0x2000_500C);
        assert_eq!(spi_flash::STATUS.address(0, 0), 0x2000_5010);
        assert_eq!(spi_flash::DATA.address(0, 0), 0x2000_5100);
        assert_eq!(spi_flash::buffer_word(255), 0x2000_51FC);
        assert_eq!(spi_flash::BUFFER.end(), 0x2000_5200);
        assert_eq!(mdio::CONTROL.address(0, 0), 0x2000_6000);
        assert_eq!(mdio::COMMAND.address(0, 0), 0x2000_6004);
        assert_eq!(mdio::STATUS.address(0, 0), 0x2000_6008);
        assert_eq!(mdio::READ_DATA.address(0, 0), 0x2000_600C);
    }

    #[test]
    fn the_flash_controller_holds_a_page_and_a_whole_address() {
        // The buffer is one program page; LENGTH counts up to it.
        assert_eq!(
            spi_flash::BUFFER_LAYOUT.instance_span(),
            spi_flash::PAGE_SIZE
        );
        assert!(spi_flash::BYTES.mask() >= spi_flash::BUFFER_SIZE);
        // 3-byte addressing: 16 MiB.
        assert_eq!(spi_flash::ADDRESS_BITS.mask(), 0x00FF_FFFF);
        // A Page Program with its address, as firmware writes it.
        let command = spi_flash::OPCODE.encode(u32::from(spi_flash::opcode::PAGE_PROGRAM))
            | spi_flash::WITH_ADDRESS.encode(1)
            | spi_flash::WRITE.encode(1);
        assert_eq!(command, 0x302);
        assert_eq!(spi_flash::COMMAND.mask(), 0x3FF);
        assert_eq!(spi_flash::SECTOR_SIZE % spi_flash::PAGE_SIZE, 0);
    }

    #[test]
    fn mac_fields_are_distinct_and_hold_a_slot() {
        // INT_ENABLE and INT_STATUS share bit positions, so `status & enable` is the line.
        assert_eq!(mac::INT_ENABLE.fields, mac::INT_STATUS.fields);
        assert_eq!(mac::INT_STATUS.mask(), 0b111);
        assert_eq!(mac::CONTROL.mask(), 0b111);
        assert_eq!(mac::RX_DESCRIPTOR.mask(), 0x8000_0FFF);
        // The longest length a descriptor holds covers a whole slot.
        assert!(mac::LENGTH.mask() >= mac::SLOT_SIZE);
        // RING's fields hold every slot index.
        assert!(mac::RX_NEXT.mask() >= mac::RX_SLOTS - 1);
        assert!(mac::TX_NEXT.decode(u32::MAX) >= mac::TX_SLOTS - 1);
        assert_eq!(mac::OWN.encode(1) | mac::LENGTH.encode(60), 0x8000_003C);
    }

    #[test]
    fn mdio_command_fields_sit_at_the_frame_positions() {
        // After the preamble a clause 22 frame is ST (2) OP (2) PHYAD (5)
        // REGAD (5) TA (2) DATA (16), IEEE 802.3 Table 22-12: PHYAD ends
        // at bit 23, REGAD at 18, DATA at 0, OP's low bit is 28.
        assert_eq!(mdio::PHY.mask(), 0x0F80_0000);
        assert_eq!(mdio::REGISTER.mask(), 0x007C_0000);
        assert_eq!(mdio::DATA.mask(), 0xFFFF);
        assert_eq!(mdio::WRITE.mask(), 1 << 28);
        assert_eq!(mdio::DIVISOR_RESET, 24);
    }

    #[test]
    fn status_bits_are_distinct() {
        assert_eq!(uart::TX_READY.mask(), 0b01);
        assert_eq!(uart::RX_VALID.mask(), 0b10);
        assert_eq!(uart::STATUS.mask(), 0b11);
        assert_eq!(uart::TX_BYTE.encode(0x1_41), 0x41);
    }
}
