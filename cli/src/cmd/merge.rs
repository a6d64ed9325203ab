//! `rnt merge NAME [-m MSG]`: merge branch NAME (or any commit) into the current branch.
//! Fast-forwards when the current branch is in NAME's history; otherwise merges the base
//! relations three ways from the merge base, maintains the views and judges the denials as
//! any commit does, and commits with two parents (ours first). Exit 1 when both sides
//! changed the program differently, 2 when a denial refuses the merged contents, 4 when
//! both sides gave a key different tuples (every such key listed); nothing is written then.

use crate::output::{write_outcome, SHORT_HEX_DIGITS};
use crate::Context;
use clap::Args;
use rnt_db::{MergeOutcome, ProgramSide};
use std::io::Write;

/// Arguments of `rnt merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The branch to merge into the current one (a tag or commit also works).
    #[arg(value_name = "NAME")]
    name: String,
    /// The merge commit's message (default: `Merge NAME`).
    #[arg(short, long, value_name = "MSG")]
    message: Option<String>,
}

/// Merges.
pub fn run(context: &Context, args: MergeArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open_for_writing()?;
    let outcome = db.merge(&args.name, args.message.as_deref())?;
    write_merged(out, &args.name, &outcome)
}

/// Prints a merge's outcome (also `pull`'s second part); `name` is what was merged.
pub fn write_merged(out: &mut dyn Write, name: &str, outcome: &MergeOutcome) -> anyhow::Result<()> {
    match outcome {
        MergeOutcome::UpToDate => writeln!(out, "already up to date")?,
        MergeOutcome::FastForward { from, to } => writeln!(
            out,
            "fast-forward {} to {}",
            from.map_or("nothing".to_string(), |c| c.short_hex(SHORT_HEX_DIGITS)),
            to.short_hex(SHORT_HEX_DIGITS)
        )?,
        MergeOutcome::Merged {
            program_from,
            outcome,
            ..
        } => {
            if *program_from == Some(ProgramSide::Theirs) {
                writeln!(out, "took the program of {name}")?;
            }
            write_outcome(out, outcome)?;
        }
    }
    Ok(())
}
