//! The board smoke simulation with the real switch: a host enumerates
//! `weft_chip` through the generated top level.
//!
//! The same generated wrapper, adapters and hard IP models as the loopback
//! smoke ([`crate::sim`]), around the emitted `weft_chip` (`cargo xtask
//! verilog`) with its SoC's memory files: the boot loader and the firmware
//! ELF as the bitstream carries them. The host-facing port's model is a
//! host ([`crate::sim`]'s tile model with `+weft_host_port=`): it sends its
//! configuration requests one at a time and writes down each completion,
//! retrying on Configuration Request Retry Status. Every other port's link
//! stays down, as connectors without cables: the firmware's enumeration
//! finds nothing behind them and its requests there end at once in
//! Unsupported Request. Verilator runs it; the 26 MB chip takes minutes to
//! build and runs at about ten thousand data plane cycles a second.
//!
//! Two things differ from the bitstream, both to fit the run in minutes:
//! - the console's serial line runs at [`CONSOLE_CYCLES_PER_BIT`] core
//!   clock cycles a bit, not 115 200 baud, so the firmware's boot text does
//!   not take tens of seconds of simulated time;
//! - the soft core's machine timer starts at [`START_TICKS`], 1 s after
//!   reset, not at 0: past every wait of the firmware's start (PCIe Base
//!   6.0 §6.6.1: 100 ms after the reset, and 100 ms after each link it
//!   sees come up, 1 s after the reset at the latest), so the fabric starts
//!   as soon as the firmware's main loop runs.
//!
//! [`for_simulation`] makes these changes to the emitted text, and no
//! other.
//!
//! The flash's data line reads 0, a part that holds no boot record, key or
//! image and takes no write: the boot loader starts the image the bitstream
//! carries and the firmware runs on its built-in settings.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::console;
use crate::generate;
use crate::model::Board;
use crate::sim::{
    self, build, passed, run_tool, RunConfig, SimError, SimTlp, BOARD_DONE, CLOCKS_CHECKED,
};
use crate::verilog;

/// Core clock cycles a bit of the simulated chip's console.
pub const CONSOLE_CYCLES_PER_BIT: u32 = 8;

/// The soft core's `mtime` 1 s after reset, by when the firmware's start
/// has waited for the links whatever they do (weft-fabric's
/// `LinkSettling`, PCIe Base 6.0 §6.6.1).
pub const START_TICKS: u32 = weft_regs::SOFT_CORE_CLOCK_HZ;

/// The emitted chip's file, under the run's directory.
const CHIP: &str = "sim/weft_chip_simulated.v";

/// What a host saw of the chip in one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostRun {
    /// The completion of each request, in order, retries left out.
    pub completions: Vec<SimTlp>,
    /// What the chip's console said.
    pub console: String,
    /// On a board whose console runs over JTAG, what reached the host
    /// through the wrapper's console module and the JTAG UART channel's
    /// model.
    pub jtag_console: Option<String>,
    /// Requests the host sent again after a Configuration Request Retry
    /// Status completion.
    pub retries: u32,
    /// Of them, those asked for before the firmware opened the host's port:
    /// the data plane's answers at a port not yet settled; `None` if the
    /// port never opened.
    pub retries_before_open: Option<u32>,
    /// Requests the host sent again after no completion came.
    pub timeouts: u32,
}

