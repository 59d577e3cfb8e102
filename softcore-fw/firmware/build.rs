//! Writes the firmware's memory map for the linker from `weft-regs`, so the
//! ELF is laid out exactly where the soft core's memories are decoded.

use std::{env, fs, path::PathBuf};

use weft_regs::{DATA_RAM_BASE, DATA_RAM_SIZE, INSTRUCTION_RAM_BASE, INSTRUCTION_RAM_SIZE};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Only the bare-metal build is linked with riscv-rt's script; a host
    // build (`cargo test --workspace`) links as an ordinary program.
    if env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("none") {
        return;
    }
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts"));
    let memory_x = format!(
        "/* Generated from weft-regs by build.rs: do not edit. */\n\
         MEMORY\n{{\n  \
           IRAM : ORIGIN = {INSTRUCTION_RAM_BASE:#010x}, LENGTH = {INSTRUCTION_RAM_SIZE:#x}\n  \
           DRAM : ORIGIN = {DATA_RAM_BASE:#010x}, LENGTH = {DATA_RAM_SIZE:#x}\n\
         }}\n\
         REGION_ALIAS(\"REGION_TEXT\", IRAM);\n\
         REGION_ALIAS(\"REGION_RODATA\", DRAM);\n\
         REGION_ALIAS(\"REGION_DATA\", DRAM);\n\
         REGION_ALIAS(\"REGION_BSS\", DRAM);\n\
         REGION_ALIAS(\"REGION_HEAP\", DRAM);\n\
         REGION_ALIAS(\"REGION_STACK\", DRAM);\n\
         /* Unwinding tables: the firmware aborts on panic and never unwinds,\n   \
            so they would only take data memory. */\n\
         SECTIONS\n{{\n  /DISCARD/ : {{ *(.eh_frame) *(.eh_frame_hdr) }}\n}}\n"
    );
    fs::write(out.join("memory.x"), memory_x).expect("OUT_DIR is writable");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg=-Tmemory.x");
    println!("cargo:rustc-link-arg=-Tlink.x");
}
