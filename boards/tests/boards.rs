//! Every shipped board loads and holds together; malformed boards are
//! refused with an error that names the field.

use std::path::Path;

use weft_boards::clocking;
use weft_boards::load::{self, LoadError};
use weft_boards::model::{EthernetInterface, HardIpKind, Pin, Role, Vendor};
use weft_boards::pll::{self, Unreachable};
use weft_boards::validate::{self, Invalid};

/// A small sound Intel board: one P-tile as the switch's upstream port.
const SOUND: &str = r#"
[board]
name = "test"
title = "Test board"
vendor = "intel"
kit = "KIT"
device = "1SD280PT2F55E1VG"
family = "Stratix 10"
source = "doc"

[[source]]
id = "doc"
document = "A user guide"
number = "000000"

[[hard_ip]]
name = "host0"
kind = "p-tile"
tile = "10A"
role = "switch-upstream"
connector = "edge"
lanes = 16
gen = 4
data_bits = 512
segments = 2
clock_mhz = 500
refclk = "refclk"
source = "doc"

[[clock]]
name = "refclk"
mhz = 100.0
pin = "TODO"
io_standard = "HCSL"
source = "doc"

[[clock]]
name = "sys_clk"
mhz = 100.0
pin = "A1"
io_standard = "LVDS"
source = "doc"

[pll]
refclk = "sys_clk"
source = "doc"

[[led]]
name = "led0"
pin = "B2"
io_standard = "1.8 V"
source = "doc"
"#;

/// A second hard IP block, appended to [`SOUND`].
fn second_ip(kind: &str, tile: &str, role: &str, lanes: u8, data_bits: u32) -> String {
    format!(
        "\n[[hard_ip]]\nname = \"down0\"\nkind = \"{kind}\"\ntile = \"{tile}\"\nrole = \"{role}\"\n\
         connector = \"cable\"\nlanes = {lanes}\ngen = 4\ndata_bits = {data_bits}\nsegments = 1\n\
         clock_mhz = 500\nrefclk = \"refclk\"\nsource = \"doc\"\n"
    )
}

fn problems(text: &str) -> Vec<Invalid> {
    match load::from_str(text, Path::new("test.toml")) {
        Ok(_) => Vec::new(),
        Err(LoadError::Invalid { problems, .. }) => problems,
        Err(other) => panic!("expected a validation error, got: {other}"),
    }
}

fn parse_error(text: &str) -> String {
    match load::from_str(text, Path::new("test.toml")) {
        Err(LoadError::Parse { message, .. }) => message,
        Err(other) => panic!("expected a parse error, got: {other}"),
        Ok(_) => panic!("expected a parse error, the board loaded"),
    }
}

#[test]
fn every_shipped_board_loads_and_validates() {
    let names = load::names(&load::data_dir());
    assert!(names.len() >= 3, "boards: {names:?}");
    for name in names {
        if let Err(err) = load::by_name(&name) {
            panic!("{err}");
        }
    }
}

#[test]
fn the_sound_test_board_loads() {
    assert_eq!(problems(SOUND), Vec::new());
}

#[test]
fn the_reference_board_has_the_four_p_tiles_of_its_user_guide() {
    // Stratix 10 DX FPGA Development Kit User Guide (683561): part
    // 1SD280PT2F55E1VG; P-tile 10A to the edge connector, 11B, 11C and 10B
    // to SlimSAS connectors, each x16.
    let board = load::by_name("stratix10-dx-devkit").expect("reference board loads");
    assert_eq!(board.board.device, "1SD280PT2F55E1VG");
    let tiles: Vec<&str> = board.hard_ips.iter().map(|ip| ip.tile.as_str()).collect();
    assert_eq!(tiles, ["10A", "11B", "11C", "10B"]);
    assert!(board
        .hard_ips
        .iter()
        .all(|ip| ip.kind == HardIpKind::PTile && ip.lanes == 16));
    assert_eq!(board.hard_ips[0].role, Role::SwitchUpstream);
}

