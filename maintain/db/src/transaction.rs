//! Transactions on the commit path (docs/sql-compiler-plan.md §4): [`Database::begin`] reads
//! the head once; [`Transaction::apply`] takes changes from a [`ChangeSource`] in bounded
//! batches, each applied to the working state and its views maintained like a commit of
//! its own (import's steps, any relations, both signs) without judging the denials;
//! [`Transaction::commit`] judges the denials once on the net change from the start,
//! writes the working state and moves the branch by compare-and-swap from the start's
//! commit. A branch that moved meanwhile is a [`DbError::Conflict`]: the changes were
//! computed on the start and are never applied again to another state (the caller re-runs
//! what computed them). Dropping a transaction is a rollback: its steps wrote nodes no
//! ref reaches, and `gc` drops them.
//!
//! *Invariant: a transaction writes at most one ref, at `commit`, and only when every
//! batch applied and no denial is violated by the net change; the state it writes is the
//! one a single commit of the net change reaches, whatever the batches and threads.*

use crate::import::StepTotals;
use crate::snapshot::Snapshot;
use crate::{CommitOutcome, Database, DbError, DbResult};
use rnt_engine::delta::judge_net_change;
use rnt_engine::eval::plans::shared_plans;
use rnt_lang::change::{check_changes, Change};
use rnt_lang::schema::RelationSchema;
use rnt_lang::syntax::ast::RelationKind;
use rnt_merkle::{ChangeCount, DiffEntry, OperatorStat};
use std::collections::BTreeMap;

/// Changes fed to a transaction in batches: a DML statement's rows as its query yields
/// them, a file's lines, a vector.
pub trait ChangeSource {
    /// The next at most `rows_max` changes (at least one), or `None` when none is left.
    fn next_batch(&mut self, rows_max: usize) -> DbResult<Option<Vec<Change>>>;
}

/// A [`ChangeSource`] over changes held in memory, handed out in order.
pub struct ChangeVec {
    changes: std::vec::IntoIter<Change>,
}

impl ChangeVec {
    /// A source of `changes`, in order.
    pub fn new(changes: Vec<Change>) -> ChangeVec {
        ChangeVec {
            changes: changes.into_iter(),
        }
    }
}

impl ChangeSource for ChangeVec {
    fn next_batch(&mut self, rows_max: usize) -> DbResult<Option<Vec<Change>>> {
        let batch: Vec<Change> = self.changes.by_ref().take(rows_max.max(1)).collect();
        Ok((!batch.is_empty()).then_some(batch))
    }
}

/// What one [`Transaction::apply`] took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Batches applied.
    pub batches: u64,
    /// Changes in them.
    pub changes: u64,
}

/// Changes under way on top of the head a [`Database::begin`] read: see the module.
pub struct Transaction<'d> {
    db: &'d Database,
    start: Snapshot,
    working: Snapshot,
    /// The new state's clock: the first step moves it, the others keep it.
    clock: Option<i64>,
    steps: StepTotals,
    /// Whether some batch was applied (a commit of none only moves the clock).
    stepped: bool,
}

impl Database {
    /// Begins a transaction on the head as it is now (read once): its changes apply to
    /// that state, and its commit lands only if the branch still points there.
    pub fn begin(&self) -> DbResult<Transaction<'_>> {
        let start = self.head()?;
        let clock = self.next_clock(&start, &start.program, None)?;
        Ok(Transaction {
            db: self,
            working: start.clone(),
            start,
            clock,
            steps: StepTotals::default(),
            stepped: false,
        })
    }
}

