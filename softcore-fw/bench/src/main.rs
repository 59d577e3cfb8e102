//! A small benchmark of compiled Rust on the soft core, in the spirit of
//! CoreMark and Embench: four kernels of the kinds a controller runs, each
//! checked against the result the build script computed on the host.
//!
//! - CRC-32 (the reflected IEEE polynomial, as Ethernet and zlib use it)
//!   of [`inputs::CRC_BYTES`] bytes, with its 256-entry table built first;
//! - a singly linked list of [`inputs::LIST_KEYS`] nodes in an array, each
//!   key inserted at its sorted place by walking the list, then folded in
//!   order (`h = 31 h + key`);
//! - the product of two [`inputs::MATRIX_N`]-square integer matrices,
//!   folded as the sum of each entry times its row-major position plus one;
//! - a tokenizer: a state machine over a byte string that counts words
//!   (runs of letters) and numbers (runs of digits) and sums the numbers'
//!   values, folded as `sum + (words << 20) + (numbers << 10)`.
//!
//! The inputs come from [`inputs`], generated at run time from a seed the
//! optimizer cannot see. At the end the program leaves in `a0` the kernels
//! whose result matched the host's (bit `k` for kernel `k` of [`KERNELS`],
//! so `0b1111` when all did) and in `a1` a checksum of the four results,
//! then waits in `wfi` forever. `weft_iss::rust_bench` reads them;
//! core-bench runs it on the RTL core for its CPI.
//!
//! Built for `riscv32im-unknown-none-elf` by `cargo xtask firmware`, with
//! the firmware's profile and memory map. A host build (as `cargo test
//! --workspace` makes) only points at that.
#![cfg_attr(target_os = "none", no_std, no_main)]
#![deny(unsafe_code)]

#[cfg(target_os = "none")]
mod inputs;

#[cfg(target_os = "none")]
mod bench {
    use core::hint::black_box;
    use core::panic::PanicInfo;

    use crate::inputs::{Inputs, Matrix, LIST_KEYS, MATRIX_N, SEED};

    include!(concat!(env!("OUT_DIR"), "/expected.rs"));

    /// The kernels, in the order of their bits in `a0`.
    const KERNELS: usize = EXPECTED.len();

    /// CRC-32 of `data`: reflected polynomial 0xEDB88320, initial value and
    /// final XOR all ones, a byte at a time through a table built here.
    #[inline(never)]
    fn crc32(data: &[u8]) -> u32 {
        let mut table = [0u32; 256];
        for (n, entry) in table.iter_mut().enumerate() {
            let mut c = n as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *entry = c;
        }
        let mut crc = !0u32;
        for &byte in data {
            crc = table[((crc ^ u32::from(byte)) & 0xFF) as usize] ^ (crc >> 8);
        }
        !crc
    }

    /// The end of the list.
    const NIL: u8 = u8::MAX;

    /// A list node: its key and the index of the next node.
    #[derive(Clone, Copy)]
    struct Node {
        key: u16,
        next: u8,
    }

    /// Inserts each key at its sorted place in a linked list, then folds
    /// the keys in list order.
    #[inline(never)]
    fn sorted_list(keys: &[u16; LIST_KEYS]) -> u32 {
        let mut nodes = [Node { key: 0, next: NIL }; LIST_KEYS];
        let mut head = NIL;
        for (index, &key) in keys.iter().enumerate() {
            let index = index as u8;
            nodes[usize::from(index)].key = key;
            if head == NIL || nodes[usize::from(head)].key >= key {
                nodes[usize::from(index)].next = head;
                head = index;
                continue;
            }
            let mut at = head;
            loop {
                let next = nodes[usize::from(at)].next;
                if next == NIL || nodes[usize::from(next)].key >= key {
                    break;
                }
                at = next;
            }
            nodes[usize::from(index)].next = nodes[usize::from(at)].next;
            nodes[usize::from(at)].next = index;
        }
        let mut h = 0u32;
        let mut at = head;
        while at != NIL {
            let node = nodes[usize::from(at)];
            h = h.wrapping_mul(31).wrapping_add(u32::from(node.key));
            at = node.next;
        }
        h
    }