#[test]
fn the_vcu118_host_port_is_an_endpoint_not_a_switch() {
    let board = load::by_name("vcu118").expect("vcu118 loads");
    assert!(board
        .hard_ips
        .iter()
        .all(|ip| ip.role != Role::SwitchUpstream && ip.role != Role::SwitchDownstream));
}

#[test]
fn open_pins_are_reported_not_refused() {
    let board = load::from_str(SOUND, Path::new("test.toml")).expect("loads");
    assert_eq!(validate::todos(&board), ["clock[0] (refclk).pin"]);
}

#[test]
fn a_lane_count_the_hard_ip_lacks_is_refused_at_its_field() {
    let text = SOUND.replace("lanes = 16", "lanes = 12");
    let found = problems(&text);
    assert!(
        found.contains(&Invalid::UnsupportedLanes {
            field: "hard_ip[0] (host0).lanes".to_owned(),
            kind: HardIpKind::PTile,
            lanes: 12,
            supported: &[4, 8, 16],
        }),
        "{found:?}"
    );
    assert!(found[0].to_string().starts_with("hard_ip[0] (host0).lanes"));
}

#[test]
fn two_x16_links_on_one_tile_exceed_its_bifurcation() {
    let text = format!(
        "{SOUND}{}",
        second_ip("p-tile", "10A", "switch-downstream", 16, 512)
    );
    let found = problems(&text);
    assert!(
        found.iter().any(|p| matches!(
            p,
            Invalid::TileOversubscribed { tile, lanes, .. } if tile == "10A" && lanes == &[16, 16]
        )),
        "{found:?}"
    );
}

#[test]
fn two_x8_links_on_one_tile_fit_its_2x8_mode() {
    let text = format!(
        "{}{}",
        SOUND
            .replace("lanes = 16", "lanes = 8")
            .replace("data_bits = 512", "data_bits = 256"),
        second_ip("p-tile", "10A", "switch-downstream", 8, 256)
    );
    assert_eq!(problems(&text), Vec::new());
}

#[test]
fn an_ultrascale_plus_host_port_cannot_present_a_type1_header() {
    let text = SOUND
        .replace("vendor = \"intel\"", "vendor = \"xilinx\"")
        .replace("kind = \"p-tile\"", "kind = \"pcie4\"")
        .replace("gen = 4", "gen = 3")
        .replace("segments = 2", "segments = 1");
    let found = problems(&text);
    let role = found
        .iter()
        .find(|p| matches!(p, Invalid::UnsupportedRole { .. }))
        .expect("the role is refused");
    let message = role.to_string();
    assert!(message.starts_with("hard_ip[0] (host0).role"), "{message}");
    assert!(message.contains("0x480-0x4FF"), "{message}");
    assert!(message.contains("Type 1"), "{message}");
}

#[test]
fn ftile_bypass_refuses_a_downstream_then_upstream_pair() {
    // 683140 "Supported TLP Bypass Configurations": 2x8 offers UP/UP,
    // UP/DN, EP/UP and DN/DN, so DN/UP is not among them.
    let base = SOUND
        .replace("kind = \"p-tile\"", "kind = \"f-tile\"")
        .replace("role = \"switch-upstream\"", "role = \"switch-downstream\"")
        .replace("lanes = 16", "lanes = 8")
        .replace("data_bits = 512", "data_bits = 256");
    let text = format!(
        "{base}{}",
        second_ip("f-tile", "10A", "switch-upstream", 8, 256)
    );
    let found = problems(&text);
    assert!(
        found.contains(&Invalid::TileRoles {
            tile: "10A".to_owned(),
            roles: vec![Role::SwitchDownstream, Role::SwitchUpstream],
        }),
        "{found:?}"
    );
}

#[test]
fn a_generation_beyond_the_block_is_refused() {
    let found = problems(&SOUND.replace("gen = 4", "gen = 5"));
    assert!(found.contains(&Invalid::UnsupportedGen {
        field: "hard_ip[0] (host0).gen".to_owned(),
        kind: HardIpKind::PTile,
        gen: 5,
        max: 4,
    }));
}

