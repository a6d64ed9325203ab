//! Byte layout of tree nodes: the only place that knows it. `docs/format.md` specifies it;
//! the golden vectors in `tests/golden.rs` pin it.
//!
//! ```text
//! offset        size          field
//! 0             1             format version (NODE_FORMAT_VERSION)
//! 1             1             level (0 = leaf)
//! 2             4             n: entry count, u32 little-endian
//! 6             4 × (n + 1)   key offsets, u32 LE, relative to the key region; first is 0
//! 6 + 4(n+1)    4 × (n + 1)   value offsets, u32 LE, relative to the value region; first is 0
//! H = 6+8(n+1)  K             key region, K = last key offset
//! H + K         V             value region, V = last value offset; the chunk ends here
//! ```
//! Entry `i` has key `keys[ko[i]..ko[i+1]]` and value `values[vo[i]..vo[i+1]]`, so a
//! binary search reads two offsets and one key per probe and allocates nothing.
//! Keys are strictly increasing. In an internal node (level ≥ 1) each value is a
//! [`ChildRef`]: the child's 32-byte address then its subtree entry count as u64 LE; each
//! key is the last key of that child's subtree.

use crate::error::{MerkleError, MerkleResult};
use crate::limits::{KEY_BYTES_MAX, TREE_LEVEL_MAX, VALUE_BYTES_MAX};
use rnt_store::{Address, ADDRESS_BYTES};

/// Version byte that starts every node. Bump it (and add a decoder) for any layout change.
pub const NODE_FORMAT_VERSION: u8 = 1;

/// Bytes before the offset tables.
pub(crate) const NODE_HEADER_BYTES: usize = 6;

/// Bytes of an internal node's value: child address plus u64 subtree count.
pub const CHILD_REF_BYTES: usize = ADDRESS_BYTES + 8;

/// An internal entry's value: which child, and how many leaf entries it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChildRef {
    /// The child node's address.
    pub address: Address,
    /// Leaf entries in the child's subtree.
    pub count: u64,
}

impl ChildRef {
    /// The 40-byte encoding stored as an internal entry's value.
    pub fn encode(&self) -> [u8; CHILD_REF_BYTES] {
        let mut out = [0u8; CHILD_REF_BYTES];
        out[..ADDRESS_BYTES].copy_from_slice(self.address.as_bytes());
        out[ADDRESS_BYTES..].copy_from_slice(&self.count.to_le_bytes());
        out
    }

    /// Decodes an internal entry's value; `None` if it is not exactly 40 bytes.
    pub fn decode(bytes: &[u8]) -> Option<ChildRef> {
        if bytes.len() != CHILD_REF_BYTES {
            return None;
        }
        let address = Address::from_slice(&bytes[..ADDRESS_BYTES])?;
        let count = u64::from_le_bytes(bytes[ADDRESS_BYTES..].try_into().ok()?);
        Some(ChildRef { address, count })
    }
}

/// A run of consecutive entries `a..b` of a node as they lie in its chunk, borrowed: the
/// bytes a builder appends whole ([`NodeBuilder::extend_run`]).
pub(crate) struct EntryRun<'n> {
    /// The keys' bytes, back to back.
    pub(crate) keys: &'n [u8],
    /// The values' bytes, back to back.
    pub(crate) values: &'n [u8],
    /// The node's key offset table from entry `a` to `b` (`b − a + 1` little-endian `u32`s).
    pub(crate) key_offsets: &'n [u8],
    /// The node's value offset table from entry `a` to `b`.
    pub(crate) value_offsets: &'n [u8],
}

impl EntryRun<'_> {
    /// Entries in the run.
    pub(crate) fn len(&self) -> usize {
        self.key_offsets.len() / 4 - 1
    }
}

/// Accumulates the entries of one node and encodes it. Reused across nodes to avoid
/// allocation: [`NodeBuilder::encode`] leaves it empty.
#[derive(Default)]
pub(crate) struct NodeBuilder {
    keys: Vec<u8>,
    values: Vec<u8>,
    key_ends: Vec<u32>,
    value_ends: Vec<u32>,
}

