//! `rnt log [REF] [-n N] [--relation R] [--format table|json]`: the history from REF (the
//! head by default) back along first parents, newest first; `--relation R` keeps the
//! commits whose state holds another tree for R than their first parent's (base or derived),
//! and `-n N` the first N of those.

use crate::output::{change_summary, write_table, Json, ReportFormat, SHORT_HEX_DIGITS};
use crate::time::rfc3339;
use crate::Context;
use clap::Args;
use rnt_db::{Database, DbError, Snapshot};
use rnt_merkle::{Commit, RelationEntry, State};
use rnt_store::Address;
use std::io::Write;

/// Arguments of `rnt log`.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Where the history starts (default: HEAD).
    #[arg(value_name = "REF")]
    reference: Option<String>,
    /// At most this many commits.
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    max_count: Option<usize>,
    /// Only commits whose changes touched this relation (base or derived).
    #[arg(long, value_name = "R")]
    relation: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// Prints the log.
pub fn run(context: &Context, args: LogArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let start = start_commit(&db, args.reference.as_deref())?;
    let no_commits = start.is_none();
    let log = walk(&db, start, args.relation.as_deref(), args.max_count)?;
    if let Some(relation) = &args.relation {
        if log.is_empty() && args.max_count != Some(0) {
            require_known(&db, args.reference.as_deref(), relation)?;
        }
    }
    // The clock of each commit's state (a state whose program mentions `now` has one).
    let clocks = log
        .iter()
        .map(|(_, commit)| {
            State::read(db.chunks().as_ref(), &commit.state_address())
                .map(|state| state.clock)
                .map_err(DbError::from)
        })
        .collect::<Result<Vec<Option<i64>>, DbError>>()?;
    let clocked = clocks.iter().any(Option::is_some);
    match args.format {
        ReportFormat::Json => {
            let entries = log
                .iter()
                .zip(&clocks)
                .map(|((id, commit), clock)| commit_json(id, commit, *clock))
                .collect();
            write!(out, "{}", Json::Array(entries).pretty())?;
        }
        ReportFormat::Table if no_commits => writeln!(out, "no commits yet")?,
        // Every commit was filtered out (`--relation`, `-n 0`): like git, print nothing.
        ReportFormat::Table if log.is_empty() => {}
        ReportFormat::Table => {
            // The clock column appears when some state listed has a clock.
            let rows: Vec<Vec<String>> = log
                .iter()
                .zip(&clocks)
                .map(|((id, commit), clock)| {
                    let mut row = vec![
                        id.short_hex(SHORT_HEX_DIGITS),
                        commit.state_address().short_hex(SHORT_HEX_DIGITS),
                        rfc3339(commit.time),
                    ];
                    if clocked {
                        row.push(clock.map_or("-".to_string(), |c| c.to_string()));
                    }
                    row.push(first_line(&commit.message));
                    row.push(change_summary(&commit.changes));
                    row
                })
                .collect();
            let headers: &[&str] = if clocked {
                &["commit", "state", "time", "clock", "message", "changes"]
            } else {
                &["commit", "state", "time", "message", "changes"]
            };
            write_table(out, headers, &[], &rows)?;
        }
    }
    Ok(())
}

/// The commit the history starts from: `reference`'s, or the head's when `None` (none in a
/// store without commits).
fn start_commit(db: &Database, reference: Option<&str>) -> anyhow::Result<Option<Address>> {
    let Some(reference) = reference else {
        return Ok(db.head_commit()?);
    };
    let start = db.resolve(reference)?;
    let commit = start.commit.ok_or_else(|| {
        DbError::user(format!(
            "`{reference}` names a state, not a commit, so it has no history"
        ))
    })?;
    Ok(Some(commit))
}

