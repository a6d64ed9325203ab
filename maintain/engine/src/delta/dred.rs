//! DRed (delete and rederive), for recursive strata of views:
//!
//! 1. over-delete: `D = fixpoint(Δ⁻ terms against the old state)` — every tuple with a
//!    derivation that used a deleted fact;
//! 2. rederive: `R = { t ∈ D : t has a derivation from (old − D) + new inputs }`;
//! 3. insert: `I = fixpoint(Δ⁺ terms against the new state)`, semi-naively from the
//!    inputs' insertions and R;
//!
//! and the stratum's delta is `(I − D)` inserted, `(D − I)` deleted.

use super::terms::{exists, Mode};
use super::{encode, stored_tree, Delta, Maintainer};
use crate::eval::fixpoint::FIXPOINT_ROUNDS_MAX;
use crate::eval::join::{project_stored, run_plan};
use crate::eval::memory::MemRelation;
use crate::eval::plan::RulePlan;
use crate::eval::read::{Flow, Relations, Visit, WeightedVisit};
use crate::{EngineError, EngineResult};
use rnt_lang::tuple::Tuple;
use rnt_lang::value::Value;
use rnt_merkle::Edit;
use std::collections::{BTreeMap, BTreeSet};

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
    ) -> EngineResult<Flow> {
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

    fn read_used(
        &self,
        relation: &str,
        pattern: &[Option<Value>],
        used: &[bool],
        visit: &mut WeightedVisit<'_>,
    ) -> EngineResult<Flow> {
        // The stratum's own views are read whole: a removed tuple is recognized by all of
        // its columns.
        if self.members.contains(relation) {
            return self.read(relation, pattern, &mut |tuple| visit(tuple, 1));
        }
        self.rest.read_used(relation, pattern, used, visit)
    }
}

