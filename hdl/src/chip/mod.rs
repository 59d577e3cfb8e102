//! `weft_chip`: the whole switch in one design, the data plane and its soft core.
//!
//! [`Chip`] is what a board's top level (`boards/`, `weft_board_top`)
//! instantiates around its PCIe hard IPs: the data plane ([`SwitchTop`])
//! on `clock`, the soft core's SoC ([`Soc`]) on `core_clock`, which the
//! same PLL makes at `weft_regs::SOFT_CORE_CLOCK_DIVISOR` times slower and
//! edge-aligned, and between them the [`CsrClockBridge`] that carries the
//! core's register accesses onto the data plane's clock. The data plane's
//! interrupt reaches the core as a level, sampled on `core_clock`.
//!
//! Its outside is the interface `boards` lints the wrapper against: per
//! port an `ingress` TLP sink and an `egress` TLP source (rust-hdl names
//! them `ingress$p$valid` …), the console's serial line (`uart_rx`,
//! `uart_tx`, 8N1 through [`SerialReceiver`] and [`SerialTransmitter`]),
//! the GPIO's low 8 outputs as `led`, the SPI flash pins, and the
//! management Ethernet MAC's MII (IEEE 802.3 clause 22) as `mii_*`, which
//! the board's wrapper connects to its PHY (`boards/`: on the VCU118
//! through an MII-to-GMII adapter and the SGMII PCS/PMA), and the MDIO
//! master's management interface to that PHY (IEEE 802.3 §22.2.4) as
//! `mdc` and `mdio_o`/`mdio_oe`/`mdio_i`, the three halves of one
//! open-drain line the wrapper joins in a bidirectional buffer.
//!
//! - `reset` holds the data plane's links: while it is high no beat is
//!   taken from an ingress and none offered on an egress (the data
//!   plane's registers start in their initial values, rust-hdl having no
//!   reset). `core_reset` is the SoC's power-on reset.
//! - Each egress starts a TLP of a class only while its bit of
//!   `egress_credit_posted`, `egress_credit_non_posted` or
//!   `egress_credit_completion` is high, and reports what each TLP it
//!   commits takes on `egress_consume$p` and `egress_consume_dws$p`
//!   ([`SwitchTop`]): the board's adapter counts that against the credit
//!   limits its hard IP reports and keeps the bits (`boards/src/credit.v`),
//!   before the FIFO that carries TLPs to the hard IP, so a TLP never
//!   waits in it for credit and a posted TLP never waits behind a
//!   non-posted one that has none (PCIe Base 6.0 §2.4.1).
//! - The MII pins belong to `core_clock`'s side: the MAC samples
//!   `mii_rx_clk` and `mii_tx_clk` as data on the SoC clock and acts on
//!   their rising edges, so they must run at most a quarter of the core
//!   clock (25 MHz for 100 Mb/s against the 125 MHz core clock, see
//!   [`crate::soc::EthernetMac`]).
//! - `link_up` says which ports' links are up, for the firmware to read on
//!   the SoC's GPIO inputs (`weft_regs::soc::gpio::INPUT`), with the inputs'
//!   LINKS_REPORTED bit set: the board's adapter drives it from each hard
//!   IP's flow control state (`boards/README.md`, "A link without flow
//!   control").
//! - A write of a port's LINK register leaves as a one-cycle pulse on
//!   `link_hot_reset$p` or `link_retrain$p`, on `clock`: the board's
//!   adapter carries it into its hard IP's clock through a pulse
//!   synchronizer and makes of it what the hard IP offers for the port's
//!   role (`boards/README.md`, "Hot reset and retrain").

pub mod bridge;

use rust_hdl::prelude::*;
use weft_regs::soc::gpio;

pub use bridge::CsrClockBridge;

use crate::soc::{MemoryImage, SerialReceiver, SerialTransmitter, Soc, SocError};
use crate::stream::{TlpSink, TlpSource};
use crate::switching::LENGTH_BITS;
use crate::top::SwitchTop;

/// GPIO outputs that leave the chip as LEDs.
pub const LEDS: usize = 8;

