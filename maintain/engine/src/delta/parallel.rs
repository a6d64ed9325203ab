//! Strata of one wave maintained at the same time: a wave's strata read only relations of
//! earlier waves (`Strata::waves`), so each can be maintained by its own maintainer — a
//! fork over the entries and deltas known when the wave starts — on its own thread, and
//! the results recorded in stratum order once all are done.
//!
//! A fork counts its store work on its own counters (`NodeStore::with_own_counters`), so
//! each operator's statistics are what it alone did, as in a serial commit, and the
//! commit's totals get the sum.
//!
//! *Invariant: the trees are the same at any thread count. A fork reads only what the
//! serial run would have read at that point (the wave's inputs are complete before it
//! starts, and no stratum reads another of its wave); content-defined chunking makes the
//! trees it writes depend on their contents alone; the results and their statistics are
//! recorded in stratum order, whichever thread finished first.*

use super::{Maintainer, Operator, OperatorStats, RecursionMode};
use crate::eval::memory::Delta;
use crate::eval::plans::ProgramPlans;
use crate::{EngineError, EngineResult};
use rnt_lang::check::Program;
use rnt_lang::syntax::ast::Literal;
use rnt_merkle::{Counters, NodeStore, RelationEntry};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// What a fork needs to maintain one stratum on another thread: shared references to
/// what does not change during a commit, and its own copies of the rest.
struct Seed<'a> {
    nodes: &'a NodeStore,
    program: &'a Program,
    plans: &'a ProgramPlans,
    old_entries: &'a [RelationEntry],
    recursion: RecursionMode,
    clocks: (Option<i64>, Option<i64>),
    witnesses: usize,
    /// The new state's entries when the wave starts.
    entries: Vec<RelationEntry>,
    /// The deltas of the relations the stratum reads.
    deltas: BTreeMap<String, Delta>,
    /// The stratum's relations.
    relations: &'a [String],
    operator: Operator,
}

/// What a fork did: the stratum's new entries and deltas, its statistics, and the store
/// work it counted.
struct Forked {
    entries: Vec<RelationEntry>,
    deltas: Vec<(String, Delta)>,
    stats: Vec<OperatorStats>,
    work: Counters,
}

impl Seed<'_> {
    /// Maintains the stratum on a maintainer of its own.
    fn run(self) -> EngineResult<Forked> {
        let nodes = self.nodes.with_own_counters();
        let mut fork = Maintainer::assemble(
            (&nodes, self.program, self.plans),
            self.old_entries,
            self.recursion,
            self.clocks,
            self.entries,
            self.deltas,
        );
        fork.witnesses = self.witnesses;
        fork.run_operator(self.relations, self.operator)?;
        let entries = self
            .relations
            .iter()
            .map(|name| fork.entry(name))
            .collect::<EngineResult<Vec<_>>>()?;
        let deltas = self
            .relations
            .iter()
            .filter_map(|name| Some((name.clone(), fork.deltas.remove(name)?)))
            .collect();
        Ok(Forked {
            entries,
            deltas,
            stats: std::mem::take(&mut fork.stats),
            work: nodes.counters(),
        })
    }
}

impl<'a> Maintainer<'a> {
    /// Maintains the strata `jobs` (stratum index and operator, in stratum order; none
    /// reads another) on up to `self.threads` threads, then records their results in
    /// that order. On failure, the error of the first failing stratum in that order.
    pub(super) fn run_parallel(&mut self, jobs: &[(usize, Operator)]) -> EngineResult<()> {
        let program = self.program;
        let seeds: Vec<Mutex<Option<Seed<'a>>>> = jobs
            .iter()
            .map(|&(index, operator)| {
                let relations = &program.strata.strata[index].relations;
                Mutex::new(Some(self.seed(relations, operator)))
            })
            .collect();
        let next = AtomicUsize::new(0);
        let workers = self.threads.min(jobs.len());
        let mut results: Vec<(usize, EngineResult<Forked>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| scope.spawn(|| take_jobs(&seeds, &next)))
                .collect();
            handles
                .into_iter()
                .flat_map(|handle| match handle.join() {
                    Ok(done) => done,
                    Err(panic) => std::panic::resume_unwind(panic),
                })
                .collect()
        });
        results.sort_by_key(|(job, _)| *job);
        debug_assert_eq!(results.len(), jobs.len(), "every job ran once");
        for (_, result) in results {
            self.record(result?);
        }
        Ok(())
    }

    /// A seed for maintaining `relations` by `operator` from the state so far.
    fn seed(&self, relations: &'a [String], operator: Operator) -> Seed<'a> {
        let read = read_by(self.program, relations);
        let deltas = self
            .deltas
            .iter()
            .filter(|(name, _)| read.contains(name.as_str()))
            .map(|(name, delta)| (name.clone(), delta.clone()))
            .collect();
        Seed {
            nodes: self.nodes,
            program: self.program,
            plans: self.plans,
            old_entries: self.old_entries,
            recursion: self.recursion,
            clocks: self.clocks,
            witnesses: self.witnesses,
            entries: self.entries.values().cloned().collect(),
            deltas,
            relations,
            operator,
        }
    }

    /// Records what a fork did as if this maintainer had done it.
    fn record(&mut self, forked: Forked) {
        for entry in forked.entries {
            self.new.register(&entry);
            self.entries.insert(entry.name.clone(), entry);
        }
        self.deltas.extend(forked.deltas);
        self.stats.extend(forked.stats);
        self.nodes.add_counters(forked.work);
    }
}

/// A worker's loop: takes the next job not yet taken until none is left; returns each
/// job's index and result.
fn take_jobs(
    seeds: &[Mutex<Option<Seed<'_>>>],
    next: &AtomicUsize,
) -> Vec<(usize, EngineResult<Forked>)> {
    let mut done = Vec::new();
    loop {
        let job = next.fetch_add(1, Ordering::Relaxed);
        let Some(slot) = seeds.get(job) else {
            return done;
        };
        let seed = slot
            .lock()
            .map_err(|_| EngineError::internal("a maintenance thread panicked"))
            .and_then(|mut slot| {
                slot.take()
                    .ok_or_else(|| EngineError::internal("a stratum was taken twice"))
            });
        done.push((job, seed.and_then(Seed::run)));
    }
}

/// Every relation a rule of `relations` reads (positively, under `not`, or `optional`).
fn read_by<'p>(program: &'p Program, relations: &[String]) -> BTreeSet<&'p str> {
    relations
        .iter()
        .filter_map(|name| program.relation(name))
        .flat_map(|relation| &relation.rules)
        .flat_map(|rule| &rule.rule.body)
        .filter_map(|literal| match literal {
            Literal::Positive(atom)
            | Literal::Negative { atom, .. }
            | Literal::Optional { atom, .. } => Some(atom.relation.name.as_str()),
            _ => None,
        })
        .collect()
}
