//! Reads: point lookup, ordered range and prefix scans, and rank (entries before a key).

use crate::node_store::NodeStore;
use crate::{MerkleResult, Node};
use rnt_store::Address;
use std::ops::Bound;
use std::sync::Arc;

/// The value stored under `key`, if any.
pub(crate) fn get(store: &NodeStore, root: &Address, key: &[u8]) -> MerkleResult<Option<Vec<u8>>> {
    if let Some(found) = store.get_cached(root, key) {
        return Ok(found);
    }
    let mut node = store.read(root)?;
    while !node.is_leaf() {
        let index = match node.search(key) {
            Ok(i) => i,
            Err(i) if i < node.len() => i,
            Err(_) => return Ok(None),
        };
        node = store.read(&node.child(index).address)?;
    }
    match node.search(key) {
        Ok(i) => {
            store.count_entries_read(1);
            Ok(Some(node.value(i).to_vec()))
        }
        Err(_) => Ok(None),
    }
}

/// How many entries have keys strictly below `key`: O(depth) through subtree counts.
pub(crate) fn rank(store: &NodeStore, root: &Address, key: &[u8]) -> MerkleResult<u64> {
    let mut node = store.read(root)?;
    let mut below = 0u64;
    loop {
        let position = match node.search(key) {
            Ok(i) | Err(i) => i,
        };
        if node.is_leaf() {
            return Ok(below + position as u64);
        }
        if position >= node.len() {
            return Ok(below + node.subtree_count());
        }
        below += (0..position).map(|i| node.child(i).count).sum::<u64>();
        node = store.read(&node.child(position).address)?;
    }
}

/// A position among a tree's leaf entries, moving forward. Entries are borrowed from the
/// cached node, so scanning allocates nothing per entry.
pub struct Cursor {
    store: NodeStore,
    /// From the root to a leaf: each node and the index of the entry taken.
    path: Vec<(Arc<Node>, usize)>,
    end: Bound<Vec<u8>>,
}

impl Cursor {
    /// A cursor at the first entry of the tree at `root` within `(start, end)`.
    pub(crate) fn new(
        store: &NodeStore,
        root: &Address,
        start: Bound<&[u8]>,
        end: Bound<Vec<u8>>,
    ) -> MerkleResult<Cursor> {
        let mut cursor = Cursor {
            store: store.clone(),
            path: Vec::new(),
            end,
        };
        let mut node = store.read(root)?;
        loop {
            let index = match start {
                Bound::Unbounded => 0,
                Bound::Included(key) | Bound::Excluded(key) => {
                    let found = node.search(key);
                    match (node.is_leaf(), found, start) {
                        (true, Ok(i), Bound::Excluded(_)) => i + 1,
                        (_, Ok(i), _) | (_, Err(i), _) => i,
                    }
                }
            };
            if node.is_leaf() {
                cursor.path.push((node, index));
                break;
            }
            if index >= node.len() {
                // Every key here is below `start`: park past the end of this node.
                cursor.path.push((node, index));
                break;
            }
            let child = store.read(&node.child(index).address)?;
            cursor.path.push((node, index));
            node = child;
        }
        cursor.settle()?;
        Ok(cursor)
    }

    /// Moves past exhausted nodes to the next entry, or empties the path at the end.
    fn settle(&mut self) -> MerkleResult<()> {
        loop {
            let Some((node, index)) = self.path.last() else {
                return Ok(());
            };
            if *index < node.len() {
                if node.is_leaf() {
                    self.store.count_entries_read(1);
                    return Ok(());
                }
                let child = self.store.read(&node.child(*index).address)?;
                self.path.push((child, 0));
                continue;
            }
            self.path.pop();
            if let Some((_, parent_index)) = self.path.last_mut() {
                *parent_index += 1;
            }
        }
    }

    /// The current entry, or `None` past the end of the range.
    pub fn entry(&self) -> Option<(&[u8], &[u8])> {
        let (leaf, index) = self.path.last()?;
        debug_assert!(leaf.is_leaf() && *index < leaf.len());
        let key = leaf.key(*index);
        let in_range = match &self.end {
            Bound::Unbounded => true,
            Bound::Included(end) => key <= end.as_slice(),
            Bound::Excluded(end) => key < end.as_slice(),
        };
        in_range.then(|| (key, leaf.value(*index)))
    }

    /// Moves to the next entry.
    pub fn advance(&mut self) -> MerkleResult<()> {
        if let Some((_, index)) = self.path.last_mut() {
            *index += 1;
        }
        self.settle()
    }
}

