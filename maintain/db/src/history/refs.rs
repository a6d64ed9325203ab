//! The names a user moves: branches, tags and the current branch, laid out over the chunk
//! store's refs. Everything else is content-addressed.
//!
//! | ref | points at |
//! |---|---|
//! | `heads/NAME` | the branch's newest [`BranchRecord`]: its commit, and the chain of every value it held (its reflog) |
//! | `tags/NAME` | a commit (a tag never moves; it is created or deleted) |
//! | `HEAD` | a [`HeadPointer`] naming the current branch; absent means [`BRANCH_DEFAULT`] |
//! | `main` | (stores made before branches) the default branch's commit, read as `heads/main` until the next write moves it there |
//! | `remotes/NAME` | a [`RemoteRecord`]: where remote NAME is |
//! | `remotes/NAME/BRANCH` | the commit the remote's BRANCH held at the last fetch or push (a remote-tracking ref, read as the reference `NAME/BRANCH`) |
//!
//! A branch moves, and its reflog grows, in one compare-and-swap of its ref to a new record
//! whose `previous` is the record it replaces: a crash leaves the old value and log or the
//! new ones, never a moved branch with a missing log entry.
//!
//! *Invariant: every ref moves only by compare-and-swap from the value the caller read, and
//! only after what it will point at is durable ([`commit_ref`]).*

use crate::{DbError, DbResult};
use rnt_merkle::objects::{object_kind, ObjectKind};
use rnt_merkle::{BranchRecord, Commit, HeadPointer, RemoteRecord};
use rnt_store::{commit_ref, Address, ChunkStore, StoreError};

/// The branch a new store's history starts on.
pub const BRANCH_DEFAULT: &str = "main";

/// The ref naming the current branch.
const HEAD_REF: &str = "HEAD";
/// The prefix of branch refs.
const BRANCH_PREFIX: &str = "heads/";
/// The prefix of tag refs.
const TAG_PREFIX: &str = "tags/";
/// The prefix of remote records and remote-tracking refs.
const REMOTE_PREFIX: &str = "remotes/";
/// The longest remote name, in bytes.
const REMOTE_NAME_BYTES_MAX: usize = 40;
/// The ref stores made before branches kept their one history in.
const LEGACY_BRANCH_REF: &str = "main";
/// The longest branch or tag name, in bytes (the store allows 255 per ref, prefix included).
const NAME_BYTES_MAX: usize = 200;

/// Whether a name is a branch or a tag (for messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefKind {
    /// A branch (`rnt branch`).
    Branch,
    /// A tag (`rnt tag`).
    Tag,
}

impl RefKind {
    fn noun(self) -> &'static str {
        match self {
            RefKind::Branch => "branch",
            RefKind::Tag => "tag",
        }
    }
}

/// Where a branch points: its commit, and the record that says so (`None` only for a
/// store made before branches, whose default branch is a bare commit ref).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BranchTip {
    /// The commit the branch points at.
    pub commit: Address,
    /// The branch's newest record (the value of its ref).
    pub record: Option<Address>,
}

