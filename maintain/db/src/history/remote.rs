//! Remotes: fetch, push, pull and clone between this store and another one (a store folder,
//! or an object store at `s3://bucket/prefix`), both seen as a `ChunkStore` only.
//!
//! - **fetch** copies what the remote's branches reach (`rnt_merkle::copy_reachable`: every
//!   subtree this store already holds is skipped) and then moves each remote-tracking ref
//!   `remotes/NAME/BRANCH` by compare-and-swap; the first move makes the copied chunks
//!   durable. Tracking refs of branches the remote no longer has are removed.
//! - **push** refuses unless the remote's branch is in the local branch's history (a
//!   fast-forward) or `force`; copies what the local branch reaches; then moves the remote's
//!   branch by compare-and-swap from the value it read — a new branch record on the remote
//!   (`push: …` in the remote's reflog), whose durable publish also makes the copied chunks
//!   durable, so the remote never names a chunk it does not hold. A lost race is a
//!   conflict, never an overwrite.
//! - **pull** is fetch, then the ordinary merge of `NAME/BRANCH`.
//! - **clone** records `origin`, fetches, creates a local branch at each remote branch and
//!   makes the remote's current branch current.
//!
//! Branch records (reflogs) do not travel: each store logs the moves it saw. A pushed
//! branch's record on the remote names the commit and the remote's previous record; a
//! cloned branch starts its local log at the clone.
//!
//! *Invariant: a ref that names a commit on either side moves only after every chunk the
//! commit reaches is durable on that side (the transfer, then [`rnt_store::commit_ref`]).*

use crate::history::refs;
use crate::{Database, MergeOutcome};
use crate::{DbError, DbResult};
use rnt_merkle::{copy_reachable_with_progress, TransferReport};
use rnt_store::{Address, ChunkStore};

/// How a tracking ref (after a fetch) or a remote branch (after a push) changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefUpdate {
    /// The branch, as the remote names it.
    pub branch: String,
    /// Its commit before (`None`: it was new).
    pub old: Option<Address>,
    /// Its commit after (`None`: it was removed).
    pub new: Option<Address>,
}

/// What `fetch` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchOutcome {
    /// The chunks copied into this store.
    pub sent: TransferReport,
    /// Each tracking ref that moved, was created or was removed, sorted by branch.
    pub updated: Vec<RefUpdate>,
}

/// How a push moved the remote's branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushKind {
    /// The remote's branch already held the commit; nothing moved.
    UpToDate,
    /// The branch did not exist on the remote.
    Created,
    /// The remote's commit was in the pushed commit's history.
    FastForward,
    /// Not a fast-forward, moved because `force` was given.
    Forced,
}

/// What `push` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PushOutcome {
    /// The chunks copied to the remote.
    pub sent: TransferReport,
    /// The branch pushed.
    pub branch: String,
    /// The remote's commit before.
    pub old: Option<Address>,
    /// The remote's commit now (the local branch's).
    pub new: Address,
    /// How it moved.
    pub kind: PushKind,
}

/// What `clone` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloneOutcome {
    /// The fetch from the remote.
    pub fetched: FetchOutcome,
    /// The current branch of the clone (the remote's current branch).
    pub branch: String,
}

/// The name `clone` records the remote under.
pub const CLONE_REMOTE: &str = "origin";

impl Database {
    /// Every remote with its URL, sorted by name.
    pub fn remotes(&self) -> DbResult<Vec<(String, String)>> {
        refs::remotes(self.chunks.as_ref())
    }

    /// The URL of remote `name`; an error naming the remote when there is none.
    pub fn remote_url(&self, name: &str) -> DbResult<String> {
        refs::remote_url(self.chunks.as_ref(), name)?.ok_or_else(|| refs::unknown_remote(name))
    }

    /// Records remote `name` at `url` (the caller checked that `url` names a store).
    pub fn add_remote(&self, name: &str, url: &str) -> DbResult<()> {
        refs::add_remote(self.chunks.as_ref(), name, url)
    }

    /// Forgets remote `name` and its remote-tracking refs.
    pub fn remove_remote(&self, name: &str) -> DbResult<()> {
        refs::remove_remote(self.chunks.as_ref(), name)
    }

