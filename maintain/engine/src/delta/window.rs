//! Window views, by the fallback (D∘Q∘I per touched partition, docs/theory.md): a view
//! whose rule holds a window literal counts derivations as a counting view does, and
//!
//! `Δcount(t) = Σ_{p ∈ P(ΔR)} (#{rows of W(R_new|p) deriving t} − #{rows of W(R_old|p) deriving t})`
//!
//! where `P(ΔR)` are the partitions (partition-key values) the input's delta touches,
//! `R|p` the input's rows in partition `p` and `W` the window with the steps after it
//! (`crate::eval::window`). A partition the delta does not touch has the same rows, so the
//! same window values, before and after: it contributes nothing and is never read. Each
//! touched partition is read twice, old and new, by one prefix read through an index led
//! by the partition columns (the tuple tree itself when they lead it): O(Σm) over the
//! touched partitions, never the relation (an empty partition list makes one partition,
//! the whole input). The counts then move as counting's do (`counting::apply_counts`).
//!
//! Top-k (`eval::window::TopK`: a ranking function over ascending order terms, bounded
//! by a constant after it): the view's rows of a partition are those of its front, the
//! rows up to the first one whose value passes the bound, and each value depends only on
//! the rows before it. So each touched partition's old front is read from the index that
//! holds it in window order (backward for a descending order), stopping at the first peer
//! group past the bound, and the new front is derived from it and the delta (`top_k`):
//! about k + 1 entries per touched partition, plus the deletes' worth when they reach the
//! front, O(K·k), whatever the partition's size.

use super::running::{steps_before, RunningInput};
use super::top_k::{PartitionChange, TopKRead};
use super::Maintainer;
use crate::eval::join::{project_stored, run_plan};
use crate::eval::plan::WindowPlan;
use crate::eval::plan::{AtomRead, Column, RulePlan, Step};
use crate::eval::read::{Flow, Relations};
use crate::eval::window::{keeps_totals, stored_running, window_rows, RUNNING_LABEL};
use crate::{EngineError, EngineResult};
use rnt_lang::tuple::Tuple;
use rnt_lang::value::Value;
use std::collections::{BTreeMap, BTreeSet};

