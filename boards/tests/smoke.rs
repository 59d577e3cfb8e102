//! The board smoke simulation: TLPs built by weft-pcie go from each hard
//! IP's model through the generated adapters into weft's clock, round a
//! loopback, and back out to the same model unchanged, in order, under
//! backpressure on both sides and with the two clocks at different rates.

mod common;

use std::path::{Path, PathBuf};

use common::{change, noticed, ran};
use weft_boards::clocking;
use weft_boards::sim::{self, CreditCase, RunConfig, SimError, SimTlp};
use weft_boards::{load, Board};
use weft_pcie::tlp::{
    AddressType, Attributes, Body, Completion, CompletionStatus, ConfigRequest, ConfigType,
    Direction, Header, MemoryOp, MemoryRequest, Tag, TrafficClass,
};
use weft_pcie::Bdf;

/// The hard IP's application clock faster than weft's (500 vs 100 MHz).
const HIP_FASTER: RunConfig = RunConfig {
    hip_half_ps: 1000,
    weft_half_ps: 5000,
    seed: 1,
};

/// weft's clock faster than the hard IP's (about 333 vs 125 MHz).
const WEFT_FASTER: RunConfig = RunConfig {
    hip_half_ps: 4000,
    weft_half_ps: 1500,
    seed: 2,
};

/// A scratch directory of this test's own, emptied first.
fn scratch(name: &str) -> PathBuf {
    common::scratch("smoke", name)
}

fn header(body: Body) -> Header {
    Header {
        digest_present: false,
        poisoned: false,
        body,
    }
}

fn config_read() -> Header {
    header(Body::Config(ConfigRequest {
        direction: Direction::Read,
        config_type: ConfigType::Type0,
        requester: Bdf::new(0, 0, 0),
        tag: Tag::new(3).expect("tag"),
        target: Bdf::new(1, 0, 0),
        register_number: 0,
        extended_register_number: 0,
        first_be: 0xf,
    }))
}

fn memory(op: MemoryOp, address: u64, length_dw: u16, tag: u16) -> Header {
    header(Body::Memory(MemoryRequest {
        op,
        traffic_class: TrafficClass::default(),
        attributes: Attributes::default(),
        address_type: AddressType::Untranslated,
        requester: Bdf::new(0, 0, 0),
        tag: Tag::new(tag).expect("tag"),
        address,
        length_dw,
        first_be: 0xf,
        last_be: if length_dw == 1 { 0 } else { 0xf },
        processing_hint: None,
    }))
}

fn completion(data_dw: u16) -> Header {
    header(Body::Completion(Completion {
        locked: false,
        traffic_class: TrafficClass::default(),
        attributes: Attributes::default(),
        completer: Bdf::new(1, 0, 0),
        status: CompletionStatus::Successful,
        byte_count_modified: false,
        byte_count: data_dw * 4,
        requester: Bdf::new(0, 0, 0),
        tag: Tag::new(3).expect("tag"),
        lower_address: 0,
        data_dw: Some(data_dw),
    }))
}

/// Rounds of [`traffic`]: enough beats to fill the 64-beat RX FIFO many
/// times over when weft drains it slower than the hard IP fills it.
const ROUNDS: usize = 6;

/// A configuration read, memory writes whose payloads end in every place
/// of a 2x256-bit bus (1 to 40 DWs, 64-bit addresses too), a memory read
/// and completions with data, in [`ROUNDS`] rounds, each payload DW distinct.
fn traffic() -> Vec<(Header, Vec<u32>)> {
    let mut headers = Vec::new();
    for _ in 0..ROUNDS {
        headers.push(config_read());
        headers.push(completion(1));
        for (i, length) in [1u16, 2, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 40]
            .iter()
            .enumerate()
        {
            let base = if i % 3 == 2 { 0x1_0000_0000 } else { 0x1000 };
            headers.push(memory(
                MemoryOp::Write,
                base + u64::from(*length) * 0x40,
                *length,
                0,
            ));
        }
        headers.push(memory(MemoryOp::Read, 0x2_0000_0000, 16, 9));
        headers.push(completion(16));
    }
    headers
        .into_iter()
        .enumerate()
        .map(|(n, h)| {
            let dws = match h.body {
                Body::Memory(m) if m.op == MemoryOp::Write => m.length_dw,
                Body::Completion(c) => c.data_dw.unwrap_or(0),
                _ => 0,
            };
            let payload = (0..u32::from(dws))
                .map(|i| 0xd000_0000 | ((n as u32) << 12) | i)
                .collect();
            (h, payload)
        })
        .collect()
}