    /// Remote `name`'s tracking refs: each branch with the commit it held at the last fetch
    /// or push, sorted by branch.
    pub fn tracking_refs(&self, name: &str) -> DbResult<Vec<(String, Address)>> {
        refs::tracking_refs(self.chunks.as_ref(), name)
    }

    /// Fetches every branch of `remote` (recorded as remote `name`) into this store and
    /// moves the tracking refs `name/BRANCH`.
    pub fn fetch(&self, name: &str, remote: &dyn ChunkStore) -> DbResult<FetchOutcome> {
        if refs::remote_url(self.chunks.as_ref(), name)?.is_none() {
            return Err(refs::unknown_remote(name));
        }
        let theirs = refs::branches(remote)?;
        let commits: Vec<Address> = theirs.iter().map(|(_, commit)| *commit).collect();
        let sent = self.transfer(remote, self.chunks.as_ref(), &commits)?;
        let ours = refs::tracking_refs(self.chunks.as_ref(), name)?;
        let mut updated = Vec::new();
        for (branch, commit) in &theirs {
            let old = ours.iter().find(|(b, _)| b == branch).map(|(_, c)| *c);
            if old == Some(*commit) {
                continue;
            }
            debug_assert!(
                self.chunks.contains(commit)?,
                "a tracking ref moves only to a commit the store holds"
            );
            refs::move_tracking_ref(self.chunks.as_ref(), name, branch, old, Some(*commit))?;
            updated.push(RefUpdate {
                branch: branch.clone(),
                old,
                new: Some(*commit),
            });
        }
        for (branch, commit) in ours {
            if !theirs.iter().any(|(b, _)| *b == branch) {
                refs::move_tracking_ref(self.chunks.as_ref(), name, &branch, Some(commit), None)?;
                updated.push(RefUpdate {
                    branch,
                    old: Some(commit),
                    new: None,
                });
            }
        }
        // Chunks copied but named by no moved ref (the tracking refs already held them
        // under other names) are made durable too: they are complete below each chunk.
        self.chunks.flush()?;
        updated.sort_by(|a, b| a.branch.cmp(&b.branch));
        Ok(FetchOutcome { sent, updated })
    }

    /// Pushes local branch `branch` to `remote` (recorded as remote `name`): refused unless
    /// a fast-forward or `force`; a lost race with another writer of the remote's branch is
    /// a conflict (exit 1) and the remote's branch keeps the other writer's value.
    pub fn push(
        &self,
        name: &str,
        remote: &dyn ChunkStore,
        branch: &str,
        force: bool,
    ) -> DbResult<PushOutcome> {
        if refs::remote_url(self.chunks.as_ref(), name)?.is_none() {
            return Err(refs::unknown_remote(name));
        }
        refs::check_name(refs::RefKind::Branch, branch)?;
        let ours = refs::branch_tip(self.chunks.as_ref(), branch)?
            .ok_or_else(|| {
                DbError::user(format!(
                    "no branch named `{branch}` to push (list them with `rnt branch`)"
                ))
            })?
            .commit;
        let theirs = refs::branch_tip(remote, branch)?.map(|tip| tip.commit);
        let tracked = refs::tracking_commit(self.chunks.as_ref(), &format!("{name}/{branch}"))?;
        let kind = match theirs {
            Some(commit) if commit == ours => PushKind::UpToDate,
            None => PushKind::Created,
            Some(commit) if self.is_ancestor(commit, ours)? => PushKind::FastForward,
            Some(_) if force => PushKind::Forced,
            Some(commit) => {
                return Err(DbError::user(format!(
                    "push refused: `{name}/{branch}` is at {}, which is not in the history of your `{branch}` (not a fast-forward); \
                     fetch and merge first (`rnt pull {name} {branch}`), or push --force to replace it",
                    commit.short_hex(12)
                )))
            }
        };
        let mut sent = TransferReport::default();
        if kind != PushKind::UpToDate {
            sent = self.transfer(self.chunks.as_ref(), remote, &[ours])?;
            debug_assert!(
                remote.contains(&ours)?,
                "the remote holds the pushed commit before its branch moves"
            );
            rnt_store::fault::point(rnt_store::fault::PUSH_MOVE);
            refs::move_branch(remote, branch, theirs, ours, &push_action(kind), self.commit_time()).map_err(|error| {
                match error {
                    DbError::Conflict(_) => DbError::Conflict(format!(
                        "push of `{branch}` lost a race: the remote's `{branch}` moved while this push ran (another writer landed first); \
                         nothing was changed there: fetch, merge and push again"
                    )),
                    other => other,
                }
            })?;
        }
        if tracked != Some(ours) {
            refs::move_tracking_ref(self.chunks.as_ref(), name, branch, tracked, Some(ours))?;
        }
        Ok(PushOutcome {
            sent,
            branch: branch.to_string(),
            old: theirs,
            new: ours,
            kind,
        })
    }