    /// `a × b`, folded as the sum of each entry times its row-major
    /// position plus one.
    #[inline(never)]
    fn matrix_product(a: &Matrix, b: &Matrix) -> u32 {
        let mut c = [[0i32; MATRIX_N]; MATRIX_N];
        for i in 0..MATRIX_N {
            for k in 0..MATRIX_N {
                let x = a[i][k];
                for j in 0..MATRIX_N {
                    c[i][j] += x * b[k][j];
                }
            }
        }
        let mut folded = 0u32;
        for (i, row) in c.iter().enumerate() {
            for (j, &entry) in row.iter().enumerate() {
                let position = (i * MATRIX_N + j + 1) as u32;
                folded = folded.wrapping_add((entry as u32).wrapping_mul(position));
            }
        }
        folded
    }

    /// Where the tokenizer is in the text.
    enum State {
        Between,
        InWord,
        InNumber(u32),
    }

    /// Counts words and numbers and sums the numbers, one byte at a time.
    #[inline(never)]
    fn tokens(text: &[u8]) -> u32 {
        let (mut words, mut numbers, mut sum) = (0u32, 0u32, 0u32);
        let mut state = State::Between;
        for &byte in text {
            state = match (state, byte) {
                (State::InNumber(value), b'0'..=b'9') => {
                    State::InNumber(value.wrapping_mul(10).wrapping_add(u32::from(byte - b'0')))
                }
                (State::InWord, b'a'..=b'z' | b'A'..=b'Z') => State::InWord,
                (state, _) => {
                    if let State::InNumber(value) = state {
                        numbers += 1;
                        sum = sum.wrapping_add(value);
                    }
                    match byte {
                        b'0'..=b'9' => State::InNumber(u32::from(byte - b'0')),
                        b'a'..=b'z' | b'A'..=b'Z' => {
                            words += 1;
                            State::InWord
                        }
                        _ => State::Between,
                    }
                }
            };
        }
        if let State::InNumber(value) = state {
            numbers += 1;
            sum = sum.wrapping_add(value);
        }
        sum.wrapping_add(words << 20).wrapping_add(numbers << 10)
    }

    /// Runs the kernels, checks them and waits with the verdict in `a0`
    /// and the checksum in `a1`.
    #[riscv_rt::entry]
    fn main() -> ! {
        let inputs = Inputs::generate(black_box(SEED));
        let results: [u32; KERNELS] = [
            crc32(&inputs.crc),
            sorted_list(&inputs.keys),
            matrix_product(&inputs.a, &inputs.b),
            tokens(&inputs.text),
        ];
        let expected = black_box(EXPECTED);
        let mut passed = 0u32;
        let mut checksum = 0u32;
        for (k, (result, expected)) in results.iter().zip(expected).enumerate() {
            if *result == expected {
                passed |= 1 << k;
            }
            checksum = checksum.rotate_left(7) ^ result;
        }
        finish(passed, checksum)
    }

    /// Waits in `wfi` forever with `passed` in `a0` and `checksum` in `a1`.
    #[allow(unsafe_code)]
    fn finish(passed: u32, checksum: u32) -> ! {
        loop {
            // SAFETY: `wfi` only waits; the registers are inputs, read by
            // whoever inspects the halted core.
            unsafe {
                core::arch::asm!("wfi", in("a0") passed, in("a1") checksum, options(nomem, nostack));
            }
        }
    }

    /// A panic halts the core without reaching `wfi`.
    #[panic_handler]
    fn on_panic(_info: &PanicInfo) -> ! {
        loop {
            core::hint::spin_loop();
        }
    }
}

#[cfg(not(target_os = "none"))]
fn main() {
    eprintln!(
        "weft-bench is a benchmark for the soft core (riscv32im-unknown-none-elf); \
         `cargo xtask firmware` builds it, core-bench runs it"
    );
}
