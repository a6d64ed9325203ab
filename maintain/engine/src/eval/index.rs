//! Index upkeep, written once for base relations, maintained views, kept views and
//! views computed from scratch: a stored relation keeps exactly one index tree per column
//! permutation its readers' plans bind (`ProgramPlans::indexes`), one count index per
//! projection its readers look at through `_` columns (`ProgramPlans::counts`), and one
//! crossing index per time window's crossing time over it (`ProgramPlans::crossings`,
//! `eval::crossing`).
//!
//! *Invariant: an index over permutation p holds exactly the relation's tuples with their
//! columns permuted by p; so an edited index has the address a rebuilt one would have.*

use crate::eval::crossing::{build_crossing_index, crossing_edits};
use crate::eval::memory::Delta;
use crate::eval::plans::ProgramPlans;
use crate::eval::read::{
    build_count_index, build_index, count_key, count_label, decode_count, index_label,
};
use crate::{EngineError, EngineResult};
use rnt_lang::tuple::encode_permuted;
use rnt_lang::value::ColumnType;
use rnt_merkle::{AuxTree, Edit, NodeStore, RelationEntry, Tree};
use std::collections::BTreeMap;

/// The index trees the plans make relation `name` keep, whose tuples are `tree`: one per
/// permutation, then one per crossing time. An index `old` already has is kept as is
/// (`changes` is `None`) or edited by the relation's delta (`Some`); a missing one is built
/// from `tree`. Indexes `old` has that the plans do not name are dropped.
pub fn index_trees(
    nodes: &NodeStore,
    old: Option<&RelationEntry>,
    tree: &Tree,
    types: &[ColumnType],
    plans: &ProgramPlans,
    name: &str,
    changes: Option<&Delta>,
) -> EngineResult<Vec<AuxTree>> {
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
    for columns in plans.counts.get(name).into_iter().flatten() {
        let label = count_label(columns);
        let index = match (old.and_then(|entry| entry.aux_tree(&label)), changes) {
            (Some(index), None) => index,
            (Some(index), Some(delta)) => {
                let edits = delta_count_edits(nodes, &index, delta, types, columns)?;
                index.edit(nodes, edits)?
            }
            (None, _) => build_count_index(nodes, tree, types, columns)?,
        };
        aux.push(AuxTree {
            label,
            root: *index.root().as_bytes(),
        });
    }
    Ok(aux)
}

/// The edits that carry a relation's delta into its count index over `columns`: per
/// projection the delta changes the number of, the stored count plus the change (read from
/// `index`), or no entry when that reaches 0. Changes that leave a projection's count as
/// it was (an update of a column outside `columns`) read and write nothing.
///
/// *Invariant: each entry holds the number of the relation's tuples that project to its
/// key, at least 1; so an edited count index has the address a rebuilt one would have.*
pub fn delta_count_edits(
    nodes: &NodeStore,
    index: &Tree,
    delta: &Delta,
    types: &[ColumnType],
    columns: &[usize],
) -> EngineResult<Vec<Edit>> {
    let mut net: BTreeMap<Vec<u8>, i64> = BTreeMap::new();
    for (tuples, sign) in [(&delta.deleted, -1), (&delta.inserted, 1)] {
        for tuple in tuples.tuples() {
            *net.entry(count_key(tuple, types, columns)?).or_default() += sign;
        }
    }
    let mut edits = Vec::new();
    for (key, change) in net.into_iter().filter(|(_, change)| *change != 0) {
        let stored = match index.get(nodes, &key)? {
            Some(value) => decode_count(&value)?,
            None => 0,
        };
        let count = i128::from(stored) + i128::from(change);
        let count = u64::try_from(count).map_err(|_| {
            EngineError::internal(format!(
                "a delta deletes more tuples than the count index holds ({stored} {change:+})"
            ))
        })?;
        let value = (count > 0).then(|| count.to_le_bytes().to_vec());
        edits.push((key, value));
    }
    Ok(edits)
}

/// The edits that carry a relation's delta into its index over `permutation`.
pub fn delta_index_edits(
    delta: &Delta,
    types: &[ColumnType],
    permutation: &[usize],
) -> EngineResult<Vec<Edit>> {
    let mut edits = Vec::new();
    for (tuples, value) in [(&delta.deleted, None), (&delta.inserted, Some(Vec::new()))] {
        for tuple in tuples.tuples() {
            // The tuple was encoded into the relation's own tree already, and a permutation
            // changes no length: a failure here is a bug, not bad input.
            let key = encode_permuted(tuple, types, permutation).map_err(|e| {
                EngineError::internal(format!(
                    "a stored tuple does not re-encode for an index: {e}"
                ))
            })?;
            edits.push((key, value.clone()));
        }
    }
    edits.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(edits)
}
