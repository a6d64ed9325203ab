//! `merge`: bring another branch's history into the current one (docs/design.md, "Merge").
//!
//! With B the merge base (the nearest common ancestor), O ours and T theirs:
//! - T already in O's history: nothing to do; O in T's history: the branch fast-forwards.
//!   Neither writes a state.
//! - The program: if one side changed it since B, the merge takes that side's; if both
//!   changed it differently, the merge is refused.
//! - Each base relation becomes O + (T − B) − (B − T): the tree diff B → T applied to O's
//!   tree as edits (a no-op where O already agrees), so the merge costs what T changed.
//!   Sets make this conflict-free; a keyed relation conflicts where both sides gave one key
//!   different tuples (exit 4, every such key listed, nothing written).
//! - The views are then maintained from the delta O → merged through the ordinary commit
//!   path, and the denials judged on it. When the merge takes their program, the same
//!   contents are reached as T + (O − B) − (B − O) (an equal set) and maintained from
//!   T → merged, so the program never changes under the data and a denial refuses exactly
//!   when the merged contents violate it. View trees are never merged three ways: a sum
//!   would count twice, and negation is not monotone.
//!
//! *Invariant: the merged state equals, by address, the state of the same base contents
//! and program built any other way; a refused merge writes no ref.*

use crate::commit::NewCommit;
use crate::history::carry::Carry;
use crate::history::refs;
use crate::history::resolve::{resolve_conflicts, Resolution};
use crate::history::schema::{all_schema_changes, SchemaChange};
use crate::keys::KeyReader;
use crate::snapshot::Snapshot;
use crate::{CommitOutcome, CommitTimings, Database};
use crate::{DbError, DbResult};
use rnt_engine::delta::base::BaseEdit;
use rnt_engine::eval::read::decode_stored;
use rnt_engine::eval::IsKind;
use rnt_lang::change::key_text;
use rnt_lang::schema::RelationSchema;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::tuple::{encode_tuple, format_tuple, Tuple};
use rnt_lang::value::Value;
use rnt_merkle::{ChangeCount, Commit, DiffEntry, Edit, State, Tree};
use rnt_store::Address;
use std::collections::{BTreeMap, HashSet};

/// What `merge` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MergeOutcome {
    /// Their commit is already in the current branch's history: nothing changed.
    UpToDate,
    /// The current branch moved forward to their commit; no state was written.
    FastForward {
        /// Where the branch was (`None`: it had no commits).
        from: Option<Address>,
        /// Where it is now.
        to: Address,
    },
    /// A merge commit with two parents (ours first) is the new head.
    Merged {
        /// The merge base (`None` when the histories share no commit).
        base: Option<Address>,
        /// Which side's program the merge took, if they differed.
        program_from: Option<ProgramSide>,
        /// The commit made.
        outcome: CommitOutcome,
    },
}

/// Whose program a merge took when the sides' programs differed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramSide {
    /// The current branch's.
    Ours,
    /// The merged branch's.
    Theirs,
}

/// One key of a keyed relation that both sides gave a different tuple.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyConflict {
    /// The relation.
    pub relation: String,
    /// The key, as `id=7` (every key attribute, in declaration order).
    pub key: String,
    /// The key's attributes and values, in declaration order.
    pub key_values: Vec<(String, Value)>,
    /// The tuple on the current branch.
    pub ours: Tuple,
    /// The tuple on the merged branch.
    pub theirs: Tuple,
}

impl Database {
    /// Merges the commit `reference` names (a branch, a tag, a commit) into the current
    /// branch. `message` defaults to `Merge REFERENCE`. Key conflicts refuse the merge
    /// (exit 4); [`Database::merge_with`] resolves them.
    pub fn merge(&self, reference: &str, message: Option<&str>) -> DbResult<MergeOutcome> {
        self.merge_with(reference, message, &Resolution::Refuse)
    }

    /// [`Database::merge`], resolving key conflicts as `resolution` says (every conflicting
    /// key ours, theirs, or picked per key from a change file); the merge is then maintained
    /// and judged as any merge is.
    pub fn merge_with(
        &self,
        reference: &str,
        message: Option<&str>,
        resolution: &Resolution,
    ) -> DbResult<MergeOutcome> {
        let head = self.head()?;
        let theirs = self.resolve_commit(reference)?;
        match self.merge_kind(&head, theirs)? {
            MergeKind::UpToDate => Ok(MergeOutcome::UpToDate),
            MergeKind::FastForward(ours) => self.fast_forward(ours, theirs, reference),
            MergeKind::ThreeWay(base) => {
                self.merge_three_way(&head, base, theirs, reference, message, resolution)
            }
        }
    }