fn sim_tlps(traffic: &[(Header, Vec<u32>)]) -> Vec<SimTlp> {
    traffic
        .iter()
        .map(|(h, payload)| SimTlp {
            header: h.encode_dws().expect("header encodes"),
            payload: payload.clone(),
        })
        .collect()
}

/// Runs the board, or says why it cannot here.
fn run(board: &Board, dir: &Path, config: RunConfig) -> Option<Vec<Vec<SimTlp>>> {
    match sim::run(board, dir, &sim_tlps(&traffic()), config) {
        Ok(got) => Some(got),
        Err(SimError::NoSimulator) => {
            eprintln!("skipped: iverilog is not installed (`cargo xtask setup` installs it)");
            None
        }
        Err(err) => panic!("{}: {err}", board.board.name),
    }
}

fn assert_round_trip(board: &Board, got: &[Vec<SimTlp>]) {
    let sent = traffic();
    assert_eq!(got.len(), board.hard_ips.len());
    for (port, tlps) in got.iter().enumerate() {
        let name = &board.hard_ips[port].name;
        assert_eq!(tlps.len(), sent.len(), "{name}: TLPs lost or added");
        for (i, (tlp, (h, payload))) in tlps.iter().zip(&sent).enumerate() {
            let decoded = Header::decode_dws(&tlp.header)
                .unwrap_or_else(|e| panic!("{name} TLP {i}: header does not decode: {e:?}"));
            assert_eq!(&decoded, h, "{name} TLP {i}: header changed or reordered");
            assert_eq!(&tlp.payload, payload, "{name} TLP {i}: payload changed");
        }
    }
}

#[test]
fn stratix10_dx_tlps_cross_both_ways_with_the_hard_ip_clock_faster() {
    let board = load::by_name("stratix10-dx-devkit").expect("reference board loads");
    if let Some(got) = run(&board, &scratch("s10-hip-faster"), HIP_FASTER) {
        assert_round_trip(&board, &got);
    }
}

#[test]
fn stratix10_dx_tlps_cross_both_ways_with_weft_clock_faster() {
    let board = load::by_name("stratix10-dx-devkit").expect("reference board loads");
    if let Some(got) = run(&board, &scratch("s10-weft-faster"), WEFT_FASTER) {
        assert_round_trip(&board, &got);
    }
}

/// The smoke run of `board` with one adapter parameter changed in the
/// generated files; `None` where iverilog is missing.
fn run_changed(board: &Board, name: &str, from: &str, to: &str, config: RunConfig) -> Option<bool> {
    run_changes(board, name, &[(from, to)], config)
}

/// The smoke run of `board` with each `(from, to)` of `changes` made in
/// the generated files; `None` where iverilog is missing.
fn run_changes(
    board: &Board,
    name: &str,
    changes: &[(&str, &str)],
    config: RunConfig,
) -> Option<bool> {
    let mut files = sim::files(board).expect("files");
    for (from, to) in changes {
        let mut changed = false;
        for f in &mut files {
            if f.text.contains(from) {
                f.text = f.text.replace(from, to);
                changed = true;
            }
        }
        assert!(changed, "{from} is not in the generated files");
    }
    match sim::run_files(board, &scratch(name), &files, &sim_tlps(&traffic()), config) {
        Err(SimError::NoSimulator) => {
            eprintln!("skipped: iverilog is not installed (`cargo xtask setup` installs it)");
            None
        }
        Err(SimError::Failed { .. }) => Some(false),
        Err(other) => panic!("{other}"),
        Ok(got) => {
            let sent = sim_tlps(&traffic());
            Some(got.iter().all(|port| *port == sent))
        }
    }
}