/// The switch of `N` ports of `W`-bit payload and its soft core.
#[derive(LogicBlock)]
pub struct Chip<const W: usize, const N: usize> {
    /// The data plane's clock.
    pub clock: Signal<In, Clock>,
    /// Holds the data plane's links while high.
    pub reset: Signal<In, Bit>,
    /// The soft core's clock: edge-aligned with `clock`, an integer fraction of it.
    pub core_clock: Signal<In, Clock>,
    /// The SoC's power-on reset, synchronous to `core_clock`.
    pub core_reset: Signal<In, Bit>,
    /// TLPs arriving from each port's link.
    pub ingress: [TlpSink<W>; N],
    /// TLPs leaving on each port's link.
    pub egress: [TlpSource<W>; N],
    /// The console's serial line in.
    pub uart_rx: Signal<In, Bit>,
    /// The console's serial line out.
    pub uart_tx: Signal<Out, Bit>,
    /// The GPIO's low outputs, for the board's LEDs.
    pub led: Signal<Out, Bits<LEDS>>,
    /// SPI flash serial clock.
    pub flash_sclk: Signal<Out, Bit>,
    /// SPI flash chip select, active low.
    pub flash_cs_n: Signal<Out, Bit>,
    /// SPI flash data to the part.
    pub flash_mosi: Signal<Out, Bit>,
    /// SPI flash data from the part.
    pub flash_miso: Signal<In, Bit>,
    /// MII receive clock (25 MHz at 100 Mb/s), sampled on `core_clock`.
    pub mii_rx_clk: Signal<In, Bit>,
    /// MII receive data valid.
    pub mii_rx_dv: Signal<In, Bit>,
    /// MII receive error.
    pub mii_rx_er: Signal<In, Bit>,
    /// MII receive data, a nibble per `mii_rx_clk`, low nibble of a byte first.
    pub mii_rxd: Signal<In, Bits<4>>,
    /// MII transmit clock (25 MHz at 100 Mb/s), sampled on `core_clock`.
    pub mii_tx_clk: Signal<In, Bit>,
    /// MII transmit enable.
    pub mii_tx_en: Signal<Out, Bit>,
    /// MII transmit data, a nibble per `mii_tx_clk`, low nibble of a byte first.
    pub mii_txd: Signal<Out, Bits<4>>,
    /// MDIO management data clock to the PHY (IEEE 802.3 §22.2.2.13).
    pub mdc: Signal<Out, Bit>,
    /// The level the MDIO master drives while `mdio_oe` is high.
    pub mdio_o: Signal<Out, Bit>,
    /// The MDIO master drives MDIO; low, the buffer releases the line.
    pub mdio_oe: Signal<Out, Bit>,
    /// MDIO's level at the pin.
    pub mdio_i: Signal<In, Bit>,
    /// Bit `p`: port `p`'s link partner has a header credit and data
    /// credits for the largest posted TLP ([`SwitchTop::egress_credit_posted`]).
    pub egress_credit_posted: Signal<In, Bits<N>>,
    /// Bit `p`: likewise for a non-posted TLP.
    pub egress_credit_non_posted: Signal<In, Bits<N>>,
    /// Bit `p`: likewise for a completion.
    pub egress_credit_completion: Signal<In, Bits<N>>,
    /// Per port: a one-cycle pulse on the class bit of each TLP the egress
    /// commits (bit 0 posted, 1 non-posted, 2 completion), for the
    /// adapter's count of the credit consumed.
    pub egress_consume: [Signal<Out, Bits<3>>; N],
    /// Per port, with `egress_consume`: the TLP's data length in DW.
    pub egress_consume_dws: [Signal<Out, Bits<LENGTH_BITS>>; N],
    /// Per port: a one-cycle pulse on the class bit of a TLP reported on
    /// `egress_consume` that the egress then discarded
    /// ([`SwitchTop::egress_refund`]): the adapter takes its credit back.
    pub egress_refund: [Signal<Out, Bits<3>>; N],
    /// Per port, with `egress_refund`: the TLP's data length in DW.
    pub egress_refund_dws: [Signal<Out, Bits<LENGTH_BITS>>; N],
    /// Per port: a one-cycle pulse on `clock` asking the port's hard IP
    /// for a hot reset ([`SwitchTop::link_hot_reset`]), which the board's
    /// adapter carries into the hard IP's clock and holds there.
    pub link_hot_reset: [Signal<Out, Bit>; N],
    /// Per port: a one-cycle pulse on `clock` asking the port's hard IP
    /// to retrain its link ([`SwitchTop::link_retrain`]).
    pub link_retrain: [Signal<Out, Bit>; N],
    /// Bit `p`: port `p`'s link is up, its flow control initialized, as the
    /// board's adapter reports it; the soft core reads it on its GPIO
    /// inputs (`weft_regs::soc::gpio::INPUT_LINK_UP`), synchronized there.
    pub link_up: Signal<In, Bits<N>>,
    /// The data plane (public so that test benches reach its CSR bus).
    pub data_plane: SwitchTop<W, N>,
    /// The soft core's SoC (public so that test benches read its trace).
    pub soc: Soc,
    /// The GPIO inputs' LINKS_REPORTED bit.
    links_reported: Constant<Bits<32>>,
    bridge: CsrClockBridge,
    transmitter: SerialTransmitter,
    receiver: SerialReceiver,
}

