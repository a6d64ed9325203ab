//! Keyed base relations: `relation customers(id: int, plan: str) key(id).` holds at most one
//! tuple per key. This room reads a tuple by its key and turns a change set's changes of a
//! keyed relation into tree edits.
//!
//! Reading by key is a bound read (`rnt_engine::eval::read`): a prefix scan of the tuple tree
//! when the key's attributes lead the tuple (`key(id)` above), or of the index over the
//! permutation "key attributes first", which `plan_program` makes every keyed relation keep
//! otherwise. Either way it costs O(log n) nodes; an upsert never scans the relation.
//!
//! The change-set semantics for one key `k` of a keyed relation (`check_changes` has made
//! sure each key is named at most once per sign):
//!
//! ```text
//! current  = the tuple with key k before the change set (or none)
//! after(-) = none       for -r(k, _)            (delete by key)
//!            none       for -r(t) when t = current
//!            current    for -r(t) otherwise      (an exact delete of an absent tuple: no-op)
//!            current    without a delete
//! final    = t          for +r(t)                (the delete, if any, applies first)
//!            after(-)   without an insert
//! edits    = delete current, insert final        (nothing when final = current)
//! ```
//!
//! So `-r(k, old)` plus `+r(k, new)` is an update, as the change-file contract says, and
//! `rnt diff A B` replayed on A gives B for keyed relations too: for each key B changed, the
//! diff names A's tuple with `-` and B's with `+`.
//!
//! *Invariant: a keyed relation holds at most one tuple per key. Every edit of one goes
//! through [`keyed_edits`] or an import's key checks, and a key can be added only to an
//! empty relation (`define`).*

use crate::snapshot::Snapshot;
use crate::Database;
use crate::{DbError, DbResult};
use rnt_engine::eval::read::{Flow, StoredRelation};
use rnt_lang::change::{key_text, Change, Sign};
use rnt_lang::schema::RelationSchema;
use rnt_lang::tuple::{encode_tuple, Tuple};
use rnt_lang::value::Value;
use rnt_merkle::{Edit, NodeStore, RelationEntry};
use std::collections::BTreeMap;

impl Database {
    /// The tuple of keyed base relation `relation` whose key is `key` in `snapshot`, if
    /// there is one. `key` holds the key's values in declaration order of the key's
    /// attributes (the order of [`RelationSchema::key_columns`]). Reads O(log n) nodes.
    ///
    /// A user error when the relation is unknown, has no key, or `key` does not fit it.
    pub fn tuple_with_key(
        &self,
        snapshot: &Snapshot,
        relation: &str,
        key: &[Value],
    ) -> DbResult<Option<Tuple>> {
        let entry = snapshot.require(relation)?;
        let schema = snapshot
            .schema(relation)
            .ok_or_else(|| DbError::corrupted(format!("relation `{relation}` has no schema")))?;
        let Some(columns) = schema.key_columns() else {
            return Err(DbError::user(format!("relation `{relation}` has no key")));
        };
        let fits = key.len() == columns.len()
            && columns
                .iter()
                .zip(key)
                .all(|(&c, value)| schema.attributes[c].column_type().holds(value));
        if !fits {
            let names = schema.key_names();
            return Err(DbError::user(format!(
                "a key of `{relation}` is {} value{} (key({})), found {}",
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                names.join(", "),
                key.len()
            )));
        }
        KeyReader::new(entry, &schema)?.tuple_with_key(&self.nodes, key)
    }
}

/// Reads one keyed relation of one state by key.
pub(crate) struct KeyReader<'s> {
    schema: &'s RelationSchema,
    stored: StoredRelation,
}

impl<'s> KeyReader<'s> {
    /// A reader of `entry`'s trees; `schema` must be keyed (a bug otherwise).
    pub(crate) fn new(
        entry: &RelationEntry,
        schema: &'s RelationSchema,
    ) -> DbResult<KeyReader<'s>> {
        debug_assert!(schema.key_columns().is_some(), "a key reader needs a key");
        let stored = StoredRelation::from_entry(entry, schema.types())
            .ok_or_else(|| DbError::corrupted(format!("relation `{}` has no tree", schema.name)))?;
        Ok(KeyReader { schema, stored })
    }

    /// The tuple whose key is `key` (values in key order, already type-checked). A second
    /// tuple with that key breaks the relation's invariant: corruption.
    pub(crate) fn tuple_with_key(
        &self,
        nodes: &NodeStore,
        key: &[Value],
    ) -> DbResult<Option<Tuple>> {
        let columns = self.schema.key_columns().unwrap_or_default();
        let mut pattern: Vec<Option<Value>> = vec![None; self.schema.arity()];
        for (&c, value) in columns.iter().zip(key) {
            pattern[c] = Some(value.clone());
        }
        let mut found: Vec<Tuple> = Vec::new();
        self.stored.read(nodes, &pattern, &mut |tuple| {
            found.push(tuple.to_vec());
            Ok(if found.len() > 1 {
                Flow::Stop
            } else {
                Flow::Continue
            })
        })?;
        if found.len() > 1 {
            let values: Vec<&Value> = key.iter().collect();
            return Err(DbError::corrupted(format!(
                "keyed relation `{}` holds two tuples with key {}",
                self.schema.name,
                key_text(self.schema, &values)
            )));
        }
        Ok(found.pop())
    }
}

