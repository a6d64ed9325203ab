//! The seeded generator every CLI bench draws its data and ticks from (and
//! `benches/dbsp/src/bin/rnt-bench-ticks.rs`, which includes this file and the generators
//! beside it to write the same tick files without building rnt's stores).

/// xorshift64, seeded: the data and ticks are the same in every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// An index below `len`: the same draw as `below`.
    pub fn index(&mut self, len: usize) -> usize {
        let len = u64::try_from(len).expect("a usize fits u64");
        usize::try_from(self.below(len)).expect("below a usize")
    }
    /// A number below a non-negative `n`: the same draw as `below`.
    pub fn below_i64(&mut self, n: i64) -> i64 {
        let n = u64::try_from(n).expect("a non-negative bound");
        i64::try_from(self.below(n)).expect("below an i64")
    }
}
