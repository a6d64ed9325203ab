//! Where nodes end: the history-independent boundary rule, and the [`Chunker`] that applies
//! it left to right over one level's sorted entries.
//!
//! A boundary falls after an entry when the entry's key hash (seeded per level) is below a
//! threshold that rises with the node's running size. The threshold follows the hazard of a
//! Weibull distribution (shape 4), so node sizes cluster around [`NODE_BYTES_TARGET`]
//! instead of spreading geometrically as a fixed-probability rule would; a hard minimum and
//! maximum bound them. Everything is integer arithmetic: float functions differ across
//! platforms, and one differing boundary changes every address above it.
//!
//! *Invariant: a boundary depends only on the level and the entries since the previous
//! boundary — never on insertion order or edit history. So the same set of entries has the
//! same nodes, and the same root address, however it was built.*

use crate::codec::{read_u32, ChildRef, EntryRun, NodeBuilder};
use rnt_store::meter::{self, Work};

/// Mean node size the chunker aims for, in measured bytes (see [`entry_bytes`]).
pub const NODE_BYTES_TARGET: usize = 4096;
/// No boundary falls before a node measures this many bytes (but a level's last node may
/// be smaller).
pub const NODE_BYTES_MIN: usize = 512;
/// A boundary always falls once a node measures this many bytes; a node can exceed it by
/// at most one entry.
pub const NODE_SPLIT_BYTES_MAX: usize = 16 * 1024;
/// Internal nodes split only once they hold this many entries, so the tree always narrows.
pub const INTERNAL_ENTRIES_MIN: usize = 2;
/// Weibull shape parameter of the size distribution.
pub const WEIBULL_SHAPE: u32 = 4;
/// Weibull scale λ in bytes: mean = λ·Γ(1 + 1/4) ≈ 0.906 λ ≈ [`NODE_BYTES_TARGET`].
pub const WEIBULL_SCALE_BYTES: u64 = 4519;
/// Per-entry overhead counted in a node's measured size (its two offset-table slots).
pub const ENTRY_OVERHEAD_BYTES: usize = 8;

