//! Index upkeep, written once for base relations, maintained views, kept views and
//! views computed from scratch: a stored relation keeps exactly one index tree per column
//! permutation its readers' plans bind (`ProgramPlans::indexes`), and one crossing index per
//! time window's crossing time over it (`ProgramPlans::crossings`, `eval::crossing`).
//!
//! *Invariant: an index over permutation p holds exactly the relation's tuples with their
//! columns permuted by p; so an edited index has the address a rebuilt one would have.*

use crate::eval::crossing::{build_crossing_index, crossing_edits};
use crate::eval::engine::ProgramPlans;
use crate::eval::memory::Delta;
use crate::eval::read::{build_index, index_label};
use crate::lang::tuple::encode_permuted;
use crate::lang::value::Type;
use crate::{DbError, DbResult};
use rnt_merkle::{AuxTree, Edit, NodeStore, RelationEntry, Tree};

/// The index trees the plans make relation `name` keep, whose tuples are `tree`: one per
/// permutation, then one per crossing time. An index `old` already has is kept as is
/// (`changes` is `None`) or edited by the relation's delta (`Some`); a missing one is built
/// from `tree`. Indexes `old` has that the plans do not name are dropped.
pub(crate) fn index_trees(
    nodes: &NodeStore,
    old: Option<&RelationEntry>,
    tree: &Tree,
    types: &[Type],
    plans: &ProgramPlans,
    name: &str,
    changes: Option<&Delta>,
) -> DbResult<Vec<AuxTree>> {
    let mut aux = Vec::new();
    for crossing in plans.crossings.get(name).into_iter().flatten() {
        let label = crossing.label();
        let index = match (old.and_then(|entry| entry.aux_tree(&label)), changes) {
            (Some(index), None) => index,
            (Some(index), Some(delta)) => {
                index.edit(nodes, crossing_edits(delta, types, crossing)?)?
            }
            (None, _) => build_crossing_index(nodes, tree, types, crossing)?,
        };
        aux.push(AuxTree {
            label,
            root: *index.root().as_bytes(),
        });
    }
    for permutation in plans.indexes.get(name).into_iter().flatten() {
        let label = index_label(permutation);
        let index = match (old.and_then(|entry| entry.aux_tree(&label)), changes) {
            (Some(index), None) => index,
            (Some(index), Some(delta)) => {
                index.edit(nodes, delta_index_edits(delta, types, permutation)?)?
            }
            (None, _) => build_index(nodes, tree, types, permutation)?,
        };
        aux.push(AuxTree {
            label,
            root: *index.root().as_bytes(),
        });
    }
    Ok(aux)
}

/// The edits that carry a relation's delta into its index over `permutation`.
pub fn delta_index_edits(
    delta: &Delta,
    types: &[Type],
    permutation: &[usize],
) -> DbResult<Vec<Edit>> {
    let mut edits = Vec::new();
    for (tuples, value) in [(&delta.deleted, None), (&delta.inserted, Some(Vec::new()))] {
        for tuple in tuples.tuples() {
            // The tuple was encoded into the relation's own tree already, and a permutation
            // changes no length: a failure here is a bug, not bad input.
            let key = encode_permuted(tuple, types, permutation).map_err(|e| {
                DbError::internal(format!(
                    "a stored tuple does not re-encode for an index: {e}"
                ))
            })?;
            edits.push((key, value.clone()));
        }
    }
    edits.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(edits)
}
