//! `rnt init`: create an empty store. Makes no commit; the first `define` or `commit` does.

use crate::Context;
use clap::{Args, ValueEnum};
use rnt_store::BackendKind;
use std::io::Write;

/// Arguments of `rnt init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// How the store keeps its chunks: `packs` (the default: pack files, readers never
    /// wait) or `sled` (a sled database, one process at a time).
    #[arg(long, value_enum, default_value_t = Backend::Packs)]
    backend: Backend,
}

/// The backends `--backend` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Backend {
    /// Pack files with sorted indexes and an atomically replaced manifest.
    Packs,
    /// A sled database.
    Sled,
}

/// Creates the store at `--store PATH`, or `.rnt/` in the current folder.
pub fn run(context: &Context, args: InitArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let backend = match args.backend {
        Backend::Packs => BackendKind::Packs,
        Backend::Sled => BackendKind::Sled,
    };
    let path = crate::store_open::create(context.store.as_deref(), backend)?;
    let kind = if crate::store_open::object_store_url(&path).is_some() {
        "object store"
    } else {
        backend.name()
    };
    writeln!(
        out,
        "initialized an empty rnt store in {} ({kind} backend)",
        path.display()
    )?;
    Ok(())
}
