//! The commit pipeline (docs/maintenance.md, "When maintenance runs"), one path for every writer:
//! a change set is checked against the head's schemas and turned into sorted edits per
//! base relation ([`Database::commit`]); the engine applies them — each changed
//! relation's tuple delta, change counts and indexes (`rnt_engine::delta::base`) — and
//! maintains every view that reads a changed relation and judges the denials
//! ([`Database::maintain`]); the state and the commit are written, made durable, and the
//! branch moves by compare-and-swap ([`Database::write_commit`]). Import, merge and revert
//! come through `maintain` and `write_commit` too; define writes its state with
//! `write_commit`.
//!
//! *Invariant: a commit that fails or is refused at any step writes no ref, so the head
//! never points at a partial state.*

use crate::history::refs;
use crate::keys::keyed_edits;
use crate::snapshot::Snapshot;
use crate::timings::{timed, CommitTimings};
use crate::Database;
use crate::{DbError, DbResult};
use rnt_engine::delta::base::{apply_base, BaseEdit};
use rnt_engine::delta::Maintainer;
use rnt_engine::eval::plans::shared_plans;
use rnt_lang::change::{check_changes, Change, Sign};
use rnt_lang::check::Program;
use rnt_lang::schema::RelationSchema;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::tuple::encode_tuple;
use rnt_merkle::{ChangeCount, Commit, Counters, DiffEntry, NodeStore, OperatorStat, State, Tree};
use rnt_store::Address;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

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
        /// Where the commit's time went (not stored).
        timings: CommitTimings,
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
    /// before anything is written. A program that mentions `now` takes `clock` as its
    /// clock (`rnt commit --clock T`) — refused when earlier than the head's (the clock
    /// never goes back) or when the program does not mention `now` — and by default the
    /// later of the head's clock and the commit time. With no changes, a commit only moves
    /// the clock: it is made when some view's tuples enter or leave a time window, and is
    /// "nothing to commit" otherwise.
    ///
    /// When another writer moved the branch meanwhile (the compare-and-swap failed), the
    /// change set is applied again on the new head — checked against its schemas, the views
    /// maintained, the denials judged — up to [`COMMIT_ATTEMPTS_MAX`] times; a change that no
    /// longer applies fails as it would have on that head (exit 1, or 2 for a denial), and a
    /// branch that kept moving is a conflict (exit 1). Nothing is ever overwritten.
    pub fn commit(
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

    /// One attempt of [`Database::commit`] on the head as it is now.
    fn commit_on_head(
        &self,
        changes: &[Change],
        message: &str,
        clock: Option<i64>,
    ) -> DbResult<CommitOutcome> {
        let head = self.head()?;
        let clock = self.next_clock(&head, &head.program, clock)?;
        refuse_derived_changes(&head, changes)?;
        let schemas: BTreeMap<String, RelationSchema> = head
            .schemas()
            .into_iter()
            .map(|s| (s.name.clone(), s))
            .collect();
        let mut checks = Duration::ZERO;
        let changes = timed(&mut checks, || {
            check_changes(changes.to_vec(), |name| schemas.get(name))
        })
        .map_err(|e| DbError::user(e.to_string()))?;
        let changes = changes.changes();
        // The base stat counts the reads by key of upserts and deletes by key too.
        let started = self.nodes.counters();
        let edits = timed(&mut checks, || self.base_edits(&head, &schemas, changes))?;
        let mut step = self.maintain(&head, edits, clock, started)?;
        if let Some(step) = &mut step {
            step.timings.base += checks;
        }
        self.commit_if_changed(&head, step, message)
    }

    /// Commits `step` on top of `head` when it changes some relation's tuples (see
    /// [`MaintainedChange::changes_relations`]); "nothing to commit" otherwise.
    pub(crate) fn commit_if_changed(
        &self,
        head: &Snapshot,
        step: Option<MaintainedChange>,
        message: &str,
    ) -> DbResult<CommitOutcome> {
        match step {
            Some(step) if step.changes_relations(&self.nodes, head)? => {
                self.write_commit(head, NewCommit::of(step, message))
            }
            _ => Ok(CommitOutcome::NothingToCommit),
        }
    }

    /// A checked change set as sorted edits per base relation. A keyed relation's upserts
    /// and deletes by key read the current tuple of each key named.
    pub(crate) fn base_edits(
        &self,
        head: &Snapshot,
        schemas: &BTreeMap<String, RelationSchema>,
        changes: &[Change],
    ) -> DbResult<Vec<(String, BaseEdit)>> {
        let mut by_relation: BTreeMap<&str, Vec<&Change>> = BTreeMap::new();
        for change in changes {
            by_relation
                .entry(&change.relation)
                .or_default()
                .push(change);
        }
        let mut edits = Vec::new();
        for (relation, changes) in by_relation {
            let schema = &schemas[relation];
            let relation_edits = match schema.key_columns() {
                Some(_) => keyed_edits(&self.nodes, head, schema, &changes)?,
                None => unkeyed_edits(schema, &changes)?,
            };
            edits.push((relation.to_string(), BaseEdit::Edits(relation_edits)));
        }
        Ok(edits)
    }

    /// The one path from base edits to a maintained state: `edits` applied to `head`'s base
    /// relations at `clock` by the engine (tuple deltas, change counts, indexes), every view
    /// that reads a changed relation or the clock maintained, every denial judged. `None`
    /// when no base relation changed and the clock stays. `started` is where the base
    /// work's counters began (before any reads by key). Writes no commit.
    pub(crate) fn maintain(
        &self,
        head: &Snapshot,
        edits: Vec<(String, BaseEdit)>,
        clock: Option<i64>,
        started: Counters,
    ) -> DbResult<Option<MaintainedChange>> {
        self.maintain_judging(head, edits, clock, started, true)
    }

    /// [`Database::maintain`], judging the denials (`denials`) or not: a transaction's
    /// steps leave them to its commit, which judges the net change
    /// ([`rnt_engine::delta::judge_net_change`]).
    pub(crate) fn maintain_judging(
        &self,
        head: &Snapshot,
        edits: Vec<(String, BaseEdit)>,
        clock: Option<i64>,
        started: Counters,
        denials: bool,
    ) -> DbResult<Option<MaintainedChange>> {
        let plans = shared_plans(&head.program);
        let nodes = &self.nodes;
        let mut timings = CommitTimings::default();
        let change = timed(&mut timings.base, || {
            apply_base(nodes, &head.program, &plans, &head.state, edits, clock)
        })?;
        let Some(change) = change else {
            return Ok(None);
        };
        let counts = change.counts.clone();
        let mut stats = Vec::new();
        // A commit that only moves the clock changes no base relation.
        if !counts.is_empty() {
            let names: Vec<&str> = counts.iter().map(|c| c.relation.as_str()).collect();
            stats.push(stat("base", &names.join(","), nodes.counters() - started));
        }
        let maintainer = Maintainer::new(
            nodes,
            &head.program,
            &plans,
            &head.state,
            change,
            self.recursion,
        )
        .with_witnesses(self.witnesses)
        .with_threads(self.threads)
        .with_denials(denials);
        let (relations, operator_stats) = maintainer.run()?;
        timings.operators = operator_stats
            .iter()
            .map(|s| (s.operator.clone(), s.relation.clone(), s.time))
            .collect();
        stats.extend(
            operator_stats
                .into_iter()
                .map(|s| stat(&s.operator, &s.relation, s.counters)),
        );
        let state = State {
            program: head.state.program.clone(),
            relations,
            clock,
        };
        Ok(Some(MaintainedChange {
            state,
            counts,
            stats,
            timings,
        }))
    }

    /// Writes a new commit's state and commit on top of `head` (and `merged`, its second
    /// parent, for a merge), makes both durable, and moves the current branch from
    /// `head.commit` to it by compare-and-swap, logging `action`.
    pub(crate) fn write_commit(
        &self,
        head: &Snapshot,
        new: NewCommit<'_>,
    ) -> DbResult<CommitOutcome> {
        let mut timings = new.timings;
        let written = Instant::now();
        let state_address = new.state.write(self.chunks.as_ref())?;
        let time = self.commit_time();
        let commit = Commit {
            parents: head
                .commit
                .iter()
                .chain(new.merged.iter())
                .map(|c| *c.as_bytes())
                .collect(),
            state: *state_address.as_bytes(),
            message: new.message.to_string(),
            time,
            changes: new.changes.clone(),
            stats: new.stats.clone(),
        };
        let id = commit.write(self.chunks.as_ref())?;
        timings.write += written.elapsed();
        let branch = refs::current_branch(self.chunks.as_ref())?;
        let action = new
            .action
            .unwrap_or_else(|| format!("commit: {}", new.message));
        timed(&mut timings.publish, || {
            refs::move_branch(
                self.chunks.as_ref(),
                &branch,
                head.commit,
                id,
                &action,
                time,
            )
        })?;
        Ok(CommitOutcome::Committed {
            commit: id,
            state: state_address,
            changes: new.changes,
            stats: new.stats,
            timings,
        })
    }

    /// The clock of a new state of `program` made on top of `head` (`rnt commit`, `import`,
    /// `revert`): `explicit` when given — refused when earlier than the head's clock,
    /// since the clock never goes back — else the later of the head's clock and the commit
    /// time. `None` for a program that does not mention `now` (an explicit clock is then
    /// refused: such states carry none).
    pub(crate) fn next_clock(
        &self,
        head: &Snapshot,
        program: &Program,
        explicit: Option<i64>,
    ) -> DbResult<Option<i64>> {
        clock_of(head, program, explicit, |previous| {
            let now = self.commit_time();
            previous.map_or(now, |p| p.max(now))
        })
    }
}

