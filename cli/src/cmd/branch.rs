//! `rnt branch [NAME [REF]] | -d NAME [--format table|json]`: list the branches (the current
//! one marked `*`), create NAME at REF (default HEAD), or delete NAME (not the current one).
//! JSON: the list is an array, sorted by name, of `{"name", "commit", "current"}`; creating
//! or deleting prints one such object for the branch.

use crate::output::{Json, ReportFormat, SHORT_HEX_DIGITS};
use crate::Context;
use clap::Args;
use rnt_db::DbError;
use rnt_store::Address;
use std::io::Write;

/// Arguments of `rnt branch`.
#[derive(Debug, Args)]
pub struct BranchArgs {
    /// The branch to create (or, with -d, delete); none lists the branches.
    #[arg(value_name = "NAME")]
    name: Option<String>,
    /// Where the new branch starts (default: HEAD).
    #[arg(value_name = "REF")]
    at: Option<String>,
    /// Delete branch NAME (not the current one).
    #[arg(short = 'd', long = "delete", value_name = "NAME", conflicts_with_all = ["name", "at"])]
    delete: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// Lists, creates or deletes branches.
pub fn run(context: &Context, args: BranchArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if let Some(name) = &args.delete {
        let db = context.open_for_writing()?;
        let commit = db.delete_branch(name)?;
        return match args.format {
            ReportFormat::Json => write_json(out, &branch_json(name, &commit, false)),
            ReportFormat::Table => Ok(writeln!(
                out,
                "deleted branch {name} (was {})",
                commit.short_hex(SHORT_HEX_DIGITS)
            )?),
        };
    }
    if let Some(name) = &args.name {
        let db = context.open_for_writing()?;
        let commit = db.create_branch(name, args.at.as_deref())?;
        return match args.format {
            ReportFormat::Json => write_json(out, &branch_json(name, &commit, false)),
            ReportFormat::Table => Ok(writeln!(
                out,
                "created branch {name} at {}",
                commit.short_hex(SHORT_HEX_DIGITS)
            )?),
        };
    }
    let db = context.open()?;
    let current = db.current_branch()?;
    let branches = db.branches()?;
    match args.format {
        ReportFormat::Json => {
            let mut list: Vec<Json> = branches
                .iter()
                .map(|(name, commit)| branch_json(name, commit, *name == current))
                .collect();
            // The current branch before its first commit is listed too (with no commit).
            if !branches.iter().any(|(name, _)| *name == current) {
                list.push(Json::object([
                    ("name", Json::Str(current.clone())),
                    ("commit", Json::Null),
                    ("current", Json::Bool(true)),
                ]));
            }
            write_json(out, &Json::Array(list))
        }
        ReportFormat::Table => {
            if !branches.iter().any(|(name, _)| *name == current) {
                writeln!(out, "* {current} (no commits yet)")?;
            }
            for (name, commit) in &branches {
                let mark = if *name == current { '*' } else { ' ' };
                writeln!(out, "{mark} {name}  {}", commit.short_hex(SHORT_HEX_DIGITS))?;
            }
            Ok(())
        }
    }
}

fn branch_json(name: &str, commit: &Address, current: bool) -> Json {
    Json::object([
        ("name", Json::Str(name.to_string())),
        ("commit", Json::Str(commit.to_hex())),
        ("current", Json::Bool(current)),
    ])
}

fn write_json(out: &mut dyn Write, json: &Json) -> anyhow::Result<()> {
    write!(out, "{}", json.pretty()).map_err(|e| DbError::Io(e.to_string()))?;
    Ok(())
}
