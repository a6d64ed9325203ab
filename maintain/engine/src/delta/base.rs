//! The base half of a commit (docs/maintenance.md, "When maintenance runs", steps 1 and 2): each
//! changed base relation edited — by sorted edits, or replaced by the tree it becomes —
//! its tuple delta taken, its change counted, and its indexes kept. Every writer of base
//! relations (commit, import, merge, revert) comes through [`apply_base`]; the views are
//! then maintained from the [`BaseChange`] by [`crate::delta::Maintainer`].
//!
//! A relation's delta is, in every case, the diff of its old and new trees:
//! `Δr⁺ = new − old`, `Δr⁻ = old − new`. From edits it is the edits that changed
//! something, as the edit reports them (an insert of an absent tuple, a delete of a
//! present one; debug builds compare it with the diff), so no changed leaf is read twice.
//!
//! A relation's indexes are edited from its delta. For edits, the delta is almost always
//! every edit (an insert of an absent tuple, a delete of a present one), so the indexes are
//! offered for editing from that prediction to the second core (`crate::beside`) while the
//! relation's own tree is edited on this one; when the edit reports that some edit changed
//! nothing, or the helper had not started, the indexes are edited here from the true delta.
//! Either way they are the trees the true delta gives.
//!
//! *Invariant: a base index holds exactly its relation's tuples permuted, so an edited
//! index has the address a rebuilt one has.*

use crate::beside::offer;
use crate::delta::{delta_of_diff, Delta};
use crate::eval::engine::relation_types;
use crate::eval::index::index_trees;
use crate::eval::memory::MemRelation;
use crate::eval::plans::ProgramPlans;
use crate::eval::read::decode_stored;
use crate::eval::read::{count_label, index_label};
use crate::eval::IsKind;
use crate::{EngineError, EngineResult};
use rnt_lang::check::Program;
use rnt_lang::syntax::ast::RelationKind;
use rnt_merkle::{AuxTree, ChangeCount, DiffEntry, Edit, NodeStore, RelationEntry, State, Tree};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// How one base relation changes.
#[derive(Clone, Debug)]
pub enum BaseEdit {
    /// Sorted edits to apply (a change set, the other side of a merge).
    Edits(Vec<Edit>),
    /// The tree the relation becomes (an import, built from its rows).
    Tree(Tree),
}

/// Base relations changed and their indexes kept, the views not yet maintained.
#[derive(Debug)]
pub struct BaseChange {
    /// Every relation's entry after the change: changed base relations with their new
    /// trees, counts and indexes; everything else as it was.
    pub entries: Vec<RelationEntry>,
    /// The tuple delta of each changed base relation that a rule reads or that keeps an
    /// index.
    pub deltas: BTreeMap<String, Delta>,
    /// Tuples inserted and deleted per changed base relation, sorted by relation.
    pub counts: Vec<ChangeCount>,
    /// The clock before and after (`None` for a program that does not mention `now`).
    pub clocks: (Option<i64>, Option<i64>),
}

/// Applies `edits` (one per base relation, by name) to the base relations of `before`, a
/// state of `program`, moving its clock to `clock`. `None` when no relation changed and the
/// clock stays: nothing to maintain or commit.
pub fn apply_base(
    nodes: &NodeStore,
    program: &Program,
    plans: &Arc<ProgramPlans>,
    before: &State,
    edits: Vec<(String, BaseEdit)>,
    clock: Option<i64>,
) -> EngineResult<Option<BaseChange>> {
    debug_assert_eq!(
        clock.is_some(),
        program.mentions_now(),
        "a state carries a clock exactly when its program mentions `now`"
    );
    let mut by_name: BTreeMap<String, RelationEntry> = before
        .relations
        .iter()
        .map(|r| (r.name.clone(), r.clone()))
        .collect();
    let mut deltas = BTreeMap::new();
    // The relations whose indexes were edited beside their edit.
    let mut indexed = BTreeSet::new();
    let mut counts = Vec::new();
    for (relation, edit) in edits {
        let slot = by_name
            .get_mut(&relation)
            .filter(|entry| entry.kind.is(RelationKind::Relation))
            .ok_or_else(|| EngineError::internal(format!("`{relation}` is no base relation")))?;
        let (change, aux) = change_and_indexes(nodes, program, plans, slot, edit)?;
        let Some((new, count, delta)) = change else {
            continue;
        };
        slot.root = Some(*new.root().as_bytes());
        slot.count = Some(new.count(nodes)?);
        if let Some(aux) = aux {
            slot.aux = aux;
            indexed.insert(relation.clone());
        }
        if let Some(delta) = delta {
            deltas.insert(relation, delta);
        }
        counts.push(count);
    }
    if counts.is_empty() && clock == before.clock {
        return Ok(None);
    }
    counts.sort_by(|a, b| a.relation.cmp(&b.relation));
    let pending = deltas.iter().filter(|(name, _)| !indexed.contains(*name));
    let pending: BTreeMap<&String, &Delta> = pending.collect();
    for entry in by_name.values_mut() {
        if entry.kind.is(RelationKind::Relation) && !indexed.contains(&entry.name) {
            update_indexes_of(
                nodes,
                program,
                plans,
                entry,
                pending.get(&entry.name).copied(),
            )?;
        }
    }
    Ok(Some(BaseChange {
        entries: by_name.into_values().collect(),
        deltas,
        counts,
        clocks: (before.clock, clock),
    }))
}