#[test]
fn the_models_catch_broken_adapters() {
    let board = load::by_name("stratix10-dx-devkit").expect("reference board loads");
    for (name, from, to, config, broken) in [
        (
            "latency",
            ".READY_LATENCY(3)",
            ".READY_LATENCY(0)",
            WEFT_FASTER,
            "TX beats outside ready cycles",
        ),
        (
            "gaps",
            ".PACKET(1)",
            ".PACKET(0)",
            HIP_FASTER,
            "TX gaps inside TLPs",
        ),
        (
            "headroom",
            ".HEADROOM(28)",
            ".HEADROOM(0)",
            HIP_FASTER,
            "RX beats lost to the ready latency",
        ),
    ] {
        let passed = run_changed(&board, name, from, to, config);
        assert_ne!(passed, Some(true), "{broken} went unnoticed");
    }
}

#[test]
fn the_models_catch_broken_hot_reset_and_retrain_requests() {
    // Every smoke run sends each port three hot resets and three retrains
    // from weft's clock, and each downstream port's model counts them in
    // its reconfiguration clock. Each break below is noticed.
    let board = load::by_name("stratix10-dx-devkit").expect("reference board loads");
    for (name, changes, broken) in [
        (
            "two-flop",
            &[
                (
                    "always @(posedge src_clk) if (src_pulse) toggle <= !toggle;",
                    "always @(posedge src_clk) toggle <= src_pulse;",
                ),
                (
                    "assign dst_pulse = seen[2] != seen[1];",
                    "assign dst_pulse = seen[1];",
                ),
            ][..],
            "a pulse through a plain two-flop synchronizer",
        ),
        (
            "no-hold",
            &[("count <= HOLD;", "count <= 0;")][..],
            "Secondary Bus Reset released at once",
        ),
        (
            "no-read-modify-write",
            &[(
                "writedata <= readdata | bit_mask;",
                "writedata <= bit_mask;",
            )][..],
            "a write that clears the register's other bits",
        ),
    ] {
        let passed = run_changes(&board, name, changes, HIP_FASTER);
        assert_ne!(passed, Some(true), "{broken} went unnoticed");
    }
}

#[test]
fn the_models_catch_tlps_sent_beyond_the_link_partners_credit() {
    // The tile models give little posted and non-posted credit and take
    // it back slowly; every smoke run fails on a TLP taken beyond it.
    // Credit that ignores what weft consumed is noticed on both tiles.
    for (board, config) in [
        (
            load::by_name("stratix10-dx-devkit").expect("reference board loads"),
            HIP_FASTER,
        ),
        (
            load::by_name("agilex7-i-series-devkit").expect("Agilex board loads"),
            WEFT_FASTER,
        ),
    ] {
        let mut board = board;
        let host = &mut board.hard_ips[0];
        host.lanes = 8;
        host.data_bits = 512;
        host.segments = 2;
        let passed = run_changed(
            &board,
            &format!("{}-credit-ignored", board.board.name),
            "assign credit[c] = !rst && (!up || (started && counted && header && data));",
            "assign credit[c] = !rst;",
            config,
        );
        assert_ne!(
            passed,
            Some(true),
            "{}: credit held high went unnoticed",
            board.board.name
        );
    }
}

