//! The management Ethernet port: `weft_chip`'s MII to the board's PHY.
//!
//! weft's soft core has a 10/100 Mb/s MAC with an MII (IEEE 802.3 clause
//! 22), which `weft_chip` brings out as `mii_*` ([`MII_PORTS`]). How it
//! reaches the PHY is the board's ([`management`]):
//!
//! - **SGMII on LVDS SelectIO** (the VCU118's DP83867, on HP I/O, not a
//!   transceiver): Xilinx's 1G/2.5G Ethernet PCS/PMA or SGMII IP (PG047)
//!   in its "Asynchronous 1000BASE-X/SGMII over LVDS" form for UltraScale
//!   and UltraScale+, SGMII at 10/100/1000 Mb/s with auto-negotiation,
//!   its shared logic (the clocking from the PHY's SGMII clock) inside the
//!   core. The project script generates it as [`PCS_PMA_MODULE`]
//!   ([`vivado_ip`]); the wrapper treats it as a black box with its own
//!   port names ([`PCS_PMA_PORTS`]) inside [`SGMII_MODULE`]
//!   ([`sgmii_module`]), beside the MII-to-GMII adapter
//!   (`weft_board_mii_gmii`, `mii_gmii.v`).
//! - **None**: the board file gives no interface weft has an adapter for
//!   (the Intel kits' `interface = "todo"`). The MII idles: its clocks and
//!   receive pins are held low, the MAC's transmit pins go nowhere, and
//!   the MAC simply never sees a frame.
//!
//! # Clocking
//!
//! The PCS/PMA's client side is a GMII at 125 MHz (`clk125_out`, from the
//! PHY's 625 MHz SGMII clock) with `sgmii_clk_en` high one cycle in ten at
//! 100 Mb/s, one in a hundred at 10 Mb/s (PG047, "SGMII Adaptation
//! Module"). The adapter runs on that clock and makes the MII's 25 MHz (or
//! 2.5 MHz) clocks as registers, two nibble periods of five (or fifty)
//! cycles per clock-enable period, not with a clock buffer such as
//! `BUFGCE_DIV`: weft's MAC does not clock anything with `mii_rx_clk` or
//! `mii_tx_clk`, it samples them as data on the soft core clock (at least
//! four times faster) through two-flop synchronizers and acts on their
//! rising edges (weft-hdl `soc::EthernetMac`). A clock net would only feed
//! those synchronizers' D inputs and buy nothing. The crossings between
//! the 125 MHz of the SGMII and weft's soft core clock are therefore plain
//! data paths between asynchronous clocks, bounded by `set_max_delay
//! -datapath_only` ([`xdc`]) so the MII timing the adapter keeps (§22.3)
//! survives the routing.
//!
//! # The PHY's management interface
//!
//! The DP83867 puts out its 625 MHz SGMII clock only in its 6-wire mode,
//! which is set over MDIO (TI SNLS504E, "SGMII": 4-wire is the default);
//! the PCS/PMA's clocking, and so the whole port, waits for that clock.
//! `weft_chip` brings its SoC's MDIO master (IEEE 802.3 §22.2.4) out as
//! [`MDIO_PORTS`]: `mdc`, and MDIO as the three halves of a bidirectional
//! pin, `mdio_o` and `mdio_oe` out, `mdio_i` in. [`sgmii_module`] passes
//! MDC to `phy_mdc` and joins the rest in an `IOBUF` on `phy_mdio`
//! (UG974: `T` high releases the pad), and the firmware makes the writes
//! verilog-ethernet's VCU118 design makes, at PHY address 3 through the
//! extended-register window (REGCR 0x0D, ADDAR 0x0E): CFG4 (0x0031) =
//! 0x0070, SGMIICTL1 (0x00D3) = 0x4000 (the SGMII clock output) and
//! 10M_SGMII_CFG (0x016F) = 0x0015, and stops the PHY advertising
//! 1000BASE-T, since the MAC here is 10/100 only (weft-drivers'
//! `dp83867`, boards/README.md). Where the board has no management PHY
//! weft drives, MDC's and MDIO's outputs go nowhere and `mdio_i` reads the
//! idle line's 1, so a read finds nobody.

use std::fmt::Write as _;

