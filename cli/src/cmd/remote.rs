//! `rnt remote [-v] [--format table|json]`, `rnt remote add NAME URL`,
//! `rnt remote remove NAME`: the remotes this store knows. URL is a store folder (a folder
//! holding `.rnt/` counts as its store; the absolute path is recorded) or an object-store URL
//! (`s3://bucket/prefix`). A remote is a ref of the store (`remotes/NAME`), so adding or
//! removing one is a compare-and-swap like any other ref move. JSON: an array, sorted by
//! name, of `{"name", "url"}`.

use crate::output::{Json, ReportFormat};
use crate::Context;
use clap::{Args, Subcommand};
use rnt_db::DbError;
use std::io::Write;

/// Arguments of `rnt remote`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RemoteArgs {
    /// What to do; none lists the remotes.
    #[command(subcommand)]
    action: Option<RemoteAction>,
    /// List each remote with its URL.
    #[arg(short, long)]
    verbose: bool,
    /// Output format of the list.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// The changes `rnt remote` makes.
#[derive(Debug, Subcommand)]
enum RemoteAction {
    /// Record remote NAME at URL: a store folder, or s3://bucket/prefix.
    Add {
        /// The remote's name (letters, digits, `_`, `-`, `.`).
        name: String,
        /// Where it is.
        url: String,
    },
    /// Forget remote NAME and its remote-tracking refs (NAME/BRANCH).
    #[command(alias = "rm")]
    Remove {
        /// The remote's name.
        name: String,
    },
}

/// Lists, adds or removes remotes.
pub fn run(context: &Context, args: RemoteArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    match args.action {
        Some(RemoteAction::Add { name, url }) => {
            let location = crate::store_open::remote_location(&url)?;
            let db = context.open_for_writing()?;
            db.add_remote(&name, &location)?;
            writeln!(out, "added remote {name}: {location}")?;
        }
        Some(RemoteAction::Remove { name }) => {
            let db = context.open_for_writing()?;
            db.remove_remote(&name)?;
            writeln!(out, "removed remote {name}")?;
        }
        None => {
            let remotes = context.open()?.remotes()?;
            match args.format {
                ReportFormat::Json => {
                    let list = remotes
                        .into_iter()
                        .map(|(name, url)| {
                            Json::object([("name", Json::Str(name)), ("url", Json::Str(url))])
                        })
                        .collect();
                    write!(out, "{}", Json::Array(list).pretty())
                        .map_err(|e| DbError::Io(e.to_string()))?;
                }
                ReportFormat::Table if args.verbose => {
                    let width = remotes.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
                    for (name, url) in remotes {
                        writeln!(out, "{name:width$}  {url}")?;
                    }
                }
                ReportFormat::Table => {
                    for (name, _) in remotes {
                        writeln!(out, "{name}")?;
                    }
                }
            }
        }
    }
    Ok(())
}
