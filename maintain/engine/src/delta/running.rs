//! Running windows (`eval::window::RunningIndex`): a running `sum`/`count`, or a
//! `lag`/`lead`, over order terms that are all ascending. Such a row's value depends only on
//! the rows before it (`lead`: on the `n` rows after it), so when a commit changes the rows
//! of partition `p` at keys `k₁ ≤ … ≤ kₗ` (the index's key order is the window's order),
//!
//! `W(R_new|p)[r] = W(R_old|p)[r]` for every row `r` before `k₁` (`lead`: before the `n`
//! rows just before `k₁`),
//!
//! and the view's derivation counts move only by the rows of the region after that point
//! whose value changed:
//!
//! `Δcount(t) = Σ_{r ∈ region} [r derives t with W_new(r)] − [r derives t with W_old(r)]`
//!
//! (a row only in `R_old` has no new value, one only in `R_new` no old one). What each
//! function reads, from the index that holds the input in window order:
//!
//! - running `sum`/`count`: the rows from `k₁` to the partition's end, old, and the
//!   partition's total kept beside the view (`running`, `eval::window::PartitionTotal`):
//!   the value just before `k₁` is the total less what those rows add. A change at
//!   position `i` reads and re-emits the `m − i` rows after it; an append at the tail reads
//!   one total and no row — O(1) per change, docs/costs.md's "running total, appends".
//! - `lag(x, n, d)`, `lead(x, n, d)`: the `n` rows before `k₁` (read backward), the rows up
//!   to `kₗ` and the `n` after it: O(n + the rows between the first and last change).
//!
//! New rows are the old ones with the delta applied (`R_new|p = R_old|p − Δ⁻ + Δ⁺`), so the
//! new state is never read. Any other window, and a running one over a descending order or
//! an input computed when read, takes the fallback (`window`).

use super::{Delta, Maintainer};
use crate::eval::join::{project_stored, run_plan};
use crate::eval::plan::{AtomRead, RulePlan, Step};
use crate::eval::plan::{RunningIndex, WindowPlan};
use crate::eval::read::Flow;
use crate::eval::window::{
    argument, finish_row, running_sum_overflow, sum_value, summand, totals_key, PartitionTotal, Row,
};
use crate::{EngineError, EngineResult};
use rnt_lang::syntax::ast::WindowFn;
use rnt_lang::tuple::{encode_permuted, Tuple};
use rnt_lang::value::{ColumnType, Value};
use rnt_merkle::{Edit, Tree};
use std::collections::BTreeMap;

/// One row of a partition: its key in the index that holds the input in window order, and
/// its bindings.
type KeyedRow = (Vec<u8>, Row);

/// A partition's changed rows by key, each with its sign (−1 deleted, +1 inserted).
type Changes = BTreeMap<Vec<u8>, (Row, i64)>;

/// How a running window's input tuples become rows: the input atom's columns, the steps
/// before the window, the index order and the column types.
pub(super) struct RunningInput<'p> {
    /// The windowed rule's plan (read the input, the steps before the window).
    pub full: &'p RulePlan,
    /// Its window.
    pub window: &'p WindowPlan,
    /// The plan's read of the input atom.
    pub input: &'p AtomRead,
    /// The index order.
    pub running: &'p RunningIndex,
    /// The input relation's column types.
    pub types: Vec<ColumnType>,
    /// The full plan without its read: the steps before the window, per input tuple.
    pub before: RulePlan,
}

impl RunningInput<'_> {
    /// The row `tuple` of the input gives the window, or `None` when the tuple does not
    /// match the atom or a step before the window drops it.
    fn row(&self, tuple: &[Value]) -> EngineResult<Option<Row>> {
        let Some(mut row) = super::window::bind(&self.input.columns, tuple, self.full.variables)
        else {
            return Ok(None);
        };
        let mut passed = None;
        run_plan(&self.before, &[], &mut row, &mut |b| {
            passed = Some(b.to_vec());
            Ok(Flow::Stop)
        })?;
        Ok(passed)
    }

    /// A tuple's key in the index that holds the input in window order.
    fn key(&self, tuple: &[Value]) -> EngineResult<Vec<u8>> {
        encode_permuted(tuple, &self.types, &self.running.permutation).map_err(|e| {
            EngineError::internal(format!(
                "a stored tuple does not re-encode for an index: {e}"
            ))
        })
    }
}