/// `weft_chip`'s Verilog as the run simulates it: its console at
/// [`CONSOLE_CYCLES_PER_BIT`] (the reload constants `last_count`, and the
/// receiver's `half_count`, of the modules `weft_chip$transmitter` and
/// `weft_chip$receiver`) and its machine timer starting at
/// [`START_TICKS`] (the value the SoC's reset gives `mtime`'s low
/// word in `weft_chip$soc$timer`); every other line as emitted. An error
/// if any of them is not where rust-hdl writes it.
pub fn for_simulation(chip: &str) -> Result<String, SimError> {
    let mut out = String::with_capacity(chip.len());
    let mut module = "";
    let mut rewritten = Vec::new();
    for line in chip.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("module ") {
            module = rest.split('(').next().unwrap_or("");
        }
        let text = line.trim_start();
        let constant = text
            .strip_prefix("localparam")
            .and_then(|rest| rest.split_whitespace().next());
        let replacement = match (module, constant) {
            ("weft_chip$transmitter" | "weft_chip$receiver", Some("last_count")) => Some(format!(
                "    localparam  last_count = 16'h{:x};\n",
                CONSOLE_CYCLES_PER_BIT - 1
            )),
            ("weft_chip$receiver", Some("half_count")) => Some(format!(
                "    localparam  half_count = 16'h{:x};\n",
                (CONSOLE_CYCLES_PER_BIT - 1) / 2
            )),
            ("weft_chip$soc$timer", None) if text.starts_with("mtime_low$d = 32'h0;") => {
                Some(format!("            mtime_low$d = 32'd{START_TICKS};\n"))
            }
            _ => None,
        };
        match replacement {
            Some(replacement) => {
                out.push_str(&replacement);
                rewritten.push(format!("{module}.{}", constant.unwrap_or("mtime_low")));
            }
            None => out.push_str(line),
        }
    }
    rewritten.sort();
    let expected = [
        "weft_chip$receiver.half_count",
        "weft_chip$receiver.last_count",
        "weft_chip$soc$timer.mtime_low",
        "weft_chip$transmitter.last_count",
    ];
    if rewritten != expected {
        return Err(SimError::Failed {
            report: format!(
                "weft_chip is not as rust-hdl emits it: rewrote {rewritten:?}, expected {expected:?}"
            ),
        });
    }
    Ok(out)
}

/// The port whose model is the host: the board's first host-facing port,
/// which must be the firmware's host port, port 0
/// (`softcore-fw/firmware/src/fabric.rs`, `HOST_PORTS`).
fn host_port(board: &Board) -> Result<usize, SimError> {
    match board.hard_ips.iter().position(|ip| ip.role.faces_host()) {
        Some(0) => Ok(0),
        other => Err(SimError::Failed {
            report: format!(
                "the firmware's host port is port 0; the board's first host-facing port is {other:?}"
            ),
        }),
    }
}

/// Every file of the host's run on `board`, with the chip and its memory
/// files read from `design_dir` (`target/verilog`).
pub fn files(board: &Board, design_dir: &Path) -> Result<Vec<generate::File>, SimError> {
    let read = |name: &str| {
        let path = design_dir.join(name);
        fs::read_to_string(&path).map_err(|error| SimError::Io { path, error })
    };
    let chip = for_simulation(&read(crate::project::CHIP_FILE)?)?;
    let mut files = vec![
        sim::file(generate::WRAPPER, verilog::wrapper(board)),
        sim::file(generate::ADAPTERS, verilog::support_modules()),
        sim::file(sim::MODELS, sim::hip_models(board)?),
        sim::file(CHIP, chip),
        sim::file(sim::TESTBENCH, testbench(board)?),
    ];
    let entries = fs::read_dir(design_dir).map_err(|error| SimError::Io {
        path: design_dir.to_owned(),
        error,
    })?;
    let mut memories: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("weft_chip_") && name.ends_with(".hex"))
        .collect();
    memories.sort();
    if memories.is_empty() {
        return Err(SimError::Io {
            path: design_dir.join(crate::project::CHIP_MEMORY_FILES),
            error: std::io::Error::new(std::io::ErrorKind::NotFound, "no memory files"),
        });
    }
    for name in memories {
        // $readmemh reads them from the simulation's working directory.
        files.push(sim::file(&format!("sim/{name}"), read(&name)?));
    }
    Ok(files)
}

