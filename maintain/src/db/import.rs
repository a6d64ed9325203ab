//! `import`: bulk insertion into one base relation, sorted and applied in bounded batches,
//! then committed through the ordinary pipeline (`commit`). When views read the relation,
//! each batch is a step maintained like a commit of its own and only the last state is
//! committed, so memory stays bounded whatever the file's size.
//!
//! *Invariant: an import is one commit or none; steps never write a ref.*

use crate::db::commit::MaintainedChange;
use crate::db::{CommitOutcome, Database};
use crate::lang::syntax::ast::RelationKind;
use crate::lang::tuple::{encode_tuple, Tuple};
use crate::{DbError, DbResult};
use rnt_merkle::{ChangeCount, OperatorStat, State, Tree};
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
        let stepwise =
            head.program.reads(relation) && head.program.denials_are_monotone_in(relation);
        let batch_rows = if stepwise {
            self.import_step_rows
        } else {
            IMPORT_BATCH_ROWS
        };
        let mut steps = StepTotals::default();
        let mut current = head.clone();
        let mut tree = old_tree;
        let mut batch: Vec<Vec<u8>> = Vec::new();
        let mut read = 0u64;
        let mut rows = rows.into_iter();
        loop {
            let row = rows.next();
            let done = row.is_none();
            if let Some(row) = row {
                let tuple = row?;
                batch.push(
                    encode_tuple(&tuple, &types)
                        .map_err(|e| DbError::user(format!("{relation}: {e}")))?,
                );
                read += 1;
                if read.is_multiple_of(65_536) {
                    progress(read);
                    crate::budget::check(|| {
                        format!("importing into `{relation}` ({read} rows read)")
                    })?;
                }
            }
            if batch.len() >= batch_rows || (done && !batch.is_empty()) {
                batch.sort_unstable();
                batch.dedup();
                let before = tree;
                tree = if tree.count(&self.nodes)? == 0 {
                    Tree::build(&self.nodes, batch.iter().map(|k| (k.as_slice(), &[][..])))?
                } else {
                    tree.edit(&self.nodes, batch.drain(..).map(|k| (k, Some(Vec::new()))))?
                };
                batch.clear();
                if stepwise {
                    let step_started = self.nodes.counters();
                    let changed = vec![(relation.to_string(), before, tree)];
                    if let Some(step) =
                        self.maintain_base_change(&current, changed, step_started)?
                    {
                        current = current.with_state(step.state.clone());
                        steps.add(step);
                    }
                    crate::budget::check(|| {
                        format!("importing into `{relation}` ({read} rows read and maintained)")
                    })?;
                }
            }
            if done {
                break;
            }
        }
        progress(read);
        if stepwise {
            return match steps.finish(current.state) {
                None => Ok(CommitOutcome::NothingToCommit),
                Some(total) => {
                    self.write_commit(&head, total.state, total.counts, total.stats, message)
                }
            };
        }
        self.finish_base_commit(
            &head,
            vec![(relation.to_string(), old_tree, tree)],
            started,
            message,
        )
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
