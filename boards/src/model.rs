//! The board data model: what a board's TOML file says, as Rust types.
//!
//! Every fact carries the id of the document it comes from (`source`) and a
//! `verify` flag for facts not yet checked against that document. A pin that
//! no cited document gives is written `"TODO"` and becomes [`Pin::Todo`].

use std::collections::BTreeMap;

use serde::Deserialize;

/// One board: its device, PCIe hard IPs, clocks, resets and peripherals.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Board {
    /// Identity of the board and its FPGA.
    pub board: BoardInfo,
    /// The documents the facts below are taken from.
    #[serde(rename = "source", default)]
    pub sources: Vec<Source>,
    /// The PCIe hard IPs weft uses, in switch port order.
    #[serde(rename = "hard_ip", default)]
    pub hard_ips: Vec<HardIp>,
    /// Clock inputs.
    #[serde(rename = "clock", default)]
    pub clocks: Vec<Clock>,
    /// The PLL that makes weft's clocks from one of the clock inputs.
    pub pll: PllInput,
    /// Reset inputs.
    #[serde(rename = "reset", default)]
    pub resets: Vec<Reset>,
    /// The Ethernet PHY of the management port.
    pub ethernet: Option<Ethernet>,
    /// The configuration flash.
    pub flash: Option<Flash>,
    /// User LEDs, in the order weft's LED outputs drive them.
    #[serde(rename = "led", default)]
    pub leds: Vec<Led>,
    /// The console UART.
    pub uart: Option<Uart>,
}

impl Board {
    /// The flash, where its signals sit on user pins the wrapper's ports
    /// and the constraints place; `None` without a flash or where
    /// `STARTUPE3` reaches it.
    pub fn flash_on_pins(&self) -> Option<&Flash> {
        self.flash
            .as_ref()
            .filter(|f| f.access == FlashAccess::Pins)
    }

    /// The console UART, where it sits on user pins the wrapper's ports
    /// and the constraints place; `None` without one or over JTAG.
    pub fn uart_on_pins(&self) -> Option<&Uart> {
        self.uart.as_ref().filter(|u| u.link == UartLink::Pins)
    }

    /// Whether the console runs over the FPGA's JTAG port.
    pub fn console_over_jtag(&self) -> bool {
        self.uart.as_ref().is_some_and(|u| u.link == UartLink::Jtag)
    }

    /// Whether the wrapper reaches the flash through `STARTUPE3`.
    pub fn flash_through_startupe3(&self) -> bool {
        self.flash
            .as_ref()
            .is_some_and(|f| f.access == FlashAccess::Startupe3)
    }
}

/// The board's identity and its FPGA.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardInfo {
    /// Short name: the data file's stem and `cargo xtask board <name>`.
    pub name: String,
    /// The vendor's full name of the kit.
    pub title: String,
    /// FPGA vendor, which picks the tool flow.
    pub vendor: Vendor,
    /// The kit's ordering code.
    pub kit: String,
    /// The FPGA's full part number, as the vendor tools take it.
    pub device: String,
    /// The device family, as the vendor tools name it.
    pub family: String,
    /// The name openFPGALoader gives this board (`-b`), where it supports it.
    pub openfpgaloader: Option<String>,
    /// Source of the identity facts.
    pub source: String,
}

/// An FPGA vendor, which decides the tool flow and the constraint format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// Intel (Altera): Quartus Prime Pro, `.qsf`/`.sdc`, `quartus_pgm`.
    Intel,
    /// AMD (Xilinx): Vivado, `.xdc`, Vivado's hardware manager.
    Xilinx,
}

/// A document that facts in the board file are taken from.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The id facts use to cite this document.
    pub id: String,
    /// The document's title.
    pub document: String,
    /// The vendor's document number (for example `683561` or `UG1224`).
    pub number: String,
    /// Where the public copy is.
    pub url: Option<String>,
}

/// Which PCIe hard IP block a port uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HardIpKind {
    /// Intel P-tile (Stratix 10 DX, Agilex 7 F-Series), Gen4.
    PTile,
    /// Intel F-tile (Agilex 7), Gen4.
    FTile,
    /// Intel R-tile (Agilex 7 I-Series and M-Series), Gen5.
    RTile,
    /// Xilinx UltraScale+ PCIE4 (PCIE40E4), Gen3.
    Pcie4,
    /// Xilinx UltraScale+ PCIE4C (PCIE4CE4), Gen4.
    Pcie4c,
}

/// What a hard IP is to the PCIe hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Host-facing port of weft's virtual switch: the host enumerates a
    /// Type 1 upstream port here, which needs TLP bypass.
    SwitchUpstream,
    /// Device-facing port of the switch (a Type 1 downstream port), in TLP bypass.
    SwitchDownstream,
    /// A root port that weft drives as a fabric-side port.
    RootPort,
    /// A Type 0 endpoint: the synthetic host-facing device where the hard IP
    /// cannot present a switch.
    Endpoint,
}

