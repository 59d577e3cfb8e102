//! The board smoke simulation: the generated top level's real adapters
//! between simulation models of the hard IPs and a loopback switch.
//!
//! Each `weft_hip_<port>` is a generated wrapper, with the vendor variant's
//! own port names (from [`tile::Table`]), around `weft_board_tile_model`
//! (`tile_model.v`), a model of the tile's Avalon-ST TLP interface written
//! from the vendor's interface description. Here a loopback stands in for
//! `weft_chip` (the run with the real chip and a host is
//! [`crate::chip_sim`]'s): each port's ingress goes straight back out of
//! the same port's egress, with random stalls. So every TLP a model sends
//! crosses the RX shim and FIFO into weft's clock, turns round, and crosses
//! the TX FIFO and shim back to the same model, which checks the tile's
//! rules on the way in and writes down what it got. Icarus Verilog runs it.
//!
//! Parts of the wrapper get benches of their own: the PLL ([`run_pll`]),
//! a flash behind `STARTUPE3` ([`run_flash`]) and the management Ethernet
//! on SGMII ([`run_ethernet`]: frames both ways between a model of the
//! PCS/PMA's client GMII and weft's MAC side of the MII).

use std::fmt::{self, Write as _};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::clocking;
use crate::console;
use crate::ethernet;
use crate::generate;
use crate::model::{Board, HardIpKind};
use crate::tile::{self, Scope, Sig};
use crate::validate::SWITCH_PORTS;
use crate::verilog;

/// One TLP as the models send and receive it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimTlp {
    /// Header DW0..DW3 in wire order (DW3 is don't-care for 3 DW headers).
    pub header: [u32; 4],
    /// Payload DWs in wire order.
    pub payload: Vec<u32>,
}

/// Clock rates and randomness of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunConfig {
    /// Half period of every hard IP's application clock, in picoseconds.
    pub hip_half_ps: u32,
    /// Half period of weft's data plane clock, in picoseconds (the PLL's
    /// reference clock runs at the matching rate).
    pub weft_half_ps: u32,
    /// Seed of the models' and loopback's stall patterns.
    pub seed: u32,
}

/// Why a smoke simulation did not pass.
#[derive(Debug)]
pub enum SimError {
    /// Icarus Verilog is not installed.
    NoSimulator,
    /// A port's hard IP has no simulation model.
    Unsupported {
        /// The port.
        port: String,
        /// Its hard IP.
        kind: HardIpKind,
    },
    /// A file could not be written or read.
    Io {
        /// The path.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// iverilog refused the design.
    Compile {
        /// Its report.
        report: String,
    },
    /// The run broke a rule, timed out or did not finish.
    Failed {
        /// The simulator's output.
        report: String,
    },
    /// A model's output file is not as the model writes it.
    Output {
        /// The file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::NoSimulator => write!(
                f,
                "iverilog is not installed; `cargo xtask setup` installs it"
            ),
            SimError::Unsupported { port, kind } => write!(
                f,
                "port {port}: no simulation model of the {kind:?} hard IP yet"
            ),
            SimError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            SimError::Compile { report } => write!(f, "the simulation did not build:\n{report}"),
            SimError::Failed { report } => write!(f, "the smoke simulation failed:\n{report}"),
            SimError::Output { path, line } => {
                write!(f, "{}:{line}: not a TLP line of the model", path.display())
            }
        }
    }
}

impl std::error::Error for SimError {}

/// Whether Icarus Verilog (`iverilog` and `vvp`) can be run.
pub fn iverilog_available() -> bool {
    ["iverilog", "vvp"].iter().all(|tool| {
        Command::new(tool)
            .arg("-V")
            .output()
            .is_ok_and(|out| out.status.success())
    })
}

/// The model's ports, by the signal each carries: every tile signal but the lanes.
const MODEL_SIGS: &[Sig] = &[
    Sig::Refclk0,
    Sig::Refclk1,
    Sig::PinPerstN,
    Sig::NinitDone,
    Sig::Coreclk,
    Sig::ResetStatusN,
    Sig::LinkUp,
    Sig::RxReady,
    Sig::RxSop,
    Sig::RxEop,
    Sig::RxValid,
    Sig::RxDvalid,
    Sig::RxHvalid,
    Sig::RxData,
    Sig::RxEmpty,
    Sig::RxHdr,
    Sig::TxReady,
    Sig::TxSop,
    Sig::TxEop,
    Sig::TxValid,
    Sig::TxDvalid,
    Sig::TxHvalid,
    Sig::TxErr,
    Sig::TxData,
    Sig::TxHdr,
    Sig::ReconfigClk,
    Sig::ReconfigRstN,
    Sig::ReconfigAddress,
    Sig::ReconfigAddressWide,
    Sig::ReconfigRead,
    Sig::ReconfigWrite,
    Sig::ReconfigWriteData,
    Sig::ReconfigReadData,
    Sig::ReconfigReadDataValid,
    Sig::ReconfigWaitRequest,
    Sig::TxCdtsLimit,
    Sig::TxCdtsLimitTdmIdx,
    Sig::TxHcrdtInit,
    Sig::TxHcrdtInitAck,
    Sig::TxHcrdtUpdate,
    Sig::TxHcrdtUpdateCnt,
    Sig::TxDcrdtInit,
    Sig::TxDcrdtInitAck,
    Sig::TxDcrdtUpdate,
    Sig::TxDcrdtUpdateCnt,
];

/// Hot resets and retrains the loopback asks of every port, alternately.
const LINK_PULSES: u32 = 3;

/// weft clock cycles between two of the loopback's requests: less than a
/// hot reset takes, so a retrain arrives while the hot reset before it is
/// under way and waits.
const LINK_PULSE_GAP: u32 = 100;

/// Cycles the smoke run's link controllers hold Secondary Bus Reset, in
/// place of the 2 ms of [`verilog::SECONDARY_BUS_RESET_CYCLES`], and the
/// least the models accept.
const SIM_SECONDARY_BUS_RESET_CYCLES: u32 = 64;

/// `[hi:0] ` for a multi-bit signal, nothing for one bit.
fn range(bits: u32) -> String {
    if bits == 1 {
        String::new()
    } else {
        format!("[{}:0] ", bits - 1)
    }
}

