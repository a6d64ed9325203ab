//! Helpers shared by the cross-crate suites: the case count every property test scales by,
//! and the seeded generator (`rng.rs`, shared with `cli/tests/`) for the choices a test
//! makes outside proptest.

#![allow(dead_code)]

/// Cases per property: `RNT_PROPTEST_CASES` when set, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("RNT_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[path = "rng.rs"]
mod rng;
// Not every suite that includes this module draws random numbers.
#[allow(unused_imports)]
pub use rng::Rng;
