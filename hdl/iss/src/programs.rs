//! Hand-assembled benchmark programs with host-computed expected results.
//!
//! Each [`Program`] is small, loop-heavy and halts with `wfi` while no
//! interrupt is enabled, so [`crate::Hart::run`] returns
//! [`crate::RunStop::Idle`] at its end. The ISS benchmark measures
//! instructions per second on them; the RTL core's figures measure CPI on
//! the same code. Expected results come from plain-Rust reference
//! implementations, not from running the ISS.

use weft_regs::{DATA_RAM_BASE, INSTRUCTION_RAM_BASE};

use crate::bus::{Bus, BusFault, HarvardBus};
use crate::encode as e;
use crate::hart::Hart;

/// What a program must leave behind when it halts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// A register holds a value.
    Register {
        /// Register number.
        reg: u8,
        /// Expected value.
        value: u32,
    },
    /// Data RAM starts with these bytes.
    DataRam(Vec<u8>),
}

/// A program: code for instruction RAM, input for data RAM, and the
/// expected outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// Short name for tables.
    pub name: &'static str,
    /// Instruction words, placed at `INSTRUCTION_RAM_BASE`.
    pub code: Vec<u32>,
    /// Input bytes, placed at `DATA_RAM_BASE`.
    pub data: Vec<u8>,
    /// The outcome, from a host reference implementation.
    pub expected: Expected,
}

impl Program {
    /// Loads code and data and resets the hart to the first instruction.
    pub fn load(&self, hart: &mut Hart<HarvardBus>) -> Result<(), BusFault> {
        self.write_to(hart.bus_mut())?;
        hart.reset(INSTRUCTION_RAM_BASE);
        Ok(())
    }

    /// Writes code and data into `bus`'s RAMs through the image back door
    /// (for a second model, such as the RTL core, that runs from its own bus).
    pub fn write_to(&self, bus: &mut HarvardBus) -> Result<(), BusFault> {
        bus.write_words(INSTRUCTION_RAM_BASE, &self.code)?;
        bus.write_image(DATA_RAM_BASE, &self.data)
    }

    /// Whether the hart's state matches [`Program::expected`].
    pub fn succeeded(&self, hart: &Hart<HarvardBus>) -> bool {
        match &self.expected {
            Expected::Register { reg, value } => hart.reg(*reg) == *value,
            Expected::DataRam(bytes) => hart.bus().data_ram().starts_with(bytes),
        }
    }
}

