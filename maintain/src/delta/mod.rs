//! Incremental maintenance at commit: every materialized relation that reads a changed
//! relation is brought up to date from the tuple deltas of its inputs, stratum by stratum —
//! counting for non-recursive views, per-group accumulators for aggregates, DRed for
//! recursive views — and then the denials are judged on insert-only deltas.
//!
//! *Invariant: `maintain(V, state, Δ) == eval(V, state + Δ)`: after every commit, each
//! maintained tree has the address a from-scratch build gives (checked by `verify`).*

use crate::eval::aggregate::{
    decode_accumulator, encode_accumulator, extremes_label, AggregateShape, GROUPS_LABEL,
};
use crate::eval::engine::{Engine, ProgramPlans};
use crate::eval::join::{project, run_plan, MemRelation};
use crate::eval::plan::{plan_for_head_pattern_avoiding, RulePlan, Step};
use crate::eval::read::{build_index, index_label, Flow, Relations, Visit};
use crate::eval::stored_kind;
use crate::lang::check::Program;
use crate::lang::syntax::ast::{Atom, TermKind};
use crate::lang::tuple::{decode_tuple, encode_permuted, encode_tuple, format_tuple, Tuple};
use crate::lang::value::{Type, Value};
use crate::{DbError, DbResult};
use rnt_merkle::{AuxTree, Counters, Edit, NodeStore, RelationEntry, RelationKind, Tree};
use std::collections::{BTreeMap, BTreeSet};

/// A relation's change in one commit.
#[derive(Default, Debug)]
pub struct Delta {
    /// Tuples that entered.
    pub inserted: MemRelation,
    /// Tuples that left.
    pub deleted: MemRelation,
}

impl Delta {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.inserted.is_empty() && self.deleted.is_empty()
    }
}

/// The work one operator did in one commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperatorStats {
    /// The relation maintained or judged.
    pub relation: String,
    /// `base`, `counting`, `aggregate`, `dred`, `recompute`, `ephemeral` or `denial`.
    pub operator: String,
    /// The node store counters spent on it.
    pub counters: Counters,
}

/// One in-memory relation answering reads under any name: a delta driving a term.
struct Only<'a>(&'a MemRelation);

impl Relations for Only<'_> {
    fn read(
        &self,
        _relation: &str,
        pattern: &[Option<Value>],
        visit: &mut Visit<'_>,
    ) -> DbResult<Flow> {
        self.0.read(pattern, visit)
    }
}

/// Reads of a recursive stratum's members during DRed: the old stored tuples minus the
/// over-deleted ones plus the ones added so far; other relations from `rest`.
struct Patched<'a> {
    members: &'a BTreeSet<String>,
    old: &'a dyn Relations,
    removed: &'a BTreeMap<String, MemRelation>,
    added: &'a BTreeMap<String, MemRelation>,
    rest: &'a dyn Relations,
}

impl Relations for Patched<'_> {
    fn read(
        &self,
        relation: &str,
        pattern: &[Option<Value>],
        visit: &mut Visit<'_>,
    ) -> DbResult<Flow> {
        if !self.members.contains(relation) {
            return self.rest.read(relation, pattern, visit);
        }
        let removed = &self.removed[relation];
        let flow = self.old.read(relation, pattern, &mut |t| {
            if removed.tuples().contains(t) {
                Ok(Flow::Continue)
            } else {
                visit(t)
            }
        })?;
        if flow == Flow::Stop {
            return Ok(Flow::Stop);
        }
        self.added[relation].read(pattern, visit)
    }
}

/// Whether a delta term counts signed changes against old and new states, or only
/// insertions against the new state (denials).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Signed,
    InsertOnly,
    /// Deletions only, every other literal read from the old state (DRed over-deletion).
    DeleteOnlyOld,
}

/// Receives each match of a delta term: the plan, its bindings, and the term's sign.
type TermEmit<'e> = dyn FnMut(&RulePlan, &[Option<Value>], i64) -> DbResult<Flow> + 'e;

/// Maintains the derived relations of one commit.
pub struct Maintainer<'a> {
    nodes: &'a NodeStore,
    program: &'a Program,
    plans: &'a ProgramPlans,
    old: Engine<'a>,
    new: Engine<'a>,
    entries: BTreeMap<String, RelationEntry>,
    deltas: BTreeMap<String, Delta>,
    stats: Vec<OperatorStats>,
}