/// The wrapper `weft_hip_<port>` around one tile model per core, with the
/// variant's ports.
fn model_wrapper(instance: &verilog::Instance, table: &tile::Table) -> String {
    let mut v = String::new();
    let cores = instance.cores();
    let ports = table.expand(&cores);
    let list: Vec<String> = ports
        .iter()
        .map(|p| {
            let dir = if p.sig.from_ip() { "output" } else { "input" };
            format!("    {dir} wire {}{}", range(p.bits), p.name)
        })
        .collect();
    let names: Vec<&str> = cores.iter().map(|ip| ip.name.as_str()).collect();
    let _ = writeln!(
        v,
        "// Simulation model of the {:?} serving {} ({}).\nmodule {} (\n{}\n);",
        cores[0].kind,
        names.join(", "),
        table.source,
        instance.module,
        list.join(",\n")
    );
    for (core, ip) in cores.iter().enumerate() {
        for sig in MODEL_SIGS {
            let _ = writeln!(
                v,
                "    wire {}m{core}_{};",
                range(sig.total_bits(ip)),
                sig.label()
            );
            if !sig.from_ip() && !table.has(*sig) {
                let _ = writeln!(v, "    assign m{core}_{} = 0;", sig.label());
            }
        }
    }
    for p in &ports {
        match (p.sig.scope(), p.sig.from_ip(), p.core) {
            (Scope::Lane, true, _) => {
                let _ = writeln!(v, "    assign {} = 1'b0;", p.name);
            }
            (Scope::Lane, false, _) => {}
            // The tile's clock comes from the first core's model.
            (_, true, None) => {
                let _ = writeln!(v, "    assign {} = m0_{};", p.name, p.sig.label());
            }
            // The tile's reference clocks and PERST# reach every core's model.
            (_, false, None) => {
                for core in 0..cores.len() {
                    let _ = writeln!(v, "    assign m{core}_{} = {};", p.sig.label(), p.name);
                }
            }
            (_, from_ip, Some(core)) => {
                let model_side = p.slice_of(&format!("m{core}_{}", p.sig.label()));
                if from_ip {
                    let _ = writeln!(v, "    assign {} = {model_side};", p.name);
                } else {
                    let _ = writeln!(v, "    assign {model_side} = {};", p.name);
                }
            }
        }
    }
    for (core, (port, ip)) in instance.ports.iter().enumerate() {
        let conns: Vec<String> = MODEL_SIGS
            .iter()
            .map(|sig| format!(".{0}(m{core}_{0})", sig.label()))
            .collect();
        let _ = writeln!(
            v,
            "    weft_board_tile_model #(.SEGMENTS({}), .DATA_BITS({}), .HVALID({}), \
             .RX_READY_LATENCY({}), .TX_READY_LATENCY({}), .PORT({port}), .OWN_CLOCK({}),\n        \
             .BRIDGE_CONTROL('h{:x}), .LINK_CONTROL('h{:x}), .MIN_HOLD({SIM_SECONDARY_BUS_RESET_CYCLES}),\n        \
             .RTILE_CREDIT({})) model{core} (\n        \
             .clk_in(m0_coreclk),\n        {}\n    );",
            ip.segments,
            ip.data_bits,
            u8::from(table.has(Sig::TxHvalid)),
            table.rx_ready_latency,
            table.tx_ready_latency,
            u8::from(core == 0),
            table.bridge_control,
            table.link_control,
            u8::from(table.has(Sig::TxHcrdtUpdate)),
            conns.join(",\n        ")
        );
    }
    let _ = writeln!(v, "endmodule\n");
    v
}

/// `weft_chip` as a loopback: each port's ingress leaves by the same
/// port's egress, both held up together on random cycles, and a TLP
/// starts only while the port's credit for its class says it may, as
/// weft's egress keeps it, its class and length reported on
/// `egress_consume` (it discards nothing, so gives nothing back on
/// `egress_refund`); and every port is asked for [`LINK_PULSES`] hot
/// resets and retrains.
fn loopback_switch_top() -> String {
    let ports = verilog::switch_ports();
    let list: Vec<String> = ports
        .iter()
        .map(|p| format!("    {} wire {}{}", p.dir, p.range(), p.name))
        .collect();
    let mut v = format!(
        "// weft_chip as a loopback, for the board smoke simulation only.\n\
         module weft_chip (\n{}\n);\n    integer seed = 12345;\n    reg go = 1'b1;\n    \
         always @(posedge clock) go <= ($random(seed) % 4) != 0;\n",
        list.join(",\n")
    );
    let _ = writeln!(
        v,
        "    // A TLP's flow control class (bit 0 posted, 1 non-posted, 2\n    \
         // completion) and data length from its DW0 (PCIe Base 6.0 §2.2.1).\n    \
         function automatic [2:0] tlp_class(input [31:0] dw0);\n        \
         if (dw0[28:24] == 5'b01010 || dw0[28:24] == 5'b01011) tlp_class = 3'b100;\n        \
         else if ((dw0[28:24] == 5'b00000 && dw0[30]) || dw0[28:27] == 2'b10) tlp_class = 3'b001;\n        \
         else tlp_class = 3'b010;\n    endfunction\n    \
         function automatic [10:0] tlp_dws(input [31:0] dw0);\n        \
         tlp_dws = !dw0[30] ? 11'd0 : dw0[9:0] == 10'd0 ? 11'd1024 : {{1'b0, dw0[9:0]}};\n    endfunction"
    );
    for p in 0..SWITCH_PORTS {
        // As weft's egress: a TLP of a class without credit does not start,
        // and each TLP's class and length are reported as it starts.
        let _ = writeln!(
            v,
            "    wire [2:0] class{p} = tlp_class(ingress${p}$dw0);\n    \
             wire credit{p} = |(class{p} & {{egress_credit_completion[{p}], egress_credit_non_posted[{p}], egress_credit_posted[{p}]}});\n    \
             wire pass{p} = go && (!ingress${p}$sop || credit{p});\n    \
             assign egress${p}$valid = ingress${p}$valid && pass{p};\n    \
             assign ingress${p}$ready = egress${p}$ready && pass{p};\n    \
             assign egress_consume${p} = egress${p}$valid && egress${p}$ready && ingress${p}$sop ? class{p} : 3'd0;\n    \
             assign egress_consume_dws${p} = tlp_dws(ingress${p}$dw0);\n    \
             assign egress_refund${p} = 3'd0;\n    \
             assign egress_refund_dws${p} = 11'd0;"
        );
        for sig in [
            "sop", "eop", "nullify", "empty", "dw0", "dw1", "dw2", "dw3", "payload",
        ] {
            let _ = writeln!(v, "    assign egress${p}${sig} = ingress${p}${sig};");
        }
    }
    let _ = writeln!(
        v,
        "    // Hot reset and retrain requests, one-cycle pulses alternately on\n    \
         // every port, once the links have had time to come up.\n    \
         integer link_wait = 0;\n    integer link_sent = 0;\n    reg pulses_done = 1'b0;\n    \
         reg hot_reset = 1'b0;\n    reg retrain = 1'b0;\n    \
         always @(posedge clock) begin\n        \
         hot_reset <= 1'b0;\n        retrain <= 1'b0;\n        \
         if (reset) link_wait <= -2000;\n        \
         else if (link_sent < {total}) begin\n            \
         link_wait <= link_wait + 1;\n            \
         if (link_wait == {LINK_PULSE_GAP}) begin\n                \
         link_wait <= 0;\n                link_sent <= link_sent + 1;\n                \
         if (link_sent % 2 == 0) hot_reset <= 1'b1;\n                else retrain <= 1'b1;\n            \
         end\n        end else pulses_done <= 1'b1;\n    end",
        total = 2 * LINK_PULSES
    );
    for p in 0..SWITCH_PORTS {
        let _ = writeln!(
            v,
            "    assign link_hot_reset${p} = hot_reset;\n    assign link_retrain${p} = retrain;"
        );
    }
    let _ = writeln!(
        v,
        "    assign uart_tx = 1'b1;\n    assign led = 0;\n    \
         assign flash_sclk = 1'b0;\n    assign flash_cs_n = 1'b1;\n    assign flash_mosi = 1'b0;\n    \
         assign mii_tx_en = 1'b0;\n    assign mii_txd = 4'd0;\n    \
         assign mdc = 1'b0;\n    assign mdio_o = 1'b0;\n    assign mdio_oe = 1'b0;\n    \
         wire unused = reset | core_clock | core_reset | uart_rx | flash_miso | (|link_up)\n        \
         | mii_rx_clk | mii_rx_dv | mii_rx_er | (|mii_rxd) | mii_tx_clk | mdio_i;\nendmodule"
    );
    v
}

