//! A command line run in the server, on its warm database, exactly as `rnt` would run it
//! alone: the same code, so the same output, errors and exit code. What the command would
//! read from files or standard input comes with the request (see `forward`).

use super::Server;
use crate::{Command, Context};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// What a command run in the server has: the warm database and the client's inputs.
pub struct Served {
    /// The server's database (a clone: it shares the warm caches).
    pub db: rnt_db::Database,
    /// The bytes of each input file the command names, by the path as written (`-`:
    /// standard input).
    inputs: BTreeMap<String, Vec<u8>>,
    /// What the command printed on standard error besides its error.
    notes: Mutex<String>,
}

impl Served {
    /// The bytes the client sent for `path`.
    pub fn input(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.inputs
            .get(path.to_string_lossy().as_ref())
            .cloned()
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "No such file or directory (os error 2)",
                )
            })
    }

    /// Keeps a note for the client's standard error.
    pub fn note(&self, line: &str) {
        let mut notes = self
            .notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        notes.push_str(line);
        notes.push('\n');
    }
}

/// How a command runs while a server holds the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Through the server, reading only.
    Read,
    /// Through the server, as its one writer.
    Write,
    /// In its own process (it reaches outside the store, or reads what only the client
    /// can: a terminal, a big file, another store).
    Here,
}

/// How `command` runs while a server holds the store.
pub fn route(command: &Command) -> Route {
    match command {
        Command::Status(_)
        | Command::Log(_)
        | Command::Show(_)
        | Command::Query(_)
        | Command::Diff(_)
        | Command::Explain(_)
        | Command::Program(_)
        | Command::Verify(_)
        | Command::Why(_)
        | Command::Blame(_)
        | Command::Reflog(_) => Route::Read,
        Command::Sql(args) if args.is_prompt() => Route::Here,
        Command::Commit(_)
        | Command::Define(_)
        | Command::Sql(_)
        | Command::Branch(_)
        | Command::Tag(_)
        | Command::Switch(_)
        | Command::Reset(_)
        | Command::Revert(_)
        | Command::Merge(_)
        | Command::Alter(_) => Route::Write,
        Command::Init(_)
        | Command::Import(_)
        | Command::Fsck(_)
        | Command::Remote(_)
        | Command::Clone(_)
        | Command::Fetch(_)
        | Command::Push(_)
        | Command::Pull(_)
        | Command::Gc(_)
        | Command::Demo(_)
        | Command::Serve(_) => Route::Here,
    }
}

/// What a command run in the server printed, and its exit code.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The exit code.
    pub code: u8,
    /// Standard output.
    pub stdout: Vec<u8>,
    /// Standard error.
    pub stderr: String,
}

impl Outcome {
    /// A refusal before the command ran.
    pub fn refused(message: &str) -> Outcome {
        Outcome {
            code: 1,
            stdout: Vec::new(),
            stderr: format!("error: {message}\n"),
        }
    }
}

/// What the client sends with a command line.
#[derive(Debug, Default)]
pub struct Request {
    /// The command line, the program name first.
    pub argv: Vec<String>,
    /// Input files by path as written (`-`: standard input).
    pub inputs: BTreeMap<String, Vec<u8>>,
    /// The client's `RNT_COMMIT_TIME`, if set.
    pub commit_time: Option<i64>,
}

/// Runs `request` in `server`.
pub fn invoke(server: &Server, request: Request) -> Outcome {
    let cli = match crate::parse_args(&request.argv) {
        Ok(cli) => cli,
        Err(error) => {
            return Outcome::refused(
                crate::output::usage_error_line(&error.render().to_string())
                    .trim_start_matches("error: ")
                    .trim_end(),
            )
        }
    };
    let route = route(&cli.command);
    match route {
        Route::Here => return Outcome::refused("this command does not run through a server"),
        Route::Write if server.read_only => {
            return Outcome::refused("the server is read-only (rnt serve --read-only)")
        }
        Route::Read | Route::Write => {}
    }
    let db = match request.commit_time {
        Some(time) => server.db.clone().with_commit_time(Arc::new(move || time)),
        None => server.db.clone(),
    };
    let served = Arc::new(Served {
        db,
        inputs: request.inputs,
        notes: Mutex::new(String::new()),
    });
    let context = Context {
        store: Some(server.store.clone()),
        served: Some(Arc::clone(&served)),
    };
    let mut stdout = Vec::new();
    let result = match route {
        Route::Write => server
            .gate
            .write(&server.db, || {
                crate::run_with(&context, cli.command, &mut stdout)
            })
            .and_then(|result| result),
        _ => crate::run_with(&context, cli.command, &mut stdout),
    };
    let mut stderr = std::mem::take(
        &mut *served
            .notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    let code = match result {
        Ok(()) => 0,
        Err(error) => {
            stderr.push_str(&crate::output::error_text(&error));
            crate::exit_code(&error)
        }
    };
    Outcome {
        code,
        stdout,
        stderr,
    }
}