/// Refuses a change to a derived relation (each relation judged once, at its first change:
/// the one the error names).
pub(crate) fn refuse_derived_changes(head: &Snapshot, changes: &[Change]) -> DbResult<()> {
    let mut judged: Vec<&str> = Vec::new();
    for change in changes {
        if judged.contains(&change.relation.as_str()) {
            continue;
        }
        judged.push(&change.relation);
        let Some(entry) = head.entry(&change.relation) else {
            continue;
        };
        let kind = head.kind_of(entry)?;
        if kind != RelationKind::Relation {
            return Err(DbError::user(format!(
                "{}line {}: `{}` is a {}: derived relations change only through their rules",
                change
                    .source
                    .as_deref()
                    .map(|s| format!("{s}, "))
                    .unwrap_or_default(),
                change.line,
                change.relation,
                kind.keyword()
            )));
        }
    }
    Ok(())
}

/// An unkeyed relation's checked changes as sorted edits: a tuple inserted or deleted.
fn unkeyed_edits(schema: &RelationSchema, changes: &[&Change]) -> DbResult<Vec<rnt_merkle::Edit>> {
    let types = schema.types();
    let mut edits: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
    for change in changes {
        let key = encode_tuple(&change.values, &types).map_err(|e| {
            DbError::user(format!("line {}: {}: {e}", change.line, change.relation))
        })?;
        let value = match change.sign {
            Sign::Insert => Some(Vec::new()),
            Sign::Delete => None,
            Sign::Update => {
                return Err(DbError::internal(
                    "an update by key of an unkeyed relation passed the checks",
                ))
            }
        };
        edits.insert(key, value);
    }
    Ok(edits.into_iter().collect())
}

