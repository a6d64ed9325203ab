//! Batch edits: apply sorted puts and deletes level by level, re-chunking only from the
//! node holding the first edit of each run until the new boundaries meet the old ones.
//!
//! Each level turns its edits into edits of the level above: the old nodes a run replaced
//! are deletes (keyed by their last key), the new nodes are puts of [`ChildRef`]s. Because
//! a boundary depends only on the entries since the previous one, a run may start at any
//! old node start and may stop at any point where the new chunking sits on an old
//! boundary with no edit left before it: what follows is unchanged. So the result is the
//! tree a bulk build of the edited set gives, at a cost of O(changes × depth) nodes.

use crate::build::{write_empty_leaf, LevelStack};
use crate::chunker::Chunker;
use crate::codec::ChildRef;
use crate::node_store::{NodeStore, NodeWriter, SubmittedNode};
use crate::prefetch::{prefetch_leaves, PREFETCH_KEYS_MIN};
use crate::{MerkleResult, Node};
use rnt_store::Address;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;

/// Edits at or above which a tree edit hashes its new nodes on the shared hashing thread:
/// below it, the handing over costs about what the few nodes' hashing saves.
const HASHING_EDITS_MIN: usize = 16;

/// One edit: put `key → value`, or delete `key` when the value is `None`.
pub type Edit = (Vec<u8>, Option<Vec<u8>>);

/// Applies `edits` (strictly increasing keys, checked by the caller) to the tree at `root`.
/// With `changed` (as long as `edits`), also records which edits changed the tree's
/// content: a put of an absent key or of another value, a delete of a present key.
pub(crate) fn edit_tree(
    store: &NodeStore,
    root: Address,
    edits: &[Edit],
    mut changed: Option<&mut [bool]>,
) -> MerkleResult<Address> {
    debug_assert!(changed.as_ref().is_none_or(|c| c.len() == edits.len()));
    if edits.is_empty() {
        return Ok(root);
    }
    let root_node = store.read(&root)?;
    if root_node.level() > 0 && edits.len() >= PREFETCH_KEYS_MIN {
        let done = AtomicBool::new(false);
        return std::thread::scope(|scope| {
            let keys = edits.iter().map(|(key, _)| key.as_slice());
            scope.spawn(|| prefetch_leaves(store, &root_node, keys, &done));
            let edited = edit_levels(store, root, &root_node, edits, changed.as_deref_mut());
            done.store(true, AtomicOrdering::Relaxed);
            edited
        });
    }
    edit_levels(store, root, &root_node, edits, changed)
}

/// [`edit_tree`]'s work: each level below the root, then the root's.
fn edit_levels(
    store: &NodeStore,
    root: Address,
    root_node: &Arc<Node>,
    edits: &[Edit],
    mut changed: Option<&mut [bool]>,
) -> MerkleResult<Address> {
    let height = root_node.level();
    // An edit that rewrites many nodes hashes them beside itself (`crate::hashing`).
    let mut writer = if edits.len() >= HASHING_EDITS_MIN {
        store.hashing_writer()
    } else {
        store.writer()
    };
    // The edits of the level being edited: the caller's at the leaves, then each level's
    // edits of the level above.
    let mut above: Option<Vec<Edit>> = None;
    for level in 0..height {
        let level_edits = above.as_deref().unwrap_or(edits);
        // The caller's edits are the leaves': only they say what changed.
        let leaf_changes = changed.take();
        let next = edit_level(
            store,
            root_node,
            level,
            level_edits,
            leaf_changes,
            &mut writer,
        )?;
        if next.is_empty() {
            writer.flush()?;
            return Ok(root);
        }
        above = Some(next);
    }
    let level_edits = above.as_deref().unwrap_or(edits);
    let new_root = edit_root_level(store, root_node, level_edits, changed, &mut writer)?;
    writer.flush()?;
    Ok(new_root)
}

