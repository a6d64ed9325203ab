//! Running plans: the join loop over binding-aware reads, in-memory relations for
//! fixpoints, and semi-naive evaluation of a recursive stratum.

use crate::eval::expr::{eval_comparison, eval_expr};
use crate::eval::plan::{Column, HeadColumn, RulePlan, Step};
use crate::eval::read::{Flow, Relations, Visit};
use crate::lang::tuple::Tuple;
use crate::lang::value::Value;
use crate::{DbError, DbResult};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Rounds a fixpoint may take before it is stopped: each round must add a tuple, and no
/// sane recursion over a store this size needs more.
pub const FIXPOINT_ROUNDS_MAX: usize = 1_000_000;

/// Runs `plan`, reading literal `i`'s relation from `sources[i]`, and calls `emit` with
/// the bindings of every body match.
pub fn run_plan(
    plan: &RulePlan,
    sources: &[&dyn Relations],
    bindings: &mut [Option<Value>],
    emit: &mut dyn FnMut(&[Option<Value>]) -> DbResult<Flow>,
) -> DbResult<Flow> {
    debug_assert_eq!(bindings.len(), plan.variables);
    exec(plan, 0, sources, bindings, emit)
}

fn exec(
    plan: &RulePlan,
    step: usize,
    sources: &[&dyn Relations],
    bindings: &mut [Option<Value>],
    emit: &mut dyn FnMut(&[Option<Value>]) -> DbResult<Flow>,
) -> DbResult<Flow> {
    let Some(current) = plan.steps.get(step) else {
        return emit(bindings);
    };
    match current {
        Step::Join(read) => {
            let pattern = pattern_of(&read.columns, bindings);
            let source = sources[read.literal];
            // The visitor needs the bindings mutably while the source is borrowed: copy
            // them into a cell scoped to this read.
            let cell = RefCell::new(&mut *bindings);
            let mut visit = |tuple: &[Value]| -> DbResult<Flow> {
                let mut guard = cell.borrow_mut();
                let bindings: &mut [Option<Value>] = &mut guard;
                for (column, value) in read.columns.iter().zip(tuple) {
                    match column {
                        Column::Bind(v) => bindings[v.index()] = Some(value.clone()),
                        Column::Same(v) if bindings[v.index()].as_ref() != Some(value) => {
                            unbind(&read.columns, bindings);
                            return Ok(Flow::Continue);
                        }
                        _ => {}
                    }
                }
                let flow = exec(plan, step + 1, sources, bindings, emit)?;
                unbind(&read.columns, bindings);
                Ok(flow)
            };
            source.read(&read.relation, &pattern, &mut visit)
        }
        Step::Not(read) => {
            let pattern = pattern_of(&read.columns, bindings);
            let mut found = false;
            sources[read.literal].read(&read.relation, &pattern, &mut |_| {
                found = true;
                Ok(Flow::Stop)
            })?;
            if found {
                Ok(Flow::Continue)
            } else {
                exec(plan, step + 1, sources, bindings, emit)
            }
        }
        Step::Filter(comparison) => {
            if eval_comparison(comparison, bindings, &plan.source)? {
                exec(plan, step + 1, sources, bindings, emit)
            } else {
                Ok(Flow::Continue)
            }
        }
        Step::Assign { variable, value } => {
            let computed = eval_expr(value, bindings, &plan.source)?;
            match &bindings[variable.index()] {
                Some(existing) if *existing == computed => {
                    exec(plan, step + 1, sources, bindings, emit)
                }
                Some(_) => Ok(Flow::Continue),
                None => {
                    bindings[variable.index()] = Some(computed);
                    let flow = exec(plan, step + 1, sources, bindings, emit);
                    bindings[variable.index()] = None;
                    flow
                }
            }
        }
    }
}

fn pattern_of(columns: &[Column], bindings: &[Option<Value>]) -> Vec<Option<Value>> {
    columns
        .iter()
        .map(|column| match column {
            Column::Const(value) => Some(value.clone()),
            Column::Var(v) => bindings[v.index()].clone(),
            _ => None,
        })
        .collect()
}

