//! weft's clock domains in the wrapper: the PLL, its buffers and the resets.
//!
//! The board's reference clock ([`crate::model::PllInput`]) feeds one PLL
//! ([`crate::pll`]) whose output 0 is weft's data plane clock (`weft_clk`,
//! [`weft_regs::DATA_PLANE_CLOCK_HZ`]) and output 1 the soft core clock
//! (`weft_core_clk`, [`weft_regs::SOFT_CORE_CLOCK_HZ`]). Both come from one
//! VCO and rise together, so the soft core's crossing into the data plane
//! (inside `weft_chip`) is a synchronous 1:`SOFT_CORE_CLOCK_DIVISOR`
//! crossing that the timing analysis checks; each hard IP's application
//! clock is asynchronous to both and reaches them only through the
//! dual-clock FIFOs. The board's reset and the PLL's loss of lock hold both
//! domains in reset, each released by a synchronizer of its own clock.
//!
//! The PLL's port names are tables here ([`PllPort`]): the wrapper's
//! instance, the lint stubs and the simulation models' wrappers (around
//! `pll_model.v`) are all generated from them.

use std::fmt::Write as _;

use crate::model::{Board, Vendor};
use crate::pll::{self, PllKind, PllPlan};
use crate::verilog::{self, bit_range};

/// Module name of the Intel IOPLL variant the project generates.
pub const IOPLL_MODULE: &str = "weft_pll";

/// Module name of the Xilinx MMCM primitive.
pub const MMCM_MODULE: &str = "MMCME4_ADV";

/// Instance name of the PLL in `weft_board_top`.
pub const PLL_INSTANCE: &str = "weft_clk_pll";

/// One port of a PLL: direction, width, name, and what the wrapper ties it to.
#[derive(Clone, Copy, Debug)]
pub struct PllPort {
    /// `input` or `output`.
    pub dir: &'static str,
    /// Width in bits.
    pub bits: u32,
    /// The vendor's name for it.
    pub name: &'static str,
    /// What it does in weft's use of the PLL.
    pub role: PllRole,
}

/// What a PLL port is to the wrapper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PllRole {
    /// The reference clock.
    Refclk,
    /// Active-high reset.
    Reset,
    /// The data plane clock output.
    DataPlane,
    /// The soft core clock output.
    SoftCore,
    /// High while locked.
    Locked,
    /// The feedback output, wired to [`PllRole::FeedbackIn`].
    FeedbackOut,
    /// The feedback input.
    FeedbackIn,
    /// An input tied to a constant (its value).
    Tied(u32),
    /// An output weft does not use.
    Unused,
}

/// The IOPLL Intel FPGA IP's ports that the variant enables: Stratix 10
/// Clocking and PLL User Guide (683195) §6.2 and Agilex 7 Clocking and PLL
/// User Guide (683761) §5.5, "IOPLL IP Core Ports and Signals".
pub const IOPLL_PORTS: &[PllPort] = &[
    port("input", 1, "refclk", PllRole::Refclk),
    port("input", 1, "rst", PllRole::Reset),
    port("output", 1, "outclk_0", PllRole::DataPlane),
    port("output", 1, "outclk_1", PllRole::SoftCore),
    port("output", 1, "locked", PllRole::Locked),
];

/// `MMCME4_ADV`'s ports: UltraScale Architecture Libraries Guide (UG974),
/// "MMCME4_ADV", Port Descriptions. CLKINSEL high selects CLKIN1.
pub const MMCME4_ADV_PORTS: &[PllPort] = &[
    port("input", 1, "CLKIN1", PllRole::Refclk),
    port("input", 1, "CLKIN2", PllRole::Tied(0)),
    port("input", 1, "CLKINSEL", PllRole::Tied(1)),
    port("input", 1, "RST", PllRole::Reset),
    port("input", 1, "PWRDWN", PllRole::Tied(0)),
    port("input", 1, "CLKFBIN", PllRole::FeedbackIn),
    port("output", 1, "CLKFBOUT", PllRole::FeedbackOut),
    port("output", 1, "CLKFBOUTB", PllRole::Unused),
    port("output", 1, "CLKOUT0", PllRole::DataPlane),
    port("output", 1, "CLKOUT0B", PllRole::Unused),
    port("output", 1, "CLKOUT1", PllRole::SoftCore),
    port("output", 1, "CLKOUT1B", PllRole::Unused),
    port("output", 1, "CLKOUT2", PllRole::Unused),
    port("output", 1, "CLKOUT2B", PllRole::Unused),
    port("output", 1, "CLKOUT3", PllRole::Unused),
    port("output", 1, "CLKOUT3B", PllRole::Unused),
    port("output", 1, "CLKOUT4", PllRole::Unused),
    port("output", 1, "CLKOUT5", PllRole::Unused),
    port("output", 1, "CLKOUT6", PllRole::Unused),
    port("output", 1, "LOCKED", PllRole::Locked),
    port("input", 7, "DADDR", PllRole::Tied(0)),
    port("input", 1, "DCLK", PllRole::Tied(0)),
    port("input", 1, "DEN", PllRole::Tied(0)),
    port("input", 16, "DI", PllRole::Tied(0)),
    port("input", 1, "DWE", PllRole::Tied(0)),
    port("output", 16, "DO", PllRole::Unused),
    port("output", 1, "DRDY", PllRole::Unused),
    port("input", 1, "PSCLK", PllRole::Tied(0)),
    port("input", 1, "PSEN", PllRole::Tied(0)),
    port("input", 1, "PSINCDEC", PllRole::Tied(0)),
    port("output", 1, "PSDONE", PllRole::Unused),
    port("input", 1, "CDDCREQ", PllRole::Tied(0)),
    port("output", 1, "CDDCDONE", PllRole::Unused),
    port("output", 1, "CLKINSTOPPED", PllRole::Unused),
    port("output", 1, "CLKFBSTOPPED", PllRole::Unused),
];

