//! The program step loads with openFPGALoader exactly where openFPGALoader
//! knows the board, and with the vendor's programmer elsewhere.

use std::process::Command;

use weft_boards::model::Vendor;
use weft_boards::{load, program, project, Board};

fn boards() -> Vec<Board> {
    load::names(&load::data_dir())
        .iter()
        .map(|name| load::by_name(name).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// The output of `openFPGALoader <flag>`, or `None` when it is not installed.
fn openfpgaloader(flag: &str) -> Option<String> {
    let out = Command::new("openFPGALoader").arg(flag).output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn the_load_step_uses_openfpgaloader_where_the_board_names_it() {
    for board in boards() {
        let step = program::load(&board);
        let bit = project::bitstream(&board);
        match (&board.board.openfpgaloader, board.board.vendor) {
            (Some(name), _) => {
                assert_eq!(step.program, "openFPGALoader", "{}", board.board.name);
                assert_eq!(step.args, ["-b", name.as_str(), bit]);
            }
            (None, Vendor::Intel) => {
                assert_eq!(step.program, "quartus_pgm", "{}", board.board.name);
                assert!(step.args.iter().any(|a| a.ends_with(bit)));
            }
            (None, Vendor::Xilinx) => assert_eq!(step.program, "vivado"),
        }
    }
}

#[test]
fn openfpgaloader_lists_the_boards_the_program_step_names_and_no_others() {
    let (Some(boards_list), Some(fpga_list)) = (
        openfpgaloader("--list-boards"),
        openfpgaloader("--list-fpga"),
    ) else {
        eprintln!("skipped: openFPGALoader is not installed (`cargo xtask setup` installs it)");
        return;
    };
    let known: Vec<&str> = boards_list
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(
        known.len() > 10,
        "unexpected --list-boards output:\n{boards_list}"
    );
    // `--list-fpga` columns: IDCODE, manufacturer, family, model.
    let families: Vec<String> = fpga_list
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().nth(2))
        .map(str::to_lowercase)
        .collect();
    for board in boards() {
        match &board.board.openfpgaloader {
            Some(name) => assert!(
                known.contains(&name.as_str()),
                "{}: openFPGALoader has no board {name}",
                board.board.name
            ),
            None => {
                // The vendor programmer is used because openFPGALoader does
                // not know the device family; if it learns it, switch.
                let family = board.board.family.to_lowercase();
                let first_word = family.split_whitespace().next().unwrap_or_default();
                assert!(
                    !families.iter().any(|f| f == first_word),
                    "{}: openFPGALoader now lists {} devices; name the board in its data file",
                    board.board.name,
                    board.board.family
                );
            }
        }
    }
}
