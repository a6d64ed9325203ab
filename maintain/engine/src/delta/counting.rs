//! Counting, for non-recursive views: each tuple is stored with its number of derivations.
//!
//! `count'(t) = count(t) + Σ signed matches of the delta terms deriving t`, and the view's
//! delta is `thresh(new) − thresh(old)`: t enters when its count rises from 0 and leaves
//! when it falls to 0; only those switches flow on to the relations that read the view.

use super::terms::Mode;
use super::{decode_count, encode, stored_tree, Delta, Maintainer};
use crate::eval::join::project_stored;
use crate::eval::memory::MemRelation;
use crate::eval::read::Flow;
use crate::{EngineError, EngineResult};
use rnt_lang::tuple::{format_tuple, Tuple};
use rnt_merkle::{Edit, Tree};
use std::collections::BTreeMap;

impl Maintainer<'_> {
    /// Counting: signed derivation-count changes per head tuple; a tuple enters when its
    /// count rises from 0 and leaves when it falls to 0, and only those switches flow on.
    pub(super) fn maintain_counting(&mut self, view: &str) -> EngineResult<()> {
        let mut counts: BTreeMap<Tuple, i64> = BTreeMap::new();
        self.delta_terms(
            view,
            Mode::Signed,
            &self.deltas,
            &self.new,
            &self.old,
            &mut |plan, b, sign| {
                *counts.entry(project_stored(plan, b)?).or_default() += sign;
                Ok(Flow::Continue)
            },
        )?;
        self.apply_counts(view, counts)
    }

    /// Moves a counting view's derivation counts by `counts` (signed, per head tuple) and
    /// stores it, with its delta `thresh(new) − thresh(old)`. Shared with the window
    /// fallback (`window`), whose views count derivations the same way.
    pub(super) fn apply_counts(
        &mut self,
        view: &str,
        counts: BTreeMap<Tuple, i64>,
    ) -> EngineResult<()> {
        self.apply_counts_with(view, counts, Vec::new())
    }

    /// [`Maintainer::apply_counts`], storing the view with the auxiliary trees `extra`
    /// beside its indexes (a running window's partition totals).
    pub(super) fn apply_counts_with(
        &mut self,
        view: &str,
        counts: BTreeMap<Tuple, i64>,
        extra: Vec<(String, Tree)>,
    ) -> EngineResult<()> {
        let types = self.types(view);
        let entry = self.entry(view)?;
        let tree = stored_tree(&entry)?;
        let mut edits: Vec<Edit> = Vec::new();
        // In tuple order (the counts map's), so each set is built in bulk below.
        let (mut inserted, mut deleted) = (Vec::new(), Vec::new());
        let mut changed = Vec::with_capacity(counts.len());
        let mut keys = Vec::with_capacity(counts.len());
        for (tuple, change) in counts {
            if change != 0 {
                keys.push(encode(&tuple, &types, view)?);
                changed.push((tuple, change));
            }
        }
        let olds = tree.get_many(self.nodes, &keys)?;
        debug_assert_eq!(olds.len(), keys.len());
        for (((tuple, change), key), old) in changed.into_iter().zip(keys).zip(olds) {
            let old = match old {
                Some(bytes) => decode_count(&bytes, view)?,
                None => 0,
            };
            let new = i64::try_from(old)
                .unwrap_or(i64::MAX)
                .checked_add(change)
                .filter(|n| *n >= 0)
                .ok_or_else(|| {
                    EngineError::corrupted(format!(
                        "maintaining view `{view}`: {} had {old} derivations and lost {}",
                        format_tuple(view, &tuple),
                        -change
                    ))
                })?;
            if new == 0 {
                edits.push((key, None));
                deleted.push(tuple);
            } else {
                edits.push((key, Some(new.unsigned_abs().to_le_bytes().to_vec())));
                if old == 0 {
                    inserted.push(tuple);
                }
            }
        }
        let delta = Delta {
            inserted: MemRelation::from_set(inserted.into_iter().collect()),
            deleted: MemRelation::from_set(deleted.into_iter().collect()),
        };
        edits.sort_by(|a, b| a.0.cmp(&b.0));
        let new_tree = tree.edit(self.nodes, edits)?;
        self.store(view, entry, new_tree, delta, extra)
    }
}
