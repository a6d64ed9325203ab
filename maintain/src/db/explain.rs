//! Plan dumps: how a state's program evaluates and maintains a derived relation — each
//! rule's plan from scratch and the plan of each term of its delta rule, with every read's
//! bound columns and the tree or index that serves it.

use crate::db::snapshot::{unknown_relation, Snapshot};
use crate::eval::engine::plan_program;
use crate::DbError;
use crate::DbResult;
use std::fmt;

/// What a plan is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanTerm {
    /// Evaluation from scratch (views built at define, recomputed strata, `verify`).
    Eval,
    /// The delta term driven by a change of the named relation, read by a positive literal.
    Delta(String),
    /// The delta term driven by a change of the named relation under `not`.
    NegatedDelta(String),
}

impl fmt::Display for PlanTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanTerm::Eval => write!(f, "eval"),
            PlanTerm::Delta(relation) => write!(f, "Δ{relation}"),
            PlanTerm::NegatedDelta(relation) => write!(f, "Δnot {relation}"),
        }
    }
}

/// One plan of a derived relation's rules, dumped for reading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanDump {
    /// What the plan is for.
    pub term: PlanTerm,
    /// The source rule, the variables bound before the first step, then one line per step.
    pub text: String,
}

impl Snapshot {
    /// The plans of `relation`'s rules under this state's program: one [`PlanTerm::Eval`]
    /// plan per rule, then one plan per delta term (per rule and body atom), in the order
    /// maintenance runs them. A base relation has none.
    pub fn plans(&self, relation: &str) -> DbResult<Vec<PlanDump>> {
        if self.program.relation(relation).is_none() {
            return Err(unknown_relation(self, relation));
        }
        let plans = plan_program(&self.program);
        let stored = |name: &str| {
            self.program
                .relation(name)
                .is_some_and(|r| r.kind().is_stored())
        };
        let mut out = Vec::new();
        for plan in plans.full.get(relation).into_iter().flatten() {
            out.push(PlanDump {
                term: PlanTerm::Eval,
                text: plan.explain(None, &stored),
            });
        }
        for (plan, literal) in plans.delta.get(relation).into_iter().flatten() {
            let driver = plan
                .reads()
                .find(|read| read.literal == *literal)
                .map(|read| read.relation.clone())
                .ok_or_else(|| {
                    DbError::internal(format!(
                        "a delta plan of `{relation}` does not read its driver literal {literal}"
                    ))
                })?;
            out.push(PlanDump {
                term: PlanTerm::Delta(driver),
                text: plan.explain(Some(*literal), &stored),
            });
        }
        for (plan, _, atom) in plans.negation_delta.get(relation).into_iter().flatten() {
            out.push(PlanDump {
                term: PlanTerm::NegatedDelta(atom.relation.name.clone()),
                text: plan.explain(None, &stored),
            });
        }
        Ok(out)
    }
}