impl Transaction<'_> {
    /// The state the transaction began on.
    pub fn start(&self) -> &Snapshot {
        &self.start
    }

    /// The working state: the start with every batch applied so far, views maintained
    /// (denials not yet judged). Reads inside the transaction see its own writes here.
    pub fn snapshot(&self) -> &Snapshot {
        &self.working
    }

    /// The database the transaction writes to.
    pub fn database(&self) -> &Database {
        self.db
    }

    /// Applies every change `source` gives, in batches of at most the database's step size
    /// ([`Database::with_import_step_rows`]), each checked against the working state's
    /// schemas (as [`Database::commit`] checks a change set: no tuple named twice in a
    /// batch), applied, and its views maintained on the database's threads. All or
    /// nothing: on an error the working state is as it was before the call.
    pub fn apply(&mut self, source: &mut dyn ChangeSource) -> DbResult<Applied> {
        let (working, steps, stepped) = (self.working.clone(), self.steps.clone(), self.stepped);
        let applied = self.apply_all(source);
        if applied.is_err() {
            (self.working, self.steps, self.stepped) = (working, steps, stepped);
        }
        applied
    }

    fn apply_all(&mut self, source: &mut dyn ChangeSource) -> DbResult<Applied> {
        let rows_max = self.db.import_step_rows.max(1);
        let mut applied = Applied::default();
        while let Some(batch) = source.next_batch(rows_max)? {
            debug_assert!(batch.len() <= rows_max, "a batch holds at most rows_max");
            applied.batches += 1;
            applied.changes += batch.len() as u64;
            self.apply_batch(batch)?;
            let changes = applied.changes;
            rnt_engine::budget::check(|| {
                format!("applying a transaction's changes ({changes} applied)")
            })?;
        }
        Ok(applied)
    }

    /// One batch: checked, turned into edits against the working state, maintained.
    fn apply_batch(&mut self, changes: Vec<Change>) -> DbResult<()> {
        if changes.is_empty() {
            return Ok(());
        }
        let db = self.db;
        crate::commit::refuse_derived_changes(&self.working, &changes)?;
        let schemas: BTreeMap<String, RelationSchema> = self
            .working
            .schemas()
            .into_iter()
            .map(|s| (s.name.clone(), s))
            .collect();
        let checked = check_changes(changes, |name| schemas.get(name))
            .map_err(|e| DbError::user(e.to_string()))?;
        let started = db.nodes.counters();
        let edits = db.base_edits(&self.working, &schemas, checked.changes())?;
        let step = db.maintain_judging(&self.working, edits, self.clock, started, false)?;
        self.stepped = true;
        if let Some(step) = step {
            self.working = self.working.with_state(step.state.clone());
            self.steps.add(step);
        }
        Ok(())
    }

    /// Commits the working state on top of the start: the denials judged once on the net
    /// change (exit 2 naming the first violated one; nothing written), then the state and
    /// commit written and the branch moved from the start's commit by compare-and-swap. A
    /// branch that moved since [`Database::begin`] is [`DbError::Conflict`] and nothing is
    /// written. A transaction that changed no relation makes no commit.
    pub fn commit(self, message: &str) -> DbResult<CommitOutcome> {
        let Transaction {
            db,
            start,
            working,
            clock,
            steps,
            stepped,
        } = self;
        if !stepped {
            // No batch: as a commit of no changes, only the clock moves.
            let step = db.maintain(&start, Vec::new(), clock, db.nodes.counters())?;
            return moved_meanwhile(db, &start, db.commit_if_changed(&start, step, message));
        }
        let Some(mut total) = steps.finish(working.state.clone()) else {
            return Ok(CommitOutcome::NothingToCommit);
        };
        let plans = shared_plans(&start.program);
        let judged = judge_net_change(
            &db.nodes,
            &start.program,
            &plans,
            (&start.state, &working.state),
            db.witnesses,
        )?;
        total.stats.extend(judged.into_iter().map(|s| OperatorStat {
            relation: s.relation,
            operator: s.operator,
            entries_read: s.counters.entries_read,
            nodes_read: s.counters.nodes_read,
            nodes_written: s.counters.nodes_written,
        }));
        total.counts = net_counts(db, &start, &working)?;
        moved_meanwhile(
            db,
            &start,
            db.commit_if_changed(&start, Some(total), message),
        )
    }
}

/// Tuples inserted and deleted per base relation from `start` to `working`: the net change
/// (a tuple deleted by one batch and inserted again by a later one counts for neither),
/// from the diff of each changed relation's trees.
fn net_counts(db: &Database, start: &Snapshot, working: &Snapshot) -> DbResult<Vec<ChangeCount>> {
    let mut counts = Vec::new();
    for (old, new) in start.state.relations.iter().zip(&working.state.relations) {
        debug_assert_eq!(old.name, new.name, "both states list relations by name");
        if old.root == new.root || start.kind_of(old)? != RelationKind::Relation {
            continue;
        }
        let (Some(old_tree), Some(new_tree)) = (old.tree(), new.tree()) else {
            continue;
        };
        let mut count = ChangeCount {
            relation: old.name.clone(),
            inserted: 0,
            deleted: 0,
        };
        for entry in old_tree.diff(&db.nodes, &new_tree)? {
            match entry? {
                DiffEntry::Added { .. } => count.inserted += 1,
                DiffEntry::Removed { .. } => count.deleted += 1,
                DiffEntry::Changed { .. } => {
                    return Err(DbError::corrupted(format!(
                        "base relation `{}` holds a tuple with a value",
                        old.name
                    )))
                }
            }
        }
        if count.inserted + count.deleted > 0 {
            counts.push(count);
        }
    }
    Ok(counts)
}

/// A lost compare-and-swap as a transaction's conflict: the branch moved since it began.
fn moved_meanwhile(
    db: &Database,
    start: &Snapshot,
    outcome: DbResult<CommitOutcome>,
) -> DbResult<CommitOutcome> {
    match outcome {
        Err(DbError::Conflict(_)) => {
            let branch = db.current_branch()?;
            let began = start.commit.map_or_else(
                || "an empty store".to_string(),
                |c| c.to_hex()[..12].to_string(),
            );
            Err(DbError::Conflict(format!(
                "`{branch}` moved since this transaction began at {began} (another writer \
                 committed first); nothing was committed"
            )))
        }
        other => other,
    }
}
