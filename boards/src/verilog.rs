//! The top-level Verilog wrapper: the board's hard IPs around `weft_chip`.
//!
//! `weft_board_top` instantiates each PCIe hard IP as the vendor IP variant
//! the project script generates (`weft_hip_<name>`, one per tile where a
//! tile is split among several ports, see [`instances`]), adapts its TLP
//! interface to weft's TLP stream, crosses it into weft's clock domain with
//! a dual-clock FIFO per direction, and connects it to one port of
//! `weft_chip`. Ports the board does not use are tied off.
//!
//! # The chip top this wrapper expects
//!
//! `weft_chip`, the switch's data plane (weft-hdl's `weft_switch_top`) and
//! its soft core (`weft_soc`) in one design (weft-hdl's `chip::Chip`),
//! which `cargo xtask verilog` emits into `target/verilog/`, has `clock` (the data
//! plane's, [`weft_regs::DATA_PLANE_CLOCK_HZ`]) and `reset` (active high,
//! synchronous to `clock`), `core_clock` (the soft core's,
//! [`weft_regs::SOFT_CORE_CLOCK_HZ`], made by the same PLL and edge-aligned
//! with `clock`, see [`clocking`]) and `core_reset`, for each of the
//! [`SWITCH_PORTS`] ports `p` an `ingress$p$…` TLP sink and an `egress$p$…`
//! TLP source with weft's stream signals (`valid`, `ready`, `sop`, `eop`,
//! `empty[4:0]`, `dw0`…`dw3[31:0]`, `payload[W-1:0]`; see `hdl/src/stream.rs`),
//! and `uart_rx`, `uart_tx`, `led[7:0]` and the soft core's SPI flash
//! (`flash_sclk`, `flash_cs_n`, `flash_mosi`, `flash_miso`), which leave the
//! board top as ports or, for a flash on the dedicated configuration pins,
//! through `STARTUPE3`, for a console over JTAG through [`console`]'s
//! module, and the management MAC's MII (`mii_*`,
//! [`ethernet::MII_PORTS`]) and the MDIO master's pins (`mdc`, `mdio_o`,
//! `mdio_oe`, `mdio_i`, [`ethernet::MDIO_PORTS`]), which reach the board's
//! PHY through [`ethernet`]'s block or idle where the board has none weft
//! drives; per port `link_hot_reset$p` and `link_retrain$p`, one-cycle
//! pulses on `clock` that the port's link controller carries out
//! (`link.v`), `egress_consume$p[2:0]` and `egress_consume_dws$p[10:0]`,
//! what each TLP the egress commits takes of the link partner's credit,
//! `egress_refund$p[2:0]` and `egress_refund_dws$p[10:0]`, what a TLP so
//! committed and then discarded before the link gives back,
//! and the credit itself, a bit per port in `egress_credit_posted`,
//! `egress_credit_non_posted` and `egress_credit_completion`, which the
//! wrapper keeps from the hard IP's credit interface (`credit.v`).
//! Where it is not emitted (the tests lint the wrapper on its own),
//! [`planned_switch_top`] writes a stub of that interface to lint against.
//!
//! # Adaptation, now and planned
//!
//! Intel tiles in TLP Bypass hand over headers on a header bus beside the
//! data; their ports are data ([`tile::Table`]), the adaptation is the
//! `weft_board_avst_rx`/`weft_board_avst_tx` modules of `avst.v`: one TLP
//! per beat starting in segment 0, header DWs to `dw0`…`dw3`, the data
//! bus's DW order reversed (the first DW is least significant on Avalon-ST
//! and most significant in weft), the end segment and empty DWs computed
//! from weft's `empty` and back, the TX ready latency honoured, and the TX
//! FIFO handing over whole TLPs so the tile never sees a gap inside one.
//! The UltraScale+ block hands over descriptors, not TLP headers (PG213):
//! the `weft_board_axis_rx`/`weft_board_axis_tx` modules of `axis.v`
//! translate them (memory, I/O and AtomicOp requests, completions), move
//! the payload past the descriptor, and drive or read the tuser sideband
//! (is_sop/is_eop and their pointers, byte enables, discontinue) on its
//! completer interface (CQ/CC), or its requester interface (RQ/RC) on a
//! root port. A downstream port's hot reset and retrain requests reach
//! its hard IP through `link.v`'s controllers, and each egress's credit
//! comes from the hard IP's transmit credit interface through `credit.v`.
//! Planned: several TLPs per beat across segments, the UltraScale+
//! block's other interface pair and its configuration requests and
//! messages, and width gearboxes where the hard IP's bus differs from
//! weft's.

use std::fmt::Write as _;

use crate::catalog;
use crate::clocking;
use crate::console;
use crate::ethernet::{self, Management};
use crate::model::{Board, HardIp, HardIpKind, Role, Vendor};
use crate::tile::{self, Sig};
use crate::validate::SWITCH_PORTS;

/// Payload bits of weft's TLP stream in the reference configuration
/// (`weft_hdl::emit::REFERENCE_PAYLOAD_BITS`).
pub const DATAPATH_BITS: u32 = 512;

/// Bits of the stream's empty-DW count (`weft_hdl::stream::EMPTY_BITS`).
const EMPTY_BITS: u32 = 5;

/// Bits of `weft_chip`'s `egress_consume_dws$p`, a TLP's data length in
/// DW (`weft_hdl::switching::LENGTH_BITS`).
const CONSUME_DWS_BITS: u32 = 11;

/// `weft_chip`'s credit inputs, `egress_credit_<class>`, a bit per port, in
/// the order of `egress_consume$p`'s bits (`weft_hdl::switching::CLASS_*`).
const CREDIT_CLASSES: [&str; 3] = ["posted", "non_posted", "completion"];

/// LED outputs of `weft_chip`.
pub(crate) const SWITCH_LEDS: usize = 8;

/// The macro that turns on the vendor black-box stubs, for lint and simulation.
pub const STUB_DEFINE: &str = "WEFT_VENDOR_STUBS";

/// Module name of the generated wrapper.
pub const TOP: &str = "weft_board_top";

/// The Verilog module name of the generated variant whose first port is `ip`.
pub fn hip_module(ip: &HardIp) -> String {
    format!("weft_hip_{}", ip.name)
}

/// One hard IP instance and the weft ports it serves: the ports of an Intel
/// tile bifurcated 2x8 or 4x4 share one instance, one port per core in
/// board order; every other hard IP serves one port.
pub struct Instance<'a> {
    /// The variant's module name, after its first port.
    pub module: String,
    /// The ports it serves: switch port number and hard IP, in core order.
    pub ports: Vec<(usize, &'a HardIp)>,
}

impl Instance<'_> {
    /// The hard IPs of the ports, in core order.
    pub fn cores(&self) -> Vec<&HardIp> {
        self.ports.iter().map(|(_, ip)| *ip).collect()
    }

    /// The instance's name in `weft_board_top`.
    pub fn name(&self) -> String {
        format!("{}_hip", self.ports[0].1.name)
    }
}

/// The board's hard IP instances, in the order of their first ports.
pub fn instances(board: &Board) -> Vec<Instance<'_>> {
    let mut out: Vec<Instance> = Vec::new();
    for (p, ip) in board.hard_ips.iter().enumerate() {
        let shared = tile::table(ip.kind).and_then(|_| {
            out.iter_mut().find(|i| {
                let first = i.ports[0].1;
                first.kind == ip.kind && first.tile == ip.tile
            })
        });
        match shared {
            Some(instance) => instance.ports.push((p, ip)),
            None => out.push(Instance {
                module: hip_module(ip),
                ports: vec![(p, ip)],
            }),
        }
    }
    out
}

/// `[hi:0] ` for a signal of `bits` bits, nothing for one bit.
pub(crate) fn bit_range(bits: u32) -> String {
    if bits == 1 {
        String::new()
    } else {
        format!("[{}:0] ", bits - 1)
    }
}

/// One port of a module: direction, width and name.
pub(crate) struct Port {
    /// `input` or `output`.
    pub(crate) dir: &'static str,
    /// Width in bits.
    pub(crate) bits: u32,
    /// The port's name.
    pub(crate) name: String,
}

impl Port {
    pub(crate) fn new(dir: &'static str, bits: u32, name: impl Into<String>) -> Self {
        Port {
            dir,
            bits,
            name: name.into(),
        }
    }

    /// The Verilog range of the port, empty for one bit.
    pub(crate) fn range(&self) -> String {
        bit_range(self.bits)
    }
}

/// The ports of a hard IP variant that the wrapper connects.
fn hip_ports(instance: &Instance) -> Vec<Port> {
    let ip = instance.ports[0].1;
    if let Some(table) = tile::table(ip.kind) {
        return table
            .expand(&instance.cores())
            .into_iter()
            .map(|port| {
                let dir = if port.sig.from_ip() {
                    "output"
                } else {
                    "input"
                };
                Port::new(dir, port.bits, port.name)
            })
            .collect();
    }
    pcie4_ports(ip)
}

