//! The soft core's SoC: the RV32IM core with its Harvard block RAMs, the
//! data port's address decoder, its peripherals (`weft_regs::soc`) and the
//! master port onto the data plane's CSR bus, all in rust-hdl.
//!
//! - [`Soc`]: the top. Its outside is a clock, a power-on reset, the
//!   UART's byte streams, the GPIO pins, the watchdog's reset request, the
//!   Ethernet MAC's MII pins, the MDIO master's pins, the SPI flash's pins
//!   and the
//!   [`CsrBus`](crate::csr::CsrBus) master port.
//! - Its parts, one job each: [`BlockRam`] (data memory) and
//!   [`DualPortRam`] (instruction memory), [`DualPortRom`] (boot ROM),
//!   initialised from a
//!   firmware image and a boot loader, [`DataDecoder`], [`Uart`],
//!   [`Timer`], [`Gpio`], [`Watchdog`], [`EthernetMac`], [`MdioMaster`],
//!   [`SpiFlashController`](crate::spi_flash::SpiFlashController).
//! - [`SerialTransmitter`] and [`SerialReceiver`] turn the UART's byte
//!   streams into an 8N1 serial line for a board's pins.
//! - [`SocBench`] runs it cycle by cycle with Rust models on its outside
//!   and reads the core's retirement trace, so
//!   [`Lockstep`](crate::core::Lockstep) compares it with the
//!   instruction-set simulator.
//!
//! The memory map is `weft_iss::HarvardBus`'s with the `weft_iss::soc`
//! models attached: instruction RAM at `INSTRUCTION_RAM_BASE` fetched and
//! written by data-port stores (not loaded from), the boot ROM at
//! `BOOT_ROM_BASE` fetched and loaded from (never written), data RAM at
//! `DATA_RAM_BASE` on the data port only, the SoC window and the CSR
//! window (`weft_regs::csr`) on the data port, whole words only;
//! everything else faults.

pub mod bench;
pub mod decode;
pub mod gpio;
pub mod mac;
pub mod mdio;
pub mod ram;
pub mod serial;
pub mod timer;
pub mod uart;
pub mod watchdog;

use std::fmt;

use rust_hdl::prelude::*;
use weft_iss::{elf, ElfError, HarvardBus};
use weft_regs::{
    BOOT_ROM_BASE, BOOT_ROM_SIZE, DATA_RAM_BASE, DATA_RAM_SIZE, INSTRUCTION_RAM_BASE,
    INSTRUCTION_RAM_SIZE,
};

pub use bench::SocBench;
pub use decode::DataDecoder;
pub use gpio::Gpio;
pub use mac::EthernetMac;
pub use mdio::MdioMaster;
pub use ram::{BlockRam, DualPortRam, DualPortRom};
pub use serial::{SerialReceiver, SerialTransmitter};
pub use timer::Timer;
pub use uart::Uart;
pub use watchdog::Watchdog;

use crate::core::Core;
use crate::csr::CsrBus;
use crate::spi_flash::SpiFlashController;

/// Why a SoC could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SocError {
    /// A memory size is not a power of two dividing its base address, so
    /// no block RAM decodes it by masking.
    MemorySize {
        /// Which memory.
        memory: &'static str,
        /// Its size in bytes.
        bytes: u32,
    },
    /// The firmware image does not load.
    Elf(ElfError),
    /// The firmware's entry point is not the core's reset vector.
    Entry {
        /// The ELF's entry point.
        entry: u32,
    },
    /// The boot ROM image is not the boot ROM's size.
    BootRomSize {
        /// Its size in bytes.
        bytes: u32,
    },
    /// The boot loader's entry point is not the boot ROM's base.
    BootEntry {
        /// The ELF's entry point.
        entry: u32,
    },
}

