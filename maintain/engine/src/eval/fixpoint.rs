//! Semi-naive evaluation of a recursive stratum from scratch: each round joins only the
//! previous round's new tuples, until a round adds none — bounded by
//! [`FIXPOINT_ROUNDS_MAX`].

use crate::eval::join::{project_stored, run_plan};
use crate::eval::memory::{MemRelation, Overlay};
use crate::eval::plan::RulePlan;
use crate::eval::read::{Flow, Relations};
use crate::{EngineError, EngineResult};
use std::collections::BTreeMap;

/// Rounds a fixpoint may take before it is stopped: each round must add a tuple, and no
/// sane recursion over a store this size needs more.
pub const FIXPOINT_ROUNDS_MAX: usize = 1_000_000;

/// Semi-naive evaluation of a recursive stratum: `plans` are, per relation of the stratum,
/// its rules' full plans; `delta_plans` are (plan, literal) pairs — one per rule and per
/// positive literal reading a stratum relation — whose literal reads the last round's new
/// tuples. Returns each relation's tuple set.
pub fn semi_naive(
    stratum: &[String],
    full_plans: &[RulePlan],
    delta_plans: &[(RulePlan, usize)],
    base: &dyn Relations,
) -> EngineResult<BTreeMap<String, MemRelation>> {
    let mut full = empty_sets(stratum);
    let mut delta = first_round(stratum, full_plans, base)?;
    for round in 0..FIXPOINT_ROUNDS_MAX {
        crate::budget::check(|| {
            let derived: usize = full.values().map(|r| r.tuples().len()).sum();
            format!(
                "computing {} (round {round}, {derived} tuples so far)",
                stratum.join(", ")
            )
        })?;
        for (name, relation) in &delta {
            let target = full
                .get_mut(name)
                .ok_or_else(|| EngineError::internal("stratum relation missing"))?;
            for tuple in relation.tuples() {
                target.insert(tuple.clone());
            }
        }
        if delta.values().all(MemRelation::is_empty) {
            return Ok(full);
        }
        delta = next_round(stratum, delta_plans, &full, &delta, base)?;
    }
    Err(EngineError::user(format!(
        "recursion over {} did not reach a fixpoint within {FIXPOINT_ROUNDS_MAX} rounds",
        stratum.join(", ")
    )))
}

/// An empty set for each relation of the stratum.
fn empty_sets(stratum: &[String]) -> BTreeMap<String, MemRelation> {
    stratum
        .iter()
        .map(|r| (r.clone(), MemRelation::new()))
        .collect()
}

/// Round 0: every rule with the stratum's relations empty (only rules that read none of
/// them positively can produce anything).
fn first_round(
    stratum: &[String],
    full_plans: &[RulePlan],
    base: &dyn Relations,
) -> EngineResult<BTreeMap<String, MemRelation>> {
    let empty = MemRelation::new();
    let mut delta = empty_sets(stratum);
    let memory = stratum.iter().map(|r| (r.as_str(), &empty)).collect();
    let overlay = Overlay { memory, base };
    for plan in full_plans {
        let sources = vec![&overlay as &dyn Relations; body_len(plan)];
        collect_into(plan, &sources, delta.get_mut(&plan.head))?;
    }
    Ok(delta)
}

/// One semi-naive round: each delta plan reads the last round's new tuples (`delta`) at
/// its literal and everything known so far (`full`) elsewhere; returns the tuples not yet
/// known.
fn next_round(
    stratum: &[String],
    delta_plans: &[(RulePlan, usize)],
    full: &BTreeMap<String, MemRelation>,
    delta: &BTreeMap<String, MemRelation>,
    base: &dyn Relations,
) -> EngineResult<BTreeMap<String, MemRelation>> {
    let mut fresh = empty_sets(stratum);
    let full_memory = full.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let full_overlay = Overlay {
        memory: full_memory,
        base,
    };
    let delta_memory = delta.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let delta_overlay = Overlay {
        memory: delta_memory,
        base,
    };
    for (plan, literal) in delta_plans {
        let mut sources = vec![&full_overlay as &dyn Relations; body_len(plan)];
        sources[*literal] = &delta_overlay;
        let mut produced = MemRelation::new();
        collect_into(plan, &sources, Some(&mut produced))?;
        let target = fresh
            .get_mut(&plan.head)
            .ok_or_else(|| EngineError::internal("stratum relation missing"))?;
        let known = &full[&plan.head];
        for tuple in produced.tuples() {
            if !known.tuples().contains(tuple) {
                target.insert(tuple.clone());
            }
        }
    }
    Ok(fresh)
}

/// Number of body literals a plan's sources must cover.
pub fn body_len(plan: &RulePlan) -> usize {
    plan.literals
}

fn collect_into(
    plan: &RulePlan,
    sources: &[&dyn Relations],
    target: Option<&mut MemRelation>,
) -> EngineResult<()> {
    let Some(target) = target else {
        return Err(EngineError::internal(format!(
            "rule `{}` writes outside its stratum",
            plan.source
        )));
    };
    let mut bindings = vec![None; plan.variables];
    let mut produced = 0usize;
    run_plan(plan, sources, &mut bindings, &mut |b| {
        target.insert(project_stored(plan, b)?);
        produced += 1;
        if produced.is_multiple_of(BUDGET_CHECK_TUPLES) {
            crate::budget::check(|| {
                format!("computing {} ({produced} matches so far)", plan.head)
            })?;
        }
        Ok(Flow::Continue)
    })?;
    Ok(())
}

/// How many matches a rule produces between two checks of the memory budget: often enough
/// to stop within a few megabytes of it, rarely enough to cost nothing measurable.
const BUDGET_CHECK_TUPLES: usize = 1 << 14;