impl<const W: usize, const N: usize> Chip<W, N> {
    /// The chip with the SoC's memories holding `image`, its console at
    /// `cycles_per_bit` core clock cycles per bit, and the data plane's
    /// microseconds counted at `clock_mhz` (`SwitchTop::with_clock_mhz`).
    pub fn new(image: &MemoryImage, cycles_per_bit: u32, clock_mhz: u32) -> Result<Self, SocError> {
        Ok(Chip {
            clock: Default::default(),
            reset: Default::default(),
            core_clock: Default::default(),
            core_reset: Default::default(),
            ingress: std::array::from_fn(|_| Default::default()),
            egress: std::array::from_fn(|_| Default::default()),
            uart_rx: Default::default(),
            uart_tx: Default::default(),
            led: Default::default(),
            flash_sclk: Default::default(),
            flash_cs_n: Default::default(),
            flash_mosi: Default::default(),
            flash_miso: Default::default(),
            mii_rx_clk: Default::default(),
            mii_rx_dv: Default::default(),
            mii_rx_er: Default::default(),
            mii_rxd: Default::default(),
            mii_tx_clk: Default::default(),
            mii_tx_en: Default::default(),
            mii_txd: Default::default(),
            mdc: Default::default(),
            mdio_o: Default::default(),
            mdio_oe: Default::default(),
            mdio_i: Default::default(),
            egress_credit_posted: Default::default(),
            egress_credit_non_posted: Default::default(),
            egress_credit_completion: Default::default(),
            egress_consume: std::array::from_fn(|_| Default::default()),
            egress_consume_dws: std::array::from_fn(|_| Default::default()),
            egress_refund: std::array::from_fn(|_| Default::default()),
            egress_refund_dws: std::array::from_fn(|_| Default::default()),
            link_hot_reset: std::array::from_fn(|_| Default::default()),
            link_retrain: std::array::from_fn(|_| Default::default()),
            link_up: Default::default(),
            links_reported: Constant::new(bits(u64::from(gpio::INPUT_LINKS_REPORTED.encode(1)))),
            data_plane: SwitchTop::with_clock_mhz(clock_mhz),
            soc: Soc::new(image)?,
            bridge: Default::default(),
            transmitter: SerialTransmitter::new(cycles_per_bit),
            receiver: SerialReceiver::new(cycles_per_bit),
        })
    }

    /// The chip with its SoC's memories read from `$readmemh` files named
    /// after `stem` (`Soc::with_memory_files`).
    pub fn with_memory_files(mut self, stem: &str) -> Self {
        self.soc = self.soc.with_memory_files(stem);
        self
    }
}

