//! [`Database`]: a store of states and commits, and the commit pipeline that moves its head.
//!
//! Commit order (seed 003, "When maintenance runs"): apply the change set to the base
//! relations with batch edits; take each changed relation's tuple deltas from the diff of
//! its old and new trees (a no-op insert or delete vanishes there); write the state and the
//! commit; make them durable; advance the head by compare-and-swap. A commit that fails or
//! is refused at any step writes no ref, so the head never points at a partial state.

use crate::change::{check_changes, Change, Sign};
use crate::check::{compile, Program};
use crate::diagnostic::{render_all, Source};
use crate::engine::{plan_program, relation_types, Engine, ProgramPlans};
use crate::incremental::{delta_of_diff, Maintainer};
use crate::read::{build_index, index_label};
use crate::reference;
use crate::schema::RelationSchema;
use crate::snapshot::{kind_of, schema_of, unknown_relation, Snapshot};
use crate::syntax::ast::Literal;
use crate::tuple::{decode_tuple, encode_permuted, encode_tuple, Tuple};
use crate::{DbError, DbResult};
use rnt_merkle::{
    AuxTree, ChangeCount, Commit, Counters, DiffEntry, Edit, NodeStore, OperatorStat,
    RelationEntry, RelationKind, State, Tree,
};
use rnt_store::{commit_ref, Address, ChunkStore};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The branch a store's history lives on; `HEAD` names its tip.
pub const BRANCH_DEFAULT: &str = "main";

/// Rows an import sorts and applies per batch: bounds its memory on huge files.
pub const IMPORT_BATCH_ROWS: usize = 1 << 20;

/// Rows an import applies *and maintains* per step when its relation feeds views: each step
/// is maintained like a commit of its own (measured: ~0.65 KiB of memory per row in a
/// step), and only the last state is committed, so the import stays one atomic commit and
/// its memory stays bounded whatever the file's size (10M rows with two views: under
/// 1 GiB, where maintaining the whole delta at once took 5.8 GiB).
pub const IMPORT_STEP_ROWS: usize = 1 << 18;

/// What a commit did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommitOutcome {
    /// A new commit is the head.
    Committed {
        /// The new commit's id.
        commit: Address,
        /// Its state hash.
        state: Address,
        /// Tuples inserted and deleted per relation.
        changes: Vec<ChangeCount>,
        /// The work each operator did.
        stats: Vec<OperatorStat>,
    },
    /// The changes changed nothing; no commit was made.
    NothingToCommit,
}

/// Which relations a diff lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffScope {
    /// Base relations only: the output is a change file that turns one state into the other.
    Base,
    /// Every stored relation, derived ones included.
    All,
    /// One relation.
    Relation(String),
}

/// One tuple that differs between two states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TupleChange {
    /// The relation.
    pub relation: String,
    /// Inserted (`+`) or deleted (`-`) going from the first state to the second.
    pub sign: Sign,
    /// The tuple.
    pub tuple: Tuple,
}

/// A database over a chunk store: states, commits, and the head.
#[derive(Clone)]
pub struct Database {
    chunks: Arc<dyn ChunkStore>,
    nodes: NodeStore,
    /// Rows an import maintains per step ([`IMPORT_STEP_ROWS`] unless set).
    import_step_rows: usize,
}

impl Database {
    /// A database over `chunks` (which may be empty: a new store).
    pub fn new(chunks: Arc<dyn ChunkStore>) -> Database {
        let nodes = NodeStore::new(chunks.clone());
        Database {
            chunks,
            nodes,
            import_step_rows: IMPORT_STEP_ROWS,
        }
    }

