//! Ephemeral relations store nothing, but the relations that read them need their delta.
//!
//! `Δe = { t ∈ candidates : e_old(t) ≠ e_new(t) }`, with the candidates from the delta terms
//! and each checked by one fully bound read of the old and the new state.

use super::terms::{exists, Mode};
use super::{Delta, Maintainer};
use crate::eval::join::project;
use crate::eval::read::Flow;
use crate::eval::read::Relations;
use crate::EngineResult;
use rnt_lang::tuple::Tuple;
use rnt_lang::value::Value;
use std::collections::BTreeSet;

impl Maintainer<'_> {
    /// An ephemeral relation's delta, for the relations that read it: candidates from the
    /// delta terms, each checked by a fully bound read of the old and new states.
    pub(super) fn ephemeral_delta(&mut self, relation: &str) -> EngineResult<()> {
        if self.is_aggregated(relation) {
            return self.recompute(&[relation.to_string()]);
        }
        let mut candidates: BTreeSet<Tuple> = BTreeSet::new();
        self.delta_terms(
            relation,
            Mode::Signed,
            &self.deltas,
            &self.new,
            &self.old,
            &mut |plan, b, _| {
                candidates.insert(project(plan, b)?);
                Ok(Flow::Continue)
            },
        )?;
        let mut delta = Delta::default();
        for tuple in candidates {
            let before = holds(&self.old, relation, &tuple)?;
            let after = holds(&self.new, relation, &tuple)?;
            if after && !before {
                delta.inserted.insert(tuple);
            } else if before && !after {
                delta.deleted.insert(tuple);
            }
        }
        delta.debug_assert_disjoint(relation);
        self.deltas.insert(relation.to_string(), delta);
        Ok(())
    }
}

/// Whether `relation` holds `tuple` in `source`. A tuple without nulls is one fully bound
/// read; one with nulls binds its other columns and looks for the tuple among what they
/// give (a bound null would never match: a null equals nothing in a join, but a derived
/// tuple holds its nulls as values).
fn holds(source: &dyn Relations, relation: &str, tuple: &[Value]) -> EngineResult<bool> {
    let pattern: Vec<Option<Value>> = tuple
        .iter()
        .map(|v| (!v.is_null()).then(|| v.clone()))
        .collect();
    if pattern.iter().all(Option::is_some) {
        return exists(source, relation, &pattern);
    }
    let used = vec![true; tuple.len()];
    let mut found = false;
    source.read_used(relation, &pattern, &used, &mut |candidate, _| {
        found = candidate == tuple;
        Ok(if found { Flow::Stop } else { Flow::Continue })
    })?;
    Ok(found)
}
