//! `rnt pull NAME [BRANCH] [-m MSG]`: `rnt fetch NAME`, then `rnt merge NAME/BRANCH` into the
//! current branch (BRANCH defaults to the current branch's name). Prints the fetch, then
//! the merge as `rnt merge` does; exit codes are merge's (1, 2 for a denial, 4 for a key
//! conflict), and a refused merge leaves the fetch done and the current branch unmoved.

use crate::output::ReportFormat;
use crate::Context;
use clap::Args;
use std::io::Write;

/// Arguments of `rnt pull`.
#[derive(Debug, Args)]
pub struct PullArgs {
    /// The remote (see `rnt remote -v`).
    #[arg(value_name = "NAME")]
    name: String,
    /// The remote's branch to merge (default: the current branch's name).
    #[arg(value_name = "BRANCH")]
    branch: Option<String>,
    /// The merge commit's message (default: `Merge NAME/BRANCH`).
    #[arg(short, long, value_name = "MSG")]
    message: Option<String>,
}

/// Pulls.
pub fn run(context: &Context, args: PullArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let path = crate::store_open::locate(context.store.as_deref())?;
    let db = crate::store_open::open_at(&path, true)?;
    let branch = match args.branch {
        Some(branch) => branch,
        None => db.current_branch()?,
    };
    let remote = crate::store_open::open_remote(&db.remote_url(&args.name)?, &path, false)?;
    let (line, progress) = crate::progress::transfer(&format!("fetching from {}", args.name));
    let pulled = db.with_transfer_progress(progress).pull(
        &args.name,
        remote.as_ref(),
        &branch,
        args.message.as_deref(),
    );
    crate::progress::finish(&line);
    let (fetched, merged) = pulled?;
    crate::cmd::fetch::write_fetched(out, &args.name, &fetched, ReportFormat::Table)?;
    crate::cmd::merge::write_merged(out, &format!("{}/{branch}", args.name), &merged)
}
