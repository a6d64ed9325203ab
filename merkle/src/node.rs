//! [`Node`]: a decoded, verified view over one node chunk.

use crate::chunker::ENTRY_OVERHEAD_BYTES;
use crate::codec::{decode_layout, read_u32, slice_of, ChildRef, EntryRun, NodeLayout};
use crate::error::MerkleResult;
use rnt_store::{Address, Chunk};
use std::cmp::Ordering;

/// One tree node, read and checked once, then shared. Accessors index into the chunk's
/// bytes through its offset tables without copying.
#[derive(Debug)]
pub struct Node {
    address: Address,
    bytes: Chunk,
    layout: NodeLayout,
    subtree_count: u64,
    /// The first 8 bytes of each key, big-endian, zero-padded: a compact search index.
    prefixes: Box<[u64]>,
}

#[inline]
fn prefix_of(key: &[u8]) -> u64 {
    if let Some(word) = key.first_chunk::<8>() {
        return u64::from_be_bytes(*word);
    }
    let mut word = [0u8; 8];
    word[..key.len()].copy_from_slice(key);
    u64::from_be_bytes(word)
}

impl Node {
    /// Checks `bytes` (already verified to hash to `address`) and wraps them.
    pub fn decode(address: Address, bytes: Chunk) -> MerkleResult<Node> {
        let (layout, subtree_count) = decode_layout(&address, &bytes)?;
        Ok(Node::with_layout(address, bytes, layout, subtree_count))
    }

    /// Wraps a node this process just built: `count` is its subtree count as the builder
    /// tracked it. Skips the structural checks of [`Node::decode`] in release builds.
    pub(crate) fn from_built(address: Address, bytes: Chunk, count: u64) -> MerkleResult<Node> {
        if cfg!(debug_assertions) {
            let node = Node::decode(address, bytes)?;
            debug_assert_eq!(node.subtree_count, count, "built node's count");
            return Ok(node);
        }
        let layout = crate::codec::built_layout(&bytes);
        Ok(Node::with_layout(address, bytes, layout, count))
    }

    /// The node whose checked `layout` is known, with its search index of key prefixes.
    fn with_layout(address: Address, bytes: Chunk, layout: NodeLayout, subtree_count: u64) -> Node {
        let prefixes = (0..layout.len)
            .map(|i| prefix_of(slice_of(&bytes, &layout, i, true)))
            .collect();
        Node {
            address,
            bytes,
            layout,
            subtree_count,
            prefixes,
        }
    }

    /// The node's address.
    pub fn address(&self) -> Address {
        self.address
    }

    /// The node's encoded bytes, shared.
    pub(crate) fn chunk(&self) -> &Chunk {
        &self.bytes
    }

    /// The node's encoded bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// 0 for a leaf, the height above the leaves otherwise.
    pub fn level(&self) -> u8 {
        self.layout.level
    }

    /// Whether this is a leaf.
    pub fn is_leaf(&self) -> bool {
        self.layout.level == 0
    }

    /// Number of entries in this node.
    pub fn len(&self) -> usize {
        self.layout.len
    }

    /// Whether the node has no entries (only the empty tree's root leaf).
    pub fn is_empty(&self) -> bool {
        self.layout.len == 0
    }

    /// Leaf entries under this node.
    pub fn subtree_count(&self) -> u64 {
        self.subtree_count
    }

    /// Entry `i`'s key.
    #[inline]
    pub fn key(&self, i: usize) -> &[u8] {
        slice_of(&self.bytes, &self.layout, i, true)
    }

    /// Entry `i`'s value (a leaf value, or an encoded [`ChildRef`] in an internal node).
    #[inline]
    pub fn value(&self, i: usize) -> &[u8] {
        slice_of(&self.bytes, &self.layout, i, false)
    }

    /// The measured bytes ([`crate::chunker::entry_bytes`]) of entries `0..i` together:
    /// what a chunker's open node held when the node's chunking reached entry `i`.
    #[inline]
    pub(crate) fn measured_before(&self, i: usize) -> usize {
        debug_assert!(i <= self.len());
        let keys = read_u32(&self.bytes, self.layout.key_offsets_at() + 4 * i);
        let values = read_u32(&self.bytes, self.layout.value_offsets_at() + 4 * i);
        keys + values + ENTRY_OVERHEAD_BYTES * i
    }

    /// Entries `a..b` as they lie in the node: their keys' bytes, their values' bytes and
    /// the stretch of each offset table that delimits them.
    pub(crate) fn run(&self, a: usize, b: usize) -> EntryRun<'_> {
        debug_assert!(a <= b && b <= self.len());
        let keys_table = self.layout.key_offsets_at();
        let values_table = self.layout.value_offsets_at();
        let offset = |table: usize, i: usize| read_u32(&self.bytes, table + 4 * i);
        let keys = self.layout.keys_at;
        let values = self.layout.values_at;
        EntryRun {
            keys: &self.bytes[keys + offset(keys_table, a)..keys + offset(keys_table, b)],
            values: &self.bytes[values + offset(values_table, a)..values + offset(values_table, b)],
            key_offsets: &self.bytes[keys_table + 4 * a..keys_table + 4 * (b + 1)],
            value_offsets: &self.bytes[values_table + 4 * a..values_table + 4 * (b + 1)],
        }
    }

    /// The last key in the node (the largest key under it).
    pub fn last_key(&self) -> Option<&[u8]> {
        self.len().checked_sub(1).map(|i| self.key(i))
    }

    /// Entry `i`'s child in an internal node.
    #[inline]
    pub fn child(&self, i: usize) -> ChildRef {
        debug_assert!(!self.is_leaf(), "child() of a leaf");
        // The layout check decoded every child ref once; they cannot fail now.
        ChildRef::decode(self.value(i)).expect("the layout check decoded every child ref")
    }

    /// Entry `i`'s child address in an internal node.
    #[inline]
    pub(crate) fn child_address(&self, i: usize) -> Address {
        let mut bytes = [0u8; 32];
        bytes.copy_from_slice(&self.value(i)[..32]);
        Address::from_bytes(bytes)
    }

    /// Binary search for `key`: `Ok(i)` when entry `i` has it, `Err(i)` for the position it
    /// would take.
    pub fn search(&self, key: &[u8]) -> Result<usize, usize> {
        // Narrow to the entries sharing the key's 8-byte prefix, then compare whole keys.
        // Zero padding keeps the order: prefix(a) < prefix(b) implies a < b.
        let p = prefix_of(key);
        let mut low = self.prefixes.partition_point(|&q| q < p);
        let mut high = low + self.prefixes[low..].partition_point(|&q| q <= p);
        while low < high {
            let mid = low + (high - low) / 2;
            match self.key(mid).cmp(key) {
                Ordering::Less => low = mid + 1,
                Ordering::Greater => high = mid,
                Ordering::Equal => return Ok(mid),
            }
        }
        Err(low)
    }

    /// In an internal node, the index of the child whose range holds `key`: the first entry
    /// whose last key is ≥ `key`, or the last entry when `key` is beyond them all.
    pub fn child_index_for(&self, key: &[u8]) -> usize {
        debug_assert!(!self.is_leaf() && !self.is_empty());
        match self.search(key) {
            Ok(i) => i,
            Err(i) => i.min(self.len() - 1),
        }
    }
}
