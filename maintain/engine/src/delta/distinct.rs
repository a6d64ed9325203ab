//! COUNT_DISTINCT: each group's values, each with the number of the group's matches that
//! hold it (aux `distinct I`), and the group's number of such values in its accumulator.
//!
//! `n'(g, v) = n(g, v) + Δn(g, v)`, and
//! `distinct'(g) = distinct(g) + |{v : n(g, v) = 0 < n'(g, v)}| − |{v : n(g, v) > 0 = n'(g, v)}|`:
//! a value's count going 0 → 1 adds one to its group, 1 → 0 takes one away, any other step
//! (a second match of a value already there, one of several going) leaves it. So a change
//! reads one entry per (group, value) it touches, never the values it leaves alone: O(Δ),
//! the seed's "DISTINCT, then COUNT" done in one operator.

use super::{decode_count, moved_count, Maintainer};
use crate::eval::aggregate::AggregateShape;
use crate::EngineResult;
use rnt_lang::value::Value;
use rnt_merkle::{Edit, Tree};
use std::collections::BTreeMap;

impl Maintainer<'_> {
    /// A COUNT_DISTINCT column of one group: the signed change of its distinct count, and
    /// the edits to its per-value match counts. Reads one entry per value `changes` moves.
    pub(super) fn distinct_change(
        &self,
        shape: &AggregateShape,
        tree: &Tree,
        (group, group_key): (&[Value], &[u8]),
        changes: &BTreeMap<Value, i64>,
        (view, rule): (&str, &str),
    ) -> EngineResult<(i64, Vec<Edit>)> {
        let mut step = 0i64;
        let mut edits = Vec::new();
        for (value, change) in changes {
            if *change == 0 {
                continue;
            }
            let key = shape.distinct_key(group_key, group, value, rule)?;
            let old = match tree.get(self.nodes, &key)? {
                Some(bytes) => decode_count(&bytes, view)?,
                None => 0,
            };
            let new = moved_count(old, *change, view, "match count")?;
            match (old, new) {
                (0, n) if n > 0 => step += 1,
                (o, 0) if o > 0 => step -= 1,
                _ => {}
            }
            edits.push((key, (new > 0).then(|| new.to_le_bytes().to_vec())));
        }
        Ok((step, edits))
    }
}