const fn port(dir: &'static str, bits: u32, name: &'static str, role: PllRole) -> PllPort {
    PllPort {
        dir,
        bits,
        name,
        role,
    }
}

/// The parameters of `MMCME4_ADV` the wrapper sets (UG974 attribute names):
/// name, whether it is real (else integer), and its value for a plan.
fn mmcm_parameters(plan: &PllPlan) -> Vec<(&'static str, String)> {
    let period_ns = 1e9 / plan.refclk_hz as f64;
    vec![
        ("CLKIN1_PERIOD", format!("{period_ns:.3}")),
        ("DIVCLK_DIVIDE", plan.pre_divide.to_string()),
        ("CLKFBOUT_MULT_F", format!("{}.000", plan.multiply)),
        (
            "CLKOUT0_DIVIDE_F",
            format!("{}.000", plan.data_plane_divide),
        ),
        ("CLKOUT1_DIVIDE", plan.soft_core_divide.to_string()),
    ]
}

/// Whether an `MMCME4_ADV` parameter is real-valued.
fn mmcm_parameter_is_real(name: &str) -> bool {
    matches!(
        name,
        "CLKIN1_PERIOD" | "CLKFBOUT_MULT_F" | "CLKOUT0_DIVIDE_F"
    )
}

/// The ports of a PLL kind.
pub fn ports(kind: PllKind) -> &'static [PllPort] {
    match kind {
        PllKind::Iopll => IOPLL_PORTS,
        PllKind::Mmcme4Adv => MMCME4_ADV_PORTS,
    }
}

/// The module name of a PLL kind.
pub fn module(kind: PllKind) -> &'static str {
    match kind {
        PllKind::Iopll => IOPLL_MODULE,
        PllKind::Mmcme4Adv => MMCM_MODULE,
    }
}

/// The board's PLL and its setting. A board that loaded has both
/// ([`crate::validate::check`] refuses one without).
pub fn board_pll(board: &Board) -> (PllKind, PllPlan) {
    let device = pll::for_board(board).expect("a loaded board's family has a PLL");
    let clock = board
        .clocks
        .iter()
        .find(|c| c.name == board.pll.refclk)
        .expect("a loaded board's PLL reference clock is declared");
    let plan = pll::plan(pll::hz(clock.mhz), device.limits.as_ref())
        .expect("a loaded board's PLL reaches weft's clocks");
    (device.kind, plan)
}