/// The ports of an UltraScale+ PCIE4/PCIE4C variant that the wrapper connects.
fn pcie4_ports(ip: &HardIp) -> Vec<Port> {
    let lanes = u32::from(ip.lanes);
    let d = ip.data_bits;
    let mut ports = Vec::new();
    // Port names as in PG213 "Port Descriptions"; user-bus widths for
    // the 512-bit interface, else the 64/128/256-bit one.
    let (rq, rc, cq, cc) = if d == 512 {
        (137, 161, 183, 81)
    } else {
        (62, 75, 88, 33)
    };
    let keep = d / 32;
    ports.push(Port::new("input", 1, "sys_clk"));
    ports.push(Port::new("input", 1, "sys_clk_gt"));
    ports.push(Port::new("input", 1, "sys_reset"));
    ports.push(Port::new("output", 1, "user_clk"));
    ports.push(Port::new("output", 1, "user_reset"));
    ports.push(Port::new("output", 1, "user_lnk_up"));
    ports.push(Port::new("input", lanes, "pci_exp_rxp"));
    ports.push(Port::new("input", lanes, "pci_exp_rxn"));
    ports.push(Port::new("output", lanes, "pci_exp_txp"));
    ports.push(Port::new("output", lanes, "pci_exp_txn"));
    // PG213 "Configuration Control Interface" and "Configuration
    // Management Interface": a root port's hot reset and its access to its
    // own configuration space.
    ports.push(Port::new("input", 1, "cfg_hot_reset_in"));
    ports.push(Port::new("input", 10, "cfg_mgmt_addr"));
    ports.push(Port::new("input", 8, "cfg_mgmt_function_number"));
    ports.push(Port::new("input", 1, "cfg_mgmt_write"));
    ports.push(Port::new("input", 32, "cfg_mgmt_write_data"));
    ports.push(Port::new("input", 4, "cfg_mgmt_byte_enable"));
    ports.push(Port::new("input", 1, "cfg_mgmt_read"));
    ports.push(Port::new("output", 32, "cfg_mgmt_read_data"));
    ports.push(Port::new("output", 1, "cfg_mgmt_read_write_done"));
    ports.push(Port::new("input", 1, "cfg_mgmt_debug_access"));
    // PG213 "Avoiding Head-of-Line Blocking for Posted Requests".
    ports.push(Port::new("output", 4, "pcie_tfc_nph_av"));
    ports.push(Port::new("output", 4, "pcie_tfc_npd_av"));
    for (bus, user, from_ip) in [
        ("m_axis_cq", cq, true),
        ("s_axis_cc", cc, false),
        ("s_axis_rq", rq, false),
        ("m_axis_rc", rc, true),
    ] {
        let (out, inp) = if from_ip {
            ("output", "input")
        } else {
            ("input", "output")
        };
        ports.push(Port::new(out, d, format!("{bus}_tdata")));
        ports.push(Port::new(out, keep, format!("{bus}_tkeep")));
        ports.push(Port::new(out, 1, format!("{bus}_tlast")));
        ports.push(Port::new(out, user, format!("{bus}_tuser")));
        ports.push(Port::new(out, 1, format!("{bus}_tvalid")));
        let ready_bits = if from_ip { 1 } else { 4 };
        ports.push(Port::new(inp, ready_bits, format!("{bus}_tready")));
    }
    ports
}

/// A Verilog black-box module with the given ports, outputs tied low so
/// lint and simulation see them driven.
fn stub(module: &str, ports: &[Port], note: &str) -> String {
    parameterized_stub(module, &[], ports, note)
}

/// [`stub`] of a module that takes `parameters` (name and default), which
/// the black box accepts without using them.
pub(crate) fn parameterized_stub(
    module: &str,
    parameters: &[(&str, &str)],
    ports: &[Port],
    note: &str,
) -> String {
    let mut v = String::new();
    let _ = writeln!(v, "// {note}");
    if parameters.is_empty() {
        let _ = writeln!(v, "(* blackbox *)\nmodule {module} (");
    } else {
        let list: Vec<String> = parameters
            .iter()
            .map(|(name, default)| format!("    parameter {name} = {default}"))
            .collect();
        let _ = writeln!(
            v,
            "/* verilator lint_off UNUSEDPARAM */\n(* blackbox *)\nmodule {module} #(\n{}\n) (",
            list.join(",\n")
        );
    }
    let list: Vec<String> = ports
        .iter()
        .map(|p| format!("    {} wire {}{}", p.dir, p.range(), p.name))
        .collect();
    let _ = writeln!(v, "{}\n);", list.join(",\n"));
    if !parameters.is_empty() {
        let _ = writeln!(v, "/* verilator lint_on UNUSEDPARAM */");
    }
    v + &stub_body(ports.iter().map(|p| (p.dir, p.bits, p.name.as_str())))
}

/// A black box's body after its port list, `(direction, bits, name)` each:
/// every input read into an unused wire, every output tied low, so lint
/// and simulation see each used and driven; then `endmodule`.
pub(crate) fn stub_body<'a>(
    ports: impl Iterator<Item = (&'a str, u32, &'a str)> + Clone,
) -> String {
    let mut v = String::from("    /* verilator lint_off UNUSEDSIGNAL */\n");
    for (_, bits, name) in ports.clone().filter(|(dir, _, _)| *dir == "input") {
        let _ = writeln!(v, "    wire {}unused_{name} = {name};", bit_range(bits));
    }
    v += "    /* verilator lint_on UNUSEDSIGNAL */\n";
    for (_, bits, name) in ports.filter(|(dir, _, _)| *dir == "output") {
        let _ = writeln!(v, "    assign {name} = {bits}'d0;");
    }
    v + "endmodule\n\n"
}

/// The Xilinx primitives the wrapper uses (UG974), as stubs.
fn xilinx_primitive_stubs() -> String {
    let mut v = String::new();
    v += &stub(
        "IBUFDS",
        &[
            Port::new("input", 1, "I"),
            Port::new("input", 1, "IB"),
            Port::new("output", 1, "O"),
        ],
        "Vendor primitive (UG974 IBUFDS): black box.",
    );
    v += &stub(
        "IBUFDS_GTE4",
        &[
            Port::new("input", 1, "I"),
            Port::new("input", 1, "IB"),
            Port::new("input", 1, "CEB"),
            Port::new("output", 1, "O"),
            Port::new("output", 1, "ODIV2"),
        ],
        "Vendor primitive (UG974 IBUFDS_GTE4): black box.",
    );
    v += &stub(
        "BUFG_GT",
        &[
            Port::new("input", 1, "I"),
            Port::new("input", 1, "CE"),
            Port::new("input", 1, "CEMASK"),
            Port::new("input", 1, "CLR"),
            Port::new("input", 1, "CLRMASK"),
            Port::new("input", 3, "DIV"),
            Port::new("output", 1, "O"),
        ],
        "Vendor primitive (UG974 BUFG_GT): black box.",
    );
    v += &stub(
        "BUFG",
        &[Port::new("input", 1, "I"), Port::new("output", 1, "O")],
        "Vendor primitive (UG974 BUFG): black box.",
    );
    v += &stub(
        "IOBUF",
        &[
            Port::new("input", 1, "I"),
            Port::new("output", 1, "O"),
            Port::new("input", 1, "T"),
            Port::new("inout", 1, "IO"),
        ],
        "Vendor primitive (UG974 IOBUF): black box.",
    );
    v += &stub(
        "STARTUPE3",
        &[
            Port::new("output", 1, "CFGCLK"),
            Port::new("output", 1, "CFGMCLK"),
            Port::new("output", 4, "DI"),
            Port::new("output", 1, "EOS"),
            Port::new("output", 1, "PREQ"),
            Port::new("input", 4, "DO"),
            Port::new("input", 4, "DTS"),
            Port::new("input", 1, "FCSBO"),
            Port::new("input", 1, "FCSBTS"),
            Port::new("input", 1, "GSR"),
            Port::new("input", 1, "GTS"),
            Port::new("input", 1, "KEYCLEARB"),
            Port::new("input", 1, "PACK"),
            Port::new("input", 1, "USRCCLKO"),
            Port::new("input", 1, "USRCCLKTS"),
            Port::new("input", 1, "USRDONEO"),
            Port::new("input", 1, "USRDONETS"),
        ],
        "Vendor primitive (UG974 STARTUPE3): black box.",
    );
    v
}

/// Module name of the flash's `STARTUPE3` connection.
pub const FLASH_STARTUPE3: &str = "weft_board_flash_startupe3";

/// The module that puts the soft core's SPI flash on the dedicated
/// configuration pins through `STARTUPE3` (UG570, "STARTUPE3 Connections to
/// Dedicated Pins"; ports from UG974, "STARTUPE3"): the SPI clock drives
/// CCLK through `USRCCLKO`, chip select FCS_B through `FCSBO`, MOSI the D00
/// pin (the flash's DQ0) through `DO[0]`; MISO comes back from D01 (DQ1) on
/// `DI[1]`, whose output stays tri-stated. In single-bit SPI the flash's
/// DQ2 (W#) and DQ3 (HOLD#) are inputs to it that must stay high, so
/// `DO[3:2]` drive them high. Every three-state control is active high
/// (UG974), so 0 drives. `STARTUPE3` is combinatorial and takes no I/O
/// timing constraints (UG570, "Timing Considerations for Flash
/// Connections"): the SPI controller's registers sit in `weft_chip`,
/// clocked far below the flash's limits.
pub fn flash_startupe3_module() -> String {
    let conns = [
        ("CFGCLK", "cfgclk"),
        ("CFGMCLK", "cfgmclk"),
        ("DI", "d_in"),
        ("EOS", "eos"),
        ("PREQ", "preq"),
        ("DO", "{2'b11, 1'b0, mosi}"),
        ("DTS", "4'b0010"),
        ("FCSBO", "cs_n"),
        ("FCSBTS", "1'b0"),
        ("GSR", "1'b0"),
        ("GTS", "1'b0"),
        ("KEYCLEARB", "1'b1"),
        ("PACK", "1'b0"),
        ("USRCCLKO", "sclk"),
        ("USRCCLKTS", "1'b0"),
        ("USRDONEO", "1'b1"),
        ("USRDONETS", "1'b1"),
    ];
    let list: Vec<String> = conns
        .iter()
        .map(|(port, to)| format!("        .{port}({to})"))
        .collect();
    format!(
        "// The soft core's SPI flash on the dedicated configuration pins (CCLK,\n\
         // FCS_B, D00-D03), which only STARTUPE3 reaches (UG570, UG974).\n\
         module {FLASH_STARTUPE3} (\n\
         \x20   input wire sclk,\n\
         \x20   input wire cs_n,\n\
         \x20   input wire mosi,\n\
         \x20   output wire miso\n\
         );\n\
         \x20   /* verilator lint_off UNUSEDSIGNAL */\n\
         \x20   wire [3:0] d_in;\n\
         \x20   wire cfgclk, cfgmclk, eos, preq;\n\
         \x20   /* verilator lint_on UNUSEDSIGNAL */\n\
         \x20   STARTUPE3 startup (\n{}\n    );\n\
         \x20   assign miso = d_in[1];\n\
         endmodule\n",
        list.join(",\n")
    )
}

