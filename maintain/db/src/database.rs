//! [`Database`] over a chunk store — states, commits, the head, and the
//! operations that move it (`commit`, `import`, `define`) or read it (`diff`, `verify`,
//! references, snapshots). The commit pipeline is in `commit`; maintenance itself is
//! `rnt_engine::delta`.
//!
//! *Invariant: the head moves only by compare-and-swap, after the state and commit it points
//! at are durable; a failed or refused operation writes no ref.*

use crate::history::{reference, refs};
use crate::import::{IMPORT_BATCH_ROWS, IMPORT_STEP_ROWS};
use crate::snapshot::Snapshot;
use crate::{DbError, DbResult};
use rnt_engine::delta::RecursionMode;
use rnt_engine::eval::engine::Engine;
use rnt_engine::eval::kind_code;
use rnt_engine::eval::plans::plan_program;
use rnt_engine::eval::query::{query, QueryAnswer, QueryState};
use rnt_engine::eval::read::decode_stored;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::tuple::Tuple;
use rnt_merkle::{Commit, NodeStore, RelationEntry};
use rnt_store::Address;
use rnt_store::ChunkStore;
use std::sync::Arc;

/// A database over a chunk store: states, commits, and the head.
#[derive(Clone)]
pub struct Database {
    pub(crate) chunks: Arc<dyn ChunkStore>,
    pub(crate) nodes: NodeStore,
    /// Rows an import maintains per step ([`IMPORT_STEP_ROWS`] unless set).
    pub(crate) import_step_rows: usize,
    /// Rows an import sorts and applies per batch ([`IMPORT_BATCH_ROWS`] unless set).
    pub(crate) import_batch_rows: usize,
    /// How commits maintain recursive strata of views (by the cost rule unless set).
    pub(crate) recursion: RecursionMode,
    /// Told what a transfer (fetch, push, clone) has sent so far (nothing unless set).
    pub(crate) transfer_progress: TransferProgress,
    /// The time new commits and reflog entries record, Unix seconds (the system clock
    /// unless set).
    pub(crate) commit_time: CommitTime,
    /// How many witnesses of each violated denial a refusal lists (1 unless set).
    pub(crate) witnesses: usize,
    /// How many threads a commit maintains independent views on (the cores unless set).
    pub(crate) threads: usize,
}

/// The threads a commit uses unless told otherwise: the cores this process may run on.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// What [`Database::with_commit_time`] calls: the time, Unix seconds, a new commit records.
pub type CommitTime = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The system clock, Unix seconds.
fn system_time() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// What [`Database::with_transfer_progress`] calls: what a transfer has sent so far.
pub type TransferProgress = Arc<dyn Fn(&rnt_merkle::TransferReport) + Send + Sync>;

impl Database {
    /// A database over `chunks` (which may be empty: a new store).
    pub fn new(chunks: Arc<dyn ChunkStore>) -> Database {
        let nodes = NodeStore::new(chunks.clone());
        Database {
            chunks,
            nodes,
            import_step_rows: IMPORT_STEP_ROWS,
            import_batch_rows: IMPORT_BATCH_ROWS,
            recursion: RecursionMode::ByCost,
            transfer_progress: Arc::new(|_| {}),
            commit_time: Arc::new(system_time),
            witnesses: 1,
            threads: default_threads(),
        }
    }

    /// This database with a node cache of at most about `bytes` (a fresh, empty cache): the
    /// CLI keeps it within a quarter of the memory budget.
    #[must_use]
    pub fn with_node_cache_bytes(mut self, bytes: usize) -> Database {
        self.nodes = NodeStore::with_cache_bytes(self.chunks.clone(), bytes);
        self
    }

    /// This database, recording `time()` as the time of each new commit and reflog entry
    /// instead of the system clock: the CLI fixes it for reproducible commit ids
    /// (`RNT_COMMIT_TIME`), tests for reproducible histories.
    #[must_use]
    pub fn with_commit_time(mut self, time: CommitTime) -> Database {
        self.commit_time = time;
        self
    }

    /// This database, listing up to `witnesses` witnesses (at least one) of each violated
    /// denial when a commit, import, define or merge is refused (`--witnesses N`), and
    /// whether there are more.
    #[must_use]
    pub fn with_witnesses(mut self, witnesses: usize) -> Database {
        self.witnesses = witnesses.max(1);
        self
    }