impl Maintainer<'_> {
    /// A running window view's count changes, per partition the input's delta touches:
    /// the region from the first changed row on, old (read) and new (the old with the
    /// delta applied), valued, and every row whose value changed moving the counts. With
    /// `totals` (a running `sum`/`count`'s `running` tree, old), also the edits that bring
    /// the totals up to date.
    pub(super) fn running_counts(
        &self,
        input: &RunningInput<'_>,
        delta: Option<&Delta>,
        totals: Option<&Tree>,
    ) -> EngineResult<(BTreeMap<Tuple, i64>, Vec<Edit>)> {
        let mut partitions: BTreeMap<Vec<u8>, Changes> = BTreeMap::new();
        if let Some(delta) = delta {
            for (tuples, sign) in [(&delta.deleted, -1), (&delta.inserted, 1)] {
                for tuple in tuples.tuples() {
                    let Some(row) = input.row(tuple)? else {
                        continue;
                    };
                    let key = input.key(tuple)?;
                    let prefix = totals_key(input.running, &row, &input.types)?;
                    debug_assert!(
                        key.starts_with(&prefix),
                        "a row's key leads with its partition"
                    );
                    partitions
                        .entry(prefix)
                        .or_default()
                        .insert(key, (row, sign));
                }
            }
        }
        let mut counts: BTreeMap<Tuple, i64> = BTreeMap::new();
        let mut edits: Vec<Edit> = Vec::new();
        for (prefix, changes) in &partitions {
            let (old, new) = match input.window.function {
                WindowFn::Sum | WindowFn::Count => {
                    let totals = totals.ok_or_else(|| {
                        EngineError::internal("a running sum or count without its totals")
                    })?;
                    let (old, new, total) = self.running_values(input, prefix, changes, totals)?;
                    edits.push((prefix.clone(), (total.rows > 0).then(|| total.encode())));
                    (old, new)
                }
                WindowFn::Lag | WindowFn::Lead => self.offset_values(input, prefix, changes)?,
                _ => {
                    return Err(EngineError::internal(
                        "a ranking window maintained as a running one",
                    ))
                }
            };
            for (key, (row, value)) in &old {
                if new.get(key).is_some_and(|(_, v)| v == value) {
                    continue;
                }
                emit(input, row, value, -1, &mut counts)?;
            }
            for (key, (row, value)) in &new {
                if old.get(key).is_some_and(|(_, v)| v == value) {
                    continue;
                }
                emit(input, row, value, 1, &mut counts)?;
            }
        }
        counts.retain(|_, change| *change != 0);
        Ok((counts, edits))
    }

    /// A running `sum`/`count` partition's rows from its first change on, old and new, each
    /// with its value; and the partition's new total.
    fn running_values(
        &self,
        input: &RunningInput<'_>,
        prefix: &[u8],
        changes: &Changes,
        totals: &Tree,
    ) -> EngineResult<(Valued, Valued, PartitionTotal)> {
        let view = &input.full.head;
        let total = match totals.get(self.nodes, prefix)? {
            Some(bytes) => PartitionTotal::decode(&bytes).ok_or_else(|| {
                EngineError::corrupted(format!(
                    "view `{view}` holds a partition total of {} bytes, not 16",
                    bytes.len()
                ))
            })?,
            None => PartitionTotal::default(),
        };
        let first = changes.keys().next().map(Vec::as_slice).unwrap_or(prefix);
        let old_rows = self.read_old_rows(input, prefix, first, None)?;
        let new_rows = apply_changes(&old_rows, changes);
        let step = |row: &Row| -> EngineResult<i128> {
            Ok(match input.window.function {
                WindowFn::Sum => i128::from(summand(input.full, input.window, row)?),
                _ => 1,
            })
        };
        // A running value as the view shows it: a `sum`'s at its argument's type, a count.
        let shown = |units: i64| -> EngineResult<Value> {
            match input.window.function {
                WindowFn::Sum => sum_value(input.full, input.window, units),
                _ => Ok(Value::Int(units)),
            }
        };
        // The value of the row just before the first change: the total less the rows from
        // there on.
        let mut read: i128 = 0;
        for (_, row) in &old_rows {
            read += step(row)?;
        }
        let before = i128::from(total.value(input.window.function)) - read;
        let mut old = Valued::new();
        let mut value = before;
        for (key, row) in old_rows {
            value += step(&row)?;
            let stored = i64::try_from(value).map_err(|_| {
                EngineError::corrupted(format!(
                    "view `{view}`: a stored partition total disagrees with its rows"
                ))
            })?;
            old.insert(key, (row, shown(stored)?));
        }
        let mut new = Valued::new();
        let mut value = before;
        let rows = changes
            .values()
            .try_fold(total.rows, |rows, (_, sign)| rows.checked_add_signed(*sign))
            .ok_or_else(|| {
                EngineError::corrupted(format!(
                    "view `{view}`: a partition total counts fewer rows than were deleted"
                ))
            })?;
        for (key, row) in new_rows {
            value += step(&row)?;
            let running = i64::try_from(value).map_err(|_| running_sum_overflow(input.full))?;
            new.insert(key, (row, shown(running)?));
        }
        let sum = i64::try_from(value).map_err(|_| running_sum_overflow(input.full))?;
        let sum = if input.window.function == WindowFn::Sum {
            sum
        } else {
            0
        };
        debug_assert!(
            input.window.function != WindowFn::Count || i128::from(rows) == value,
            "view `{view}`: a running count's last value is its partition's rows"
        );
        Ok((old, new, PartitionTotal { rows, sum }))
    }

    /// A `lag`/`lead` partition's rows whose value a change can move, old and new, each with
    /// its value: `lag` the rows from the first change to `n` rows past the last, `lead` the
    /// rows from `n` rows before the first change to the last; read with `n` rows of context
    /// on each side.
    fn offset_values(
        &self,
        input: &RunningInput<'_>,
        prefix: &[u8],
        changes: &Changes,
    ) -> EngineResult<(Valued, Valued)> {
        let n = input.window.offset;
        let (Some(first), Some(last)) = (changes.keys().next(), changes.keys().next_back()) else {
            return Ok((Valued::new(), Valued::new()));
        };
        // The n rows before the first change, in window order; fewer when the partition
        // starts there.
        let mut before: Vec<KeyedRow> = Vec::with_capacity(n);
        if n > 0 {
            self.old.read_ordered_from(
                &input.input.relation,
                &input.running.permutation,
                (prefix, first),
                true,
                &mut |key, tuple| {
                    if let Some(row) = input.row(&tuple)? {
                        before.push((key.to_vec(), row));
                    }
                    Ok(if before.len() == n {
                        Flow::Stop
                    } else {
                        Flow::Continue
                    })
                },
            )?;
            before.reverse();
        }
        let starts = before.len() < n;
        let old_rows = self.read_old_rows(input, prefix, first, Some((last, n)))?;
        let after = old_rows.iter().filter(|(key, _)| key > last).count();
        let ends = after < n;
        let new_rows = apply_changes(&old_rows, changes);
        let lag = input.window.function == WindowFn::Lag;
        let value_of = |rows: &[KeyedRow]| -> EngineResult<Valued> {
            let sequence: Vec<&KeyedRow> = before.iter().chain(rows).collect();
            let mut valued = Valued::new();
            for (j, (key, row)) in sequence.iter().enumerate() {
                // `lag` moves the rows from the first change on, `lead` those up to the
                // last one; the context rows around them keep their values.
                let moves = if lag {
                    key.as_slice() >= first.as_slice()
                } else {
                    key.as_slice() <= last.as_slice()
                };
                if !moves {
                    continue;
                }
                let source = if lag {
                    j.checked_sub(n)
                } else {
                    Some(j + n).filter(|&i| i < sequence.len())
                };
                let value = match source {
                    Some(i) => argument(input.full, input.window, &sequence[i].1)?,
                    None if (lag && starts) || (!lag && ends) => {
                        input.window.default.clone().unwrap_or(Value::Null)
                    }
                    None => {
                        return Err(EngineError::internal(format!(
                            "rule `{}`: a lag/lead value past the rows read",
                            input.full.source
                        )))
                    }
                };
                valued.insert(key.clone(), (row.clone(), value));
            }
            Ok(valued)
        };
        Ok((value_of(&old_rows)?, value_of(&new_rows)?))
    }

    /// The old rows of the partition at `prefix` from key `first` on, in window order: to
    /// the partition's end, or (`until = Some((last, n))`) up to key `last` and `n` rows
    /// after it.
    fn read_old_rows(
        &self,
        input: &RunningInput<'_>,
        prefix: &[u8],
        first: &[u8],
        until: Option<(&[u8], usize)>,
    ) -> EngineResult<Vec<KeyedRow>> {
        let mut rows: Vec<KeyedRow> = Vec::new();
        let mut past = 0;
        self.old.read_ordered_from(
            &input.input.relation,
            &input.running.permutation,
            (prefix, first),
            false,
            &mut |key, tuple| {
                let beyond = until.filter(|(last, _)| key > *last);
                if beyond.is_some_and(|(_, n)| past == n) {
                    return Ok(Flow::Stop);
                }
                if let Some(row) = input.row(&tuple)? {
                    past += usize::from(beyond.is_some());
                    rows.push((key.to_vec(), row));
                }
                Ok(Flow::Continue)
            },
        )?;
        Ok(rows)
    }
}

