//! Incremental maintenance at commit: every materialized relation that reads a changed
//! relation is brought up to date from the tuple deltas of its inputs, stratum by stratum,
//! by one operator per file, each with its equation at the top:
//!
//! - [`terms`]: the telescoped delta rule all of them build on;
//! - [`clock`]: time windows (`ts > now - W`): the windowed atom's delta, with the rows a
//!   clock step makes enter or leave read from the front of a crossing index;
//! - [`counting`]: non-recursive views, with derivation counts;
//! - [`aggregate`], [`minmax`], [`distinct`] and [`concat`]: aggregate views, from per-group
//!   accumulators, sorted values and per-(group, value) match counts (CONCAT re-reads its
//!   touched groups' values, the fallback);
//! - [`window`]: views with a window literal, the fallback: each touched partition re-read
//!   old and new, windowed, and the difference of its rows counted ([`top_k`]: a top-k
//!   partition's old front read once, its new front derived); [`running`]: running
//!   `sum`/`count` and `lag`/`lead`, from each touched partition's first changed row on;
//! - [`dred`]: recursive strata of views; [`recompute`]: the fallback, and small recursive
//!   strata of views, whichever [`recursion`]'s cost rule picks;
//! - [`ephemeral`]: deltas of relations computed when read, for their readers;
//! - [`denial`]: judged on insert-only deltas, stopping at the first witness.
//!
//! *Invariant: `maintain(V, state, Δ) == eval(V, state + Δ)`: after every commit, each
//! maintained tree has the address a from-scratch build gives (checked by `verify`). Only
//! `crate::db` calls in; nothing here reads `crate::db`.*

mod aggregate;
pub mod base;
mod clock;
mod concat;
mod counting;
mod denial;
mod distinct;
mod dred;
mod ephemeral;
mod minmax;
mod parallel;
mod recompute;
mod recursion;
mod running;
mod terms;
mod top_k;
mod window;

use crate::eval::engine::Engine;
use crate::eval::index::index_trees;
pub use crate::eval::memory::Delta;
use crate::eval::plans::ProgramPlans;
use crate::{EngineError, EngineResult};
use base::BaseChange;
pub use denial::judge_net_change;
pub use recursion::{RecursionCost, RecursionMode, RECURSION_RECOMPUTE_TUPLES_MAX};
use rnt_lang::check::ClockCondition;
use rnt_lang::check::Program;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::tuple::{decode_tuple, encode_tuple};
use rnt_lang::value::{ColumnType, Value};
use rnt_merkle::{AuxTree, Counters, NodeStore, RelationEntry, State, Tree};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, Instant};
use terms::driver_relation;

/// The work one operator did in one commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperatorStats {
    /// The relation maintained or judged.
    pub relation: String,
    /// `base`, `counting`, `aggregate`, `window`, `dred`, `recompute`, `ephemeral`,
    /// `denial`, or `time-window` (the windowed atom's delta of a rule reading `now`: the
    /// rows a clock step makes enter or leave, read from a crossing index).
    pub operator: String,
    /// The node store counters spent on it.
    pub counters: Counters,
    /// Its wall time (a `time-window` entry's is counted in its operator's).
    pub time: Duration,
}

/// The operator that maintains a stratum at a commit that changes what it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// A non-recursive view without aggregates: derivation counts ([`counting`]).
    Counting,
    /// An aggregating view: per-group accumulators and sorted values ([`aggregate`]).
    Aggregate,
    /// A view with a window literal: its touched partitions recomputed from the stored
    /// input, the difference counted ([`window`]).
    Window,
    /// A recursive stratum of views above the cost rule's threshold: delete and rederive
    /// ([`dred`]).
    Dred,
    /// A recursive stratum that is not all views, or a stratum of views the cost rule finds
    /// small ([`recursion`]): recomputed in memory and diffed ([`recompute`]).
    Recompute,
    /// A non-recursive ephemeral relation others read: its delta, for them ([`ephemeral`];
    /// an aggregating one is recomputed and diffed).
    Ephemeral,
}

impl Operator {
    /// The name commit stats (`rnt log --format json`) and `rnt explain` print.
    pub fn name(self) -> &'static str {
        match self {
            Operator::Counting => "counting",
            Operator::Aggregate => "aggregate",
            Operator::Window => "window",
            Operator::Dred => "dred",
            Operator::Recompute => "recompute",
            Operator::Ephemeral => "ephemeral",
        }
    }
}