/// A position among a tree's leaf entries, moving backward: the greatest key first. What a
/// top-k over a descending order reads (the front of its partition is the back of the
/// index range).
pub struct ReverseCursor {
    store: NodeStore,
    /// From the root to a leaf: each internal node with the index of the child taken, and
    /// the leaf with one past the index of the current entry (0: the leaf is used up).
    path: Vec<(Arc<Node>, usize)>,
    /// The least key in range (included).
    start: Vec<u8>,
}

impl ReverseCursor {
    /// A cursor at the last entry of the tree at `root` within `[start, end)`.
    pub(crate) fn new(
        store: &NodeStore,
        root: &Address,
        start: &[u8],
        end: Bound<Vec<u8>>,
    ) -> MerkleResult<ReverseCursor> {
        let mut cursor = ReverseCursor {
            store: store.clone(),
            path: Vec::new(),
            start: start.to_vec(),
        };
        let mut node = store.read(root)?;
        loop {
            let position = match &end {
                Bound::Unbounded => node.len(),
                Bound::Excluded(key) => match node.search(key) {
                    Ok(i) | Err(i) => i,
                },
                Bound::Included(key) => match node.search(key) {
                    Ok(i) => i + 1,
                    Err(i) => i,
                },
            };
            if node.is_leaf() || node.is_empty() {
                let position = if node.is_leaf() { position } else { 0 };
                cursor.path.push((node, position));
                break;
            }
            // A child's key is the greatest key under it: the keys before `end` are in
            // the child at `position` (or the last one) and those before it.
            let index = position.min(node.len() - 1);
            let child = store.read(&node.child(index).address)?;
            cursor.path.push((node, index));
            node = child;
        }
        cursor.settle()?;
        Ok(cursor)
    }

    /// Moves back past used-up leaves to the previous entry, or empties the path.
    fn settle(&mut self) -> MerkleResult<()> {
        loop {
            let Some((node, index)) = self.path.last() else {
                return Ok(());
            };
            if node.is_leaf() && *index > 0 {
                self.store.count_entries_read(1);
                return Ok(());
            }
            // This node is used up: back up to the nearest ancestor with a child before
            // the one taken, and down that child's last entries.
            self.path.pop();
            loop {
                let Some((parent, index)) = self.path.last_mut() else {
                    return Ok(());
                };
                if *index == 0 {
                    self.path.pop();
                    continue;
                }
                *index -= 1;
                let child = self.store.read(&parent.child(*index).address)?;
                self.descend_last(child)?;
                break;
            }
        }
    }

    /// Pushes `node` and the path to its last entry.
    fn descend_last(&mut self, mut node: Arc<Node>) -> MerkleResult<()> {
        while !node.is_leaf() && !node.is_empty() {
            let index = node.len() - 1;
            let child = self.store.read(&node.child(index).address)?;
            self.path.push((node, index));
            node = child;
        }
        let len = if node.is_leaf() { node.len() } else { 0 };
        self.path.push((node, len));
        Ok(())
    }

    /// The current entry, or `None` before the start of the range.
    pub fn entry(&self) -> Option<(&[u8], &[u8])> {
        let (leaf, index) = self.path.last()?;
        debug_assert!(leaf.is_leaf() && *index > 0 && *index <= leaf.len());
        let key = leaf.key(*index - 1);
        (key >= self.start.as_slice()).then(|| (key, leaf.value(*index - 1)))
    }

    /// Moves to the previous entry.
    pub fn advance(&mut self) -> MerkleResult<()> {
        if let Some((_, index)) = self.path.last_mut() {
            *index = index.saturating_sub(1);
        }
        self.settle()
    }
}

/// An iterator of owned `(key, value)` pairs over a [`Cursor`].
pub struct Entries {
    cursor: Option<Cursor>,
    pending_error: Option<crate::MerkleError>,
}

impl Entries {
    pub(crate) fn new(cursor: MerkleResult<Cursor>) -> Entries {
        match cursor {
            Ok(cursor) => Entries {
                cursor: Some(cursor),
                pending_error: None,
            },
            Err(error) => Entries {
                cursor: None,
                pending_error: Some(error),
            },
        }
    }
}

impl Iterator for Entries {
    type Item = MerkleResult<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(error) = self.pending_error.take() {
            return Some(Err(error));
        }
        let cursor = self.cursor.as_mut()?;
        let (key, value) = cursor.entry().map(|(k, v)| (k.to_vec(), v.to_vec()))?;
        if let Err(error) = cursor.advance() {
            self.cursor = None;
            return Some(Err(error));
        }
        Some(Ok((key, value)))
    }
}