fn unbind(columns: &[Column], bindings: &mut [Option<Value>]) {
    for column in columns {
        if let Column::Bind(v) = column {
            bindings[v.index()] = None;
        }
    }
}

/// The head tuple of a non-aggregating plan under `bindings`.
pub fn project(plan: &RulePlan, bindings: &[Option<Value>]) -> DbResult<Tuple> {
    plan.head_columns
        .iter()
        .map(|column| match column {
            HeadColumn::Var(v) => bindings[v.index()].clone().ok_or_else(|| {
                DbError::internal(format!(
                    "rule `{}`: head variable unbound (planner bug)",
                    plan.source
                ))
            }),
            HeadColumn::Const(value) => Ok(value.clone()),
            HeadColumn::Aggregate(..) => Err(DbError::internal(format!(
                "rule `{}`: aggregate projected as a tuple",
                plan.source
            ))),
        })
        .collect()
}

/// Tuples grouped by their values at some columns.
type HashIndex = HashMap<Vec<Value>, Vec<Tuple>>;

/// A relation held in memory during an evaluation, with indexes built on demand for the
/// patterns it is read with. Iteration over its hash indexes never reaches stored bytes:
/// results leave through the ordered `tuples` set.
#[derive(Default, Debug)]
pub struct MemRelation {
    tuples: BTreeSet<Tuple>,
    indexes: RefCell<HashMap<Vec<usize>, HashIndex>>,
}

impl MemRelation {
    /// An empty relation.
    pub fn new() -> MemRelation {
        MemRelation::default()
    }

    /// A relation holding `tuples`.
    pub fn from_set(tuples: BTreeSet<Tuple>) -> MemRelation {
        MemRelation {
            tuples,
            indexes: RefCell::default(),
        }
    }

    /// Adds a tuple; returns whether it was new.
    pub fn insert(&mut self, tuple: Tuple) -> bool {
        if self.tuples.contains(&tuple) {
            return false;
        }
        for (columns, index) in self.indexes.get_mut().iter_mut() {
            let key: Vec<Value> = columns.iter().map(|&c| tuple[c].clone()).collect();
            index.entry(key).or_default().push(tuple.clone());
        }
        self.tuples.insert(tuple);
        true
    }

    /// The tuples, in order.
    pub fn tuples(&self) -> &BTreeSet<Tuple> {
        &self.tuples
    }

    /// Whether the relation holds no tuple.
    pub fn is_empty(&self) -> bool {
        self.tuples.is_empty()
    }

    /// Visits the tuples matching `pattern`.
    pub fn read(&self, pattern: &[Option<Value>], visit: &mut Visit<'_>) -> DbResult<Flow> {
        let bound: Vec<usize> = (0..pattern.len())
            .filter(|&c| pattern[c].is_some())
            .collect();
        if bound.is_empty() {
            for tuple in &self.tuples {
                if visit(tuple)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
            return Ok(Flow::Continue);
        }
        let key: Vec<Value> = bound.iter().filter_map(|&c| pattern[c].clone()).collect();
        let matches: Vec<Tuple> = {
            let mut indexes = self.indexes.borrow_mut();
            let index = indexes.entry(bound.clone()).or_insert_with(|| {
                let mut index: HashMap<Vec<Value>, Vec<Tuple>> = HashMap::new();
                for tuple in &self.tuples {
                    index
                        .entry(bound.iter().map(|&c| tuple[c].clone()).collect())
                        .or_default()
                        .push(tuple.clone());
                }
                index
            });
            index.get(&key).cloned().unwrap_or_default()
        };
        for tuple in &matches {
            if visit(tuple)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }
}

/// In-memory relations layered over another source: reads of the named relations go to
/// memory, the rest to `base`.
pub struct Overlay<'a> {
    /// Relations held in memory.
    pub memory: BTreeMap<&'a str, &'a MemRelation>,
    /// Everything else.
    pub base: &'a dyn Relations,
}

impl Relations for Overlay<'_> {
    fn read(
        &self,
        relation: &str,
        pattern: &[Option<Value>],
        visit: &mut Visit<'_>,
    ) -> DbResult<Flow> {
        match self.memory.get(relation) {
            Some(memory) => memory.read(pattern, visit),
            None => self.base.read(relation, pattern, visit),
        }
    }
}