/// The ports of `weft_chip` as this wrapper expects them.
pub(crate) fn switch_ports() -> Vec<Port> {
    let w = DATAPATH_BITS;
    let mut ports = vec![
        Port::new("input", 1, "clock"),
        Port::new("input", 1, "reset"),
        Port::new("input", 1, "core_clock"),
        Port::new("input", 1, "core_reset"),
    ];
    for p in 0..SWITCH_PORTS {
        for (side, inp, out) in [
            ("ingress", "input", "output"),
            ("egress", "output", "input"),
        ] {
            ports.push(Port::new(inp, 1, format!("{side}${p}$valid")));
            ports.push(Port::new(out, 1, format!("{side}${p}$ready")));
            ports.push(Port::new(inp, 1, format!("{side}${p}$sop")));
            ports.push(Port::new(inp, 1, format!("{side}${p}$eop")));
            ports.push(Port::new(inp, EMPTY_BITS, format!("{side}${p}$empty")));
            ports.push(Port::new(inp, 1, format!("{side}${p}$nullify")));
            for dw in 0..4 {
                ports.push(Port::new(inp, 32, format!("{side}${p}$dw{dw}")));
            }
            ports.push(Port::new(inp, w, format!("{side}${p}$payload")));
        }
        ports.push(Port::new("output", 1, format!("link_hot_reset${p}")));
        ports.push(Port::new("output", 1, format!("link_retrain${p}")));
        for credit in ["consume", "refund"] {
            ports.push(Port::new("output", 3, format!("egress_{credit}${p}")));
            ports.push(Port::new(
                "output",
                CONSUME_DWS_BITS,
                format!("egress_{credit}_dws${p}"),
            ));
        }
    }
    for class in CREDIT_CLASSES {
        ports.push(Port::new(
            "input",
            SWITCH_PORTS as u32,
            format!("egress_credit_{class}"),
        ));
    }
    ports.push(Port::new("input", SWITCH_PORTS as u32, "link_up"));
    ports.push(Port::new("input", 1, "uart_rx"));
    ports.push(Port::new("output", 1, "uart_tx"));
    ports.push(Port::new("output", SWITCH_LEDS as u32, "led"));
    for (port, out) in FLASH_PORTS {
        ports.push(Port::new(if *out { "output" } else { "input" }, 1, *port));
    }
    for (name, into_chip, bits) in ethernet::management_ports() {
        let dir = if *into_chip { "input" } else { "output" };
        ports.push(Port::new(dir, *bits, *name));
    }
    ports
}

/// The soft core's SPI flash ports on `weft_chip` and on the board
/// top (the SoC's `flash_*` signals, `hdl/src/soc/mod.rs`): name, and
/// whether it leaves the FPGA.
pub(crate) const FLASH_PORTS: &[(&str, bool)] = &[
    ("flash_sclk", true),
    ("flash_cs_n", true),
    ("flash_mosi", true),
    ("flash_miso", false),
];

/// A stub of `weft_chip`'s interface, to lint the wrapper against where
/// the design itself is not emitted.
pub fn planned_switch_top() -> String {
    let mut v = String::from(
        "// weft_chip's interface, for lint only: the real design is\n\
         // emitted by `cargo xtask verilog` into target/verilog/weft_chip.v.\n",
    );
    v += &stub(
        "weft_chip",
        &switch_ports(),
        "Planned weft design: black box.",
    );
    v
}

/// The adapter modules the wrapper uses: the dual-clock FIFO, the reset
/// and pulse synchronizers, the Avalon-ST shims of the Intel tiles, the
/// AXI4-Stream shims of the UltraScale+ block, the beat fitting their
/// transmit shims share, the downstream ports' link controllers, the
/// transmit credit counters and the management MAC's MII-to-GMII adapter.
pub fn support_modules() -> String {
    format!(
        "{}\n{}\n{}\n{}\n{}\n{}\n{}",
        include_str!("cdc.v"),
        include_str!("avst.v"),
        include_str!("axis.v"),
        include_str!("beat.v"),
        include_str!("link.v"),
        include_str!("credit.v"),
        include_str!("mii_gmii.v")
    )
}

/// The ports of `weft_board_top`: the board's clocks, resets, lanes, LEDs,
/// UART, flash on user pins and management Ethernet PHY.
pub(crate) fn top_ports(board: &Board) -> Vec<Port> {
    let mut ports: Vec<Port> = Vec::new();
    let xilinx = board.board.vendor == Vendor::Xilinx;
    for clock in &board.clocks {
        if xilinx && clock.pin_n.is_some() {
            ports.push(Port::new("input", 1, format!("{}_p", clock.name)));
            ports.push(Port::new("input", 1, format!("{}_n", clock.name)));
        } else {
            ports.push(Port::new("input", 1, clock.name.clone()));
        }
    }
    for reset in &board.resets {
        ports.push(Port::new("input", 1, reset.name.clone()));
    }
    for ip in &board.hard_ips {
        let lanes = u32::from(ip.lanes);
        ports.push(Port::new("input", lanes, format!("{}_rx_p", ip.name)));
        ports.push(Port::new("input", lanes, format!("{}_rx_n", ip.name)));
        ports.push(Port::new("output", lanes, format!("{}_tx_p", ip.name)));
        ports.push(Port::new("output", lanes, format!("{}_tx_n", ip.name)));
    }
    if !board.leds.is_empty() {
        ports.push(Port::new("output", board.leds.len() as u32, "led"));
    }
    if board.uart_on_pins().is_some() {
        ports.push(Port::new("output", 1, "uart_tx"));
        ports.push(Port::new("input", 1, "uart_rx"));
    }
    if board.flash_on_pins().is_some() {
        for (port, out) in FLASH_PORTS {
            ports.push(Port::new(if *out { "output" } else { "input" }, 1, *port));
        }
    }
    if let Management::SgmiiLvds(_) = ethernet::management(board) {
        for (name, dir) in ethernet::SGMII_PINS {
            ports.push(Port::new(dir, 1, *name));
        }
    }
    ports
}

