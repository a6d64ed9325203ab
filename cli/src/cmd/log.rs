//! `rnt log [REF] [-n N] [--relation R] [--graph] [--all] [--views] [--format table|json]`:
//! the history from REF (the head by default) back along first parents, newest first;
//! `--relation R` keeps the commits whose state holds another tree for R than their first
//! parent's (base or derived), and `-n N` the first N of those.
//!
//! `--graph` follows every parent and draws the commit graph in ASCII as git does (`*` a
//! commit, `|\` a merge, `|/` lines joining), one line a commit: its id, the refs at it,
//! its message and its change counts; `--all` starts from every branch and tag instead of
//! REF (with or without `--graph`). Both list commits children first, a line of history
//! kept together (`Database::commit_graph`). `--views` adds each commit's view change
//! counts (from the view trees' diff with the first parent's): a `views` column, or a
//! `views` key in JSON, whose shape is otherwise the same in every mode.
//!
//! The SQL compiler's helper relations (names starting with `_`) are left out of every
//! per-relation listing — the change counts, the views' counts, JSON's `stats` — unless
//! `--internal` is given; `--relation _NAME` follows one all the same.

use crate::output::{change_summary, write_table, Json, ReportFormat, SHORT_HEX_DIGITS};
use crate::time::rfc3339;
use crate::Context;
use clap::Args;
use rnt_db::{is_internal, Database, DbError, Snapshot};
use rnt_merkle::{ChangeCount, Commit, RelationEntry, State};
use rnt_store::Address;
use std::collections::HashMap;
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
    #[arg(long, value_name = "R", conflicts_with_all = ["graph", "all"])]
    relation: Option<String>,
    /// Follow every parent and draw the commit graph (ASCII, as git draws it).
    #[arg(long)]
    graph: bool,
    /// Start from every branch and tag instead of REF.
    #[arg(long, conflicts_with = "reference")]
    all: bool,
    /// Add each commit's view change counts.
    #[arg(long)]
    views: bool,
    /// Also list the SQL compiler's helper relations (names starting with `_`) in the
    /// change counts, the views' counts and JSON's `stats`.
    #[arg(long)]
    internal: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// Prints the log.
