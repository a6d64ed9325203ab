//! Moving and naming history: branches, tags, the reflog, `reset` and `revert`, and what
//! `gc` must keep. The refs' layout is `refs`; `merge` has its own room.
//!
//! *Invariant: nothing here deletes a commit; `reset` and `branch -d` only move or drop
//! names, and the reflog keeps every value a branch held until the branch is deleted.*

use crate::history::refs::{self, BranchTip};
use crate::snapshot::Snapshot;
use crate::{CommitOutcome, Database, DiffScope};
use crate::{DbError, DbResult};
use rnt_lang::change::{Change, Sign};
use rnt_merkle::{BranchRecord, Commit};
use rnt_store::Address;
use std::collections::HashSet;

/// One entry of a branch's reflog: a value the branch held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReflogEntry {
    /// The commit the branch pointed at.
    pub commit: Address,
    /// When the branch moved there (seconds since the Unix epoch, UTC).
    pub time: i64,
    /// What moved it (`commit: MSG`, `reset: moving to REF`, `merge NAME: ...`, ...).
    pub action: String,
}

/// What `reset` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResetOutcome {
    /// The branch moved from `from` to `to`.
    Moved {
        /// The commit the branch pointed at before.
        from: Address,
        /// The commit it points at now.
        to: Address,
    },
    /// The branch already pointed at the commit.
    AlreadyThere(Address),
}

impl Database {
    /// Every branch with its commit, sorted by name.
    pub fn branches(&self) -> DbResult<Vec<(String, Address)>> {
        refs::branches(self.chunks.as_ref())
    }

    /// Every tag with its commit, sorted by name.
    pub fn tags(&self) -> DbResult<Vec<(String, Address)>> {
        refs::tags(self.chunks.as_ref())
    }

    /// The commit `reference` names; a state named by its hash has none (an error).
    pub fn resolve_commit(&self, reference: &str) -> DbResult<Address> {
        commit_of(&self.resolve(reference)?, reference)
    }

    /// Creates branch `name` at the commit `at` names (default `HEAD`); returns the commit.
    pub fn create_branch(&self, name: &str, at: Option<&str>) -> DbResult<Address> {
        refs::check_name(refs::RefKind::Branch, name)?;
        let at = at.unwrap_or("HEAD");
        let commit = self.resolve_commit(at)?;
        refs::create_branch(
            self.chunks.as_ref(),
            name,
            commit,
            &format!("branch: created from {at}"),
            self.commit_time(),
        )?;
        Ok(commit)
    }

    /// Deletes branch `name` (not the current one); returns the commit it pointed at.
    pub fn delete_branch(&self, name: &str) -> DbResult<Address> {
        refs::delete_branch(self.chunks.as_ref(), name)
    }

    /// Makes branch `name` current; `HEAD` follows it.
    pub fn switch(&self, name: &str) -> DbResult<()> {
        refs::switch_branch(self.chunks.as_ref(), name)
    }

    /// Creates tag `name` at the commit `at` names (default `HEAD`); returns the commit.
    pub fn create_tag(&self, name: &str, at: Option<&str>) -> DbResult<Address> {
        refs::check_name(refs::RefKind::Tag, name)?;
        let commit = self.resolve_commit(at.unwrap_or("HEAD"))?;
        refs::create_tag(self.chunks.as_ref(), name, commit)?;
        Ok(commit)
    }

    /// Deletes tag `name`; returns the commit it named.
    pub fn delete_tag(&self, name: &str) -> DbResult<Address> {
        refs::delete_tag(self.chunks.as_ref(), name)
    }

    /// The current branch's reflog, newest first, at most `limit` entries.
    pub fn reflog(&self, limit: Option<usize>) -> DbResult<Vec<ReflogEntry>> {
        let branch = self.current_branch()?;
        refs::reflog(self.chunks.as_ref(), &branch)?
            .take(limit.unwrap_or(usize::MAX))
            .map(|item| {
                let (_, record): (Address, BranchRecord) = item?;
                Ok(ReflogEntry {
                    commit: record.commit_address(),
                    time: record.time,
                    action: record.action,
                })
            })
            .collect()
    }

