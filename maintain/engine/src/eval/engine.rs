//! Evaluation of a program over a state from scratch: the plans of every rule, the indexes
//! they need, materialized views computed stratum by stratum (with derivation counts for
//! non-recursive ones), ephemeral relations evaluated when read with the bindings pushed
//! in, and denials judged.
//!
//! *Invariant: every materialized relation equals the from-scratch evaluation of its rules
//! on the same state — `maintain(V, state, Δ) == eval(V, state + Δ)`, checked by verify.*

use crate::eval::aggregate::{
    distinct_label, extremes_label, groups_from_scratch, row_from_state, values_label,
    AggregateShape, GROUPS_LABEL,
};
use crate::eval::fixpoint::semi_naive;
use crate::eval::index::index_trees;
use crate::eval::join::{project, project_stored};
use crate::eval::kind_code;
use crate::eval::memory::MemRelation;
use crate::eval::plan::{HeadColumn, RulePlan};
use crate::eval::planner::plan_for_head_pattern;
use crate::eval::plans::ProgramPlans;
use crate::eval::read::{Flow, Relations, StoredRelation, Visit, WeightedVisit};
use crate::eval::window::{
    keeps_totals, partition_total, run_windowed, run_windowed_observed, stored_running, totals_key,
    RUNNING_LABEL,
};
use crate::{EngineError, EngineResult, Violation};
use rnt_lang::check::Program;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::tuple::{encode_tuple, format_tuple, Tuple};
use rnt_lang::value::{ColumnType, Value};
use rnt_merkle::{AuxTree, NodeStore, RelationEntry, Tree};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// Auxiliary trees of a view by label, before they are recorded in its entry.
type AuxTrees = Vec<(String, Tree)>;

/// Tree entries, key and value, in key order.
type KeyedEntries = Vec<(Vec<u8>, Vec<u8>)>;

/// A relation and the columns a read binds.
type ReadPattern = (String, Vec<usize>);

/// Reads over one state during an evaluation: stored relations from their trees, the
/// rest evaluated on demand.
pub struct Engine<'a> {
    nodes: &'a NodeStore,
    program: &'a Program,
    plans: &'a ProgramPlans,
    stored: BTreeMap<String, StoredRelation>,
    pattern_plans: RefCell<BTreeMap<ReadPattern, Rc<Vec<RulePlan>>>>,
    recursive: RefCell<BTreeMap<String, Rc<MemRelation>>>,
    /// Answers to reads of non-recursive derived relations, by relation and pattern: a
    /// chain of ephemeral relations is then evaluated once per link, not once per reader
    /// (which made a commit through n of them cost O(n²)). Bounded by
    /// [`DERIVED_READS_CACHED_MAX`].
    derived: RefCell<BTreeMap<ReadKey, Rc<Vec<Tuple>>>>,
    /// The state's clock, which rules reading `now` compare with (`None`: the program
    /// does not mention `now`, or the engine was given no clock).
    clock: Option<i64>,
}

/// A read of a derived relation: its name and the pattern's bound values.
type ReadKey = (String, Vec<Option<Value>>);

/// Derived reads one engine remembers. A commit or a query over a big state can probe an
/// ephemeral relation once per tuple of a large join; past this many distinct reads the
/// engine stops remembering new ones, so its memory stays bounded.
pub const DERIVED_READS_CACHED_MAX: usize = 1 << 16;