    /// This database, importing `rows` rows per maintenance step (at least 1) instead of
    /// [`IMPORT_STEP_ROWS`]: tests use small steps to check that steps change nothing.
    pub fn with_import_step_rows(mut self, rows: usize) -> Database {
        self.import_step_rows = rows.max(1);
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

    /// The commit at the head, if any commit was made.
    pub fn head_commit(&self) -> DbResult<Option<Address>> {
        Ok(self.chunks.get_ref(BRANCH_DEFAULT)?)
    }

    /// The commit a branch points at, if the branch exists.
    pub fn branch(&self, name: &str) -> DbResult<Option<Address>> {
        let valid = !name.is_empty()
            && name.len() <= 255
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'));
        if !valid {
            return Ok(None);
        }
        Ok(self.chunks.get_ref(name)?)
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
        let record = Commit::read(self.chunks.as_ref(), &commit)?;
        Snapshot::load(self.chunks.as_ref(), Some(commit), record.state_address())
    }

    /// Resolves a user's reference (`HEAD`, `HEAD~n`, branch, hex prefix) to a snapshot.
    pub fn resolve(&self, reference: &str) -> DbResult<Snapshot> {
        reference::resolve(self, reference)
    }

    /// The history from the head back along first parents, newest first.
    pub fn log(&self) -> DbResult<Vec<(Address, Commit)>> {
        let mut out = Vec::new();
        let mut next = self.head_commit()?;
        while let Some(id) = next {
            let commit = Commit::read(self.chunks.as_ref(), &id)?;
            next = commit.parent_addresses().first().copied();
            out.push((id, commit));
        }
        Ok(out)
    }

    /// Commits a change set against the head. Changes are checked against the head's
    /// schemas (unknown relation, arity, types, a tuple named twice, a derived relation)
    /// before anything is written.
    pub fn commit(&self, changes: Vec<Change>, message: &str) -> DbResult<CommitOutcome> {
        let head = self.head()?;
        for change in &changes {
            if let Some(entry) = head.entry(&change.relation) {
                if entry.kind != RelationKind::Relation {
                    return Err(DbError::user(format!(
                        "{}line {}: `{}` is a {}: derived relations change only through their rules",
                        change.source.as_deref().map(|s| format!("{s}, ")).unwrap_or_default(),
                        change.line,
                        change.relation,
                        entry.kind.keyword()
                    )));
                }
            }
        }
        let schemas: BTreeMap<String, RelationSchema> = head
            .schemas()
            .into_iter()
            .map(|s| (s.name.clone(), s))
            .collect();
        let set = check_changes(changes, |name| schemas.get(name))
            .map_err(|e| DbError::user(e.to_string()))?;
        let mut edits: BTreeMap<String, BTreeMap<Vec<u8>, Option<Vec<u8>>>> = BTreeMap::new();
        for change in set.changes() {
            let schema = &schemas[&change.relation];
            let key = encode_tuple(&change.values, &schema.types()).map_err(|e| {
                DbError::user(format!("line {}: {}: {e}", change.line, change.relation))
            })?;
            let value = match change.sign {
                Sign::Insert => Some(Vec::new()),
                Sign::Delete => None,
            };
            edits
                .entry(change.relation.clone())
                .or_default()
                .insert(key, value);
        }
        let edits = edits
            .into_iter()
            .map(|(r, e)| (r, e.into_iter().collect()))
            .collect();
        self.apply_base_edits(&head, edits, message)
    }

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
        if entry.kind != RelationKind::Relation {
            return Err(DbError::user(format!(
                "`{relation}` is a {}: import fills base relations only",
                entry.kind.keyword()
            )));
        }
        let types = head.schema(relation).map(|s| s.types()).unwrap_or_default();
        let old_tree = entry
            .tree()
            .ok_or_else(|| DbError::Corrupted(format!("relation `{relation}` has no tree")))?;
        // Maintaining in steps gives the same views (maintenance is exact from any state)
        // and never misses a denial witness; it could refuse an import whose witness a
        // later step removes only when a denial is non-monotone in the relation, so such
        // programs maintain the whole import at once.
        let stepwise = is_read_by_rules(&head.program, relation)
            && denials_are_monotone_in(&head.program, relation);
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

    /// Applies per-relation sorted edits to the head's base relations and commits.
    fn apply_base_edits(
        &self,
        head: &Snapshot,
        edits: Vec<(String, Vec<Edit>)>,
        message: &str,
    ) -> DbResult<CommitOutcome> {
        let started = self.nodes.counters();
        let mut changed = Vec::new();
        for (relation, relation_edits) in edits {
            let entry = head.require(&relation)?;
            let old_tree = entry
                .tree()
                .ok_or_else(|| DbError::Corrupted(format!("relation `{relation}` has no tree")))?;
            let new_tree = old_tree.edit(&self.nodes, relation_edits)?;
            changed.push((relation, old_tree, new_tree));
        }
        self.finish_base_commit(head, changed, started, message)
    }

    /// Takes the tuple deltas of changed base relations from the diff of their trees,
    /// writes the new state and commit, and advances the head.
    fn finish_base_commit(
        &self,
        head: &Snapshot,
        changed: Vec<(String, Tree, Tree)>,
        started: Counters,
        message: &str,
    ) -> DbResult<CommitOutcome> {
        match self.maintain_base_change(head, changed, started)? {
            None => Ok(CommitOutcome::NothingToCommit),
            Some(step) => self.write_commit(head, step.state, step.counts, step.stats, message),
        }
    }

    /// The state after changing base relations from `head`: their tuple deltas taken from
    /// the diff of their trees, their indexes updated, every view that reads them
    /// maintained and every denial judged. `None` when nothing changed. Writes no commit.
    fn maintain_base_change(
        &self,
        head: &Snapshot,
        changed: Vec<(String, Tree, Tree)>,
        started: Counters,
    ) -> DbResult<Option<MaintainedChange>> {
        let mut state = head.state.clone();
        let mut counts = Vec::new();
        let mut deltas: BTreeMap<String, Vec<DiffEntry>> = BTreeMap::new();
        for (relation, old_tree, new_tree) in changed {
            if old_tree == new_tree {
                continue;
            }
            let new_count = new_tree.count(&self.nodes)?;
            let slot = state
                .relations
                .iter_mut()
                .find(|r| r.name == relation)
                .ok_or_else(|| unknown_relation(head, &relation))?;
            slot.root = Some(*new_tree.root().as_bytes());
            slot.count = Some(new_count);
            // A relation no rule reads needs no tuple delta; filling an empty one (an
            // import) needs not even the diff to count what went in.
            if !is_read_by_rules(&head.program, &relation) && old_tree.count(&self.nodes)? == 0 {
                counts.push(ChangeCount {
                    relation,
                    inserted: new_count,
                    deleted: 0,
                });
                continue;
            }
            let keep_delta = is_read_by_rules(&head.program, &relation);
            let (mut inserted, mut deleted) = (0u64, 0u64);
            let mut delta = Vec::new();
            for entry in old_tree.diff(&self.nodes, &new_tree)? {
                let entry = entry?;
                match &entry {
                    DiffEntry::Added { .. } => inserted += 1,
                    DiffEntry::Removed { .. } => deleted += 1,
                    DiffEntry::Changed { .. } => {
                        return Err(DbError::Corrupted(format!(
                            "base relation `{relation}` holds a tuple with a value"
                        )))
                    }
                }
                if keep_delta {
                    delta.push(entry);
                }
            }
            if keep_delta {
                deltas.insert(relation.clone(), delta);
            }
            counts.push(ChangeCount {
                relation,
                inserted,
                deleted,
            });
        }
        if counts.is_empty() {
            return Ok(None);
        }
        counts.sort_by(|a, b| a.relation.cmp(&b.relation));
        // Base relations' indexes follow their deltas.
        let plans = plan_program(&head.program);
        let mut by_name: BTreeMap<String, RelationEntry> = state
            .relations
            .into_iter()
            .map(|r| (r.name.clone(), r))
            .collect();
        update_base_indexes(
            &self.nodes,
            &head.program,
            &plans,
            &mut by_name,
            Some(&deltas),
        )?;
        let relations: Vec<RelationEntry> = by_name.into_values().collect();
        let changed_names: Vec<&str> = counts.iter().map(|c| c.relation.as_str()).collect();
        let base_stat = stat(
            "base",
            &changed_names.join(","),
            self.nodes.counters() - started,
        );
        // Every view that reads a changed relation, maintained from the deltas; then the
        // denials judged on insert-only deltas.
        let mut base_deltas = BTreeMap::new();
        for (name, entries) in &deltas {
            let types = relation_types(&head.program, name).unwrap_or_default();
            base_deltas.insert(name.clone(), delta_of_diff(entries, &types, name)?);
        }
        let maintainer = Maintainer::new(
            &self.nodes,
            &head.program,
            &plans,
            &head.state.relations,
            relations,
            base_deltas,
        );
        let (relations, operator_stats) = maintainer.run()?;
        state.relations = relations;
        let mut stats = vec![base_stat];
        stats.extend(
            operator_stats
                .into_iter()
                .map(|s| stat(&s.operator, &s.relation, s.counters)),
        );
        Ok(Some(MaintainedChange {
            state,
            counts,
            stats,
        }))
    }

    /// Sets the program. Base relations keep their tuples; a base relation that holds
    /// tuples can be neither dropped nor given another schema. Every view is computed and
    /// every index built; a denial the data already violates refuses the program.
    pub fn define(&self, text: &str, source_name: &str, message: &str) -> DbResult<CommitOutcome> {
        self.define_with_progress(text, source_name, message, &mut |_| {})
    }

    /// [`Database::define`], calling `progress` with a line of text before each view it
    /// computes (for a progress display during long backfills).
    pub fn define_with_progress(
        &self,
        text: &str,
        source_name: &str,
        message: &str,
        progress: &mut dyn FnMut(&str),
    ) -> DbResult<CommitOutcome> {
        let program = compile(text).map_err(|diagnostics| DbError::Program {
            rendered: render_all(&diagnostics, &Source::new(source_name, text)),
            errors: diagnostics.len(),
        })?;
        let head = self.head()?;
        let old_signatures = signatures(&head.program);
        let new_signatures = signatures(&program);
        let changed: BTreeSet<String> = new_signatures
            .iter()
            .filter(|(name, signature)| old_signatures.get(*name) != Some(*signature))
            .map(|(name, _)| name.clone())
            .collect();
        let relations = self.relations_for(&head, &program, &changed)?;
        let plans = plan_program(&program);
        let mut by_name: BTreeMap<String, RelationEntry> =
            relations.into_iter().map(|r| (r.name.clone(), r)).collect();
        update_base_indexes(&self.nodes, &program, &plans, &mut by_name, None)?;
        rebuild_views(
            &self.nodes,
            &program,
            &plans,
            &mut by_name,
            &changed,
            true,
            progress,
        )?;
        let state = State {
            program: program.canonical_text(),
            relations: by_name.into_values().collect(),
        };
        if state == head.state && head.commit.is_some() {
            return Ok(CommitOutcome::NothingToCommit);
        }
        self.write_commit(&head, state, Vec::new(), Vec::new(), message)
    }

    /// The relation entries of a new program over the head's data.
    /// Views whose definition is unchanged (`changed` lacks them) keep their trees.
    fn relations_for(
        &self,
        head: &Snapshot,
        program: &Program,
        changed: &BTreeSet<String>,
    ) -> DbResult<Vec<RelationEntry>> {
        for old in &head.state.relations {
            let count = old.count.unwrap_or(0);
            if old.kind != RelationKind::Relation || count == 0 {
                continue;
            }
            let keeps = program.relation(&old.name).is_some_and(|r| {
                kind_of(r.kind()) == RelationKind::Relation
                    && Some(schema_of(&r.declaration)) == head.schema(&old.name)
            });
            if !keeps {
                let what = if program.relation(&old.name).is_some() {
                    "change the schema of"
                } else {
                    "drop"
                };
                return Err(DbError::user(format!(
                    "cannot {what} relation `{}`: it holds {count} tuples (migrations are not supported yet)",
                    old.name
                )));
            }
        }
        let mut empty_tree: Option<Tree> = None;
        let mut relations = Vec::new();
        for (name, relation) in &program.relations {
            let kind = kind_of(relation.kind());
            let kept = head.entry(name).filter(|old| {
                let same_base = kind == RelationKind::Relation
                    && head.schema(name) == Some(schema_of(&relation.declaration));
                let same_view = kind == RelationKind::View && !changed.contains(name);
                old.kind == kind && (same_base || same_view)
            });
            let entry = match kept {
                Some(old) => old.clone(),
                None if kind.is_stored() => {
                    let tree = match empty_tree {
                        Some(tree) => tree,
                        None => *empty_tree.insert(Tree::empty(&self.nodes)?),
                    };
                    RelationEntry {
                        name: name.clone(),
                        kind,
                        root: Some(*tree.root().as_bytes()),
                        count: Some(0),
                        aux: Vec::new(),
                    }
                }
                None => RelationEntry {
                    name: name.clone(),
                    kind,
                    root: None,
                    count: None,
                    aux: Vec::new(),
                },
            };
            relations.push(entry);
        }
        Ok(relations)
    }

    /// Writes `state` and a commit of it on top of `head`, makes both durable, and moves
    /// the head by compare-and-swap.
    fn write_commit(
        &self,
        head: &Snapshot,
        state: State,
        changes: Vec<ChangeCount>,
        stats: Vec<OperatorStat>,
        message: &str,
    ) -> DbResult<CommitOutcome> {
        let state_address = state.write(self.chunks.as_ref())?;
        let commit = Commit {
            parents: head.commit.iter().map(|c| *c.as_bytes()).collect(),
            state: *state_address.as_bytes(),
            message: message.to_string(),
            time: commit_time(),
            changes: changes.clone(),
            stats: stats.clone(),
        };
        let id = commit.write(self.chunks.as_ref())?;
        commit_ref(self.chunks.as_ref(), BRANCH_DEFAULT, head.commit, Some(id))?;
        Ok(CommitOutcome::Committed {
            commit: id,
            state: state_address,
            changes,
            stats,
        })
    }

    /// Evaluates ad-hoc rules against `snapshot`; the first rule's head is the answer.
    pub fn query(&self, snapshot: &Snapshot, text: &str) -> DbResult<crate::query::QueryAnswer> {
        crate::query::query(&self.nodes, snapshot, text)
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
            );
            return Ok(engine.evaluate(relation)?.into_iter().collect());
        };
        let mut out = Vec::new();
        for item in tree.entries(&self.nodes) {
            let (key, _) = item?;
            out.push(decode_stored(&key, &types, relation)?);
        }
        Ok(out)
    }

    /// The tuples that differ from `from` to `to`, sorted by relation then tuple.
    pub fn diff(
        &self,
        from: &Snapshot,
        to: &Snapshot,
        scope: &DiffScope,
    ) -> DbResult<Vec<TupleChange>> {
        if let DiffScope::Relation(name) = scope {
            if from.entry(name).is_none() && to.entry(name).is_none() {
                return Err(unknown_relation(to, name));
            }
        }
        let mut names: Vec<&str> = from
            .state
            .relations
            .iter()
            .chain(&to.state.relations)
            .map(|r| r.name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        let mut out = Vec::new();
        for name in names {
            let (a, b) = (from.entry(name), to.entry(name));
            let kind = b.or(a).map(|e| e.kind).unwrap_or(RelationKind::Relation);
            let included = match scope {
                DiffScope::Base => kind == RelationKind::Relation,
                DiffScope::All => true,
                DiffScope::Relation(only) => only == name,
            };
            if !included {
                continue;
            }
            let from_tree = a.and_then(RelationEntry::tree);
            let to_tree = b.and_then(RelationEntry::tree);
            if from_tree == to_tree {
                continue;
            }
            let from_types = from.schema(name).map(|s| s.types()).unwrap_or_default();
            let to_types = to.schema(name).map(|s| s.types()).unwrap_or_default();
            // A relation present in one state only diffs against the empty tree.
            let (x, y) = match (from_tree, to_tree) {
                (Some(x), Some(y)) => (x, y),
                (x, y) => {
                    let empty = Tree::empty(&self.nodes)?;
                    (x.unwrap_or(empty), y.unwrap_or(empty))
                }
            };
            for entry in x.diff(&self.nodes, &y)? {
                let (sign, key, types) = match entry? {
                    DiffEntry::Added { key, .. } => (Sign::Insert, key, &to_types),
                    DiffEntry::Removed { key, .. } => (Sign::Delete, key, &from_types),
                    DiffEntry::Changed { .. } => continue,
                };
                out.push(TupleChange {
                    relation: name.to_string(),
                    sign,
                    tuple: decode_stored(&key, types, name)?,
                });
            }
        }
        Ok(out)
    }
}

