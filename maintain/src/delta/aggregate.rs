//! Aggregates (one rule, `count`/`sum`/`avg`/`min`/`max` in the head), from per-group
//! accumulators kept beside the view (layout in `crate::eval::aggregate`):
//!
//! `acc'(g) = acc(g) + Σ signed matches of the delta terms in group g`, and the view's delta
//! retracts each touched group's old row and inserts its new one (a group whose matches fall
//! to 0 has no row). One accumulator read per touched group; MIN/MAX read the front of the
//! group's sorted values (`minmax`).

use super::terms::Mode;
use super::{aux, encode, stored_tree, Delta, Maintainer};
use crate::eval::aggregate::{
    decode_accumulator, encode_accumulator, extremes_label, AggregateShape, GROUPS_LABEL,
};
use crate::eval::read::Flow;
use crate::lang::tuple::Tuple;
use crate::lang::value::Value;
use crate::{DbError, DbResult};
use rnt_merkle::{Edit, Tree};
use std::collections::BTreeMap;

/// The signed change the delta terms bring to one group.
struct GroupChange {
    matches: i64,
    sums: Vec<i128>,
    values: Vec<BTreeMap<Value, i64>>,
}

/// The edits to a view's trees that its touched groups make, and the view's delta.
#[derive(Default)]
struct Edits {
    rows: Vec<Edit>,
    groups: Vec<Edit>,
    extremes: Vec<Vec<Edit>>,
    delta: Delta,
}

