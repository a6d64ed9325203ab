//! The fallback for strata with no cheaper delta rule (recursive strata that are not all
//! views, aggregating ephemeral relations): `Δr = eval(r, new) − eval(r, old)`.

use super::{Delta, Maintainer};
use crate::eval::memory::MemRelation;
use crate::lang::syntax::ast::RelationKind;
use crate::lang::tuple::Tuple;
use crate::DbResult;
use std::collections::BTreeSet;

impl Maintainer<'_> {
    /// Recomputes a stratum from scratch (recursive strata that are not all views, and
    /// aggregating ephemeral relations); deltas from the difference.
    pub(super) fn recompute(&mut self, stratum: &[String]) -> DbResult<()> {
        for name in stratum {
            let old_tuples = self.old.evaluate(name)?;
            let delta = if self.kind(name) == RelationKind::View {
                let entry = self.new.materialize(name)?;
                self.entries.insert(name.clone(), entry);
                let new_tuples = self.new.evaluate(name)?;
                difference(&old_tuples, &new_tuples)
            } else {
                difference(&old_tuples, &self.new.evaluate(name)?)
            };
            delta.debug_assert_disjoint(name);
            self.deltas.insert(name.clone(), delta);
        }
        Ok(())
    }
}

fn difference(old: &BTreeSet<Tuple>, new: &BTreeSet<Tuple>) -> Delta {
    Delta {
        inserted: MemRelation::from_set(new.difference(old).cloned().collect()),
        deleted: MemRelation::from_set(old.difference(new).cloned().collect()),
    }
}