/// The testbench: the board's clocks and resets around `weft_board_top`
/// with the flash reading 0; the console decoded into
/// `<+weft_out=>/console.txt`;
/// finishing once the host has every completion, when `weft_chip` must see
/// the host's link up and no other, and the firmware's main loop must
/// show the same on the LEDs (`softcore-fw/firmware/src/links.rs`).
fn testbench(board: &Board) -> Result<String, SimError> {
    let host = host_port(board)?;
    let mut v = sim::testbench_head(board, 0, CONSOLE_CYCLES_PER_BIT);
    let models = sim::model_paths(board);
    let done: Vec<String> = models.iter().map(|m| format!("{m}.done")).collect();
    let errors: Vec<String> = models.iter().map(|m| format!("{m}.errors")).collect();
    v += &sim::clock_checks();
    let _ = writeln!(
        v,
        "    // The console, 8N1 at {cpb} core clock cycles a bit.\n    \
         integer console;\n    reg [8*512-1:0] console_dir;\n    reg [8*600-1:0] console_name;\n    \
         reg [7:0] console_byte;\n    integer console_bit;\n    integer console_errors = 0;\n    \
         initial begin\n        \
         if (!$value$plusargs(\"weft_out=%s\", console_dir)) console_dir = \".\";\n        \
         $sformat(console_name, \"%0s/console.txt\", console_dir);\n        \
         console = $fopen(console_name, \"w\");\n        \
         wait (!dut.weft_core_rst);\n        \
         forever begin\n            \
         @(negedge dut.switch.uart_tx);\n            \
         repeat ({half}) @(posedge dut.weft_core_clk);\n            \
         for (console_bit = 0; console_bit < 8; console_bit = console_bit + 1) begin\n                \
         repeat ({cpb}) @(posedge dut.weft_core_clk);\n                \
         console_byte[console_bit] = dut.switch.uart_tx;\n            end\n            \
         repeat ({cpb}) @(posedge dut.weft_core_clk);\n            \
         if (dut.switch.uart_tx !== 1'b1) begin\n                \
         $display(\"ERROR: the console's stop bit is not 1\");\n                \
         console_errors = console_errors + 1;\n            end\n            \
         $fwrite(console, \"%c\", console_byte);\n            $fflush(console);\n        end\n    end\n    \
         initial begin\n        \
         if (!$value$plusargs(\"weft_timeout_ps=%d\", timeout_ps)) timeout_ps = 64'd20000000000;\n        \
         #(timeout_ps);\n        \
         $display(\"ERROR: timeout: the host did not get every completion\");\n        $finish;\n    end\n    \
         // Where the soft core is, every 100 000 of its cycles.\n    \
         reg [31:0] last_pc = 0;\n    \
         always @(posedge dut.weft_core_clk) if (dut.switch.soc.core$retire$valid) last_pc <= dut.switch.soc.core$retire$pc;\n    \
         initial begin\n        \
         wait (!dut.weft_core_rst);\n        \
         forever begin\n            repeat (100000) @(posedge dut.weft_core_clk);\n            \
         $display(\"tb: %0t ps: pc %h, mtime %0d, leds %b, links %b, host %0d sent %0d answered\", $time, last_pc,\n                \
         dut.switch.soc.timer.mtime_low$q, dut.switch.led, dut.switch.link_up, {host_model}.requests_sent, {host_model}.received);\n            \
         $fflush;\n        end\n    end\n    \
         // The host asks from the start, as one whose link trained long before\n    \
         // the switch's firmware started the fabric: the retries it was asked\n    \
         // for until the firmware opened its port were the data plane's.\n    \
         integer retries_before_open = -1;\n    \
         initial begin\n        wait (dut.switch.data_plane.enabled$bits${host});\n        \
         retries_before_open = {host_model}.retries;\n    end\n    \
         initial begin\n        #200000;\n        {release}\n        wait ({done});\n        \
         repeat (1000) @(posedge dut.weft_core_clk);\n        \
         if (dut.switch.link_up !== {ports}'b{up:0ports$b})\n            \
         $display(\"ERROR: weft_chip's link_up %b, not the host's link alone\", dut.switch.link_up);\n        \
         if (dut.switch.led !== {leds}'b{up:0leds$b})\n            \
         $display(\"ERROR: weft_chip's LEDs %b, not the host's link alone\", dut.switch.led);\n        \
         $display(\"weft-board-tb: host: %0d retries, %0d before its port opened, %0d timeouts\",\n                 \
         {host_model}.retries, retries_before_open, {host_model}.timeouts);\n        \
         $display(\"weft-board-tb: done, %0d errors\", {errors} + console_errors);\n        $finish;\n    end\n\
         endmodule\n`default_nettype wire",
        cpb = CONSOLE_CYCLES_PER_BIT,
        half = CONSOLE_CYCLES_PER_BIT / 2,
        release = sim::reset_release(board),
        done = done.join(" && "),
        errors = errors.join(" + "),
        ports = crate::validate::SWITCH_PORTS,
        leds = verilog::SWITCH_LEDS,
        up = 1u32 << host,
        host_model = models[host],
    );
    Ok(v)
}