    /// The keys a merge of `reference` into the current branch would find in conflict,
    /// sorted by relation then key; none for a fast-forward or an up-to-date branch.
    /// Writes nothing.
    pub fn merge_conflicts(&self, reference: &str) -> DbResult<Vec<KeyConflict>> {
        let head = self.head()?;
        let theirs = self.resolve_commit(reference)?;
        let MergeKind::ThreeWay(base) = self.merge_kind(&head, theirs)? else {
            return Ok(Vec::new());
        };
        Ok(self
            .prepare_merge(&head, base, theirs, reference)?
            .merged
            .conflicts)
    }

    /// Which merge brings `theirs` into `head`.
    fn merge_kind(&self, head: &Snapshot, theirs: Address) -> DbResult<MergeKind> {
        let Some(ours) = head.commit else {
            return Ok(MergeKind::FastForward(None));
        };
        let ours_history = self.ancestors(ours)?;
        if ours_history.contains(&theirs) {
            return Ok(MergeKind::UpToDate);
        }
        let theirs_history = self.ancestors(theirs)?;
        if theirs_history.contains(&ours) {
            return Ok(MergeKind::FastForward(Some(ours)));
        }
        Ok(MergeKind::ThreeWay(
            self.merge_base(&ours_history, &theirs_history)?,
        ))
    }

    /// Moves the current branch from `from` to `to`, a descendant of it.
    fn fast_forward(
        &self,
        from: Option<Address>,
        to: Address,
        reference: &str,
    ) -> DbResult<MergeOutcome> {
        let branch = self.current_branch()?;
        refs::move_branch(
            self.chunks.as_ref(),
            &branch,
            from,
            to,
            &format!("merge {reference}: fast-forward"),
            self.commit_time(),
        )?;
        Ok(MergeOutcome::FastForward { from, to })
    }

    /// The three-way merge of `theirs` into `head` from their merge base `base_commit`:
    /// the program of the side that changed it, the other side's base changes applied as
    /// edits (key conflicts resolved as `resolution` says), the views maintained and the
    /// denials judged as in any commit, and a commit with two parents (ours first).
    fn merge_three_way(
        &self,
        head: &Snapshot,
        base_commit: Option<Address>,
        theirs: Address,
        reference: &str,
        message: Option<&str>,
        resolution: &Resolution,
    ) -> DbResult<MergeOutcome> {
        let started = self.nodes.counters();
        let prepared = self.prepare_merge(head, base_commit, theirs, reference)?;
        let PreparedMerge {
            start,
            other,
            start_is_ours,
            program_from,
            mut merged,
        } = prepared;
        if !merged.conflicts.is_empty() {
            if *resolution == Resolution::Refuse {
                return Err(conflict_error(reference, &merged.conflicts));
            }
            resolve_conflicts(&mut merged, &start, start_is_ours, resolution)?;
        }
        let clock = merged_clock(&start, &other, self.commit_time());
        let edits = merged
            .edits
            .into_iter()
            .map(|(name, edits)| (name, BaseEdit::Edits(edits)))
            .collect();
        let (state, mut changes, stats) = match self.maintain(&start, edits, clock, started)? {
            Some(step) => (step.state, step.counts, step.stats),
            None => (start.state.clone(), Vec::new(), Vec::new()),
        };
        if !start_is_ours {
            // A commit's change counts are from its first parent: ours.
            changes = self.base_change_counts(head, &state)?;
        }
        let default_message = format!("Merge {reference}");
        let message = message.unwrap_or(&default_message);
        let action = match message == default_message {
            true => format!("merge {reference}"),
            false => format!("merge {reference}: {message}"),
        };
        let new = NewCommit {
            merged: Some(theirs),
            state,
            changes,
            stats,
            timings: CommitTimings::default(),
            message,
            action: Some(action),
        };
        let outcome = self.write_commit(&start, new)?;
        Ok(MergeOutcome::Merged {
            base: base_commit,
            program_from,
            outcome,
        })
    }