/// The operator that maintains `stratum` (its relations, and whether it is recursive) at a
/// commit starting from the state whose relations are `entries`, or `None` when a commit
/// does no work for it (a denial, judged after every stratum; an ephemeral relation nothing
/// reads). A recursive stratum of views goes by `mode` ([`recursion`]'s cost rule unless
/// forced). One choice, shared by the commit and `explain`.
pub fn operator_of(
    program: &Program,
    stratum: &[String],
    recursive: bool,
    entries: &[RelationEntry],
    mode: RecursionMode,
) -> Option<Operator> {
    let kind = |name: &str| {
        program
            .relation(name)
            .map(|r| r.kind())
            .unwrap_or(RelationKind::Relation)
    };
    if recursive {
        if !recursion::all_views(program, stratum) {
            return Some(Operator::Recompute);
        }
        let recompute = match mode {
            RecursionMode::ByCost => RecursionCost::of(program, stratum, entries).recompute(),
            RecursionMode::Dred => false,
            RecursionMode::Recompute => true,
        };
        return Some(if recompute {
            Operator::Recompute
        } else {
            Operator::Dred
        });
    }
    let name = stratum.first()?;
    let aggregated = program.relation(name).is_some_and(|r| r.is_aggregated());
    let windowed = program.relation(name).is_some_and(|r| r.is_windowed());
    match kind(name) {
        RelationKind::View if aggregated => Some(Operator::Aggregate),
        RelationKind::View if windowed => Some(Operator::Window),
        RelationKind::View => Some(Operator::Counting),
        // An ephemeral relation's delta matters only to the relations that read it (an
        // aggregating one is recomputed: `ephemeral_delta` hands it to `recompute`).
        RelationKind::Ephemeral if program.reads(name) => Some(Operator::Ephemeral),
        _ => None,
    }
}

/// Maintains the derived relations of one commit.
pub struct Maintainer<'a> {
    nodes: &'a NodeStore,
    program: &'a Program,
    plans: &'a ProgramPlans,
    /// The head's entries: what the cost rule reads.
    old_entries: &'a [RelationEntry],
    recursion: RecursionMode,
    old: Engine<'a>,
    new: Engine<'a>,
    entries: BTreeMap<String, RelationEntry>,
    deltas: BTreeMap<String, Delta>,
    stats: Vec<OperatorStats>,
    /// The windowed deltas computed so far (`clock`), per windowed relation and window.
    windowed: RefCell<BTreeMap<WindowKey, Rc<Delta>>>,
    /// The node store work spent on windowed deltas since the operator running began.
    window_work: RefCell<Counters>,
    /// How many witnesses of each violated denial a refusal lists (`--witnesses N`).
    witnesses: usize,
    /// The clock before and after the commit.
    clocks: (Option<i64>, Option<i64>),
    /// How many threads maintain strata that do not read each other (1: one at a time).
    threads: usize,
    /// Whether [`Maintainer::run`] judges the denials (a transaction's steps do not: its
    /// commit judges them once, on the net change, [`judge_net_change`]).
    denials: bool,
}

/// A time window over a relation: the relation and its conditions.
type WindowKey = (String, Vec<ClockCondition>);