impl fmt::Display for SocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MemorySize { memory, bytes } => write!(
                f,
                "{memory} of {bytes} bytes: a SoC memory must be a power of two that divides \
                 its base address"
            ),
            Self::Elf(e) => write!(f, "the firmware image does not load: {e}"),
            Self::Entry { entry } => write!(
                f,
                "the firmware's entry point {entry:#010x} is not the reset vector \
                 {INSTRUCTION_RAM_BASE:#010x}; link it to start there"
            ),
            Self::BootRomSize { bytes } => write!(
                f,
                "a boot ROM image of {bytes} bytes: the boot ROM holds {BOOT_ROM_SIZE} \
                 (weft_regs::BOOT_ROM_SIZE)"
            ),
            Self::BootEntry { entry } => write!(
                f,
                "the boot loader's entry point {entry:#010x} is not the boot ROM's base \
                 {BOOT_ROM_BASE:#010x}; link it with weft_regs::build_script::link_boot_loader"
            ),
        }
    }
}

impl std::error::Error for SocError {}

impl From<ElfError> for SocError {
    fn from(e: ElfError) -> Self {
        Self::Elf(e)
    }
}

/// The contents of the SoC's memories at power-on: what the FPGA's
/// block RAM initialisation holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryImage {
    /// Instruction RAM words, from `INSTRUCTION_RAM_BASE`.
    pub instructions: Vec<u32>,
    /// Data RAM words, from `DATA_RAM_BASE`.
    pub data: Vec<u32>,
    /// Boot ROM words, from `BOOT_ROM_BASE`: the boot loader, or all zero
    /// for a SoC built without one, which starts in instruction RAM.
    pub boot: Vec<u32>,
}

/// Little-endian words of `bytes`.
fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect()
}

fn check_size(memory: &'static str, base: u32, bytes: u32) -> Result<(), SocError> {
    if bytes.is_power_of_two() && bytes >= 4 && base.is_multiple_of(bytes) {
        Ok(())
    } else {
        Err(SocError::MemorySize { memory, bytes })
    }
}

impl MemoryImage {
    /// Zero-filled memories of the given sizes in bytes.
    pub fn zeroed(instruction_bytes: u32, data_bytes: u32) -> Result<Self, SocError> {
        check_size("instruction RAM", INSTRUCTION_RAM_BASE, instruction_bytes)?;
        check_size("data RAM", DATA_RAM_BASE, data_bytes)?;
        Ok(Self {
            instructions: vec![0; instruction_bytes as usize / 4],
            data: vec![0; data_bytes as usize / 4],
            boot: vec![0; BOOT_ROM_SIZE as usize / 4],
        })
    }

    /// The reference sizes (`weft_regs`), zero-filled.
    pub fn reference() -> Self {
        Self::zeroed(INSTRUCTION_RAM_SIZE, DATA_RAM_SIZE)
            .expect("the weft-regs memory sizes are powers of two")
    }

    /// The RAM contents of `bus`, a `HarvardBus` with its RAMs at the
    /// `weft_regs` bases (as `HarvardBus::reference()` has them): a test
    /// program placed for the ISS, given to the SoC.
    pub fn from_bus(bus: &HarvardBus) -> Result<Self, SocError> {
        let size = |bytes: &[u8]| u32::try_from(bytes.len()).unwrap_or(0);
        let image = Self {
            instructions: words(bus.instruction_ram()),
            data: words(bus.data_ram()),
            boot: words(bus.boot_rom()),
        };
        check_size(
            "instruction RAM",
            INSTRUCTION_RAM_BASE,
            size(bus.instruction_ram()),
        )?;
        check_size("data RAM", DATA_RAM_BASE, size(bus.data_ram()))?;
        Ok(image)
    }