/// One relation's new tree, change counts and (when a rule reads it or it keeps an index)
/// tuple delta; `None` when the tree is unchanged.
type RelationChange = (Tree, ChangeCount, Option<Delta>);

/// How `edit` changes the base relation of entry `slot` (not yet changed), and — when its
/// indexes were edited beside the edit from the predicted delta and the prediction held —
/// its new index trees, sorted by label.
fn change_and_indexes(
    nodes: &NodeStore,
    program: &Program,
    plans: &Arc<ProgramPlans>,
    slot: &RelationEntry,
    edit: BaseEdit,
) -> EngineResult<(Option<RelationChange>, Option<Vec<AuxTree>>)> {
    let relation = slot.name.as_str();
    let old = slot
        .tree()
        .ok_or_else(|| EngineError::corrupted(format!("relation `{relation}` has no tree")))?;
    let predicted = match &edit {
        BaseEdit::Edits(edits) if predictable(plans, slot, edits) => {
            predicted_delta(program, relation, edits)?
        }
        _ => return Ok((change_of(nodes, program, plans, relation, old, edit)?, None)),
    };
    let types = relation_types(program, relation).unwrap_or_default();
    let offered = {
        let (own, slot, plans) = (nodes.with_own_counters(), slot.clone(), Arc::clone(plans));
        offer(move || {
            let name = slot.name.as_str();
            let aux = index_trees(
                &own,
                Some(&slot),
                &old,
                &types,
                &plans,
                name,
                Some(&predicted),
            );
            (aux, predicted, own.counters())
        })
    };
    let change = change_of(nodes, program, plans, relation, old, edit)?;
    let Some((aux, predicted, work)) = offered.take() else {
        return Ok((change, None));
    };
    let held = change.as_ref().is_some_and(|(_, _, delta)| {
        delta.as_ref().is_some_and(|delta| {
            delta.inserted.tuples() == predicted.inserted.tuples()
                && delta.deleted.tuples() == predicted.deleted.tuples()
        })
    });
    let aux = match aux {
        Ok(mut aux) if held => {
            // Kept: its work counts, as if done here.
            nodes.add_counters(work);
            aux.sort_by(|a, b| a.label.cmp(&b.label));
            Some(aux)
        }
        // The prediction failed (or its edit did, for the same reason the true one will):
        // the indexes are edited from the true delta with the others, and the work thrown
        // away is not counted.
        _ => None,
    };
    Ok((change, aux))
}

/// Whether `edits` of the relation of `slot` are worth editing its indexes beside: it keeps
/// indexes, all of which exist already (a missing one is built from the new tree), and
/// there are enough edits for a second thread to pay.
fn predictable(plans: &ProgramPlans, slot: &RelationEntry, edits: &[Edit]) -> bool {
    let name = slot.name.as_str();
    let labels = plans
        .crossings
        .get(name)
        .into_iter()
        .flatten()
        .map(|crossing| crossing.label())
        .chain(
            plans
                .indexes
                .get(name)
                .into_iter()
                .flatten()
                .map(|p| index_label(p)),
        )
        .chain(
            plans
                .counts
                .get(name)
                .into_iter()
                .flatten()
                .map(|c| count_label(c)),
        );
    let mut labels = labels.peekable();
    labels.peek().is_some()
        && edits.len() >= INDEXES_BESIDE_EDITS_MIN
        && labels.all(|label| slot.aux_tree(&label).is_some())
}

/// Edits a relation must get before its indexes are edited on a second thread beside it:
/// below, starting the thread costs about what it saves.
const INDEXES_BESIDE_EDITS_MIN: usize = 16;

/// The delta `edits` make if every one changes something: each put an inserted tuple, each
/// delete a deleted one.
fn predicted_delta(program: &Program, relation: &str, edits: &[Edit]) -> EngineResult<Delta> {
    let types = relation_types(program, relation).unwrap_or_default();
    delta_of_edits(edits.iter(), &types, relation)
}

/// The delta of `edits` that each change something: each put's tuple inserted, each
/// delete's deleted. The sets are built in bulk (a set collected from a sorted sequence),
/// not tuple by tuple: a large commit's delta has tens of thousands.
fn delta_of_edits<'e>(
    edits: impl Iterator<Item = &'e Edit>,
    types: &[rnt_lang::value::ColumnType],
    relation: &str,
) -> EngineResult<Delta> {
    let (mut inserted, mut deleted) = (Vec::new(), Vec::new());
    for (key, value) in edits {
        let tuple = decode_stored(key, types, relation)?;
        match value {
            Some(_) => inserted.push(tuple),
            None => deleted.push(tuple),
        }
    }
    Ok(Delta {
        inserted: MemRelation::from_set(inserted.into_iter().collect()),
        deleted: MemRelation::from_set(deleted.into_iter().collect()),
    })
}

