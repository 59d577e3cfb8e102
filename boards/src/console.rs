//! weft's console over the FPGA's JTAG port, for an Intel board whose UART
//! reaches no FPGA pin.
//!
//! `weft_chip` speaks 8N1 at 115 200 baud on `uart_tx` and listens on
//! `uart_rx` ([`weft_regs::CONSOLE_CYCLES_PER_BIT`] core clock cycles a
//! bit). On a board file whose `[uart]` says `link = "jtag"`, the wrapper
//! puts that line on Intel's JTAG UART channel, `alt_jtag_atlantic`, the
//! Quartus library block the JTAG UART core is built on (Embedded
//! Peripherals IP User Guide 683130, "JTAG UART Core"), through
//! `jtag_console.v`; the engineer reads and types with `juart-terminal`
//! over the board's download cable. The channel needs no IP variant and no
//! pin.
//!
//! The simulations use `jtag_atlantic_model.v` for the channel: the
//! console module's own testbench, and the board runs, where the host's
//! run writes what reached the host to a file.

use crate::verilog::{self, Port};

/// The console module the wrapper instantiates.
pub const MODULE: &str = "weft_board_jtag_console";

/// The parameter of `weft_board_top` that sets the console's bit time in
/// core clock cycles: [`weft_regs::CONSOLE_CYCLES_PER_BIT`] on the board,
/// fewer where a simulation runs the chip's serial line faster.
pub const CYCLES_PARAMETER: &str = "CONSOLE_CYCLES_PER_BIT";

/// The plusarg of the channel's model that names the file it writes what
/// reached the host to.
pub const MODEL_OUTPUT_PLUSARG: &str = "weft_jtag_console";

/// The console module's Verilog (`jtag_console.v`).
pub fn module() -> &'static str {
    include_str!("jtag_console.v")
}

/// The channel's simulation model (`jtag_atlantic_model.v`).
pub fn model() -> &'static str {
    include_str!("jtag_atlantic_model.v")
}

/// `weft_board_top`'s parameter list: the console's bit time.
pub fn top_parameters() -> String {
    format!(
        "#(\n    // Core clock cycles a bit of weft_chip's console line.\n    \
         parameter integer {CYCLES_PARAMETER} = {}\n) ",
        weft_regs::CONSOLE_CYCLES_PER_BIT
    )
}

/// The wrapper's console: the chip's serial line on the JTAG channel.
pub fn instance() -> String {
    format!(
        "    // The console over JTAG: juart-terminal on the host reads and types.\n    \
         wire switch_uart_rx;\n    \
         {MODULE} #(.CYCLES_PER_BIT({CYCLES_PARAMETER})) console (\n        \
         .clk(weft_core_clk),\n        .rst(weft_core_rst),\n        \
         .from_chip(switch_uart_tx),\n        .to_chip(switch_uart_rx)\n    );"
    )
}

/// The channel as a black box for lint: the parameters it takes unused,
/// inputs read, outputs tied low.
pub fn stub() -> String {
    let ports = [
        Port::new("input", 1, "clk"),
        Port::new("input", 1, "rst_n"),
        Port::new("input", 8, "r_dat"),
        Port::new("input", 1, "r_val"),
        Port::new("output", 1, "r_ena"),
        Port::new("output", 8, "t_dat"),
        Port::new("output", 1, "t_ena"),
        Port::new("input", 1, "t_dav"),
        Port::new("output", 1, "t_pause"),
    ];
    verilog::parameterized_stub(
        "alt_jtag_atlantic",
        &[
            ("INSTANCE_ID", "0"),
            ("LOG2_RXFIFO_DEPTH", "6"),
            ("LOG2_TXFIFO_DEPTH", "6"),
            ("SLD_AUTO_INSTANCE_INDEX", "\"YES\""),
        ],
        &ports,
        "Vendor library block (alt_jtag_atlantic, the JTAG UART channel): black box.",
    )
}