    /// This database, maintaining views that do not read each other on up to `threads`
    /// threads at each commit (at least one; `--threads N`). The states it reaches are the
    /// same at any count.
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Database {
        self.threads = threads.max(1);
        self
    }

    /// How many threads a commit maintains views on.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The time a commit made now records, Unix seconds.
    pub fn commit_time(&self) -> i64 {
        (self.commit_time)()
    }

    /// This database, telling `progress` what each transfer (fetch, push, clone) has sent
    /// so far, after each batch: the CLI draws a progress line with it.
    #[must_use]
    pub fn with_transfer_progress(mut self, progress: TransferProgress) -> Database {
        self.transfer_progress = progress;
        self
    }

    /// This database, maintaining recursive strata of views in `mode` instead of by the
    /// cost rule (`rnt_engine::delta::RECURSION_RECOMPUTE_TUPLES_MAX`): tests and benchmarks
    /// force each mode to check that both reach the same state.
    #[must_use]
    pub fn with_recursion_mode(mut self, mode: RecursionMode) -> Database {
        self.recursion = mode;
        self
    }

    /// This database, importing `rows` rows per maintenance step (at least 1) instead of
    /// [`IMPORT_STEP_ROWS`], and at most that many per batch: tests use small steps and
    /// batches to check that they change nothing.
    #[must_use]
    pub fn with_import_step_rows(mut self, rows: usize) -> Database {
        self.import_step_rows = rows.max(1);
        self.import_batch_rows = IMPORT_BATCH_ROWS.min(rows.max(1));
        self
    }

    /// The chunk store.
    pub fn chunks(&self) -> &Arc<dyn ChunkStore> {
        &self.chunks
    }

    /// The node store (with its work counters).
    pub fn nodes(&self) -> &NodeStore {
        &self.nodes
    }

    /// The commit at the current branch's tip (`HEAD`), if the branch has a commit.
    pub fn head_commit(&self) -> DbResult<Option<Address>> {
        refs::head_commit(self.chunks.as_ref())
    }

    /// The name of the current branch.
    pub fn current_branch(&self) -> DbResult<String> {
        refs::current_branch(self.chunks.as_ref())
    }

    /// The commit a branch points at, if the branch exists.
    pub fn branch(&self, name: &str) -> DbResult<Option<Address>> {
        Ok(refs::branch_tip(self.chunks.as_ref(), name)?.map(|tip| tip.commit))
    }

    /// The head's snapshot (the empty state before the first commit).
    pub fn head(&self) -> DbResult<Snapshot> {
        match self.head_commit()? {
            Some(commit) => self.snapshot_of_commit(commit),
            None => Snapshot::empty(),
        }
    }

    /// The snapshot a commit recorded.
    pub fn snapshot_of_commit(&self, commit: Address) -> DbResult<Snapshot> {
        Snapshot::of_commit(self.chunks.as_ref(), commit)
    }

    /// Resolves a user's reference (`HEAD`, `HEAD~n`, branch, hex prefix) to a snapshot.
    pub fn resolve(&self, reference: &str) -> DbResult<Snapshot> {
        reference::resolve(self.chunks.as_ref(), self.head_commit()?, reference)
    }

    /// The history from the head back along first parents, newest first.
    pub fn log(&self) -> DbResult<Vec<(Address, Commit)>> {
        self.history(self.head_commit()?)
    }

    /// The history from commit `from` (none: no history) back along first parents,
    /// newest first.
    pub fn history(&self, from: Option<Address>) -> DbResult<Vec<(Address, Commit)>> {
        let mut out = Vec::new();
        let mut next = from;
        while let Some(id) = next {
            let commit = Commit::read(self.chunks.as_ref(), &id)?;
            next = commit.parent_addresses().first().copied();
            out.push((id, commit));
        }
        Ok(out)
    }

    /// Every commit reachable from `from` through all parents, each once: depth first,
    /// first parents before the others, so a line of history reads newest first.
    pub fn reachable_commits(&self, from: Option<Address>) -> DbResult<Vec<(Address, Commit)>> {
        let mut out = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        let mut next: Vec<Address> = from.into_iter().collect();
        while let Some(id) = next.pop() {
            if !seen.insert(id) {
                continue;
            }
            let commit = Commit::read(self.chunks.as_ref(), &id)?;
            next.extend(commit.parent_addresses().into_iter().rev());
            out.push((id, commit));
        }
        Ok(out)
    }