    /// Memories of the given sizes holding the `PT_LOAD` segments of the
    /// ELF `image` (loaded by `weft_iss::elf`, as the ISS loads it).
    pub fn from_elf(
        image: &[u8],
        instruction_bytes: u32,
        data_bytes: u32,
    ) -> Result<Self, SocError> {
        Self::zeroed(instruction_bytes, data_bytes)?;
        let mut bus = HarvardBus::new(
            INSTRUCTION_RAM_BASE,
            instruction_bytes,
            DATA_RAM_BASE,
            data_bytes,
        )
        .expect("the weft-regs RAM bases are far apart");
        let loaded = elf::load(&mut bus, image)?;
        if loaded.entry != INSTRUCTION_RAM_BASE {
            return Err(SocError::Entry {
                entry: loaded.entry,
            });
        }
        Self::from_bus(&bus)
    }

    /// The reference sizes holding the ELF `image`.
    pub fn reference_from_elf(image: &[u8]) -> Result<Self, SocError> {
        Self::from_elf(image, INSTRUCTION_RAM_SIZE, DATA_RAM_SIZE)
    }

    /// These memories with the boot ROM holding the boot loader's ELF
    /// `boot` (its segments in the boot ROM; what it loads elsewhere, its
    /// stack's zero fill, is not kept): the SoC then starts in the loader.
    pub fn with_boot_loader(mut self, boot: &[u8]) -> Result<Self, SocError> {
        let mut bus = HarvardBus::reference();
        let loaded = elf::load(&mut bus, boot)?;
        if loaded.entry != BOOT_ROM_BASE {
            return Err(SocError::BootEntry {
                entry: loaded.entry,
            });
        }
        self.boot = words(bus.boot_rom());
        Ok(self)
    }