    /// What a three-way merge starts from: the side whose program it keeps, the other side,
    /// and the other side's base changes as edits to the first, with the key conflicts.
    fn prepare_merge(
        &self,
        head: &Snapshot,
        base_commit: Option<Address>,
        theirs: Address,
        reference: &str,
    ) -> DbResult<PreparedMerge> {
        let base = match base_commit {
            Some(commit) => self.snapshot_of_commit(commit)?,
            None => Snapshot::empty()?,
        };
        let theirs_snapshot = self.snapshot_of_commit(theirs)?;
        let program_from = program_side(&base, head, &theirs_snapshot)
            .ok_or_else(|| both_changed_the_program(&base, head, &theirs_snapshot, reference))?;
        // The merged contents are O + (T − B) − (B − T), which equals T + (O − B) − (B − O):
        // start from the side whose program the merge keeps and apply the other side's
        // changes since the base, so the program never changes under the data. Either way
        // the first parent is ours.
        let start_is_ours = program_from != Some(ProgramSide::Theirs);
        let (start, other) = match start_is_ours {
            false => (
                Snapshot {
                    commit: head.commit,
                    ..theirs_snapshot
                },
                head.clone(),
            ),
            true => (head.clone(), theirs_snapshot),
        };
        // The alters the kept program made since the base carry the other side's changes.
        let altered_tip = if start_is_ours {
            head.commit
        } else {
            Some(theirs)
        };
        let carries = match program_from {
            Some(_) => self.carries(altered_tip, base_commit)?,
            None => BTreeMap::new(),
        };
        let sides = Sides {
            start: &start,
            base: &base,
            other: &other,
        };
        let merged = self.merged_base_edits(sides, &carries, start_is_ours, reference)?;
        Ok(PreparedMerge {
            start,
            other,
            start_is_ours,
            program_from,
            merged,
        })
    }

    /// The nearest common ancestor of two histories (each a commit and all its ancestors):
    /// a common commit that is no parent of another common commit. When there are several
    /// (criss-cross histories), the newest, then the least address, so the choice is
    /// deterministic.
    fn merge_base(
        &self,
        ours: &HashSet<Address>,
        theirs: &HashSet<Address>,
    ) -> DbResult<Option<Address>> {
        let common: Vec<Address> = ours.intersection(theirs).copied().collect();
        let mut parents_of_common: HashSet<Address> = HashSet::new();
        let mut times = Vec::with_capacity(common.len());
        for id in &common {
            let commit = Commit::read(self.chunks.as_ref(), id)?;
            parents_of_common.extend(commit.parent_addresses());
            times.push((*id, commit.time));
        }
        let best = times
            .into_iter()
            .filter(|(id, _)| !parents_of_common.contains(id))
            .max_by(|(a, ta), (b, tb)| ta.cmp(tb).then_with(|| b.cmp(a)));
        Ok(best.map(|(id, _)| id))
    }

    /// For each base relation of `start`'s program whose tree differs between `base` and
    /// `other`: the diff base → other as edits to apply to `start`. A relation missing from a side, or with another schema there, counts as empty
    /// on that side; `other` changing such a relation since the base is refused, since its
    /// changes would be lost. Also every key both sides gave a different tuple
    /// (`start_is_ours` says which side `start` is, for the conflicts' labels).
    fn merged_base_edits(
        &self,
        sides: Sides<'_>,
        carries: &BTreeMap<String, Carry>,
        start_is_ours: bool,
        reference: &str,
    ) -> DbResult<MergedBase> {
        let Sides { start, base, other } = sides;
        let mut edits = Vec::new();
        let mut conflicts = Vec::new();
        let empty = Tree::empty(&self.nodes)?;
        // The base-relation tree `side` holds for `name` under `schema` (empty if none).
        let tree_in = |side: &Snapshot, name: &str, schema: &Option<RelationSchema>| -> Tree {
            side.entry(name)
                .filter(|e| e.kind.is(RelationKind::Relation) && side.schema(name) == *schema)
                .and_then(|e| e.tree())
                .unwrap_or(empty)
        };
        for entry in &other.state.relations {
            let name = &entry.name;
            if !entry.kind.is(RelationKind::Relation) {
                continue;
            }
            let schema = other.schema(name);
            let kept = start
                .entry(name)
                .is_some_and(|e| e.kind.is(RelationKind::Relation))
                && start.schema(name) == schema;
            let carried = carries.values().any(|c| c.old_name == *name);
            if !kept && !carried && tree_in(other, name, &schema) != tree_in(base, name, &schema) {
                return Err(DbError::user(format!(
                    "cannot merge `{reference}`: relation `{name}` changed on one side, while the program the merge keeps drops it or gives it another schema"
                )));
            }
        }
        for entry in &start.state.relations {
            if !entry.kind.is(RelationKind::Relation) {
                continue;
            }
            let name = &entry.name;
            let schema = start.schema(name);
            let (base_tree, other_tree) = match carries.get(name) {
                Some(carry) => {
                    let old = Some(carry.old_schema.clone());
                    let base_tree = tree_in(base, &carry.old_name, &old);
                    let other_tree = tree_in(other, &carry.old_name, &old);
                    if base_tree == other_tree {
                        continue;
                    }
                    (
                        self.carried_tree(carry, &base_tree)?,
                        self.carried_tree(carry, &other_tree)?,
                    )
                }
                None => (tree_in(base, name, &schema), tree_in(other, name, &schema)),
            };
            if base_tree == other_tree {
                continue;
            }
            // A keyed relation: each tuple the other side added is checked against the
            // tuple `start` holds for its key (a read by key, O(log n)).
            let keyed = match &schema {
                Some(schema) if schema.key_columns().is_some() => {
                    Some((schema, KeyReader::new(entry, schema)?))
                }
                _ => None,
            };
            let mut relation_edits: Vec<Edit> = Vec::new();
            for item in base_tree.diff(&self.nodes, &other_tree)? {
                match item? {
                    DiffEntry::Added { key, .. } => {
                        if let Some((schema, reader)) = &keyed {
                            let added = decode_stored(&key, &schema.types(), name)?;
                            if let Some(conflict) = self.key_conflict(
                                name,
                                schema,
                                reader,
                                &base_tree,
                                added,
                                start_is_ours,
                            )? {
                                conflicts.push(conflict);
                            }
                        }
                        relation_edits.push((key, Some(Vec::new())));
                    }
                    DiffEntry::Removed { key, .. } => relation_edits.push((key, None)),
                    DiffEntry::Changed { .. } => {
                        return Err(DbError::corrupted(format!(
                            "base relation `{name}` holds a tuple with a value"
                        )))
                    }
                }
            }
            edits.push((name.clone(), relation_edits));
        }
        Ok(MergedBase { edits, conflicts })
    }

