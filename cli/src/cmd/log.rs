//! `rnt log [--format table|json]`: the history from the head back, newest first.

use crate::output::{change_summary, write_table, Json, ReportFormat, SHORT_HEX_DIGITS};
use crate::time::rfc3339;
use crate::Context;
use clap::Args;
use rnt_merkle::Commit;
use rnt_store::Address;
use std::io::Write;

/// Arguments of `rnt log`.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// Prints the log.
pub fn run(context: &Context, args: LogArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let log = db.log()?;
    match args.format {
        ReportFormat::Json => {
            let entries = log
                .iter()
                .map(|(id, commit)| commit_json(id, commit))
                .collect();
            write!(out, "{}", Json::Array(entries).pretty())?;
        }
        ReportFormat::Table if log.is_empty() => writeln!(out, "no commits yet")?,
        ReportFormat::Table => {
            let rows: Vec<Vec<String>> = log
                .iter()
                .map(|(id, commit)| {
                    vec![
                        id.short_hex(SHORT_HEX_DIGITS),
                        commit.state_address().short_hex(SHORT_HEX_DIGITS),
                        rfc3339(commit.time),
                        first_line(&commit.message),
                        change_summary(&commit.changes),
                    ]
                })
                .collect();
            write_table(
                out,
                &["commit", "state", "time", "message", "changes"],
                &[],
                &rows,
            )?;
        }
    }
    Ok(())
}

/// `{"commit", "state", "parents", "time", "message", "changes", "stats"}` of one commit.
fn commit_json(id: &Address, commit: &Commit) -> Json {
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
    Json::object([
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
    ])
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
