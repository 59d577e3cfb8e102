//! Links the boot loader into the boot ROM, with its statics and stack at
//! the top of data memory, from the memory map in `weft-regs`.

fn main() {
    weft_regs::build_script::link_boot_loader();
}