/// The wrapper's Verilog for `board`.
pub fn wrapper(board: &Board) -> String {
    let w = DATAPATH_BITS;
    let mut v = String::new();
    let _ = writeln!(
        v,
        "// weft_board_top for {} ({}), generated by weft-boards from boards/data/{}.toml.\n\
         // Do not edit: change the board file and run `cargo xtask board {} generate`.\n//\n\
         // Switch ports:",
        board.board.title, board.board.device, board.board.name, board.board.name
    );
    for (p, ip) in board.hard_ips.iter().enumerate() {
        let _ = writeln!(
            v,
            "//   port {p}: {} = {:?} {} x{} Gen{} ({:?}) on {}",
            ip.name, ip.kind, ip.tile, ip.lanes, ip.gen, ip.role, ip.connector
        );
    }
    let _ = writeln!(v, "`default_nettype none\n");

    let xilinx = board.board.vendor == Vendor::Xilinx;
    let ports = top_ports(board);
    let parameters = if board.console_over_jtag() {
        console::top_parameters()
    } else {
        String::new()
    };
    let _ = writeln!(v, "module {TOP} {parameters}(");
    let list: Vec<String> = ports
        .iter()
        .map(|p| format!("    {} wire {}{}", p.dir, p.range(), p.name))
        .collect();
    let _ = writeln!(v, "{}\n);\n", list.join(",\n"));

    // weft's clocks and resets.
    let user_reset = board.resets.iter().find(|r| {
        !board
            .hard_ips
            .iter()
            .any(|ip| ip.perst.as_ref() == Some(&r.name))
    });
    let reset_expr = match user_reset {
        Some(r) if r.active_low => format!("!{}", r.name),
        Some(r) => r.name.clone(),
        None => "1'b0".to_owned(),
    };
    v += &clocking::wrapper_block(board, &reset_expr);

    // Clock buffers for Xilinx GT reference clocks.
    if xilinx {
        for ip in &board.hard_ips {
            if let Some(c) = board.clocks.iter().find(|c| c.name == ip.refclk) {
                if c.pin_n.is_some() {
                    let _ = writeln!(
                        v,
                        "    // {0}: GT reference clock and its divided copy (PG213 \"Clocking\").\n    \
                         wire {0}_gt;\n    wire {0}_div2;\n    wire {0}_bufg;\n    \
                         IBUFDS_GTE4 {0}_ibufds (.I({0}_p), .IB({0}_n), .CEB(1'b0), .O({0}_gt), .ODIV2({0}_div2));\n    \
                         BUFG_GT {0}_bufg_gt (.I({0}_div2), .CE(1'b1), .CEMASK(1'b0), .CLR(1'b0), .CLRMASK(1'b0), .DIV(3'd0), .O({0}_bufg));\n",
                        c.name
                    );
                }
            }
        }
    }

    // Each hard IP, its shim and its clock-domain crossings.
    let hips = instances(board);
    let fifo_bits = 2 + EMPTY_BITS + 128 + w;
    // The TX word carries the TLP stream's `nullify` too, and its credit's
    // tag (`weft_board_tx_credit`'s `counted` and `counted_epoch`).
    let tx_fifo_bits = fifo_bits + 3;
    for (p, ip) in board.hard_ips.iter().enumerate() {
        let n = &ip.name;
        let _ = writeln!(
            v,
            "    // ---- port {p}: {n}, {:?} {:?} x{} ----",
            ip.kind, ip.role, ip.lanes
        );
        let _ = writeln!(v, "    wire {n}_clk;\n    wire {n}_rst;");
        for dir in ["rx", "tx"] {
            let _ = writeln!(
                v,
                "    wire {n}_{dir}_valid;\n    wire {n}_{dir}_ready;\n    wire {n}_{dir}_sop;\n    \
                 wire {n}_{dir}_eop;\n    wire [{}:0] {n}_{dir}_empty;\n    wire [127:0] {n}_{dir}_hdr;\n    \
                 wire [{}:0] {n}_{dir}_payload;",
                EMPTY_BITS - 1,
                w - 1
            );
        }
        let _ = writeln!(
            v,
            "    wire {n}_tx_nullify;\n    wire {n}_txq_valid;\n    wire {n}_txq_ready;\n    \
             wire {n}_txq_nullify;\n    wire {n}_txq_counted;\n    wire {n}_txq_epoch;\n    \
             wire {n}_tx_counted;\n    wire {n}_tx_counted_epoch;"
        );
        v += &hip_adapter(board, &hips, p);
        let _ = writeln!(
            v,
            "    // Hard IP clock -> weft clock.\n    \
             wire [{hi}:0] {n}_rx_word;\n    \
             weft_board_cdc_fifo #(.WIDTH({fifo_bits}), .ADDR(6), .HEADROOM({head})) {n}_rx_fifo (\n        \
             .wr_clk({n}_clk), .wr_rst({n}_rst), .wr_valid({n}_rx_valid), .wr_ready({n}_rx_ready),\n        \
             .wr_last(1'b1),\n        \
             .wr_data({{{n}_rx_sop, {n}_rx_eop, {n}_rx_empty, {n}_rx_hdr, {n}_rx_payload}}),\n        \
             .rd_clk(weft_clk), .rd_rst(weft_rst), .rd_valid(port{p}_in_valid), .rd_ready(port{p}_in_ready),\n        \
             .rd_data({n}_rx_word));\n    \
             // weft clock -> hard IP clock, whole TLPs: the hard IP takes no gap\n    \
             // inside a TLP while it is ready.\n    \
             weft_board_cdc_fifo #(.WIDTH({tx_fifo_bits}), .ADDR({tx_addr}), .HEADROOM(0), .PACKET(1)) {n}_tx_fifo (\n        \
             .wr_clk(weft_clk), .wr_rst(weft_rst), .wr_valid(port{p}_out_valid), .wr_ready(port{p}_out_ready),\n        \
             .wr_last(port{p}_out_eop),\n        \
             .wr_data({{{n}_tx_counted, {n}_tx_counted_epoch, port{p}_out_word}}),\n        \
             .rd_clk({n}_clk), .rd_rst({n}_rst), .rd_valid({n}_txq_valid), .rd_ready({n}_txq_ready),\n        \
             .rd_data({{{n}_txq_counted, {n}_txq_epoch, {n}_tx_sop, {n}_tx_eop, {n}_txq_nullify, {n}_tx_empty, {n}_tx_hdr, {n}_tx_payload}}));\n",
            hi = fifo_bits - 1,
            head = rx_headroom(ip.kind),
            tx_addr = TX_FIFO_ADDR,
        );
        v += &credit_block(ip, p);
    }

    // weft's side of each port.
    for p in 0..SWITCH_PORTS {
        let _ = writeln!(
            v,
            "    wire port{p}_in_valid;\n    wire port{p}_in_ready;\n    \
             wire port{p}_out_valid;\n    wire port{p}_out_ready;\n    \
             /* verilator lint_off UNUSEDSIGNAL */\n    \
             wire port{p}_out_sop;\n    wire port{p}_out_eop;\n    wire port{p}_out_nullify;\n    \
             wire [{e}:0] port{p}_out_empty;\n    \
             wire [31:0] port{p}_out_dw0;\n    wire [31:0] port{p}_out_dw1;\n    \
             wire [31:0] port{p}_out_dw2;\n    wire [31:0] port{p}_out_dw3;\n    \
             wire [{wh}:0] port{p}_out_payload;\n    \
             wire port{p}_hot_reset;\n    wire port{p}_retrain;\n    \
             wire [2:0] port{p}_consume;\n    wire [{ch}:0] port{p}_consume_dws;\n    \
             wire [2:0] port{p}_refund;\n    wire [{ch}:0] port{p}_refund_dws;\n    \
             /* verilator lint_on UNUSEDSIGNAL */\n    \
             wire [2:0] port{p}_credit;\n    \
             wire port{p}_link_up;\n    \
             wire [{hi}:0] port{p}_out_word = {{port{p}_out_sop, port{p}_out_eop, port{p}_out_nullify, port{p}_out_empty, \
             port{p}_out_dw0, port{p}_out_dw1, port{p}_out_dw2, port{p}_out_dw3, port{p}_out_payload}};",
            e = EMPTY_BITS - 1,
            wh = w - 1,
            hi = fifo_bits,
            ch = CONSUME_DWS_BITS - 1,
        );
        if let Some(ip) = board.hard_ips.get(p) {
            // The soft core sees the link up while its flow control is
            // (credit.v's `up`, on weft's clock).
            let _ = writeln!(
                v,
                "    assign port{p}_link_up = {}_credit_word[102];",
                ip.name
            );
        } else {
            let _ = writeln!(
                v,
                "    // Port {p} is not on this board: nothing arrives, nothing is taken.\n    \
                 assign port{p}_in_valid = 1'b0;\n    assign port{p}_out_ready = 1'b0;\n    \
                 assign port{p}_credit = 3'b111;\n    assign port{p}_link_up = 1'b0;\n    \
                 /* verilator lint_off UNUSEDSIGNAL */\n    wire unused_port{p}_out = port{p}_out_valid | ^port{p}_out_word | port{p}_in_ready;\n    \
                 /* verilator lint_on UNUSEDSIGNAL */"
            );
        }
    }

    // The switch.
    let _ = writeln!(
        v,
        "\n    /* verilator lint_off UNUSEDSIGNAL */\n    wire [{}:0] switch_led;\n    \
         /* verilator lint_on UNUSEDSIGNAL */\n    wire switch_uart_tx;",
        SWITCH_LEDS - 1
    );
    if board.console_over_jtag() {
        let _ = writeln!(v, "{}", console::instance());
    }
    // The management MII: to the PHY's block, or idle (its outputs unused).
    let management = ethernet::management(board);
    let connected = matches!(management, Management::SgmiiLvds(_));
    if let Management::Absent(why) = management {
        let _ = writeln!(
            v,
            "    // No management Ethernet on this board ({why}): the MII and MDIO idle.\n    \
             /* verilator lint_off UNUSEDSIGNAL */"
        );
    }
    for (name, into_chip, bits) in ethernet::management_ports() {
        if connected || !into_chip {
            let _ = writeln!(v, "    wire {}switch_{name};", bit_range(*bits));
        }
    }
    if !connected {
        let _ = writeln!(v, "    /* verilator lint_on UNUSEDSIGNAL */");
    }
    let _ = writeln!(v, "    weft_chip switch (");
    let mut conns = vec![
        "        .clock(weft_clk)".to_owned(),
        "        .reset(weft_rst)".to_owned(),
        "        .core_clock(weft_core_clk)".to_owned(),
        "        .core_reset(weft_core_rst)".to_owned(),
    ];
    for p in 0..SWITCH_PORTS {
        let word = if p < board.hard_ips.len() {
            format!("{}_rx_word", board.hard_ips[p].name)
        } else {
            String::new()
        };
        let field = |lo: u32, bits: u32| -> String {
            if word.is_empty() {
                format!("{bits}'d0")
            } else {
                format!("{word}[{}:{}]", lo + bits - 1, lo)
            }
        };
        // Word layout, most significant first: sop, eop, empty, dw0..dw3, payload.
        let pay = 0;
        let dw3 = w;
        let dw2 = w + 32;
        let dw1 = w + 64;
        let dw0 = w + 96;
        let empty = w + 128;
        let eop = empty + EMPTY_BITS;
        let sop = eop + 1;
        conns.push(format!("        .ingress${p}$valid(port{p}_in_valid)"));
        conns.push(format!("        .ingress${p}$ready(port{p}_in_ready)"));
        conns.push(format!("        .ingress${p}$sop({})", field(sop, 1)));
        conns.push(format!("        .ingress${p}$eop({})", field(eop, 1)));
        conns.push(format!(
            "        .ingress${p}$empty({})",
            field(empty, EMPTY_BITS)
        ));
        // Hard IPs discard a nullified TLP in their data link layer: none arrives.
        conns.push(format!("        .ingress${p}$nullify(1'b0)"));
        conns.push(format!("        .ingress${p}$dw0({})", field(dw0, 32)));
        conns.push(format!("        .ingress${p}$dw1({})", field(dw1, 32)));
        conns.push(format!("        .ingress${p}$dw2({})", field(dw2, 32)));
        conns.push(format!("        .ingress${p}$dw3({})", field(dw3, 32)));
        conns.push(format!("        .ingress${p}$payload({})", field(pay, w)));
        for sig in [
            "valid", "ready", "sop", "eop", "nullify", "empty", "dw0", "dw1", "dw2", "dw3",
            "payload",
        ] {
            conns.push(format!("        .egress${p}${sig}(port{p}_out_{sig})"));
        }
        conns.push(format!("        .link_hot_reset${p}(port{p}_hot_reset)"));
        conns.push(format!("        .link_retrain${p}(port{p}_retrain)"));
        for credit in ["consume", "refund"] {
            conns.push(format!("        .egress_{credit}${p}(port{p}_{credit})"));
            conns.push(format!(
                "        .egress_{credit}_dws${p}(port{p}_{credit}_dws)"
            ));
        }
    }
    for (bit, class) in CREDIT_CLASSES.iter().enumerate() {
        let bits: Vec<String> = (0..SWITCH_PORTS)
            .rev()
            .map(|p| format!("port{p}_credit[{bit}]"))
            .collect();
        conns.push(format!(
            "        .egress_credit_{class}({{{}}})",
            bits.join(", ")
        ));
    }
    let links: Vec<String> = (0..SWITCH_PORTS)
        .rev()
        .map(|p| format!("port{p}_link_up"))
        .collect();
    conns.push(format!("        .link_up({{{}}})", links.join(", ")));
    conns.push(format!(
        "        .uart_rx({})",
        if board.uart_on_pins().is_some() {
            "uart_rx"
        } else if board.console_over_jtag() {
            "switch_uart_rx"
        } else {
            "1'b1"
        }
    ));
    conns.push("        .uart_tx(switch_uart_tx)".to_owned());
    conns.push("        .led(switch_led)".to_owned());
    let on_pins = board.flash_on_pins().is_some();
    let startupe3 = board.flash_through_startupe3();
    for (port, out) in FLASH_PORTS {
        let to = match (on_pins, startupe3, out) {
            (true, _, _) => (*port).to_owned(),
            (false, true, _) | (false, false, true) => format!("switch_{port}"),
            (false, false, false) => "1'b0".to_owned(),
        };
        conns.push(format!("        .{port}({to})"));
    }
    for (name, into_chip, bits) in ethernet::management_ports() {
        let to = if connected || !into_chip {
            format!("switch_{name}")
        } else {
            // Idle: the MII's inputs low, MDIO's pulled-up line high.
            format!("{bits}'d{}", u8::from(*name == ethernet::MDIO_IN))
        };
        conns.push(format!("        .{name}({to})"));
    }
    let _ = writeln!(v, "{}\n    );", conns.join(",\n"));
    if connected {
        let ports: Vec<String> = ethernet::SGMII_PINS
            .iter()
            .map(|(name, _)| format!(".{name}({name})"))
            .chain(
                ethernet::management_ports().map(|(name, _, _)| format!(".{name}(switch_{name})")),
            )
            .collect();
        let _ = writeln!(
            v,
            "    // The management Ethernet: weft's MII on the PHY's SGMII.\n    \
             {} {} (\n        .rst(weft_core_rst),\n        {}\n    );",
            ethernet::SGMII_MODULE,
            ethernet::SGMII_INSTANCE,
            ports.join(",\n        ")
        );
    }
    if startupe3 {
        let _ = writeln!(
            v,
            "    // The flash sits on the dedicated configuration pins: STARTUPE3 reaches it.\n    \
             wire switch_flash_sclk, switch_flash_cs_n, switch_flash_mosi, switch_flash_miso;\n    \
             {FLASH_STARTUPE3} flash (.sclk(switch_flash_sclk), .cs_n(switch_flash_cs_n), \
             .mosi(switch_flash_mosi), .miso(switch_flash_miso));"
        );
    } else if !on_pins {
        let _ = writeln!(v, "    // No flash reaches user logic: its outputs go nowhere, MISO reads 0\n    \
             // (an empty part that never latches Write Enable, see FlashAccess::Absent).\n    /* verilator lint_off UNUSEDSIGNAL */");
        for (port, _) in FLASH_PORTS.iter().filter(|(_, out)| *out) {
            let _ = writeln!(v, "    wire switch_{port};");
        }
        let _ = writeln!(v, "    /* verilator lint_on UNUSEDSIGNAL */");
    }
    if board.uart_on_pins().is_some() {
        let _ = writeln!(v, "    assign uart_tx = switch_uart_tx;");
    } else if !board.console_over_jtag() {
        let _ = writeln!(
            v,
            "    /* verilator lint_off UNUSEDSIGNAL */\n    wire unused_uart_tx = switch_uart_tx;\n    /* verilator lint_on UNUSEDSIGNAL */"
        );
    }
    if !board.leds.is_empty() {
        // A high `led` bit lights its LED, whatever the LED's polarity.
        let n = board.leds.len().min(SWITCH_LEDS);
        let inverted = board.leds[..n]
            .iter()
            .enumerate()
            .filter(|(_, led)| led.active_low)
            .fold(0u32, |mask, (i, _)| mask | 1 << i);
        let _ = writeln!(
            v,
            "    assign led = switch_led[{}:0] ^ {n}'b{inverted:0n$b};",
            n - 1
        );
    }
    let _ = writeln!(v, "endmodule\n");
    if startupe3 {
        let _ = writeln!(v, "{}", flash_startupe3_module());
    }
    if connected {
        let _ = writeln!(v, "{}", ethernet::sgmii_module());
    }
    if board.console_over_jtag() {
        let _ = writeln!(v, "{}", console::module());
    }

    // Vendor black boxes, for lint and simulation only.
    let _ = writeln!(
        v,
        "`ifdef {STUB_DEFINE}\n// Vendor IP stubs: the vendor tools use the real IP; these stand in for\n\
         // lint and simulation only, with the ports this wrapper connects.\n"
    );
    for instance in instances(board) {
        let ip = instance.ports[0].1;
        let names: Vec<&str> = instance
            .ports
            .iter()
            .map(|(_, ip)| ip.name.as_str())
            .collect();
        v += &stub(
            &instance.module,
            &hip_ports(&instance),
            &format!(
                "Vendor IP: {:?} variant for port {} ({}).",
                ip.kind,
                names.join(", "),
                catalog::capability(ip.kind).source
            ),
        );
    }
    v += &clocking::stub(board);
    if board.console_over_jtag() {
        v += &console::stub();
    }
    if connected {
        v += &ethernet::stub();
    }
    if xilinx {
        v += &xilinx_primitive_stubs();
    }
    let _ = writeln!(v, "`endif\n\n`default_nettype wire");
    v
}