#[test]
fn a_posted_write_passes_a_request_waiting_for_credit() {
    if !ran(sim::run_credit(
        &scratch("credit"),
        &sim::credit_files(),
        CreditCase::Reference,
    )) {
        return;
    }
    // Credit that ignores the counts, or counts nothing weft consumed,
    // lets the waiting request go ahead of the writes and beyond the
    // partner's credit.
    for (broken, from, to) in [
        (
            "credit held high",
            "assign credit[c] = !rst && (!up || (started && counted && header && data));",
            "assign credit[c] = !rst;",
        ),
        (
            "consumption not counted",
            "consumed[i] <= consumed[i] + {15'd0, consume[i]}",
            "consumed[i] <= consumed[i]",
        ),
    ] {
        let mut files = sim::credit_files();
        change(&mut files, "sim/weft_credit.v", from, to);
        noticed(
            sim::run_credit(&scratch("credit-broken"), &files, CreditCase::Reference),
            broken,
            "ERROR",
        );
    }
}

#[test]
fn a_partner_advertising_less_than_a_slot_of_posted_data_still_gets_posted_writes() {
    // §2.6.1: a receiver with a 256-byte Max_Payload_Size may advertise
    // just 16 posted data credits; weft, which may send TLPs of up to 1 KiB,
    // must not wait for 64 that never come.
    match sim::run_credit(
        &scratch("credit-small"),
        &sim::credit_files(),
        CreditCase::SmallPartner,
    ) {
        Ok(()) | Err(SimError::NoSimulator) => {}
        Err(err) => panic!("{err}"),
    }
    // Waiting for the largest TLP's credit whatever the partner advertised
    // stops its posted writes for good.
    let mut files = sim::credit_files();
    let (from, to) = (
        "|| available(limit[16*(c + 3) +: 16], consumed[c + 3]) >= needed;",
        "|| available(limit[16*(c + 3) +: 16], consumed[c + 3]) >= max_data[c];",
    );
    change(&mut files, "sim/weft_credit.v", from, to);
    match sim::run_credit(
        &scratch("credit-small-broken"),
        &files,
        CreditCase::SmallPartner,
    ) {
        Err(SimError::Failed { report }) => assert!(report.contains("timeout"), "{report}"),
        Err(SimError::NoSimulator) => {}
        other => panic!("waiting for 64 credits went unnoticed: {other:?}"),
    }
}

/// Runs the credit bench's `case`, which must pass, then again with
/// `credit.v`'s text `from` made `to` (taking away the refund the case
/// needs), which must fail: the partner's credits are used up for good.
fn credit_comes_back_in(case: CreditCase, name: &str, (from, to): (&str, &str)) {
    match sim::run_credit(&scratch(name), &sim::credit_files(), case) {
        Ok(()) => {}
        Err(SimError::NoSimulator) => return,
        Err(err) => panic!("{err}"),
    }
    let mut files = sim::credit_files();
    change(&mut files, "sim/weft_credit.v", from, to);
    match sim::run_credit(&scratch(&format!("{name}-broken")), &files, case) {
        Err(SimError::Failed { report }) => assert!(report.contains("ERROR"), "{report}"),
        other => panic!("{case:?}: the credit kept went unnoticed: {other:?}"),
    }
}

#[test]
fn a_void_tlps_credit_comes_back_as_the_partner_never_returns_it() {
    // A nullified TLP is discarded by the partner's receiver, which counts
    // credit only for the valid TLPs it receives (§2.6.1.2, §3.6.2.1): the
    // credit weft counted for it must be given back at weft's end. Without
    // the refund two void writes use up the partner's two posted header
    // credits for good: the writes after them wait until the non-posted
    // request passes them, or forever.
    credit_comes_back_in(
        CreditCase::VoidWrites,
        "credit-void",
        ("parameter REFUND_VOID = 1", "parameter REFUND_VOID = 0"),
    );
}

#[test]
fn a_discarded_tlps_credit_comes_back_as_weft_gives_it_back() {
    // A TLP weft's egress committed and then discarded never reaches the
    // partner, which returns credit only for what it receives (§2.6.1.2):
    // the credit must come back on `refund`. Without it, two discarded
    // writes use up the partner's two posted header credits for good.
    credit_comes_back_in(
        CreditCase::DiscardedWrites,
        "credit-discarded",
        (" - {15'd0, refund[i]}", ""),
    );
}

