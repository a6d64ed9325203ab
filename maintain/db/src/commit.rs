//! The commit pipeline (seed 003, "When maintenance runs"): apply the change set to the
//! base relations with batch edits; take each changed relation's tuple deltas — the diff of
//! its old and new trees, which for a change set is exactly the edits that changed
//! something, as the edit reports them (a no-op insert or delete vanishes there; debug
//! builds compare the two), so no changed leaf is read twice; keep the base
//! relations' indexes; maintain every view that reads a changed relation and judge the
//! denials (`crate::delta`); write the state and the commit, make them durable, and advance
//! the head by compare-and-swap.
//!
//! *Invariant: a commit that fails or is refused at any step writes no ref, so the head
//! never points at a partial state.*

use crate::keys::keyed_edits;
use crate::snapshot::{unknown_relation, Snapshot};
use crate::{history::refs, update_base_indexes, Database};
use crate::{DbError, DbResult};
use rnt_engine::delta::{delta_of_diff, Delta, Maintainer};
use rnt_engine::eval::engine::{relation_types, shared_plans, ProgramPlans};
use rnt_engine::eval::read::decode_stored;
use rnt_lang::change::{check_change_slice, Change, Sign};
use rnt_lang::check::Program;
use rnt_lang::schema::RelationSchema;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::tuple::encode_tuple;
use rnt_merkle::{
    ChangeCount, Commit, Counters, DiffEntry, Edit, NodeStore, OperatorStat, RelationEntry, State,
    Tree,
};
use rnt_store::Address;
use std::collections::BTreeMap;
use std::time::Duration;

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

/// Attempts a commit makes when other writers keep moving its branch between its read of
/// the head and its compare-and-swap (only possible where writers take no lock: an object
/// store). Each lost race costs the loser one re-run of the change set; with N writers
/// racing, each round lands one of them, so 16 attempts see 16 racing writers through.
pub const COMMIT_ATTEMPTS_MAX: u32 = 16;

/// The longest pause between two attempts: a random part of it, growing with the attempt,
/// so writers that lost together do not collide again in step.
const COMMIT_RETRY_PAUSE_MAX_MS: u64 = 200;

impl Database {
    /// Commits a change set against the head. Changes are checked against the head's
    /// schemas (unknown relation, arity, types, a tuple named twice, a derived relation)
    /// before anything is written. A program that mentions `now` takes the later of the
    /// head's clock and the commit time as its clock.
    ///
    /// When another writer moved the branch meanwhile (the compare-and-swap failed), the
    /// change set is applied again on the new head — checked against its schemas, the views
    /// maintained, the denials judged — up to [`COMMIT_ATTEMPTS_MAX`] times; a change that no
    /// longer applies fails as it would have on that head (exit 1, or 2 for a denial), and a
    /// branch that kept moving is a conflict (exit 1). Nothing is ever overwritten.
    pub fn commit(&self, changes: Vec<Change>, message: &str) -> DbResult<CommitOutcome> {
        self.commit_with_clock(changes, message, None)
    }

    /// [`Database::commit`] with the clock set to `clock` when given (`rnt commit --clock
    /// T`): refused when it is earlier than the head's clock (the clock never goes back)
    /// or when the program does not mention `now` (its states carry no clock). With no
    /// changes, the commit only moves the clock: it is made when some relation changes
    /// (a view's rows enter or leave a time window), and is "nothing to commit" otherwise.
    pub fn commit_with_clock(
        &self,
        changes: Vec<Change>,
        message: &str,
        clock: Option<i64>,
    ) -> DbResult<CommitOutcome> {
        for attempt in 1..=COMMIT_ATTEMPTS_MAX {
            match self.commit_on_head(&changes, message, clock) {
                Err(DbError::Conflict(_)) if attempt < COMMIT_ATTEMPTS_MAX => {
                    std::thread::sleep(retry_pause(attempt));
                }
                Err(DbError::Conflict(_)) => {
                    let branch = self.current_branch()?;
                    return Err(DbError::Conflict(format!(
                        "`{branch}` kept moving: other writers landed first {COMMIT_ATTEMPTS_MAX} times in a row; nothing was committed, run it again"
                    )));
                }
                other => return other,
            }
        }
        Err(DbError::internal(
            "the commit loop ended without an outcome",
        ))
    }

