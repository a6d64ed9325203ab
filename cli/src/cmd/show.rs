//! `rnt show REL [--at REF] [--order COL[,COL…]] [--desc] [--limit N] [--offset N]
//! [--format table|csv|json|changes]`: a relation's tuples in key order, or ordered by the
//! named columns (then key order; `--desc` reverses it; nulls last either way, as SQL's
//! ORDER BY), from position `--offset` on, at most `--limit` of them. Without `--order`, a
//! stored relation is read no further than the page shown.

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
    /// Order by these columns (names, comma-separated), then by key.
    #[arg(long, value_name = "COL[,COL]", value_delimiter = ',')]
    order: Vec<String>,
    /// Greatest first (the columns of --order, or the key).
    #[arg(long)]
    desc: bool,
    /// At most this many tuples.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Skip this many tuples first.
    #[arg(long, value_name = "N", default_value_t = 0)]
    offset: usize,
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
    let columns = order_columns(&schema, &args.order)?;
    let tuples = if columns.is_empty() && !args.desc {
        db.tuples_page(&snapshot, &args.relation, args.offset, args.limit)?
    } else {
        let mut all = db.tuples(&snapshot, &args.relation)?;
        sort_tuples(&mut all, &columns, args.desc);
        all.into_iter()
            .skip(args.offset)
            .take(args.limit.unwrap_or(usize::MAX))
            .collect()
    };
    write_tuples(out, &schema, &tuples, args.format)
}

/// The positions of the `--order` columns in `schema`: an error naming the attributes for
/// a name that is none of them.
fn order_columns(schema: &RelationSchema, names: &[String]) -> anyhow::Result<Vec<usize>> {
    names
        .iter()
        .map(|name| {
            let name = name.trim();
            schema
                .attribute_names()
                .position(|a| a == name)
                .ok_or_else(|| {
                    let known: Vec<&str> = schema.attribute_names().collect();
                    rnt_db::DbError::user(format!(
                        "--order: `{}` is not a column of `{}` (its columns: {})",
                        rnt_db::diagnostic::clip(name),
                        schema.name,
                        known.join(", ")
                    ))
                    .into()
                })
        })
        .collect()
}

/// Sorts `tuples` (given in key order) by `columns`, nulls last, the order reversed by
/// `desc` (nulls still last); ties stay in key order, reversed by `desc` too.
pub fn sort_tuples(tuples: &mut [Tuple], columns: &[usize], desc: bool) {
    use std::cmp::Ordering;
    let by_columns = |a: &Tuple, b: &Tuple| -> Ordering {
        for &c in columns {
            let ordering = match (a[c].is_null(), b[c].is_null()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) if desc => a[c].cmp(&b[c]).reverse(),
                (false, false) => a[c].cmp(&b[c]),
            };
            if ordering != Ordering::Equal {
                return ordering;
            }
        }
        Ordering::Equal
    };
    if desc {
        tuples.reverse();
    }
    tuples.sort_by(by_columns);
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