#[test]
fn a_link_that_goes_down_neither_holds_weft_nor_gets_what_was_sent_for_it() {
    // PCIe Base 6.0 §2.9.1: a Port discards what it is given to send while
    // its link is DL_Down; flow control starts again with the link
    // (§2.6.1.1), so nothing counted before may reach the new partner.
    // An outage meets the TLPs in flight differently with each seed of the
    // partner's stalls; a broken gate shows with some seeds only.
    const SEEDS: std::ops::RangeInclusive<u32> = 1..=6;
    for seed in SEEDS {
        match sim::run_link_down(&scratch("link-down"), &sim::link_down_files(), seed) {
            Ok(()) => {}
            Err(SimError::NoSimulator) => {
                eprintln!("skipped: iverilog is not installed (`cargo xtask setup` installs it)");
                return;
            }
            Err(err) => panic!("seed {seed}: {err}"),
        }
    }
    for (broken, file, from, to) in [
        (
            "waiting for credit on a downed link",
            "sim/weft_credit.v",
            "assign credit[c] = !rst && (!up || (started && counted && header && data));",
            "assign credit[c] = !rst && up && started && counted && header && data;",
        ),
        (
            "a gate that ignores the tags",
            "sim/weft_credit.v",
            "mid_tlp ? passing : in_counted && in_epoch == epoch && up && was_up;",
            "mid_tlp ? passing : up;",
        ),
        (
            "a gate that ignores flow control's restarts",
            "sim/weft_credit.v",
            "mid_tlp ? passing : in_counted && in_epoch == epoch && up && was_up;",
            "mid_tlp ? passing : in_counted && up && was_up;",
        ),
        (
            "a gate that takes the old start's tags in the cycle flow control starts",
            "sim/weft_credit.v",
            "mid_tlp ? passing : in_counted && in_epoch == epoch && up && was_up;",
            "mid_tlp ? passing : in_counted && in_epoch == epoch && up;",
        ),
        (
            "a TLP cut by the outage sent whole",
            "sim/weft_credit.v",
            "assign out_nullify = in_nullify || (in_eop && (cut || !up));",
            "assign out_nullify = in_nullify;",
        ),
    ] {
        let mut files = sim::link_down_files();
        change(&mut files, file, from, to);
        let caught = SEEDS.into_iter().any(|seed| {
            match sim::run_link_down(&scratch("link-down-broken"), &files, seed) {
                Err(SimError::Failed { report }) => report.contains("ERROR"),
                Ok(()) => false,
                Err(err) => panic!("{broken}: {err}"),
            }
        });
        assert!(caught, "{broken} went unnoticed");
    }
}

#[test]
fn agilex7_r_tile_x8_tlps_cross_both_ways() {
    // The R-tile's x16 port has a 1024-bit bus, twice weft's 512-bit
    // datapath, and no gearbox yet: run the board with that port at x8
    // (512 bits in two segments), as its two cable ports already are.
    let mut board = load::by_name("agilex7-i-series-devkit").expect("Agilex board loads");
    let host = &mut board.hard_ips[0];
    host.lanes = 8;
    host.data_bits = 512;
    host.segments = 2;
    if let Some(got) = run(&board, &scratch("agilex-x8"), HIP_FASTER) {
        assert_round_trip(&board, &got);
    }
}

#[test]
fn the_clock_checks_catch_a_wrong_divider_and_a_reset_released_before_lock() {
    let board = load::by_name("stratix10-dx-devkit").expect("reference board loads");
    let (_, plan) = clocking::board_pll(&board);
    let divider = format!(".OUT0_DIVIDE({})", plan.data_plane_divide);
    let wrong = format!(".OUT0_DIVIDE({})", plan.data_plane_divide + 1);
    for (name, from, to, broken) in [
        (
            "divider",
            divider.as_str(),
            wrong.as_str(),
            "a data plane clock off its rate",
        ),
        (
            "early-reset",
            ".rst_in(board_rst || !weft_pll_locked), .rst_out(weft_rst)",
            ".rst_in(board_rst), .rst_out(weft_rst)",
            "a data plane out of reset before the PLL locked",
        ),
    ] {
        let passed = run_changed(&board, name, from, to, WEFT_FASTER);
        assert_ne!(passed, Some(true), "{broken} went unnoticed");
    }
}

