//! Diff of two trees: walk both together, skip subtrees with equal addresses, and yield the
//! differing entries in key order.
//!
//! Each side is a stack of pending items in key order: subtrees not yet read, and leaf
//! entries. Equal subtrees on top of both stacks are dropped unread; otherwise the taller
//! subtree is opened (both when equally tall), until two entries meet and are compared.
//! Because node boundaries depend only on content, the two trees' nodes line up again
//! right after each change, so the cost is O(changes × depth) nodes.

use crate::node_store::NodeStore;
use crate::{MerkleResult, Node};
use rnt_store::Address;
use std::cmp::Ordering;
use std::sync::Arc;

/// One difference between the `from` tree and the `to` tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffEntry {
    /// `key` is in `to` only.
    Added {
        /// The key.
        key: Vec<u8>,
        /// Its value in `to`.
        value: Vec<u8>,
    },
    /// `key` is in `from` only.
    Removed {
        /// The key.
        key: Vec<u8>,
        /// Its value in `from`.
        value: Vec<u8>,
    },
    /// `key` is in both with different values.
    Changed {
        /// The key.
        key: Vec<u8>,
        /// Its value in `from`.
        old: Vec<u8>,
        /// Its value in `to`.
        new: Vec<u8>,
    },
}

impl DiffEntry {
    /// The key this difference is about.
    pub fn key(&self) -> &[u8] {
        match self {
            DiffEntry::Added { key, .. }
            | DiffEntry::Removed { key, .. }
            | DiffEntry::Changed { key, .. } => key,
        }
    }

    /// The edit that turns `from` into `to` at this key.
    pub fn to_edit(&self) -> crate::Edit {
        match self {
            DiffEntry::Added { key, value } => (key.clone(), Some(value.clone())),
            DiffEntry::Changed { key, new, .. } => (key.clone(), Some(new.clone())),
            DiffEntry::Removed { key, .. } => (key.clone(), None),
        }
    }
}

enum Item {
    Subtree { level: u8, address: Address },
    Entry { leaf: Arc<Node>, index: usize },
}

impl Item {
    fn level(&self) -> Option<u8> {
        match self {
            Item::Subtree { level, .. } => Some(*level),
            Item::Entry { .. } => None,
        }
    }
}

/// The differences between two trees, in key order. Reading stops at the first error.
pub struct Diff {
    store: NodeStore,
    from: Vec<Item>,
    to: Vec<Item>,
    failed: bool,
}

impl Diff {
    pub(crate) fn new(store: &NodeStore, from: Address, to: Address) -> MerkleResult<Diff> {
        let mut diff = Diff {
            store: store.clone(),
            from: Vec::new(),
            to: Vec::new(),
            failed: false,
        };
        if from != to {
            let from_root = store.read(&from)?;
            let to_root = store.read(&to)?;
            diff.from.push(Item::Subtree {
                level: from_root.level(),
                address: from,
            });
            diff.to.push(Item::Subtree {
                level: to_root.level(),
                address: to,
            });
        }
        Ok(diff)
    }