#[test]
fn a_data_width_the_block_does_not_present_is_refused() {
    let found = problems(&SOUND.replace("data_bits = 512", "data_bits = 256"));
    assert!(found.contains(&Invalid::DataWidth {
        field: "hard_ip[0] (host0).data_bits".to_owned(),
        data_bits: 256,
        expected: 512,
    }));
}

#[test]
fn a_pin_given_twice_is_refused_naming_both_fields() {
    let found = problems(&SOUND.replace("pin = \"B2\"", "pin = \"A1\""));
    assert!(found.contains(&Invalid::DuplicatePin {
        pin: "A1".to_owned(),
        first: "clock[1] (sys_clk).pin".to_owned(),
        second: "led[0] (led0).pin".to_owned(),
    }));
}

#[test]
fn an_undeclared_reference_clock_is_refused() {
    let found = problems(&SOUND.replace("refclk = \"refclk\"", "refclk = \"nope\""));
    assert!(found.contains(&Invalid::UnknownSignal {
        field: "hard_ip[0] (host0).refclk".to_owned(),
        name: "nope".to_owned(),
    }));
}

#[test]
fn an_undeclared_second_reference_clock_is_refused() {
    let found = problems(&SOUND.replace(
        "refclk = \"refclk\"",
        "refclk = \"refclk\"\nrefclk1 = \"nope\"",
    ));
    assert!(found.contains(&Invalid::UnknownSignal {
        field: "hard_ip[0] (host0).refclk1".to_owned(),
        name: "nope".to_owned(),
    }));
}

#[test]
fn an_uncited_source_is_refused() {
    let found =
        problems(&SOUND.replace("source = \"doc\"\n\n[[led]]", "source = \"x\"\n\n[[led]]"));
    assert!(found.contains(&Invalid::UnknownSource {
        field: "pll.source".to_owned(),
        id: "x".to_owned(),
    }));
}

#[test]
fn a_board_without_a_host_port_is_refused() {
    let found = problems(&SOUND.replace("role = \"switch-upstream\"", "role = \"root-port\""));
    assert!(found.contains(&Invalid::NoHostPort));
}

#[test]
fn an_unknown_role_is_a_parse_error_naming_the_field() {
    let message = parse_error(&SOUND.replace("role = \"switch-upstream\"", "role = \"upstream\""));
    assert!(message.contains("role"), "{message}");
    assert!(message.contains("switch-upstream"), "{message}");
}

#[test]
fn a_missing_field_is_a_parse_error_naming_it() {
    let message = parse_error(&SOUND.replace("lanes = 16\n", ""));
    assert!(message.contains("lanes"), "{message}");
}

#[test]
fn an_unknown_field_is_a_parse_error_naming_it() {
    let message = parse_error(&SOUND.replace("gen = 4", "gen = 4\nspeed = 16"));
    assert!(message.contains("speed"), "{message}");
}

#[test]
fn an_unknown_board_name_lists_the_boards() {
    let err = load::by_name("no-such-board").expect_err("no such board");
    let message = err.to_string();
    assert!(message.contains("stratix10-dx-devkit"), "{message}");
}

#[test]
fn a_pll_reference_below_the_io_plls_input_range_is_refused() {
    // 683181 "I/O PLL Specifications": fIN is at least 10 MHz.
    let text = SOUND.replace("mhz = 100.0\npin = \"A1\"", "mhz = 5.0\npin = \"A1\"");
    let found = problems(&text);
    assert!(
        found.iter().any(|p| matches!(
            p,
            Invalid::PllUnreachable { clock, reason: Unreachable::Input { refclk_hz: 5_000_000, .. } }
                if clock == "sys_clk"
        )),
        "{found:?}"
    );
    assert!(found.iter().any(|p| p
        .to_string()
        .starts_with("pll.refclk: the PLL cannot make weft's clocks")));
}

#[test]
fn a_pll_reference_with_no_integer_ratio_to_weft_clocks_is_refused() {
    // 33.333 MHz: 250 MHz is 7.5000075 times it, which no integer M/(N x C)
    // with N <= 16 gives exactly.
    let text = SOUND.replace("mhz = 100.0\npin = \"A1\"", "mhz = 33.333\npin = \"A1\"");
    let found = problems(&text);
    assert!(
        found.iter().any(|p| matches!(
            p,
            Invalid::PllUnreachable {
                reason: Unreachable::NoRatio { .. },
                ..
            }
        )),
        "{found:?}"
    );
}

