//! Aggregates (one rule, `count`/`sum`/`avg`/`min`/`max`/`count_distinct`/`concat` in the
//! head), from per-group accumulators kept beside the view (layout in
//! `crate::eval::aggregate`):
//!
//! `acc'(g) = acc(g) + Σ signed matches of the delta terms in group g`, and the view's delta
//! retracts each touched group's old row and inserts its new one (a group whose matches fall
//! to 0 has no row). One accumulator read per touched group; MIN/MAX read the front of the
//! group's sorted values (`minmax`); COUNT_DISTINCT reads one match count per touched
//! (group, value) and steps the accumulator's distinct count (`distinct`); CONCAT re-reads
//! the touched group's values (`concat`, the fallback).

use super::terms::Mode;
use super::{aux, encode, stored_tree, Delta, Maintainer};
use crate::eval::aggregate::{
    distinct_label, extremes_label, values_label, Accumulator, AggregateShape, GROUPS_LABEL,
};
use crate::eval::aggregate::{AccumulatorShape, FoldColumns, GroupFold};
use crate::eval::exact_sum::ExactSum;
use crate::eval::read::Flow;
use crate::{EngineError, EngineResult};
use rnt_lang::tuple::Tuple;
use rnt_lang::value::Value;
use rnt_merkle::{Edit, Tree};
use std::collections::BTreeMap;

/// The signed change the delta terms bring to one group.
type GroupChange = GroupFold<i64>;

/// The aux trees of an aggregating view that a group change reads.
struct AuxTrees<'a> {
    groups: &'a Tree,
    extremes: &'a [Tree],
    distinct: &'a [Tree],
    concat: &'a [Tree],
}

/// The edits to a view's trees that its touched groups make, and the view's delta.
#[derive(Default)]
struct Edits {
    rows: Vec<Edit>,
    groups: Vec<Edit>,
    extremes: Vec<Vec<Edit>>,
    distinct: Vec<Vec<Edit>>,
    concat: Vec<Vec<Edit>>,
    delta: Delta,
}

