//! The management Ethernet: weft's MII on the VCU118's SGMII PHY through
//! the wrapper's adapter and a model of Xilinx's PCS/PMA, frames both ways
//! at each link speed, and boards without a management PHY idling the MII.
//!
//! The expected values come from IEEE 802.3, not from the adapter: a
//! frame goes out behind seven preamble octets 0x55 and the start frame
//! delimiter 0xD5 (§4.2.5, §4.2.6), and on the MII every octet is two
//! nibbles, the low-order one first (§22.2.3).

use std::path::PathBuf;

use weft_boards::ethernet::{self, Management};
use weft_boards::sim::{self, EthernetRun, LinkSpeed, SimError};
use weft_boards::{constraints, generate, load, project, verilog};

/// A scratch directory of this test's own, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-eth-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir is writable");
    dir
}

/// Two frames: a broadcast ARP request padded to the 60-byte minimum with
/// a made-up frame check sequence, and a short run of every nibble value.
fn frames() -> Vec<Vec<u8>> {
    let mut arp = vec![0xff; 6];
    arp.extend([0x02, 0x00, 0x00, 0x77, 0x33, 0x30]);
    arp.extend([0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01]);
    arp.extend([0x02, 0x00, 0x00, 0x77, 0x33, 0x30, 192, 168, 70, 10]);
    arp.extend([0x00; 6]);
    arp.extend([192, 168, 70, 1]);
    arp.resize(60, 0);
    arp.extend([0xde, 0xad, 0xbe, 0xef]);
    let nibbles: Vec<u8> = (0..16u8).map(|i| (i << 4) | (15 - i)).collect();
    vec![arp, nibbles]
}

/// The MII nibbles of `frame` with its preamble and delimiter (§22.2.3).
fn mii_nibbles(frame: &[u8]) -> Vec<u8> {
    let mut nibbles = vec![0x5; 15];
    nibbles.push(0xd);
    for byte in frame {
        nibbles.push(byte & 0xf);
        nibbles.push(byte >> 4);
    }
    nibbles
}

/// The GMII bytes of `frame` with its preamble and delimiter.
fn gmii_bytes(frame: &[u8]) -> Vec<u8> {
    let mut bytes = vec![0x55; 7];
    bytes.push(0xd5);
    bytes.extend_from_slice(frame);
    bytes
}

/// Runs the VCU118's management Ethernet bench with `files`, or says why
/// it cannot here.
fn run(
    name: &str,
    files: &[generate::File],
    speed: LinkSpeed,
) -> Option<Result<EthernetRun, SimError>> {
    match sim::run_ethernet(&scratch(name), files, &frames(), speed, 7) {
        Err(SimError::NoSimulator) => {
            eprintln!("skipped: iverilog is not installed (`cargo xtask setup` installs it)");
            None
        }
        result => Some(result),
    }
}

fn vcu118_files() -> Vec<generate::File> {
    let board = load::by_name("vcu118").expect("vcu118 loads");
    sim::ethernet_files(&board).expect("the VCU118's management port is SGMII over LVDS")
}

fn assert_frames_cross(name: &str, speed: LinkSpeed) {
    let Some(result) = run(name, &vcu118_files(), speed) else {
        return;
    };
    let got = result.unwrap_or_else(|e| panic!("{speed:?}: {e}"));
    let sent = frames();
    let nibbles: Vec<Vec<u8>> = sent.iter().map(|f| mii_nibbles(f)).collect();
    let bytes: Vec<Vec<u8>> = sent.iter().map(|f| gmii_bytes(f)).collect();
    assert_eq!(got.mii_received, nibbles, "{speed:?}: received on the MII");
    assert_eq!(got.gmii_sent, bytes, "{speed:?}: sent on the GMII");
}

#[test]
fn frames_cross_the_vcu118_sgmii_adapter_both_ways_at_100_mbps() {
    assert_frames_cross("100", LinkSpeed::Mbps100);
}