impl<'a> Engine<'a> {
    /// An engine over the stored relations of `entries` (base relations and whatever views
    /// are already current).
    pub fn new(
        nodes: &'a NodeStore,
        program: &'a Program,
        plans: &'a ProgramPlans,
        entries: &[RelationEntry],
    ) -> Engine<'a> {
        let mut engine = Engine {
            nodes,
            program,
            plans,
            stored: BTreeMap::new(),
            pattern_plans: RefCell::default(),
            recursive: RefCell::default(),
            derived: RefCell::default(),
            clock: None,
        };
        for entry in entries {
            engine.register(entry);
        }
        engine
    }

    /// This engine, reading the state at clock `clock` (a state of a program that mentions
    /// `now` carries one; `None` for one that does not).
    #[must_use]
    pub fn with_clock(mut self, clock: Option<i64>) -> Engine<'a> {
        self.clock = clock;
        self.recursive.borrow_mut().clear();
        self.derived.borrow_mut().clear();
        self
    }

    /// The clock this engine reads the state at.
    pub fn clock(&self) -> Option<i64> {
        self.clock
    }

    /// Makes a stored relation's trees readable.
    pub fn register(&mut self, entry: &RelationEntry) {
        let (Some(tree), Some(relation)) = (entry.tree(), self.program.relation(&entry.name))
        else {
            return;
        };
        let Some(stored) = StoredRelation::from_entry(entry, relation.declaration.types()) else {
            return;
        };
        debug_assert_eq!(stored.tree, tree);
        self.stored.insert(entry.name.clone(), stored);
        self.recursive.borrow_mut().clear();
        self.derived.borrow_mut().clear();
    }

    /// Reads a stored relation in the order of its index over a permutation (backward
    /// when `order.1`), the leading columns holding `prefix` (`StoredRelation::read_ordered`); `None` when the
    /// relation keeps no tree in this state.
    pub fn read_ordered(
        &self,
        relation: &str,
        order: (&[usize], bool),
        prefix: &[Value],
        visit: &mut Visit<'_>,
    ) -> EngineResult<Option<Flow>> {
        match self.stored.get(relation) {
            Some(stored) => stored
                .read_ordered(self.nodes, order, prefix, visit)
                .map(Some),
            None => Ok(None),
        }
    }

    /// [`StoredRelation::read_ordered_from`] on stored relation `relation`; `None` when
    /// it is not stored.
    pub fn read_ordered_from(
        &self,
        relation: &str,
        permutation: &[usize],
        span: (&[u8], &[u8]),
        backward: bool,
        visit: &mut dyn FnMut(&[u8], Tuple) -> EngineResult<Flow>,
    ) -> EngineResult<Option<Flow>> {
        match self.stored.get(relation) {
            Some(stored) => stored
                .read_ordered_from(self.nodes, permutation, span, backward, visit)
                .map(Some),
            None => Ok(None),
        }
    }

    /// The node store.
    pub fn nodes(&self) -> &NodeStore {
        self.nodes
    }

    fn types_of(&self, relation: &str) -> Vec<ColumnType> {
        self.program
            .relation(relation)
            .map(|r| r.declaration.types())
            .unwrap_or_default()
    }

    /// Every tuple of a derived relation, evaluated from scratch (stored ones are read).
    pub fn evaluate(&self, relation: &str) -> EngineResult<BTreeSet<Tuple>> {
        let arity = self.types_of(relation).len();
        let mut out = BTreeSet::new();
        self.read(relation, &vec![None; arity], &mut |t| {
            out.insert(t.to_vec());
            Ok(Flow::Continue)
        })?;
        Ok(out)
    }

    /// Every tuple of `relation` in tuple order, as one read that keeps no copy: a query's
    /// answer. A non-recursive relation that is not stored is evaluated straight into the
    /// answer (not through [`Engine::evaluate`]'s set and the cache of derived reads, each a
    /// second copy of it); any other is read as [`Engine::evaluate`] reads it.
    pub fn evaluate_once(&self, relation: &str) -> EngineResult<Vec<Tuple>> {
        let recursive = self
            .program
            .strata
            .stratum_of(relation)
            .is_some_and(|i| self.program.strata.strata[i].recursive);
        if recursive
            || self.stored.contains_key(relation)
            || self.program.rules_of(relation).is_empty()
        {
            return Ok(self.evaluate(relation)?.into_iter().collect());
        }
        let arity = self.types_of(relation).len();
        self.evaluate_pattern(relation, &vec![None; arity])
    }

    /// Every tuple of a derived relation computed from its rules over this engine's
    /// relations, never read from its own stored tree: a recursive relation by its
    /// stratum's fixpoint (the stratum's members overlaid in memory), any other by
    /// [`Engine::evaluate`]. The caller makes sure a non-recursive one is not stored.
    pub fn evaluate_from_scratch(&self, relation: &str) -> EngineResult<BTreeSet<Tuple>> {
        let recursive = self
            .program
            .strata
            .stratum_of(relation)
            .is_some_and(|i| self.program.strata.strata[i].recursive);
        if recursive {
            return Ok(self.recursive_relation(relation)?.tuples().clone());
        }
        debug_assert!(
            !self.stored.contains_key(relation),
            "`{relation}` is stored: evaluating it from scratch would read its stale tree"
        );
        self.evaluate(relation)
    }

    fn plans_for_pattern(&self, relation: &str, bound: &[usize]) -> Rc<Vec<RulePlan>> {
        let key = (relation.to_string(), bound.to_vec());
        if let Some(plans) = self.pattern_plans.borrow().get(&key) {
            return plans.clone();
        }
        // The program's plans hold every pattern its own rules read with; an ad-hoc reader
        // (a query over this engine's program) may bind others, planned here once.
        if let Some(plans) = self.plans.pushed.get(relation).and_then(|p| p.get(bound)) {
            let plans = Rc::new(plans.clone());
            self.pattern_plans.borrow_mut().insert(key, plans.clone());
            return plans;
        }
        let plans: Vec<RulePlan> = self
            .program
            .rules_of(relation)
            .iter()
            .map(|rule| plan_for_head_pattern(rule, bound))
            .collect();
        let plans = Rc::new(plans);
        self.pattern_plans.borrow_mut().insert(key, plans.clone());
        plans
    }

    /// The whole recursive stratum holding `relation`, by semi-naive evaluation, cached.
    fn recursive_relation(&self, relation: &str) -> EngineResult<Rc<MemRelation>> {
        if let Some(memo) = self.recursive.borrow().get(relation) {
            return Ok(memo.clone());
        }
        let stratum = self.stratum_of(relation)?;
        let computed = self.fixpoint(&stratum)?;
        let mut memo = self.recursive.borrow_mut();
        for (name, tuples) in computed {
            memo.insert(name, Rc::new(tuples));
        }
        memo.get(relation)
            .cloned()
            .ok_or_else(|| EngineError::internal(format!("`{relation}` missing from its stratum")))
    }

    fn stratum_of(&self, relation: &str) -> EngineResult<Vec<String>> {
        let index = self
            .program
            .strata
            .stratum_of(relation)
            .ok_or_else(|| EngineError::internal(format!("`{relation}` is in no stratum")))?;
        Ok(self.program.strata.strata[index].relations.clone())
    }

    /// Semi-naive evaluation of a recursive stratum over this engine's relations.
    fn fixpoint(&self, stratum: &[String]) -> EngineResult<BTreeMap<String, MemRelation>> {
        let members: BTreeSet<&str> = stratum.iter().map(String::as_str).collect();
        let mut full = Vec::new();
        let mut delta = Vec::new();
        for name in stratum {
            full.extend(self.plans.full.get(name).into_iter().flatten().cloned());
            for (plan, literal) in self.plans.delta.get(name).into_iter().flatten() {
                let reads_member = plan.reads().any(|read| {
                    read.literal == *literal && members.contains(read.relation.as_str())
                });
                if reads_member {
                    delta.push((plan.clone(), *literal));
                }
            }
        }
        semi_naive(stratum, &full, &delta, self)
    }

    /// Reads a derived relation that is not stored, with the pattern's bound columns pushed
    /// into its rules.
    fn read_derived(
        &self,
        relation: &str,
        pattern: &[Option<Value>],
        visit: &mut Visit<'_>,
    ) -> EngineResult<Flow> {
        let recursive = self
            .program
            .strata
            .stratum_of(relation)
            .is_some_and(|i| self.program.strata.strata[i].recursive);
        if recursive {
            return self.recursive_relation(relation)?.read(pattern, visit);
        }
        let key: ReadKey = (relation.to_string(), pattern.to_vec());
        let cached = self.derived.borrow().get(&key).cloned();
        let results = match cached {
            Some(results) => results,
            None => {
                let results = Rc::new(self.evaluate_pattern(relation, pattern)?);
                let mut memo = self.derived.borrow_mut();
                if memo.len() < DERIVED_READS_CACHED_MAX {
                    memo.insert(key, results.clone());
                }
                results
            }
        };
        for tuple in results.iter() {
            if visit(tuple)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }

    /// The tuples of a non-recursive derived relation that match `pattern`, in tuple order,
    /// evaluated with the pattern's bound columns pushed into its rules.
    fn evaluate_pattern(
        &self,
        relation: &str,
        pattern: &[Option<Value>],
    ) -> EngineResult<Vec<Tuple>> {
        let bound: Vec<usize> = (0..pattern.len())
            .filter(|&c| pattern[c].is_some())
            .collect();
        let mut results: BTreeSet<Tuple> = BTreeSet::new();
        for plan in self.plans_for_pattern(relation, &bound).iter() {
            let mut bindings = vec![None; plan.variables];
            let mut consistent = true;
            for &column in &bound {
                let value = pattern[column].clone();
                match &plan.head_columns[column] {
                    HeadColumn::Var(v) => match &bindings[v.index()] {
                        Some(existing) if Some(existing) != value.as_ref() => consistent = false,
                        _ => bindings[v.index()] = value,
                    },
                    HeadColumn::Const(c) => consistent &= Some(c) == value.as_ref(),
                    HeadColumn::Aggregate(..) => {}
                }
            }
            if !consistent {
                continue;
            }
            let sources = vec![self as &dyn Relations; plan.literals];
            if plan.is_aggregate() {
                let shape = AggregateShape::of(plan, &self.types_of(relation));
                for (key, group) in groups_from_scratch(plan, &shape, &sources, bindings)? {
                    results.insert(row_from_state(&shape, &key, &group, &plan.source)?);
                }
                continue;
            }
            run_windowed(plan, &sources, &mut bindings, &mut |b| {
                results.insert(project(plan, b)?);
                Ok(Flow::Continue)
            })?;
        }
        let mut matching = Vec::with_capacity(results.len());
        matching.extend(results.into_iter().filter(|tuple| {
            pattern
                .iter()
                .zip(tuple)
                .all(|(p, v)| p.as_ref().is_none_or(|p| p == v))
        }));
        Ok(matching)
    }

    /// Computes a view from scratch: its tuples with derivation counts (non-recursive), as
    /// a set (recursive), or its groups (aggregates); then its tree and indexes.
    pub fn materialize(&mut self, view: &str) -> EngineResult<RelationEntry> {
        let types = self.types_of(view);
        let recursive = self
            .program
            .strata
            .stratum_of(view)
            .is_some_and(|i| self.program.strata.strata[i].recursive);
        let aggregated = self
            .program
            .relation(view)
            .is_some_and(|r| r.is_aggregated());
        let encode = |tuple: &Tuple| {
            // Rules check the limit where they derive (`limit`), the checker the types.
            encode_tuple(tuple, &types)
                .map_err(|e| EngineError::internal(format!("a derived tuple of `{view}`: {e}")))
        };
        let mut keyed: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut extra: AuxTrees = Vec::new();
        if recursive {
            for tuple in self.recursive_relation(view)?.tuples() {
                keyed.push((encode(tuple)?, Vec::new()));
            }
        } else if aggregated {
            let (rows, trees) = self.aggregate_from_scratch(view, &types)?;
            for row in rows {
                keyed.push((encode(&row)?, Vec::new()));
            }
            extra = trees;
        } else {
            let (counts, totals) = self.counts_from_scratch(view)?;
            for (tuple, count) in counts {
                keyed.push((encode(&tuple)?, count.to_le_bytes().to_vec()));
            }
            if let Some(totals) = totals {
                extra.push((RUNNING_LABEL.to_string(), build_sorted(self.nodes, totals)?));
            }
        }
        let tree = build_sorted(self.nodes, keyed)?;
        let mut entry = self.stored_entry(view, RelationKind::View, tree)?;
        for (label, tree) in extra {
            entry.aux.push(AuxTree {
                label,
                root: *tree.root().as_bytes(),
            });
        }
        entry.aux.sort_by(|a, b| a.label.cmp(&b.label));
        self.register(&entry);
        Ok(entry)
    }

    /// A running `sum`/`count` view's partition totals ([`RUNNING_LABEL`]) from scratch:
    /// for a state written before views kept them.
    pub fn running_totals(&self, view: &str) -> EngineResult<Tree> {
        let (_, totals) = self.counts_from_scratch(view)?;
        build_sorted(self.nodes, totals.unwrap_or_default())
    }

    /// Every derivation of a non-recursive view's tuples, counted; and, for a view that
    /// keeps per-partition totals (a running `sum`/`count`: `eval::window::keeps_totals`),
    /// its [`RUNNING_LABEL`] entries in key order.
    fn counts_from_scratch(
        &self,
        view: &str,
    ) -> EngineResult<(BTreeMap<Tuple, u64>, Option<KeyedEntries>)> {
        let mut counts: BTreeMap<Tuple, u64> = BTreeMap::new();
        let mut totals: Option<BTreeMap<Vec<u8>, Vec<u8>>> = None;
        for plan in self.plans.full.get(view).into_iter().flatten() {
            let sources = vec![self as &dyn Relations; plan.literals];
            let mut bindings = vec![None; plan.variables];
            // A windowed view has this one rule: its totals, when it keeps them.
            let running = plan
                .window
                .as_ref()
                .zip(stored_running(self.program, plan))
                .filter(|_| keeps_totals(self.program, plan));
            if running.is_some() {
                totals = Some(BTreeMap::new());
            }
            let input_types = plan
                .reads()
                .next()
                .map(|read| self.types_of(&read.relation))
                .unwrap_or_default();
            run_windowed_observed(
                plan,
                &sources,
                &mut bindings,
                &mut |b| {
                    *counts.entry(project_stored(plan, b)?).or_default() += 1;
                    Ok(Flow::Continue)
                },
                &mut |_, rows| {
                    let (Some((window, running)), Some(first), Some(kept)) =
                        (running, rows.first(), totals.as_mut())
                    else {
                        return Ok(());
                    };
                    let key = totals_key(running, first, &input_types)?;
                    kept.insert(key, partition_total(plan, window, rows)?.encode());
                    Ok(())
                },
            )?;
        }
        Ok((counts, totals.map(|t| t.into_iter().collect())))
    }

    /// An aggregate view from scratch: its output rows, and its auxiliary trees — the
    /// groups' accumulators, each MIN/MAX column's sorted values and each COUNT_DISTINCT and
    /// CONCAT column's per-(group, value) match counts (layout in `crate::eval::aggregate`).
    fn aggregate_from_scratch(
        &self,
        view: &str,
        types: &[ColumnType],
    ) -> EngineResult<(Vec<Tuple>, AuxTrees)> {
        let plan = self
            .plans
            .full
            .get(view)
            .and_then(|p| p.first())
            .ok_or_else(|| EngineError::internal(format!("aggregate view `{view}` has no plan")))?;
        let sources = vec![self as &dyn Relations; plan.literals];
        let shape = AggregateShape::of(plan, types);
        let extreme_columns = shape.extreme_columns();
        let distinct_columns = shape.distinct_columns();
        let concat_columns = shape.concat_columns();
        let groups = groups_from_scratch(plan, &shape, &sources, vec![None; plan.variables])?;
        let mut rows = Vec::with_capacity(groups.len());
        let mut accumulators = Vec::new();
        let mut extremes: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); extreme_columns.len()];
        let mut distinct: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); distinct_columns.len()];
        let mut concat: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); concat_columns.len()];
        for (key, group) in &groups {
            rows.push(row_from_state(&shape, key, group, &plan.source)?);
            let group_key = shape.encode_key(key, &plan.source)?;
            accumulators.push((group_key.clone(), group.accumulator().encode()));
            for (slot, values) in group.distinct.iter().enumerate() {
                for (value, matches) in values {
                    distinct[slot].push((
                        shape.distinct_key(&group_key, key, value, &plan.source)?,
                        matches.to_le_bytes().to_vec(),
                    ));
                }
            }
            for (slot, values) in group.concat.iter().enumerate() {
                for (value, matches) in values {
                    concat[slot].push((
                        shape.concat_key(&group_key, key, value, &plan.source)?,
                        matches.to_le_bytes().to_vec(),
                    ));
                }
            }
            for (slot, &column) in extreme_columns.iter().enumerate() {
                for (value, multiplicity) in &group.values[slot] {
                    extremes[slot].push((
                        shape.extreme_key(&group_key, key, column, value, &plan.source)?,
                        multiplicity.to_le_bytes().to_vec(),
                    ));
                }
            }
        }
        let mut trees = vec![(
            GROUPS_LABEL.to_string(),
            build_sorted(self.nodes, accumulators)?,
        )];
        for (slot, &column) in extreme_columns.iter().enumerate() {
            trees.push((
                extremes_label(column),
                build_sorted(self.nodes, std::mem::take(&mut extremes[slot]))?,
            ));
        }
        for (slot, &column) in distinct_columns.iter().enumerate() {
            trees.push((
                distinct_label(column),
                build_sorted(self.nodes, std::mem::take(&mut distinct[slot]))?,
            ));
        }
        for (slot, &column) in concat_columns.iter().enumerate() {
            trees.push((
                values_label(column),
                build_sorted(self.nodes, std::mem::take(&mut concat[slot]))?,
            ));
        }
        Ok((rows, trees))
    }

    /// A stored relation's entry for `tree`, with every index the program needs built.
    pub fn stored_entry(
        &self,
        name: &str,
        kind: RelationKind,
        tree: Tree,
    ) -> EngineResult<RelationEntry> {
        let types = self.types_of(name);
        let mut aux = index_trees(self.nodes, None, &tree, &types, self.plans, name, None)?;
        aux.sort_by(|a, b| a.label.cmp(&b.label));
        Ok(RelationEntry {
            name: name.to_string(),
            kind: kind_code(kind),
            root: Some(*tree.root().as_bytes()),
            count: Some(tree.count(self.nodes)?),
            aux,
        })
    }

    /// Judges every denial from scratch: the first witness refuses.
    pub fn check_denials(&self) -> EngineResult<()> {
        let all: BTreeSet<String> = self.program.relations.keys().cloned().collect();
        self.check_denials_among(&all, 1)
    }

    /// Judges from scratch the denials named in `denials`; a refusal lists up to
    /// `witnesses` witnesses of each violated one (and says whether it has more).
    pub fn check_denials_among(
        &self,
        denials: &BTreeSet<String>,
        witnesses: usize,
    ) -> EngineResult<()> {
        let listed = witnesses.max(1);
        let mut violations = Vec::new();
        for (name, relation) in &self.program.relations {
            if relation.kind() != RelationKind::Denial || !denials.contains(name) {
                continue;
            }
            let arity = relation.declaration.arity();
            let mut found: Vec<Tuple> = Vec::new();
            self.read(name, &vec![None; arity], &mut |t| {
                found.push(t.to_vec());
                Ok(match found.len() > listed {
                    true => Flow::Stop,
                    false => Flow::Continue,
                })
            })?;
            if !found.is_empty() {
                violations.push(Violation {
                    denial: name.clone(),
                    more: found.len() > listed,
                    witnesses: found
                        .iter()
                        .take(listed)
                        .map(|w| format_tuple(name, w))
                        .collect(),
                });
            }
        }
        match violations.is_empty() {
            true => Ok(()),
            false => Err(EngineError::violated(violations)),
        }
    }
}

