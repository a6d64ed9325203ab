//! `rnt push NAME [BRANCH] [--force] [--format table|json]`: copy to remote NAME every chunk
//! local BRANCH (default: the current branch) reaches that the remote lacks, then move the
//! remote's BRANCH by compare-and-swap from the value read — after every chunk it will
//! name is durable there. Refused (exit 1) unless the remote's BRANCH is in the local
//! branch's history (a fast-forward) or `--force`; a push that lost the race to another
//! writer is reported (exit 1) and the other writer's value kept. JSON: `{"remote",
//! "branch", "old", "new", "kind", "chunks", "bytes", "skipped"}` with `kind` one of
//! `created`, `fast-forward`, `forced`, `up-to-date` (`bytes` uncompressed).
//!
//! The first push to a remote where nothing is yet (no folder, an empty folder, or an
//! `s3://` prefix without objects) creates the store there, as Dolt's first push does, and
//! says so on stderr; something in the way that is not an rnt store is refused (exit 1).

use crate::cmd::fetch::move_text;
use crate::output::{sent_fields, sent_text, Json, ReportFormat};
use crate::Context;
use clap::Args;
use rnt_db::{DbError, PushKind};
use std::io::Write;

/// Arguments of `rnt push`.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// The remote (see `rnt remote -v`).
    #[arg(value_name = "NAME")]
    name: String,
    /// The branch to push (default: the current branch); the remote's branch of the same
    /// name moves.
    #[arg(value_name = "BRANCH")]
    branch: Option<String>,
    /// Move the remote's branch even when it is not a fast-forward (its commits that are
    /// not in the local branch are no longer on it; its reflog keeps them).
    #[arg(long)]
    force: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// Pushes.
pub fn run(context: &Context, args: PushArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let path = crate::store_open::locate(context.store.as_deref())?;
    let db = crate::store_open::open_at(&path, true)?;
    let branch = match args.branch {
        Some(branch) => branch,
        None => db.current_branch()?,
    };
    let location = db.remote_url(&args.name)?;
    // Only a push that can go on creates the store (a missing branch fails below).
    let pushable = db.branch(&branch)?.is_some();
    if pushable && crate::store_open::create_remote_if_vacant(&location)? {
        eprintln!("note: created an empty rnt store at {location} for the first push");
    }
    let remote = crate::store_open::open_remote(&location, &path, true)?;
    let (line, progress) = crate::progress::transfer(&format!("pushing {branch} to {}", args.name));
    let outcome =
        db.with_transfer_progress(progress)
            .push(&args.name, remote.as_ref(), &branch, args.force);
    crate::progress::finish(&line);
    let outcome = outcome?;
    let kind = match outcome.kind {
        PushKind::UpToDate => "up-to-date",
        PushKind::Created => "created",
        PushKind::FastForward => "fast-forward",
        PushKind::Forced => "forced",
    };
    match args.format {
        ReportFormat::Json => {
            let mut fields = vec![
                ("remote", Json::Str(args.name.clone())),
                ("branch", Json::Str(outcome.branch.clone())),
                ("old", Json::opt_str(outcome.old.map(|a| a.to_hex()))),
                ("new", Json::Str(outcome.new.to_hex())),
                ("kind", Json::Str(kind.to_string())),
            ];
            fields.extend(sent_fields(&outcome.sent));
            write!(out, "{}", Json::object(fields).pretty())
                .map_err(|e| DbError::Io(e.to_string()))?;
        }
        ReportFormat::Table if outcome.kind == PushKind::UpToDate => {
            writeln!(out, "{}/{branch} is up to date; sent nothing", args.name)?;
        }
        ReportFormat::Table => {
            writeln!(
                out,
                "pushed {branch} to {}: {} ({kind}); sent {}",
                args.name,
                move_text(outcome.old, Some(outcome.new)),
                sent_text(&outcome.sent)
            )?;
        }
    }
    Ok(())
}