    /// Where the core starts: the boot ROM if it holds a loader, else
    /// instruction RAM.
    fn reset_vector(&self) -> u32 {
        if self.boot.iter().any(|&w| w != 0) {
            BOOT_ROM_BASE
        } else {
            INSTRUCTION_RAM_BASE
        }
    }
}
/// The soft core's SoC.
///
/// The core starts in the boot ROM (`BOOT_ROM_BASE`) when it holds a boot
/// loader, else at the base of instruction RAM (`INSTRUCTION_RAM_BASE`).
/// It fetches from instruction RAM and the boot ROM (two-port block RAMs:
/// [`DualPortRam`], [`DualPortRom`]) and loads and stores through the [`DataDecoder`] to
/// data RAM, instruction RAM (stores), the boot ROM (loads), the
/// peripherals and the CSR master port;
/// each answers a load in the next cycle, as the core's ports expect. The
/// timer drives `mip.MTIP`; `mip.MEIP` is the level OR of the external
/// interrupt sources, the Ethernet MAC's and the data plane's
/// (`data_plane_irq`: its mailbox's and injector's, `weft_regs::csr`), as
/// `weft_iss::soc::Soc` wires them; the software interrupt line is tied
/// low. The MAC's MII pins (IEEE 802.3 clause 22) are the SoC's `mii_*`
/// ports; its clocks must run at most a quarter of the SoC clock (see
/// [`EthernetMac`]). The SPI flash controller's pins (SPI mode 0, see
/// [`SpiFlashController`]) are the SoC's `flash_*` ports, the MDIO
/// master's (IEEE 802.3 §22.2.4, see [`MdioMaster`]) its `mdc` and
/// `mdio_*` ports.
///
/// `reset` (synchronous, at least one cycle) is the power-on reset. The
/// watchdog's `reset_request` resets the core and the timer, GPIO, MAC,
/// MDIO master and flash controller as well, leaving the memories (the flash controller's
/// page buffer among them) and the watchdog's `LOAD` and `STATUS` alone, and leaves the SoC on `reset_request` for the rest of the board.
/// The CSR master port moves whole words (the decoder faults narrower
/// accesses); a load that no CSR target answers reads 0.
#[derive(LogicBlock)]
pub struct Soc {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Power-on reset (synchronous).
    pub reset: Signal<In, Bit>,
    /// The UART's oldest byte not yet sent.
    pub tx_data: Signal<Out, Bits<8>>,
    /// `tx_data` holds a byte.
    pub tx_valid: Signal<Out, Bit>,
    /// The outside takes `tx_data` at this edge.
    pub tx_ready: Signal<In, Bit>,
    /// A byte for the UART's receiver.
    pub rx_data: Signal<In, Bits<8>>,
    /// `rx_data` holds a byte.
    pub rx_valid: Signal<In, Bit>,
    /// The UART takes `rx_data` at this edge.
    pub rx_ready: Signal<Out, Bit>,
    /// GPIO output levels.
    pub gpio_outputs: Signal<Out, Bits<32>>,
    /// GPIO input levels.
    pub gpio_inputs: Signal<In, Bits<32>>,
    /// The watchdog fired: high for one cycle, while the SoC resets itself.
    pub reset_request: Signal<Out, Bit>,
    /// MII receive clock from the Ethernet PHY.
    pub mii_rx_clk: Signal<In, Bit>,
    /// MII receive data valid.
    pub mii_rx_dv: Signal<In, Bit>,
    /// MII receive error.
    pub mii_rx_er: Signal<In, Bit>,
    /// MII receive data.
    pub mii_rxd: Signal<In, Bits<4>>,
    /// MII transmit clock from the Ethernet PHY.
    pub mii_tx_clk: Signal<In, Bit>,
    /// MII transmit enable.
    pub mii_tx_en: Signal<Out, Bit>,
    /// MII transmit data.
    pub mii_txd: Signal<Out, Bits<4>>,
    /// SPI flash serial clock.
    pub flash_sclk: Signal<Out, Bit>,
    /// SPI flash chip select, active low.
    pub flash_cs_n: Signal<Out, Bit>,
    /// SPI flash data to the part.
    pub flash_mosi: Signal<Out, Bit>,
    /// SPI flash data from the part.
    pub flash_miso: Signal<In, Bit>,
    /// MDIO management data clock to the Ethernet PHY.
    pub mdc: Signal<Out, Bit>,
    /// The level the MDIO master drives while `mdio_out_enable` is high.
    pub mdio_out: Signal<Out, Bit>,
    /// The MDIO master drives MDIO (an open-drain line: low releases it).
    pub mdio_out_enable: Signal<Out, Bit>,
    /// MDIO's level on the line.
    pub mdio_in: Signal<In, Bit>,
    /// The master port onto the data plane's CSR bus.
    pub csr: CsrBus,
    /// The data plane's interrupt line (level-sensitive), an external interrupt source.
    pub data_plane_irq: Signal<In, Bit>,
    /// The core (public so that test benches read its trace and registers).
    pub core: Core,
    instruction_ram: DualPortRam,
    boot_rom: DualPortRom,
    data_ram: BlockRam,
    decoder: DataDecoder,
    uart: Uart,
    timer: Timer,
    gpio: Gpio,
    watchdog: Watchdog,
    mac: EthernetMac,
    spi_flash: SpiFlashController,
    mdio: MdioMaster,
    system_reset: Signal<Local, Bit>,
    data_ram_read: DFF<Bit>,
    boot_rom_read: DFF<Bit>,
    fetch_from_boot_rom: DFF<Bit>,
    csr_read: DFF<Bit>,
    spi_flash_read: DFF<Bit>,
    instruction_base: Constant<Bits<32>>,
    instruction_mask: Constant<Bits<32>>,
    boot_base: Constant<Bits<32>>,
    boot_mask: Constant<Bits<32>>,
    reset_vector: Constant<Bits<32>>,
    no_lanes: Constant<Bits<4>>,
}

