//! `rnt fetch NAME [--format table|json]`: copy into this store every chunk remote NAME's
//! branches reach that it lacks (every subtree it holds is skipped), then move the
//! remote-tracking refs `NAME/BRANCH` (usable wherever a REF is: `rnt log origin/main`,
//! `rnt merge origin/main`). Prints what was sent and each tracking ref that moved.
//! JSON: `{"remote", "chunks", "bytes", "skipped", "refs": [{"branch", "old", "new"}]}`
//! (`old`/`new` commit ids, `null` for a new or removed tracking ref; `bytes` uncompressed).

use crate::output::{sent_fields, sent_text, Json, ReportFormat, SHORT_HEX_DIGITS};
use crate::Context;
use clap::Args;
use rnt_db::{DbError, FetchOutcome};
use rnt_store::Address;
use std::io::Write;

/// Arguments of `rnt fetch`.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// The remote (see `rnt remote -v`).
    #[arg(value_name = "NAME")]
    name: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// Fetches.
pub fn run(context: &Context, args: FetchArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let path = crate::store_open::locate(context.store.as_deref())?;
    let (line, progress) = crate::progress::transfer(&format!("fetching from {}", args.name));
    let db = crate::store_open::open_at(&path, true)?.with_transfer_progress(progress);
    let remote = crate::store_open::open_remote(&db.remote_url(&args.name)?, &path, false)?;
    let outcome = db.fetch(&args.name, remote.as_ref());
    crate::progress::finish(&line);
    let outcome = outcome?;
    write_fetched(out, &args.name, &outcome, args.format)
}

/// Prints a fetch's outcome (also `pull`'s first part).
pub fn write_fetched(
    out: &mut dyn Write,
    name: &str,
    outcome: &FetchOutcome,
    format: ReportFormat,
) -> anyhow::Result<()> {
    match format {
        ReportFormat::Json => {
            let refs = outcome
                .updated
                .iter()
                .map(|update| {
                    Json::object([
                        ("branch", Json::Str(update.branch.clone())),
                        ("old", Json::opt_str(update.old.map(|a| a.to_hex()))),
                        ("new", Json::opt_str(update.new.map(|a| a.to_hex()))),
                    ])
                })
                .collect();
            let mut fields = vec![("remote", Json::Str(name.to_string()))];
            fields.extend(sent_fields(&outcome.sent));
            fields.push(("refs", Json::Array(refs)));
            write!(out, "{}", Json::object(fields).pretty())
                .map_err(|e| DbError::Io(e.to_string()))?;
        }
        ReportFormat::Table => {
            writeln!(out, "fetched {} from {name}", sent_text(&outcome.sent))?;
            for update in &outcome.updated {
                writeln!(
                    out,
                    "  {name}/{}: {}",
                    update.branch,
                    move_text(update.old, update.new)
                )?;
            }
        }
    }
    Ok(())
}

/// A ref's move for people: `a1b2… → c3d4…`, `new at c3d4…`, `removed (was a1b2…)`.
pub fn move_text(old: Option<Address>, new: Option<Address>) -> String {
    let short = |a: Address| a.short_hex(SHORT_HEX_DIGITS);
    match (old, new) {
        (Some(old), Some(new)) => format!("{} -> {}", short(old), short(new)),
        (None, Some(new)) => format!("new at {}", short(new)),
        (Some(old), None) => format!("removed (was {})", short(old)),
        (None, None) => "unchanged".to_string(),
    }
}
