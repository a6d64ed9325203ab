//! Time-window filter (docs/costs.md: O(Δ) per change · O(E) per clock step): a rule that
//! compares `now` with its windowed atom `A` reads `A' = σ_now(A)`, the rows inside the
//! window at the state's clock. Treating `A'` as the atom, the telescoped delta rule
//! (`terms`) needs its delta, and with the clock stepping from `t₀` to `t₁`:
//!
//! `ΔA' = σ_{t₁}(A_new) − σ_{t₀}(A_old) = σ_{t₁}(ΔA) + (σ_{t₁} − σ_{t₀})(A_old)`
//!
//! The first part filters the commit's delta of `A` at the new clock: O(Δ). The second is
//! the clock step: the rows of the old state whose truth differs between `t₀` and `t₁`,
//! signed (+ entering, − leaving). A row's truth flips only when the clock crosses its
//! crossing time `f(row)`, so those rows are one key range of the index ordered by `f`
//! (`eval::crossing`), read from its front: O(E) for E rows entering or leaving, never the
//! rows that stay. Both parts cancel where they meet (a row deleted as it leaves), and the
//! sum is consolidated, so `ΔA'` is a delta like any other: the rest of the rule's term
//! runs on it — counting, aggregates, denials and the readers above just work. Every other
//! term reads `A'` through its plan's clock step, at the clock of the state it reads (`t₁`
//! for the new state, `t₀` for the old), as the telescoped rule wants.

use super::{Delta, Maintainer};
use crate::eval::crossing::rows_crossing;
use crate::{EngineError, EngineResult};
use rnt_lang::check::ClockUse;
use rnt_lang::tuple::Tuple;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

impl Maintainer<'_> {
    /// `ΔA'` for the windowed atom of a rule reading the clock as `clock` says, given the
    /// commit's deltas (`drivers`). Cached per window, since several terms and operators
    /// (a view, a denial, an ephemeral relation's readers) may read one.
    pub(super) fn windowed_delta(
        &self,
        clock: &ClockUse,
        drivers: &BTreeMap<String, Delta>,
    ) -> EngineResult<Rc<Delta>> {
        let key = (clock.relation.clone(), clock.conditions.clone());
        if let Some(delta) = self.windowed.borrow().get(&key) {
            return Ok(delta.clone());
        }
        let before = self.nodes.counters();
        let delta = Rc::new(self.compute_windowed_delta(clock, drivers.get(&clock.relation))?);
        let spent = self.nodes.counters() - before;
        let mut window_work = self.window_work.borrow_mut();
        *window_work = *window_work + spent;
        self.windowed.borrow_mut().insert(key, delta.clone());
        Ok(delta)
    }

    fn compute_windowed_delta(
        &self,
        clock: &ClockUse,
        delta: Option<&Delta>,
    ) -> EngineResult<Delta> {
        let (Some(before), Some(after)) = (self.old.clock(), self.new.clock()) else {
            return Err(EngineError::internal(format!(
                "a rule reads `now` over `{}`, but the commit has no clock",
                clock.relation
            )));
        };
        debug_assert!(before <= after, "the clock never goes back");
        let mut weights: BTreeMap<Tuple, i64> = BTreeMap::new();
        // σ_{t₁}(ΔA): the commit's own changes, filtered at the new clock.
        if let Some(delta) = delta {
            for (sign, tuples) in [(1, &delta.inserted), (-1, &delta.deleted)] {
                for tuple in tuples.tuples() {
                    if clock.holds_tuple(after, tuple) {
                        *weights.entry(tuple.clone()).or_default() += sign;
                    }
                }
            }
        }
        // (σ_{t₁} − σ_{t₀})(A_old): the rows the clock step makes enter or leave, from the
        // front of each crossing index of the old state.
        if before < after {
            let entry = self
                .old_entries
                .iter()
                .find(|e| e.name == clock.relation)
                .ok_or_else(|| {
                    EngineError::internal(format!("`{}` is missing from the state", clock.relation))
                })?;
            let types = self.types(&clock.relation);
            let mut candidates: BTreeSet<Tuple> = BTreeSet::new();
            for condition in &clock.conditions {
                let label = condition.crossing.label();
                let index = entry.aux_tree(&label).ok_or_else(|| {
                    EngineError::corrupted(format!("`{}` lacks its `{label}` tree", clock.relation))
                })?;
                let (from, to) = condition.flips(before, after);
                candidates.extend(rows_crossing(self.nodes, &index, &types, from, to)?);
            }
            for row in candidates {
                let was = i64::from(clock.holds_tuple(before, &row));
                let is = i64::from(clock.holds_tuple(after, &row));
                if was != is {
                    *weights.entry(row).or_default() += is - was;
                }
            }
        }
        let mut windowed = Delta::default();
        for (tuple, weight) in weights {
            debug_assert!(
                (-1..=1).contains(&weight),
                "a row enters or leaves a window once"
            );
            match weight {
                1 => {
                    windowed.inserted.insert(tuple);
                }
                -1 => {
                    windowed.deleted.insert(tuple);
                }
                _ => {}
            }
        }
        windowed.debug_assert_disjoint(&clock.relation);
        Ok(windowed)
    }

    /// Whether the clock moves in this commit.
    pub(super) fn clock_moves(&self) -> bool {
        self.old.clock() != self.new.clock()
    }
}