/// The testbench: the board's clocks and resets around `weft_board_top`,
/// finishing once every model has taken back all it sent, when `weft_chip`
/// must see every board port's link up on `link_up`. The PLL's
/// reference clock runs so that weft's clock has the half period asked
/// for (`+weft_ref_half_ps`); the testbench checks that weft's clocks run
/// at that period and at [`weft_regs::SOFT_CORE_CLOCK_DIVISOR`] times it,
/// and that neither domain leaves reset before the PLL locks.
fn testbench(board: &Board) -> String {
    let mut v = testbench_head(board, 1, weft_regs::CONSOLE_CYCLES_PER_BIT);
    let models = model_paths(board);
    let mut done: Vec<String> = models.iter().map(|m| format!("{m}.done")).collect();
    done.push("link_checked".to_owned());
    let errors: Vec<String> = models.iter().map(|m| format!("{m}.errors")).collect();
    v += &clock_checks();
    v += &link_checks(board);
    let _ = writeln!(
        v,
        "    initial begin\n        \
         if (!$value$plusargs(\"weft_timeout_ps=%d\", timeout_ps)) timeout_ps = 200000000;\n        \
         #(timeout_ps);\n        \
         $display(\"ERROR: timeout: not every TLP came back\");\n        $finish;\n    end\n    \
         initial begin\n        #200000;\n        {}\n        wait ({});\n        \
         #100000;\n        \
         if (dut.switch.link_up !== {ports}'b{up:0ports$b})\n            \
         $display(\"ERROR: weft_chip's link_up %b, not every board port's link up\", dut.switch.link_up);\n        \
         $display(\"weft-board-tb: done, %0d errors\", {});\n        $finish;\n    end\n\
         endmodule\n`default_nettype wire",
        reset_release(board),
        done.join(" && "),
        errors.join(" + "),
        ports = SWITCH_PORTS,
        up = (1u32 << board.hard_ips.len()) - 1,
    );
    v
}

/// Every hard IP model's hierarchical path in the testbench, in board order.
pub(crate) fn model_paths(board: &Board) -> Vec<String> {
    verilog::instances(board)
        .iter()
        .flat_map(|i| (0..i.ports.len()).map(move |core| format!("dut.{}.model{core}", i.name())))
        .collect()
}