#[test]
fn every_boards_pll_model_makes_weft_clocks_from_the_board_reference() {
    for name in load::names(&load::data_dir()) {
        let board = load::by_name(&name).expect("loads");
        match sim::run_pll(&scratch(&format!("pll-{name}")), &sim::pll_files(&board)) {
            Ok(()) => {}
            Err(SimError::NoSimulator) => {
                eprintln!("skipped: iverilog is not installed (`cargo xtask setup` installs it)");
                return;
            }
            Err(err) => panic!("{name}: {err}"),
        }
    }
}

#[test]
fn the_pll_check_catches_a_wrong_mmcm_multiplier() {
    let board = load::by_name("vcu118").expect("vcu118 loads");
    let (_, plan) = clocking::board_pll(&board);
    let right = format!(".CLKFBOUT_MULT_F({}.000)", plan.multiply);
    let wrong = format!(".CLKFBOUT_MULT_F({}.000)", plan.multiply + 1);
    let mut files = sim::pll_files(&board);
    let tb = files
        .iter_mut()
        .find(|f| f.text.contains(&right))
        .expect("the testbench sets the MMCM's multiplier");
    tb.text = tb.text.replace(&right, &wrong);
    match sim::run_pll(&scratch("pll-wrong-mult"), &files) {
        Err(SimError::Failed { report }) => assert!(report.contains("period"), "{report}"),
        Err(SimError::NoSimulator) => eprintln!("skipped: iverilog is not installed"),
        other => panic!("a wrong multiplier went unnoticed: {other:?}"),
    }
}

#[test]
fn the_vcu118_flash_reaches_its_configuration_pins_through_startupe3() {
    let board = load::by_name("vcu118").expect("vcu118 loads");
    let files = sim::flash_files(&board).expect("the VCU118's flash goes through STARTUPE3");
    if !ran(sim::run_flash(&scratch("flash-startupe3"), &files)) {
        return;
    }
    // The bench catches a connection that drives D01 against the flash,
    // or leaves HOLD# floating, or swaps the clock for chip select.
    for (broken, from, to) in [
        ("D01 driven", "4'b0010", "4'b0000"),
        ("HOLD# released", "4'b0010", "4'b1010"),
        ("CCLK from CS#", ".USRCCLKO(sclk)", ".USRCCLKO(cs_n)"),
    ] {
        let mut changed = files.clone();
        let module = changed
            .iter_mut()
            .find(|f| f.text.contains(from))
            .expect("the connection module has the text to break");
        module.text = module.text.replace(from, to);
        noticed(
            sim::run_flash(&scratch("flash-startupe3-broken"), &changed),
            broken,
            "ERROR",
        );
    }
    // Boards with the flash on user pins have no such connection.
    let reference = load::by_name("stratix10-dx-devkit").expect("loads");
    assert!(sim::flash_files(&reference).is_none());
}

#[test]
fn a_void_tlp_leaves_the_tile_shim_with_tx_st_err_on_its_end_segment_only() {
    if !ran(sim::run_avst_tx(&scratch("avst-tx"), &sim::avst_tx_files())) {
        return;
    }
    // Without the mapping the testbench notices.
    let mut files = sim::avst_tx_files();
    change(
        &mut files,
        "sim/weft_avst.v",
        "assign avst_err[i] = fire && eop && nullify && i == last;",
        "assign avst_err[i] = 1'b0;",
    );
    noticed(
        sim::run_avst_tx(&scratch("avst-tx-unmapped"), &files),
        "a shim that drops nullify",
        "nullify 1",
    );
}
