//! The UltraScale+ shims (`src/axis.v`) against PG213: descriptors, payload
//! placement, tkeep, tlast and the tuser sideband of every stream, checked
//! by `src/axis_tb.v` from PG213's tables; and a root port's hot reset,
//! retrain and non-posted credit (`src/link.v`, `src/credit.v`) against a
//! model of the block written from PG213 (`src/pcie4_tb.v`).

mod common;

use std::path::PathBuf;

use common::{change, noticed, ran};
use weft_boards::generate::File;
use weft_boards::sim;

fn scratch(name: &str) -> PathBuf {
    common::scratch("axis", name)
}

/// The shim files with `from` replaced by `to` in `axis.v`.
fn mutated(from: &str, to: &str) -> Vec<File> {
    let mut files = sim::axis_files();
    change(&mut files, "sim/weft_axis.v", from, to);
    files
}

#[test]
fn the_ultrascale_shims_carry_descriptors_and_tuser_as_pg213_lays_them_out() {
    if !ran(sim::run_axis(&scratch("whole"), &sim::axis_files())) {
        return;
    }
    // Each mapping, taken away, is noticed: the 512-bit CC and RQ
    // sideband (end pointer, start flag, byte enables, discontinue), the
    // narrower RQ's discontinue, the CQ's start flag and byte enables, the
    // CC descriptor's completer ID, the tkeep of a last beat, and the drop
    // of a CQ request weft has no header for.
    let mutations = [
        (
            "assign tuser[11:8] = eop_ptr;",
            "assign tuser[11:8] = 4'd0;",
            "tx R0 D512",
        ),
        (
            "assign tuser[1:0] = {1'b0, out_sop};",
            "assign tuser[1:0] = 2'b00;",
            "tx R0 D512",
        ),
        (
            "assign tuser[16] = out_void;",
            "assign tuser[16] = 1'b0;",
            "tx R0 D512",
        ),
        (
            "assign tuser[21:20] = {1'b0, out_sop};",
            "assign tuser[21:20] = 2'b00;",
            "tx R1 D512",
        ),
        (
            "assign tuser[31:28] = eop_ptr;",
            "assign tuser[31:28] = 4'd0;",
            "tx R1 D512",
        ),
        (
            "assign tuser[3:0] = out_sop ? first_be : 4'd0;   // first_be[3:0]",
            "assign tuser[3:0] = 4'd0;",
            "tx R1 D512",
        ),
        (
            "assign tuser[36] = out_void;",
            "assign tuser[36] = 1'b0;",
            "tx R1 D512",
        ),
        (
            "assign tuser[11] = out_void;",
            "assign tuser[11] = 1'b0;",
            "tx R1 D256",
        ),
        (
            "assign in_sop = tuser[80];",
            "assign in_sop = 1'b0;",
            "rx R0",
        ),
        ("head[71:68] = in_last_be;", "head[71:68] = 4'd0;", "rx R0"),
        ("desc[88] = 1'b1;", "desc[88] = 1'b0;", "tx R0 D512"),
        (
            "assign tkeep[i] = i < out_dws;",
            "assign tkeep[i] = 1'b1;",
            "tkeep",
        ),
        ("h_drop <= !head_ok;", "h_drop <= 1'b0;", "without a header"),
    ];
    for (i, (from, to, expected)) in mutations.iter().enumerate() {
        noticed(
            sim::run_axis(&scratch(&format!("mutant{i}")), &mutated(from, to)),
            to,
            expected,
        );
    }
}

#[test]
fn an_ultrascale_root_port_takes_hot_resets_retrains_and_non_posted_credit_as_pg213_says() {
    if !ran(sim::run_pcie4(&scratch("pcie4"), &sim::pcie4_files())) {
        return;
    }
    // cfg_hot_reset_in released at once, a Link Control write of all four
    // bytes, and a non-posted limit that forgets the requests already sent
    // (weft then waits for credit forever) are each noticed.
    for (file, from, to) in [
        (
            "sim/weft_link.v",
            "RESETTING: if (!link_up) begin",
            "RESETTING: if (1'b1) begin",
        ),
        (
            "sim/weft_link.v",
            "cfg_mgmt_byte_enable <= 4'b0001;",
            "cfg_mgmt_byte_enable <= 4'b1111;",
        ),
        (
            "sim/weft_credit.v",
            "sent_h[2] + {12'd0, nph_av}",
            "{12'd0, nph_av}",
        ),
    ] {
        let mut files = sim::pcie4_files();
        change(&mut files, file, from, to);
        noticed(
            sim::run_pcie4(&scratch("pcie4-broken"), &files),
            to,
            "ERROR",
        );
    }
}