/// A testbench's start: `weft_board_top` with every output on a wire, the
/// board's clocks and resets (held) on regs, the console's input idle and
/// `flash_miso` tied to `flash_miso`, a console over JTAG at
/// `console_cycles_per_bit` core clock cycles a bit, and the clocks running,
/// weft's reference at the rate `+weft_ref_half_ps=` asks.
pub(crate) fn testbench_head(board: &Board, flash_miso: u8, console_cycles_per_bit: u32) -> String {
    let weft = &board.pll.refclk;
    let mut v = String::from(
        "// Board smoke simulation testbench, generated by weft-boards.\n\
         `timescale 1ps/1ps\n`default_nettype none\nmodule weft_board_tb;\n    \
         integer weft_half_ps;\n    integer ref_half_ps;\n    reg [63:0] timeout_ps;\n",
    );
    let mut conns = Vec::new();
    for p in verilog::top_ports(board) {
        if p.dir == "output" {
            let _ = writeln!(v, "    wire {}{};", p.range(), p.name);
            conns.push(format!(".{0}({0})", p.name));
        } else if board.clocks.iter().any(|c| c.name == p.name) {
            let _ = writeln!(v, "    reg {} = 1'b0;", p.name);
            conns.push(format!(".{0}({0})", p.name));
        } else if let Some(r) = board.resets.iter().find(|r| r.name == p.name) {
            let _ = writeln!(v, "    reg {} = 1'b{};", p.name, u8::from(!r.active_low));
            conns.push(format!(".{0}({0})", p.name));
        } else if p.name == "uart_rx" {
            conns.push(format!(".{}(1'b1)", p.name));
        } else if p.name == "flash_miso" {
            conns.push(format!(".{}(1'b{flash_miso})", p.name));
        } else {
            conns.push(format!(".{}({}'d0)", p.name, p.bits));
        }
    }
    let parameters = if board.console_over_jtag() {
        format!(
            "#(.{}({console_cycles_per_bit})) ",
            console::CYCLES_PARAMETER
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        v,
        "    weft_board_top {parameters}dut (\n        {}\n    );",
        conns.join(",\n        ")
    );
    for c in &board.clocks {
        if &c.name == weft {
            let _ = writeln!(
                v,
                "    initial begin\n        \
                 if (!$value$plusargs(\"weft_half_ps=%d\", weft_half_ps)\n                \
                 || !$value$plusargs(\"weft_ref_half_ps=%d\", ref_half_ps)) begin\n            \
                 $display(\"ERROR: run with +weft_half_ps= and +weft_ref_half_ps=\");\n            $finish;\n        end\n        \
                 forever #(ref_half_ps) {0} = ~{0};\n    end",
                c.name
            );
        } else {
            let half = (500_000.0 / c.mhz).round() as u64;
            let _ = writeln!(v, "    always #({half}) {0} = ~{0};", c.name);
        }
    }
    v
}

/// The testbench's checks of the hot reset and retrain requests: each
/// link controller holds Secondary Bus Reset for
/// [`SIM_SECONDARY_BUS_RESET_CYCLES`], and once the loopback has sent its
/// requests and they have had time to land, each downstream port's model
/// has counted [`LINK_PULSES`] of each, in its reconfiguration clock, and
/// every other model none.
fn link_checks(board: &Board) -> String {
    let mut v = String::new();
    let mut checks = String::new();
    for instance in verilog::instances(board) {
        for (core, (port, ip)) in instance.ports.iter().enumerate() {
            let expected = if verilog::has_link_controller(board, *port) {
                let _ = writeln!(
                    v,
                    "    defparam dut.{}_link.HOLD = {SIM_SECONDARY_BUS_RESET_CYCLES};",
                    ip.name
                );
                LINK_PULSES
            } else {
                0
            };
            let model = format!("dut.{}.model{core}", instance.name());
            for count in ["hot_resets", "retrains"] {
                let _ = writeln!(
                    checks,
                    "        if ({model}.{count} != {expected})\n            \
                     $display(\"ERROR: {}: %0d {count}, not {expected}\", {model}.{count});",
                    ip.name
                );
            }
        }
    }
    let _ = writeln!(
        v,
        "    reg link_checked = 1'b0;\n    \
         initial begin\n        wait (dut.switch.pulses_done);\n        #20000000;\n{checks}        \
         $display(\"weft-board-tb: link requests checked\");\n        link_checked = 1'b1;\n    end"
    );
    v
}

/// What a board testbench prints once [`clock_checks`] found both clocks right.
pub(crate) const CLOCKS_CHECKED: &str = "weft-board-tb: clocks checked";

/// What a board testbench prints at its end when it found no error.
pub(crate) const BOARD_DONE: &str = "weft-board-tb: done, 0 errors";

/// The testbench's checks of weft's clock domains: reset held until the
/// PLL locks, and both clocks' periods once it has.
pub(crate) fn clock_checks() -> String {
    format!(
        "    always @(negedge dut.weft_rst) if (!dut.weft_pll_locked)\n        \
         $display(\"ERROR: the data plane left reset before the PLL locked\");\n    \
         always @(negedge dut.weft_core_rst) if (!dut.weft_pll_locked)\n        \
         $display(\"ERROR: the soft core left reset before the PLL locked\");\n    \
         realtime data_start, data_end, core_start, core_end;\n    \
         initial begin\n        \
         wait (dut.weft_pll_locked);\n        \
         @(posedge dut.weft_clk) data_start = $realtime;\n        \
         repeat (16) @(posedge dut.weft_clk);\n        data_end = $realtime;\n        \
         @(posedge dut.weft_core_clk) core_start = $realtime;\n        \
         repeat (16) @(posedge dut.weft_core_clk);\n        core_end = $realtime;\n        \
         if ((data_end - data_start) / 16.0 < 2.0 * weft_half_ps - 1.0 || (data_end - data_start) / 16.0 > 2.0 * weft_half_ps + 1.0)\n            \
         $display(\"ERROR: weft_clk period %0.1f ps, not %0d ps\", (data_end - data_start) / 16.0, 2 * weft_half_ps);\n        \
         if ((core_end - core_start) / 16.0 < {div}.0 * 2.0 * weft_half_ps - 1.0 || (core_end - core_start) / 16.0 > {div}.0 * 2.0 * weft_half_ps + 1.0)\n            \
         $display(\"ERROR: weft_core_clk period %0.1f ps, not %0d ps\", (core_end - core_start) / 16.0, {div} * 2 * weft_half_ps);\n        \
         $display(\"weft-board-tb: clocks checked\");\n    end\n",
        div = weft_regs::SOFT_CORE_CLOCK_DIVISOR
    )
}

/// Every file of the smoke simulation of `board`, by name under its directory.
pub fn files(board: &Board) -> Result<Vec<generate::File>, SimError> {
    Ok(vec![
        file(generate::WRAPPER, verilog::wrapper(board)),
        file(generate::ADAPTERS, verilog::support_modules()),
        file(MODELS, hip_models(board)?),
        file("sim/weft_switch_loopback.v", loopback_switch_top()),
        file(TESTBENCH, testbench(board)),
    ])
}

/// The hard IP models' file, under the run's directory.
pub(crate) const MODELS: &str = "sim/weft_hip_models.v";

/// The testbench's file, under the run's directory.
pub(crate) const TESTBENCH: &str = "sim/weft_board_tb.v";

/// A generated file named `name` holding `text`.
pub(crate) fn file(name: &str, text: String) -> generate::File {
    generate::File {
        name: name.to_owned(),
        text,
    }
}

/// The hard IPs' simulation models: the tile model, the PLL's, and a
/// wrapper with each IP variant's own port names around a model per core.
pub(crate) fn hip_models(board: &Board) -> Result<String, SimError> {
    let mut models = String::from(include_str!("tile_model.v"));
    models += "\n";
    models += include_str!("pll_model.v");
    models += "\n`timescale 1ps/1ps\n";
    models += &clocking::sim_model(board);
    if board.console_over_jtag() {
        models += "\n";
        models += console::model();
    }
    for instance in verilog::instances(board) {
        let ip = instance.ports[0].1;
        let table = tile::table(ip.kind).ok_or_else(|| SimError::Unsupported {
            port: ip.name.clone(),
            kind: ip.kind,
        })?;
        models += "\n";
        models += &model_wrapper(&instance, table);
    }
    Ok(models)
}

/// A testbench of the board's PLL alone, as the wrapper sets it: the
/// reference clock at the board's frequency, the outputs silent and
/// unlocked in reset, then periods of exactly the data plane's and the soft
/// core's clocks ([`weft_regs::DATA_PLANE_CLOCK_HZ`],
/// [`weft_regs::SOFT_CORE_CLOCK_HZ`]) once locked, and silent again when
/// reset returns.
fn pll_testbench(board: &Board) -> String {
    let (kind, plan) = clocking::board_pll(board);
    let ps = |hz: u64| 1e12 / hz as f64;
    let mut v = String::from(
        "// PLL testbench, generated by weft-boards.\n`timescale 1ps/1ps\n`default_nettype none\n\
         module weft_pll_tb;\n    reg refclk = 1'b0;\n    reg board_rst = 1'b1;\n    \
         wire out0;\n    wire out1;\n    wire locked;\n    wire weft_pll_feedback;\n",
    );
    for p in clocking::ports(kind) {
        if p.role == clocking::PllRole::Unused {
            let _ = writeln!(v, "    wire {}{};", range(p.bits), clocking::unused_net(p));
        }
    }
    v += &clocking::instance(board, |p| match p.role {
        clocking::PllRole::Refclk => "refclk".to_owned(),
        clocking::PllRole::Reset => "board_rst".to_owned(),
        clocking::PllRole::DataPlane => "out0".to_owned(),
        clocking::PllRole::SoftCore => "out1".to_owned(),
        clocking::PllRole::Locked => "locked".to_owned(),
        clocking::PllRole::FeedbackOut | clocking::PllRole::FeedbackIn => {
            "weft_pll_feedback".to_owned()
        }
        clocking::PllRole::Tied(value) => format!("{}'d{value}", p.bits),
        clocking::PllRole::Unused => clocking::unused_net(p),
    });
    let _ = writeln!(
        v,
        "    always #({ref_half:.3}) refclk = ~refclk;\n    \
         realtime t0, t1, t2, t3;\n    \
         initial begin\n        \
         repeat (40) begin\n            @(posedge refclk);\n            \
         if (out0 || out1 || locked) $display(\"ERROR: PLL outputs or locked high in reset\");\n        end\n        \
         board_rst = 1'b0;\n        wait (locked);\n        \
         @(posedge out0) t0 = $realtime;\n        repeat (16) @(posedge out0);\n        t1 = $realtime;\n        \
         @(posedge out1) t2 = $realtime;\n        repeat (16) @(posedge out1);\n        t3 = $realtime;\n        \
         if ((t1 - t0) / 16.0 < {data:.3} - 1.0 || (t1 - t0) / 16.0 > {data:.3} + 1.0)\n            \
         $display(\"ERROR: output 0 period %0.1f ps, not {data:.1} ps\", (t1 - t0) / 16.0);\n        \
         if ((t3 - t2) / 16.0 < {core:.3} - 1.0 || (t3 - t2) / 16.0 > {core:.3} + 1.0)\n            \
         $display(\"ERROR: output 1 period %0.1f ps, not {core:.1} ps\", (t3 - t2) / 16.0);\n        \
         board_rst = 1'b1;\n        #({ref_half:.3});\n        \
         if (out0 || out1 || locked) $display(\"ERROR: PLL outputs or locked high after reset returned\");\n        \
         $display(\"weft-pll-tb: done\");\n        $finish;\n    end\n\
         endmodule\n`default_nettype wire",
        ref_half = ps(plan.refclk_hz) / 2.0,
        data = ps(u64::from(weft_regs::DATA_PLANE_CLOCK_HZ)),
        core = ps(u64::from(weft_regs::SOFT_CORE_CLOCK_HZ)),
    );
    v
}

/// Every file of the PLL's own simulation: its model and testbench.
pub fn pll_files(board: &Board) -> Vec<generate::File> {
    let model = format!(
        "{}\n`timescale 1ps/1ps\n{}",
        include_str!("pll_model.v"),
        clocking::sim_model(board)
    );
    vec![
        generate::File {
            name: "sim/weft_pll_model.v".to_owned(),
            text: model,
        },
        generate::File {
            name: "sim/weft_pll_tb.v".to_owned(),
            text: pll_testbench(board),
        },
    ]
}

/// Simulates the board's PLL alone in `dir` with [`pll_files`]' files (or
/// changed ones, to show what the checks catch).
pub fn run_pll(dir: &Path, files: &[generate::File]) -> Result<(), SimError> {
    run_bench(dir, files, "weft_pll_tb", "weft-pll-tb: done", &[])
}

/// A bench's fixed sources as files under `sim/`: (file name, text).
fn bench_files(sources: &[(&str, &str)]) -> Vec<generate::File> {
    sources
        .iter()
        .map(|(name, text)| generate::File {
            name: format!("sim/{name}"),
            text: (*text).to_owned(),
        })
        .collect()
}

/// The files of the tile TX shim's own simulation: `avst.v`, `beat.v` and a
/// testbench that checks a void TLP leaves with `tx_st_err` on its end
/// segment only.
pub fn avst_tx_files() -> Vec<generate::File> {
    bench_files(&[
        ("weft_avst.v", include_str!("avst.v")),
        ("weft_avst_tx_tb.v", include_str!("avst_tx_tb.v")),
        ("weft_beat.v", include_str!("beat.v")),
    ])
}

/// Simulates the tile TX shim alone in `dir` with [`avst_tx_files`]' files
/// (or changed ones, to show what the checks catch).
pub fn run_avst_tx(dir: &Path, files: &[generate::File]) -> Result<(), SimError> {
    run_bench(dir, files, "weft_avst_tx_tb", "weft-avst-tx-tb: done", &[])
}

/// The files of the transmit credit path's own simulation: `credit.v`,
/// `cdc.v` and a testbench in which a posted write passes a non-posted
/// request waiting for its credit, and nothing reaches the link partner
/// beyond the credit it gave.
pub fn credit_files() -> Vec<generate::File> {
    bench_files(&[
        ("weft_credit.v", include_str!("credit.v")),
        ("weft_cdc.v", include_str!("cdc.v")),
        ("weft_credit_tb.v", include_str!("credit_tb.v")),
        ("weft_ptile_report_tb.v", include_str!("ptile_report_tb.v")),
    ])
}

/// The files of the transmit path's simulation across a link that goes
/// down and comes back: `credit.v` (its credit counter and TX gate),
/// `cdc.v` (the TX FIFO) and a testbench in which weft never waits for a
/// link that is down and its partner never receives what was committed
/// before the link last came up, nor anything beyond its new credit.
pub fn link_down_files() -> Vec<generate::File> {
    bench_files(&[
        ("weft_credit.v", include_str!("credit.v")),
        ("weft_cdc.v", include_str!("cdc.v")),
        ("weft_link_down_tb.v", include_str!("link_down_tb.v")),
        ("weft_ptile_report_tb.v", include_str!("ptile_report_tb.v")),
    ])
}

/// Simulates the transmit path across link outages in `dir` with
/// [`link_down_files`]' files (or changed ones, to show what the checks
/// catch), the link partner's stalls drawn from `seed`.
pub fn run_link_down(dir: &Path, files: &[generate::File], seed: u32) -> Result<(), SimError> {
    run_bench(
        dir,
        files,
        "weft_link_down_tb",
        "done, 0 errors",
        &[format!("+seed={seed}")],
    )
}

/// What the transmit credit simulation's link partner does besides the
/// reference case ([`credit_files`]' testbench).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreditCase {
    /// One non-posted header credit, kept a long while; 512-byte writes.
    Reference,
    /// As `Reference`, advertising only 16 posted data credits (a 256-byte
    /// Max_Payload_Size), with 256-byte writes.
    SmallPartner,
    /// As `Reference`, with a void write after each good one, which the
    /// partner discards without counting its credit.
    VoidWrites,
    /// As `Reference`, with a write after each good one that the egress
    /// commits and then discards before the link, giving its credit back.
    DiscardedWrites,
}