impl<const W: usize, const N: usize> Logic for Chip<W, N> {
    #[hdl_gen]
    fn update(&mut self) {
        self.data_plane.clock.next = self.clock.val();
        self.soc.clock.next = self.core_clock.val();
        self.bridge.clock.next = self.clock.val();
        self.bridge.core_clock.next = self.core_clock.val();
        self.transmitter.clock.next = self.core_clock.val();
        self.receiver.clock.next = self.core_clock.val();
        self.soc.reset.next = self.core_reset.val();

        for i in 0..N {
            self.data_plane.ingress[i].valid.next = self.ingress[i].valid.val() & !self.reset.val();
            self.data_plane.ingress[i].sop.next = self.ingress[i].sop.val();
            self.data_plane.ingress[i].eop.next = self.ingress[i].eop.val();
            self.data_plane.ingress[i].empty.next = self.ingress[i].empty.val();
            self.data_plane.ingress[i].nullify.next = self.ingress[i].nullify.val();
            self.data_plane.ingress[i].dw0.next = self.ingress[i].dw0.val();
            self.data_plane.ingress[i].dw1.next = self.ingress[i].dw1.val();
            self.data_plane.ingress[i].dw2.next = self.ingress[i].dw2.val();
            self.data_plane.ingress[i].dw3.next = self.ingress[i].dw3.val();
            self.data_plane.ingress[i].payload.next = self.ingress[i].payload.val();
            self.ingress[i].ready.next = self.data_plane.ingress[i].ready.val() & !self.reset.val();
            self.egress[i].valid.next = self.data_plane.egress[i].valid.val() & !self.reset.val();
            self.egress[i].sop.next = self.data_plane.egress[i].sop.val();
            self.egress[i].eop.next = self.data_plane.egress[i].eop.val();
            self.egress[i].empty.next = self.data_plane.egress[i].empty.val();
            self.egress[i].nullify.next = self.data_plane.egress[i].nullify.val();
            self.egress[i].dw0.next = self.data_plane.egress[i].dw0.val();
            self.egress[i].dw1.next = self.data_plane.egress[i].dw1.val();
            self.egress[i].dw2.next = self.data_plane.egress[i].dw2.val();
            self.egress[i].dw3.next = self.data_plane.egress[i].dw3.val();
            self.egress[i].payload.next = self.data_plane.egress[i].payload.val();
            self.data_plane.egress[i].ready.next = self.egress[i].ready.val() & !self.reset.val();
            self.link_hot_reset[i].next = self.data_plane.link_hot_reset[i].val();
            self.link_retrain[i].next = self.data_plane.link_retrain[i].val();
            self.egress_consume[i].next = self.data_plane.egress_consume[i].val();
            self.egress_consume_dws[i].next = self.data_plane.egress_consume_dws[i].val();
            self.egress_refund[i].next = self.data_plane.egress_refund[i].val();
            self.egress_refund_dws[i].next = self.data_plane.egress_refund_dws[i].val();
        }
        self.data_plane.egress_credit_posted.next = self.egress_credit_posted.val();
        self.data_plane.egress_credit_non_posted.next = self.egress_credit_non_posted.val();
        self.data_plane.egress_credit_completion.next = self.egress_credit_completion.val();

        // The soft core's registers accesses, onto the data plane's clock.
        self.bridge.core.address.next = self.soc.csr.address.val();
        self.bridge.core.write.next = self.soc.csr.write.val();
        self.bridge.core.write_data.next = self.soc.csr.write_data.val();
        self.bridge.core.read.next = self.soc.csr.read.val();
        self.soc.csr.read_valid.next = self.bridge.core.read_valid.val();
        self.soc.csr.read_data.next = self.bridge.core.read_data.val();
        self.data_plane.csr.address.next = self.bridge.data_plane.address.val();
        self.data_plane.csr.write.next = self.bridge.data_plane.write.val();
        self.data_plane.csr.write_data.next = self.bridge.data_plane.write_data.val();
        self.data_plane.csr.read.next = self.bridge.data_plane.read.val();
        self.bridge.data_plane.read_valid.next = self.data_plane.csr.read_valid.val();
        self.bridge.data_plane.read_data.next = self.data_plane.csr.read_data.val();
        self.soc.data_plane_irq.next = self.data_plane.irq.val();

        // The console, the LEDs, the flash and the management Ethernet.
        self.transmitter.data.next = self.soc.tx_data.val();
        self.transmitter.valid.next = self.soc.tx_valid.val();
        self.soc.tx_ready.next = self.transmitter.ready.val();
        self.uart_tx.next = self.transmitter.txd.val();
        self.receiver.rxd.next = self.uart_rx.val();
        self.soc.rx_data.next = self.receiver.data.val();
        self.soc.rx_valid.next = self.receiver.valid.val();
        // The ports' links on the GPIO inputs, LINKS_REPORTED set.
        self.soc.gpio_inputs.next =
            self.links_reported.val() | bit_cast::<32, N>(self.link_up.val());
        self.led.next = self.soc.gpio_outputs.val().get_bits::<LEDS>(0);
        self.flash_sclk.next = self.soc.flash_sclk.val();
        self.flash_cs_n.next = self.soc.flash_cs_n.val();
        self.flash_mosi.next = self.soc.flash_mosi.val();
        self.soc.flash_miso.next = self.flash_miso.val();
        self.soc.mii_rx_clk.next = self.mii_rx_clk.val();
        self.soc.mii_rx_dv.next = self.mii_rx_dv.val();
        self.soc.mii_rx_er.next = self.mii_rx_er.val();
        self.soc.mii_rxd.next = self.mii_rxd.val();
        self.soc.mii_tx_clk.next = self.mii_tx_clk.val();
        self.mii_tx_en.next = self.soc.mii_tx_en.val();
        self.mii_txd.next = self.soc.mii_txd.val();
        self.mdc.next = self.soc.mdc.val();
        self.mdio_o.next = self.soc.mdio_out.val();
        self.mdio_oe.next = self.soc.mdio_out_enable.val();
        self.soc.mdio_in.next = self.mdio_i.val();
    }
}
