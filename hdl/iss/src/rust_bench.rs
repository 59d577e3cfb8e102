//! The Rust benchmark program (`softcore-fw/bench`, package `weft-bench`):
//! where its ELF is, and how to read its verdict from a halted core.
//!
//! The program runs four kernels (CRC-32, a sorted linked list, a matrix
//! product, a tokenizer), compares each result with the one its build
//! script computed on the host, and waits in `wfi` with the kernels that
//! matched in [`PASSED_REGISTER`] (bit `k` for kernel `k` of [`KERNELS`])
//! and a checksum of the results in [`CHECKSUM_REGISTER`].

use core::fmt;

/// The kernels, in the order of their bits in [`PASSED_REGISTER`].
pub const KERNELS: [&str; 4] = ["CRC-32", "sorted list", "matrix product", "tokenizer"];

/// `a0`: bit `k` set when kernel `k` matched the host's result.
pub const PASSED_REGISTER: u8 = 10;

/// `a1`: the results folded together (`c = rotl(c, 7) ^ result`), for
/// telling runs apart; the verdict is [`PASSED_REGISTER`]'s.
pub const CHECKSUM_REGISTER: u8 = 11;

/// Where the benchmark's ELF is: `$WEFT_BENCH`, or where `cargo xtask
/// firmware` puts it in this workspace.
pub fn elf_path() -> std::path::PathBuf {
    crate::elf::soft_core_binary_path("WEFT_BENCH", "weft-bench")
}

/// The benchmark's ELF at [`elf_path`], or `None` with the reason printed,
/// for a test that then skips.
pub fn elf_image() -> Option<Vec<u8>> {
    crate::elf::built_image(&elf_path(), "benchmark", "WEFT_BENCH")
}

/// The kernels whose result differed from the host's, by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrongKernels(pub Vec<&'static str>);

impl fmt::Display for WrongKernels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "wrong result from {}", self.0.join(", "))
    }
}

impl std::error::Error for WrongKernels {}

/// The verdict in [`PASSED_REGISTER`]'s value `passed`: every kernel right,
/// or the ones that were not.
pub fn verdict(passed: u32) -> Result<(), WrongKernels> {
    let wrong: Vec<&'static str> = KERNELS
        .iter()
        .enumerate()
        .filter(|(k, _)| passed & (1 << k) == 0)
        .map(|(_, name)| *name)
        .collect();
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(WrongKernels(wrong))
    }
}