impl Maintainer<'_> {
    /// DRed for a recursive stratum of views: over-delete every tuple with a derivation
    /// that used a deleted fact (against the old state), rederive those that keep another
    /// derivation, then propagate insertions semi-naively against the new state.
    pub(super) fn dred(&mut self, stratum: &[String]) -> EngineResult<()> {
        let members: BTreeSet<String> = stratum.iter().cloned().collect();
        // 1. Over-delete, against the old state: first what a deleted input derived, then
        // what the over-deleted tuples themselves derived, until nothing new turns up.
        let mut over_deleted = empty(stratum);
        self.fixpoint(
            stratum,
            empty(stratum),
            deleted,
            &mut |name, drivers, frontier| {
                let found = self.derived_by_terms(
                    name,
                    Mode::DeleteOnlyOld,
                    drivers,
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
                Ok(())
            },
        )?;
        // 2. Rederive what keeps a derivation from the new inputs and the survivors.
        let mut added = empty(stratum);
        let rederived = self.rederive(stratum, &members, &over_deleted)?;
        for (name, tuples) in &rederived {
            for tuple in tuples.tuples() {
                added.get_mut(name).map(|a| a.insert(tuple.clone()));
            }
        }
        // 3. Insertions, against the new state: first what the inputs' insertions and the
        // rederived tuples derive, then semi-naively through the stratum itself.
        self.fixpoint(
            stratum,
            rederived,
            inserted,
            &mut |name, drivers, frontier| {
                let found = {
                    let view = Patched {
                        members: &members,
                        old: &self.old,
                        removed: &over_deleted,
                        added: &added,
                        rest: &self.new,
                    };
                    self.derived_by_terms(name, Mode::InsertOnly, drivers, &view, &view)?
                };
                for tuple in found {
                    self.add_if_new(name, tuple, &over_deleted, &mut added, frontier)?;
                }
                Ok(())
            },
        )?;
        self.write_net_change(stratum, &over_deleted, &added)
    }

    /// The one loop of DRed's over-deletion and insertion, bounded once: the first round is
    /// driven by the commit's deltas, each later one by the tuples the previous round found
    /// new (`frontier`, which the caller may seed), wrapped by `as_delta` as deletions or
    /// insertions; it stops when a round finds nothing new.
    fn fixpoint(
        &self,
        stratum: &[String],
        mut frontier: BTreeMap<String, MemRelation>,
        as_delta: fn(MemRelation) -> Delta,
        round: &mut Round<'_>,
    ) -> EngineResult<()> {
        let mut drivers: Option<BTreeMap<String, Delta>> = None;
        for rounds in 0..=FIXPOINT_ROUNDS_MAX {
            crate::budget::check(|| {
                format!("maintaining {} (round {rounds})", stratum.join(", "))
            })?;
            for name in stratum {
                round(
                    name,
                    drivers.as_ref().unwrap_or(&self.deltas),
                    &mut frontier,
                )?;
            }
            if frontier.values().all(MemRelation::is_empty) {
                return Ok(());
            }
            drivers = Some(
                std::mem::replace(&mut frontier, empty(stratum))
                    .into_iter()
                    .map(|(name, tuples)| (name, as_delta(tuples)))
                    .collect(),
            );
        }
        Err(EngineError::user(format!(
            "maintaining {} did not reach a fixpoint",
            stratum.join(", ")
        )))
    }

    /// The over-deleted tuples that keep a derivation from the survivors and the new
    /// inputs, read with every head column bound.
    fn rederive(
        &self,
        stratum: &[String],
        members: &BTreeSet<String>,
        over_deleted: &BTreeMap<String, MemRelation>,
    ) -> EngineResult<BTreeMap<String, MemRelation>> {
        let mut rederived = empty(stratum);
        for name in stratum {
            let plans: &[RulePlan] = self
                .plans
                .rederive
                .get(name)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let view = Patched {
                members,
                old: &self.old,
                removed: over_deleted,
                added: &rederived,
                rest: &self.new,
            };
            let mut found = Vec::new();
            for tuple in over_deleted[name].tuples() {
                if derivable(plans, tuple, &view)? {
                    found.push(tuple.clone());
                }
            }
            for tuple in found {
                rederived.get_mut(name).map(|r| r.insert(tuple));
            }
        }
        Ok(rederived)
    }

    /// Writes the stratum's net change to its trees: `added − over_deleted` inserted,
    /// `over_deleted − added` deleted.
    fn write_net_change(
        &mut self,
        stratum: &[String],
        over_deleted: &BTreeMap<String, MemRelation>,
        added: &BTreeMap<String, MemRelation>,
    ) -> EngineResult<()> {
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
    pub(super) fn derived_by_terms(
        &self,
        relation: &str,
        mode: Mode,
        drivers: &BTreeMap<String, Delta>,
        new: &dyn Relations,
        old: &dyn Relations,
    ) -> EngineResult<Vec<Tuple>> {
        let mut found = Vec::new();
        self.delta_terms(relation, mode, drivers, new, old, &mut |plan, b, _| {
            found.push(project_stored(plan, b)?);
            Ok(Flow::Continue)
        })?;
        Ok(found)
    }

    /// Adds a tuple DRed found to `added` when the current state lacks it.
    pub(super) fn add_if_new(
        &self,
        name: &str,
        tuple: Tuple,
        over_deleted: &BTreeMap<String, MemRelation>,
        added: &mut BTreeMap<String, MemRelation>,
        frontier: &mut BTreeMap<String, MemRelation>,
    ) -> EngineResult<()> {
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
}

/// Whether one of `plans` (a relation's rules with every head column pre-bound) derives
/// `tuple` from `source`.
fn derivable(plans: &[RulePlan], tuple: &[Value], source: &dyn Relations) -> EngineResult<bool> {
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

/// One round of a DRed phase for one member of the stratum: its name, the deltas driving
/// the round, and the frontier to record newly found tuples in.
type Round<'r> = dyn FnMut(&str, &BTreeMap<String, Delta>, &mut BTreeMap<String, MemRelation>) -> EngineResult<()>
    + 'r;

/// An empty relation per member of the stratum.
fn empty(stratum: &[String]) -> BTreeMap<String, MemRelation> {
    stratum
        .iter()
        .map(|r| (r.clone(), MemRelation::new()))
        .collect()
}

fn deleted(tuples: MemRelation) -> Delta {
    Delta {
        inserted: MemRelation::new(),
        deleted: tuples,
    }
}

fn inserted(tuples: MemRelation) -> Delta {
    Delta {
        inserted: tuples,
        deleted: MemRelation::new(),
    }
}