/// The Verilog of weft's clock domains: the PLL from the board's reference
/// clock, the global buffers, and the two domains' reset synchronizers.
/// `reset` is the board's reset as an active-high expression.
pub fn wrapper_block(board: &Board, reset: &str) -> String {
    let (kind, plan) = board_pll(board);
    let mhz = |hz: u64| hz as f64 / 1e6;
    let refclk = &board.pll.refclk;
    let differential = board.board.vendor == Vendor::Xilinx
        && board
            .clocks
            .iter()
            .any(|c| &c.name == refclk && c.pin_n.is_some());
    // An IOPLL whose ranges are unconfirmed: the plan's counters are not
    // known to be in range, and its parameter editor chooses them anyway.
    let editor_chooses_unknown_vco =
        kind.vendor_chooses_setting() && pll::for_board(board).is_some_and(|d| d.limits.is_none());
    let setting = if !editor_chooses_unknown_vco {
        format!(
            "PLL: VCO {} MHz = {} MHz x {} / {};\n    \
             // weft_clk = VCO / {} = {} MHz (data plane), weft_core_clk = VCO / {} = {} MHz",
            mhz(plan.vco_hz()),
            mhz(plan.refclk_hz),
            plan.multiply,
            plan.pre_divide,
            plan.data_plane_divide,
            mhz(plan.data_plane_hz()),
            plan.soft_core_divide,
            mhz(plan.soft_core_hz()),
        )
    } else {
        format!(
            "IOPLL, its VCO and counters chosen by its parameter editor\n    \
             // within the device's ranges: weft_clk = {} MHz (data plane), weft_core_clk = {} MHz",
            mhz(plan.data_plane_hz()),
            mhz(plan.soft_core_hz()),
        )
    };
    let mut v = String::new();
    let _ = writeln!(
        v,
        "    // ---- weft's clock domains ----\n    \
         // {refclk} ({} MHz) -> {setting}\n    \
         // (soft core). One VCO, edges aligned: the soft core <-> data plane\n    \
         // crossing inside weft_chip is synchronous and timed. Each hard\n    \
         // IP's clock is asynchronous to both: only the dual-clock FIFOs cross it.\n    \
         wire weft_clk;\n    wire weft_core_clk;\n    wire weft_pll_locked;\n    \
         wire board_rst = {reset};",
        mhz(plan.refclk_hz),
    );
    let refclk_net = if differential {
        let _ = writeln!(
            v,
            "    wire weft_pll_refclk;\n    \
             IBUFDS weft_pll_ibufds (.I({refclk}_p), .IB({refclk}_n), .O(weft_pll_refclk));"
        );
        "weft_pll_refclk".to_owned()
    } else {
        refclk.clone()
    };
    // Intel's IOPLL drives the global clock network itself; the MMCM's
    // outputs go through a BUFG each, its feedback straight back.
    let buffered = kind == PllKind::Mmcme4Adv;
    let (data_net, core_net) = if buffered {
        let _ = writeln!(
            v,
            "    wire weft_pll_out0;\n    wire weft_pll_out1;\n    wire weft_pll_feedback;"
        );
        ("weft_pll_out0", "weft_pll_out1")
    } else {
        ("weft_clk", "weft_core_clk")
    };
    let unused: Vec<&PllPort> = ports(kind)
        .iter()
        .filter(|p| p.role == PllRole::Unused)
        .collect();
    if !unused.is_empty() {
        let _ = writeln!(v, "    /* verilator lint_off UNUSEDSIGNAL */");
        for p in &unused {
            let _ = writeln!(v, "    wire {}{};", bit_range(p.bits), unused_net(p));
        }
        let _ = writeln!(v, "    /* verilator lint_on UNUSEDSIGNAL */");
    }
    v += &instance(board, |p| match p.role {
        PllRole::Refclk => refclk_net.clone(),
        PllRole::Reset => "board_rst".to_owned(),
        PllRole::DataPlane => data_net.to_owned(),
        PllRole::SoftCore => core_net.to_owned(),
        PllRole::Locked => "weft_pll_locked".to_owned(),
        PllRole::FeedbackOut | PllRole::FeedbackIn => "weft_pll_feedback".to_owned(),
        PllRole::Tied(value) => format!("{}'d{value}", p.bits),
        PllRole::Unused => unused_net(p),
    });
    if buffered {
        let _ = writeln!(
            v,
            "    BUFG weft_clk_bufg (.I(weft_pll_out0), .O(weft_clk));\n    \
             BUFG weft_core_clk_bufg (.I(weft_pll_out1), .O(weft_core_clk));"
        );
    }
    let _ = writeln!(
        v,
        "    // Both domains stay in reset until the PLL locks.\n    \
         wire weft_rst;\n    wire weft_core_rst;\n    \
         weft_board_reset_sync weft_rst_sync (.clk(weft_clk), .rst_in(board_rst || !weft_pll_locked), .rst_out(weft_rst));\n    \
         weft_board_reset_sync weft_core_rst_sync (.clk(weft_core_clk), .rst_in(board_rst || !weft_pll_locked), .rst_out(weft_core_rst));\n"
    );
    v
}

/// The wire an unused PLL output drives.
pub fn unused_net(port: &PllPort) -> String {
    format!("weft_pll_unused_{}", port.name.to_lowercase())
}

/// The board's PLL instance (`weft_clk_pll`), set as the board's plan
/// sets it, each port connected to what `connect` says.
pub fn instance(board: &Board, connect: impl Fn(&PllPort) -> String) -> String {
    let (kind, plan) = board_pll(board);
    let params = match kind {
        PllKind::Iopll => String::new(),
        PllKind::Mmcme4Adv => {
            let list: Vec<String> = mmcm_parameters(&plan)
                .into_iter()
                .map(|(name, value)| format!(".{name}({value})"))
                .collect();
            format!("#({}) ", list.join(", "))
        }
    };
    let conns: Vec<String> = ports(kind)
        .iter()
        .map(|p| format!("        .{}({})", p.name, connect(p)))
        .collect();
    format!(
        "    {} {params}{PLL_INSTANCE} (\n{}\n    );\n",
        module(kind),
        conns.join(",\n")
    )
}

