//! `import`: bulk insertion into one base relation, sorted and applied in bounded batches,
//! then committed through the ordinary pipeline (`commit`). When views read the relation,
//! each batch is a step maintained like a commit of its own and only the last state is
//! committed, so memory stays bounded whatever the file's size.
//!
//! *Invariant: an import is one commit or none; steps never write a ref.*

use crate::db::commit::MaintainedChange;
use crate::db::snapshot::Snapshot;
use crate::db::{CommitOutcome, Database};
use crate::eval::engine::plan_program;
use crate::lang::syntax::ast::RelationKind;
use crate::lang::tuple::{encode_tuple, Tuple};
use crate::lang::value::Type;
use crate::{DbError, DbResult};
use rnt_merkle::{ChangeCount, Counters, OperatorStat, State, Tree};
use std::collections::BTreeMap;

/// Rows an import sorts and applies per batch: bounds its memory on huge files.
pub const IMPORT_BATCH_ROWS: usize = 1 << 20;

/// Rows an import applies *and maintains* per step when its relation feeds views: each step
/// is maintained like a commit of its own (measured: ~0.65 KiB of memory per row in a
/// step), and only the last state is committed, so the import stays one atomic commit and
/// its memory stays bounded whatever the file's size (10M rows with two views: under
/// 1 GiB, where maintaining the whole delta at once took 5.8 GiB).
pub const IMPORT_STEP_ROWS: usize = 1 << 18;

impl Database {
    /// Inserts every tuple of `rows` into base relation `relation` in one commit, sorting
    /// and applying them in batches of [`IMPORT_BATCH_ROWS`]. Duplicate rows and rows
    /// already present are no-ops (a relation is a set). `progress` is called with the
    /// number of rows read so far.
    pub fn import<I>(
        &self,
        relation: &str,
        rows: I,
        message: &str,
        progress: &mut dyn FnMut(u64),
    ) -> DbResult<CommitOutcome>
    where
        I: IntoIterator<Item = DbResult<Tuple>>,
    {
        let head = self.head()?;
        let started = self.nodes.counters();
        let entry = head.require(relation)?;
        let kind = head.kind_of(entry)?;
        if kind != RelationKind::Relation {
            return Err(DbError::user(format!(
                "`{relation}` is a {kind}: import fills base relations only"
            )));
        }
        let types = head.schema(relation).map(|s| s.types()).unwrap_or_default();
        let old_tree = entry
            .tree()
            .ok_or_else(|| DbError::corrupted(format!("relation `{relation}` has no tree")))?;
        // Maintaining in steps gives the same views (maintenance is exact from any state)
        // and never misses a denial witness; it could refuse an import whose witness a
        // later step removes only when a denial is non-monotone in the relation, so such
        // programs maintain the whole import at once.
        // A relation that keeps an index (a keyed one whose key does not lead its tuples)
        // goes in steps too, so that its index follows each step's delta in bounded memory.
        let indexed = plan_program(&head.program).indexes.contains_key(relation);
        let stepwise = (head.program.reads(relation) || indexed)
            && head.program.denials_are_monotone_in(relation);
        let mut run = ImportRun {
            db: self,
            relation,
            types,
            stepwise,
            batch_rows: if stepwise {
                self.import_step_rows
            } else {
                IMPORT_BATCH_ROWS
            },
            batch: Vec::new(),
            read: 0,
            tree: old_tree,
            current: head.clone(),
            steps: StepTotals::default(),
        };
        for row in rows {
            run.push(row?, progress)?;
        }
        run.apply_batch()?;
        progress(run.read);
        run.finish(&head, old_tree, started, message)
    }
}

/// An import under way: the batch being filled, the relation's tree so far and, when it
/// is maintained in steps, the state after the last step and the steps' totals.
struct ImportRun<'d> {
    db: &'d Database,
    relation: &'d str,
    types: Vec<Type>,
    /// Whether each batch is maintained as a step (views read the relation).
    stepwise: bool,
    batch_rows: usize,
    /// Encoded tuples not yet applied.
    batch: Vec<Vec<u8>>,
    /// Rows read so far.
    read: u64,
    tree: Tree,
    current: Snapshot,
    steps: StepTotals,
}