#[test]
fn a_pll_fed_by_an_undeclared_clock_is_refused() {
    let text = SOUND.replace("refclk = \"sys_clk\"", "refclk = \"osc\"");
    assert!(problems(&text).contains(&Invalid::UnknownSignal {
        field: "pll.refclk".to_owned(),
        name: "osc".to_owned(),
    }));
}

#[test]
fn a_family_without_a_known_pll_is_refused() {
    let text = SOUND.replace("family = \"Stratix 10\"", "family = \"Cyclone V\"");
    assert!(problems(&text).contains(&Invalid::NoPll {
        vendor: weft_boards::model::Vendor::Intel,
        family: "Cyclone V".to_owned(),
    }));
}

#[test]
fn every_shipped_boards_pll_makes_weft_clocks_inside_its_ranges() {
    for name in load::names(&load::data_dir()) {
        let board = load::by_name(&name).expect("loads");
        let device = pll::for_board(&board).expect("a PLL for every shipped family");
        let (_, plan) = clocking::board_pll(&board);
        // The outputs are exactly weft's clocks, from weft-regs.
        assert_eq!(
            plan.data_plane_hz(),
            u64::from(weft_regs::DATA_PLANE_CLOCK_HZ)
        );
        assert_eq!(
            plan.soft_core_hz(),
            u64::from(weft_regs::SOFT_CORE_CLOCK_HZ)
        );
        assert_eq!(
            plan.refclk_hz * plan.multiply,
            plan.vco_hz() * plan.pre_divide,
            "{name}: the VCO is an integer multiple of the PFD"
        );
        if let Some(limits) = device.limits {
            assert!(
                (limits.vco.min..=limits.vco.max).contains(&plan.vco_hz()),
                "{name}"
            );
            let pfd = plan.refclk_hz / plan.pre_divide;
            if let Some(range) = limits.pfd {
                assert!((range.min..=range.max).contains(&pfd), "{name}");
            }
        }
    }
}

#[test]
fn the_stratix10_io_pll_runs_its_vco_as_fast_as_its_range_allows() {
    // 100 MHz in, VCO at most 1600 MHz (683181): 1500 MHz would need 250 MHz
    // x 6 and 125 MHz x 12, and 1500 = 100 x 15. The fastest VCO that
    // divides to both outputs is 1500 MHz.
    let (_, plan) = clocking::board_pll(&load::by_name("stratix10-dx-devkit").expect("loads"));
    assert_eq!(plan.vco_hz(), 1_500_000_000);
    assert_eq!((plan.pre_divide, plan.multiply), (1, 15));
    assert_eq!((plan.data_plane_divide, plan.soft_core_divide), (6, 12));
}

#[test]
fn unconfirmed_pll_ranges_hold_up_a_build_only_where_weft_sets_the_counters() {
    let unconfirmed = |kind| pll::PllDevice {
        kind,
        limits: None,
        source: "no document",
    };
    // The MMCM takes weft's counters: without ranges they may be out of them.
    assert_eq!(
        unconfirmed(pll::PllKind::Mmcme4Adv).unconfirmed_for_build(),
        Some("PLL ranges: no document".to_owned())
    );
    // Quartus sets an IOPLL's counters from its output frequencies.
    assert_eq!(
        unconfirmed(pll::PllKind::Iopll).unconfirmed_for_build(),
        None
    );
    // Known ranges are never an open fact.
    let stratix = pll::device(Vendor::Intel, "Stratix 10").expect("known");
    let virtex = pll::device(Vendor::Xilinx, "Virtex UltraScale+").expect("known");
    assert_eq!(stratix.unconfirmed_for_build(), None);
    assert_eq!(virtex.unconfirmed_for_build(), None);
}

