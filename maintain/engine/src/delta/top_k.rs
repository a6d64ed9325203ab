//! Top-k partitions (`k = rank() over (partition … order …), k <= C` and its kin, over a
//! stored input): the front of each touched partition read once, from the old state, and
//! the new front derived from it and the delta.
//!
//! `front_new = front(rows_old − Δ⁻ + Δ⁺)`, where only the rows up to the *horizon* are
//! needed: the old front is read in window order through the index that holds it, up to
//! the first row past the bound (the horizon, read but not taken). The partition's new
//! rows before the horizon are the old front's rows less the deleted ones, plus the
//! inserted rows before it; so when the new front stops at or before the horizon, it is
//! known without another read. Only when deletes emptied the front past the horizon is
//! the new front read from the new state, as the fallback does. A touched partition thus
//! reads about k + 1 entries, plus its deletes' worth when they reach the front.
//!
//! *Invariant: the counts moved are exactly the fallback's: the old front's rows leave and
//! the new front's enter, each windowed whole.*

use super::window::bind;
use super::Maintainer;
use crate::eval::join::{project_stored, run_plan};
use crate::eval::plan::{AtomRead, RulePlan, TopK, WindowPlan};
use crate::eval::read::Flow;
use crate::eval::window::{window_rows, FrontReader, Row};
use crate::EngineResult;
use rnt_lang::tuple::Tuple;
use rnt_lang::value::Value;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// What a commit does to one partition of a top-k input: its rows inserted and deleted,
/// each as the bindings the rule's steps before the window give.
#[derive(Default)]
pub(super) struct PartitionChange {
    pub(super) inserted: Vec<Row>,
    pub(super) deleted: Vec<Row>,
}

/// How a top-k view reads its input: the rule's plan, its window, its input atom, the
/// top-k bound with the index serving it, and the steps before the window.
pub(super) struct TopKRead<'p> {
    pub(super) full: &'p RulePlan,
    pub(super) window: &'p WindowPlan,
    pub(super) input: &'p AtomRead,
    pub(super) top: &'p TopK,
    pub(super) before: &'p RulePlan,
}

impl TopKRead<'_> {
    /// The index prefix of partition `key`.
    fn prefix(&self, key: &[Value]) -> Vec<Value> {
        self.top
            .prefix
            .iter()
            .map(|var| {
                let at = self.window.partition.iter().position(|v| v == var);
                at.map_or(Value::Bool(false), |i| key[i].clone())
            })
            .collect()
    }
}

