//! `rnt explain` and plan dumps of a state: the engine reads them from the plans the
//! state's program chose (`rnt_engine::explain`); this adds the state's relation names to
//! an unknown relation's error.

use crate::snapshot::{unknown_relation, Snapshot};
use crate::DbResult;
use rnt_engine::explain::{explain, plan_dumps, Explanation, PlanDump};

impl Snapshot {
    /// The plans of `relation`'s rules under this state's program: one `eval` plan per
    /// rule, then one plan per delta term (per rule and body atom), in the order
    /// maintenance runs them. A base relation has none.
    pub fn plans(&self, relation: &str) -> DbResult<Vec<PlanDump>> {
        if self.program.relation(relation).is_none() {
            return Err(unknown_relation(self, relation));
        }
        Ok(plan_dumps(&self.program, relation)?)
    }

    /// How `relation` is maintained under this state's program, from this state (the
    /// recursion mode's cost rule reads its entries): see [`rnt_engine::explain::explain`].
    pub fn explain(&self, relation: &str) -> DbResult<Explanation> {
        if self.program.relation(relation).is_none() {
            return Err(unknown_relation(self, relation));
        }
        Ok(explain(&self.program, &self.state.relations, relation)?)
    }
}
