//! `rnt clone URL [DIR] [--format table|json]`: a new store holding every branch of the
//! store at URL (a store folder or `s3://bucket/prefix`) and every chunk they reach. The
//! store is made at `DIR/.rnt` (DIR defaults to the last part of URL's path), or at
//! `--store PATH`, with the pack backend; the remote is recorded as `origin`, a local branch
//! is created at each of its branches, and its current branch is made current. A clone
//! that fails removes the folders it created (a store it created at an `s3://` --store
//! stays, as gc cannot run there yet). JSON: `{"url", "store", "branch", "branches":
//! [{"name", "commit"}], "chunks", "bytes", "skipped"}` (`bytes` uncompressed).

use crate::output::{sent_fields, sent_text, Json, ReportFormat};
use crate::Context;
use clap::Args;
use rnt_db::{CloneOutcome, DbError};
use rnt_store::BackendKind;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `rnt clone`.
#[derive(Debug, Args)]
pub struct CloneArgs {
    /// The store to clone: a store folder, or s3://bucket/prefix.
    #[arg(value_name = "URL")]
    url: String,
    /// The folder to clone into (its store is DIR/.rnt); default: the last part of URL.
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// Clones.
pub fn run(context: &Context, args: CloneArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let location = crate::store_open::remote_location(&args.url)?;
    let store_path = match (&context.store, &args.dir) {
        (Some(_), Some(_)) => {
            return Err(
                DbError::user("name either DIR or --store PATH for the clone, not both").into(),
            )
        }
        (Some(path), None) => path.clone(),
        (None, Some(dir)) => dir.join(crate::store_open::STORE_DIR),
        (None, None) => PathBuf::from(default_dir(&location)?).join(crate::store_open::STORE_DIR),
    };
    // The remote first: a clone of nothing creates nothing.
    let remote = crate::store_open::open_remote(&location, Path::new(""), false)?;
    let made = Made::before(&store_path);
    let created = crate::store_open::create(Some(&store_path), BackendKind::Packs)?;
    let (line, progress) = crate::progress::transfer(&format!("cloning {location}"));
    let cloned = crate::store_open::open_at(&created, true).and_then(|db| {
        let db = db.with_transfer_progress(progress);
        Ok((db.clone_from(&location, remote.as_ref())?, db))
    });
    crate::progress::finish(&line);
    let (outcome, db) = match cloned {
        Ok(done) => done,
        Err(error) => {
            made.undo(&created);
            return Err(error);
        }
    };
    let branches = db.branches()?;
    write_cloned(out, &location, &created, &outcome, &branches, args.format)
}

/// What the clone created, so a failed clone removes it (and nothing else).
struct Made {
    /// The first folder on the way to the store that did not exist.
    first_new: Option<PathBuf>,
}

impl Made {
    fn before(store: &Path) -> Made {
        let first_new = store
            .ancestors()
            .filter(|p| !p.as_os_str().is_empty() && !p.exists())
            .last()
            .map(Path::to_path_buf);
        Made { first_new }
    }

    fn undo(&self, store: &Path) {
        if crate::store_open::object_store_url(store).is_some() {
            return;
        }
        let target = self.first_new.as_deref().unwrap_or(store);
        let _ = std::fs::remove_dir_all(target);
        if self.first_new.is_none() {
            // The store folder existed (empty): leave it as it was.
            let _ = std::fs::create_dir_all(store);
        }
    }
}

/// The folder a clone of `location` goes to by default: the last part of its path (the
/// folder holding `.rnt/` when the path ends there).
fn default_dir(location: &str) -> anyhow::Result<String> {
    let path = location
        .split_once("://")
        .map_or(location, |(_, rest)| rest);
    let mut parts = path.rsplit('/').filter(|p| !p.is_empty());
    let mut name = parts.next().unwrap_or("");
    if name == crate::store_open::STORE_DIR {
        name = parts.next().unwrap_or("");
    }
    if name.is_empty() || name == "." || name == ".." {
        return Err(DbError::user(format!(
            "cannot choose a folder name for a clone of {location}: name one (rnt clone URL DIR)"
        ))
        .into());
    }
    Ok(name.to_string())
}

fn write_cloned(
    out: &mut dyn Write,
    location: &str,
    store: &Path,
    outcome: &CloneOutcome,
    branches: &[(String, rnt_store::Address)],
    format: ReportFormat,
) -> anyhow::Result<()> {
    let store_text = store.display().to_string();
    match format {
        ReportFormat::Json => {
            let list = branches
                .iter()
                .map(|(name, commit)| {
                    Json::object([
                        ("name", Json::Str(name.clone())),
                        ("commit", Json::Str(commit.to_hex())),
                    ])
                })
                .collect();
            let mut fields = vec![
                ("url", Json::Str(location.to_string())),
                ("store", Json::Str(store_text)),
                ("branch", Json::Str(outcome.branch.clone())),
                ("branches", Json::Array(list)),
            ];
            fields.extend(sent_fields(&outcome.fetched.sent));
            write!(out, "{}", Json::object(fields).pretty())
                .map_err(|e| DbError::Io(e.to_string()))?;
        }
        ReportFormat::Table => {
            let noun = if branches.len() == 1 {
                "branch"
            } else {
                "branches"
            };
            writeln!(
                out,
                "cloned {location} into {store_text}: {} {noun}, {}; on branch {}",
                branches.len(),
                sent_text(&outcome.fetched.sent),
                outcome.branch
            )?;
        }
    }
    Ok(())
}