    /// The conflict of `added` (a tuple the other side added since the base) with the tuple
    /// `start` holds for its key, if that is another tuple that the base did not hold:
    /// both sides then gave the key different tuples. (A tuple of `start` the base held is
    /// one the other side deleted, since a keyed relation holds one tuple per key.)
    fn key_conflict(
        &self,
        relation: &str,
        schema: &RelationSchema,
        reader: &KeyReader<'_>,
        base_tree: &Tree,
        added: Tuple,
        start_is_ours: bool,
    ) -> DbResult<Option<KeyConflict>> {
        let key: Vec<Value> = schema
            .key_of(&added)
            .unwrap_or_default()
            .into_iter()
            .cloned()
            .collect();
        let Some(held) = reader.tuple_with_key(&self.nodes, &key)? else {
            return Ok(None);
        };
        if held == added {
            return Ok(None);
        }
        let held_bytes = encode_tuple(&held, &schema.types())
            .map_err(|e| DbError::corrupted(format!("relation `{relation}`: {e}")))?;
        if base_tree.get(&self.nodes, &held_bytes)?.is_some() {
            return Ok(None);
        }
        let (ours, theirs) = if start_is_ours {
            (held, added)
        } else {
            (added, held)
        };
        let key_refs: Vec<&Value> = key.iter().collect();
        Ok(Some(KeyConflict {
            relation: relation.to_string(),
            key: key_text(schema, &key_refs),
            key_values: schema
                .key_names()
                .into_iter()
                .map(str::to_string)
                .zip(key.iter().cloned())
                .collect(),
            ours,
            theirs,
        }))
    }

    /// The base relations' change counts from `from` to `to` (sorted by relation), from
    /// their tree diffs.
    fn base_change_counts(&self, from: &Snapshot, to: &State) -> DbResult<Vec<ChangeCount>> {
        let empty = Tree::empty(&self.nodes)?;
        let mut counts = Vec::new();
        for entry in &to.relations {
            if !entry.kind.is(RelationKind::Relation) {
                continue;
            }
            let new_tree = entry.tree().unwrap_or(empty);
            let old_tree = from
                .entry(&entry.name)
                .filter(|e| e.kind.is(RelationKind::Relation))
                .and_then(|e| e.tree())
                .unwrap_or(empty);
            if old_tree == new_tree {
                continue;
            }
            let (mut inserted, mut deleted) = (0, 0);
            for item in old_tree.diff(&self.nodes, &new_tree)? {
                match item? {
                    DiffEntry::Added { .. } => inserted += 1,
                    DiffEntry::Removed { .. } => deleted += 1,
                    DiffEntry::Changed { .. } => {}
                }
            }
            counts.push(ChangeCount {
                relation: entry.name.clone(),
                inserted,
                deleted,
            });
        }
        Ok(counts)
    }
}

