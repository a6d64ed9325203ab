//! Recompute and diff, `Δr = eval(r, new) − eval(r, old)`: the fallback for strata with no
//! cheaper delta rule (recursive strata that are not all views, aggregating ephemeral
//! relations), and the recursion mode the cost rule picks for a small recursive stratum
//! of views ([`super::recursion`]).
//!
//! A view's new tuples come from its stratum's fixpoint in memory (semi-naive, over the new
//! inputs); its old ones are its stored tree, read whole. The difference edits that tree
//! and its indexes exactly as DRed's net change does, so both modes write the same trees:
//! `O(N)` reads, `O(|Δr| · log N)` writes.

use super::{encode, stored_tree, Delta, Maintainer};
use crate::eval::memory::MemRelation;
use crate::EngineResult;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::tuple::Tuple;
use rnt_merkle::Edit;
use std::collections::BTreeSet;

impl Maintainer<'_> {
    /// Recomputes a stratum in memory and diffs it against the old state: views have their
    /// trees edited by the difference, every member gets it as its delta.
    pub(super) fn recompute(&mut self, stratum: &[String]) -> EngineResult<()> {
        // Every member's new tuples first: storing one resets the new engine's fixpoint.
        let mut recomputed = Vec::with_capacity(stratum.len());
        for name in stratum {
            let old_tuples = self.old.evaluate(name)?;
            let new_tuples = self.new.evaluate_from_scratch(name)?;
            recomputed.push((name, difference(&old_tuples, &new_tuples)));
        }
        for (name, delta) in recomputed {
            delta.debug_assert_disjoint(name);
            if self.kind(name) == RelationKind::View {
                self.store_difference(name, delta)?;
            } else {
                self.deltas.insert(name.clone(), delta);
            }
        }
        Ok(())
    }

    /// Edits a view's tree by its delta and stores it (with its indexes and delta).
    fn store_difference(&mut self, name: &str, delta: Delta) -> EngineResult<()> {
        let types = self.types(name);
        let mut edits: Vec<Edit> = Vec::new();
        for tuple in delta.deleted.tuples() {
            edits.push((encode(tuple, &types, name)?, None));
        }
        for tuple in delta.inserted.tuples() {
            edits.push((encode(tuple, &types, name)?, Some(Vec::new())));
        }
        edits.sort_by(|a, b| a.0.cmp(&b.0));
        let entry = self.entry(name)?;
        let tree = stored_tree(&entry)?.edit(self.nodes, edits)?;
        self.store(name, entry, tree, delta, Vec::new())
    }
}

fn difference(old: &BTreeSet<Tuple>, new: &BTreeSet<Tuple>) -> Delta {
    Delta {
        inserted: MemRelation::from_set(new.difference(old).cloned().collect()),
        deleted: MemRelation::from_set(old.difference(new).cloned().collect()),
    }
}