    /// One attempt of [`Database::commit_with_clock`] on the head as it is now.
    fn commit_on_head(
        &self,
        changes: &[Change],
        message: &str,
        clock: Option<i64>,
    ) -> DbResult<CommitOutcome> {
        let head = self.head()?;
        let clock = next_clock(&head, &head.program, clock)?;
        // Each relation once, at its first change (the one an error names).
        let mut judged: Vec<&str> = Vec::new();
        for change in changes {
            if judged.contains(&change.relation.as_str()) {
                continue;
            }
            judged.push(&change.relation);
            if let Some(entry) = head.entry(&change.relation) {
                let kind = head.kind_of(entry)?;
                if kind != RelationKind::Relation {
                    return Err(DbError::user(format!(
                        "{}line {}: `{}` is a {}: derived relations change only through their rules",
                        change.source.as_deref().map(|s| format!("{s}, ")).unwrap_or_default(),
                        change.line,
                        change.relation,
                        kind.keyword()
                    )));
                }
            }
        }
        let schemas: BTreeMap<String, RelationSchema> = head
            .schemas()
            .into_iter()
            .map(|s| (s.name.clone(), s))
            .collect();
        check_change_slice(changes, |name| schemas.get(name))
            .map_err(|e| DbError::user(e.to_string()))?;
        let mut by_relation: BTreeMap<&str, Vec<&Change>> = BTreeMap::new();
        for change in changes {
            by_relation
                .entry(&change.relation)
                .or_default()
                .push(change);
        }
        // The base stat counts the reads by key of upserts and deletes by key too.
        let started = self.nodes.counters();
        let mut edits: Vec<(String, Vec<Edit>)> = Vec::new();
        for (relation, changes) in by_relation {
            let schema = &schemas[relation];
            if schema.key_columns().is_some() {
                // Upserts and deletes by key read the current tuple of each key named.
                edits.push((
                    relation.to_string(),
                    keyed_edits(&self.nodes, &head, schema, &changes)?,
                ));
                continue;
            }
            let types = schema.types();
            let mut relation_edits: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
            for change in changes {
                let key = encode_tuple(&change.values, &types).map_err(|e| {
                    DbError::user(format!("line {}: {}: {e}", change.line, change.relation))
                })?;
                let value = match change.sign {
                    Sign::Insert => Some(Vec::new()),
                    Sign::Delete => None,
                };
                relation_edits.insert(key, value);
            }
            edits.push((relation.to_string(), relation_edits.into_iter().collect()));
        }
        self.apply_base_edits(&head, edits, started, message, clock)
    }

    /// Applies per-relation sorted edits to the head's base relations and commits, at
    /// `clock`.
    pub(super) fn apply_base_edits(
        &self,
        head: &Snapshot,
        edits: Vec<(String, Vec<Edit>)>,
        started: Counters,
        message: &str,
        clock: Option<i64>,
    ) -> DbResult<CommitOutcome> {
        let mut changed = Vec::new();
        let mut deltas = BTreeMap::new();
        for (relation, relation_edits) in edits {
            let entry = head.require(&relation)?;
            let old_tree = entry
                .tree()
                .ok_or_else(|| DbError::corrupted(format!("relation `{relation}` has no tree")))?;
            let (new_tree, delta) =
                self.edit_base_relation(&head.program, &relation, &old_tree, &relation_edits)?;
            deltas.insert(relation.clone(), delta);
            changed.push((relation, old_tree, new_tree));
        }
        self.finish_base_commit_of(head, changed, deltas, started, message, clock)
    }

    /// Applies sorted `edits` to base relation `relation`'s tree `old` and returns the new
    /// tree with its tuple delta: the edits that changed something — an insert of an
    /// absent tuple, a delete of a present one — as the edit reports them, which is
    /// exactly the diff of the two trees without reading every entry of each changed leaf
    /// twice.
    pub(super) fn edit_base_relation(
        &self,
        program: &Program,
        relation: &str,
        old: &Tree,
        edits: &[Edit],
    ) -> DbResult<(Tree, Delta)> {
        let (new, changed_by) = old.edit_reporting(&self.nodes, edits)?;
        let types = relation_types(program, relation).unwrap_or_default();
        let mut delta = Delta::default();
        for ((key, value), _) in edits.iter().zip(changed_by).filter(|(_, changed)| *changed) {
            let tuple = decode_stored(key, &types, relation)?;
            if value.is_some() {
                delta.inserted.insert(tuple);
            } else {
                delta.deleted.insert(tuple);
            }
        }
        Ok((new, delta))
    }