impl Maintainer<'_> {
    /// A window view: a running window from its first changed row on (`running`), any
    /// other by the fallback — each partition the input's delta touches re-read old and new
    /// and windowed, the difference of the rows it derives moving the view's counts.
    pub(super) fn maintain_window(&mut self, view: &str) -> EngineResult<()> {
        let plans = self.plans;
        let plan = plans.partition.get(view).ok_or_else(|| {
            EngineError::internal(format!("window view `{view}` has no partition plan"))
        })?;
        let window = plan.window.as_ref().ok_or_else(|| {
            EngineError::internal(format!("window view `{view}`'s plan has no window"))
        })?;
        let full = plans
            .full
            .get(view)
            .and_then(|p| p.first())
            .ok_or_else(|| EngineError::internal(format!("window view `{view}` has no plan")))?;
        // The full plan reads the input first with nothing bound: its columns say how a
        // tuple of the input binds the rule's variables.
        let input = full.steps.iter().find_map(|step| match step {
            Step::Join(read) if read.literal == window.input => Some(read),
            _ => None,
        });
        let input = input.ok_or_else(|| {
            EngineError::internal(format!("window view `{view}`'s plan reads no input"))
        })?;
        let old_totals = self
            .old_entries
            .iter()
            .find(|e| e.name == view)
            .and_then(|e| e.aux_tree(RUNNING_LABEL));
        let keeps = keeps_totals(self.program, full);
        if let Some(running) = stored_running(self.program, full) {
            if !keeps || old_totals.is_some() {
                let running = RunningInput {
                    full,
                    window,
                    input,
                    running,
                    types: self.types(&input.relation),
                    before: steps_before(full),
                };
                let delta = self.deltas.get(&input.relation);
                let (counts, edits) = self.running_counts(&running, delta, old_totals.as_ref())?;
                debug_assert!(
                    edits.windows(2).all(|p| p[0].0 < p[1].0),
                    "edits in key order"
                );
                let extra = match old_totals {
                    Some(totals) if keeps => {
                        vec![(RUNNING_LABEL.to_string(), totals.edit(self.nodes, edits)?)]
                    }
                    _ => Vec::new(),
                };
                return self.apply_counts_with(view, counts, extra);
            }
        }
        let counts = self.fallback_counts(full, plan, window, input)?;
        // A view that keeps totals but whose state has none (written before they were
        // kept) gets them from scratch, once.
        let extra = if keeps {
            vec![(RUNNING_LABEL.to_string(), self.new.running_totals(view)?)]
        } else {
            Vec::new()
        };
        self.apply_counts_with(view, counts, extra)
    }

    /// The fallback's count changes: each partition the input's delta touches re-read old
    /// and new (a top-k: its front) and windowed.
    fn fallback_counts(
        &self,
        full: &RulePlan,
        plan: &RulePlan,
        window: &WindowPlan,
        input: &AtomRead,
    ) -> EngineResult<BTreeMap<Tuple, i64>> {
        let mut touched: BTreeSet<Vec<Value>> = BTreeSet::new();
        if let Some(delta) = self.deltas.get(&input.relation) {
            let tuples = delta.inserted.tuples().iter().chain(delta.deleted.tuples());
            for tuple in tuples {
                if let Some(row) = bind(&input.columns, tuple, full.variables) {
                    touched.insert(window.partition_of(&row));
                }
            }
        }
        let mut counts: BTreeMap<Tuple, i64> = BTreeMap::new();
        // The rest of the full plan after its read of the input: the filters and
        // assignments that run before the window, per input tuple.
        let mut before = full.clone();
        before.steps.retain(|step| !matches!(step, Step::Join(_)));
        let top = window.top.as_ref().filter(|_| {
            self.program
                .relation(&input.relation)
                .is_some_and(|r| r.kind().is_stored())
        });
        let changes = match top {
            Some(_) => self.partition_changes(full, window, input, &before)?,
            None => BTreeMap::new(),
        };
        let unchanged = PartitionChange::default();
        for key in &touched {
            if let Some(top) = top {
                let read = TopKRead {
                    full,
                    window,
                    input,
                    top,
                    before: &before,
                };
                let change = changes.get(key).unwrap_or(&unchanged);
                if self
                    .top_k_partition(&read, key, change, &mut counts)?
                    .is_some()
                {
                    continue;
                }
            }
            for (engine, sign) in [(&self.old, -1), (&self.new, 1)] {
                let mut bindings = vec![None; plan.variables];
                for (var, value) in window.partition.iter().zip(key) {
                    bindings[var.index()] = Some(value.clone());
                }
                let sources = vec![engine as &dyn Relations; plan.literals];
                let mut rows = Vec::new();
                run_plan(plan, &sources, &mut bindings, &mut |b| {
                    rows.push(b.to_vec());
                    Ok(Flow::Continue)
                })?;
                window_rows(plan, window, rows, &mut |b| {
                    *counts.entry(project_stored(plan, b)?).or_default() += sign;
                    Ok(Flow::Continue)
                })?;
            }
        }
        counts.retain(|_, change| *change != 0);
        Ok(counts)
    }
}

/// The bindings a tuple of the input gives the rule's variables through the input atom's
/// columns, or `None` when the tuple does not match the atom (a constant or a repeated
/// variable differs, or a repeated variable meets a null).
pub(super) fn bind(
    columns: &[Column],
    tuple: &[Value],
    variables: usize,
) -> Option<Vec<Option<Value>>> {
    let mut row = vec![None; variables];
    for (column, value) in columns.iter().zip(tuple) {
        match column {
            Column::Const(c) if c != value => return None,
            Column::Bind(v) => row[v.index()] = Some(value.clone()),
            // A repeated variable is a join: a null never matches there.
            Column::Same(v) if value.is_null() || row[v.index()].as_ref() != Some(value) => {
                return None
            }
            _ => {}
        }
    }
    Some(row)
}
