//! The data port's address decoder: which memory or peripheral an access
//! goes to, and whether it faults.

use rust_hdl::prelude::*;
use weft_regs::csr::{CSR_BASE, CSR_SIZE};
use weft_regs::soc::{gpio, mac, mdio, spi_flash, timer, uart, watchdog, BLOCK_SIZE};
use weft_regs::{RegisterBlock, BOOT_ROM_BASE, BOOT_ROM_SIZE, DATA_RAM_BASE, INSTRUCTION_RAM_BASE};

/// Bytes of a SoC block's registers, which sit at offsets 0, 4, 8, … with
/// no gap: the decoder accepts the offsets below this and no other.
///
/// # Panics
/// At compile time, if a block's registers are not contiguous from 0.
pub const fn register_bytes(block: &RegisterBlock) -> u32 {
    let mut i = 0;
    while i < block.registers.len() {
        assert!(
            block.registers[i].offset == 4 * i as u32,
            "SoC block registers must sit at 0, 4, 8, …"
        );
        i += 1;
    }
    4 * block.registers.len() as u32
}

const UART_BYTES: u32 = register_bytes(&uart::BLOCK);
const TIMER_BYTES: u32 = register_bytes(&timer::BLOCK);
const GPIO_BYTES: u32 = register_bytes(&gpio::BLOCK);
const WATCHDOG_BYTES: u32 = register_bytes(&watchdog::BLOCK);
const MAC_BYTES: u32 = register_bytes(&mac::BLOCK);
const SPI_FLASH_BYTES: u32 = register_bytes(&spi_flash::BLOCK);
const MDIO_BYTES: u32 = register_bytes(&mdio::BLOCK);
const SPI_FLASH_BUFFER_BYTES: u32 = spi_flash::BUFFER_LAYOUT.instance_span();
const MAC_RX_DESCRIPTOR_BYTES: u32 = mac::RX_DESCRIPTOR_LAYOUT.instance_span();
const MAC_TX_DESCRIPTOR_BYTES: u32 = mac::TX_DESCRIPTOR_LAYOUT.instance_span();
const _: () =
    assert!(MAC_RX_DESCRIPTOR_BYTES <= BLOCK_SIZE && MAC_TX_DESCRIPTOR_BYTES <= BLOCK_SIZE);
const _: () =
    assert!(mac::TX_BUFFER_LAYOUT.base == mac::BUFFER_BASE + mac::RX_SLOTS * mac::SLOT_SIZE);
const _: () = assert!(SPI_FLASH_BUFFER_BYTES == BLOCK_SIZE);
const _: () = assert!(CSR_SIZE.is_power_of_two() && CSR_BASE.is_multiple_of(CSR_SIZE));
const _: () = assert!(BLOCK_SIZE.is_power_of_two() && BLOCK_SIZE <= 0x100);

