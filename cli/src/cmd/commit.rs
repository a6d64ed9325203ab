//! `rnt commit -m MSG [-f CHANGES] [--clock T] [CHANGE...]`: commit a change set.
//!
//! `--clock T` sets the new state's clock (Unix seconds) for a program that mentions `now`;
//! without it the clock is the later of the head's and the commit time. With no changes,
//! `--clock T` only moves the clock: a commit when some relation changes (rows enter or
//! leave a time window), "nothing to commit" otherwise. An earlier clock than the head's is
//! refused (exit 1): the clock never goes back. A committed state with a clock prints it on
//! a second line, `clock T (RFC 3339)`.
//!
//! Changes come from the file (`-` reads standard input) and then the arguments, each
//! argument one change. Every change is parsed and checked against the head's schemas
//! before anything is written, and an error names the change's place
//! (`changes.txt, line 3, column 14: ...`, `argument 2, line 1: ...`).

use crate::breakdown::Breakdown;
use crate::output::{write_outcome, Json, ReportFormat};
use crate::Context;
use clap::Args;
use rnt_db::change::{parse_change, parse_changes};
use rnt_db::{Change, CommitOutcome, Database, DbError};
use rnt_merkle::Counters;
use std::io::Write;
use std::time::Instant;

/// Arguments of `rnt commit`.
#[derive(Debug, Args)]
pub struct CommitArgs {
    /// The commit message.
    #[arg(short, long, value_name = "MSG")]
    message: String,
    /// When a denial refuses it, list up to N witnesses of each violated denial (a
    /// `(and more: --witnesses N)` says when there are more).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = crate::cmd::at_least_one)]
    witnesses: usize,
    /// A change file, one change per line (`-` reads standard input).
    #[arg(short = 'f', long = "file", value_name = "CHANGES")]
    file: Option<String>,
    /// Print the tree work the commit did (nodes written and read, entries read); with
    /// `--format json`, also where its time went (the commit-cost breakdown).
    #[arg(long)]
    stats: bool,
    /// Output: `table` (the `committed` line) or `json` (one object).
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
    /// The new state's clock, Unix seconds (a program that mentions `now`); never earlier
    /// than the head's. Default: the later of the head's clock and the commit time.
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    clock: Option<i64>,
    /// Changes such as `+orders(1, 7, 30)` (insert) or `-orders(1, 7, 25)` (delete).
    #[arg(value_name = "CHANGE")]
    changes: Vec<String>,
}

impl CommitArgs {
    /// The change file, if any (`-`: standard input).
    pub fn input_file(&self) -> Option<&std::path::Path> {
        self.file.as_deref().map(std::path::Path::new)
    }
}

/// Parses the changes and commits them.
pub fn run(context: &Context, args: CommitArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if args.message.trim().is_empty() {
        // As git does: a commit says why it was made.
        return Err(
            DbError::user("empty commit message: say what the commit does with -m MSG").into(),
        );
    }
    let json = args.format == ReportFormat::Json;
    let mut breakdown = (args.stats && json).then(Breakdown::start);
    let parsing = Instant::now();
    let changes = read_changes(context, &args)?;
    let db = {
        let opening = Instant::now();
        let db = context.open_for_writing()?.with_witnesses(args.witnesses);
        if let Some(breakdown) = &mut breakdown {
            breakdown.parse = opening - parsing;
            breakdown.open = opening.elapsed();
            breakdown.opened(&db);
        }
        db
    };
    let before = db.nodes().counters();
    let outcome = db.commit(changes, &args.message, args.clock)?;
    if json {
        let json = match &breakdown {
            Some(breakdown) => breakdown.json(&db, &outcome),
            None => outcome_json(&outcome),
        };
        write!(out, "{}", json.pretty())?;
        return Ok(());
    }
    write_outcome(out, &outcome)?;
    if matches!(outcome, CommitOutcome::Committed { .. }) {
        write_clock_line(out, &db)?;
    }
    if args.stats {
        write_stats(out, &db, before, &outcome)?;
    }
    Ok(())
}

/// The change set of the file (if any), then of the arguments.
fn read_changes(context: &Context, args: &CommitArgs) -> anyhow::Result<Vec<Change>> {
    let mut changes: Vec<Change> = Vec::new();
    if let Some(file) = &args.file {
        let (text, name) = read_change_file(context, file)?;
        changes
            .extend(parse_changes(&text, Some(&name)).map_err(|e| DbError::user(e.to_string()))?);
    }
    for (index, text) in args.changes.iter().enumerate() {
        let source = format!("argument {}", index + 1);
        changes.push(parse_change(text, Some(&source)).map_err(|e| DbError::user(e.to_string()))?);
    }
    Ok(changes)
}

/// `{"commit", "state"}` of a commit (`null` for nothing to commit).
fn outcome_json(outcome: &CommitOutcome) -> Json {
    match outcome {
        CommitOutcome::Committed { commit, state, .. } => Json::object([
            ("commit", Json::Str(commit.to_hex())),
            ("state", Json::Str(state.to_hex())),
        ]),
        CommitOutcome::NothingToCommit => {
            Json::object([("commit", Json::Null), ("state", Json::Null)])
        }
    }
}

/// Prints the head state's clock, `clock T (RFC 3339)`, when it has one (its program
/// mentions `now`); nothing otherwise.
pub fn write_clock_line(out: &mut dyn Write, db: &Database) -> anyhow::Result<()> {
    if let Some(clock) = db.head()?.state.clock {
        writeln!(out, "clock {clock} ({})", crate::time::rfc3339(clock))?;
    }
    Ok(())
}

/// Reads a change file (`-`: standard input); returns its text and the name to report.
fn read_change_file(context: &Context, file: &str) -> anyhow::Result<(String, String)> {
    let bytes = context.read_input(std::path::Path::new(file));
    let (bytes, name) = if file == "-" {
        let bytes = bytes.map_err(|e| {
            DbError::user(format!("cannot read the changes from standard input: {e}"))
        })?;
        (bytes, "standard input".to_string())
    } else {
        let bytes = bytes.map_err(|e| DbError::user(format!("cannot read {file}: {e}")))?;
        (bytes, file.to_string())
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        DbError::user(format!("{name}, line {line}: not valid UTF-8"))
    })?;
    Ok((text, name))
}

/// Prints the work the commit did: a `stats:` line of node-store totals since `before`
/// (`nodes_written=.. nodes_read=.. nodes_fetched=.. entries_read=.. bytes_written=..`), then one line per
/// operator the commit ran (`stats: counting order_plan: entries_read=.. ...`).
pub fn write_stats(
    out: &mut dyn Write,
    db: &Database,
    before: Counters,
    outcome: &CommitOutcome,
) -> std::io::Result<()> {
    let work = db.nodes().counters() - before;
    writeln!(
        out,
        "stats: nodes_written={} nodes_read={} nodes_fetched={} entries_read={} bytes_written={}",
        work.nodes_written,
        work.nodes_read,
        work.nodes_fetched,
        work.entries_read,
        work.bytes_written
    )?;
    if let CommitOutcome::Committed { stats, .. } = outcome {
        for stat in stats {
            writeln!(
                out,
                "stats: {} {}: entries_read={} nodes_read={} nodes_written={}",
                stat.operator,
                stat.relation,
                stat.entries_read,
                stat.nodes_read,
                stat.nodes_written
            )?;
        }
    }
    Ok(())
}