impl NodeBuilder {
    /// A builder with room for a node of about `bytes` keys and values, so that filling it
    /// does not grow its buffers entry by entry.
    pub(crate) fn with_capacity(bytes: usize) -> NodeBuilder {
        let entries = bytes / 16;
        NodeBuilder {
            keys: Vec::with_capacity(bytes),
            values: Vec::with_capacity(bytes / 2),
            key_ends: Vec::with_capacity(entries),
            value_ends: Vec::with_capacity(entries),
        }
    }

    /// Entries added since the last encode.
    pub(crate) fn len(&self) -> usize {
        self.key_ends.len()
    }

    /// Whether no entry has been added since the last encode.
    pub(crate) fn is_empty(&self) -> bool {
        self.key_ends.is_empty()
    }

    /// The last key added.
    pub(crate) fn last_key(&self) -> Option<&[u8]> {
        let end = *self.key_ends.last()? as usize;
        let start = if self.key_ends.len() >= 2 {
            self.key_ends[self.key_ends.len() - 2] as usize
        } else {
            0
        };
        Some(&self.keys[start..end])
    }

    /// Appends an entry; the caller guarantees key order and size limits.
    pub(crate) fn push(&mut self, key: &[u8], value: &[u8]) {
        debug_assert!(
            key.len() <= KEY_BYTES_MAX && value.len() <= VALUE_BYTES_MAX.max(CHILD_REF_BYTES)
        );
        debug_assert!(
            self.last_key().is_none_or(|last| last < key),
            "node keys must increase"
        );
        self.keys.extend_from_slice(key);
        self.values.extend_from_slice(value);
        self.key_ends.push(offset(self.keys.len()));
        self.value_ends.push(offset(self.values.len()));
    }

    /// Appends a run of another node's entries whole; the caller guarantees key order and
    /// that the run follows the last key added.
    pub(crate) fn extend_run(&mut self, run: &EntryRun<'_>) {
        debug_assert!(
            run.len() == 0
                || self.last_key().is_none_or(|last| {
                    let first_end = read_u32(run.key_offsets, 4) - read_u32(run.key_offsets, 0);
                    last < &run.keys[..first_end]
                }),
            "node keys must increase"
        );
        let key_base = self.keys.len();
        let value_base = self.values.len();
        let key_start = read_u32(run.key_offsets, 0);
        let value_start = read_u32(run.value_offsets, 0);
        self.keys.extend_from_slice(run.keys);
        self.values.extend_from_slice(run.values);
        self.key_ends.extend(
            run.key_offsets[4..]
                .chunks_exact(4)
                .map(|word| offset(key_base + read_u32(word, 0) - key_start)),
        );
        self.value_ends.extend(
            run.value_offsets[4..]
                .chunks_exact(4)
                .map(|word| offset(value_base + read_u32(word, 0) - value_start)),
        );
    }

    /// Moves every entry of `other` to the end of `self`.
    pub(crate) fn append(&mut self, other: &mut NodeBuilder) {
        let key_base = offset(self.keys.len());
        let value_base = offset(self.values.len());
        self.keys.extend_from_slice(&other.keys);
        self.values.extend_from_slice(&other.values);
        self.key_ends
            .extend(other.key_ends.iter().map(|e| e + key_base));
        self.value_ends
            .extend(other.value_ends.iter().map(|e| e + value_base));
        other.clear();
    }

    /// Drops every entry.
    pub(crate) fn clear(&mut self) {
        self.keys.clear();
        self.values.clear();
        self.key_ends.clear();
        self.value_ends.clear();
    }

    /// Encodes the node at `level` and clears the builder.
    pub(crate) fn encode(&mut self, level: u8) -> Vec<u8> {
        let n = self.key_ends.len();
        let header = NODE_HEADER_BYTES + 8 * (n + 1);
        let mut out = Vec::with_capacity(header + self.keys.len() + self.values.len());
        out.push(NODE_FORMAT_VERSION);
        out.push(level);
        out.extend_from_slice(&offset(n).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        for end in &self.key_ends {
            out.extend_from_slice(&end.to_le_bytes());
        }
        out.extend_from_slice(&0u32.to_le_bytes());
        for end in &self.value_ends {
            out.extend_from_slice(&end.to_le_bytes());
        }
        out.extend_from_slice(&self.keys);
        out.extend_from_slice(&self.values);
        self.clear();
        out
    }
}

/// Where the parts of a node lie in its chunk; produced by [`decode_layout`] after checking
/// every structural rule, so accessors can index without further checks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeLayout {
    pub(crate) level: u8,
    pub(crate) len: usize,
    pub(crate) keys_at: usize,
    pub(crate) values_at: usize,
}