impl<'a> Maintainer<'a> {
    /// A maintainer from the head's entries (`old`) to the new base entries (`new`, whose
    /// base relations and their indexes already hold the change), given the base deltas.
    pub fn new(
        nodes: &'a NodeStore,
        program: &'a Program,
        plans: &'a ProgramPlans,
        old: &[RelationEntry],
        new: Vec<RelationEntry>,
        base_deltas: BTreeMap<String, Delta>,
    ) -> Maintainer<'a> {
        Maintainer {
            nodes,
            program,
            plans,
            old: Engine::new(nodes, program, plans, old),
            new: Engine::new(nodes, program, plans, &new),
            entries: new.into_iter().map(|e| (e.name.clone(), e)).collect(),
            deltas: base_deltas,
            stats: Vec::new(),
        }
    }

    /// Maintains every affected derived relation in stratum order, then judges the denials.
    /// Returns the new entries and the work done per operator.
    pub fn run(mut self) -> DbResult<(Vec<RelationEntry>, Vec<OperatorStats>)> {
        for stratum in self.program.strata.iter() {
            if !stratum.relations.iter().any(|r| self.reads_changed(r)) {
                continue;
            }
            let before = self.nodes.counters();
            let kinds: Vec<RelationKind> = stratum.relations.iter().map(|r| self.kind(r)).collect();
            let operator = if stratum.recursive {
                if kinds.iter().all(|k| *k == RelationKind::View) {
                    self.dred(&stratum.relations)?;
                    "dred"
                } else {
                    self.recompute(&stratum.relations)?;
                    "recompute"
                }
            } else {
                let name = &stratum.relations[0];
                match kinds[0] {
                    RelationKind::View if self.is_aggregated(name) => {
                        self.maintain_aggregate(name)?;
                        "aggregate"
                    }
                    RelationKind::View => {
                        self.maintain_counting(name)?;
                        "counting"
                    }
                    // An ephemeral relation's delta matters only to the relations that
                    // read it.
                    RelationKind::Ephemeral if self.program.reads(name) => {
                        self.ephemeral_delta(name)?;
                        "ephemeral"
                    }
                    _ => continue,
                }
            };
            let spent = self.nodes.counters() - before;
            self.stats.push(OperatorStats {
                relation: stratum.relations.join(","),
                operator: operator.into(),
                counters: spent,
            });
        }
        self.judge_denials()?;
        Ok((self.entries.into_values().collect(), self.stats))
    }

    fn kind(&self, relation: &str) -> RelationKind {
        self.program
            .relation(relation)
            .map(|r| stored_kind(r.kind()))
            .unwrap_or(RelationKind::Relation)
    }

    fn is_aggregated(&self, relation: &str) -> bool {
        self.program
            .relation(relation)
            .is_some_and(|r| r.is_aggregated())
    }

    fn types(&self, relation: &str) -> Vec<Type> {
        self.program
            .relation(relation)
            .map(|r| r.declaration.types())
            .unwrap_or_default()
    }

    fn has_delta(&self, relation: &str) -> bool {
        self.deltas.get(relation).is_some_and(|d| !d.is_empty())
    }

    /// Whether a rule of `relation` reads a relation that changed in this commit.
    fn reads_changed(&self, relation: &str) -> bool {
        let positive = self
            .plans
            .delta
            .get(relation)
            .into_iter()
            .flatten()
            .any(|(plan, i)| driver_relation(plan, *i).is_some_and(|r| self.has_delta(r)));
        positive
            || self
                .plans
                .negation_delta
                .get(relation)
                .into_iter()
                .flatten()
                .any(|(_, _, atom)| self.has_delta(&atom.relation.name))
    }

    /// Runs the delta terms of `relation`'s rules:
    /// Δ(f₁…fₙ) = Σᵢ f₁ⁿᵉʷ…fᵢ₋₁ⁿᵉʷ · Δfᵢ · fᵢ₊₁ᵒˡᵈ…fₙᵒˡᵈ (signed), or only the
    /// insertions against the new state (denials), or only the deletions against the old
    /// state (DRed's over-deletion). `emit` gets each match's bindings and sign.
    fn delta_terms(
        &self,
        relation: &str,
        mode: Mode,
        drivers: &BTreeMap<String, Delta>,
        new: &dyn Relations,
        old: &dyn Relations,
        emit: &mut TermEmit<'_>,
    ) -> DbResult<Flow> {
        for (plan, i) in self.plans.delta.get(relation).into_iter().flatten() {
            let Some(delta) = driver_relation(plan, *i).and_then(|r| drivers.get(r)) else {
                continue;
            };
            let signed: Vec<(i64, &MemRelation)> = match mode {
                Mode::Signed => vec![(1, &delta.inserted), (-1, &delta.deleted)],
                Mode::InsertOnly => vec![(1, &delta.inserted)],
                Mode::DeleteOnlyOld => vec![(-1, &delta.deleted)],
            };
            for (sign, driver) in signed {
                if driver.is_empty() {
                    continue;
                }
                let only = Only(driver);
                let sources: Vec<&dyn Relations> = (0..plan.literals)
                    .map(|j| {
                        if j == *i {
                            &only as &dyn Relations
                        } else {
                            version(mode, j, *i, new, old)
                        }
                    })
                    .collect();
                let mut bindings = vec![None; plan.variables];
                let flow = run_plan(plan, &sources, &mut bindings, &mut |b| emit(plan, b, sign))?;
                if flow == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
        }
        for (plan, i, atom) in self
            .plans
            .negation_delta
            .get(relation)
            .into_iter()
            .flatten()
        {
            let Some(delta) = drivers.get(&atom.relation.name) else {
                continue;
            };
            let mut candidates: BTreeSet<Vec<Option<Value>>> = BTreeSet::new();
            let sources_of_candidates: Vec<&MemRelation> = match mode {
                Mode::Signed => vec![&delta.inserted, &delta.deleted],
                Mode::InsertOnly => vec![&delta.deleted],
                Mode::DeleteOnlyOld => vec![&delta.inserted],
            };
            for tuples in sources_of_candidates {
                for tuple in tuples.tuples() {
                    if let Some(bindings) = bind_atom(atom, tuple, plan.variables) {
                        candidates.insert(bindings);
                    }
                }
            }
            for bindings in candidates {
                let pattern = atom_pattern(atom, &bindings);
                let old_holds = !exists(&self.old, &atom.relation.name, &pattern)?;
                let new_holds = !exists(&self.new, &atom.relation.name, &pattern)?;
                let sign = i64::from(new_holds) - i64::from(old_holds);
                let wanted = match mode {
                    Mode::Signed => sign != 0,
                    Mode::InsertOnly => sign > 0,
                    Mode::DeleteOnlyOld => sign < 0,
                };
                if !wanted {
                    continue;
                }
                let sources: Vec<&dyn Relations> = (0..plan.literals)
                    .map(|j| version(mode, j, *i, new, old))
                    .collect();
                let mut bindings = bindings;
                let flow = run_plan(plan, &sources, &mut bindings, &mut |b| emit(plan, b, sign))?;
                if flow == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
        }
        Ok(Flow::Continue)
    }

    /// Counting: signed derivation-count changes per head tuple; a tuple enters when its
    /// count rises from 0 and leaves when it falls to 0, and only those switches flow on.
    fn maintain_counting(&mut self, view: &str) -> DbResult<()> {
        let mut counts: BTreeMap<Tuple, i64> = BTreeMap::new();
        self.delta_terms(
            view,
            Mode::Signed,
            &self.deltas,
            &self.new,
            &self.old,
            &mut |plan, b, sign| {
                *counts.entry(project(plan, b)?).or_default() += sign;
                Ok(Flow::Continue)
            },
        )?;
        let types = self.types(view);
        let entry = self.entry(view)?;
        let tree = stored_tree(&entry)?;
        let mut edits: Vec<Edit> = Vec::new();
        let mut delta = Delta::default();
        for (tuple, change) in counts {
            if change == 0 {
                continue;
            }
            let key = encode(&tuple, &types, view)?;
            let old = match tree.get(self.nodes, &key)? {
                Some(bytes) => decode_count(&bytes, view)?,
                None => 0,
            };
            let new = i64::try_from(old)
                .unwrap_or(i64::MAX)
                .checked_add(change)
                .filter(|n| *n >= 0)
                .ok_or_else(|| {
                    DbError::Corrupted(format!(
                        "maintaining view `{view}`: {} had {old} derivations and lost {}",
                        format_tuple(view, &tuple),
                        -change
                    ))
                })?;
            if new == 0 {
                edits.push((key, None));
                delta.deleted.insert(tuple);
            } else {
                edits.push((key, Some((new as u64).to_le_bytes().to_vec())));
                if old == 0 {
                    delta.inserted.insert(tuple);
                }
            }
        }
        edits.sort_by(|a, b| a.0.cmp(&b.0));
        let new_tree = tree.edit(self.nodes, edits)?;
        self.store(view, entry, new_tree, delta, Vec::new())
    }

    /// Aggregates: fold the signed matches into the touched groups' accumulators (one read
    /// per group), update the sorted values of MIN/MAX columns, and retract each touched
    /// group's old row and insert its new one.
    fn maintain_aggregate(&mut self, view: &str) -> DbResult<()> {
        let types = self.types(view);
        let plan = self
            .plans
            .full
            .get(view)
            .and_then(|p| p.first())
            .cloned()
            .ok_or_else(|| DbError::Corrupted(format!("aggregate view `{view}` has no plan")))?;
        let shape = AggregateShape::of(&plan, &types);
        let sum_columns = shape.sum_columns();
        let extreme_columns = shape.extreme_columns();
        struct Change {
            matches: i64,
            sums: Vec<i128>,
            values: Vec<BTreeMap<Value, i64>>,
        }
        let mut changes: BTreeMap<Tuple, Change> = BTreeMap::new();
        self.delta_terms(
            view,
            Mode::Signed,
            &self.deltas,
            &self.new,
            &self.old,
            &mut |_, b, sign| {
                let change = changes.entry(shape.key_of(b)).or_insert_with(|| Change {
                    matches: 0,
                    sums: vec![0; sum_columns.len()],
                    values: vec![BTreeMap::new(); extreme_columns.len()],
                });
                change.matches += sign;
                for (slot, &column) in sum_columns.iter().enumerate() {
                    if let Some(Value::Int(x)) = shape.argument(column, b) {
                        change.sums[slot] += i128::from(sign) * i128::from(x);
                    }
                }
                for (slot, &column) in extreme_columns.iter().enumerate() {
                    if let Some(value) = shape.argument(column, b) {
                        *change.values[slot].entry(value).or_default() += sign;
                    }
                }
                Ok(Flow::Continue)
            },
        )?;
        let entry = self.entry(view)?;
        let tree = stored_tree(&entry)?;
        let groups = aux(&entry, GROUPS_LABEL)?;
        let extremes: Vec<Tree> = extreme_columns
            .iter()
            .map(|&c| aux(&entry, &extremes_label(c)))
            .collect::<DbResult<_>>()?;
        let mut row_edits: Vec<Edit> = Vec::new();
        let mut group_edits: Vec<Edit> = Vec::new();
        let mut extreme_edits: Vec<Vec<Edit>> = vec![Vec::new(); extreme_columns.len()];
        let mut delta = Delta::default();
        for (key, change) in changes {
            let group_key = shape.encode_key(&key)?;
            let (old_matches, old_sums) = match groups.get(self.nodes, &group_key)? {
                Some(bytes) => decode_accumulator(&bytes, sum_columns.len())?,
                None => (0, vec![0; sum_columns.len()]),
            };
            let new_matches = i64::try_from(old_matches)
                .ok()
                .and_then(|m| m.checked_add(change.matches))
                .filter(|m| *m >= 0)
                .ok_or_else(|| {
                    DbError::Corrupted(format!(
                        "maintaining `{view}`: a group's match count went negative"
                    ))
                })? as u64;
            let new_sums: Vec<i128> = old_sums
                .iter()
                .zip(&change.sums)
                .map(|(a, b)| a + b)
                .collect();
            let mut old_front = Vec::new();
            let mut new_front = Vec::new();
            for (slot, &column) in extreme_columns.iter().enumerate() {
                let (old, new, edits) = self.extreme_fronts(
                    &shape,
                    &extremes[slot],
                    &group_key,
                    column,
                    &change.values[slot],
                    view,
                )?;
                old_front.push(old);
                new_front.push(new);
                extreme_edits[slot].extend(edits);
            }
            let row = |matches: u64,
                       sums: &[i128],
                       front: Vec<Option<Value>>|
             -> DbResult<Option<Tuple>> {
                if matches == 0 {
                    return Ok(None);
                }
                Ok(Some(shape.output_row(
                    &key,
                    matches,
                    sums,
                    &unwrap_all(front, view)?,
                    &plan.source,
                )?))
            };
            let old_row = row(old_matches, &old_sums, old_front)?;
            let new_row = row(new_matches, &new_sums, new_front)?;
            if new_matches == 0 {
                group_edits.push((group_key, None));
            } else {
                group_edits.push((group_key, Some(encode_accumulator(new_matches, &new_sums))));
            }
            if old_row != new_row {
                if let Some(row) = old_row {
                    row_edits.push((encode(&row, &types, view)?, None));
                    delta.deleted.insert(row);
                }
                if let Some(row) = new_row {
                    row_edits.push((encode(&row, &types, view)?, Some(Vec::new())));
                    delta.inserted.insert(row);
                }
            }
        }
        row_edits.sort_by(|a, b| a.0.cmp(&b.0));
        group_edits.sort_by(|a, b| a.0.cmp(&b.0));
        let new_tree = tree.edit(self.nodes, row_edits)?;
        let mut extra = vec![(
            GROUPS_LABEL.to_string(),
            groups.edit(self.nodes, group_edits)?,
        )];
        for (slot, &column) in extreme_columns.iter().enumerate() {
            let mut edits = std::mem::take(&mut extreme_edits[slot]);
            edits.sort_by(|a, b| a.0.cmp(&b.0));
            extra.push((
                extremes_label(column),
                extremes[slot].edit(self.nodes, edits)?,
            ));
        }
        self.store(view, entry, new_tree, delta, extra)
    }

    /// A MIN/MAX column of one group: its extreme before and after the change, and the
    /// edits to its sorted values. Reads the front of the group, and on past entries the
    /// change empties.
    fn extreme_fronts(
        &self,
        shape: &AggregateShape,
        tree: &Tree,
        group_key: &[u8],
        column: usize,
        changes: &BTreeMap<Value, i64>,
        view: &str,
    ) -> DbResult<(Option<Value>, Option<Value>, Vec<Edit>)> {
        let mut edits = Vec::new();
        let mut new_counts: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        for (value, change) in changes {
            if *change == 0 {
                continue;
            }
            let key = shape.extreme_key(group_key, column, value)?;
            let old = match tree.get(self.nodes, &key)? {
                Some(bytes) => decode_count(&bytes, view)?,
                None => 0,
            };
            let new = i64::try_from(old)
                .ok()
                .and_then(|o| o.checked_add(*change))
                .filter(|n| *n >= 0)
                .ok_or_else(|| {
                    DbError::Corrupted(format!(
                        "maintaining `{view}`: a value's multiplicity went negative"
                    ))
                })? as u64;
            edits.push((key.clone(), (new > 0).then(|| new.to_le_bytes().to_vec())));
            new_counts.insert(key, new);
        }
        // The old front: the group's first stored entry.
        let mut cursor = tree.prefix_cursor(self.nodes, group_key)?;
        let old_front_key = cursor.entry().map(|(k, _)| k.to_vec());
        // The new front: the first stored entry the change does not empty, or a new
        // value sorting before it.
        let mut surviving: Option<Vec<u8>> = None;
        while let Some((key, _)) = cursor.entry() {
            if new_counts.get(key).is_none_or(|n| *n > 0) {
                surviving = Some(key.to_vec());
                break;
            }
            cursor.advance()?;
        }
        let first_new = new_counts
            .iter()
            .find(|(_, n)| **n > 0)
            .map(|(k, _)| k.clone());
        let new_front_key = match (surviving, first_new) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let decode = |key: Option<Vec<u8>>| -> DbResult<Option<Value>> {
            key.map(|k| shape.extreme_value(group_key, column, &k))
                .transpose()
        };
        Ok((decode(old_front_key)?, decode(new_front_key)?, edits))
    }

    /// An ephemeral relation's delta, for the relations that read it: candidates from the
    /// delta terms, each checked by a fully bound read of the old and new states.
    fn ephemeral_delta(&mut self, relation: &str) -> DbResult<()> {
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
            let pattern: Vec<Option<Value>> = tuple.iter().cloned().map(Some).collect();
            let before = exists(&self.old, relation, &pattern)?;
            let after = exists(&self.new, relation, &pattern)?;
            if after && !before {
                delta.inserted.insert(tuple);
            } else if before && !after {
                delta.deleted.insert(tuple);
            }
        }
        self.deltas.insert(relation.to_string(), delta);
        Ok(())
    }

    /// Recomputes a stratum from scratch (recursive strata that are not all views, and
    /// aggregating ephemeral relations); deltas from the difference.
    fn recompute(&mut self, stratum: &[String]) -> DbResult<()> {
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
            self.deltas.insert(name.clone(), delta);
        }
        Ok(())
    }

    /// DRed for a recursive stratum of views: over-delete every tuple with a derivation
    /// that used a deleted fact (against the old state), rederive those that keep another
    /// derivation, then propagate insertions semi-naively against the new state.
    fn dred(&mut self, stratum: &[String]) -> DbResult<()> {
        let members: BTreeSet<String> = stratum.iter().cloned().collect();
        let empty = || -> BTreeMap<String, MemRelation> {
            stratum
                .iter()
                .map(|r| (r.clone(), MemRelation::new()))
                .collect()
        };
        // 1. Over-delete, against the old state: first what a deleted input derived, then
        // what the over-deleted tuples themselves derived, until nothing new turns up.
        let mut over_deleted = empty();
        let mut frontier = empty();
        let mut drivers: Option<BTreeMap<String, Delta>> = None;
        loop {
            for name in stratum {
                let found = self.derived_by_terms(
                    name,
                    Mode::DeleteOnlyOld,
                    drivers.as_ref().unwrap_or(&self.deltas),
                    &self.old,
                    &self.old,
                )?;
                for tuple in found {
                    if over_deleted
                        .get_mut(name)
                        .is_some_and(|od| od.insert(tuple.clone()))
                    {
                        frontier.get_mut(name).map(|f| f.insert(tuple));
                    }
                }
            }
            if frontier.values().all(MemRelation::is_empty) {
                break;
            }
            drivers = Some(
                std::mem::replace(&mut frontier, empty())
                    .into_iter()
                    .map(|(name, deleted)| {
                        (
                            name,
                            Delta {
                                inserted: MemRelation::new(),
                                deleted,
                            },
                        )
                    })
                    .collect(),
            );
        }
        // 2 and 3. Rederive what keeps a derivation from the new inputs and the survivors.
        let mut added = empty();
        let mut frontier = empty();
        for name in stratum {
            let arity = self.types(name).len();
            let all: Vec<usize> = (0..arity).collect();
            let avoid = |relation: &str| members.contains(relation);
            let plans: Vec<RulePlan> = self
                .program
                .rules_of(name)
                .iter()
                .map(|rule| plan_for_head_pattern_avoiding(rule, &all, &avoid))
                .collect();
            let mut rederived = Vec::new();
            {
                let view = Patched {
                    members: &members,
                    old: &self.old,
                    removed: &over_deleted,
                    added: &added,
                    rest: &self.new,
                };
                for tuple in over_deleted[name].tuples() {
                    if derivable(&plans, tuple, &view)? {
                        rederived.push(tuple.clone());
                    }
                }
            }
            for tuple in rederived {
                added.get_mut(name).map(|a| a.insert(tuple.clone()));
                frontier.get_mut(name).map(|f| f.insert(tuple));
            }
        }
        // 4. Insertions, against the new state: first what the inputs' insertions derive,
        // then semi-naively through the stratum itself.
        let mut drivers: Option<BTreeMap<String, Delta>> = None;
        let mut rounds = 0usize;
        loop {
            for name in stratum {
                let found = {
                    let view = Patched {
                        members: &members,
                        old: &self.old,
                        removed: &over_deleted,
                        added: &added,
                        rest: &self.new,
                    };
                    self.derived_by_terms(
                        name,
                        Mode::InsertOnly,
                        drivers.as_ref().unwrap_or(&self.deltas),
                        &view,
                        &view,
                    )?
                };
                for tuple in found {
                    self.add_if_new(name, tuple, &over_deleted, &mut added, &mut frontier)?;
                }
            }
            if frontier.values().all(MemRelation::is_empty) {
                break;
            }
            rounds += 1;
            if rounds > crate::eval::join::FIXPOINT_ROUNDS_MAX {
                return Err(DbError::user(format!(
                    "maintaining {} did not reach a fixpoint",
                    stratum.join(", ")
                )));
            }
            drivers = Some(
                std::mem::replace(&mut frontier, empty())
                    .into_iter()
                    .map(|(name, inserted)| {
                        (
                            name,
                            Delta {
                                inserted,
                                deleted: MemRelation::new(),
                            },
                        )
                    })
                    .collect(),
            );
        }
        // Net change, written to the trees.
        for name in stratum {
            let types = self.types(name);
            let mut delta = Delta::default();
            let mut edits: Vec<Edit> = Vec::new();
            for tuple in over_deleted[name].tuples() {
                if !added[name].tuples().contains(tuple) {
                    edits.push((encode(tuple, &types, name)?, None));
                    delta.deleted.insert(tuple.clone());
                }
            }
            for tuple in added[name].tuples() {
                if !over_deleted[name].tuples().contains(tuple) {
                    edits.push((encode(tuple, &types, name)?, Some(Vec::new())));
                    delta.inserted.insert(tuple.clone());
                }
            }
            edits.sort_by(|a, b| a.0.cmp(&b.0));
            let entry = self.entry(name)?;
            let new_tree = stored_tree(&entry)?.edit(self.nodes, edits)?;
            self.store(name, entry, new_tree, delta, Vec::new())?;
        }
        Ok(())
    }

    /// The head tuples of `relation` that its delta terms derive (with repeats).
    fn derived_by_terms(
        &self,
        relation: &str,
        mode: Mode,
        drivers: &BTreeMap<String, Delta>,
        new: &dyn Relations,
        old: &dyn Relations,
    ) -> DbResult<Vec<Tuple>> {
        let mut found = Vec::new();
        self.delta_terms(relation, mode, drivers, new, old, &mut |plan, b, _| {
            found.push(project(plan, b)?);
            Ok(Flow::Continue)
        })?;
        Ok(found)
    }

    /// Adds a tuple DRed found to `added` when the current state lacks it.
    fn add_if_new(
        &self,
        name: &str,
        tuple: Tuple,
        over_deleted: &BTreeMap<String, MemRelation>,
        added: &mut BTreeMap<String, MemRelation>,
        frontier: &mut BTreeMap<String, MemRelation>,
    ) -> DbResult<()> {
        if added[name].tuples().contains(&tuple) {
            return Ok(());
        }
        let pattern: Vec<Option<Value>> = tuple.iter().cloned().map(Some).collect();
        let in_old = exists(&self.old, name, &pattern)?;
        let survives = in_old && !over_deleted[name].tuples().contains(&tuple);
        if !survives {
            added.get_mut(name).map(|a| a.insert(tuple.clone()));
            frontier.get_mut(name).map(|f| f.insert(tuple));
        }
        Ok(())
    }

    /// Judges every denial on insert-only deltas against the new state, stopping at the
    /// first witness. A denial stores nothing: its delta is thrown away once judged.
    fn judge_denials(&mut self) -> DbResult<()> {
        let denials: Vec<String> = self
            .program
            .relations
            .iter()
            .filter(|(_, r)| stored_kind(r.kind()) == RelationKind::Denial)
            .map(|(name, _)| name.clone())
            .collect();
        for denial in denials {
            if !self.reads_changed(&denial) {
                continue;
            }
            let before = self.nodes.counters();
            let mut witness: Option<Tuple> = None;
            self.delta_terms(
                &denial,
                Mode::InsertOnly,
                &self.deltas,
                &self.new,
                &self.new,
                &mut |plan, b, _| {
                    witness = Some(project(plan, b)?);
                    Ok(Flow::Stop)
                },
            )?;
            self.stats.push(OperatorStats {
                relation: denial.clone(),
                operator: "denial".into(),
                counters: self.nodes.counters() - before,
            });
            if let Some(witness) = witness {
                return Err(DbError::DenialViolated {
                    witness: format_tuple(&denial, &witness),
                    denial,
                });
            }
        }
        Ok(())
    }

    fn entry(&self, name: &str) -> DbResult<RelationEntry> {
        self.entries.get(name).cloned().ok_or_else(|| {
            DbError::Corrupted(format!("relation `{name}` is missing from the state"))
        })
    }

    /// Records a maintained relation: new tree, indexes edited from its delta, auxiliary
    /// trees; readable in the new state from now on.
    fn store(
        &mut self,
        name: &str,
        mut entry: RelationEntry,
        tree: Tree,
        delta: Delta,
        extra: Vec<(String, Tree)>,
    ) -> DbResult<()> {
        let types = self.types(name);
        let mut aux: Vec<AuxTree> = Vec::new();
        for permutation in self.plans.indexes.get(name).into_iter().flatten() {
            let label = index_label(permutation);
            let index = match entry.aux_tree(&label) {
                Some(index) => {
                    index.edit(self.nodes, delta_index_edits(&delta, &types, permutation)?)?
                }
                None => build_index(self.nodes, &tree, &types, permutation)?,
            };
            aux.push(AuxTree {
                label,
                root: *index.root().as_bytes(),
            });
        }
        for (label, tree) in extra {
            aux.push(AuxTree {
                label,
                root: *tree.root().as_bytes(),
            });
        }
        aux.sort_by(|a, b| a.label.cmp(&b.label));
        entry.root = Some(*tree.root().as_bytes());
        entry.count = Some(tree.count(self.nodes)?);
        entry.aux = aux;
        self.new.register(&entry);
        self.entries.insert(name.to_string(), entry);
        self.deltas.insert(name.to_string(), delta);
        Ok(())
    }
}