/// How `edit` changes base relation `relation`'s tree `old`.
fn change_of(
    nodes: &NodeStore,
    program: &Program,
    plans: &ProgramPlans,
    relation: &str,
    old: Tree,
    edit: BaseEdit,
) -> EngineResult<Option<RelationChange>> {
    let keep = program.reads(relation) || plans.keeps_indexes(relation);
    let (new, count, delta) = match edit {
        BaseEdit::Edits(edits) => {
            let (new, delta) = edited(nodes, program, relation, &old, &edits)?;
            let count = ChangeCount {
                relation: relation.to_string(),
                inserted: delta.inserted.tuples().len() as u64,
                deleted: delta.deleted.tuples().len() as u64,
            };
            debug_assert_diff_agrees(nodes, program, relation, (&old, &new), &count, &delta);
            (new, count, keep.then_some(delta))
        }
        BaseEdit::Tree(new) => {
            let (count, delta) = diffed(nodes, program, relation, &old, &new, keep)?;
            (new, count, delta)
        }
    };
    Ok((old != new).then_some((new, count, delta)))
}

/// Applies sorted `edits` to `relation`'s tree `old`: the new tree, and the edits that
/// changed something as its delta.
fn edited(
    nodes: &NodeStore,
    program: &Program,
    relation: &str,
    old: &Tree,
    edits: &[Edit],
) -> EngineResult<(Tree, Delta)> {
    let (new, changed_by) = old.edit_reporting(nodes, edits)?;
    let types = relation_types(program, relation).unwrap_or_default();
    let changed = edits
        .iter()
        .zip(changed_by)
        .filter_map(|(edit, changed)| changed.then_some(edit));
    Ok((new, delta_of_edits(changed, &types, relation)?))
}

/// The change counts from `old` to `new`, and the tuple delta when `keep`, from the diff of
/// the trees. Filling an empty relation that no rule reads needs not even the diff.
fn diffed(
    nodes: &NodeStore,
    program: &Program,
    relation: &str,
    old: &Tree,
    new: &Tree,
    keep: bool,
) -> EngineResult<(ChangeCount, Option<Delta>)> {
    let mut count = ChangeCount {
        relation: relation.to_string(),
        inserted: 0,
        deleted: 0,
    };
    if !keep && old.count(nodes)? == 0 {
        count.inserted = new.count(nodes)?;
        return Ok((count, None));
    }
    let mut entries = Vec::new();
    for entry in old.diff(nodes, new)? {
        let entry = entry?;
        match &entry {
            DiffEntry::Added { .. } => count.inserted += 1,
            DiffEntry::Removed { .. } => count.deleted += 1,
            DiffEntry::Changed { .. } => {
                return Err(EngineError::corrupted(format!(
                    "base relation `{relation}` holds a tuple with a value"
                )))
            }
        }
        if keep {
            entries.push(entry);
        }
    }
    if !keep {
        return Ok((count, None));
    }
    let types = relation_types(program, relation).unwrap_or_default();
    Ok((count, Some(delta_of_diff(&entries, &types, relation)?)))
}

/// Debug builds: the delta an edit reported is the diff of the trees.
fn debug_assert_diff_agrees(
    nodes: &NodeStore,
    program: &Program,
    relation: &str,
    (old, new): (&Tree, &Tree),
    count: &ChangeCount,
    delta: &Delta,
) {
    if !cfg!(debug_assertions) {
        return;
    }
    let Ok((diffed_count, Some(diffed))) = diffed(nodes, program, relation, old, new, true) else {
        panic!("the diff of `{relation}`'s trees could not be read");
    };
    debug_assert_eq!(&diffed_count, count, "the edits' counts are the diff's");
    debug_assert!(
        diffed.inserted.tuples() == delta.inserted.tuples()
            && diffed.deleted.tuples() == delta.deleted.tuples(),
        "the edits' delta of `{relation}` is the diff's"
    );
}

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
        if entry.kind.is(RelationKind::Relation) {
            let delta = deltas.and_then(|d| d.get(&entry.name));
            update_indexes_of(nodes, program, plans, entry, delta)?;
        }
    }
    Ok(())
}

/// Keeps the indexes of the base relation of `entry` (its tree already the new one): kept
/// when `delta` is `None`, else edited by it; a missing one is built.
fn update_indexes_of(
    nodes: &NodeStore,
    program: &Program,
    plans: &ProgramPlans,
    entry: &mut RelationEntry,
    delta: Option<&Delta>,
) -> EngineResult<()> {
    let Some(tree) = entry.tree() else {
        return Ok(());
    };
    let types = relation_types(program, &entry.name).unwrap_or_default();
    let mut aux = index_trees(nodes, Some(entry), &tree, &types, plans, &entry.name, delta)?;
    aux.sort_by(|a, b| a.label.cmp(&b.label));
    entry.aux = aux;
    Ok(())
}
