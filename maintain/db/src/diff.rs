//! `diff`: the tuples that differ between two states, from a walk of their trees that
//! skips every subtree with equal addresses.
//!
//! Order (docs/design.md, "Provenance"): by relation, then each relation's changes by
//! tuple — except that for a keyed relation, or a view whose head has aggregates, a key's
//! (a group's) `-` comes before its `+`: changes are ordered by the key (group) columns,
//! then `-` before `+`, then by tuple. An update reads as the old row, then the new one.

use crate::snapshot::{unknown_relation, Snapshot};
use crate::Database;
use crate::DbResult;
use rnt_engine::eval::read::decode_stored;
use rnt_engine::eval::IsKind;
use rnt_lang::change::Sign;
use rnt_lang::syntax::ast::HeadTerm;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::tuple::Tuple;
use rnt_merkle::{ChangeCount, DiffEntry, RelationEntry, Tree};
use std::cmp::Ordering;

/// Which relations a diff lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffScope {
    /// Base relations only: the output is a change file that turns one state into the other.
    Base,
    /// Every stored relation, derived ones included.
    All,
    /// One relation.
    Relation(String),
}

/// One tuple that differs between two states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TupleChange {
    /// The relation.
    pub relation: String,
    /// Inserted (`+`) or deleted (`-`) going from the first state to the second.
    pub sign: Sign,
    /// The tuple.
    pub tuple: Tuple,
}

impl Database {
    /// The tuples that differ from `from` to `to`, sorted by relation then tuple.
    pub fn diff(
        &self,
        from: &Snapshot,
        to: &Snapshot,
        scope: &DiffScope,
    ) -> DbResult<Vec<TupleChange>> {
        if let DiffScope::Relation(name) = scope {
            if from.entry(name).is_none() && to.entry(name).is_none() {
                return Err(unknown_relation(to, name));
            }
        }
        let mut names: Vec<&str> = from
            .state
            .relations
            .iter()
            .chain(&to.state.relations)
            .map(|r| r.name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        let mut out = Vec::new();
        for name in names {
            let (a, b) = (from.entry(name), to.entry(name));
            let included = match scope {
                DiffScope::Base => b.or(a).is_none_or(|e| e.kind.is(RelationKind::Relation)),
                DiffScope::All => true,
                DiffScope::Relation(only) => only == name,
            };
            if !included {
                continue;
            }
            let from_tree = a.and_then(RelationEntry::tree);
            let to_tree = b.and_then(RelationEntry::tree);
            if from_tree == to_tree {
                continue;
            }
            let from_types = from.schema(name).map(|s| s.types()).unwrap_or_default();
            let to_types = to.schema(name).map(|s| s.types()).unwrap_or_default();
            // A relation present in one state only diffs against the empty tree.
            let (x, y) = match (from_tree, to_tree) {
                (Some(x), Some(y)) => (x, y),
                (x, y) => {
                    let empty = Tree::empty(&self.nodes)?;
                    (x.unwrap_or(empty), y.unwrap_or(empty))
                }
            };
            let first = out.len();
            for entry in x.diff(&self.nodes, &y)? {
                let (sign, key, types) = match entry? {
                    DiffEntry::Added { key, .. } => (Sign::Insert, key, &to_types),
                    DiffEntry::Removed { key, .. } => (Sign::Delete, key, &from_types),
                    DiffEntry::Changed { .. } => continue,
                };
                out.push(TupleChange {
                    relation: name.to_string(),
                    sign,
                    tuple: decode_stored(&key, types, name)?,
                });
            }
            let key = key_columns(to, name).or_else(|| key_columns(from, name));
            sort_changes(&mut out[first..], key.as_deref());
        }
        Ok(out)
    }
}

impl Database {
    /// Tuples inserted and deleted per view from `from` to `to` (sorted by view; views whose
    /// tuples did not change are left out), from their tree diffs: O(changed nodes). A
    /// changed derivation count is no change of tuples.
    pub fn view_change_counts(&self, from: &Snapshot, to: &Snapshot) -> DbResult<Vec<ChangeCount>> {
        let empty = Tree::empty(&self.nodes)?;
        let view_tree = |snapshot: &Snapshot, name: &str| {
            snapshot
                .entry(name)
                .filter(|e| e.kind.is(RelationKind::View))
                .and_then(RelationEntry::tree)
        };
        let mut names: Vec<&str> = from
            .state
            .relations
            .iter()
            .chain(&to.state.relations)
            .filter(|e| e.kind.is(RelationKind::View))
            .map(|e| e.name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        let mut counts = Vec::new();
        for name in names {
            let (old, new) = (view_tree(from, name), view_tree(to, name));
            if old == new {
                continue;
            }
            let (mut inserted, mut deleted) = (0, 0);
            for item in old
                .unwrap_or(empty)
                .diff(&self.nodes, &new.unwrap_or(empty))?
            {
                match item? {
                    DiffEntry::Added { .. } => inserted += 1,
                    DiffEntry::Removed { .. } => deleted += 1,
                    DiffEntry::Changed { .. } => {}
                }
            }
            if inserted + deleted > 0 {
                counts.push(ChangeCount {
                    relation: name.to_string(),
                    inserted,
                    deleted,
                });
            }
        }
        Ok(counts)
    }
}

/// The columns whose values make a relation's changes one key's (one group's) in `snapshot`:
/// a keyed relation's key, or the group-key columns of a view whose head aggregates (its
/// head terms that are not aggregates). `None` for the others: their changes sort by tuple.
pub fn key_columns(snapshot: &Snapshot, name: &str) -> Option<Vec<usize>> {
    if let Some(key) = snapshot
        .schema(name)
        .and_then(|s| s.key_columns().map(<[usize]>::to_vec))
    {
        return Some(key);
    }
    let relation = snapshot.program.relation(name)?;
    if !relation.is_aggregated() {
        return None;
    }
    let rule = &relation.rules.first()?.rule;
    Some(
        rule.head
            .terms
            .iter()
            .enumerate()
            .filter(|(_, term)| matches!(term, HeadTerm::Term(_)))
            .map(|(i, _)| i)
            .collect(),
    )
}

/// Sorts one relation's changes, given in tuple order: by the `key` columns, then `-`
/// before `+`, keeping tuple order within (a stable sort). Without a key they stay in
/// tuple order.
pub fn sort_changes(changes: &mut [TupleChange], key: Option<&[usize]>) {
    let Some(columns) = key else {
        debug_assert!(
            changes.windows(2).all(|w| w[0].tuple <= w[1].tuple),
            "changes come in tuple order"
        );
        return;
    };
    let rank = |sign: Sign| match sign {
        Sign::Delete => 0,
        _ => 1,
    };
    changes.sort_by(|a, b| {
        columns
            .iter()
            .map(|&c| a.tuple.get(c).cmp(&b.tuple.get(c)))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
            .then_with(|| rank(a.sign).cmp(&rank(b.sign)))
    });
}