/// The first-parent history from `start`, newest first, read lazily: with `relation`, only
/// the commits that changed it — whose state holds other tuples of it than the state before
/// (the parent's, or nothing for the root commit); with `max`, at most that many. Reads each
/// commit (and, with `relation`, each state) once and stops at the `max`-th kept commit.
/// Comparing tree roots matches the change counts for base relations, and also catches
/// derived ones, which a commit maintains and a `define` backfills.
fn walk(
    db: &Database,
    start: Option<Address>,
    relation: Option<&str>,
    max: Option<usize>,
) -> anyhow::Result<Vec<(Address, Commit)>> {
    let chunks = db.chunks().as_ref();
    let content_of = |commit: &Commit, relation: &str| -> anyhow::Result<Option<[u8; 32]>> {
        let state = State::read(chunks, &commit.state_address()).map_err(DbError::from)?;
        Ok(content(state.relation(relation)))
    };
    let mut out = Vec::new();
    let mut next = start.map(|id| {
        Commit::read(chunks, &id)
            .map(|commit| (id, commit))
            .map_err(DbError::from)
    });
    // With `relation`: the content of `next`'s state, once its child has read it.
    let mut next_content: Option<Option<[u8; 32]>> = None;
    while let Some(entry) = next.take() {
        if max.is_some_and(|max| out.len() >= max) {
            break;
        }
        let (id, commit) = entry?;
        let parent = commit.parent_addresses().first().copied();
        next = parent.map(|id| {
            Commit::read(chunks, &id)
                .map(|commit| (id, commit))
                .map_err(DbError::from)
        });
        let keep = match relation {
            None => true,
            Some(relation) => {
                let mine = match next_content.take() {
                    Some(known) => known,
                    None => content_of(&commit, relation)?,
                };
                let before = match next.take() {
                    Some(Ok((parent_id, parent))) => {
                        let before = content_of(&parent, relation)?;
                        next = Some(Ok((parent_id, parent)));
                        before
                    }
                    // Whether this commit changed the relation depends on its parent.
                    Some(Err(error)) => return Err(error.into()),
                    None => None,
                };
                next_content = Some(before);
                mine != before
            }
        };
        if keep {
            out.push((id, commit));
        }
    }
    Ok(out)
}

/// The root of a relation's tuples in one state: `None` when the state does not declare
/// it, keeps no tree for it (an ephemeral relation or a denial) or its tree is empty, so
/// declaring or dropping an empty relation changes nothing.
fn content(entry: Option<&RelationEntry>) -> Option<[u8; 32]> {
    entry
        .filter(|entry| entry.count != Some(0))
        .and_then(|entry| entry.root)
}

/// A relation no commit of the history touched must at least be declared where the history
/// starts; otherwise the name is a typo, reported as an unknown relation. (A relation that
/// some commit touched is known even if a later program dropped it.)
fn require_known(db: &Database, reference: Option<&str>, relation: &str) -> anyhow::Result<()> {
    let start: Snapshot = crate::cmd::snapshot_at(db, reference)?;
    start.require(relation)?;
    Ok(())
}

/// `{"commit", "state", "parents", "time", "message", "changes", "stats"}` of one commit.
fn commit_json(id: &Address, commit: &Commit, clock: Option<i64>) -> Json {
    let changes = commit
        .changes
        .iter()
        .map(|c| {
            let counts = Json::object([
                ("inserted", Json::UInt(c.inserted)),
                ("deleted", Json::UInt(c.deleted)),
            ]);
            (c.relation.clone(), counts)
        })
        .collect();
    let mut fields = vec![
        ("commit", Json::Str(id.to_hex())),
        ("state", Json::Str(commit.state_address().to_hex())),
        (
            "parents",
            Json::Array(
                commit
                    .parent_addresses()
                    .iter()
                    .map(|p| Json::Str(p.to_hex()))
                    .collect(),
            ),
        ),
        ("time", Json::Str(rfc3339(commit.time))),
        ("message", Json::Str(commit.message.clone())),
        ("changes", Json::Object(changes)),
        (
            "stats",
            Json::Array(commit.stats.iter().map(stat_json).collect()),
        ),
    ];
    // The state's clock, when its program mentions `now` (the key exists only then).
    if let Some(clock) = clock {
        fields.push(("clock", Json::Int(clock)));
    }
    Json::object(fields)
}

/// One operator's work in a commit: `{"relation", "operator", "entries_read", "nodes_read",
/// "nodes_written"}`.
fn stat_json(stat: &rnt_merkle::OperatorStat) -> Json {
    Json::object([
        ("relation", Json::Str(stat.relation.clone())),
        ("operator", Json::Str(stat.operator.clone())),
        ("entries_read", Json::UInt(stat.entries_read)),
        ("nodes_read", Json::UInt(stat.nodes_read)),
        ("nodes_written", Json::UInt(stat.nodes_written)),
    ])
}

/// A message's first line, marked with `…` when more lines follow.
fn first_line(message: &str) -> String {
    let mut lines = message.lines();
    let first = lines.next().unwrap_or("").to_string();
    if lines.next().is_some() {
        format!("{first} …")
    } else {
        first
    }
}
