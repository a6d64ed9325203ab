//! splitmix64: the one small seeded generator of every test suite (the top-level `tests/`
//! and `cli/tests/` include this file), so a test's shuffles, kills and damage follow from
//! one seed — printed or chosen (and shrunk) by proptest — and replay exactly.
//!
//! The benchmarks keep their own xorshift generator on purpose: it fixes the reference
//! data, and changing it would make new figures incomparable with recorded ones.

/// A seeded generator; the seed is the whole state.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    /// An index into a slice of `len` items (0 when `len` is 0).
    pub fn index(&mut self, len: usize) -> usize {
        let len = u64::try_from(len).expect("usize fits u64");
        usize::try_from(self.below(len)).expect("below len, which was a usize")
    }
}
