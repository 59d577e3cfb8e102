//! Constraints in the vendor's format: pins, I/O standards, clocks, false paths.
//!
//! Intel gets a Quartus Tcl file of pin assignments (sourced by the project
//! script) and an `.sdc`; Xilinx gets one `.xdc`. A pin written `"TODO"`
//! becomes a comment naming the field, so the first build shows what is open.

use std::fmt::Write as _;

use crate::clocking::{self, PllRole};
use crate::ethernet::{self, Management};
use crate::model::{Board, Pin, Vendor};
use crate::verilog;

/// A top-level port with a package pin and I/O standard.
struct Placed {
    port: String,
    pin: Pin,
    io_standard: String,
    /// Further I/O properties, by name ([`crate::model::NamedPin`]).
    properties: Vec<(String, String)>,
    field: String,
}

/// The wrapper's ports that sit on package pins, in file order.
fn placed(board: &Board) -> Vec<Placed> {
    let xilinx = board.board.vendor == Vendor::Xilinx;
    let mut all = Vec::new();
    for (i, c) in board.clocks.iter().enumerate() {
        let split = xilinx && c.pin_n.is_some();
        let port = if split {
            format!("{}_p", c.name)
        } else {
            c.name.clone()
        };
        all.push(Placed {
            port,
            pin: c.pin.clone(),
            io_standard: c.io_standard.clone(),
            properties: Vec::new(),
            field: format!("clock[{i}] ({}).pin", c.name),
        });
        if let (true, Some(n)) = (split, &c.pin_n) {
            all.push(Placed {
                port: format!("{}_n", c.name),
                pin: n.clone(),
                io_standard: c.io_standard.clone(),
                properties: Vec::new(),
                field: format!("clock[{i}] ({}).pin_n", c.name),
            });
        }
    }
    for (i, r) in board.resets.iter().enumerate() {
        all.push(Placed {
            port: r.name.clone(),
            pin: r.pin.clone(),
            io_standard: r.io_standard.clone(),
            properties: Vec::new(),
            field: format!("reset[{i}] ({}).pin", r.name),
        });
    }
    for (i, l) in board.leds.iter().enumerate() {
        all.push(Placed {
            port: format!("led[{i}]"),
            pin: l.pin.clone(),
            io_standard: l.io_standard.clone(),
            properties: Vec::new(),
            field: format!("led[{i}] ({}).pin", l.name),
        });
    }
    if let Some(u) = board.uart_on_pins() {
        for (port, pin, field) in [("uart_tx", &u.tx, "uart.tx"), ("uart_rx", &u.rx, "uart.rx")] {
            all.push(Placed {
                port: port.to_owned(),
                pin: pin.clone(),
                io_standard: u.io_standard.clone().unwrap_or_default(),
                properties: Vec::new(),
                field: field.to_owned(),
            });
        }
    }
    if let Some(f) = board.flash_on_pins() {
        for (port, pin) in [
            ("flash_sclk", &f.sclk),
            ("flash_cs_n", &f.cs_n),
            ("flash_mosi", &f.mosi),
            ("flash_miso", &f.miso),
        ] {
            all.push(Placed {
                port: port.to_owned(),
                pin: pin.clone(),
                io_standard: f.io_standard.clone().unwrap_or_default(),
                properties: Vec::new(),
                field: format!("flash.{}", &port["flash_".len()..]),
            });
        }
    }
    if let (Management::SgmiiLvds(_), Some(eth)) = (ethernet::management(board), &board.ethernet) {
        for (i, p) in eth.pins.iter().enumerate() {
            all.push(Placed {
                port: p.name.clone(),
                pin: p.pin.clone(),
                io_standard: p.io_standard.clone(),
                properties: p.properties.clone().into_iter().collect(),
                field: format!("ethernet.pin[{i}] ({}).pin", p.name),
            });
        }
    }
    all
}

/// Whether an I/O standard is a transceiver reference clock's, which the
/// tools set from the pin itself.
fn is_gt_refclk(io_standard: &str) -> bool {
    io_standard == "MGTREFCLK"
}

/// The ports that are slow, asynchronous board signals: resets, LEDs,
/// UART, flash on user pins, and the Ethernet PHY's reset and management
/// pins.
fn async_ports(board: &Board) -> Vec<String> {
    let mut ports: Vec<String> = board.resets.iter().map(|r| r.name.clone()).collect();
    if !board.leds.is_empty() {
        ports.push("led[*]".to_owned());
    }
    if board.uart_on_pins().is_some() {
        ports.push("uart_tx".to_owned());
        ports.push("uart_rx".to_owned());
    }
    if board.flash_on_pins().is_some() {
        ports.push("flash_*".to_owned());
    }
    if let Management::SgmiiLvds(_) = ethernet::management(board) {
        ports.push("phy_*".to_owned());
    }
    ports
}