impl Maintainer<'_> {
    /// The change of each partition the input's delta touches, by partition key: its
    /// tuples inserted and deleted as rows (`before` run on each tuple's bindings).
    pub(super) fn partition_changes(
        &self,
        full: &RulePlan,
        window: &WindowPlan,
        input: &AtomRead,
        before: &RulePlan,
    ) -> EngineResult<BTreeMap<Vec<Value>, PartitionChange>> {
        let mut changes: BTreeMap<Vec<Value>, PartitionChange> = BTreeMap::new();
        let Some(delta) = self.deltas.get(&input.relation) else {
            return Ok(changes);
        };
        for (tuples, inserted) in [(&delta.inserted, true), (&delta.deleted, false)] {
            for tuple in tuples.tuples() {
                let Some(mut row) = bind(&input.columns, tuple, full.variables) else {
                    continue;
                };
                let change = changes.entry(window.partition_of(&row)).or_default();
                let rows = if inserted {
                    &mut change.inserted
                } else {
                    &mut change.deleted
                };
                run_plan(before, &[], &mut row, &mut |b| {
                    rows.push(b.to_vec());
                    Ok(Flow::Continue)
                })?;
            }
        }
        Ok(changes)
    }

    /// Moves `counts` by partition `key`'s change: the old front's rows out, the new
    /// front's in. `None` when the input keeps no ordered tree (the caller falls back).
    pub(super) fn top_k_partition(
        &self,
        read: &TopKRead<'_>,
        key: &[Value],
        change: &PartitionChange,
        counts: &mut BTreeMap<Tuple, i64>,
    ) -> EngineResult<Option<()>> {
        let Some((old_front, horizon)) = self.old_front(read, key)? else {
            return Ok(None);
        };
        let new_front = match derived_front(read, &old_front, horizon.as_ref(), change) {
            Some(front) => front,
            None => match self.new_front(read, key)? {
                Some(front) => front,
                None => return Ok(None),
            },
        };
        for (rows, sign) in [(old_front, -1), (new_front, 1)] {
            window_rows(read.full, read.window, rows, &mut |b| {
                *counts.entry(project_stored(read.full, b)?).or_default() += sign;
                Ok(Flow::Continue)
            })?;
        }
        Ok(Some(()))
    }

    /// The old front of partition `key` and its horizon (the first row past the bound,
    /// `None` at the partition's end).
    fn old_front(
        &self,
        read: &TopKRead<'_>,
        key: &[Value],
    ) -> EngineResult<Option<(Vec<Row>, Option<Row>)>> {
        let mut front = FrontReader::new(read.window, read.top);
        let mut horizon = None;
        let order = (read.top.permutation.as_slice(), read.top.descending);
        let done = self.old.read_ordered(
            &read.input.relation,
            order,
            &read.prefix(key),
            &mut |tuple| {
                let Some(mut row) = bind(&read.input.columns, tuple, read.full.variables) else {
                    return Ok(Flow::Continue);
                };
                let mut flow = Flow::Continue;
                run_plan(read.before, &[], &mut row, &mut |b| {
                    if front.take(b) == Flow::Stop {
                        horizon = Some(b.to_vec());
                        flow = Flow::Stop;
                    }
                    Ok(flow)
                })?;
                Ok(flow)
            },
        )?;
        Ok(done.map(|_| (front.rows(), horizon)))
    }

    /// The new front of partition `key`, read from the new state.
    fn new_front(&self, read: &TopKRead<'_>, key: &[Value]) -> EngineResult<Option<Vec<Row>>> {
        let mut front = FrontReader::new(read.window, read.top);
        let order = (read.top.permutation.as_slice(), read.top.descending);
        let done = self.new.read_ordered(
            &read.input.relation,
            order,
            &read.prefix(key),
            &mut |tuple| {
                let Some(mut row) = bind(&read.input.columns, tuple, read.full.variables) else {
                    return Ok(Flow::Continue);
                };
                let mut stop = false;
                run_plan(read.before, &[], &mut row, &mut |b| {
                    stop = front.take(b) == Flow::Stop;
                    Ok(if stop { Flow::Stop } else { Flow::Continue })
                })?;
                Ok(if stop { Flow::Stop } else { Flow::Continue })
            },
        )?;
        Ok(done.map(|_| front.rows()))
    }
}

/// The new front from the old one, its horizon and the partition's change, when the rows
/// known reach far enough: the new front must stop at or before the horizon (or the old
/// read must have reached the partition's end). `None` otherwise.
fn derived_front(
    read: &TopKRead<'_>,
    old_front: &[Row],
    horizon: Option<&Row>,
    change: &PartitionChange,
) -> Option<Vec<Row>> {
    let mut rows: Vec<Row> = old_front.iter().chain(horizon).cloned().collect();
    for deleted in &change.deleted {
        if let Some(at) = rows.iter().position(|row| row == deleted) {
            rows.remove(at);
        }
    }
    rows.extend(change.inserted.iter().cloned());
    rows.sort_by(|a, b| read.window.compare(a, b));
    let mut front = FrontReader::new(read.window, read.top);
    let stopped_at = rows.into_iter().find(|row| front.take(row) == Flow::Stop);
    let known = match (horizon, &stopped_at) {
        (None, _) => true,
        (Some(horizon), Some(stop)) => read.window.compare(stop, horizon) != Ordering::Greater,
        (Some(_), None) => false,
    };
    known.then(|| front.rows())
}
