//! The watchdog driver against the ISS's watchdog model
//! (`weft_iss::soc::Watchdog`, which `soc_peripherals_match_iss` holds to
//! the RTL): an arm fires `load + 1` cycles later whether the watchdog ran
//! before or not, and a disarm stops the arm it names and no other.

use weft_drivers::{watchdog, CsrBus};
use weft_iss::soc::Soc;
use weft_iss::{Bus, HarvardBus, Width};

/// The reference SoC's window on the ISS; accesses take no time.
struct IssBus {
    bus: HarvardBus,
    soc: Soc,
}

impl CsrBus for IssBus {
    fn read32(&mut self, address: u32) -> u32 {
        self.bus
            .load(address, Width::Word)
            .expect("the driver reads only SoC registers")
    }

    fn write32(&mut self, address: u32, value: u32) {
        self.bus
            .store(address, Width::Word, value)
            .expect("the driver writes only SoC registers");
    }
}

fn board() -> IssBus {
    let mut bus = HarvardBus::reference();
    let soc = Soc::attach(&mut bus).expect("the SoC maps");
    IssBus { bus, soc }
}

#[test]
fn an_arm_fires_load_plus_one_cycles_later_from_a_stopped_watchdog() {
    let mut board = board();
    watchdog::arm(&mut board, 1_000);
    board.soc.advance(1_000);
    assert!(!board.soc.watchdog.take_reset_request());
    board.soc.advance(1);
    assert!(board.soc.watchdog.take_reset_request());
}

#[test]
fn an_arm_of_a_running_watchdog_restarts_its_count() {
    let mut board = board();
    watchdog::arm(&mut board, watchdog::load_for_ms(10_000));
    board.soc.advance(1_000_000);
    // A requested reset while a trial's long timeout runs: the short one counts.
    watchdog::arm(&mut board, 100);
    board.soc.advance(100);
    assert!(!board.soc.watchdog.take_reset_request());
    board.soc.advance(1);
    assert!(board.soc.watchdog.take_reset_request());
}

#[test]
fn a_disarm_stops_only_the_arm_it_names() {
    let mut board = board();
    let trial = watchdog::load_for_ms(10_000);
    watchdog::arm(&mut board, trial);
    board.soc.advance(50);
    // A reset scheduled meanwhile is not stopped by the trial's disarm.
    watchdog::arm(&mut board, 100);
    assert!(!watchdog::disarm_if_armed_with(&mut board, trial));
    board.soc.advance(101);
    assert!(board.soc.watchdog.take_reset_request());

    watchdog::arm(&mut board, trial);
    board.soc.advance(50);
    assert!(watchdog::disarm_if_armed_with(&mut board, trial));
    board.soc.advance(u64::from(u32::MAX) + 2);
    assert!(!board.soc.watchdog.take_reset_request());
}

#[test]
fn load_for_ms_counts_cycles_of_the_reference_soft_core_clock() {
    // 125 MHz (weft-regs' SOFT_CORE_CLOCK_HZ): 125 000 cycles a millisecond.
    assert_eq!(watchdog::load_for_ms(1), 125_000);
    assert_eq!(watchdog::load_for_ms(10_000), 1_250_000_000);
}