#[test]
fn a_pll_whose_ranges_are_unconfirmed_claims_no_vco_in_the_wrapper() {
    // The Agilex 7 I/O PLL's ranges (683301) are not confirmed: the wrapper
    // gives weft's two clocks and leaves the VCO to the parameter editor,
    // where the reference kit's wrapper gives the VCO its known range allows.
    let top = |name: &str| {
        let board = load::by_name(name).expect("loads");
        clocking::wrapper_block(&board, "1'b0")
    };
    let agilex = top("agilex7-i-series-devkit");
    assert!(!agilex.contains("-> PLL: VCO"), "{agilex}");
    assert!(
        agilex.contains("chosen by its parameter editor"),
        "{agilex}"
    );
    assert!(agilex.contains("weft_clk = 250 MHz"), "{agilex}");
    assert!(top("stratix10-dx-devkit").contains("VCO 1500 MHz = 100 MHz x 15 / 1"));
}

#[test]
fn the_agilex7_board_has_the_r_tiles_its_documents_give() {
    // 683288 Table 1: DK-DEV-AGI027-RA carries AGIB027R29A1E1VB, 2x R-Tile
    // and 1x F-Tile. 683311's support matrix for Agilex 7: Gen5 x16 with a
    // 1024-bit bus and Gen5 x8/x8 with 512 bits per port, TLP Bypass as
    // upstream or downstream port, 500 MHz in the -1 speed grade.
    let board = load::by_name("agilex7-i-series-devkit").expect("Agilex board loads");
    assert_eq!(board.board.kit, "DK-DEV-AGI027-RA");
    assert_eq!(board.board.device, "AGIB027R29A1E1VB");
    assert!(board
        .hard_ips
        .iter()
        .all(|ip| ip.kind == HardIpKind::RTile && ip.gen == 5 && ip.clock_mhz == 500));
    let tiles: std::collections::BTreeSet<&str> =
        board.hard_ips.iter().map(|ip| ip.tile.as_str()).collect();
    assert_eq!(tiles.len(), 2, "two R-tiles");
    let host = &board.hard_ips[0];
    assert_eq!(
        (host.role, host.lanes, host.data_bits),
        (Role::SwitchUpstream, 16, 1024)
    );
    for down in &board.hard_ips[1..] {
        assert_eq!(
            (down.role, down.lanes, down.data_bits),
            (Role::SwitchDownstream, 8, 512)
        );
    }
}

/// A flash reached through `STARTUPE3`, appended to a board.
const STARTUPE3_FLASH: &str =
    "\n[flash]\nkind = \"qspi\"\npart = \"TODO\"\naccess = \"startupe3\"\nsource = \"doc\"\n";

#[test]
fn startupe3_is_refused_on_a_family_without_it() {
    // UG974 lists STARTUPE3 for UltraScale and UltraScale+ only: an Intel
    // Stratix 10 has none.
    let found = problems(&format!("{SOUND}{STARTUPE3_FLASH}"));
    assert!(found.contains(&Invalid::NoStartupe3 {
        vendor: weft_boards::model::Vendor::Intel,
        family: "Stratix 10".to_owned(),
    }));
}

/// The text of board `name`'s data file.
fn board_file(name: &str) -> String {
    std::fs::read_to_string(load::data_dir().join(format!("{name}.toml"))).expect("reads")
}

#[test]
fn a_user_pin_for_a_flash_signal_startupe3_carries_is_refused() {
    let vcu118 = board_file("vcu118");
    // CCLK, FCS_B and D00/D01 are dedicated configuration pins (UG570):
    // no user pin can stand for them.
    let text = vcu118.replace(
        "access = \"startupe3\"",
        "access = \"startupe3\"\nsclk = \"AM19\"",
    );
    assert_ne!(text, vcu118);
    let found = problems(&text);
    assert!(found.contains(&Invalid::FlashPinOnConfigPins {
        field: "flash.sclk".to_owned(),
        pin: "AM19".to_owned(),
    }));
}

