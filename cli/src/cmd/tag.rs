//! `rnt tag [NAME [REF]] | -d NAME [--format table|json]`: list the tags, create NAME at
//! REF (default HEAD), or delete NAME. A tag is an immutable name of a commit: it is never
//! moved, only created or deleted. JSON: the list is an array, sorted by name, of
//! `{"name", "commit"}`; creating or deleting prints one such object.

use crate::output::{Json, ReportFormat, SHORT_HEX_DIGITS};
use crate::Context;
use clap::Args;
use rnt_store::Address;
use std::io::Write;

/// Arguments of `rnt tag`.
#[derive(Debug, Args)]
pub struct TagArgs {
    /// The tag to create; none lists the tags.
    #[arg(value_name = "NAME")]
    name: Option<String>,
    /// The commit it names (default: HEAD).
    #[arg(value_name = "REF")]
    at: Option<String>,
    /// Delete tag NAME.
    #[arg(short = 'd', long = "delete", value_name = "NAME", conflicts_with_all = ["name", "at"])]
    delete: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// Lists, creates or deletes tags.
pub fn run(context: &Context, args: TagArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let (verb, name, commit) = if let Some(name) = &args.delete {
        let db = context.open_for_writing()?;
        ("deleted", name, db.delete_tag(name)?)
    } else if let Some(name) = &args.name {
        let db = context.open_for_writing()?;
        ("created", name, db.create_tag(name, args.at.as_deref())?)
    } else {
        let db = context.open()?;
        let tags = db.tags()?;
        match args.format {
            ReportFormat::Json => {
                let list = tags.iter().map(|(n, c)| tag_json(n, c)).collect();
                write!(out, "{}", Json::Array(list).pretty())?;
            }
            ReportFormat::Table => {
                for (name, commit) in &tags {
                    writeln!(out, "{name}  {}", commit.short_hex(SHORT_HEX_DIGITS))?;
                }
            }
        }
        return Ok(());
    };
    match args.format {
        ReportFormat::Json => write!(out, "{}", tag_json(name, &commit).pretty())?,
        ReportFormat::Table => writeln!(
            out,
            "{verb} tag {name} ({} {})",
            if verb == "deleted" { "was" } else { "at" },
            commit.short_hex(SHORT_HEX_DIGITS)
        )?,
    }
    Ok(())
}

fn tag_json(name: &str, commit: &Address) -> Json {
    Json::object([
        ("name", Json::Str(name.to_string())),
        ("commit", Json::Str(commit.to_hex())),
    ])
}