/// Address bits of the TX FIFO, which holds whole TLPs: 128 beats, room for
/// a 4 KiB payload (64 beats of 512 bits) and the next TLP behind it.
const TX_FIFO_ADDR: u32 = 7;

/// Beats the RX FIFO keeps free for the hard IP's ready latency: a tile
/// keeps sending for up to its RX ready latency after `ready` falls, one
/// beat more counting the cycle `ready` itself falls in.
fn rx_headroom(kind: HardIpKind) -> u32 {
    tile::table(kind).map_or(0, |table| table.rx_ready_latency + 1)
}

/// The per-segment signals a tile shim drives toward the IP, whether or
/// not the tile has a port for each.
const TILE_TX_SHIM: &[(Sig, &str)] = &[
    (Sig::TxValid, "avst_valid"),
    (Sig::TxDvalid, "avst_dvalid"),
    (Sig::TxHvalid, "avst_hvalid"),
    (Sig::TxSop, "avst_sop"),
    (Sig::TxEop, "avst_eop"),
    (Sig::TxData, "avst_data"),
    (Sig::TxHdr, "avst_hdr"),
    (Sig::TxErr, "avst_err"),
];

/// The wires between a tile's ports and its shims, and the shims: the RX
/// shim into `<name>_rx_*`, the TX shim from `<name>_tx_*`.
fn tile_shims(ip: &HardIp, table: &tile::Table) -> String {
    let n = &ip.name;
    let mut v = String::new();
    let wire = |sig: Sig| format!("{n}_hip_{}", sig.label());
    let declare = |v: &mut String, sig: Sig| {
        let bits = sig.total_bits(ip);
        let range = if bits == 1 {
            String::new()
        } else {
            format!("[{}:0] ", bits - 1)
        };
        let _ = writeln!(v, "    wire {range}{};", wire(sig));
    };
    let from_ip: Vec<Sig> = table
        .ports
        .iter()
        .map(|(sig, _)| *sig)
        .filter(|sig| {
            sig.from_ip()
                && sig.scope() != tile::Scope::Lane
                && *sig != Sig::Coreclk
                && !sig.is_reconfig()
        })
        .collect();
    for sig in &from_ip {
        declare(&mut v, *sig);
    }
    // Shim outputs the tile has no port for stay unconnected.
    let _ = writeln!(v, "    /* verilator lint_off UNUSEDSIGNAL */");
    for (sig, _) in TILE_TX_SHIM {
        declare(&mut v, *sig);
    }
    let _ = writeln!(v, "    wire {n}_link_up = {};", wire(Sig::LinkUp));
    let _ = writeln!(v, "    /* verilator lint_on UNUSEDSIGNAL */");
    let rx_valid = if table.has(Sig::RxValid) {
        wire(Sig::RxValid)
    } else {
        format!("{} | {}", wire(Sig::RxDvalid), wire(Sig::RxHvalid))
    };
    let params = format!(
        ".SEGMENTS({}), .DATA_BITS({}), .W({DATAPATH_BITS})",
        ip.segments, ip.data_bits
    );
    let _ = writeln!(
        v,
        "    weft_board_avst_rx #({params}) {n}_rx_shim (\n        \
         .avst_valid({rx_valid}), .avst_sop({}), .avst_eop({}),\n        \
         .avst_data({}), .avst_empty({}), .avst_hdr({}),\n        \
         .valid({n}_rx_valid), .sop({n}_rx_sop), .eop({n}_rx_eop), .empty({n}_rx_empty),\n        \
         .hdr({n}_rx_hdr), .payload({n}_rx_payload));",
        wire(Sig::RxSop),
        wire(Sig::RxEop),
        wire(Sig::RxData),
        wire(Sig::RxEmpty),
        wire(Sig::RxHdr),
    );
    let outputs: Vec<String> = TILE_TX_SHIM
        .iter()
        .map(|(sig, port)| format!(".{port}({})", wire(*sig)))
        .collect();
    let _ = writeln!(
        v,
        "    weft_board_avst_tx #({params}, .READY_LATENCY({})) {n}_tx_shim (\n        \
         .clk({n}_clk), .rst({n}_rst), .valid({n}_tx_valid), .ready({n}_tx_ready),\n        \
         .sop({n}_tx_sop), .eop({n}_tx_eop), .nullify({n}_tx_nullify), .empty({n}_tx_empty),\n        \
         .hdr({n}_tx_hdr),\n        \
         .payload({n}_tx_payload), .avst_ready({}),\n        {});",
        table.tx_ready_latency,
        wire(Sig::TxReady),
        outputs.join(", "),
    );
    let _ = writeln!(
        v,
        "    weft_board_reset_sync {n}_rst_sync (.clk({n}_clk), .rst_in(!{}), .rst_out({n}_rst));",
        wire(Sig::ResetStatusN)
    );
    v
}

