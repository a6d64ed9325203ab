//! [`Database`]: a store of states and commits, and the commit pipeline that moves its head.
//!
//! Commit order (seed 003, "When maintenance runs"): apply the change set to the base
//! relations with batch edits; take each changed relation's tuple deltas from the diff of
//! its old and new trees (a no-op insert or delete vanishes there); write the state and the
//! commit; make them durable; advance the head by compare-and-swap. A commit that fails or
//! is refused at any step writes no ref, so the head never points at a partial state.

pub mod reference;
pub mod snapshot;
pub mod verify;

use crate::db::snapshot::{unknown_relation, Snapshot};
use crate::delta::{delta_of_diff, Maintainer};
use crate::eval::engine::{plan_program, relation_types, Engine, ProgramPlans};
use crate::eval::query::{query, QueryAnswer, QueryState};
use crate::eval::read::{build_index, index_label};
use crate::eval::stored_kind;
use crate::lang::change::{check_changes, Change, Sign};
use crate::lang::check::{compile, Program};
use crate::lang::diagnostic::{render_all, Source};
use crate::lang::schema::RelationSchema;
use crate::lang::syntax::ast::Literal;
use crate::lang::tuple::{decode_tuple, encode_permuted, encode_tuple, Tuple};
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
}

impl Database {
    /// A database over `chunks` (which may be empty: a new store).
    pub fn new(chunks: Arc<dyn ChunkStore>) -> Database {
        let nodes = NodeStore::new(chunks.clone());
        Database { chunks, nodes }
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
                if read % 65_536 == 0 {
                    progress(read);
                }
            }
            if batch.len() >= IMPORT_BATCH_ROWS || (done && !batch.is_empty()) {
                batch.sort_unstable();
                batch.dedup();
                tree = if tree.count(&self.nodes)? == 0 {
                    Tree::build(&self.nodes, batch.iter().map(|k| (k.as_slice(), &[][..])))?
                } else {
                    tree.edit(&self.nodes, batch.drain(..).map(|k| (k, Some(Vec::new()))))?
                };
                batch.clear();
            }
            if done {
                break;
            }
        }
        progress(read);
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
            if !head.program.reads(&relation) && old_tree.count(&self.nodes)? == 0 {
                counts.push(ChangeCount {
                    relation,
                    inserted: new_count,
                    deleted: 0,
                });
                continue;
            }
            let keep_delta = head.program.reads(&relation);
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
            return Ok(CommitOutcome::NothingToCommit);
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
        self.write_commit(head, state, counts, stats, message)
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
                stored_kind(r.kind()) == RelationKind::Relation
                    && Some(r.declaration.schema()) == head.schema(&old.name)
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
            let kind = stored_kind(relation.kind());
            let kept = head.entry(name).filter(|old| {
                let same_base = kind == RelationKind::Relation
                    && head.schema(name) == Some(relation.declaration.schema());
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
    pub fn query(&self, snapshot: &Snapshot, text: &str) -> DbResult<QueryAnswer> {
        let state = QueryState {
            program: &snapshot.program,
            text: &snapshot.state.program,
            relations: &snapshot.state.relations,
        };
        query(&self.nodes, &state, text)
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
            let mut text = crate::lang::canonical::declaration_text(&relation.declaration);
            let mut rules: Vec<String> = relation
                .rules
                .iter()
                .map(|r| {
                    let rule = &r.rule;
                    let mut literals: Vec<String> = rule
                        .body
                        .iter()
                        .map(|l| crate::lang::canonical::literal_text(rule, l))
                        .collect();
                    literals.sort();
                    format!(
                        "{} :- {}",
                        crate::lang::canonical::head_text(rule, &rule.head),
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