    /// Takes the tuple deltas of changed base relations from the diff of their trees,
    /// maintains the views and judges the denials at `clock`, writes the new state and
    /// commit, and advances the head; "nothing to commit" when no relation changed (a
    /// clock that moved and changed no relation makes no commit).
    pub(super) fn finish_base_commit(
        &self,
        head: &Snapshot,
        changed: Vec<(String, Tree, Tree)>,
        started: Counters,
        message: &str,
        clock: Option<i64>,
    ) -> DbResult<CommitOutcome> {
        self.finish_base_commit_of(head, changed, BTreeMap::new(), started, message, clock)
    }

    /// [`Database::finish_base_commit`], given for some relations their tuple delta
    /// (`known`; see [`Database::maintain_base_change_of`]).
    fn finish_base_commit_of(
        &self,
        head: &Snapshot,
        changed: Vec<(String, Tree, Tree)>,
        known: BTreeMap<String, Delta>,
        started: Counters,
        message: &str,
        clock: Option<i64>,
    ) -> DbResult<CommitOutcome> {
        match self.maintain_base_change_of(head, changed, known, started, clock)? {
            Some(step) if step.changes_relations(&self.nodes, head)? => {
                self.write_commit(head, step.state, step.counts, step.stats, message)
            }
            _ => Ok(CommitOutcome::NothingToCommit),
        }
    }

    /// The state after changing base relations from `head` and moving the clock to
    /// `clock` (`None` for a program that does not mention `now`): the base relations'
    /// tuple deltas taken from the diff of their trees, their indexes updated, every view
    /// that reads them or the clock maintained and every denial judged. `None` when no
    /// base relation changed and the clock stays. Writes no commit.
    pub(super) fn maintain_base_change(
        &self,
        head: &Snapshot,
        changed: Vec<(String, Tree, Tree)>,
        started: Counters,
        clock: Option<i64>,
    ) -> DbResult<Option<MaintainedChange>> {
        self.maintain_base_change_of(head, changed, BTreeMap::new(), started, clock)
    }

    /// [`Database::maintain_base_change`], given for some relations the tuple delta from
    /// the old tree to the new one (`known`, from the edits that took one to the other):
    /// no diff is read for those.
    pub(super) fn maintain_base_change_of(
        &self,
        head: &Snapshot,
        changed: Vec<(String, Tree, Tree)>,
        mut known: BTreeMap<String, Delta>,
        started: Counters,
        clock: Option<i64>,
    ) -> DbResult<Option<MaintainedChange>> {
        debug_assert_eq!(
            clock.is_some(),
            head.program.mentions_now(),
            "a state carries a clock exactly when its program mentions `now`"
        );
        let mut state = head.state.clone();
        state.clock = clock;
        let mut counts = Vec::new();
        let mut deltas: BTreeMap<String, Delta> = BTreeMap::new();
        let plans = shared_plans(&head.program);
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
            let (count, delta) = match known.remove(&relation) {
                Some(delta) => {
                    self.known_delta(head, &plans, relation, delta, (&old_tree, &new_tree))?
                }
                None => self.base_delta(head, &plans, relation, &old_tree, &new_tree, new_count)?,
            };
            if let Some(delta) = delta {
                deltas.insert(count.relation.clone(), delta);
            }
            counts.push(count);
        }
        if counts.is_empty() && clock == head.state.clock {
            return Ok(None);
        }
        counts.sort_by(|a, b| a.relation.cmp(&b.relation));
        // Base relations' indexes follow their deltas.
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
        let changed_names: Vec<&str> = counts.iter().map(|c| c.relation.as_str()).collect();
        // A commit that only moves the clock changes no base relation.
        let mut stats = Vec::new();
        if !counts.is_empty() {
            stats.push(stat(
                "base",
                &changed_names.join(","),
                self.nodes.counters() - started,
            ));
        }
        // Every view that reads a changed relation, maintained from the deltas; then the
        // denials judged on insert-only deltas.
        let maintainer = Maintainer::new(
            &self.nodes,
            &head.program,
            &plans,
            &head.state.relations,
            by_name.into_values().collect(),
            deltas,
            self.recursion,
            (head.state.clock, clock),
        );
        let (relations, operator_stats) = maintainer.run()?;
        state.relations = relations;
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