pub fn run(context: &Context, args: LogArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let (mut log, no_commits) = if args.graph || args.all {
        let tips = match args.all {
            true => every_tip(&db)?,
            false => start_commit(&db, args.reference.as_deref())?
                .into_iter()
                .collect(),
        };
        let mut log = db.commit_graph(&tips)?;
        log.truncate(args.max_count.unwrap_or(usize::MAX));
        (log, tips.is_empty())
    } else {
        let start = start_commit(&db, args.reference.as_deref())?;
        let log = walk(&db, start, args.relation.as_deref(), args.max_count)?;
        if let Some(relation) = &args.relation {
            if log.is_empty() && args.max_count != Some(0) {
                require_known(&db, args.reference.as_deref(), relation)?;
            }
        }
        (log, start.is_none())
    };
    if !args.internal {
        for (_, commit) in &mut log {
            commit.changes.retain(|c| !is_internal(&c.relation));
            commit.stats.retain(|s| !is_internal(&s.relation));
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
    let views = match args.views {
        true => Some(
            log.iter()
                .map(|(id, commit)| view_counts(&db, *id, commit, args.internal))
                .collect::<anyhow::Result<Vec<_>>>()?,
        ),
        false => None,
    };
    // The relations each commit altered (`rnt alter`), marked in the table and the graph.
    let altered = match args.format {
        ReportFormat::Table => log
            .iter()
            .map(|(_, commit)| altered_relations(&db, commit))
            .collect::<anyhow::Result<Vec<_>>>()?,
        ReportFormat::Json => Vec::new(),
    };
    match args.format {
        ReportFormat::Json => {
            let entries = log
                .iter()
                .zip(&clocks)
                .enumerate()
                .map(|(i, ((id, commit), clock))| {
                    commit_json(id, commit, *clock, views.as_ref().map(|v| &v[i][..]))
                })
                .collect();
            write!(out, "{}", Json::Array(entries).pretty())?;
        }
        ReportFormat::Table if no_commits => writeln!(out, "no commits yet")?,
        // Every commit was filtered out (`--relation`, `-n 0`): like git, print nothing.
        ReportFormat::Table if log.is_empty() => {}
        ReportFormat::Table if args.graph => {
            write_graph(out, &db, &log, &altered, views.as_deref())?
        }
        ReportFormat::Table => write_log_table(out, &log, &clocks, &altered, views.as_deref())?,
    }
    Ok(())
}

/// The log as a table: commit, state, time, the clock when some state listed has one,
/// message, changes, and the views' changes when asked for.
fn write_log_table(
    out: &mut dyn Write,
    log: &[(Address, Commit)],
    clocks: &[Option<i64>],
    altered: &[String],
    views: Option<&[Vec<ChangeCount>]>,
) -> anyhow::Result<()> {
    let clocked = clocks.iter().any(Option::is_some);
    let rows: Vec<Vec<String>> = log
        .iter()
        .zip(clocks)
        .enumerate()
        .map(|(i, ((id, commit), clock))| {
            let mut row = vec![
                id.short_hex(SHORT_HEX_DIGITS),
                commit.state_address().short_hex(SHORT_HEX_DIGITS),
                rfc3339(commit.time),
            ];
            if clocked {
                row.push(clock.map_or("-".to_string(), |c| c.to_string()));
            }
            row.push(first_line(&commit.message));
            row.push(match (commit.changes.is_empty(), altered[i].is_empty()) {
                (_, true) => change_summary(&commit.changes),
                (true, false) => altered[i].clone(),
                (false, false) => format!("{}, {}", change_summary(&commit.changes), altered[i]),
            });
            if let Some(views) = views {
                row.push(change_summary(&views[i]));
            }
            row
        })
        .collect();
    let mut headers = vec!["commit", "state", "time"];
    if clocked {
        headers.push("clock");
    }
    headers.extend(["message", "changes"]);
    if views.is_some() {
        headers.push("views");
    }
    write_table(out, &headers, &[], &rows)?;
    Ok(())
}

/// The log as the commit graph: each commit's line is its id, the refs at it (`HEAD ->
/// main, side, tag: v1`), its message's first line and its change counts in brackets (and
/// its views', when asked for).
fn write_graph(
    out: &mut dyn Write,
    db: &Database,
    log: &[(Address, Commit)],
    altered: &[String],
    views: Option<&[Vec<ChangeCount>]>,
) -> anyhow::Result<()> {
    let decorations = decorations(db)?;
    let edges: Vec<(Address, Vec<Address>)> = log
        .iter()
        .map(|(id, commit)| (*id, commit.parent_addresses()))
        .collect();
    for line in crate::graph::draw(&edges) {
        let Some(i) = line.commit else {
            writeln!(out, "{}", line.graph)?;
            continue;
        };
        let (id, commit) = &log[i];
        let refs = decorations
            .get(id)
            .map(|names| format!("({}) ", names.join(", ")))
            .unwrap_or_default();
        let mut text = format!(
            "{}{} {refs}{}",
            line.graph,
            id.short_hex(SHORT_HEX_DIGITS),
            first_line(&commit.message)
        );
        if !commit.changes.is_empty() {
            text.push_str(&format!("  [{}]", change_summary(&commit.changes)));
        }
        if !altered[i].is_empty() {
            text.push_str(&format!("  [{}]", altered[i]));
        }
        if let Some(views) = views.filter(|v| !v[i].is_empty()) {
            text.push_str(&format!("  [views: {}]", change_summary(&views[i])));
        }
        writeln!(out, "{text}")?;
    }
    Ok(())
}

/// The names at each commit, as git decorates a graph: `HEAD -> BRANCH` for the current
/// branch, then the other branches, then `tag: NAME`, each group sorted.
fn decorations(db: &Database) -> anyhow::Result<HashMap<Address, Vec<String>>> {
    let current = db.current_branch()?;
    let mut names: HashMap<Address, Vec<String>> = HashMap::new();
    let branches = db.branches()?;
    for (name, commit) in branches.iter().filter(|(name, _)| *name == current) {
        names
            .entry(*commit)
            .or_default()
            .push(format!("HEAD -> {name}"));
    }
    for (name, commit) in branches.iter().filter(|(name, _)| *name != current) {
        names.entry(*commit).or_default().push(name.clone());
    }
    for (name, commit) in db.tags()? {
        names
            .entry(commit)
            .or_default()
            .push(format!("tag: {name}"));
    }
    Ok(names)
}

/// Every branch's and tag's commit (the tips `--all` starts from).
fn every_tip(db: &Database) -> anyhow::Result<Vec<Address>> {
    let mut tips: Vec<Address> = db
        .branches()?
        .into_iter()
        .chain(db.tags()?)
        .map(|(_, commit)| commit)
        .collect();
    tips.sort();
    tips.dedup();
    Ok(tips)
}

/// The view change counts of a commit, from its first parent's state (the empty state for
/// the root commit); the SQL compiler's helpers' only with `internal`.
fn view_counts(
    db: &Database,
    id: Address,
    commit: &Commit,
    internal: bool,
) -> anyhow::Result<Vec<ChangeCount>> {
    let to = db.snapshot_of_commit(id)?;
    let from = match commit.parent_addresses().first() {
        Some(parent) => db.snapshot_of_commit(*parent)?,
        None => Snapshot::empty()?,
    };
    let mut counts = db.view_change_counts(&from, &to)?;
    counts.retain(|c| crate::internal::shown(&c.relation, internal));
    Ok(counts)
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

/// `{"commit", "state", "parents", "time", "message", "changes", "stats"}` of one commit,
/// then `"clock"` when its state has one and `"views"` (as `"changes"`) when asked for.
fn commit_json(
    id: &Address,
    commit: &Commit,
    clock: Option<i64>,
    views: Option<&[ChangeCount]>,
) -> Json {
    let counts = |changes: &[ChangeCount]| {
        Json::Object(
            changes
                .iter()
                .map(|c| {
                    let counts = Json::object([
                        ("inserted", Json::UInt(c.inserted)),
                        ("deleted", Json::UInt(c.deleted)),
                    ]);
                    (c.relation.clone(), counts)
                })
                .collect(),
        )
    };
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
        ("changes", counts(&commit.changes)),
        (
            "stats",
            Json::Array(commit.stats.iter().map(stat_json).collect()),
        ),
    ];
    // The state's clock, when its program mentions `now` (the key exists only then).
    if let Some(clock) = clock {
        fields.push(("clock", Json::Int(clock)));
    }
    if let Some(views) = views {
        fields.push(("views", counts(views)));
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

/// The mark of a commit that altered base relations (`alter: orders`), empty for others.
fn altered_relations(db: &Database, commit: &Commit) -> anyhow::Result<String> {
    let changes = db.schema_changes_of(commit)?;
    if changes.is_empty() {
        return Ok(String::new());
    }
    let names: Vec<&str> = changes.iter().map(|c| c.relation.as_str()).collect();
    Ok(format!("alter: {}", names.join(", ")))
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