#[test]
fn frames_cross_the_vcu118_sgmii_adapter_both_ways_at_10_mbps() {
    assert_frames_cross("10", LinkSpeed::Mbps10);
}

#[test]
fn nothing_crosses_at_1_gbps_which_the_mac_cannot_carry() {
    let Some(result) = run("1000", &vcu118_files(), LinkSpeed::Gbps1) else {
        return;
    };
    let got = result.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(got.mii_received, Vec::<Vec<u8>>::new());
    assert_eq!(got.gmii_sent, Vec::<Vec<u8>>::new());
}

#[test]
fn the_bench_catches_broken_adapters() {
    let expected = {
        let sent = frames();
        EthernetRun {
            mii_received: sent.iter().map(|f| mii_nibbles(f)).collect(),
            gmii_sent: sent.iter().map(|f| gmii_bytes(f)).collect(),
        }
    };
    for (broken, from, to) in [
        (
            "transmit nibbles swapped",
            "tx_byte <= {mii_txd, tx_low};",
            "tx_byte <= {tx_low, mii_txd};",
        ),
        (
            "receive high nibble first",
            "mii_rxd <= gmii_rxd[3:0];",
            "mii_rxd <= gmii_rxd[7:4];",
        ),
        (
            "MII clocks high for 4 cycles of 5",
            "6'd3 : 6'd30",
            "6'd1 : 6'd30",
        ),
        (
            "transmit bytes outside the clock enable",
            "if (clk_en) begin\n                gmii_txd",
            "if (1'b1) begin\n                gmii_txd",
        ),
        (
            "speed_is_100 not echoed",
            "status[11:10] == 2'b01",
            "status[11:10] == 2'b00",
        ),
        ("MDIO driven while released", ".T(!mdio_oe)", ".T(1'b0)"),
        ("MDIO never driven", ".T(!mdio_oe)", ".T(1'b1)"),
        (
            "MDC held low",
            "assign phy_mdc = mdc;",
            "assign phy_mdc = 1'b0;",
        ),
    ] {
        let mut files = vcu118_files();
        let file = files
            .iter_mut()
            .find(|f| f.text.contains(from))
            .unwrap_or_else(|| panic!("{from} is not in the bench's files"));
        file.text = file.text.replace(from, to);
        match run("broken", &files, LinkSpeed::Mbps100) {
            None => return,
            Some(Ok(got)) => assert_ne!(got, expected, "{broken} went unnoticed"),
            Some(Err(SimError::Failed { report })) => {
                assert!(report.contains("ERROR"), "{broken}: {report}")
            }
            Some(Err(other)) => panic!("{broken}: {other}"),
        }
    }
}