    /// One changed base relation's change counts, and its tuple delta when a rule reads it
    /// or it keeps an index (a keyed relation's index on its key follows the delta).
    fn base_delta(
        &self,
        head: &Snapshot,
        plans: &ProgramPlans,
        relation: String,
        old_tree: &Tree,
        new_tree: &Tree,
        new_count: u64,
    ) -> DbResult<(ChangeCount, Option<Delta>)> {
        let keep_delta = head.program.reads(&relation) || plans.keeps_indexes(&relation);
        // A relation no rule reads needs no tuple delta; filling an empty one (an import)
        // needs not even the diff to count what went in.
        if !keep_delta && old_tree.count(&self.nodes)? == 0 {
            let count = ChangeCount {
                relation,
                inserted: new_count,
                deleted: 0,
            };
            return Ok((count, None));
        }
        let (mut inserted, mut deleted) = (0u64, 0u64);
        let mut entries = Vec::new();
        for entry in old_tree.diff(&self.nodes, new_tree)? {
            let entry = entry?;
            match &entry {
                DiffEntry::Added { .. } => inserted += 1,
                DiffEntry::Removed { .. } => deleted += 1,
                DiffEntry::Changed { .. } => {
                    return Err(DbError::corrupted(format!(
                        "base relation `{relation}` holds a tuple with a value"
                    )))
                }
            }
            if keep_delta {
                entries.push(entry);
            }
        }
        let delta = if keep_delta {
            let types = relation_types(&head.program, &relation).unwrap_or_default();
            Some(delta_of_diff(&entries, &types, &relation)?)
        } else {
            None
        };
        let count = ChangeCount {
            relation,
            inserted,
            deleted,
        };
        Ok((count, delta))
    }

    /// One changed base relation's change counts, and its tuple delta when a rule reads it
    /// or it keeps an index, from the `delta` known to take `old` to `new`: what a diff of
    /// the trees gives (debug builds check it against the diff).
    fn known_delta(
        &self,
        head: &Snapshot,
        plans: &ProgramPlans,
        relation: String,
        delta: Delta,
        (old, new): (&Tree, &Tree),
    ) -> DbResult<(ChangeCount, Option<Delta>)> {
        let count = ChangeCount {
            relation,
            inserted: delta.inserted.tuples().len() as u64,
            deleted: delta.deleted.tuples().len() as u64,
        };
        if cfg!(debug_assertions) {
            let new_count = new.count(&self.nodes)?;
            let diffed =
                self.base_delta(head, plans, count.relation.clone(), old, new, new_count)?;
            debug_assert_eq!(diffed.0, count, "the known delta's counts are the diff's");
            debug_assert!(
                diffed.1.as_ref().is_none_or(|d| {
                    d.inserted.tuples() == delta.inserted.tuples()
                        && d.deleted.tuples() == delta.deleted.tuples()
                }),
                "the known delta is the diff's"
            );
        }
        let keep = head.program.reads(&count.relation) || plans.keeps_indexes(&count.relation);
        Ok((count, keep.then_some(delta)))
    }

    /// Writes `state` and a commit of it on top of `head`, makes both durable, and moves
    /// the current branch by compare-and-swap (logging `commit: MESSAGE`).
    pub(super) fn write_commit(
        &self,
        head: &Snapshot,
        state: State,
        changes: Vec<ChangeCount>,
        stats: Vec<OperatorStat>,
        message: &str,
    ) -> DbResult<CommitOutcome> {
        let written = NewCommit {
            merged: None,
            state,
            changes,
            stats,
            message,
            action: &format!("commit: {message}"),
        };
        self.write_commit_of(head, written)
    }

    /// Writes a new commit's state and commit on top of `head` (and `merged`, its second
    /// parent, for a merge), makes both durable, and moves the current branch from
    /// `head.commit` to it by compare-and-swap, logging `action`.
    pub(super) fn write_commit_of(
        &self,
        head: &Snapshot,
        new: NewCommit<'_>,
    ) -> DbResult<CommitOutcome> {
        let state_address = new.state.write(self.chunks.as_ref())?;
        let commit = Commit {
            parents: head
                .commit
                .iter()
                .chain(new.merged.iter())
                .map(|c| *c.as_bytes())
                .collect(),
            state: *state_address.as_bytes(),
            message: new.message.to_string(),
            time: commit_time(),
            changes: new.changes.clone(),
            stats: new.stats.clone(),
        };
        let id = commit.write(self.chunks.as_ref())?;
        let branch = refs::current_branch(self.chunks.as_ref())?;
        refs::move_branch(self.chunks.as_ref(), &branch, head.commit, id, new.action)?;
        Ok(CommitOutcome::Committed {
            commit: id,
            state: state_address,
            changes: new.changes,
            stats: new.stats,
        })
    }
}

