//! MIN and MAX: each group's values sorted with their multiplicities (for `max`, in
//! reverse), so the extreme is the group's first entry.
//!
//! `mult'(g, v) = mult(g, v) + Δmult(g, v)`; `extreme'(g) = first v with mult'(g, v) > 0`,
//! found by reading the group's front and stepping only past the entries the change empties.

use super::{decode_count, moved_count, Maintainer};
use crate::eval::aggregate::AggregateShape;
use crate::EngineResult;
use rnt_lang::value::Value;
use rnt_merkle::{Edit, Tree};
use std::collections::BTreeMap;

impl Maintainer<'_> {
    /// A MIN/MAX column of one group: its extreme before and after the change, and the
    /// edits to its sorted values. Reads the front of the group, and on past entries the
    /// change empties.
    pub(super) fn extreme_fronts(
        &self,
        shape: &AggregateShape,
        tree: &Tree,
        (group, group_key): (&[Value], &[u8]),
        column: usize,
        changes: &BTreeMap<Value, i64>,
        (view, rule): (&str, &str),
    ) -> EngineResult<(Option<Value>, Option<Value>, Vec<Edit>)> {
        let mut edits = Vec::new();
        let mut new_counts: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        for (value, change) in changes {
            if *change == 0 {
                continue;
            }
            let key = shape.extreme_key(group_key, group, column, value, rule)?;
            let old = match tree.get(self.nodes, &key)? {
                Some(bytes) => decode_count(&bytes, view)?,
                None => 0,
            };
            let new = moved_count(old, *change, view, "multiplicity")?;
            edits.push((key.clone(), (new > 0).then(|| new.to_le_bytes().to_vec())));
            new_counts.insert(key, new);
        }
        // The old front: the group's first stored entry.
        let mut cursor = tree.prefix_cursor(self.nodes, group_key)?;
        let old_front_key = cursor.entry().map(|(k, _)| k.to_vec());
        // The new front: the first stored entry the change does not empty, or a new
        // value sorting before it.
        let mut surviving: Option<Vec<u8>> = None;
        while let Some((key, _)) = cursor.entry() {
            if new_counts.get(key).is_none_or(|n| *n > 0) {
                surviving = Some(key.to_vec());
                break;
            }
            cursor.advance()?;
        }
        let first_new = new_counts
            .iter()
            .find(|(_, n)| **n > 0)
            .map(|(k, _)| k.clone());
        let new_front_key = match (surviving, first_new) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let decode = |key: Option<Vec<u8>>| -> EngineResult<Option<Value>> {
            key.map(|k| shape.extreme_value(group_key, column, &k))
                .transpose()
        };
        Ok((decode(old_front_key)?, decode(new_front_key)?, edits))
    }
}