/// Re-chunks the root's level (one node) with its edits and finishes the tree: a new
/// root, a collapsed one, or new levels above.
fn edit_root_level(
    store: &NodeStore,
    root: &Arc<Node>,
    edits: &[Edit],
    changed: Option<&mut [bool]>,
    writer: &mut NodeWriter<'_>,
) -> MerkleResult<Address> {
    debug_assert!(changed.is_none() || root.is_leaf());
    let mut chunker = Chunker::new(root.level());
    merge_into(&mut chunker, root, edits, false, changed);
    chunker.finish();
    let closed = std::mem::take(&mut chunker.ready);
    match closed.len() {
        0 => write_empty_leaf(writer),
        1 => {
            let mut address = writer.write(
                closed
                    .into_iter()
                    .next()
                    .expect("the match arm saw one closed node"),
            )?;
            writer.flush()?;
            // A single-child root collapses, as often as it takes.
            loop {
                let node = store.read(&address)?;
                if node.is_leaf() || node.len() > 1 {
                    return Ok(address);
                }
                address = node.child(0).address;
            }
        }
        _ => {
            let mut above = LevelStack::new(root.level() + 1);
            for node in closed {
                let (last_key, count) = (node.last_key.clone(), node.count);
                let address = writer.write(node)?;
                above.push(&last_key, &ChildRef { address, count }.encode(), writer)?;
            }
            let address = above.finish(writer)?;
            Ok(
                address
                    .expect("two or more nodes were pushed above, so the level above has a root"),
            )
        }
    }
}

/// Edits level `level` (below the root's) and returns the edits for the level above.
fn edit_level(
    store: &NodeStore,
    root: &Arc<Node>,
    level: u8,
    edits: &[Edit],
    mut changed: Option<&mut [bool]>,
    writer: &mut NodeWriter<'_>,
) -> MerkleResult<Vec<Edit>> {
    let mut parent = ParentEdits::default();
    let mut cursor = LevelCursor::new(store, root.clone(), level);
    // One chunker for every run of the level: each run ends at a boundary with nothing
    // held, as a new chunker starts, and its buffers keep their capacity.
    let mut chunker = Chunker::new(level);
    let mut i = 0;
    while i < edits.len() {
        cursor.seek(&edits[i].0)?;
        // A level's last node may absorb a lone trailing entry into the node before it, so
        // a run that reaches the end of an internal level starts one node earlier.
        if level > 0 && cursor.is_last() {
            cursor.prev()?;
        }
        debug_assert!(chunker.is_fresh(), "a run starts where a new chunker would");
        // The run's first node is re-chunked from its start, as the old chunking did it:
        // its entries before the first edit meet the same tests and end no node. (The last
        // node of an internal level may hold a lone trailing entry joined after a boundary,
        // but a run never starts there: the seek above steps back from it.)
        debug_assert!(
            level == 0 || !cursor.is_last(),
            "a level below the root has 2+ nodes"
        );
        let mut from_node_start = true;
        loop {
            let (node_key, child) = cursor.current();
            let node = store.read(&child.address)?;
            let is_last = cursor.is_last();
            let end = if is_last {
                edits.len()
            } else {
                i + edits[i..].partition_point(|(key, _)| key.as_slice() <= node_key.as_slice())
            };
            let node_changes = changed.as_deref_mut().map(|c| &mut c[i..end]);
            merge_into(
                &mut chunker,
                &node,
                &edits[i..end],
                from_node_start,
                node_changes,
            );
            from_node_start = false;
            i = end;
            parent.remove_old(node_key, child);
            if is_last {
                chunker.finish();
                parent.add_new(&mut chunker, writer);
                break;
            }
            if chunker.at_boundary() {
                if i == edits.len() {
                    chunker.release_held();
                    parent.add_new(&mut chunker, writer);
                    break;
                }
                cursor.next()?;
                let next_holds_edit = cursor.is_last() || edits[i].0 <= cursor.current().0;
                if !next_holds_edit {
                    // Resynchronized: the new boundary sits on an old one and the next
                    // edit lies beyond the next node; a new run will seek it.
                    chunker.release_held();
                    parent.add_new(&mut chunker, writer);
                    break;
                }
            } else {
                cursor.next()?;
            }
            parent.add_new(&mut chunker, writer);
        }
    }
    parent.into_edits(writer)
}