impl Role {
    /// Whether a host sits on the far side of this port.
    pub const fn faces_host(self) -> bool {
        matches!(self, Role::SwitchUpstream | Role::Endpoint)
    }
}

/// One PCIe hard IP instance used as a weft switch port.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardIp {
    /// The port's name; the generated IP variant is `weft_hip_<name>`.
    pub name: String,
    /// The hard IP block.
    pub kind: HardIpKind,
    /// The tile (or block) it sits in: instances on one tile share its lanes.
    pub tile: String,
    /// What the port is to the hierarchy.
    pub role: Role,
    /// The board connector its lanes reach.
    pub connector: String,
    /// Configured link width.
    pub lanes: u8,
    /// Highest PCIe generation configured.
    pub gen: u8,
    /// Width of the TLP data bus the IP presents to user logic, in bits.
    pub data_bits: u32,
    /// Segments the data bus is split into (TLPs may start in each).
    pub segments: u8,
    /// Frequency of the IP's application clock, in MHz.
    pub clock_mhz: u32,
    /// The clock (by name) that is this IP's PCIe reference clock.
    pub refclk: String,
    /// The clock (by name) on the tile's second reference clock input
    /// (`refclk1` of Intel tiles), where the board gives it a pin of its
    /// own; without it `refclk` drives both inputs.
    pub refclk1: Option<String>,
    /// The reset (by name) that is this port's PERST#, where the board wires one.
    pub perst: Option<String>,
    /// Source of these facts.
    pub source: String,
    /// Not yet checked against the source.
    #[serde(default)]
    pub verify: bool,
}

/// A package pin, or the explicit statement that it is not known yet.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(from = "String")]
pub enum Pin {
    /// A package pin (ball) name, as the vendor tools take it.
    Known(String),
    /// Not in any document cited yet: `"TODO"` in the data file.
    Todo,
}

impl From<String> for Pin {
    fn from(text: String) -> Self {
        if text == "TODO" {
            Pin::Todo
        } else {
            Pin::Known(text)
        }
    }
}

impl Default for Pin {
    /// A pin the board file leaves out is not known.
    fn default() -> Self {
        Pin::Todo
    }
}

impl Pin {
    /// The pin name, if known.
    pub fn known(&self) -> Option<&str> {
        match self {
            Pin::Known(name) => Some(name),
            Pin::Todo => None,
        }
    }
}

/// A clock input.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clock {
    /// Port name in the generated top level.
    pub name: String,
    /// Frequency in MHz.
    pub mhz: f64,
    /// The (positive) pin.
    pub pin: Pin,
    /// The negative pin of a differential pair, where the tool wants it named.
    pub pin_n: Option<Pin>,
    /// I/O standard.
    pub io_standard: String,
    /// Source of these facts.
    pub source: String,
    /// Not yet checked against the source.
    #[serde(default)]
    pub verify: bool,
}

/// Which clock input feeds the PLL that makes weft's data plane and soft
/// core clocks (their frequencies come from `weft_regs`, the PLL's ranges
/// from [`crate::pll`]).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PllInput {
    /// The clock (by name) that is the PLL's reference.
    pub refclk: String,
    /// Source of the choice: the document that places that clock on a
    /// pin the PLL can take.
    pub source: String,
}

/// A reset input.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reset {
    /// Port name in the generated top level.
    pub name: String,
    /// The pin.
    pub pin: Pin,
    /// Low means reset.
    pub active_low: bool,
    /// I/O standard.
    pub io_standard: String,
    /// Source of these facts.
    pub source: String,
    /// Not yet checked against the source.
    #[serde(default)]
    pub verify: bool,
}

/// How the management Ethernet PHY connects to the FPGA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EthernetInterface {
    /// SGMII over LVDS or a transceiver.
    Sgmii,
    /// RGMII.
    Rgmii,
    /// Not yet known: the checker reports it.
    Todo,
}

/// The management port's Ethernet PHY.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ethernet {
    /// The PHY interface.
    pub interface: EthernetInterface,
    /// The PHY part.
    pub phy: String,
    /// Its pins.
    #[serde(rename = "pin", default)]
    pub pins: Vec<NamedPin>,
    /// For SGMII on LVDS SelectIO pins rather than a transceiver: what
    /// Xilinx's PCS/PMA needs to know of the board (see [`crate::ethernet`]).
    pub lvds: Option<SgmiiLvds>,
    /// Source of these facts.
    pub source: String,
    /// Not yet checked against the source.
    #[serde(default)]
    pub verify: bool,
}

/// SGMII on LVDS SelectIO pins: the settings of Xilinx's 1G/2.5G Ethernet
/// PCS/PMA or SGMII IP (PG047, "Asynchronous 1000BASE-X/SGMII over LVDS",
/// UltraScale and UltraScale+) that follow from the board.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SgmiiLvds {
    /// Frequency of the clock on the `sgmii_clk` pins, the IP's
    /// `LvdsRefClk`, in MHz.
    pub refclk_mhz: f64,
    /// Where the transmit pair sits in its nibble (`TxLane0_Placement`,
    /// for example `DIFF_PAIR_2`).
    pub tx_lane: String,
    /// Where the receive pair sits in its nibble (`RxLane0_Placement`).
    pub rx_lane: String,
    /// Whether the transmit pair is in the upper nibble of its byte group
    /// (`Tx_In_Upper_Nibble`).
    pub tx_in_upper_nibble: bool,
    /// Source of these facts.
    pub source: String,
}

