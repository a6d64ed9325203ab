//! Index upkeep for the base relations of a state (the views' indexes follow their deltas
//! in `crate::delta`; both call `crate::eval::index::index_trees`).

use crate::delta::Delta;
use crate::eval::engine::{relation_types, ProgramPlans};
use crate::eval::index::index_trees;
use crate::eval::IsKind;
use crate::EngineResult;
use rnt_lang::check::Program;
use rnt_lang::syntax::ast::RelationKind;
use rnt_merkle::{NodeStore, RelationEntry};
use std::collections::BTreeMap;

/// Keeps the indexes the plans need for every base relation: an unchanged relation keeps
/// its index trees, a changed one (`deltas`) has them edited, and a missing one is built.
pub fn update_base_indexes(
    nodes: &NodeStore,
    program: &Program,
    plans: &ProgramPlans,
    by_name: &mut BTreeMap<String, RelationEntry>,
    deltas: Option<&BTreeMap<String, Delta>>,
) -> EngineResult<()> {
    for entry in by_name.values_mut() {
        if !entry.kind.is(RelationKind::Relation) {
            continue;
        }
        let Some(tree) = entry.tree() else { continue };
        let types = relation_types(program, &entry.name).unwrap_or_default();
        let mut aux = index_trees(
            nodes,
            Some(entry),
            &tree,
            &types,
            plans,
            &entry.name,
            deltas.and_then(|d| d.get(&entry.name)),
        )?;
        aux.sort_by(|a, b| a.label.cmp(&b.label));
        entry.aux = aux;
    }
    Ok(())
}
