//! `rnt reflog [-n N] [--format table|json]`: every value the current branch has held,
//! newest first, with when and why it moved there. JSON: an array, newest first, of
//! `{"commit", "time", "action"}`.

use crate::output::{write_table, Json, ReportFormat, SHORT_HEX_DIGITS};
use crate::time::rfc3339;
use crate::Context;
use clap::Args;
use std::io::Write;

/// Arguments of `rnt reflog`.
#[derive(Debug, Args)]
pub struct ReflogArgs {
    /// At most this many entries.
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    max_count: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// Prints the reflog.
pub fn run(context: &Context, args: ReflogArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let branch = db.current_branch()?;
    let entries = db.reflog(args.max_count)?;
    match args.format {
        ReportFormat::Json => {
            let list = entries
                .iter()
                .map(|e| {
                    Json::object([
                        ("commit", Json::Str(e.commit.to_hex())),
                        ("time", Json::Str(rfc3339(e.time))),
                        ("action", Json::Str(e.action.clone())),
                    ])
                })
                .collect();
            write!(out, "{}", Json::Array(list).pretty())?;
        }
        ReportFormat::Table if entries.is_empty() && args.max_count != Some(0) => {
            writeln!(out, "branch {branch} has no commits yet")?;
        }
        ReportFormat::Table if entries.is_empty() => {}
        ReportFormat::Table => {
            let rows: Vec<Vec<String>> = entries
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    vec![
                        format!("{branch}@{{{i}}}"),
                        e.commit.short_hex(SHORT_HEX_DIGITS),
                        rfc3339(e.time),
                        e.action.lines().next().unwrap_or("").to_string(),
                    ]
                })
                .collect();
            write_table(out, &["entry", "commit", "time", "action"], &[], &rows)?;
        }
    }
    Ok(())
}