    /// Fetches from remote `name`, then merges `name/branch` into the current branch (as
    /// `merge` does: fast-forward or a three-way merge; exit 1, 2 or 4 as merge has them).
    pub fn pull(
        &self,
        name: &str,
        remote: &dyn ChunkStore,
        branch: &str,
        message: Option<&str>,
    ) -> DbResult<(FetchOutcome, MergeOutcome)> {
        let fetched = self.fetch(name, remote)?;
        let tracking = format!("{name}/{branch}");
        if refs::tracking_commit(self.chunks.as_ref(), &tracking)?.is_none() {
            return Err(DbError::user(format!(
                "remote `{name}` has no branch `{branch}` (its branches: {})",
                list_or_none(
                    refs::tracking_refs(self.chunks.as_ref(), name)?
                        .into_iter()
                        .map(|(b, _)| b)
                )
            )));
        }
        let merged = self.merge(&tracking, message)?;
        Ok((fetched, merged))
    }

    /// Makes this store, which must be empty, a clone of `remote` at `url`: records it as
    /// remote [`CLONE_REMOTE`], fetches, creates a local branch at each of its branches and
    /// makes its current branch current.
    pub fn clone_from(&self, url: &str, remote: &dyn ChunkStore) -> DbResult<CloneOutcome> {
        if !self.chunks.list_refs()?.is_empty() {
            return Err(DbError::user(
                "clone needs an empty store; this one already has refs",
            ));
        }
        refs::add_remote(self.chunks.as_ref(), CLONE_REMOTE, url)?;
        let fetched = self.fetch(CLONE_REMOTE, remote)?;
        let action = format!("clone: from {}", rnt_lang::diagnostic::clip(url));
        for update in &fetched.updated {
            if let Some(commit) = update.new {
                refs::create_branch(
                    self.chunks.as_ref(),
                    &update.branch,
                    commit,
                    &action,
                    self.commit_time(),
                )?;
            }
        }
        let branch = refs::current_branch(remote)?;
        if refs::branch_tip(self.chunks.as_ref(), &branch)?.is_some() {
            refs::switch_branch(self.chunks.as_ref(), &branch)?;
        }
        Ok(CloneOutcome {
            fetched,
            branch: refs::current_branch(self.chunks.as_ref())?,
        })
    }

    /// Copies what `roots` reach from `from` to `to`, telling the transfer progress.
    fn transfer(
        &self,
        from: &dyn ChunkStore,
        to: &dyn ChunkStore,
        roots: &[Address],
    ) -> DbResult<TransferReport> {
        let progress = self.transfer_progress.clone();
        Ok(copy_reachable_with_progress(
            from,
            to,
            roots,
            &mut |report| {
                progress(report);
            },
        )?)
    }

    /// Whether `ancestor` is in `descendant`'s history (itself included); false when this
    /// store does not hold `ancestor` at all.
    fn is_ancestor(&self, ancestor: Address, descendant: Address) -> DbResult<bool> {
        if !self.chunks.contains(&ancestor)? {
            return Ok(false);
        }
        Ok(self.ancestors(descendant)?.contains(&ancestor))
    }
}

/// The remote's reflog entry for a push.
fn push_action(kind: PushKind) -> String {
    match kind {
        PushKind::Forced => "push --force".to_string(),
        _ => "push".to_string(),
    }
}

/// Names joined by `, `, or `none`.
fn list_or_none(names: impl Iterator<Item = String>) -> String {
    let names: Vec<String> = names.collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}