/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320, initial and final
/// XOR 0xFFFF_FFFF), bit at a time, as a host reference.
pub fn crc32_reference(bytes: &[u8]) -> u32 {
    let mut crc = u32::MAX;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Bitwise CRC-32 of `data`, result in `x12`. Branchy, ALU-bound: about
/// 6 instructions per bit.
pub fn crc32(data: Vec<u8>) -> Program {
    let len = u32::try_from(data.len()).expect("benchmark inputs are far below 4 GiB");
    let [li_buf0, li_buf1] = e::li(10, DATA_RAM_BASE);
    let [li_len0, li_len1] = e::li(11, len);
    let [li_poly0, li_poly1] = e::li(13, 0xEDB8_8320);
    let code = vec![
        li_buf0,
        li_buf1,
        li_len0,
        li_len1,
        li_poly0,
        li_poly1,
        e::addi(12, 0, -1), // crc = !0
        // 7: byte loop
        e::lbu(14, 10, 0),
        e::xor_(12, 12, 14),
        e::addi(15, 0, 8),
        // 10: bit loop
        e::andi(16, 12, 1),
        e::srli(12, 12, 1),
        e::beq(16, 0, 8), // to 14
        e::xor_(12, 12, 13),
        // 14:
        e::addi(15, 15, -1),
        e::bne(15, 0, -20), // to 10
        e::addi(10, 10, 1),
        e::addi(11, 11, -1),
        e::bne(11, 0, -44), // to 7
        e::xori(12, 12, -1),
        e::wfi(),
    ];
    Program {
        name: "crc32",
        code,
        expected: Expected::Register {
            reg: 12,
            value: crc32_reference(&data),
        },
        data,
    }
}

/// Insertion sort (signed, ascending) of the little-endian words in
/// `words`, in data RAM. Load/store- and branch-heavy.
pub fn insertion_sort(words: &[i32]) -> Program {
    let n = u32::try_from(words.len()).expect("benchmark inputs are far below 4 GiB");
    let [li_base0, li_base1] = e::li(10, DATA_RAM_BASE);
    let [li_n0, li_n1] = e::li(11, n);
    let code = vec![
        li_base0,
        li_base1,
        li_n0,
        li_n1,
        e::addi(5, 0, 1), // i = 1
        // 5: outer
        e::bge(5, 11, 52), // i >= n: to 18
        e::slli(6, 5, 2),
        e::add(6, 10, 6), // p = &a[i]
        e::lw(7, 6, 0),   // key
        // 9: inner
        e::beq(6, 10, 24), // p == a: to 15
        e::lw(28, 6, -4),
        e::bge(7, 28, 16), // key >= a[j-1]: to 15
        e::sw(28, 6, 0),
        e::addi(6, 6, -4),
        e::jal(0, -20), // to 9
        // 15: insert
        e::sw(7, 6, 0),
        e::addi(5, 5, 1),
        e::jal(0, -48), // to 5
        // 18: done
        e::wfi(),
    ];
    let mut sorted = words.to_vec();
    sorted.sort_unstable();
    Program {
        name: "insertion-sort",
        code,
        data: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
        expected: Expected::DataRam(sorted.iter().flat_map(|w| w.to_le_bytes()).collect()),
    }
}

/// Host reference of [`lcg_mix`].
pub fn lcg_mix_reference(seed: u32, rounds: u32) -> u32 {
    let (mut x, mut acc) = (seed, 0u32);
    for _ in 0..rounds {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        acc = acc.wrapping_add(x % 1000);
        acc ^= x / 1000;
        acc = acc.wrapping_add(((u64::from(x) * 1_664_525) >> 32) as u32);
    }
    acc
}

/// `rounds` steps of a linear congruential generator mixed into an
/// accumulator with `mul`, `remu`, `divu` and `mulhu`; result in `x12`.
pub fn lcg_mix(seed: u32, rounds: u32) -> Program {
    let [li_x0, li_x1] = e::li(10, seed);
    let [li_n0, li_n1] = e::li(11, rounds);
    let [li_a0, li_a1] = e::li(13, 1_664_525);
    let [li_c0, li_c1] = e::li(14, 1_013_904_223);
    let code = vec![
        li_x0,
        li_x1,
        li_n0,
        li_n1,
        li_a0,
        li_a1,
        li_c0,
        li_c1,
        e::addi(15, 0, 1000),
        e::addi(12, 0, 0),
        // 10: loop
        e::mul(10, 10, 13),
        e::add(10, 10, 14),
        e::remu(16, 10, 15),
        e::add(12, 12, 16),
        e::divu(17, 10, 15),
        e::xor_(12, 12, 17),
        e::mulhu(18, 10, 13),
        e::add(12, 12, 18),
        e::addi(11, 11, -1),
        e::bne(11, 0, -36), // to 10
        e::wfi(),
    ];
    Program {
        name: "lcg-mix",
        code,
        data: Vec::new(),
        expected: Expected::Register {
            reg: 12,
            value: lcg_mix_reference(seed, rounds),
        },
    }
}

/// A firmware image for a flash slot (`weft_fabric::boot_image`) that
/// prints `image N in slot S`, with N the byte `name` loaded from data RAM
/// (so both RAMs were copied) and S the running slot of the boot loader's
/// handoff in `a1`, then waits: what tests of the boot loader put in a
/// slot.
pub fn banner_image(name: u8) -> Vec<u8> {
    let tx = weft_regs::soc::uart::TX_DATA.address(0, 0);
    let mut code = vec![e::lui(5, tx >> 12)];
    let print = |code: &mut Vec<u32>, text: &[u8]| {
        for &byte in text {
            code.push(e::addi(6, 0, i32::from(byte)));
            code.push(e::sw(6, 5, (tx & 0xFFF) as i32));
        }
    };
    print(&mut code, b"image ");
    code.extend([
        e::lui(7, DATA_RAM_BASE >> 12),
        e::lw(6, 7, 0),
        e::sw(6, 5, 0),
    ]);
    print(&mut code, b" in slot ");
    // a1 bits 3:0: the running slot, 0 for A.
    code.extend([
        e::andi(6, 11, 0xF),
        e::addi(6, 6, i32::from(b'A')),
        e::sw(6, 5, 0),
    ]);
    print(&mut code, b"\r\n");
    code.extend([e::wfi(), e::jal(0, -4)]);
    let code: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    let data = [name, 0, 0, 0];
    let segments: [(u32, &[u8]); 2] = [(INSTRUCTION_RAM_BASE, &code), (DATA_RAM_BASE, &data)];
    let mut image = vec![0; weft_fabric::boot_image::image_len(&segments)];
    weft_fabric::boot_image::write(INSTRUCTION_RAM_BASE, &segments, &mut image);
    image
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hart::RunStop;

    fn run(p: &Program) -> Hart<HarvardBus> {
        let mut hart = Hart::new(HarvardBus::reference());
        p.load(&mut hart).unwrap();
        let summary = hart.run(10_000_000);
        assert_eq!(summary.stop, RunStop::Idle, "{} did not halt", p.name);
        hart
    }

    #[test]
    fn crc32_reference_matches_the_catalogue_check_value() {
        // CRC-32/ISO-HDLC check value of "123456789" (Williams, "A Painless
        // Guide to CRC Error Detection Algorithms"; the CRC RevEng catalogue).
        assert_eq!(crc32_reference(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn crc32_program_computes_the_check_value() {
        let p = crc32(b"123456789".to_vec());
        let hart = run(&p);
        assert_eq!(hart.reg(12), 0xCBF4_3926);
    }

    #[test]
    fn insertion_sort_program_sorts() {
        let p = insertion_sort(&[5, -3, 9, 0, -3, i32::MIN, i32::MAX, 1]);
        let hart = run(&p);
        assert!(p.succeeded(&hart));
        let sorted: Vec<i32> = [i32::MIN, -3, -3, 0, 1, 5, 9, i32::MAX].to_vec();
        let bytes: Vec<u8> = sorted.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert!(hart.bus().data_ram().starts_with(&bytes));
    }

    #[test]
    fn lcg_mix_program_matches_reference() {
        let p = lcg_mix(12345, 100);
        let hart = run(&p);
        assert!(p.succeeded(&hart));
    }
}
