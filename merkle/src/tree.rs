//! [`Tree`]: a prolly tree named by its root address, and every operation on it.

use crate::build::{write_empty_leaf, LevelStack};
use crate::cursor::{self, Cursor, Entries, ReverseCursor};
use crate::diff::Diff;
use crate::edit::{edit_tree, Edit};
use crate::node_store::NodeStore;
use crate::{MerkleError, MerkleResult, KEY_BYTES_MAX, VALUE_BYTES_MAX};
use rnt_store::Address;
use std::ops::Bound;

/// An immutable sorted map from byte keys to byte values, stored as a prolly tree and named
/// by its root node's address. Equal maps have equal roots, however they were built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tree {
    root: Address,
}

impl Tree {
    /// The tree whose root node is stored at `root` (not read until used).
    pub const fn from_root(root: Address) -> Tree {
        Tree { root }
    }

    /// The root node's address: the tree's identity.
    pub const fn root(&self) -> Address {
        self.root
    }

    /// Writes and returns the empty tree (a leaf with no entries).
    pub fn empty(store: &NodeStore) -> MerkleResult<Tree> {
        let mut writer = store.writer();
        let root = write_empty_leaf(&mut writer)?;
        writer.flush()?;
        Ok(Tree { root })
    }

    /// Bulk-builds a tree from entries in strictly increasing key order, in one streaming
    /// pass. Fails on out-of-order keys or oversized entries, writing no root.
    pub fn build<K, V, I>(store: &NodeStore, entries: I) -> MerkleResult<Tree>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
        I: IntoIterator<Item = (K, V)>,
    {
        let mut writer = store.writer();
        let mut levels = LevelStack::new(0);
        let mut previous: Option<Vec<u8>> = None;
        for (position, (key, value)) in entries.into_iter().enumerate() {
            let (key, value) = (key.as_ref(), value.as_ref());
            check_entry(key, Some(value))?;
            if previous.as_deref().is_some_and(|p| p >= key) {
                return Err(MerkleError::Unsorted {
                    position: position as u64,
                });
            }
            levels.push(key, value, &mut writer)?;
            match &mut previous {
                Some(p) => {
                    p.clear();
                    p.extend_from_slice(key);
                }
                None => previous = Some(key.to_vec()),
            }
        }
        let root = match levels.finish(&mut writer)? {
            Some(root) => root,
            None => write_empty_leaf(&mut writer)?,
        };
        writer.flush()?;
        Ok(Tree { root })
    }

    /// Applies a batch of edits — `(key, Some(value))` puts, `(key, None)` deletes — in
    /// strictly increasing key order, re-chunking only around them. Deleting an absent key
    /// or putting an equal value changes nothing.
    pub fn edit<I>(&self, store: &NodeStore, edits: I) -> MerkleResult<Tree>
    where
        I: IntoIterator<Item = Edit>,
    {
        let edits: Vec<Edit> = edits.into_iter().collect();
        check_edits(&edits)?;
        Ok(Tree {
            root: edit_tree(store, self.root, &edits, None)?,
        })
    }

    /// [`Tree::edit`], also telling for each edit whether it changed the content: a put of
    /// an absent key or of another value than the key holds, a delete of a present key. A
    /// commit's base delta is its changing edits, found without a second pass.
    pub fn edit_reporting(
        &self,
        store: &NodeStore,
        edits: &[Edit],
    ) -> MerkleResult<(Tree, Vec<bool>)> {
        check_edits(edits)?;
        let mut changed = vec![false; edits.len()];
        let root = edit_tree(store, self.root, edits, Some(&mut changed))?;
        Ok((Tree { root }, changed))
    }

    /// The value under `key`.
    pub fn get(&self, store: &NodeStore, key: &[u8]) -> MerkleResult<Option<Vec<u8>>> {
        cursor::get(store, &self.root, key)
    }