/// Decodes a data port request from its address and byte enables alone,
/// in the cycle of the request (the core's port contract).
///
/// - Data RAM: any access (the core has checked alignment).
/// - Instruction RAM: stores of any width (the boot loader copies an
///   image in); loads fault, as no read path from it joins the load
///   multiplexer and nothing needs one.
/// - The boot ROM (`weft_regs::BOOT_ROM_BASE`): loads of any width (the
///   loader's read-only data); stores fault.
/// - A SoC peripheral's register (`weft_regs::soc`): whole words only.
/// - The data plane's CSR window (`weft_regs::csr`): whole words only; the
///   CSR bus moves words.
/// - The management Ethernet MAC (`weft_regs::soc::mac`): its registers,
///   its receive and transmit descriptors and its frame buffer, whole
///   words only.
/// - The SPI flash controller (`weft_regs::soc::spi_flash`): its registers
///   and its page buffer, whole words only.
/// - The MDIO master (`weft_regs::soc::mdio`): its registers, whole words
///   only.
/// - Anything else faults. This is the `weft_iss::HarvardBus`
///   map with the `weft_iss::soc` models attached, whose devices fault on
///   a hole (`NoRegister`) or a narrow access (`UnsupportedWidth`).
#[derive(LogicBlock)]
pub struct DataDecoder {
    /// Byte address of the access.
    pub address: Signal<In, Bits<32>>,
    /// The access is a load.
    pub read: Signal<In, Bit>,
    /// The access is a store.
    pub write: Signal<In, Bit>,
    /// Byte lanes of the access.
    pub byte_enable: Signal<In, Bits<4>>,
    /// A load or store that nothing decodes, or a width its target refuses.
    pub fault: Signal<Out, Bit>,
    /// The address is in data RAM.
    pub dram: Signal<Out, Bit>,
    /// The address is in instruction RAM (a store there is decoded).
    pub iram: Signal<Out, Bit>,
    /// The address is in the boot ROM (a load there is decoded).
    pub boot: Signal<Out, Bit>,
    /// A whole-word access to a UART register.
    pub uart: Signal<Out, Bit>,
    /// A whole-word access to a timer register.
    pub timer: Signal<Out, Bit>,
    /// A whole-word access to a GPIO register.
    pub gpio: Signal<Out, Bit>,
    /// A whole-word access to a watchdog register.
    pub watchdog: Signal<Out, Bit>,
    /// A whole-word access to the Ethernet MAC's registers, descriptors or frame buffer.
    pub mac: Signal<Out, Bit>,
    /// A whole-word access to the SPI flash controller's registers or page buffer.
    pub spi_flash: Signal<Out, Bit>,
    /// A whole-word access to an MDIO master register.
    pub mdio: Signal<Out, Bit>,
    /// A whole-word access to the CSR window.
    pub csr: Signal<Out, Bit>,
    whole_word: Signal<Local, Bit>,
    block: Signal<Local, Bits<32>>,
    offset: Signal<Local, Bits<8>>,
    all_lanes: Constant<Bits<4>>,
    dram_base: Constant<Bits<32>>,
    dram_mask: Constant<Bits<32>>,
    iram_base: Constant<Bits<32>>,
    iram_mask: Constant<Bits<32>>,
    boot_base: Constant<Bits<32>>,
    boot_mask: Constant<Bits<32>>,
    block_mask: Constant<Bits<32>>,
    uart_base: Constant<Bits<32>>,
    uart_bytes: Constant<Bits<8>>,
    timer_base: Constant<Bits<32>>,
    timer_bytes: Constant<Bits<8>>,
    gpio_base: Constant<Bits<32>>,
    gpio_bytes: Constant<Bits<8>>,
    watchdog_base: Constant<Bits<32>>,
    watchdog_bytes: Constant<Bits<8>>,
    mac_base: Constant<Bits<32>>,
    mac_bytes: Constant<Bits<8>>,
    mac_rx_descriptors_base: Constant<Bits<32>>,
    mac_rx_descriptor_bytes: Constant<Bits<8>>,
    mac_tx_descriptors_base: Constant<Bits<32>>,
    mac_tx_descriptor_bytes: Constant<Bits<8>>,
    mac_buffer_base: Constant<Bits<32>>,
    mac_buffer_end: Constant<Bits<32>>,
    spi_flash_base: Constant<Bits<32>>,
    spi_flash_bytes: Constant<Bits<8>>,
    spi_flash_buffer_base: Constant<Bits<32>>,
    mdio_base: Constant<Bits<32>>,
    mdio_bytes: Constant<Bits<8>>,
    csr_base: Constant<Bits<32>>,
    csr_mask: Constant<Bits<32>>,
}

/// `value` as a 32-bit constant.
fn word(value: u32) -> Constant<Bits<32>> {
    Constant::new(bits(u64::from(value)))
}