/// The measured size of one entry: key, value and offset-table overhead.
#[inline]
pub fn entry_bytes(key: &[u8], value: &[u8]) -> usize {
    key.len() + value.len() + ENTRY_OVERHEAD_BYTES
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// MurmurHash3's 64-bit finalizer: full avalanche of every input bit.
#[inline]
fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The seed of level `level`: distinct per level, so a key that ends a node at one level
/// is not more likely to end one at the next.
#[inline]
pub fn level_seed(level: u8) -> u64 {
    fmix64(FNV_OFFSET ^ (u64::from(level) + 1))
}

/// The 32-bit boundary hash of `key` at `level`: FNV-1a 64 over the key bytes starting
/// from the level seed, then fmix64, then the high 32 bits.
#[inline]
pub fn boundary_hash(level: u8, key: &[u8]) -> u32 {
    let mut h = level_seed(level);
    for &byte in key {
        h ^= u64::from(byte);
        h = h.wrapping_mul(FNV_PRIME);
    }
    (fmix64(h) >> 32) as u32
}

/// The split threshold after an entry of `entry` bytes brings the node to `size` bytes:
/// ⌊2³² · k · entry · size^(k−1) / λ^k⌋ (the Weibull hazard times the entry's width),
/// capped at 2³². A boundary falls when `boundary_hash < threshold`.
#[inline]
pub fn split_threshold(size: usize, entry: usize) -> u64 {
    debug_assert_eq!(WEIBULL_SHAPE, 4);
    let size = size as u128;
    let numerator = ((entry as u128) * size * size * size * u128::from(WEIBULL_SHAPE)) << 32;
    let scale = u128::from(WEIBULL_SCALE_BYTES);
    let threshold = numerator / (scale * scale * scale * scale);
    threshold.min(1u128 << 32) as u64
}

/// Whether a boundary falls after an entry with `key` that brought a node at `level` to
/// `entries` entries and `size` measured bytes.
#[inline]
pub fn is_boundary(level: u8, key: &[u8], entry: usize, size: usize, entries: usize) -> bool {
    if level > 0 && entries < INTERNAL_ENTRIES_MIN {
        return false;
    }
    if size >= NODE_SPLIT_BYTES_MAX {
        return true;
    }
    if size < NODE_BYTES_MIN {
        return false;
    }
    below_threshold(boundary_hash(level, key), size, entry)
}

/// `u64::from(hash) < split_threshold(size, entry)`, without the division: for a
/// threshold ⌊N / D⌋ capped at 2³² (which no 32-bit hash reaches), `hash < ⌊N / D⌋` holds
/// exactly when `(hash + 1) · D ≤ N`.
#[inline]
fn below_threshold(hash: u32, size: usize, entry: usize) -> bool {
    let size = size as u128;
    let numerator = ((entry as u128) * size * size * size * u128::from(WEIBULL_SHAPE)) << 32;
    let scale = u128::from(WEIBULL_SCALE_BYTES);
    let below = (u128::from(hash) + 1) * (scale * scale * scale * scale) <= numerator;
    debug_assert_eq!(
        below,
        u64::from(hash) < split_threshold(size as usize, entry)
    );
    below
}

/// A node the chunker has closed: its bytes, its last key and its subtree entry count.
#[derive(Debug)]
pub(crate) struct ClosedNode {
    pub(crate) level: u8,
    pub(crate) bytes: Vec<u8>,
    pub(crate) last_key: Vec<u8>,
    pub(crate) count: u64,
}

/// Cuts one level's sorted entries into nodes. Closed nodes collect in `ready`.
///
/// At internal levels the last closed node is held back until the next boundary, so that
/// when a level ends with a lone entry it joins the node before it
/// ([`INTERNAL_ENTRIES_MIN`]): a boundary at a level's end is the only one that looks back.
pub(crate) struct Chunker {
    level: u8,
    current: NodeBuilder,
    current_size: usize,
    current_count: u64,
    held: Option<(NodeBuilder, u64)>,
    spare: NodeBuilder,
    /// Closed nodes, in order, for the caller to take.
    pub(crate) ready: Vec<ClosedNode>,
}

impl Chunker {
    /// A chunker for `level`, starting at a boundary.
    pub(crate) fn new(level: u8) -> Chunker {
        Chunker {
            level,
            // A node ends by NODE_SPLIT_BYTES_MAX (one entry past it at most): one
            // allocation per buffer, not one per doubling.
            current: NodeBuilder::with_capacity(NODE_SPLIT_BYTES_MAX),
            current_size: 0,
            current_count: 0,
            held: None,
            spare: NodeBuilder::default(),
            ready: Vec::new(),
        }
    }

    /// The level this chunker cuts.
    pub(crate) fn level(&self) -> u8 {
        self.level
    }

    /// Whether the chunker is as a new one: at a boundary, holding no node back and with
    /// no closed node left to take.
    pub(crate) fn is_fresh(&self) -> bool {
        self.at_boundary() && self.held.is_none() && self.ready.is_empty()
    }

    /// The measured bytes of the open node so far (0 at a boundary): with the level and
    /// the entries to come, all a boundary test depends on at the leaves.
    pub(crate) fn current_size(&self) -> usize {
        self.current_size
    }

    /// Whether the chunker sits at a boundary (no open node).
    pub(crate) fn at_boundary(&self) -> bool {
        self.current.is_empty()
    }

    /// Adds the next entry; keys must increase. At internal levels `value` is a
    /// [`ChildRef`] encoding.
    pub(crate) fn push(&mut self, key: &[u8], value: &[u8]) {
        let weight = self.weight(value);
        debug_assert!(
            self.level == 0 || weight > 0,
            "internal entry without a child ref"
        );
        let entry = entry_bytes(key, value);
        self.current.push(key, value);
        self.current_size += entry;
        self.current_count += weight;
        if is_boundary(
            self.level,
            key,
            entry,
            self.current_size,
            self.current.len(),
        ) {
            self.close_current();
        }
    }

    /// Adds the next entry knowing it ends no node: an entry that stood inside an old
    /// node (not the last of its level, whose end may hold a lone entry joined to it),
    /// reached from that node's start with the same entries before it, meets the same
    /// sizes and so the same negative test. The test is skipped, not changed: debug builds
    /// run it.
    pub(crate) fn push_interior(&mut self, key: &[u8], value: &[u8]) {
        let weight = self.weight(value);
        let entry = entry_bytes(key, value);
        self.current.push(key, value);
        self.current_size += entry;
        self.current_count += weight;
        debug_assert!(
            !is_boundary(
                self.level,
                key,
                entry,
                self.current_size,
                self.current.len()
            ),
            "an entry pushed as interior ends a node"
        );
    }

    /// Adds a run of a leaf's entries knowing none ends a node: entries that stood inside
    /// an old leaf, reached with the open node measuring what the old one did at the run's
    /// start, meet the same tests with the same (negative) outcome. Leaves only: their
    /// entries count 1 each. Debug builds run the tests.
    pub(crate) fn push_interior_run(&mut self, run: &EntryRun<'_>) {
        debug_assert_eq!(self.level, 0, "runs are pushed at the leaves");
        let entries = run.len();
        if entries == 0 {
            return;
        }
        if cfg!(debug_assertions) {
            let mut size = self.current_size;
            let mut count = self.current.len();
            let mut key_start = read_u32(run.key_offsets, 0);
            let mut value_start = read_u32(run.value_offsets, 0);
            let (key_base, value_base) = (key_start, value_start);
            for i in 1..=entries {
                let key_end = read_u32(run.key_offsets, 4 * i);
                let value_end = read_u32(run.value_offsets, 4 * i);
                let key = &run.keys[key_start - key_base..key_end - key_base];
                let value = &run.values[value_start - value_base..value_end - value_base];
                let entry = entry_bytes(key, value);
                size += entry;
                count += 1;
                debug_assert!(
                    !is_boundary(self.level, key, entry, size, count),
                    "an entry pushed as interior ends a node"
                );
                key_start = key_end;
                value_start = value_end;
            }
        }
        self.current.extend_run(run);
        self.current_size += run.keys.len() + run.values.len() + ENTRY_OVERHEAD_BYTES * entries;
        self.current_count += entries as u64;
    }

    /// What an entry adds to the node's subtree count: 1 in a leaf, its child's count
    /// above.
    fn weight(&self, value: &[u8]) -> u64 {
        if self.level == 0 {
            1
        } else {
            ChildRef::decode(value).map_or(0, |child| child.count)
        }
    }

    fn close_current(&mut self) {
        let count = std::mem::take(&mut self.current_count);
        self.current_size = 0;
        if self.level == 0 {
            let node = self.encode_builder_current(count);
            self.ready.push(node);
            return;
        }
        let closed = std::mem::replace(&mut self.current, std::mem::take(&mut self.spare));
        if let Some((mut held, held_count)) = self.held.replace((closed, count)) {
            let node = encode(self.level, &mut held, held_count);
            self.ready.push(node);
            self.spare = held;
        }
    }

    fn encode_builder_current(&mut self, count: u64) -> ClosedNode {
        encode(self.level, &mut self.current, count)
    }

    /// Releases a held node when the caller knows the level goes on after this point with
    /// nodes it keeps (an edit that resynchronized with the old boundaries).
    pub(crate) fn release_held(&mut self) {
        debug_assert!(self.at_boundary());
        if let Some((mut held, count)) = self.held.take() {
            let node = encode(self.level, &mut held, count);
            self.ready.push(node);
            self.spare = held;
        }
    }

    /// Ends the level: closes the open node, joining a lone trailing internal entry to the
    /// node before it.
    pub(crate) fn finish(&mut self) {
        if self.level > 0 && self.current.len() == 1 {
            if let Some((mut held, held_count)) = self.held.take() {
                held.append(&mut self.current);
                let count = held_count + std::mem::take(&mut self.current_count);
                self.current_size = 0;
                let node = encode(self.level, &mut held, count);
                self.ready.push(node);
                self.spare = held;
                return;
            }
        }
        if !self.current.is_empty() {
            self.close_current();
        }
        self.release_held();
    }
}

fn encode(level: u8, builder: &mut NodeBuilder, count: u64) -> ClosedNode {
    let last_key = builder.last_key().map(<[u8]>::to_vec).unwrap_or_default();
    let bytes = meter::measure(Work::Encode, 0, || builder.encode(level));
    ClosedNode {
        level,
        bytes,
        last_key,
        count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_rises_with_size_and_saturates() {
        let small = split_threshold(1024, 32);
        let target = split_threshold(4096, 32);
        let large = split_threshold(12_000, 32);
        assert!(small < target && target < large);
        assert_eq!(split_threshold(1 << 20, 1 << 12), 1 << 32);
    }

    #[test]
    fn boundary_hash_depends_on_level() {
        assert_ne!(boundary_hash(0, b"key"), boundary_hash(1, b"key"));
        assert_eq!(boundary_hash(3, b"key"), boundary_hash(3, b"key"));
    }

    #[test]
    fn the_division_free_test_is_the_threshold_test() {
        for size in [
            0, 1, 511, 512, 1000, 4096, 4519, 9000, 16_383, 16_384, 70_000,
        ] {
            for entry in [1, 9, 35, 300, 4096, 65_600] {
                let threshold = split_threshold(size, entry);
                for hash in [0, 1, 1 << 20, u32::MAX / 2, u32::MAX - 1, u32::MAX] {
                    assert_eq!(
                        below_threshold(hash, size, entry),
                        u64::from(hash) < threshold,
                        "size {size} entry {entry} hash {hash}"
                    );
                }
                // Either side of the threshold itself.
                for hash in [threshold.saturating_sub(1), threshold, threshold + 1] {
                    if let Ok(hash) = u32::try_from(hash) {
                        assert_eq!(
                            below_threshold(hash, size, entry),
                            u64::from(hash) < threshold
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn hard_limits_hold() {
        assert!(!is_boundary(0, b"k", 10, NODE_BYTES_MIN - 1, 5));
        assert!(is_boundary(0, b"k", 10, NODE_SPLIT_BYTES_MAX, 5));
        assert!(!is_boundary(1, b"k", 10, NODE_SPLIT_BYTES_MAX, 1));
    }
}
