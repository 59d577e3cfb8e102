//! Links the benchmark with the soft core's memory map from `weft-regs`,
//! as the firmware is, and computes each kernel's expected result on the
//! host, independently of the program's own code: CRC-32 by the `crc`
//! crate, the sorted list by the standard library's sort, the matrix
//! product by rows of the left matrix against columns of the right one
//! collected first, the tokens by splitting the text into runs of one
//! character class. The program compares its results with these.

#[path = "src/inputs.rs"]
mod inputs;

use inputs::{Inputs, MATRIX_N, SEED};

/// Letters, digits, or anything else.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Letter,
    Digit,
    Separator,
}

fn class(byte: u8) -> Class {
    if byte.is_ascii_alphabetic() {
        Class::Letter
    } else if byte.is_ascii_digit() {
        Class::Digit
    } else {
        Class::Separator
    }
}

fn main() {
    weft_regs::build_script::link_for_soft_core();

    let inputs = Inputs::generate(SEED);

    let crc32 = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC).checksum(&inputs.crc);

    let mut keys = inputs.keys.to_vec();
    keys.sort_unstable();
    let list = keys
        .iter()
        .fold(0u32, |h, &k| h.wrapping_mul(31).wrapping_add(u32::from(k)));

    let columns: Vec<Vec<i32>> = (0..MATRIX_N)
        .map(|j| inputs.b.iter().map(|row| row[j]).collect())
        .collect();
    let mut matrix = 0u32;
    for (i, row) in inputs.a.iter().enumerate() {
        for (j, column) in columns.iter().enumerate() {
            let c: i32 = row.iter().zip(column).map(|(x, y)| x * y).sum();
            matrix = matrix.wrapping_add((c as u32).wrapping_mul((i * MATRIX_N + j + 1) as u32));
        }
    }

    let (mut words, mut numbers, mut sum) = (0u32, 0u32, 0u32);
    for run in inputs.text.chunk_by(|x, y| class(*x) == class(*y)) {
        match class(run[0]) {
            Class::Letter => words += 1,
            Class::Digit => {
                numbers += 1;
                let value = run.iter().fold(0u32, |v, d| {
                    v.wrapping_mul(10).wrapping_add(u32::from(d - b'0'))
                });
                sum = sum.wrapping_add(value);
            }
            Class::Separator => {}
        }
    }
    let tokens = sum.wrapping_add(words << 20).wrapping_add(numbers << 10);

    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(
        out.join("expected.rs"),
        format!(
            "/// Each kernel's result as the host computed it, in the order of\n\
             /// [`KERNELS`]: CRC-32, list, matrix, tokens.\n\
             const EXPECTED: [u32; 4] = [{crc32:#010x}, {list:#010x}, {matrix:#010x}, {tokens:#010x}];\n"
        ),
    )
    .expect("OUT_DIR is writable");
    println!("cargo:rerun-if-changed=src/inputs.rs");
}