impl Maintainer<'_> {
    /// Aggregates: fold the signed matches into the touched groups' accumulators (one read
    /// per group), update the sorted values of MIN/MAX columns, and retract each touched
    /// group's old row and insert its new one.
    pub(super) fn maintain_aggregate(&mut self, view: &str) -> EngineResult<()> {
        let types = self.types(view);
        let plan = self
            .plans
            .full
            .get(view)
            .and_then(|p| p.first())
            .cloned()
            .ok_or_else(|| EngineError::internal(format!("aggregate view `{view}` has no plan")))?;
        let shape = AggregateShape::of(&plan, &types);
        let changes = self.group_changes(view, &shape)?;
        let entry = self.entry(view)?;
        let tree = stored_tree(&entry)?;
        let groups = aux(&entry, GROUPS_LABEL)?;
        let extreme_columns = shape.extreme_columns();
        let extremes: Vec<Tree> = extreme_columns
            .iter()
            .map(|&c| aux(&entry, &extremes_label(c)))
            .collect::<EngineResult<_>>()?;
        let distinct_columns = shape.distinct_columns();
        let distinct: Vec<Tree> = distinct_columns
            .iter()
            .map(|&c| aux(&entry, &distinct_label(c)))
            .collect::<EngineResult<_>>()?;
        let concat_columns = shape.concat_columns();
        let concat: Vec<Tree> = concat_columns
            .iter()
            .map(|&c| aux(&entry, &values_label(c)))
            .collect::<EngineResult<_>>()?;
        let mut edits = Edits {
            extremes: vec![Vec::new(); extreme_columns.len()],
            distinct: vec![Vec::new(); distinct_columns.len()],
            concat: vec![Vec::new(); concat_columns.len()],
            ..Edits::default()
        };
        let trees = AuxTrees {
            groups: &groups,
            extremes: &extremes,
            distinct: &distinct,
            concat: &concat,
        };
        for (key, change) in changes {
            let group = Group {
                view,
                rule: &plan.source,
                shape: &shape,
                trees: &trees,
                group_key: shape.encode_key(&key, &plan.source)?,
                key: &key,
            };
            self.apply_group_change(&group, &change, &mut edits)?;
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
        for (slot, &column) in distinct_columns.iter().enumerate() {
            let mut column_edits = std::mem::take(&mut edits.distinct[slot]);
            column_edits.sort_by(|a, b| a.0.cmp(&b.0));
            extra.push((
                distinct_label(column),
                distinct[slot].edit(self.nodes, column_edits)?,
            ));
        }
        for (slot, &column) in concat_columns.iter().enumerate() {
            let mut column_edits = std::mem::take(&mut edits.concat[slot]);
            column_edits.sort_by(|a, b| a.0.cmp(&b.0));
            extra.push((
                values_label(column),
                concat[slot].edit(self.nodes, column_edits)?,
            ));
        }
        self.store(view, entry, new_tree, edits.delta, extra)
    }

    /// The signed matches of the delta terms, folded per group key.
    fn group_changes(
        &self,
        view: &str,
        shape: &AggregateShape,
    ) -> EngineResult<BTreeMap<Tuple, GroupChange>> {
        let columns = FoldColumns::of(shape);
        let mut changes: BTreeMap<Tuple, GroupChange> = BTreeMap::new();
        self.delta_terms(
            view,
            Mode::Signed,
            &self.deltas,
            &self.new,
            &self.old,
            &mut |_, b, sign| {
                changes
                    .entry(shape.key_of(b))
                    .or_insert_with(|| GroupChange::empty(&columns))
                    .add(shape, &columns, b, sign);
                Ok(Flow::Continue)
            },
        )?;
        Ok(changes)
    }

    /// One touched group: its accumulator `acc' = acc + change`, its MIN/MAX fronts, its
    /// COUNT_DISTINCT steps, its CONCAT values re-read, and the retraction of its old row
    /// and insertion of its new one when they differ.
    fn apply_group_change(
        &self,
        group: &Group<'_>,
        change: &GroupChange,
        edits: &mut Edits,
    ) -> EngineResult<()> {
        let shape = group.shape;
        let parts = AccumulatorShape::of(shape);
        let old = match group.trees.groups.get(self.nodes, &group.group_key)? {
            Some(bytes) => Accumulator::decode(&bytes, parts)?,
            None => Accumulator::empty(parts),
        };
        let new = self.accumulator_after(group, &old, change, edits)?;
        let (old_front, new_front) = self.fronts_after(group, change, edits)?;
        let (old_joined, new_joined) = self.concat_after(group, change, new.matches, edits)?;
        let row =
            |accumulator: &Accumulator, front: Vec<Option<Value>>, joined: Vec<Option<String>>| {
                if accumulator.matches == 0 {
                    return Ok(None);
                }
                check_values(shape, accumulator, (&front, &joined), group.view)?;
                shape
                    .output_row(group.key, accumulator, (&front, &joined), group.rule)
                    .map(Some)
            };
        let old_row = row(&old, old_front, old_joined)?;
        let new_row = row(&new, new_front, new_joined)?;
        let accumulator = (new.matches > 0).then(|| new.encode());
        edits.groups.push((group.group_key.clone(), accumulator));
        if old_row != new_row {
            let types = &shape.head_types;
            if let Some(row) = old_row {
                edits.rows.push((encode(&row, types, group.view)?, None));
                edits.delta.deleted.insert(row);
            }
            if let Some(row) = new_row {
                edits
                    .rows
                    .push((encode(&row, types, group.view)?, Some(Vec::new())));
                edits.delta.inserted.insert(row);
            }
        }
        Ok(())
    }

    /// The group's accumulator after `change`: matches and sums stepped, each
    /// COUNT_DISTINCT count stepped from the values whose counts cross zero (their edits
    /// noted). A group has a value exactly when it has a match, and no more values than
    /// matches: anything else is damage.
    fn accumulator_after(
        &self,
        group: &Group<'_>,
        old: &Accumulator,
        change: &GroupChange,
        edits: &mut Edits,
    ) -> EngineResult<Accumulator> {
        let view = group.view;
        let negative = |what: &str| {
            EngineError::corrupted(format!(
                "maintaining `{view}`: a group's {what} went negative"
            ))
        };
        let mut new = Accumulator {
            matches: step(old.matches, change.matches).ok_or_else(|| negative("match count"))?,
            sums: old
                .sums
                .iter()
                .zip(&change.sums)
                .map(|(a, b)| a + b)
                .collect(),
            distincts: Vec::with_capacity(old.distincts.len()),
            exact: old
                .exact
                .iter()
                .zip(&change.exact)
                .map(|(a, b)| {
                    let mut sum = a.clone();
                    sum.add_sum(b);
                    sum
                })
                .collect(),
            present: old
                .present
                .iter()
                .zip(&change.present)
                .map(|(&a, &b)| step(a, b).ok_or_else(|| negative("non-null count")))
                .collect::<EngineResult<_>>()?,
        };
        if !new.exact.iter().all(ExactSum::counts_are_natural) {
            return Err(negative("count of infinities or NaNs"));
        }
        for (slot, &old_distinct) in old.distincts.iter().enumerate() {
            let (distinct_step, column_edits) = self.distinct_change(
                group.shape,
                &group.trees.distinct[slot],
                (group.key, &group.group_key),
                &change.distinct[slot],
                (view, group.rule),
            )?;
            new.distincts
                .push(step(old_distinct, distinct_step).ok_or_else(|| negative("distinct count"))?);
            edits.distinct[slot].extend(column_edits);
        }
        // A group has no more distinct values than matches, and none without one; with an
        // argument that is never null, a value exactly when it has a match.
        let distinct_columns = group.shape.distinct_columns();
        let inconsistent = |(slot, &d): (usize, &u64)| {
            let nullable = group.shape.argument_nullable[distinct_columns[slot]];
            d > new.matches
                || (new.matches == 0 && d > 0)
                || (!nullable && new.matches > 0 && d == 0)
        };
        if new.distincts.iter().enumerate().any(inconsistent) {
            return Err(EngineError::corrupted(format!(
                "maintaining `{view}`: a group has {} matches but distinct counts {:?}",
                new.matches, new.distincts
            )));
        }
        Ok(new)
    }

    /// Each MIN/MAX column's front (its least or greatest value) before and after
    /// `change`, its sorted values' edits noted.
    #[allow(clippy::type_complexity)]
    fn fronts_after(
        &self,
        group: &Group<'_>,
        change: &GroupChange,
        edits: &mut Edits,
    ) -> EngineResult<(Vec<Option<Value>>, Vec<Option<Value>>)> {
        let mut old_front = Vec::new();
        let mut new_front = Vec::new();
        for (slot, &column) in group.shape.extreme_columns().iter().enumerate() {
            let (old, new, column_edits) = self.extreme_fronts(
                group.shape,
                &group.trees.extremes[slot],
                (group.key, &group.group_key),
                column,
                &change.values[slot],
                (group.view, group.rule),
            )?;
            old_front.push(old);
            new_front.push(new);
            edits.extremes[slot].extend(column_edits);
        }
        Ok((old_front, new_front))
    }

    /// Each CONCAT column's joined values before and after `change` (the group's values
    /// re-read), their edits noted; `matches` is the group's count after the change.
    #[allow(clippy::type_complexity)]
    fn concat_after(
        &self,
        group: &Group<'_>,
        change: &GroupChange,
        matches: u64,
        edits: &mut Edits,
    ) -> EngineResult<(Vec<Option<String>>, Vec<Option<String>>)> {
        let mut old_joined = Vec::new();
        let mut new_joined = Vec::new();
        for (slot, &column) in group.shape.concat_columns().iter().enumerate() {
            let joined = self.concat_change(
                group.shape,
                &group.trees.concat[slot],
                (group.key, &group.group_key),
                column,
                &change.concat[slot],
                (group.view, group.rule),
            )?;
            // A group has a value only when it has a match; exactly then when the argument
            // is never null.
            let nullable = group.shape.argument_nullable[column];
            if (joined.new.is_some() && matches == 0)
                || (!nullable && joined.new.is_none() && matches > 0)
            {
                return Err(EngineError::corrupted(format!(
                    "maintaining `{}`: a group has {matches} matches but {} concat values",
                    group.view,
                    if joined.new.is_some() { "some" } else { "no" }
                )));
            }
            old_joined.push(joined.old);
            new_joined.push(joined.new);
            edits.concat[slot].extend(joined.edits);
        }
        Ok((old_joined, new_joined))
    }
}