    /// The state before `snapshot`'s commit: its first parent's, or the empty state for the
    /// root commit. A snapshot reached by state hash has no commit, hence no parent.
    pub fn first_parent(&self, snapshot: &Snapshot) -> DbResult<Snapshot> {
        let commit = snapshot.commit.ok_or_else(|| {
            DbError::user(format!(
                "state {} was named by its hash, not by a commit, so it has no parent",
                snapshot.state_address.short_hex(12)
            ))
        })?;
        let record = Commit::read(self.chunks.as_ref(), &commit)?;
        match record.parent_addresses().first() {
            Some(parent) => self.snapshot_of_commit(*parent),
            None => Snapshot::empty(),
        }
    }

    /// Evaluates ad-hoc rules against `snapshot`; the first rule's head is the answer.
    pub fn query(&self, snapshot: &Snapshot, text: &str) -> DbResult<QueryAnswer> {
        let state = QueryState {
            program: &snapshot.program,
            text: &snapshot.state.program,
            relations: &snapshot.state.relations,
            clock: snapshot.state.clock,
        };
        Ok(query(&self.nodes, &state, text)?)
    }

    /// Evaluates ad-hoc rules against `snapshot` with stored relations of other states
    /// beside its own: each `(name, entry)` is `entry`'s tree, read as the base relation
    /// `name`, which `text` must declare (with the entry's columns).
    pub fn query_with(
        &self,
        snapshot: &Snapshot,
        borrowed: &[(String, RelationEntry)],
        text: &str,
    ) -> DbResult<QueryAnswer> {
        let mut relations = snapshot.state.relations.clone();
        for (name, entry) in borrowed {
            debug_assert!(snapshot.entry(name).is_none(), "{name} is the state's own");
            relations.push(RelationEntry {
                name: name.clone(),
                kind: kind_code(RelationKind::Relation),
                ..entry.clone()
            });
        }
        let state = QueryState {
            program: &snapshot.program,
            text: &snapshot.state.program,
            relations: &relations,
            clock: snapshot.state.clock,
        };
        Ok(query(&self.nodes, &state, text)?)
    }

    /// The tuples of `relation` in `snapshot` from position `offset` on, at most `limit` of
    /// them, in key (tuple) order: a stored relation's tree is read no further than the
    /// last one (O(offset + limit) entries); one computed when read is evaluated whole.
    pub fn tuples_page(
        &self,
        snapshot: &Snapshot,
        relation: &str,
        offset: usize,
        limit: Option<usize>,
    ) -> DbResult<Vec<Tuple>> {
        let entry = snapshot.require(relation)?;
        let Some(tree) = entry.tree() else {
            let all = self.tuples(snapshot, relation)?;
            return Ok(all
                .into_iter()
                .skip(offset)
                .take(limit.unwrap_or(usize::MAX))
                .collect());
        };
        let types = snapshot
            .schema(relation)
            .map(|s| s.types())
            .unwrap_or_default();
        let mut out = Vec::new();
        for item in tree
            .entries(&self.nodes)
            .skip(offset)
            .take(limit.unwrap_or(usize::MAX))
        {
            let (key, _) = item?;
            out.push(decode_stored(&key, &types, relation)?);
        }
        Ok(out)
    }

    /// Every tuple of stored relation `relation` in `snapshot`, in key (tuple) order.
    pub fn tuples(&self, snapshot: &Snapshot, relation: &str) -> DbResult<Vec<Tuple>> {
        let entry = snapshot.require(relation)?;
        let types = snapshot
            .schema(relation)
            .map(|s| s.types())
            .unwrap_or_default();
        let Some(tree) = entry.tree() else {
            // Ephemeral relations and denials are evaluated when read.
            let plans = plan_program(&snapshot.program);
            let engine = Engine::new(
                &self.nodes,
                &snapshot.program,
                &plans,
                &snapshot.state.relations,
            )
            .with_clock(snapshot.state.clock);
            return Ok(engine.evaluate(relation)?.into_iter().collect());
        };
        let mut out = Vec::new();
        for item in tree.entries(&self.nodes) {
            let (key, _) = item?;
            out.push(decode_stored(&key, &types, relation)?);
        }
        Ok(out)
    }
}