/// Semi-naive evaluation of a recursive stratum: `plans` are, per relation of the stratum,
/// its rules' full plans; `delta_plans` are (plan, literal) pairs — one per rule and per
/// positive literal reading a stratum relation — whose literal reads the last round's new
/// tuples. Returns each relation's tuple set.
pub fn semi_naive(
    stratum: &[String],
    full_plans: &[RulePlan],
    delta_plans: &[(RulePlan, usize)],
    base: &dyn Relations,
) -> DbResult<BTreeMap<String, MemRelation>> {
    let empty = MemRelation::new();
    let mut full: BTreeMap<String, MemRelation> = stratum
        .iter()
        .map(|r| (r.clone(), MemRelation::new()))
        .collect();
    // Round 0: every rule with the stratum's relations empty (only rules that read none of
    // them positively can produce anything).
    let mut delta: BTreeMap<String, MemRelation> = stratum
        .iter()
        .map(|r| (r.clone(), MemRelation::new()))
        .collect();
    {
        let memory = stratum.iter().map(|r| (r.as_str(), &empty)).collect();
        let overlay = Overlay { memory, base };
        for plan in full_plans {
            let sources = vec![&overlay as &dyn Relations; body_len(plan)];
            collect_into(plan, &sources, delta.get_mut(&plan.head))?;
        }
    }
    for _round in 0..FIXPOINT_ROUNDS_MAX {
        let mut fresh: BTreeMap<String, MemRelation> = stratum
            .iter()
            .map(|r| (r.clone(), MemRelation::new()))
            .collect();
        for (name, relation) in &delta {
            let target = full
                .get_mut(name)
                .ok_or_else(|| DbError::internal("stratum relation missing"))?;
            for tuple in relation.tuples() {
                target.insert(tuple.clone());
            }
        }
        if delta.values().all(MemRelation::is_empty) {
            return Ok(full);
        }
        {
            let full_memory = full.iter().map(|(k, v)| (k.as_str(), v)).collect();
            let full_overlay = Overlay {
                memory: full_memory,
                base,
            };
            let delta_memory = delta.iter().map(|(k, v)| (k.as_str(), v)).collect();
            let delta_overlay = Overlay {
                memory: delta_memory,
                base,
            };
            for (plan, literal) in delta_plans {
                let mut sources = vec![&full_overlay as &dyn Relations; body_len(plan)];
                sources[*literal] = &delta_overlay;
                let mut produced = MemRelation::new();
                collect_into(plan, &sources, Some(&mut produced))?;
                let target = fresh
                    .get_mut(&plan.head)
                    .ok_or_else(|| DbError::internal("stratum relation missing"))?;
                let known = &full[&plan.head];
                for tuple in produced.tuples() {
                    if !known.tuples().contains(tuple) {
                        target.insert(tuple.clone());
                    }
                }
            }
        }
        delta = fresh;
    }
    Err(DbError::user(format!(
        "recursion over {} did not reach a fixpoint within {FIXPOINT_ROUNDS_MAX} rounds",
        stratum.join(", ")
    )))
}

/// Number of body literals a plan's sources must cover.
pub fn body_len(plan: &RulePlan) -> usize {
    plan.literals
}

fn collect_into(
    plan: &RulePlan,
    sources: &[&dyn Relations],
    target: Option<&mut MemRelation>,
) -> DbResult<()> {
    let Some(target) = target else {
        return Err(DbError::internal(format!(
            "rule `{}` writes outside its stratum",
            plan.source
        )));
    };
    let mut bindings = vec![None; plan.variables];
    run_plan(plan, sources, &mut bindings, &mut |b| {
        target.insert(project(plan, b)?);
        Ok(Flow::Continue)
    })?;
    Ok(())
}

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

    /// Checks, in debug builds, the invariant of every delta: no tuple both enters and
    /// leaves (a set's change in one commit is one or the other).
    pub fn debug_assert_disjoint(&self, relation: &str) {
        debug_assert!(
            self.inserted.tuples().is_disjoint(self.deleted.tuples()),
            "the delta of `{relation}` inserts and deletes the same tuple"
        );
    }
}
