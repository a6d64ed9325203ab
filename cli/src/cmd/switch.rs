//! `rnt switch NAME`: make branch NAME current; `HEAD` follows it.

use crate::output::SHORT_HEX_DIGITS;
use crate::Context;
use clap::Args;
use std::io::Write;

/// Arguments of `rnt switch`.
#[derive(Debug, Args)]
pub struct SwitchArgs {
    /// The branch to make current.
    #[arg(value_name = "NAME")]
    name: String,
}

/// Switches branches.
pub fn run(context: &Context, args: SwitchArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open_for_writing()?;
    let already = db.current_branch()? == args.name;
    db.switch(&args.name)?;
    let at = db.head_commit()?.map_or("no commits yet".to_string(), |c| {
        c.short_hex(SHORT_HEX_DIGITS)
    });
    if already {
        writeln!(out, "already on branch {} ({at})", args.name)?;
    } else {
        writeln!(out, "switched to branch {} ({at})", args.name)?;
    }
    Ok(())
}