use crate::model::{Board, EthernetInterface, SgmiiLvds, Vendor};
use crate::verilog::bit_range as range;

/// Module name of the PCS/PMA variant the project script generates.
pub const PCS_PMA_MODULE: &str = "weft_mgmt_pcs_pma";

/// Module name of the management port's block in the wrapper: the PCS/PMA,
/// the adapter and the PHY's control pins.
pub const SGMII_MODULE: &str = "weft_board_sgmii";

/// Instance name of [`SGMII_MODULE`] in `weft_board_top`.
pub const SGMII_INSTANCE: &str = "mgmt_eth";

/// Instance name of the PCS/PMA inside [`SGMII_MODULE`].
pub const PCS_PMA_INSTANCE: &str = "pcs_pma";

/// `weft_chip`'s MII ports (the SoC's MAC, `hdl/src/chip/mod.rs`): name,
/// whether it goes into the chip, width.
pub const MII_PORTS: &[(&str, bool, u32)] = &[
    ("mii_rx_clk", true, 1),
    ("mii_rx_dv", true, 1),
    ("mii_rx_er", true, 1),
    ("mii_rxd", true, 4),
    ("mii_tx_clk", true, 1),
    ("mii_tx_en", false, 1),
    ("mii_txd", false, 4),
];

/// `weft_chip`'s MDIO ports (the SoC's MDIO master, `hdl/src/soc/mdio.rs`),
/// as [`MII_PORTS`] lists its own: name, whether it goes into the chip,
/// width. MDC, and MDIO's output level, output enable and input level.
pub const MDIO_PORTS: &[(&str, bool, u32)] = &[
    ("mdc", false, 1),
    ("mdio_o", false, 1),
    ("mdio_oe", false, 1),
    (MDIO_IN, true, 1),
];

/// MDIO's input level on `weft_chip`: the one management input whose idle
/// level is 1 (the line's pull-up, IEEE 802.3 §22.2.4.5), not 0.
pub const MDIO_IN: &str = "mdio_i";

/// Every management port of `weft_chip`: the MII's, then MDIO's.
pub fn management_ports() -> impl Iterator<Item = &'static (&'static str, bool, u32)> {
    MII_PORTS.iter().chain(MDIO_PORTS)
}

/// The board pins of SGMII on LVDS, as the board file's `[ethernet]` names
/// them and the wrapper's ports are called: name and direction seen from
/// the FPGA. The PHY's SGMII data pairs and its SGMII clock, its reset
/// (active low) and its management interface (§22.2.4).
pub const SGMII_PINS: &[(&str, &str)] = &[
    ("sgmii_rx_p", "input"),
    ("sgmii_rx_n", "input"),
    ("sgmii_tx_p", "output"),
    ("sgmii_tx_n", "output"),
    ("sgmii_clk_p", "input"),
    ("sgmii_clk_n", "input"),
    ("phy_reset_n", "output"),
    ("phy_mdc", "output"),
    ("phy_mdio", "inout"),
];

/// How a board's management Ethernet reaches `weft_chip`'s MII.
#[derive(Clone, Copy, Debug)]
pub enum Management<'a> {
    /// SGMII on LVDS SelectIO through PG047's PCS/PMA and the adapter.
    SgmiiLvds(&'a SgmiiLvds),
    /// Not connected, and why: the MII idles.
    Absent(&'static str),
}

/// How `board`'s management Ethernet is connected.
pub fn management(board: &Board) -> Management<'_> {
    let Some(ethernet) = &board.ethernet else {
        return Management::Absent("the board file has no [ethernet]");
    };
    match (ethernet.interface, &ethernet.lvds) {
        (EthernetInterface::Sgmii, Some(lvds)) if lvds_capable(board) => {
            Management::SgmiiLvds(lvds)
        }
        (EthernetInterface::Sgmii, _) => Management::Absent(
            "SGMII is generated only on LVDS SelectIO of UltraScale(+) ([ethernet.lvds])",
        ),
        (EthernetInterface::Rgmii, _) => Management::Absent("no RGMII adapter yet"),
        (EthernetInterface::Todo, _) => {
            Management::Absent("ethernet.interface is todo: no management PHY known")
        }
    }
}

