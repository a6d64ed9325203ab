//! `rnt define PROGRAM.rnt`: set or change the program, in one commit.

use crate::output::committed_line;
use crate::Context;
use clap::Args;
use rnt_db::{CommitOutcome, DbError};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `rnt define`.
#[derive(Debug, Args)]
pub struct DefineArgs {
    /// The program file (declarations and rules).
    #[arg(value_name = "PROGRAM.rnt")]
    program: PathBuf,
    /// The commit message (default: `define PROGRAM.rnt`).
    #[arg(short, long, value_name = "MSG")]
    message: Option<String>,
    /// When a denial refuses it, list up to N witnesses of each violated denial (a
    /// `(and more: --witnesses N)` says when there are more).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = crate::cmd::at_least_one)]
    witnesses: usize,
    /// The new state's clock, Unix seconds, for a program that mentions `now` (never earlier
    /// than the head's). Default: the head's clock, or the commit time for a program that
    /// starts mentioning `now`.
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    clock: Option<i64>,
}

impl DefineArgs {
    /// The program file.
    pub fn input_file(&self) -> &std::path::Path {
        &self.program
    }
}

/// Reads the program and commits it. Program errors come back as `DbError::Program`,
/// whose rendered diagnostics `main` prints.
pub fn run(context: &Context, args: DefineArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let name = args.program.display().to_string();
    let text = context
        .read_input(&args.program)
        .map_err(|e| DbError::user(format!("cannot read {name}: {e}")))?;
    let text = String::from_utf8(text).map_err(|e| {
        DbError::user(format!(
            "{name}: not valid UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    let db = context.open_for_writing()?.with_witnesses(args.witnesses);
    // The user's program may not take a helper's name; SQL's defines do not come here.
    crate::internal::refuse_new_internal(&text, &db.head()?)?;
    let message = args.message.unwrap_or_else(|| format!("define {name}"));
    let mut progress = crate::progress::Progress::new("define", None);
    let outcome = db.define_with_clock(&text, &name, &message, args.clock, &mut |line| {
        progress.message(line)
    });
    progress.finish();
    let outcome = outcome?;
    match outcome {
        CommitOutcome::Committed {
            commit,
            state,
            changes,
            ..
        } => {
            // A define changes the program, and maybe (backfilled) derived relations. The
            // line names it by its message, as `log` does (`define PROGRAM.rnt`).
            writeln!(
                out,
                "{}",
                committed_line(&commit, &state, &changes, Some(&message))
            )?;
            crate::cmd::commit::write_clock_line(out, &db)?;
        }
        CommitOutcome::NothingToCommit => {
            writeln!(out, "nothing to commit (the program is unchanged)")?
        }
    }
    Ok(())
}