/// Flags of the Verilator build: a binary with timing, warnings that
/// rust-hdl's output and the models raise by the thousand not fatal.
const VERILATOR_BUILD: &[&str] = &[
    "--binary",
    "--timing",
    "--timescale",
    "1ps/1ps",
    "-Wno-fatal",
    "-Wno-lint",
    "-Wno-style",
    "-Wno-BLKANDNBLK",
    "-Wno-MULTIDRIVEN",
    "--top-module",
    "weft_board_tb",
    "-MAKEFLAGS",
    "OPT_FAST=-O1",
];

/// Runs the host's enumeration of `board`'s chip in `dir` with `files`
/// (as [`files`] makes them or changed): builds them with Verilator, then
/// the host port's model sends `requests` one at a time. Returns the
/// completions in order and the console's text.
pub fn run(
    board: &Board,
    dir: &Path,
    files: &[generate::File],
    requests: &[SimTlp],
    config: RunConfig,
) -> Result<HostRun, SimError> {
    let host = host_port(board)?;
    let run = sim::prepare_board_run(board, dir, files, requests, config)?;
    let sim_dir = dir.join("sim");
    let obj = sim_dir.join("obj");
    let verilator = Path::new("verilator");
    build(
        Command::new(verilator)
            .args(VERILATOR_BUILD)
            .arg("-j")
            .arg(
                std::thread::available_parallelism()
                    .map_or(1, |n| n.get())
                    .to_string(),
            )
            .arg("--Mdir")
            .arg(&obj)
            .args(&run.sources),
        verilator,
    )?;
    let links_down = ((1u32 << board.hard_ips.len()) - 1) & !(1 << host);
    // The report goes to a file, where a long run can be followed.
    let report_path = run.out_dir.join("report.txt");
    let report_file = fs::File::create(&report_path).map_err(|error| SimError::Io {
        path: report_path.clone(),
        error,
    })?;
    let binary = obj.join("Vweft_board_tb");
    let jtag_console_path = run.out_dir.join("jtag_console.txt");
    let mut command = Command::new(&binary);
    command
        .current_dir(&sim_dir)
        .stdout(report_file)
        .args(&run.args)
        .arg(format!("+weft_host_port={host}"))
        .arg(format!("+weft_links_down={links_down:x}"));
    if board.console_over_jtag() {
        command.arg(format!(
            "+{}={}",
            console::MODEL_OUTPUT_PLUSARG,
            jtag_console_path.display()
        ));
    }
    let sim = run_tool(&mut command, &binary)?;
    let stdout = fs::read(&report_path).map_err(|error| SimError::Io {
        path: report_path,
        error,
    })?;
    let text = |path: &Path| {
        fs::read(path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    };
    let console = text(&run.out_dir.join("console.txt"));
    let jtag_console = board.console_over_jtag().then(|| text(&jtag_console_path));
    let report = format!(
        "{}{}\nconsole:\n{console}",
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&sim.stderr)
    );
    let report = passed(sim.status.success(), report, &[CLOCKS_CHECKED, BOARD_DONE])?;
    let (retries, retries_before_open, timeouts) = report
        .lines()
        .find_map(|line| {
            let counts = line.strip_prefix("weft-board-tb: host: ")?;
            let (retries, rest) = counts.split_once(" retries, ")?;
            let (before_open, timeouts) = rest.split_once(" before its port opened, ")?;
            Some((
                retries.parse().ok()?,
                before_open.parse::<i64>().ok()?,
                timeouts.strip_suffix(" timeouts")?.parse().ok()?,
            ))
        })
        .ok_or_else(|| SimError::Failed {
            report: format!("no count of the host's retries in the report:\n{report}"),
        })?;
    Ok(HostRun {
        completions: sim::received(&run.out_dir.join(format!("port{host}.hex")))?,
        console,
        jtag_console,
        retries,
        retries_before_open: u32::try_from(retries_before_open).ok(),
        timeouts,
    })
}