/// Whether the board's family has PG047's asynchronous SGMII over LVDS
/// (UltraScale and UltraScale+ SelectIO; PG047, "Asynchronous
/// 1000BASE-X/SGMII over LVDS (Applicable for Non-Versal Devices)").
pub fn lvds_capable(board: &Board) -> bool {
    board.board.vendor == Vendor::Xilinx && board.board.family.contains("UltraScale")
}

/// What the wrapper ties a PCS/PMA port to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcsPmaRole {
    /// A board pin, by its name in [`SGMII_PINS`].
    Pin(&'static str),
    /// The active-high asynchronous reset of the whole core.
    Reset,
    /// The client side's 125 MHz clock.
    Clock,
    /// Its synchronous reset.
    ClockReset,
    /// The rate adaptation's clock enable.
    ClockEnable,
    /// `speed_is_10_100`: high unless the link runs at 1 Gb/s.
    SpeedIs10100,
    /// `speed_is_100`: high at 100 Mb/s.
    SpeedIs100,
    /// A GMII signal of the adapter, by its name there.
    Gmii(&'static str),
    /// The status vector (speed in bits 11:10).
    Status,
    /// An input tied to a constant (its value).
    Tied(u32),
    /// An output weft does not use.
    Unused,
}

/// One port of the PCS/PMA: direction, width, PG047's name, and its role.
#[derive(Clone, Copy, Debug)]
pub struct PcsPmaPort {
    /// `input` or `output`.
    pub dir: &'static str,
    /// Width in bits.
    pub bits: u32,
    /// The IP's name for it.
    pub name: &'static str,
    /// What the wrapper ties it to.
    pub role: PcsPmaRole,
}

const fn port(dir: &'static str, bits: u32, name: &'static str, role: PcsPmaRole) -> PcsPmaPort {
    PcsPmaPort {
        dir,
        bits,
        name,
        role,
    }
}

/// PG047's Configuration Vector: bit 4 Auto-Negotiation Enable set;
/// Isolate (3), Power Down (2), Loopback (1) and Unidirectional (0) clear.
pub const CONFIGURATION_VECTOR: u32 = 0b1_0000;

/// PG047's auto-negotiation advertisement in SGMII MAC mode: Register 4
/// holds the SGMII-defined 0x0001 the MAC sends the PHY.
pub const AN_ADVERTISEMENT: u32 = 0x0001;

/// The ports of the PCS/PMA as PG047 names them for one lane of
/// asynchronous SGMII over LVDS with the shared logic in the core
/// ("Asynchronous SGMII over LVDS Transceiver Interface Ports", "SGMII
/// Ports", "Configuration and Status Ports", "RIU Interface Ports"), the
/// set the VCU118's placement generates (verilog-ethernet's VCU118
/// `fpga.v` connects the same). The ports that would cascade this
/// byte group's BITSLICE_CONTROLs with other users of it take "nothing
/// there": no RIU answer, delay and VTC ready.
pub const PCS_PMA_PORTS: &[PcsPmaPort] = &[
    port("output", 1, "txp_0", PcsPmaRole::Pin("sgmii_tx_p")),
    port("output", 1, "txn_0", PcsPmaRole::Pin("sgmii_tx_n")),
    port("input", 1, "rxp_0", PcsPmaRole::Pin("sgmii_rx_p")),
    port("input", 1, "rxn_0", PcsPmaRole::Pin("sgmii_rx_n")),
    port("input", 1, "refclk625_p", PcsPmaRole::Pin("sgmii_clk_p")),
    port("input", 1, "refclk625_n", PcsPmaRole::Pin("sgmii_clk_n")),
    port("input", 1, "reset", PcsPmaRole::Reset),
    port("output", 1, "clk125_out", PcsPmaRole::Clock),
    port("output", 1, "clk312_out", PcsPmaRole::Unused),
    port("output", 1, "rst_125_out", PcsPmaRole::ClockReset),
    port("output", 1, "tx_logic_reset", PcsPmaRole::Unused),
    port("output", 1, "rx_logic_reset", PcsPmaRole::Unused),
    port("output", 1, "tx_locked", PcsPmaRole::Unused),
    port("output", 1, "rx_locked", PcsPmaRole::Unused),
    port("output", 1, "tx_pll_clk_out", PcsPmaRole::Unused),
    port("output", 1, "rx_pll_clk_out", PcsPmaRole::Unused),
    port("output", 1, "sgmii_clk_r_0", PcsPmaRole::Unused),
    port("output", 1, "sgmii_clk_f_0", PcsPmaRole::Unused),
    port("output", 1, "sgmii_clk_en_0", PcsPmaRole::ClockEnable),
    port("input", 1, "speed_is_10_100_0", PcsPmaRole::SpeedIs10100),
    port("input", 1, "speed_is_100_0", PcsPmaRole::SpeedIs100),
    port("input", 8, "gmii_txd_0", PcsPmaRole::Gmii("gmii_txd")),
    port("input", 1, "gmii_tx_en_0", PcsPmaRole::Gmii("gmii_tx_en")),
    port("input", 1, "gmii_tx_er_0", PcsPmaRole::Gmii("gmii_tx_er")),
    port("output", 8, "gmii_rxd_0", PcsPmaRole::Gmii("gmii_rxd")),
    port("output", 1, "gmii_rx_dv_0", PcsPmaRole::Gmii("gmii_rx_dv")),
    port("output", 1, "gmii_rx_er_0", PcsPmaRole::Gmii("gmii_rx_er")),
    port("output", 1, "gmii_isolate_0", PcsPmaRole::Unused),
    port(
        "input",
        5,
        "configuration_vector_0",
        PcsPmaRole::Tied(CONFIGURATION_VECTOR),
    ),
    port("output", 1, "an_interrupt_0", PcsPmaRole::Unused),
    port(
        "input",
        16,
        "an_adv_config_vector_0",
        PcsPmaRole::Tied(AN_ADVERTISEMENT),
    ),
    port("input", 1, "an_restart_config_0", PcsPmaRole::Tied(0)),
    port("output", 16, "status_vector_0", PcsPmaRole::Status),
    port("input", 1, "signal_detect_0", PcsPmaRole::Tied(1)),
    port("output", 1, "tx_bsc_rst_out", PcsPmaRole::Unused),
    port("output", 1, "rx_bsc_rst_out", PcsPmaRole::Unused),
    port("output", 1, "tx_bs_rst_out", PcsPmaRole::Unused),
    port("output", 1, "rx_bs_rst_out", PcsPmaRole::Unused),
    port("output", 1, "tx_rst_dly_out", PcsPmaRole::Unused),
    port("output", 1, "rx_rst_dly_out", PcsPmaRole::Unused),
    port("output", 1, "tx_bsc_en_vtc_out", PcsPmaRole::Unused),
    port("output", 1, "rx_bsc_en_vtc_out", PcsPmaRole::Unused),
    port("output", 1, "tx_bs_en_vtc_out", PcsPmaRole::Unused),
    port("output", 1, "rx_bs_en_vtc_out", PcsPmaRole::Unused),
    port("output", 1, "riu_clk_out", PcsPmaRole::Unused),
    port("output", 6, "riu_addr_out", PcsPmaRole::Unused),
    port("output", 16, "riu_wr_data_out", PcsPmaRole::Unused),
    port("output", 1, "riu_wr_en_out", PcsPmaRole::Unused),
    port("output", 2, "riu_nibble_sel_out", PcsPmaRole::Unused),
    port("input", 16, "riu_rddata_1", PcsPmaRole::Tied(0)),
    port("input", 1, "riu_valid_1", PcsPmaRole::Tied(0)),
    port("input", 1, "riu_prsnt_1", PcsPmaRole::Tied(0)),
    port("input", 16, "riu_rddata_2", PcsPmaRole::Tied(0)),
    port("input", 1, "riu_valid_2", PcsPmaRole::Tied(0)),
    port("input", 1, "riu_prsnt_2", PcsPmaRole::Tied(0)),
    port("input", 16, "riu_rddata_3", PcsPmaRole::Tied(0)),
    port("input", 1, "riu_valid_3", PcsPmaRole::Tied(0)),
    port("input", 1, "riu_prsnt_3", PcsPmaRole::Tied(0)),
    port("output", 9, "rx_btval_1", PcsPmaRole::Unused),
    port("output", 9, "rx_btval_2", PcsPmaRole::Unused),
    port("output", 9, "rx_btval_3", PcsPmaRole::Unused),
    port("input", 1, "tx_dly_rdy_1", PcsPmaRole::Tied(1)),
    port("input", 1, "rx_dly_rdy_1", PcsPmaRole::Tied(1)),
    port("input", 1, "rx_vtc_rdy_1", PcsPmaRole::Tied(1)),
    port("input", 1, "tx_vtc_rdy_1", PcsPmaRole::Tied(1)),
    port("input", 1, "tx_dly_rdy_2", PcsPmaRole::Tied(1)),
    port("input", 1, "rx_dly_rdy_2", PcsPmaRole::Tied(1)),
    port("input", 1, "rx_vtc_rdy_2", PcsPmaRole::Tied(1)),
    port("input", 1, "tx_vtc_rdy_2", PcsPmaRole::Tied(1)),
    port("input", 1, "tx_dly_rdy_3", PcsPmaRole::Tied(1)),
    port("input", 1, "rx_dly_rdy_3", PcsPmaRole::Tied(1)),
    port("input", 1, "rx_vtc_rdy_3", PcsPmaRole::Tied(1)),
    port("input", 1, "tx_vtc_rdy_3", PcsPmaRole::Tied(1)),
    port("output", 1, "tx_rdclk_out", PcsPmaRole::Unused),
];

/// The wire an unused PCS/PMA output drives inside [`SGMII_MODULE`].
fn unused_net(port: &PcsPmaPort) -> String {
    format!("unused_{}", port.name)
}

/// The module of the management port on SGMII over LVDS: the PCS/PMA
/// ([`PCS_PMA_PORTS`]), the adapter on its client side, and the PHY's
/// reset and management pins. `rst` (active high, asynchronous) resets
/// the PCS/PMA and holds the PHY in reset (the DP83867's RESET_N is
/// active low); the adapter runs on the PCS/PMA's 125 MHz clock and
/// reset. The chip's MDC drives `phy_mdc`, and its MDIO halves meet in an
/// `IOBUF` on `phy_mdio` (see the module docs).
pub fn sgmii_module() -> String {
    let mut v = String::from(
        "// The management Ethernet on SGMII over LVDS SelectIO: Xilinx's PCS/PMA\n\
         // (PG047, generated by project.tcl) and the MII-to-GMII adapter.\n",
    );
    let mut list: Vec<String> = vec!["    input wire rst".to_owned()];
    for (name, dir) in SGMII_PINS {
        list.push(format!("    {dir} wire {name}"));
    }
    for (name, into_chip, bits) in management_ports() {
        let dir = if *into_chip { "output" } else { "input" };
        list.push(format!("    {dir} wire {}{name}", range(*bits)));
    }
    let _ = writeln!(v, "module {SGMII_MODULE} (\n{}\n);", list.join(",\n"));
    let _ = writeln!(
        v,
        "    wire clk;\n    wire clk_rst;\n    wire clk_en;\n    \
         wire [7:0] gmii_txd;\n    wire gmii_tx_en;\n    wire gmii_tx_er;\n    \
         wire [7:0] gmii_rxd;\n    wire gmii_rx_dv;\n    wire gmii_rx_er;\n    \
         /* verilator lint_off UNUSEDSIGNAL */\n    \
         // Of the status only the speed is read.\n    \
         wire [15:0] status;"
    );
    for p in PCS_PMA_PORTS
        .iter()
        .filter(|p| p.role == PcsPmaRole::Unused)
    {
        let _ = writeln!(v, "    wire {}{};", range(p.bits), unused_net(p));
    }
    let _ = writeln!(v, "    /* verilator lint_on UNUSEDSIGNAL */");
    let conns: Vec<String> = PCS_PMA_PORTS
        .iter()
        .map(|p| {
            let to = match p.role {
                PcsPmaRole::Pin(pin) => pin.to_owned(),
                PcsPmaRole::Reset => "rst".to_owned(),
                PcsPmaRole::Clock => "clk".to_owned(),
                PcsPmaRole::ClockReset => "clk_rst".to_owned(),
                PcsPmaRole::ClockEnable => "clk_en".to_owned(),
                PcsPmaRole::SpeedIs10100 => "status[11:10] != 2'b10".to_owned(),
                PcsPmaRole::SpeedIs100 => "status[11:10] == 2'b01".to_owned(),
                PcsPmaRole::Gmii(name) => name.to_owned(),
                PcsPmaRole::Status => "status".to_owned(),
                PcsPmaRole::Tied(value) => format!("{}'d{value}", p.bits),
                PcsPmaRole::Unused => unused_net(p),
            };
            format!("        .{}({to})", p.name)
        })
        .collect();
    let _ = writeln!(
        v,
        "    // PG047 status_vector[11:10] is the speed the PHY announced in\n    \
         // SGMII auto-negotiation; the rate adaptation follows it.\n    \
         {PCS_PMA_MODULE} {PCS_PMA_INSTANCE} (\n{}\n    );",
        conns.join(",\n")
    );
    let mii: Vec<String> = MII_PORTS
        .iter()
        .map(|(name, _, _)| format!(".{name}({name})"))
        .collect();
    let _ = writeln!(
        v,
        "    weft_board_mii_gmii adapter (\n        \
         .clk(clk), .rst(clk_rst), .clk_en(clk_en), .speed(status[11:10]),\n        \
         .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv), .gmii_rx_er(gmii_rx_er),\n        \
         .gmii_txd(gmii_txd), .gmii_tx_en(gmii_tx_en), .gmii_tx_er(gmii_tx_er),\n        \
         {});\n    \
         // The PHY leaves reset with weft. MDIO is a three-state line\n    \
         // (IEEE 802.3 §22.2.4): the IOBUF drives mdio_o while mdio_oe is\n    \
         // high and releases the pad (T high, UG974) otherwise.\n    \
         assign phy_reset_n = !rst;\n    \
         assign phy_mdc = mdc;\n    \
         IOBUF mdio_buffer (.I(mdio_o), .O(mdio_i), .T(!mdio_oe), .IO(phy_mdio));\n\
         endmodule",
        mii.join(", ")
    );
    v
}

/// The PCS/PMA's port list as a module header.
fn header() -> String {
    let list: Vec<String> = PCS_PMA_PORTS
        .iter()
        .map(|p| format!("    {} wire {}{}", p.dir, range(p.bits), p.name))
        .collect();
    format!("module {PCS_PMA_MODULE} (\n{}\n);\n", list.join(",\n"))
}

/// The PCS/PMA's black-box stub, for lint: inputs read, outputs tied low.
pub fn stub() -> String {
    let mut v = format!(
        "// Vendor IP: the management port's SGMII PCS/PMA (PG047): black box.\n(* blackbox *)\n{}",
        header()
    );
    let _ = writeln!(v, "    /* verilator lint_off UNUSEDSIGNAL */");
    for p in PCS_PMA_PORTS.iter().filter(|p| p.dir == "input") {
        let _ = writeln!(
            v,
            "    wire {}unused_{} = {};",
            range(p.bits),
            p.name,
            p.name
        );
    }
    let _ = writeln!(v, "    /* verilator lint_on UNUSEDSIGNAL */");
    for p in PCS_PMA_PORTS.iter().filter(|p| p.dir == "output") {
        let _ = writeln!(v, "    assign {} = {}'d0;", p.name, p.bits);
    }
    v + "endmodule\n\n"
}

/// The PCS/PMA's simulation model: its module and port names around
/// `weft_board_sgmii_model` (`sgmii_model.v`, the client side as PG047
/// describes it); the physical side and the cascade ports are not modelled.
pub fn sim_model() -> String {
    let mut v = format!(
        "// Simulation model of the management port's SGMII PCS/PMA (PG047).\n{}",
        header()
    );
    let model_port = |role: PcsPmaRole| match role {
        PcsPmaRole::Reset => Some("reset"),
        PcsPmaRole::Clock => Some("clk125"),
        PcsPmaRole::ClockReset => Some("rst125"),
        PcsPmaRole::ClockEnable => Some("clk_en"),
        PcsPmaRole::SpeedIs10100 => Some("speed_is_10_100"),
        PcsPmaRole::SpeedIs100 => Some("speed_is_100"),
        PcsPmaRole::Gmii(name) => Some(name),
        PcsPmaRole::Status => Some("status"),
        PcsPmaRole::Pin(_) | PcsPmaRole::Tied(_) | PcsPmaRole::Unused => None,
    };
    let mut conns = Vec::new();
    for p in PCS_PMA_PORTS {
        match model_port(p.role) {
            Some(model) => conns.push(format!(".{model}({})", p.name)),
            None if p.dir == "output" => {
                let _ = writeln!(v, "    assign {} = {}'d0;", p.name, p.bits);
            }
            None => {}
        }
    }
    let _ = writeln!(
        v,
        "    weft_board_sgmii_model model (\n        {}\n    );\nendmodule\n",
        conns.join(",\n        ")
    );
    v
}

/// The Vivado commands that generate the PCS/PMA for `lvds` (PG047's
/// parameter names; the placement as the board file gives it).
pub fn vivado_ip(lvds: &SgmiiLvds) -> String {
    format!(
        "# {PCS_PMA_MODULE}: the management port's SGMII PCS/PMA over LVDS SelectIO (PG047):\n\
         # SGMII at 10/100/1000 Mb/s with auto-negotiation, shared logic in the core.\n\
         create_ip -name gig_ethernet_pcs_pma -vendor xilinx.com -library ip -module_name {PCS_PMA_MODULE} -dir ip\n\
         set_property -dict [list \\\n    \
         CONFIG.Standard {{SGMII}} \\\n    \
         CONFIG.Physical_Interface {{LVDS}} \\\n    \
         CONFIG.SGMII_Mode {{10_100_1000}} \\\n    \
         CONFIG.Auto_Negotiation {{true}} \\\n    \
         CONFIG.Management_Interface {{false}} \\\n    \
         CONFIG.SupportLevel {{Include_Shared_Logic_in_Core}} \\\n    \
         CONFIG.LvdsRefClk {{{}}} \\\n    \
         CONFIG.TxLane0_Placement {{{}}} \\\n    \
         CONFIG.RxLane0_Placement {{{}}} \\\n    \
         CONFIG.Tx_In_Upper_Nibble {{{}}} \\\n\
         ] [get_ips {PCS_PMA_MODULE}]\n",
        lvds.refclk_mhz,
        lvds.tx_lane,
        lvds.rx_lane,
        u8::from(lvds.tx_in_upper_nibble),
    )
}

/// Upper bound on each MII path between the SGMII's 125 MHz and weft's
/// soft core clock, in ns. The adapter changes receive data 24 ns before
/// `mii_rx_clk` rises and 16 ns after; the MAC acts on the sample a core
/// cycle (8 ns) before it sees the rise, and drives transmit data 16 to
/// 24 ns after it sees `mii_tx_clk` rise, which the adapter takes 40 ns
/// after its rise. With each path at most 4 ns, at least 8 ns of margin
/// remain on every side.
const MII_MAX_DELAY_NS: f64 = 4.0;

/// The management port's timing constraints: the PHY's SGMII clock on its
/// pin (PG047's shared logic derives the client clock from it), the MII
/// crossings bounded both ways ([`MII_MAX_DELAY_NS`]), and the PCS/PMA's
/// asynchronous reset cut.
pub fn xdc(lvds: &SgmiiLvds, core_clock: &str) -> String {
    let client = format!(
        "[get_clocks -of_objects [get_pins {SGMII_INSTANCE}/{PCS_PMA_INSTANCE}/clk125_out]]"
    );
    let core = format!("[get_clocks {core_clock}]");
    format!(
        "# Management Ethernet: the PHY's SGMII clock; the MII crosses between the\n\
         # PCS/PMA's 125 MHz and the soft core clock as data (the MAC samples its\n\
         # clocks), each path bounded so the adapter's MII timing holds.\n\
         create_clock -name sgmii_clk -period {:.3} [get_ports {{sgmii_clk_p}}]\n\
         set_max_delay -datapath_only {d:.3} -from {client} -to {core}\n\
         set_max_delay -datapath_only {d:.3} -from {core} -to {client}\n\
         set_false_path -through [get_pins {SGMII_INSTANCE}/{PCS_PMA_INSTANCE}/reset]\n",
        1000.0 / lvds.refclk_mhz,
        d = MII_MAX_DELAY_NS,
    )
}