impl Relations for Engine<'_> {
    fn clock(&self) -> Option<i64> {
        self.clock
    }

    fn read(
        &self,
        relation: &str,
        pattern: &[Option<Value>],
        visit: &mut Visit<'_>,
    ) -> EngineResult<Flow> {
        if let Some(stored) = self.stored.get(relation) {
            return stored.read(self.nodes, pattern, visit);
        }
        match self.program.relation(relation).map(|r| r.kind()) {
            Some(RelationKind::Relation) => Err(EngineError::corrupted(format!(
                "base relation `{relation}` has no tree in this state"
            ))),
            Some(_) => self.read_derived(relation, pattern, visit),
            None => Err(EngineError::user(format!("unknown relation `{relation}`"))),
        }
    }

    fn read_used(
        &self,
        relation: &str,
        pattern: &[Option<Value>],
        used: &[bool],
        visit: &mut WeightedVisit<'_>,
    ) -> EngineResult<Flow> {
        match self.stored.get(relation) {
            Some(stored) => stored.read_used(self.nodes, pattern, Some(used), visit),
            None => self.read(relation, pattern, &mut |tuple| visit(tuple, 1)),
        }
    }
}

/// Sorts `entries` by key and bulk-builds their tree.
pub fn build_sorted(nodes: &NodeStore, mut entries: Vec<(Vec<u8>, Vec<u8>)>) -> EngineResult<Tree> {
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(Tree::build(
        nodes,
        entries.iter().map(|(k, v)| (k.as_slice(), v.as_slice())),
    )?)
}

/// The schema types of a declared relation, for callers outside the engine.
pub fn relation_types(program: &Program, relation: &str) -> Option<Vec<ColumnType>> {
    program
        .relation(relation)
        .map(|r| r.declaration.schema().types())
}