/// A named pin of a peripheral.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedPin {
    /// The signal's name.
    pub name: String,
    /// The pin.
    pub pin: Pin,
    /// I/O standard.
    pub io_standard: String,
    /// Further I/O properties, by the vendor's constraint names (Vivado's
    /// `DIFF_TERM_ADV` for an input's on-die termination, say), where the
    /// board needs them: written beside the pin's I/O standard.
    #[serde(default)]
    pub properties: BTreeMap<String, String>,
}

/// How the FPGA's user logic reaches the flash's four SPI signals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlashAccess {
    /// On user I/O pins, which the board file names (`sclk`, `cs_n`,
    /// `mosi`, `miso`).
    #[default]
    Pins,
    /// On the FPGA's dedicated configuration pins, which user logic drives
    /// only through the `STARTUPE3` primitive (UltraScale and UltraScale+:
    /// UltraScale Architecture Configuration User Guide UG570, "STARTUPE3
    /// Connections to Dedicated Pins"): CCLK from `USRCCLKO`, FCS_B from
    /// `FCSBO`, D00 (the flash's DQ0, MOSI) from `DO[0]`, D01 (DQ1, MISO)
    /// to `DI[1]`. None of the four is a user pin, so the board file names
    /// none.
    Startupe3,
    /// No flash reaches user logic: the board's flash belongs to another
    /// device (the Intel kits' configuration flash is their MAX 10 system
    /// controller's). The wrapper holds the chip's MISO low, so the soft
    /// core finds an empty part that never latches Write Enable: the boot
    /// loader starts the image the bitstream carries, the firmware runs on
    /// its built-in settings, and saving settings or a firmware update
    /// fails at once with an error. The board file names no pins.
    Absent,
}

/// The SPI flash that holds weft's persistent configuration (the soft
/// core's `SpiFlashController` in single-bit SPI mode), as the FPGA's user
/// logic reaches it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flash {
    /// Interface, for example `qspi`.
    pub kind: String,
    /// The flash part.
    pub part: String,
    /// How user logic reaches the four signals: user pins (the default)
    /// or the `STARTUPE3` primitive.
    #[serde(default)]
    pub access: FlashAccess,
    /// The FPGA pin driving the flash's serial clock.
    #[serde(default)]
    pub sclk: Pin,
    /// The FPGA pin driving the flash's chip select (active low).
    #[serde(default)]
    pub cs_n: Pin,
    /// The FPGA pin driving the flash's serial data input (DQ0).
    #[serde(default)]
    pub mosi: Pin,
    /// The FPGA pin reading the flash's serial data output (DQ1).
    #[serde(default)]
    pub miso: Pin,
    /// I/O standard of the four pins, where known (user pins only: the
    /// dedicated configuration pins take the configuration voltage).
    pub io_standard: Option<String>,
    /// Source of these facts.
    pub source: String,
    /// Not yet checked against the source.
    #[serde(default)]
    pub verify: bool,
}

/// A user LED.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Led {
    /// The LED's name.
    pub name: String,
    /// The pin.
    pub pin: Pin,
    /// I/O standard.
    pub io_standard: String,
    /// The LED lights when its pin is driven low: the wrapper inverts
    /// `weft_chip`'s output for it, so a high `led` bit lights it on every
    /// board.
    #[serde(default)]
    pub active_low: bool,
    /// Source of these facts.
    pub source: String,
    /// Not yet checked against the source.
    #[serde(default)]
    pub verify: bool,
}

/// How the console reaches the engineer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UartLink {
    /// On two user pins (`tx`, `rx`), to the board's USB-UART bridge.
    #[default]
    Pins,
    /// Over the FPGA's JTAG port and the board's download cable, through
    /// Intel's JTAG UART channel (`boards/src/jtag_console.v`), for an
    /// Intel board whose UART reaches no FPGA pin; `juart-terminal` on the
    /// host is the console. No pins.
    Jtag,
}

/// The console UART, as seen from the FPGA.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Uart {
    /// How the console reaches the engineer: user pins (the default) or JTAG.
    #[serde(default)]
    pub link: UartLink,
    /// The FPGA's transmit pin (pins only).
    #[serde(default)]
    pub tx: Pin,
    /// The FPGA's receive pin (pins only).
    #[serde(default)]
    pub rx: Pin,
    /// I/O standard of the pins (pins only).
    pub io_standard: Option<String>,
    /// Source of these facts.
    pub source: String,
    /// Not yet checked against the source.
    #[serde(default)]
    pub verify: bool,
}
