//! The limits every tree enforces where data enters: on a key, a value and a node's level.

/// Longest key a tree accepts: 64 KiB. Keys are tuples, and rnt caps an encoded tuple at
/// this size. A key may be larger than a node's target size: the chunker closes a node once
/// it measures [`crate::chunker::NODE_SPLIT_BYTES_MAX`], so an oversized entry ends its node, and a
/// node measures at most that bound plus one entry (two entries at internal levels, plus a
/// lone trailing one; `docs/format.md` §6.4).
pub const KEY_BYTES_MAX: usize = 64 * 1024;
/// Longest value a tree accepts: values are derivation counts and accumulators, small.
pub const VALUE_BYTES_MAX: usize = 4096;
/// Highest node level a decoder accepts. Internal nodes hold at least two entries, so 32
/// levels already address 2³² leaves — far past anything a 64-bit count can describe in
/// practice — and the bound stops a corrupted level byte from sending a walk astray.
pub const TREE_LEVEL_MAX: u8 = 32;
