//! `rnt reset REF`: move the current branch to the commit REF names, by compare-and-swap.
//! Nothing is deleted: the reflog keeps the old head (`rnt reflog`), so a reset is undone
//! by resetting to it.

use crate::output::SHORT_HEX_DIGITS;
use crate::Context;
use clap::Args;
use rnt_db::ResetOutcome;
use std::io::Write;

/// Arguments of `rnt reset`.
#[derive(Debug, Args)]
pub struct ResetArgs {
    /// The commit to move the current branch to.
    #[arg(value_name = "REF")]
    reference: String,
}

/// Moves the branch.
pub fn run(context: &Context, args: ResetArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open_for_writing()?;
    let branch = db.current_branch()?;
    match db.reset(&args.reference)? {
        ResetOutcome::Moved { from, to } => writeln!(
            out,
            "{branch} is now at {} (was {}; `rnt reset {}` undoes this)",
            to.short_hex(SHORT_HEX_DIGITS),
            from.short_hex(SHORT_HEX_DIGITS),
            from.short_hex(SHORT_HEX_DIGITS),
        )?,
        ResetOutcome::AlreadyThere(at) => writeln!(
            out,
            "{branch} is already at {}",
            at.short_hex(SHORT_HEX_DIGITS)
        )?,
    }
    Ok(())
}
