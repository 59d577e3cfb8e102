//! The console over JTAG (`src/jtag_console.v`) against the model of Intel's
//! JTAG UART channel (`src/jtag_atlantic_model.v`): 8N1 frames from the
//! chip reach the host in order, bytes the host types reach the chip as
//! exact 8N1 frames, and a console nobody reads drops bytes instead of
//! holding up the chip (`src/jtag_console_tb.v`). And where the wrapper
//! puts it: on an Intel board whose `[uart]` says `link = "jtag"`, with no
//! UART pins; refused on an AMD board.

mod common;

use std::path::PathBuf;

use common::{change, noticed, ran};
use weft_boards::generate::File;
use weft_boards::model::UartLink;
use weft_boards::sim;
use weft_boards::validate::{self, Invalid};
use weft_boards::{constraints, load, verilog};

fn scratch(name: &str) -> PathBuf {
    common::scratch("console", name)
}

/// The console's files with `from` replaced by `to` in the console module.
fn mutated(from: &str, to: &str) -> Vec<File> {
    let mut files = sim::jtag_console_files();
    change(&mut files, "sim/weft_jtag_console.v", from, to);
    files
}

#[test]
fn the_jtag_console_carries_every_byte_both_ways_and_never_holds_up_the_chip() {
    if !ran(sim::run_jtag_console(
        &scratch("whole"),
        &sim::jtag_console_files(),
    )) {
        return;
    }
    // Each part, taken away, is noticed: the stop bit's check, the frame's
    // data bits in order, the room offered to the host's bytes, and the
    // holding register's wait for the channel.
    let mutations = [
        (
            "if (from_chip && (!held_valid || channel_take)) begin",
            "if (!held_valid || channel_take) begin",
            "the chip sent",
        ),
        (
            "tx_shift <= {1'b1, pending, 1'b0};",
            "tx_shift <= {1'b1, pending[0], pending[7:1], 1'b0};",
            "typed byte",
        ),
        (".t_dav(!pending_valid)", ".t_dav(1'b1)", "typed"),
        (
            ".r_val(channel_take)",
            ".r_val(held_valid)",
            "r_val while r_ena is low",
        ),
    ];
    for (i, (from, to, expected)) in mutations.iter().enumerate() {
        noticed(
            sim::run_jtag_console(&scratch(&format!("mutant{i}")), &mutated(from, to)),
            to,
            expected,
        );
    }
}

#[test]
fn a_board_whose_console_runs_over_jtag_has_no_uart_pins() {
    let board = load::by_name("stratix10-dx-devkit").expect("the reference board loads");
    assert_eq!(board.uart.as_ref().map(|u| u.link), Some(UartLink::Jtag));
    let top = verilog::wrapper(&board);
    let header = &top[top.find("module weft_board_top").expect("the top")..];
    let header = &header[..header.find(");").expect("its port list ends")];
    for port in ["uart_tx", "uart_rx"] {
        assert!(!header.contains(port), "{port} on the top: {header}");
        assert!(!constraints::quartus_pins(&board).contains(port));
    }
    assert!(
        top.contains("weft_board_jtag_console #(.CYCLES_PER_BIT(CONSOLE_CYCLES_PER_BIT)) console")
    );
    assert!(top.contains(&format!(
        "parameter integer CONSOLE_CYCLES_PER_BIT = {}",
        weft_regs::CONSOLE_CYCLES_PER_BIT
    )));
    assert!(top.contains(".uart_rx(switch_uart_rx)"));
    // Its channel's clock, the JTAG port's TCK, is constrained at the
    // download cable's 24 MHz and timed apart from every other clock.
    let sdc = constraints::quartus_sdc(&board);
    assert!(
        sdc.contains("create_clock -name altera_reserved_tck -period 41.667"),
        "{sdc}"
    );
    assert!(
        sdc.contains("-group [get_clocks {altera_reserved_tck}]"),
        "{sdc}"
    );
    let without = load::by_name("vcu118").expect("loads");
    assert!(!constraints::quartus_sdc(&without).contains("altera_reserved_tck"));
}

#[test]
fn a_console_over_jtag_is_refused_on_an_amd_board_and_with_pins() {
    let mut board = load::by_name("vcu118").expect("the VCU118 loads");
    let uart = board.uart.as_mut().expect("the VCU118 has a UART");
    uart.link = UartLink::Jtag;
    let problems = validate::check(&board);
    let fields: Vec<&str> = problems
        .iter()
        .filter_map(|p| match p {
            Invalid::UartUnsupported { field, .. } => Some(field.as_str()),
            _ => None,
        })
        .collect();
    // Intel's channel only, and the VCU118's pins and standard left in.
    assert_eq!(
        fields,
        ["uart.link", "uart.tx", "uart.rx", "uart.io_standard"],
        "{problems:?}"
    );
}
