//! The telescoped delta rule, the one equation every operator of this folder builds on.
//! For a rule `h :- f₁, …, fₙ` and a commit that changes some fᵢ:
//!
//! `Δh = Σᵢ f₁ⁿᵉʷ ⋯ fᵢ₋₁ⁿᵉʷ · Δfᵢ · fᵢ₊₁ᵒˡᵈ ⋯ fₙᵒˡᵈ`
//!
//! Each term starts from one changed literal's delta and reads every other literal through
//! an index with the join columns bound (never a scan). A `not fᵢ` literal contributes the
//! bindings whose negation flips between the old and new state. [`Mode`] selects the signed
//! sum (counting, aggregates), insertions against the new state (denials, DRed's insert
//! phase) or deletions against the old state (DRed's over-deletion).

use super::{Delta, Maintainer};
use crate::eval::join::run_plan_weighted;
use crate::eval::memory::MemRelation;
use crate::eval::plan::{RulePlan, Step};
use crate::eval::read::{Flow, Relations, Visit};
use crate::EngineResult;
use rnt_lang::syntax::ast::{Atom, TermKind};
use rnt_lang::value::Value;
use std::collections::{BTreeMap, BTreeSet};

/// One in-memory relation answering reads under any name: a delta driving a term.
struct Only<'a>(&'a MemRelation);

impl Relations for Only<'_> {
    fn read(
        &self,
        _relation: &str,
        pattern: &[Option<Value>],
        visit: &mut Visit<'_>,
    ) -> EngineResult<Flow> {
        self.0.read(pattern, visit)
    }
}

/// Whether a delta term counts signed changes against old and new states, or only
/// insertions against the new state (denials).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Signed,
    InsertOnly,
    /// Deletions only, every other literal read from the old state (DRed over-deletion).
    DeleteOnlyOld,
}

/// Receives each match of a delta term: the plan, its bindings, and the term's sign times
/// the number of body matches the bindings stand for (1 unless a count index answered a
/// read; every receiver sums linearly in it, or only asks whether a match exists).
pub(super) type TermEmit<'e> =
    dyn FnMut(&RulePlan, &[Option<Value>], i64) -> EngineResult<Flow> + 'e;

