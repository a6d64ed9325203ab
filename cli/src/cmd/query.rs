//! `rnt query 'q(x) :- ...' [--at REF] [--format ...]`: ad-hoc rules. This build has no
//! rule engine yet, so the command says so (exit 1) instead of guessing.

use crate::output::Format;
use crate::Context;
use clap::Args;
use rnt_maintain::DbError;
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

/// Refuses: queries need the rule engine.
pub fn run(context: &Context, args: QueryArgs, _out: &mut dyn Write) -> anyhow::Result<()> {
    // Still report a missing store or a bad reference first, as the full command will.
    let db = context.open()?;
    crate::cmd::snapshot_at(&db, args.at.as_deref())?;
    let _ = (args.rules, args.format);
    Err(DbError::user("query needs the rule engine, which this build does not have yet").into())
}
