//! The linker setup of a program that runs on the soft core, for its
//! build script: riscv-rt's `link.x` over the memory map of
//! [`LinkerMemoryMap`](crate::LinkerMemoryMap), so the ELF is laid out
//! exactly where the soft core's memories are decoded.

use std::path::PathBuf;
use std::string::ToString;
use std::{env, fs, println};

/// Writes `memory.x` into the build script's `OUT_DIR` and tells cargo to
/// link with it and riscv-rt's `link.x`. Only the bare-metal build is
/// linked so; a host build (`cargo test --workspace`) links as an
/// ordinary program, and this does nothing there.
pub fn link_for_soft_core() {
    link_with(&crate::LinkerMemoryMap);
}

/// As [`link_for_soft_core`], for the boot loader: linked into the boot
/// ROM, with its statics and stack at the top of data memory
/// ([`BootLoaderMemoryMap`](crate::BootLoaderMemoryMap)).
pub fn link_boot_loader() {
    link_with(&crate::BootLoaderMemoryMap);
}

/// Writes `map` as `memory.x` and links with it and riscv-rt's `link.x`,
/// for a bare-metal build only.
fn link_with(map: &dyn core::fmt::Display) {
    println!("cargo:rerun-if-changed=build.rs");
    if env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("none") {
        return;
    }
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts"));
    fs::write(out.join("memory.x"), map.to_string()).expect("OUT_DIR is writable");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg=-Tmemory.x");
    println!("cargo:rustc-link-arg=-Tlink.x");
}