/// Simulates the transmit credit path in `dir` with [`credit_files`]'
/// files (or changed ones, to show what the checks catch) in `case`.
pub fn run_credit(dir: &Path, files: &[generate::File], case: CreditCase) -> Result<(), SimError> {
    let args: Vec<String> = match case {
        CreditCase::Reference => vec![],
        CreditCase::SmallPartner => vec![String::from("+small_partner")],
        CreditCase::VoidWrites => vec![String::from("+void_writes")],
        CreditCase::DiscardedWrites => vec![String::from("+discarded_writes")],
    };
    run_bench(dir, files, "weft_credit_tb", "weft-credit-tb: done", &args)
}

/// The files of the console over JTAG's own simulation: the console
/// module, the JTAG UART channel's model and a testbench in which every
/// byte crosses both ways in order while the host reads, and the chip's
/// line is never held up while it does not.
pub fn jtag_console_files() -> Vec<generate::File> {
    bench_files(&[
        ("weft_jtag_console.v", console::module()),
        ("weft_jtag_atlantic_model.v", console::model()),
        ("weft_jtag_console_tb.v", include_str!("jtag_console_tb.v")),
    ])
}

/// Simulates the console over JTAG in `dir` with [`jtag_console_files`]'
/// files (or changed ones, to show what the checks catch).
pub fn run_jtag_console(dir: &Path, files: &[generate::File]) -> Result<(), SimError> {
    run_bench(
        dir,
        files,
        "weft_jtag_console_tb",
        "weft-jtag-console-tb: done, 0 errors",
        &[],
    )
}