impl Soc {
    /// A SoC whose memories start out holding `image`.
    pub fn new(image: &MemoryImage) -> Result<Self, SocError> {
        let bytes = |words: &[u32]| u32::try_from(4 * words.len()).unwrap_or(0);
        let instruction_bytes = bytes(&image.instructions);
        let data_bytes = bytes(&image.data);
        check_size("instruction RAM", INSTRUCTION_RAM_BASE, instruction_bytes)?;
        check_size("data RAM", DATA_RAM_BASE, data_bytes)?;
        if bytes(&image.boot) != BOOT_ROM_SIZE {
            return Err(SocError::BootRomSize {
                bytes: bytes(&image.boot),
            });
        }
        Ok(Self {
            clock: Signal::default(),
            reset: Signal::default(),
            tx_data: Signal::default(),
            tx_valid: Signal::default(),
            tx_ready: Signal::default(),
            rx_data: Signal::default(),
            rx_valid: Signal::default(),
            rx_ready: Signal::default(),
            gpio_outputs: Signal::default(),
            gpio_inputs: Signal::default(),
            reset_request: Signal::default(),
            mii_rx_clk: Signal::default(),
            mii_rx_dv: Signal::default(),
            mii_rx_er: Signal::default(),
            mii_rxd: Signal::default(),
            mii_tx_clk: Signal::default(),
            mii_tx_en: Signal::default(),
            mii_txd: Signal::default(),
            flash_sclk: Signal::default(),
            flash_cs_n: Signal::default(),
            flash_mosi: Signal::default(),
            flash_miso: Signal::default(),
            mdc: Signal::default(),
            mdio_out: Signal::default(),
            mdio_out_enable: Signal::default(),
            mdio_in: Signal::default(),
            csr: CsrBus::default(),
            data_plane_irq: Signal::default(),
            core: Core::default(),
            instruction_ram: DualPortRam::new(image.instructions.clone()),
            boot_rom: DualPortRom::new(image.boot.clone()),
            data_ram: BlockRam::new(image.data.clone()),
            decoder: DataDecoder::new(data_bytes, instruction_bytes),
            uart: Uart::new(),
            timer: Timer::new(),
            gpio: Gpio::new(),
            watchdog: Watchdog::new(),
            mac: EthernetMac::new(),
            spi_flash: SpiFlashController::default(),
            mdio: MdioMaster::new(),
            system_reset: Signal::default(),
            data_ram_read: DFF::default(),
            boot_rom_read: DFF::default(),
            fetch_from_boot_rom: DFF::default(),
            csr_read: DFF::default(),
            spi_flash_read: DFF::default(),
            instruction_base: Constant::new(bits(u64::from(INSTRUCTION_RAM_BASE))),
            instruction_mask: Constant::new(bits(u64::from(!(instruction_bytes - 1)))),
            boot_base: Constant::new(bits(u64::from(BOOT_ROM_BASE))),
            boot_mask: Constant::new(bits(u64::from(!(BOOT_ROM_SIZE - 1)))),
            reset_vector: Constant::new(bits(u64::from(image.reset_vector()))),
            no_lanes: Constant::new(bits(0)),
        })
    }

    /// Makes the emitted Verilog read the memories' initial contents from
    /// files `<stem>_instruction_ram.hex`, `<stem>_data_ram.hex` and
    /// `<stem>_boot_rom.hex` beside it ([`Soc::memory_files`] gives their text): `$readmemh` keeps
    /// synthesis tools fast on a large image (see [`BlockRam`]).
    pub fn with_memory_files(mut self, stem: &str) -> Self {
        self.instruction_ram = self
            .instruction_ram
            .init_file(&format!("{stem}_instruction_ram.hex"));
        self.data_ram = self.data_ram.init_file(&format!("{stem}_data_ram.hex"));
        self.boot_rom = self.boot_rom.init_file(&format!("{stem}_boot_rom.hex"));
        self
    }