/// The relation literal `i` of a delta plan reads (its first step).
fn driver_relation(plan: &RulePlan, i: usize) -> Option<&str> {
    plan.steps.iter().find_map(|step| match step {
        Step::Join(read) if read.literal == i => Some(read.relation.as_str()),
        _ => None,
    })
}

/// Which state literal `j` reads in the term driven by literal `i`.
fn version<'s>(
    mode: Mode,
    j: usize,
    i: usize,
    new: &'s dyn Relations,
    old: &'s dyn Relations,
) -> &'s dyn Relations {
    match mode {
        Mode::Signed if j < i => new,
        Mode::Signed => old,
        Mode::InsertOnly => new,
        Mode::DeleteOnlyOld => old,
    }
}

/// The bindings a tuple of a negated atom's relation gives the atom's variables; `None`
/// when the tuple cannot match the atom (a constant or repeated variable differs).
fn bind_atom(atom: &Atom, tuple: &[Value], variables: usize) -> Option<Vec<Option<Value>>> {
    let mut bindings = vec![None; variables];
    for (term, value) in atom.terms.iter().zip(tuple) {
        match &term.kind {
            TermKind::Const(c) if c != value => return None,
            TermKind::Var(v) => match &bindings[v.index()] {
                Some(existing) if existing != value => return None,
                _ => bindings[v.index()] = Some(value.clone()),
            },
            _ => {}
        }
    }
    Some(bindings)
}

