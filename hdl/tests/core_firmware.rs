//! The real firmware ELF (`cargo xtask firmware`) on the RTL core, in
//! lock-step with the ISS on the reference memory map, from its entry
//! point until it waits for interrupts in its main loop (or a cycle
//! bound). Peripherals are not modelled here, so an access to one faults
//! identically on both models.

use std::path::PathBuf;

use weft_hdl::core::Lockstep;
use weft_iss::{elf, Hart, HarvardBus};

/// Core cycles to compare at most: the reset path, `.data`/`.bss` set-up,
/// and on into `main`.
const CYCLES: u64 = 20_000;

/// The ELF built by `cargo xtask firmware`, or `$WEFT_FIRMWARE`.
fn firmware_path() -> PathBuf {
    std::env::var_os("WEFT_FIRMWARE").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target/riscv32im-unknown-none-elf/firmware/weft-firmware")
        },
        PathBuf::from,
    )
}

#[test]
fn firmware_start_up_agrees_with_the_iss() {
    let path = firmware_path();
    let Ok(image) = std::fs::read(&path) else {
        eprintln!(
            "skipped: no firmware ELF at {} (build it with `cargo xtask firmware`, \
             or point WEFT_FIRMWARE at one)",
            path.display()
        );
        return;
    };
    let mut iss = Hart::new(HarvardBus::reference());
    iss.load_elf(&image).expect("the firmware ELF loads");
    let mut bus = HarvardBus::reference();
    elf::load(&mut bus, &image).expect("the firmware ELF loads");
    let mut l = Lockstep::new(bus, iss).expect("the core builds");
    let idle = l
        .run_to_wfi(CYCLES)
        .unwrap_or_else(|d| panic!("{}: {d}", path.display()));
    assert!(l.compared() > 0, "the firmware retired nothing");
    for r in 1..32 {
        let iss = l.iss().reg(r as u8);
        assert_eq!(l.rtl().register(r), iss, "x{r}");
    }
    let rtl_ram = l.rtl().bus().data_ram().to_vec();
    assert!(rtl_ram == l.iss().bus().data_ram(), "data RAM differs");
    eprintln!(
        "firmware: {} retirements agree; {}",
        l.compared(),
        if idle {
            "it waits in wfi"
        } else {
            "cycle bound reached"
        }
    );
}