/// One touched group of an aggregating view, and what reading and writing it needs.
struct Group<'a> {
    view: &'a str,
    /// The rule's text, for errors.
    rule: &'a str,
    shape: &'a AggregateShape,
    trees: &'a AuxTrees<'a>,
    /// The group key's values, and their encoding.
    key: &'a Tuple,
    group_key: Vec<u8>,
}

/// `count + change`, or `None` when it would go below zero (or past `u64::MAX`).
fn step(count: u64, change: i64) -> Option<u64> {
    i64::try_from(count)
        .ok()
        .and_then(|c| c.checked_add(change))
        .and_then(|c| u64::try_from(c).ok())
}

/// A group with matches has each MIN/MAX and CONCAT value, unless its argument may be null
/// (a group of only nulls has none: null).
fn check_values(
    shape: &AggregateShape,
    accumulator: &Accumulator,
    (fronts, joined): (&[Option<Value>], &[Option<String>]),
    view: &str,
) -> EngineResult<()> {
    let missing = shape
        .extreme_columns()
        .iter()
        .zip(fronts)
        .any(|(&c, front)| front.is_none() && !shape.argument_nullable[c])
        || shape
            .concat_columns()
            .iter()
            .zip(joined)
            .any(|(&c, joined)| joined.is_none() && !shape.argument_nullable[c]);
    if missing && accumulator.matches > 0 {
        return Err(EngineError::internal(format!(
            "`{view}`: a group with matches has no extreme or concat value"
        )));
    }
    Ok(())
}
