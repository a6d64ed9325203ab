//! Views computed from scratch, in stratum order: what `define` does for the views it
//! changes and `verify` for every view.

use crate::DbResult;
use rnt_engine::eval::engine::{relation_types, Engine};
use rnt_engine::eval::index::index_trees;
use rnt_engine::eval::plans::ProgramPlans;
use rnt_engine::eval::IsKind;
use rnt_lang::check::Program;
use rnt_lang::syntax::ast::RelationKind;
use rnt_merkle::{AuxTree, NodeStore, RelationEntry};
use std::collections::{BTreeMap, BTreeSet};

/// Computes the views in `recompute` from scratch at `clock` (the state's), in stratum
/// order; every other view keeps its trees and gets exactly the indexes the plans need.
/// Then, when asked (`judge_denials`: the witnesses a refusal lists), judges from scratch the
/// denials in `recompute` (the others held in the state they come from).
#[allow(clippy::too_many_arguments)]
pub(crate) fn rebuild_views(
    nodes: &NodeStore,
    program: &Program,
    plans: &ProgramPlans,
    by_name: &mut BTreeMap<String, RelationEntry>,
    recompute: &BTreeSet<String>,
    judge_denials: Option<usize>,
    clock: Option<i64>,
    progress: &mut dyn FnMut(&str),
) -> DbResult<()> {
    let current: Vec<RelationEntry> = by_name
        .values()
        .filter(|e| e.kind.is(RelationKind::Relation) || !recompute.contains(&e.name))
        .cloned()
        .collect();
    let mut engine = Engine::new(nodes, program, plans, &current).with_clock(clock);
    let views: Vec<&String> = program
        .strata
        .iter()
        .flat_map(|s| s.relations.iter())
        .filter(|name| {
            by_name
                .get(*name)
                .is_some_and(|e| e.kind.is(RelationKind::View))
        })
        .collect();
    let total = views.iter().filter(|v| recompute.contains(**v)).count();
    let mut done = 0;
    for name in views {
        if recompute.contains(name) {
            done += 1;
            progress(&format!("computing view {name} ({done}/{total})"));
            let entry = engine.materialize(name)?;
            by_name.insert(name.clone(), entry);
        } else if let Some(entry) = by_name.get_mut(name) {
            reindex_kept_view(nodes, program, plans, entry)?;
            engine.register(entry);
        }
    }
    if let Some(witnesses) = judge_denials {
        engine.check_denials_among(recompute, witnesses)?;
    }
    Ok(())
}

/// Gives a kept view exactly the indexes the plans need, keeping its other auxiliary trees.
fn reindex_kept_view(
    nodes: &NodeStore,
    program: &Program,
    plans: &ProgramPlans,
    entry: &mut RelationEntry,
) -> DbResult<()> {
    let Some(tree) = entry.tree() else {
        return Ok(());
    };
    let types = relation_types(program, &entry.name).unwrap_or_default();
    let mut aux: Vec<AuxTree> = entry
        .aux
        .iter()
        .filter(|a| !a.label.starts_with("index ") && !a.label.starts_with("crossing "))
        .cloned()
        .collect();
    aux.extend(index_trees(
        nodes,
        Some(entry),
        &tree,
        &types,
        plans,
        &entry.name,
        None,
    )?);
    aux.sort_by(|a, b| a.label.cmp(&b.label));
    entry.aux = aux;
    Ok(())
}