/// Feeds `node`'s entries merged with `edits` (whose keys fall in its range) to the chunker.
/// With `from_node_start` (a node re-chunked from its start by a fresh chunker, not the last
/// of an internal level), the entries before the first edit are known to end no node
/// ([`Chunker::push_interior`]). `edit_root_level` never sets it: the root's level is one
/// node, its last. With `changed` (a leaf's, as long as `edits`), records which edits change
/// the node's content.
fn merge_into(
    chunker: &mut Chunker,
    node: &Node,
    edits: &[Edit],
    from_node_start: bool,
    mut changed: Option<&mut [bool]>,
) {
    if node.is_leaf() {
        merge_leaf(chunker, node, edits, changed);
        return;
    }
    let mut record = |e: usize, did: bool| {
        if let Some(changed) = changed.as_deref_mut() {
            changed[e] = did;
        }
    };
    let mut start = 0;
    if from_node_start {
        debug_assert!(chunker.is_fresh());
        let first = edits.first().map(|(key, _)| key.as_slice());
        // Interior entries only: a node's last entry ends it.
        let unchanged = (0..node.len().saturating_sub(1))
            .take_while(|&i| first.is_none_or(|first| node.key(i) < first))
            .count();
        for i in 0..unchanged {
            chunker.push_interior(node.key(i), node.value(i));
        }
        start = unchanged;
    }
    let mut e = 0;
    for i in start..node.len() {
        let key = node.key(i);
        while e < edits.len() && edits[e].0.as_slice() < key {
            // An absent key: a put adds it, a delete does nothing.
            if let Some(value) = &edits[e].1 {
                chunker.push(&edits[e].0, value);
            }
            record(e, edits[e].1.is_some());
            e += 1;
        }
        if e < edits.len() && edits[e].0.as_slice() == key {
            // A present key: a delete removes it, a put changes it unless equal.
            let did = match &edits[e].1 {
                Some(value) => {
                    chunker.push(key, value);
                    value.as_slice() != node.value(i)
                }
                None => true,
            };
            record(e, did);
            e += 1;
        } else {
            chunker.push(key, node.value(i));
        }
    }
    for (offset, (key, value)) in edits[e..].iter().enumerate() {
        if let Some(value) = value {
            chunker.push(key, value);
        }
        record(e + offset, value.is_some());
    }
}

/// [`merge_into`] for a leaf, by runs. Wherever the chunker's open node measures what the
/// old chunking's did at the same old entry (at the leaf's start after a boundary, before
/// the first edit, after an update that kept its entry's size), the old entries up to the
/// next edit meet the tests they met before, with the same outcome: the run of them that
/// stood inside the leaf is appended whole, untested ([`Chunker::push_interior_run`]), and
/// only the leaf's last entry is tested. Elsewhere entries are pushed and tested one by one.
/// (A leaf level holds no node back, so an entry inside an old leaf ended no node.)
fn merge_leaf(
    chunker: &mut Chunker,
    node: &Node,
    edits: &[Edit],
    mut changed: Option<&mut [bool]>,
) {
    let len = node.len();
    // Old entries `from..to` in order, as a run where the chunker is in step with the old
    // chunking, else one by one.
    let copy = |chunker: &mut Chunker, mut from: usize, to: usize| {
        while from < to {
            if chunker.current_size() == node.measured_before(from) {
                let interior_end = to.min(len - 1);
                if from < interior_end {
                    chunker.push_interior_run(&node.run(from, interior_end));
                    from = interior_end;
                    continue;
                }
            }
            chunker.push(node.key(from), node.value(from));
            from += 1;
        }
    };
    let mut next = 0;
    for (e, (key, value)) in edits.iter().enumerate() {
        let (at, present) = match node.search(key) {
            Ok(at) => (at, true),
            Err(at) => (at, false),
        };
        debug_assert!(at >= next, "edits increase");
        copy(chunker, next, at);
        next = at + usize::from(present);
        // A put of an absent key adds it, of a present one changes it unless equal; a
        // delete removes a present key and does nothing to an absent one.
        let did = match value {
            Some(value) => {
                chunker.push(key, value);
                !present || value.as_slice() != node.value(at)
            }
            None => present,
        };
        if let Some(changed) = changed.as_deref_mut() {
            changed[e] = did;
        }
    }
    copy(chunker, next, len);
}

/// The edits a level hands to the level above: old nodes out, new nodes in. A new node
/// equal to the old one under the same key cancels out.
///
/// New nodes are submitted to the writer as they close (their hashing may run beside the
/// edit) and their addresses asked for when the level ends. Each old node is removed
/// before any new node that ends on its last key is added, so applying the additions at
/// the end gives what applying each at once would.
#[derive(Default)]
struct ParentEdits {
    edits: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    removed: BTreeMap<Vec<u8>, ChildRef>,
    added: Vec<(Vec<u8>, SubmittedNode)>,
}

