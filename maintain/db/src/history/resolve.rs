//! Resolving a merge's key conflicts (docs/design.md, "Merge"): a keyed relation conflicts
//! where both sides gave one key different tuples. Refused by default (exit 4, nothing
//! written); `--ours` or `--theirs` keeps one side's tuple at every such key; a change file
//! picks per key — one line per conflicting key: `+r(…)` keeps that tuple (ours, theirs or
//! another one with the key), `-r(key…, _)` deletes the key. The merge is then maintained
//! and judged as any merge.
//!
//! A resolution only rewrites the edits the merge applies at the conflicting keys, so
//! `--ours` reaches the state of the merge made after theirs' conflicting keys were set
//! back to the base (and `--theirs` likewise): `tests/merge_resolution_props.rs`.

use crate::history::merge::{KeyConflict, MergedBase};
use crate::snapshot::Snapshot;
use crate::{DbError, DbResult};
use rnt_lang::change::{check_changes, key_text, Change, Sign};
use rnt_lang::schema::RelationSchema;
use rnt_lang::tuple::{encode_tuple, Tuple};
use rnt_lang::value::Value;
use rnt_merkle::Edit;
use std::collections::BTreeMap;

/// How a merge treats keys both sides gave different tuples.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// Refuse the merge (exit 4), listing every conflicting key.
    Refuse,
    /// Keep the current branch's tuple at every conflicting key.
    Ours,
    /// Keep the merged branch's tuple at every conflicting key.
    Theirs,
    /// Pick per key from a change file: each conflicting key named exactly once.
    Picks(Vec<Change>),
}

/// Rewrites `merged`'s edits at each conflicting key to reach the tuple `resolution` picks
/// there (or no tuple), and clears the conflicts. `start` is the side the edits apply to
/// (`start_is_ours` says which), whose schemas the picks are checked against.
pub(crate) fn resolve_conflicts(
    merged: &mut MergedBase,
    start: &Snapshot,
    start_is_ours: bool,
    resolution: &Resolution,
) -> DbResult<()> {
    let picks = match resolution {
        Resolution::Picks(changes) => Some(picked_tuples(&merged.conflicts, start, changes)?),
        _ => None,
    };
    for conflict in std::mem::take(&mut merged.conflicts) {
        let chosen: Option<Tuple> = match (resolution, &picks) {
            (Resolution::Ours, _) => Some(conflict.ours.clone()),
            (Resolution::Theirs, _) => Some(conflict.theirs.clone()),
            (_, Some(picks)) => picks
                .get(&(conflict.relation.clone(), conflict.key.clone()))
                .cloned()
                .ok_or_else(|| DbError::internal("a checked pick misses a conflict"))?,
            (Resolution::Refuse, None) | (Resolution::Picks(_), None) => {
                return Err(DbError::internal("resolving conflicts the merge refuses"))
            }
        };
        let schema = start.schema(&conflict.relation).ok_or_else(|| {
            DbError::internal(format!("conflict in undeclared `{}`", conflict.relation))
        })?;
        let (held, added) = match start_is_ours {
            true => (&conflict.ours, &conflict.theirs),
            false => (&conflict.theirs, &conflict.ours),
        };
        let edits = merged
            .edits
            .iter_mut()
            .find(|(name, _)| *name == conflict.relation)
            .map(|(_, edits)| edits)
            .ok_or_else(|| DbError::internal("a conflict in a relation the merge leaves"))?;
        rewrite_key(edits, &schema, held, added, chosen.as_ref())?;
    }
    Ok(())
}

/// The edits at one conflicting key: the other side's insert of `added` dropped, `held`
/// (the tuple the merged-into side has) deleted, `chosen` inserted. Keeps `edits` sorted.
fn rewrite_key(
    edits: &mut Vec<Edit>,
    schema: &RelationSchema,
    held: &Tuple,
    added: &Tuple,
    chosen: Option<&Tuple>,
) -> DbResult<()> {
    let types = schema.types();
    let encode = |tuple: &Tuple| {
        encode_tuple(tuple, &types)
            .map_err(|e| DbError::user(format!("relation `{}`: {e}", schema.name)))
    };
    let mut sorted: BTreeMap<Vec<u8>, Option<Vec<u8>>> =
        std::mem::take(edits).into_iter().collect();
    sorted.remove(&encode(added)?);
    sorted.insert(encode(held)?, None);
    if let Some(chosen) = chosen {
        sorted.insert(encode(chosen)?, Some(Vec::new()));
    }
    *edits = sorted.into_iter().collect();
    Ok(())
}

/// The tuple each conflicting key keeps (`None`: deleted), by (relation, key text), from a
/// change file: every change names a conflicting key, every conflicting key is named once.
fn picked_tuples(
    conflicts: &[KeyConflict],
    start: &Snapshot,
    changes: &[Change],
) -> DbResult<BTreeMap<(String, String), Option<Tuple>>> {
    let schemas: BTreeMap<String, RelationSchema> = start
        .schemas()
        .into_iter()
        .map(|s| (s.name.clone(), s))
        .collect();
    let checked = check_changes(changes.to_vec(), |name| schemas.get(name))
        .map_err(|e| DbError::user(e.to_string()))?;
    let mut picks = BTreeMap::new();
    for change in checked.changes() {
        let at = |message: String| {
            let source = change
                .source
                .as_deref()
                .map(|s| format!("{s}, "))
                .unwrap_or_default();
            DbError::user(format!("{source}line {}: {message}", change.line))
        };
        let schema = &schemas[&change.relation];
        if schema.key_columns().is_none() {
            return Err(at(format!(
                "`{}` has no key, so it has no conflicts to resolve",
                change.relation
            )));
        }
        let key = change_key(change, schema);
        let key_refs: Vec<&Value> = key.iter().collect();
        let key = key_text(schema, &key_refs);
        let wanted = (change.relation.clone(), key.clone());
        if !conflicts
            .iter()
            .any(|c| c.relation == wanted.0 && c.key == wanted.1)
        {
            return Err(at(format!(
                "{} key {key} is not in conflict (list the conflicts with `rnt merge NAME --conflicts`)",
                change.relation
            )));
        }
        let chosen = match change.sign {
            Sign::Insert => Some(change.values.clone()),
            Sign::Delete => None,
            Sign::Update => {
                return Err(at(
                    "a pick is `+` a whole tuple or `-` a key, not an update `~`".to_string(),
                ))
            }
        };
        if picks.insert(wanted, chosen).is_some() {
            return Err(at(format!(
                "{} key {key} is picked twice: keep one line per key",
                change.relation
            )));
        }
    }
    if let Some(missing) = conflicts
        .iter()
        .find(|c| !picks.contains_key(&(c.relation.clone(), c.key.clone())))
    {
        return Err(DbError::user(format!(
            "the picks leave {} key {} unresolved: name every conflicting key once (`+` the tuple to keep, or `-` to delete it)",
            missing.relation, missing.key
        )));
    }
    Ok(picks)
}

/// The key values a checked change names: a key column's value, whether the change is
/// exact or a delete by key (`_` for the other columns).
fn change_key(change: &Change, schema: &RelationSchema) -> Vec<Value> {
    let columns: Vec<usize> = (0..schema.arity())
        .filter(|c| change.wildcards.binary_search(c).is_err())
        .collect();
    let key = schema.key_columns().unwrap_or_default();
    key.iter()
        .filter_map(|k| columns.iter().position(|c| c == k))
        .filter_map(|i| change.values.get(i).cloned())
        .collect()
}
