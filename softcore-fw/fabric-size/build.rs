//! Writes the soft core's memory map for the linker from `weft-regs`, as
//! the firmware's build does, so the probes run on the ISS where the
//! firmware would.

use std::{env, fs, path::PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Only the bare-metal build is linked with riscv-rt's script.
    if env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("none") {
        return;
    }
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts"));
    let memory_x = weft_regs::LinkerMemoryMap.to_string();
    fs::write(out.join("memory.x"), memory_x).expect("OUT_DIR is writable");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg=-Tmemory.x");
    println!("cargo:rustc-link-arg=-Tlink.x");
}