/// The read pattern of an atom under bindings.
fn atom_pattern(atom: &Atom, bindings: &[Option<Value>]) -> Vec<Option<Value>> {
    atom.terms
        .iter()
        .map(|term| match &term.kind {
            TermKind::Const(c) => Some(c.clone()),
            TermKind::Var(v) => bindings[v.index()].clone(),
            TermKind::Wildcard => None,
        })
        .collect()
}

/// Whether any tuple of `relation` matches `pattern`.
fn exists(source: &dyn Relations, relation: &str, pattern: &[Option<Value>]) -> DbResult<bool> {
    let mut found = false;
    source.read(relation, pattern, &mut |_| {
        found = true;
        Ok(Flow::Stop)
    })?;
    Ok(found)
}

/// Whether one of `plans` (a relation's rules with every head column pre-bound) derives
/// `tuple` from `source`.
fn derivable(plans: &[RulePlan], tuple: &[Value], source: &dyn Relations) -> DbResult<bool> {
    for plan in plans {
        let mut bindings = vec![None; plan.variables];
        let mut consistent = true;
        for (column, value) in plan.head_columns.iter().zip(tuple) {
            match column {
                crate::eval::plan::HeadColumn::Var(v) => match &bindings[v.index()] {
                    Some(existing) if existing != value => consistent = false,
                    _ => bindings[v.index()] = Some(value.clone()),
                },
                crate::eval::plan::HeadColumn::Const(c) => consistent &= c == value,
                crate::eval::plan::HeadColumn::Aggregate(..) => consistent = false,
            }
        }
        if !consistent {
            continue;
        }
        let sources = vec![source; plan.literals];
        let mut found = false;
        run_plan(plan, &sources, &mut bindings, &mut |_| {
            found = true;
            Ok(Flow::Stop)
        })?;
        if found {
            return Ok(true);
        }
    }
    Ok(false)
}