#[test]
fn the_vcu118_wrapper_puts_the_chip_mii_on_the_sgmii_block() {
    let board = load::by_name("vcu118").expect("vcu118 loads");
    assert!(matches!(
        ethernet::management(&board),
        Management::SgmiiLvds(_)
    ));
    let top = verilog::wrapper(&board);
    for line in [
        "weft_board_sgmii mgmt_eth (",
        ".rst(weft_core_rst)",
        ".mii_rx_clk(switch_mii_rx_clk)",
        ".mii_txd(switch_mii_txd)",
        ".mdc(switch_mdc)",
        ".mdio_i(switch_mdio_i)",
        "IOBUF mdio_buffer (.I(mdio_o), .O(mdio_i), .T(!mdio_oe), .IO(phy_mdio));",
        "assign phy_mdc = mdc;",
        ".sgmii_clk_p(sgmii_clk_p)",
        "input wire sgmii_rx_p",
        "output wire sgmii_tx_p",
        "inout wire phy_mdio",
        "module weft_board_sgmii (",
        "weft_mgmt_pcs_pma pcs_pma (",
        ".refclk625_p(sgmii_clk_p)",
        ".speed_is_10_100_0(status[11:10] != 2'b10)",
        // PG047: auto-negotiation on, not isolated; the ports that would
        // cascade other users of the byte group report ready.
        ".configuration_vector_0(5'd16)",
        ".tx_dly_rdy_1(1'd1)",
        "module weft_mgmt_pcs_pma (",
    ] {
        assert!(top.contains(line), "missing: {line}");
    }
    // The pins, the PHY's SGMII clock and the crossings' bounds. The
    // receive and clock pairs, unterminated on the board, end in the
    // FPGA's own 100 ohm termination (vcu118.toml, [ethernet]).
    let xdc = constraints::xdc(&board);
    for line in [
        "set_property -dict {PACKAGE_PIN AU24 IOSTANDARD LVDS DIFF_TERM_ADV TERM_100 DQS_BIAS TRUE \
         EQUALIZATION EQ_LEVEL0} [get_ports {sgmii_rx_p}]",
        "set_property -dict {PACKAGE_PIN AT22 IOSTANDARD LVDS DIFF_TERM_ADV TERM_100} [get_ports {sgmii_clk_p}]",
        "set_property -dict {PACKAGE_PIN AU21 IOSTANDARD LVDS} [get_ports {sgmii_tx_p}]",
        "set_property -dict {PACKAGE_PIN AV23 IOSTANDARD LVCMOS18} [get_ports {phy_mdc}]",
        "create_clock -name sgmii_clk -period 1.600 [get_ports {sgmii_clk_p}]",
        "set_max_delay -datapath_only 4.000 -from [get_clocks -of_objects [get_pins mgmt_eth/pcs_pma/clk125_out]] -to [get_clocks weft_core_clk]",
        "set_max_delay -datapath_only 4.000 -from [get_clocks weft_core_clk] -to [get_clocks -of_objects [get_pins mgmt_eth/pcs_pma/clk125_out]]",
        "set_false_path -to [get_ports {phy_*}]",
    ] {
        assert!(xdc.contains(line), "missing: {line}");
    }
    // The project generates the IP as PG047 names its parameters.
    let tcl = project::vivado_tcl(&board);
    for line in [
        "create_ip -name gig_ethernet_pcs_pma -vendor xilinx.com -library ip -module_name weft_mgmt_pcs_pma -dir ip",
        "CONFIG.Standard {SGMII}",
        "CONFIG.Physical_Interface {LVDS}",
        "CONFIG.SGMII_Mode {10_100_1000}",
        "CONFIG.Auto_Negotiation {true}",
        "CONFIG.LvdsRefClk {625}",
        "CONFIG.TxLane0_Placement {DIFF_PAIR_2}",
        "CONFIG.RxLane0_Placement {DIFF_PAIR_0}",
    ] {
        assert!(tcl.contains(line), "missing: {line}");
    }
}

#[test]
fn boards_without_a_known_management_phy_idle_the_mii_and_mdio() {
    for name in ["stratix10-dx-devkit", "agilex7-i-series-devkit"] {
        let board = load::by_name(name).expect("loads");
        let Management::Absent(why) = ethernet::management(&board) else {
            panic!("{name}: no management PHY is known");
        };
        let top = verilog::wrapper(&board);
        assert!(top.contains(&format!("No management Ethernet on this board ({why})")));
        for tie in [
            ".mii_rx_clk(1'd0)",
            ".mii_rx_dv(1'd0)",
            ".mii_rxd(4'd0)",
            ".mii_tx_clk(1'd0)",
            // MDIO's idle line is pulled up: a read there finds nobody.
            ".mdio_i(1'd1)",
            ".mdc(switch_mdc)",
        ] {
            assert!(top.contains(tie), "{name}: missing {tie}");
        }
        assert!(!top.contains("sgmii"), "{name}");
        assert!(sim::ethernet_files(&board).is_none());
        assert!(constraints::quartus_pins(&board).contains("not connected in the wrapper"));
    }
}
