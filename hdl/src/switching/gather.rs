//! Bits into a vector: `N` one-bit signals as one `Bits<N>`.

use rust_hdl::prelude::*;

/// Concatenates `N` one-bit signals into one vector, bit `j` from `bits[j]`.
///
/// rust-hdl's HDL subset cannot build a vector bit by bit in a loop (a
/// signal may not be read after being assigned in the same update), so
/// this leaf does it in plain Rust and emits the Verilog concatenation.
#[derive(LogicBlock)]
pub struct Gather<const N: usize> {
    /// The bits.
    pub bits: [Signal<In, Bit>; N],
    /// The vector.
    pub vector: Signal<Out, Bits<N>>,
}

impl<const N: usize> Default for Gather<N> {
    fn default() -> Self {
        Gather {
            bits: std::array::from_fn(|_| Default::default()),
            vector: Default::default(),
        }
    }
}

impl<const N: usize> Logic for Gather<N> {
    fn update(&mut self) {
        self.vector.next = self
            .bits
            .iter()
            .enumerate()
            .fold(Bits::<N>::default(), |vector, (j, bit)| {
                vector.replace_bit(j, bit.val())
            });
    }

    fn connect(&mut self) {
        self.vector.connect();
    }

    fn hdl(&self) -> Verilog {
        let bits: Vec<String> = (0..N).rev().map(|j| format!("bits${j}")).collect();
        Verilog::Custom(format!("always @(*) vector = {{{}}};", bits.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_j_of_the_vector_is_input_j() {
        let mut gather = Gather::<5>::default();
        gather.connect_all();
        for pattern in [0b00000u64, 0b00001, 0b10110, 0b11111] {
            for (j, bit) in gather.bits.iter_mut().enumerate() {
                bit.next = pattern >> j & 1 == 1;
            }
            crate::driver::settle(&mut gather).expect("settles");
            assert_eq!(gather.vector.val().to_u64(), pattern);
        }
    }

    #[test]
    fn verilog_concatenates_most_significant_first() {
        let mut gather = Gather::<3>::default();
        gather.connect_all();
        let verilog = generate_verilog(&gather);
        assert!(
            verilog.contains("vector = {bits$2, bits$1, bits$0};"),
            "{verilog}"
        );
    }
}