    /// Moves the current branch to the commit `reference` names, by compare-and-swap.
    /// Nothing is deleted: the reflog keeps the old value.
    pub fn reset(&self, reference: &str) -> DbResult<ResetOutcome> {
        let branch = self.current_branch()?;
        let from = self.current_tip(&branch)?.commit;
        let to = self.resolve_commit(reference)?;
        if from == to {
            return Ok(ResetOutcome::AlreadyThere(to));
        }
        refs::move_branch(
            self.chunks.as_ref(),
            &branch,
            Some(from),
            to,
            &format!("reset: moving to {reference}"),
            self.commit_time(),
        )?;
        Ok(ResetOutcome::Moved { from, to })
    }

    /// Commits, on the current branch, the inverse of the base changes the commit
    /// `reference` names made (from its first parent): each change is a no-op where the
    /// head already agrees, and the commit is judged like any other. `message` defaults to
    /// `Revert "ORIGINAL MESSAGE"`.
    pub fn revert(&self, reference: &str, message: Option<&str>) -> DbResult<RevertOutcome> {
        let target = self.resolve(reference)?;
        let commit = commit_of(&target, reference)?;
        let record = Commit::read(self.chunks.as_ref(), &commit)?;
        let parent = self.first_parent(&target)?;
        let program_changed = parent.state.program != target.state.program;
        let changes: Vec<Change> = self
            .diff(&parent, &target, &DiffScope::Base)?
            .into_iter()
            .enumerate()
            .map(|(i, change)| Change {
                sign: match change.sign {
                    Sign::Insert => Sign::Delete,
                    Sign::Delete => Sign::Insert,
                    Sign::Update => unreachable!("a diff only inserts and deletes"),
                },
                relation: change.relation,
                values: change.tuple,
                names: Vec::new(),
                wildcards: Vec::new(),
                line: i + 1,
                source: Some(format!("the inverse of {}", commit.short_hex(12)).into()),
            })
            .collect();
        let default_message = format!("Revert \"{}\"", record.message);
        let outcome = self.commit(changes, message.unwrap_or(&default_message), None)?;
        Ok(RevertOutcome {
            reverted: commit,
            program_changed,
            outcome,
        })
    }

    /// The branch's tip; an error on a branch with no commits yet.
    fn current_tip(&self, branch: &str) -> DbResult<BranchTip> {
        refs::branch_tip(self.chunks.as_ref(), branch)?.ok_or_else(|| {
            DbError::user(format!(
                "branch `{branch}` has no commits yet: nothing to move"
            ))
        })
    }

    /// Every chunk a branch, a tag, `HEAD` or a reflog entry reaches: what `gc` keeps.
    pub fn live_chunks(&self) -> DbResult<HashSet<Address>> {
        let (commits, objects) = refs::live_roots(self.chunks.as_ref())?;
        let mut live = rnt_merkle::reachable_chunks(self.chunks.as_ref(), &commits)?;
        live.extend(objects);
        Ok(live)
    }

    /// `commit` and every commit it descends from.
    pub(crate) fn ancestors(&self, commit: Address) -> DbResult<HashSet<Address>> {
        let mut seen = HashSet::new();
        let mut stack = vec![commit];
        while let Some(id) = stack.pop() {
            if seen.insert(id) {
                stack.extend(Commit::read(self.chunks.as_ref(), &id)?.parent_addresses());
            }
        }
        Ok(seen)
    }
}

/// The commit `snapshot` (resolved from `reference`) was reached through; a state named by
/// its hash has none, which is the user's error.
fn commit_of(snapshot: &Snapshot, reference: &str) -> DbResult<Address> {
    snapshot.commit.ok_or_else(|| {
        DbError::user(format!(
            "`{reference}` names a state by its hash, not a commit; name a commit, branch or tag"
        ))
    })
}

/// What `revert` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RevertOutcome {
    /// The commit whose changes were inverted.
    pub reverted: Address,
    /// Whether that commit also changed the program (which revert leaves as it is).
    pub program_changed: bool,
    /// The commit made (or nothing to commit).
    pub outcome: CommitOutcome,
}
