//! `blame`: the commit that last wrote each tuple of a stored relation (docs/design.md,
//! "Provenance"), as git blames a line: walking back from a commit, a tuple follows the
//! first parent that also holds it; the commit none of whose parents holds it wrote it.
//! A parent whose relation has another schema (or none) holds none of its tuples.
//!
//! Cost follows the commits and the changed nodes: one tuple is a point read per commit
//! whose tree differs from its child's (none where the roots are equal); a whole relation
//! walks the graph once, carrying the tuples not yet attributed, and diffs each commit's
//! tree with its parent's (`Tree::diff` skips equal subtrees).

use crate::snapshot::Snapshot;
use crate::{Database, DbError, DbResult};
use rnt_engine::eval::read::decode_stored;
use rnt_lang::tuple::{encode_tuple, Tuple};
use rnt_merkle::{Commit, DiffEntry, Tree};
use rnt_store::Address;
use std::collections::{BTreeSet, HashMap};

impl Database {
    /// The commit that last wrote `tuple` of stored relation `relation`, walking back from
    /// `at`'s commit; an error when `at` holds no such tuple or has no commit.
    pub fn blame_tuple(&self, at: &Snapshot, relation: &str, tuple: &Tuple) -> DbResult<Address> {
        let (mut commit, tree) = blamed(at, relation)?;
        let types = at.schema(relation).map(|s| s.types()).unwrap_or_default();
        let key = encode_tuple(tuple, &types)
            .map_err(|e| DbError::user(format!("relation `{relation}`: {e}")))?;
        if tree.get(&self.nodes, &key)?.is_none() {
            return Err(DbError::user(format!(
                "{} is not in `{relation}` at this state",
                rnt_lang::diagnostic::clip(&rnt_lang::tuple::format_tuple(relation, tuple))
            )));
        }
        let mut child = at.clone();
        loop {
            let mut next = None;
            for parent in Commit::read(self.chunks.as_ref(), &commit)?.parent_addresses() {
                let parent_snapshot = self.snapshot_of_commit(parent)?;
                let Some(parent_tree) = same_relation(&child, &parent_snapshot, relation) else {
                    continue;
                };
                let child_tree = child.tree(relation);
                if Some(parent_tree) == child_tree || parent_tree.get(&self.nodes, &key)?.is_some()
                {
                    next = Some((parent, parent_snapshot));
                    break;
                }
            }
            match next {
                Some((parent, snapshot)) => {
                    commit = parent;
                    child = snapshot;
                }
                None => return Ok(commit),
            }
        }
    }

    /// Every tuple of stored relation `relation` at `at` (in tuple order) with the commit
    /// that last wrote it.
    pub fn blame(&self, at: &Snapshot, relation: &str) -> DbResult<Vec<(Tuple, Address)>> {
        let (start, tree) = blamed(at, relation)?;
        let types = at.schema(relation).map(|s| s.types()).unwrap_or_default();
        let mut pending: HashMap<Address, BTreeSet<Vec<u8>>> = HashMap::new();
        let mut all = BTreeSet::new();
        for item in tree.entries(&self.nodes) {
            all.insert(item?.0);
        }
        pending.insert(start, all);
        let mut writers: Vec<(Vec<u8>, Address)> = Vec::new();
        for (id, commit) in self.commit_graph(&[start])? {
            let Some(mut left) = pending.remove(&id) else {
                continue;
            };
            let child = self.snapshot_of_commit(id)?;
            for parent in commit.parent_addresses() {
                if left.is_empty() {
                    break;
                }
                let parent_snapshot = self.snapshot_of_commit(parent)?;
                let Some(parent_tree) = same_relation(&child, &parent_snapshot, relation) else {
                    continue;
                };
                let held = self.held_by_parent(&child, relation, &parent_tree, &mut left)?;
                pending.entry(parent).or_default().extend(held);
            }
            writers.extend(left.into_iter().map(|key| (key, id)));
        }
        writers.sort();
        writers
            .into_iter()
            .map(|(key, commit)| Ok((decode_stored(&key, &types, relation)?, commit)))
            .collect()
    }

    /// Takes from `left` (keys of `child`'s tree of `relation`) the keys `parent_tree`
    /// holds too: every key but those the diff parent → child adds.
    fn held_by_parent(
        &self,
        child: &Snapshot,
        relation: &str,
        parent_tree: &Tree,
        left: &mut BTreeSet<Vec<u8>>,
    ) -> DbResult<BTreeSet<Vec<u8>>> {
        let child_tree = child
            .tree(relation)
            .ok_or_else(|| DbError::internal("a blamed relation without its tree"))?;
        if *parent_tree == child_tree {
            return Ok(std::mem::take(left));
        }
        let mut added = BTreeSet::new();
        for item in parent_tree.diff(&self.nodes, &child_tree)? {
            if let DiffEntry::Added { key, .. } = item? {
                if left.contains(&key) {
                    added.insert(key);
                }
            }
        }
        let held = left.difference(&added).cloned().collect();
        *left = added;
        Ok(held)
    }
}

/// `at`'s commit and the tree of `relation` there: an error for a state named by its hash
/// (no history to walk) or a relation kept in no tree.
fn blamed(at: &Snapshot, relation: &str) -> DbResult<(Address, Tree)> {
    let entry = at.require(relation)?;
    let tree = entry.tree().ok_or_else(|| {
        DbError::user(format!(
            "`{relation}` is computed when read, so no commit wrote its tuples (blame a relation or a view)"
        ))
    })?;
    let commit = at.commit.ok_or_else(|| {
        DbError::user(
            "this state was named by its hash, not by a commit, so it has no history to blame",
        )
    })?;
    Ok((commit, tree))
}

/// `parent`'s tree of `relation` when it keeps one of the same kind and schema as
/// `child`'s (so the same tuples have the same keys); `None` otherwise.
fn same_relation(child: &Snapshot, parent: &Snapshot, relation: &str) -> Option<Tree> {
    let (mine, theirs) = (child.entry(relation)?, parent.entry(relation)?);
    (mine.kind == theirs.kind && child.schema(relation) == parent.schema(relation))
        .then(|| theirs.tree())
        .flatten()
}
