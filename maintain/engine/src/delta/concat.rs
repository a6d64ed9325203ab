//! CONCAT (STRING_AGG): each group's str values, each with the number of the group's matches
//! that hold it (aux `values I`, the layout of `distinct I`), so the group's entries, in key
//! order, are its distinct values in byte order.
//!
//! The fallback, D∘Q∘I per touched group: `n'(g, v) = n(g, v) + Δn(g, v)`, and
//! `concat'(g) = join(sep, {v : n'(g, v) > 0})` in byte order, recomputed from the group's
//! stored values (one prefix scan) and the change; the view's delta retracts
//! `join(sep, {v : n(g, v) > 0})` and inserts the new one when they differ. A change reads
//! its touched groups' values, O(Σm) as docs/costs.md states; never another group's, never the
//! relation.

use super::{decode_count, moved_count, Maintainer};
use crate::eval::aggregate::AggregateShape;
use crate::EngineResult;
use rnt_lang::value::Value;
use rnt_merkle::{Edit, Tree};
use std::collections::BTreeMap;

/// A CONCAT column of one group before and after a change.
pub(super) struct Concatenations {
    /// The old concatenation; `None` when the group had no value.
    pub old: Option<String>,
    /// The new concatenation; `None` when the group has no value left.
    pub new: Option<String>,
    /// The edits to the column's per-(group, value) match counts.
    pub edits: Vec<Edit>,
}

impl Maintainer<'_> {
    /// A CONCAT column of one group: its concatenation before and after the change, and the
    /// edits to its per-value match counts. Reads the group's entries once (a prefix scan).
    pub(super) fn concat_change(
        &self,
        shape: &AggregateShape,
        tree: &Tree,
        (group, group_key): (&[Value], &[u8]),
        column: usize,
        changes: &BTreeMap<Value, i64>,
        (view, rule): (&str, &str),
    ) -> EngineResult<Concatenations> {
        // The group's stored values, in key order (= the values' byte order).
        let mut old: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        let mut cursor = tree.prefix_cursor(self.nodes, group_key)?;
        while let Some((key, count)) = cursor.entry() {
            old.insert(key.to_vec(), decode_count(count, view)?);
            cursor.advance()?;
        }
        let mut new = old.clone();
        let mut edits = Vec::new();
        for (value, change) in changes {
            if *change == 0 {
                continue;
            }
            let key = shape.concat_key(group_key, group, value, rule)?;
            let before = old.get(&key).copied().unwrap_or(0);
            let after = moved_count(before, *change, view, "match count")?;
            edits.push((
                key.clone(),
                (after > 0).then(|| after.to_le_bytes().to_vec()),
            ));
            if after > 0 {
                new.insert(key, after);
            } else {
                new.remove(&key);
            }
        }
        let join = |values: &BTreeMap<Vec<u8>, u64>| -> EngineResult<Option<String>> {
            if values.is_empty() {
                return Ok(None);
            }
            let values: Vec<String> = values
                .keys()
                .map(|key| shape.concat_value(group_key, key))
                .collect::<EngineResult<_>>()?;
            Ok(Some(shape.join(column, values.iter().map(String::as_str))))
        };
        Ok(Concatenations {
            old: join(&old)?,
            new: join(&new)?,
            edits,
        })
    }
}