/// The files of the UltraScale+ root port's link controller and
/// non-posted credit simulation: `link.v`, `credit.v`, `cdc.v` and a
/// testbench with a model of the block's side written from PG213.
pub fn pcie4_files() -> Vec<generate::File> {
    bench_files(&[
        ("weft_link.v", include_str!("link.v")),
        ("weft_credit.v", include_str!("credit.v")),
        ("weft_cdc.v", include_str!("cdc.v")),
        ("weft_pcie4_tb.v", include_str!("pcie4_tb.v")),
    ])
}

/// Simulates the UltraScale+ root port's link controller and credit in
/// `dir` with [`pcie4_files`]' files (or changed ones).
pub fn run_pcie4(dir: &Path, files: &[generate::File]) -> Result<(), SimError> {
    run_bench(dir, files, "weft_pcie4_tb", "weft-pcie4-tb: done", &[])
}

/// The files of the UltraScale+ shims' own simulation: `axis.v`, `beat.v` and a
/// testbench that sends TLPs of several lengths through each direction and
/// checks descriptors, payload, tkeep, tlast and tuser against PG213.
pub fn axis_files() -> Vec<generate::File> {
    bench_files(&[
        ("weft_axis.v", include_str!("axis.v")),
        ("weft_axis_tb.v", include_str!("axis_tb.v")),
        ("weft_beat.v", include_str!("beat.v")),
    ])
}

/// Simulates the UltraScale+ shims alone in `dir` with [`axis_files`]'
/// files (or changed ones, to show what the checks catch).
pub fn run_axis(dir: &Path, files: &[generate::File]) -> Result<(), SimError> {
    run_bench(dir, files, "weft_axis_tb", "weft-axis-tb: done", &[])
}

/// The testbench of the flash's `STARTUPE3` connection: random SPI clock,
/// chip select, MOSI and flash output, checked at the model's pins.
fn flash_testbench() -> String {
    format!(
        "`timescale 1ps/1ps\n`default_nettype none\n\
         module weft_flash_tb;\n\
         \x20   reg sclk = 1'b0, cs_n = 1'b1, mosi = 1'b0;\n\
         \x20   wire miso;\n\
         \x20   integer errors = 0, i;\n\
         \x20   {module} dut (.sclk(sclk), .cs_n(cs_n), .mosi(mosi), .miso(miso));\n\
         \x20   task check(input ok, input [8*24-1:0] what);\n\
         \x20       if (!ok) begin\n\
         \x20           errors = errors + 1;\n\
         \x20           $display(\"ERROR: step %0d: %0s\", i, what);\n\
         \x20       end\n\
         \x20   endtask\n\
         \x20   initial begin\n\
         \x20       for (i = 0; i < 256; i = i + 1) begin\n\
         \x20           {{sclk, cs_n, mosi}} = i[2:0];\n\
         \x20           dut.startup.flash_dq1 = i[3] ^ i[5];\n\
         \x20           #10;\n\
         \x20           check(dut.startup.cclk === sclk, \"CCLK follows SCLK\");\n\
         \x20           check(dut.startup.fcs_b === cs_n, \"FCS_B follows CS#\");\n\
         \x20           check(dut.startup.d[0] === mosi, \"D00 follows MOSI\");\n\
         \x20           check(dut.startup.d[2] === 1'b1, \"D02 (W#) held high\");\n\
         \x20           check(dut.startup.d[3] === 1'b1, \"D03 (HOLD#) held high\");\n\
         \x20           check(!dut.startup.contention, \"D01 left to the flash\");\n\
         \x20           check(miso === dut.startup.flash_dq1, \"MISO reads D01\");\n\
         \x20       end\n\
         \x20       $display(\"weft-flash-tb: done, %0d errors\", errors);\n\
         \x20       $finish;\n\
         \x20   end\n\
         endmodule\n`default_nettype wire\n",
        module = verilog::FLASH_STARTUPE3
    )
}

/// The files of the flash connection's own simulation, for a board whose
/// flash `STARTUPE3` reaches: the wrapper's connection module, a model of
/// the primitive and its pins (`startupe3_model.v`), and the testbench.
pub fn flash_files(board: &Board) -> Option<Vec<generate::File>> {
    board.flash_through_startupe3().then(|| {
        vec![
            generate::File {
                name: "sim/weft_flash_startupe3.v".to_owned(),
                text: format!(
                    "`timescale 1ps/1ps\n`default_nettype none\n{}`default_nettype wire\n",
                    verilog::flash_startupe3_module()
                ),
            },
            generate::File {
                name: "sim/startupe3_model.v".to_owned(),
                text: include_str!("startupe3_model.v").to_owned(),
            },
            generate::File {
                name: "sim/weft_flash_tb.v".to_owned(),
                text: flash_testbench(),
            },
        ]
    })
}

/// Simulates the flash's `STARTUPE3` connection in `dir` with
/// [`flash_files`]' files (or changed ones, to show what the checks catch).
pub fn run_flash(dir: &Path, files: &[generate::File]) -> Result<(), SimError> {
    run_bench(
        dir,
        files,
        "weft_flash_tb",
        "weft-flash-tb: done, 0 errors",
        &[],
    )
}

/// The speed of the management Ethernet's copper link, which the PHY
/// announces over SGMII auto-negotiation (PG047 `status_vector[11:10]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkSpeed {
    /// 10 Mb/s: a GMII byte every 100 cycles, the MII at 2.5 MHz.
    Mbps10,
    /// 100 Mb/s: a GMII byte every 10 cycles, the MII at 25 MHz.
    Mbps100,
    /// 1 Gb/s: beyond weft's 10/100 MAC; nothing crosses.
    Gbps1,
}