impl NodeLayout {
    pub(crate) fn key_offsets_at(&self) -> usize {
        NODE_HEADER_BYTES
    }

    pub(crate) fn value_offsets_at(&self) -> usize {
        NODE_HEADER_BYTES + 4 * (self.len + 1)
    }
}

/// The layout of a node this process just encoded with [`NodeBuilder::encode`]: read from
/// the header without re-checking what the builder guarantees (the full check runs in debug
/// builds, and on every node read back from a store).
pub(crate) fn built_layout(bytes: &[u8]) -> NodeLayout {
    let len = read_u32(bytes, 2);
    let keys_at = NODE_HEADER_BYTES + 8 * (len + 1);
    let key_total = read_u32(bytes, NODE_HEADER_BYTES + 4 * len);
    NodeLayout {
        level: bytes[1],
        len,
        keys_at,
        values_at: keys_at + key_total,
    }
}

/// Reads the u32 LE at `at`; the caller has checked bounds.
#[inline]
pub(crate) fn read_u32(bytes: &[u8], at: usize) -> usize {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word) as usize
}

/// Checks a node's bytes against every rule of the format (version, level, offsets,
/// key order, sizes, child refs) and returns its layout plus its subtree entry count.
///
/// The eleven checks of `docs/format.md` §4.3 in their order, in three steps: the header,
/// the regions its offset tables delimit, and the entries.
pub(crate) fn decode_layout(address: &Address, bytes: &[u8]) -> MerkleResult<(NodeLayout, u64)> {
    let corrupt = |detail: String| MerkleError::Corrupted {
        address: *address,
        detail,
    };
    let (level, len, header) = check_header(bytes, &corrupt)?;
    let layout = check_regions(bytes, level, len, header, &corrupt)?;
    let count = check_entries(bytes, &layout, &corrupt)?;
    Ok((layout, count))
}

/// §4.3 checks 1–4: the header's length, version byte and level, and that the offset
/// tables of its entry count fit. Returns the level, the entry count and the header's
/// length (where the key region starts).
fn check_header(
    bytes: &[u8],
    corrupt: &dyn Fn(String) -> MerkleError,
) -> MerkleResult<(u8, usize, usize)> {
    if bytes.len() < NODE_HEADER_BYTES + 8 {
        return Err(corrupt(format!(
            "node of {} bytes is shorter than a header",
            bytes.len()
        )));
    }
    if bytes[0] != NODE_FORMAT_VERSION {
        return Err(corrupt(format!(
            "unknown node format version {} (this build reads {})",
            bytes[0], NODE_FORMAT_VERSION
        )));
    }
    let level = bytes[1];
    if level > TREE_LEVEL_MAX {
        return Err(corrupt(format!(
            "node level {level} exceeds the limit {TREE_LEVEL_MAX}"
        )));
    }
    let len = read_u32(bytes, 2);
    let header = (len + 1)
        .checked_mul(8)
        .and_then(|t| t.checked_add(NODE_HEADER_BYTES))
        .filter(|&h| h <= bytes.len())
        .ok_or_else(|| {
            corrupt(format!(
                "entry count {len} does not fit in {} bytes",
                bytes.len()
            ))
        })?;
    Ok((level, len, header))
}

/// §4.3 checks 5–7: both offset tables, and that the key and value regions they delimit
/// end exactly where the node does. Returns the checked layout.
fn check_regions(
    bytes: &[u8],
    level: u8,
    len: usize,
    header: usize,
    corrupt: &dyn Fn(String) -> MerkleError,
) -> MerkleResult<NodeLayout> {
    let layout_partial = NodeLayout {
        level,
        len,
        keys_at: header,
        values_at: 0,
    };
    let key_total = check_offsets(bytes, layout_partial.key_offsets_at(), len, "key", corrupt)?;
    let value_total = check_offsets(
        bytes,
        layout_partial.value_offsets_at(),
        len,
        "value",
        corrupt,
    )?;
    if header + key_total + value_total != bytes.len() {
        return Err(corrupt(format!(
            "regions end at byte {} but the node has {} bytes",
            header + key_total + value_total,
            bytes.len()
        )));
    }
    Ok(NodeLayout {
        level,
        len,
        keys_at: header,
        values_at: header + key_total,
    })
}