/// The port connections of a tile's instance, by its table.
fn tile_connections(instance: &Instance, table: &tile::Table, perst: &str) -> Vec<String> {
    let first = instance.ports[0].1;
    table
        .expand(&instance.cores())
        .iter()
        .map(|port| {
            let n = &instance.ports[port.core.unwrap_or(0)].1.name;
            let to = match port.sig {
                Sig::Refclk0 => first.refclk.clone(),
                Sig::Refclk1 => first
                    .refclk1
                    .clone()
                    .unwrap_or_else(|| first.refclk.clone()),
                Sig::PinPerstN => perst.to_owned(),
                Sig::NinitDone => "1'b0".to_owned(),
                Sig::Coreclk => format!("{n}_clk"),
                Sig::RxReady => format!("{n}_rx_ready"),
                sig @ (Sig::LaneRxP | Sig::LaneRxN | Sig::LaneTxP | Sig::LaneTxN) => {
                    port.slice_of(&format!("{n}_{}", sig.label()))
                }
                sig => port.slice_of(&format!("{n}_hip_{}", sig.label())),
            };
            format!(".{}({to})", port.name)
        })
        .collect()
}

/// The shims of switch port `port` to its `<name>_rx_*`/`<name>_tx_*`
/// wires, and its hard IP instance where the port is the instance's first.
/// The wires and shim of an UltraScale+ block, and its port connections.
fn pcie4_shim(board: &Board, ip: &HardIp, port: usize, perst: &str) -> (String, Vec<String>) {
    let n = &ip.name;
    let w = DATAPATH_BITS;
    let d = ip.data_bits;
    let mut v = String::new();
    let mut conns: Vec<String> = Vec::new();
    // The endpoint's completer interface carries host requests in
    // (CQ) and weft's completions out (CC); a root port's requester
    // interface carries weft's requests out (RQ) and completions in (RC).
    let (inbus, outbus, idle_in, idle_out) = if ip.role == Role::RootPort {
        ("m_axis_rc", "s_axis_rq", "m_axis_cq", "s_axis_cc")
    } else {
        ("m_axis_cq", "s_axis_cc", "m_axis_rc", "s_axis_rq")
    };
    let ports = pcie4_ports(ip);
    let width = |name: &str| {
        ports
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.bits)
            .unwrap_or(1)
    };
    let keep = d / 32;
    let requester = u8::from(ip.role == Role::RootPort);
    // The shims of `axis.v`: descriptors to and from TLP headers, the
    // payload moved past the descriptor, and the tuser sideband (PG213).
    // weft's RX FIFO word has no `nullify` yet, so a TLP the RX shim voids
    // (discontinued by the block, or of a kind not translated) is not
    // marked on its way in.
    let _ = writeln!(
        v,
        "    wire {n}_user_reset;\n    wire [3:0] {n}_tfc_nph_av;\n    wire [3:0] {n}_tfc_npd_av;\n    \
         /* verilator lint_off UNUSEDSIGNAL */\n    wire {n}_lnk_up;\n    \
         wire [{dm}:0] {n}_idle_data;\n    wire [{km}:0] {n}_idle_keep;\n    wire {n}_idle_last;\n    \
         wire [{ium}:0] {n}_idle_user;\n    wire {n}_idle_valid;\n    wire [3:0] {n}_idle_ready;\n    \
         wire [3:0] {n}_out_ready;\n    wire {n}_rx_nullify;\n    \
         /* verilator lint_on UNUSEDSIGNAL */\n    \
         wire [{dm}:0] {n}_in_data;\n    wire [{km}:0] {n}_in_keep;\n    wire {n}_in_last;\n    \
         wire [{um}:0] {n}_in_user;\n    wire {n}_in_valid;\n    wire {n}_in_ready;\n    \
         wire [{dm}:0] {n}_out_data;\n    wire [{km}:0] {n}_out_keep;\n    wire {n}_out_last;\n    \
         wire [{oum}:0] {n}_out_user;\n    wire {n}_out_valid;\n    \
         weft_board_axis_rx #(.DATA_BITS({d}), .W({w}), .REQUESTER({requester})) {n}_rx_shim (\n        \
         .clk({n}_clk), .rst({n}_rst),\n        \
         .tdata({n}_in_data), .tkeep({n}_in_keep), .tlast({n}_in_last), .tuser({n}_in_user),\n        \
         .tvalid({n}_in_valid), .tready({n}_in_ready),\n        \
         .valid({n}_rx_valid), .ready({n}_rx_ready), .sop({n}_rx_sop), .eop({n}_rx_eop),\n        \
         .nullify({n}_rx_nullify), .empty({n}_rx_empty), .hdr({n}_rx_hdr), .payload({n}_rx_payload));\n    \
         weft_board_axis_tx #(.DATA_BITS({d}), .W({w}), .REQUESTER({requester})) {n}_tx_shim (\n        \
         .clk({n}_clk), .rst({n}_rst),\n        \
         .valid({n}_tx_valid), .ready({n}_tx_ready), .sop({n}_tx_sop), .eop({n}_tx_eop),\n        \
         .nullify({n}_tx_nullify), .empty({n}_tx_empty), .hdr({n}_tx_hdr), .payload({n}_tx_payload),\n        \
         .tdata({n}_out_data), .tkeep({n}_out_keep), .tlast({n}_out_last), .tuser({n}_out_user),\n        \
         .tvalid({n}_out_valid), .tready({n}_out_ready[0]));",
        dm = d - 1,
        km = keep - 1,
        um = width(&format!("{inbus}_tuser")) - 1,
        oum = width(&format!("{outbus}_tuser")) - 1,
        ium = width(&format!("{idle_in}_tuser")) - 1,
    );
    let c = board.clocks.iter().find(|c| c.name == ip.refclk);
    let (sys, gt) = match c {
        Some(c) if c.pin_n.is_some() => (format!("{}_bufg", c.name), format!("{}_gt", c.name)),
        _ => (ip.refclk.clone(), ip.refclk.clone()),
    };
    conns.push(format!(".sys_clk({sys})"));
    conns.push(format!(".sys_clk_gt({gt})"));
    conns.push(format!(".sys_reset({perst})"));
    conns.push(format!(".user_clk({n}_clk)"));
    conns.push(format!(".user_reset({n}_user_reset)"));
    conns.push(format!(".user_lnk_up({n}_lnk_up)"));
    conns.push(format!(".pci_exp_rxp({n}_rx_p)"));
    conns.push(format!(".pci_exp_rxn({n}_rx_n)"));
    conns.push(format!(".pci_exp_txp({n}_tx_p)"));
    conns.push(format!(".pci_exp_txn({n}_tx_n)"));
    // The AXI4-Stream buses from the block: the live one and the idle one.
    for (bus, prefix) in [(inbus, "in"), (idle_in, "idle")] {
        for sig in ["data", "keep", "last", "user", "valid"] {
            conns.push(format!(".{bus}_t{sig}({n}_{prefix}_{sig})"));
        }
    }
    conns.push(format!(".{inbus}_tready({n}_in_ready)"));
    for sig in ["data", "keep", "last", "user", "valid"] {
        conns.push(format!(".{outbus}_t{sig}({n}_out_{sig})"));
    }
    conns.push(format!(".{outbus}_tready({n}_out_ready)"));
    conns.push(format!(".{idle_in}_tready(1'b1)"));
    conns.push(format!(".{idle_out}_tdata({d}'d0)"));
    conns.push(format!(".{idle_out}_tkeep({keep}'d0)"));
    conns.push(format!(".{idle_out}_tlast(1'b0)"));
    conns.push(format!(
        ".{idle_out}_tuser({}'d0)",
        width(&format!("{idle_out}_tuser"))
    ));
    conns.push(format!(".{idle_out}_tvalid(1'b0)"));
    conns.push(format!(".{idle_out}_tready({n}_idle_ready)"));
    let _ = writeln!(
        v,
        "    weft_board_reset_sync {n}_rst_sync (.clk({n}_clk), .rst_in({n}_user_reset), .rst_out({n}_rst));"
    );
    conns.push(format!(".pcie_tfc_nph_av({n}_tfc_nph_av)"));
    conns.push(format!(".pcie_tfc_npd_av({n}_tfc_npd_av)"));
    conns.push(".cfg_mgmt_function_number(8'd0)".to_owned());
    conns.push(".cfg_mgmt_debug_access(1'b0)".to_owned());
    if downstream(ip.role) {
        // PCIE4's PCI Express Capability at 0x70: Link Control at Dword 0x20.
        let _ = writeln!(
            v,
            "    // Hot reset and retrain: weft clock -> user_clk.
                 wire {n}_link_hot_reset;
    wire {n}_link_retrain;
                 wire {n}_cfg_hot_reset_in;
    wire [9:0] {n}_cfg_mgmt_addr;
    wire {n}_cfg_mgmt_read;
                 wire {n}_cfg_mgmt_write;
    wire [31:0] {n}_cfg_mgmt_write_data;
    wire [3:0] {n}_cfg_mgmt_byte_enable;
                 wire [31:0] {n}_cfg_mgmt_read_data;
    wire {n}_cfg_mgmt_read_write_done;
                 weft_board_pulse_sync {n}_hot_reset_sync (.src_clk(weft_clk), .src_pulse(port{port}_hot_reset),
                     .dst_clk({n}_clk), .dst_pulse({n}_link_hot_reset));
                 weft_board_pulse_sync {n}_retrain_sync (.src_clk(weft_clk), .src_pulse(port{port}_retrain),
                     .dst_clk({n}_clk), .dst_pulse({n}_link_retrain));
                 weft_board_pcie4_link #(.LINK_CONTROL_DW(10'h20)) {n}_link (
                     .clk({n}_clk), .rst({n}_rst), .link_up({n}_lnk_up),
                     .hot_reset({n}_link_hot_reset), .retrain({n}_link_retrain),
                     .cfg_hot_reset_in({n}_cfg_hot_reset_in), .cfg_mgmt_addr({n}_cfg_mgmt_addr),
                     .cfg_mgmt_read({n}_cfg_mgmt_read), .cfg_mgmt_write({n}_cfg_mgmt_write),
                     .cfg_mgmt_write_data({n}_cfg_mgmt_write_data), .cfg_mgmt_byte_enable({n}_cfg_mgmt_byte_enable),
                     .cfg_mgmt_read_data({n}_cfg_mgmt_read_data), .cfg_mgmt_read_write_done({n}_cfg_mgmt_read_write_done));"
        );
        for sig in [
            "cfg_hot_reset_in",
            "cfg_mgmt_addr",
            "cfg_mgmt_read",
            "cfg_mgmt_write",
            "cfg_mgmt_write_data",
            "cfg_mgmt_byte_enable",
            "cfg_mgmt_read_data",
            "cfg_mgmt_read_write_done",
        ] {
            conns.push(format!(".{sig}({n}_{sig})"));
        }
    } else {
        // An endpoint starts neither a hot reset (cfg_hot_reset_in acts in
        // RP mode only, PG213) nor a retrain (§7.5.3.7): link.v.
        let _ = writeln!(
            v,
            "    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0] {n}_cfg_mgmt_read_data;
                 wire {n}_cfg_mgmt_read_write_done;
    /* verilator lint_on UNUSEDSIGNAL */"
        );
        conns.push(".cfg_hot_reset_in(1'b0)".to_owned());
        conns.push(".cfg_mgmt_addr(10'd0)".to_owned());
        conns.push(".cfg_mgmt_read(1'b0)".to_owned());
        conns.push(".cfg_mgmt_write(1'b0)".to_owned());
        conns.push(".cfg_mgmt_write_data(32'd0)".to_owned());
        conns.push(".cfg_mgmt_byte_enable(4'd0)".to_owned());
        conns.push(format!(".cfg_mgmt_read_data({n}_cfg_mgmt_read_data)"));
        conns.push(format!(
            ".cfg_mgmt_read_write_done({n}_cfg_mgmt_read_write_done)"
        ));
    }
    (v, conns)
}

