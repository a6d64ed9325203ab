//! The builder's source of randomness: a choice sequence (0 is always the simplest).

use crate::*;

// Choices: the builder's source of randomness.

/// A sequence of choices read in order; past its end every choice is 0 (the simplest).
pub(crate) struct Choices<'a> {
    pub(crate) data: &'a [u32],
    pub(crate) at: usize,
}

impl<'a> Choices<'a> {
    pub(crate) fn new(data: &'a [u32]) -> Choices<'a> {
        Choices { data, at: 0 }
    }

    /// A number in `0..n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        let raw = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        raw as usize % n
    }

    /// True with roughly `percent`% probability; false when the choice is 0.
    pub(crate) fn percent(&mut self, percent: usize) -> bool {
        self.below(100) + percent >= 100
    }

    pub(crate) fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }

    /// An index into `weights`, chosen with those weights (0 for a choice of 0).
    pub(crate) fn weighted(&mut self, weights: &[usize]) -> usize {
        let total: usize = weights.iter().sum();
        let mut roll = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if roll < w {
                return i;
            }
            roll -= w;
        }
        unreachable!("roll is below the total")
    }

    pub(crate) fn value(&mut self) -> i64 {
        self.below(VALUE_RANGE) as i64
    }
}