    /// The memory files [`Soc::with_memory_files`] named: file name and text.
    pub fn memory_files(&self) -> Vec<(String, String)> {
        [
            self.instruction_ram.hex_image(),
            self.data_ram.hex_image(),
            self.boot_rom.hex_image(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// Data RAM as it is now, as bytes from `DATA_RAM_BASE`.
    pub fn data_ram(&self) -> Vec<u8> {
        self.data_ram
            .words()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect()
    }
}

impl Logic for Soc {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self,
            clock,
            core,
            instruction_ram,
            boot_rom,
            data_ram,
            uart,
            timer,
            gpio,
            watchdog,
            mac,
            spi_flash,
            mdio
        );
        dff_setup!(
            self,
            clock,
            data_ram_read,
            boot_rom_read,
            fetch_from_boot_rom,
            csr_read,
            spi_flash_read
        );
        self.system_reset.next = self.reset.val() || self.watchdog.reset_request.val();
        self.core.reset.next = self.system_reset.val();
        self.core.reset_vector.next = self.reset_vector.val();
        self.core.hart_id.next = 0.into();
        self.timer.reset.next = self.system_reset.val();
        self.gpio.reset.next = self.system_reset.val();
        self.mac.reset.next = self.system_reset.val();
        self.spi_flash.reset.next = self.system_reset.val();
        self.mdio.reset.next = self.system_reset.val();
        self.watchdog.reset.next = self.reset.val();
        self.reset_request.next = self.watchdog.reset_request.val();
        // Instruction port: instruction RAM or the boot ROM, each on its port A.
        self.instruction_ram.address_a.next = self.core.fetch.address.val();
        self.boot_rom.address_a.next = self.core.fetch.address.val();
        self.fetch_from_boot_rom.d.next =
            (self.core.fetch.address.val() & self.boot_mask.val()) == self.boot_base.val();
        self.core.fetch.data.next = self.instruction_ram.read_data_a.val();
        if self.fetch_from_boot_rom.q.val() {
            self.core.fetch.data.next = self.boot_rom.read_data_a.val();
        }
        self.core.fetch.fault.next = (self.core.fetch.address.val() & self.instruction_mask.val())
            != self.instruction_base.val()
            && (self.core.fetch.address.val() & self.boot_mask.val()) != self.boot_base.val();
        // Their ports B on the data port: stores into instruction RAM,
        // loads from the boot ROM.
        self.instruction_ram.address_b.next = self.core.data.address.val();
        self.instruction_ram.write_data_b.next = self.core.data.write_data.val();
        self.instruction_ram.write_enable_b.next = self.no_lanes.val();
        if self.core.data.write.val() && self.decoder.iram.val() {
            self.instruction_ram.write_enable_b.next = self.core.data.byte_enable.val();
        }
        self.boot_rom.address_b.next = self.core.data.address.val();
        self.boot_rom_read.d.next = self.core.data.read.val() && self.decoder.boot.val();
        // Data port: decode, then one target per access.
        self.decoder.address.next = self.core.data.address.val();
        self.decoder.read.next = self.core.data.read.val();
        self.decoder.write.next = self.core.data.write.val();
        self.decoder.byte_enable.next = self.core.data.byte_enable.val();
        self.core.data.fault.next = self.decoder.fault.val();
        self.data_ram.address.next = self.core.data.address.val();
        self.data_ram.write_data.next = self.core.data.write_data.val();
        self.data_ram.write_enable.next = self.no_lanes.val();
        if self.core.data.write.val() && self.decoder.dram.val() {
            self.data_ram.write_enable.next = self.core.data.byte_enable.val();
        }
        self.data_ram_read.d.next = self.core.data.read.val() && self.decoder.dram.val();
        self.uart.bus.address.next = self.core.data.address.val();
        self.uart.bus.write_data.next = self.core.data.write_data.val();
        self.uart.bus.read.next = self.core.data.read.val() && self.decoder.uart.val();
        self.uart.bus.write.next = self.core.data.write.val() && self.decoder.uart.val();
        self.timer.bus.address.next = self.core.data.address.val();
        self.timer.bus.write_data.next = self.core.data.write_data.val();
        self.timer.bus.read.next = self.core.data.read.val() && self.decoder.timer.val();
        self.timer.bus.write.next = self.core.data.write.val() && self.decoder.timer.val();
        self.gpio.bus.address.next = self.core.data.address.val();
        self.gpio.bus.write_data.next = self.core.data.write_data.val();
        self.gpio.bus.read.next = self.core.data.read.val() && self.decoder.gpio.val();
        self.gpio.bus.write.next = self.core.data.write.val() && self.decoder.gpio.val();
        self.watchdog.bus.address.next = self.core.data.address.val();
        self.watchdog.bus.write_data.next = self.core.data.write_data.val();
        self.watchdog.bus.read.next = self.core.data.read.val() && self.decoder.watchdog.val();
        self.watchdog.bus.write.next = self.core.data.write.val() && self.decoder.watchdog.val();
        self.mac.bus.address.next = self.core.data.address.val();
        self.mac.bus.write_data.next = self.core.data.write_data.val();
        self.mac.bus.read.next = self.core.data.read.val() && self.decoder.mac.val();
        self.mac.bus.write.next = self.core.data.write.val() && self.decoder.mac.val();
        self.spi_flash.bus.address.next = self.core.data.address.val();
        self.spi_flash.bus.write_data.next = self.core.data.write_data.val();
        self.spi_flash.bus.byte_enable.next = self.core.data.byte_enable.val();
        self.spi_flash.bus.read.next = self.core.data.read.val() && self.decoder.spi_flash.val();
        self.spi_flash.bus.write.next = self.core.data.write.val() && self.decoder.spi_flash.val();
        self.spi_flash_read.d.next = self.core.data.read.val() && self.decoder.spi_flash.val();
        self.mdio.bus.address.next = self.core.data.address.val();
        self.mdio.bus.write_data.next = self.core.data.write_data.val();
        self.mdio.bus.read.next = self.core.data.read.val() && self.decoder.mdio.val();
        self.mdio.bus.write.next = self.core.data.write.val() && self.decoder.mdio.val();
        self.csr.address.next = self.core.data.address.val();
        self.csr.write_data.next = self.core.data.write_data.val();
        self.csr.read.next = self.core.data.read.val() && self.decoder.csr.val();
        self.csr.write.next = self.core.data.write.val() && self.decoder.csr.val();
        self.csr_read.d.next = self.core.data.read.val() && self.decoder.csr.val();
        // The previous cycle's load, from whichever target it went to.
        self.core.data.read_data.next = 0.into();
        if self.data_ram_read.q.val() {
            self.core.data.read_data.next = self.data_ram.read_data.val();
        }
        if self.boot_rom_read.q.val() {
            self.core.data.read_data.next = self.boot_rom.read_data_b.val();
        }
        if self.csr_read.q.val() && self.csr.read_valid.val() {
            self.core.data.read_data.next = self.csr.read_data.val();
        }
        if self.uart.bus.read_valid.val() {
            self.core.data.read_data.next = self.uart.bus.read_data.val();
        }
        if self.timer.bus.read_valid.val() {
            self.core.data.read_data.next = self.timer.bus.read_data.val();
        }
        if self.gpio.bus.read_valid.val() {
            self.core.data.read_data.next = self.gpio.bus.read_data.val();
        }
        if self.watchdog.bus.read_valid.val() {
            self.core.data.read_data.next = self.watchdog.bus.read_data.val();
        }
        if self.mac.bus.read_valid.val() {
            self.core.data.read_data.next = self.mac.bus.read_data.val();
        }
        if self.mdio.bus.read_valid.val() {
            self.core.data.read_data.next = self.mdio.bus.read_data.val();
        }
        if self.spi_flash_read.q.val() {
            self.core.data.read_data.next = self.spi_flash.bus.read_data.val();
        }
        // Interrupts and pins.
        self.core.timer_irq.next = self.timer.interrupt.val();
        self.core.software_irq.next = false;
        // mip.MEIP: the level OR of the external sources (Privileged 20211203 §3.1.9).
        self.core.external_irq.next = self.mac.irq.val() || self.data_plane_irq.val();
        self.tx_data.next = self.uart.tx_data.val();
        self.tx_valid.next = self.uart.tx_valid.val();
        self.uart.tx_ready.next = self.tx_ready.val();
        self.uart.rx_data.next = self.rx_data.val();
        self.uart.rx_valid.next = self.rx_valid.val();
        self.rx_ready.next = self.uart.rx_ready.val();
        self.gpio_outputs.next = self.gpio.outputs.val();
        self.gpio.inputs.next = self.gpio_inputs.val();
        self.mac.rx_clk.next = self.mii_rx_clk.val();
        self.mac.rx_dv.next = self.mii_rx_dv.val();
        self.mac.rx_er.next = self.mii_rx_er.val();
        self.mac.rxd.next = self.mii_rxd.val();
        self.mac.tx_clk.next = self.mii_tx_clk.val();
        self.mii_tx_en.next = self.mac.tx_en.val();
        self.mii_txd.next = self.mac.txd.val();
        self.flash_sclk.next = self.spi_flash.sclk.val();
        self.flash_cs_n.next = self.spi_flash.cs_n.val();
        self.flash_mosi.next = self.spi_flash.mosi.val();
        self.spi_flash.miso.next = self.flash_miso.val();
        self.mdc.next = self.mdio.mdc.val();
        self.mdio_out.next = self.mdio.mdio_out.val();
        self.mdio_out_enable.next = self.mdio.mdio_out_enable.val();
        self.mdio.mdio_in.next = self.mdio_in.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_sizes_must_decode_by_masking() {
        assert_eq!(
            MemoryImage::zeroed(3 * 1024, 1024),
            Err(SocError::MemorySize {
                memory: "instruction RAM",
                bytes: 3 * 1024
            })
        );
        assert!(MemoryImage::zeroed(1024, 1024).is_ok());
        // The reference map's 256 KiB and 256 KiB, in 32-bit words.
        assert_eq!(MemoryImage::reference().instructions.len(), 64 * 1024);
        assert_eq!(MemoryImage::reference().data.len(), 64 * 1024);
    }

    #[test]
    fn a_non_elf_image_is_refused_with_the_loader_error() {
        assert!(matches!(
            MemoryImage::reference_from_elf(b"not an ELF"),
            Err(SocError::Elf(_))
        ));
    }

    #[test]
    fn the_emitted_memories_start_with_the_image() {
        let mut image = MemoryImage::zeroed(1024, 1024).expect("powers of two");
        image.instructions[3] = 0x0000_0013;
        image.data[5] = 0xDEAD_BEEF;
        let mut soc = Soc::new(&image).expect("sizes checked");
        soc.connect_all();
        let verilog = generate_verilog(&soc);
        assert!(verilog.contains("reg [31:0] mem[0:255];"));
        assert!(verilog.contains("mem[3] = 32'h00000013;"));
        assert!(verilog.contains("mem[5] = 32'hdeadbeef;"));
        assert_eq!(
            verilog
                .lines()
                .filter(|l| l.trim_start().starts_with("mem[") && l.contains(" = 32'h"))
                .count(),
            2,
            "zero words are not listed"
        );

        let mut soc = Soc::new(&image)
            .expect("sizes checked")
            .with_memory_files("top");
        soc.connect_all();
        let verilog = generate_verilog(&soc);
        assert!(verilog.contains("initial $readmemh(\"top_instruction_ram.hex\", mem);"));
        assert!(verilog.contains("initial $readmemh(\"top_data_ram.hex\", mem);"));
        assert!(!verilog.contains("mem[3] ="));
        assert_eq!(
            soc.memory_files(),
            [
                (
                    "top_instruction_ram.hex".to_owned(),
                    "@3 00000013\n".to_owned()
                ),
                ("top_data_ram.hex".to_owned(), "@5 deadbeef\n".to_owned()),
                ("top_boot_rom.hex".to_owned(), String::new()),
            ]
        );
    }
}