/// A commit about to be written: its second parent (for a merge), state, change counts,
/// operator work, message and the reflog action it is logged with (`commit: MESSAGE`
/// unless given).
pub(crate) struct NewCommit<'a> {
    pub(crate) merged: Option<Address>,
    pub(crate) state: State,
    pub(crate) changes: Vec<ChangeCount>,
    pub(crate) stats: Vec<OperatorStat>,
    pub(crate) timings: CommitTimings,
    pub(crate) message: &'a str,
    pub(crate) action: Option<String>,
}

impl<'a> NewCommit<'a> {
    /// An ordinary commit of a maintained change.
    pub(crate) fn of(step: MaintainedChange, message: &'a str) -> NewCommit<'a> {
        NewCommit {
            merged: None,
            state: step.state,
            changes: step.counts,
            stats: step.stats,
            timings: step.timings,
            message,
            action: None,
        }
    }
}

/// A state reached by changing base relations, not yet committed: the state, the change
/// counts per relation and the work per operator.
pub(crate) struct MaintainedChange {
    pub(crate) state: State,
    pub(crate) counts: Vec<ChangeCount>,
    pub(crate) stats: Vec<OperatorStat>,
    pub(crate) timings: CommitTimings,
}

impl MaintainedChange {
    /// Whether the change changed the tuples of some relation of `before`: a base
    /// relation, or a view whose rows the clock moved. A clock step that moves only a
    /// view's derivation counts or the state beside it (`min`/`max` values, indexes,
    /// accumulators) changes no relation, so it makes no commit: the stored entries
    /// differ, the tuple sets do not.
    pub(crate) fn changes_relations(&self, nodes: &NodeStore, before: &Snapshot) -> DbResult<bool> {
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