/// A commit about to be written: its second parent (for a merge), state, change counts,
/// operator work, message and the reflog action it is logged with.
pub(super) struct NewCommit<'a> {
    pub(super) merged: Option<Address>,
    pub(super) state: State,
    pub(super) changes: Vec<ChangeCount>,
    pub(super) stats: Vec<OperatorStat>,
    pub(super) message: &'a str,
    pub(super) action: &'a str,
}

/// A state reached by changing base relations, not yet committed: the state, the change
/// counts per relation and the work per operator.
pub(super) struct MaintainedChange {
    pub(super) state: State,
    pub(super) counts: Vec<ChangeCount>,
    pub(super) stats: Vec<OperatorStat>,
}

impl MaintainedChange {
    /// Whether the change changed the tuples of some relation of `before`: a base
    /// relation, or a view whose rows the clock moved. A clock step that moves only a
    /// view's derivation counts or the state beside it (`min`/`max` values, indexes,
    /// accumulators) changes no relation, so it makes no commit: the stored entries
    /// differ, the tuple sets do not.
    pub(super) fn changes_relations(&self, nodes: &NodeStore, before: &Snapshot) -> DbResult<bool> {
        if !self.counts.is_empty() {
            return Ok(true);
        }
        debug_assert_eq!(
            self.state.relations.len(),
            before.state.relations.len(),
            "a change of base relations keeps the program's relations"
        );
        for (old, new) in before.state.relations.iter().zip(&self.state.relations) {
            debug_assert_eq!(old.name, new.name, "both states list relations by name");
            if old.root == new.root {
                continue;
            }
            let (Some(old), Some(new)) = (old.tree(), new.tree()) else {
                return Ok(true);
            };
            if tuple_sets_differ(nodes, &old, &new)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Whether two tuple trees hold different tuples: a key in one only. Every stored
/// relation keeps its tuples as the keys of its tree (`docs/format.md` §8.1), so a value
/// that changed (a derivation count) is no change of tuples. Stops at the first.
fn tuple_sets_differ(nodes: &NodeStore, old: &Tree, new: &Tree) -> DbResult<bool> {
    for entry in old.diff(nodes, new)? {
        if !matches!(entry?, DiffEntry::Changed { .. }) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The clock of a new state of `program` made on top of `head` (`rnt commit`, `import`,
/// `merge`, `revert`): `explicit` when given — refused when earlier than the head's clock,
/// since the clock never goes back — else the later of the head's clock and the commit
/// time. `None` for a program that does not mention `now` (an explicit clock is then
/// refused: such states carry none).
pub(super) fn next_clock(
    head: &Snapshot,
    program: &Program,
    explicit: Option<i64>,
) -> DbResult<Option<i64>> {
    clock_of(head, program, explicit, |previous| {
        let now = commit_time();
        previous.map_or(now, |p| p.max(now))
    })
}

/// The clock of a new state of `program` on top of `head`: `explicit` when given and not
/// earlier than the head's clock (the clock never goes back), else `default` of the head's
/// clock; `None` for a program that does not mention `now` (refusing an explicit clock).
pub(super) fn clock_of(
    head: &Snapshot,
    program: &Program,
    explicit: Option<i64>,
    default: impl FnOnce(Option<i64>) -> i64,
) -> DbResult<Option<i64>> {
    if !program.mentions_now() {
        return match explicit {
            Some(_) => Err(DbError::user(
                "the program does not mention `now`, so its states carry no clock to set",
            )),
            None => Ok(None),
        };
    }
    match (explicit, head.state.clock) {
        (Some(clock), Some(previous)) if clock < previous => Err(DbError::user(format!(
            "clock {clock} is earlier than the head's clock {previous}: the clock never goes back"
        ))),
        (Some(clock), _) => Ok(Some(clock)),
        (None, previous) => Ok(Some(default(previous))),
    }
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

/// The time recorded in a new commit: `RNT_COMMIT_TIME` (Unix seconds) when set, for
/// reproducible commit ids; the clock otherwise.
pub(crate) fn commit_time() -> i64 {
    if let Some(fixed) = std::env::var("RNT_COMMIT_TIME")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return fixed;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A random pause before attempt `attempt + 1`: up to `attempt` tenths of
/// [`COMMIT_RETRY_PAUSE_MAX_MS`], at most all of it.
fn retry_pause(attempt: u32) -> Duration {
    use std::hash::{BuildHasher, Hasher};
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    let ceiling = COMMIT_RETRY_PAUSE_MAX_MS * u64::from(attempt.min(10)) / 10;
    Duration::from_millis(random % ceiling.max(1))
}