impl Maintainer<'_> {
    /// Runs the delta terms of `relation`'s rules:
    /// Δ(f₁…fₙ) = Σᵢ f₁ⁿᵉʷ…fᵢ₋₁ⁿᵉʷ · Δfᵢ · fᵢ₊₁ᵒˡᵈ…fₙᵒˡᵈ (signed), or only the
    /// insertions against the new state (denials), or only the deletions against the old
    /// state (DRed's over-deletion). `emit` gets each match's bindings and sign.
    pub(super) fn delta_terms(
        &self,
        relation: &str,
        mode: Mode,
        drivers: &BTreeMap<String, Delta>,
        new: &dyn Relations,
        old: &dyn Relations,
        emit: &mut TermEmit<'_>,
    ) -> EngineResult<Flow> {
        for (plan, i) in self.plans.delta.get(relation).into_iter().flatten() {
            // The windowed atom of a rule reading `now` is driven by its windowed delta
            // (`clock`): the commit's changes inside the window, and the rows the clock
            // step makes enter or leave.
            let windowed;
            let delta: &Delta = match plan.clock.as_ref().filter(|c| c.atom == *i) {
                Some(clock) => {
                    windowed = self.windowed_delta(clock, drivers)?;
                    &windowed
                }
                None => match driver_relation(plan, *i).and_then(|r| drivers.get(r)) {
                    Some(delta) => delta,
                    None => continue,
                },
            };
            // A signed term reads the driver only at its non-`_` columns: an update that
            // changes only `_` columns cancels out of it, and reads nothing.
            let cancelled;
            let delta = match mode {
                Mode::Signed => match cancel_unread(plan, *i, delta) {
                    Some(net) => {
                        cancelled = net;
                        &cancelled
                    }
                    None => delta,
                },
                Mode::InsertOnly | Mode::DeleteOnlyOld => delta,
            };
            let signed: Vec<(i64, &MemRelation)> = match mode {
                Mode::Signed => vec![(1, &delta.inserted), (-1, &delta.deleted)],
                Mode::InsertOnly => vec![(1, &delta.inserted)],
                Mode::DeleteOnlyOld => vec![(-1, &delta.deleted)],
            };
            for (sign, driver) in signed {
                if driver.is_empty() {
                    continue;
                }
                let only = Only(driver);
                let sources: Vec<&dyn Relations> = (0..plan.literals)
                    .map(|j| {
                        if j == *i {
                            &only as &dyn Relations
                        } else {
                            version(mode, j, *i, new, old)
                        }
                    })
                    .collect();
                let mut bindings = vec![None; plan.variables];
                let flow = run_plan_weighted(plan, &sources, &mut bindings, &mut |b, weight| {
                    emit(plan, b, weighted_sign(sign, weight, plan)?)
                })?;
                if flow == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
        }
        self.negation_terms(relation, mode, drivers, new, old, emit)
    }

    /// The terms of `not` literals: each binding whose negated atom flips between the old
    /// and the new state (as `mode` asks) runs the rest of the rule, signed by the flip.
    fn negation_terms(
        &self,
        relation: &str,
        mode: Mode,
        drivers: &BTreeMap<String, Delta>,
        new: &dyn Relations,
        old: &dyn Relations,
        emit: &mut TermEmit<'_>,
    ) -> EngineResult<Flow> {
        for (plan, i, atom) in self
            .plans
            .negation_delta
            .get(relation)
            .into_iter()
            .flatten()
        {
            let Some(delta) = drivers.get(&atom.relation.name) else {
                continue;
            };
            let mut candidates: BTreeSet<Vec<Option<Value>>> = BTreeSet::new();
            let sources_of_candidates: Vec<&MemRelation> = match mode {
                Mode::Signed => vec![&delta.inserted, &delta.deleted],
                Mode::InsertOnly => vec![&delta.deleted],
                Mode::DeleteOnlyOld => vec![&delta.inserted],
            };
            for tuples in sources_of_candidates {
                for tuple in tuples.tuples() {
                    // A negation of a null holds in every state (`not r(x)` with `x` null
                    // matches nothing): no tuple flips it. (The plan prebinds the atom's
                    // variables, and a prebound null would stand for itself in the rest.)
                    if let Some(bindings) = bind_atom(atom, tuple, plan.variables)
                        .filter(|bindings| !binds_a_null(atom, bindings))
                    {
                        candidates.insert(bindings);
                    }
                }
            }
            for bindings in candidates {
                let pattern = atom_pattern(atom, &bindings);
                let old_holds = !exists(&self.old, &atom.relation.name, &pattern)?;
                let new_holds = !exists(&self.new, &atom.relation.name, &pattern)?;
                let sign = i64::from(new_holds) - i64::from(old_holds);
                let wanted = match mode {
                    Mode::Signed => sign != 0,
                    Mode::InsertOnly => sign > 0,
                    Mode::DeleteOnlyOld => sign < 0,
                };
                if !wanted {
                    continue;
                }
                let sources: Vec<&dyn Relations> = (0..plan.literals)
                    .map(|j| version(mode, j, *i, new, old))
                    .collect();
                let mut bindings = bindings;
                let flow = run_plan_weighted(plan, &sources, &mut bindings, &mut |b, weight| {
                    emit(plan, b, weighted_sign(sign, weight, plan)?)
                })?;
                if flow == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
        }
        Ok(Flow::Continue)
    }
}

/// The delta of literal `i`'s relation as the signed term driven by it sees it: each deleted
/// tuple that projects, on the columns the literal does not leave `_`, to the projection of
/// an inserted one cancels against it (both go). The term is linear in its driver and looks
/// at no `_` column, so it sums to the same with either delta. `None` when the literal has
/// no `_` column or nothing cancels.
fn cancel_unread(plan: &RulePlan, i: usize, delta: &Delta) -> Option<Delta> {
    let read = plan.steps.iter().find_map(|step| match step {
        Step::Join(read) if read.literal == i => Some(read),
        _ => None,
    })?;
    let used: Vec<usize> = (0..read.used.len()).filter(|&c| read.used[c]).collect();
    if used.len() == read.columns.len() || delta.inserted.is_empty() || delta.deleted.is_empty() {
        return None;
    }
    // Both sides ordered by their projection (a set's own order when the read columns
    // lead), then merged: equal projections cancel pairwise, in order.
    let by_projection = |a: &&Vec<Value>, b: &&Vec<Value>| {
        used.iter()
            .map(|&c| a[c].cmp(&b[c]))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    let leading = used.iter().enumerate().all(|(i, &c)| i == c);
    let ordered = |relation| ordered_by(relation, leading, &by_projection);
    let (inserted, deleted) = (ordered(&delta.inserted), ordered(&delta.deleted));
    let (mut kept_inserted, mut kept_deleted) = (Vec::new(), Vec::new());
    let (mut i, mut d) = (0, 0);
    while i < inserted.len() && d < deleted.len() {
        match by_projection(&inserted[i], &deleted[d]) {
            std::cmp::Ordering::Less => {
                kept_inserted.push(inserted[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                kept_deleted.push(deleted[d]);
                d += 1;
            }
            std::cmp::Ordering::Equal => {
                i += 1;
                d += 1;
            }
        }
    }
    if kept_inserted.len() == i && kept_deleted.len() == d {
        return None;
    }
    kept_inserted.extend_from_slice(&inserted[i..]);
    kept_deleted.extend_from_slice(&deleted[d..]);
    debug_assert_eq!(
        inserted.len() - kept_inserted.len(),
        deleted.len() - kept_deleted.len(),
        "tuples cancel in pairs"
    );
    let set =
        |kept: Vec<&Vec<Value>>| -> BTreeSet<Vec<Value>> { kept.into_iter().cloned().collect() };
    Some(Delta {
        inserted: MemRelation::from_set(set(kept_inserted)),
        deleted: MemRelation::from_set(set(kept_deleted)),
    })
}

/// The tuples of `relation` ordered by `by`: the set's own order when `leading` says it is
/// already that order.
fn ordered_by<'d>(
    relation: &'d MemRelation,
    leading: bool,
    by: &impl Fn(&&Vec<Value>, &&Vec<Value>) -> std::cmp::Ordering,
) -> Vec<&'d Vec<Value>> {
    let mut tuples: Vec<&Vec<Value>> = relation.tuples().iter().collect();
    if !leading {
        tuples.sort_by(by);
    }
    debug_assert!(tuples.is_sorted_by(|a, b| by(a, b).is_le()));
    tuples
}

/// `sign × weight`, a match's signed multiplicity.
fn weighted_sign(sign: i64, weight: u64, plan: &RulePlan) -> EngineResult<i64> {
    i64::try_from(weight)
        .ok()
        .and_then(|weight| weight.checked_mul(sign))
        .ok_or_else(|| {
            crate::EngineError::user(format!(
                "rule `{}`: a match stands for more than 2^63 matches",
                plan.source
            ))
        })
}

/// The relation literal `i` of a delta plan reads (its first step).
pub(super) fn driver_relation(plan: &RulePlan, i: usize) -> Option<&str> {
    plan.steps.iter().find_map(|step| match step {
        Step::Join(read) if read.literal == i => Some(read.relation.as_str()),
        _ => None,
    })
}

/// Which state literal `j` reads in the term driven by literal `i`.
pub(super) fn version<'s>(
    mode: Mode,
    j: usize,
    i: usize,
    new: &'s dyn Relations,
    old: &'s dyn Relations,
) -> &'s dyn Relations {
    match mode {
        Mode::Signed if j < i => new,
        Mode::Signed => old,
        Mode::InsertOnly => new,
        Mode::DeleteOnlyOld => old,
    }
}