    /// The value under each of `keys` (increasing, as an edit's keys are), `None` where
    /// absent: the same as [`Tree::get`] per key, with the leaves read ahead on a second
    /// thread when the keys are many (`prefetch`).
    pub fn get_many<K: AsRef<[u8]> + Sync>(
        &self,
        store: &NodeStore,
        keys: &[K],
    ) -> MerkleResult<Vec<Option<Vec<u8>>>> {
        let lookups = || {
            keys.iter()
                .map(|key| self.get(store, key.as_ref()))
                .collect()
        };
        if keys.len() < crate::prefetch::PREFETCH_KEYS_MIN {
            return lookups();
        }
        // Not counted as a visit: the lookups count their own.
        let root = store.warm(&self.root)?;
        if root.is_leaf() {
            return lookups();
        }
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let ahead = keys.iter().map(AsRef::as_ref);
            scope.spawn(|| crate::prefetch::prefetch_leaves(store, &root, ahead, &done));
            let values = lookups();
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            values
        })
    }

    /// Reads into the cache, until `done`, the leaves a diff with `other` will open (every
    /// leaf one tree holds and the other does not): for a second thread to run beside a
    /// diff expected to open many of them. Only the cache changes (`prefetch`).
    pub fn read_ahead_diff(
        &self,
        store: &NodeStore,
        other: &Tree,
        done: &std::sync::atomic::AtomicBool,
    ) {
        crate::prefetch::read_ahead_diff(store, &self.root, &other.root, done);
    }

    /// Number of entries (read from the root's subtree counts).
    pub fn count(&self, store: &NodeStore) -> MerkleResult<u64> {
        Ok(store.read(&self.root)?.subtree_count())
    }

    /// Number of entries with keys strictly below `key`, in O(depth).
    pub fn rank(&self, store: &NodeStore, key: &[u8]) -> MerkleResult<u64> {
        cursor::rank(store, &self.root, key)
    }

    /// Levels from the root to the leaves, counting both (1 for a single leaf).
    pub fn depth(&self, store: &NodeStore) -> MerkleResult<u32> {
        Ok(u32::from(store.read(&self.root)?.level()) + 1)
    }

    /// A cursor over entries with keys in `(start, end)`.
    pub fn cursor(
        &self,
        store: &NodeStore,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
    ) -> MerkleResult<Cursor> {
        Cursor::new(store, &self.root, start, end.map(<[u8]>::to_vec))
    }

    /// Every entry with a key in `(start, end)`, in key order.
    pub fn range(&self, store: &NodeStore, start: Bound<&[u8]>, end: Bound<&[u8]>) -> Entries {
        Entries::new(self.cursor(store, start, end))
    }

    /// Every entry, in key order.
    pub fn entries(&self, store: &NodeStore) -> Entries {
        self.range(store, Bound::Unbounded, Bound::Unbounded)
    }

    /// A cursor over entries whose keys start with `prefix`.
    pub fn prefix_cursor(&self, store: &NodeStore, prefix: &[u8]) -> MerkleResult<Cursor> {
        let end = match prefix_successor(prefix) {
            Some(successor) => Bound::Excluded(successor),
            None => Bound::Unbounded,
        };
        Cursor::new(store, &self.root, Bound::Included(prefix), end)
    }

    /// A cursor over entries whose keys start with `prefix`, from the greatest key down.
    pub fn prefix_cursor_back(
        &self,
        store: &NodeStore,
        prefix: &[u8],
    ) -> MerkleResult<ReverseCursor> {
        let end = match prefix_successor(prefix) {
            Some(successor) => Bound::Excluded(successor),
            None => Bound::Unbounded,
        };
        ReverseCursor::new(store, &self.root, prefix, end)
    }

    /// A cursor over entries with keys in `[start, end)`, from the greatest key down.
    pub fn cursor_back(
        &self,
        store: &NodeStore,
        start: &[u8],
        end: Bound<&[u8]>,
    ) -> MerkleResult<ReverseCursor> {
        ReverseCursor::new(store, &self.root, start, end.map(<[u8]>::to_vec))
    }

    /// Every entry whose key starts with `prefix`, in key order.
    pub fn scan_prefix(&self, store: &NodeStore, prefix: &[u8]) -> Entries {
        Entries::new(self.prefix_cursor(store, prefix))
    }

    /// The differences from `self` to `other`, in key order, skipping shared subtrees.
    pub fn diff(&self, store: &NodeStore, other: &Tree) -> MerkleResult<Diff> {
        Diff::new(store, self.root, other.root)
    }
}

/// The smallest key greater than every key starting with `prefix` (`None` when there is
/// none: the prefix is empty or all 0xFF).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut successor = prefix.to_vec();
    while let Some(last) = successor.pop() {
        if last < 0xff {
            successor.push(last + 1);
            return Some(successor);
        }
    }
    None
}

/// Every edit's key and value within the limits, keys strictly increasing.
fn check_edits(edits: &[Edit]) -> MerkleResult<()> {
    for (position, (key, value)) in edits.iter().enumerate() {
        check_entry(key, value.as_deref())?;
        if position > 0 && edits[position - 1].0 >= *key {
            return Err(MerkleError::Unsorted {
                position: position as u64,
            });
        }
    }
    Ok(())
}

fn check_entry(key: &[u8], value: Option<&[u8]>) -> MerkleResult<()> {
    if key.len() > KEY_BYTES_MAX {
        return Err(MerkleError::KeyTooLong {
            len: key.len(),
            max: KEY_BYTES_MAX,
        });
    }
    if let Some(value) = value {
        if value.len() > VALUE_BYTES_MAX {
            return Err(MerkleError::ValueTooLong {
                len: value.len(),
                max: VALUE_BYTES_MAX,
            });
        }
    }
    Ok(())
}
