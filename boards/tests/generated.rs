//! The generated project says what the board file says, and the wrapper lints.

use std::path::PathBuf;

use weft_boards::model::FlashAccess;
use weft_boards::model::Pin;
use weft_boards::model::Role;
use weft_boards::model::UartLink;
use weft_boards::{constraints, generate, lint, load, validate, verilog, Board};

fn boards() -> Vec<Board> {
    let names = load::names(&load::data_dir());
    names
        .iter()
        .map(|name| load::by_name(name).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// A scratch directory of this test's own, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-boards-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir is writable");
    dir
}

#[test]
fn the_wrapper_instantiates_every_hard_ip_and_declares_its_stub() {
    for board in boards() {
        let v = verilog::wrapper(&board);
        let instances = verilog::instances(&board);
        for instance in &instances {
            let module = &instance.module;
            assert!(
                v.contains(&format!("    {module} {} (", instance.name())),
                "{}: no instance of {module}",
                board.board.name
            );
            assert!(
                v.contains(&format!("module {module} (")),
                "{}: no stub of {module}",
                board.board.name
            );
        }
        let served: usize = instances.iter().map(|i| i.ports.len()).sum();
        assert_eq!(served, board.hard_ips.len(), "{}", board.board.name);
        for ip in &board.hard_ips {
            for lane_port in ["_rx_p", "_rx_n", "_tx_p", "_tx_n"] {
                let range = if ip.lanes == 1 {
                    String::new()
                } else {
                    format!("[{}:0] ", ip.lanes - 1)
                };
                assert!(v.contains(&format!("wire {range}{}{lane_port}", ip.name)));
            }
        }
        assert_eq!(
            v.matches("weft_chip switch (").count(),
            1,
            "{}",
            board.board.name
        );
        // Stubs stand in only for lint and simulation.
        let stubs = v
            .find("`ifdef WEFT_VENDOR_STUBS")
            .expect("stubs are guarded");
        assert!(v[..stubs].contains("endmodule"));
    }
}

#[test]
fn constraints_place_every_known_pin_and_name_every_open_one() {
    for board in boards() {
        let (text, placed_marker) = match board.board.vendor {
            weft_boards::model::Vendor::Intel => (
                constraints::quartus_pins(&board),
                "set_location_assignment PIN_",
            ),
            weft_boards::model::Vendor::Xilinx => (constraints::xdc(&board), "PACKAGE_PIN "),
        };
        assert_eq!(
            text.matches(placed_marker).count(),
            constraints::placed_pin_count(&board),
            "{}",
            board.board.name
        );
        for clock in &board.clocks {
            if let Pin::Known(pin) = &clock.pin {
                assert!(text.contains(pin.as_str()), "{}: {pin}", board.board.name);
            } else {
                assert!(text.contains(&format!("({}).pin", clock.name)));
            }
        }
    }
}

#[test]
fn vcu118_constraints_carry_the_cited_pins() {
    let board = load::by_name("vcu118").expect("vcu118 loads");
    let xdc = constraints::xdc(&board);
    // corundum's VCU118 fpga.xdc: PCIe refclk MGTREFCLK0_225 at AL9/AL8,
    // PERST# at AM17, the 125 MHz clock at AY24/AY23, UART TX at BB21.
    for line in [
        "set_property PACKAGE_PIN AL9 [get_ports {pcie_refclk_p}]",
        "set_property PACKAGE_PIN AL8 [get_ports {pcie_refclk_n}]",
        "set_property -dict {PACKAGE_PIN AM17 IOSTANDARD LVCMOS18} [get_ports {pcie_perst_n}]",
        "set_property -dict {PACKAGE_PIN AY24 IOSTANDARD LVDS} [get_ports {sys_clk_p}]",
        "set_property -dict {PACKAGE_PIN BB21 IOSTANDARD LVCMOS18} [get_ports {uart_tx}]",
        "create_clock -name pcie_refclk -period 10.000 [get_ports {pcie_refclk_p}]",
        "create_clock -name sys_clk -period 8.000 [get_ports {sys_clk_p}]",
    ] {
        assert!(xdc.contains(line), "missing: {line}");
    }
}

#[test]
fn the_vcu118_flash_goes_through_startupe3_not_user_pins() {
    let board = load::by_name("vcu118").expect("vcu118 loads");
    let top = verilog::wrapper(&board);
    // The switch's flash signals go to the STARTUPE3 connection.
    for conn in [
        "weft_board_flash_startupe3 flash (.sclk(switch_flash_sclk), .cs_n(switch_flash_cs_n), \
         .mosi(switch_flash_mosi), .miso(switch_flash_miso));",
        ".flash_sclk(switch_flash_sclk)",
        ".flash_miso(switch_flash_miso)",
    ] {
        assert!(top.contains(conn), "missing: {conn}");
    }
    // The connection module itself is simulated against a model of
    // STARTUPE3 in tests/smoke.rs.
    assert!(top.contains(&verilog::flash_startupe3_module()));
    assert!(top.contains("module STARTUPE3 ("), "no lint stub");
    // None of the flash's signals is a port of the top or a placed pin.
    let header = &top[..top.find(");").expect("port list")];
    assert!(!header.contains("flash_"), "{header}");
    assert!(!constraints::xdc(&board).contains("flash_"));
}

#[test]
fn stratix10_dx_constraints_carry_the_cited_pins() {
    let board = load::by_name("stratix10-dx-devkit").expect("reference board loads");
    let pins = constraints::quartus_pins(&board);
    // corundum's DK_DEV_1SDX_P_A fpga.qsf: REFCLK_GXPL10A_CH0 at AT45, the edge
    // connector's PERST# at BB39, clk_100m_fpga_3h at A31, CPU_RESETn at C41,
    // the first green user LED at A37, and each cable tile's CH0 reference clock.
    for line in [
        "set_location_assignment PIN_AT45 -to refclk_10a",
        "set_location_assignment PIN_AH10 -to refclk_11b",
        "set_location_assignment PIN_V10 -to refclk_11c",
        "set_location_assignment PIN_AJ45 -to refclk_10b",
        "set_location_assignment PIN_BB39 -to pcie_perst_n",
        "set_location_assignment PIN_A31 -to sys_clk",
        "set_location_assignment PIN_C41 -to user_reset_n",
        "set_location_assignment PIN_A37 -to led[0]",
        "set_instance_assignment -name IO_STANDARD \"HCSL\" -to refclk_10a",
        "set_location_assignment PIN_AP45 -to refclk_10a_1",
    ] {
        assert!(pins.contains(line), "missing: {line}");
    }
    // Each P-tile's two reference clock inputs reach their own pins.
    let top = weft_boards::verilog::wrapper(&board);
    for ip in &board.hard_ips {
        let second = ip
            .refclk1
            .as_deref()
            .expect("every P-tile has its second refclk");
        assert!(top.contains(&format!(".refclk0({})", ip.refclk)));
        assert!(top.contains(&format!(".refclk1({second})")));
    }
}

/// `board` with every open pin a build needs filled with a made-up pin:
/// only to exercise the build scripts' generation, never a board to build.
fn with_open_pins_filled(mut board: Board) -> Board {
    let mut next = 0;
    let mut fill = |pin: &mut Pin| {
        if *pin == Pin::Todo {
            next += 1;
            *pin = Pin::Known(format!("TESTPIN{next}"));
        }
    };
    for clock in &mut board.clocks {
        fill(&mut clock.pin);
    }
    for reset in &mut board.resets {
        fill(&mut reset.pin);
    }
    if let Some(uart) = board.uart.as_mut().filter(|u| u.link == UartLink::Pins) {
        fill(&mut uart.tx);
        fill(&mut uart.rx);
    }
    if let Some(flash) = board
        .flash
        .as_mut()
        .filter(|f| f.access == FlashAccess::Pins)
    {
        for pin in [
            &mut flash.sclk,
            &mut flash.cs_n,
            &mut flash.mosi,
            &mut flash.miso,
        ] {
            fill(pin);
        }
        flash.io_standard.get_or_insert_with(|| "1.8 V".to_owned());
    }
    board
}

#[test]
fn no_build_script_is_written_while_a_required_pin_is_open() {
    for board in boards() {
        let open = validate::unconfirmed_required(&board);
        if board.board.name != "agilex7-i-series-devkit" {
            // Every fact their builds need is given: the VCU118's flash is
            // reached through STARTUPE3, the reference kit has none its
            // user logic reaches and its console runs over JTAG.
            assert!(open.is_empty(), "{}: {open:?}", board.board.name);
            let files = generate::build_files(&board).expect("the board builds");
            assert!(files.iter().any(|f| f.name == generate::BUILD_SCRIPT));
            continue;
        }
        let err = generate::build_files(&board).expect_err("the Agilex kit still has an open pin");
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("no build script for {}", board.board.name)),
            "{message}"
        );
        // The message names every open fact, so the fix is one look away.
        assert!(!open.is_empty());
        for fact in &open {
            assert!(message.contains(fact.as_str()), "{message} lacks {fact}");
        }
    }
    // The Agilex kit's cable R-tile reference clock is not in any cited
    // document yet. Its I/O PLL's ranges are not either, but Quartus sets
    // an IOPLL's counters itself: they are an open fact, not one the build
    // waits for.
    let agilex = load::by_name("agilex7-i-series-devkit").expect("loads");
    let open = validate::unconfirmed_required(&agilex);
    assert_eq!(open, ["clock[2] (refclk_rtile1).pin"]);
    assert!(
        validate::todos(&agilex)
            .iter()
            .any(|f| f.starts_with("PLL ranges")),
        "the ranges stay listed as open"
    );
    // A pin the build needs, taken away, is reported.
    let mut reference = load::by_name("stratix10-dx-devkit").expect("loads");
    reference.resets[0].pin = Pin::Todo;
    let open = validate::unconfirmed_required(&reference);
    assert_eq!(open, ["reset[0] (pcie_perst_n).pin"]);
    // A stale build script from an earlier run is removed.
    let dir = scratch("stale-build");
    std::fs::write(dir.join(generate::BUILD_SCRIPT), "old").expect("writes");
    assert!(generate::write_build(&reference, &dir).is_err());
    assert!(!dir.join(generate::BUILD_SCRIPT).exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_project_scripts_name_the_device_and_each_ip_variant() {
    for board in boards() {
        let board = with_open_pins_filled(board);
        assert_eq!(validate::unconfirmed_required(&board), Vec::<String>::new());
        let files = generate::build_files(&board).expect("a board with every fact builds");
        let project = files
            .iter()
            .find(|f| f.name == generate::PROJECT_SCRIPT)
            .expect("every board has a project script");
        assert!(project.text.contains(&board.board.device));
        assert!(project.text.contains("weft_chip.v"));
        let build = files
            .iter()
            .find(|f| f.name == generate::BUILD_SCRIPT)
            .expect("every buildable board has a build script");
        assert!(
            build.text.contains("cp ../../verilog/weft_chip_*.hex ."),
            "the firmware images go beside the project: {}",
            build.text
        );
        for instance in verilog::instances(&board) {
            assert!(project.text.contains(&instance.module));
        }
        if board.board.vendor == weft_boards::model::Vendor::Intel {
            assert!(
                project.text.contains("ip/weft_pll.ip"),
                "the IOPLL variant is deployed"
            );
            // weft.sdc names clocks the IPs' own constraints create, so it
            // is read after every one of them (683761 3.6).
            let lines: Vec<&str> = project.text.lines().collect();
            let line_of = |what: &str| lines.iter().rposition(|l| l.contains(what));
            let sdc = line_of("-name SDC_FILE weft.sdc").expect("weft.sdc is in the project");
            let last_ip = line_of("-name IP_FILE").expect("the IP variants are");
            assert!(sdc > last_ip, "{}", project.text);
        }
        let build = files
            .iter()
            .find(|f| f.name == generate::BUILD_SCRIPT)
            .expect("build.sh");
        assert!(build.text.contains("is not on PATH"));
    }
}

#[test]
fn the_generated_wrapper_lints_with_verilator() {
    if !lint::verilator_available() {
        eprintln!("skipped: verilator is not installed");
        return;
    }
    for board in boards() {
        let dir = scratch(&board.board.name);
        // No emitted design: the wrapper lints against the planned switch top.
        let design = dir.join("no-design");
        generate::write(&board, &dir).expect("generation writes");
        if let Err(err) = lint::run(&dir, &design) {
            panic!("{}: {err}", board.board.name);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn an_ultrascale_root_ports_link_controller_and_credit_lint_and_elaborate() {
    // No board file has a PCIE4 root port yet: the VCU118's port as one.
    let mut board = load::by_name("vcu118").expect("vcu118 loads");
    board.hard_ips[0].role = Role::RootPort;
    let v = verilog::wrapper(&board);
    for part in [
        "weft_board_pcie4_link",
        "weft_board_pcie4_credit",
        ".cfg_hot_reset_in(host0_cfg_hot_reset_in)",
        ".pcie_tfc_nph_av(host0_tfc_nph_av)",
    ] {
        assert!(v.contains(part), "the root port's wrapper has {part}");
    }
    let dir = scratch("root-port");
    let design = dir.join("no-design");
    generate::write(&board, &dir).expect("generation writes");
    if lint::verilator_available() {
        if let Err(err) = lint::run(&dir, &design) {
            panic!("{err}");
        }
    }
    if lint::yosys_available() {
        if let Err(err) = lint::elaborate(&dir, &design) {
            panic!("{err}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_generated_wrapper_elaborates_with_yosys() {
    if !lint::yosys_available() {
        eprintln!("skipped: yosys is not installed");
        return;
    }
    for board in boards() {
        let dir = scratch(&format!("yosys-{}", board.board.name));
        let design = dir.join("no-design");
        generate::write(&board, &dir).expect("generation writes");
        if let Err(err) = lint::elaborate(&dir, &design) {
            panic!("{}: {err}", board.board.name);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_bifurcated_tile_is_one_instance_with_a_core_per_port() {
    // 683501: in 2x8 the x16 core's ports are p0_ and the x8 core's p1_,
    // and the tile's 16 lanes are split between them.
    let board = load::by_name("agilex7-i-series-devkit").expect("Agilex board loads");
    let instances = verilog::instances(&board);
    let cable = instances
        .iter()
        .find(|i| i.ports.len() == 2)
        .expect("the 2x8 R-tile is one instance");
    let names: Vec<&str> = cable.ports.iter().map(|(_, ip)| ip.name.as_str()).collect();
    assert_eq!(names, ["down0", "down1"]);
    let v = verilog::wrapper(&board);
    for line in [
        ".p0_rx_st0_data_o(down0_hip_rx_data[255:0])",
        ".p1_rx_st1_data_o(down1_hip_rx_data[511:256])",
        ".p1_tx_st_ready_o(down1_hip_tx_ready)",
        ".rx_p_in7(down0_rx_p[7])",
        ".rx_p_in8(down1_rx_p[0])",
        ".rx_p_in15(down1_rx_p[7])",
        "assign down1_clk = down0_clk;",
    ] {
        assert!(v.contains(line), "missing: {line}");
    }
    assert_eq!(
        v.matches(".coreclkout_hip(").count(),
        2,
        "one clock per tile"
    );
}

#[test]
fn an_active_low_led_is_driven_inverted_so_a_high_led_bit_lights_it() {
    let mut board = load::by_name("stratix10-dx-devkit").expect("reference board loads");
    assert_eq!(board.leds.len(), 4, "the kit's four user LEDs");
    for led in &mut board.leds {
        led.active_low = false;
    }
    board.leds[1].active_low = true;
    let top = verilog::wrapper(&board);
    assert!(
        top.contains("assign led = switch_led[3:0] ^ 4'b0010;"),
        "LED 1 alone inverted"
    );
}

/// Writes an executable shell script `name` holding `body` into `dir`.
fn fake_tool(dir: &std::path::Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("writes");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn an_intel_build_stops_to_have_its_ip_variants_set_before_it_compiles() {
    // The reference kit's build script, beside an emitted chip, with
    // Quartus stood in for: `quartus_sh -t` deploys every variant the
    // project script names (as its ip-deploy calls would), the compile
    // writes the bitstream, and every call is logged.
    let board = load::by_name("stratix10-dx-devkit").expect("loads");
    let root = scratch("intel-build");
    let dir = root.join("boards").join(&board.board.name);
    let design = root.join("verilog");
    let bin = root.join("bin");
    for d in [&dir, &design, &bin] {
        std::fs::create_dir_all(d).expect("creates");
    }
    std::fs::write(design.join("weft_chip.v"), "module weft_chip; endmodule\n").expect("writes");
    std::fs::write(design.join("weft_chip_soc.hex"), "00000013\n").expect("writes");
    generate::write_build(&board, &dir).expect("the reference kit builds");
    fake_tool(
        &bin,
        "quartus_sh",
        "echo \"quartus_sh $*\" >> calls.log\n\
         if [ \"$1\" = -t ]; then\n  mkdir -p ip\n  \
         for v in $(grep -o 'output-name=[a-z0-9_]*' project.tcl | cut -d= -f2); do\n    \
         [ -f ip/$v.ip ] || echo default > ip/$v.ip\n  done\nfi\n\
         if [ \"$1\" = --flow ]; then mkdir -p output_files; touch output_files/weft.sof; fi",
    );
    fake_tool(
        &bin,
        "quartus_ipgenerate",
        "echo \"quartus_ipgenerate $*\" >> calls.log",
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let build = || {
        std::process::Command::new("sh")
            .arg(dir.join(generate::BUILD_SCRIPT))
            .env("PATH", &path)
            .output()
            .expect("sh runs")
    };
    let calls = || std::fs::read_to_string(dir.join("calls.log")).unwrap_or_default();

    // The first build deploys the variants and stops, saying how to set each.
    let first = build();
    let said = String::from_utf8_lossy(&first.stderr).into_owned();
    assert_eq!(
        first.status.code(),
        Some(i32::from(weft_boards::project::SET_IP_VARIANTS_EXIT)),
        "{said}"
    );
    for variant in weft_boards::project::intel_ip_variants(&board) {
        assert!(dir.join("ip").join(format!("{variant}.ip")).exists());
        assert!(said.contains(&format!(" {variant}")), "{said}");
    }
    assert!(
        said.contains(
            "weft_hip_host0: p0 Gen4 x16, 512-bit Avalon-ST at 400 MHz, TLP Bypass, upstream port"
        ),
        "{said}"
    );
    assert!(!calls().contains("--flow"), "nothing compiled: {}", calls());
    assert!(
        dir.join("weft_chip_soc.hex").exists(),
        "the firmware is beside the project"
    );

    // With the variants set, the next build compiles.
    let second = build();
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert!(String::from_utf8_lossy(&second.stdout).contains("output_files/weft.sof"));
    assert!(calls().contains("quartus_ipgenerate --generate_project_ip_files weft"));
    assert!(calls().contains("quartus_sh --flow compile weft"));

    // A variant deleted is deployed again, and the build stops for it alone.
    std::fs::remove_file(dir.join("ip/weft_pll.ip")).expect("removes");
    let third = build();
    let said = String::from_utf8_lossy(&third.stderr).into_owned();
    assert_eq!(third.status.code(), Some(2), "{said}");
    assert!(said.contains("variants weft_pll with"), "{said}");
    let _ = std::fs::remove_dir_all(&root);
}
