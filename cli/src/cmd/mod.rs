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

/// The bytes of the input file `path` names, read in this process (`-`: standard input).
/// A client of `rnt serve` reads its inputs so before it sends the command.
pub fn read_local_input(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes)?;
        Ok(bytes)
    } else {
        std::fs::read(path)
    }
}

impl Context {
    /// Finds and opens the store for reading (no lock: never waits for a writer); inside
    /// `rnt serve`, the server's warm database.
    pub fn open(&self) -> anyhow::Result<Database> {
        match &self.served {
            Some(served) => Ok(served.db.clone()),
            None => crate::store_open::open(self.store.as_deref()),
        }
    }

    /// Finds and opens the store for writing: takes the writer lock, waiting for another
    /// writer, so the head read at open is still the head when the commit lands. Inside
    /// `rnt serve` the server has taken it before the command began.
    pub fn open_for_writing(&self) -> anyhow::Result<Database> {
        match &self.served {
            Some(served) => Ok(served.db.clone()),
            None => crate::store_open::open_for_writing(self.store.as_deref()),
        }
    }

    /// The bytes of the input file `path` names (`-`: standard input): read here, or,
    /// inside `rnt serve`, what the client read and sent with the command.
    pub fn read_input(&self, path: &std::path::Path) -> std::io::Result<Vec<u8>> {
        match &self.served {
            Some(served) => served.input(path),
            None => read_local_input(path),
        }
    }

    /// The input file `path` names, as text: fails as `std::fs::read_to_string` does on
    /// bytes that are not UTF-8.
    pub fn read_input_text(&self, path: &std::path::Path) -> std::io::Result<String> {
        String::from_utf8(self.read_input(path)?).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            )
        })
    }

    /// Prints a note on standard error (inside `rnt serve`: sent back to the client's).
    pub fn note(&self, line: &str) {
        match &self.served {
            Some(served) => served.note(line),
            None => eprintln!("{line}"),
        }
    }
}