/// The module header of a PLL kind: parameters where the primitive has
/// them, then its ports.
fn header(kind: PllKind, plan: &PllPlan) -> String {
    let params = match kind {
        PllKind::Iopll => String::new(),
        PllKind::Mmcme4Adv => {
            let list: Vec<String> = mmcm_parameters(plan)
                .into_iter()
                .map(|(name, _)| {
                    let ty = if mmcm_parameter_is_real(name) {
                        "real"
                    } else {
                        "integer"
                    };
                    let zero = if mmcm_parameter_is_real(name) {
                        "1.0"
                    } else {
                        "1"
                    };
                    format!("    parameter {ty} {name} = {zero}")
                })
                .collect();
            format!("#(\n{}\n) ", list.join(",\n"))
        }
    };
    let list: Vec<String> = ports(kind)
        .iter()
        .map(|p| format!("    {} wire {}{}", p.dir, bit_range(p.bits), p.name))
        .collect();
    format!(
        "module {} {params}(\n{}\n);\n",
        module(kind),
        list.join(",\n")
    )
}

/// The PLL's black-box stub, for lint: inputs read, outputs tied low.
pub fn stub(board: &Board) -> String {
    let (kind, plan) = board_pll(board);
    // The black box takes the primitive's parameters without using them.
    let v = format!(
        "// Vendor PLL ({kind:?}): black box.\n/* verilator lint_off UNUSEDPARAM */\n(* blackbox *)\n{}\
         /* verilator lint_on UNUSEDPARAM */\n",
        header(kind, &plan)
    );
    v + &verilog::stub_body(ports(kind).iter().map(|p| (p.dir, p.bits, p.name)))
}

/// The PLL's simulation model: the vendor's module and port names around
/// `weft_board_pll_model`, set as the board's plan sets the real PLL
/// (the IOPLL variant's setting is inside it; the MMCM's comes from its
/// parameters, checked to be integers as the plan makes them).
pub fn sim_model(board: &Board) -> String {
    let (kind, plan) = board_pll(board);
    let mut v = format!(
        "// Simulation model of the board's PLL ({kind:?}).\n{}",
        header(kind, &plan)
    );
    let port_of = |role: PllRole| {
        ports(kind)
            .iter()
            .find(|p| p.role == role)
            .map(|p| p.name)
            .expect("every PLL has its refclk, reset, outputs and locked")
    };
    for p in ports(kind) {
        if p.dir == "output"
            && !matches!(
                p.role,
                PllRole::DataPlane | PllRole::SoftCore | PllRole::Locked
            )
        {
            let _ = writeln!(v, "    assign {} = {}'d0;", p.name, p.bits);
        }
    }
    let settings = match kind {
        PllKind::Iopll => format!(
            ".PRE_DIVIDE({}), .MULTIPLY({}), .OUT0_DIVIDE({}), .OUT1_DIVIDE({})",
            plan.pre_divide, plan.multiply, plan.data_plane_divide, plan.soft_core_divide
        ),
        PllKind::Mmcme4Adv => {
            let _ = writeln!(
                v,
                "    initial if (CLKFBOUT_MULT_F != $rtoi(CLKFBOUT_MULT_F) || CLKOUT0_DIVIDE_F != $rtoi(CLKOUT0_DIVIDE_F))\n        \
                 $display(\"ERROR: the MMCM model takes integer CLKFBOUT_MULT_F and CLKOUT0_DIVIDE_F only\");"
            );
            ".PRE_DIVIDE(DIVCLK_DIVIDE), .MULTIPLY($rtoi(CLKFBOUT_MULT_F)), \
             .OUT0_DIVIDE($rtoi(CLKOUT0_DIVIDE_F)), .OUT1_DIVIDE(CLKOUT1_DIVIDE)"
                .to_owned()
        }
    };
    let _ = writeln!(
        v,
        "    weft_board_pll_model #({settings}) model (\n        \
         .refclk({}), .rst({}), .out0({}), .out1({}), .locked({}));\nendmodule\n",
        port_of(PllRole::Refclk),
        port_of(PllRole::Reset),
        port_of(PllRole::DataPlane),
        port_of(PllRole::SoftCore),
        port_of(PllRole::Locked),
    );
    v
}

/// The IOPLL variant's settings, in words for the parameter editor.
pub fn iopll_settings(plan: &PllPlan) -> String {
    let mhz = |hz: u64| hz as f64 / 1e6;
    format!(
        "reference clock {} MHz; two output clocks, outclk_0 {} MHz and outclk_1 {} MHz, 0 degrees; locked output enabled",
        mhz(plan.refclk_hz),
        mhz(plan.data_plane_hz()),
        mhz(plan.soft_core_hz())
    )
}