impl DataDecoder {
    /// A decoder for data RAM of `dram_bytes` at `DATA_RAM_BASE` and
    /// instruction RAM of `iram_bytes` at `INSTRUCTION_RAM_BASE` (powers of
    /// two), and the boot ROM of `weft_regs`.
    ///
    /// # Panics
    /// If a size is not a power of two dividing its base; the SoC checks first.
    pub fn new(dram_bytes: u32, iram_bytes: u32) -> Self {
        assert!(dram_bytes.is_power_of_two() && DATA_RAM_BASE.is_multiple_of(dram_bytes));
        assert!(iram_bytes.is_power_of_two() && INSTRUCTION_RAM_BASE.is_multiple_of(iram_bytes));
        Self {
            address: Signal::default(),
            read: Signal::default(),
            write: Signal::default(),
            byte_enable: Signal::default(),
            fault: Signal::default(),
            dram: Signal::default(),
            iram: Signal::default(),
            boot: Signal::default(),
            uart: Signal::default(),
            timer: Signal::default(),
            gpio: Signal::default(),
            watchdog: Signal::default(),
            mac: Signal::default(),
            spi_flash: Signal::default(),
            mdio: Signal::default(),
            csr: Signal::default(),
            whole_word: Signal::default(),
            block: Signal::default(),
            offset: Signal::default(),
            all_lanes: Constant::new(bits(0xF)),
            dram_base: word(DATA_RAM_BASE),
            dram_mask: word(!(dram_bytes - 1)),
            iram_base: word(INSTRUCTION_RAM_BASE),
            iram_mask: word(!(iram_bytes - 1)),
            boot_base: word(BOOT_ROM_BASE),
            boot_mask: word(!(BOOT_ROM_SIZE - 1)),
            block_mask: word(!(BLOCK_SIZE - 1)),
            uart_base: word(uart::LAYOUT.base),
            uart_bytes: Constant::new(bits(u64::from(UART_BYTES))),
            timer_base: word(timer::LAYOUT.base),
            timer_bytes: Constant::new(bits(u64::from(TIMER_BYTES))),
            gpio_base: word(gpio::LAYOUT.base),
            gpio_bytes: Constant::new(bits(u64::from(GPIO_BYTES))),
            watchdog_base: word(watchdog::LAYOUT.base),
            watchdog_bytes: Constant::new(bits(u64::from(WATCHDOG_BYTES))),
            mac_base: word(mac::LAYOUT.base),
            mac_bytes: Constant::new(bits(u64::from(MAC_BYTES))),
            mac_rx_descriptors_base: word(mac::RX_DESCRIPTOR_LAYOUT.base),
            mac_rx_descriptor_bytes: Constant::new(bits(u64::from(MAC_RX_DESCRIPTOR_BYTES))),
            mac_tx_descriptors_base: word(mac::TX_DESCRIPTOR_LAYOUT.base),
            mac_tx_descriptor_bytes: Constant::new(bits(u64::from(MAC_TX_DESCRIPTOR_BYTES))),
            mac_buffer_base: word(mac::BUFFER_BASE),
            mac_buffer_end: word(mac::BUFFER_BASE + mac::BUFFER_SIZE),
            spi_flash_base: word(spi_flash::LAYOUT.base),
            spi_flash_bytes: Constant::new(bits(u64::from(SPI_FLASH_BYTES))),
            spi_flash_buffer_base: word(spi_flash::BUFFER_LAYOUT.base),
            mdio_base: word(mdio::LAYOUT.base),
            mdio_bytes: Constant::new(bits(u64::from(MDIO_BYTES))),
            csr_base: word(CSR_BASE),
            csr_mask: word(!(CSR_SIZE - 1)),
        }
    }
}

impl Logic for DataDecoder {
    #[hdl_gen]
    fn update(&mut self) {
        self.whole_word.next = self.byte_enable.val() == self.all_lanes.val();
        self.block.next = self.address.val() & self.block_mask.val();
        self.offset.next = self.address.val().get_bits::<8>(0);
        self.dram.next = (self.address.val() & self.dram_mask.val()) == self.dram_base.val();
        self.iram.next = (self.address.val() & self.iram_mask.val()) == self.iram_base.val();
        self.boot.next = (self.address.val() & self.boot_mask.val()) == self.boot_base.val();
        self.uart.next = self.whole_word.val()
            && self.block.val() == self.uart_base.val()
            && self.offset.val() < self.uart_bytes.val();
        self.timer.next = self.whole_word.val()
            && self.block.val() == self.timer_base.val()
            && self.offset.val() < self.timer_bytes.val();
        self.gpio.next = self.whole_word.val()
            && self.block.val() == self.gpio_base.val()
            && self.offset.val() < self.gpio_bytes.val();
        self.watchdog.next = self.whole_word.val()
            && self.block.val() == self.watchdog_base.val()
            && self.offset.val() < self.watchdog_bytes.val();
        self.mac.next = self.whole_word.val()
            && ((self.block.val() == self.mac_base.val()
                && self.offset.val() < self.mac_bytes.val())
                || (self.block.val() == self.mac_rx_descriptors_base.val()
                    && self.offset.val() < self.mac_rx_descriptor_bytes.val())
                || (self.block.val() == self.mac_tx_descriptors_base.val()
                    && self.offset.val() < self.mac_tx_descriptor_bytes.val())
                || (self.address.val() >= self.mac_buffer_base.val()
                    && self.address.val() < self.mac_buffer_end.val()));
        // The page buffer fills its block, so any offset in it decodes.
        self.spi_flash.next = self.whole_word.val()
            && ((self.block.val() == self.spi_flash_base.val()
                && self.offset.val() < self.spi_flash_bytes.val())
                || self.block.val() == self.spi_flash_buffer_base.val());
        self.mdio.next = self.whole_word.val()
            && self.block.val() == self.mdio_base.val()
            && self.offset.val() < self.mdio_bytes.val();
        self.csr.next = self.whole_word.val()
            && (self.address.val() & self.csr_mask.val()) == self.csr_base.val();
        self.fault.next = (self.read.val() || self.write.val())
            && !(self.dram.val()
                || (self.write.val() && self.iram.val())
                || (self.read.val() && self.boot.val())
                || self.uart.val()
                || self.timer.val()
                || self.gpio.val()
                || self.watchdog.val()
                || self.mac.val()
                || self.spi_flash.val()
                || self.mdio.val()
                || self.csr.val());
    }
}
