//! Resolving what a user names as a state: `HEAD`, `HEAD~n`, a branch, or a unique hex
//! prefix of a commit id or state hash. It reads the chunk store and its refs only, never
//! the `Database`.

use crate::db::snapshot::Snapshot;
use crate::{DbError, DbResult};
use rnt_merkle::objects::{object_kind, ObjectKind};
use rnt_merkle::Commit;
use rnt_store::{normalize_hex_prefix, Address, ChunkStore};

/// The longest branch name, in bytes.
const BRANCH_NAME_BYTES_MAX: usize = 255;

/// Resolves `reference` to a snapshot of `chunks`, whose `HEAD` is the commit `head`.
pub fn resolve(
    chunks: &dyn ChunkStore,
    head: Option<Address>,
    reference: &str,
) -> DbResult<Snapshot> {
    let reference = reference.trim();
    let (base, back) = split_ancestry(reference)?;
    let start = resolve_base(chunks, head, base)?;
    if back == 0 {
        return Ok(start);
    }
    let mut commit = start.commit.ok_or_else(|| {
        DbError::user(format!(
            "`{reference}`: `{base}` names a state, not a commit, so it has no ancestors"
        ))
    })?;
    for step in 0..back {
        let parents = Commit::read(chunks, &commit)?.parent_addresses();
        commit = *parents.first().ok_or_else(|| {
            DbError::user(format!(
                "`{reference}`: the history has only {} commit(s) before `{base}`",
                step
            ))
        })?;
    }
    Snapshot::of_commit(chunks, commit)
}

/// The commit branch `name` points at, if the name is valid and the branch exists.
pub fn branch(chunks: &dyn ChunkStore, name: &str) -> DbResult<Option<Address>> {
    let valid = !name.is_empty()
        && name.len() <= BRANCH_NAME_BYTES_MAX
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'));
    if !valid {
        return Ok(None);
    }
    Ok(chunks.get_ref(name)?)
}

/// Splits `NAME~n` into `NAME` and `n` (`NAME~` alone means one step).
fn split_ancestry(reference: &str) -> DbResult<(&str, u64)> {
    match reference.split_once('~') {
        None => Ok((reference, 0)),
        Some((base, "")) => Ok((base, 1)),
        Some((base, n)) => n.parse::<u64>().map(|n| (base, n)).map_err(|_| {
            DbError::user(format!(
                "`{reference}`: expected a number of steps after `~`"
            ))
        }),
    }
}

fn resolve_base(chunks: &dyn ChunkStore, head: Option<Address>, name: &str) -> DbResult<Snapshot> {
    if name.is_empty() {
        return Err(DbError::user(
            "empty reference: name a commit, a state, HEAD or a branch",
        ));
    }
    if name == "HEAD" {
        return match head {
            Some(commit) => Snapshot::of_commit(chunks, commit),
            None => Err(DbError::user("HEAD: the store has no commits yet")),
        };
    }
    if let Some(commit) = branch(chunks, name)? {
        return Snapshot::of_commit(chunks, commit);
    }
    let looks_hex = name.bytes().all(|b| b.is_ascii_hexdigit());
    if !looks_hex {
        return Err(DbError::user(format!(
            "unknown reference `{name}`: not HEAD, a branch, or a hex commit id or state hash"
        )));
    }
    let prefix = normalize_hex_prefix(name).map_err(|e| DbError::user(e.to_string()))?;
    let mut matches: Vec<(Address, ObjectKind)> = Vec::new();
    for address in chunks.addresses_with_prefix(&prefix)? {
        let bytes = chunks.get(&address)?;
        let kind = object_kind(&bytes);
        if matches!(kind, ObjectKind::Commit | ObjectKind::State) {
            matches.push((address, kind));
        }
    }
    match matches.as_slice() {
        [] => Err(DbError::user(format!(
            "unknown reference `{name}`: no commit or state has that prefix"
        ))),
        [(address, ObjectKind::Commit)] => Snapshot::of_commit(chunks, *address),
        [(address, _)] => Snapshot::load(chunks, None, *address),
        many => {
            let listed: Vec<String> = many
                .iter()
                .take(5)
                .map(|(a, k)| {
                    format!(
                        "{} ({})",
                        a.short_hex(12),
                        if *k == ObjectKind::Commit {
                            "commit"
                        } else {
                            "state"
                        }
                    )
                })
                .collect();
            Err(DbError::user(format!(
                "ambiguous reference `{name}`: {} objects match ({}); use more digits",
                many.len(),
                listed.join(", ")
            )))
        }
    }
}
