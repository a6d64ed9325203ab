//! Plan dumps: each plan a program chose for a relation's rules, as text (the operator
//! suite's snapshots).

use super::{prebound_names, PlanDump, PlanTerm};
use crate::eval::plans::shared_plans;
use crate::{EngineError, EngineResult};
use rnt_lang::check::Program;
use std::sync::Arc;

/// The plans of `relation`'s rules under this state's program: one [`PlanTerm::Eval`]
/// plan per rule, then one plan per delta term (per rule and body atom), in the order
/// maintenance runs them. A base relation has none.
pub fn plan_dumps(program: &Arc<Program>, relation: &str) -> EngineResult<Vec<PlanDump>> {
    let plans = shared_plans(program);
    let stored = |name: &str| program.relation(name).is_some_and(|r| r.kind().is_stored());
    let mut out = Vec::new();
    for plan in plans.full.get(relation).into_iter().flatten() {
        out.push(PlanDump {
            term: PlanTerm::Eval,
            text: plan.explain(None, &stored, &plans),
        });
    }
    // A window view's commits run its partition plan, not delta terms.
    let windowed = program.relation(relation).is_some_and(|r| r.is_windowed());
    let delta = plans.delta.get(relation).filter(|_| !windowed);
    for (plan, literal) in delta.into_iter().flatten() {
        let driver = plan
            .reads()
            .find(|read| read.literal == *literal)
            .map(|read| read.relation.clone())
            .ok_or_else(|| {
                EngineError::internal(format!(
                    "a delta plan of `{relation}` does not read its driver literal {literal}"
                ))
            })?;
        out.push(PlanDump {
            term: PlanTerm::Delta(driver),
            text: plan.explain(Some(*literal), &stored, &plans),
        });
    }
    for (plan, _, atom) in plans.negation_delta.get(relation).into_iter().flatten() {
        out.push(PlanDump {
            term: PlanTerm::NegatedDelta(atom.relation.name.clone()),
            text: plan.explain(None, &stored, &plans),
        });
    }
    if let Some(plan) = plans.partition.get(relation) {
        out.push(PlanDump {
            term: PlanTerm::Partition(prebound_names(plan)),
            text: plan.explain(None, &stored, &plans),
        });
    }
    Ok(out)
}