    fn step(&mut self) -> MerkleResult<Option<DiffEntry>> {
        let store = &self.store;
        loop {
            let action = match (self.from.last(), self.to.last()) {
                (None, None) => return Ok(None),
                (
                    Some(Item::Subtree { address: a, .. }),
                    Some(Item::Subtree { address: b, .. }),
                ) if a == b => Action::SkipBoth,
                (
                    Some(Item::Entry { leaf: a, index: i }),
                    Some(Item::Entry { leaf: b, index: j }),
                ) => match a.key(*i).cmp(b.key(*j)) {
                    Ordering::Less => Action::EmitFrom,
                    Ordering::Greater => Action::EmitTo,
                    Ordering::Equal => Action::Compare,
                },
                (Some(Item::Entry { .. }), None) => Action::EmitFrom,
                (None, Some(Item::Entry { .. })) => Action::EmitTo,
                (Some(a), b) => match (a.level(), b.and_then(Item::level)) {
                    (Some(x), Some(y)) if x == y => Action::OpenBoth,
                    (Some(x), Some(y)) if x < y => Action::OpenTo,
                    (Some(_), _) => Action::OpenFrom,
                    (None, _) => Action::OpenTo,
                },
                (None, Some(_)) => Action::OpenTo,
            };
            match action {
                Action::SkipBoth => {
                    self.from.pop();
                    self.to.pop();
                }
                Action::OpenFrom => open(store, &mut self.from)?,
                Action::OpenTo => open(store, &mut self.to)?,
                Action::OpenBoth => {
                    open(store, &mut self.from)?;
                    open(store, &mut self.to)?;
                }
                Action::EmitFrom => {
                    let (key, value) = pop_entry(store, &mut self.from);
                    return Ok(Some(DiffEntry::Removed { key, value }));
                }
                Action::EmitTo => {
                    let (key, value) = pop_entry(store, &mut self.to);
                    return Ok(Some(DiffEntry::Added { key, value }));
                }
                Action::Compare => {
                    // Equal entries are skipped without copying them.
                    let equal = match (self.from.last(), self.to.last()) {
                        (
                            Some(Item::Entry { leaf: a, index: i }),
                            Some(Item::Entry { leaf: b, index: j }),
                        ) => a.value(*i) == b.value(*j),
                        _ => unreachable!("compare() of a subtree"),
                    };
                    if equal {
                        skip_entry(store, &mut self.from);
                        skip_entry(store, &mut self.to);
                        continue;
                    }
                    let (key, old) = pop_entry(store, &mut self.from);
                    let (_, new) = pop_entry(store, &mut self.to);
                    return Ok(Some(DiffEntry::Changed { key, old, new }));
                }
            }
        }
    }
}

/// What the diff does next, decided from the tops of the two stacks.
enum Action {
    SkipBoth,
    OpenFrom,
    OpenTo,
    OpenBoth,
    EmitFrom,
    EmitTo,
    Compare,
}

/// Replaces the subtree on top of `stack` by its children (or its entries, for a leaf).
fn open(store: &NodeStore, stack: &mut Vec<Item>) -> MerkleResult<()> {
    let Some(Item::Subtree { address, .. }) = stack.pop() else {
        unreachable!("open() on an entry");
    };
    let node = store.read(&address)?;
    if node.is_leaf() {
        // One item stands for the rest of the leaf; `skip_entry` advances it in place.
        if !node.is_empty() {
            stack.push(Item::Entry {
                leaf: node,
                index: 0,
            });
        }
    } else {
        let level = node.level() - 1;
        for index in (0..node.len()).rev() {
            stack.push(Item::Subtree {
                level,
                address: node.child(index).address,
            });
        }
    }
    Ok(())
}

/// Pops the entry on top of `stack` as owned bytes.
fn pop_entry(store: &NodeStore, stack: &mut Vec<Item>) -> (Vec<u8>, Vec<u8>) {
    let Some(Item::Entry { leaf, index }) = stack.last() else {
        unreachable!("pop_entry() on a subtree");
    };
    let entry = (leaf.key(*index).to_vec(), leaf.value(*index).to_vec());
    skip_entry(store, stack);
    entry
}

/// Moves past the entry on top of `stack`, dropping the leaf's item after its last entry.
fn skip_entry(store: &NodeStore, stack: &mut Vec<Item>) {
    let Some(Item::Entry { leaf, index }) = stack.last_mut() else {
        unreachable!("skip_entry() on a subtree");
    };
    store.count_entries_read(1);
    *index += 1;
    if *index == leaf.len() {
        stack.pop();
    }
}

impl Iterator for Diff {
    type Item = MerkleResult<DiffEntry>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.step() {
            Ok(entry) => entry.map(Ok),
            Err(error) => {
                self.failed = true;
                Some(Err(error))
            }
        }
    }
}
