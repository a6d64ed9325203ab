//! `rnt revert REF [-m MSG]`: a new commit applying the inverse of REF's base changes (from
//! its first parent) to the head, each a no-op where the head already agrees; judged like
//! any commit (a violated denial refuses it, exit 2). A commit that also changed the
//! program keeps the current program: revert undoes base changes only (noted on stderr).

use crate::output::{write_outcome, SHORT_HEX_DIGITS};
use crate::Context;
use clap::Args;
use std::io::Write;

/// Arguments of `rnt revert`.
#[derive(Debug, Args)]
pub struct RevertArgs {
    /// The commit whose changes to undo.
    #[arg(value_name = "REF")]
    reference: String,
    /// The commit message (default: `Revert "ORIGINAL MESSAGE"`).
    #[arg(short, long, value_name = "MSG")]
    message: Option<String>,
}

/// Commits the inverse.
pub fn run(context: &Context, args: RevertArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open_for_writing()?;
    let reverted = db.revert(&args.reference, args.message.as_deref())?;
    if reverted.program_changed {
        context.note(&format!(
            "note: {} also changed the program; revert undoes base changes only (see `rnt program`, `rnt define`)",
            reverted.reverted.short_hex(SHORT_HEX_DIGITS)
        ));
    }
    write_outcome(out, &reverted.outcome)?;
    Ok(())
}
