//! Helpers shared by the cross-crate suites: the case count every property test scales by,
//! and a small seeded generator for the choices a test makes outside proptest.

#![allow(dead_code)]

/// Cases per property: `RNT_PROPTEST_CASES` when set, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("RNT_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// splitmix64: a tiny seeded generator, so a test's shuffles and cuts follow from one seed
/// that proptest chooses (and shrinks).
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

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        let n = u64::try_from(n).expect("usize fits u64");
        usize::try_from(self.next() % n).expect("below n, which was a usize")
    }
}
