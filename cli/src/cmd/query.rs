//! `rnt query 'q(x) :- ...' [--at REF] [--format ...]`: ad-hoc rules evaluated against any
//! state. Head relations need no declaration (their column types are inferred); the first
//! rule's head is printed.

use crate::cmd::show::write_tuples;
use crate::output::Format;
use crate::Context;
use clap::Args;
use std::io::Write;

/// Arguments of `rnt query`.
#[derive(Debug, Args)]
pub struct QueryArgs {
    /// The rules; the first rule's head is printed.
    #[arg(value_name = "RULES")]
    rules: String,
    /// The state to read (default HEAD).
    #[arg(long, value_name = "REF")]
    at: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// Evaluates the rules and prints the answer.
pub fn run(context: &Context, args: QueryArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?;
    let snapshot = crate::cmd::snapshot_at(&db, args.at.as_deref())?;
    let answer = db.query(&snapshot, &args.rules)?;
    write_tuples(out, &answer.schema, &answer.tuples, args.format)
}