fn difference(old: &BTreeSet<Tuple>, new: &BTreeSet<Tuple>) -> Delta {
    Delta {
        inserted: MemRelation::from_set(new.difference(old).cloned().collect()),
        deleted: MemRelation::from_set(old.difference(new).cloned().collect()),
    }
}

fn encode(tuple: &[Value], types: &[Type], relation: &str) -> DbResult<Vec<u8>> {
    encode_tuple(tuple, types).map_err(|e| DbError::user(format!("`{relation}`: {e}")))
}

fn decode_count(bytes: &[u8], relation: &str) -> DbResult<u64> {
    let array: [u8; 8] = bytes.try_into().map_err(|_| {
        DbError::Corrupted(format!(
            "`{relation}` holds a count of {} bytes, not 8",
            bytes.len()
        ))
    })?;
    Ok(u64::from_le_bytes(array))
}

fn unwrap_all(values: Vec<Option<Value>>, view: &str) -> DbResult<Vec<Value>> {
    values
        .into_iter()
        .map(|v| {
            v.ok_or_else(|| {
                DbError::Corrupted(format!("`{view}`: a group with matches has no extreme"))
            })
        })
        .collect()
}

fn stored_tree(entry: &RelationEntry) -> DbResult<Tree> {
    entry
        .tree()
        .ok_or_else(|| DbError::Corrupted(format!("view `{}` has no tree", entry.name)))
}

fn aux(entry: &RelationEntry, label: &str) -> DbResult<Tree> {
    entry.aux_tree(label).ok_or_else(|| {
        DbError::Corrupted(format!("view `{}` lacks its `{label}` tree", entry.name))
    })
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
            let key = encode_permuted(tuple, types, permutation)
                .map_err(|e| DbError::user(e.to_string()))?;
            edits.push((key, value.clone()));
        }
    }
    edits.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(edits)
}

/// Decodes a base relation's diff into a delta.
pub fn delta_of_diff(
    entries: &[rnt_merkle::DiffEntry],
    types: &[Type],
    relation: &str,
) -> DbResult<Delta> {
    let mut delta = Delta::default();
    for entry in entries {
        let tuple = decode_tuple(entry.key(), types).map_err(|e| {
            DbError::Corrupted(format!(
                "a stored tuple of `{relation}` does not decode: {e}"
            ))
        })?;
        match entry {
            rnt_merkle::DiffEntry::Added { .. } => {
                delta.inserted.insert(tuple);
            }
            rnt_merkle::DiffEntry::Removed { .. } => {
                delta.deleted.insert(tuple);
            }
            rnt_merkle::DiffEntry::Changed { .. } => {}
        }
    }
    Ok(delta)
}