/// §4.3 checks 8–11: an internal node has entries, keys are within the limit and strictly
/// increasing, a leaf's values are within the limit, an internal node's values are child
/// references to non-empty subtrees. Returns the subtree entry count.
fn check_entries(
    bytes: &[u8],
    layout: &NodeLayout,
    corrupt: &dyn Fn(String) -> MerkleError,
) -> MerkleResult<u64> {
    let (level, len) = (layout.level, layout.len);
    if level > 0 && len == 0 {
        return Err(corrupt("internal node with no entries".to_string()));
    }
    let mut count: u64 = if level == 0 { len as u64 } else { 0 };
    let mut previous: Option<&[u8]> = None;
    for i in 0..len {
        let key = slice_of(bytes, layout, i, true);
        if key.len() > KEY_BYTES_MAX {
            return Err(corrupt(format!(
                "key {i} has {} bytes, over the limit",
                key.len()
            )));
        }
        if previous.is_some_and(|p| p >= key) {
            return Err(corrupt(format!("keys out of order at entry {i}")));
        }
        previous = Some(key);
        let value = slice_of(bytes, layout, i, false);
        if level == 0 {
            if value.len() > VALUE_BYTES_MAX {
                return Err(corrupt(format!(
                    "value {i} has {} bytes, over the limit",
                    value.len()
                )));
            }
        } else {
            count = count
                .checked_add(check_child(value, i, corrupt)?)
                .ok_or_else(|| corrupt("subtree counts overflow".to_string()))?;
        }
    }
    Ok(count)
}

/// §4.3 check 11 for entry `i` of an internal node: its value is a child reference to a
/// non-empty subtree. Returns the child's entry count.
fn check_child(
    value: &[u8],
    i: usize,
    corrupt: &dyn Fn(String) -> MerkleError,
) -> MerkleResult<u64> {
    let child = ChildRef::decode(value).ok_or_else(|| {
        corrupt(format!(
            "entry {i} is not a {CHILD_REF_BYTES}-byte child reference"
        ))
    })?;
    if child.count == 0 {
        return Err(corrupt(format!("entry {i} references an empty subtree")));
    }
    Ok(child.count)
}

fn check_offsets(
    bytes: &[u8],
    at: usize,
    len: usize,
    what: &str,
    corrupt: &dyn Fn(String) -> MerkleError,
) -> MerkleResult<usize> {
    if read_u32(bytes, at) != 0 {
        return Err(corrupt(format!("first {what} offset is not 0")));
    }
    let mut previous = 0usize;
    for i in 1..=len {
        let offset = read_u32(bytes, at + 4 * i);
        if offset < previous || offset > bytes.len() {
            return Err(corrupt(format!(
                "{what} offset {i} is out of order or out of bounds"
            )));
        }
        previous = offset;
    }
    Ok(previous)
}

/// Entry `i`'s key (`key = true`) or value; the layout has been checked.
#[inline]
pub(crate) fn slice_of<'a>(bytes: &'a [u8], layout: &NodeLayout, i: usize, key: bool) -> &'a [u8] {
    debug_assert!(i < layout.len);
    let (table, region) = if key {
        (layout.key_offsets_at(), layout.keys_at)
    } else {
        (layout.value_offsets_at(), layout.values_at)
    };
    let start = read_u32(bytes, table + 4 * i);
    let end = read_u32(bytes, table + 4 * (i + 1));
    &bytes[region + start..region + end]
}

/// An offset or count within one node as the format stores it (u32). A node holds far
/// fewer bytes than 2^32 (entries are bounded by `KEY_BYTES_MAX`, nodes split near
/// `NODE_BYTES_TARGET`), so a larger one is a bug.
fn offset(n: usize) -> u32 {
    u32::try_from(n).expect("a node's offsets fit the format's u32")
}
