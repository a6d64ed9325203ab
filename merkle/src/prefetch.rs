//! Reading ahead: on a second thread, bring into the cache the leaves a large batch of
//! sorted keys falls in, while the first thread edits or looks them up in order. Reading a
//! leaf (fetching, decompressing, re-hashing, decoding) is about a third of a large edit's
//! work; with the read ahead, the edit's own reads hit the cache.
//!
//! *Invariant: a prefetch only fills the cache, which holds verified nodes alone, and counts
//! no visit; so what an edit or lookup returns, and the work it reports, do not depend on
//! whether or how far the prefetch got.*

use crate::node_store::NodeStore;
use crate::Node;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Keys at or above which an edit or a batch lookup reads its leaves ahead on a second
/// thread: below it, the thread's start costs more than the reads it takes over.
pub(crate) const PREFETCH_KEYS_MIN: usize = 4096;

/// Reads into the cache, in order, every leaf under `root` that one of `keys` falls in
/// (keys in increasing order; others are still correct, only less read ahead), until
/// `done`. A node that cannot be read ends the prefetch: the reader that wants it reports
/// the problem.
pub(crate) fn prefetch_leaves<'k>(
    store: &NodeStore,
    root: &Arc<Node>,
    keys: impl Iterator<Item = &'k [u8]>,
    done: &AtomicBool,
) {
    // The last key of the leaf read last: keys up to it fall in that leaf.
    let mut covered: Option<Vec<u8>> = None;
    for key in keys {
        if done.load(Ordering::Relaxed) {
            return;
        }
        if covered.as_deref().is_some_and(|last| key <= last) {
            continue;
        }
        let mut node = root.clone();
        while !node.is_leaf() {
            let index = node.child_index_for(key);
            let address = node.child(index).address;
            covered = Some(node.key(index).to_vec());
            match store.warm(&address) {
                Ok(child) => node = child,
                Err(_) => return,
            }
        }
    }
}

/// Reads into the cache the leaves a diff of `from` and `to` will open — every leaf of one
/// tree that the other does not hold — in key order, until `done`: run beside a large diff
/// on another thread. It reads the two trees' internal nodes whole (about one in a hundred
/// of their nodes), so it pays only when the diff opens a good share of the leaves.
pub(crate) fn read_ahead_diff(
    store: &NodeStore,
    from: &rnt_store::Address,
    to: &rnt_store::Address,
    done: &AtomicBool,
) {
    let (Some(from_leaves), Some(to_leaves)) = (
        leaf_addresses(store, from, done),
        leaf_addresses(store, to, done),
    ) else {
        return;
    };
    let held_by_to: std::collections::HashSet<_> = to_leaves.iter().collect();
    let held_by_from: std::collections::HashSet<_> = from_leaves.iter().collect();
    let from_only = from_leaves.iter().filter(|a| !held_by_to.contains(a));
    let to_only = to_leaves.iter().filter(|a| !held_by_from.contains(a));
    for address in from_only.chain(to_only) {
        if done.load(Ordering::Relaxed) || store.warm(address).is_err() {
            return;
        }
    }
}

/// The addresses of the leaves under `root`, in key order, read from its internal nodes;
/// `None` when stopped or a node cannot be read.
fn leaf_addresses(
    store: &NodeStore,
    root: &rnt_store::Address,
    done: &AtomicBool,
) -> Option<Vec<rnt_store::Address>> {
    let mut level = vec![*root];
    loop {
        let mut below = Vec::new();
        for address in &level {
            if done.load(Ordering::Relaxed) {
                return None;
            }
            let node = store.warm(address).ok()?;
            if node.is_leaf() {
                return Some(level);
            }
            below.extend((0..node.len()).map(|i| node.child(i).address));
        }
        level = below;
    }
}