/// Whose program the merge takes: `Some(None)` when both sides have the same program,
/// `Some(Some(side))` for the only side that changed it since the base, `None` when both
/// changed it differently (the merge is refused).
fn program_side(
    base: &Snapshot,
    ours: &Snapshot,
    theirs: &Snapshot,
) -> Option<Option<ProgramSide>> {
    let (b, o, t) = (
        &base.state.program,
        &ours.state.program,
        &theirs.state.program,
    );
    if o == t {
        Some(None)
    } else if t == b {
        Some(Some(ProgramSide::Ours))
    } else if o == b {
        Some(Some(ProgramSide::Theirs))
    } else {
        None
    }
}

/// The three states of a merge's base relations: the side merged into (whose program
/// the merge keeps), the merge base, and the other side.
#[derive(Clone, Copy)]
struct Sides<'s> {
    start: &'s Snapshot,
    base: &'s Snapshot,
    other: &'s Snapshot,
}

/// The refusal of a merge whose two sides changed the program differently: naming the
/// relations both altered, with each side's declaration, when they did.
fn both_changed_the_program(
    base: &Snapshot,
    ours: &Snapshot,
    theirs: &Snapshot,
    reference: &str,
) -> DbError {
    let ours_altered = all_schema_changes(&base.state, &ours.state);
    let theirs_altered = all_schema_changes(&base.state, &theirs.state);
    let both: Vec<String> = ours_altered
        .iter()
        .filter_map(|o| {
            let t = theirs_altered.iter().find(|t| t.relation == o.relation)?;
            let side = |c: &SchemaChange| c.after.clone().unwrap_or_else(|| "dropped".into());
            Some(format!(
                "`{}`: ours {}, theirs ({reference}) {}",
                o.relation,
                side(o),
                side(t)
            ))
        })
        .collect();
    if !both.is_empty() {
        return DbError::user(format!(
            "cannot merge `{reference}`: both branches altered the same relation since their merge base, differently ({}); alter one side to match the other, then merge",
            both.join("; ")
        ));
    }
    DbError::user(format!(
        "cannot merge `{reference}`: both branches changed the program since their merge base, differently (compare them with `rnt diff --program HEAD {reference}`; make the programs equal on one side, then merge)"
    ))
}

/// The refusal of a merge with key conflicts: exit 4, every conflicting key listed.
fn conflict_error(reference: &str, conflicts: &[KeyConflict]) -> DbError {
    let mut lines = vec![format!(
        "cannot merge `{reference}`: {} key(s) were given different tuples on both branches; nothing was written",
        conflicts.len()
    )];
    for conflict in conflicts {
        lines.push(format!(
            "conflict in {} at key {}: ours {}, theirs {}",
            conflict.relation,
            conflict.key,
            format_tuple(&conflict.relation, &conflict.ours),
            format_tuple(&conflict.relation, &conflict.theirs),
        ));
    }
    debug_assert!(!conflicts.is_empty());
    lines.push(format!(
        "resolve every key one way with `rnt merge {reference} --ours` or `--theirs`, or per key: `rnt merge {reference} --conflicts --format changes > picks.changes`, keep one line per key (ours, theirs, another tuple, or `-` to delete it), then `rnt merge {reference} --resolve picks.changes`"
    ));
    DbError::MergeConflict(lines.join("\n"))
}

/// The merged clock: the later of the two sides' and the commit time `now`, so it never
/// goes back from either parent (`None` when the merged program lacks `now`).
fn merged_clock(start: &Snapshot, other: &Snapshot, now: i64) -> Option<i64> {
    start.program.mentions_now().then(|| {
        [start.state.clock, other.state.clock, Some(now)]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(now)
    })
}

/// What a merge does to the base relations of the side merged into: each changed
/// relation's edits (sorted by key), and the key conflicts found.
pub(crate) struct MergedBase {
    pub(crate) edits: Vec<(String, Vec<Edit>)>,
    pub(crate) conflicts: Vec<KeyConflict>,
}

/// Which merge brings their commit into the current branch.
enum MergeKind {
    /// Their commit is in our history.
    UpToDate,
    /// Our commit (none: no commits yet) is in their history.
    FastForward(Option<Address>),
    /// Neither: a three-way merge from the merge base (none: no common commit).
    ThreeWay(Option<Address>),
}

/// A three-way merge before its conflicts are resolved and its views maintained.
struct PreparedMerge {
    /// The side whose program the merge keeps (ours unless only theirs changed it), with
    /// ours as its commit.
    start: Snapshot,
    /// The other side.
    other: Snapshot,
    start_is_ours: bool,
    program_from: Option<ProgramSide>,
    merged: MergedBase,
}
