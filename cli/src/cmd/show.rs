//! `rnt show REL [--at REF] [--format table|csv|json|changes]`: a relation's tuples in key
//! order.

use crate::cmd::snapshot_at;
use crate::output::{cell, write_table, Format, Json};
use crate::Context;
use clap::Args;
use rnt_db::csv::write_csv;
use rnt_db::{RelationSchema, Tuple};
use std::io::Write;

/// Arguments of `rnt show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The relation.
    #[arg(value_name = "REL")]
    relation: String,
    /// The state to read: HEAD (default), HEAD~n, a branch, or a prefix of a commit id or
    /// state hash.
    #[arg(long, value_name = "REF")]
    at: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// Prints the relation.
pub fn run(context: &Context, args: ShowArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let snapshot = snapshot_at(&db, args.at.as_deref())?;
    snapshot.require(&args.relation)?;
    let schema = snapshot.schema(&args.relation).ok_or_else(|| {
        rnt_db::DbError::corrupted(format!("relation `{}` has no schema", args.relation))
    })?;
    let tuples = db.tuples(&snapshot, &args.relation)?;
    write_tuples(out, &schema, &tuples, args.format)
}

/// Prints tuples of `schema` in `format` (shared with `query`).
pub fn write_tuples(
    out: &mut dyn Write,
    schema: &RelationSchema,
    tuples: &[Tuple],
    format: Format,
) -> anyhow::Result<()> {
    match format {
        Format::Csv => {
            write_csv(out, schema, tuples)?;
        }
        Format::Json => {
            // One tuple per line: `[[1, 7, 30], ...]` stays readable and greps well.
            let rows = tuples
                .iter()
                .map(|t| Json::Array(t.iter().map(Json::of_value).collect()))
                .collect();
            write!(out, "{}", Json::Array(rows).pretty())?;
        }
        Format::Changes => {
            for tuple in tuples {
                writeln!(out, "{}", named_insert(schema, tuple))?;
            }
        }
        Format::Table => {
            let header: Vec<&str> = schema.attribute_names().collect();
            let right: Vec<bool> = schema.types().iter().map(|t| t.ty.is_numeric()).collect();
            let rows: Vec<Vec<String>> = tuples
                .iter()
                .map(|t| t.iter().map(cell).collect())
                .collect();
            write_table(out, &header, &right, &rows)?;
            let n = tuples.len();
            writeln!(out, "({n} tuple{})", if n == 1 { "" } else { "s" })?;
        }
    }
    Ok(())
}

/// `+r(a: 1, b: "x")`: `tuple` of `schema` as a named insert.
fn named_insert(schema: &RelationSchema, tuple: &Tuple) -> String {
    let terms: Vec<String> = schema
        .attribute_names()
        .zip(tuple)
        .map(|(name, value)| format!("{name}: {value}"))
        .collect();
    format!("+{}({})", schema.name, terms.join(", "))
}
