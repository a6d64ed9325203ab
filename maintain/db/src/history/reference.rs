//! Resolving what a user names as a state: `HEAD`, a branch, a tag, a remote-tracking ref
//! (`origin/main`: remote `origin`'s `main` at the last fetch or push), or a unique hex prefix of a
//! commit id or state hash, followed by any number of steps back along first parents —
//! `^` (one step), `~n` (n steps), `~` (one step) — as in `HEAD~2`, `a1b2c3d4^`,
//! `HEAD^~1`, `HEAD^^`. It reads the chunk store and its refs only, never the `Database`.

use crate::history::refs;
use crate::snapshot::Snapshot;
use crate::{DbError, DbResult};
use rnt_merkle::objects::{object_kind, ObjectKind};
use rnt_merkle::Commit;
use rnt_store::{normalize_hex_prefix, Address, ChunkStore};

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
                "`{reference}`: past the root commit; the history has only {step} commit(s) before `{base}`"
            ))
        })?;
    }
    Snapshot::of_commit(chunks, commit)
}

/// Splits `NAME` followed by ancestry steps into `NAME` and the total number of first-parent
/// steps: each `^` is one, each `~n` is n, and a `~` not followed by digits is one.
fn split_ancestry(reference: &str) -> DbResult<(&str, u64)> {
    let Some(at) = reference.find(['^', '~']) else {
        return Ok((reference, 0));
    };
    let (base, mut rest) = reference.split_at(at);
    let mut steps: u64 = 0;
    while let Some(c) = rest.chars().next() {
        rest = &rest[c.len_utf8()..];
        let step = match c {
            '^' => 1,
            '~' => {
                let digits =
                    rest.len() - rest.trim_start_matches(|d: char| d.is_ascii_digit()).len();
                let (number, after) = rest.split_at(digits);
                rest = after;
                if number.is_empty() {
                    1
                } else {
                    number
                        .parse::<u64>()
                        .map_err(|_| too_many_steps(reference))?
                }
            }
            _ => {
                return Err(DbError::user(format!(
                    "`{reference}`: expected `^`, or `~` and an optional number of steps, after `{base}`; found `{c}`"
                )))
            }
        };
        steps = steps
            .checked_add(step)
            .ok_or_else(|| too_many_steps(reference))?;
    }
    Ok((base, steps))
}

/// The error for a step count that does not fit a `u64`.
fn too_many_steps(reference: &str) -> DbError {
    DbError::user(format!("`{reference}`: too many steps back"))
}

fn resolve_base(chunks: &dyn ChunkStore, head: Option<Address>, name: &str) -> DbResult<Snapshot> {
    if name.is_empty() {
        return Err(DbError::user(
            "empty reference: name a commit, a state, HEAD, a branch or a tag",
        ));
    }
    if name == "HEAD" {
        return match head {
            Some(commit) => Snapshot::of_commit(chunks, commit),
            None => Err(DbError::user("HEAD: the store has no commits yet")),
        };
    }
    if let Some(tip) = refs::branch_tip(chunks, name)? {
        return Snapshot::of_commit(chunks, tip.commit);
    }
    if let Some(commit) = refs::tag_commit(chunks, name)? {
        return Snapshot::of_commit(chunks, commit);
    }
    if let Some(commit) = refs::tracking_commit(chunks, name)? {
        return Snapshot::of_commit(chunks, commit);
    }
    let looks_hex = name.bytes().all(|b| b.is_ascii_hexdigit());
    if !looks_hex {
        return Err(DbError::user(format!(
            "unknown reference `{name}`: not HEAD, a branch, a tag, or a hex commit id or state hash"
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

#[cfg(test)]
mod tests {
    use super::split_ancestry;

    #[test]
    fn ancestry_steps_add_up() {
        assert_eq!(split_ancestry("HEAD").unwrap(), ("HEAD", 0));
        assert_eq!(split_ancestry("HEAD~").unwrap(), ("HEAD", 1));
        assert_eq!(split_ancestry("HEAD~3").unwrap(), ("HEAD", 3));
        assert_eq!(split_ancestry("a1b2c3d4^").unwrap(), ("a1b2c3d4", 1));
        assert_eq!(split_ancestry("HEAD^^").unwrap(), ("HEAD", 2));
        assert_eq!(split_ancestry("HEAD^~1").unwrap(), ("HEAD", 2));
        assert_eq!(split_ancestry("main~2^~~10").unwrap(), ("main", 14));
        assert_eq!(split_ancestry("HEAD~0").unwrap(), ("HEAD", 0));
    }

    #[test]
    fn malformed_steps_are_user_errors() {
        for bad in [
            "HEAD~x",
            "HEAD^x",
            "HEAD~1é",
            "HEAD~99999999999999999999999",
        ] {
            let error = split_ancestry(bad).unwrap_err();
            assert!(error.to_string().contains(bad), "{bad}: {error}");
        }
    }
}
