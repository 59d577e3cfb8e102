//! The RTL core runs the ISS's benchmark programs in lock-step with the
//! ISS: every retirement agrees, and each program leaves the result its
//! plain-Rust reference computes.

use weft_hdl::core::Lockstep;
use weft_iss::programs::{self, Program};
use weft_iss::{Hart, HarvardBus};

fn run(program: &Program) -> Lockstep {
    let mut iss = Hart::new(HarvardBus::reference());
    program
        .load(&mut iss)
        .expect("programs fit the reference RAMs");
    let mut bus = HarvardBus::reference();
    program
        .write_to(&mut bus)
        .expect("programs fit the reference RAMs");
    let mut lockstep = Lockstep::new(bus, iss).expect("the core builds");
    let ended = lockstep
        .run_to_wfi(200_000)
        .unwrap_or_else(|d| panic!("{}: {d}", program.name));
    assert!(ended, "{} did not reach its final wfi", program.name);
    assert!(
        program.succeeded(lockstep.iss()),
        "{}: wrong result",
        program.name
    );
    for r in 1..32 {
        let iss = lockstep.iss().reg(r as u8);
        assert_eq!(lockstep.rtl().register(r), iss, "{}: x{r}", program.name);
    }
    let rtl_ram = lockstep.rtl().bus().data_ram().to_vec();
    assert_eq!(
        rtl_ram,
        lockstep.iss().bus().data_ram(),
        "{}: data RAM",
        program.name
    );
    lockstep
}

#[test]
fn crc32_agrees_with_the_iss() {
    let l = run(&programs::crc32(b"123456789".to_vec()));
    eprintln!("crc32: {} retired", l.compared());
}

#[test]
fn insertion_sort_agrees_with_the_iss() {
    let mut l = run(&programs::insertion_sort(&[
        5,
        -3,
        9,
        0,
        -3,
        i32::MIN,
        i32::MAX,
        1,
        7,
        7,
        -100,
    ]));
    eprintln!("sort: {} retired {} cycles", l.compared(), l.rtl().cycles());
}

#[test]
fn lcg_mix_agrees_with_the_iss() {
    let mut l = run(&programs::lcg_mix(12345, 20));
    eprintln!("lcg: {} retired {} cycles", l.compared(), l.rtl().cycles());
}
