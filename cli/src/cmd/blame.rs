//! `rnt blame REL ['REL(v1, …)'] [--at REF] [--format table|json]`: the commit that last
//! wrote each tuple of a stored relation (docs/design.md, "Provenance"), walking history as
//! git blames lines: a tuple follows the first parent that holds it too. The table has the
//! relation's columns, then `commit`, `time` and `message`; JSON is an array (in tuple
//! order) of `{"tuple", "commit", "time", "message"}`. With a tuple, only that tuple.

use crate::cmd::snapshot_at;
use crate::output::{cell, write_table, Json, ReportFormat, SHORT_HEX_DIGITS};
use crate::time::rfc3339;
use crate::Context;
use clap::Args;
use rnt_db::{parse_tuple, DbError, Tuple};
use rnt_merkle::Commit;
use rnt_store::Address;
use std::collections::HashMap;
use std::io::Write;

/// Arguments of `rnt blame`.
#[derive(Debug, Args)]
pub struct BlameArgs {
    /// The relation (base, or a view).
    #[arg(value_name = "REL")]
    relation: String,
    /// Only this tuple, as a change file writes it without the sign.
    #[arg(value_name = "TUPLE")]
    tuple: Option<String>,
    /// The state to start from (default HEAD).
    #[arg(long, value_name = "REF")]
    at: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
}

/// Prints who wrote each tuple.
pub fn run(context: &Context, args: BlameArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let at = snapshot_at(&db, args.at.as_deref())?;
    at.require(&args.relation)?;
    let blamed: Vec<(Tuple, Address)> = match &args.tuple {
        Some(text) => {
            let (relation, tuple) = parse_tuple(&at, text)?;
            if relation != args.relation {
                return Err(DbError::user(format!(
                    "the tuple is of `{relation}`, not of `{}`",
                    args.relation
                ))
                .into());
            }
            let commit = db.blame_tuple(&at, &relation, &tuple)?;
            vec![(tuple, commit)]
        }
        None => db.blame(&at, &args.relation)?,
    };
    let mut commits: HashMap<Address, Commit> = HashMap::new();
    for (_, id) in &blamed {
        if !commits.contains_key(id) {
            commits.insert(
                *id,
                Commit::read(db.chunks().as_ref(), id).map_err(DbError::from)?,
            );
        }
    }
    let first_line = |id: &Address| commits[id].message.lines().next().unwrap_or("").to_string();
    match args.format {
        ReportFormat::Json => {
            let items = blamed
                .iter()
                .map(|(tuple, id)| {
                    Json::object([
                        (
                            "tuple",
                            Json::Array(tuple.iter().map(Json::of_value).collect()),
                        ),
                        ("commit", Json::Str(id.to_hex())),
                        ("time", Json::Str(rfc3339(commits[id].time))),
                        ("message", Json::Str(commits[id].message.clone())),
                    ])
                })
                .collect();
            write!(out, "{}", Json::Array(items).pretty())?;
        }
        ReportFormat::Table => {
            let schema = at
                .schema(&args.relation)
                .ok_or_else(|| DbError::corrupted(format!("`{}` has no schema", args.relation)))?;
            let mut header: Vec<&str> = schema.attribute_names().collect();
            header.extend(["commit", "time", "message"]);
            let mut right: Vec<bool> = schema.types().iter().map(|t| t.ty.is_numeric()).collect();
            right.extend([false; 3]);
            let rows: Vec<Vec<String>> = blamed
                .iter()
                .map(|(tuple, id)| {
                    let mut row: Vec<String> = tuple.iter().map(cell).collect();
                    row.push(id.short_hex(SHORT_HEX_DIGITS));
                    row.push(rfc3339(commits[id].time));
                    row.push(first_line(id));
                    row
                })
                .collect();
            write_table(out, &header, &right, &rows)?;
        }
    }
    Ok(())
}