/// The changes a change set makes to one key: at most one of each sign (`check_changes`
/// allows an update only alone).
#[derive(Default)]
struct KeyChanges<'c> {
    delete: Option<&'c Change>,
    insert: Option<&'c Change>,
    update: Option<&'c Change>,
}

/// The sorted tree edits that apply `changes` (all of keyed relation `schema`, checked by
/// `check_changes`) to its tree in `head`, by the rule in the module documentation.
pub(crate) fn keyed_edits(
    nodes: &NodeStore,
    head: &Snapshot,
    schema: &RelationSchema,
    changes: &[&Change],
) -> DbResult<Vec<Edit>> {
    let columns = schema.key_columns().unwrap_or_default();
    let mut by_key: BTreeMap<Vec<Value>, KeyChanges> = BTreeMap::new();
    for &change in changes {
        let pattern = change.pattern();
        let key: Vec<Value> = columns
            .iter()
            .filter_map(|&c| pattern[c].cloned())
            .collect();
        let slot = by_key.entry(key).or_default();
        match change.sign {
            Sign::Delete => slot.delete = Some(change),
            Sign::Insert => slot.insert = Some(change),
            Sign::Update => slot.update = Some(change),
        }
    }
    let entry = head.require(&schema.name)?;
    let reader = KeyReader::new(entry, schema)?;
    let types = schema.types();
    let encode = |tuple: &[Value], change: &Change| {
        encode_tuple(tuple, &types)
            .map_err(|e| DbError::user(format!("line {}: {}: {e}", change.line, schema.name)))
    };
    let mut edits: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
    for (key, named) in by_key {
        if let KeyChanges {
            delete: Some(delete),
            insert: None,
            update: None,
        } = named
        {
            if delete.is_exact() {
                // An exact delete needs no read: deleting an absent tuple changes nothing.
                edits.insert(encode(&delete.values, delete)?, None);
                continue;
            }
        }
        let current = reader.tuple_with_key(nodes, &key)?;
        let (last, wanted) = match named.update {
            Some(update) => (update, Some(updated(schema, update, &key, &current)?)),
            None => replaced(&named, &current),
        };
        if wanted == current {
            continue;
        }
        if let Some(current) = &current {
            edits.insert(encode(current, last)?, None);
        }
        if let Some(wanted) = &wanted {
            edits.insert(encode(wanted, last)?, Some(Vec::new()));
        }
    }
    Ok(edits.into_iter().collect())
}

/// A key's tuple after its delete and insert (the last of them, and the tuple), by the rule
/// in the module documentation.
fn replaced<'c>(named: &KeyChanges<'c>, current: &Option<Tuple>) -> (&'c Change, Option<Tuple>) {
    let after_delete = match named.delete {
        None => current.clone(),
        Some(delete) if !delete.is_exact() => None,
        Some(delete) if current.as_deref() == Some(&delete.values[..]) => None,
        Some(_) => current.clone(),
    };
    let last = named
        .insert
        .or(named.delete)
        .unwrap_or_else(|| unreachable!("a key comes from a change"));
    let wanted = match named.insert {
        Some(insert) => Some(insert.values.clone()),
        None => after_delete,
    };
    (last, wanted)
}

/// The tuple an update by key makes: the current one with the columns it names replaced.
/// No current tuple is an error (exit 1): an update changes an existing tuple.
fn updated(
    schema: &RelationSchema,
    update: &Change,
    key: &[Value],
    current: &Option<Tuple>,
) -> DbResult<Tuple> {
    let Some(current) = current else {
        let key: Vec<&Value> = key.iter().collect();
        return Err(DbError::user(format!(
            "{}line {}: {} has no tuple with key {} to update; nothing was committed",
            update
                .source
                .as_deref()
                .map(|s| format!("{s}, "))
                .unwrap_or_default(),
            update.line,
            schema.name,
            key_text(schema, &key)
        )));
    };
    Ok(update
        .pattern()
        .into_iter()
        .zip(current)
        .map(|(given, kept)| given.unwrap_or(kept).clone())
        .collect())
}