impl<'a> Maintainer<'a> {
    /// A maintainer of `change`, made to the base relations of `before` (whose entries the
    /// cost rule reads); recursive strata of views go by `recursion`.
    pub fn new(
        nodes: &'a NodeStore,
        program: &'a Program,
        plans: &'a ProgramPlans,
        before: &'a State,
        change: BaseChange,
        recursion: RecursionMode,
    ) -> Maintainer<'a> {
        let BaseChange {
            entries,
            deltas,
            clocks,
            ..
        } = change;
        debug_assert!(
            match clocks {
                (Some(before), Some(after)) => before <= after,
                _ => true,
            },
            "the clock never goes back"
        );
        for (name, delta) in &deltas {
            delta.debug_assert_disjoint(name);
        }
        Maintainer::assemble(
            (nodes, program, plans),
            &before.relations,
            recursion,
            clocks,
            entries,
            deltas,
        )
    }

    /// A maintainer over the new state's `entries` so far and the `deltas` known so far.
    fn assemble(
        (nodes, program, plans): (&'a NodeStore, &'a Program, &'a ProgramPlans),
        old_entries: &'a [RelationEntry],
        recursion: RecursionMode,
        clocks: (Option<i64>, Option<i64>),
        entries: Vec<RelationEntry>,
        deltas: BTreeMap<String, Delta>,
    ) -> Maintainer<'a> {
        Maintainer {
            nodes,
            program,
            plans,
            old_entries,
            recursion,
            old: Engine::new(nodes, program, plans, old_entries).with_clock(clocks.0),
            new: Engine::new(nodes, program, plans, &entries).with_clock(clocks.1),
            entries: entries.into_iter().map(|e| (e.name.clone(), e)).collect(),
            deltas,
            stats: Vec::new(),
            windowed: RefCell::default(),
            window_work: RefCell::default(),
            witnesses: 1,
            clocks,
            threads: 1,
            denials: true,
        }
    }

    /// This maintainer, maintaining up to `threads` strata at a time (at least one) when
    /// they do not read each other ([`parallel`]). The trees are the same at any count.
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Maintainer<'a> {
        self.threads = threads.max(1);
        self
    }

    /// This maintainer, judging the denials after the views (`true`, the default) or not
    /// (`false`: a step of a transaction, whose commit judges them on its net change).
    #[must_use]
    pub fn with_denials(mut self, judged: bool) -> Maintainer<'a> {
        self.denials = judged;
        self
    }

    /// This maintainer, listing up to `witnesses` witnesses (at least one) of each violated
    /// denial when it refuses the change.
    #[must_use]
    pub fn with_witnesses(mut self, witnesses: usize) -> Maintainer<'a> {
        self.witnesses = witnesses.max(1);
        self
    }

    /// Maintains every affected derived relation, wave by wave ([`Strata::waves`]: a wave's
    /// strata read only earlier waves, so they may run at the same time), then judges the
    /// denials. Returns the new entries and the work done per operator, in the same order
    /// at any thread count.
    ///
    /// [`Strata::waves`]: rnt_lang::strata::Strata::waves
    pub fn run(mut self) -> EngineResult<(Vec<RelationEntry>, Vec<OperatorStats>)> {
        let program = self.program;
        for wave in program.strata.waves() {
            // A wave's strata read only earlier waves: which of them have changed inputs is
            // known before any runs.
            let jobs: Vec<(usize, Operator)> = wave
                .into_iter()
                .filter_map(|index| Some((index, self.operator_for(index)?)))
                .collect();
            if self.threads > 1 && jobs.len() > 1 {
                self.run_parallel(&jobs)?;
                continue;
            }
            for (index, operator) in jobs {
                let relations = &program.strata.strata[index].relations;
                self.run_operator(relations, operator)?;
            }
        }
        if self.denials {
            self.judge_denials()?;
        }
        Ok((self.entries.into_values().collect(), self.stats))
    }

    /// The operator that maintains stratum `index` at this commit, `None` when it reads
    /// nothing that changed or the commit does no work for it.
    fn operator_for(&self, index: usize) -> Option<Operator> {
        let stratum = &self.program.strata.strata[index];
        if !stratum.relations.iter().any(|r| self.reads_changed(r)) {
            return None;
        }
        operator_of(
            self.program,
            &stratum.relations,
            stratum.recursive,
            self.old_entries,
            self.recursion,
        )
    }

    /// Maintains the relations of one stratum by `operator`, recording its work.
    fn run_operator(&mut self, relations: &[String], operator: Operator) -> EngineResult<()> {
        let before = self.nodes.counters();
        let started = Instant::now();
        *self.window_work.borrow_mut() = Counters::default();
        match operator {
            Operator::Dred => self.dred(relations)?,
            Operator::Recompute => self.recompute(relations)?,
            Operator::Aggregate => self.maintain_aggregate(&relations[0])?,
            Operator::Window => self.maintain_window(&relations[0])?,
            Operator::Counting => self.maintain_counting(&relations[0])?,
            Operator::Ephemeral => self.ephemeral_delta(&relations[0])?,
        }
        let spent = self.nodes.counters() - before;
        self.push_stats(
            &relations.join(","),
            operator.name(),
            spent,
            started.elapsed(),
        );
        Ok(())
    }

    /// Records the work of one operator on `relation`, the windowed deltas it computed
    /// (`time-window`) apart from the rest.
    fn push_stats(&mut self, relation: &str, operator: &str, spent: Counters, time: Duration) {
        let window = std::mem::take(&mut *self.window_work.borrow_mut());
        if window != Counters::default() {
            self.stats.push(OperatorStats {
                relation: relation.to_string(),
                operator: "time-window".into(),
                counters: window,
                time: Duration::ZERO,
            });
        }
        self.stats.push(OperatorStats {
            relation: relation.to_string(),
            operator: operator.into(),
            counters: spent - window,
            time,
        });
    }

    fn kind(&self, relation: &str) -> RelationKind {
        self.program
            .relation(relation)
            .map(|r| r.kind())
            .unwrap_or(RelationKind::Relation)
    }

    fn is_aggregated(&self, relation: &str) -> bool {
        self.program
            .relation(relation)
            .is_some_and(|r| r.is_aggregated())
    }

    fn types(&self, relation: &str) -> Vec<ColumnType> {
        self.program
            .relation(relation)
            .map(|r| r.declaration.types())
            .unwrap_or_default()
    }

    fn has_delta(&self, relation: &str) -> bool {
        self.deltas.get(relation).is_some_and(|d| !d.is_empty())
    }

    /// Whether a rule of `relation` reads a relation that changed in this commit, or the
    /// clock when it moves.
    fn reads_changed(&self, relation: &str) -> bool {
        let clock = self.clock_moves()
            && self
                .plans
                .delta
                .get(relation)
                .into_iter()
                .flatten()
                .any(|(plan, _)| plan.clock.is_some());
        let positive = clock
            || self
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

    fn entry(&self, name: &str) -> EngineResult<RelationEntry> {
        self.entries.get(name).cloned().ok_or_else(|| {
            EngineError::internal(format!("relation `{name}` is missing from the state"))
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
    ) -> EngineResult<()> {
        let types = self.types(name);
        let mut aux = index_trees(
            self.nodes,
            Some(&entry),
            &tree,
            &types,
            self.plans,
            name,
            Some(&delta),
        )?;
        for (label, tree) in extra {
            aux.push(AuxTree {
                label,
                root: *tree.root().as_bytes(),
            });
        }
        aux.sort_by(|a, b| a.label.cmp(&b.label));
        let old_count = entry.count;
        entry.root = Some(*tree.root().as_bytes());
        entry.count = Some(tree.count(self.nodes)?);
        // A delta is exact against the old tree: what it inserts was absent, what it
        // deletes was present, so the count moves by exactly their difference.
        debug_assert!(
            old_count.zip(entry.count).is_none_or(|(old, new)| {
                new + delta.deleted.tuples().len() as u64
                    == old + delta.inserted.tuples().len() as u64
            }),
            "the delta of `{name}` is not exact against its old tree: {old_count:?} tuples, \
             +{} -{}, now {:?}",
            delta.inserted.tuples().len(),
            delta.deleted.tuples().len(),
            entry.count
        );
        entry.aux = aux;
        self.new.register(&entry);
        self.entries.insert(name.to_string(), entry);
        delta.debug_assert_disjoint(name);
        self.deltas.insert(name.to_string(), delta);
        Ok(())
    }
}

/// Encodes a derived tuple of `relation`. Rules check the tuple limit where they derive a
/// tuple (`eval::limit`, naming the rule), and the checker the types, so a failure here
/// is a bug.
fn encode(tuple: &[Value], types: &[ColumnType], relation: &str) -> EngineResult<Vec<u8>> {
    encode_tuple(tuple, types)
        .map_err(|e| EngineError::internal(format!("a derived tuple of `{relation}`: {e}")))
}

fn decode_count(bytes: &[u8], relation: &str) -> EngineResult<u64> {
    let array: [u8; 8] = bytes.try_into().map_err(|_| {
        EngineError::corrupted(format!(
            "`{relation}` holds a count of {} bytes, not 8",
            bytes.len()
        ))
    })?;
    Ok(u64::from_le_bytes(array))
}

/// A stored multiplicity `old` moved by `change` (a value's matches in a group): damage
/// when it would go negative or overflow, since maintenance only removes what it added.
/// `what` names the count in the message (`multiplicity`, `match count`).
fn moved_count(old: u64, change: i64, view: &str, what: &str) -> EngineResult<u64> {
    i64::try_from(old)
        .ok()
        .and_then(|o| o.checked_add(change))
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| {
            EngineError::corrupted(format!(
                "maintaining `{view}`: a value's {what} went negative"
            ))
        })
}

fn stored_tree(entry: &RelationEntry) -> EngineResult<Tree> {
    entry
        .tree()
        .ok_or_else(|| EngineError::corrupted(format!("view `{}` has no tree", entry.name)))
}

fn aux(entry: &RelationEntry, label: &str) -> EngineResult<Tree> {
    entry.aux_tree(label).ok_or_else(|| {
        EngineError::corrupted(format!("view `{}` lacks its `{label}` tree", entry.name))
    })
}

/// Decodes a base relation's diff into a delta.
pub fn delta_of_diff(
    entries: &[rnt_merkle::DiffEntry],
    types: &[ColumnType],
    relation: &str,
) -> EngineResult<Delta> {
    let mut delta = Delta::default();
    for entry in entries {
        let tuple = decode_tuple(entry.key(), types).map_err(|e| {
            EngineError::corrupted(format!(
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
