//! The benchmark's inputs, generated from [`SEED`] by xorshift32 both by
//! the program on the soft core (from a seed the optimizer cannot see, so
//! no kernel is folded away at compile time) and by the build script, which
//! computes the expected results on the host.

/// The seed of every input.
pub const SEED: u32 = 0x2545_F491;
/// Bytes the CRC-32 kernel checks.
pub const CRC_BYTES: usize = 1024;
/// Keys the linked-list kernel sorts.
pub const LIST_KEYS: usize = 96;
/// Rows and columns of the multiplied matrices.
pub const MATRIX_N: usize = 16;
/// Bytes of the tokenizer's text.
pub const TEXT_BYTES: usize = 1024;
/// The tokenizer's alphabet: 32 bytes (an input byte is one of them,
/// chosen by five random bits), letters, digits and separators.
pub const ALPHABET: &[u8; 32] = b"abcdefghijklmnop0123456789  ,.;\n";

/// A square matrix of [`MATRIX_N`] rows.
pub type Matrix = [[i32; MATRIX_N]; MATRIX_N];

/// Every kernel's input.
pub struct Inputs {
    /// The CRC-32 kernel's bytes.
    pub crc: [u8; CRC_BYTES],
    /// The linked list's keys, in insertion order.
    pub keys: [u16; LIST_KEYS],
    /// The left matrix.
    pub a: Matrix,
    /// The right matrix.
    pub b: Matrix,
    /// The tokenizer's text.
    pub text: [u8; TEXT_BYTES],
}

impl Inputs {
    /// The inputs from `seed`, in a fixed order: CRC bytes, keys, the
    /// matrices (entries from -128 to 127), the text.
    pub fn generate(seed: u32) -> Self {
        let mut state = seed;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        let mut inputs = Inputs {
            crc: [0; CRC_BYTES],
            keys: [0; LIST_KEYS],
            a: [[0; MATRIX_N]; MATRIX_N],
            b: [[0; MATRIX_N]; MATRIX_N],
            text: [0; TEXT_BYTES],
        };
        for byte in &mut inputs.crc {
            *byte = next() as u8;
        }
        for key in &mut inputs.keys {
            *key = next() as u16;
        }
        for entry in inputs.a.iter_mut().chain(inputs.b.iter_mut()).flatten() {
            *entry = i32::from(next() as i8);
        }
        for byte in &mut inputs.text {
            *byte = ALPHABET[(next() >> 27) as usize];
        }
        inputs
    }
}
