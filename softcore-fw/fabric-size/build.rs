//! Links the probe with the soft core's memory map from `weft-regs`, as
//! the firmware is, so it runs on the ISS where the firmware would.

fn main() {
    weft_regs::build_script::link_for_soft_core();
}