#[test]
fn a_pin_for_a_flash_no_user_logic_reaches_is_refused() {
    let kit = board_file("stratix10-dx-devkit");
    let text = kit.replace("access = \"absent\"", "access = \"absent\"\nmiso = \"C40\"");
    assert_ne!(text, kit);
    let found = problems(&text);
    assert!(found.contains(&Invalid::FlashPinAbsent {
        field: "flash.miso".to_owned(),
        pin: "C40".to_owned(),
    }));
    assert!(!found.iter().any(|p| matches!(
        p,
        Invalid::FlashPinOnConfigPins { .. } | Invalid::NoStartupe3 { .. }
    )));
}

#[test]
fn a_flash_behind_startupe3_needs_no_pins_for_a_build() {
    let board = load::by_name("vcu118").expect("loads");
    assert!(board.flash_through_startupe3());
    let open = validate::unconfirmed_required(&board);
    assert!(
        !open.iter().any(|fact| fact.starts_with("flash")),
        "{open:?}"
    );
    // Its pins are not reported as missing either; only the part is open.
    let todos = validate::todos(&board);
    assert!(
        !todos.iter().any(|t| t.starts_with("flash.s")
            || t.starts_with("flash.m")
            || t.starts_with("flash.c")),
        "{todos:?}"
    );
}

/// An SGMII PHY on LVDS pins, appended to a board.
const SGMII_ETHERNET: &str =
    "\n[ethernet]\ninterface = \"sgmii\"\nphy = \"DP83867\"\nsource = \"doc\"\n\
    [ethernet.lvds]\nrefclk_mhz = 625.0\ntx_lane = \"DIFF_PAIR_2\"\nrx_lane = \"DIFF_PAIR_0\"\n\
    tx_in_upper_nibble = false\nsource = \"doc\"\n";

#[test]
fn sgmii_over_lvds_is_refused_on_a_family_without_it() {
    // PG047's asynchronous SGMII over LVDS is UltraScale(+) SelectIO.
    let found = problems(&format!("{SOUND}{SGMII_ETHERNET}"));
    assert!(found.iter().any(|p| matches!(
        p,
        Invalid::EthernetUnsupported { field, .. } if field == "ethernet.lvds"
    )));
}

#[test]
fn an_sgmii_phy_needs_its_lvds_settings_and_every_pin() {
    let board = load::by_name("vcu118").expect("loads");
    let mut no_lvds = board.clone();
    no_lvds
        .ethernet
        .as_mut()
        .expect("the VCU118 has a PHY")
        .lvds = None;
    assert!(validate::check(&no_lvds).iter().any(|p| matches!(
        p,
        Invalid::EthernetUnsupported { field, .. } if field == "ethernet.lvds"
    )));

    let mut no_mdc = board.clone();
    let eth = no_mdc.ethernet.as_mut().expect("the VCU118 has a PHY");
    eth.pins.retain(|p| p.name != "phy_mdc");
    assert!(
        validate::check(&no_mdc).contains(&Invalid::EthernetPinMissing {
            interface: EthernetInterface::Sgmii,
            pin: "phy_mdc",
        })
    );

    let mut lvcmos = board.clone();
    let eth = lvcmos.ethernet.as_mut().expect("the VCU118 has a PHY");
    let rx = eth
        .pins
        .iter()
        .position(|p| p.name == "sgmii_rx_p")
        .expect("the receive pair is named");
    eth.pins[rx].io_standard = "LVCMOS18".to_owned();
    assert!(
        validate::check(&lvcmos).contains(&Invalid::EthernetIoStandard {
            field: format!("ethernet.pin[{rx}] (sgmii_rx_p).io_standard"),
            io_standard: "LVCMOS18".to_owned(),
        })
    );
}

#[test]
fn an_open_management_phy_pin_keeps_the_build_script_back() {
    let mut board = load::by_name("vcu118").expect("loads");
    assert!(validate::unconfirmed_required(&board).is_empty());
    let eth = board.ethernet.as_mut().expect("the VCU118 has a PHY");
    let clk = eth
        .pins
        .iter()
        .position(|p| p.name == "sgmii_clk_p")
        .expect("the SGMII clock is named");
    eth.pins[clk].pin = Pin::Todo;
    assert_eq!(
        validate::unconfirmed_required(&board),
        [format!("ethernet.pin[{clk}] (sgmii_clk_p).pin")]
    );
}
