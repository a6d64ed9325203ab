//! One module per subcommand. Each has an `Args` struct (clap) and a `run` function that
//! writes its output to the writer it is given and returns errors for `main` to report.

pub mod alter;
pub mod blame;
pub mod branch;
pub mod clone;
pub mod commit;
pub mod define;
pub mod demo;
pub mod diff;
pub mod explain;
pub mod fetch;
pub mod fsck;
pub mod gc;
pub mod import;
pub mod init;
pub mod log;
pub mod merge;
pub mod program;
pub mod pull;
pub mod push;
pub mod query;
pub mod reflog;
pub mod remote;
pub mod reset;
pub mod revert;
pub mod show;
pub mod sql;
pub mod status;
pub mod switch;
pub mod tag;
pub mod verify;
pub mod why;

use crate::Context;
use rnt_db::{Database, Snapshot};

/// A count that must be at least 1 (`--witnesses N`, `--limit N`).
pub fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "`{text}` is not a count (a whole number, at least 1)"
        )),
    }
}

/// The snapshot `at` names, or the head's.
pub fn snapshot_at(db: &Database, at: Option<&str>) -> anyhow::Result<Snapshot> {
    Ok(match at {
        Some(reference) => db.resolve(reference)?,
        None => db.head()?,
    })
}

impl Context {
    /// Finds and opens the store for reading (no lock: never waits for a writer).
    pub fn open(&self) -> anyhow::Result<Database> {
        crate::store_open::open(self.store.as_deref())
    }

    /// Finds and opens the store for writing: takes the writer lock, waiting for another
    /// writer, so the head read at open is still the head when the commit lands.
    pub fn open_for_writing(&self) -> anyhow::Result<Database> {
        crate::store_open::open_for_writing(self.store.as_deref())
    }
}