/// Whether a rule of `program` reads `relation` (positively or under `not`).
/// A state reached by changing base relations, not yet committed: the state, the change
/// counts per relation and the work per operator.
struct MaintainedChange {
    state: State,
    counts: Vec<ChangeCount>,
    stats: Vec<OperatorStat>,
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

/// Whether every denial is monotone in `relation`: it reads `relation` (through any chain
/// of rules) only positively and never through an aggregate. Inserting into such a
/// relation can only add denial tuples, so a witness found at any step of an import is
/// still a witness at its end: judging step by step is exact.
fn denials_are_monotone_in(program: &Program, relation: &str) -> bool {
    // Relations that depend on `relation`, and those that do so non-monotonically.
    let mut depends: BTreeSet<String> = BTreeSet::from([relation.to_string()]);
    let mut non_monotone: BTreeSet<String> = BTreeSet::new();
    loop {
        let before = (depends.len(), non_monotone.len());
        for (name, declared) in &program.relations {
            for rule in &declared.rules {
                let aggregate = rule.rule.head.aggregates().next().is_some();
                for literal in &rule.rule.body {
                    let (atom, negated) = match literal {
                        Literal::Positive(atom) => (atom, false),
                        Literal::Negative { atom, .. } => (atom, true),
                        Literal::Comparison(_) => continue,
                    };
                    let read = atom.relation.name.as_str();
                    if !depends.contains(read) {
                        continue;
                    }
                    depends.insert(name.clone());
                    if negated || aggregate || non_monotone.contains(read) {
                        non_monotone.insert(name.clone());
                    }
                }
            }
        }
        if (depends.len(), non_monotone.len()) == before {
            break;
        }
    }
    program
        .relations
        .iter()
        .filter(|(_, declared)| declared.kind() == crate::syntax::ast::RelationKind::Denial)
        .all(|(name, _)| !non_monotone.contains(name))
}

pub(crate) fn is_read_by_rules(program: &Program, relation: &str) -> bool {
    program
        .relations
        .values()
        .flat_map(|r| r.rules.iter())
        .any(|rule| {
            rule.rule.body.iter().any(|literal| match literal {
                Literal::Positive(atom) | Literal::Negative { atom, .. } => {
                    atom.relation.name == relation
                }
                Literal::Comparison(_) => false,
            })
        })
}

/// Keeps the indexes the plans need for every base relation: an unchanged relation keeps
/// its index trees, a changed one (`deltas`) has them edited, and a missing one is built.
pub(crate) fn update_base_indexes(
    nodes: &NodeStore,
    program: &Program,
    plans: &ProgramPlans,
    by_name: &mut BTreeMap<String, RelationEntry>,
    deltas: Option<&BTreeMap<String, Vec<DiffEntry>>>,
) -> DbResult<()> {
    for entry in by_name.values_mut() {
        if entry.kind != RelationKind::Relation {
            continue;
        }
        let Some(tree) = entry.tree() else { continue };
        let types = relation_types(program, &entry.name).unwrap_or_default();
        let delta = deltas.and_then(|d| d.get(&entry.name));
        let mut aux = Vec::new();
        for permutation in plans.indexes.get(&entry.name).into_iter().flatten() {
            let label = index_label(permutation);
            let index = match (entry.aux_tree(&label), delta) {
                (Some(index), None) => index,
                (Some(index), Some(delta)) => {
                    index.edit(nodes, index_edits(delta, &types, permutation)?)?
                }
                (None, _) => build_index(nodes, &tree, &types, permutation)?,
            };
            aux.push(AuxTree {
                label,
                root: *index.root().as_bytes(),
            });
        }
        aux.sort_by(|a, b| a.label.cmp(&b.label));
        entry.aux = aux;
    }
    Ok(())
}

/// Computes the views in `recompute` from scratch, in stratum order; every other view
/// keeps its trees and gets exactly the indexes the plans need. Then, when asked, judges
/// from scratch the denials in `recompute` (the others held in the state they come from).
pub(crate) fn rebuild_views(
    nodes: &NodeStore,
    program: &Program,
    plans: &ProgramPlans,
    by_name: &mut BTreeMap<String, RelationEntry>,
    recompute: &BTreeSet<String>,
    judge_denials: bool,
    progress: &mut dyn FnMut(&str),
) -> DbResult<()> {
    let current: Vec<RelationEntry> = by_name
        .values()
        .filter(|e| e.kind == RelationKind::Relation || !recompute.contains(&e.name))
        .cloned()
        .collect();
    let mut engine = Engine::new(nodes, program, plans, &current);
    let views: Vec<&String> = program
        .strata
        .iter()
        .flat_map(|s| s.relations.iter())
        .filter(|name| {
            by_name
                .get(*name)
                .is_some_and(|e| e.kind == RelationKind::View)
        })
        .collect();
    let total = views.iter().filter(|v| recompute.contains(**v)).count();
    let mut done = 0;
    for name in views {
        if recompute.contains(name) {
            done += 1;
            progress(&format!("computing view {name} ({done}/{total})"));
            let entry = engine.materialize(name)?;
            by_name.insert(name.clone(), entry);
        } else if let Some(entry) = by_name.get_mut(name) {
            reindex_kept_view(nodes, program, plans, entry)?;
            engine.register(entry);
        }
    }
    if judge_denials {
        engine.check_denials_among(recompute)?;
    }
    Ok(())
}

/// Gives a kept view exactly the indexes the plans need, keeping its other auxiliary trees.
fn reindex_kept_view(
    nodes: &NodeStore,
    program: &Program,
    plans: &ProgramPlans,
    entry: &mut RelationEntry,
) -> DbResult<()> {
    let Some(tree) = entry.tree() else {
        return Ok(());
    };
    let types = relation_types(program, &entry.name).unwrap_or_default();
    let mut aux: Vec<AuxTree> = entry
        .aux
        .iter()
        .filter(|a| !a.label.starts_with("index "))
        .cloned()
        .collect();
    for permutation in plans.indexes.get(&entry.name).into_iter().flatten() {
        let label = index_label(permutation);
        let index = match entry.aux_tree(&label) {
            Some(index) => index,
            None => build_index(nodes, &tree, &types, permutation)?,
        };
        aux.push(AuxTree {
            label,
            root: *index.root().as_bytes(),
        });
    }
    aux.sort_by(|a, b| a.label.cmp(&b.label));
    entry.aux = aux;
    Ok(())
}

/// A text per relation that changes exactly when the relation's contents could: its
/// declaration and rules, and those of every relation it reads, directly or not.
fn signatures(program: &Program) -> BTreeMap<String, String> {
    let own: BTreeMap<&str, String> = program
        .relations
        .iter()
        .map(|(name, relation)| {
            let mut text = crate::canonical::declaration_text(&relation.declaration);
            let mut rules: Vec<String> = relation
                .rules
                .iter()
                .map(|r| {
                    let rule = &r.rule;
                    let mut literals: Vec<String> = rule
                        .body
                        .iter()
                        .map(|l| crate::canonical::literal_text(rule, l))
                        .collect();
                    literals.sort();
                    format!(
                        "{} :- {}",
                        crate::canonical::head_text(rule, &rule.head),
                        literals.join(", ")
                    )
                })
                .collect();
            rules.sort();
            for rule in rules {
                text.push('\n');
                text.push_str(&rule);
            }
            (name.as_str(), text)
        })
        .collect();
    let mut out = BTreeMap::new();
    for name in program.relations.keys() {
        let mut closure: BTreeSet<&str> = BTreeSet::new();
        let mut work = vec![name.as_str()];
        while let Some(next) = work.pop() {
            if !closure.insert(next) {
                continue;
            }
            for rule in program.rules_of(next) {
                for literal in &rule.rule.body {
                    if let Literal::Positive(atom) | Literal::Negative { atom, .. } = literal {
                        work.push(atom.relation.name.as_str());
                    }
                }
            }
        }
        let signature: Vec<&str> = closure
            .iter()
            .filter_map(|r| own.get(r).map(String::as_str))
            .collect();
        out.insert(name.clone(), signature.join("\n"));
    }
    out
}

/// The edits that carry a base relation's tuple delta into one of its indexes.
fn index_edits(
    delta: &[DiffEntry],
    types: &[crate::Type],
    permutation: &[usize],
) -> DbResult<Vec<Edit>> {
    let mut edits = Vec::with_capacity(delta.len());
    for entry in delta {
        let tuple = decode_tuple(entry.key(), types)
            .map_err(|e| DbError::Corrupted(format!("a stored tuple does not decode: {e}")))?;
        let key = encode_permuted(&tuple, types, permutation)
            .map_err(|e| DbError::user(e.to_string()))?;
        let value = match entry {
            DiffEntry::Removed { .. } => None,
            _ => Some(Vec::new()),
        };
        edits.push((key, value));
    }
    edits.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(edits)
}

fn stat(operator: &str, relation: &str, counters: Counters) -> OperatorStat {
    OperatorStat {
        relation: relation.to_string(),
        operator: operator.to_string(),
        entries_read: counters.entries_read,
        nodes_read: counters.nodes_read,
        nodes_written: counters.nodes_written,
    }
}

pub(crate) fn decode_stored(key: &[u8], types: &[crate::Type], relation: &str) -> DbResult<Tuple> {
    decode_tuple(key, types).map_err(|e| {
        DbError::Corrupted(format!(
            "a stored tuple of `{relation}` does not decode: {e}"
        ))
    })
}

/// The time recorded in a new commit: `RNT_COMMIT_TIME` (Unix seconds) when set, for
/// reproducible commit ids; the clock otherwise.
fn commit_time() -> i64 {
    if let Some(fixed) = std::env::var("RNT_COMMIT_TIME")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return fixed;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