/// Checks a branch or tag name: 1 to 200 bytes of ASCII letters, digits, `_`, `-`, `.` and
/// `/`; not `HEAD`; not starting with `-`, `.` or `/`; not ending with `/` or `.`; no `..`
/// or `//`. (`^` and `~` never appear, so `NAME~2` always means steps back.)
pub fn check_name(kind: RefKind, name: &str) -> DbResult<()> {
    let noun = kind.noun();
    let bad = |why: &str| {
        Err(DbError::user(format!(
            "invalid {noun} name `{}`: {why}",
            rnt_lang::diagnostic::clip(name)
        )))
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > NAME_BYTES_MAX {
        return bad(&format!("longer than {NAME_BYTES_MAX} bytes"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')))
    {
        return bad(&format!(
            "`{c}` is not allowed (use letters, digits, `_`, `-`, `.` and `/`)"
        ));
    }
    if name == HEAD_REF {
        return bad("`HEAD` always names the current branch's commit");
    }
    if name.starts_with(['-', '.', '/']) || name.ends_with(['/', '.']) {
        return bad("it may not start with `-`, `.` or `/`, nor end with `/` or `.`");
    }
    if name.contains("..") || name.contains("//") {
        return bad("it may not contain `..` or `//`");
    }
    Ok(())
}

/// The name of the current branch.
pub fn current_branch(chunks: &dyn ChunkStore) -> DbResult<String> {
    match chunks.get_ref(HEAD_REF)? {
        None => Ok(BRANCH_DEFAULT.to_string()),
        Some(address) => Ok(HeadPointer::read(chunks, &address)?.branch),
    }
}

/// Where branch `name` points, if it exists (an invalid name names no branch).
pub fn branch_tip(chunks: &dyn ChunkStore, name: &str) -> DbResult<Option<BranchTip>> {
    if check_name(RefKind::Branch, name).is_err() {
        return Ok(None);
    }
    if let Some(record) = chunks.get_ref(&branch_ref(name))? {
        let commit = BranchRecord::read(chunks, &record)?.commit_address();
        return Ok(Some(BranchTip {
            commit,
            record: Some(record),
        }));
    }
    if name == BRANCH_DEFAULT {
        if let Some(commit) = chunks.get_ref(LEGACY_BRANCH_REF)? {
            return Ok(Some(BranchTip {
                commit,
                record: None,
            }));
        }
    }
    Ok(None)
}

/// The commit tag `name` names, if it exists.
pub fn tag_commit(chunks: &dyn ChunkStore, name: &str) -> DbResult<Option<Address>> {
    if check_name(RefKind::Tag, name).is_err() {
        return Ok(None);
    }
    Ok(chunks.get_ref(&tag_ref(name))?)
}

/// The commit at the current branch's tip (`None` before the branch's first commit).
pub fn head_commit(chunks: &dyn ChunkStore) -> DbResult<Option<Address>> {
    let branch = current_branch(chunks)?;
    Ok(branch_tip(chunks, &branch)?.map(|tip| tip.commit))
}

/// Every branch with its commit, sorted by name.
pub fn branches(chunks: &dyn ChunkStore) -> DbResult<Vec<(String, Address)>> {
    let mut out = Vec::new();
    for (name, record) in chunks.list_refs()? {
        if let Some(branch) = name.strip_prefix(BRANCH_PREFIX) {
            let commit = BranchRecord::read(chunks, &record)?.commit_address();
            out.push((branch.to_string(), commit));
        }
    }
    if !out.iter().any(|(name, _)| name == BRANCH_DEFAULT) {
        if let Some(tip) = branch_tip(chunks, BRANCH_DEFAULT)? {
            out.push((BRANCH_DEFAULT.to_string(), tip.commit));
        }
    }
    out.sort();
    Ok(out)
}

/// Every tag with its commit, sorted by name.
pub fn tags(chunks: &dyn ChunkStore) -> DbResult<Vec<(String, Address)>> {
    Ok(chunks
        .list_refs()?
        .into_iter()
        .filter_map(|(name, commit)| {
            name.strip_prefix(TAG_PREFIX)
                .map(|tag| (tag.to_string(), commit))
        })
        .collect())
}

/// Moves branch `name` from commit `expected` (`None`: the branch does not exist yet) to
/// commit `new`, logging `action`, in one compare-and-swap. Fails with a conflict, changing
/// nothing, when the branch no longer points at `expected`.
pub fn move_branch(
    chunks: &dyn ChunkStore,
    name: &str,
    expected: Option<Address>,
    new: Address,
    action: &str,
    time: i64,
) -> DbResult<()> {
    check_name(RefKind::Branch, name)?;
    let tip = branch_tip(chunks, name)?;
    if tip.map(|t| t.commit) != expected {
        return Err(moved_meanwhile(name));
    }
    // A store made before branches: its bare commit ref becomes the branch's first record.
    let mut previous = tip.and_then(|t| t.record);
    if let Some(BranchTip {
        commit,
        record: None,
    }) = tip
    {
        previous = Some(legacy_record(chunks, commit)?.write(chunks)?);
    }
    let record = BranchRecord {
        commit: *new.as_bytes(),
        previous: previous.map(|p| *p.as_bytes()),
        time,
        action: action.to_string(),
    };
    let record_address = record.write(chunks)?;
    let expected_record = tip.and_then(|t| t.record);
    commit_ref(
        chunks,
        &branch_ref(name),
        expected_record,
        Some(record_address),
    )
    .map_err(|e| conflict_or(e, name))?;
    if let Some(BranchTip {
        commit,
        record: None,
    }) = tip
    {
        // The legacy ref is now shadowed by `heads/main`; drop it (harmless if this fails:
        // `heads/main` is read first).
        let _ = commit_ref(chunks, LEGACY_BRANCH_REF, Some(commit), None);
    }
    Ok(())
}

/// Creates branch `name` at commit `at`, logging `action`. Fails if it exists.
pub fn create_branch(
    chunks: &dyn ChunkStore,
    name: &str,
    at: Address,
    action: &str,
    time: i64,
) -> DbResult<()> {
    check_name(RefKind::Branch, name)?;
    if branch_tip(chunks, name)?.is_some() {
        return Err(DbError::user(format!("branch `{name}` already exists")));
    }
    move_branch(chunks, name, None, at, action, time)
}

/// Deletes branch `name` (and its reflog), which must exist and not be current; returns the
/// commit it pointed at.
pub fn delete_branch(chunks: &dyn ChunkStore, name: &str) -> DbResult<Address> {
    check_name(RefKind::Branch, name)?;
    let tip = branch_tip(chunks, name)?
        .ok_or_else(|| DbError::user(format!("no branch named `{name}`")))?;
    if current_branch(chunks)? == name {
        return Err(DbError::user(format!(
            "cannot delete branch `{name}`: it is the current branch (switch to another first)"
        )));
    }
    match tip.record {
        Some(record) => commit_ref(chunks, &branch_ref(name), Some(record), None),
        None => commit_ref(chunks, LEGACY_BRANCH_REF, Some(tip.commit), None),
    }
    .map_err(|e| conflict_or(e, name))?;
    Ok(tip.commit)
}

/// Makes `name`, which must exist (or already be current, before its first commit), the
/// current branch.
pub fn switch_branch(chunks: &dyn ChunkStore, name: &str) -> DbResult<()> {
    check_name(RefKind::Branch, name)?;
    if current_branch(chunks)? == name {
        return Ok(());
    }
    if branch_tip(chunks, name)?.is_none() {
        let hint = if chunks.get_ref(&tag_ref(name))?.is_some() {
            " (it is a tag; create a branch at it with `rnt branch NEW TAG`)"
        } else {
            " (create it with `rnt branch NAME [REF]`)"
        };
        return Err(DbError::user(format!("no branch named `{name}`{hint}")));
    }
    let old = chunks.get_ref(HEAD_REF)?;
    let pointer = HeadPointer {
        branch: name.to_string(),
    }
    .write(chunks)?;
    if old == Some(pointer) {
        return Ok(());
    }
    commit_ref(chunks, HEAD_REF, old, Some(pointer)).map_err(|e| conflict_or(e, HEAD_REF))
}

/// Creates tag `name` at commit `at`. Fails if it exists (tags never move).
pub fn create_tag(chunks: &dyn ChunkStore, name: &str, at: Address) -> DbResult<()> {
    check_name(RefKind::Tag, name)?;
    if chunks.get_ref(&tag_ref(name))?.is_some() {
        return Err(DbError::user(format!(
            "tag `{name}` already exists (tags never move; delete it first with `rnt tag -d {name}`)"
        )));
    }
    commit_ref(chunks, &tag_ref(name), None, Some(at)).map_err(|e| conflict_or(e, name))
}

/// Deletes tag `name`, which must exist; returns the commit it named.
pub fn delete_tag(chunks: &dyn ChunkStore, name: &str) -> DbResult<Address> {
    check_name(RefKind::Tag, name)?;
    let commit = chunks
        .get_ref(&tag_ref(name))?
        .ok_or_else(|| DbError::user(format!("no tag named `{name}`")))?;
    commit_ref(chunks, &tag_ref(name), Some(commit), None).map_err(|e| conflict_or(e, name))?;
    Ok(commit)
}

/// The reflog of branch `name`, newest first: each record's address and content. Walks
/// lazily, so `take(n)` reads n records.
pub fn reflog<'a>(
    chunks: &'a dyn ChunkStore,
    name: &str,
) -> DbResult<impl Iterator<Item = DbResult<(Address, BranchRecord)>> + 'a> {
    let tip = branch_tip(chunks, name)?;
    let mut next_record = tip.and_then(|t| t.record);
    // A store made before branches logs one value: the bare ref's commit.
    let mut legacy = tip.filter(|t| t.record.is_none()).map(|t| t.commit);
    Ok(std::iter::from_fn(move || {
        if let Some(commit) = legacy.take() {
            return Some(legacy_record(chunks, commit).map(|record| (commit, record)));
        }
        let address = next_record.take()?;
        match BranchRecord::read(chunks, &address) {
            Ok(record) => {
                next_record = record.previous_address();
                Some(Ok((address, record)))
            }
            Err(e) => Some(Err(e.into())),
        }
    }))
}

/// What `gc` must keep besides what commits reach: every branch record, head pointer and
/// other non-commit object a ref names; and the commits every ref and reflog entry reach.
pub fn live_roots(chunks: &dyn ChunkStore) -> DbResult<(Vec<Address>, Vec<Address>)> {
    let mut commits = Vec::new();
    let mut objects = Vec::new();
    for (_, address) in chunks.list_refs()? {
        let bytes = chunks.get(&address)?;
        match object_kind(&bytes) {
            ObjectKind::BranchRecord => {
                let mut next = Some(address);
                while let Some(record_address) = next {
                    let record = BranchRecord::read(chunks, &record_address)?;
                    objects.push(record_address);
                    commits.push(record.commit_address());
                    next = record.previous_address();
                }
            }
            ObjectKind::Commit => commits.push(address),
            _ => objects.push(address),
        }
    }
    commits.sort();
    commits.dedup();
    Ok((commits, objects))
}

/// Checks a remote name: 1 to 40 bytes of ASCII letters, digits, `_`, `-` and `.`, not
/// starting with `-` or `.`. (No `/`: in `NAME/BRANCH` the remote is what comes before the
/// first `/`, and the branch may hold more.)
pub fn check_remote_name(name: &str) -> DbResult<()> {
    let bad = |why: &str| {
        Err(DbError::user(format!(
            "invalid remote name `{}`: {why}",
            rnt_lang::diagnostic::clip(name)
        )))
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > REMOTE_NAME_BYTES_MAX {
        return bad(&format!("longer than {REMOTE_NAME_BYTES_MAX} bytes"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return bad(&format!(
            "`{c}` is not allowed (use letters, digits, `_`, `-` and `.`)"
        ));
    }
    if name.starts_with(['-', '.']) || name == HEAD_REF {
        return bad("it may not start with `-` or `.`, nor be `HEAD`");
    }
    Ok(())
}

/// Every remote with its URL, sorted by name.
pub fn remotes(chunks: &dyn ChunkStore) -> DbResult<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (name, address) in chunks.list_refs()? {
        let Some(remote) = name.strip_prefix(REMOTE_PREFIX) else {
            continue;
        };
        if !remote.contains('/') {
            out.push((
                remote.to_string(),
                RemoteRecord::read(chunks, &address)?.url,
            ));
        }
    }
    Ok(out)
}

/// The URL of remote `name`, if it exists.
pub fn remote_url(chunks: &dyn ChunkStore, name: &str) -> DbResult<Option<String>> {
    if check_remote_name(name).is_err() {
        return Ok(None);
    }
    match chunks.get_ref(&remote_ref(name))? {
        Some(address) => Ok(Some(RemoteRecord::read(chunks, &address)?.url)),
        None => Ok(None),
    }
}

/// Records remote `name` at `url`. Fails if a remote of that name exists.
pub fn add_remote(chunks: &dyn ChunkStore, name: &str, url: &str) -> DbResult<()> {
    check_remote_name(name)?;
    if chunks.get_ref(&remote_ref(name))?.is_some() {
        return Err(DbError::user(format!(
            "remote `{name}` already exists (remove it first with `rnt remote remove {name}`)"
        )));
    }
    let record = RemoteRecord {
        url: url.to_string(),
    }
    .write(chunks)?;
    commit_ref(chunks, &remote_ref(name), None, Some(record)).map_err(|e| conflict_or(e, name))
}

/// Removes remote `name` and its remote-tracking refs (the tracking refs first, so a crash
/// in between leaves the remote with fewer of them, never tracking refs without a remote).
pub fn remove_remote(chunks: &dyn ChunkStore, name: &str) -> DbResult<()> {
    check_remote_name(name)?;
    let record = chunks
        .get_ref(&remote_ref(name))?
        .ok_or_else(|| unknown_remote(name))?;
    for (branch, commit) in tracking_refs(chunks, name)? {
        commit_ref(chunks, &tracking_ref(name, &branch), Some(commit), None)
            .map_err(|e| conflict_or(e, name))?;
    }
    commit_ref(chunks, &remote_ref(name), Some(record), None).map_err(|e| conflict_or(e, name))
}

/// The error for a remote that is not recorded.
pub fn unknown_remote(name: &str) -> DbError {
    DbError::user(format!(
        "no remote named `{}` (list them with `rnt remote -v`, add one with `rnt remote add NAME URL`)",
        rnt_lang::diagnostic::clip(name)
    ))
}

/// Remote `remote`'s tracking refs: each branch (as the remote names it) with the commit it
/// held at the last fetch or push, sorted by branch.
pub fn tracking_refs(chunks: &dyn ChunkStore, remote: &str) -> DbResult<Vec<(String, Address)>> {
    let prefix = format!("{REMOTE_PREFIX}{remote}/");
    Ok(chunks
        .list_refs()?
        .into_iter()
        .filter_map(|(name, commit)| {
            name.strip_prefix(&prefix)
                .map(|branch| (branch.to_string(), commit))
        })
        .collect())
}

/// Moves the tracking ref of `remote`'s `branch` from `expected` to `new` (`None` deletes
/// it) by compare-and-swap; `new` must be durable in the store (the caller copied it).
pub fn move_tracking_ref(
    chunks: &dyn ChunkStore,
    remote: &str,
    branch: &str,
    expected: Option<Address>,
    new: Option<Address>,
) -> DbResult<()> {
    check_remote_name(remote)?;
    check_name(RefKind::Branch, branch)?;
    let name = format!("{remote}/{branch}");
    commit_ref(chunks, &tracking_ref(remote, branch), expected, new)
        .map_err(|e| conflict_or(e, &name))
}

/// The commit the reference `REMOTE/BRANCH` names: remote REMOTE's BRANCH at the last fetch
/// or push. `None` when `name` is not of that form or no such tracking ref exists.
pub fn tracking_commit(chunks: &dyn ChunkStore, name: &str) -> DbResult<Option<Address>> {
    let Some((remote, branch)) = name.split_once('/') else {
        return Ok(None);
    };
    if check_remote_name(remote).is_err() || check_name(RefKind::Branch, branch).is_err() {
        return Ok(None);
    }
    Ok(chunks.get_ref(&tracking_ref(remote, branch))?)
}

fn remote_ref(name: &str) -> String {
    format!("{REMOTE_PREFIX}{name}")
}

fn tracking_ref(remote: &str, branch: &str) -> String {
    format!("{REMOTE_PREFIX}{remote}/{branch}")
}

/// The record standing for the bare commit ref of a store made before branches: the
/// branch's first value, logged at its commit's time.
fn legacy_record(chunks: &dyn ChunkStore, commit: Address) -> DbResult<BranchRecord> {
    Ok(BranchRecord {
        commit: *commit.as_bytes(),
        previous: None,
        time: Commit::read(chunks, &commit)?.time,
        action: "the history before branches".to_string(),
    })
}

fn branch_ref(name: &str) -> String {
    format!("{BRANCH_PREFIX}{name}")
}

fn tag_ref(name: &str) -> String {
    format!("{TAG_PREFIX}{name}")
}

fn moved_meanwhile(name: &str) -> DbError {
    DbError::Conflict(format!(
        "`{name}` moved while this command ran (another process wrote to the store); nothing was changed, run it again"
    ))
}

/// A ref conflict as the user's error; every other store error as itself.
fn conflict_or(error: StoreError, name: &str) -> DbError {
    match error {
        StoreError::RefConflict { .. } => moved_meanwhile(name),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rules() {
        for good in ["main", "feature/x", "v1.0", "a_b-c", "x"] {
            assert!(check_name(RefKind::Branch, good).is_ok(), "{good}");
        }
        for bad in [
            "", "HEAD", "-x", ".x", "/x", "x/", "x.", "a..b", "a//b", "a b", "a^", "a~1", "ä",
        ] {
            assert!(check_name(RefKind::Branch, bad).is_err(), "{bad:?}");
        }
        for good in ["origin", "up-stream", "a.b", "r_2"] {
            assert!(check_remote_name(good).is_ok(), "{good}");
        }
        for bad in ["", "a/b", "-x", ".x", "HEAD", "a b", "ä", &"r".repeat(41)] {
            assert!(check_remote_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name(RefKind::Tag, &"t".repeat(201)).is_err());
    }
}
