//! Links the firmware with the soft core's memory map from `weft-regs`.

fn main() {
    weft_regs::build_script::link_for_soft_core();
}