/// The bindings a tuple of a negated atom's relation gives the atom's variables; `None`
/// when the tuple cannot match the atom (a constant or repeated variable differs).
pub(super) fn bind_atom(
    atom: &Atom,
    tuple: &[Value],
    variables: usize,
) -> Option<Vec<Option<Value>>> {
    let mut bindings = vec![None; variables];
    for (term, value) in atom.terms.iter().zip(tuple) {
        match &term.kind {
            TermKind::Const(c) if c != value => return None,
            TermKind::Var(v) => match &bindings[v.index()] {
                Some(existing) if existing != value => return None,
                _ => bindings[v.index()] = Some(value.clone()),
            },
            _ => {}
        }
    }
    Some(bindings)
}

/// Whether `bindings` give one of `atom`'s variables a null.
fn binds_a_null(atom: &Atom, bindings: &[Option<Value>]) -> bool {
    atom.terms.iter().any(|term| match &term.kind {
        TermKind::Var(v) => bindings[v.index()].as_ref().is_some_and(Value::is_null),
        _ => false,
    })
}

/// The read pattern of an atom under bindings.
pub(super) fn atom_pattern(atom: &Atom, bindings: &[Option<Value>]) -> Vec<Option<Value>> {
    atom.terms
        .iter()
        .map(|term| match &term.kind {
            TermKind::Const(c) => Some(c.clone()),
            TermKind::Var(v) => bindings[v.index()].clone(),
            TermKind::Wildcard => None,
        })
        .collect()
}

/// Whether any tuple of `relation` matches `pattern` (a question about the bound columns
/// alone, which a count index over them answers).
pub(super) fn exists(
    source: &dyn Relations,
    relation: &str,
    pattern: &[Option<Value>],
) -> EngineResult<bool> {
    let mut found = false;
    let bound: Vec<bool> = pattern.iter().map(Option::is_some).collect();
    source.read_used(relation, pattern, &bound, &mut |_, _| {
        found = true;
        Ok(Flow::Stop)
    })?;
    Ok(found)
}
