//! `rnt init`: create an empty store. Makes no commit; the first `define` or `commit` does.

use crate::Context;
use clap::Args;
use std::io::Write;

/// Arguments of `rnt init`.
#[derive(Debug, Args)]
pub struct InitArgs {}

/// Creates the store at `--store PATH`, or `.rnt/` in the current folder.
pub fn run(context: &Context, _args: InitArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let path = crate::store_open::create(context.store.as_deref())?;
    writeln!(out, "initialized an empty rnt store in {}", path.display())?;
    Ok(())
}