impl LinkSpeed {
    /// The speed in Mb/s, as the testbench takes it.
    pub const fn mbps(self) -> u32 {
        match self {
            LinkSpeed::Mbps10 => 10,
            LinkSpeed::Mbps100 => 100,
            LinkSpeed::Gbps1 => 1000,
        }
    }
}

/// What crossed the management Ethernet in a run, frame by frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EthernetRun {
    /// What weft's MAC side took with `mii_rx_dv`: each frame's nibbles in
    /// order, one a byte.
    pub mii_received: Vec<Vec<u8>>,
    /// What the PCS/PMA took with `gmii_tx_en`: each frame's bytes.
    pub gmii_sent: Vec<Vec<u8>>,
}

/// The files of the management Ethernet's own simulation, for a board
/// whose management port is SGMII over LVDS: the wrapper's
/// `weft_board_sgmii` block, the MII-to-GMII adapter, a model of the
/// PCS/PMA's client side (`sgmii_model.v`, written from PG047) under the
/// IP's module and port names, a model of the `IOBUF` primitive on MDIO
/// (`iobuf_model.v`, from UG974), and the testbench (`sgmii_tb.v`: weft's
/// MAC side as IEEE 802.3 clause 22 times it, and the MDIO master's pins).
pub fn ethernet_files(board: &Board) -> Option<Vec<generate::File>> {
    let ethernet::Management::SgmiiLvds(_) = ethernet::management(board) else {
        return None;
    };
    let file = |name: &str, text: String| generate::File {
        name: name.to_owned(),
        text,
    };
    Some(vec![
        file(
            "sim/weft_board_sgmii.v",
            format!(
                "`timescale 1ps/1ps\n`default_nettype none\n{}\n`default_nettype wire\n",
                ethernet::sgmii_module()
            ),
        ),
        file(
            "sim/weft_board_mii_gmii.v",
            format!("`timescale 1ps/1ps\n{}", include_str!("mii_gmii.v")),
        ),
        file(
            "sim/weft_mgmt_pcs_pma_model.v",
            format!(
                "{}\n`timescale 1ps/1ps\n{}",
                include_str!("sgmii_model.v"),
                ethernet::sim_model()
            ),
        ),
        file(
            "sim/iobuf_model.v",
            include_str!("iobuf_model.v").to_owned(),
        ),
        file("sim/weft_sgmii_tb.v", include_str!("sgmii_tb.v").to_owned()),
    ])
}

/// Simulates the management Ethernet in `dir` with [`ethernet_files`]'
/// files (or changed ones, to show what the checks catch): the PCS/PMA's
/// model receives `frames` from the PHY and weft's MAC side sends them,
/// each with its preamble, at `speed`. Returns what crossed each way.
pub fn run_ethernet(
    dir: &Path,
    files: &[generate::File],
    frames: &[Vec<u8>],
    speed: LinkSpeed,
    seed: u32,
) -> Result<EthernetRun, SimError> {
    let mut words = vec![frames.len() as u32];
    for frame in frames {
        words.push(frame.len() as u32);
        words.extend(frame.iter().map(|b| u32::from(*b)));
    }
    let stimulus = dir.join("sim/frames.hex");
    let text: String = words.iter().map(|w| format!("{w:08x}\n")).collect();
    write_file(&stimulus, &text)?;
    let out = dir.join("sim/eth_out");
    fs::create_dir_all(&out).map_err(|error| SimError::Io {
        path: out.clone(),
        error,
    })?;
    run_bench(
        dir,
        files,
        "weft_sgmii_tb",
        "weft-sgmii-tb: done, 0 errors",
        &[
            format!("+weft_eth_frames={}", stimulus.display()),
            format!("+weft_eth_words={}", words.len()),
            format!("+weft_eth_out={}", out.display()),
            format!("+weft_eth_speed={}", speed.mbps()),
            format!("+weft_seed={seed}"),
        ],
    )?;
    Ok(EthernetRun {
        mii_received: hex_lines(&out.join("mii_rx.hex"), 1)?,
        gmii_sent: hex_lines(&out.join("gmii_tx.hex"), 2)?,
    })
}

/// Reads a file of one frame a line, each `digits` hex digits a value.
fn hex_lines(path: &Path, digits: usize) -> Result<Vec<Vec<u8>>, SimError> {
    parse_lines(path, |line, bad| {
        if line.len() % digits != 0 {
            return Err(bad());
        }
        (0..line.len())
            .step_by(digits)
            .map(|at| u8::from_str_radix(&line[at..at + digits], 16).map_err(|_| bad()))
            .collect()
    })
}

/// Reads a file a simulation wrote, one value a line, each parsed by
/// `parse`, which is handed the error that names the line.
fn parse_lines<T>(
    path: &Path,
    parse: impl Fn(&str, &dyn Fn() -> SimError) -> Result<T, SimError>,
) -> Result<Vec<T>, SimError> {
    let text = fs::read_to_string(path).map_err(|error| SimError::Io {
        path: path.to_owned(),
        error,
    })?;
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let bad = || SimError::Output {
                path: path.to_owned(),
                line: i + 1,
            };
            parse(line, &bad)
        })
        .collect()
}

/// Compiles `files` into `dir` with `top` as the testbench, runs it with
/// `args`, and passes when it prints `done` and no `ERROR`.
fn run_bench(
    dir: &Path,
    files: &[generate::File],
    top: &str,
    done: &str,
    args: &[String],
) -> Result<(), SimError> {
    if !iverilog_available() {
        return Err(SimError::NoSimulator);
    }
    let mut sources = Vec::new();
    for f in files {
        let path = dir.join(&f.name);
        write_file(&path, &f.text)?;
        sources.push(path);
    }
    let (success, report) = icarus(dir, top, &sources, args)?;
    passed(success, report, &[done]).map(|_| ())
}

/// Compiles `sources` with Icarus Verilog, `top` the testbench, into
/// `dir`, and runs the image with `args`: whether it exited with success,
/// and what it printed.
fn icarus(
    dir: &Path,
    top: &str,
    sources: &[PathBuf],
    args: &[String],
) -> Result<(bool, String), SimError> {
    let image = dir.join(format!("sim/{top}.vvp"));
    build(
        Command::new("iverilog")
            .args(["-g2012", "-s", top, "-o"])
            .arg(&image)
            .args(sources),
        Path::new("iverilog"),
    )?;
    let sim = run_tool(
        Command::new("vvp").arg("-n").arg(&image).args(args),
        Path::new("vvp"),
    )?;
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&sim.stdout),
        String::from_utf8_lossy(&sim.stderr)
    );
    Ok((sim.status.success(), report))
}