/// The transmit credit of switch port `port` (`credit.v`): the hard IP's
/// credit limits on its own clock, carried onto weft's clock by handshake,
/// and weft's consumption counted against them into `port<p>_credit`.
/// An Intel tile's user counts consumption against the partner's own
/// limits, so a void TLP's credit is given back as it leaves
/// (`REFUND_VOID`); an UltraScale+ block keeps that account itself.
/// While the link has no flow control every class has credit, and the
/// TX gate between the TX FIFO and the hard IP discards what was sent
/// then, or counted against an earlier start of flow control (PCIe Base
/// 6.0 §2.9.1).
fn credit_block(ip: &HardIp, port: usize) -> String {
    let n = &ip.name;
    let refund_void = u8::from(tile::table(ip.kind).is_some());
    let mut v = format!(
        "    // Transmit credit: the hard IP's limits -> weft clock, weft's consumption against them.\n    \
         wire [95:0] {n}_credit_limit;\n    wire [5:0] {n}_credit_infinite;\n    wire {n}_credit_up;\n"
    );
    let wire = |sig: Sig| format!("{n}_hip_{}", sig.label());
    match tile::table(ip.kind) {
        Some(table) if table.has(Sig::TxCdtsLimit) => {
            let _ = writeln!(
                v,
                "    weft_board_ptile_credit {n}_ip_credit (.clk({n}_clk), .rst({n}_rst), .link_up({n}_link_up),\n        \
                 .cdts_limit({}), .cdts_limit_tdm_idx({}),\n        \
                 .limit({n}_credit_limit), .infinite({n}_credit_infinite), .up({n}_credit_up));",
                wire(Sig::TxCdtsLimit),
                wire(Sig::TxCdtsLimitTdmIdx)
            );
        }
        Some(_) => {
            let _ = writeln!(
                v,
                "    wire [2:0] {};\n    wire [2:0] {};\n    \
                 weft_board_rtile_credit {n}_ip_credit (.clk({n}_clk), .rst({n}_rst), .link_up({n}_link_up),\n        \
                 .hcrdt_init({}), .hcrdt_init_ack({}), .hcrdt_update({}), .hcrdt_update_cnt({}),\n        \
                 .dcrdt_init({}), .dcrdt_init_ack({}), .dcrdt_update({}), .dcrdt_update_cnt({}),\n        \
                 .limit({n}_credit_limit), .infinite({n}_credit_infinite), .up({n}_credit_up));",
                wire(Sig::TxHcrdtInitAck),
                wire(Sig::TxDcrdtInitAck),
                wire(Sig::TxHcrdtInit),
                wire(Sig::TxHcrdtInitAck),
                wire(Sig::TxHcrdtUpdate),
                wire(Sig::TxHcrdtUpdateCnt),
                wire(Sig::TxDcrdtInit),
                wire(Sig::TxDcrdtInitAck),
                wire(Sig::TxDcrdtUpdate),
                wire(Sig::TxDcrdtUpdateCnt),
            );
        }
        None if ip.role == Role::RootPort => {
            let _ = writeln!(
                v,
                "    weft_board_pcie4_credit #(.DATA_BITS({d})) {n}_ip_credit (.clk({n}_clk), .rst({n}_rst),\n        \
                 .up_in({n}_lnk_up), .nph_av({n}_tfc_nph_av), .npd_av({n}_tfc_npd_av),\n        \
                 .rq_valid({n}_out_valid), .rq_ready({n}_out_ready[0]), .rq_last({n}_out_last), .rq_data({n}_out_data),\n        \
                 .limit({n}_credit_limit), .infinite({n}_credit_infinite), .up({n}_credit_up));",
                d = ip.data_bits
            );
        }
        None => {
            // An endpoint sends only completions, on CC, which the block
            // holds behind tready for lack of credit with nothing queued
            // behind them: credit.v.
            let _ = writeln!(
                v,
                "    /* verilator lint_off UNUSEDSIGNAL */\n    wire [3:0] {n}_unused_tfc = {n}_tfc_nph_av | {n}_tfc_npd_av;\n    \
                 /* verilator lint_on UNUSEDSIGNAL */\n    \
                 assign {n}_credit_limit = 96'd0;\n    assign {n}_credit_infinite = 6'b111111;\n    \
                 assign {n}_credit_up = {n}_lnk_up;"
            );
        }
    }
    let _ = writeln!(
        v,
        "    // What weft sent for a link without flow control, or counted against an\n    \
         // earlier start of it, is discarded here, never sent on the link.\n    \
         wire {n}_tx_epoch;\n    \
         weft_board_tx_gate {n}_tx_gate (.clk({n}_clk), .rst({n}_rst), .up({n}_credit_up), .epoch({n}_tx_epoch),\n        \
         .in_valid({n}_txq_valid), .in_ready({n}_txq_ready), .in_eop({n}_tx_eop),\n        \
         .in_nullify({n}_txq_nullify), .in_counted({n}_txq_counted), .in_epoch({n}_txq_epoch),\n        \
         .out_valid({n}_tx_valid), .out_ready({n}_tx_ready), .out_nullify({n}_tx_nullify));\n    \
         wire [103:0] {n}_credit_word;\n    \
         weft_board_cdc_snapshot #(.WIDTH(104)) {n}_credit_cdc (.src_clk({n}_clk),\n        \
         .src_value({{{n}_tx_epoch, {n}_credit_up, {n}_credit_infinite, {n}_credit_limit}}),\n        \
         .dst_clk(weft_clk), .dst_value({n}_credit_word));\n    \
         weft_board_tx_credit #(.REFUND_VOID({refund_void})) {n}_tx_credit (.clk(weft_clk), .rst(weft_rst),\n        \
         .up({n}_credit_word[102]), .epoch({n}_credit_word[103]),\n        \
         .limit({n}_credit_word[95:0]), .infinite({n}_credit_word[101:96]),\n        \
         .consume(port{port}_consume), .consume_dws(port{port}_consume_dws),\n        \
         .refund(port{port}_refund), .refund_dws(port{port}_refund_dws),\n        \
         .sent(port{port}_out_valid && port{port}_out_ready), .sent_sop(port{port}_out_sop),\n        \
         .sent_eop(port{port}_out_eop), .sent_nullify(port{port}_out_nullify), .sent_dw0(port{port}_out_dw0),\n        \
         .credit(port{port}_credit), .counted({n}_tx_counted), .counted_epoch({n}_tx_counted_epoch));"
    );
    v
}