/// weft's two PLL output clocks as `create_generated_clock` arguments:
/// name, the PLL output pin, multiply and divide from the reference clock
/// (reduced), from the board's plan.
fn pll_clocks(board: &Board) -> [(&'static str, String, u64, u64); 2] {
    let (kind, plan) = clocking::board_pll(board);
    let pin = |role| {
        clocking::ports(kind)
            .iter()
            .find(|p| p.role == role)
            .map(|p| p.name)
            .expect("every PLL has both outputs")
    };
    let ratio = |divide: u64| {
        let (m, d) = (plan.multiply, plan.pre_divide * divide);
        let g = gcd(m, d);
        (m / g, d / g)
    };
    let (dm, dd) = ratio(plan.data_plane_divide);
    let (cm, cd) = ratio(plan.soft_core_divide);
    [
        (
            "weft_clk",
            format!("{}/{}", clocking::PLL_INSTANCE, pin(PllRole::DataPlane)),
            dm,
            dd,
        ),
        (
            "weft_core_clk",
            format!("{}/{}", clocking::PLL_INSTANCE, pin(PllRole::SoftCore)),
            cm,
            cd,
        ),
    ]
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The comment both constraint formats put above the clock groups.
const CLOCK_GROUPS_NOTE: &str = "\
# Clock domains. weft_clk (data plane) and weft_core_clk (soft core) come
# from one PLL VCO with aligned edges: one group, their crossing inside
# weft_chip is timed as synchronous. Each hard IP's application clock
# is asynchronous to them (and to the other hard IPs): the dual-clock FIFOs
# cross between them, so those paths are cut.";

/// The Ethernet pins of a board whose management Ethernet the wrapper
/// does not connect, listed for the record with the reason.
fn ethernet_note(board: &Board, comment: &str) -> String {
    let mut v = String::new();
    if let (Some(eth), Management::Absent(why)) = (&board.ethernet, ethernet::management(board)) {
        let _ = writeln!(
            v,
            "\n{comment} Management Ethernet ({:?}, PHY {}): not connected in the wrapper: {why}.",
            eth.interface, eth.phy
        );
        for p in &eth.pins {
            let pin = p.pin.known().unwrap_or("TODO");
            let _ = writeln!(v, "{comment}   {} = {pin} ({})", p.name, p.io_standard);
        }
    }
    v
}

/// Quartus pin and I/O standard assignments (Tcl, sourced with the project open).
pub fn quartus_pins(board: &Board) -> String {
    let mut v = format!(
        "# Pin assignments for {} ({}), generated by weft-boards.\n",
        board.board.title, board.board.device
    );
    for p in placed(board) {
        match p.pin.known() {
            Some(pin) => {
                let _ = writeln!(v, "set_location_assignment PIN_{pin} -to {}", p.port);
                let _ = writeln!(
                    v,
                    "set_instance_assignment -name IO_STANDARD \"{}\" -to {}",
                    p.io_standard, p.port
                );
            }
            None => {
                let _ = writeln!(
                    v,
                    "# TODO {}: pin unknown ({}); the fitter will place it anywhere",
                    p.port, p.field
                );
            }
        }
    }
    v += &ethernet_note(board, "#");
    v
}

/// The Intel FPGA's JTAG clock port, as the Timing Analyzer names it.
const JTAG_TCK: &str = "altera_reserved_tck";

/// The shortest TCK period of the Intel FPGA Download Cable II, in ns
/// (683719 2.7, Table 7: tJCP, 24 MHz).
const JTAG_TCK_PERIOD_NS: &str = "41.667";

/// Timing constraints for Quartus (`.sdc`).
pub fn quartus_sdc(board: &Board) -> String {
    let mut v = format!(
        "# Timing constraints for {}, generated by weft-boards.\n",
        board.board.name
    );
    for c in &board.clocks {
        let _ = writeln!(
            v,
            "create_clock -name {0} -period {1:.3} [get_ports {{{0}}}]",
            c.name,
            1000.0 / c.mhz
        );
    }
    let refclk = &board.pll.refclk;
    let _ = writeln!(
        v,
        "# weft's names for the IOPLL's outputs, replacing the clocks its IP's\n\
         # constraints create there (read before this file)."
    );
    for (name, pin, multiply, divide) in pll_clocks(board) {
        let _ = writeln!(
            v,
            "create_generated_clock -name {name} -source [get_ports {{{refclk}}}] \
             -multiply_by {multiply} -divide_by {divide} [get_pins -compatibility_mode {{{}}}]",
            pin.replace('/', "|*|")
        );
    }
    if board.console_over_jtag() {
        // The console's JTAG channel runs on the JTAG port's TCK, which
        // the Timing Analyzer leaves unconstrained unless told (683081,
        // "JTAG Signals"): at most the download cable's 24 MHz (683719
        // 2.7, tJCP 41.67 ns).
        let _ = writeln!(
            v,
            "create_clock -name {JTAG_TCK} -period {JTAG_TCK_PERIOD_NS} [get_ports {{{JTAG_TCK}}}]"
        );
    }
    let _ = writeln!(v, "derive_clock_uncertainty");
    let _ = writeln!(
        v,
        "{CLOCK_GROUPS_NOTE}\n# The hard IPs' clocks are created by the IPs' own SDC."
    );
    let mut groups = format!(
        "set_clock_groups -asynchronous -group [get_clocks {{{refclk} weft_clk weft_core_clk}}]"
    );
    for instance in verilog::instances(board) {
        let _ = write!(
            groups,
            " -group [get_clocks {{*{}*coreclkout_hip*}}]",
            instance.module
        );
    }
    if board.console_over_jtag() {
        let _ = write!(groups, " -group [get_clocks {{{JTAG_TCK}}}]");
    }
    let _ = writeln!(v, "{groups}");
    for port in async_ports(board) {
        let _ = writeln!(v, "set_false_path -from [get_ports {{{port}}}]");
        let _ = writeln!(v, "set_false_path -to [get_ports {{{port}}}]");
    }
    v
}

/// Vivado constraints (`.xdc`).
pub fn xdc(board: &Board) -> String {
    let mut v = format!(
        "# Constraints for {} ({}), generated by weft-boards.\n",
        board.board.title, board.board.device
    );
    for p in placed(board) {
        match p.pin.known() {
            Some(pin) if is_gt_refclk(&p.io_standard) => {
                let _ = writeln!(
                    v,
                    "set_property PACKAGE_PIN {pin} [get_ports {{{}}}]",
                    p.port
                );
            }
            Some(pin) => {
                let properties: String = p
                    .properties
                    .iter()
                    .map(|(name, value)| format!(" {name} {value}"))
                    .collect();
                let _ = writeln!(
                    v,
                    "set_property -dict {{PACKAGE_PIN {pin} IOSTANDARD {}{properties}}} [get_ports {{{}}}]",
                    p.io_standard, p.port
                );
            }
            None => {
                let _ = writeln!(v, "# TODO {}: pin unknown ({})", p.port, p.field);
            }
        }
    }
    let xilinx_port = |name: &str| {
        board
            .clocks
            .iter()
            .find(|c| c.name == name)
            .map(|c| {
                if c.pin_n.is_some() {
                    format!("{name}_p")
                } else {
                    name.to_owned()
                }
            })
            .unwrap_or_else(|| name.to_owned())
    };
    for c in &board.clocks {
        let _ = writeln!(
            v,
            "create_clock -name {} -period {:.3} [get_ports {{{}}}]",
            c.name,
            1000.0 / c.mhz,
            xilinx_port(&c.name)
        );
    }
    for (name, pin, _, _) in pll_clocks(board) {
        // Vivado derives the MMCM's output clocks itself; this names them.
        let _ = writeln!(v, "create_generated_clock -name {name} [get_pins {pin}]");
    }
    let _ = writeln!(v, "{CLOCK_GROUPS_NOTE}");
    let mut groups = format!(
        "set_clock_groups -asynchronous -group [get_clocks -include_generated_clocks {}]",
        board.pll.refclk
    );
    for ip in &board.hard_ips {
        let _ = write!(
            groups,
            " -group [get_clocks -of_objects [get_pins {}_hip/user_clk]]",
            ip.name
        );
    }
    let _ = writeln!(v, "{groups}");
    for port in async_ports(board) {
        let _ = writeln!(v, "set_false_path -from [get_ports {{{port}}}]");
        let _ = writeln!(v, "set_false_path -to [get_ports {{{port}}}]");
    }
    if let Management::SgmiiLvds(lvds) = ethernet::management(board) {
        let [_, (core_clock, ..)] = pll_clocks(board);
        v += &ethernet::xdc(lvds, core_clock);
    }
    v += &ethernet_note(board, "#");
    v
}

/// How many pins the constraints place: every known pin of a wrapper port.
pub fn placed_pin_count(board: &Board) -> usize {
    placed(board)
        .iter()
        .filter(|p| p.pin.known().is_some())
        .count()
}