impl ImportRun<'_> {
    /// Adds one row to the batch, reporting progress and checking the memory budget every
    /// 65,536 rows, and applies the batch when it is full.
    fn push(&mut self, tuple: Tuple, progress: &mut dyn FnMut(u64)) -> DbResult<()> {
        let relation = self.relation;
        let key = encode_tuple(&tuple, &self.types)
            .map_err(|e| DbError::user(format!("{relation}: {e}")))?;
        self.batch.push(key);
        self.read += 1;
        let read = self.read;
        if read.is_multiple_of(65_536) {
            progress(read);
            crate::budget::check(|| format!("importing into `{relation}` ({read} rows read)"))?;
        }
        if self.batch.len() >= self.batch_rows {
            self.apply_batch()?;
        }
        Ok(())
    }

    /// Sorts the batch and applies it to the tree (a bulk build while the tree is empty),
    /// then maintains it as a step when the import goes in steps. An empty batch is a no-op.
    fn apply_batch(&mut self) -> DbResult<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let nodes = &self.db.nodes;
        self.batch.sort_unstable();
        self.batch.dedup();
        let before = self.tree;
        self.tree = if self.tree.count(nodes)? == 0 {
            Tree::build(nodes, self.batch.iter().map(|k| (k.as_slice(), &[][..])))?
        } else {
            self.tree
                .edit(nodes, self.batch.drain(..).map(|k| (k, Some(Vec::new()))))?
        };
        self.batch.clear();
        if self.stepwise {
            self.maintain_step(before)?;
        }
        Ok(())
    }

    /// Maintains the change from `before` to the current tree like a commit of its own,
    /// without writing a ref, and adds it to the totals.
    fn maintain_step(&mut self, before: Tree) -> DbResult<()> {
        let started = self.db.nodes.counters();
        let changed = vec![(self.relation.to_string(), before, self.tree)];
        if let Some(step) = self
            .db
            .maintain_base_change(&self.current, changed, started)?
        {
            self.current = self.current.with_state(step.state.clone());
            self.steps.add(step);
        }
        let (relation, read) = (self.relation, self.read);
        crate::budget::check(|| {
            format!("importing into `{relation}` ({read} rows read and maintained)")
        })
    }

    /// Commits the import on top of `head`: the steps' last state and totals, or the whole
    /// change from `old_tree` maintained at once.
    fn finish(
        self,
        head: &Snapshot,
        old_tree: Tree,
        started: Counters,
        message: &str,
    ) -> DbResult<CommitOutcome> {
        if self.stepwise {
            return match self.steps.finish(self.current.state) {
                None => Ok(CommitOutcome::NothingToCommit),
                Some(total) => {
                    self.db
                        .write_commit(head, total.state, total.counts, total.stats, message)
                }
            };
        }
        let changed = vec![(self.relation.to_string(), old_tree, self.tree)];
        self.db.finish_base_commit(head, changed, started, message)
    }
}

/// The sum of an import's steps: change counts per relation and work per operator.
#[derive(Default)]
struct StepTotals {
    counts: BTreeMap<String, (u64, u64)>,
    stats: Vec<OperatorStat>,
}

impl StepTotals {
    fn add(&mut self, step: MaintainedChange) {
        for count in step.counts {
            let slot = self.counts.entry(count.relation).or_default();
            slot.0 += count.inserted;
            slot.1 += count.deleted;
        }
        for stat in step.stats {
            match self
                .stats
                .iter_mut()
                .find(|s| s.operator == stat.operator && s.relation == stat.relation)
            {
                Some(total) => {
                    total.entries_read += stat.entries_read;
                    total.nodes_read += stat.nodes_read;
                    total.nodes_written += stat.nodes_written;
                }
                None => self.stats.push(stat),
            }
        }
    }

    /// The whole import as one change ending in `state`; `None` when no step changed
    /// anything.
    fn finish(self, state: State) -> Option<MaintainedChange> {
        if self.counts.is_empty() {
            return None;
        }
        let counts = self
            .counts
            .into_iter()
            .map(|(relation, (inserted, deleted))| ChangeCount {
                relation,
                inserted,
                deleted,
            })
            .collect();
        Some(MaintainedChange {
            state,
            counts,
            stats: self.stats,
        })
    }
}
