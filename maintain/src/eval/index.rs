//! Index upkeep, written once for base relations, maintained views, kept views and
//! views computed from scratch: a stored relation keeps exactly one index tree per column
//! permutation its readers' plans bind (`ProgramPlans::indexes`).
//!
//! *Invariant: an index over permutation p holds exactly the relation's tuples with their
//! columns permuted by p; so an edited index has the address a rebuilt one would have.*

use crate::eval::memory::Delta;
use crate::eval::read::{build_index, index_label};
use crate::lang::tuple::encode_permuted;
use crate::lang::value::Type;
use crate::{DbError, DbResult};
use rnt_merkle::{AuxTree, Edit, NodeStore, RelationEntry, Tree};

/// The index trees of a stored relation whose tuples are `tree`, one per permutation in
/// `permutations`, in that order: an index `old` already has is kept as is (`changes` is
/// `None`) or edited by the relation's delta (`Some`); a missing one is built from `tree`.
/// Indexes `old` has that `permutations` does not name are dropped.
pub(crate) fn index_trees<'p>(
    nodes: &NodeStore,
    old: Option<&RelationEntry>,
    tree: &Tree,
    types: &[Type],
    permutations: impl IntoIterator<Item = &'p Vec<usize>>,
    changes: Option<&Delta>,
) -> DbResult<Vec<AuxTree>> {
    let mut aux = Vec::new();
    for permutation in permutations {
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