/// Whether a tile's port drives a Hard IP reconfiguration interface:
/// each core has its own, or (`first`) the port is the tile's first core
/// and the interface is the tile's.
fn drives_reconfig(table: &tile::Table, first: bool) -> bool {
    let mut reconfig = table.ports.iter().filter(|(sig, _)| sig.is_reconfig());
    let per_core = reconfig.clone().any(|(_, name)| name.contains("{p}"));
    reconfig.next().is_some() && (first || per_core)
}

/// Whether the wrapper gives switch port `port` a link controller that
/// acts on weft's hot reset and retrain requests for it (`link.v`): a
/// downstream port whose hard IP offers the means, its instance named
/// `<name>_link`.
pub fn has_link_controller(board: &Board, port: usize) -> bool {
    let ip = &board.hard_ips[port];
    if !downstream(ip.role) {
        return false;
    }
    match tile::table(ip.kind) {
        Some(table) => {
            let first = instances(board).iter().any(|i| i.ports[0].0 == port);
            drives_reconfig(table, first)
        }
        None => true,
    }
}

/// Whether a port of `role` faces the link's downstream side, where weft
/// may ask its hard IP for a hot reset or a retrain (`link.v`).
fn downstream(role: Role) -> bool {
    matches!(role, Role::SwitchDownstream | Role::RootPort)
}

/// Cycles of the soft core's clock that Secondary Bus Reset stays set: 2 ms,
/// twice the least a hot reset through it lasts (PCIe Base 6.0
/// §7.5.1.3.13 and Trst, §6.6.2), so the tile's LTSSM is in Hot Reset
/// (§4.2.5.11) whatever its own timer.
pub const SECONDARY_BUS_RESET_CYCLES: u32 = weft_regs::SOFT_CORE_CLOCK_HZ / 500;

/// The wires of a tile's Hard IP reconfiguration interface and, on a
/// downstream port, its link controller (`weft_board_tile_link`), clocked
/// by the soft core's clock (125 MHz, within the interface's 50 to 125
/// MHz, 683268 Table 55), with the chip's hot reset and retrain pulses
/// carried onto that clock. `owner` is whether the port's core drives the
/// interface: each core drives its own, or the first core the tile's.
fn tile_link(ip: &HardIp, table: &tile::Table, port: usize, owner: bool) -> String {
    let n = &ip.name;
    let mut v = String::new();
    let ports: Vec<Sig> = table
        .ports
        .iter()
        .map(|(sig, _)| *sig)
        .filter(|sig| sig.is_reconfig())
        .collect();
    if !drives_reconfig(table, owner) {
        let _ = writeln!(
            v,
            "    // {n} shares its tile's reconfiguration interface with the tile's first
                 // port: its hot reset and retrain requests go unused."
        );
        return v;
    }
    for sig in &ports {
        let _ = writeln!(
            v,
            "    wire {}{n}_hip_{};",
            bit_range(sig.bits(0)),
            sig.label()
        );
    }
    let address = if ports.contains(&Sig::ReconfigAddressWide) {
        Sig::ReconfigAddressWide
    } else {
        Sig::ReconfigAddress
    };
    let bits = address.bits(0);
    let wire = |sig: Sig| format!("{n}_hip_{}", sig.label());
    let _ = writeln!(
        v,
        "    assign {} = weft_core_clk;
    assign {} = !weft_core_rst;",
        wire(Sig::ReconfigClk),
        wire(Sig::ReconfigRstN)
    );
    if downstream(ip.role) {
        let _ = writeln!(
            v,
            "    // Hot reset and retrain: weft clock -> the reconfiguration interface's.
                 wire {n}_link_hot_reset;
    wire {n}_link_retrain;
                 weft_board_pulse_sync {n}_hot_reset_sync (.src_clk(weft_clk), .src_pulse(port{port}_hot_reset),
                     .dst_clk(weft_core_clk), .dst_pulse({n}_link_hot_reset));
                 weft_board_pulse_sync {n}_retrain_sync (.src_clk(weft_clk), .src_pulse(port{port}_retrain),
                     .dst_clk(weft_core_clk), .dst_pulse({n}_link_retrain));
                 weft_board_tile_link #(.ADDR_BITS({bits}), .BRIDGE_CONTROL({bits}'h{:x}), .LINK_CONTROL({bits}'h{:x}),
                     .HOLD({SECONDARY_BUS_RESET_CYCLES})) {n}_link (
                     .clk(weft_core_clk), .rst(weft_core_rst), .link_up({n}_link_up),
                     .hot_reset({n}_link_hot_reset), .retrain({n}_link_retrain),
                     .address({}), .read({}), .write({}), .writedata({}),
                     .readdata({}), .readdatavalid({}), .waitrequest({}));",
            table.bridge_control,
            table.link_control,
            wire(address),
            wire(Sig::ReconfigRead),
            wire(Sig::ReconfigWrite),
            wire(Sig::ReconfigWriteData),
            wire(Sig::ReconfigReadData),
            wire(Sig::ReconfigReadDataValid),
            wire(Sig::ReconfigWaitRequest),
        );
    } else {
        let _ = writeln!(
            v,
            "    // An upstream port starts neither a hot reset nor a retrain (link.v):
                 // its reconfiguration interface idles.
                 assign {} = {bits}'d0;
    assign {} = 1'b0;
    assign {} = 1'b0;
    assign {} = 8'd0;
                 /* verilator lint_off UNUSEDSIGNAL */
                 wire {n}_reconfig_unused = ^{} | {} | {};
                 /* verilator lint_on UNUSEDSIGNAL */",
            wire(address),
            wire(Sig::ReconfigRead),
            wire(Sig::ReconfigWrite),
            wire(Sig::ReconfigWriteData),
            wire(Sig::ReconfigReadData),
            wire(Sig::ReconfigReadDataValid),
            wire(Sig::ReconfigWaitRequest),
        );
    }
    v
}

fn hip_adapter(board: &Board, instances: &[Instance], port: usize) -> String {
    let ip = &board.hard_ips[port];
    let n = &ip.name;
    let instance = instances
        .iter()
        .find(|i| i.ports.iter().any(|(p, _)| *p == port))
        .expect("every port is in an instance");
    let first = instance.ports[0].1;
    let perst = match &first.perst {
        Some(r) => {
            let active_low = board
                .resets
                .iter()
                .find(|x| &x.name == r)
                .is_some_and(|x| x.active_low);
            if active_low {
                r.clone()
            } else {
                format!("!{r}")
            }
        }
        None => "1'b1".to_owned(),
    };
    let (mut v, conns) = match tile::table(ip.kind) {
        Some(table) => {
            let mut v = tile_shims(ip, table);
            v += &tile_link(ip, table, port, instance.ports[0].0 == port);
            if instance.ports[0].0 != port {
                // A later core of a shared tile runs on the tile's clock.
                let _ = writeln!(v, "    assign {n}_clk = {}_clk;", first.name);
                return v;
            }
            (v, tile_connections(instance, table, &perst))
        }
        None => pcie4_shim(board, ip, port, &perst),
    };
    let _ = writeln!(v, "    {} {} (", instance.module, instance.name());
    let body: Vec<String> = conns.iter().map(|c| format!("        {c}")).collect();
    let _ = writeln!(v, "{}\n    );", body.join(",\n"));
    v
}