impl ParentEdits {
    fn remove_old(&mut self, key: Vec<u8>, child: ChildRef) {
        self.edits.insert(key.clone(), None);
        self.removed.insert(key, child);
    }

    fn add_new(&mut self, chunker: &mut Chunker, writer: &mut NodeWriter<'_>) {
        for node in std::mem::take(&mut chunker.ready) {
            let last_key = node.last_key.clone();
            self.added.push((last_key, writer.submit(node)));
        }
    }

    /// The level above's edits, once every new node's address is known.
    fn into_edits(mut self, writer: &mut NodeWriter<'_>) -> MerkleResult<Vec<Edit>> {
        for (last_key, node) in std::mem::take(&mut self.added) {
            let count = node.count();
            let address = writer.complete(node)?;
            let child = ChildRef { address, count };
            if self.removed.get(&last_key) == Some(&child) {
                self.edits.remove(&last_key);
            } else {
                self.edits.insert(last_key, Some(child.encode().to_vec()));
            }
        }
        Ok(self.edits.into_iter().collect())
    }
}

/// Walks the nodes of one level below the root, in key order, through their parents.
struct LevelCursor<'a> {
    store: &'a NodeStore,
    root: Arc<Node>,
    level: u8,
    /// From the root down to the parent level: each node and the index of the entry taken.
    path: Vec<(Arc<Node>, usize)>,
}

impl<'a> LevelCursor<'a> {
    fn new(store: &'a NodeStore, root: Arc<Node>, level: u8) -> LevelCursor<'a> {
        debug_assert!(level < root.level());
        LevelCursor {
            store,
            root,
            level,
            path: Vec::new(),
        }
    }

    /// Moves to the node of this level whose key range holds `key` (the last node when
    /// `key` is beyond every key).
    fn seek(&mut self, key: &[u8]) -> MerkleResult<()> {
        self.path.clear();
        let mut node = self.root.clone();
        loop {
            let index = node.child_index_for(key);
            let child = node.child(index).address;
            let at_parent_level = node.level() == self.level + 1;
            self.path.push((node, index));
            if at_parent_level {
                return Ok(());
            }
            node = self.store.read(&child)?;
        }
    }

    /// The current node's key in its parent (its last key) and its reference.
    fn current(&self) -> (Vec<u8>, ChildRef) {
        let (node, index) = self
            .path
            .last()
            .expect("current() is called only after a seek filled the path");
        (node.key(*index).to_vec(), node.child(*index))
    }

    /// Whether the current node is the level's last.
    fn is_last(&self) -> bool {
        self.path
            .iter()
            .all(|(node, index)| index + 1 == node.len())
    }

    /// Moves to the next node of the level; the caller checks `is_last` first.
    fn next(&mut self) -> MerkleResult<()> {
        self.step(Ordering::Greater)
    }

    /// Moves to the previous node of the level, if there is one.
    fn prev(&mut self) -> MerkleResult<()> {
        if self.path.iter().all(|(_, index)| *index == 0) {
            return Ok(());
        }
        self.step(Ordering::Less)
    }

    fn step(&mut self, direction: Ordering) -> MerkleResult<()> {
        let forward = direction == Ordering::Greater;
        let mut depth = self.path.len();
        while depth > 0 {
            let (node, index) = &self.path[depth - 1];
            let can_move = if forward {
                index + 1 < node.len()
            } else {
                *index > 0
            };
            if can_move {
                break;
            }
            depth -= 1;
        }
        debug_assert!(depth > 0, "stepped past the end of a level");
        if depth == 0 {
            return Ok(());
        }
        self.path.truncate(depth);
        let last = self.path.len() - 1;
        if forward {
            self.path[last].1 += 1;
        } else {
            self.path[last].1 -= 1;
        }
        while self.path[self.path.len() - 1].0.level() > self.level + 1 {
            let (node, index) = &self.path[self.path.len() - 1];
            let child = self.store.read(&node.child(*index).address)?;
            let index = if forward { 0 } else { child.len() - 1 };
            self.path.push((child, index));
        }
        Ok(())
    }
}