impl Maintainer<'_> {
    /// Aggregates: fold the signed matches into the touched groups' accumulators (one read
    /// per group), update the sorted values of MIN/MAX columns, and retract each touched
    /// group's old row and insert its new one.
    pub(super) fn maintain_aggregate(&mut self, view: &str) -> DbResult<()> {
        let types = self.types(view);
        let plan = self
            .plans
            .full
            .get(view)
            .and_then(|p| p.first())
            .cloned()
            .ok_or_else(|| DbError::internal(format!("aggregate view `{view}` has no plan")))?;
        let shape = AggregateShape::of(&plan, &types);
        let changes = self.group_changes(view, &shape)?;
        let entry = self.entry(view)?;
        let tree = stored_tree(&entry)?;
        let groups = aux(&entry, GROUPS_LABEL)?;
        let extreme_columns = shape.extreme_columns();
        let extremes: Vec<Tree> = extreme_columns
            .iter()
            .map(|&c| aux(&entry, &extremes_label(c)))
            .collect::<DbResult<_>>()?;
        let mut edits = Edits {
            extremes: vec![Vec::new(); extreme_columns.len()],
            ..Edits::default()
        };
        for (key, change) in changes {
            let trees = (&groups, extremes.as_slice());
            self.apply_group_change(view, &plan.source, &shape, trees, &key, &change, &mut edits)?;
        }
        edits.rows.sort_by(|a, b| a.0.cmp(&b.0));
        edits.groups.sort_by(|a, b| a.0.cmp(&b.0));
        let new_tree = tree.edit(self.nodes, edits.rows)?;
        let mut extra = vec![(
            GROUPS_LABEL.to_string(),
            groups.edit(self.nodes, edits.groups)?,
        )];
        for (slot, &column) in extreme_columns.iter().enumerate() {
            let mut column_edits = std::mem::take(&mut edits.extremes[slot]);
            column_edits.sort_by(|a, b| a.0.cmp(&b.0));
            extra.push((
                extremes_label(column),
                extremes[slot].edit(self.nodes, column_edits)?,
            ));
        }
        self.store(view, entry, new_tree, edits.delta, extra)
    }

    /// The signed matches of the delta terms, folded per group key.
    fn group_changes(
        &self,
        view: &str,
        shape: &AggregateShape,
    ) -> DbResult<BTreeMap<Tuple, GroupChange>> {
        let sum_columns = shape.sum_columns();
        let extreme_columns = shape.extreme_columns();
        let mut changes: BTreeMap<Tuple, GroupChange> = BTreeMap::new();
        self.delta_terms(
            view,
            Mode::Signed,
            &self.deltas,
            &self.new,
            &self.old,
            &mut |_, b, sign| {
                let change = changes
                    .entry(shape.key_of(b))
                    .or_insert_with(|| GroupChange {
                        matches: 0,
                        sums: vec![0; sum_columns.len()],
                        values: vec![BTreeMap::new(); extreme_columns.len()],
                    });
                change.matches += sign;
                for (slot, &column) in sum_columns.iter().enumerate() {
                    if let Some(Value::Int(x)) = shape.argument(column, b) {
                        change.sums[slot] += i128::from(sign) * i128::from(x);
                    }
                }
                for (slot, &column) in extreme_columns.iter().enumerate() {
                    if let Some(value) = shape.argument(column, b) {
                        *change.values[slot].entry(value).or_default() += sign;
                    }
                }
                Ok(Flow::Continue)
            },
        )?;
        Ok(changes)
    }

    /// One touched group: its accumulator `acc' = acc + change`, its MIN/MAX fronts, and
    /// the retraction of its old row and insertion of its new one when they differ.
    #[allow(clippy::too_many_arguments)] // the group's parts, each read once; a struct would only rename them
    fn apply_group_change(
        &self,
        view: &str,
        rule: &str,
        shape: &AggregateShape,
        (groups, extremes): (&Tree, &[Tree]),
        key: &Tuple,
        change: &GroupChange,
        edits: &mut Edits,
    ) -> DbResult<()> {
        let types = &shape.head_types;
        let sum_count = shape.sum_columns().len();
        let group_key = shape.encode_key(key, rule)?;
        let (old_matches, old_sums) = match groups.get(self.nodes, &group_key)? {
            Some(bytes) => decode_accumulator(&bytes, sum_count)?,
            None => (0, vec![0; sum_count]),
        };
        let new_matches = i64::try_from(old_matches)
            .ok()
            .and_then(|m| m.checked_add(change.matches))
            .and_then(|m| u64::try_from(m).ok())
            .ok_or_else(|| {
                DbError::corrupted(format!(
                    "maintaining `{view}`: a group's match count went negative"
                ))
            })?;
        let new_sums: Vec<i128> = old_sums
            .iter()
            .zip(&change.sums)
            .map(|(a, b)| a + b)
            .collect();
        let mut old_front = Vec::new();
        let mut new_front = Vec::new();
        for (slot, &column) in shape.extreme_columns().iter().enumerate() {
            let (old, new, column_edits) = self.extreme_fronts(
                shape,
                &extremes[slot],
                (key, &group_key),
                column,
                &change.values[slot],
                (view, rule),
            )?;
            old_front.push(old);
            new_front.push(new);
            edits.extremes[slot].extend(column_edits);
        }
        let row = |matches: u64, sums: &[i128], front: Vec<Option<Value>>| {
            if matches == 0 {
                return Ok(None);
            }
            let front = unwrap_all(front, view)?;
            shape.output_row(key, matches, sums, &front, rule).map(Some)
        };
        let old_row = row(old_matches, &old_sums, old_front)?;
        let new_row = row(new_matches, &new_sums, new_front)?;
        let accumulator = (new_matches > 0).then(|| encode_accumulator(new_matches, &new_sums));
        edits.groups.push((group_key, accumulator));
        if old_row != new_row {
            if let Some(row) = old_row {
                edits.rows.push((encode(&row, types, view)?, None));
                edits.delta.deleted.insert(row);
            }
            if let Some(row) = new_row {
                edits
                    .rows
                    .push((encode(&row, types, view)?, Some(Vec::new())));
                edits.delta.inserted.insert(row);
            }
        }
        Ok(())
    }
}

fn unwrap_all(values: Vec<Option<Value>>, view: &str) -> DbResult<Vec<Value>> {
    values
        .into_iter()
        .map(|v| {
            v.ok_or_else(|| {
                DbError::internal(format!("`{view}`: a group with matches has no extreme"))
            })
        })
        .collect()
}