/// Runs `command`, the tool at `tool`: its output, or why it did not start.
pub(crate) fn run_tool(command: &mut Command, tool: &Path) -> Result<Output, SimError> {
    command.output().map_err(|error| SimError::Io {
        path: tool.to_owned(),
        error,
    })
}

/// Builds a simulation with `command` (the tool at `tool`): a failed
/// build is [`SimError::Compile`], with the tool's errors as its report.
pub(crate) fn build(command: &mut Command, tool: &Path) -> Result<(), SimError> {
    let build = run_tool(command, tool)?;
    if build.status.success() {
        Ok(())
    } else {
        Err(SimError::Compile {
            report: String::from_utf8_lossy(&build.stderr).into_owned(),
        })
    }
}

/// `report`, if the run that printed it passed: it exited with `success`,
/// printed no `ERROR`, and printed each of `lines`. Otherwise the run
/// failed, and the report says why.
pub(crate) fn passed(success: bool, report: String, lines: &[&str]) -> Result<String, SimError> {
    if success && !report.contains("ERROR") && lines.iter().all(|line| report.contains(line)) {
        Ok(report)
    } else {
        Err(SimError::Failed { report })
    }
}

/// The stimulus file the models read: the TLP count, then each TLP's
/// payload DW count, header and payload, one hex word a line.
fn stimulus(tlps: &[SimTlp]) -> String {
    let mut v = format!("{:08x}\n", tlps.len());
    for t in tlps {
        let _ = writeln!(v, "{:08x}", t.payload.len());
        for dw in t.header.iter().chain(&t.payload) {
            let _ = writeln!(v, "{dw:08x}");
        }
    }
    v
}

/// Reads what a model took back: one TLP a line.
pub(crate) fn received(path: &Path) -> Result<Vec<SimTlp>, SimError> {
    parse_lines(path, |line, bad| {
        let words: Vec<&str> = line.split_whitespace().collect();
        let hex = |w: &str| u32::from_str_radix(w, 16).map_err(|_| bad());
        let header = [
            hex(words.first().ok_or_else(bad)?)?,
            hex(words.get(1).ok_or_else(bad)?)?,
            hex(words.get(2).ok_or_else(bad)?)?,
            hex(words.get(3).ok_or_else(bad)?)?,
        ];
        let count: usize = words.get(4).ok_or_else(bad)?.parse().map_err(|_| bad())?;
        if words.len() != 5 + count {
            return Err(bad());
        }
        let payload = words[5..]
            .iter()
            .map(|w| hex(w))
            .collect::<Result<_, _>>()?;
        Ok(SimTlp { header, payload })
    })
}

pub(crate) fn write_file(path: &Path, text: &str) -> Result<(), SimError> {
    let io = |error| SimError::Io {
        path: path.to_owned(),
        error,
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io)?;
    }
    fs::write(path, text).map_err(io)
}

/// A board run's files, written under its directory.
pub(crate) struct BoardRun {
    /// The Verilog sources to build.
    pub sources: Vec<PathBuf>,
    /// Where the models write what they took back (emptied).
    pub out_dir: PathBuf,
    /// The plusargs every board testbench takes: the stimulus, the output
    /// directory, the clocks and the seed.
    pub args: Vec<String>,
}

/// Writes `files` and the stimulus of `tlps` under `dir`, empties the
/// models' output directory, and gives the testbench's plusargs for
/// `config`.
pub(crate) fn prepare_board_run(
    board: &Board,
    dir: &Path,
    files: &[generate::File],
    tlps: &[SimTlp],
    config: RunConfig,
) -> Result<BoardRun, SimError> {
    let mut sources = Vec::new();
    for f in files {
        let path = dir.join(&f.name);
        write_file(&path, &f.text)?;
        if f.name.ends_with(".v") {
            sources.push(path);
        }
    }
    let stim = dir.join("sim/tlps.hex");
    let text = stimulus(tlps);
    write_file(&stim, &text)?;
    let out_dir = dir.join("sim/out");
    let _ = fs::remove_dir_all(&out_dir);
    fs::create_dir_all(&out_dir).map_err(|error| SimError::Io {
        path: out_dir.clone(),
        error,
    })?;
    let args = vec![
        format!("+weft_tlps={}", stim.display()),
        format!("+weft_tlp_words={}", text.lines().count()),
        format!("+weft_out={}", out_dir.display()),
        format!("+weft_hip_half_ps={}", config.hip_half_ps),
        format!("+weft_half_ps={}", config.weft_half_ps),
        format!("+weft_ref_half_ps={}", reference_half_ps(board, config)),
        format!("+weft_seed={}", config.seed),
    ];
    Ok(BoardRun {
        sources,
        out_dir,
        args,
    })
}

/// The testbench statements that release the board's resets.
pub(crate) fn reset_release(board: &Board) -> String {
    board
        .resets
        .iter()
        .map(|r| format!("{} = 1'b{};", r.name, u8::from(r.active_low)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The half period of the PLL's reference clock that gives weft's data
/// plane clock the half period `config` asks for: the reference is slower
/// by the ratio of [`weft_regs::DATA_PLANE_CLOCK_HZ`] to its own frequency.
fn reference_half_ps(board: &Board, config: RunConfig) -> u64 {
    let (_, plan) = clocking::board_pll(board);
    u64::from(config.weft_half_ps) * u64::from(weft_regs::DATA_PLANE_CLOCK_HZ) / plan.refclk_hz
}

/// Runs the smoke simulation of `board` in `dir`: every port's model sends
/// `tlps` and takes back what the loopback returns. Returns, per port in
/// board order, the TLPs that model took back.
pub fn run(
    board: &Board,
    dir: &Path,
    tlps: &[SimTlp],
    config: RunConfig,
) -> Result<Vec<Vec<SimTlp>>, SimError> {
    run_files(board, dir, &files(board)?, tlps, config)
}

/// [`run`] with the simulation's files given, as [`files`] makes them or
/// changed (to show what the checks catch).
pub fn run_files(
    board: &Board,
    dir: &Path,
    files: &[generate::File],
    tlps: &[SimTlp],
    config: RunConfig,
) -> Result<Vec<Vec<SimTlp>>, SimError> {
    if !iverilog_available() {
        return Err(SimError::NoSimulator);
    }
    let run = prepare_board_run(board, dir, files, tlps, config)?;
    let (success, report) = icarus(dir, "weft_board_tb", &run.sources, &run.args)?;
    passed(
        success,
        report,
        &[
            CLOCKS_CHECKED,
            "weft-board-tb: link requests checked",
            BOARD_DONE,
        ],
    )?;
    (0..board.hard_ips.len())
        .map(|port| received(&run.out_dir.join(format!("port{port}.hex"))))
        .collect()
}