/// Rows of a partition's region by key, each with its window value.
type Valued = BTreeMap<Vec<u8>, (Row, Value)>;

/// The region's new rows: the old ones with the partition's changes applied, in key order.
fn apply_changes(old: &[KeyedRow], changes: &Changes) -> Vec<KeyedRow> {
    let mut rows: BTreeMap<&[u8], &Row> = old.iter().map(|(k, r)| (k.as_slice(), r)).collect();
    for (key, (row, sign)) in changes {
        if *sign < 0 {
            debug_assert!(
                rows.contains_key(key.as_slice()),
                "a deleted row was not there"
            );
            rows.remove(key.as_slice());
        } else {
            debug_assert!(
                !rows.contains_key(key.as_slice()),
                "an inserted row was there"
            );
            rows.insert(key, row);
        }
    }
    rows.into_iter()
        .map(|(key, row)| (key.to_vec(), row.clone()))
        .collect()
}

/// Moves `counts` by `sign` for what `row` derives with the window's `value`.
fn emit(
    input: &RunningInput<'_>,
    row: &Row,
    value: &Value,
    sign: i64,
    counts: &mut BTreeMap<Tuple, i64>,
) -> EngineResult<()> {
    let mut row = row.clone();
    finish_row(
        input.full,
        input.window,
        &mut row,
        value.clone(),
        &mut |b| {
            *counts.entry(project_stored(input.full, b)?).or_default() += sign;
            Ok(Flow::Continue)
        },
    )?;
    Ok(())
}

/// The plan's steps without its read of the input: the steps before the window.
pub(super) fn steps_before(full: &RulePlan) -> RulePlan {
    let mut before = full.clone();
    before.steps.retain(|step| !matches!(step, Step::Join(_)));
    before
}
